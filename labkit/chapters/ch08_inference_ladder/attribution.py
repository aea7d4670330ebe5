"""Where a rung's time goes: device-busy time per batch, the GPU's idle share, and the
device's time by kernel class, from a profiled timeline of a few batches.

The classes follow `labkit.measure.timeline_stats.kind_class`, with one correction made here
for the ladder's own attribution: Inductor names its generated kernels `triton_poi_*`
(pointwise: elementwise), `triton_red_*` and `triton_per_*` (reductions, persistent
reductions). The harness's classifier is being fixed to say the same; until it lands, a
compiled rung would otherwise show "elementwise 0%" with its fused tails under "other".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from labkit.measure import timeline, timeline_stats

REDUCTIONS = "reductions/norms"
ELEMENTWISE = timeline_stats.ELEMENTWISE  # the class the roof's gap split reads
INDUCTOR_POINTWISE = re.compile(r"^triton_poi_|^triton_tem_fused_.*(add|relu|mul)")
INDUCTOR_REDUCTION = re.compile(r"^triton_(red|per)_")
INDUCTOR_TEMPLATE = re.compile(r"^triton_tem_|^triton_mm|^triton_conv")  # max-autotune's GEMM/conv


def kernel_class(name: str, kind: str) -> str:
    """A GPU event's class: the harness's, with Inductor's kernel names placed."""
    lowered = name.lower()
    if INDUCTOR_TEMPLATE.search(lowered):
        return timeline_stats.GEMM_CONV
    if INDUCTOR_REDUCTION.search(lowered):
        return REDUCTIONS
    if INDUCTOR_POINTWISE.search(lowered):
        return timeline_stats.ELEMENTWISE
    cls = timeline_stats.kind_class(name, kind)
    if cls == timeline_stats.OTHER and re.search(r"norm|bn_fw|reduce|pool|softmax|mean", lowered):
        return REDUCTIONS
    return cls


@dataclass(frozen=True)
class Figures:
    """One rung's attribution: None where the trace has no device (a CPU rung)."""

    device_s: float | None      # device-busy seconds per batch
    idle_share: float | None    # share of the profiled GPU span the GPU idled
    kinds: dict[str, float]     # share of device time (GPU) or CPU op self time (CPU) per class
    kinds_of: str
    kernels_per_batch: float | None = None  # GPU kernels launched per batch (graph kernels too)
    # the host's launch calls per batch, counted from the runtime events of the trace:
    # {"kernel launches": cudaLaunchKernel-like calls, "graph launches": cudaGraphLaunch calls}
    host_launches: dict[str, float] | None = None
    # kernels launched per batch by class, and by name (the NAMES_KEPT most launched, names cut
    # to NAME_CHARS): what a rise in the kernel count is made of (fp16 weights on the H200:
    # 182 -> 282 per batch, unidentified in the records before these were kept)
    kernel_counts: dict[str, float] | None = None
    kernel_names: dict[str, float] | None = None
    # device ms per batch by kernel name (the KERNEL_MS_KEPT longest, the rest summed under
    # OTHER_KERNELS): where a rung's device time varies between processes (the H200's batch-256
    # rung: 7.97-8.39 ms a batch over six processes, GEMM/conv flat, elementwise 3.15-3.51 ms;
    # counts alone could not say which kernels; review 2026-12-05p 08 item 2)
    kernel_ms: dict[str, float] | None = None


NAMES_KEPT = 12
KERNEL_MS_KEPT = 24
OTHER_KERNELS = "(other kernels)"
NAME_CHARS = 90
# name prefixes (the runtime may append a suffix: cudaLaunchKernelExC_v11060, cuLaunchKernelEx)
KERNEL_LAUNCH_CALLS = ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchCooperativeKernel")
GRAPH_LAUNCH_CALLS = ("cudaGraphLaunch", "cuGraphLaunch")


