"""Chapter 05 on the GPU machine in one command: the knee of the worker sweep (throughput from
total time at steady state), every knob at the knee, C25's return-time probe, pinning in a
fresh process, worker start-up on a trivial dataset, and the chapter's verdicts. Every part in
its own try, so one failure still leaves the others' numbers.

    python3 benchmarks/gpu_05_loader.py --out OUTDIR          # writes OUTDIR/gpu_05_loader.json
    for i in 1 2 3; do python3 benchmarks/gpu_05_loader.py --out results/h200_05/run$i; done
    python3 benchmarks/gpu_05_loader.py --compare results/h200_05/run1 results/h200_05/run2 ...

Each run is a fresh process (nothing cached from another run); --compare reads the runs'
files and says whether the knee reproduced (the same within one step of the sweep). About
4 minutes on an H200 host with 32 cores; --quick sweeps every other worker count. Also runs
on a CPU (the GPU parts then record their error: they need a GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import warnings

import torch

from labkit.chapters.ch05_dataloader import (
    h2d_copies,
    knee_experiment,
    loader_data,
    loader_sweep,
    reproduce,
    shm,
)
from labkit.core import results


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


def run(out: str, quick: bool) -> dict:
    record = {"torch": torch.__version__, "environment": h2d_copies.environment_note(),
              "shm_free_bytes": shm.free_bytes(), "cores": os.cpu_count(), "quick": quick,
              "parts": {}}
    knee = part(record, "knee_and_knobs", lambda: knee_experiment.measure_knee(quick, knobs=True))
    if knee:
        print(knee["knee"]["explanation"])
        print(knee["noise"] or "the worker sweep's windows agreed within 10%")
        for row in knee["knob_table"]:
            print(f"  {row['label']:<28} {row['samples_per_s']:7.0f} samples/s "
                  f"({row['samples_per_s_low']:.0f} to {row['samples_per_s_high']:.0f}), "
                  f"waiting {100 * row['wait_share']:.0f}%")
    part(record, "call_return", lambda: [vars(r) | {"blocked_share": r.blocked_share}
                                         for r in h2d_copies.call_return_times(reproduce.C25_BYTES)])
    part(record, "pinning_cost_fresh_process", lambda: h2d_copies.pinning_cost_fresh().as_dict())
    part(record, "startup_trivial", startup_on_trivial_data)
    part(record, "verdicts", lambda: [v.to_dict() for v in reproduce.measure_verdicts(quick)])
    if not quick:
        part(record, "bandwidth_curve", lambda: [vars(p) for p in h2d_copies.bandwidth_curve()])
        part(record, "d2h_trap", lambda: [t.as_dict() for t in h2d_copies.d2h_trap()])
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "gpu_05_loader.json")
    with open(path, "w") as f:
        json.dump(record, f, indent=1)
    failed = [name for name, p in record["parts"].items() if not p["ok"]]
    print("wrote", path, "| failed parts:", failed or "none")
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
    parser.add_argument("--quick", action="store_true", help="every other worker count, fewer probes")
    parser.add_argument("--compare", nargs="+", metavar="RUN_DIR",
                        help="compare the knees of earlier runs instead of measuring")
    args = parser.parse_args(argv)
    if args.compare:
        return 0 if compare(args.compare) else 1
    record = run(args.out, args.quick)
    return 0 if record["parts"]["knee_and_knobs"]["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
