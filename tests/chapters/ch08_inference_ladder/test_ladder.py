"""The ladder's arithmetic (speed-ups across batch sizes, spreads, step gains, payback) on
constructed rungs, its refusals, one real CPU rung, and chapter 08's exercises both ways."""

import math
import os

import pytest
import torch

from labkit.chapters.ch08_inference_ladder import ladder


def rung(name, batch, median_s, iqr_s=0.0, after="", kept=True):
    return ladder.Rung(name, ladder.Settings(batch=batch), batch / median_s, median_s, iqr_s,
                       0.0, None, after=after, kept=kept)


def test_speedup_counts_images_not_calls():
    base, big = rung("base", 64, 0.1), rung("big", 256, 0.3)
    assert big.speedup_over(base) == pytest.approx(4 / 3)
    low, high = rung("a", 64, 0.1, 0.02).speedup_spread(rung("b", 64, 0.2, 0.02))
    assert low == pytest.approx(0.19 / 0.11) and high == pytest.approx(0.21 / 0.09)


def test_step_gains_follow_what_each_rung_was_built_on():
    rungs = [rung("start", 64, 0.4), rung("slower", 64, 0.5, after="start", kept=False),
             rung("faster", 64, 0.2, after="start")]
    gains = ladder.step_gains(rungs)
    assert gains == {"slower": pytest.approx(0.8), "faster": pytest.approx(2.0)}
    assert [r.name for r in ladder.kept(rungs)] == ["start", "faster"]


def test_payback():
    assert ladder.payback_batches(10.0, 2e-3, 1e-3, 100) == pytest.approx(100.0)
    assert math.isinf(ladder.payback_batches(10.0, 1e-3, 1e-3, 100))


@pytest.mark.parametrize("bad, says", [
    (dict(dtype="int8"), "dtype must be one of"),
    (dict(autocast="float64"), "autocast must be"),
    (dict(compile="fast"), "compile must be"),
    (dict(batch=0), "batch must be a positive int"),
])
def test_settings_refuse_what_they_cannot_run(bad, says):
    with pytest.raises(ladder.LadderError, match=says):
        ladder.Settings(**bad)


def test_gpu_only_switches_are_refused_on_a_cpu():
    with pytest.raises(ladder.LadderError, match="need a CUDA GPU"):
        ladder.prepare(ladder.Settings(cuda_graphs=True), torch.device("cpu"), 32)


def test_a_real_cpu_rung_with_folding_matches_the_unfolded_output():
    small = lambda: torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8),  # noqa: E731
                                        torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    plain = ladder.prepare(ladder.Settings(batch=2), torch.device("cpu"), 16, small)
    folded = ladder.prepare(ladder.Settings(batch=2, fold_bn=True, channels_last=True),
                            torch.device("cpu"), 16, small)
    assert torch.allclose(plain.output, folded.output, rtol=1e-4, atol=1e-5)


def test_freezing_needs_compile_and_the_cpu_ladder_starts_from_all_cores():
    with pytest.raises(ladder.LadderError, match="freezing"):
        ladder.Settings(freezing=True)
    assert all("threads" not in step.change for step in ladder.cpu_steps(4))
    from labkit.chapters.ch08_inference_ladder import experiment

    assert experiment.plan(False).start.threads is None  # torch's default: every core


def test_the_ladder_table_shows_each_rung_against_both_baselines():
    from labkit.chapters.ch08_inference_ladder import report

    rungs = [rung("start", 64, 0.4), rung("slower", 64, 0.5, after="start", kept=False),
             rung("faster", 64, 0.2, 0.02, after="start")]
    rungs[1].why = "slower: 0.80x wall"
    shown = report.table(rungs, strict=rungs[0], defaults=rungs[1])
    cells = dict((r[1][0], r[1]) for r in shown.rows)
    assert cells["faster"][2] == "320" and cells["faster"][4].startswith("2.00x")
    assert cells["faster"][5] == "2.50x" and cells["slower"][1].startswith("not kept: slower")
    html = shown._repr_html_()
    # the core table (the decision in a few words), then every column folded under it (issue 37)
    core, folded = html.split("<details>")
    assert core.count("<tr") == 4 and "color:#888" in core and "over PyTorch defaults" in folded
    assert ">not kept<" in core and "not kept: slower" not in core
    assert folded.count("<tr") == 4 and "not kept: slower" in folded
    assert "<th>IQR</th>" in folded and "<th>IQR</th>" not in core
    assert "slower" in report.short(rungs)


