"""Review 2026-12-05p, chapter 08, on stub ladders and the records of 2026-12-05 (results/).

Item 1a: a step not decidable (CUDA Graphs over eager fp16) is tried once more after the last
rung at batch 64, by the same rule; its seconds come from the run's end, never the limit.
Item 1b: C24 is not decided on a host-bound deciding rung (never 'refuted').
Item 2: the top rung's device-bound images/s and idle beside its wall figure, per run.
Items 3-5: the verdict's fresh runs, the recorded reference's reproduction, 'held' steps kept in
every run, one line for the host-paced steps, and the Graphs line saying it was not kept.
"""

import json
from types import SimpleNamespace

import pytest
import torch

from labkit.chapters.ch08_inference_ladder import (
    attribution,
    claims,
    experiment,
    keep,
    ladder,
    reproduce,
    tables,
)
from labkit.claims import reproduced
from labkit.claims.registry import get
from tests.chapters.ch08_inference_ladder import test_gpu_page_words as words

STEPS = ladder.GPU_STEPS


class StubLadder(ladder.Ladder):
    """A ladder whose steps are decided by a table, not timed: `undecided` names the steps that
    come out not decidable on their first try; `refused_again` those refused on a retry too."""

    def __init__(self, undecided=("CUDA Graphs",), refused_again=()):
        self.device, self.baselines, self.calls = torch.device("cpu"), [], []
        self.undecided, self.refused_again = set(undecided), set(refused_again)

    def step(self, current, name, settings, transform=None, with_baselines=True, profiled=True,
             retime_until=None):
        self.calls.append(name)
        step = ladder.step_name(name)
        retried = name != step
        kept = step not in self.undecided if not retried else step not in self.refused_again
        rung = ladder.Rung(name, settings, 1000.0 * len(self.calls), 0.01, 0.0, 0.0, None,
                           after=current.rung.name, kept=kept, gain=1.2 if kept else 1.5,
                           judged_by="wall" if kept else keep.NOT_DECIDABLE, idle_share=0.02)
        made = ladder.Live(rung, None)
        return rung, (made if kept else current)


def _start():
    return ladder.Live(ladder.Rung("eager strict float32", ladder.STRICT_FP32, 100.0, 0.64, 0.0, 0.0, None), None)


def test_a_step_not_decidable_is_retried_after_the_last_batch_64_rung_and_the_top_builds_on_it():
    lad = StubLadder()
    start = _start()
    rungs = lad.climb(STEPS, start)
    names = [r.name for r in rungs]
    assert names[-3:] == ["Conv-BN folding", "CUDA Graphs, retried", "batch 256"]
    retried = rungs[-2]
    assert retried.after == "Conv-BN folding" and retried.settings.cuda_graphs and retried.settings.compile
    assert retried.settings.batch == 64 and retried.kept
    assert lad.top.rung.name == "batch 256" and lad.top.rung.settings.cuda_graphs   # the top rung has graphs
    # C24's judged rung is the last kept at batch 64: the retried one
    at_base = [r for r in ladder.kept([start.rung] + rungs) if r.settings.batch == 64][-1]
    assert at_base is retried
    # kept once: the refused first try is not counted among the steps kept
    assert sum(1 for r in rungs if ladder.step_name(r.name) == "CUDA Graphs" and r.kept) == 1


def test_a_retry_refused_again_leaves_the_climb_on_its_base_and_a_decided_ladder_has_no_retry():
    lad = StubLadder(refused_again=("CUDA Graphs",))
    rungs = lad.climb(STEPS, _start())
    assert [r.name for r in rungs][-2:] == ["CUDA Graphs, retried", "batch 256"]
    assert not lad.top.rung.settings.cuda_graphs
    lad = StubLadder(undecided=())
    assert not any(r.name.endswith(ladder.RETRIED) for r in lad.climb(STEPS, _start()))


