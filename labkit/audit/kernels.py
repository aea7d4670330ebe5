"""What the profiler saw: layout-conversion and copy kernels, their share, host-bound or not.

One profiled forward pass (after a warm-up) goes through labkit.measure.timeline, whose
classifier (timeline_stats.kind_class) puts each kernel into GEMM/conv, elementwise,
copies/layout or other. On a GPU the audit lists the copies/layout kernels (cuDNN's
nchwToNhwcKernel, aten's direct_copy_kernel, ...) with their share of device time. On a CPU
there are no kernels: the same classifier runs on the CPU ops' self time.

Host-bound or not is not read from that pass. A profile that traces the host slows every
launch, so its idle share reads the profiler as much as the model: the H200's ResNet-50 at
batch 64 read 4.5% idle at one run and 44% at the next, while chapter 08 times the same
network, math and batch at 4% idle unprofiled (review 2026-12-03h item 3). So the audit uses
chapter 08's rule: idle = 1 - device time per batch (the profiler's kernel records alone, no
host tracing) / the wall time of unprofiled batches, host-bound above HOST_BOUND_IDLE_SHARE
(30%, the course's one threshold). The two figures come from labkit.measure.device_time
(`batch_device_seconds`, `unprofiled_wall_seconds`, `unprofiled_idle`); the profiled pass's
own idle is kept beside them (`profiled_idle_share`), shown, never deciding.

The classifier is the timeline's, narrowed here for an audit that tells an engineer what to
move (`is_copy`): a memset writes zeros and moves no existing value, cuBLAS's scal_kernel
scales a GEMM's output in place, and a view op (aten::transpose, permute, view, ...) moves no
data at all; none of them is copy or layout work a fix could remove.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from labkit.measure import device_time, timeline, timeline_stats
from labkit.measure.device_time import HOST_BOUND_IDLE_SHARE, at_border  # ch 08's line and border

# Batches per unprofiled figure: ResNet-50 at batch 64 takes ~8 ms a batch on an H200, so the
# wall rounds and the kernel-record pass cost well under a second.
IDLE_BATCHES = 10
# Review 2026-12-04m 08-09-99 item 10: the H200's first audit (ResNet-50, float32, channels_last,
# batch 64) read its wall at 9.86 ms per batch from 3 rounds of 10 batches after one warm-up
# call, where the same run's fix timing read 7.77 ms and chapter 08's channels_last rung 7.90 ms
# wall (8 rounds of 400 ms after 50 ms of warm-up), with the device's time equal (7.51 and 7.49
# ms). So the wall rounds now follow chapter 08's warm-up, and their median is of 5 rounds.
IDLE_ROUNDS = 5
WARMUP_S = 0.05   # chapter 08's ladder warms each rung for 50 ms (bench.compare's warmup_ms=50)
WALL_TIMING = f"{IDLE_ROUNDS} rounds of {IDLE_BATCHES} batches after {1e3 * WARMUP_S:.0f} ms of warm-up"
EARLIER_WALL_TIMING = "3 rounds of 10 batches after one warm-up call"  # a record without wall_timing
IDLE_RULE = "unprofiled: 1 - device time (kernel records) / unprofiled wall time per batch"


@dataclass(frozen=True)
class KernelRow:
    """One copy or layout-conversion kernel (or CPU op) name, totalled over the pass."""

    name: str
    calls: int
    total_us: float
    share: float  # of device time (GPU) or of CPU op self time (CPU)


@dataclass(frozen=True)
class KernelReport:
    """The copies/layout work one pass did, and whether the device or the host set the pace."""

    device: str  # "gpu" or "cpu"
    rows: tuple[KernelRow, ...]
    copy_share: float  # all copies/layout work, as a share of the same total
    share_of: str
    gpu_idle_share: float | None  # IDLE_RULE's: unprofiled (None on a CPU or without records)
    host_bound: bool | None  # from gpu_idle_share; None on a CPU or when it was not measured
    profiled_idle_share: float | None = None  # the profiled pass's (host traced): shown, never decides
    wall_s: float | None = None  # unprofiled wall seconds per batch
    device_s: float | None = None  # device-busy seconds per batch, from kernel records
    launches: int | None = None  # kernels the profiled pass launched (eager: one host launch each)
    pace_us: tuple[float, float] | None = None  # the host's us per eager launch, lowest and highest probe
    wall_rounds_s: tuple[float, ...] | None = None  # each unprofiled wall round, per batch, in order

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.rows)

    def bound_text(self) -> str:
        """'GPU idle 4% (unprofiled: ...): device-bound; ...' ('' on a CPU)."""
        return bound_text({"device": self.device, "gpu_idle_share": self.gpu_idle_share,
                           "host_bound": self.host_bound, "idle_rule": IDLE_RULE,
                           "profiled_idle_share": self.profiled_idle_share,
                           "wall_ms": None if self.wall_s is None else 1e3 * self.wall_s,
                           "device_ms": None if self.device_s is None else 1e3 * self.device_s,
                           "launches": self.launches, "pace_us": self.pace_us})


def bound_text(k: dict) -> str:
    """The idle reading of a report's kernels (a KernelReport's, or a recorded summary's dict).

    A record without 'idle_rule' was made before the audit took chapter 08's rule: its idle
    is one profiled pass's, with the host traced, and says so ('profiled pass, host traced')."""
    if k.get("device") != "gpu":
        return ""
    if k.get("idle_rule") is None:
        if k.get("host_bound") is None:
            return ""
        return (f"GPU idle {100 * (k.get('gpu_idle_share') or 0):.0f}% (profiled pass, host traced): "
                + ("host-bound" if k["host_bound"] else "device-bound"))
    profiled = k.get("profiled_idle_share")
    aside = "" if profiled is None else f"; the profiled pass read {100 * profiled:.0f}%"
    if k.get("host_bound") is None:
        return f"GPU idle not measured (kernel records unavailable){aside}"
    # the device time (kernel records) and the wall (unprofiled rounds) come from separate runs,
    # so the device's can exceed the wall's where the GPU is busy throughout; the idle is then
    # clamped at 0 (device_time.unprofiled_idle), which the text says (review 2026-12-04i item 11)
    over = k["device_ms"] > k["wall_ms"]
    figures = (f"device {k['device_ms']:.2f} ms, wall {k['wall_ms']:.2f} ms per batch, from separate runs: "
               "clamped at 0%" if over else
               f"device {k['device_ms']:.2f} ms of {k['wall_ms']:.2f} ms per batch")
    return (f"GPU idle {100 * k['gpu_idle_share']:.0f}% (unprofiled: {figures}): "
            + ("host-bound" if k["host_bound"] else "device-bound") + aside + border_text(k))


