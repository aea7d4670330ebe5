"""Which clock a timing reads, and what the host costs beside it.

A GPU runs a call's kernels while the CPU is already queueing the next ones, so a CUDA-event
pair around a call times the GPU only when the call's kernels were queued before the GPU
reached the start event. In cold mode the harness writes a cache flush before every call
(about 25-30 us of GPU work on an H200; `flush_duration_s` measures it on this GPU). A call
whose host launch takes longer than that (Triton's Python launcher, a compiled function's
guards, a `.contiguous()` plus GEMM pair) starts its timed window on an idle GPU, and the
events then count the launch: the recorded H200 sweep of chapter 04 showed a constant +13 to
21 us on Triton's add at every size under 2^25 elements.

The remedy is nvbench's blocking kernel: before the start event, a spin kernel
(`torch.cuda._sleep`) holds the GPU for longer than the host needs to queue the call, so when
the GPU reaches the start event every kernel of the call is already queued, and the events
bracket the GPU's work alone: the call's **device time**. The host's launch cost per call is
measured on its own (`host_launch`) and reported beside it, so a reader sees both: device
time says what the kernels cost, host time what a Python loop of such calls pays per call.
The two are independent checks of each other: on the GPU machine the device time agrees with
the profiler's kernel records (`labkit.measure.device_time`) and with CUDA-graph replay
(triton's `do_bench_cudagraph`), see `benchmarks/harness_parity.py`.

A call that synchronises with the host (`.item()`, printing a tensor) cannot be held: the host
waits for the spin kernel inside the call. `host_launch` detects it (the GPU was idle when the
call returned) and the harness then reads the wall clock, saying so.

On the CPU there is no launch to hide, but every call pays the dispatcher's fixed cost:
`cpu_call_overhead_s` measures what a one-element torch op costs here, and a timing within
10x of it measures call overhead more than the work (a 2,048-element `sum` took 4.92 us
against 4.68 us for one element on the course's CPU: 95% overhead).
"""

from __future__ import annotations

import time as _clock
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

DEVICE, WALL, CPU = "device", "wall", "cpu"
RECORDS = "device (kernel records)"   # device time read from CUPTI's records, not events
CLOCKS = (DEVICE, WALL)   # what a caller may ask for on a GPU; the CPU always reads CPU

HOLD_MARGIN = 1.5          # the spin lasts this many times the host's launch ...
HOLD_EXTRA_S = 20e-6       # ... plus this, for the event records and Python around the call
MAX_HOLD_S = 1.0           # never spin the GPU for longer than this per call
# A timing whose fixed per-call cost (CPU dispatch) is more than this share of its median
# measures call overhead as much as the work.
OVERHEAD_SHARE = 0.10
PROBE_CALLS = 3            # calls queued behind one long spin to time the host's launch
# Probes per host_launch, each its own spin and PROBE_CALLS calls; the median is reported. One
# probe read 141 us for a GEMM whose timed loop ran at 63 us a call (2026-12-04 H200, chapter 02's
# C10; the same probe read 54-103 us in three fresh processes): a single probe is one sample
# of the host's pace, and Python's first pass over a call is slower than the rest.
PROBES = 5
PROBE_BUDGET_S = 0.05  # the probes' spins per timing at most (a 10 ms call gets one probe, as before)


@lru_cache(maxsize=8)
def gpu_cycles_per_s(device: str) -> float:
    """The rate at which `torch.cuda._sleep` counts cycles on this GPU (measured once).

    The spin kernel counts SM clock cycles; the clock moves with the power state, so the
    harness spins HOLD_MARGIN times longer than it needs and re-measures nothing per call.
    """
    where = torch.device(device)
    with torch.cuda.device(where):
        torch.cuda.synchronize()
        cycles = 2_000_000
        torch.cuda._sleep(cycles)  # the first launch loads the kernel
        # Warm the clock first, then keep the fastest of a few spins. Called as a process's
        # first GPU work (03 and 04 probe the host's pace at their start), one spin right after
        # an idle GPU's first launch could read the idle clock (the H200: 345 MHz idle, 1,980
        # boosted), and every later hold would then last up to ~5.7x less than intended; a rate
        # read high only lengthens holds (review 2026-12-05p2 00-04 item 2).
        torch.cuda._sleep(WARM_CYCLES)
        rates = []
        for _ in range(3):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.cuda._sleep(cycles)
            end.record()
            end.synchronize()
            seconds = start.elapsed_time(end) * 1e-3
            if seconds > 0:
                rates.append(cycles / seconds)
    return max(rates) if rates else 2.0e9


