"""Chapter 05 on the GPU machine in one command: the reproduce check of the knee (three fresh
runs of benchmarks/reproduce.py 05), then, at the knee they found, every knob (throughput from
total time at steady state), C25's return-time probe, pinning in a fresh process, worker
start-up on a trivial dataset, the host-to-device bandwidth curve and the D2H trap. Every part
in its own try, so one failure still leaves the others' numbers.

    PYTHONPATH=. python3 benchmarks/gpu_05_loader.py --out results/h200_05
        # writes results/reproduce/<machine>-05_dataloader.json (3 runs: verdicts, knee, phases)
        #    and results/h200_05/gpu_05_loader.json (knobs at the knee, probes, phases)
    PYTHONPATH=. python3 benchmarks/gpu_05_loader.py --knee-from results/reproduce/X.json --out D
        # the knee from reproduce runs already made: about 70 s
    PYTHONPATH=. python3 benchmarks/gpu_05_loader.py --reproduce-runs 0 --out OUTDIR
        # alone: measures its own knee first (about 100 s on a 16-core H200 host)
    python3 benchmarks/gpu_05_loader.py --compare results/h200_05/run1 results/h200_05/run2 ...

Time: planned at about 3 x 55 s for the reproduce runs and about 70 s for the rest on a
16-core H200 host; TOTAL_BUDGET_S (240 s) is the whole job's limit: the knob sweep gets what is
left of it after the reproduce runs (at most knee_experiment.KNOB_SWEEP_BUDGET_S, at least
MIN_KNOB_BUDGET_S), and every sweep stops adding settings once its budget is spent, saying so.
Each part prints its seconds as it ends. Also runs on a CPU (the GPU parts then record their
error: they need a GPU).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path

import torch

from labkit.chapters.ch05_dataloader import (
    h2d_copies,
    knee_experiment,
    loader_data,
    loader_sweep,
    reproduce,
    shm,
)
from labkit.core import env, results

ROOT = Path(__file__).resolve().parents[1]
TOTAL_BUDGET_S = 240.0  # the whole job, reproduce runs included
RESERVE_S = 30.0  # what the parts after the knob sweep need (probes, fresh-process pinning)
MIN_KNOB_BUDGET_S = 15.0
KNOB_WINDOWS = 2  # each knob at the knee costs ~2 s a round on an H200 host: 2 rounds fit ~9 knobs in 40 s


def part(record: dict, name: str, fn) -> object:
    started = time.perf_counter()
    value = None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = fn()
        record["parts"][name] = {"ok": True, "value": results.to_jsonable(value),
                                 "warnings": sorted({str(w.message)[:200] for w in caught})}
    except Exception as error:  # noqa: BLE001 -- recorded with its traceback, the run goes on
        record["parts"][name] = {"ok": False, "error": f"{type(error).__name__}: {error}",
                                 "traceback": traceback.format_exc()[-3000:]}
    record["parts"][name]["seconds"] = time.perf_counter() - started
    print(f"{name}: {'ok' if record['parts'][name]['ok'] else record['parts'][name]['error']} "
          f"({record['parts'][name]['seconds']:.1f} s)", flush=True)
    return value


def startup_on_trivial_data() -> dict:
    """First batch per epoch on a dataset that costs nothing: the worker start-up alone."""
    trivial = loader_data.Trivial(length=64)
    setting = loader_sweep.Setting(num_workers=4, batch_size=16)
    fresh = loader_sweep.startup(trivial, setting, epochs=4)
    kept = loader_sweep.startup(trivial, loader_sweep.with_persistence(setting, True), epochs=4)
    return {"fresh": fresh.as_dict(), "persistent": kept.as_dict(), "workers": 4}


def reproduce_knee(runs: int, quick: bool, out_dir: Path) -> dict:
    """benchmarks/reproduce.py 05 --runs N (fresh processes); the knee its runs agree on."""
    command = [sys.executable, str(ROOT / "benchmarks" / "reproduce.py"), "05", "--runs", str(runs),
               "--out", str(out_dir)] + (["--quick"] if quick else [])
    done = subprocess.run(command, cwd=ROOT, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)))
    if done.returncode != 0:
        raise RuntimeError(f"benchmarks/reproduce.py 05 failed (exit {done.returncode})")
    machine = env.device_key().lower().replace("_", "-")
    return recorded_knee(out_dir / f"{machine}-05_dataloader.json")


def recorded_knee(path: Path) -> dict:
    """The knee the runs of a reproduce JSON (benchmarks/reproduce.py 05) agree on: the most
    common of their knees, the lower on a tie, so one odd run does not move it."""
    recorded = json.loads(path.read_text())
    if not recorded.get("numbers"):
        raise ValueError(f"{path} holds no knee (written by a reproduce.py without chapter 05's "
                         "measure_numbers?); run benchmarks/reproduce.py 05 --runs 3 again")
    knees = [int(n["knee_workers"]) for n in recorded["numbers"]]
    return {"path": str(path), "knees": knees, "knee_workers": min(statistics.multimode(knees)),
            "summary": recorded.get("numbers_summary"), "wall_s": recorded.get("wall_s")}


def knobs_at(workers: int | None, quick: bool, budget_s: float) -> dict:
    """The knob table at `workers` (the reproduced knee), or, when None, after this process's
    own worker sweep (its knee). KNOB_WINDOWS rounds: more knobs fit in the budget."""
    if workers is None:
        return knee_experiment.measure_knee(quick, knobs=True, knob_budget_s=budget_s,
                                            knob_windows=KNOB_WINDOWS)
    bench = knee_experiment.prepare(quick)
    knobs = knee_experiment.knob_sweep(bench, workers, budget_s=budget_s, windows=KNOB_WINDOWS)
    return {"plan": bench.plan.as_dict(), **bench.arithmetic(), "knee_workers": workers,
            "knee_from": "the reproduce runs", "knob_windows": KNOB_WINDOWS, "knob_rows": knobs.rows(),
            "knob_table": knee_experiment.knob_table(knobs), "knob_noise": knobs.noise_note(),
            "knob_budget_note": knobs.budget_note(),
            "phases": {**bench.phases, **{f"knob sweep: {k}": v for k, v in knobs.seconds.items()}}}


def run(out: str, quick: bool, reproduce_runs: int = 3, reproduce_out: Path | None = None,
        knee_from: Path | None = None, total_budget_s: float = TOTAL_BUDGET_S) -> dict:
    started = time.perf_counter()
    record = {"torch": torch.__version__, "environment": h2d_copies.environment_note(),
              "shm_free_bytes": shm.free_bytes(), "cores": os.cpu_count(), "quick": quick,
              "reproduce_runs": 0 if knee_from else reproduce_runs,
              "total_budget_s": total_budget_s, "parts": {}}
    knee_workers = None
    if knee_from or reproduce_runs:
        found = part(record, "reproduce_knee", lambda: recorded_knee(knee_from) if knee_from else
                     reproduce_knee(reproduce_runs, quick, reproduce_out or ROOT / "results" / "reproduce"))
        if found:
            knee_workers = found["knee_workers"]
            print(f"knees of the reproduce runs: {found['knees']}; the knobs are measured at "
                  f"{knee_workers} worker(s)")
    left = total_budget_s - (time.perf_counter() - started) - RESERVE_S
    knob_budget = max(MIN_KNOB_BUDGET_S, min(knee_experiment.KNOB_SWEEP_BUDGET_S, left))
    record["knob_budget_s"] = knob_budget
    print(f"knob sweep budget: {knob_budget:.0f} s", flush=True)
    knee = part(record, "knee_and_knobs", lambda: knobs_at(knee_workers, quick, knob_budget))
    if knee:
        if "knee" in knee:
            print(knee["knee"]["explanation"])
            print(knee["noise"] or "the worker sweep's windows agreed within 10%")
        for row in knee["knob_table"]:
            print(f"  {row['label']:<28} {row['samples_per_s']:7.0f} samples/s "
                  f"({row['samples_per_s_low']:.0f} to {row['samples_per_s_high']:.0f}), "
                  f"waiting {100 * row['wait_share']:.0f}%")
        print(knee["knob_noise"] or "the knob sweep's windows agreed within 10%")
        if knee["knob_budget_note"]:
            print(knee["knob_budget_note"])
        for name, seconds in knee["phases"].items():
            print(f"    {seconds:7.1f} s  {name}")
    part(record, "call_return", lambda: [vars(r) | {"blocked_share": r.blocked_share}
                                         for r in h2d_copies.call_return_times(reproduce.C25_BYTES)])
    part(record, "pinning_cost_fresh_process", lambda: h2d_copies.pinning_cost_fresh().as_dict())
    part(record, "startup_trivial", startup_on_trivial_data)
    if not (knee_from or reproduce_runs):  # the reproduce runs judged them already
        part(record, "verdicts", lambda: [v.to_dict() for v in reproduce.measure_verdicts(quick)])
    if not quick:
        part(record, "bandwidth_curve", lambda: [vars(p) for p in h2d_copies.bandwidth_curve()])
        part(record, "d2h_trap", lambda: [t.as_dict() for t in h2d_copies.d2h_trap()])
    record["seconds"] = time.perf_counter() - started
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "gpu_05_loader.json")
    with open(path, "w") as f:
        json.dump(record, f, indent=1)
    failed = [name for name, p in record["parts"].items() if not p["ok"]]
    print("parts:", ", ".join(f"{name} {p['seconds']:.1f} s" for name, p in record["parts"].items()))
    print(f"wrote {path} after {record['seconds']:.1f} s | failed parts:", failed or "none")
    return record


def compare(folders: list[str]) -> bool:
    """Print each run's knee and whether they agree within one step of the sweep."""
    knees, counts = [], None
    for folder in folders:
        with open(os.path.join(folder, "gpu_05_loader.json")) as f:
            value = json.load(f)["parts"]["knee_and_knobs"].get("value")
        if not value:
            print(f"{folder}: no knee (the part failed)")
            return False
        if "knee" not in value:
            print(f"{folder}: its knee came from reproduce runs ({value.get('knee_from')}); their "
                  "agreement is in results/reproduce/<machine>-05_dataloader.json")
            return False
        knees.append(value["knee_workers"])
        counts = value["worker_counts"]
        best = value["knee"]["throughputs"]
        print(f"{folder}: knee {value['knee_workers']} workers; samples/s by workers "
              + ", ".join(f"{w}: {float(t):.0f}" for w, t in best.items()))
    same = knee_experiment.knees_reproduce(knees, counts)
    print(f"knees {knees} over the sweep {counts}: "
          f"{'reproduced (within one step)' if same else 'NOT reproduced'}")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "/tmp/out"),
                        help="folder for gpu_05_loader.json")
    parser.add_argument("out_dir", nargs="?", default=None,
                        help="the same as --out (benchmarks/gpu_session.sh passes the folder so)")
    parser.add_argument("--quick", action="store_true", help="every other worker count, fewer probes")
    parser.add_argument("--reproduce-runs", type=int, default=3,
                        help="fresh reproduce runs of the knee first (default 3; 0: measure the "
                             "knee here instead)")
    parser.add_argument("--reproduce-out", type=Path, default=None,
                        help="folder for the reproduce JSON (default results/reproduce)")
    parser.add_argument("--knee-from", type=Path, default=None, metavar="REPRODUCE_JSON",
                        help="take the knee from a reproduce JSON already written instead of "
                             "running the reproduce runs")
    parser.add_argument("--budget", type=float, default=TOTAL_BUDGET_S,
                        help=f"seconds for the whole job (default {TOTAL_BUDGET_S:.0f})")
    parser.add_argument("--compare", nargs="+", metavar="RUN_DIR",
                        help="compare the knees of earlier runs instead of measuring")
    args = parser.parse_args(argv)
    if args.compare:
        return 0 if compare(args.compare) else 1
    handler = logging.StreamHandler(sys.stdout)  # each sweep setting's seconds as it ends
    handler.setFormatter(logging.Formatter("    [%(relativeCreated)7.0f ms] %(message)s"))
    logging.getLogger("labkit.chapters").addHandler(handler)
    logging.getLogger("labkit.chapters").setLevel(logging.INFO)
    if args.out_dir:
        args.out = args.out_dir
    if args.reproduce_runs < 0:
        parser.error(f"--reproduce-runs must be 0 or more, got {args.reproduce_runs}")
    if args.knee_from is not None and not args.knee_from.is_file():
        parser.error(f"--knee-from {args.knee_from}: no such file")
    record = run(args.out, args.quick, args.reproduce_runs, args.reproduce_out, args.knee_from,
                 args.budget)
    return 0 if all(record["parts"][p]["ok"] for p in ("knee_and_knobs", "reproduce_knee")
                    if p in record["parts"]) else 1


if __name__ == "__main__":
    sys.exit(main())
