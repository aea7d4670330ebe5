"""The arithmetic of a timeline: busy and idle time, shares by kind, copy/compute overlap, gaps.

Every function here takes plain arrays (start and end in microseconds, one entry per event)
and returns numbers, so each figure is tested on small hand-built cases and checked against
an independent computation on real traces. ``labkit.measure.timeline`` builds the arrays from a
profile and ``labkit.measure.timeline.summary`` calls ``summarize``; nothing here reads files or draws.

Definitions (the same as Holistic Trace Analysis's temporal breakdown where it has one):

- *busy* time of a set of events is the length of the union of their intervals, so two
  overlapping kernels on two streams count once; *idle* is the rest of a window.
- the GPU's window is its own span, from the start of its first event (kernel, copy or
  memset, any stream) to the end of its last: time before the first kernel is not idle GPU
  time but time the profile started early.
- the *H2D overlap share* is the share of host-to-device copy time during which at least one
  kernel runs (on any stream): 1.0 means every copied microsecond was hidden behind compute.
- a *launch gap* is the idle time between one kernel and the next, on all streams together
  (0 when the next kernel starts before the GPU fell idle): the time CUDA Graphs remove.
- *kind shares* split GPU time (the sum of kernel, copy and memset durations) into GEMM/conv,
  elementwise, copies and layout conversions, and other; on a CPU-only trace they split the
  CPU ops' *self* time (an op's duration less its children's) the same way.

Idle time here and in Holistic Trace Analysis (HTA). Both take the union of GPU intervals and
call the rest of a span idle; they differ in the span and in which events count:

- labkit: the span is the GPU's own, from the first kernel, copy or memset (any stream of
  any GPU in the trace) to the end of the last; only kernels, memcpys and memsets count
  (``GPU_WORK_KINDS``); GPU-side annotation spans (``gpu_user_annotation``, the profiler's
  step markers drawn on the GPU rows) are skipped, since no work runs in them.
- HTA's temporal breakdown (``get_temporal_breakdown``): per rank, every event that has a
  stream id (kernels, memcpys, memsets), merged across streams; the span is from the first
  merged interval's start to the last one's end, and HTA drops the trace's last profiler
  iteration when it reads the trace. Its idle time breakdown then splits idle time per
  stream (host wait, kernel wait, other), so a stream that waits on another counts idle even
  while the GPU is busy.
- So the two agree on a one-stream trace cut to whole steps, and differ when a trace has
  several streams (HTA's per-stream idle counts a side stream's waits), host-side gaps
  between profiler steps, or a last step HTA leaves out. The 32.6% (HTA) against 1% (labkit)
  reported for one compiled-rung H200 trace was not re-derived here (HTA is not installed on
  these machines); those three differences are the candidates to check first. Read labkit's
  figure as "the share of its span in which the GPU did nothing at all".
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

# The four classes of work a learner tells apart, in the order they are shown.
GEMM_CONV = "GEMM/conv"
ELEMENTWISE = "elementwise"
COPIES = "copies/layout"
OTHER = "other"
CLASSES = (GEMM_CONV, ELEMENTWISE, COPIES, OTHER)

# Kernel and op names, lower-cased, tested family by family: the library a kernel comes from
# is read first (its prefix), the op name only after, because names carry the names of other
# ops: Inductor names a fused pointwise kernel after its origin ops
# ("triton_poi_fused_add_convolution_relu_11" is an add and a relu on a convolution's output,
# not a convolution), ATen's copy runs inside "elementwise_kernel<..direct_copy_kernel..>",
# cuBLAS's scaling kernel takes "cublasTransposeParams", cuDNN's batch norm says "cudnn".
_INDUCTOR = re.compile(r"(?:^|[^a-z0-9])triton_(poi|red|per|tem)_")
_INDUCTOR_CLASS = {"poi": ELEMENTWISE, "red": OTHER, "per": OTHER, "tem": GEMM_CONV}
# Layout conversions (cuDNN converts NCHW input to NHWC internally) and ATen's copies.
_COPY_PATTERN = re.compile(
    r"nchwtonhwc|nhwctonchw|nchw2nhwc|nhwc2nchw|reformat|direct_copy_kernel|copy_kernel|"
    r"memcpy|memset|catarraybatchedcopy|aten::(copy_|_to_copy|to|contiguous|clone|cat|"
    r"_copy_from|_copy_from_and_resize)$")
# cuBLAS/cuBLASLt split-K reductions and epilogues belong to their GEMM.
_GEMM_LIBRARY = re.compile(
    r"^(void )?(cublas|cublaslt|cutlass|nvjet_|sm\d+_xmma|ampere_|volta_|turing_|hopper_|"
    r"sgemm|hgemm|dgemm|gemv|gemmk|gemm_|scal_kernel|splitkreduce|wgrad_alg|dgrad_alg|"
    r"implicit_convolve|cask_|xmma_)|cutlass::|cutlass_\d|cublaslt::|splitkreduce|reducesplitk")
_OTHER_FIRST_PATTERN = re.compile(r"norm|bn_fw|bn_bw|softmax|reduce|pool|\bsum\b|aten::sum|mean|"
                                  r"argmax|topk|sort|nll_loss|cross_entropy")
_GEMM_PATTERN = re.compile(
    r"gemm|gemv|xmma|cutlass|nvjet|cublas|conv|wgrad|dgrad|fprop|implicit|winograd|"
    r"aten::(mm|addmm|bmm|baddbmm|matmul|linear|dot|mv|addmv|einsum)$|mkldnn|onednn|dnnl|"
    r"\bmm\b|_mm_|sgemm|hgemm")
_ELEMENTWISE_PATTERN = re.compile(
    r"elementwise|vectorized|unrolled|pointwise|multi_tensor_apply|foreach|"
    r"aten::(add|add_|sub|sub_|mul|mul_|div|div_|relu|relu_|threshold|threshold_backward|"
    r"sigmoid|tanh|gelu|silu|exp|log|sqrt|rsqrt|pow|neg|abs|clamp|clamp_|fill_|zero_|zeros|"
    r"ones|where|masked_fill|addcmul_|addcdiv_|lerp_|maximum|minimum|hardtanh|leaky_relu|"
    r"sigmoid_backward|tanh_backward|gelu_backward|silu_backward|ne|eq|lt|gt|le|ge)$|"
    r"fill_kernel|relu|sigmoid|tanh|gelu|silu|add_kernel|mul_kernel")
# What is left that moves memory by name (CPU ops: transpose and permute are views, but a
# kernel named for them copies).
_COPY_FALLBACK = re.compile(r"copy|contiguous|clone|transpose|permute|convert_|layout|\bcat\b")


def kind_class(name: str, kind: str) -> str:
    """Which of CLASSES an event's time counts as, from its kind and (lower-cased) name.

    Copies and memsets are copies by kind; kernels and CPU ops by name, family first:
    Inductor's triton_poi_ (pointwise: elementwise), triton_red_ / triton_per_ (reductions:
    other) and triton_tem_ (templated GEMM/conv); layout conversions and ATen's copy kernels;
    then cuBLAS/cuBLASLt/nvjet, CUTLASS and cuDNN's convolutions (GEMM/conv) before norms and
    reductions (other), then GEMM/conv and elementwise by op name (oneDNN's CPU ops are
    mkldnn_*). The rules are a heuristic (kernel names are not an API), tested on names from
    real H200 traces: what they cannot place counts as "other".
    """
    if kind.startswith("memcpy") or kind == "memset":
        return COPIES
    lowered = name.lower()
    inductor = _INDUCTOR.search(lowered)
    if inductor:
        return _INDUCTOR_CLASS[inductor.group(1)]
    if _COPY_PATTERN.search(lowered):
        return COPIES
    if _GEMM_LIBRARY.search(lowered):
        return GEMM_CONV
    if _OTHER_FIRST_PATTERN.search(lowered):
        return OTHER
    if _GEMM_PATTERN.search(lowered):
        return GEMM_CONV
    if _ELEMENTWISE_PATTERN.search(lowered):
        return ELEMENTWISE
    if _COPY_FALLBACK.search(lowered):
        return COPIES
    return OTHER


# --------------------------------------------------------------------------- intervals
# Traces record times in whole nanoseconds; two intervals closer than half of one touch
# (float rounding of microsecond timestamps must not invent a gap of 1e-13 µs).
TOUCH_US = 0.0005


def _arrays(starts: Sequence[float] | np.ndarray,
            ends: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    start = np.asarray(starts, dtype=np.float64).ravel()
    end = np.asarray(ends, dtype=np.float64).ravel()
    if start.shape != end.shape:
        raise ValueError(f"starts has {start.size} entries but ends has {end.size}; "
                         "give one start and one end per event.")
    if np.any(end < start):
        bad = int(np.argmax(end < start))
        raise ValueError(f"event {bad} ends ({end[bad]}) before it starts ({start[bad]}); "
                         "durations must be >= 0.")
    return start, end


def _is_sorted(values: np.ndarray) -> bool:
    return bool(np.all(values[1:] >= values[:-1]))


def merge_intervals(starts: Sequence[float] | np.ndarray,
                    ends: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of [start, end) intervals as disjoint, sorted intervals (touching ones join)."""
    start, end = _arrays(starts, ends)
    if start.size == 0:
        return start, end
    if not _is_sorted(start):  # a track's events come sorted; only mixed tracks need this
        order = np.argsort(start, kind="stable")
        start, end = start[order], end[order]
    reach = np.maximum.accumulate(end)
    # A new merged interval begins where an event starts after everything before it ended.
    new = np.empty(start.size, dtype=bool)
    new[0] = True
    new[1:] = start[1:] > reach[:-1] + TOUCH_US
    first = np.flatnonzero(new)
    last = np.append(first[1:], start.size) - 1
    return start[first], reach[last]


