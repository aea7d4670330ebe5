"""The course's timing harness: time a function on CPU or GPU the way you can trust.

    from labkit.measure import bench
    t = bench.time(lambda: a @ b, flops=2 * n**3)        # a Timing: median, IQR, TFLOP/s
    c = bench.compare({"NCHW": f1, "NHWC": f2}, baseline="NCHW")   # interleaved A/B

It combines what triton's do_bench, torch.utils.benchmark and nvbench do: a warm-up
budgeted in milliseconds, CUDA events on the GPU (perf_counter_ns on the CPU), the last
level cache flushed before each call ("cold", the default), the median as the headline
with the IQR as its spread, rates as a share of this machine's measured ceilings (in the
math that really ran: TF32 when float32 work ran in TF32) and, on the CPU, the page faults
each call took. Statistics and the results live in `labkit.measure.timing` (no matplotlib, no
ipywidgets); plots and progress bars in `labkit.show.timing_plots`; the cached ceilings are
read through `labkit.measure.ceiling_store`, so this module and `labkit.measure.ceilings` (which times
with it) do not import each other.

    with bench.allocator_kept():                          # malloc keeps freed memory
        kept = bench.time(model_forward)
    d = bench.device_time(model_forward)                  # wall beside device-busy time

A function that uses no tensor the harness can see (ONNX Runtime fed numpy arrays) is
profiled once on a GPU machine: if it runs nothing on the GPU, it is timed with the CPU clock.
"""

from __future__ import annotations

import contextlib
import time as _clock
import warnings
from collections.abc import Callable, Mapping

import numpy as np
import torch

from labkit.core import env
from labkit.measure import (
    ceiling_store,
    clocks,
    conditions,
    kernel_records,
    out_of_memory,
    sharing,
    timing,
)
from labkit.measure import progress as progress_bars
from labkit.measure.conditions import allocator_kept, allocator_note
from labkit.measure.device_time import DeviceTime, device_time
from labkit.measure.timing import Comparison, Timing, VariantResult, ratio_spread, summarise

__all__ = ["time", "compare", "Timing", "Comparison", "TimingWarning", "OutOfMemoryDuringTiming",
           "allocator_kept", "allocator_note", "device_time", "DeviceTime"]

MODES = conditions.MODES
TOO_FAST_FACTOR = 20          # below 20x the timer's resolution, rounding alone moves it by 5%


class TimingWarning(UserWarning):
    """A measurement was taken but should not be trusted as it stands."""


OutOfMemoryDuringTiming = out_of_memory.OutOfMemoryDuringTiming  # where callers have caught it


