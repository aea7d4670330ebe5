"""Where a GPU's ResNet-50 time goes, per layout: device-busy time beside a loop's wall time (C7a).

fp16 eager ResNet-50 at batch 64 leaves an H200 idle much of the time: the host launches
kernels more slowly than the GPU runs them. Then the wall clock times the launches, and a
ratio of wall times between NCHW and channels_last moves from run to run (1.11x to 1.57x in
three fresh runs) while what the layout changes, the kernels' own time, stays put. So C7
is judged on CUDA Graph replays (`cases.graph_replays`), which the device bounds, and these
eager runs are shown beside them: a host-bound one read by device-busy time, both clocks shown.

Which regime a run is in is read from the seed's own quantity: a back-to-back loop of calls,
timed by the wall clock with no profiler attached, against the kernels' time per call from
the trace. The harness's host-launch probe (3 calls queued behind a spin) read 4.11 to
6.78 ms for the same NHWC call in three fresh H200 runs, so the regime it picked flipped;
a loop is what a reader's own code runs. This module measures both sides for one pair of
layouts, interleaved round by round.
"""

from __future__ import annotations

from collections.abc import Callable

from labkit.measure import clocks, device_time


def loop_and_host_seconds(fn: Callable[[], object], calls: int, warmup: int = 2) -> tuple[float, float]:
    """(wall, host) seconds per call of `calls` back-to-back calls of fn after `warmup` untimed ones,
    one synchronize at the end (on a GPU), no profiler (`clocks.loop_round_with_host`): the pace
    a Python loop of such calls runs at, and the host's time until its last call returned."""
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be a whole number >= 1, got {calls!r}")
    for _ in range(warmup):
        fn()
    return clocks.loop_round_with_host(fn, calls, clocks.loop_sync())


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def evidence(nchw: Callable[[], object], nhwc: Callable[[], object], rounds: int = 3,
             calls: int = 10) -> dict:
    """Device-busy time and a loop's wall time of both layouts in interleaved rounds, as C7's
    run evidence.

    Keys: nchw_busy_s / nhwc_busy_s (median round, per call, traced), nchw_idle_share /
    nhwc_idle_share (under the profiler), host_bound (the trace's idle share over its
    threshold, kept for older readers; C7's regime reads the loop), busy_speedup_rounds
    (NCHW busy / NHWC busy, one per round), nchw_loop_s / nhwc_loop_s
    (median round of an unprofiled back-to-back loop of `calls` calls, per call) and
    nchw_loop_rounds / nhwc_loop_rounds (every round's), nchw_loop_host_s / nhwc_loop_host_s
    (the same loops' host time until their calls returned: `launch_bound`'s host figure where the
    probe could not read one). On a CPU the device figures are
    None and host_bound False: there is no device clock to read.

    The trace's idle-share threshold is not carried (review 2026-12-03h item 11: the evidence
    read `host_bound_threshold: 0.3` beside a card that decides by a loop's 15% margin over its
    kernels, `claims.LOOP_MARGIN`); `claims.regime` names it only where the trace disagrees.
    """
    found = device_time.interleaved({"NCHW": nchw, "NHWC": nhwc}, rounds=rounds, calls=calls)
    loops: dict[str, list[float]] = {"nchw": [], "nhwc": []}
    hosts: dict[str, list[float]] = {"nchw": [], "nhwc": []}
    for _ in range(rounds):  # interleaved too: NCHW, NHWC, NCHW, ...
        for name, fn in (("nchw", nchw), ("nhwc", nhwc)):
            wall, host = loop_and_host_seconds(fn, calls)
            loops[name].append(wall)
            hosts[name].append(host)
    a, b = device_time.summary(found["NCHW"]), device_time.summary(found["NHWC"])
    return {"nchw_busy_s": a["device_busy_s"], "nhwc_busy_s": b["device_busy_s"],
            "nchw_idle_share": a["idle_share"], "nhwc_idle_share": b["idle_share"],
            "host_bound": bool(a["host_bound"] or b["host_bound"]),
            "busy_speedup_rounds": device_time.busy_ratios(found["NCHW"], found["NHWC"]),
            "nchw_loop_s": _median(loops["nchw"]), "nhwc_loop_s": _median(loops["nhwc"]),
            "nchw_loop_rounds": loops["nchw"], "nhwc_loop_rounds": loops["nhwc"],
            # the host's time until the loop's calls returned (median round, per call)
            "nchw_loop_host_s": _median(hosts["nchw"]), "nhwc_loop_host_s": _median(hosts["nhwc"])}
