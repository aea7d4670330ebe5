"""What chapter 05 costs on the H200, computed from a recorded run instead of typed.

Why: the chapter must run in at most 120 s on the H200 (a learner waits), and its two sweeps
are most of that. A sweep measures each setting once a round: it starts a loader (the workers
fork and decode the first batches), warms up, times a window and stops the workers. So one
setting's round costs

    start-up + (warm-up steps + window steps) x step

where `step` is the batch over the setting's steady samples per second and `start-up` is the
rest of the round's recorded seconds (fork, first batch, shutdown). fit() reads both numbers
per setting from a reproduce record (results/reproduce/nvidia-h200-05_dataloader.json: each
setting's seconds over all its rounds, the worker sweep's samples/s and each knob's ratio to
the baseline), averaged over the record's runs. sweep_seconds() prices any design with them
(settings, rounds, window and warm-up steps, as loader_sweep.window_plan raises them), and
chapter_seconds() gives the chapter cell by cell: each recorded sweep cell less its modelled
recorded design plus the modelled new one, the other cells as recorded.

    record = json.load(open("results/reproduce/nvidia-h200-05_dataloader.json"))
    estimate = cost_model.chapter_seconds(record, cost_model.current_designs())
    estimate.total_s, estimate.cells
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from unittest import mock

import numpy as np
import torch

from labkit.chapters.ch05_dataloader import h2d_copies, knee_experiment, loader_sweep

# The H200 copy of 12:57 UTC (results/h200_notebooks/05_dataloader.ipynb, commit 41892d9), top
# to bottom: 157 s, of which the preparation cell 12.5 s, the worker sweep's cell 34.6 s and
# the knob sweep's cell 64.5 s (scripts/execute_notebook.py's slowest cells). The record
# beside it (RECORD) is the reproduce run of the same sources, whose phases the model reads.
RECORDED_TOTAL_S = 157.0
RECORDED_CELLS_S = {"prepare": 12.5, "worker sweep": 34.6, "knob sweep": 64.5}
RECORD = "results/reproduce/nvidia-h200-05_dataloader.json"
TARGET_S = 115.0  # the chapter's plan on the H200: DESIGN's 120 s less a margin
H200_CORES = 16


@dataclass(frozen=True)
class Cost:
    """One setting's price per round: start-up seconds and one steady step's seconds."""

    startup_s: float
    step_s: float

    def round_s(self, warmup_steps: int, window_steps: int) -> float:
        return self.startup_s + (warmup_steps + window_steps) * self.step_s


@dataclass(frozen=True)
class Row:
    """A setting as the model sees it: its label and the queue (workers x prefetch) that
    loader_sweep.window_plan raises the warm-up and the window to."""

    label: str
    workers: int
    prefetch: int | None = None

    @property
    def queue(self) -> int:
        return 1 if self.workers == 0 else self.workers * (self.prefetch or loader_sweep.DEFAULT_PREFETCH)

    @classmethod
    def of(cls, setting: loader_sweep.Setting) -> Row:
        return cls(setting.label, setting.num_workers, setting.prefetch_factor)

    @classmethod
    def from_label(cls, label: str) -> Row:
        """The row a recorded label names ('w8 b64 pf1 pin': 8 workers, prefetch 1)."""
        workers = re.match(r"w(\d+) b\d+", label)
        if workers is None:
            raise ValueError(f"{label!r} is not a sweep setting's label ('w8 b64 ...')")
        prefetch = re.search(r"\bpf(\d+)\b", label)
        return cls(label, int(workers.group(1)), int(prefetch.group(1)) if prefetch else None)


@dataclass(frozen=True)
class Design:
    """A sweep: its rows, rounds, and the minimum window and warm-up steps, which measure()
    raises (loader_sweep.window_plan): each window to the row's queue, the warm-up to one
    batch per worker (warmup_queue: to the whole queue, as records before WARMUP_RULE did)."""

    rows: tuple[Row, ...]
    rounds: int
    steps: int
    warmup_steps: int
    warmup_queue: bool = False

    def plan_of(self, row: Row) -> tuple[int, int]:
        """(warm-up steps, window steps) of one row, as window_plan gives them."""
        warm = row.queue if self.warmup_queue else max(row.workers, 1)
        return max(self.warmup_steps, warm), max(self.steps, row.queue)


def _record_runs(record: Mapping) -> list[Mapping]:
    runs = record.get("numbers") if isinstance(record, Mapping) else None
    if not runs or not all(isinstance(r, Mapping) and r.get("phases") for r in runs):
        raise ValueError("a reproduce record of chapter 05 with 'numbers': one dict per run, "
                         "each with its 'phases' (benchmarks/reproduce.py 05 writes it)")
    return list(runs)


def recorded_designs(run: Mapping) -> dict[str, Design]:
    """The two sweeps as one recorded run measured them. The knob windows: the record's
    'knob_window_steps' where it holds one; else the plan's steps (one queue a window, the
    design of every record before the two-queue windows, 13:31 UTC). The warm-ups: a queue
    unless the record names knee_experiment.WARMUP_RULE."""
    plan = run["plan"]
    batch = int(plan["batch_size"])
    queue = run.get("warmup_rule") != knee_experiment.WARMUP_RULE
    workers = Design(tuple(Row(f"w{w} b{batch}", int(w)) for w in run["measured_counts"]),
                     int(run["rounds"]), int(plan["steps"]), int(plan["warmup_steps"]), queue)
    knob_labels = [k.split(": ", 1)[1] for k in run["phases"] if k.startswith("knob sweep: ")]
    knobs = Design(tuple(Row.from_label(label) for label in knob_labels),
                   int(run.get("knob_rounds") or 0),
                   int(run.get("knob_window_steps") or plan["steps"]), int(plan["warmup_steps"]), queue)
    return {"worker sweep": workers, "knob sweep": knobs}


def fit(record: Mapping) -> dict[str, Cost]:
    """Each recorded setting's Cost, averaged over the record's runs: its step from its
    samples/s (a knob's: the knee's step over the knob's ratio to the baseline, the first of
    'knob_ratios'), its start-up the rest of its recorded seconds a round."""
    fitted: dict[str, list[Cost]] = {}
    for run in _record_runs(record):
        batch = int(run["plan"]["batch_size"])
        rates = {int(w): float(v) for w, v in run["samples_per_s"].items()}
        knee_step = batch / rates[int(run["knee_workers"])]
        designs = recorded_designs(run)
        for name, design in designs.items():
            for row in design.rows:
                if name == "worker sweep":
                    step = batch / rates[row.workers]
                else:
                    ratio = (run.get("knob_ratios") or {}).get(row.label, [1.0])[0]
                    step = knee_step / float(ratio)
                warm, window = design.plan_of(row)
                per_round = run["phases"][f"{name}: {row.label}"] / design.rounds
                fitted.setdefault(f"{name}: {row.label}", []).append(
                    Cost(per_round - (warm + window) * step, step))
    return {key: Cost(float(np.mean([c.startup_s for c in costs])),
                      float(np.mean([c.step_s for c in costs]))) for key, costs in fitted.items()}


def price(costs: Mapping[str, Cost], sweep: str, row: Row) -> Cost:
    """A row's Cost: as fitted, or (a plain worker count the record did not sweep, at a batch
    it did) bounded from the recorded ones: the start-up of the next recorded count above it
    (start-up grows with the workers) and its step scaled by their workers (a starved
    loader's pace is at most proportional to its workers, so the step is at most that)."""
    key = f"{sweep}: {row.label}"
    if key in costs:
        return costs[key]
    plain = re.fullmatch(r"w\d+ b(\d+)", row.label)
    above = sorted(((r, c) for r, c in ((Row.from_label(k.split(": ", 1)[1]), c) for k, c in costs.items()
                                         if k.startswith(f"{sweep}: "))
                    if plain and r.label == f"w{r.workers} b{plain.group(1)}" and r.workers > row.workers > 0),
                   key=lambda pair: pair[0].workers)
    if sweep != "worker sweep" or not above:
        raise ValueError(f"no recorded cost for {key!r}, and none to bound it from: record that "
                         "setting on the H200 first")
    nearest, cost = above[0]
    return Cost(cost.startup_s, cost.step_s * nearest.workers / row.workers)


def sweep_seconds(design: Design, costs: Mapping[str, Cost], sweep: str) -> dict[str, float]:
    """Seconds of each row of `design` over all its rounds (sweep: 'worker sweep' or 'knob
    sweep', the record's phase prefix)."""
    if design.rounds < 1:
        raise ValueError(f"a design runs at least one round, got {design.rounds}")
    return {row.label: design.rounds * price(costs, sweep, row).round_s(*design.plan_of(row))
            for row in design.rows}


@contextlib.contextmanager
def _as_if_gpu() -> Iterator[None]:
    """A Setting with device_prefetch refuses to exist without a GPU; the model reads only
    labels and queues, so the GPU's knob list is built here as if one were present."""
    with mock.patch.object(torch.cuda, "is_available", return_value=True):
        yield


def current_designs(cores: int = H200_CORES, knee: int = 8) -> dict[str, Design]:
    """The two sweeps as this source plans them on the H200 (a GPU host of `cores` cores,
    knob sweep at `knee` workers, the recorded knee): the plan's worker counts, 3 rounds;
    knee_experiment.knob_settings' GPU list, KNOB_ROUNDS rounds of knob_window_steps."""
    plan = loader_sweep.plan(cores=cores, gpu=True)
    workers = Design(tuple(Row(f"w{w} b{plan.batch_size}", w) for w in plan.worker_counts),
                     loader_sweep.WINDOWS, plan.steps, plan.warmup_steps)
    with _as_if_gpu():
        settings = knee_experiment.knob_settings(knee, plan.batch_size, on_gpu=True)
    steps = knee_experiment.knob_window_steps(settings[0], plan.steps, on_gpu=True)
    knobs = Design(tuple(Row.of(s) for s in settings), knee_experiment.KNOB_ROUNDS, steps,
                   plan.warmup_steps)
    return {"worker sweep": workers, "knob sweep": knobs}


def busy_stream_added_s(recorded_sizes: Sequence[int], sizes: Sequence[int] = h2d_copies.BUSY_SIZES,
                        repeats: int = 5, kernel_s: float = h2d_copies.BUSY_KERNEL_S) -> float:
    """C25's seconds for the sizes added since the record: per size, pageable and pinned,
    repeats + 1 calls behind a kernel_s kernel (the copies of up to 8 MiB take under 2 ms)."""
    added = [n for n in sizes if n not in set(recorded_sizes)]
    return len(added) * 2 * (repeats + 1) * kernel_s


@dataclass(frozen=True)
class Estimate:
    """The chapter's seconds on the H200, cell by cell, and where each sweep's went."""

    cells: dict[str, float]
    sweeps: dict[str, dict[str, float]]
    recorded_sweeps: dict[str, float]

    @property
    def total_s(self) -> float:
        return float(sum(self.cells.values()))

    def lines(self) -> list[str]:
        out = [f"{name}: {seconds:.1f} s" for name, seconds in self.cells.items()]
        for name, rows in self.sweeps.items():
            out.append(f"  {name}: " + ", ".join(f"{label} {s:.1f}" for label, s in rows.items())
                       + f" (modelled {sum(rows.values()):.1f} s; the recorded design "
                       f"{self.recorded_sweeps[name]:.1f} s)")
        return [*out, f"total: {self.total_s:.1f} s (target {TARGET_S:.0f} s)"]


_CELL_FIRST_LINES = {"prepare": "bench = lesson.prepare()", "worker sweep": "lesson.worker_sweep()",
                     "knob sweep": "lesson.knob_sweep()"}


def recorded_cells(rows: Sequence[Mapping]) -> tuple[float, dict[str, float]]:
    """(total seconds, {'prepare', 'worker sweep', 'knob sweep': seconds}) from one chapter's
    rows of scripts/execute_notebook.py --cell-seconds ({'cell', 'seconds', 'first_line'}),
    each sweep's cell found by its first line."""
    found = {name: [float(r["seconds"]) for r in rows if str(r.get("first_line", "")).startswith(line)]
             for name, line in _CELL_FIRST_LINES.items()}
    missing = [name for name, seconds in found.items() if len(seconds) != 1]
    if missing:
        raise ValueError(f"the cell seconds hold no single cell for {missing} (first lines "
                         f"{[_CELL_FIRST_LINES[m] for m in missing]}): pass chapter 05's rows")
    return float(sum(float(r["seconds"]) for r in rows)), {k: v[0] for k, v in found.items()}


def chapter_seconds(record: Mapping, designs: Mapping[str, Design],
                    prepare_s: float | None = None, cells: Sequence[Mapping] | None = None) -> Estimate:
    """The chapter's estimate: each sweep's recorded cell less its recorded design's modelled
    seconds (averaged over the record's runs) plus `designs`' modelled seconds; the
    preparation cell as recorded (or prepare_s); the other cells as recorded, plus C25's
    sizes added since the record (busy_stream_added_s). cells: the recorded run's per-cell
    seconds (recorded_cells), else RECORDED_TOTAL_S and RECORDED_CELLS_S. The record and
    the cells must come from the same sources for the subtraction to mean anything."""
    runs = _record_runs(record)
    total_s, cell_s = (RECORDED_TOTAL_S, RECORDED_CELLS_S) if cells is None else recorded_cells(cells)
    costs = fit(record)
    recorded = {name: float(np.mean([sum(sweep_seconds(recorded_designs(run)[name], costs, name).values())
                                     for run in runs])) for name in designs}
    sweeps = {name: sweep_seconds(design, costs, name) for name, design in designs.items()}
    out = {"prepare": cell_s["prepare"] if prepare_s is None else prepare_s}
    for name in ("worker sweep", "knob sweep"):
        overhead = cell_s[name] - recorded[name]  # the cell's table, plot and bar
        out[name] = overhead + sum(sweeps[name].values())
    evidence = (record.get("evidence") or [{}])[0].get("C25", {}).get("busy_stream", [])
    other = total_s - sum(cell_s.values())
    out["other cells"] = other + busy_stream_added_s([r["nbytes"] for r in evidence])
    return Estimate(out, sweeps, recorded)
