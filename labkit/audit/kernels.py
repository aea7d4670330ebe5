"""What the profiler saw: layout-conversion and copy kernels, their share, host-bound or not.

One profiled forward pass (after a warm-up) goes through labkit.measure.timeline, whose
classifier (timeline_stats.kind_class) puts each kernel into GEMM/conv, elementwise,
copies/layout or other. On a GPU the audit lists the copies/layout kernels (cuDNN's
nchwToNhwcKernel, aten's direct_copy_kernel, ...) with their share of device time, and
calls the run host-bound when the GPU idles for more than HOST_BOUND_IDLE_SHARE (30%) of its own span (the course's one threshold, labkit.measure.device_time's). On a CPU
there are no kernels: the same classifier runs on the CPU ops' self time.

The classifier is the timeline's, narrowed here for an audit that tells an engineer what to
move (`is_copy`): a memset writes zeros and moves no existing value, cuBLAS's scal_kernel
scales a GEMM's output in place, and a view op (aten::transpose, permute, view, ...) moves no
data at all; none of them is copy or layout work a fix could remove.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from labkit.measure import timeline, timeline_stats
from labkit.measure.device_time import HOST_BOUND_IDLE_SHARE  # the course's one threshold


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
    gpu_idle_share: float | None
    host_bound: bool | None  # None on a CPU

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.rows)


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
    return from_trace(trace, summary)


def from_trace(trace: timeline.Trace, summary: timeline_stats.Summary) -> KernelReport:
    """The report from a trace already read (a recorded one, or one just profiled)."""
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
    idle = summary.gpu_idle_share
    return KernelReport("gpu" if gpu else "cpu", rows,
                        sum(r.share for r in rows), summary.kind_shares_of, idle,
                        None if idle is None else idle > HOST_BOUND_IDLE_SHARE)
