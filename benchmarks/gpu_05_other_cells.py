"""Chapter 05's cells outside the two sweeps, timed on the H200 in one short job, to settle
cost_model's 'other cells' before the chapter is re-recorded (issue 39).

cost_model.chapter_seconds knows those cells only as the recorded total less the three cells
whose seconds were kept (47 s of 157 s), less what it can price from their own parameters
(C25's calls, C23's sampling, the host buffers' fill, the fresh pinning process). What it
cannot price: the profiled runs (the plateau's at the knee, the overlap's two), the pin
thread's loader, the figures, the imports. This job runs those cells' lesson methods in the
notebook's order without the sweeps (the knee is taken as the recorded 8 workers) and keeps
each one's seconds, beside what cost_model says for the parts it prices.

    PYTHONPATH=. python3 benchmarks/gpu_05_other_cells.py --out DIR   # DIR/gpu_05_other_cells.json

About a minute on an H200 host (the preparation ~12 s, then ~25-35 s of cells). Nothing is
written to results/ (LABKIT_RECORD_REFERENCE is cleared: the lesson's records go to this
machine's local results file). What to look for, printed at the end:

- 'measured' against 'modelled' for C25 (busy_returns) and the fresh pinning process: within
  ~25% says fit_copies' rates hold on this host (the fill's speed-up was measured on the
  course's CPU, not here).
- 'other cells, measured': the imports (before_lesson_s) + every part here + 0.5 s of the
  cells that run on the CPU (quizzes, claims, exercises: this CPU's --cell-seconds). With
  cost_model's prepare and sweeps it gives 'the chapter, estimated': at most 120 s (DESIGN),
  115 s planned. Over that, the parts say which cell to cut next.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as python3 benchmarks/gpu_05_other_cells.py from the repository
    sys.path.insert(0, str(ROOT))
os.environ.pop("LABKIT_RECORD_REFERENCE", None)  # never overwrite the H200 record's 05 keys

import job_parts  # noqa: E402 -- benchmarks/job_parts.py, beside this script

from labkit import session  # noqa: E402
from labkit.chapters.ch05_dataloader import cost_model, loader_sweep  # noqa: E402
from labkit.measure import timeline  # noqa: E402

KEY = "05_dataloader"
KNEE = 8  # the H200's knee in every recorded run (results/reproduce/nvidia-h200-05_dataloader.json)
CPU_CELLS_S = 0.5  # the chapter's cells that run on the CPU alone: this CPU's --cell-seconds


def rendered(widget: object) -> int:
    """Build the static picture a notebook shows for a widget (its cost is the cell's)."""
    bundle = widget.static_bundle() if hasattr(widget, "static_bundle") else {"text/plain": str(widget)}
    return sum(len(str(v)) for v in bundle.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    chapter = session.open(KEY)
    lesson = chapter.lab.lesson.Lesson(chapter)
    record: dict = {"on_gpu": chapter.on_gpu, "chapter": str(chapter), "knee": KNEE,
                    "before_lesson_s": lesson.started_s}

    names: list[str] = []

    def part(name: str, fn: object) -> object:
        names.append(name)
        return job_parts.part(record, name, fn, as_value=str, echo=False)

    part("prepare", lambda: lesson.describe(lesson.prepare()))
    lesson.knee = SimpleNamespace(workers=KNEE)  # the sweeps are not run here
    lesson.sweep_knobs = SimpleNamespace(runs=[SimpleNamespace(setting=SimpleNamespace(num_workers=KNEE))])

    def plateau_profile() -> float | None:  # plateau_text's measurement, without the sweep's arithmetic
        at_knee = loader_sweep.Setting(num_workers=KNEE, batch_size=lesson.plan.batch_size)
        trace = timeline.from_profiler(loader_sweep.profile_steps(lesson.data, at_knee, lesson.step, steps=3))
        return timeline.summary(trace).figures()["gpu_idle_share"]

    part("plateau: the profile at the knee", plateau_profile)
    part("C26: the probe", lambda: chapter.lab.channels_last_probe.probe())
    part("C25: busy_returns", lesson.busy_returns)
    part("C25: judged and shown", lambda: lesson.c25(lesson.busy_returns()))
    part("startup", lesson.startup)
    part("pinning_cost (the fresh process started by prepare)", lesson.pinning_cost)
    part("dataloader warnings and source", lambda: [lesson.dataloader_warnings(), lesson.dataloader_source()])
    part("c23 (the curve, the seed's size)", lesson.c23)
    part("c13", lesson.c13)
    part("d2h_trap", lesson.d2h_trap)
    part("overlap (two profiled loaders)", lesson.overlap)
    part("the two timelines, drawn", lambda: [rendered(lesson.timeline(n)) for n in ("starving", "tuned")])

    reproduce = json.loads((ROOT / cost_model.RECORD).read_text())
    rates = cost_model.fit_copies(reproduce, cost_model._loader_record())
    modelled = cost_model.copy_cells_seconds(cost_model.current_copy_cells(), rates)
    record["modelled"] = modelled
    record["lesson_seconds"] = dict(lesson.seconds)
    parts_s = sum(record[name]["seconds"] for name in names if name != "prepare")
    other = (lesson.started_s or 0.0) + parts_s + CPU_CELLS_S
    estimate = cost_model.chapter_seconds(reproduce, cost_model.current_designs(),
                                          prepare_s=record["prepare"]["seconds"])
    record["other_cells_measured_s"] = other
    record["chapter_estimated_s"] = estimate.total_s - estimate.cells["other cells"] + other
    lines = [f"C25 (busy_returns): measured {record['C25: busy_returns']['seconds']:.1f} s, modelled "
             f"{modelled['C25 behind a queued kernel']:.1f} s",
             f"fresh pinning process's imports (overlapped): {lesson.seconds.get('fresh pinning process: imports, overlapped')} s",
             f"before the lesson (kernel, imports, session.open): {lesson.started_s} s",
             f"other cells, measured: {other:.1f} s (cost_model's estimate: {estimate.cells['other cells']:.1f} s)",
             f"the chapter, estimated: {record['chapter_estimated_s']:.1f} s (prepare as measured here, "
             f"the sweeps as cost_model prices them; DESIGN's limit 120 s, planned 115 s)"]
    record["summary"] = lines
    print("\n".join(lines), flush=True)
    (args.out / "gpu_05_other_cells.json").write_text(json.dumps(record, indent=1, default=str))


if __name__ == "__main__":
    main()
