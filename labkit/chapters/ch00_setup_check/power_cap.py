"""Why a GPU's matmul ceiling is the best rate of a sweep, not the rate of the largest size.

An H200 running a large bf16/fp16 matmul draws its whole power budget (about 700 W) and
lowers its SM clock to stay inside it: nvidia-smi reports the throttle reason "SW power cap"
(bit 0x4 of clocks_throttle_reasons.active) and a clock near 1.5 GHz, against 1.98 GHz
boost. A 4096 matmul, shorter, runs at a higher clock and beats an 8192 one. So a ceiling
measured at one large size sits below rates the course's own timings reach, and a share
above 100% reads as a cache or a busy machine when it is neither. `labkit.measure.ceilings`
takes the best rate over a sweep; this module reads the two measurements that show why:
a ceilings sweep (rate per size) and the recorded power probe
(`benchmarks/bf16_ceiling_probe.py`: clock, power and throttle reason sampled while a bf16
8192 matmul runs on random, uniform and all-zero data).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from pathlib import Path

SW_POWER_CAP = 0x4  # nvidia-smi clocks_throttle_reasons: the software power cap is active


def sweep_rows(sweep: Mapping | None) -> list[tuple[str, int, float, float]]:
    """(math, n, TFLOP/s, share of that math's best) for every matmul point of a sweep."""
    rows = []
    for math, points in ((sweep or {}).get("matmul") or {}).items():
        best = max(float(v) for v in points.values())
        for n, rate in sorted(points.items(), key=lambda item: int(item[0])):
            rows.append((math, int(n), float(rate), float(rate) / best))
    return rows


def probe_rows(path: Path) -> list[dict]:
    """The power probe's runs: data, mode, TFLOP/s, median SM clock (MHz) and power (W), and
    whether the software power cap was active in every sample."""
    rows = []
    for run in json.loads(Path(path).read_text()):
        samples = [[part.strip() for part in s.split(",")] for s in run.get("smi_samples") or ()]
        if not samples:
            continue
        clocks = [float(s[0]) for s in samples]
        watts = [float(s[1]) for s in samples]
        capped = all(int(s[3], 16) & SW_POWER_CAP for s in samples)
        rows.append({"data": run["data"], "mode": run["mode"], "tflops": float(run["tflops"]),
                     "clock_mhz": statistics.median(clocks), "power_w": statistics.median(watts),
                     "power_capped": capped})
    return rows