def time(fn: Callable, *args: object, mode: str = "cold", warmup_ms: float = 25.0,
         rep_ms: float = 100.0, bytes_moved: int | None = None, flops: float | None = None,
         flops_dtype: str = "float32", label: str | None = None,
         device: str | torch.device | None = None, threads: int | None = None,
         min_runs: int = 5, max_runs: int = 10_000,
         keep_allocator_memory: bool = False, clock: str = "device",
         convolution: bool = False) -> Timing:
    """Time `fn(*args)`: warm up for warmup_ms, then sample for about rep_ms.

    Why each step: the first calls pay for lazy initialisation (CUDA context, cuBLAS
    handles, kernel selection, first-touch page faults) and fill caches, so warm-up runs
    are thrown away. In mode "cold" (default) a buffer of twice the last-level cache (the
    GPU's L2, at least 256 MB there as in triton's do_bench; the CPU's L3 as sysfs reports it,
    32 MiB where unknown) is written before every call:
    otherwise repeated calls on the same small data measure the cache rather than memory.
    The buffer is allocated once per device and kept. "hot" runs the
    calls back to back (data stays cached, as in a loop over the same tensor; on a GPU
    behind a short spin kernel, so the calls queue up and the events time the kernels
    rather than Python's launches); "graph"
    (GPU only) captures one call in a CUDA Graph and times its replays, which removes
    the CPU's launch cost. On the GPU each call sits between two CUDA events and there
    is one synchronisation at the end; on the CPU each call is timed with
    perf_counter_ns with torch's thread count held at `threads` (reported), and the
    minor page faults of the timed calls are counted (getrusage): when they explain a
    large share of the time, the Timing warns. keep_allocator_memory=True times inside
    allocator_kept() (glibc's malloc keeps freed memory), to see the work without them.

    bytes_moved / flops (per call) turn the median into GB/s / TFLOP/s and, if this
    machine's ceilings were already measured by `labkit.measure.ceilings.measure()`, into a
    percentage of them: the matmul share uses the ceiling of the math that ran (float32
    work with TF32 switched on is compared with the TF32 ceiling; flops_dtype='tfloat32'
    says so explicitly). This function never starts that measurement itself: it takes
    seconds to minutes, and a timing should cost only what it says.

    clock (GPU only): "device" (default) reports the call's device time: the calls are
    queued behind a spin kernel that outlasts the host's launch, so the events bracket the
    GPU's work alone (`labkit.measure.clocks` says why), and the host's launch cost per call
    is reported beside it (`Timing.host_s`; `Timing.launch_bound` when it exceeds the device
    time). "wall" leaves the GPU idle while the host launches, so a call that launches slower
    than the GPU runs it is timed at the host's pace: what a loop of such calls costs (the
    launch-overhead model of chapter 04 reads it). A call that synchronises with the host is
    read on the wall clock whatever was asked, and the Timing says so. On the CPU the clock
    is the CPU's, and a timing within 10x of a one-element op's cost says it measured call
    overhead (`Timing.overhead_bound`).

    convolution=True says the timed float32 work is cuDNN convolutions: with TF32 on for
    convolutions only, the Timing then says to read its TF32 share (`timing.ceiling_shares`).
    """
    __tracebackhide__ = True
    conditions.check_arguments(fn, mode, warmup_ms, rep_ms, min_runs, max_runs)
    scale = env.timing_scale()  # a quarter under the test suite's ci profile, else 1
    warmup_ms, rep_ms = warmup_ms * scale, rep_ms * scale
    label = _check_label(label) or conditions.describe(fn)
    bytes_moved = conditions.check_amount(bytes_moved, "bytes_moved", label)
    flops = conditions.check_amount(flops, "flops", label)
    flops_dtype = _check_flops_dtype(flops_dtype)
    _check_flag(keep_allocator_memory, "keep_allocator_memory")
    where = _resolve_device(label, device, fn, args)
    threads = conditions.threads_for(where, threads)
    clock = _check_clock(clock)
    kept = allocator_kept() if keep_allocator_memory else contextlib.nullcontext(None)
    with conditions.fixed_threads(threads), kept as applied:
        sampler = _Sampler(fn, args, where, mode, label, clock)
        per_call_s = sampler.prepare(warmup_ms)
        runs = int(np.clip(rep_ms * 1e-3 / per_call_s, min_runs, max_runs))
        samples = sampler.take(runs)
    return _make_timing(samples, label, where, mode, threads, bytes_moved, flops, flops_dtype,
                        faults=sampler.faults_per_call(), allocator=_allocator_name(where, applied),
                        clock=sampler.clock_read(), convolution=_checked_flag(convolution, "convolution"))