def union_length(starts: Sequence[float] | np.ndarray, ends: Sequence[float] | np.ndarray) -> float:
    """Total time covered by at least one interval (overlaps counted once)."""
    merged_start, merged_end = merge_intervals(starts, ends)
    return float(np.sum(merged_end - merged_start))


def idle_gaps(starts: Sequence[float] | np.ndarray,
              ends: Sequence[float] | np.ndarray) -> np.ndarray:
    """Lengths of the stretches inside the intervals' span that no interval covers."""
    merged_start, merged_end = merge_intervals(starts, ends)
    return merged_start[1:] - merged_end[:-1]


def overlap_each(starts: Sequence[float] | np.ndarray, ends: Sequence[float] | np.ndarray,
                 cover_starts: Sequence[float] | np.ndarray,
                 cover_ends: Sequence[float] | np.ndarray) -> np.ndarray:
    """For each interval, how much of it lies inside the union of the cover intervals."""
    start, end = _arrays(starts, ends)
    cover_start, cover_end = merge_intervals(cover_starts, cover_ends)
    if start.size == 0 or cover_start.size == 0:
        return np.zeros(start.size)
    # Covered length up to time t is a piecewise-linear, non-decreasing function: evaluate it
    # at both ends of each interval and subtract.
    covered_before = np.concatenate(([0.0], np.cumsum(cover_end - cover_start)))

    def covered_until(t: np.ndarray) -> np.ndarray:
        k = np.searchsorted(cover_start, t, side="right")  # merged intervals starting <= t
        inside = np.clip(t - cover_start[np.maximum(k - 1, 0)], 0.0,
                         (cover_end - cover_start)[np.maximum(k - 1, 0)])
        return covered_before[np.maximum(k - 1, 0)] + np.where(k > 0, inside, 0.0)

    return covered_until(end) - covered_until(start)


