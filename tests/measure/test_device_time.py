"""Device time beside wall time (labkit.measure.device_time): the arithmetic on a real H200
trace and on a made-up one, and the CPU path that says there is no device time."""

import json

import pytest
import torch

from labkit.measure import bench, conditions, device_time, example_traces, timeline
from tests.paths import ROOT

H200_TRACE = ROOT / "results" / "h200_probes" / "timeline_trace.json"
GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


def union_by_hand(events):
    """The union of GPU work intervals, computed without labkit: sort, sweep, add."""
    spans = sorted((float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in events
                   if e.get("cat") in GPU_CATEGORIES and e.get("ph") == "X")
    total, reach = 0.0, -float("inf")
    for start, end in spans:
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


def test_busy_time_of_the_recorded_h200_trace_is_the_union_of_its_gpu_work():
    if not H200_TRACE.exists():
        pytest.skip("no recorded H200 trace")
    raw = json.loads(H200_TRACE.read_text())
    events = raw["traceEvents"] if isinstance(raw, dict) else raw
    trace = timeline.load(H200_TRACE)
    busy = device_time.busy_us(trace)
    assert busy == pytest.approx(union_by_hand(events), rel=1e-6)
    d = device_time.from_trace(trace, calls=2)
    span = trace.end_us - float(trace.start_us.min())
    assert d.wall_s == pytest.approx(span * 1e-6 / 2)
    assert d.device_busy_s == pytest.approx(busy * 1e-6 / 2)
    assert d.idle_share == pytest.approx(1 - busy / span)
    assert d.host_bound == (d.idle_share > device_time.HOST_BOUND_IDLE_SHARE)


def test_host_bound_follows_the_stated_share():
    trace = timeline.from_chrome(example_traces.training_trace(3))
    busy = device_time.busy_us(trace)
    idle_half = device_time.from_trace(trace, wall_us=2 * busy)
    assert idle_half.idle_share == pytest.approx(0.5) and idle_half.host_bound
    nearly_busy = device_time.from_trace(trace, wall_us=busy / 0.9)
    assert nearly_busy.idle_share == pytest.approx(0.1) and nearly_busy.host_bound is False
    assert device_time.from_trace(trace, wall_us=busy / 0.9, threshold=0.05).host_bound
    assert "host-bound" in str(idle_half) and "device-bound" in str(nearly_busy)


def test_example_trace_busy_time_matches_the_hand_computation():
    raw = example_traces.training_trace(4)
    trace = timeline.from_chrome(raw)
    assert device_time.busy_us(trace) == pytest.approx(union_by_hand(raw["traceEvents"]), rel=1e-9)


def test_bad_inputs_are_refused_with_a_reason():
    trace = timeline.from_chrome(example_traces.training_trace(1))
    with pytest.raises(ValueError, match="between 0 and 1"):
        device_time.from_trace(trace, threshold=30)
    with pytest.raises(ValueError, match="calls"):
        device_time.from_trace(trace, calls=0)
    with pytest.raises(ValueError, match="wall time"):
        device_time.from_trace(trace, wall_us=0)
    with pytest.raises(TypeError, match="function"):
        bench.device_time(3)


def test_on_the_cpu_device_time_is_none_and_says_so():
    x = torch.randn(256, 256)
    d = bench.device_time(lambda: x @ x, calls=3, warmup=1)
    assert d.device == "cpu" and d.device_busy_s is None and d.idle_share is None
    assert d.host_bound is None and d.wall_s > 0 and "not measured" in d.note
    assert "n/a" in str(d) and d.as_dict()["device_busy_s"] is None


def test_a_models_device_is_read_from_its_parameters():
    net = torch.nn.Linear(4, 4)
    found = conditions.tensors_used_by(lambda: net, ())
    assert found and found[0].device.type == "cpu"


def test_interleaved_rounds_on_a_cpu_have_no_device_time():
    from labkit.measure import device_time as dt

    found = dt.interleaved({"a": lambda: sum(range(100)), "b": lambda: sum(range(200))}, rounds=2,
                           calls=3, warmup=0)
    assert [len(v) for v in found.values()] == [2, 2]
    assert dt.busy_ratios(found["a"], found["b"]) == []
    assert dt.summary(found["a"])["device_busy_s"] is None
    with pytest.raises(ValueError, match="rounds must be"):
        dt.interleaved({"a": lambda: None}, rounds=0)
    with pytest.raises(ValueError, match="rounds"):
        dt.busy_ratios(found["a"], found["b"][:1])


def test_busy_ratios_are_taken_round_by_round():
    from labkit.measure import device_time as dt

    def rounds(*busy):
        return [dt.DeviceTime("x", "cuda", 10, 1e-2, b, 1 - b / 1e-2, (1 - b / 1e-2) > 0.3)
                for b in busy]

    slow, fast = rounds(4e-3, 5e-3, 4.5e-3), rounds(2e-3, 2.5e-3, 3e-3)
    assert dt.busy_ratios(slow, fast) == pytest.approx([2.0, 2.0, 1.5])
    assert dt.summary(slow) == pytest.approx({"wall_s": 1e-2, "device_busy_s": 4.5e-3,
                                              "idle_share": 0.55, "host_bound": True,
                                              "threshold": 0.3, "rounds": 3})


# ------------------------------------------------------------------ the unprofiled idle (08's rule)

def test_the_unprofiled_idle_is_one_minus_device_over_wall():
    assert device_time.unprofiled_idle(9.11e-3, 9.46e-3) == pytest.approx(1 - 9.11 / 9.46)
    assert device_time.unprofiled_idle(11e-3, 10e-3) == 0.0  # never negative
    assert device_time.unprofiled_idle(None, 10e-3) is None
    assert device_time.unprofiled_idle(1e-3, 0.0) is None


def test_unprofiled_wall_seconds_gives_one_figure_per_round_on_a_cpu():
    calls = []
    walls = device_time.unprofiled_wall_seconds(lambda: calls.append(1), "cpu", batches=4, rounds=3)
    assert len(walls) == 3 and all(w >= 0 for w in walls) and len(calls) == 1 + 3 * 4
    with pytest.raises(ValueError, match="batches"):
        device_time.unprofiled_wall_seconds(lambda: None, "cpu", batches=0)