def border_text(k: dict) -> str:
    """The host's side beside the device's, by chapter 08's rule ('' without launches, a pace
    probe or a device time). Launches x us per launch is a floor on the host's time per batch
    (Python between launches adds to it):

    - host-bound (unprofiled idle over HOST_BOUND_IDLE_SHARE): the host's time per batch is about
      the wall's, the launches one part of it: '; host ~ the wall: 282 launches x 13.1-16.3 us =
      3.7-4.6 ms of it';
    - otherwise: '; host 184 launches x 13.8-19.2 us = 2.5-3.5 ms beside device 7.51 ms';

    and ': at the border, either clock' only where the idle sits within BORDER_POINTS of the line
    (`at_border`), whichever side it is on."""
    launches, pace, device = k.get("launches"), k.get("pace_us"), k.get("device_ms")
    if not launches or not pace or not device:
        return ""
    low, high = launches * pace[0] / 1e3, launches * pace[1] / 1e3
    idle = k.get("gpu_idle_share")
    cost = f"{launches} launches x {pace[0]:.1f}-{pace[1]:.1f} us = {_span(low, high)}"
    if k.get("host_bound") and idle is not None and idle > HOST_BOUND_IDLE_SHARE:
        text = f"; host ~ the wall: {cost} of it"
    else:
        text = f"; host {cost} beside device {_span(device)}"
    return text + (": at the border, either clock" if at_border(idle) else "")


