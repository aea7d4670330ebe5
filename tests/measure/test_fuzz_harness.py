"""The harness under any input: every bad argument gets a documented error before timing.

Each property draws from a class of bad input named in issue 9 (non-finite or wrong-typed
budgets, unknown devices, bool threads, negative or NaN amounts, lazy results) and checks
the error type and message, and that the timed function never ran.
"""

import asyncio
import concurrent.futures
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.measure import bench, timing
from tests.hypothesis_profiles import examples

QUICK = {"warmup_ms": 0, "rep_ms": 1, "mode": "hot", "min_runs": 1, "max_runs": 2}


pytestmark = [pytest.mark.filterwarnings("ignore::labkit.measure.bench.TimingWarning"),
              pytest.mark.usefixtures("private_cache")]  # the fixture: tests/conftest.py


def never_called():
    raise AssertionError("the harness called the function although its arguments were bad")


non_finite = st.sampled_from([math.inf, -math.inf, math.nan])
wrong_type = st.one_of(st.text(max_size=3), st.none(), st.booleans(), st.just([1.0]),
                       st.just(1 + 2j))


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(["warmup_ms", "rep_ms"]), st.one_of(non_finite, wrong_type,
                                                           st.floats(1e6, 1e300)))
def test_budgets_must_be_finite_numbers(which, value):
    args = {**QUICK, which: value}
    with pytest.raises((TypeError, ValueError), match=which):
        bench.time(never_called, **args)
    with pytest.raises((TypeError, ValueError), match=which):
        bench.compare({"a": never_called}, **{k: v for k, v in args.items()
                                              if k not in ("min_runs", "max_runs")})


@settings(max_examples=examples(40), deadline=None)
@given(st.one_of(st.sampled_from(["tpu", "gpu", "cuda:x", "", "mps:0:1", "cpux"]),
                 st.integers(-3, 9), st.floats(allow_nan=True), st.just(["cpu"])))
def test_unknown_devices_are_refused_with_the_choices(device):
    with pytest.raises(ValueError) as info:
        bench.time(never_called, device=device, **QUICK)
    text = str(info.value)
    assert "cpu" in text and ("cuda" in text.lower() or "GPU" in text)


@settings(max_examples=examples(30), deadline=None)
@given(st.one_of(st.booleans(), st.integers(-5, 0), st.floats(0.5, 4), st.text(max_size=2)))
def test_threads_must_be_a_positive_whole_number(threads):
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        bench.time(never_called, threads=threads, device="cpu", **QUICK)


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(["bytes_moved", "flops"]),
       st.one_of(non_finite, st.floats(-1e12, -1e-9), st.integers(-10**12, -1), wrong_type
                 .filter(lambda v: v is not None)))
def test_amounts_are_checked_before_timing(which, value):
    with pytest.raises((TypeError, ValueError), match=which):
        bench.time(never_called, **{which: value}, **QUICK)
    with pytest.raises((TypeError, ValueError), match=which):
        bench.compare({"a": never_called}, **{which: {"a": value}}, rep_ms=1, warmup_ms=0)


def test_amounts_per_variant_name_only_variants():
    with pytest.raises(ValueError, match="not variants"):
        bench.compare({"a": never_called}, bytes_moved={"b": 8}, rep_ms=1, warmup_ms=0)


def _generator():
    yield 1


async def _coroutine():
    return 1


@pytest.mark.parametrize("fn, kind", [
    (lambda: _generator(), "generator"),
    (lambda: iter([1, 2]), "iterator"),
    (lambda: map(abs, [1]), "iterator"),
    (lambda: _coroutine(), "coroutine"),
    (_generator, "generator function"),
    (_coroutine, "async"),
])
def test_lazy_results_are_refused(fn, kind):
    with pytest.raises(TypeError, match=kind):
        bench.time(fn, **QUICK)
    with pytest.raises(TypeError, match=kind):
        bench.compare({"lazy": fn}, rep_ms=1, warmup_ms=0)


def test_a_coroutine_is_closed_not_left_unawaited(recwarn):
    bench_error = None
    try:
        bench.time(lambda: _coroutine(), **QUICK)
    except TypeError as err:
        bench_error = err
    assert bench_error is not None
    assert not [w for w in recwarn if "never awaited" in str(w.message)]
    # The event loop machinery is untouched: a fresh loop still runs a coroutine (in a thread
    # of its own, since the browser tests' Playwright may own this thread's loop).
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _coroutine()).result(timeout=30)


@settings(max_examples=examples(40), deadline=None)
@given(st.one_of(st.integers(-3, 0), st.booleans(), st.floats(1, 3), st.just(10**6)))
def test_rounds_are_a_positive_whole_number(rounds):
    with pytest.raises(ValueError, match="rounds"):
        bench.compare({"a": never_called}, rounds=rounds)


@settings(max_examples=examples(30), deadline=None)
@given(st.one_of(st.integers(), st.none(), st.text(max_size=3).filter(
    lambda t: t not in bench.FLOPS_DTYPES)))
