"""The timing harness: statistics, interleaving, bad input and the CPU path.

Nothing here depends on how fast this machine is: timings are checked for structure
(counts, order, units), never for values, and the "too fast" case fixes the resolution.
"""

import math
import traceback

import matplotlib
import numpy as np
import pytest
import torch

from labkit.measure import bench, conditions, progress, timing
from labkit.show import timing_plots

matplotlib.use("Agg")


QUICK = {"warmup_ms": 1, "rep_ms": 2, "mode": "hot"}


pytestmark = [pytest.mark.filterwarnings("ignore::labkit.measure.bench.TimingWarning"),
              pytest.mark.usefixtures("private_cache")]  # the fixture: tests/conftest.py


# ---- statistics -------------------------------------------------------------------------

def test_summary_of_known_samples():
    s = timing.summarise([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.median_s, s.iqr_s, s.min_s, s.count) == (3.0, 2.0, 1.0, 5)


def test_median_ignores_one_outlier():
    s = timing.summarise([1.0] * 9 + [1000.0])
    assert s.median_s == 1.0 and s.iqr_s == 0.0


def test_summary_of_nothing_is_an_error():
    with pytest.raises(ValueError, match="no timing samples"):
        timing.summarise([])


def _timing(samples, **extra):
    s = timing.summarise(samples)
    return timing.Timing(label="x", device="cpu", mode="hot", times_s=tuple(samples),
                                median_s=s.median_s, iqr_s=s.iqr_s, min_s=s.min_s,
                                count=s.count, **extra)


def test_noisy_flag_at_ten_percent():
    assert not _timing([1.0, 1.0, 1.0, 1.0, 1.0]).noisy
    assert _timing([0.8, 0.9, 1.0, 1.1, 1.2]).noisy          # IQR 0.2 = 20% of median
    assert not _timing([0.96, 0.98, 1.0, 1.02, 1.04]).noisy  # IQR 0.04 = 4%


def test_rates_from_bytes_and_flops():
    t = bench._make_timing([2e-3] * 5, "copy", torch.device("cpu"), "hot", 1,
                           bytes_moved=4 * 10**9, flops=6 * 10**12, flops_dtype="float32")
    assert t.gbps == pytest.approx(2000.0)
    assert t.tflops == pytest.approx(3000.0)
    assert t.pct_of_ceiling is None  # no ceiling measured in this private cache


def test_ratio_spread_is_quartiles_of_round_ratios():
    q25, q75, ratios = timing.ratio_spread([2, 4, 6, 8, 10], [1, 2, 3, 4, 5])
    assert ratios == (2.0,) * 5 and q25 == q75 == 2.0
    q25, q75, _ = timing.ratio_spread([1, 2, 3, 4, 5], [1, 1, 1, 1, 1])
    assert (q25, q75) == (2.0, 4.0)


def test_format_seconds_units():
    assert timing.format_seconds(1.5) == "1.5 s"
    assert timing.format_seconds(2.5e-3) == "2.5 ms"
    assert timing.format_seconds(7e-6) == "7 us"
    assert timing.format_seconds(3e-9) == "3 ns"
    # rounded before the unit is chosen: 999.6 us once printed '1e+03 us' (03's conv table)
    assert timing.format_seconds(999.6e-6) == "1 ms" and timing.format_seconds(999.4e-6) == "999 us"


# ---- the CPU path -----------------------------------------------------------------------

def test_cpu_timing_structure_and_threads_restored():
    before = torch.get_num_threads()
    x = torch.randn(64, 64)
    t = bench.time(lambda: x @ x, threads=1, min_runs=7, max_runs=7, warmup_ms=1, rep_ms=1)
    assert t.count == 7 and len(t.times_s) == 7
    assert t.threads == 1 and t.device == "cpu"
    assert torch.get_num_threads() == before
    assert t.min_s <= t.median_s and all(s > 0 for s in t.times_s)


def test_cold_mode_flushes_with_a_buffer_twice_the_last_level_cache():
    calls = []
    t = bench.time(lambda: calls.append(1), mode="cold", warmup_ms=1, rep_ms=1, min_runs=3,
                   max_runs=3)
    assert t.mode == "cold" and t.count == 3
    buffer = conditions.flush_buffer(torch.device("cpu"))
    assert buffer.numel() * 4 == conditions.flush_bytes(torch.device("cpu"))


def test_the_cpu_flush_is_twice_the_l3_capped_at_a_quarter_of_usable_memory(monkeypatch):
    cpu = torch.device("cpu")
    monkeypatch.setattr(conditions, "last_level_cache_bytes", lambda where: 480 * 2**20)
    monkeypatch.setenv("LABKIT_MEMORY_LIMIT_BYTES", str(64 * 2**30))
    assert conditions.flush_bytes(cpu) == 960 * 2**20  # a large machine: twice the L3
    monkeypatch.setenv("LABKIT_MEMORY_LIMIT_BYTES", str(2 * 2**30))  # Binder's 2 GB
    assert conditions.flush_bytes(cpu) == 512 * 2**20  # a quarter, still more than the L3


def test_arguments_are_passed_to_the_function():
    seen = []
    bench.time(lambda a, b: seen.append((a, b)), 1, 2, **QUICK)
    assert set(seen) == {(1, 2)}


def test_html_and_plot():
    t = bench.time(lambda: sum(range(100)), label="a sum", bytes_moved=800, **QUICK)
    page = t._repr_html_()
    assert "a sum" in page and "median" in page and "IQR" in page and "GB/s" in page
    assert "ceilings.measure()" in page  # says how to get the percentage
    assert len(timing_plots.plot_timing(t).axes) == 2
    assert "median" in str(t)


# ---- A/B comparison ---------------------------------------------------------------------

def test_compare_interleaves_in_rounds(monkeypatch):
    monkeypatch.delenv("LABKIT_SIZES", raising=False)  # a learner's run takes every round asked
    log = []
    variants = {name: (lambda name=name: log.append(name)) for name in "abc"}
    c = bench.compare(variants, baseline="b", rounds=4, warmup_ms=0, rep_ms=1, mode="hot")
    assert c.order == tuple("abc" * 4) and c.rounds == 4
    # after preparation, the calls themselves come in blocks a, b, c, a, b, c, ...
    rounds_log = log[-sum(v.timing.count for v in c.variants.values()):]
    blocks = [name for i, name in enumerate(rounds_log) if i == 0 or rounds_log[i - 1] != name]
    assert blocks == list("abc" * 4)
    assert c["b"].ratio == 1.0 and c.baseline == "b"
    assert [row["variant"] for row in c.table()] == list("abc")
    assert "ratio to b" in c._repr_html_()
    with pytest.raises(KeyError, match="no variant 'typo'.*'a', 'b', 'c'"):
        c["typo"]


@pytest.mark.skipif(torch.cuda.is_available(),
                    reason="the ci profile caps rounds on a machine without a GPU (env._ci_on_a_cpu)")
def test_the_suites_ci_profile_takes_at_most_three_rounds_on_a_cpu(monkeypatch):
    monkeypatch.setenv("LABKIT_SIZES", "ci")
    c = bench.compare({"a": lambda: None, "b": lambda: None}, baseline="a", rounds=7,
                      warmup_ms=0, rep_ms=1, mode="hot", device="cpu")
    assert c.rounds == 3 and c.order == tuple("ab" * 3)
    assert len(c["b"].round_medians_s) == 3


def test_compare_bad_input():
    with pytest.raises(TypeError, match="dict"):
        bench.compare([lambda: None])
    with pytest.raises(ValueError, match="baseline 'z'"):
        bench.compare({"a": lambda: None}, baseline="z")
    with pytest.raises(TypeError, match="for 'b'"):
        bench.compare({"a": lambda: None, "b": 3})
    with pytest.raises(ValueError, match="rounds"):
        bench.compare({"a": lambda: None}, rounds=0)


def test_progress_bar_silent_outside_a_notebook():
    assert timing_plots.notebook_bar(10) is None  # no kernel here: the display draws nothing
    bar = progress.bar(10, progress=None, expected_s=100.0)
    assert isinstance(bar, progress.SilentBar)
    assert isinstance(progress.bar(10, progress=None, expected_s=0.1), progress.SilentBar)


# ---- bad input --------------------------------------------------------------------------

def test_not_callable():
    with pytest.raises(TypeError, match="needs a function to call"):
        bench.time(42)
    x = torch.ones(3)
    with pytest.raises(TypeError, match="lambda"):
        bench.time(x @ x)


def test_bad_mode_and_budgets():
    with pytest.raises(ValueError, match="mode must be one of"):
        bench.time(lambda: None, mode="warm")
    with pytest.raises(ValueError, match="rep_ms"):
        bench.time(lambda: None, rep_ms=0)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="needs a GPU"):
            bench.time(lambda: None, mode="graph")