def measured(name, batch, wall_s, device_samples, kernels=None, kinds=None, after=""):
    r = rung(name, batch, wall_s, after=after)
    r.device_samples = list(device_samples)
    r.device_s = sorted(device_samples)[len(device_samples) // 2]
    r.idle_share = ladder.idle_share(r.device_s, wall_s)
    r.kernels_per_batch, r.kinds = kernels, kinds or {}
    return r


def test_idle_comes_from_device_time_over_unprofiled_wall_time():
    assert ladder.idle_share(4e-3, 10e-3) == pytest.approx(0.6)
    assert ladder.idle_share(12e-3, 10e-3) == 0.0  # never negative
    assert ladder.idle_share(None, 10e-3) is None and ladder.idle_share(1e-3, 0.0) is None


def test_device_gain_is_per_image_with_a_range_from_both_rungs_batches():
    before = measured("a", 64, 10e-3, [4.0e-3, 4.1e-3, 4.2e-3, 4.1e-3])
    after = measured("b", 256, 20e-3, [8.0e-3, 8.2e-3, 8.4e-3, 8.2e-3])
    gain, low, high = ladder.device_gain(before, after)
    assert gain == pytest.approx((4.1e-3 / 64) / (8.2e-3 / 256))
    assert low < gain < high
    assert ladder.device_gain(before, rung("cpu", 64, 0.1)) is None


def test_the_explanation_follows_the_numbers_not_the_step_name():
    from labkit.chapters.ch08_inference_ladder import explain

    # a host-side gain: wall up, device time down, the same kernel count (folding on the H200)
    before = measured("fp16", 64, 7.0e-3, [4.16e-3] * 5, kernels=267,
                      kinds={"GEMM/conv": 0.7, "elementwise": 0.26})
    after = measured("fold", 64, 5.6e-3, [4.62e-3] * 5, kernels=267,
                     kinds={"GEMM/conv": 0.33, "elementwise": 0.64}, after="fp16")
    after.gain, after.gain_spread = 1.25, (1.22, 1.28)
    gain, low, high = ladder.device_gain(before, after)
    after.device_gain, after.device_spread = gain, (low, high)
    text = explain.step(before, after)
    assert "0.90x device time" in text and "the gain is the host's" in text.lower()
    assert "as many kernels (267 -> 267)" in text and "elementwise 26% -> 64%" in text
    # the same step name with a device-side gain reads the other way
    after.device_gain, after.device_spread = 2.08, (2.0, 2.1)
    after.gain_spread = (0.98, 1.03)
    assert "the device's work shrank while the host set the pace" in explain.reading(before, after)


def test_the_cpu_ladder_leaves_bf16_out_without_bf16_units():
    assert ladder.cpu_bf16_units("flags : fpu sse avx2 avx512f") == ()
    assert ladder.cpu_bf16_units("flags : fpu avx512f avx512_bf16 amx_bf16") == ("avx512_bf16", "amx_bf16")
    names = [s.name for s in ladder.cpu_steps(4, bf16_units=())]
    assert "bf16 autocast" not in names and names[0] == "channels_last"
    assert "bf16 autocast" in [s.name for s in ladder.cpu_steps(4, bf16_units=("amx_bf16",))]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("graphs", [False, True])
def test_a_gpu_rung_reads_its_device_time_per_batch_from_kernel_records(graphs):
    """Eager and CUDA-graph rungs both split into one device time per batch, each under the
    rung's wall time per batch, so the unprofiled idle share lies in [0, 1)."""
    small = lambda: torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8),  # noqa: E731
                                        torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    device = torch.device("cuda")
    settings = ladder.Settings(batch=4, cuda_graphs=graphs)
    prepared = ladder.prepare(settings, device, 16, small)
    samples = ladder.device_seconds(prepared.run, device, 5)
    assert len(samples) == 5 and all(s > 0 for s in samples)
    import time

    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(20):
        prepared.run()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - started) / 20
    idle = ladder.idle_share(sorted(samples)[2], wall)
    assert 0.0 <= idle < 1.0