def _span(low_ms: float, high_ms: float | None = None) -> str:
    """A time or a range in ms ('2.5-4.9 ms', device '4.07 ms'), or under 1 ms in us to two
    significant figures ('88-112 us', '40 us'): the H200's small model read '8 launches x
    11.0-14.0 us = 0.1-0.1 ms beside device 0.04 ms', a range rounded to one number (review
    2026-12-04k item 10d)."""
    top = low_ms if high_ms is None else high_ms
    if top >= 1:
        return f"{low_ms:.2f} ms" if high_ms is None else f"{low_ms:.1f}-{high_ms:.1f} ms"

    def us(ms: float) -> str:
        return f"{float(f'{ms * 1e3:.2g}'):g}"
    return f"{us(low_ms)} us" if high_ms is None else f"{us(low_ms)}-{us(high_ms)} us"


PACE_LAUNCHES = 32   # launches per host-pace probe (chapter 08's probe, ladder.host_pace_us)
PACE_PROBES = 8


def host_pace_us(device: torch.device, probes: int = PACE_PROBES) -> tuple[float, float]:
    """(lowest, highest) microseconds per eager launch of a one-element add over a few probes,
    the device idle (synchronised before and after each): the host's pace now."""
    x = torch.zeros(1, device=device)
    paces = []
    for _ in range(probes):
        torch.cuda.synchronize(device)
        started = time.perf_counter()
        for _ in range(PACE_LAUNCHES):
            x.add_(1.0)
        paces.append(1e6 * (time.perf_counter() - started) / PACE_LAUNCHES)
        torch.cuda.synchronize(device)
    return min(paces), max(paces)


def bound(device_s: float | None, wall_s: float | None) -> tuple[float | None, bool | None]:
    """(idle share, host-bound) by chapter 08's rule from per-batch device and unprofiled wall
    seconds; (None, None) when either is missing."""
    idle = device_time.unprofiled_idle(device_s, wall_s)
    return idle, None if idle is None else idle > HOST_BOUND_IDLE_SHARE


def unprofiled(model: nn.Module, x: torch.Tensor, batches: int = IDLE_BATCHES,
               rounds: int = IDLE_ROUNDS) -> tuple[float | None, float]:
    """(device-busy seconds per batch from kernel records or None, unprofiled wall seconds per
    batch): the medians, on a GPU (no_grad, as the profiled pass)."""
    busy, walls = unprofiled_rounds(model, x, batches, rounds)
    return (float(np.median(busy)) if busy else None), float(np.median(walls))


def unprofiled_rounds(model: nn.Module, x: torch.Tensor, batches: int = IDLE_BATCHES,
                      rounds: int = IDLE_ROUNDS) -> tuple[list[float], list[float]]:
    """(each batch's device-busy seconds from kernel records, [] without them; each wall round's
    seconds per batch, in the order timed), after `warm`. The model is the one the profiled pass
    ran: module_layouts.trace removed its hooks and left the copy detector before this (a test
    holds it), so the rounds time the network alone. Each round is kept (review 2026-12-04m
    08-09-99 item 10): the H200's 9.86 ms was a median of 3 rounds, and whether the first rounds
    ran slower than the later ones (a GPU still coming up to speed) is read from them."""
    def call() -> object:
        return model(x)

    with torch.no_grad():
        warm(call, x.device)
        walls = device_time.unprofiled_wall_seconds(call, x.device, batches, rounds)
        busy = device_time.batch_device_seconds(call, x.device, batches)
    return list(busy), list(walls)


def warm(call: Callable[[], object], device: torch.device, seconds: float = WARMUP_S) -> int:
    """Call `call` for about `seconds` (at least once, each call synchronised on a GPU, so the
    seconds are the work's): the wall rounds then start on a GPU already at work, as chapter
    08's rungs do. Returns the number of calls."""
    started, calls = time.perf_counter(), 0
    while calls == 0 or time.perf_counter() - started < seconds:
        call()
        calls += 1
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    return calls


VIEW_OPS = frozenset({"aten::transpose", "aten::permute", "aten::view", "aten::as_strided",
                      "aten::t", "aten::expand", "aten::unsqueeze", "aten::squeeze",
                      "aten::reshape", "aten::flatten", "aten::slice", "aten::select",
                      "aten::alias", "aten::_reshape_alias", "aten::unflatten"})


