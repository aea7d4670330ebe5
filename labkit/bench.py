"""The course's timing harness: time a function on CPU or GPU the way you can trust.

    from labkit import bench
    t = bench.time(lambda: a @ b, flops=2 * n**3)        # a Timing: median, IQR, TFLOP/s
    c = bench.compare({"NCHW": f1, "NHWC": f2}, baseline="NCHW")   # interleaved A/B

It combines what triton's do_bench, torch.utils.benchmark and nvbench do: a warm-up
budgeted in milliseconds, CUDA events on the GPU (perf_counter_ns on the CPU), the last
level cache flushed before each call ("cold", the default), the median as the headline
with the IQR as its spread, and rates as a share of this machine's measured ceilings.
Statistics and presentation live in `labkit.timing_report`.
"""

from __future__ import annotations

import gc
import time as _clock
import warnings
from collections.abc import Callable

import numpy as np
import torch

from labkit import timing_report, timing_setup
from labkit.timing_report import Comparison, Timing, VariantResult, ratio_spread, summarise

__all__ = ["time", "compare", "Timing", "Comparison", "TimingWarning", "OutOfMemoryDuringTiming"]

MODES = timing_setup.MODES
TOO_FAST_FACTOR = 20          # below 20x the timer's resolution, rounding alone moves it by 5%


class TimingWarning(UserWarning):
    """A measurement was taken but should not be trusted as it stands."""


class OutOfMemoryDuringTiming(MemoryError):
    """The timed function ran out of (GPU) memory; the harness released what it could."""


def time(fn: Callable, *args: object, mode: str = "cold", warmup_ms: float = 25.0,
         rep_ms: float = 100.0, bytes_moved: int | None = None, flops: float | None = None,
         flops_dtype: str = "float32", label: str | None = None,
         device: str | torch.device | None = None, threads: int | None = None,
         min_runs: int = 5, max_runs: int = 10_000) -> Timing:
    """Time `fn(*args)`: warm up for warmup_ms, then sample for about rep_ms.

    Why each step: the first calls pay for lazy initialisation (CUDA context, cuBLAS
    handles, kernel selection, first-touch page faults) and fill caches, so warm-up runs
    are thrown away. In mode "cold" (default) a buffer the size of the last-level cache
    (the GPU's L2, or the CPU's L3) is written before every call, otherwise repeated
    calls on the same small data measure the cache rather than memory. "hot" runs the
    calls back to back (data stays cached, as in a loop over the same tensor; on a GPU
    behind a short spin kernel, so the calls queue up and the events time the kernels
    rather than Python's launches); "graph"
    (GPU only) captures one call in a CUDA Graph and times its replays, which removes
    the CPU's launch cost. On the GPU each call sits between two CUDA events and there
    is one synchronisation at the end; on the CPU each call is timed with
    perf_counter_ns with torch's thread count held at `threads` (reported).

    bytes_moved / flops (per call) turn the median into GB/s / TFLOP/s and, if this
    machine's ceilings were already measured by `labkit.ceilings.measure()`, into a
    percentage of them. This function never starts that measurement itself: it takes
    seconds to minutes, and a timing should cost only what it says.
    """
    __tracebackhide__ = True
    label = label or timing_setup.describe(fn)
    timing_setup.check_arguments(fn, mode, warmup_ms, rep_ms, min_runs, max_runs)
    where = timing_setup.resolve_device(device, fn, args)
    threads = timing_setup.threads_for(where, threads)
    with timing_setup.fixed_threads(threads):
        sampler = _Sampler(fn, args, where, mode, label)
        per_call_s = sampler.prepare(warmup_ms)
        runs = int(np.clip(rep_ms * 1e-3 / per_call_s, min_runs, max_runs))
        samples = sampler.take(runs)
    return _make_timing(samples, label, where, mode, threads, bytes_moved, flops, flops_dtype)


