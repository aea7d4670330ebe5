"""Chapter 05's warm-up and cost model, checked on the H200 in one short job: does the start-up
burst end after one batch per worker (loader_sweep.window_plan's warm-up since this session),
and does each setting cost a round what cost_model says?

    PYTHONPATH=. python3 benchmarks/gpu_05_warmup.py --out DIR     # writes DIR/gpu_05_warmup.json

About a minute on a 16-core H200 host (preparation ~12 s, then 3 repetitions of the plan's
worker counts and the GPU knob rows at 8 workers, interleaved). Each repetition is one
loader_sweep.measure() with two windows of one queue after the warm-up of one batch per
worker: window 1 starts right after the first wave, window 2 a queue later (where the older
warm-up of a whole queue started timing). What to look for, printed per setting:

- 'window 1 / window 2': throughput of the first window over the second, median of the
  repetitions with their range. Near 1 (within the range the repetitions spread over, or
  0.95-1.05) supports the warm-up of one batch per worker. Clearly above 1 (window 1
  faster) for a count means the start-up burst outlasts one wave there: then go back to a
  warm-up of a whole queue for such counts (and cost_model prices it).
- 'priced' against 'spent': each repetition's seconds against cost_model's price of one
  round of this design (start-up + (warm-up + 2 windows) x step, fitted from the recorded
  reproduce runs); within ~20% says the model's inputs hold on this host.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as python3 benchmarks/gpu_05_warmup.py from the repository
    sys.path.insert(0, str(ROOT))

from labkit.chapters.ch05_dataloader import cost_model, knee_experiment, loader_sweep  # noqa: E402
from labkit.core import env, results  # noqa: E402

REPEATS = 3


def settings(bench: knee_experiment.Bench, knee: int) -> list[loader_sweep.Setting]:
    """The plan's worker counts and the knob rows at `knee` (at most the largest count; the
    A/A is the baseline again, left out): the GPU's list on a GPU, else the CPU's (a smoke run)."""
    counts = [loader_sweep.Setting(num_workers=w, batch_size=bench.plan.batch_size)
              for w in bench.worker_counts]
    on_gpu = bench.step.device.type == "cuda"
    at = min(knee, max(bench.worker_counts))
    knobs = [s for s in knee_experiment.knob_settings(at, bench.plan.batch_size, on_gpu=on_gpu)
             if not s.control and knee_experiment.fits(bench, s)]
    return counts + [s for s in knobs if s not in counts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for gpu_05_warmup.json")
    parser.add_argument("--knee", type=int, default=8, help="workers of the knob rows (the H200's knee)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    bench = knee_experiment.prepare()
    chosen = settings(bench, args.knee)
    record: dict = {"device": env.device(), "warmup_rule": knee_experiment.WARMUP_RULE,
                    "repeats": REPEATS, "rows": {}}
    runs: dict[str, list[tuple[float, loader_sweep.Run]]] = {s.label: [] for s in chosen}
    for _ in range(REPEATS):  # interleaved: a drift in the machine hits every setting alike
        for setting in chosen:
            data = bench.data_uint8 if setting.ship_uint8 else bench.data
            queue = loader_sweep.in_flight_batches(setting)
            begin = time.perf_counter()
            run = loader_sweep.measure(data, setting, bench.step, steps=queue,
                                       warmup_steps=bench.plan.warmup_steps, windows=2)
            runs[setting.label].append((time.perf_counter() - begin, run))
    record_path = ROOT / cost_model.RECORD
    costs = cost_model.fit(json.loads(record_path.read_text()))
    for setting in chosen:
        row = cost_model.Row.of(setting)
        design = cost_model.Design((row,), 1, row.queue, bench.plan.warmup_steps)
        sweep = "worker sweep" if re.fullmatch(r"w\d+ b\d+", setting.label) else "knob sweep"
        try:
            warm, window = design.plan_of(row)
            priced = cost_model.price(costs, sweep, row).round_s(warm, 2 * window)
        except ValueError as error:  # a setting the record lacks
            priced, note = None, str(error)
        else:
            note = ""
        ratios = [r.window_throughputs[0] / r.window_throughputs[1] for _, r in runs[setting.label]]
        spent = [s for s, _ in runs[setting.label]]
        record["rows"][setting.label] = {
            "window1_over_window2": ratios, "seconds": spent, "priced_s": priced, "note": note,
            "warmup_steps": runs[setting.label][0][1].warmup_steps,
            "window_steps": runs[setting.label][0][1].window_steps,
            "first_batch_s": [r.first_batch_s for _, r in runs[setting.label]]}
        print(f"{setting.label:<30} window 1 / window 2: {np.median(ratios):.3f} "
              f"({min(ratios):.3f}-{max(ratios):.3f}); spent {np.median(spent):.2f} s a repetition, "
              + (f"priced {priced:.2f} s" if priced is not None else f"not priced ({note})"))
    record["seconds"] = time.perf_counter() - started
    estimate = cost_model.chapter_seconds(json.loads(record_path.read_text()),
                                          cost_model.current_designs())
    record["estimate"] = estimate.lines()
    print("\n".join(estimate.lines()))
    path = args.out / "gpu_05_warmup.json"
    path.write_text(json.dumps(results.to_jsonable(record), indent=1, default=str))
    print(f"wrote {path} ({record['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
