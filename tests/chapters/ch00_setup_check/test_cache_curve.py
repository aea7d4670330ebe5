"""The cache curve repeats each point's work inside one call (review 2026-12-04k item 5: one copy a
call made everything left of the last-level cache per-call cost), prices the call's share, and says
which levels show a step. The GPU path (a CUDA Graph of k copies) is checked here for its structure,
sizes and fallbacks only, with bench.time stood in for; its text on the points the H200 recorded."""

from types import SimpleNamespace

import pytest
import torch

from labkit.chapters.ch00_setup_check import pitfalls
from labkit.measure import bench

KiB, MiB = 2**10, 2**20


def test_repeats_fill_a_call_and_respect_the_cap():
    assert pitfalls.repeats_for(4 * KiB, 8 * MiB) == 2048
    assert pitfalls.repeats_for(64 * MiB, 8 * MiB) == 1  # at least one pass
    assert pitfalls.repeats_for(64 * KiB, 256 * MiB, pitfalls.GPU_MAX_COPIES) == pitfalls.GPU_MAX_COPIES
    with pytest.raises(ValueError):
        pitfalls.repeats_for(0, 8 * MiB)


def test_repeated_copy_copies_k_times_in_one_call():
    calls = []
    dst = SimpleNamespace(copy_=lambda src: calls.append(src))
    run = pitfalls.repeated_copy("src", dst, 5)
    assert calls == []  # building it copies nothing: the graph captures the call
    run()
    assert calls == ["src"] * 5
    with pytest.raises(ValueError):
        pitfalls.repeated_copy("src", dst, 0)


def test_cpu_points_repeat_inside_one_call_so_the_call_is_a_small_share():
    points = pitfalls.cache_curve(64 * KiB, min_bytes=4 * KiB, device="cpu", rep_ms=2)
    assert [p["working_set_bytes"] for p in points] == [4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB]
    for p in points:
        assert p["op"] == "read" and not p["graph"]
        assert p["repeats"] * p["working_set_bytes"] >= pitfalls.CPU_BYTES_PER_CALL
        # one 2 KiB copy a call read 100% call overhead here; the repeated read, a few percent
        assert p["overhead_share"] is not None and p["overhead_share"] <= pitfalls.OVERHEAD_BOUND


def _fake_time(fail_graph: bool, asked: list):
    def fake(fn, *args, mode="cold", bytes_moved=None, label=None, **kw):
        asked.append({"mode": mode, "bytes_moved": bytes_moved, "label": label})
        if mode == "graph" and fail_graph:
            raise RuntimeError("cannot capture")
        return SimpleNamespace(median_s=1e-4, iqr_s=1e-6, gbps=(bytes_moved or 0) / 1e-4 / 1e9)
    return fake


