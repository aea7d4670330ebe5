"""Review 2026-12-04m, chapter 08, on the records it read: results/nvidia-h200.json's 08 ladder
(19:09) and the three fresh runs of reproduce.py 08 (19:06), copied to
data/h200_2026-12-04m.json so these tests keep reading them after the next re-record.

Item 1: fp16's lesson and CUDA Graphs' gain follow the host's pace (fp16 0.97-1.61x wall over
the runs, 0.94x on the page; Graphs 1.24-2.35x, 2.11x on the page): the takeaways give what
held over the runs, and the fp16 reading names the BatchNorm kernels it added.
Item 3: TF32 is not the largest step: 2.14x over strict float32, 1.01x over PyTorch's defaults.
Item 5: 'Not held: not held: ...', and cudnn.benchmark 'not stable' at 0.999-1.000x.
Item 13c: no takeaway repeating the verdict's outcome beside the headline.
"""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from labkit.chapters.ch08_inference_ladder import experiment, explain, report, reproduce, tables

DATA = json.loads((Path(__file__).parent / "data" / "h200_2026-12-04m.json").read_text())
VERDICT = SimpleNamespace(form=experiment.COURSE_FORM, label="depends (on the baseline: past 4.8x "
                          "only over strict float32; PyTorch's default float32 already runs "
                          "convolutions in TF32)")


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    (tmp_path / "reproduce").mkdir()
    (tmp_path / "reproduce" / "nvidia-h200-08_inference_ladder.json").write_text(json.dumps(DATA["reproduce"]))
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path))
    return reproduce.fresh_runs("nvidia-h200")


@pytest.fixture
def run():
    return experiment.Result.from_record(DATA["results"]["chapters"]["08_inference_ladder"]["ladder"]["payload"])


def test_the_takeaways_give_what_held_over_the_fresh_runs_not_this_runs_fp16_and_graphs(run, fresh):
    said = tables.takeaways(run, VERDICT, fresh=fresh)
    # the device gain held (1.84x in all 3); the wall followed the host: one computed line for
    # every such step since review 2026-12-05p 08 item 5 (six near-identical sentences before;
    # fp16's half-BatchNorm cause is its reading's, in the explanations table)
    # folded under the ladder since review 2026-12-05u item 5 (the GPU page's words), not a takeaway
    assert not any(line.startswith("Device-time gains held") for line in said)
    held = report.table(run.rungs, run.strict, run.defaults, fresh=fresh).note
    assert "Device-time gains held in 3 of 3 fresh runs and here (" in held
    assert "fp16 weights 1.84x" in held and "the wall gains moved with the host" in held
    assert not any(line.startswith("Kept on device time") for line in said)   # this run's case, not the lesson
    graphs = next(line for line in said if line.startswith("CUDA Graphs"))
    assert graphs.endswith("in 3 fresh runs 22-59% idle, 1.28-2.42x predicted, 1.24-2.35x measured.")


def test_the_fp16_reading_names_the_batchnorm_kernels_it_added(run):
    by = {r.name: r for r in run.rungs}
    reading = explain.parts(by["channels_last"], by["fp16 weights"])[1]
    assert "182 -> 282: each of the 53 bn_fw_inf_1C11_kernel_NHWC became 3" in reading


def test_tf32_is_not_named_the_largest_step_over_pytorchs_defaults(run, fresh):
    assert tables.taken_by_defaults(run.rungs, run.defaults) == {"TF32": pytest.approx(1.01, abs=0.005)}
    said = next(line for line in tables.takeaways(run, VERDICT, fresh=fresh) if "largest" in line)
    assert said.startswith("The largest step past PyTorch's defaults that held over 3 fresh runs: "
                           "torch.compile (1.67x here, 1.62-1.70x in the runs)")
    assert "CUDA Graphs 2.11x here, 1.24-2.35x in the runs (not held)" in said
    assert "TF32's 2.14x is over strict float32; over PyTorch's defaults, which already take it, 1.01x" in said
    # without fresh runs: this run's largest past the defaults
    alone = next(line for line in tables.takeaways(run, VERDICT, fresh=None) if "largest" in line)
    assert alone.startswith("The largest step past PyTorch's defaults in this run was CUDA Graphs (2.11x)")
    # one baseline (a CPU): nothing is left out
    assert tables.taken_by_defaults(run.rungs, run.strict) == {}


