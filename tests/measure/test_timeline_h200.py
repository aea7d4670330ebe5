"""The H200 timeline (benchmarks/gpu_timeline.py): its copy/compute overlap, recomputed from
the raw trace JSON with plain Python, must equal what labkit.measure.timeline reports and recorded.

The recorded files live in results/h200_probes/ (timeline_trace.json, the side-stream run,
and timeline_trace_default_stream.json, with labkit's figures in timeline_summary.json);
LABKIT_TIMELINE_PROBES points elsewhere. Until the GPU run has written them those tests skip;
the independent computation itself is tested here on a made-up trace."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from labkit.measure import example_traces, timeline
from tests.paths import ROOT

PROBES = Path(os.environ.get("LABKIT_TIMELINE_PROBES", ROOT / "results" / "h200_probes"))
TRACES = {"side_stream": "timeline_trace.json",
          "default_stream": "timeline_trace_default_stream.json"}


def independent_h2d_overlap(document: dict) -> tuple[float | None, float]:
    """Share of host-to-device copy time during which a kernel runs, and the copy time (µs).

    Written from the Chrome trace format alone (no labkit, no numpy): kernels are events of
    category "kernel", H2D copies events of category "gpu_memcpy" named "Memcpy HtoD ...".
    """
    events = [e for e in document["traceEvents"] if isinstance(e, dict) and e.get("ph") == "X"]

    def spans(keep):
        return sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"]))
                      for e in events if keep(e))

    kernels = spans(lambda e: str(e.get("cat", "")).lower() == "kernel")
    copies = spans(lambda e: str(e.get("cat", "")).lower() == "gpu_memcpy"
                   and "HtoD" in str(e.get("name", "")))
    busy: list[list[float]] = []
    for start, end in kernels:
        if busy and start <= busy[-1][1]:
            busy[-1][1] = max(busy[-1][1], end)
        else:
            busy.append([start, end])
    hidden = 0.0
    for start, end in copies:
        for k_start, k_end in busy:
            if k_end <= start:
                continue
            if k_start >= end:
                break
            hidden += min(end, k_end) - max(start, k_start)
    total = sum(end - start for start, end in copies)
    return (hidden / total if total > 0 else None), total


def test_the_independent_overlap_agrees_on_a_made_up_trace():
    document = example_traces.training_trace(5, seed=11)
    share, copy_us = independent_h2d_overlap(document)
    summary = timeline.summary(timeline.from_chrome(document))
    assert 0 < share < 1
    assert summary.h2d_overlap_share == pytest.approx(share, abs=1e-6)
    assert summary.h2d_copy_us == pytest.approx(copy_us, abs=1e-6)
    # Kineto's timestamps are absolute (about 5e12 µs): the same figures there.
    shifted = {"traceEvents": [{**e, "ts": e["ts"] + 5_178_808_237_764.175} if "ts" in e else e
                               for e in document["traceEvents"]]}
    far_share, far_copy_us = independent_h2d_overlap(shifted)
    far = timeline.summary(timeline.from_chrome(shifted))
    assert far.h2d_overlap_share == pytest.approx(far_share, abs=1e-4)
    assert far.h2d_overlap_share == pytest.approx(share, abs=1e-4)
    assert far.h2d_copy_us == pytest.approx(far_copy_us, rel=1e-5)
    # And with no kernel over the copies: 0, and no copies at all: no figure.
    quiet = {"traceEvents": [e for e in document["traceEvents"] if e.get("cat") != "kernel"]}
    assert independent_h2d_overlap(quiet)[0] == 0
    none = {"traceEvents": [e for e in document["traceEvents"] if e.get("cat") != "gpu_memcpy"]}
    assert independent_h2d_overlap(none)[0] is None


def recorded(name: str) -> Path:
    path = PROBES / name
    if not path.exists():
        pytest.skip(f"{path} is not there yet: run `python3 benchmarks/gpu_timeline.py "
                    f"{PROBES}` on the GPU machine")
    return path


@pytest.mark.parametrize("way", list(TRACES))
def test_recorded_overlap_equals_labkits(way):
    path = recorded(TRACES[way])
    document = json.loads(path.read_text())
    share, copy_us = independent_h2d_overlap(document)
    summary = timeline.summary(timeline.load(path))
    assert copy_us > 0, "the GPU run recorded no host-to-device copy"
    # The plain computation works on absolute timestamps (~1e12 µs, where float64 steps by
    # ~0.001 µs); labkit on times from the trace's start. They agree to that step per copy.
    assert summary.h2d_copy_us == pytest.approx(copy_us, rel=1e-5)
    assert summary.h2d_overlap_share == pytest.approx(share, abs=1e-4)
    figures = json.loads(recorded("timeline_summary.json").read_text())["runs"][way]
    assert figures["trace"] == TRACES[way]
    assert figures["h2d_overlap_share"] == pytest.approx(share, abs=1e-4)


def test_recorded_side_stream_run_has_kernels_and_copies_on_separate_streams():
    trace = timeline.load(recorded(TRACES["side_stream"]))
    kernel_tracks = {e.track for e in trace.events("kernel")}
    copy_tracks = {e.track for e in trace.events("memcpy_h2d")}
    assert kernel_tracks and copy_tracks and copy_tracks - kernel_tracks
    for copy in trace.events("memcpy_h2d"):
        assert copy.launched_by >= 0  # every copy links back to the op that issued it
