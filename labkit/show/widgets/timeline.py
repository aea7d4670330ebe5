"""The timeline widget: one lane per CPU thread or GPU stream, zoom, pan, hover and click.

``timeline.show(trace)`` (or ``Timeline(trace)``) draws a ``labkit.measure.timeline.Trace`` on a canvas:
bars coloured by kind, nested CPU ops on rows below their parent, the summary figures in a
strip above. Mouse: wheel zooms around the pointer, drag pans, hover shows an event, click
selects it (for GPU work the CPU op that launched it is outlined and named). Keys, once the
canvas has focus: ``+``/``w`` zoom in, ``-``/``s`` zoom out, arrows or ``a``/``d`` pan,
``0`` resets.

What reaches the browser is decided here, in Python, by ``window_view`` (a pure function, tested
without a browser): every event of the visible window when there are at most ``max_bars`` of
them; otherwise the events long enough to see at that zoom, plus one *aggregate* bar per lane
row and pixel-sized time bin for the rest (``count`` events, drawn hatched). When the browser
zooms into a window drawn from aggregates it asks Python for that window (``view_request``), so
ten million events stay a few thousand bars on the page and the tab never freezes.

The static picture (``labkit.show.timeline_figure.to_svg``) travels in the widget's mimebundle, so
GitHub, nbviewer and front ends without the widget manager show it instead of an empty box.

DOM hooks (browser tests, the latency benchmark), all inside ``.lt-timeline``: ``canvas``
(``data-role=canvas``, focusable); ``[data-role=summary] [data-key=...]``; ``[data-role=tooltip]``;
``[data-role=detail]`` with ``data-index``, ``data-kind`` and ``data-launched-by`` (the name of
the launching op) of the selection; ``[data-role=notice]`` (thinning notes); buttons
``[data-action=zoom-in|zoom-out|reset]``. The root carries ``data-view`` ("t0,t1" in µs),
``data-bars`` (bars drawn), ``data-render-ms`` (first draw of the data, measured in the page
with performance.now()), ``data-zoom-ms`` (the last zoom or pan step's redraw) and
``data-paint-ms`` (until the next frame). Dispatching ``lt-zoom`` with ``detail`` a factor
zooms around the middle (the benchmark uses it too).
"""

from __future__ import annotations

import math

import numpy as np
import traitlets

from labkit.measure import timeline, timeline_stats
from labkit.show import timeline_figure
from labkit.show.widgets.base import Widget

MAX_BARS = 200_000  # bars sent to the browser for one window
BINS = 2_000  # time bins across the window when aggregating (about one per pixel)
KIND_COLOURS = timeline_figure.KIND_COLOURS
MAX_LANES = timeline_figure.MAX_LANES
lane_rows = timeline_figure.lane_rows  # the widget's lanes and rows are the picture's


