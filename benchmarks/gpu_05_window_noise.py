"""Chapter 05's knob table, its round-to-round noise against the window's length, on the H200.

Why: on 2026-12-04 07:09 the knob calls did not reproduce (pin and pin + device prefetch +
uint8 a gain in 2 of 3 fresh runs) after the 2026-12-04i cut of each knob window from 1.75 to
one queue of the baseline (16 steps): the per-round log ratios spread by sd ~0.13-0.16 and the
knobs' effects are ~1.15-1.2x. Whether a longer window is the cure depends on whether that
noise falls like 1/sqrt(window) (the window's own burstiness) or not (round start-up, drift).
This times the chapter's knob sweep as the chapter runs it (knee_experiment.knob_sweep: the
four rows, six balanced rounds) at one queue and at two queues (the most the prepared dataset
holds), one after the other in one process, and prints per row the sd of the per-round log
ratios, the geometric mean with its 95% interval and the rule's call.

    PYTHONPATH=. python3 benchmarks/gpu_05_window_noise.py --out DIR    # DIR/gpu_05_window_noise.json

About 110 s on the H200 (preparation ~15 s, the two sweeps ~37 s and ~53 s as cost_model prices
them); the JSON is rewritten after each sweep, so a call cut short keeps the first.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as python3 benchmarks/gpu_05_window_noise.py from the repository
    sys.path.insert(0, str(ROOT))

from labkit.chapters.ch05_dataloader import knee_experiment  # noqa: E402
from labkit.core import env, results  # noqa: E402

QUEUES = (1.0, 2.0)


def log_sd(ratios: list[float]) -> float | None:
    """Sample standard deviation of the log ratios (None with fewer than two)."""
    if len(ratios) < 2:
        return None
    logs = [math.log(r) for r in ratios]
    mean = sum(logs) / len(logs)
    return math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for gpu_05_window_noise.json")
    parser.add_argument("--knee", type=int, default=8, help="workers of the knob rows (the H200's knee)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "gpu_05_window_noise.json"
    started = time.perf_counter()
    bench = knee_experiment.prepare()
    record: dict = {"device": env.device(), "rounds": knee_experiment.KNOB_ROUNDS,
                    "prepare_s": time.perf_counter() - started, "sweeps": {}}
    for queues in QUEUES:
        begin = time.perf_counter()
        with mock.patch.object(knee_experiment, "KNOB_GPU_WINDOW_QUEUES", queues):
            knobs = knee_experiment.knob_sweep(bench, args.knee)
        rows = knee_experiment.knob_table(knobs)
        sweep = {"seconds": time.perf_counter() - begin, "window_steps": knobs.runs[0].window_steps,
                 "budget_note": knobs.budget_note(), "rows": []}
        for row in rows:
            ratios = list(row.get("round_ratios") or [])
            sd = log_sd(ratios)
            sweep["rows"].append({**row, "log_sd": sd})
            if "against" in row:
                print(f"{queues:.0f} queue(s), {sweep['window_steps']} steps: {row['label']:<30} "
                      f"{row['ratio']:.3f}x [{row['ratio_low']:.3f}, {row['ratio_high']:.3f}] "
                      f"{row['decision']}; round sd of log {sd:.3f}; rounds "
                      + ", ".join(f"{r:.2f}" for r in ratios))
        print(f"{queues:.0f} queue(s): {sweep['seconds']:.1f} s")
        record["sweeps"][f"{queues:g}"] = sweep
        record["seconds"] = time.perf_counter() - started
        path.write_text(json.dumps(results.to_jsonable(record), indent=1, default=str))
    print(f"wrote {path} ({record['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