def compare(variants: dict[str, Callable], baseline: str | None = None, rounds: int = 10, *,
            mode: str = "cold", warmup_ms: float = 25.0, rep_ms: float = 200.0,
            bytes_moved: int | None = None, flops: float | None = None,
            flops_dtype: str = "float32", device: str | torch.device | None = None,
            threads: int | None = None, progress: bool | None = None) -> Comparison:
    """Time several variants interleaved in rounds (ABCABC...) and compare each to a baseline.

    Why interleave: a machine drifts (clock boost, heat, a background job). Timing all
    of A then all of B puts the drift into the difference; in rounds every variant sees
    the same conditions, and the ratio taken inside each round cancels what is left. The
    spread of those per-round ratios says whether a difference is real. rep_ms is the
    sampling budget per variant, split over the rounds. A progress bar shows in a notebook
    when the sweep will take more than a couple of seconds (progress=True forces it).
    """
    __tracebackhide__ = True
    if not isinstance(variants, dict) or not variants:
        raise TypeError("compare expects a dict {label: function} with at least one entry, "
                        f"got {type(variants).__name__}")
    baseline = next(iter(variants)) if baseline is None else baseline
    if baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not one of the variants {list(variants)}")
    if not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    for label, fn in variants.items():
        timing_setup.check_arguments(fn, mode, warmup_ms, rep_ms, 1, 10**9, label=label)
    places = {label: timing_setup.resolve_device(device, fn, ()) for label, fn in variants.items()}
    if len({p.type for p in places.values()}) > 1:
        raise ValueError(f"variants run on different devices {dict(places)}; compare like with like")
    where = next(iter(places.values()))
    threads = timing_setup.threads_for(where, threads)
    samples: dict[str, list[float]] = {label: [] for label in variants}
    round_medians: dict[str, list[float]] = {label: [] for label in variants}
    order: list[str] = []
    with timing_setup.fixed_threads(threads):
        samplers = {label: _Sampler(fn, (), where, mode, label) for label, fn in variants.items()}
        per_call = {label: s.prepare(warmup_ms) for label, s in samplers.items()}
        runs = {label: max(1, int(rep_ms * 1e-3 / rounds / per_call[label])) for label in variants}
        expected_s = sum(runs[k] * per_call[k] for k in variants) * rounds
        bar = timing_report.progress_bar(rounds * len(variants), progress, expected_s)
        for _ in range(rounds):
            for label, sampler in samplers.items():
                block = sampler.take(runs[label])
                samples[label].extend(block)
                round_medians[label].append(float(np.median(block)))
                order.append(label)
                bar.step()
        bar.close()
    results = {}
    timings = {label: _make_timing(samples[label], label, where, mode, threads, bytes_moved,
                                   flops, flops_dtype) for label in variants}
    for label in variants:
        q25, q75, per_round = ratio_spread(round_medians[label], round_medians[baseline])
        ratio = timings[label].median_s / timings[baseline].median_s
        results[label] = VariantResult(timings[label], ratio, q25, q75, per_round)
    return Comparison(baseline, rounds, results, tuple(order))


# ---------------------------------------------------------------------------------------
# Sampling


