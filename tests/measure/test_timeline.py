"""The timeline's data model and readers: a made-up GPU trace checked against what its raw
JSON says, real profiles recorded on this CPU (threads as tracks), bad input, the static SVG,
the widget's view-model (thinning), and a cross-check with Holistic Trace Analysis."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import threading

import numpy as np
import pytest
import torch
import traitlets

from labkit.measure import example_traces, timeline, timeline_stats
from labkit.show import timeline_figure
from labkit.show.widgets import timeline as timeline_widget


@pytest.fixture(scope="module")
def gpu_document():
    return example_traces.training_trace(4, seed=3)


@pytest.fixture(scope="module")
def gpu_trace(gpu_document):
    return timeline.from_chrome(gpu_document, source="synthetic")


def quiet_profile(fn, **options):
    """Profile fn() on the CPU, hiding Kineto's start/stop lines."""
    with contextlib.redirect_stderr(io.StringIO()), torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU], **options) as prof:
        fn()
    return prof


def small_training_step():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(8 * 14 * 14, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 3, 16, 16)

    def step():
        for _ in range(2):
            model(x).square().mean().backward()
            optimizer.step()
            optimizer.zero_grad()
    return step


# --------------------------------------------------------------------------- the model
def test_tracks_and_kinds_of_a_gpu_trace(gpu_trace):
    names = [t.name for t in gpu_trace.tracks]
    assert names == ["thread 4242 (python)", "GPU 0 stream 7", "GPU 0 stream 20"]
    assert [t.device for t in gpu_trace.tracks] == ["cpu", "gpu", "gpu"]
    counts = {k: len(gpu_trace.events(k)) for k in timeline.KINDS}
    steps, per_step = 4, len(example_traces._STEP)
    assert counts["kernel"] == steps * per_step
    assert counts["memcpy_h2d"] == steps
    assert counts["runtime"] == steps * (per_step + 1)
    assert counts["sync"] == steps
    assert counts["cpu_op"] == steps * (per_step + 2)  # ops, the copy, ProfilerStep
    assert gpu_trace.has_gpu
    assert gpu_trace.start_us.min() == 0
    # Sorted by track, then start.
    assert np.all(np.diff(gpu_trace.track) >= 0)
    for t in range(len(gpu_trace.tracks)):
        assert np.all(np.diff(gpu_trace.start_us[gpu_trace.track == t]) >= 0)


def test_each_kernel_links_to_the_op_that_launched_it(gpu_document, gpu_trace):
    """The links, recomputed from the raw JSON: correlation -> runtime call -> the op around it."""
    raw = [e for e in gpu_document["traceEvents"] if e.get("ph") == "X"]
    runtime = {e["args"]["correlation"]: e for e in raw if e["cat"] == "cuda_runtime"}
    ops = [e for e in raw if e["cat"] == "cpu_op"]
    expected = []
    for e in sorted((e for e in raw if e["cat"] in ("kernel", "gpu_memcpy")),
                    key=lambda e: e["ts"]):
        call = runtime[e["args"]["correlation"]]
        around = [o for o in ops if o["ts"] <= call["ts"] and
                  call["ts"] + call["dur"] <= o["ts"] + o["dur"]]
        innermost = min(around, key=lambda o: o["dur"])
        expected.append((e["name"], innermost["name"], call["name"]))
    got = []
    gpu_events = [e for e in gpu_trace.events() if e.kind in timeline.GPU_KINDS]
    for e in sorted(gpu_events, key=lambda e: e.start_us):
        got.append((e.name, gpu_trace.event(e.launched_by).name, gpu_trace.event(e.launch).name))
    assert got == expected
    kernel = gpu_trace.events("kernel")[0]
    text = gpu_trace.describe(kernel.index)
    assert "launched by aten::conv2d" in text and "through cudaLaunchKernel" in text


def test_nesting_on_the_cpu_thread(gpu_trace):
    step = next(e for e in gpu_trace.events("cpu_op") if e.name.startswith("ProfilerStep"))
    assert step.depth == 0 and step.parent == -1
    launch = next(e for e in gpu_trace.events("runtime") if e.name == "cudaLaunchKernel")
    op = gpu_trace.event(launch.parent)
    assert op.kind == "cpu_op" and op.start_us <= launch.start_us and launch.end_us <= op.end_us
    assert launch.depth == op.depth + 1