# the spin before the rate is read: ~20 ms at the H200's boost clock, ~120 ms at its idle one
WARM_CYCLES = 40_000_000


def host_pace(device: torch.device, when: str) -> dict | None:
    """The host's pace at one point of a chapter (`when`: 'start' or 'end'): the host launch of
    one `x.add_(1)` behind a spin (`host_launch`, its probes' median and range, us) and the spin
    rate it was held by, on a GPU; None elsewhere. Why: the 2026-12-05 pages of 03 and 04 ran
    their host-paced figures 1.4-2.2x slower than reproduce's fresh processes, and the record
    measured nothing about the host's speed; kept at a chapter's start and end, the next record
    says whether the process slowed as it went (review 2026-12-05p 03-04 item 1c)."""
    if device.type != "cuda":
        return None
    x = torch.zeros(256, device=device)
    x.add_(1)
    torch.cuda.synchronize(device)
    found = host_launch(lambda: x.add_(1), device, wall_per_call_s=50e-6)
    return {"when": when, "host_launch_us": found.seconds * 1e6, "synchronises": found.synchronises,
            "spread_us": [v * 1e6 for v in found.spread] if found.spread else None,
            "spin_cycles_per_s": gpu_cycles_per_s(str(device))}


def cycles_for(seconds: float, device: str) -> int:
    """Spin cycles that hold the GPU for about `seconds` (capped at MAX_HOLD_S)."""
    return int(min(max(seconds, 0.0), MAX_HOLD_S) * gpu_cycles_per_s(device))


def hold_for(host_s: float) -> float:
    """How long to hold the GPU before a call whose host launch takes host_s."""
    return HOLD_MARGIN * host_s + HOLD_EXTRA_S


@dataclass(frozen=True)
class HostLaunch:
    """What the host pays to queue one call, and whether the call waits for the GPU."""

    seconds: float        # host time per call, measured while the GPU was held busy (median of probes)
    synchronises: bool    # the call returned only after the GPU had drained its queue
    spread: tuple[float, float] | None = None  # the probes' lowest and highest per-call time


def median_of_probes(samples: list[float]) -> tuple[float, tuple[float, float]]:
    """(the median per-call time, (lowest, highest)) of the probes' per-call times."""
    if not samples:
        raise ValueError("no probe to summarise: host_launch takes at least one")
    ordered = sorted(samples)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return median, (ordered[0], ordered[-1])


def probe_hold_s(wall_per_call_s: float) -> float:
    """How long one probe spins: longer than its PROBE_CALLS calls, with 2 ms to spare."""
    return min(2 * PROBE_CALLS * wall_per_call_s + 2e-3, MAX_HOLD_S)


def probes_for(wall_per_call_s: float, most: int = PROBES) -> int:
    """Probes for a call: up to `most`, their spins within PROBE_BUDGET_S (at least one). A short
    call, whose launch is as long as its work, gets five; a 10 ms call one, as before, where the
    launch is a small share of its time and five spins would add a quarter second to its timing."""
    return max(1, min(most, int(PROBE_BUDGET_S / probe_hold_s(wall_per_call_s))))