def test_a_measured_but_tiny_device_change_is_not_read_as_the_gain():
    from labkit.chapters.ch08_inference_ladder import explain

    # CUDA Graphs on the H200: wall 1.08x, device time 1.01x with a tight range
    before = measured("compile", 64, 3.0e-3, [2.40e-3, 2.41e-3, 2.41e-3, 2.42e-3])
    after = measured("graphs", 64, 2.8e-3, [2.37e-3, 2.38e-3, 2.38e-3, 2.39e-3], after="compile")
    after.gain, after.gain_spread = 1.08, (1.08, 1.17)
    gain, low, high = ladder.device_gain(before, after)
    after.device_gain, after.device_spread = gain, (low, high)
    assert low > 1.0  # the rule's test passes...
    assert explain.reading(before, after).startswith("the gain is the host's")  # ...the reading is the host's


def _small():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 10))


def test_an_interaction_step_is_timed_against_its_base_alone_unprofiled_and_each_phase_is_timed():
    lad = ladder.Ladder(torch.device("cpu"), 16, rep_ms=20.0, rounds=3, model_factory=_small,
                        profile_batches=1)
    start = lad.baseline("start", ladder.Settings(batch=2))
    lad.compare([])
    base = lad.prepare("base", ladder.Settings(batch=2, channels_last=True), profiled=False)
    rung, _ = lad.step(base, "base + folding", ladder.Settings(batch=2, channels_last=True, fold_bn=True),
                       with_baselines=False, profiled=False)
    assert set(rung.over) == {"base"} and rung.gain == rung.over["base"][0]   # no baseline timed
    assert start.rung.name not in base.rung.over and base.rung.median_s > 0   # the base timed with it
    assert rung.trace is None and not rung.kinds and base.rung.trace is None  # no profile taken
    with_them, _ = lad.step(base, "base + batch 4", ladder.Settings(batch=4, channels_last=True))
    assert "start" in with_them.over and with_them.trace is not None          # the climb's default
    assert {"prepare", "profile", "device", "timing"} <= set(rung.phase_s)
    assert all(seconds >= 0 for seconds in rung.phase_s.values()) and rung.as_dict()["phase_s"]


def test_the_climb_compiles_into_a_fresh_cache_and_puts_the_old_setting_back(monkeypatch):
    from labkit.chapters.ch08_inference_ladder import experiment

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/somewhere/warm")
    monkeypatch.setenv("TRITON_CACHE_DIR", "/somewhere/warm/triton")
    with experiment.cold_compiles() as folder:
        assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == folder and not os.listdir(folder)
        assert "TRITON_CACHE_DIR" not in os.environ    # Triton's cache then lives under Inductor's
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == "/somewhere/warm"
    assert os.environ["TRITON_CACHE_DIR"] == "/somewhere/warm/triton"



def _capability(monkeypatch, capability):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)


def test_a_t4_ladder_has_no_tf32_rung_and_an_h200_keeps_it(monkeypatch, capsys):
    """Compute capability 7.5: the TF32 step would time float32, so it is left out and said so."""
    from labkit.chapters.ch08_inference_ladder import experiment

    _capability(monkeypatch, (7, 5))
    names = [s.name for s in experiment.plan(True).steps]
    assert "TF32" not in names and names[0] == "cudnn.benchmark"
    assert "7.5 < 8.0" in capsys.readouterr().out
    _capability(monkeypatch, (9, 0))
    assert experiment.plan(True).steps == ladder.GPU_STEPS and capsys.readouterr().out == ""


def test_fp8_needs_ada_through_the_shared_check(monkeypatch):
    from labkit.chapters.ch08_inference_ladder import fused_epilogue as fe

    _capability(monkeypatch, (8, 0))
    assert "8.0 < 8.9" in fe.missing_fp8(torch.device("cuda"))
    _capability(monkeypatch, (9, 0))
    assert fe.missing_fp8(torch.device("cuda")) == ""
    assert "CUDA GPU" in fe.missing_fp8(torch.device("cpu"))