def test_gpu_point_is_one_graph_of_k_copies_with_the_floor_share(monkeypatch):
    asked: list = []
    monkeypatch.setattr(bench, "time", _fake_time(False, asked))
    src = torch.ones(64 * KiB // 4)  # 64 KiB source: a 128 KiB working set
    point = pitfalls._gpu_point(src, torch.empty_like(src), floor_s=5e-8, rep_ms=1)
    copies = pitfalls.GPU_MAX_COPIES  # 256 MiB / 128 KiB = 2,048, capped
    assert asked == [{"mode": "graph", "bytes_moved": copies * 128 * KiB, "label": asked[0]["label"]}]
    assert point["working_set_bytes"] == 128 * KiB and point["repeats"] == copies and point["graph"]
    assert point["op"] == "copy"
    assert point["overhead_share"] == pytest.approx(copies * 5e-8 / 1e-4)


def test_a_gpu_point_of_one_copy_a_graph_is_timed_as_a_plain_copy(monkeypatch):
    """Review 2026-12-06b item 3: the 1 GiB copy replayed in a graph drew a DRAM cliff (2,750
    GB/s) the same copy without one does not have (4,157): a point whose one copy moves the
    graph's bytes is timed as one plain copy a call, and the recorded probe of the graph replay
    no longer explains it."""
    asked: list = []
    monkeypatch.setattr(bench, "time", _fake_time(False, asked))
    src = torch.ones(1)
    src = src.expand(pitfalls.GPU_BYTES_PER_GRAPH // 2 // 4)  # a 256 MiB working set, no memory
    point = pitfalls._gpu_point(src, src, floor_s=5e-8, rep_ms=1)
    assert [a["mode"] for a in asked] == ["hot"]
    assert point["repeats"] == 1 and not point["graph"]
    assert point["overhead_share"] == pytest.approx(5e-8 / 1e-4)
    top = {"working_set_bytes": 1 << 30, "gbps": 2750.0, "graph": False, "overhead_share": 0.0}
    other = {"working_set_bytes": 256 << 20, "gbps": 4200.0, "graph": False, "overhead_share": 0.0}
    line = pitfalls._largest_point_anomaly([other, top], {"L2": 60 << 20}, top, probe=None)
    assert line.endswith("its own anomaly, not memory's rate")


def test_gpu_point_falls_back_to_one_copy_a_call(monkeypatch):
    asked: list = []
    monkeypatch.setattr(bench, "time", _fake_time(True, asked))
    src = torch.ones(1024)
    point = pitfalls._gpu_point(src, torch.empty_like(src), floor_s=None, rep_ms=1)
    assert [a["mode"] for a in asked] == ["graph", "hot"]
    assert point["repeats"] == 1 and not point["graph"] and point["overhead_share"] is None
    assert pitfalls._gpu_floor_s(torch.device("cpu"), rep_ms=1) is None  # no graph: no floor


def _points(gbps_by_size: dict, share: float = 0.02, op: str = "read") -> list[dict]:
    return [{"working_set_bytes": s, "gbps": g, "repeats": 8, "overhead_share": share, "graph": op == "copy",
             "op": op} for s, g in gbps_by_size.items()]


LEVELS = {"L1": 32 * KiB, "L2": 512 * KiB, "L3": 32 * MiB}


def test_steps_read_each_level_inside_against_beyond():
    flat_l2 = {4 * KiB: 140, 16 * KiB: 140, 64 * KiB: 60, 256 * KiB: 60, 1 * MiB: 58, 16 * MiB: 58,
               64 * MiB: 5, 128 * MiB: 5}
    steps = {s["level"]: s for s in pitfalls.cache_steps(_points(flat_l2), LEVELS)}
    assert steps["L1"]["shows"] and steps["L3"]["shows"] and steps["L2"]["shows"] is False
    assert steps["L1"]["inside_gbps"] == 140 and steps["L1"]["beyond_gbps"] == 60
    text = pitfalls.cache_curve_text({"points": _points(flat_l2), "levels": LEVELS})
    assert "L1 140 -> 60, step" in text and "L2 60 -> 58, no step" in text
    assert "Only the last-level edge" not in text  # L1 showed


def test_only_the_last_level_edge_is_said_when_no_inner_step_shows():
    flat = {4 * KiB: 60, 16 * KiB: 60, 64 * KiB: 60, 256 * KiB: 60, 1 * MiB: 58, 16 * MiB: 58,
            64 * MiB: 5, 128 * MiB: 5}
    text = pitfalls.cache_curve_text({"points": _points(flat), "levels": LEVELS})
    assert "Only the last-level edge is visible: streaming reads are prefetched" in text
    gpu = pitfalls.cache_curve_text({"points": _points({64 * KiB: 900, 8 * MiB: 6000, 16 * MiB: 6100,
                                                        256 * MiB: 4200, 1024 * MiB: 4200}, op="copy"),
                                     "levels": {"L2": 60 * MiB}})
    assert "Inside -> beyond (GB/s, fastest): L2 6,100 -> 4,200, step." in gpu
    assert "Only the last-level edge is visible: a graph removes launches" in gpu


def test_overhead_bound_points_are_left_out_of_the_steps():
    # the small points are fast only because nothing else was priced: with their call cost
    # over half the median they must not make a step
    points = _points({4 * KiB: 10, 16 * KiB: 10}, share=0.9) + _points({64 * KiB: 60, 256 * KiB: 60})
    steps = {s["level"]: s for s in pitfalls.cache_steps(points, LEVELS)}
    assert steps["L1"]["inside_gbps"] is None and steps["L1"]["shows"] is None
    text = pitfalls.cache_curve_text({"points": points, "levels": LEVELS})
    # review 2026-12-05u 00-04 item 10: the grey line said in words, not 'Call cost ≤90% of a point (grey)'
    assert text.startswith("The grey line: the call's own share of each point (at most 90%); "
                           "points over half (up to 16 KiB) are drawn but not read.")
    assert "L1 too few points" in text and "Call cost ≤" not in text


def test_a_record_of_one_copy_a_call_says_so():
    old = [{"working_set_bytes": 64 * KiB, "gbps": 30.0, "median_s": 1e-5, "iqr_s": 1e-7}]
    said = pitfalls.cache_curve_text({"points": old, "levels": {"L2": 60 * MiB}})
    assert said == "Recorded one copy a call: left of the L2 line, per-copy cost."


def test_the_plot_names_what_was_measured():
    read = pitfalls.plot_cache_curve(_points({4 * KiB: 100}), {"L1": 32 * KiB}, "t")
    copy = pitfalls.plot_cache_curve(_points({4 * KiB: 100}, op="copy"), {"L2": 60 * MiB}, "t")
    assert read.axes[0].get_ylabel() == "read bandwidth, GB/s"
    assert copy.axes[0].get_ylabel().startswith("copy bandwidth")
    assert read.axes[1].get_ylabel().startswith("call cost")  # each point's call share, right axis
    assert [round(y) for y in read.axes[1].lines[0].get_ydata()] == [2]
    old = pitfalls.plot_cache_curve([{"working_set_bytes": 4 * KiB, "gbps": 1.0}], {"L2": 60 * MiB}, "t")
    assert len(old.axes) == 1  # a record without shares: no share axis


def test_each_cpu_point_keeps_its_fastest_round(monkeypatch):
    medians = iter([3e-5, 9e-5, 1e-5, 2e-5, 2e-5, 4e-5])  # rounds over two sizes, interleaved
    seen = []

    def point(buffer, threads, rep_ms):
        seen.append((buffer.numel() * 4, rep_ms))
        return {"working_set_bytes": buffer.numel() * 4, "median_s": next(medians)}
    monkeypatch.setattr(pitfalls, "_cpu_point", point)
    points = pitfalls.cache_curve(8 * KiB, min_bytes=4 * KiB, device="cpu", rep_ms=30)
    assert [s for s, _ in seen] == [4 * KiB, 8 * KiB] * pitfalls.CPU_ROUNDS  # the sweep again, not a point thrice
    assert all(r == pytest.approx(30 / pitfalls.CPU_ROUNDS) for _, r in seen)  # the run time shared out
    assert [p["median_s"] for p in points] == [1e-5, 2e-5] and points[0]["rounds"] == pitfalls.CPU_ROUNDS


def test_a_gpu_point_is_timed_in_three_rounds_and_keeps_its_fastest():
    """Review 2026-12-04m item 4: the H200's 1 GiB point was timed in one round (2,747 GB/s, against
    4,168 at 512 MiB and a 4,245 GB/s ceiling on a 1 GiB copy in the same run). Every GPU point is
    now timed in GPU_ROUNDS rounds over the whole sweep, the fastest kept, as the CPU's are."""
    assert pitfalls.GPU_ROUNDS >= 3
    medians = iter([9e-3, 1e-3, 2e-3, 3e-3, 4e-3, 1e-3])  # a slow first round at the largest size
    seen = []

    def point(size):
        seen.append(size)
        return {"working_set_bytes": size, "median_s": next(medians)}
    points = pitfalls.swept_in_rounds([512 * MiB, 1024 * MiB], 3, point)
    assert seen == [512 * MiB, 1024 * MiB] * 3  # the sweep again, not a point thrice
    assert [p["median_s"] for p in points] == [2e-3, 1e-3] and {p["rounds"] for p in points} == {3}
    with pytest.raises(ValueError, match="rounds"):
        pitfalls.swept_in_rounds([4 * KiB], 0, point)


def test_a_copy_curve_draws_the_copy_ceiling_and_sets_its_largest_point_against_it():
    """Review 2026-12-04m item 4: no ceiling line, and nothing said of the 1 GiB point's fall."""
    pts = [dict(p, rounds=3) for p in _points({256 * MiB: 4202, 512 * MiB: 4168, 1024 * MiB: 2747}, op="copy")]
    fig = pitfalls.plot_cache_curve(pts, {"L2": 60 * MiB}, "t", ceiling_gbps=4245.0)
    assert any(list(line.get_ydata()) == [4245.0, 4245.0] for line in fig.axes[0].lines)
    read = pitfalls.plot_cache_curve(_points({4 * KiB: 100}), {"L1": 32 * KiB}, "t", ceiling_gbps=30.0)
    assert not any(list(line.get_ydata()) == [30.0, 30.0] for line in read.axes[0].lines)  # a read is not a copy
    text = pitfalls.cache_curve_text({"points": pts, "levels": {"L2": 60 * MiB}, "copy_ceiling_gbps": 4245.0})
    # review 2026-12-05p 00-02 item 3: under 0.8x the fastest other point beyond L2, the largest
    # point is this point's anomaly, not memory's rate
    assert text.endswith("Largest point, 1024 MiB: 65% of the 4,245 GB/s copy ceiling (best of 3), 0.65x the "
                         "256 MiB point: its own anomaly, not memory's rate.")
    assert "copy ceiling" not in pitfalls.cache_curve_text({"points": pts, "levels": {"L2": 60 * MiB}})
    near = [dict(p, rounds=3) for p in _points({256 * MiB: 4202, 512 * MiB: 4168, 1024 * MiB: 3400}, op="copy")]
    assert pitfalls.cache_curve_text({"points": near, "levels": {"L2": 60 * MiB}, "copy_ceiling_gbps": 4245.0}) \
        .endswith("Largest point, 1024 MiB: 80% of the 4,245 GB/s copy ceiling (best of 3).")  # 0.81x: read


def test_the_h200s_recorded_1gib_point_is_called_an_anomaly_not_memorys_rate():
    """Review 2026-12-05p 00-02 item 3, on the H200's curve as recorded 2026-12-05 03:50: the 1 GiB
    point (a copy of 512 MiB into 512 MiB) took 3.1x the 512 MiB point's time for 2x the bytes,
    while the copy ceiling, measured at 1 GiB in the same run, was near 256 and 512 MiB's rate."""
    import json
    from pathlib import Path

    curve = json.loads((Path(__file__).parent / "h200_cache_curve_2026-12-05.json").read_text())
    text = pitfalls.cache_curve_text(curve)
    assert ("Largest point, 1024 MiB: 63% of the 4,245 GB/s copy ceiling (best of 3), 0.64x the 256 MiB point: "
            "its own anomaly, not memory's rate.") in text
    assert "L2 6,141 -> 4,177, step" in text  # the step reads the fastest beyond, not the largest point


def test_the_anomaly_names_the_graph_replay_where_the_recorded_probe_found_it(tmp_path):
    """Review 2026-12-05t 00-02 item 4: the 17:50 probe timed the 1 GiB copy replayed in a CUDA
    graph at 2,750 GB/s and without a graph at 4,157 (hot) and 4,143 (cold); the page called the
    point 'its own anomaly'. With the probe's log the line says whose it is, from the log's rows."""
    import json
    from pathlib import Path

    curve = json.loads((Path(__file__).parent / "h200_cache_curve_2026-12-05.json").read_text())
    log = tmp_path / "probe_00_cache_point_2026-12-05T1750.log"
    log.write_text("cache-point probe on NVIDIA H200 (working set = src + dst; device time; median of each timing):\n"
                   "as the curve (first, graph)          512 MiB      129.0 us    4,163 GB/s, IQR 2.06 us\n"
                   "as the curve (first, graph)         1024 MiB      390.4 us    2,750 GB/s, IQR 0.26 us\n"
                   "no graph, hot                       1024 MiB      258.3 us    4,157 GB/s, IQR 2.32 us\n"
                   "no graph, cold                      1024 MiB      259.2 us    4,143 GB/s, IQR 1.91 us\n")
    text = pitfalls.cache_curve_text(curve, log)
    assert ("0.64x the 256 MiB point; a probe recorded on that GPU (probe_00_cache_point_2026-12-05T1750.log): "
            "replayed in a CUDA graph, as the curve times it, this copy runs at 2,750 GB/s, without a graph at "
            "4,157 (hot) and 4,143 (cold): the low point is the graph replay's, not memory's.") in text
    assert "its own anomaly" not in text
    log.write_text(log.read_text().replace("1024 MiB", "2048 MiB"))  # no row at the point's size
    assert "its own anomaly, not memory's rate." in pitfalls.cache_curve_text(curve, log)