def test_a_retry_past_its_end_is_shown_skipped_not_run():
    lad = StubLadder()
    rungs = lad.climb(STEPS, _start(), retry_until=0.0)
    skipped = next(r for r in rungs if r.name == "CUDA Graphs, retried")
    assert skipped.error == "skipped" and not skipped.kept and "retry skipped" in skipped.why
    assert "CUDA Graphs, retried" not in lad.calls and not lad.top.rung.settings.cuda_graphs


def test_the_retry_takes_its_seconds_from_the_runs_end_never_past_the_limit():
    # the page: its end (the interaction's last start + a last cell) less the retry and the
    # batch step; a run in time keeps its page within 150 s whatever the retry does
    page = experiment.retry_deadline(0.0, True, 120.0, experiment.INTERACTION_END_S, None)
    assert page == pytest.approx(experiment.INTERACTION_END_S + experiment.LAST_CELL_S
                                 - ladder.RETRY_S - ladder.LAST_STEP_S)
    assert page + ladder.RETRY_S + ladder.LAST_STEP_S + experiment.OUTSIDE_RUN_S <= experiment.CHAPTER_LIMIT_S
    # a reproduce run: its own end, the longest ladder of the 2026-12-05 record
    assert experiment.retry_deadline(0.0, True, None, None, reproduce.LADDER_END_S) == pytest.approx(
        reproduce.LADDER_END_S - ladder.RETRY_S - ladder.LAST_STEP_S)
    assert experiment.retry_deadline(0.0, True, None, None, None) is None      # benchmarks/gpu_ladder.py
    assert experiment.retry_deadline(5.0, False, 80.0, None, None) == 80.0      # a CPU: its budget


def _record():
    data = reproduced.load_record(reproduced.record_path("nvidia-h200", reproduce.CHAPTER))
    if not data or not data.get("evidence"):
        pytest.skip("no reproduce record of 08 in results/")
    return data


def test_c24_is_not_decided_on_a_host_bound_deciding_rung():
    """Run 1 of 2026-12-05 04:09: 4.3x and 2.0x on Conv-BN folding at GPU idle 51%, recorded
    'refuted'; judged again it is not decided, and the device-bound runs keep their reading."""
    data = _record()
    for ev, recorded in zip(data["evidence"], data["claims"]["C24"]["verdicts"], strict=True):
        ev = ev["C24"]
        verdict = get("C24").judge(ev, form=experiment.COURSE_FORM)
        idle = claims.judged_idle(ev)
        if idle is not None and idle > keep.IDLE_LIMIT:
            assert verdict.outcome != "refuted"
            assert verdict.depends_on.startswith("the host: the deciding rung is host-bound (GPU idle")
            assert verdict.depends_on.endswith("so not decided")
        elif recorded["outcome"] == "depends" and recorded["depends_on"].startswith("the baseline"):
            assert verdict.depends_on.startswith("the baseline")
    # a stub: the same numbers device-bound are refuted
    ev = {"at_baseline_batch": {"rung": "r", "speedup_over_strict": 4.3, "speedup_over_defaults": 2.0,
                                "strict_spread": [4.2, 4.5], "defaults_spread": [1.9, 2.1], "idle_share": 0.51},
          "top_rung": "r", "steps_kept": 5, "speedup_over_strict": 4.3, "speedup_over_defaults": 2.0}
    assert claims.check_c24(ev, {"seed_speedup": 4.8})[2].startswith("the host: ")
    ev["at_baseline_batch"]["idle_share"] = 0.1
    assert claims.check_c24(ev, {"seed_speedup": 4.8})[0] == "refuted"