def compare(variants: dict[str, Callable], baseline: str | None = None, rounds: int = 10, *,
            mode: str = "cold", warmup_ms: float = 25.0, rep_ms: float = 200.0,
            bytes_moved: int | Mapping[str, int] | None = None,
            flops: float | Mapping[str, float] | None = None,
            flops_dtype: str = "float32", device: str | torch.device | None = None,
            threads: int | None = None, progress: bool | None = None,
            keep_allocator_memory: bool = False, clock: str = "device",
            after_round: Callable[[], None] | None = None, convolution: bool = False) -> Comparison:
    """Time several variants interleaved in rounds (ABCABC...) and compare each to a baseline.

    Why interleave: a machine drifts (clock boost, heat, a background job). Timing all
    of A then all of B puts the drift into the difference; in rounds every variant sees
    the same conditions, and the ratio taken inside each round cancels what is left. The
    spread of those per-round ratios says whether a difference is real. rep_ms is the
    sampling budget per variant, split over the rounds. A progress bar shows in a notebook
    when the sweep will take more than a couple of seconds (progress=True forces it).
    bytes_moved and flops are one number for every variant, or a dict {label: number}
    when the variants move different amounts (a copy that reads a strided view, say);
    a label missing from the dict gets no rate. The test suite's ci profile takes at most
    three rounds (`env.timing_rounds`); the Comparison says how many ran. clock is
    bench.time's: device time on a GPU by default, each variant's host launch beside it.
    after_round, when given, is called after each round, outside every timed block: a probe
    of the machine's state per round (chapter 08's host pace), never part of a variant's time.
    convolution is bench.time's (the variants' float32 work is cuDNN convolutions).
    """
    __tracebackhide__ = True
    baseline = _check_variants(variants, baseline, rounds, mode, warmup_ms, rep_ms)
    scale = env.timing_scale()  # a quarter under the test suite's ci profile, else 1
    warmup_ms, rep_ms = warmup_ms * scale, rep_ms * scale
    rounds = env.timing_rounds(rounds)  # at most 3 under the ci profile, else as asked
    moved = _per_variant(bytes_moved, "bytes_moved", variants)
    counted = _per_variant(flops, "flops", variants)
    flops_dtype = _check_flops_dtype(flops_dtype)
    _check_flag(keep_allocator_memory, "keep_allocator_memory")
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None, got {progress!r}")
    places = {label: _resolve_device(label, device, fn, ()) for label, fn in variants.items()}
    if len({p.type for p in places.values()}) > 1:
        raise ValueError(f"variants run on different devices {dict(places)}; compare like with like")
    where = next(iter(places.values()))
    threads = conditions.threads_for(where, threads)
    clock = _check_clock(clock)
    samples: dict[str, list[float]] = {label: [] for label in variants}
    round_medians: dict[str, list[float]] = {label: [] for label in variants}
    order: list[str] = []
    kept = allocator_kept() if keep_allocator_memory else contextlib.nullcontext(None)
    with conditions.fixed_threads(threads), kept as applied:
        samplers = {label: _Sampler(fn, (), where, mode, label, clock)
                    for label, fn in variants.items()}
        per_call = {label: s.prepare(warmup_ms) for label, s in samplers.items()}
        runs = {label: max(1, int(rep_ms * 1e-3 / rounds / per_call[label])) for label in variants}
        expected_s = sum(runs[k] * per_call[k] for k in variants) * rounds
        bar = progress_bars.bar(rounds * len(variants), progress, expected_s)
        for _ in range(rounds):
            for label, sampler in samplers.items():
                block = sampler.take(runs[label])
                samples[label].extend(block)
                round_medians[label].append(float(np.median(block)))
                order.append(label)
                bar.step()
            if after_round is not None:
                after_round()
        bar.close()
    results = {}
    allocator = _allocator_name(where, applied)
    timings = {label: _make_timing(samples[label], label, where, mode, threads, moved[label],
                                   counted[label], flops_dtype,
                                   faults=samplers[label].faults_per_call(), allocator=allocator,
                                   clock=samplers[label].clock_read(),
                                   convolution=_checked_flag(convolution, "convolution"))
               for label in variants}
    for label in variants:
        q25, q75, per_round = ratio_spread(round_medians[label], round_medians[baseline])
        # The ratio stated is the median of the per-round ratios, the interleaved estimate the
        # spread describes (a ratio of the two overall medians can fall outside its own spread
        # when one round drifts: chapter 07's Trap 3 stated 0.625 beside rounds of 0.53-0.57).
        ratio = float(np.median(per_round))
        results[label] = VariantResult(timings[label], ratio, q25, q75, per_round,
                                       tuple(round_medians[label]))
    return Comparison(baseline, rounds, results, tuple(order))


