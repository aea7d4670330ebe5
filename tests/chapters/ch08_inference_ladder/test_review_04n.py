"""Review 2026-12-04n (chapters 08, 09, 99), chapter 08's items: the fp16 rung's host bound said
only as measured (item 1), the chapter's H200 time bounded when the climb runs long (item 5)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from labkit.chapters.ch08_inference_ladder import experiment, explain, ladder, past_defaults, tables

RECORD = Path(__file__).parents[3] / "results" / "nvidia-h200.json"


def _recorded_rungs() -> list:
    payload = json.loads(RECORD.read_text())["chapters"]["08_inference_ladder"]["ladder"]["payload"]
    return [ladder.rung_from_dict(r) for r in payload["rungs"]]


def test_the_typed_texts_name_no_unprofiled_kernel_and_no_cause_of_the_host_bound():
    """Item 1: the plan named 'cuDNN's kernel' for fp16's BatchNorm, which no profile showed,
    and the keep rule's mechanics gave the half BatchNorm as the cause of the fp16 rung's host
    bound, which its removed launches (about 1.5 ms of 8.35) cannot carry alone."""
    fp16 = next(s for s in ladder.GPU_STEPS if s.name == "fp16 weights")
    assert "cuDNN" not in fp16.why and "float32" in fp16.why
    said = tables.KEEP_RULE_MECHANICS
    assert "host-bound)" not in said and "which made" not in said
    # review 2026-12-05o 08-09-99 item 6c: the BatchNorm parenthesis hung on the host-bound
    # sentence, where it explained nothing; the fp16 plan row says it
    assert "BatchNorm" not in said.split("The keep rule:")[1]
    assert "BatchNorm's weights stay float32" in fp16.why


def test_the_fp16_reading_names_the_batchnorm_kernel_its_own_profile_launched():
    """Item 1: the page names the BatchNorm kernel from the rung's own profile. On a rung whose
    profile kept cuDNN's kernel (the kernel moves do not name it) the reading says so, with its
    count; on the recorded all-half rung, whose reading already names the kernel that replaced
    it, it is not said twice; other steps and a rung without a profile say nothing."""
    rungs = _recorded_rungs()
    cl, fp16 = next((a, b) for a, b in zip(rungs, rungs[1:], strict=False) if b.name == "fp16 weights")
    # the record of 2026-12-05 04:12: the all-half fp16 rung ran cuDNN's NHWC BatchNorm kernel in
    # half (the 2026-12-04 18:55 record: ATen's batch_norm_transform_input_channels_last_kernel),
    # the same kernel's name as channels_last's float32 rung, so no kernel move names it
    said = explain.batchnorm_ran_as(cl, fp16)
    assert said == explain.batchnorm_kept() + ", ran as 53 bn_fw_inf_1C11_kernel_NHWC a batch"
    assert "against all-half" in said   # review 2026-12-05u item 4: what float32 is set against
    moved = explain.kernel_jump(cl, fp16) or explain.kernels_moved(cl, fp16)
    assert "bn_fw_inf" not in moved and explain.batchnorm_ran_as(cl, fp16, moved) == said
    # a reading whose kernel moves already name the kernel does not say it twice
    assert explain.batchnorm_ran_as(cl, fp16, "+53 bn_fw_inf_1C11_kernel_NHWC") == ""
    kept = dataclasses.replace(fp16, kernel_names=dict(cl.kernel_names),
                               kernels_per_batch=cl.kernels_per_batch)
    assert "ran as 53 bn_fw_inf_1C11_kernel_NHWC a batch" in explain.reading(cl, kept)
    assert explain.batchnorm_ran_as(rungs[0], rungs[1]) == ""          # TF32: not a half step
    assert explain.batchnorm_ran_as(cl, dataclasses.replace(fp16, kernel_names=None)) == ""


@pytest.mark.parametrize("climb_s, begins_by, capped", [
    (99.0, 120.0, False),    # a short climb: the run's budget ends later than its own 20 s
    (105.0, 125.0, False),   # its own 20 s, inside the end
    (112.0, 130.0, True),    # the 19:09 record's climb: 18 s left, three cells need about 13
    (125.0, 130.0, True),    # a long climb: cut at the chapter's end
    (140.0, 130.0, True),    # past the end: no cell begins
])
def test_the_interaction_never_pushes_the_chapter_past_its_limit(climb_s, begins_by, capped):
    """Item 5, the budget arithmetic: the last interaction cell begins by the run's start plus
    INTERACTION_END_S, which is the chapter's 150 s less its other cells and a cell begun just
    before that end; so the chapter's time is at most that end plus a cell plus its other cells,
    whatever the climb took (the climb itself is C24's evidence and is not cut)."""
    assert experiment.INTERACTION_END_S == 130.0
    assert experiment.INTERACTION_END_S + experiment.LAST_CELL_S + experiment.OUTSIDE_RUN_S \
        <= experiment.CHAPTER_LIMIT_S == tables.GPU_CHAPTER_TARGET_S
    # the 19:09 record: 10.6 s outside the run; a cell at 5 rounds with fp16's preparation ~6 s
    assert experiment.OUTSIDE_RUN_S >= 134.8 - 124.2 and experiment.LAST_CELL_S >= 6.2
    until = experiment.interaction_deadline(tables.budget_s(True), climb_s, tables.end_s(True))
    assert until == begins_by
    assert (until < climb_s + experiment.INTERACTION_S) == capped
    assert tables.end_s(False) is None
    assert experiment.interaction_deadline(120.0, 112.0) == 132.0     # no end: as before


def test_a_long_climb_skips_the_cells_past_the_end_and_the_page_says_what_cut_them(monkeypatch):
    """Item 5, end to end on a stand-in ladder and a fake clock: a climb of 125 s leaves the
    steps alone 5 s before the end, so the first cell runs and the later ones are skipped; the
    table's note names the climb's seconds and the chapter's limit, not a budget of their own."""
    now = [0.0]
    monkeypatch.setattr(experiment._clock, "perf_counter", lambda: now[0])
    monkeypatch.setattr(ladder, "release_memory", lambda device: None)
    monkeypatch.setattr(ladder, "release", lambda device: None)

    rung = lambda name, settings: ladder.Rung(name, settings, 100.0, 0.01, 0.0, 0.0, None)  # noqa: E731

    class Stub:
        device, rounds, top = SimpleNamespace(type="cuda"), 8, None

        def __init__(self, *args, **kwargs):
            self.stepped = []

        def baseline(self, name, settings):
            return ladder.Live(rung(name, settings), None)

        def compare(self, lives):
            pass

        def climb(self, steps, strict, deadline, retime_until=None, retry_until=None, retry=True):
            now[0] += 125.0
            rungs = [dataclasses.replace(rung(s.name, s.apply(strict.rung.settings)), kept=True)
                     for s in steps]
            self.top = ladder.Live(rungs[-1], None)
            return rungs

        def prepare(self, name, settings, profiled=True):
            now[0] += 0.8
            return ladder.Live(rung(name, settings), None)

        def step(self, base, name, settings, **kwargs):
            self.stepped.append(name)
            now[0] += 6.2
            return rung(name, settings), base

    monkeypatch.setattr(ladder, "Ladder", Stub)
    monkeypatch.setattr(experiment, "settle_baselines", lambda rungs, bases: None)
    result = experiment._run(SimpleNamespace(type="cuda"), False, False, True, False,
                             tables.budget_s(True), None, lambda: None, compiled_regime=False,
                             end_s=tables.end_s(True))
    assert result.interaction_capped
    assert result.interaction_allowance_s == pytest.approx(experiment.INTERACTION_END_S - 125.0)
    cells = result.regimes["eager"]
    assert [r.error for r in cells.values()] == ["", "skipped", "skipped"]
    assert result.seconds <= experiment.INTERACTION_END_S + experiment.LAST_CELL_S
    again = experiment.Result.from_record(json.loads(json.dumps(result.record())))
    assert again.interaction_capped
    text = str(tables.regimes_table(again))
    assert (f"Not compared: the climb took 125 s, so the steps alone had "
            f"{experiment.INTERACTION_END_S - 125.0:.0f} s of their own 20 before the chapter's 150 s "
            f"limit on the GPU") in text


def test_the_int8_lever_is_said_untimed_until_a_record_times_it():
    """Item 4: the INT8 lever had no row on any page and no scheduled GPU call. The section says
    it was built and checked on the CPU and not yet timed on a GPU, until a record (or a later
    call's file beside it, marked *) has its row measured or refused."""
    from labkit.chapters.ch08_inference_ladder import past_view

    line = "INT8 per-channel weights: built and checked on the CPU against PyTorch; not yet timed on a GPU."
    assert line in str(past_view.section())                     # the recorded H200 run has no row
    row = {"name": "INT8 per-channel weights", "status": "measured"}
    int8 = "INT8 per-channel weights"
    assert int8 not in past_view.untimed([row])
    assert int8 not in past_view.untimed([{**row, "name": f"{row['name']} {past_view.LATER}"}])
    assert int8 not in past_view.untimed([{**row, "status": "refused"}])
    assert int8 in past_view.untimed([{**row, "status": "skipped"}])
    # the other untimed levers (the prologue's) are said apart, each by its own row
    assert set(past_view.untimed([row])) == {
        lv.name for lv in past_defaults.gpu_levers() if lv.model.startswith("triton-op-prologue")}
    data = {"rows": [{"name": "top rung", "status": "measured", "images_per_s": 1.0}, row], "image": 224}
    assert line not in str(past_view.rows_table(data))
    assert line in str(past_view.rows_table({**data, "rows": data["rows"][:1]}))


def test_the_cpu_page_shows_the_recorded_interaction_labelled_recorded():
    """Item 7: on a CPU (no cell measured) the table is the reference GPU's recorded interaction,
    labelled recorded, its figures read from the record; without a chapter or a record with an
    interaction, the CPU note as before; on a GPU the run's own table."""
    from labkit.session import Recorded

    payload = json.loads(RECORD.read_text())["chapters"]["08_inference_ladder"]["ladder"]["payload"]
    recorded = Recorded("08_inference_ladder", "ladder", "nvidia-h200", payload, "2026-12-04")
    cpu = SimpleNamespace(on_gpu=False, reference=lambda key: recorded)
    empty = SimpleNamespace(regime_gains=dict, regime_bases={}, regimes_missing={}, regimes={})
    shown = tables.regimes_table(empty, cpu)
    assert shown.recorded == "recorded on nvidia-h200, 2026-12-04"
    gains = experiment.Result.from_record(payload).regime_gains()["eager"]
    assert f"{gains['channels_last']:.2f}x" in str(shown) and "this run" not in str(shown)
    assert "above, the reference GPU's, as recorded" in str(shown)
    assert "No GPU here: the interaction is measured on a GPU (the steps alone" in str(
        tables.regimes_table(empty))
    nothing = SimpleNamespace(on_gpu=False, reference=lambda key: Recorded("08", "ladder", "nvidia-h200"))
    assert not tables.regimes_table(empty, nothing).recorded


def test_a_step_the_climb_took_on_compiled_code_is_said_to_measure_something_else():
    """Item 8: folding is judged alone on the eager base and on the climb over torch.compile:
    the comparison says the two gains measure different things, naming the step."""
    run = experiment.Result.from_record(
        json.loads(RECORD.read_text())["chapters"]["08_inference_ladder"]["ladder"]["payload"])
    run = dataclasses.replace(run, regimes={}, regime_bases={})   # the gains alone, no ranges
    gains = {"eager": {s.name: 1.1 for s in ladder.REGIME_STEPS}}
    said, _ = tables.adds_up_parts(run, gains)
    assert said.startswith("Do they add up?")
    assert said.endswith("; Conv-BN folding on the climb is judged on compiled code, alone on "
                         "eager: the two gains measure different things")
