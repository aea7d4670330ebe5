"""Does C18's eager launch cost depend on what the process ran before? (issue 38, review item 2)

Chapter 04's H200 run read eager 8.29 us per launch; reproduce.py's fresh processes read
5.96-6.59 us. The notebook times its sweep after a profiled run and after Inductor; reproduce
times it first. This script times the same sweep four times in one process: fresh, after the
profiled launch traces, after a torch.compile'd function has run, and once more at the end,
and writes each fit (slope per launch and fixed cost) with the timeline's gaps.

    python3 benchmarks/c18_process_state.py --out DIR
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from labkit.chapters.ch04_fusion import cases, launch_overhead


def _sweep(device: torch.device) -> dict:
    fits = launch_overhead.measure(device=device).as_dict()["fits"]
    return {way: {"per_launch_us": round(fit["per_item_us"], 3), "fixed_us": round(fit["fixed_us"], 2),
                  "r_squared": round(fit["r_squared"], 5)} for way, fit in fits.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    device = torch.device("cuda")
    steps: list[dict] = []

    def record(name: str) -> None:
        t0 = time.perf_counter()
        fits = _sweep(device)
        steps.append({"state": name, "fits": fits, "sweep_s": round(time.perf_counter() - t0, 2)})
        print(name, json.dumps(fits), flush=True)

    record("fresh process")
    record("fresh process, again")
    gaps = cases.gap_figures(cases.launch_traces(device))
    record("after the profiled launch traces")
    compiled = torch.compile(lambda a: (a * 2 + 1).relu())
    for size in (1 << 10, 1 << 12, 1 << 14):
        compiled(torch.randn(size, device=device))
    torch.cuda.synchronize()
    record("after torch.compile (Inductor) ran")
    record("at the end, again")
    args.out.mkdir(parents=True, exist_ok=True)
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "timeline_gaps": gaps, "steps": steps}
    (args.out / "c18_process_state.json").write_text(json.dumps(result, indent=1, default=str))
    print(json.dumps(gaps, default=str))


if __name__ == "__main__":
    main()
