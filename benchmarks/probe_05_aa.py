"""Chapter 05's A/A control probed: several identical loaders timed as the knob table times its rows.

Why: in the 2026-12-04 19:13 H200 reproduce, run 3 read the A/A control (two identical
loaders: knee_experiment.knob_settings' first two rows) as a gain, 1.10x [1.02, 1.18], 1.10x
where the A/A ran before the baseline and 1.09x after it. The code builds the two rows alike
(loader_sweep.make_loader ignores Setting.control; both read one dataset object; each round
forks a fresh loader for each row, its start-up and warm-up outside the timed window; no
persistent workers; pin memory off for both), and the balanced order gives each row every
position and neighbour alike. This probe times `--copies` identical loaders
(knee_experiment.identical_settings) through the table's own path (knob_sweep with their
settings: the same windows, warm-up, balanced rounds and datasets), and prints
(knee_experiment.loader_effect) whether the loaders differ beyond the rounds' noise (a
two-way F and its chance under identical loaders), the mean by position in the round and by
the loader run just before, and each loader's start-up.

    PYTHONPATH=. python3 benchmarks/probe_05_aa.py --out DIR     # DIR/probe_05_aa.json

On a CPU (the small CNN, ten rounds) about a minute. On the H200 each loader's round costs
about 2 s at 8 workers (the knob sweep's 12 s a row over 6 rounds), so four loaders x six
rounds about 50 s plus ~12 s of preparation: not inside chapter 05's 120 s. A GPU session
with the time to spare runs it with --rounds 4 (about 45 s in all); the zero-cost part rides in
reproduce.py 05: every knob row's throughput round by round (knob_round_rates) and the A/A
across runs (knee_experiment.runs_effect) in its summary.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as python3 benchmarks/probe_05_aa.py from the repository
    sys.path.insert(0, str(ROOT))

from labkit.chapters.ch05_dataloader import knee_experiment, loader_sweep  # noqa: E402
from labkit.core import env, results  # noqa: E402


def arithmetic_workers(bench: knee_experiment.Bench) -> int:
    """The count knob_workers gives without a worker sweep: the plan's fewest swept count at or
    above what batch x sample cost / step asks for, at most the spare cores (find_knee's)."""
    needed = loader_sweep.workers_needed(bench.plan.batch_size, bench.sample_cost.median_s, bench.step_s)
    asked = min(math.ceil(needed), max(bench.plan.cores - 1, 1))
    return min((w for w in bench.worker_counts if w >= asked), default=max(bench.worker_counts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for probe_05_aa.json")
    parser.add_argument("--copies", type=int, default=4, help="identical loaders (the baseline and its copies)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="balanced rounds (even; default the knob table's: knee_experiment.knob_rounds)")
    parser.add_argument("--workers", type=int, default=None,
                        help="workers of each loader (default the arithmetic's, as knob_workers)")
    args = parser.parse_args()
    # bad numbers are refused here, before the minute of preparing the loaders, as a usage error
    if args.copies < 2:
        parser.error(f"--copies must be at least 2 (a baseline and one identical copy), got {args.copies}")
    for name in ("rounds", "workers"):
        value = getattr(args, name)
        if value is not None and value < (1 if name == "rounds" else 0):
            parser.error(f"--{name} must be at least {1 if name == 'rounds' else 0}, got {value}")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "probe_05_aa.json"
    started = time.perf_counter()
    bench = knee_experiment.prepare(quick=True)
    workers = arithmetic_workers(bench) if args.workers is None else args.workers
    settings = knee_experiment.identical_settings(max(workers, 1 if max(bench.worker_counts) else 0),
                                                  bench.plan.batch_size, args.copies)
    prepared = time.perf_counter() - started
    knobs = knee_experiment.knob_sweep(bench, workers, windows=args.rounds, settings=settings,
                                       budget_s=None)
    effect = knee_experiment.loader_effect(knobs)
    lines = knee_experiment.loader_effect_lines(effect)
    for line in lines:
        print(line)
    record = {"device": env.device(), "workers": workers, "copies": args.copies,
              "window_steps": knobs.runs[0].window_steps, "warmup_steps": knobs.runs[0].warmup_steps,
              "prepare_s": prepared, "sweep_s": sum(knobs.seconds.values()),
              "seconds": time.perf_counter() - started, "effect": effect, "lines": lines}
    path.write_text(json.dumps(results.to_jsonable(record), indent=1, default=str))
    print(f"wrote {path} ({record['seconds']:.0f} s: preparation {prepared:.0f} s)")


if __name__ == "__main__":
    main()