def test_held_says_what_it_means_once_and_a_flag_that_cannot_flip_the_decision_does_not_count(run, fresh):
    shown = report.table(run.rungs, run.strict, run.defaults, fresh=fresh)
    assert "not held: not" not in shown.note.lower() and "Held means: within 10%" in shown.note
    # cudnn.benchmark: not kept in any run, 0.999-1.000x, its one flagged run's range below 1
    step = fresh["steps"]["cudnn.benchmark"]
    assert step["unstable"] == 1 and step["flips"] == 0 and reproduce.holds(step, 1.0)
    assert "cudnn.benchmark" not in shown.fresh
    # a flag counts where it could flip: a range across 1 or across 1.02, or runs that disagree
    assert reproduce.could_flip({"gain_spread": [0.94, 1.05]})
    assert reproduce.could_flip({"gain_spread": [1.01, 1.03]})
    assert not reproduce.could_flip({"gain_spread": [1.21, 1.44]})
    assert reproduce.could_flip({"gain_spread": [1.21, 1.44]}, split=True)
    assert reproduce.could_flip({})
    # the flagged fp16 and CUDA Graphs steps still do not hold (their runs are far apart)
    assert {"fp16 weights", "CUDA Graphs"} <= {n for n, s in fresh["steps"].items() if not reproduce.holds(s)}


def test_the_verdicts_outcome_is_not_a_takeaway_beside_the_headline(run, fresh):
    said = tables.takeaways(run, VERDICT, fresh=fresh)
    assert said[0].startswith("C24's judged form") and not any(line.startswith("C24:") for line in said)


def test_the_evidence_leads_with_the_judged_numbers(run):
    """Item 8: the fold opened with the top rung's unjudged 9.77x at batch 256."""
    from labkit.claims.registry import get

    verdict = get("C24").judge(run.evidence(), form=run.plan.form)
    keys = list(verdict.evidence)
    assert keys[0] == "at_baseline_batch" and keys[-1] == "rungs"
    assert keys.index("baseline_batch") < keys.index("speedup_over_strict")


def test_a_trade_is_said_only_where_the_loss_is_material():
    """Item 13b: CUDA Graphs' 1.00x (0.99 to 1.00) device time read 'the device time it costs'."""
    from labkit.chapters.ch08_inference_ladder import keep

    graphs = keep.decide(True, "", 2.11, (2.09, 2.15), 0.995, (0.99, 0.999), 0.54, 0.02)
    assert graphs.kept and "a trade" not in graphs.why
    costly = keep.decide(True, "", 2.11, (2.09, 2.15), 0.90, (0.89, 0.91), 0.54, 0.02)
    assert "the device time it costs" in costly.why


def test_the_gap_split_multiplies_as_printed():
    """Item 13a: '3.1x gap = 2.0x precision x 1.5x efficiency' for 3.08 = 2.00 x 1.54."""
    from labkit.chapters.ch08_inference_ladder import roofline

    split = roofline.gap_split(30_842.0, "float16", roofline.flops_per_image(224), "NVIDIA H200", None)
    line = next(x for x in split.lines("float16") if "gap =" in x)
    gap, precision, efficiency = (float(w.rstrip("x")) for w in line.split() if w.endswith("x") and w[0].isdigit())
    assert abs(precision * efficiency - gap) <= 0.011


def test_the_interaction_says_how_much_the_climb_left_and_what_its_measured_cells_show(run):
    """Item 2: 'Not compared: the 120 s budget ran out', the climb's own share unsaid, and fp16
    alone (1.38x device) against fp16 after channels_last (1.84x) not said."""
    text = str(tables.regimes_table(run))
    assert "the climb took 112 s of it, leaving 8 s for the steps alone (this run: 124 s)" in text
    assert ("Measured both ways: fp16 weights 1.38x device time alone, 1.84x on the climb after "
            "channels_last") in text
    # channels_last alone (1.21x) agrees with its climb gain (1.20x): not named
    assert "channels_last 1.2" not in tables.alone_against_climb(run)


