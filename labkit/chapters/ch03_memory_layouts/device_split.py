"""Where a GPU's ResNet-50 time goes, per layout: device-busy time beside wall time (C7).

fp16 eager ResNet-50 at batch 64 leaves an H200 idle most of the time: the host launches
kernels more slowly than the GPU runs them. Then the wall clock times the launches, and a
ratio of wall times between NCHW and channels_last moves from run to run (1.11x to 1.57x in
three fresh runs) while what the layout changes, the kernels' own time, stays put. So C7
is judged on device-busy time where the run is host-bound, and on wall time elsewhere; both
are shown. This module measures the device side for one pair of layouts, interleaved.
"""

from __future__ import annotations

from collections.abc import Callable

from labkit.measure import device_time


def evidence(nchw: Callable[[], object], nhwc: Callable[[], object], rounds: int = 3,
             calls: int = 10) -> dict:
    """Device-busy and wall time of both layouts in interleaved rounds, as C7's run evidence.

    Keys: nchw_busy_s / nhwc_busy_s (median round, per call), nchw_idle_share /
    nhwc_idle_share, host_bound (either layout idles the GPU more than the threshold),
    busy_speedup_rounds (NCHW busy / NHWC busy, one per round), host_bound_threshold.
    On a CPU every figure is None and host_bound False: there is no device clock to read.
    """
    found = device_time.interleaved({"NCHW": nchw, "NHWC": nhwc}, rounds=rounds, calls=calls)
    a, b = device_time.summary(found["NCHW"]), device_time.summary(found["NHWC"])
    return {"nchw_busy_s": a["device_busy_s"], "nhwc_busy_s": b["device_busy_s"],
            "nchw_idle_share": a["idle_share"], "nhwc_idle_share": b["idle_share"],
            "host_bound": bool(a["host_bound"] or b["host_bound"]),
            "busy_speedup_rounds": device_time.busy_ratios(found["NCHW"], found["NHWC"]),
            "host_bound_threshold": a["threshold"]}