def test_a_t4_interaction_runs_on_float32_bases_named_so(monkeypatch):
    """7.5: the interaction's bases have TF32 off and say float32; 9.0: TF32 on, as before."""
    from types import SimpleNamespace

    from labkit.chapters.ch08_inference_ladder import tables

    _capability(monkeypatch, (7, 5))
    settings, name = ladder.regime_base()
    assert settings.tf32 == "off" and name == "float32 base"
    run = SimpleNamespace(regime_gains=dict, regimes_missing={},
                          regime_bases={"eager": SimpleNamespace(settings=settings, images_per_s=1.0)})
    assert "no TF32 on this GPU" in tables.regimes_table(run).title
    _capability(monkeypatch, (9, 0))
    assert ladder.regime_base() == (ladder.REGIME_BASE, "TF32 base")
    run.regime_bases["eager"].settings = ladder.REGIME_BASE
    assert "(TF32 on)" in tables.regimes_table(run).title


def test_a_steps_base_is_read_from_the_steps_own_rounds(monkeypatch):
    """Review 2026-12-03c item 1: the base's images/s and idle beside a step's gain, and the idle
    the keep rule's host-bound test reads, come from the step's own comparison, not the base's."""
    from labkit.chapters.ch08_inference_ladder import keep, report

    lad = ladder.Ladder(torch.device("cpu"), 16, rep_ms=20.0, rounds=3, model_factory=_small,
                        profile_batches=0)
    start = lad.baseline("start", ladder.Settings(batch=2))
    lad.compare([])
    base, _ = lad.step(start, "base", ladder.Settings(batch=2, channels_last=True))
    base_live = ladder.Live(base, ladder.prepare(base.settings, lad.device, 16, _small))
    base_live.rung.device_s = 0.5 * base.median_s          # a device clock, as a GPU's
    seen = {"idle_before": []}
    real = keep.decide

    def spy(*args):
        # every reading the rule made (a base that moved in every timing is read over each
        # timing and over its own step: keep.over_moved_base)
        seen["idle_before"].append(args[6])
        return real(*args)
    monkeypatch.setattr(keep, "decide", spy)
    after, _ = lad.step(base_live, "folded", ladder.Settings(batch=2, channels_last=True, fold_bn=True))
    here = after.here["base"]
    assert set(after.here) == {"start", "base"}             # every other rung of its rounds
    assert here["idle_share"] == pytest.approx(ladder.idle_share(base.device_s, 2 / here["images_per_s"]))
    assert base.idle_share is None                          # its own step had no device clock:
    assert here["idle_share"] in seen["idle_before"]        # the keep rule read these rounds'
    assert base.images_per_s == pytest.approx(2 / base.median_s)   # its own row: its own step's
    shown = report.in_rounds(after, start.rung)
    assert shown.startswith(f"{here['images_per_s']:,.0f} images/s, idle ") and "start" in shown
    own = here.get("step_images_per_s", after.images_per_s)   # a re-time's, when the base moved
    assert f"medians' ratio {own / here['images_per_s']:.2f}x" in shown
    assert after.as_dict()["here"]["base"] == here


def test_a_kept_step_with_a_wide_spread_or_a_moved_base_is_flagged_unstable():
    from labkit.chapters.ch08_inference_ladder import keep

    assert keep.unstable(0.05, 9000.0, 0.05, 9100.0) == ""
    wide = keep.unstable(0.53, 9000.0, 0.05, None)
    assert "IQR 53% > 10%" in wide
    moved = keep.unstable(0.05, 9265.0, 0.10, 12650.0)     # the H200 record's fp16, re-timed
    assert "base re-timed +37% off its median 9,265 (IQR 8,802-9,728)" in moved
    # outside a tight IQR by a hair (an earlier H200 TF32 base): no flag under BASE_MOVE
    assert keep.unstable(0.001, 6715.7, 0.00015, 6720.6) == ""
    assert "10%" in keep.unstable_rule()
    with pytest.raises(ValueError, match="negative"):
        keep.unstable(-0.1, 1.0, 0.0, None)


def test_graph_replay_is_explained_by_the_hosts_counted_launch_calls():
    """Review item 6: as many kernels on the GPU, one graph launch from the host."""
    from labkit.chapters.ch08_inference_ladder import explain

    before, after = rung("compiled", 64, 0.01), rung("graphs", 64, 0.008, after="compiled")
    after.gain, after.gain_spread = 1.25, (1.19, 1.36)
    after.device_gain, after.device_spread = 1.0, (0.99, 1.01)
    before.kernels_per_batch = after.kernels_per_batch = 106
    before.host_launches = {"kernel launches": 106, "graph launches": 0}
    after.host_launches = {"kernel launches": 0, "graph launches": 1}
    said = explain.step(before, after)
    assert "host launch calls 106 -> 1 a batch, kernels 106 -> 106" in said
    assert "not fewer launches" not in said and "graph launches 0 -> 1" in said