def _raises_key_error():
    return {}["missing"]


@pytest.mark.parametrize("fail_on_call", [1, 12])
def test_function_that_raises_keeps_its_own_exception(fail_on_call):
    calls = []

    def fn():
        calls.append(1)
        if len(calls) == fail_on_call:
            _raises_key_error()

    with pytest.raises(KeyError) as info:
        bench.time(fn, **QUICK)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].name == "_raises_key_error"  # the traceback ends in the user's code
    notes = getattr(info.value, "__notes__", [])
    assert not notes or "re-raised it unchanged" in notes[0]


def test_out_of_memory_in_the_probe_of_where_it_runs_is_explained(monkeypatch):
    # On a GPU machine a function with no tensor in sight is called once under the profiler to
    # learn where it runs (conditions.launches_gpu_work); an out-of-memory there was raised raw
    # (found on an H100, 2026-12-05). Stand-in for that call on any machine: the probe calls fn.
    def probe(device, fn, args):
        fn(*args)
        return torch.device("cpu")

    monkeypatch.setattr(bench.conditions, "resolve_device", probe)

    def fn():
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    for call in (lambda: bench.time(fn, **QUICK),
                 lambda: bench.compare({"a": fn, "b": fn}, rounds=2, warmup_ms=0, rep_ms=1)):
        with pytest.raises(bench.OutOfMemoryDuringTiming, match="during the probe of where it runs") as info:
            call()
        assert "Tried to allocate 2.00 GiB" in str(info.value) and info.value.__context__ is None

    def refuses(device, fn, args):  # the harness's own refusal passes unchanged, with no note
        raise ValueError("asked for cuda, the tensors are on cpu")

    monkeypatch.setattr(bench.conditions, "resolve_device", refuses)
    with pytest.raises(ValueError, match="asked for cuda") as info:
        bench.time(fn, **QUICK)
    assert not getattr(info.value, "__notes__", [])