def test_load_reads_json_and_gzip_the_same(tmp_path, gpu_document, gpu_trace):
    plain = tmp_path / "trace.json"
    plain.write_text(json.dumps(gpu_document))
    packed = tmp_path / "trace.json.gz"
    with gzip.open(packed, "wt") as handle:
        json.dump(gpu_document, handle)
    for path in (plain, packed):
        trace = timeline.load(path)
        assert np.array_equal(trace.start_us, gpu_trace.start_us)
        assert trace.names == gpu_trace.names
        assert timeline.summary(trace).figures() == timeline.summary(gpu_trace).figures()


def test_summary_of_the_synthetic_trace_against_the_raw_json(gpu_document, gpu_trace):
    """GPU busy share and H2D overlap, recomputed from the raw events with plain Python."""
    raw = [e for e in gpu_document["traceEvents"] if e.get("ph") == "X"]
    kernels = sorted((e["ts"], e["ts"] + e["dur"]) for e in raw if e["cat"] == "kernel")
    copies = [(e["ts"], e["ts"] + e["dur"]) for e in raw if e["cat"] == "gpu_memcpy"]
    work = sorted(kernels + copies)
    merged = []
    for a, b in work:
        if merged and a <= merged[-1][1] + 1e-6:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    busy = sum(b - a for a, b in merged)
    span = merged[-1][1] - merged[0][0]
    hidden = sum(max(0.0, min(b, kb) - max(a, ka)) for a, b in copies for ka, kb in kernels)
    s = timeline.summary(gpu_trace)
    assert s.gpu_busy_share == pytest.approx(busy / span, abs=1e-6)
    assert s.h2d_overlap_share == pytest.approx(hidden / sum(b - a for a, b in copies), abs=1e-6)
    assert s.kernels == len(kernels)
    assert set(s.kind_shares) == set(timeline_stats.CLASSES)
    assert sum(s.kind_shares.values()) == pytest.approx(1.0)


# --------------------------------------------------------------------------- real CPU profiles
@pytest.fixture(scope="module")
def cpu_export(tmp_path_factory):
    """A real profile of two training steps on this CPU: its Trace and its exported file."""
    path = tmp_path_factory.mktemp("cpu") / "cpu.json"
    prof = quiet_profile(small_training_step())
    trace = timeline.from_profiler(prof, save_to=path)
    assert timeline.from_profiler(prof) is trace  # read once, kept
    return trace, path


def test_a_real_cpu_profile(cpu_export):
    trace, path = cpu_export
    assert not trace.has_gpu and len(trace) > 50
    assert {t.device for t in trace.tracks} == {"cpu"}
    assert "aten::addmm" in trace.names or "aten::mm" in trace.names
    s = timeline.summary(trace)
    assert s.device == "cpu" and s.gpu_busy_share is None
    assert s.kind_shares[timeline_stats.GEMM_CONV] > 0.1  # conv and linear dominate
    # The exported file reads to the same figures as the profile object.
    assert timeline.summary(timeline.load(path)).figures() == s.figures()
    # Busy time per thread, recomputed from the raw JSON.
    raw = [e for e in json.loads(path.read_text())["traceEvents"]
           if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]
    for usage, track in zip(s.tracks, trace.tracks, strict=True):
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in raw
                       if str(e["tid"]) == track.thread and str(e["pid"]) == track.process)
        merged = []
        for a, b in spans:
            if merged and a <= merged[-1][1] + 1e-6:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        # Raw timestamps are ~1e12 µs, where a float64 step is ~0.001 µs: allow that per span.
        assert usage.busy_us == pytest.approx(sum(b - a for a, b in merged),
                                              abs=2e-3 * len(spans))
        assert usage.events == len(spans)