def test_the_opening_quiz_accepts_every_band_its_spread_reaches(run):
    """Item 12: one band from the median, whatever the spread."""
    assert tables.total_key(run, True) == "2x to 4.8x"     # 4.13x (4.1-4.2): one band
    judged = run.top_at_baseline_batch
    judged.over[run.defaults.name] = (4.75, 4.70, 4.85)
    key = tables.total_key(run, True)
    assert key.answer == "2x to 4.8x" and key.choices_right() == ("2x to 4.8x", "4.8x to 7x")


def test_the_cpu_page_shows_the_reference_ladder_after_the_plan_and_a_gpu_records_its_own(monkeypatch):
    """Item 12: the recorded H200 ladder came after this CPU's ladder, standing and verdict."""
    calls = []
    cpu = SimpleNamespace(on_gpu=False, reference=lambda key: calls.append(("reference", key)) or {"rungs": []})
    assert tables.reference_ladder(cpu) is None and calls == [("reference", "ladder")]
    gpu = SimpleNamespace(on_gpu=True, here_or_recorded=lambda key, measure: calls.append(("record", key)))
    assert tables.reference_ladder(gpu) is None
    tables.record_ladder(gpu, SimpleNamespace(record=dict))
    tables.record_ladder(cpu, SimpleNamespace(record=dict))
    assert calls == [("reference", "ladder"), ("record", "ladder")]
    source = (Path(__file__).parents[3] / "notebooks" / "08_inference_ladder.py").read_text()
    assert source.index("lab.tables.reference_ladder(chapter)") < source.index("ladder_run = lab.experiment.run(")
    assert source.index("quiz_unfelt = ") < source.index("lab.tables.plan_table(plan)")


def test_the_interaction_has_time_of_its_own_and_fewer_rounds_so_all_three_cells_are_measured(monkeypatch):
    """Item 2, structural: on the H200 the climb took 112 s of the 120 s budget and the third
    cell (Conv-BN folding alone) was cut, so 'Do they add up?' compared nothing in two records.
    The interaction now has INTERACTION_S of its own from when it begins, and its cells are timed
    in INTERACTION_ROUNDS rounds (the ladder's own put back after). The stand-in ladder measures
    nothing: each cell's timing advances a fake clock by the 19:09 record's 3 s."""
    from labkit.chapters.ch08_inference_ladder import ladder

    now = [112.0]                      # the climb's end on the 19:09 record; the budget ends at 120
    monkeypatch.setattr(experiment._clock, "perf_counter", lambda: now[0])
    monkeypatch.setattr(ladder, "release_memory", lambda device: None)

    class Stub:
        device, rounds = None, 8

        def __init__(self):
            self.stepped = []

        def prepare(self, name, settings, profiled=True):
            now[0] += 0.8
            return ladder.Live(ladder.Rung(name, settings, 100.0, 0.01, 0.0, 0.0, None), None)

        def step(self, base, name, settings, **kwargs):
            self.stepped.append((name, self.rounds))
            now[0] += 3.0 if "fp16" not in name else 6.2
            return ladder.Rung(name, settings, 100.0, 0.01, 0.0, 0.0, None), base

    lad = Stub()
    result = SimpleNamespace(regimes={}, regime_bases={}, regimes_missing={})
    until = experiment.interaction_deadline(120.0, now[0])
    assert until == 112.0 + experiment.INTERACTION_S
    experiment._interaction(lad, result, until, compiled=False, rounds=experiment.INTERACTION_ROUNDS)
    assert [n for n, _ in lad.stepped] == [f"eager: + {s.name}" for s in ladder.REGIME_STEPS]
    assert {r for _, r in lad.stepped} == {experiment.INTERACTION_ROUNDS} and lad.rounds == 8
    assert not any(r.error for r in result.regimes["eager"].values())
    # within the budget the climb left, the later of the two ends holds
    assert experiment.interaction_deadline(300.0, 112.0) == 300.0
    assert experiment.interaction_deadline(None, 112.0) is None