def _probe_once(run: Callable[[], object], device: torch.device, wall_per_call_s: float) -> HostLaunch:
    """One probe: PROBE_CALLS calls queued behind one spin, timed on the host."""
    key = str(device)
    torch.cuda.synchronize(device)
    hold_s = probe_hold_s(wall_per_call_s)
    torch.cuda._sleep(cycles_for(hold_s, key))
    begin = _clock.perf_counter()
    for _ in range(PROBE_CALLS):
        run()
    elapsed = _clock.perf_counter() - begin
    still_busy = not torch.cuda.current_stream(device).query()
    torch.cuda.synchronize(device)
    # Returned after the spin ended, or took most of it: the host waited for the GPU (a
    # synchronisation, or more launches than the GPU's queue holds), so no hold can help.
    waited = (not still_busy) or elapsed > 0.8 * hold_s
    return HostLaunch(elapsed / PROBE_CALLS, synchronises=waited)


def host_launch(run: Callable[[], object], device: torch.device,
                wall_per_call_s: float, probes: int | None = None) -> HostLaunch:
    """Time the host's side of `run()` while a spin kernel keeps the GPU busy: the median of
    `probes` probes (`_probe_once`; `probes_for` the call by default), with their range.

    wall_per_call_s is an upper bound of one call (the harness's estimate): the spin lasts
    longer than PROBE_CALLS of them, so if the stream is idle when the calls return, they
    waited for the GPU (a synchronisation inside the call, or a queue so long that the host
    blocked on it), and no hold can put the whole call behind the start event. The call counts
    as waiting only where most probes waited (`waits_for_the_gpu`); the median is of the others.
    """
    probes = probes_for(wall_per_call_s) if probes is None else probes
    if probes < 1:
        raise ValueError(f"probes must be at least 1, got {probes}")
    samples: list[float] = []
    waited = 0
    for _ in range(probes):
        one = _probe_once(run, device, wall_per_call_s)
        if not one.synchronises:
            samples.append(one.seconds)
            continue
        waited += 1
        if waits_for_the_gpu(waited, probes):
            return one
    median, spread = median_of_probes(samples)
    return HostLaunch(median, synchronises=False, spread=spread)


def waits_for_the_gpu(waited: int, probes: int) -> bool:
    """Whether the call waits for the GPU: most of the probes waited. One probe that waited is a
    host hiccup longer than its spin (a garbage-collection pass, a preempted thread: the spin of
    a microsecond call lasts about 2 ms), and must not switch the timing to the wall clock; a call
    that synchronises waits in every probe, so probing stops once most have waited."""
    return 2 * waited > probes


_flush_durations: dict[str, float] = {}


def flush_duration_s(flush: torch.Tensor) -> float:
    """How long the cold-mode cache flush keeps this GPU busy (measured once per device)."""
    key = str(flush.device)
    if key not in _flush_durations:
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        flush.zero_()
        end.record()
        end.synchronize()
        _flush_durations[key] = start.elapsed_time(end) * 1e-3
    return _flush_durations[key]