def test_the_top_rungs_device_clock_is_printed_beside_its_wall_figure_per_run():
    tops = [{"name": "batch 256", "batch": 256, "images_per_s": 30461.0, "device_images_per_s": 31500.0,
             "idle_share": 0.021},
            {"name": "batch 256", "batch": 256, "images_per_s": 30043.0, "device_images_per_s": 30493.0,
             "idle_share": 0.015},
            {"name": "batch 256", "batch": 256, "images_per_s": 31721.0, "device_images_per_s": 32123.0,
             "idle_share": 0.012}]
    runs = [{"kept": ["batch 256"], "steps": {}, "top": t} for t in tops]
    lines = reproduce.summarise_numbers(runs)["lines"]
    device = next(line for line in lines if "device clock" in line)
    assert "run 2 30,043 wall, 30,493 device-bound, idle 1.5%" in device
    assert "device-bound spread 5.3%: the device's own time varied" in device
    # a record before the device clock: no such line
    assert not any("device clock" in line for line in reproduce.summarise_numbers(
        [{"kept": [], "steps": {}, "top": {"name": "t", "batch": 1, "images_per_s": 1.0}}])["lines"])
    # the per-kernel ms: the longest kept, the rest summed
    kept = attribution.kernel_ms_kept({f"k{i}": float(i) for i in range(30)})
    assert list(kept)[0] == "k29" and len(kept) == attribution.KERNEL_MS_KEPT + 1
    assert kept[attribution.OTHER_KERNELS] == pytest.approx(sum(range(30 - attribution.KERNEL_MS_KEPT)))


def test_the_verdicts_fresh_runs_and_the_recorded_references_reproduction_are_read_from_results():
    data = _record()
    found = reproduce.c24_runs(data)
    line = reproduce.verdict_line("nvidia-h200", "2026-12-05T04:12:12+00:00")
    note = reproduce.reference_note("nvidia-h200", "2026-12-05T04:12:12+00:00")
    if found["agree"]:
        assert line.startswith("Reproduced by") and "reproduced by" in note
        return
    assert line.startswith(f"Not reproduced by {len(found['labels'])} fresh runs")
    # the page's line gives each run's outcome, the reference's note what each depends on
    # each run's outcome with what it depends on (review 2026-12-05t 08 item 2), and why they differ
    assert f"C24 {', '.join(found['labels'])}" in line
    why = reproduce.why_differs(found)
    assert (f"; why: {why}" in line) if why else "why:" not in line
    assert ", ".join(found["labels"]) in note
    assert "NOT reproduced" in note
    for rate in found["deciding"]:
        assert rate <= max(found["deciding"])
    assert f"{min(found['deciding']):,.0f}-{max(found['deciding']):,.0f} images/s" in line
    # the last record that reproduced, from its file under results/reproduce/superseded/ (a
    # shallow clone has it too): 2026-12-04 19:06, depends (the baseline) 3 of 3
    last = reproduce.last_reproduced("nvidia-h200")
    assert last.startswith("2026-12-04 19:06 UTC") and " 3 of 3" in last
    assert f"Last reproduced: {last}" in note


def test_a_step_kept_in_no_fresh_run_is_not_named_held_and_the_graphs_line_says_it_was_not_kept():
    run = words._h200_run()
    fresh = reproduce.fresh_runs("nvidia-h200")
    if not fresh:
        pytest.skip("no reproduce record of 08 in results/")
    verdict = SimpleNamespace(form=experiment.COURSE_FORM, label="depends (on noise)")
    said = tables.takeaways(run, verdict, fresh=fresh)
    largest = next(line for line in said if "largest" in line or line.startswith("No step"))
    for name, step in fresh["steps"].items():
        if step["kept"] < step["runs"]:
            assert f"held over {fresh['runs']} fresh runs: {name}" not in largest
    graphs = next((r for r in run.rungs if r.name == "CUDA Graphs"), None)
    line = next(line for line in said if line.startswith("CUDA Graphs"))
    if graphs is not None and not graphs.kept:
        assert "Not kept here" in line
    if graphs is not None and graphs.judged_by == keep.NOT_DECIDABLE:
        assert "either way: its worth is the host's pace" in line
    # the host-paced steps: one line, not one sentence each
    assert sum(1 for line in said if "follows the host's pace" in line) == 0
    assert sum(1 for line in said if line.startswith("Device-time gains held")) <= 1
    at_base = run.top_at_baseline_batch
    if at_base.idle_share is not None and at_base.idle_share > keep.IDLE_LIMIT:
        assert "on a host-bound rung" in said[0]