class _Sampler:
    """Calls one function on one device in one mode and returns per-call durations."""

    def __init__(self, fn: Callable, args: tuple, where: torch.device, mode: str,
                 label: str) -> None:
        self.fn, self.args, self.where, self.mode, self.label = fn, args, where, mode, label
        self.run: Callable[[], object] = lambda: fn(*args)
        self.flush_buffer = timing_setup.flush_buffer(where) if mode == "cold" else None

    def prepare(self, warmup_ms: float) -> float:
        """First call, graph capture if asked, warm-up; returns the wall time per sample."""
        __tracebackhide__ = True
        _guarded(self.label, "its first call", self._first_call)
        start = _clock.perf_counter()
        _guarded(self.label, "the estimate", lambda: self._take(5))
        per_call_s = max((_clock.perf_counter() - start) / 5, 1e-9)
        warmup_calls = max(1, int(warmup_ms * 1e-3 / per_call_s))
        _guarded(self.label, "warm-up", lambda: self._take(warmup_calls))
        return per_call_s

    def _first_call(self) -> None:
        self.run()
        self._sync()
        if self.mode == "graph":
            self.run = _capture_graph(self.fn, self.args, self.label)

    def take(self, count: int) -> list[float]:
        """`count` durations in seconds, one per call, flushing first in cold mode."""
        __tracebackhide__ = True
        return _guarded(self.label, "timing", lambda: self._take(count))

    def _take(self, count: int) -> list[float]:
        flush, run = self.flush_buffer, self.run
        if self.where.type == "cuda":
            if flush is None:  # hot and graph: back to back, in chunks behind a spin kernel
                durations = []
                for first in range(0, count, HELD_CHUNK):
                    durations += self._events(min(HELD_CHUNK, count - first), None, hold=True)
                return durations
            return self._events(count, flush, hold=False)
        durations = []
        now = _clock.perf_counter_ns
        for i in range(count):
            if flush is not None:
                flush.fill_(i & 1)  # a new value each time, so the writes really happen
            begin = now()
            run()
            durations.append((now() - begin) * 1e-9)
        return durations

    def _events(self, count: int, flush: torch.Tensor | None, hold: bool) -> list[float]:
        """Time `count` calls between CUDA events, synchronising once at the end."""
        run = self.run
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        if hold:
            _hold_gpu_while_queueing(count)
        for start, end in zip(starts, ends, strict=True):
            if flush is not None:
                flush.zero_()
            start.record()
            run()
            end.record()
        torch.cuda.synchronize(self.where)
        return [start.elapsed_time(end) * 1e-3 for start, end in zip(starts, ends, strict=True)]

    def _sync(self) -> None:
        if self.where.type == "cuda":
            torch.cuda.synchronize(self.where)


GPU_CYCLES_PER_QUEUED_CALL = 60_000   # ~30 us at 2 GHz: more than Python needs to queue a call
GPU_MAX_HOLD_CYCLES = 4_000_000_000   # never hold the GPU for more than ~2 s
# Calls queued behind one spin kernel. The GPU's queue holds about a thousand entries (each
# call is three: two events and the kernel); past that the CPU blocks, the queue drains
# faster than Python refills it, and the timing is launch-bound again.
HELD_CHUNK = 128


def _hold_gpu_while_queueing(count: int) -> None:
    """Keep the GPU busy while the CPU queues `count` calls (nvbench's "blocking kernel").

    Without it, back-to-back timing of a short kernel measures the CPU: the start event
    runs as soon as it is queued, then the GPU idles until Python has queued the kernel, so
    the pair of events brackets launch overhead (~20 us) instead of the kernel (~2 us). A
    spin kernel in front lets the calls queue up and run back to back on the GPU (in chunks
    of HELD_CHUNK, so the queue never fills). Cold mode needs none: its cache-flush kernel
    keeps the GPU busy while the next call is queued.
    """
    torch.cuda._sleep(int(min(count * GPU_CYCLES_PER_QUEUED_CALL, GPU_MAX_HOLD_CYCLES)))