def test_first_broken_is_graded_independently_of_the_gate_and_agrees_with_it():
    """Review item 13: the exercise's answer uses torch's norms, not numerics.check; on its
    cases the gate refuses the same rung (the task says they never split the two tests)."""
    import random

    from labkit.chapters.ch08_inference_ladder import exercises, numerics

    for seed in range(30):
        ref, rungs = exercises._rungs_case(random.Random(seed))
        by_gate = next((n for n, out, m in rungs if not numerics.check(out, ref, m).passed), None)
        assert exercises.reference_first_broken(ref, rungs) == by_gate


def test_a_rise_in_kernels_is_named_by_class_and_kernel_or_said_unidentified():
    """Review 2026-12-03d item 12: fp16's 182 -> 282 kernels per batch went unexplained."""
    from labkit.chapters.ch08_inference_ladder import explain

    before, after = rung("channels_last", 64, 0.008), rung("fp16 weights", 64, 0.005, after="channels_last")
    after.gain, after.gain_spread = 1.59, (1.40, 1.65)
    before.kernels_per_batch, after.kernels_per_batch = 182, 282
    said = explain.numbers(before, after)
    assert "182 -> 282 (which kernels were added is not in this record)" in said
    before.kernel_counts = {"GEMM/conv": 53, "elementwise": 60, "copies/layout": 0}
    after.kernel_counts = {"GEMM/conv": 53, "elementwise": 100, "copies/layout": 60}
    before.kernel_names = {"conv": 53, "add": 60}
    after.kernel_names = {"conv": 53, "add": 60, "cast_fp16": 60, "bias": 40}
    said = explain.numbers(before, after)
    assert "182 -> 282 (copies/layout +60, elementwise +40; most added: +60 cast_fp16; +40 bias)" in said
    # fewer kernels: nothing to name
    before.gain, before.gain_spread = 0.6, (0.55, 0.65)
    assert "most added" not in explain.numbers(after, before)


def test_a_compiled_rung_leaves_dynamos_settings_as_it_found_them(monkeypatch):
    """The ladder compiles with automatic dynamic shapes off and high recompile limits, but only
    while a rung compiles: a process-wide change once made chapter 04's recompile sweep, run
    later in the same pytest worker, compile every shape (a CI failure that hung on test order)."""
    config = torch._dynamo.config
    before = (config.automatic_dynamic_shapes, config.cache_size_limit)
    small = lambda: torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8),  # noqa: E731
                                        torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    seen = {}
    real_compile = torch.compile

    def compile_and_note(*args, **kwargs):  # the real torch.compile; it notes the settings it ran under
        compiled = real_compile(*args, **kwargs)

        def call(*a, **k):
            seen.setdefault("first call", (config.automatic_dynamic_shapes, config.cache_size_limit))
            return compiled(*a, **k)
        return call

    monkeypatch.setattr(torch, "compile", compile_and_note)
    prepared = ladder.prepare(ladder.Settings(batch=2, compile="default"), torch.device("cpu"), 16, small)
    assert seen["first call"][0] is False and seen["first call"][1] >= 256  # while it compiled
    assert (config.automatic_dynamic_shapes, config.cache_size_limit) == before  # and after
    assert prepared.output.shape[-1] == 8