def window_view(trace: timeline.Trace, t0: float, t1: float, *, max_bars: int = MAX_BARS,
                bins: int = BINS, rows: np.ndarray | None = None) -> dict:
    """What the browser draws for the window [t0, t1] µs: exact events or thinned bars.

    Returns columns sorted by (row, start): ``start``, ``duration`` (float64), ``row``,
    ``kind``, ``name`` (an index into ``names``, -1 for an aggregate), ``index`` (the event's
    index in the trace, -1 for an aggregate), ``launcher_name`` (name of the launching CPU op,
    or -1), ``launcher`` (its event index, or -1) and ``count`` (events in the bar), plus
    ``names``, ``exact`` and ``window``.
    """
    if not t1 > t0:
        raise ValueError(f"window [{t0}, {t1}] is empty; give t0 < t1 (microseconds).")
    if rows is None:
        rows = lane_rows(trace)[1]
    start, duration = trace.start_us, trace.duration_us
    inside = np.flatnonzero((start <= t1) & (start + duration >= t0) & (rows >= 0))
    exact = inside.size <= max_bars
    if exact:
        keep, agg = inside, np.zeros(0, dtype=np.int64)
    else:
        # Long enough to cover a bin: drawn as itself. Shorter: merged per (row, bin).
        width = (t1 - t0) / bins
        visible = duration[inside] >= width
        keep, agg = inside[visible], inside[~visible]
        if keep.size > max_bars // 2:  # very many long events: the longest ones stay exact
            by_length = np.argsort(-duration[keep], kind="stable")
            agg = np.concatenate((agg, keep[by_length[max_bars // 2:]]))
            keep = keep[np.sort(by_length[: max_bars // 2])]
    columns = _exact_columns(trace, keep, rows)
    if agg.size:
        columns = _concat(columns, _aggregate(trace, agg, rows, t0, (t1 - t0) / bins))
    order = np.lexsort((columns["start"], columns["row"]))
    columns = {k: v[order] for k, v in columns.items()}
    # Names: only those drawn, renumbered 0..k-1 so the browser gets a short list.
    used = np.unique(np.concatenate((columns["name"], columns["launcher_name"])))
    used = used[used >= 0]
    remap = np.full(len(trace.names) + 1, -1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    columns["name"] = remap[columns["name"]]
    columns["launcher_name"] = remap[columns["launcher_name"]]
    return {**columns, "names": [trace.names[i] for i in used.tolist()], "exact": bool(exact),
            "window": [float(t0), float(t1)], "in_window": int(inside.size)}


def _exact_columns(trace: timeline.Trace, keep: np.ndarray, rows: np.ndarray) -> dict:
    launcher = trace.launched_by[keep]
    return {
        "start": trace.start_us[keep], "duration": trace.duration_us[keep],
        "row": rows[keep].astype(np.int64), "kind": trace.kind[keep].astype(np.int64),
        "name": trace.name_id[keep].astype(np.int64), "index": keep.astype(np.int64),
        "launcher": launcher.astype(np.int64),
        "launcher_name": np.where(launcher >= 0, trace.name_id[np.maximum(launcher, 0)],
                                  -1).astype(np.int64),
        "count": np.ones(keep.size, dtype=np.int64),
    }


def _aggregate(trace: timeline.Trace, members: np.ndarray, rows: np.ndarray, t0: float,
               width: float) -> dict:
    """One bar per (row, time bin): from its first start to its last end, the kind of its
    longest member, and how many events it stands for."""
    start = trace.start_us[members]
    end = start + trace.duration_us[members]
    row = rows[members].astype(np.int64)
    bin_of = np.floor((np.maximum(start, t0) - t0) / width).astype(np.int64)
    key = row * (int(1 << 32)) + bin_of
    # Events come sorted by track and start, so the keys are nearly sorted: a stable sort
    # (timsort) of them is fast even for millions.
    order = np.argsort(key, kind="stable")
    key_sorted = key[order]
    first = np.flatnonzero(np.concatenate(([True], key_sorted[1:] != key_sorted[:-1])))
    last = np.append(first[1:], key_sorted.size) - 1
    group_start = np.minimum.reduceat(start[order], first)
    group_end = np.maximum.reduceat(end[order], first)
    # The longest member of each group gives the bar its kind.
    member_duration = trace.duration_us[members][order]
    longest_duration = np.maximum.reduceat(member_duration, first)
    counts = last - first + 1
    is_longest = member_duration == np.repeat(longest_duration, counts)
    position = np.where(is_longest, np.arange(key_sorted.size), key_sorted.size)
    longest = members[order[np.minimum.reduceat(position, first)]]
    size = first.size
    return {
        "start": group_start, "duration": group_end - group_start, "row": row[order[first]],
        "kind": trace.kind[longest].astype(np.int64), "name": np.full(size, -1, dtype=np.int64),
        "index": np.full(size, -1, dtype=np.int64), "launcher": np.full(size, -1, dtype=np.int64),
        "launcher_name": np.full(size, -1, dtype=np.int64),
        "count": counts.astype(np.int64),
    }


def _concat(a: dict, b: dict) -> dict:
    return {k: np.concatenate((a[k], b[k])) for k in a}


# The widget's lane geometry in pixels (the page reads it from the `geometry` trait).
LANE_GEOMETRY = {"row_h": 14, "row_gap": 2, "lane_gap": 6, "label_w": 170, "axis_h": 22}


class Timeline(Widget):
    """A profile's timeline: lanes per thread and stream, bars by kind, zoom/pan/hover/click.

    ``Timeline(trace)`` with a ``labkit.measure.timeline.Trace``; ``selected`` is the clicked event's
    index (-1 for none) and ``selected_text`` what labkit says about it (``trace.describe``).
    """

    js_parts = ("timeline_data.js", "timeline_canvas.js", "timeline.js")

    title = traitlets.Unicode("").tag(sync=True)
    geometry = traitlets.Dict(LANE_GEOMETRY).tag(sync=True)
    lanes = traitlets.List().tag(sync=True)
    kinds = traitlets.List().tag(sync=True)
    colours = traitlets.List().tag(sync=True)
    extent = traitlets.List().tag(sync=True)
    summary_lines = traitlets.List().tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)
    names = traitlets.List().tag(sync=True)
    exact = traitlets.Bool(True).tag(sync=True)
    data_window = traitlets.List().tag(sync=True)
    data_seq = traitlets.Int(0).tag(sync=True)
    _starts = traitlets.Bytes(b"").tag(sync=True)
    _durations = traitlets.Bytes(b"").tag(sync=True)
    # int32, one column after another: row, kind, name, index, launcher_name, launcher, count
    _columns = traitlets.Bytes(b"").tag(sync=True)
    view_request = traitlets.Dict().tag(sync=True)
    selected = traitlets.Int(-1).tag(sync=True)
    selected_text = traitlets.Unicode("").tag(sync=True)

    def __init__(self, trace: timeline.Trace, *, title: str = "", max_bars: int = MAX_BARS,
                 **kwargs: object) -> None:
        if not isinstance(trace, timeline.Trace):
            raise timeline.TimelineError(
                f"Timeline draws a labkit.measure.timeline.Trace, got {type(trace).__name__}; read one "
                "with timeline.load(path) or timeline.from_profiler(prof).")
        if len(trace) == 0:
            raise timeline.TimelineError("this trace has no events to draw; profile a block "
                                         "that runs at least one torch operation.")
        if max_bars < 1000:
            raise traitlets.TraitError(f"max_bars = {max_bars}: give at least 1000 (the page "
                                       "draws a few thousand bars at once without effort).")
        self._trace = trace
        self._max_bars = max_bars
        lanes, self._rows = lane_rows(trace)
        summary = timeline.summary(trace)
        self._summary = summary
        notes = []
        if len(trace.tracks) > MAX_LANES:
            notes.append(f"{len(trace.tracks)} tracks: the first {MAX_LANES} are drawn.")
        super().__init__(
            title=title or trace.source, lanes=lanes, kinds=list(timeline.KINDS),
            colours=[KIND_COLOURS[k] for k in timeline.KINDS],
            extent=[0.0, max(trace.end_us, 1e-3)],
            summary_lines=[list(line) for line in summary.lines()], **kwargs)
        self._base_notes = notes
        self._send_window(0.0, max(trace.end_us, 1e-3))

    @property
    def trace(self) -> timeline.Trace:
        return self._trace

    @property
    def summary(self) -> timeline_stats.Summary:
        return self._summary

    def _send_window(self, t0: float, t1: float) -> None:
        view = window_view(self._trace, t0, t1, max_bars=self._max_bars, rows=self._rows)
        # Column after column, so the page takes each as a view of one buffer, no copying.
        ints = np.concatenate([view[k] for k in ("row", "kind", "name", "index", "launcher_name",
                                                 "launcher", "count")]).astype("<i4")
        notes = list(self._base_notes)
        if not view["exact"]:
            notes.append(
                f"{view['in_window']:,} events in view, more than the {self._max_bars:,} drawn "
                "one by one: short events are merged into hatched bars (hover says how many). "
                "Zoom in to see them individually.")
        with self.hold_sync():
            self.names = view["names"]
            self.exact = view["exact"]
            self.data_window = view["window"]
            self._starts = view["start"].astype("<f8").tobytes()
            self._durations = view["duration"].astype("<f8").tobytes()
            self._columns = np.ascontiguousarray(ints).tobytes()
            self.notice = " ".join(notes)
            self.data_seq += 1

    @traitlets.observe("view_request")
    def _on_view_request(self, change: traitlets.Bunch) -> None:
        asked = change["new"] or {}
        try:
            t0, t1 = float(asked["t0"]), float(asked["t1"])
        except (KeyError, TypeError, ValueError):
            return
        low, high = self.extent
        pad = (t1 - t0) * 0.5  # a margin, so a small pan needs no new data
        t0, t1 = max(low, t0 - pad), min(high, t1 + pad)
        if math.isfinite(t0) and math.isfinite(t1) and t1 > t0:
            self._send_window(t0, t1)

    @traitlets.validate("selected")
    def _valid_selected(self, proposal: traitlets.Bunch) -> int:
        index = proposal["value"]
        if not -1 <= index < len(self._trace):
            raise traitlets.TraitError(f"selected = {index}: no such event (the trace has "
                                       f"{len(self._trace)}); use -1 to clear the selection.")
        return index

    @traitlets.observe("selected")
    def _on_selected(self, change: traitlets.Bunch) -> None:
        index = change["new"]
        self.selected_text = self._trace.describe(index) if index >= 0 else ""

    def static_svg(self) -> str:
        """The picture a saved notebook shows where the widget cannot run (same lanes)."""
        return timeline_figure.to_svg(self._trace, title=self.title or None)

    def __repr__(self) -> str:
        return f"Timeline of {self._trace!r}"
