"""Review 2026-12-05o (chapters 08, 09, 99), chapter 08's items: what cut the interaction said as
it was (item 3), a failed INT8 row not also said untimed (item 6b)."""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import pytest

from labkit.chapters.ch08_inference_ladder import experiment, ladder, past_view, tables

LIMIT = (f"skipped: the chapter's {experiment.CHAPTER_LIMIT_S:.0f} s limit on the GPU "
         "(the climb took {:.0f} s)")


def _run(monkeypatch, climb_s: float, end_s: float | None = None):
    """experiment._run on a stand-in ladder and a fake clock: the climb takes climb_s, a regime's
    base 0.8 s to prepare, each cell 6.2 s (as test_review_04n's)."""
    now = [0.0]
    monkeypatch.setattr(experiment._clock, "perf_counter", lambda: now[0])
    monkeypatch.setattr(ladder, "release_memory", lambda device: None)
    monkeypatch.setattr(ladder, "release", lambda device: None)
    rung = lambda name, settings: ladder.Rung(name, settings, 100.0, 0.01, 0.0, 0.0, None)  # noqa: E731

    class Stub:
        device, rounds, top = SimpleNamespace(type="cuda"), 8, None

        def __init__(self, *args, **kwargs):
            pass

        def baseline(self, name, settings):
            return ladder.Live(rung(name, settings), None)

        def compare(self, lives):
            pass

        def climb(self, steps, strict, deadline, retime_until=None, retry_until=None, retry=True):
            now[0] += climb_s
            rungs = [dataclasses.replace(rung(s.name, s.apply(strict.rung.settings)), kept=True)
                     for s in steps]
            self.top = ladder.Live(rungs[-1], None)
            return rungs

        def prepare(self, name, settings, profiled=True):
            now[0] += 0.8
            return ladder.Live(rung(name, settings), None)

        def step(self, base, name, settings, **kwargs):
            now[0] += 6.2
            return rung(name, settings), base

    monkeypatch.setattr(ladder, "Ladder", Stub)
    monkeypatch.setattr(experiment, "settle_baselines", lambda rungs, bases: None)
    result = experiment._run(SimpleNamespace(type="cuda"), False, False, True, False,
                             tables.budget_s(True), None, lambda: None, compiled_regime=False,
                             end_s=end_s)
    return experiment.Result.from_record(json.loads(json.dumps(result.record())))


def test_a_climb_of_112_s_runs_the_three_cells_and_records_no_cut(monkeypatch):
    """Item 3: the 19:09 climb (112 s): the chapter's end binds (130 s, before the interaction's
    own 20 s run out) yet all three cells begin by it; the record says nothing was capped."""
    result = _run(monkeypatch, 112.0, tables.end_s(True))
    assert [r.error for r in result.regimes["eager"].values()] == ["", "", ""]
    assert not result.interaction_capped and not result.regimes_missing
    assert "Not compared" not in str(tables.regimes_table(result))


def test_a_climb_of_125_s_skips_the_later_cells_by_the_chapters_limit(monkeypatch):
    result = _run(monkeypatch, 125.0, tables.end_s(True))
    cells = list(result.regimes["eager"].values())
    assert [r.error for r in cells] == ["", "skipped", "skipped"]
    assert result.interaction_capped
    assert cells[1].why == LIMIT.format(125.0)
    assert "before the chapter's 150 s limit on the GPU" in str(tables.regimes_table(result))


def test_a_climb_past_the_end_says_the_chapters_limit_cut_the_interaction(monkeypatch):
    """Item 3: a climb of 131 s, past INTERACTION_END_S: no regime begins, and the page said
    'eager: not measured (skipped: out of the run's time budget)', where the chapter's 150 s
    limit cut it, not the 120 s budget."""
    result = _run(monkeypatch, 131.0, tables.end_s(True))
    assert not result.regimes and result.interaction_capped
    assert result.regimes_missing == {"eager": LIMIT.format(131.0)}
    text = str(tables.regimes_table(result))
    assert f"eager: not measured ({LIMIT.format(131.0)})" in text
    assert "out of the run's time budget" not in text


def test_without_the_chapters_end_the_budget_is_named_as_before(monkeypatch):
    """No end (benchmarks/gpu_ladder.py's run): the interaction has its own 20 s whatever the
    climb took, nothing is capped, and a cell the run's budget skips says so as before."""
    result = _run(monkeypatch, 131.0, None)
    assert [r.error for r in result.regimes["eager"].values()] == ["", "", ""]
    assert not result.interaction_capped and not result.regimes_missing
    base = ladder.Live(ladder.Rung("base", ladder.Settings(), 1.0, 1.0, 0.0, 0.0, None), None)
    assert experiment._skipped(ladder.REGIME_STEPS[0], base).why == experiment.SKIPPED
    assert experiment.SKIPPED == "skipped: out of the run's time budget"


@pytest.mark.parametrize("status, said", [
    ("failed", "INT8 per-channel weights: tried on a GPU: failed (see above)."),
    ("skipped", "INT8 per-channel weights: on the GPU call: skipped (see above)."),
])
def test_an_int8_row_that_failed_or_was_skipped_is_not_also_said_untimed(status, said):
    """Item 6b: a D record whose INT8 row failed printed under 'Not run or failed' and as
    'built and checked on the CPU; not yet timed on a GPU'."""
    top = {"name": "top rung", "status": "measured", "images_per_s": 1.0}
    row = {"name": "INT8 per-channel weights", "status": status, "note": "a reason"}
    text = str(past_view.rows_table({"rows": [top, row], "image": 224}))
    assert f"Not run or failed (1): INT8 per-channel weights ({status}: a reason)" in text
    assert said in text and f"INT8 per-channel weights: {past_view.UNTIMED}" not in text
    # no row at all: untimed, as before
    assert f"INT8 per-channel weights: {past_view.UNTIMED}." in str(
        past_view.rows_table({"rows": [top], "image": 224}))