def is_copy(name: str, kind: str) -> bool:
    """Copy or layout-conversion work that moves existing values (see the module's note)."""
    if kind == "memset" or name.startswith("Memset") or "scal_kernel" in name:
        return False
    if name in VIEW_OPS:
        return False
    return timeline_stats.kind_class(name, kind) == timeline_stats.COPIES


def _short(name: str, limit: int = 90) -> str:
    return name if len(name) <= limit else name[: limit - 3] + "..."


def profile(model: nn.Module, x: torch.Tensor, warmup: int = 1) -> KernelReport:
    """Profile one forward pass of model(x) (no_grad) and sum its copies/layout work by name."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    on_gpu = x.device.type == "cuda"
    if on_gpu:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.no_grad():
        for _ in range(warmup):
            model(x)
        if on_gpu:
            torch.cuda.synchronize()
        with torch.profiler.profile(activities=activities) as prof:
            model(x)
            if on_gpu:
                torch.cuda.synchronize()
    trace = timeline.from_profiler(prof)
    summary = timeline.summary(trace)
    if not on_gpu:
        return from_trace(trace, summary)
    busy, walls = unprofiled_rounds(model, x)
    report = from_trace(trace, summary, wall_s=float(np.median(walls)),
                        device_s=float(np.median(busy)) if busy else None)
    return dataclasses.replace(report, launches=kernel_count(trace), pace_us=host_pace_us(x.device),
                               wall_rounds_s=tuple(walls))


def kernel_count(trace: timeline.Trace) -> int:
    """The kernels a profiled pass launched (eager: one host launch each)."""
    return int(np.sum(trace.kind == timeline.KINDS.index("kernel")))


def launches(model: nn.Module, x: torch.Tensor, warmup: int = 1) -> int | None:
    """The kernels one profiled forward pass of model(x) launches (no_grad, after `warmup`
    passes), as `profile` counts them, without its unprofiled rounds: what a fix's variant is
    read by beside the audited model's `KernelReport.launches` (review 2026-12-05o 08-09-99
    items 1 and 5). None on a CPU (no kernels)."""
    if x.device.type != "cuda":
        return None
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.no_grad():
        for _ in range(warmup):
            model(x)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=activities) as prof:
            model(x)
            torch.cuda.synchronize()
    return kernel_count(timeline.from_profiler(prof))


def from_trace(trace: timeline.Trace, summary: timeline_stats.Summary,
               wall_s: float | None = None, device_s: float | None = None) -> KernelReport:
    """The report from a trace already read (a recorded one, or one just profiled).

    wall_s, device_s: the unprofiled wall and the kernel-record device seconds per batch
    (`unprofiled`); host-bound is decided from them alone, and is None without them: the
    trace's own idle (host traced) is kept as profiled_idle_share."""
    gpu = summary.device == "gpu"
    kinds = timeline_stats.GPU_WORK_KINDS if gpu else {"cpu_op"}
    durations = (trace.duration_us if gpu
                 else timeline_stats.self_times(trace.duration_us, trace.parent))
    totals: dict[str, list[float]] = {}
    whole = 0.0
    for i in range(len(trace)):
        kind = timeline.KINDS[trace.kind[i]]
        if kind not in kinds:
            continue
        whole += float(durations[i])
        name = trace.names[trace.name_id[i]]
        if is_copy(name, kind):
            entry = totals.setdefault(name, [0, 0.0])
            entry[0] += 1
            entry[1] += float(durations[i])
    rows = tuple(sorted((KernelRow(_short(n), int(c), t, t / whole if whole else 0.0)
                         for n, (c, t) in totals.items()), key=lambda r: -r.total_us))
    idle, host_bound = bound(device_s, wall_s) if gpu else (None, None)
    return KernelReport("gpu" if gpu else "cpu", rows,
                        sum(r.share for r in rows), summary.kind_shares_of, idle, host_bound,
                        summary.gpu_idle_share if gpu else None,
                        wall_s if gpu else None, device_s if gpu else None)