def test_out_of_memory_is_explained_and_memory_released(monkeypatch):
    released = []
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: released.append(True))

    def fn():
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    with pytest.raises(bench.OutOfMemoryDuringTiming, match="ran out of memory") as info:
        bench.time(fn, **QUICK)
    assert "smaller" in str(info.value) and "Tried to allocate 2.00 GiB" in str(info.value)
    assert info.value.__context__ is None  # the frames holding the tensors were dropped
    assert released
    assert bench.time(lambda: None, **QUICK).count >= 1  # still usable afterwards


def test_too_fast_says_so_with_the_resolution(monkeypatch):
    monkeypatch.setattr(conditions, "cpu_timer_resolution_s", lambda: 1.0)
    with pytest.warns(bench.TimingWarning, match="resolution"):
        t = bench.time(lambda: None, **QUICK)
    assert any("too fast" in w for w in t.warnings)
    assert "too fast" in t._repr_html_()


def test_measured_cpu_timer_resolution_is_plausible():
    assert 0 < conditions.cpu_timer_resolution_s() < 1e-3


def test_tensor_on_the_wrong_device_is_refused():
    on_meta = torch.empty(4, 4, device="meta")
    with pytest.raises(ValueError, match="tensors on meta"):
        bench.time(lambda t: t, on_meta, device="cpu", **QUICK)
    with pytest.raises(ValueError, match="tensors on meta"):  # found in the closure too
        bench.time(lambda: on_meta + 1, device="cpu", **QUICK)
    with pytest.raises(ValueError, match="tensors on cpu"):
        bench.time(lambda t: t, torch.ones(4), device="cuda", **QUICK)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no GPU"):
            bench.time(lambda: None, device="cuda", **QUICK)


def test_device_is_inferred_from_the_tensors():
    x = torch.ones(8)
    assert conditions.resolve_device(None, lambda: x + 1, ()).type == "cpu"
    assert conditions.resolve_device(None, lambda t: t, (np.ones(3),)).type in ("cpu", "cuda")


# ---- the timing-mistake demonstrations (labkit.chapters.ch00_setup_check.pitfalls) ---------------------------------

def test_cache_curve_structure():
    from labkit.chapters.ch00_setup_check import pitfalls

    points = pitfalls.cache_curve(64 * 2**10, min_bytes=8 * 2**10, device="cpu", rep_ms=1)
    assert [p["working_set_bytes"] for p in points] == [8192, 16384, 32768, 65536]
    assert all(p["gbps"] > 0 for p in points)
    assert set(pitfalls.cache_levels("cpu")) <= {"L1", "L2", "L3", "L4"}