def test_a_cut_cell_under_the_interactions_own_time_says_so_not_the_climbs_budget(run):
    """Where the interaction had its own seconds and still ran out (a slow GPU), the note names
    those seconds and what the steps took, not the climb's share of the chapter's budget."""
    run.interaction_allowance_s = 20.0
    run.section_s = {"climb": 112.0, "interaction": 21.4}
    text = str(tables.regimes_table(run))
    assert "Not compared: the steps alone ran out of their own 20 s (they took 21 s, the climb 112 s)." in text
    assert "budget ran out" not in text


def test_channels_last_under_compile_is_explained_from_the_record_and_inductors_own_rule(tmp_path):
    """Issue 40: 'chapter 08 never explains why channels_last gives only 1.03x under compile'.
    The interaction folds the recorded compiled-base gain (benchmarks/gpu_ladder.py's run with
    that column) and the source reading; here the reading is checked against this torch: its
    own decide_layout_opt, run on ResNet-50's inference graph (fake tensors, no convolution
    computed), lays the convolutions out channels_last."""
    import torch
    from torch._inductor.graph import GraphLowering
    from torch.func import functional_call
    from torch.fx.experimental.proxy_tensor import make_fx

    from labkit.models import resnet

    said = tables.recorded_compiled_layout()
    assert "channels_last 1.03x [1.03, 1.03] on the compiled + CUDA graphs base" in said
    assert "1.20x [1.19, 1.21] on the eager base" in said and "(recorded: results/h200_ladder/" in said
    assert tables.recorded_compiled_layout(tmp_path) == ""          # no record: nothing said
    assert "not measured" in tables.layout_read()
    folded = tables.regimes_table(SimpleNamespace(regime_gains=dict, regime_bases={},
                                                  regimes_missing={}, regimes={}))
    assert any("1.03x" in text for _, text in folded.folded)

    model = resnet.resnet50().eval()
    weights = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    with torch.no_grad():
        graph = make_fx(lambda w, x: functional_call(model, w, (x,)), tracing_mode="fake")(
            weights, torch.randn(1, 3, 64, 64))
    # the CPU's own branch (oneDNN: always channels_last) off, so the GPU's heuristic decides
    with torch.backends.mkldnn.flags(enabled=False):
        assert GraphLowering.decide_layout_opt(graph, is_inference=True) is True


def test_the_standing_line_points_at_the_fused_rungs_net_gain_not_at_removing_the_share(run):
    """Item 7: 'elementwise 39%: the optional section times removing it' oversold a section
    whose fused epilogues removed 2.2 ms of tails and gave most of it back in GEMM time (net 5%).
    The share is the best rung's own profile; the net is the section's record, read."""
    from labkit.chapters.ch08_inference_ladder import attribution, past_view

    best = run.best
    line = tables.bound_line(best, 8.18e9, 729.0)
    share = 100 * best.kinds[attribution.ELEMENTWISE]
    net = past_view.fused_net(past_view.recorded_with_later())
    # the lower of the two calls that measured it, each over its own top rung (review 2026-12-05t
    # 08 item 4: the 5% rested on one call, over another call's top rung)
    assert net is not None and f"{100 * net:.0f}%" == "6%"
    assert line.endswith(f"; elementwise {share:.0f}% (fusing it into GEMM epilogues saved 6% net, "
                         "the lower of 2 calls: the optional section, recorded)")
    assert "times removing it" not in line


