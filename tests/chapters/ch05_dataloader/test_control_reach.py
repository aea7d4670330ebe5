"""Review 2026-12-04m (chapter 05): the knob table's resolution is what its A/A control shows
in that run, and no quiz cell of the chapter carries its explanation in its source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from labkit.chapters.ch05_dataloader import knee_experiment, reproduce

ROOT = Path(__file__).resolve().parents[3]


def _row(label, ratio, low, high, decision):
    return {"label": label, "ratio": ratio, "ratio_low": low, "ratio_high": high, "decision": decision,
            "against": "w8 b64"}


def test_a_call_s_mean_must_clear_what_the_a_a_shows_in_that_run():
    """Item 2: the third H200 reproduce run's A/A read 1.10x [1.02, 1.18] (1.10x before the
    baseline, 1.09x after): two identical loaders 10% apart, beyond the per-round interval. Its
    reach, 1.10 x sqrt(1.18 / 1.02) = x1.18, is that run's resolution: a gain of 1.15x [1.08,
    1.22] is within it (not resolved), 1.51x [1.40, 1.62] clears it; a loss likewise; the A/A
    keeps its own call (a called control voids the run's calls on the page)."""
    table = [{"label": "w8 b64", "decision": "baseline"},
             _row("w8 b64 (A/A)", 1.10, 1.02, 1.18, knee_experiment.GAIN),
             _row("w8 b64 small", 1.15, 1.08, 1.22, knee_experiment.GAIN),
             _row("w8 b64 tuned", 1.51, 1.40, 1.62, knee_experiment.GAIN),
             _row("w8 b64 worse", 0.88, 0.80, 0.97, knee_experiment.LOSS),
             _row("w8 b64 bad", 0.52, 0.40, 0.69, knee_experiment.LOSS)]
    reach = knee_experiment.control_reach(table)
    assert reach == pytest.approx(1.10 * (1.18 / 1.02) ** 0.5)
    calls = {r["label"]: r["decision"] for r in knee_experiment.controlled(table)}
    assert calls == {"w8 b64": "baseline", "w8 b64 (A/A)": knee_experiment.GAIN,
                     "w8 b64 small": knee_experiment.NOT_RESOLVED, "w8 b64 tuned": knee_experiment.GAIN,
                     "w8 b64 worse": knee_experiment.NOT_RESOLVED, "w8 b64 bad": knee_experiment.LOSS}
    small = knee_experiment.controlled(table)[2]
    assert small["within_control"] == pytest.approx(reach) and "within the A/A's x1.18" in small["stated"]
    assert knee_experiment.controlled(table[:1] + table[2:]) == table[:1] + table[2:]  # no A/A: as is
    assert "must also clear what the A/A shows in that run" in knee_experiment.knob_rule(6)


def test_reproduce_re_judges_each_run_by_its_own_a_a_and_says_when_the_control_failed():
    """Item 2: a run's knob call is read against that run's A/A, as the page reads it, and the
    summary prints each run's reach and whether its control failed (the rule is not loosened:
    the A/A's own gain still counts against the A/A)."""
    run = {"knob_ratios_are": reproduce.INTERVAL,
           "knob_decisions": {"w8 b64 (A/A)": "gain", "w8 b64 small": "gain", "w8 b64 tuned": "gain"},
           "knob_ratios": {"w8 b64 (A/A)": [1.10, 1.02, 1.18], "w8 b64 small": [1.15, 1.08, 1.22],
                           "w8 b64 tuned": [1.51, 1.40, 1.62]},
           "knob_against": {"w8 b64 (A/A)": "w8 b64", "w8 b64 small": "w8 b64", "w8 b64 tuned": "w8 b64"}}
    assert reproduce.run_decisions(run) == {"w8 b64 (A/A)": "gain", "w8 b64 small": "not resolved",
                                            "w8 b64 tuned": "gain"}
    line = reproduce.knob_line(run)
    assert "the A/A's reach (its distance from 1 times its half-width): x1.18" in line
    assert "control failed" in line
    seen = [{"ratio": r, "low": None, "high": None, "control_failed": f}
            for r, f in ((1.33, False), (1.42, False), (1.51, True))]
    assert reproduce.runs_text(seen, {"ratio_low": 1.24, "ratio_high": 1.34}) == (
        "1.33x, 1.42x, 1.51x (run 3: its control failed); 2 of 3 outside this interval, which covers "
        "one run's rounds, not a new run")
    # review 2026-12-05q browser 05-07 item 9: the runs' own call, where all made the same one
    called = [dict(s, decision="gain") for s in seen]
    assert reproduce.runs_text(called, {"ratio_low": 1.24, "ratio_high": 1.34}).startswith(
        "1.33x, 1.42x, 1.51x (run 3: its control failed): a gain in all 3; 2 of 3 outside")


def test_no_quiz_cell_of_chapter_05_carries_its_explanation_in_its_source():
    """Item 7: 'only later epochs can reuse them' in the startup quiz's cell gave its key ('every
    epoch after the first') to anyone reading the source before answering. Explanations live in
    lesson.EXPLAIN; a quiz cell names them, and its source, choices aside, holds none of the
    explanation's words that give the key."""
    from labkit.chapters.ch05_dataloader import lesson

    source = (ROOT / "notebooks" / "05_dataloader.py").read_text()
    cells = [c for c in source.split("# %%") if "widgets.Quiz(" in c]
    assert len(cells) >= 5
    for cell in cells:
        assert not re.search(r"explanation\s*=\s*[\"'(]", cell), cell
    startup = next(c for c in cells if "quiz_startup" in c)
    asked = re.sub(r"choices=\[.*?\]", "", startup, flags=re.S)
    assert "later epochs" not in asked and "reuse" not in asked
    assert "later epochs can reuse" in lesson.EXPLAIN["startup"]