def test_threads_become_tracks():
    def two_threads():
        worker = threading.Thread(target=lambda: torch.randn(256, 256) @ torch.randn(256, 256))
        worker.start()
        torch.randn(128, 128).relu()
        worker.join()

    # The profiler records the thread that started it, and others only when asked to.
    try:
        config = torch._C._profiler._ExperimentalConfig(profile_all_threads=True)
    except (AttributeError, TypeError):
        pytest.skip("this torch cannot profile every thread (profile_all_threads)")
    trace = timeline.from_profiler(quiet_profile(two_threads, experimental_config=config))
    assert len(trace.tracks) >= 2
    assert len({t.thread for t in trace.tracks}) == len(trace.tracks)
    mm = next(e for e in trace.events("cpu_op") if e.name in ("aten::mm", "aten::matmul"))
    relu = next(e for e in trace.events("cpu_op") if e.name == "aten::relu")
    assert mm.track != relu.track


# --------------------------------------------------------------------------- bad input
def test_empty_profile_says_what_to_do():
    prof = quiet_profile(lambda: None)
    with pytest.raises(timeline.TimelineError, match="no event|holds no events"):
        timeline.from_profiler(prof)


def test_unfinished_profile_and_wrong_object():
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
    with pytest.raises(timeline.TimelineError, match="not finished"):
        timeline.from_profiler(prof)
    with pytest.raises(timeline.TimelineError, match="expected a torch.profiler.profile"):
        timeline.from_profiler("trace.json")
    with pytest.raises(timeline.TimelineError, match="expected a timeline.Trace"):
        timeline.summary({"traceEvents": []})


def test_a_profile_exported_before_says_to_load_the_file(tmp_path):
    prof = quiet_profile(lambda: torch.ones(3).add(1))
    prof.export_chrome_trace(str(tmp_path / "mine.json"))
    with pytest.raises(timeline.TimelineError, match="already exported .*timeline.load"):
        timeline.from_profiler(prof)
    assert len(timeline.load(tmp_path / "mine.json")) >= 1


def test_a_trace_without_gpu_events_is_a_cpu_timeline(cpu_export):
    s = timeline.summary(cpu_export[0])
    assert any("No GPU events" in note for note in s.notes)
    assert "GPU busy" not in dict(s.lines())


@pytest.mark.parametrize(("content", "message"), [
    ('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur"',
     "stops in the middle"),
    ("this is not json", "is not JSON"),
    ('{"nodes": [], "links": []}', "no 'traceEvents' list .*nodes"),
    ("[1, 2, 3]", "no event labkit can place"),
    ('"a string"', "top level is a str"),
    ('{"traceEvents": []}', "holds no events"),
    ('{"traceEvents": [{"ph": "B", "name": "a", "ts": 1}, {"ph": "E", "ts": 2}]}',
     "no event labkit can place .*phase 'B'"),
    ('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": "soon", "dur": 1}]}',
     "no valid ts/dur"),
])
def test_bad_files_get_a_clear_message(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(timeline.TimelineError, match=message):
        timeline.load(path)


def test_missing_huge_and_binary_files(tmp_path):
    with pytest.raises(timeline.TimelineError, match="does not exist"):
        timeline.load(tmp_path / "nowhere.json")
    big = tmp_path / "big.json"
    big.write_text('{"traceEvents": []}' + " " * 5000)
    with pytest.raises(timeline.TimelineError, match="above the 0 MiB .*max_bytes"):
        timeline.load(big, max_bytes=1000)
    binary = tmp_path / "trace.json.gz"
    binary.write_bytes(b"\x00\x01 not gzip")
    with pytest.raises(timeline.TimelineError, match="could not be read"):
        timeline.load(binary)


def test_a_cut_off_real_trace(tmp_path, gpu_document):
    text = json.dumps(gpu_document)
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) * 2 // 3])
    with pytest.raises(timeline.TimelineError, match="cut off"):
        timeline.load(path)


def test_build_refuses_inconsistent_columns():
    track = [timeline.Track(0, "t", "cpu", "1", "1")]
    with pytest.raises(timeline.TimelineError, match="different lengths"):
        timeline.build(track, ["a"], [0, 1], [1], [5], [0], [0])
    with pytest.raises(timeline.TimelineError, match="finite number >= 0"):
        timeline.build(track, ["a"], [0], [-1], [5], [0], [0])
    with pytest.raises(timeline.TimelineError, match="must index the 1 tracks"):
        timeline.build(track, ["a"], [0], [1], [5], [3], [0])