def test_every_combined_lever_is_timed_interleaved_with_its_own_control_and_released_after():
    """Item 7 / issue 41: 'timed interleaved with the rung it changes' was untrue for combined
    rows: freezing + conv_1x1_as_mm was timed against the top rung only, and its gain over
    freezing was a ratio of two gains from separate rounds. Each lever with a control of its
    own (past_view.OWN_CONTROL) now has that control as its base, which stays prepared (joins
    the lever's rounds) and comes before it; a kept base is released after the last lever
    judged over it, so it costs no other comparison's rounds."""
    from labkit.chapters.ch08_inference_ladder import past_defaults, past_view

    levers = past_defaults.gpu_levers()
    at = {lever.name: i for i, lever in enumerate(levers)}
    by = {lever.name: lever for lever in levers}
    for lever, control in past_view.OWN_CONTROL.items():
        assert by[lever].base == control and by[control].stays and at[control] < at[lever], lever
    assert at["freezing + conv_1x1_as_mm"] == at["conv_1x1_as_mm"] + 1

    class Live:
        prepared = "model"

    runner = object.__new__(past_defaults.Runner)
    runner.device = None
    top, freezing, batch64 = Live(), Live(), Live()
    runner.ladder = SimpleNamespace(baselines=[top, batch64, freezing])
    runner.bases = {past_defaults.TOP_NAME: (top, None), past_defaults.AT_64: (batch64, None),
                    "freezing": (freezing, None)}
    import labkit.chapters.ch08_inference_ladder.ladder as ladder_module
    released = []
    original = ladder_module.release_memory
    ladder_module.release_memory = released.append
    try:
        runner.release_bases({past_defaults.AT_64, past_defaults.TOP_NAME})
    finally:
        ladder_module.release_memory = original
    assert set(runner.bases) == {past_defaults.TOP_NAME, past_defaults.AT_64}
    assert runner.ladder.baselines == [top, batch64] and freezing.prepared is None and released


def test_the_fp16_rung_keeps_batchnorm_float32_so_cudnn_runs_it_and_its_output_stays_half():
    """Item 1's fix (04k, 04l item 2): model.to(float16) made every BatchNorm half, which cuDNN
    does not take (half input, float32 weights only), so each of its 53 kernels became three
    of ATen's on the H200 (182 -> 282 per batch) and the rung went host-bound (17-54% idle over
    the runs, wall 0.94-1.61x). The rung now keeps BatchNorm's weights and statistics float32;
    its convolutions, activations and output stay float16. A folded model has no BatchNorm.
    On the CPU (no cuDNN) the same model runs; the H200's kernels and idle are the next record's."""
    import torch

    from labkit.chapters.ch08_inference_ladder import ladder, numerics

    def small():
        return torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                                   torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10))

    half = ladder.batchnorm_float32(small().half(), "float16")
    assert half[0].weight.dtype == torch.float16 and half[1].weight.dtype == torch.float32
    assert half[1].running_var.dtype == torch.float32 and half[5].weight.dtype == torch.float16
    bf16 = ladder.batchnorm_float32(small().bfloat16(), "bfloat16")
    assert bf16[1].weight.dtype == torch.bfloat16               # cuDNN takes no bf16 BatchNorm
    with torch.no_grad():
        assert half.eval()(torch.randn(2, 3, 16, 16).half()).dtype == torch.float16
    prepared = ladder.prepare(ladder.Settings(dtype="float16", batch=2), torch.device("cpu"), 16, small)
    reference = ladder.reference_logits(torch.device("cpu"), 16, small)
    assert numerics.check(prepared.output, reference[:prepared.output.shape[0]], "float16").passed


def test_a_compiled_fp16_model_with_float32_batchnorm_stays_half_and_right():
    """The climb compiles the fp16 rung (torch.compile comes before folding): Inductor's
    BatchNorm decomposition takes the half input with float32 weights and casts back to half.
    Checked with Inductor on the CPU (a tiny network; the GPU's is the next record's)."""
    import copy

    import torch

    from labkit.chapters.ch08_inference_ladder import ladder, numerics

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                                torch.nn.Conv2d(16, 16, 1), torch.nn.BatchNorm2d(16)).eval()
    with torch.no_grad():
        model[1].running_var.uniform_(0.5, 2.0)
        model[1].running_mean.uniform_(-1.0, 1.0)
    x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = model(x)
        half = ladder.batchnorm_float32(copy.deepcopy(model).half(), "float16")
        compiled = torch.compile(half, backend="inductor", dynamic=False)(x.half())
    assert compiled.dtype == torch.float16
    assert numerics.relative_error(compiled.float(), expected) < 1e-2