def _check_variants(variants: object, baseline: object, rounds: object, mode: str,
                    warmup_ms: float, rep_ms: float) -> str:
    """compare's variants, baseline and rounds, refused with a message that says what to pass;
    returns the baseline's label (the first variant when none is named)."""
    __tracebackhide__ = True
    if not isinstance(variants, dict) or not variants:
        raise TypeError("compare expects a dict {label: function} with at least one entry, "
                        f"got {type(variants).__name__}")
    for label in variants:
        if not isinstance(label, str):
            raise TypeError(f"variant labels must be text, got {label!r} ({type(label).__name__})")
    baseline = next(iter(variants)) if baseline is None else baseline
    if not isinstance(baseline, str) or baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not one of the variants {list(variants)}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= MAX_ROUNDS:
        raise ValueError(f"rounds must be a whole number from 1 to {MAX_ROUNDS}, got {rounds!r}")
    for label, fn in variants.items():
        conditions.check_arguments(fn, mode, warmup_ms, rep_ms, 1, 10**9, label=label)
    return baseline


MAX_ROUNDS = 10_000
FLOPS_DTYPES = ("float32", "tfloat32", "float16", "bfloat16", "float64", "int8",
                "float8_e4m3fn", "float8_e5m2")


def _per_variant(value: object, what: str, variants: dict) -> dict[str, float | None]:
    """One amount for every variant, or a dict {label: amount} checked against the labels."""
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in variants]
        if unknown:
            raise ValueError(f"{what} names {unknown}, which are not variants {list(variants)}")
        return {label: conditions.check_amount(value.get(label), what, label)
                for label in variants}
    amount = conditions.check_amount(value, what)
    return dict.fromkeys(variants, amount)


def _check_flops_dtype(flops_dtype: object) -> str:
    text = str(flops_dtype).replace("torch.", "") if isinstance(
        flops_dtype, str | torch.dtype) else None
    if text in ("tf32", "tensorfloat32"):
        text = "tfloat32"
    if text not in FLOPS_DTYPES:
        raise ValueError(f"flops_dtype must name the math the flops ran in, one of "
                         f"{FLOPS_DTYPES} (or a torch.dtype), got {flops_dtype!r}")
    return text


def _check_label(label: object) -> str | None:
    if label is not None and not isinstance(label, str):
        raise TypeError(f"label must be text, got {label!r} ({type(label).__name__})")
    return label


def _check_clock(clock: object) -> str:
    if clock not in clocks.CLOCKS:
        raise ValueError(f"clock must be one of {clocks.CLOCKS} (the GPU's work alone, or the "
                         f"host's pace of a loop of calls), got {clock!r}")
    return str(clock)