def test_first_call_vs_steady_structure():
    from labkit.chapters.ch00_setup_check import pitfalls

    row = pitfalls.first_call_vs_steady(lambda: torch.ones(16).sum(), "sum", threads=1)
    assert set(row) >= {"first_call_s", "steady_median_s", "first_over_steady"}
    assert row["first_over_steady"] == pytest.approx(row["first_call_s"] / row["steady_median_s"])


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only refusal")
def test_no_sync_needs_a_gpu():
    from labkit.chapters.ch00_setup_check import pitfalls

    with pytest.raises(RuntimeError, match="needs a GPU"):
        pitfalls.no_sync_vs_sync()


# ---- layers, page faults, the allocator, bytes per variant (issues 8 and 9) ---------------

def test_statistics_layer_imports_no_drawing_and_bench_not_ceilings():
    import subprocess
    import sys

    code = ("import sys, labkit.measure.bench, labkit.measure.timing; "
            "bad = [m for m in ('matplotlib', 'ipywidgets', 'labkit.measure.ceilings') if m in sys.modules]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         timeout=120)  # a child that hangs fails the test instead
    assert out.stdout.strip() == "[]"


def test_cpu_timings_count_page_faults_per_call():
    def fresh_memory():
        torch.empty(2**20).fill_(1.0)  # 4 MiB: allocated and (often) given back every call

    t = bench.time(fresh_memory, device="cpu", **QUICK)
    assert t.minor_faults_per_call is not None and t.minor_faults_per_call >= 0
    assert t.allocator == "default" and t.page_fault_share is not None
    assert "page faults" in t._repr_html_()


class _FakeLibc:
    def __init__(self):
        self.calls = []

    def mallopt(self, param, value):
        self.calls.append((param, value))
        return 1


def test_allocator_kept_raises_the_thresholds_and_restores_them(monkeypatch):
    from labkit.measure import conditions

    libc = _FakeLibc()
    monkeypatch.setattr(conditions, "_glibc", lambda: libc)
    with bench.allocator_kept() as applied:
        assert applied
        assert libc.calls == [(conditions.M_MMAP_THRESHOLD, conditions.KEPT_MMAP_THRESHOLD),
                              (conditions.M_TRIM_THRESHOLD, conditions.KEPT_TRIM_THRESHOLD)]
    assert libc.calls[2:] == [
        (conditions.M_MMAP_THRESHOLD, conditions.GLIBC_DEFAULT_MMAP_THRESHOLD),
        (conditions.M_TRIM_THRESHOLD, conditions.GLIBC_DEFAULT_TRIM_THRESHOLD)]
    t = bench.time(lambda: None, keep_allocator_memory=True, device="cpu", **QUICK)
    assert t.allocator == "kept" and len(libc.calls) == 8


def test_allocator_kept_is_a_no_op_without_glibc(monkeypatch):

    monkeypatch.setattr(conditions, "_glibc", lambda: None)
    with bench.allocator_kept() as applied:
        assert applied is False
    assert "no glibc" in bench.allocator_note()
    t = bench.time(lambda: None, keep_allocator_memory=True, device="cpu", **QUICK)
    assert t.allocator == "default"


def test_allocator_kept_really_calls_glibc_here():
    with bench.allocator_kept() as applied:
        assert applied in (True, False)
    assert isinstance(bench.allocator_note(), str)


def test_compare_takes_bytes_moved_per_variant():
    c = bench.compare({"a": lambda: None, "b": lambda: None}, bytes_moved={"a": 10**6},
                      rounds=2, warmup_ms=0, rep_ms=1, mode="hot")
    assert c["a"].timing.bytes_moved == 10**6 and c["a"].timing.gbps is not None
    assert c["b"].timing.bytes_moved is None and c["b"].timing.gbps is None
    assert "GB/s" in c._repr_html_()
    same = bench.compare({"a": lambda: None}, bytes_moved=8, rounds=1, warmup_ms=0, rep_ms=1)
    assert same["a"].timing.bytes_moved == 8


def test_ratio_spread_survives_a_zero_baseline():
    q25, q75, ratios = timing.ratio_spread([1.0, 0.0], [0.0, 0.0])
    assert ratios == (math.inf, 1.0)


def test_allocator_effect_times_both_ways_default_first():
    from labkit.chapters.ch00_setup_check import pitfalls

    row = pitfalls.allocator_effect(lambda: torch.empty(2**18).fill_(1.0), "fill", rep_ms=5)
    assert row["default"].allocator == "default"
    assert row["kept"].allocator in ("kept", "default")  # "default" where glibc is absent
    assert row["default_over_kept"] == pytest.approx(row["default_median_s"] / row["kept_median_s"])
    assert isinstance(row["allocator_decides"], bool) and row["note"]


def test_allocator_effect_leaves_this_process_allocator_as_it_was():
    """The kept-memory timing runs in a child: the process that ran the demo never sets
    malloc's thresholds, so its later timings see glibc's adaptive defaults (issue 20).
    Checked in a fresh interpreter: earlier tests in this one set the thresholds on purpose."""
    import subprocess
    import sys

    from tests.paths import ROOT

    script = ("import torch\n"
              "from labkit.chapters.ch00_setup_check import pitfalls\n"
              "from labkit.measure import conditions\n"
              "row = pitfalls.allocator_effect(lambda: torch.empty(2**18).fill_(1.0), 'fill', rep_ms=5)\n"
              "print(conditions.thresholds_fixed(), row['kept_timed_in_child'], row['kept'].allocator,"
              " conditions._glibc() is not None)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    fixed, in_child, allocator, glibc = done.stdout.split()[-4:]
    assert fixed == "False" and in_child == "True"
    if glibc == "True":
        assert allocator == "kept"  # the child did apply them


def test_run_in_child_returns_the_result_and_reports_failures():
    from labkit.measure import conditions

    base = torch.arange(4.0)
    assert torch.equal(conditions.run_in_child(lambda: base * 2), base * 2)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        conditions.run_in_child(lambda: 1 / 0)


def test_a_noisy_variant_in_a_comparison_carries_the_spread_of_its_round_medians():
    """Samples that scatter 50% around medians that agree round to round: the flag the trust
    rule reads carries the medians' spread, which is what the ratio is built from."""
    samples = [1.0, 1.5, 0.75, 1.0, 1.6, 0.7, 1.0, 1.4, 0.8] * 4
    noisy = _timing(samples)
    assert noisy.noisy
    steady = timing.VariantResult(noisy, 1.0, 0.99, 1.01, (1.0,) * 4, (1.0, 1.01, 0.99, 1.0))
    flag = steady.flag("case")
    assert flag["timing"].startswith("case: ") and flag["spread"] < 0.02
    assert "per-round medians spread" in flag["why"]
    drifting = timing.VariantResult(noisy, 1.0, 0.7, 1.3, (1.0,) * 4, (0.6, 0.7, 1.3, 1.4))
    assert drifting.flag()["spread"] > 0.3


def test_a_launch_note_never_prints_the_probes_figure(monkeypatch):
    """Review 2026-12-04l item 2: the H200 page printed 'launch-bound: the host takes 92.9 us to
    launch this call' from a 3-call probe beside a timed loop of the same call at 82.9 us per call.
    The note says the probe ran over the device time and prints no launch figure of its own."""
    from labkit.measure import clocks, sharing

    monkeypatch.setattr(conditions, "timer_resolution_s", lambda where: 1e-9)
    monkeypatch.setattr(sharing, "others_on_gpu", lambda where: [])
    t = bench._make_timing([52.0e-6] * 5, "stride-aware GEMM on the view", torch.device("cuda:0"), "cold",
                           None, None, None, "float32", clock=(clocks.DEVICE, 92.9e-6, ""))
    note = next(w for w in t.warnings if "launch-bound" in w)
    assert note.startswith("may be launch-bound: a short host-launch probe") and "52.0 us" in note
    assert "92.9" not in note and "the host takes" not in note
    quick = bench._make_timing([52.0e-6] * 5, "torch.matmul on the view", torch.device("cuda:0"), "cold",
                               None, None, None, "float32", clock=(clocks.DEVICE, 32.0e-6, ""))
    assert not any("launch" in w for w in quick.warnings)  # a probe under the device time: no note


def test_device_time_explains_an_out_of_memory_like_the_timings(monkeypatch):
    """labkit.measure.device_time called the function raw: an out-of-memory in its warm-up, its
    traced calls or its probe of where the function runs reached the learner with the frames
    that hold the tensors (the read of 2026-12-05s, item 7). It now says what to do, as
    bench.time does, and frees the cache; other errors pass unchanged."""
    from labkit.measure import device_time

    released = []
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: released.append(True))

    def fn():
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 3.00 GiB")

    with pytest.raises(bench.OutOfMemoryDuringTiming, match="during device_time's calls") as info:
        device_time.device_time(fn, calls=2, warmup=1, label="big")
    assert "'big' ran out of memory" in str(info.value) and "Tried to allocate 3.00 GiB" in str(info.value)
    assert info.value.__context__ is None and released

    def broken():
        raise KeyError("a learner's own bug")

    with pytest.raises(KeyError, match="a learner's own bug"):
        device_time.device_time(broken, calls=2, warmup=1)