# --------------------------------------------------------------------------- pictures
def test_svg_is_deterministic_and_shows_every_lane(gpu_trace):
    svg = timeline_figure.to_svg(gpu_trace)
    assert svg == timeline_figure.to_svg(timeline.from_chrome(example_traces.training_trace(4, seed=3),
                                                       source="synthetic"))
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    for track in gpu_trace.tracks:
        assert f">{track.name}</text>" in svg
    assert timeline_figure.KIND_COLOURS["memcpy_h2d"] in svg
    assert "H2D copies hidden behind kernels" in svg
    part = timeline_figure.to_svg(gpu_trace, window=(0.0, 50.0), summary=False)
    assert "GPU busy" not in part and part != svg


def test_pixel_runs_merge_touching_bars_of_one_kind():
    start = np.array([0.0, 1.0, 5.0, 0.0])
    end = np.array([1.0, 2.0, 6.0, 10.0])
    row = np.array([0, 0, 0, 1])
    kind = np.array([0, 0, 0, 5])
    runs = timeline_figure.pixel_runs(start, end, row, kind, 0.0, 10.0, 10)
    assert runs == [(0, 0, 0, 2), (0, 0, 5, 6), (1, 5, 0, 10)]
    # An event shorter than a pixel still shows as one pixel.
    assert timeline_figure.pixel_runs(np.array([3.0]), np.array([3.0001]), np.array([0]),
                                       np.array([0]), 0.0, 10.0, 10) == [(0, 0, 3, 4)]


# --------------------------------------------------------------------------- the widget's model
def test_window_view_sends_every_event_when_few(gpu_trace):
    view = timeline_widget.window_view(gpu_trace, 0.0, gpu_trace.end_us)
    assert view["exact"] and view["count"].sum() == len(gpu_trace)
    assert sorted(view["index"].tolist()) == list(range(len(gpu_trace)))
    kernel = gpu_trace.events("kernel")[0]
    at = int(np.flatnonzero(view["index"] == kernel.index)[0])
    assert view["names"][view["launcher_name"][at]] == gpu_trace.event(kernel.launched_by).name
    assert view["launcher"][at] == kernel.launched_by
    # Sorted by row, then start: what the page's binary search needs.
    order = np.lexsort((view["start"], view["row"]))
    assert np.array_equal(order, np.arange(order.size))


def test_window_view_thins_a_big_trace_and_keeps_every_event_counted():
    trace = timeline.from_chrome(example_traces.training_trace(150))
    view = timeline_widget.window_view(trace, 0.0, trace.end_us, max_bars=1000, bins=200)
    assert not view["exact"]
    assert len(view["start"]) <= 1000 + 200 * 8  # exact long ones + one bar per row and bin
    assert view["count"].sum() == len(trace)  # every event drawn, alone or in a bar
    aggregated = view["count"] > 1
    assert aggregated.any() and np.all(view["index"][aggregated] == -1)
    # Zoomed in, the same trace is exact again.
    small = timeline_widget.window_view(trace, 100.0, 400.0, max_bars=1000)
    assert small["exact"] and small["count"].max() == 1


