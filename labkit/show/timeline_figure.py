"""A static picture of a timeline: the same lanes, rows and colours as the widget, as SVG.

For places where widgets do not render (GitHub, nbviewer, an HTML export, a PDF) and for
tests: the SVG text depends only on the trace and the options (fixed layout, fixed number
formats, no dates, no random ids), so two runs give the same bytes. Events are drawn per pixel
column: within a row, bars of one kind that meet on the same pixel become one rectangle, so a
trace of a million events still makes a picture of a few thousand rectangles. Drawing never
measures: the summary line comes from ``labkit.measure.timeline.summary``.
"""

from __future__ import annotations

import html

import numpy as np

from labkit.measure import timeline, timeline_stats

KIND_COLOURS = {
    "kernel": "#4c78a8",
    "memcpy_h2d": "#f58518",
    "memcpy_d2h": "#e45756",
    "memcpy_d2d": "#b279a2",
    "memset": "#9d755d",
    "cpu_op": "#54a24b",
    "runtime": "#bab0ac",
    "sync": "#eeca3b",
}
MAX_ROWS = 6  # rows per lane (nesting depths); deeper CPU ops share the last row
MAX_LANES = 64
ROW_H = 12
ROW_GAP = 2
LANE_GAP = 6
LABEL_W = 170
AXIS_H = 20


def lane_rows(trace: timeline.Trace) -> tuple[list[dict], np.ndarray]:
    """The lanes (one per track, up to MAX_LANES) and each event's row in the picture.

    Rows of a lane are its nesting depths, capped at MAX_ROWS; an event on a track beyond
    MAX_LANES gets row -1 (not drawn).
    """
    n_tracks = len(trace.tracks)
    depth = np.minimum(trace.depth.astype(np.int64), MAX_ROWS - 1)
    rows_per_track = np.ones(n_tracks, dtype=np.int64)
    if len(trace):  # events come grouped by track (sorted), so one reduceat per track
        first = np.flatnonzero(np.concatenate(([True], trace.track[1:] != trace.track[:-1])))
        rows_per_track[trace.track[first]] = np.maximum.reduceat(depth, first) + 1
    first_row = np.concatenate(([0], np.cumsum(rows_per_track)[:-1])).astype(np.int64)
    lanes = [{"name": t.name, "device": t.device, "first_row": int(first_row[t.index]),
              "rows": int(rows_per_track[t.index])} for t in trace.tracks[:MAX_LANES]]
    row = first_row[trace.track] + depth if len(trace) else np.zeros(0, dtype=np.int64)
    if n_tracks > MAX_LANES:
        row = np.where(trace.track < MAX_LANES, row, -1)
    return lanes, row


