"""Device time beside wall time: how much of a GPU timing the GPU was busy, and host-bound work.

A wall-time ratio can hide a gain on the device or show one that is not there: fp16 eager
ResNet-50 at batch 64 on an H200 leaves the GPU idle about two thirds of the time, so making
its kernels faster changes nothing the clock on the wall sees. This module measures both
figures for one function, from the same calls::

    from labkit.measure import bench
    d = bench.device_time(lambda: model(x))   # DeviceTime: wall, device-busy, idle share
    d.host_bound                              # True when the GPU idles > 30% of the wall time

- *wall* is the host's clock from before the first call to after the synchronize that
  ends the last one, divided by the calls.
- *device-busy* is the length of the union of the GPU's kernel, copy and memset intervals
  (torch.profiler's, every stream together, as in labkit.measure.timeline_stats), per call.
- *idle share* is 1 - busy / wall; *host-bound* means it is above HOST_BOUND_IDLE_SHARE: the
  GPU waits for the host to launch work, so attribute gains by wall time only where the
  device is the bottleneck, and by device time where it is not.

On a CPU (or for a function that runs nothing on the GPU) there is no device time: the
result says so (device_busy_s None) and its wall time is the CPU clock's.
"""

from __future__ import annotations

import time as _clock
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from labkit.measure import conditions, out_of_memory, timeline, timeline_stats
from labkit.measure.timing import format_seconds

HOST_BOUND_IDLE_SHARE = 0.30  # the GPU idles more than this share of the wall time: host-bound
# The border around that line: an unprofiled idle within this many points of it is where the
# host's pace that minute decides which clock judges ('at the border, either clock'). One rule
# for chapter 08's ladder and the audit (review 2026-12-04m 08-09-99 item 4: the audit had kept a
# border of its own, launches x us within 20% of device time, that chapter 08 had dropped).
BORDER_POINTS = 0.05


def at_border(idle: float | None) -> bool:
    """The unprofiled idle share sits within BORDER_POINTS of HOST_BOUND_IDLE_SHARE, on either
    side; False without an idle share."""
    return idle is not None and abs(idle - HOST_BOUND_IDLE_SHARE) <= BORDER_POINTS


@dataclass(frozen=True)
class DeviceTime:
    """Wall and device-busy time of the same calls, per call, and what they say together."""

    label: str
    device: str
    calls: int
    wall_s: float
    device_busy_s: float | None
    idle_share: float | None
    host_bound: bool | None
    threshold: float = HOST_BOUND_IDLE_SHARE
    note: str = ""

    def __str__(self) -> str:
        if self.device_busy_s is None:
            return (f"{self.label}: wall {format_seconds(self.wall_s)} per call on {self.device}; "
                    f"device time: n/a ({self.note})")
        verdict = ("host-bound" if self.host_bound else "device-bound")
        return (f"{self.label}: wall {format_seconds(self.wall_s)}, device busy "
                f"{format_seconds(self.device_busy_s)} per call ({100 * self.idle_share:.0f}% idle: "
                f"{verdict}, threshold {100 * self.threshold:.0f}%)"
                + (f"; {self.note}" if self.note else ""))

    def as_dict(self) -> dict:
        return {"label": self.label, "device": self.device, "calls": self.calls,
                "wall_s": self.wall_s, "device_busy_s": self.device_busy_s,
                "idle_share": self.idle_share, "host_bound": self.host_bound,
                "threshold": self.threshold, "note": self.note}


def busy_us(trace: timeline.Trace) -> float:
    """The union of a trace's GPU work intervals (kernels, copies, memsets; all streams), in µs."""
    gpu = np.flatnonzero(trace.kind < len(timeline.GPU_KINDS))
    starts = trace.start_us[gpu]
    return timeline_stats.union_length(starts, starts + trace.duration_us[gpu])