def _check_flag(value: object, what: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be True or False, got {value!r}")


def _checked_flag(value: object, what: str) -> bool:
    """`value`, refused unless it is True or False (`_check_flag`)."""
    _check_flag(value, what)
    return bool(value)


def _allocator_name(where: torch.device, applied: bool | None) -> str | None:
    if where.type != "cpu":
        return None
    return "kept" if applied else "default"


# ---------------------------------------------------------------------------------------
# Sampling


class _Sampler:
    """Calls one function on one device in one mode and returns per-call durations."""

    def __init__(self, fn: Callable, args: tuple, where: torch.device, mode: str,
                 label: str, clock: str = clocks.DEVICE) -> None:
        self.fn, self.args, self.where, self.mode, self.label = fn, args, where, mode, label
        self.run: Callable[[], object] = lambda: fn(*args)
        self.flush_buffer = conditions.flush_buffer(where) if mode == "cold" else None
        self.faults = 0          # minor page faults during the timed calls (CPU)
        self.timed_calls = 0
        self.clock = clocks.CPU if where.type != "cuda" else clock
        self.host_s: float | None = None   # the host's launch per call (GPU)
        self.hold_cycles = 0               # spin before each call so the events see the GPU alone
        self.clock_note = ""                # why the clock differs from the one asked for
        self.records = False                # device time from kernel records (short calls)
        self.flush_records = 0              # GPU records each cold-mode flush leaves

    def prepare(self, warmup_ms: float) -> float:
        """First call, graph capture if asked, warm-up; returns the wall time per sample."""
        __tracebackhide__ = True
        _guarded(self.label, "its first call", self._first_call)
        start = _clock.perf_counter()
        _guarded(self.label, "the estimate", lambda: self._take(5))
        per_call_s = max((_clock.perf_counter() - start) / 5, 1e-9)
        if self.where.type == "cuda":  # before the warm-up, so its spin is not next to a sample
            _guarded(self.label, "the host-launch probe", lambda: self._probe_host(per_call_s))
            held = _guarded(self.label, "the estimate", lambda: self._take(5))
            _guarded(self.label, "the choice of clock", lambda: self._choose_records(held))
        warmup_calls = max(1, int(warmup_ms * 1e-3 / per_call_s))
        _guarded(self.label, "warm-up", lambda: self._take(warmup_calls))
        return per_call_s

    def _choose_records(self, estimate: list[float]) -> None:
        """Short calls on the device clock are read from kernel records (events add ~3-5 us)."""
        if self.clock != clocks.DEVICE or float(np.median(estimate)) >= kernel_records.RECORDS_BELOW_S:
            return
        if kernel_records.profiler_active():
            self.clock_note = ("device time by CUDA events (a profiler was already recording, so "
                               "kernel records could not be read): a short call's figure then "
                               "holds a few microseconds of the kernel's start-up")
            return
        try:
            self.flush_records = (kernel_records.flush_record_count(str(self.where))
                                  if self.flush_buffer is not None else 0)
            self.records = True
            self._records(3)  # a trial: the records split into calls, or the events are kept
        except Exception as why:  # noqa: BLE001 -- any failure of the profiler: keep the events
            self._give_up_records(why)

    def _give_up_records(self, why: BaseException) -> None:
        self.records = False
        self.clock_note = (f"device time by CUDA events (kernel records unusable: {why}); a short "
                           "call's figure holds a few microseconds of the kernel's start-up")

    def _probe_host(self, per_call_s: float) -> None:
        """Time the host's launch; on the device clock, size the hold that hides it."""
        probe = clocks.host_launch(self.run, self.where, per_call_s)
        # A call that waited for the GPU returned after the probe's own spin: its figure is the
        # spin, not a launch, so none is reported (the wall clock then holds the whole call).
        self.host_s = None if probe.synchronises else probe.seconds
        if probe.synchronises:
            self.clock = clocks.WALL
            self.clock_note = ("wall clock: the call waits for the GPU (a synchronisation, or "
                               "more launches than the GPU's queue holds), so its host work "
                               "sits inside the timed window")
        elif self.clock == clocks.DEVICE and self._needs_hold(probe.seconds):
            self.hold_cycles = clocks.cycles_for(clocks.hold_for(probe.seconds), str(self.where))

    def _needs_hold(self, host_s: float) -> bool:
        """Whether the GPU would go idle while the host launches the call.

        In cold mode the flush keeps the GPU busy for its own duration: a call launched in
        less (with margin) needs no hold, and none is added, since a spin is idle time that
        lets a power-capped GPU clock higher for the next call. Hot and graph modes hold the
        whole chunk anyway; the probe only raises the hold per call."""
        if self.flush_buffer is None:
            return True
        return clocks.hold_for(host_s) > clocks.flush_duration_s(self.flush_buffer)

    def clock_read(self) -> tuple[str, float | None, str]:
        """(the clock the samples read, the host's launch per call, why that clock)."""
        clock = clocks.RECORDS if self.records and self.clock == clocks.DEVICE else self.clock
        return clock, self.host_s, self.clock_note

    def _first_call(self) -> None:
        conditions.check_result(self.run(), self.label)
        self._sync()
        if self.mode == "graph":
            self.run = _capture_graph(self.fn, self.args, self.label)

    def take(self, count: int) -> list[float]:
        """`count` durations in seconds, one per call, flushing first in cold mode."""
        __tracebackhide__ = True
        before = conditions.minor_faults() if self.where.type == "cpu" else None
        durations = _guarded(self.label, "timing", lambda: self._take(count))
        if before is not None:
            self.faults += conditions.minor_faults() - before
        self.timed_calls += count
        return durations

    def faults_per_call(self) -> float | None:
        """Minor page faults per timed call on the CPU (the flush writes none: it is reused)."""
        if self.where.type != "cpu" or not self.timed_calls or conditions.minor_faults() is None:
            return None
        return self.faults / self.timed_calls

    def _take(self, count: int) -> list[float]:
        flush, run = self.flush_buffer, self.run
        if self.where.type == "cuda":
            if self.records:
                try:
                    return self._records(count)
                except Exception as why:  # noqa: BLE001 -- as in the trial: fall back to events
                    self._give_up_records(why)
            if flush is None:  # hot and graph: back to back, in chunks behind a spin kernel
                durations = []
                for first in range(0, count, HELD_CHUNK):
                    durations += self._events(min(HELD_CHUNK, count - first), None,
                                              hold=self.clock != clocks.WALL)
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

    def _records(self, count: int) -> list[float]:
        """`count` calls, each behind [its flush and] a spin; device time from kernel records."""
        run, flush = self.run, self.flush_buffer
        spin = max(self.hold_cycles, kernel_records.SPIN_MARK_CYCLES)

        def block() -> None:
            for _ in range(count):
                if flush is not None:
                    flush.zero_()
                torch.cuda._sleep(spin)
                run()
        return kernel_records.per_call_seconds(block, count, self.where, self.flush_records)

    def _events(self, count: int, flush: torch.Tensor | None, hold: bool) -> list[float]:
        """Time `count` calls between CUDA events, synchronising once at the end."""
        run, spin = self.run, self.hold_cycles
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        if hold:
            _hold_gpu_while_queueing(count, spin)
        idle_first = self.clock == clocks.WALL and flush is not None
        for start, end in zip(starts, ends, strict=True):
            if flush is not None:
                flush.zero_()
                if spin:  # cold, device clock: the call is queued before the GPU reaches start
                    torch.cuda._sleep(spin)
                elif idle_first:  # wall clock: the window opens on an idle GPU, as a loop's does
                    torch.cuda.synchronize(self.where)
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


def _hold_gpu_while_queueing(count: int, cycles_per_call: int = 0) -> None:
    """Keep the GPU busy while the CPU queues `count` calls (nvbench's "blocking kernel").

    Without it, back-to-back timing of a short kernel measures the CPU: the start event
    runs as soon as it is queued, then the GPU idles until Python has queued the kernel, so
    the pair of events brackets launch overhead (~20 us) instead of the kernel (~2 us). A
    spin kernel in front lets the calls queue up and run back to back on the GPU (in chunks
    of HELD_CHUNK, so the queue never fills). cycles_per_call, from the host-launch probe,
    raises the default where the host needs longer per call (a Triton launcher, a compiled
    function's guards). Cold mode spins before each call instead (see `_events`).
    """
    per_call = max(GPU_CYCLES_PER_QUEUED_CALL, cycles_per_call)
    torch.cuda._sleep(int(min(count * per_call, GPU_MAX_HOLD_CYCLES)))


def _capture_graph(fn: Callable, args: tuple, label: str) -> Callable[[], object]:
    """Capture one call of fn in a CUDA Graph (after a warm-up on a side stream)."""
    hint = ("Code that synchronises (.item(), printing a tensor, CPU tensors, data-dependent "
            "shapes) cannot be captured: use mode='hot' for it.")
    # Refuse synchronising code before a capture begins: a capture that fails half-way leaves
    # the CUDA random generator registered with the dead graph (seen on torch 2.11: every
    # later torch.rand on the GPU raised "Offset increment outside graph capture"), so the
    # learner's kernel would be unusable. Sync debug mode turns a sync into an error instead.
    previous_mode = torch.cuda.get_sync_debug_mode()
    try:
        torch.cuda.set_sync_debug_mode("error")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn(*args)
        torch.cuda.current_stream().wait_stream(side)
    except RuntimeError as exc:
        raise RuntimeError(f"mode='graph' cannot capture {label!r} in a CUDA Graph: it "
                           f"synchronises with the CPU ({exc}). {hint}") from exc
    finally:
        torch.cuda.set_sync_debug_mode(previous_mode)
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


def _resolve_device(label: str, device: str | torch.device | None, fn: Callable,
                    args: tuple) -> torch.device:
    """conditions.resolve_device, with its one call of fn (made on a GPU machine where no tensor
    says where fn runs) explained like a timed call when it runs out of memory; the harness's
    own refusals (a device mismatch) pass unchanged, with no note blaming the function."""
    __tracebackhide__ = True
    return out_of_memory.explained(label, "the probe of where it runs",
                                   lambda: conditions.resolve_device(device, fn, args))


def _guarded(label: str, phase: str, action: Callable[[], object]) -> object:
    """Run `action`; leave the user's exceptions as they were, but explain out-of-memory.

    An ordinary exception is re-raised unchanged (its traceback ends in the user's code)
    with a note saying when the harness called it. Out-of-memory is different: the
    traceback holds the frames that hold the tensors, so the harness drops it, frees the
    cache and raises a short error that says what to do.
    """
    __tracebackhide__ = True

    def noted() -> object:
        try:
            return action()
        except torch.cuda.OutOfMemoryError:
            raise  # out_of_memory.explained's to explain
        except Exception as exc:
            if hasattr(exc, "add_note"):
                exc.add_note(f"(raised by the function timed as {label!r}, during {phase}; "
                             "labkit.measure.bench re-raised it unchanged)")
            raise

    return out_of_memory.explained(label, phase, noted)


# ---------------------------------------------------------------------------------------
# From samples to a Timing


# How the probe's warning starts: a chapter whose own timed loop refutes it leaves it out
# (chapter 02's C10, `cases.without_refuted_launch_warnings`).
PROBE_LAUNCH_WARNING = "may be launch-bound"


def _make_timing(samples: list[float], label: str, where: torch.device, mode: str,
                 threads: int | None, bytes_moved: float | None, flops: float | None,
                 flops_dtype: str, faults: float | None = None,
                 allocator: str | None = None,
                 clock: tuple[str, float | None, str] | None = None,
                 convolution: bool = False) -> Timing:
    stats = summarise(samples)
    clock_name, host_s, clock_note = clock or (
        clocks.CPU if where.type != "cuda" else clocks.DEVICE, None, "")
    overhead_s = clocks.cpu_call_overhead_s(threads) if where.type == "cpu" else None
    resolution = conditions.timer_resolution_s(where)
    if clock_name == clocks.RECORDS:  # the GPU timer's own step, not the events'
        resolution = kernel_records.resolution_s(samples, resolution)
    notes = []
    if stats.median_s < TOO_FAST_FACTOR * resolution:
        note = (f"too fast to time reliably: the median {stats.median_s * 1e9:.0f} ns is under "
                f"{TOO_FAST_FACTOR}x the timer resolution ({resolution * 1e9:.0f} ns), so rounding "
                "alone can move it by 5% or more. Time more work per call (e.g. a loop of 100 "
                "calls inside the function, then divide).")
        notes.append(note)
        warnings.warn(f"{label}: {note}", TimingWarning, stacklevel=3)
    if stats.median_s > 0 and stats.iqr_s / stats.median_s > timing.NOISY_IQR_FRACTION:
        notes.append(f"noisy: IQR is {100 * stats.iqr_s / stats.median_s:.0f}% of the median "
                     "(over 10%); rerun, close other programs, or time more work per call.")
    if clock_note:
        notes.append(clock_note)
    share = clocks.overhead_share(overhead_s, stats.median_s)
    if share is not None and share > clocks.OVERHEAD_SHARE:
        notes.append(f"call overhead: a one-element torch op takes {overhead_s * 1e6:.2f} us here, "
                     f"{100 * share:.0f}% of this {stats.median_s * 1e6:.2f} us median, so the "
                     "timing measures the cost of a call more than its work; per-element "
                     "figures need more work per call (a larger size, or a loop inside the call)")
    if host_s is not None and clock_name in (clocks.DEVICE, clocks.RECORDS) and host_s > stats.median_s:
        # The probe's figure is not printed (review 2026-12-04l item 2): a few calls behind a spin
        # read 92.9 us on an H200 for a GEMM a loop of calls repeated every 82.9 us, and a note
        # beside that loop must not give a launch longer than the loop's whole call.
        notes.append(f"{PROBE_LAUNCH_WARNING}: a short host-launch probe ({clocks.PROBE_CALLS} calls behind a "
                     f"spin, an upper bound) ran over the GPU's {stats.median_s * 1e6:.1f} us per call; "
                     "the median is device time, and only a timed loop of calls (clock='wall') gives a "
                     "Python loop's pace")
    fault_cost = conditions.page_fault_cost_s() if faults else 0.0
    fault_note = timing.page_fault_note(faults, stats.median_s, fault_cost, threads)
    if fault_note:
        notes.append(fault_note)
    others = sharing.others_on_gpu(where) if where.type == "cuda" else []
    if others:  # another learner's kernel on this GPU: the number is a share of it
        notes.append(sharing.note(others))
        warnings.warn(f"{label}: {notes[-1]}", TimingWarning, stacklevel=3)
    gbps = bytes_moved / stats.median_s / 1e9 if bytes_moved and stats.median_s > 0 else None
    tflops = flops / stats.median_s / 1e12 if flops and stats.median_s > 0 else None
    shares = timing.Shares()
    if gbps is not None or tflops is not None:
        known = ceiling_store.cached(where.type)
        tf32_matmul, tf32_conv = conditions.tf32_state() if where.type == "cuda" else (False, False)
        shares = timing.ceiling_shares(
            gbps, tflops, flops_dtype, known.copy_gbps if known else None,
            known.matmul_tflops if known else None, tf32_matmul, tf32_conv, convolution)
        notes.extend(shares.notes)
    return Timing(label=label, device=str(where), mode=mode, times_s=tuple(samples),
                  median_s=stats.median_s, iqr_s=stats.iqr_s, min_s=stats.min_s,
                  count=stats.count, threads=threads, bytes_moved=bytes_moved, flops=flops,
                  gbps=gbps, tflops=tflops, pct_of_copy_ceiling=shares.pct_of_copy_ceiling,
                  pct_of_matmul_ceiling=shares.pct_of_matmul_ceiling,
                  timer_resolution_s=resolution, warnings=tuple(notes),
                  minor_faults_per_call=faults, allocator=allocator, math=shares.math,
                  pct_of_tf32_ceiling=shares.pct_of_tf32_ceiling,
                  page_fault_share=timing.fault_share(faults, stats.median_s, fault_cost, threads),
                  shared_gpu=bool(others), clock=clock_name, host_s=host_s,
                  call_overhead_s=overhead_s)