def overlap_share(starts: Sequence[float] | np.ndarray, ends: Sequence[float] | np.ndarray,
                  cover_starts: Sequence[float] | np.ndarray,
                  cover_ends: Sequence[float] | np.ndarray) -> float | None:
    """Share of the intervals' total time that runs while a cover interval runs (None if none)."""
    start, end = _arrays(starts, ends)
    total = float(np.sum(end - start))
    if start.size == 0 or total <= 0:
        return None
    return float(np.sum(overlap_each(start, end, cover_starts, cover_ends))) / total


def launch_gaps(starts: Sequence[float] | np.ndarray,
                ends: Sequence[float] | np.ndarray) -> np.ndarray:
    """Idle time before each kernel after the first: its start less the latest end before it.

    Kernels are taken in start order on all streams together; a kernel that starts while an
    earlier one still runs has gap 0.
    """
    start, end = _arrays(starts, ends)
    if start.size < 2:
        return np.zeros(0)
    if not _is_sorted(start):
        order = np.argsort(start, kind="stable")
        start, end = start[order], end[order]
    reach = np.maximum.accumulate(end)
    gaps = start[1:] - reach[:-1]
    return np.where(gaps > TOUCH_US, gaps, 0.0)


def self_times(durations: Sequence[float] | np.ndarray,
               parents: Sequence[int] | np.ndarray) -> np.ndarray:
    """Each event's duration less the durations of its direct children (never below 0).

    ``parents[i]`` is the index of the event that encloses event i on its thread, or -1.
    """
    duration = np.asarray(durations, dtype=np.float64)
    parent = np.asarray(parents, dtype=np.int64)
    has_parent = parent >= 0
    children = np.bincount(parent[has_parent], weights=duration[has_parent],
                           minlength=duration.size)[:duration.size]
    return np.maximum(duration - children, 0.0)