def test_flops_dtype_names_a_math(dtype):
    with pytest.raises(ValueError, match="flops_dtype"):
        bench.time(never_called, flops=1, flops_dtype=dtype, **QUICK)


# ---- shares of a ceiling: never above 100% without a reason -----------------------------

rates = st.floats(1e-3, 1e4)


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(st.none(), rates), st.one_of(st.none(), rates),
       st.sampled_from(["float32", "tfloat32", "bfloat16", "float16"]),
       st.one_of(st.none(), rates),
       st.dictionaries(st.sampled_from(["float32", "tfloat32", "bfloat16", "float16"]), rates),
       st.booleans(), st.booleans())
def test_a_share_above_100_percent_always_says_why(gbps, tflops, dtype, copy, matmul, tf32_mm,
                                                    tf32_conv):
    shares = timing.ceiling_shares(gbps, tflops, dtype, copy, matmul, tf32_mm, tf32_conv)
    for pct, word in ((shares.pct_of_copy_ceiling, "copy ceiling"),
                      (shares.pct_of_matmul_ceiling, "matmul ceiling")):
        if pct is not None and pct > 100:
            assert any(word in note and f"{pct:.0f}%" in note for note in shares.notes)
    if shares.pct_of_matmul_ceiling is not None:
        assert shares.math in matmul


def test_float32_with_tf32_on_is_compared_with_the_tf32_ceiling():
    ceiling = {"float32": 50.0, "tfloat32": 400.0}
    both = timing.ceiling_shares(None, 200.0, "float32", None, ceiling, True, True)
    assert both.math == "tfloat32" and both.pct_of_matmul_ceiling == pytest.approx(50.0)
    conv_only = timing.ceiling_shares(None, 60.0, "float32", None, ceiling, False, True)
    assert conv_only.math == "float32" and conv_only.pct_of_matmul_ceiling == pytest.approx(120.0)
    assert conv_only.pct_of_tf32_ceiling == pytest.approx(15.0)
    # review 2026-12-03h item 11: the "read the TF32 share" note only under convolution timings
    # (it showed under chapter 00's float32 matmul); the share itself is kept either way
    assert not any("cuDNN convolutions run in TF32" in note for note in conv_only.notes)
    conv = timing.ceiling_shares(None, 60.0, "float32", None, ceiling, False, True, convolution=True)
    assert conv.pct_of_tf32_ceiling == pytest.approx(15.0)
    assert any("cuDNN convolutions run in TF32" in note and "15%" in note for note in conv.notes)
    off = timing.ceiling_shares(None, 25.0, "float32", None, ceiling, False, False)
    assert off.math == "float32" and off.pct_of_matmul_ceiling == pytest.approx(50.0)
    assert not off.notes
    explicit = timing.ceiling_shares(None, 200.0, "tf32", None, ceiling)
    assert explicit.math == "tfloat32" and explicit.pct_of_matmul_ceiling == pytest.approx(50.0)
    old_cache = timing.ceiling_shares(None, 200.0, "float32", None, {"float32": 50.0}, True, True)
    assert old_cache.math == "float32" and any("no TF32 ceiling" in n for n in old_cache.notes)


# ---- page faults --------------------------------------------------------------------------

@settings(max_examples=examples(200), deadline=None)
@given(st.floats(0, 1e6), st.floats(1e-7, 10), st.floats(1e-8, 1e-4), st.one_of(st.none(), st.integers(1, 64)))
def test_the_fault_warning_appears_exactly_when_faults_dominate(faults, median, cost, threads):
    note = timing.page_fault_note(faults, median, cost, threads)
    share = faults * cost / (threads or 1) / median  # the faults' CPU time spread over the threads
    assert (note is not None) == (share >= timing.FAULTS_DOMINATE_FRACTION)
    assert timing.fault_share(faults, median, cost, threads) <= 1.0  # never more than the median
    if note:
        assert "allocator_kept" in note and f"{faults:.0f} minor page faults" in note


def test_faults_of_parallel_threads_are_not_priced_serially_against_wall_time():
    """Review 2026-12-03h item 7: 122895 faults at ~1.83 us on 16 threads read '406%' of a 55.4 ms
    median. Their 225 ms are CPU time; spread over the 16 threads they are 14 ms, 25% of it."""
    faults, cost, median = 122895, 225e-3 / 122895, 55.4e-3
    assert timing.fault_share(faults, median, cost) == 1.0  # one thread: capped at the whole median
    share = timing.fault_share(faults, median, cost, threads=16)
    assert share == pytest.approx(225e-3 / 16 / median)
    note = timing.page_fault_note(faults, median, cost, threads=16)
    assert note and "225 ms of CPU time" in note and "spread over the 16 threads" in note
    assert "(25%) of the 55.4 ms wall-time median" in note and "406%" not in note
    assert "(100%) of the 55.4 ms median" in timing.page_fault_note(faults, median, cost)
    assert timing.page_fault_note(faults, median, cost, threads=64) is None  # 6%: not dominant