def test_two_million_events_become_a_thinned_view():
    n = 2_000_000
    rng = np.random.default_rng(0)
    track = np.repeat(np.arange(4), n // 4)
    start = np.concatenate([np.cumsum(rng.exponential(5.0, n // 4)) for _ in range(4)])
    tracks = [timeline.Track(i, f"lane {i}", "gpu" if i >= 2 else "cpu", "0", str(i))
              for i in range(4)]
    kind = np.where(track >= 2, 0, 5)
    trace = timeline.build(tracks, ["op", "kernel"], start, rng.exponential(2.0, n), kind, track,
                           (kind == 0).astype(int), nest=False)
    widget = timeline_widget.Timeline(trace, max_bars=50_000)
    assert not widget.exact
    assert len(widget._starts) // 8 <= 50_000
    assert "merged into hatched bars" in widget.notice
    assert len(timeline_figure.to_svg(trace)) < 200_000
    widget.view_request = {"seq": 1, "t0": 1000.0, "t1": 1200.0}
    assert widget.exact and 0 < len(widget._starts) // 8 < 1000


def test_widget_state_selection_and_static_picture(gpu_trace):
    widget = timeline_widget.Timeline(gpu_trace, title="demo")
    assert isinstance(widget, timeline_widget.Timeline)
    assert [lane["name"] for lane in widget.lanes] == [t.name for t in gpu_trace.tracks]
    assert dict(widget.summary_lines)["GPU idle"].endswith("%")
    kernel = gpu_trace.events("kernel")[3]
    widget.selected = kernel.index
    assert widget.selected_text == gpu_trace.describe(kernel.index)
    assert "launched by" in widget.selected_text
    with pytest.raises(traitlets.TraitError, match="no such event"):
        widget.selected = len(gpu_trace)
    data, _ = widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["image/svg+xml"] == timeline_figure.to_svg(gpu_trace, title="demo")
    assert data["text/plain"] == repr(widget)
    assert repr(widget).startswith("Timeline of Trace:")


def test_widget_refuses_what_it_cannot_draw():
    with pytest.raises(timeline.TimelineError, match="labkit.measure.timeline.Trace"):
        timeline_widget.Timeline({"traceEvents": []})
    empty = timeline.build([timeline.Track(0, "t", "cpu", "1", "1")], ["a"], [], [], [], [], [])
    with pytest.raises(timeline.TimelineError, match="no events to draw"):
        timeline_widget.Timeline(empty)


# --------------------------------------------------------------------------- Holistic Trace Analysis
def hta_analysis(document, tmp_path, **options):
    hta = pytest.importorskip("hta.trace_analysis")
    folder = tmp_path / "hta"
    folder.mkdir()
    (folder / "rank-0.json").write_text(json.dumps({**document, "distributedInfo": {"rank": 0}}))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return hta.TraceAnalysis(trace_dir=str(folder), **options)
        except TypeError as err:  # HTA 0.5 assigns ints into an int8 column: pandas 3 refuses
            pytest.skip(f"Holistic Trace Analysis cannot parse with this pandas ({err!s:.80}); "
                        "it needs pandas < 3")


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_gpu_idle_share_agrees_with_holistic_trace_analysis(tmp_path):
    # Whole microseconds: HTA rounds times down to them, which would open 1 µs gaps.
    document = example_traces.training_trace(6, seed=5, decimals=0)
    analysis = hta_analysis(document, tmp_path, include_last_profiler_step=True)
    row = analysis.get_temporal_breakdown(visualize=False).iloc[0]
    s = timeline.summary(timeline.from_chrome(document))
    assert s.window_us == pytest.approx(row["kernel_time(us)"])
    assert s.gpu_idle_share == pytest.approx(row["idle_time(us)"] / row["kernel_time(us)"],
                                             abs=1e-9)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_cpu_events_agree_with_holistic_trace_analysis(cpu_export, tmp_path):
    """HTA parses the same real CPU trace: same operators, same durations, per thread."""
    path = cpu_export[1]
    document = json.loads(path.read_text())
    analysis = hta_analysis(document, tmp_path, include_last_profiler_step=True)
    frame = analysis.t.get_trace(0)
    symbols = analysis.t.symbol_table.get_sym_table()
    frame = frame[frame["stream"].eq(-1)]
    categories = frame["cat"].map(lambda c: symbols[c])
    ops = frame[categories.isin(["cpu_op", "user_annotation"])]
    trace = timeline.load(path)
    ours = sorted((e.name, round(e.duration_us)) for e in trace.events("cpu_op"))
    theirs = sorted((symbols[n], int(d)) for n, d in zip(ops["name"], ops["dur"], strict=True))
    assert len(ours) == len(theirs)
    # HTA rounds start and end down to whole microseconds; ours keep the nanoseconds.
    mismatched = [(a, b) for a, b in zip(ours, theirs, strict=True)
                  if a[0] != b[0] or abs(a[1] - b[1]) > 2]
    assert not mismatched
