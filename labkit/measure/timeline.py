"""A torch.profiler run as a timeline: tracks, the events on them, and who launched what.

The profiler's own viewers need something outside the notebook (TensorBoard's plugin is
deprecated, Perfetto's UI loads from the web); this reads the same Kineto trace into a small
data model that the rest of labkit computes on and draws::

    from labkit.measure import timeline
    trace = timeline.from_profiler(prof)          # a finished torch.profiler.profile
    trace = timeline.load("trace.json")           # an exported Chrome/Kineto trace (.json, .json.gz)
    timeline.summary(trace)                       # busy/idle, kind shares, overlap, launch gaps
    timeline.show(trace)                          # the widget (a static SVG beside it)
    timeline.to_svg(trace)                        # the static picture, deterministic

The model:

- a **track** is one CPU thread (``pid``/``tid`` of the trace) or one GPU stream (device and
  stream from the event's args); tracks are ordered CPU threads first, then GPU streams;
- an **event** has a track, a name, a start and a duration in microseconds (the start counted
  from the trace's first event), and a kind: ``kernel``, ``memcpy_h2d``, ``memcpy_d2h``,
  ``memcpy_d2d``, ``memset`` (GPU work), ``cpu_op`` (an operator or a user annotation),
  ``runtime`` (a CUDA runtime or driver call such as ``cudaLaunchKernel``) or ``sync`` (a
  thread or stream waiting: ``cudaStreamSynchronize`` and the like);
- the **link** from a GPU event to the CPU side: ``launch[i]`` is the runtime call that
  queued it (same ``correlation`` id) and ``launched_by[i]`` the innermost CPU op around that
  call (for a kernel of ``y = x @ w``: ``aten::mm``), both -1 when the trace has no link.

Events are stored column by column in numpy arrays (a trace of a million events stays a few
tens of MB), sorted by track, then start. ``trace.event(i)`` gives one as an ``Event``.
Categories the model has no kind for (Python function records, flow arrows, GPU-side
annotations, the profiler's own overhead) are skipped and counted in ``trace.skipped``.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from labkit.measure import timeline_stats

KINDS = ("kernel", "memcpy_h2d", "memcpy_d2h", "memcpy_d2d", "memset", "cpu_op", "runtime",
         "sync")
GPU_KINDS = frozenset(KINDS[:5])
# Reading JSON takes about ten times the file's size in memory; above this many bytes we
# refuse with a message instead of freezing a 2 GB Binder machine (pass max_bytes to raise it).
MAX_BYTES = 256 * 1024 * 1024

_SYNC_NAMES = ("synchronize", "streamwaitevent", "eventquery", "streamquery", "cuda_sync",
               "stream sync", "event sync", "context sync", "device sync")
_SKIPPED_CATEGORIES = frozenset({"trace", "overhead", "ac2g", "fwdbwd", "gpu_user_annotation",
                                 "python_function", "cuda_profiler_range"})


class TimelineError(ValueError):
    """A profile or trace that cannot be read as a timeline; the message says what to do."""


@dataclass(frozen=True)
class Track:
    """One lane of the timeline: a CPU thread or a GPU stream."""

    index: int
    name: str
    device: str  # "cpu" or "gpu"
    process: str
    thread: str


@dataclass(frozen=True)
class Event:
    """One event, as ``trace.event(i)`` returns it (times in microseconds)."""

    index: int
    track: int
    name: str
    kind: str
    start_us: float
    duration_us: float
    depth: int
    parent: int
    launch: int
    launched_by: int

    @property
    def end_us(self) -> float:
        return self.start_us + self.duration_us


@dataclass(eq=False)  # compared by identity: its columns are numpy arrays
class Trace:
    """A timeline: tracks and the columns of its events (see the module docstring)."""

    tracks: tuple[Track, ...]
    names: list[str]
    start_us: np.ndarray
    duration_us: np.ndarray
    kind: np.ndarray  # index into KINDS
    track: np.ndarray
    name_id: np.ndarray
    depth: np.ndarray  # nesting level on its track, 0 for the outermost
    parent: np.ndarray  # enclosing event on the same track, or -1
    launch: np.ndarray
    launched_by: np.ndarray
    source: str = ""
    skipped: dict[str, int] = field(default_factory=dict)
    _summary: object = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.start_us.size)

    @property
    def has_gpu(self) -> bool:
        return bool(np.any(self.kind < len(GPU_KINDS)))

    @property
    def end_us(self) -> float:
        return float((self.start_us + self.duration_us).max()) if len(self) else 0.0

    def event(self, index: int) -> Event:
        i = int(index)
        if not 0 <= i < len(self):
            raise IndexError(f"event {index} does not exist: this trace has {len(self)} events.")
        return Event(i, int(self.track[i]), self.names[self.name_id[i]], KINDS[self.kind[i]],
                     float(self.start_us[i]), float(self.duration_us[i]), int(self.depth[i]),
                     int(self.parent[i]), int(self.launch[i]), int(self.launched_by[i]))

    def events(self, kind: str | None = None) -> list[Event]:
        """Every event (or every event of one kind) as Event objects: for small traces."""
        chosen = range(len(self)) if kind is None else np.flatnonzero(
            self.kind == _kind_code(kind)).tolist()
        return [self.event(i) for i in chosen]

    def describe(self, index: int) -> str:
        """One line about an event: name, kind, duration, and for GPU work who launched it."""
        e = self.event(index)
        text = (f"{e.name} ({e.kind} on {self.tracks[e.track].name}): "
                f"{timeline_stats.format_us(e.duration_us)} from "
                f"{timeline_stats.format_us(e.start_us)}")
        if e.kind in GPU_KINDS:
            if e.launched_by >= 0:
                op = self.event(e.launched_by)
                text += f"; launched by {op.name} on {self.tracks[op.track].name}"
                if e.launch >= 0:
                    text += f" through {self.names[self.name_id[e.launch]]}"
            else:
                text += "; no launching CPU op recorded"
        return text

    def __repr__(self) -> str:
        counts = np.bincount(self.kind, minlength=len(KINDS)) if len(self) else np.zeros(
            len(KINDS), dtype=int)
        kinds = ", ".join(f"{n} {k}" for k, n in zip(KINDS, counts.tolist(), strict=True) if n)
        return (f"Trace: {len(self)} events on {len(self.tracks)} tracks over "
                f"{timeline_stats.format_us(self.end_us)} ({kinds or 'no events'})")


def _kind_code(kind: str) -> int:
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; the kinds are {', '.join(KINDS)}.")
    return KINDS.index(kind)


# --------------------------------------------------------------------------- building
def build(
    tracks: Sequence[Track],
    names: Sequence[str],
    start_us: Sequence[float] | np.ndarray,
    duration_us: Sequence[float] | np.ndarray,
    kind: Sequence[int] | np.ndarray,
    track: Sequence[int] | np.ndarray,
    name_id: Sequence[int] | np.ndarray,
    *,
    launch: Sequence[int] | np.ndarray | None = None,
    nest: bool = True,
    source: str = "",
    skipped: Mapping[str, int] | None = None,
) -> Trace:
    """A Trace from columns (any order); sorts them and works out nesting and links.

    ``launch[i]`` (optional) is the index, in the same input order, of the runtime call that
    queued GPU event i, or -1. ``nest=False`` skips the nesting pass (one Python step per
    event) for synthetic traces of millions of events: depth 0, no parents, no launching ops.
    """
    start = np.asarray(start_us, dtype=np.float64)
    duration = np.asarray(duration_us, dtype=np.float64)
    kind_arr = np.asarray(kind, dtype=np.int8)
    track_arr = np.asarray(track, dtype=np.int32)
    name_arr = np.asarray(name_id, dtype=np.int32)
    n = start.size
    if not (duration.size == kind_arr.size == track_arr.size == name_arr.size == n):
        raise TimelineError("the event columns have different lengths; give one start, "
                            "duration, kind, track and name per event.")
    if n and (np.any(~np.isfinite(start)) or np.any(~np.isfinite(duration))
              or np.any(duration < 0)):
        raise TimelineError("some events have a start or duration that is not a finite number "
                            ">= 0; drop them before building the trace.")
    if n and (kind_arr.min() < 0 or kind_arr.max() >= len(KINDS)):
        raise TimelineError(f"kind codes must index KINDS ({len(KINDS)} kinds).")
    if n and (track_arr.min() < 0 or track_arr.max() >= len(tracks)):
        raise TimelineError(f"track numbers must index the {len(tracks)} tracks given.")
    if n and (name_arr.min() < 0 or name_arr.max() >= len(names)):
        raise TimelineError(f"name ids must index the {len(names)} names given.")
    launch_in = (np.full(n, -1, dtype=np.int64) if launch is None
                 else np.asarray(launch, dtype=np.int64))
    if n:
        start = start - start.min()
    # Sort by track, then start, longest first at equal starts (a parent before its child).
    if _in_order(start, duration, track_arr):
        launch_out = launch_in
    else:
        order = np.lexsort((-duration, start, track_arr))
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        start, duration = start[order], duration[order]
        kind_arr, track_arr, name_arr = kind_arr[order], track_arr[order], name_arr[order]
        launch_sorted = launch_in[order]
        launch_out = np.where(launch_sorted >= 0, rank[np.maximum(launch_sorted, 0)], -1)
    depth = np.zeros(n, dtype=np.int16)
    parent = np.full(n, -1, dtype=np.int64)
    if nest and n:
        _nest(start, start + duration, track_arr, depth, parent)
    launched_by = _launching_ops(kind_arr, launch_out, parent) if nest else np.full(
        n, -1, dtype=np.int64)
    return Trace(tuple(tracks), list(names), start, duration, kind_arr, track_arr, name_arr,
                 depth, parent, launch_out.astype(np.int64), launched_by, source,
                 dict(skipped or {}))


def _in_order(start: np.ndarray, duration: np.ndarray, track: np.ndarray) -> bool:
    """Whether events already come sorted by (track, start, longest first)."""
    if start.size < 2:
        return True
    same_track = track[1:] == track[:-1]
    later = start[1:] > start[:-1]
    tie = (start[1:] == start[:-1]) & (duration[1:] <= duration[:-1])
    return bool(np.all((track[1:] > track[:-1]) | (same_track & (later | tie))))


def _nest(start: np.ndarray, end: np.ndarray, track: np.ndarray, depth: np.ndarray,
          parent: np.ndarray) -> None:
    """Depth and parent of each event from the intervals that enclose it on its track.

    Events are sorted by track and start; a stack holds the open intervals. An event that
    starts at or after the end of the top of the stack closes it (within half a nanosecond:
    traces round to whole nanoseconds, so back-to-back kernels may seem to overlap by one).
    """
    stack: list[int] = []
    current = -1
    starts, ends, tracks = start.tolist(), end.tolist(), track.tolist()
    for i in range(len(starts)):
        if tracks[i] != current:
            stack.clear()
            current = tracks[i]
        while stack and ends[stack[-1]] <= starts[i] + timeline_stats.TOUCH_US:
            stack.pop()
        if stack:
            parent[i] = stack[-1]
        depth[i] = min(len(stack), np.iinfo(np.int16).max)
        stack.append(i)


def _launching_ops(kind: np.ndarray, launch: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """For each GPU event with a launch call: the innermost CPU op around that call."""
    cpu_op = KINDS.index("cpu_op")
    found = np.full(kind.size, -1, dtype=np.int64)
    for i in np.flatnonzero(launch >= 0).tolist():
        p = int(parent[launch[i]])
        while p >= 0 and kind[p] != cpu_op:
            p = int(parent[p])
        found[i] = p
    return found


# --------------------------------------------------------------------------- reading
def _kind_of(category: str, name: str) -> int | None:
    """Our kind for a trace event's category and name; None when the model skips it."""
    lowered = name.lower()
    if category == "kernel":
        return 0
    if category in ("gpu_memcpy", "memcpy"):
        if "htod" in lowered or "h2d" in lowered:
            return 1
        if "dtoh" in lowered or "d2h" in lowered:
            return 2
        return 3  # DtoD, PtoP and HtoH copies: neither crosses the host link one way
    if category in ("gpu_memset", "memset"):
        return 4
    if category in ("cuda_sync",):
        return 7
    if category in ("cuda_runtime", "cuda_driver", "runtime", "driver"):
        return 7 if any(s in lowered for s in _SYNC_NAMES) else 6
    if category in ("cpu_op", "operator", "user_annotation", "cpu_instant_event"):
        return 5
    return None


