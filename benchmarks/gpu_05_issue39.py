"""Chapter 05's new GPU legs of issue 39, in one short job, before (or instead of) the whole
chapter: C25 behind a queued kernel, the step as the sweep runs it, the plateau against its
arithmetic, and the knob table read round by round. Each part in its own try, so one failure
still leaves the others' numbers; on a CPU the GPU-only part records its error.

    PYTHONPATH=. python3 benchmarks/gpu_05_issue39.py --out DIR     # writes DIR/gpu_05_issue39.json

About 2 minutes on a 16-core H200 host (preparation ~10 s, worker sweep ~22 s (<= 45 s), knob
sweep ~50 s (<= 70 s): cost_model's prices; C25 ~8 s, one profiled timeline ~5 s). What to look
for, printed as each part ends:

- c25: the pageable rows' 'returned_share' near 1 (the call waited out the 50 ms kernel:
  the CPU lost its run-ahead) or near 0, per size; pinned rows near 0 (the control); the
  verdict and whether torch warned.
- step: 'as swept' (on batches fresh from workers, with their page faults: fresh_step)
  against 'private' (one host batch again) and 'on the device': fresh - private is the first
  touch of a new shared-memory segment (review 2026-12-03e item 1), private - on the device
  the pageable copy and the rest.
- plateau: predicted (batch / (step + wait)) against measured, within 15% or not, and what
  bounds it (the GPU idle share of the knee's timeline: over 50% reads host-bound).
- knobs: the GPU's knob ladder (knee_experiment.knob_settings: the A/A, + pin, + the device
  prefetcher and uint8), each with the geometric mean of its per-round ratios to the row it is
  read against, its 95% interval and gain / loss / no difference / not resolved
  (knee_experiment.knob_rule); 'left out' names any the budget cut.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import job_parts  # benchmarks/job_parts.py, beside this script

from labkit import claims
from labkit.chapters.ch05_dataloader import h2d_copies, knee_experiment, loader_sweep
from labkit.core import env, results
from labkit.measure import timeline


def part(record: dict, name: str, fn: Callable[[], object]) -> object:
    """A part of this job, printed as one line (job_parts.part)."""
    return job_parts.part(record, name, fn, echo=False)


def c25() -> dict:
    rows, said = h2d_copies.busy_stream_returns()
    evidence = h2d_copies.c25_busy_evidence([r.as_dict() for r in rows], said)
    verdict = claims.get("C25").judge(evidence, form=claims.SEED_FORM)
    for r in rows:
        print(f"  {r.memory:<9} {r.nbytes / 2**20:8.2f} MiB: returned after {r.call_return_s * 1e3:7.2f} ms, "
              f"done after {r.done_s * 1e3:7.2f} ms (kernel {r.kernel_s * 1e3:.1f} ms): share "
              f"{r.returned_share:.2f}")
    print(f"  C25 {verdict.outcome} -- {verdict.reason}")
    return {"evidence": evidence, "verdict": verdict.to_dict()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for gpu_05_issue39.json")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    record: dict = {"device": env.device(), "note": h2d_copies.environment_note()}
    started = time.perf_counter()
    part(record, "c25", c25)
    bench = part(record, "prepare", lambda: knee_experiment.prepare())
    if bench is not None:
        record["step"] = {"on_the_device_s": bench.compute.median_s, "as_swept_s": bench.step_s,
                          "copy_inside_s": bench.step_s - bench.compute.median_s,
                          "fresh": bench.step_as_swept.as_dict() if bench.step_as_swept else None,
                          "private": bench.private_step.as_dict() if bench.private_step else None,
                          "arithmetic": bench.arithmetic()}
        print(f"  step on the device {bench.compute.median_s * 1e3:.1f} ms; {bench.step_as_swept}; "
              f"{bench.private_step}")
        found = part(record, "worker_sweep", lambda: knee_experiment.worker_sweep(bench))
        if found is not None:
            record["worker_rows"] = results.to_jsonable(found.sweep.rows())
            print("  " + found.knee.explanation)

            def plateau() -> dict:
                setting = loader_sweep.Setting(num_workers=found.knee.workers,
                                               batch_size=bench.plan.batch_size)
                trace = timeline.from_profiler(loader_sweep.profile_steps(
                    bench.data, setting, bench.step, steps=3))
                figures = timeline.summary(trace).figures()
                found_plateau = knee_experiment.plateau(bench, found, gpu_idle_share=figures["gpu_idle_share"],
                                                        launch_gap_us=figures["launch_gap_mean_us"])
                print("  " + found_plateau.explanation())
                return found_plateau.as_dict()

            part(record, "plateau", plateau)

            def knobs() -> dict:
                sweep = knee_experiment.knob_sweep(bench, found.knee.workers)
                table = knee_experiment.knob_table(sweep)
                print("  " + knee_experiment.knob_rule(sweep.rounds))
                for row in table:
                    print(f"  {row['label']:<30} {row['samples_per_s']:7.0f} samples/s; "
                          + (f"vs {row['against']}: {row['stated']}" if row.get("against") else "the baseline"))
                if sweep.budget_note():
                    print("  " + sweep.budget_note())
                return {"table": table, "left_out": list(sweep.left_out),
                        "budget_note": sweep.budget_note(), "rounds": sweep.rounds}

            part(record, "knobs", knobs)
    record["seconds"] = time.perf_counter() - started
    path = args.out / "gpu_05_issue39.json"
    path.write_text(json.dumps(results.to_jsonable(record), indent=1, default=str))
    print(f"wrote {path} ({record['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