def class_shares(weights: Sequence[float] | np.ndarray,
                 classes: Sequence[str] | np.ndarray) -> dict[str, float]:
    """Share of the total weight in each of CLASSES (all four keys, summing to 1; {} if empty).

    ``classes`` holds one class per weight: its name, or its position in CLASSES.
    """
    weight = np.asarray(weights, dtype=np.float64)
    total = float(weight.sum())
    if weight.size == 0 or total <= 0:
        return {}
    if isinstance(classes, np.ndarray) and classes.dtype.kind in "iu":
        index = classes.astype(np.int64)
    else:
        index = np.array([CLASSES.index(c) for c in classes], dtype=np.int64)
    sums = np.bincount(index, weights=weight, minlength=len(CLASSES))
    return {name: float(sums[k]) / total for k, name in enumerate(CLASSES)}


def classify_events(names: Sequence[str], kinds: Sequence[str], name_id: np.ndarray,
                    kind_code: np.ndarray) -> np.ndarray:
    """Position in CLASSES of each event's kind_class, worked out once per (name, kind) pair."""
    name_id = np.asarray(name_id, dtype=np.int64)
    kind_code = np.asarray(kind_code, dtype=np.int64)
    if name_id.size == 0:
        return np.zeros(0, dtype=np.int64)
    pair = name_id * len(kinds) + kind_code
    present = np.flatnonzero(np.bincount(pair))
    table = np.zeros(int(pair.max()) + 1, dtype=np.int64)
    for p in present.tolist():
        table[p] = CLASSES.index(kind_class(names[p // len(kinds)], kinds[p % len(kinds)]))
    return table[pair]


# --------------------------------------------------------------------------- the summary
@dataclass(frozen=True)
class TrackUsage:
    """Busy and idle time of one track, over the track's own span (first start to last end)."""

    name: str
    device: str
    events: int
    span_us: float
    busy_us: float
    idle_us: float
    busy_share: float | None
    longest_idle_us: float


@dataclass(frozen=True)
class Summary:
    """The figures of one timeline; ``None`` where a figure does not exist in this trace."""

    device: str  # "gpu" when the trace has GPU events, else "cpu"
    events: int
    kernels: int
    window_us: float  # the GPU's span on a GPU trace, the whole trace's span on a CPU trace
    gpu_busy_share: float | None
    gpu_idle_share: float | None
    kind_shares: dict[str, float]
    kind_shares_of: str  # "GPU time" or "CPU op self time"
    h2d_copy_us: float
    h2d_overlap_share: float | None
    launch_gap_mean_us: float | None
    launch_gap_median_us: float | None
    longest_idle_us: float | None
    tracks: tuple[TrackUsage, ...]
    notes: tuple[str, ...] = field(default=())

    def figures(self) -> dict[str, object]:
        """The headline figures as a plain dict (JSON-ready), for results and tests."""
        return {
            "device": self.device, "events": self.events, "kernels": self.kernels,
            "window_us": self.window_us, "gpu_busy_share": self.gpu_busy_share,
            "gpu_idle_share": self.gpu_idle_share, "kind_shares": dict(self.kind_shares),
            "kind_shares_of": self.kind_shares_of, "h2d_copy_us": self.h2d_copy_us,
            "h2d_overlap_share": self.h2d_overlap_share,
            "launch_gap_mean_us": self.launch_gap_mean_us,
            "launch_gap_median_us": self.launch_gap_median_us,
            "longest_idle_us": self.longest_idle_us,
            "tracks": [vars(t) for t in self.tracks], "notes": list(self.notes),
        }

    def lines(self) -> list[tuple[str, str]]:
        """(label, value) pairs, the same in the text, the HTML, the widget and the SVG."""
        rows: list[tuple[str, str]] = []
        if self.device == "gpu":
            rows.append(("GPU busy", f"{_pct(self.gpu_busy_share)} of {format_us(self.window_us)}"))
            rows.append(("GPU idle", _pct(self.gpu_idle_share)))
        else:
            rows.append(("trace span", format_us(self.window_us)))
        shares = ", ".join(f"{name} {_pct(self.kind_shares.get(name))}" for name in CLASSES
                           if self.kind_shares)
        rows.append((f"share of {self.kind_shares_of}", shares or "none recorded"))
        if self.device == "gpu":
            rows.append(("H2D copies hidden behind kernels",
                         _pct(self.h2d_overlap_share) if self.h2d_overlap_share is not None
                         else "no H2D copies"))
            rows.append(("launch gap (mean / median)",
                         f"{format_us(self.launch_gap_mean_us)} / "
                         f"{format_us(self.launch_gap_median_us)}"
                         if self.launch_gap_mean_us is not None else "fewer than 2 kernels"))
            rows.append(("longest GPU idle stretch", format_us(self.longest_idle_us)))
        return rows

    def __str__(self) -> str:
        text = [f"{label}: {value}" for label, value in self.lines()]
        text += [f"  {t.name}: {t.events} events, busy {_pct(t.busy_share)} of "
                 f"{format_us(t.span_us)}, longest idle {format_us(t.longest_idle_us)}"
                 for t in self.tracks]
        return "\n".join(text + list(self.notes))

    def _repr_html_(self) -> str:
        head = "".join(f"<tr><th style='text-align:left'>{html.escape(label)}</th>"
                       f"<td style='text-align:left'>{html.escape(value)}</td></tr>"
                       for label, value in self.lines())
        tracks = "".join(
            f"<tr><td style='text-align:left'>{html.escape(t.name)}</td><td>{t.events}</td>"
            f"<td>{format_us(t.span_us)}</td><td>{format_us(t.busy_us)}</td>"
            f"<td>{_pct(t.busy_share)}</td><td>{format_us(t.longest_idle_us)}</td></tr>"
            for t in self.tracks)
        notes = "".join(f"<p><em>{html.escape(n)}</em></p>" for n in self.notes)
        return (f"<table class='lt-timeline-summary'>{head}</table>"
                "<table><tr><th>track</th><th>events</th><th>span</th><th>busy</th>"
                f"<th>busy share</th><th>longest idle</th></tr>{tracks}</table>{notes}")


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.1f}%"


def format_us(value: float | None) -> str:
    """A duration in microseconds, in the unit that reads best (µs, ms or s)."""
    if value is None:
        return "n/a"
    if abs(value) >= 1e6:
        return f"{value / 1e6:.3g} s"
    if abs(value) >= 1e3:
        return f"{value / 1e3:.3g} ms"
    return f"{value:.3g} µs"


def track_usage(name: str, device: str, starts: np.ndarray, ends: np.ndarray) -> TrackUsage:
    """Busy, idle and longest idle stretch of one track's work events over its own span."""
    if starts.size == 0:
        return TrackUsage(name, device, 0, 0.0, 0.0, 0.0, None, 0.0)
    merged_start, merged_end = merge_intervals(starts, ends)
    span = float(merged_end[-1] - merged_start[0])
    busy = float(np.sum(merged_end - merged_start))
    gaps = merged_start[1:] - merged_end[:-1]
    return TrackUsage(name, device, int(starts.size), span, busy, max(span - busy, 0.0),
                      busy / span if span > 0 else None,
                      float(gaps.max()) if gaps.size else 0.0)


GPU_WORK_KINDS = frozenset({"kernel", "memcpy_h2d", "memcpy_d2h", "memcpy_d2d", "memset"})
# Kinds that are not work: a sync is a thread (or stream) waiting.
NOT_WORK_KINDS = frozenset({"sync"})


def summarize(
    start_us: np.ndarray,
    duration_us: np.ndarray,
    kinds: Sequence[str],
    kind_code: np.ndarray,
    track: np.ndarray,
    tracks: Sequence[tuple[str, str]],
    names: Sequence[str],
    name_id: np.ndarray,
    parent: np.ndarray,
) -> Summary:
    """Every figure of the Summary from a trace's columns (see labkit.measure.timeline.Trace).

    ``kinds[kind_code[i]]`` is event i's kind, ``tracks[track[i]]`` its (name, device) and
    ``names[name_id[i]]`` its name; ``parent[i]`` the enclosing event on its track or -1.
    """
    start = np.asarray(start_us, dtype=np.float64)
    end = start + np.asarray(duration_us, dtype=np.float64)
    duration = end - start
    code = np.asarray(kind_code)
    is_code = {k: code == kinds.index(k) if k in kinds else np.zeros(code.size, dtype=bool)
               for k in kinds}
    gpu_work = np.zeros(code.size, dtype=bool)
    for k in GPU_WORK_KINDS & set(kinds):
        gpu_work |= is_code[k]
    work = ~is_code["sync"] if "sync" in kinds else np.ones(code.size, dtype=bool)
    notes: list[str] = []

    usage = []
    track = np.asarray(track)
    for t, (track_name, device) in enumerate(tracks):
        on = np.flatnonzero(track == t)
        on = on[work[on]]
        usage.append(track_usage(track_name, device, start[on], end[on]))

    kernel = is_code.get("kernel", np.zeros(code.size, dtype=bool))
    h2d = is_code.get("memcpy_h2d", np.zeros(code.size, dtype=bool))
    h2d_copy_us = float(duration[h2d].sum())
    if gpu_work.any():
        device = "gpu"
        gpu = track_usage("GPU", "gpu", start[gpu_work], end[gpu_work])
        window = gpu.span_us
        busy_share = gpu.busy_share if gpu.busy_share is not None else 1.0
        idle_share: float | None = 1.0 - busy_share
        longest: float | None = gpu.longest_idle_us
        chosen = np.flatnonzero(gpu_work)
        weights = duration[chosen]
        shares_of = "GPU time"
        overlap = overlap_share(start[h2d], end[h2d], start[kernel], end[kernel])
        launch = launch_gaps(start[kernel], end[kernel])
        gap_mean = float(launch.mean()) if launch.size else None
        gap_median = float(np.median(launch)) if launch.size else None
        if not h2d.any():
            notes.append("No host-to-device copies in this trace, so no copy/compute overlap.")
    else:
        device = "cpu"
        window = float(end.max() - start.min()) if start.size else 0.0
        busy_share = idle_share = longest = overlap = gap_mean = gap_median = None
        chosen = np.flatnonzero(is_code.get("cpu_op", np.zeros(code.size, dtype=bool)))
        weights = self_times(duration, parent)[chosen]
        shares_of = "CPU op self time"
        notes.append("No GPU events in this trace (a CPU run, or the profile did not ask for "
                     "ProfilerActivity.CUDA): GPU figures are n/a; kind shares split the CPU "
                     "ops' self time.")
    classes = classify_events(names, kinds, np.asarray(name_id)[chosen], code[chosen])
    return Summary(
        device=device, events=int(start.size), kernels=int(kernel.sum()), window_us=window,
        gpu_busy_share=busy_share, gpu_idle_share=idle_share,
        kind_shares=class_shares(weights, classes), kind_shares_of=shares_of,
        h2d_copy_us=h2d_copy_us, h2d_overlap_share=overlap, launch_gap_mean_us=gap_mean,
        launch_gap_median_us=gap_median, longest_idle_us=longest, tracks=tuple(usage),
        notes=tuple(notes))