def test_the_evidence_carries_the_judged_rungs_idle_and_the_top_rungs_device_clock():
    run = words._h200_run()
    ev = run.evidence()
    assert ev["at_baseline_batch"]["idle_share"] == run.top_at_baseline_batch.idle_share
    assert ev["top_idle"] == run.top.idle_share
    if run.top.device_s:
        assert ev["top_device_images_per_s"] == pytest.approx(run.top.settings.batch / run.top.device_s)
    json.dumps(ev)   # JSON-ready


def test_a_cpu_ladder_is_not_retried():
    lad = StubLadder()
    rungs = lad.climb(STEPS, _start(), retry=False)
    assert not any(r.name.endswith(ladder.RETRIED) for r in rungs)


def test_only_cuda_graphs_is_retried_and_a_retry_that_reaches_the_same_recipe_reproduces():
    """Review 2026-12-05p2 08 items 4 and 1: a not-decidable cudnn.benchmark (about 1.00x) is not
    retried (it would spend the window Graphs' retry needs); and runs that keep Graphs first time
    and on the retry climbed the same recipe: their keep sets agree by step, and the fresh runs'
    keep sets name the step, so a takeaway can call it held."""
    lad = StubLadder(undecided=("cudnn.benchmark", "CUDA Graphs"))
    names = [r.name for r in lad.climb(STEPS, _start())]
    assert "cudnn.benchmark, retried" not in names and "CUDA Graphs, retried" in names
    assert ladder.RETRY_STEPS == (reproduce.HOST_ONLY_STEP,)

    def run(kept):
        return {"kept": list(kept), "steps": {}, "top": {"name": "batch 256", "batch": 256,
                                                         "images_per_s": 31000.0}}
    first = ("TF32", "CUDA Graphs", "torch.compile", "Conv-BN folding", "batch 256")
    later = ("TF32", "torch.compile", "Conv-BN folding", "CUDA Graphs, retried", "batch 256")
    said = reproduce.summarise_numbers([run(first), run(later), run(later)])
    assert said["steps_agree"] and said["agree"]
    assert not reproduce.summarise_numbers([run(first), run(later[:2] + later[3:])])["steps_agree"]
    # the page's time: the retry begins where it, the batch step and the cells outside the run fit
    page = experiment.retry_deadline(0.0, True, 120.0, experiment.INTERACTION_END_S, None)
    assert page + ladder.RETRY_S + ladder.LAST_STEP_S <= experiment.INTERACTION_END_S + experiment.LAST_CELL_S
    assert ladder.RETRY_S >= 15.0 and ladder.LAST_STEP_S >= 16.6   # the measured maxima of 2026-12-05


def test_the_records_step_counts_read_a_retried_step_as_the_step():
    """A run that kept CUDA Graphs on its retry kept the step; its first try's refusal still
    counts as not decidable in that run, once (review 2026-12-05p2 08 item 1, in c24_runs)."""
    data = {"numbers": [
        {"steps": {"CUDA Graphs": {"kept": True, "judged_by": "wall"}}},
        {"steps": {"CUDA Graphs": {"kept": False, "judged_by": keep.NOT_DECIDABLE},
                   "CUDA Graphs, retried": {"kept": True, "judged_by": "wall"}}},
        {"steps": {"CUDA Graphs": {"kept": False, "judged_by": keep.NOT_DECIDABLE},
                   "CUDA Graphs, retried": {"kept": False, "judged_by": keep.NOT_DECIDABLE}}}]}
    assert reproduce._runs_where(data, lambda s: bool(s.get("kept"))) == {"CUDA Graphs": 2}
    assert reproduce._runs_where(data, lambda s: s.get("judged_by") == keep.NOT_DECIDABLE) == {"CUDA Graphs": 2}