def from_trace(trace: timeline.Trace, wall_us: float | None = None, calls: int = 1,
               label: str = "trace", threshold: float = HOST_BOUND_IDLE_SHARE) -> DeviceTime:
    """Wall against device-busy time of a recorded trace.

    wall_us: the host's wall time of the traced calls; by default the trace's whole span
    (first event of any kind, CPU or GPU, to the end of the last), which is what the host
    waited for when the trace covers the calls and their final synchronize.
    """
    _check_share(threshold)
    if not isinstance(trace, timeline.Trace):
        raise TypeError(f"expected a timeline.Trace, got {type(trace).__name__}")
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be a whole number >= 1, got {calls!r}")
    span = float(trace.end_us - trace.start_us.min()) if len(trace) else 0.0
    wall = span if wall_us is None else float(wall_us)
    if not wall > 0:
        raise ValueError(f"the wall time must be > 0 us, got {wall!r}")
    if not trace.has_gpu:
        return DeviceTime(label, "cpu", calls, wall * 1e-6 / calls, None, None, None, threshold,
                          "no GPU events in this trace: device time is not measured, the wall "
                          "time is the CPU's")
    busy = busy_us(trace)
    idle = max(0.0, 1.0 - busy / wall)
    note = ("" if busy <= wall * 1.001 else
            f"the GPU's busy time ({busy:.0f} us) exceeds the wall time given ({wall:.0f} us): "
            "the trace covers more than the timed calls")
    return DeviceTime(label, "cuda", calls, wall * 1e-6 / calls, busy * 1e-6 / calls, idle,
                      idle > threshold, threshold, note)