def _capture_graph(fn: Callable, args: tuple, label: str) -> Callable[[], object]:
    """Capture one call of fn in a CUDA Graph (after a warm-up on a side stream)."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn(*args)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn(*args)
    except RuntimeError as exc:
        raise RuntimeError(
            f"mode='graph' could not capture {label!r} in a CUDA Graph ({exc}). Code that "
            "synchronises (.item(), printing a tensor, CPU tensors, data-dependent shapes) "
            "cannot be captured: use mode='hot' for it.") from exc
    return graph.replay


def _guarded(label: str, phase: str, action: Callable[[], object]) -> object:
    """Run `action`; leave the user's exceptions as they were, but explain out-of-memory.

    An ordinary exception is re-raised unchanged (its traceback ends in the user's code)
    with a note saying when the harness called it. Out-of-memory is different: the
    traceback holds the frames that hold the tensors, so the harness drops it, frees the
    cache and raises a short error that says what to do.
    """
    __tracebackhide__ = True
    oom_text = None
    try:
        return action()
    except torch.cuda.OutOfMemoryError as exc:
        oom_text = str(exc).strip().splitlines()[0] if str(exc).strip() else "out of memory"
    except Exception as exc:
        if hasattr(exc, "add_note"):
            exc.add_note(f"(raised by the function timed as {label!r}, during {phase}; "
                         "labkit.bench re-raised it unchanged)")
        raise
    freed = _release_memory()
    raise OutOfMemoryDuringTiming(
        f"{label!r} ran out of memory during {phase}: {oom_text}. The harness released "
        f"the cached memory ({freed}); the kernel is still usable. Use smaller tensors "
        "(labkit.env.sizes() gives sizes that fit this machine) or free tensors you no "
        "longer need (del x) before timing.")


def _release_memory() -> str:
    gc.collect()
    if not torch.cuda.is_available():
        torch.cuda.empty_cache()  # a no-op without CUDA; kept so the path is the same
        return "no GPU memory in use"
    before = torch.cuda.memory_reserved()
    torch.cuda.empty_cache()
    after = torch.cuda.memory_reserved()
    return f"reserved GPU memory {before / 2**20:.0f} MiB -> {after / 2**20:.0f} MiB"


# ---------------------------------------------------------------------------------------
# From samples to a Timing


def _make_timing(samples: list[float], label: str, where: torch.device, mode: str,
                 threads: int | None, bytes_moved: int | None, flops: float | None,
                 flops_dtype: str) -> Timing:
    stats = summarise(samples)
    resolution = timing_setup.timer_resolution_s(where)
    notes = []
    if stats.median_s < TOO_FAST_FACTOR * resolution:
        note = (f"too fast to time reliably: the median {stats.median_s * 1e9:.0f} ns is under "
                f"{TOO_FAST_FACTOR}x the timer resolution ({resolution * 1e9:.0f} ns), so rounding "
                "alone can move it by 5% or more. Time more work per call (e.g. a loop of 100 "
                "calls inside the function, then divide).")
        notes.append(note)
        warnings.warn(f"{label}: {note}", TimingWarning, stacklevel=3)
    if stats.median_s > 0 and stats.iqr_s / stats.median_s > 0.10:
        notes.append(f"noisy: IQR is {100 * stats.iqr_s / stats.median_s:.0f}% of the median "
                     "(over 10%); rerun, close other programs, or time more work per call.")
    gbps = bytes_moved / stats.median_s / 1e9 if bytes_moved and stats.median_s > 0 else None
    tflops = flops / stats.median_s / 1e12 if flops and stats.median_s > 0 else None
    pct_copy = pct_matmul = None
    if gbps is not None or tflops is not None:
        from labkit import ceilings  # late import: ceilings itself times with this module

        known = ceilings.cached(where.type)
        if known is not None and gbps is not None and known.copy_gbps:
            pct_copy = 100 * gbps / known.copy_gbps
        rate = known.matmul_tflops.get(str(flops_dtype).replace("torch.", "")) if known else None
        if tflops is not None and rate:
            pct_matmul = 100 * tflops / rate
    for share, name in ((pct_copy, "copy"), (pct_matmul, "matmul")):
        if share is not None and share > 100:
            notes.append(f"{share:.0f}% of this machine's {name} ceiling: faster than the ceiling "
                         "means the data sat in a cache (try mode='cold'), or the ceiling was "
                         "measured while the machine was busy (labkit.ceilings.measure(refresh=True)).")
    return Timing(label=label, device=str(where), mode=mode, times_s=tuple(samples),
                  median_s=stats.median_s, iqr_s=stats.iqr_s, min_s=stats.min_s,
                  count=stats.count, threads=threads, bytes_moved=bytes_moved, flops=flops,
                  gbps=gbps, tflops=tflops, pct_of_copy_ceiling=pct_copy,
                  pct_of_matmul_ceiling=pct_matmul, timer_resolution_s=resolution,
                  warnings=tuple(notes))