def host_launches(trace: timeline.Trace, batches: int) -> dict[str, float]:
    """The host's launch calls per batch, counted by name in the trace's CPU-side runtime events:
    one kernel launch call per kernel in eager, one graph launch per replayed CUDA graph."""
    counts = {"kernel launches": 0, "graph launches": 0}
    for i in range(len(trace)):
        if timeline.KINDS[trace.kind[i]] in timeline.GPU_KINDS:
            continue  # the GPU's own events
        name = trace.names[trace.name_id[i]]
        if name.startswith(GRAPH_LAUNCH_CALLS):
            counts["graph launches"] += 1
        elif name.startswith(KERNEL_LAUNCH_CALLS):
            counts["kernel launches"] += 1
    return {k: v / batches for k, v in counts.items()}


def of_trace(trace: timeline.Trace, batches: int) -> Figures:
    """Figures of a profiled trace of `batches` batches."""
    if batches < 1:
        raise ValueError(f"batches must be at least 1, got {batches}")
    summary = timeline.summary(trace)
    if not trace.has_gpu or summary.gpu_busy_share is None or summary.kernels == 0:
        return Figures(None, None, dict(summary.kind_shares), summary.kind_shares_of)
    gpu = np.isin(trace.kind, [timeline.KINDS.index(k) for k in timeline.GPU_KINDS])
    totals: dict[str, float] = {}
    for i in np.flatnonzero(gpu).tolist():
        cls = kernel_class(trace.names[trace.name_id[i]], timeline.KINDS[trace.kind[i]])
        totals[cls] = totals.get(cls, 0.0) + float(trace.duration_us[i])
    whole = sum(totals.values()) or 1.0
    kinds = {k: v / whole for k, v in sorted(totals.items(), key=lambda kv: -kv[1])}
    busy_s = summary.gpu_busy_share * summary.window_us * 1e-6 / batches
    is_kernel = trace.kind == timeline.KINDS.index("kernel")
    launched = int(np.count_nonzero(is_kernel)) / batches
    by_class: dict[str, float] = {}
    by_name: dict[str, float] = {}
    ms: dict[str, float] = {}
    for i in np.flatnonzero(is_kernel).tolist():
        name = trace.names[trace.name_id[i]]
        cls = kernel_class(name, "kernel")
        by_class[cls] = by_class.get(cls, 0.0) + 1.0 / batches
        by_name[name[:NAME_CHARS]] = by_name.get(name[:NAME_CHARS], 0.0) + 1.0 / batches
        ms[name[:NAME_CHARS]] = ms.get(name[:NAME_CHARS], 0.0) + float(trace.duration_us[i]) * 1e-3 / batches
    names = dict(sorted(by_name.items(), key=lambda kv: -kv[1])[:NAMES_KEPT])
    return Figures(busy_s, summary.gpu_idle_share, kinds, "GPU time", launched,
                   host_launches(trace, batches), by_class, names, kernel_ms_kept(ms))


def kernel_ms_kept(ms: dict[str, float]) -> dict[str, float]:
    """The KERNEL_MS_KEPT longest kernels' device ms per batch, the rest summed under
    OTHER_KERNELS, longest first."""
    ranked = sorted(ms.items(), key=lambda kv: -kv[1])
    kept = {k: round(v, 5) for k, v in ranked[:KERNEL_MS_KEPT]}
    rest = sum(v for _, v in ranked[KERNEL_MS_KEPT:])
    if rest > 0:
        kept[OTHER_KERNELS] = round(rest, 5)
    return kept


def line(figures: Figures, say_of: bool = True) -> str:
    """One line of text: the classes' shares, then device-busy time, kernels and idle share
    as the profile saw them (its idle share is the profiled run's, host tracing included).
    say_of=False leaves out what the shares are of, for a table whose title says it once."""
    shares = " | ".join(f"{k} {100 * v:.0f}%" for k, v in figures.kinds.items())
    of = f"  (of {figures.kinds_of})" if say_of else ""
    if figures.device_s is None:
        return shares + of
    kernels = ("" if figures.kernels_per_batch is None
               else f", {figures.kernels_per_batch:.0f} kernels per batch")
    return (f"{shares}{of}; device busy {1e3 * figures.device_s:.2f} ms per batch{kernels} "
            f"(profiled, host traced: idle {100 * figures.idle_share:.0f}%, secondary to the "
            "ladder's unprofiled idle)")