def test_an_interaction_regime_whose_base_ate_the_budget_is_a_note_not_an_untimed_column(monkeypatch):
    """A regime's base is timed only in its steps' rounds. On the H200 the compiled base takes
    ~8 s to prepare, and the climb's re-times of moved bases leave the interaction less time:
    a base prepared just before the budget ran out, with no step begun after it, was shown as a
    column headed 'base 0 images/s' over three 'skipped' cells. The stand-in ladder below only
    counts calls (no measuring: what is tested is the bookkeeping around the deadline)."""
    from types import SimpleNamespace

    from labkit.chapters.ch08_inference_ladder import experiment, tables

    now = [0.0]
    monkeypatch.setattr(experiment._clock, "perf_counter", lambda: now[0])

    class Stub:
        device = torch.device("cpu")
        steps = 0

        def prepare(self, name, settings, profiled=True):
            now[0] += 10.0   # the base's compile runs past the deadline
            return ladder.Live(ladder.Rung(name, settings, 0.0, 0.0, 0.0, 8.0, None), None)

        def step(self, *args, **kwargs):
            self.steps += 1
            raise AssertionError("no step begins past the deadline")

    result = SimpleNamespace(regimes={}, regime_bases={}, regimes_missing={})
    lad = Stub()
    experiment._interaction(lad, result, deadline=5.0)
    assert lad.steps == 0 and result.regimes == {}
    assert "eager" in result.regime_bases   # its prepare seconds still count in the phases
    assert result.regimes_missing["eager"].startswith("skipped: out of the run's time budget (its base")
    assert result.regimes_missing["compiled + CUDA graphs"] == "skipped: out of the run's time budget"
    run = SimpleNamespace(regimes=result.regimes, regime_bases=result.regime_bases,
                          regimes_missing=result.regimes_missing, regime_gains=dict)
    shown = tables.regimes_table(run)
    # no untimed column; one row says none was measured, not a header over nothing (review
    # 2026-12-05p2 08 item 3)
    assert shown.columns == ["step"] and shown.rows == [["none of the three cells was measured"]]
    assert "eager: not measured (skipped" in shown.notes[0]


def test_a_regime_whose_base_was_never_timed_does_not_head_its_column_with_zero_images_per_s():
    from types import SimpleNamespace

    from labkit.chapters.ch08_inference_ladder import tables

    base = ladder.Rung("compiled base", ladder.REGIME_BASE, 0.0, 0.0, 0.0, 8.0, None)
    failed = ladder.Rung("fp16", ladder.REGIME_BASE, 0.0, 0.0, 0.0, 0.0, None, kept=False,
                         why="failed: RuntimeError: boom", error="RuntimeError: boom")
    run = SimpleNamespace(regimes={"compiled": {"fp16": failed}}, regime_bases={"compiled": base},
                          regimes_missing={}, regime_gains=lambda: {"compiled": {}})
    shown = tables.regimes_table(run)
    assert shown.columns[1] == "compiled (base not timed)" and shown.rows == [["fp16", "failed"]]


def test_the_chapter_leaves_the_compiled_interaction_base_out(monkeypatch):
    """Review 2026-12-04i item 4: on the H200 the chapter's budget never reached the compiled
    base, and the page announced a column it left as a hole. The chapter asks for the eager
    base only (compiled_regime=False): no compiled base is prepared, none is said missing, and
    every step runs on the eager base. The stand-in ladder only records what it was asked."""
    from types import SimpleNamespace

    from labkit.chapters.ch08_inference_ladder import experiment

    class Stub:
        device = torch.device("cpu")

        def __init__(self):
            self.prepared, self.stepped = [], []

        def prepare(self, name, settings, profiled=True):
            self.prepared.append(name)
            return ladder.Live(ladder.Rung(name, settings, 100.0, 0.01, 0.0, 0.0, None), None)

        def step(self, base, name, settings, **kwargs):
            self.stepped.append(name)
            return ladder.Rung(name, settings, 100.0, 0.01, 0.0, 0.0, None), base

    result = SimpleNamespace(regimes={}, regime_bases={}, regimes_missing={})
    lad = Stub()
    monkeypatch.setattr(ladder, "release_memory", lambda device: None)
    experiment._interaction(lad, result, deadline=None, compiled=False)
    assert [n.split(":")[0] for n in lad.prepared] == ["eager"]
    assert set(result.regimes) == {"eager"} and result.regimes_missing == {}
    assert lad.stepped == [f"eager: + {s.name}" for s in ladder.REGIME_STEPS]
    import inspect
    assert inspect.signature(experiment.run).parameters["compiled_regime"].default is True  # benchmarks keep it
    from pathlib import Path
    source = (Path(__file__).resolve().parents[3] / "notebooks" / "08_inference_ladder.py").read_text()
    assert "compiled_regime=False" in source   # the chapter asks for the eager base only