def pixel_runs(start: np.ndarray, end: np.ndarray, row: np.ndarray, kind: np.ndarray,
               t0: float, t1: float, width: int) -> list[tuple[int, int, int, int]]:
    """(row, kind, first pixel, last pixel + 1) runs: the events drawn at `width` pixels.

    Every event covers at least one pixel; overlapping or touching pixels of the same row and
    kind merge into one run. Sorted by row, kind, pixel, so the output is deterministic. No
    sorting of events: each (row, kind) gets a coverage count per pixel (+1 where an event
    starts, -1 after it ends, summed), so a million events cost a few passes over arrays.
    """
    inside = (start <= t1) & (end >= t0) & (row >= 0)
    if not inside.any():
        return []
    scale = width / (t1 - t0)
    px0 = np.clip(np.floor((start[inside] - t0) * scale), 0, width - 1).astype(np.int64)
    px1 = np.clip(np.ceil((end[inside] - t0) * scale), 0, width).astype(np.int64)
    px1 = np.maximum(px1, px0 + 1)
    group = row[inside].astype(np.int64) * 64 + kind[inside].astype(np.int64)
    present, group = np.unique(group, return_inverse=True)
    stride = width + 1
    cells = present.size * stride
    delta = (np.bincount(group * stride + px0, minlength=cells)
             - np.bincount(group * stride + px1, minlength=cells)).reshape(present.size, stride)
    covered = np.cumsum(delta, axis=1)[:, :width] > 0
    edges = np.diff(np.pad(covered, ((0, 0), (1, 1))).astype(np.int8), axis=1)
    runs: list[tuple[int, int, int, int]] = []
    for g, key in enumerate(present.tolist()):
        begins = np.flatnonzero(edges[g] == 1)
        ends = np.flatnonzero(edges[g] == -1)
        runs.extend((key // 64, key % 64, int(b), int(e))
                    for b, e in zip(begins.tolist(), ends.tolist(), strict=True))
    return runs


def to_svg(trace: timeline.Trace, *, width: int = 900, window: tuple[float, float] | None = None,
           title: str | None = None, summary: bool = True) -> str:
    """The timeline as SVG text: lanes with their names, bars by kind, time axis, legend.

    ``window=(t0, t1)`` in µs draws part of the trace; ``summary=False`` leaves out the line
    of figures under the title.
    """
    if not isinstance(trace, timeline.Trace):
        raise timeline.TimelineError(
            f"to_svg draws a labkit.measure.timeline.Trace, got {type(trace).__name__}; read one with "
            "timeline.load(path) or timeline.from_profiler(prof).")
    if width < LABEL_W + 100:
        raise ValueError(f"width = {width}: give at least {LABEL_W + 100} pixels.")
    t0, t1 = window if window is not None else (0.0, max(trace.end_us, 1e-3))
    if not t1 > t0:
        raise ValueError(f"window {window} is empty; give (t0, t1) with t0 < t1 in µs.")
    lanes, row = lane_rows(trace)
    head = [html.escape(title if title is not None else (trace.source or "timeline"))]
    if summary and len(trace):
        line = ""
        for label, value in timeline.summary(trace).lines():
            item = f"{label}: {value}"
            if line and 7 * len(line + item) > width:  # about 7 px per character at 11 px
                head.append(html.escape(line))
                line = ""
            line = f"{line}; {item}" if line else item
        head.append(html.escape(line))
    top = 16 * len(head) + 8
    row_top: dict[int, int] = {}
    y = top + AXIS_H
    for lane in lanes:
        for r in range(lane["rows"]):
            row_top[lane["first_row"] + r] = y
            y += ROW_H + ROW_GAP
        y += LANE_GAP
    legend_y = y + 6
    height = legend_y + 18
    plot_w = width - LABEL_W
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, sans-serif" '
             'font-size="11" class="lt-timeline-svg">',
             f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
    for n, line in enumerate(head):
        weight = ' font-weight="bold"' if n == 0 else ""
        parts.append(f'<text x="4" y="{14 + 16 * n}"{weight}>{line}</text>')
    for n, lane in enumerate(lanes):
        lane_top = row_top[lane["first_row"]]
        lane_h = lane["rows"] * (ROW_H + ROW_GAP)
        fill = "#f4f4f4" if n % 2 else "#fafafa"
        parts.append(f'<rect x="0" y="{lane_top - 1}" width="{width}" height="{lane_h}" '
                     f'fill="{fill}"/>')
        name = lane["name"] if len(lane["name"]) <= 26 else lane["name"][:25] + "…"
        parts.append(f'<text x="4" y="{lane_top + ROW_H - 2}">{html.escape(name)}</text>')
    parts.extend(_axis(t0, t1, plot_w, top, y))
    end = trace.start_us + trace.duration_us
    for r, k, p0, p1 in pixel_runs(trace.start_us, end, row, trace.kind, t0, t1, plot_w):
        parts.append(f'<rect x="{LABEL_W + p0}" y="{row_top[r]}" width="{p1 - p0}" '
                     f'height="{ROW_H}" fill="{KIND_COLOURS[timeline.KINDS[k]]}"/>')
    present = sorted(set(np.unique(trace.kind).tolist())) if len(trace) else []
    x = 4
    for k in present:
        name = timeline.KINDS[k]
        parts.append(f'<rect x="{x}" y="{legend_y}" width="10" height="10" '
                     f'fill="{KIND_COLOURS[name]}"/>')
        parts.append(f'<text x="{x + 13}" y="{legend_y + 9}">{name.replace("_", " ")}</text>')
        x += 20 + 7 * len(name)
    if len(trace.tracks) > MAX_LANES:
        parts.append(f'<text x="{x + 10}" y="{legend_y + 9}">first {MAX_LANES} of '
                     f'{len(trace.tracks)} tracks drawn</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _axis(t0: float, t1: float, plot_w: int, top: int, bottom: int) -> list[str]:
    span = t1 - t0
    raw = span / max(2, plot_w // 110)
    power = 10 ** np.floor(np.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    parts = []
    tick = np.ceil(t0 / step) * step
    while tick <= t1 + 1e-9 * span:
        x = LABEL_W + (tick - t0) / span * plot_w
        parts.append(f'<line x1="{x:.1f}" y1="{top + AXIS_H - 4}" x2="{x:.1f}" y2="{bottom}" '
                     'stroke="#dddddd"/>')
        label = timeline_stats.format_us(float(tick))
        # a label that would run past the right edge ends at its tick instead (about 7 px a
        # character at 11 px), so the last one is not cut off
        fits = x + 2 + 7 * len(label) <= LABEL_W + plot_w
        where = f'x="{x + 2:.1f}"' if fits else f'x="{x - 2:.1f}" text-anchor="end"'
        parts.append(f'<text {where} y="{top + 10}" fill="#444444">{html.escape(label)}</text>')
        tick += step
    return parts
