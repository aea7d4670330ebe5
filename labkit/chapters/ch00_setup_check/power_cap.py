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
    """The power probe's runs: data, mode, TFLOP/s, median SM clock (MHz) and power (W), how
    many of its nvidia-smi samples carried the software power cap flag (0x4) of how many, and
    whether every one did."""
    rows = []
    for run in json.loads(Path(path).read_text()):
        samples = [[part.strip() for part in s.split(",")] for s in run.get("smi_samples") or ()]
        if not samples:
            continue
        clocks = [float(s[0]) for s in samples]
        watts = [float(s[1]) for s in samples]
        flagged = sum(1 for s in samples if int(s[3], 16) & SW_POWER_CAP)
        rows.append({"data": run["data"], "mode": run["mode"], "tflops": float(run["tflops"]),
                     "clock_mhz": statistics.median(clocks), "power_w": statistics.median(watts),
                     "capped_samples": flagged, "samples": len(samples),
                     "power_capped": flagged == len(samples)})
    return rows


def flag_separates(rows: list[dict]) -> bool:
    """Whether the power cap flag's share of samples differs between the probe's rows: on the
    reference H200 every sample carried it, at 384 W on zeros as at 695 W on random data
    (review 2026-12-03g item 8), so there the flag says nothing about which run was capped."""
    return len({r["capped_samples"] / r["samples"] for r in rows if r["samples"]}) > 1