@lru_cache(maxsize=4)
def cpu_call_overhead_s(threads: int | None = None) -> float:
    """The median time of a one-element torch op here: what any small call costs at least.

    Measured once per thread count: `torch.sum` of one float32 element, 2,000 calls after a
    warm-up, the median of 20 blocks of 100. A timing within 1/OVERHEAD_SHARE of it measures
    the dispatcher more than the work.
    """
    one = torch.ones(1)
    previous = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        for _ in range(200):
            one.sum()
        blocks = []
        now = _clock.perf_counter_ns
        for _ in range(20):
            begin = now()
            for _ in range(100):
                one.sum()
            blocks.append((now() - begin) * 1e-9 / 100)
    finally:
        torch.set_num_threads(previous)
    blocks.sort()
    return blocks[len(blocks) // 2]


def overhead_share(overhead_s: float | None, median_s: float) -> float | None:
    """The share of a median that the fixed per-call cost explains (None when unknown)."""
    if overhead_s is None or median_s <= 0:
        return None
    return min(overhead_s / median_s, 1.0)


DISTURBED_LOOP_FACTOR = 1.5


def loop_round(fn: Callable[[], object], calls: int, sync: Callable[[], None]) -> float:
    """One round of a Python loop's pace, seconds per call: perf_counter around `calls`
    back-to-back calls of fn, synchronized (`sync`, e.g. torch.cuda.synchronize, or a no-op on a
    CPU) before and once after, so the GPU's queue drains inside the window and no per-call CUDA
    event adds its own microseconds (the pace chapters 00, 02 and 03 set beside device time)."""
    return loop_round_with_host(fn, calls, sync)[0]


def loop_round_with_host(fn: Callable[[], object], calls: int, sync: Callable[[], None]) -> tuple[float, float]:
    """(wall, host) seconds per call of one `loop_round`: the wall time with the queue drained,
    and the host's time until the last call returned, before the final sync. Where the host's
    time is near the wall time, the host was busy the whole loop: it paced the loop, or blocked
    on a full launch queue (then the GPU never idles, which its busy time tells apart). Review
    2026-12-05w item 1: chapter 03's probe could not read NCHW's launch at fp16 (the host
    blocked on three queued forwards), and its host-bound label went unchecked on that side."""
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be a whole number >= 1, got {calls!r}")
    sync()
    start = _clock.perf_counter()
    for _ in range(calls):
        fn()
    returned = _clock.perf_counter()
    sync()
    end = _clock.perf_counter()
    return (end - start) / calls, (returned - start) / calls


def loop_sync() -> Callable[[], None]:
    """What a loop's rounds synchronise with: the GPU's queue where there is one (a CPU machine's
    tensors are on the CPU, and a GPU machine's sync is harmless for CPU work), else nothing."""
    return torch.cuda.synchronize if torch.cuda.is_available() else _no_sync


def _no_sync() -> None:
    """A CPU's loop has no queue to drain."""


LOOP_NOISY_FRACTION = 0.10  # a loop's rounds with an IQR over 10% of their median: flagged, as bench flags a timing


def interleaved_loops(variants: dict[str, Callable[[], object]], baseline: str, rounds: int,
                      rep_ms: float, sync: Callable[[], None]) -> dict:
    """Each variant's Python loop, `loop_round` rounds interleaved (the order rotated each round),
    so each round's ratio to `baseline` gives a spread the trust rule reads.

    Why not the harness's hot mode on the wall clock: it brackets every call with two CUDA
    events, whose recording adds microseconds to each call of a host-paced loop (the H100 smoke
    run of 2026-12-05 23:20: chapter 04's reduce-overhead loop read 105 us a call against 86.7 in
    a plain loop of the same calls, review 2026-12-05w item 2). Here nothing but the calls runs
    between the two syncs of a round.

    Returns {'rows': per variant {'variant', 'median_s' (over rounds), 'ratio' (the median of
    its per-round ratios to the baseline), 'ratio_q25', 'ratio_q75', 'round_medians_s' (each
    round's seconds per call), 'calls' (per round)}, 'baseline', 'rounds', 'flags': a variant
    whose rounds' IQR exceeds LOOP_NOISY_FRACTION of their median, as `Timing.flag` gives it}."""
    if baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not one of the variants {list(variants)}")
    if rounds < 1 or rep_ms <= 0:
        raise ValueError(f"rounds must be at least 1 and rep_ms above 0, got {rounds}, {rep_ms}")
    names = list(variants)
    calls = {}
    for name, fn in variants.items():  # warm, then size a round to rep_ms / rounds
        fn()
        estimate = max(loop_round(fn, 3, sync), 1e-7)
        calls[name] = max(5, min(10_000, int(rep_ms / 1e3 / rounds / estimate)))
    per_round: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            per_round[name].append(loop_round(variants[name], calls[name], sync))
    base = np.asarray(per_round[baseline])
    rows, flags = [], []
    for name in names:
        own = np.asarray(per_round[name])
        ratios = own / base
        q25, q50, q75 = np.percentile(ratios, [25, 50, 75])
        low, mid, high = np.percentile(own, [25, 50, 75])
        rows.append({"variant": name, "median_s": float(mid), "ratio": float(q50), "ratio_q25": float(q25),
                     "ratio_q75": float(q75), "round_medians_s": [float(v) for v in own], "calls": calls[name]})
        if mid > 0 and (high - low) / mid > LOOP_NOISY_FRACTION:
            share = float((high - low) / mid)
            flags.append({"timing": name, "why": f"noisy: rounds' IQR {100 * share:.0f}% of the median",
                          "spread": share})
    return {"rows": rows, "baseline": baseline, "rounds": rounds, "flags": flags}


# One rule for a disturbed loop, chapters 03 and 04 alike (review 2026-12-05o 03-04 item 3). A
# loop of asynchronous calls overlaps the host's launches with the device's work, so it costs
# about the larger of the two a call (its pace), not their sum: a loop over DISTURBED_LOOP_FACTOR
# times its pace is over it. What marks a disturbed host is its rounds disagreeing, past
# DISTURBED_ROUNDS_SPREAD (slowest over fastest): on the 18:55 H200 record chapter 03's fp16 b64
# NHWC loop ran rounds of 9.15, 8.86 and 4.73 ms (1.93x), while 04's eager loop sat 1.53x over its
# pace with an IQR of 9% of its median: a steady excess, per-call work the probe misses.
DISTURBED_ROUNDS_SPREAD = 1.3
# A steady loop past this many times its pace is over it (per-call work the host-launch probe
# misses): the mirror of chapter 04's 0.8x under the probe, where the probe over-reads. Between
# 1.25x and DISTURBED_LOOP_FACTOR a loop is over its pace, not yet disturbed whatever its rounds.
OVER_PACE_FACTOR = 1.25


def loop_over_pace(loop_s: float | None, host_s: float | None, device_s: float | None,
                   factor: float = DISTURBED_LOOP_FACTOR) -> float | None:
    """How many times its pace (the larger of its host launch and its device time per call) a
    timed loop's call took, where that is above `factor`; None where it is not, or a figure is
    missing (a CPU's loop has no host launch measured apart; a call that waits for the GPU none
    either)."""
    if None in (loop_s, host_s, device_s):
        return None
    pace = max(float(host_s), float(device_s))  # type: ignore[arg-type]
    if pace <= 0:
        return None
    times = float(loop_s) / pace  # type: ignore[arg-type]
    return times if times > factor else None


def rounds_spread(rounds: Sequence[float] | None) -> float | None:
    """A loop's slowest round over its fastest (1.93 for 9.15, 8.86 and 4.73 ms); None with fewer
    than two rounds or one not above zero (nothing to compare)."""
    values = [float(r) for r in rounds or ()]
    if len(values) < 2 or min(values) <= 0:
        return None
    return max(values) / min(values)


def disturbed_by(loop_s: float | None, host_s: float | None, device_s: float | None,
                 factor: float = DISTURBED_LOOP_FACTOR, *,
                 rounds: Sequence[float] | None = None) -> float | None:
    """How many times its pace a timed loop's call took (`loop_over_pace`), where the loop is
    over `factor` of it **and** its rounds disagree (`rounds_spread` past DISTURBED_ROUNDS_SPREAD):
    a disturbed host, whose loop figures are not the code's. None where either is not so, or
    where a figure or the rounds are missing: a steady loop over its pace is per-call work the
    host-launch probe misses, read as such, not a disturbance."""
    times = loop_over_pace(loop_s, host_s, device_s, factor)
    spread = rounds_spread(rounds)
    if times is None or spread is None or spread <= DISTURBED_ROUNDS_SPREAD:
        return None
    return times


def steady_excess(loop_s: float | None, host_s: float | None, device_s: float | None, *,
                  rounds: Sequence[float] | None = None) -> float | None:
    """How many times its pace a timed loop's call took, where that is over OVER_PACE_FACTOR and the
    loop is not disturbed (`disturbed_by`) and its rounds, where kept, agree within
    DISTURBED_ROUNDS_SPREAD: per-call work the host-launch probe misses (chapters 03 and 04 say it
    so). None otherwise."""
    times = loop_over_pace(loop_s, host_s, device_s, OVER_PACE_FACTOR)
    spread = rounds_spread(rounds)
    if times is None or (spread is not None and spread > DISTURBED_ROUNDS_SPREAD):
        return None
    return times