def _as_float(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if np.isfinite(number) else None


def from_chrome(document: object, source: str = "trace") -> Trace:
    """A Trace from a parsed Chrome/Kineto trace (the dict ``json.load`` returns, or a list).

    Reads complete events (``"ph": "X"``) and the ``process_name``/``thread_name`` metadata;
    raises TimelineError for anything that is not such a trace or holds no events.
    """
    if isinstance(document, Mapping):
        raw = document.get("traceEvents")
        if not isinstance(raw, list):
            keys = ", ".join(sorted(str(k) for k in document)[:8]) or "none"
            raise TimelineError(
                f"{source} is JSON but not a Chrome/Kineto trace: it has no 'traceEvents' list "
                f"(its keys: {keys}). Export one with prof.export_chrome_trace(path) or "
                "torch.profiler.tensorboard_trace_handler, or pass the profile object to "
                "timeline.from_profiler(prof).")
    elif isinstance(document, list):
        raw = document
    else:
        raise TimelineError(
            f"{source} is JSON but not a Chrome/Kineto trace (its top level is a "
            f"{type(document).__name__}, not an object with 'traceEvents'). Export one with "
            "prof.export_chrome_trace(path).")
    return _from_events(raw, source)


RUNTIME = KINDS.index("runtime")  # a CUDA runtime call (cudaLaunchKernel...): launches kernels


class _Columns:
    """The events of a Chrome trace as they are read: one list per column, and what was skipped.

    A kernel and the runtime call that launched it share a `correlation` id; the runtime call's
    row is remembered by it, so each GPU event can point back at its launch.
    """

    def __init__(self) -> None:
        self.process_names: dict[str, str] = {}
        self.thread_names: dict[tuple[str, str], str] = {}
        self.track_keys: dict[tuple[str, str, str], int] = {}
        self.names: dict[str, int] = {}
        self.start: list[float] = []
        self.duration: list[float] = []
        self.kind: list[int] = []
        self.track: list[int] = []
        self.name: list[int] = []
        self.correlation: list[object] = []
        self.skipped: dict[str, int] = {}
        self.runtime_by_correlation: dict[object, int] = {}
        self.seen = 0

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def read(self, entry: object) -> None:
        """Take one trace entry: a name for a process or thread ('M'), an event ('X'), or a skip."""
        self.seen += 1
        if not isinstance(entry, Mapping):
            return self.skip("not an object")
        phase = entry.get("ph")
        args = entry.get("args") if isinstance(entry.get("args"), Mapping) else {}
        if phase == "M":
            return self._name(entry, args)
        category = str(entry.get("cat", "")).lower()
        if phase != "X":
            return self.skip(f"phase {phase!r}" if category in ("", "none") else category)
        name = entry.get("name")
        name = name if isinstance(name, str) else str(name)
        kind = _kind_of(category, name)
        start, duration = _as_float(entry.get("ts")), _as_float(entry.get("dur"))
        if kind is None:
            return self.skip(category or "no category")
        if start is None or duration is None or duration < 0:
            return self.skip("no valid ts/dur")
        self._event(entry, args, category, name, kind, start, duration)

    def _name(self, entry: Mapping, args: Mapping) -> None:
        label = args.get("name")
        if isinstance(label, str):
            pid, tid = str(entry.get("pid")), str(entry.get("tid"))
            if entry.get("name") == "process_name":
                self.process_names[pid] = label
            elif entry.get("name") == "thread_name":
                self.thread_names[(pid, tid)] = label

    def _event(self, entry: Mapping, args: Mapping, category: str, name: str, kind: int,
               start: float, duration: float) -> None:
        pid, tid = str(entry.get("pid")), str(entry.get("tid"))
        on_gpu = kind < len(GPU_KINDS)
        if on_gpu or category == "cuda_sync":
            key = ("gpu", str(args.get("device", pid)), str(args.get("stream", tid)))
        else:
            key = ("cpu", pid, tid)
        self.track_keys.setdefault(key, len(self.track_keys))
        self.names.setdefault(name, len(self.names))
        correlation = args.get("correlation")
        if kind == RUNTIME and correlation is not None:
            self.runtime_by_correlation[correlation] = len(self.start)
        self.start.append(start)
        self.duration.append(duration)
        self.kind.append(kind)
        self.track.append(self.track_keys[key])
        self.name.append(self.names[name])
        self.correlation.append(correlation if on_gpu else None)

    def empty_error(self, source: str) -> TimelineError:
        """Why nothing could be placed on a timeline, and what to profile instead."""
        if self.seen == 0:
            return TimelineError(
                f"{source} holds no events: the profiled block ran nothing, or a profiler "
                "schedule never reached an active step (call prof.step() once per step). "
                "Profile a block that runs at least one torch operation.")
        found = ", ".join(f"{k} ({n})" for k, n in sorted(self.skipped.items(), key=lambda kv: -kv[1])[:6])
        return TimelineError(
            f"{source} has {self.seen} entries but no event labkit can place on a timeline (found: "
            f"{found}). labkit reads complete events ('ph': 'X') of torch.profiler's "
            "categories (cpu_op, kernel, gpu_memcpy, cuda_runtime, ...): profile a block "
            "that runs torch operations and export it with prof.export_chrome_trace(path).")

    def tracks(self) -> tuple[list[Track], dict[int, int]]:
        """The tracks in display order (CPU threads first, then GPU streams) and the renumbering."""
        ordered = sorted(self.track_keys, key=lambda k: (k[0] != "cpu", _natural(k[1]), _natural(k[2])))
        renumber = {self.track_keys[k]: n for n, k in enumerate(ordered)}
        tracks = []
        for n, (device, process, thread) in enumerate(ordered):
            if device == "gpu":
                label = f"GPU {process} stream {thread}"
            else:
                label = self.thread_names.get((process, thread)) or f"thread {thread}"
                if self.process_names.get(process) not in (None, "python", "Spans"):
                    label = f"{self.process_names[process]}: {label}"
            tracks.append(Track(n, label, device, process, thread))
        return tracks, renumber


def _from_events(raw: Iterable[object], source: str) -> Trace:
    columns = _Columns()
    for entry in raw:
        columns.read(entry)
    if not columns.start:
        raise columns.empty_error(source)
    launch = [columns.runtime_by_correlation.get(c, -1) if c is not None else -1
              for c in columns.correlation]
    tracks, renumber = columns.tracks()
    track_col = np.array([renumber[t] for t in columns.track], dtype=np.int32)
    return build(tracks, list(columns.names), columns.start, columns.duration, columns.kind,
                 track_col, columns.name, launch=launch, source=source, skipped=columns.skipped)


def _natural(text: str) -> tuple[int, object]:
    """Sort numbers as numbers, other ids after them as text."""
    try:
        return (0, int(text))
    except ValueError:
        return (1, text)


def load(path: str | os.PathLike, *, max_bytes: int = MAX_BYTES) -> Trace:
    """Read an exported Chrome/Kineto trace (``.json`` or ``.json.gz``) into a Trace.

    Refuses, with a TimelineError that says what to do: a missing file, one above
    ``max_bytes`` (about a million events per 256 MB: parsing needs ~10x that in memory),
    a cut-off or non-JSON file, JSON that is not a trace, and a trace without events.
    """
    file = Path(path)
    if not file.is_file():
        raise TimelineError(f"{file} does not exist or is not a file; export a trace with "
                            "prof.export_chrome_trace(path) first.")
    size = file.stat().st_size
    if size > max_bytes:
        raise TimelineError(
            f"{file} is {size / 2**20:.0f} MiB, above the {max_bytes / 2**20:.0f} MiB this "
            "reads by default (parsing JSON takes about 10x the file's size in memory; a "
            f"file this size holds roughly {size // 250:,} events). Profile fewer steps, e.g. "
            "schedule=torch.profiler.schedule(wait=1, warmup=1, active=1), or pass "
            "max_bytes= if this machine has the memory.")
    opener = gzip.open if file.suffix == ".gz" else open
    try:
        with opener(file, "rt", encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, EOFError, UnicodeDecodeError) as err:
        raise TimelineError(f"{file} could not be read as text ({err}); is it a trace file? "
                            "Export one with prof.export_chrome_trace(path).") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        if err.pos >= len(text.rstrip()) - 1:
            raise TimelineError(
                f"{file} stops in the middle of its JSON ({err.msg} at character {err.pos} of "
                f"{len(text)}): it was cut off, probably while the profiler was still writing "
                "it or during a copy. Export the trace again.") from None
        raise TimelineError(
            f"{file} is not JSON ({err.msg} at line {err.lineno}, column {err.colno}); "
            "timeline.load reads traces written by prof.export_chrome_trace(path).") from None
    return from_chrome(document, source=file.name)


def from_profiler(prof: object, *, save_to: str | os.PathLike | None = None,
                  max_bytes: int = MAX_BYTES) -> Trace:
    """A Trace from a finished ``torch.profiler.profile`` (use it after the ``with`` block).

    Goes through the profiler's own export (the Kineto trace), so a profile object and a
    trace file are read by the same code and give the same figures. Kineto writes a profile's
    trace only once: pass ``save_to="trace.json"`` to keep that file; later calls on the same
    profile return the Trace read the first time.
    """
    import torch.profiler

    if not isinstance(prof, torch.profiler.profile):
        raise TimelineError(f"expected a torch.profiler.profile, got {type(prof).__name__}; "
                            "for a trace file use timeline.load(path).")
    cached = getattr(prof, "_labkit_timeline", None)
    if isinstance(cached, Trace):
        if save_to is not None:
            raise TimelineError(
                "this profile's trace was already read (Kineto writes it only once), so it "
                "cannot be saved now; pass save_to= on the first timeline.from_profiler call.")
        return cached
    inner = getattr(prof, "profiler", None)
    if inner is None or getattr(inner, "kineto_results", None) is None:
        raise TimelineError(
            "this profile has not finished recording: call timeline.from_profiler(prof) after "
            "the `with torch.profiler.profile(...) as prof:` block (or after prof.stop()); "
            "with a schedule, make sure at least one step was active.")
    folder = None if save_to is not None else tempfile.mkdtemp(prefix="labkit_timeline_")
    path = Path(save_to) if save_to is not None else Path(folder) / "trace.json"
    try:
        try:
            prof.export_chrome_trace(str(path))
        except RuntimeError as err:
            if "already saved" not in str(err):
                raise
            raise TimelineError(
                "this profile was already exported with prof.export_chrome_trace (Kineto writes "
                "a trace only once): read that file with timeline.load(path).") from None
        trace = load(path, max_bytes=max_bytes)
    finally:
        if folder is not None:
            if path.exists():
                path.unlink()
            os.rmdir(folder)
    trace.source = "profile" if save_to is None else path.name
    prof._labkit_timeline = trace  # type: ignore[attr-defined]
    return trace


# --------------------------------------------------------------------------- figures, pictures
def summary(trace: Trace) -> timeline_stats.Summary:
    """The timeline's figures (see labkit.measure.timeline_stats for each definition)."""
    if not isinstance(trace, Trace):
        raise TimelineError(f"expected a timeline.Trace, got {type(trace).__name__}; read one "
                            "with timeline.load(path) or timeline.from_profiler(prof).")
    if trace._summary is None:  # computed once: the widget and the SVG both show it
        trace._summary = timeline_stats.summarize(
            trace.start_us, trace.duration_us, KINDS, trace.kind, trace.track,
            [(t.name, t.device) for t in trace.tracks], trace.names, trace.name_id,
            trace.parent)
    return trace._summary