def device_time(fn: Callable, *args: object, calls: int = 20, warmup: int = 3,
                label: str | None = None, device: object = None,
                threshold: float = HOST_BOUND_IDLE_SHARE) -> DeviceTime:
    """Run fn(*args) `calls` times under torch.profiler and report wall and device-busy time.

    The calls run back to back (as a loop would run them), after `warmup` untraced calls, with
    one synchronize at the end; the wall clock spans all of them. On a CPU, or for a
    function that launches nothing on the GPU, device time is None and the note says so.
    The profiler adds a little host overhead per launch, so the idle share it reports is an
    upper bound for very short kernels; it never changes the device-busy time.
    """
    _check_share(threshold)
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be a whole number >= 1, got {calls!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a whole number >= 0, got {warmup!r}")
    if not callable(fn):
        raise TypeError(f"device_time needs a function to call, got {type(fn).__name__}")
    label = label or conditions.describe(fn)
    # every call of fn below, the probe of where it runs included, may run out of GPU memory:
    # explained, the cache freed and the kernel usable, as labkit.measure.bench does
    return out_of_memory.explained(label, "device_time's calls",
                                   lambda: _measure(fn, args, calls, warmup, device, label, threshold))


def _measure(fn: Callable, args: tuple, calls: int, warmup: int, device: object, label: str,
             threshold: float) -> DeviceTime:
    """device_time's calls: warm-up, then `calls` back to back (under the profiler on a GPU)."""
    import torch

    where = conditions.resolve_device(device, fn, args)
    for _ in range(warmup):
        fn(*args)
    if where.type != "cuda":
        start = _clock.perf_counter()
        for _ in range(calls):
            fn(*args)
        wall = _clock.perf_counter() - start
        return DeviceTime(label, str(where), calls, wall / calls, None, None, None, threshold,
                          "no GPU here (or the function runs nothing on it): device time is "
                          "not measured, the wall time is the CPU clock's")
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize(where)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        start = _clock.perf_counter()
        for _ in range(calls):
            fn(*args)
        torch.cuda.synchronize(where)
        wall = _clock.perf_counter() - start
    trace = timeline.from_profiler(prof)
    return from_trace(trace, wall_us=wall * 1e6, calls=calls, label=label, threshold=threshold)


def _check_share(threshold: object) -> None:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 < threshold < 1:
        raise ValueError(f"the host-bound threshold is a share of the wall time between 0 and 1, "
                         f"got {threshold!r}")


def interleaved(variants: dict[str, Callable], rounds: int = 3, calls: int = 10,
                warmup: int = 2, device: object = None,
                threshold: float = HOST_BOUND_IDLE_SHARE) -> dict[str, list[DeviceTime]]:
    """Each variant's wall and device-busy time in `rounds` interleaved rounds (A, B, A, B...).

    Why interleaved: a GPU's clock and a host's load drift over seconds, and a comparison
    taken one variant after the other reads the drift as a difference. Each round traces
    `calls` back-to-back calls of each variant (`device_time`); the ratio of two variants is
    then taken round by round (`busy_ratios`), and its spread is the spread over rounds.
    """
    if not isinstance(variants, dict) or not variants:
        raise ValueError("interleaved needs a dict of at least one {label: function}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a whole number >= 1, got {rounds!r}")
    found: dict[str, list[DeviceTime]] = {label: [] for label in variants}
    for _ in range(rounds):
        for label, fn in variants.items():
            found[label].append(device_time(fn, calls=calls, warmup=warmup, label=label,
                                            device=device, threshold=threshold))
    return found


def busy_ratios(slow: list[DeviceTime], fast: list[DeviceTime]) -> list[float]:
    """Round by round, slow's device-busy time over fast's (a speed-up of fast over slow).

    Empty when either has no device time (a CPU, or work that ran nothing on the GPU)."""
    if len(slow) != len(fast):
        raise ValueError(f"the two variants have {len(slow)} and {len(fast)} rounds; they must match")
    if any(d.device_busy_s is None for d in (*slow, *fast)):
        return []
    return [s.device_busy_s / f.device_busy_s for s, f in zip(slow, fast, strict=True)
            if f.device_busy_s]


def summary(rounds: list[DeviceTime]) -> dict:
    """The median round of one variant, as evidence: wall, device-busy, idle share, host-bound."""
    if not rounds:
        raise ValueError("no rounds to summarise")
    walls = sorted(d.wall_s for d in rounds)
    busy = sorted(d.device_busy_s for d in rounds if d.device_busy_s is not None)
    idle = sorted(d.idle_share for d in rounds if d.idle_share is not None)
    mid = len(rounds) // 2
    return {"wall_s": walls[mid], "device_busy_s": busy[len(busy) // 2] if busy else None,
            "idle_share": idle[len(idle) // 2] if idle else None,
            "host_bound": (idle[len(idle) // 2] > rounds[0].threshold) if idle else None,
            "threshold": rounds[0].threshold, "rounds": len(rounds)}


# ---------------------------------------------------------------------------------------
# The unprofiled idle: chapter 08's rule, shared with the audit (review 2026-12-03h item 3)
#
# A profile that traces the host (ProfilerActivity.CPU, as `device_time` above) slows every
# launch, so its idle share reads the profiler's host as much as the model's: ResNet-50 at
# batch 64 on an H200 read 34-44% idle profiled against 4% unprofiled, and one profiled pass
# flipped between the two sides of the threshold from run to run. Chapter 08 decides
# host-bound from figures no host tracing touched: device time from the profiler's kernel
# records alone (CUDA activity only) and the wall time of unprofiled batches. Chapter 08's
# ladder computes the same two figures with its own copies of these functions
# (ch08 ladder.idle_share and device_seconds); the audit, which may not import a chapter,
# reads them here.


def unprofiled_idle(device_s: float | None, wall_s: float | None) -> float | None:
    """1 - device time / wall time per batch, the wall time measured unprofiled: the share of
    a batch's own time the GPU idled (None without a device clock or a timing)."""
    if device_s is None or wall_s is None or not wall_s > 0:
        return None
    return max(0.0, 1.0 - device_s / wall_s)


def batch_device_seconds(run: Callable[[], object], device: object, batches: int) -> list[float]:
    """Each of `batches` calls' device-busy seconds, from the profiler's kernel records alone.

    No host activity is traced, so the host runs as it does unprofiled; a spin kernel before
    each call marks where one call's records end (labkit.measure.kernel_records). Empty when
    the records do not split into calls (then there is no device clock).
    """
    import torch

    from labkit.measure import kernel_records

    if isinstance(batches, bool) or not isinstance(batches, int) or batches < 1:
        raise ValueError(f"batches must be a whole number >= 1, got {batches!r}")
    where = torch.device(device)

    def block() -> None:
        for _ in range(batches):
            torch.cuda._sleep(kernel_records.SPIN_MARK_CYCLES)
            run()
    run()
    torch.cuda.synchronize(where)
    try:
        return kernel_records.per_call_seconds(block, batches, where, flush_records=0)
    except kernel_records.RecordsUnavailable:
        return []


def unprofiled_wall_seconds(run: Callable[[], object], device: object, batches: int,
                            rounds: int = 3) -> list[float]:
    """Wall seconds per call, one figure per round of `batches` back-to-back calls with one
    synchronize at the end (no profiler running): what a loop of batches waits for."""
    import torch

    if isinstance(batches, bool) or not isinstance(batches, int) or batches < 1:
        raise ValueError(f"batches must be a whole number >= 1, got {batches!r}")
    where = torch.device(device)
    on_gpu = where.type == "cuda"
    run()
    if on_gpu:
        torch.cuda.synchronize(where)
    out = []
    for _ in range(max(1, rounds)):
        start = _clock.perf_counter()
        for _ in range(batches):
            run()
        if on_gpu:
            torch.cuda.synchronize(where)
        out.append((_clock.perf_counter() - start) / batches)
    return out
