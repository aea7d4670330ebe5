"""Chapter 05's run as the notebook reads it: measurements, quiz answers and readings.

Why a module: the notebook used to define its own helpers, branch on `on_gpu` and format
its tables by hand (half its code lines were plumbing, issue 37). Here they are tested code,
and the notebook keeps the measurements, the claims and the verdicts. Every result is kept
under the key and payload shape the notebook recorded before (results/nvidia-h200.json is
read by key): sweep_workers, knee, plateau, sweep_knobs, startup, pinning_cost_fresh,
pin_thread, h2d_curve, h2d_seed_size, pmd_probe, d2h_trap, busy_stream, overlap; and
cell_seconds on a GPU, each measuring method's wall seconds (CELL_SECONDS_KEY: the H200
record then says where the chapter's time went, for cost_model; nothing is printed).

`Lesson(chapter)` holds one run's state; each method is one cell's work. A measurement only
a GPU can make goes through `chapter.here_or_recorded` (recorded under its key on a GPU,
shown labelled recorded elsewhere).
"""

from __future__ import annotations

import functools
import html
import inspect
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from labkit import claims
from labkit.chapters.ch05_dataloader import claims as ch05_claims
from labkit.chapters.ch05_dataloader import (
    h2d_copies,
    knee_experiment,
    loader_data,
    loader_plots,
    loader_sweep,
    reproduce,
    shm,
)
from labkit.core import results
from labkit.measure import timeline
from labkit.show import table as tables
from labkit.show import widgets


class Lines(list):
    """Lines of text a cell shows (printed as they are, one per line)."""

    def __str__(self) -> str:
        return "\n".join(str(line) for line in self)

    def __repr__(self) -> str:
        return str(self)


# A setting's label spelt out where the knob tables show it (review 2026-12-05q browser 05-07
# item 10: 'w1 b16 pf1' was never spelt out)
KNOB_COLUMN = "setting (w workers, b batch, pf prefetch)"


class FoldedLines(Lines):
    """Lines with evidence folded under them: a closed <details> in HTML (only its summary is
    read until opened), its summary named in text, as `tables.Table` folds."""

    def __init__(self, lines: Sequence[str] = (), folds: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(lines)
        self.folds = list(folds)

    def __str__(self) -> str:
        said = "\n".join(str(line) for line in self)
        return said + ("\n" + tables.folds_text(self.folds) if self.folds else "")

    def _repr_html_(self) -> str:
        lines = html.escape("\n".join(str(line) for line in self))
        return f"<pre style='white-space:pre-wrap'>{lines}</pre>{tables.folds_html(self.folds)}"


class Shown(list):
    """Several objects a cell shows in turn (text, tables, figures)."""

    def _ipython_display_(self) -> None:
        from IPython.display import display

        for item in self:
            if isinstance(item, str):
                print(item)
            else:
                display(item)


# The quizzes' explanations, shown after an answer (review 2026-12-04m item 7: written into the
# notebook's quiz cell, 'only later epochs can reuse them' gave the startup quiz's key away to
# anyone reading the cell's source before answering)
EXPLAIN = {
    "knee": ("Each worker produces one batch per (batch x sample cost) seconds on its own core; the "
             "step needs one per compute time; and the main process needs a core too."),
    "startup": "The first epoch must start its workers either way; only later epochs can reuse them.",
}


def _ref() -> str:
    return results.DEFAULT_REFERENCE


CELL_SECONDS_KEY = "cell_seconds"
PROFILER_CYCLE_NOTE = "Warning: Profiler clears events at the end of each cycle"  # a regex's start


def process_age_s() -> float | None:
    """Seconds since this process started (Linux's /proc; None elsewhere): at Lesson() in a
    notebook, the kernel's start, the imports and session.open together."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        with open("/proc/uptime") as f:
            uptime_s = float(f.read().split()[0])
        return uptime_s - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _timed(method: Callable) -> Callable:
    """A Lesson method whose wall seconds are kept in Lesson.seconds by its name each time it
    runs, and on a GPU recorded under CELL_SECONDS_KEY at once (a run cut short keeps what it
    measured). Why: the chapter's H200 seconds outside the sweeps were only known as one total
    (cost_model); on a CPU, scripts/execute_notebook.py --cell-seconds gives them."""
    @functools.wraps(method)
    def timed(self: Lesson, *args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            self.seconds[method.__name__] = round(time.perf_counter() - start, 3)
            if self.on_gpu:
                self.chapter.record(CELL_SECONDS_KEY, {"seconds": dict(self.seconds),
                                                       "before_lesson_s": self.started_s})
    return timed


class Lesson:
    """One run of chapter 05 (`chapter` is the session's Chapter)."""

    def __init__(self, chapter: Any) -> None:
        self.chapter = chapter
        self.on_gpu: bool = chapter.on_gpu
        self.plan = loader_sweep.plan()
        self.started_s = process_age_s()
        self.seconds: dict[str, float] = {}
        self._fresh_pin: h2d_copies.FreshPinProcess | None = None

    # --- set-up ---------------------------------------------------------------------------
    def plan_text(self) -> str:
        """The plan of the sweep and this machine's cores."""
        plan = self.plan
        return (f"{plan.cores} CPU cores; {plan.model}, batch {plan.batch_size}, workers "
                f"{list(plan.worker_counts)}, {plan.steps} steps after {plan.warmup_steps} warm-up")

    @_timed
    def prepare(self) -> knee_experiment.Bench:
        """Builds the dataset and the step, and measures what the arithmetic needs. On a GPU
        it also starts the fresh process that the optional pinning cost measures in
        (h2d_copies.FreshPinProcess: its imports, ~4 s on the H200, overlap the cells between;
        it pins nothing until asked)."""
        if self.on_gpu:
            if self._fresh_pin is not None:
                self._fresh_pin.close()
            try:
                self._fresh_pin = h2d_copies.FreshPinProcess()
            except (OSError, RuntimeError):  # measured in a process started then instead
                self._fresh_pin = None
        with warnings.catch_warnings():
            # torch's notice (once a process) that a profiler object started again keeps only
            # its latest cycle: on the H200 prepare's GPU timings gave it (37 words on the page,
            # results/h200_notebooks/05_dataloader.ipynb); the harness keeps the profiler's
            # notes on its own cycles out of the learner's output too (kernel_records)
            warnings.filterwarnings("ignore", message=PROFILER_CYCLE_NOTE)
            self.bench = knee_experiment.prepare()
        self.data, self.step = self.bench.data, self.bench.step
        return self.bench

    def describe(self, bench: knee_experiment.Bench) -> Shown:
        """What one sample, one batch and one step cost, and the worker counts that fit."""
        plan = self.plan
        out = Lines([
            f"{len(bench.data.encoded)} JPEGs of {plan.encoded_side}x{plan.encoded_side} px; a "
            f"sample is {bench.data.sample_bytes / 2**10:.0f} KiB of float32",
            f"one sample: {bench.sample_cost.median_s * 1e3:.2f} ms of one core (IQR "
            f"{bench.sample_cost.iqr_s * 1e3:.2f} ms); one batch of {plan.batch_size}: "
            f"{bench.batch_load_s * 1e3:.0f} ms",
            bench.step_as_swept.line(faults=self.on_gpu) if bench.step_as_swept else ""])
        if bench.private_step is not None:  # faults on a GPU only: fresh_step says why
            out.append(bench.private_step.line(pages=False, faults=self.on_gpu))
        if self.on_gpu:  # the plateau below prints them as parts of the step: here the spread
            out.append(parts_line({"the step on the device": (bench.compute, "lesson.bench.compute"),
                                   "the copy alone": (bench.copy_alone, "lesson.bench.copy_alone")}))
        free = shm.free_bytes()
        out += [f"loading a batch takes {bench.batch_load_s / bench.step_s:.1f}x the step",
                f"/dev/shm free: {'unknown' if free is None else f'{free / 2**20:.0f} MiB'}; "
                f"worker counts that fit: {list(bench.worker_counts)}"]
        return Shown([str(out), loader_plots.samples_figure(bench.data)])

    # --- the worker sweep -----------------------------------------------------------------
    @functools.cached_property
    @_timed
    def found(self) -> knee_experiment.Found:
        """The worker sweep and its knee (measured once, when first asked)."""
        bar = loader_plots.ProgressBar(len(self.bench.worker_counts), "workers")
        return knee_experiment.worker_sweep(self.bench, on_progress=bar.update)

    def knee_key(self) -> knee_experiment.Key | int:
        """The knee quiz's answer: the measured knee and every count the windows allow."""
        return knee_experiment.knee_key(self.found)

    def worker_sweep(self) -> Shown:
        """The sweep's table and plot and the knee's reading, kept under sweep_workers and knee."""
        bench, found = self.bench, self.found
        self.sweep_workers, self.knee = found.sweep, found.knee
        self.chapter.record("sweep_workers", {
            "rows": found.sweep.rows(), "plan": self.plan.as_dict(),
            "sample_cost_s": bench.sample_cost.median_s, "compute_s": bench.compute.median_s,
            "step_as_swept_s": bench.step_s, "worker_counts": list(bench.worker_counts)})
        self.chapter.record("knee", found.knee.as_dict())
        sweep = found.sweep
        out = Shown([sweep, loader_plots.sweep_figure(
            sweep, f"{self.plan.model}, batch {self.plan.batch_size}: workers swept"),
            self.knee.explanation,
            sweep.noise_note() or "Every setting's windows agreed within 10% of its throughput."])
        if sweep.budget_note():
            out.append(sweep.budget_note())
        return out

    # --- the plateau ----------------------------------------------------------------------
    @_timed
    def plateau_text(self) -> FoldedLines:
        """The plateau, predicted from the step and the wait and read at the knee's timeline."""
        self.plateau = knee_experiment.profiled_plateau(self.bench, self.found)
        self.chapter.record("plateau", self.plateau.as_dict())
        out = FoldedLines([self.plateau.explanation()])
        if self.plateau.paired:  # review 2026-12-06z 05-07 item 2: the rule whole, folded (words)
            check = self.plateau.round_check() or {}
            rounds = ", ".join(f"{r:.2f}x" for r in check.get("ratios", []))
            out.folds.append(("the round-by-round rule, and each round's ratio",
                              loader_sweep.round_rule(len(self.plateau.round_rates), self.plateau.tolerance)
                              + f" Each round's measured / predicted here: {rounds}."))
        spread = self.step_spread()
        if spread:
            out.append(spread)
        old = self.chapter.recorded("plateau")
        if old and not self.on_gpu:
            out.append(recorded_plateau(old))
        # what the reference's reproduce record reproduced, and on which sources' date (review
        # 2026-12-04i item 1: a record older than this prediction must not read as its check),
        # folded: upkeep, not the lesson (review 2026-12-05q browser 05-07 item 8)
        out.folds.append(("the reference's reproduce runs", reproduce.reference_scope()))
        return out

    def step_spread(self) -> str:
        """One line over the CPU page's timings of one step (review 2026-12-05q browser 05-07
        item 8: eight figures of one step, 7.1 to 12.1 ms, and fresh batches faster than the
        private one, against the page faults the prose sets up): their range, and whether
        fresh batches were slower than the private one here. '' on a GPU, whose plateau gives
        the step's parts, or with fewer than two timings."""
        if self.on_gpu:
            return ""
        bench, plateau = self.bench, self.plateau
        fresh = bench.step_as_swept.median_s if bench.step_as_swept else None
        private = bench.private_step.median_s if bench.private_step is not None else None
        sweep = getattr(self, "sweep_workers", None)
        seen = [fresh, private, plateau.loaded_alone_s, plateau.loaded_step_s, plateau.swept_step_s,
                *(plateau.drift or ()), *(r.get("compute_median_s") for r in (sweep.rows() if sweep else []))]
        seen = [float(s) for s in seen if s]
        if len(seen) < 2:
            return ""
        said = (f"On this CPU's {self.plan.cores} cores this step measured {min(seen) * 1e3:.1f}-"
                f"{max(seen) * 1e3:.1f} ms across the timings above")
        if fresh and private:
            said += f"; fresh batches were {'not slower' if fresh <= private else 'slower'} here"
        return said + "."

    # --- the other knobs ------------------------------------------------------------------
    @_timed
    def knob_sweep(self) -> Shown:
        """Each knob at the knee, read against the baseline round by round (sweep_knobs)."""
        bench = self.bench
        self.knob_workers = knee_experiment.knob_workers(self.knee)  # fixed before it runs (item 5)
        wanted = knee_experiment.knob_settings(
            max(self.knob_workers, 1 if max(bench.worker_counts) else 0), self.plan.batch_size,
            self.on_gpu)
        left_out = [s.label for s in wanted if not knee_experiment.fits(bench, s)]
        out = Shown()
        if left_out:
            out.append("left out, their batches in flight would not fit in /dev/shm: "
                       + ", ".join(left_out))
        bar = loader_plots.ProgressBar(len(wanted) - len(left_out), "knobs")
        self.sweep_knobs = knee_experiment.knob_sweep(bench, self.knob_workers, on_progress=bar.update)
        self.knob_rows = knee_experiment.knob_table(self.sweep_knobs)
        self._wanted = wanted
        measured = {r.setting.label for r in self.sweep_knobs.runs}
        # review 2026-12-04l item 2: what was cut is recorded, rows and rounds alike
        self.chapter.record("sweep_knobs", {"rows": self.sweep_knobs.rows(), "table": self.knob_rows,
                                            "rounds": self.sweep_knobs.rounds,
                                            "rounds_asked": self.sweep_knobs.rounds_asked,
                                            "left_out": [s.label for s in wanted if s.label not in measured],
                                            "budget_note": self.sweep_knobs.budget_note(),
                                            "workers": self.knob_workers, "knee_workers": self.knee.workers,
                                            "rule": knee_experiment.knob_rule(self.sweep_knobs.rounds),
                                            "orders": self.sweep_knobs.orders})
        return Shown([*out, *self.knob_text()])

    def knob_text(self) -> Shown:
        """Each knob's call against the baseline (its samples/s, range and waiting share: the
        sweep's table, with the decision; a ladder step's increment over the step before beside
        it, shown, not called: call_cell), what was not measured, and the plot."""
        workers = self.sweep_knobs.runs[0].setting.num_workers
        shown = tables.Table(
            f"the knobs at {workers} worker(s), called round by round against the baseline",
            [KNOB_COLUMN, "samples/s", "windows, slowest-fastest", "waiting",
             "step (median)", "geometric mean [95% interval]: call"],
            units={"waiting": "%", "step (median)": "ms"})
        for row in self.knob_rows:
            step = row.get("compute_median_s")
            shown.add(row["label"], round(row["samples_per_s"]),
                      f"{row['samples_per_s_low']:.0f}-{row['samples_per_s_high']:.0f}",
                      100 * row["wait_share"], "-" if step is None else round(step * 1e3, 1),
                      call_cell(row, self.knob_rows))
        shown.note(workers_text(workers, self.knee.workers, self.knee.arithmetic_workers))
        if windows_text(self.sweep_knobs.runs[0], self.sweep_workers):  # item 3, folded for words
            shown.fold("the window, against the worker sweep",
                       windows_text(self.sweep_knobs.runs[0], self.sweep_workers))
        if control_failed(self.knob_rows):  # review 2026-12-03h item 3
            shown.note(f"{CONTROL_FAILED} (the A/A row, the baseline against itself, was called "
                       f"{_CALLS[control_call(self.knob_rows)]}).")
        if resolution_text(self.knob_rows):  # review 2026-12-04j item 2
            shown.note(resolution_text(self.knob_rows))
        shown.note(self.batch_bytes_text())  # the resolution above replaced the baseline's two sweeps
        measured = {row["label"] for row in self.knob_rows}
        never = [s.label for s in self._wanted if s.label not in measured]
        if never:
            shown.note(f"not measured: {', '.join(never)} (their batches in flight would not fit in "
                       "/dev/shm, or the time budget cut them: see the lines above and below)")
        if self.sweep_knobs.budget_note():
            shown.note(self.sweep_knobs.budget_note())
        # the rule in full, folded: the markdown above says it in words (on the H200 some 70
        # words of the chapter's 1,500 said it twice); recorded under sweep_knobs as before
        shown.fold("the rule, in full", knee_experiment.knob_rule(self.sweep_knobs.rounds))
        return Shown([shown, loader_plots.sweep_figure(
            self.sweep_knobs, f"the other knobs, {self.sweep_knobs.runs[0].setting.num_workers} worker(s)")])

    def batch_bytes_text(self) -> str:
        """A batch's bytes in float32 and in uint8 (review 2026-12-03e item 7), computed from
        the shapes: what crosses shared memory and, on a GPU, the copy to the device. What was
        timed of that copy is said too: only the pageable float32 copy (the plateau's copy
        part). Why: this note used to price a pageable uint8 copy at the float32 copy's rate
        ("about 1.6 ms in uint8") as if a row paid it, but the GPU ladder's only uint8 row
        copies pinned, with the device prefetcher: no GPU row pays a pageable uint8 copy."""
        batch = self.plan.batch_size
        f32, u8 = batch * self.bench.data.sample_bytes, batch * self.bench.data_uint8.sample_bytes
        text = (f"a batch is {f32 / 1e6:.1f} MB in float32, {u8 / 1e6:.1f} MB in uint8 "
                f"({u8 / f32:.2f}x, from the shapes): what crosses shared memory")
        if self.on_gpu:
            text += ("; to the device, only the pageable float32 copy was timed (the plateau's copy "
                     "part): the uint8 row copies pinned, with the device prefetcher")
        return text + "."

    def recorded_gpu_knobs(self) -> object:
        """The reference GPU's knob rows (pin_memory, non_blocking, the device prefetcher),
        labelled recorded; samples/s from total time (`loader_sweep.row_samples_per_s`). Each
        call is read against the baseline: a row recorded against the step before (the ladder
        before issue 39's fix) is re-judged from its recorded rounds (knee_experiment.rebased),
        its old reading shown as the increment, or labelled as read against that row."""
        if self.on_gpu:  # the knob table above is this GPU's own
            return Lines()
        gpu_knobs = self.chapter.recorded("sweep_knobs")
        if gpu_knobs is None:
            return "nothing recorded yet for the reference GPU"
        table = knee_experiment.rebased(gpu_knobs.get("table", []))
        decided = {r["label"]: r for r in table if "stated" in r}
        shown = tables.Table("the reference GPU's knobs, called against the baseline",
                             [KNOB_COLUMN, "samples/s", "waiting", "ratio: call"],
                             units={"waiting": "%"}, recorded=f"recorded on {_ref()}")
        for i, row in enumerate(gpu_knobs["rows"]):
            per_round = decided.get(row["label"])
            shown.add(row["label"], round(loader_sweep.row_samples_per_s(row)), 100 * row["wait_share"],
                      call_cell(per_round, table) if per_round else "the baseline" if i == 0 and decided else "-")
        base = table[0]["label"] if table else ""
        for row in table:
            if row.get("rebased"):  # its old reading is the increment beside its call
                shown.note(f"{step_name(row['label'], base)} recorded against "
                           f"{step_name(row['increment']['over'], base)}; called here from its rounds")
        if gpu_knobs.get("budget_note"):  # review 2026-12-04l item 2: what its budget cut
            shown.note(gpu_knobs["budget_note"])
        if not decided:
            shown.note("recorded before knobs were read round by round against the baseline: no ratios")
        elif not any("level" in r for r in decided.values()):
            shown.note("called by an older rule: every round past the band; median and range shown")
        elif gpu_knobs.get("rule"):
            reach = resolution(table)
            shown.note(f"the rule above, {gpu_knobs['rounds']} rounds"
                       + (f"; resolution {100 * (reach - 1):.0f}% (the A/A's reach)" if reach else ""))
        else:
            shown.note("called by an older rule: every round above or below 1x, no band")
        runs = reproduce.reference_knob_runs()  # review 2026-12-04m item 2: the size across runs
        for row in table[1:]:
            seen = runs.get(reproduce.at_knee(row["label"]))
            if seen and not row["label"].endswith("(A/A)"):
                shown.note(f"{step_name(row['label'], base)}, {len(seen)} reproduce runs: "
                           f"{reproduce.runs_text(seen, row)}")
        return shown

    def cores_text(self) -> Lines:
        """Whether the arithmetic's workers fit this machine's spare cores (and the reference's)."""
        spare = max(self.plan.cores - 1, 1)
        needed = self.knee.workers_needed
        # the plateau's bound where it names the cores or the host's side (review 2026-12-03h
        # item 3, 2026-12-04i items 2 and 3: one bound, the same in the plateau and here)
        plateau = getattr(self, "plateau", None)
        name = plateau.bound_name if plateau is not None else ""
        if needed > spare:
            said = (f"{needed / spare:.1f}x more than there are: the cores bound it (the decode), "
                    "which has to move (GPU decoding, DALI) or get cheaper (uint8, smaller crops).")
        elif name in ("the cores", "the main thread's core, shared with the decoders"):
            said = (f"enough for the workers, but the plateau is bound by {name} (above): the "
                    "decode has to move or get cheaper.")
        elif name in ("host-bound launches", "the main thread's work", "the host's side"):
            said = (f"enough for the workers; the plateau is bound by {name} (above), which more "
                    "workers do not lift.")
        else:
            said = "the cores suffice; tune the loader."
        out = Lines([f"this machine: {needed:.1f} workers asked, {spare} core(s) spare: {said}"])
        old = self.chapter.recorded("knee")
        if old and not self.on_gpu:
            out.append(f"recorded on {_ref()}: {old['workers_needed']:.1f} workers asked, "
                       f"{old['cores'] - 1} cores spare")
        return out

    # --- C26 ------------------------------------------------------------------------------
    def c26_text(self, ev: dict) -> Lines:
        """What a real DataLoader over a Dataset that follows the advice did (C26's evidence)."""
        self.c26_evidence = ev
        ran = ev["error_type"] + ": " + ev["error_message"] if ev["getitem_raises"] else "ran"
        return Lines([
            f"a Dataset that follows the advice: {ran}; the plain batch "
            f"{ev['plain_batch_shape']} has strides {tuple(ev['plain_batch_stride'])}",
            f"returning [1, C, H, W] samples instead: the default collate stacks them into "
            f"{ev['unsqueezed_batch_shape']} (channels_last: {ev['unsqueezed_batch_channels_last']})"])

    # --- C25 ------------------------------------------------------------------------------
    @functools.cache  # noqa: B019 -- one Lesson per notebook run; measured once
    @_timed
    def busy_returns(self) -> dict:
        """Copies from pageable and pinned memory behind a ~50 ms queued kernel (busy_stream)."""
        rows, said = h2d_copies.busy_stream_returns()
        return {"rows": [r.as_dict() for r in rows], "warnings": said}

    def when_pageable_returns(self) -> str:
        """The C25 quiz's answer: from this GPU, else from the reference's record."""
        found = self.busy_returns() if self.on_gpu else self.chapter.recorded("busy_stream")
        if not found:
            return "nothing recorded yet"
        # review 2026-12-04m item 10: keyed on the row C25 is judged at, the seed's batch (or
        # the rows around it in a record without it), not on the largest size
        pageable = sorted((r for r in found["rows"] if r["memory"] == "pageable"), key=lambda r: r["nbytes"])
        seed = ch05_claims.seed_rows(pageable)
        return ("after the queued kernel and the copy: the CPU waits" if all(r["waited_for_kernel"] for r in seed)
                else "at once: the CPU goes on while the kernel runs")

    def c25(self, busy: Any) -> Shown:
        """The copies behind a queued kernel (`busy`: measured here, or Recorded), and C25
        judged on a GPU or shown as recorded."""
        label = "" if self.on_gpu else f" (recorded on {_ref()})"
        out = Shown()
        if busy:
            kernel_ms = max(r["kernel_s"] for r in busy["rows"]) * 1e3
            out.append(f"when x.to('cuda', non_blocking=True) returned, behind a {kernel_ms:.0f} ms "
                       f"queued kernel{label}; 'done': kernel and copy finished")
            # the units in the header, not in every cell (the same numbers in fewer words)
            out.append(f"{'size (MiB)':>10} {'pageable (ms)':>13} {'pinned (ms)':>13} {'done (ms)':>10}")
            by_size: dict[int, dict[str, dict]] = {}
            for r in busy["rows"]:
                by_size.setdefault(r["nbytes"], {})[r["memory"]] = r
            for nbytes, pair in sorted(by_size.items()):
                returned = {m: (f"{pair[m]['call_return_s'] * 1e3:.2f}" if m in pair else "-")
                            for m in ("pageable", "pinned")}
                done = max(r["done_s"] for r in pair.values()) * 1e3
                out.append(f"{nbytes / 2**20:10.2f} {returned['pageable']:>13} "
                           f"{returned['pinned']:>13} {done:10.2f}")
            out.append("torch warned: " + "; ".join(busy["warnings"]) if busy["warnings"] else
                       "torch gave no warning during these calls (warnings recorded)")
        else:
            out.append("Nothing recorded behind a queued kernel yet on the reference GPU.")
        if self.on_gpu:
            verdict = self.chapter.judge("C25", h2d_copies.c25_busy_evidence(
                busy["rows"], busy["warnings"]), form=claims.SEED_FORM)
            claims.save([verdict], self.chapter.key)
            # its reason repeats the table above in words: the verdicts' table below holds it
            out.append(f"{verdict.claim_id} {verdict.label}; its reason: in the verdicts' table below")
        else:
            old = claims.recorded("C25")
            idle_form = old is not None and not old.evidence.get("busy_stream")
            if idle_form or old is None:
                out.append("C25 needs a CUDA GPU (it times host-to-device copies); its recorded "
                           "verdict, measured on an idle stream (nothing queued before the copy), "
                           "before the busy-stream measurement above existed:")
                out.append(claims.recorded_evidence(["C25"]))
            else:  # the table above is its evidence; the verdicts' table below has its reason
                out.append(f"C25 (a CUDA GPU's claim), recorded on {_ref()} from the table above: {old.label}")
        return out

    # --- what to remember -----------------------------------------------------------------
    def takeaways(self) -> list[str]:
        """The chapter's conclusions, each built from what this run measured."""
        sweep, knee, plateau, plan = self.sweep_workers, self.knee, self.plateau, self.plan
        knob_rows = self.knob_rows
        w0 = sweep.where(num_workers=0)[0]
        best = max(sweep.runs, key=lambda r: r.samples_per_s)
        # uint8 alone: the row whose only change from the baseline is uint8 (the pinned,
        # prefetched uint8 row is another knob's gain too), or none when the budget left it out.
        uint8_row = next((r for r in knob_rows if r["label"] == f"{knob_rows[0]['label']} uint8"), None)
        # the wait and the knee in one line: the curriculum's three to five takeaways (session aa: six)
        lines = [
            wait_takeaway(w0, best, sweep.runs)
            + f" The knee sits at {knee.workers} worker(s); the arithmetic asks for {knee.workers_needed:.1f} of "
            f"{plan.cores - 1} spare cores"
            + ("; this grid cannot test whether the two agree." if knee.agrees is None else
               f"; the two {'agree (coarsely: within one step of the sweep)' if knee.agrees else 'disagree'}."),
            # review 2026-12-04j item 10: the plateau and pin_memory's prediction, each its own sentence
            as_sentences(plateau_takeaway(plateau, self._pin_row(), not control_failed(knob_rows))),
            self._knob_takeaway(uint8_row),
            f"channels_last is a 4-D layout: from __getitem__ it raises "
            f"({self.c26_evidence['error_message']}); put it on the collated batch or in the step (C26).",
        ]
        c25 = (next((v for v in self.chapter.verdicts if v.claim_id == "C25"), None)
               or claims.recorded("C25"))
        if c25 is not None:
            if c25.recorded:  # the recorded evidence, judged by today's check (it says what it lacks)
                c25 = claims.get("C25").judge(c25.evidence, machine=c25.machine, form=c25.form)
            # what it depends on, or the first clause of its reason; the verdict table has the rest
            finding = (c25.depends_on if c25.outcome == "depends" and c25.depends_on
                       else c25_finding(c25.evidence) or c25.reason.split("; ")[0])
            lines.append(f"non_blocking from pageable memory (C25, {c25.outcome}"
                         f"{'' if self.on_gpu else ', recorded'}): {finding}.")
        return lines

    def _pin_row(self) -> Mapping | None:
        """The knob ladder's '+ pin' row (pin_memory alone against the baseline), if measured."""
        return next((r for r in self.knob_rows if r["label"] == f"{self.knob_rows[0]['label']} pin"), None)

    def _knob_takeaway(self, uint8_row: Mapping | None) -> str:
        """The knob line of the takeaways: on a GPU the ladder's steps, each called against the
        baseline, a step's increment over the step before beside it, shown, not called (issue
        39: no takeaway credits an increment the table did not call); on a CPU uint8 alone
        against the baseline. None of them when the A/A control failed (control_failed): the
        line says so and names the control's interval."""
        if control_failed(self.knob_rows):
            aa = next(r for r in self.knob_rows if r["label"].endswith("(A/A)"))
            return (f"Knobs at the knee: the A/A control read {against_text(aa)}, so "
                    f"{CONTROL_FAILED}.")
        steps = [r for r in self.knob_rows[1:] if not r["label"].endswith("(A/A)") and r.get("against")]
        base = self.knob_rows[0]["label"]
        if self.on_gpu and steps:
            runs = reproduce.reference_knob_runs()  # review 2026-12-04m item 2: call + range across runs
            return ("The seed's advice together, called against the baseline by the knob table's "
                    "rule: " + "; ".join(
                        f"{step_name(r['label'], base)} {call_cell(r, self.knob_rows, brackets=True)}"
                        + (f" (the reference's reproduce runs: {reproduce.runs_text(runs[reproduce.at_knee(r['label'])], r)})"
                           if runs.get(reproduce.at_knee(r["label"])) else "")
                        for r in steps) + ".")
        # review 2026-12-04m item 10: the calls that stand, then uint8 alone whatever its call
        called = [r for r in steps if r.get("decision") in (knee_experiment.GAIN, knee_experiment.LOSS)
                  and r is not uint8_row]
        said = [f"{r['label']} {against_text(r)}" for r in called]
        if uint8_row is not None:
            said.append(f"uint8 alone {against_text(uint8_row)}")
        if said:
            return "Knobs, by the table's rule: " + "; ".join(said) + "."
        return ("Knobs are read at the knee: the knob table says which were measured; this run "
                "measured no uint8 row alone.")

    # --- optional: start-up ---------------------------------------------------------------
    @functools.cached_property
    @_timed
    def startups(self) -> tuple[loader_sweep.Startup, loader_sweep.Startup]:
        """Four epochs' first batches, fresh workers against persistent ones (a trivial dataset)."""
        self.start_workers = max(1, min(2, max(self.bench.worker_counts)))
        trivial = loader_data.Trivial(length=64)
        setting = loader_sweep.Setting(num_workers=self.start_workers, batch_size=16)
        return (loader_sweep.startup(trivial, setting, epochs=4),
                loader_sweep.startup(trivial, loader_sweep.with_persistence(setting, True), epochs=4))

    def which_first_batches_are_faster(self) -> str:
        """The start-up quiz's answer, from this run's first batches per epoch."""
        fresh, kept = self.startups
        first_same = kept.first_batch_s[0] > 0.7 * fresh.first_batch_s[0]
        later_faster = max(kept.first_batch_s[1:]) < 0.8 * min(fresh.first_batch_s[1:])
        if later_faster and first_same:
            return "every epoch after the first"
        if later_faster:
            return "every epoch, the first included"
        return "none: no measurable difference"

    def startup(self) -> Shown:
        """First batches per epoch, fresh against persistent workers (kept under startup)."""
        fresh, kept = self.startups
        self.chapter.record("startup", {"fresh": fresh.as_dict(), "persistent": kept.as_dict(),
                                        "workers": self.start_workers, "dataset": "trivial"})
        out = Shown(f"{run.setting.label:<16} first batch per epoch: "
                    + ", ".join(f"{t * 1e3:.0f} ms" for t in run.first_batch_s) for run in (fresh, kept))
        gain = min(fresh.first_batch_s[1:]) / max(max(kept.first_batch_s[1:]), 1e-9)
        out.append(f"later epochs' first batch: {gain:.1f}x faster with persistent workers "
                   f"({self.which_first_batches_are_faster()})")
        out.append(loader_plots.startup_figure([fresh, kept]))
        return out

    # --- optional: what pinning costs -----------------------------------------------------
    def _pin_thread(self) -> dict:
        loader = loader_sweep.make_loader(self.data, loader_sweep.Setting(
            num_workers=max(self.knee.workers, 1), batch_size=self.plan.batch_size, pin_memory=True))
        return h2d_copies.pin_thread_cpu_s(loader, 8)

    def _pin_fresh(self) -> dict:
        """pinning_cost in the fresh process prepare() started (its imports' seconds kept
        with the cell seconds), or in one started now."""
        ahead, self._fresh_pin = self._fresh_pin, None
        if ahead is None:
            return h2d_copies.pinning_cost_fresh().as_dict()
        cost = ahead.measure().as_dict()
        if ahead.import_s is not None:
            self.seconds["fresh pinning process: imports, overlapped"] = round(ahead.import_s, 3)
        return cost

    @_timed
    def pinning_cost(self) -> Lines:
        """Pinning in a fresh process and the DataLoader's pin thread (a GPU's, or recorded)."""
        out = Lines([] if self.on_gpu else
                    ["Pinning needs a CUDA GPU: this is what the reference GPU recorded."])
        cost = self.chapter.here_or_recorded(
            "pinning_cost_fresh", self._pin_fresh)
        pin_thread = self.chapter.here_or_recorded("pin_thread", self._pin_thread)
        tag = "" if self.on_gpu else f" (recorded on {_ref()})"
        if cost:
            reserved = cost["host_reserved_bytes"]
            out.append(f"pinning {cost['nbytes'] / 2**20:.0f} MiB in a fresh process: "
                       f"{cost['first_pin_s'] * 1e3:.0f} ms ({cost['first_pin_cpu_s'] * 1e3:.0f} ms of "
                       f"CPU); again, from the cached block: {cost['cached_pin_s'] * 1e3:.1f} ms "
                       f"({cost['cached_pin_gbps']:.1f} GB/s){tag}")
            if reserved is not None:
                out.append(f"the pinned pool grew by {reserved / 2**20:.0f} MiB for "
                           f"{cost['nbytes'] / 2**20:.0f} MiB asked{tag}")
        else:
            out.append("nothing recorded from a fresh process yet on the reference GPU")
        if pin_thread and pin_thread.get("pin_thread_cpu_s") is not None:
            out.append(f"the DataLoader's pin thread: {pin_thread['pin_thread_cpu_s'] * 1e3:.0f} ms "
                       f"of CPU over {pin_thread['batches']} batches "
                       f"({100 * pin_thread['pin_thread_share_of_wall']:.0f}% of the wall time){tag}")
        return out

    # --- optional: C23 and C13 ------------------------------------------------------------
    def pin_memory_device_gain(self) -> str:
        """The C23 quiz's answer: from this run's GPU measurement, else the recorded one."""
        if self.on_gpu:
            gbps = self._c23_evidence()
        else:
            verdict = claims.recorded("C23")
            if verdict is None:
                return "nothing recorded yet"
            gbps = verdict.evidence
        gain = gbps["pin_memory_device_gbps"] / gbps["pinned_gbps"]
        return ("about 1.45x, as the seed says" if gain > 1.3 else
                "a little (1.1x to 1.3x)" if gain > 1.1 else "none: the same copy")

    def dataloader_warnings(self) -> Lines:
        """What this torch's DataLoader warns when given pin_memory_device (no GPU needed)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            probe_loader = torch.utils.data.DataLoader(
                torch.utils.data.TensorDataset(torch.zeros(4, 2)), batch_size=2, pin_memory=True,
                pin_memory_device="cuda:0")
            next(iter(probe_loader))
        self.warnings_seen = sorted({str(w.message).splitlines()[0] for w in caught})
        return Lines(f"DataLoader warns: {text}" for text in self.warnings_seen)

    def dataloader_source(self) -> Lines:
        """Every line of this torch's DataLoader naming pin_memory_device, and whether the
        torch.cuda._pin_memory() the seed names exists."""
        self.source_lines = [
            line.strip() for line in inspect.getsource(torch.utils.data.dataloader).splitlines()
            if "pin_memory_device" in line and not line.strip().startswith("#")]
        return Lines([f"torch {torch.__version__}, torch/utils/data/dataloader.py:",
                      *(f"    {line[:110]}" for line in self.source_lines),
                      f"torch.cuda._pin_memory exists: {hasattr(torch.cuda, '_pin_memory')} | "
                      f"Tensor.pin_memory exists: {hasattr(torch.Tensor, 'pin_memory')}"])

    def _seen(self, name: str, read: Callable[[], object]) -> list[str]:
        """What an earlier cell read (the DataLoader's warnings or source lines), read now if
        that cell has not run."""
        if not hasattr(self, name):
            read()
        return getattr(self, name)

    @functools.cache  # noqa: B019 -- one Lesson per notebook run; measured once
    def _c23_evidence(self) -> dict:
        shape = h2d_copies.SEED_BATCH_SHAPE
        pageable = torch.randn(shape)
        source = torch.utils.data.TensorDataset(pageable)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the deprecation warning, shown above
            (pinned,) = next(iter(torch.utils.data.DataLoader(source, batch_size=shape[0],
                                                              pin_memory=True)))
            (with_device,) = next(iter(torch.utils.data.DataLoader(
                source, batch_size=shape[0], pin_memory=True, pin_memory_device="cuda:0")))
        comparison, flags = self.chapter.retried(lambda: h2d_copies.compare_sources(
            {"pageable": pageable, "pinned": pinned, "pin_memory_device": with_device}))
        self.chapter.record("h2d_seed_size", comparison.table())
        return {"pageable_gbps": comparison["pageable"].timing.gbps,
                "pinned_gbps": comparison["pinned"].timing.gbps,
                "pin_memory_device_gbps": comparison["pin_memory_device"].timing.gbps,
                "pinned_speedup_iqr": h2d_copies.speedup_between(comparison, "pageable", "pinned"),
                "pin_memory_device_speedup_iqr": h2d_copies.speedup_between(
                    comparison, "pinned", "pin_memory_device"),
                "pin_memory_device_batch_pinned": bool(with_device.is_pinned()),
                "transfer_bytes": torch.Size(shape).numel() * 4,
                "dataloader_warnings": self._seen("warnings_seen", self.dataloader_warnings),
                "flags": flags,
                "device": h2d_copies.environment_note()}

    @_timed
    def c23(self) -> Shown:
        """Bandwidth against size and the seed's three rows at 154 MB: C23 judged on a GPU
        (measured again once if the harness flags a copy), else the recorded curve and verdict."""
        seed_lines = {"seed pageable": ch05_claims.SEED_GBPS["pageable"],
                      "seed pinned": ch05_claims.SEED_GBPS["pinned"]}
        curve = self.chapter.here_or_recorded(
            "h2d_curve", lambda: [vars(p) for p in h2d_copies.bandwidth_curve()])
        if not self.on_gpu:
            out = Shown()
            if curve:
                out += [f"No GPU here: the curve recorded on {_ref()}, labelled recorded.",
                        loader_plots.bandwidth_figure(curve.value, seed_lines)]
            return Shown([*out, claims.recorded_evidence(["C23"])])
        verdict = self.chapter.judge("C23", self._c23_evidence(), form=claims.SEED_FORM)
        claims.save([verdict], self.chapter.key)  # saved at once: a later cell cannot lose it
        plateau = getattr(self, "plateau", None)
        link = link_text(curve, plateau.copy_bytes if plateau else None, plateau.copy_alone_s if plateau else None,
                         seed=verdict.evidence)
        return Shown([loader_plots.bandwidth_figure(curve, seed_lines),
                      *([link] if link else []), f"{verdict.claim_id} {verdict.label} -- {verdict.reason}"])

    @_timed
    def c13(self) -> Shown:
        """Whether a pin_memory_device batch is read by the GPU in place (pmd_probe); C13."""
        if not self.on_gpu:
            return Shown([claims.recorded_evidence(["C13"])])
        probe = self.chapter.here_or_recorded("pmd_probe", h2d_copies.pin_memory_device_probe)
        out = Shown()
        for label in ("pin_memory", "pin_memory_device"):
            row = probe[label]
            out.append(f"{label:<18} batch on {row['batch_device']}, pinned {row['batch_pinned']}, "
                       f"GPU op accepts it: {row['gpu_op_accepts_batch']}, H2D memcpys when moved: "
                       f"{row['h2d_memcpy_events']} {row['h2d_memcpy_names']}")
        verdict = self.chapter.judge("C13", {
            **probe["pin_memory_device"], "torch": probe["torch"],
            "dataloader_source_lines": self._seen("source_lines", self.dataloader_source),
            "torch_cuda__pin_memory_exists": hasattr(torch.cuda, "_pin_memory")}, form=claims.SEED_FORM)
        claims.save([verdict], self.chapter.key)
        out.append(f"{verdict.claim_id} {verdict.label} -- {verdict.reason}")
        return out

    # --- optional: the device-to-host trap ------------------------------------------------
    @functools.cache  # noqa: B019 -- one Lesson per notebook run; measured once
    @_timed
    def _trap(self) -> list[dict]:
        return [t.as_dict() for t in h2d_copies.d2h_trap()]

    def what_the_early_read_gives(self) -> str:
        """The trap quiz's answer: from this GPU, else from the reference's record."""
        rows = self._trap() if self.on_gpu else self.chapter.recorded("d2h_trap")
        if not rows:
            return "nothing recorded yet"
        pinned = next(r for r in rows if r["destination"] == "pinned")
        return ("old values: the copy has not happened yet" if pinned["wrong_before_sync"] > 0
                else "the GPU's values")

    def d2h_trap(self) -> Lines:
        """Values wrong before and after synchronising, per destination (kept under d2h_trap)."""
        rows = self.chapter.here_or_recorded("d2h_trap", self._trap)
        if not rows:
            return Lines(["No GPU here and nothing recorded yet for the reference GPU."])
        tag = "" if self.on_gpu else f" (recorded on {_ref()})"
        return Lines(f"{r['destination']:<9} destination: {r['wrong_before_sync']:>9} of "
                     f"{r['elements']} values wrong before torch.cuda.synchronize(), "
                     f"{r['wrong_after_sync']} after{tag}" for r in (rows.value if not self.on_gpu else rows))

    # --- optional: the overlap, seen ------------------------------------------------------
    @_timed
    def overlap(self) -> Lines:
        """The starving loader and the tuned one under the profiler (overlap); traces kept."""
        at_knee = self.sweep_knobs.runs[0].setting.num_workers
        starving = loader_sweep.Setting(num_workers=0, batch_size=self.plan.batch_size)
        # on a GPU the knob ladder's top row (review 2026-12-04j item 8: the timeline left out
        # its uint8, so 'tuned' was not the row the ladder measured)
        top = self.on_gpu and at_knee > 0
        tuned = loader_sweep.Setting(num_workers=at_knee, batch_size=self.plan.batch_size,
                                     pin_memory=self.on_gpu, device_prefetch=top, ship_uint8=top)
        overlap: dict[str, dict] = {}
        self.traces: dict[str, object] = {}
        for name, setting in (("starving", starving), ("tuned", tuned)):
            data = self.bench.data_uint8 if setting.ship_uint8 else self.data
            trace = timeline.from_profiler(loader_sweep.profile_steps(data, setting, self.step,
                                                                      steps=OVERLAP_STEPS))
            figures = timeline.summary(trace).figures()
            self.traces[name] = trace
            # review 2026-12-04m item 9: the same loader's step unprofiled, from the knob table's
            # windows (batch / its samples/s), so its GPU idle share is not the profiler's alone
            row = next((r for r in getattr(self, "knob_rows", []) if r["label"] == setting.label), None)
            overlap[name] = {"setting": setting.label, **loader_sweep.waiting_in_trace(trace),
                             "gpu_idle_share": figures["gpu_idle_share"],
                             "h2d_overlap_share": figures["h2d_overlap_share"],
                             "window_us": figures["window_us"], "steps": OVERLAP_STEPS,
                             "unprofiled_step_s": (setting.batch_size / row["samples_per_s"]
                                                   if row and row.get("samples_per_s") else None)}
        self.chapter.record("overlap", overlap)
        out = Lines()
        for name, o in overlap.items():
            gpu_part = gpu_overlap_text(o)
            out.append(f"{name:<9} ({o['setting']}): waiting for data {100 * o['waiting_share']:.0f}% "
                       f"of the profiled steps{gpu_part}")
        out.append("A tuned loader that still waits is starved: more workers, cheaper samples "
                   "(uint8) or decoding elsewhere, as the arithmetic above says."
                   if overlap["tuned"]["waiting_share"] > 0.25
                   else "The tuned loader keeps the step fed: its waiting share is small.")
        return out

    def timeline(self, name: str) -> widgets.Timeline:
        """The profiled steps of the overlap's 'starving' or 'tuned' loader, drawn."""
        return widgets.Timeline(self.traces[name])

    def recorded_overlap(self) -> Lines:
        """The reference GPU's overlap, labelled recorded (nothing on a GPU: it measured its own)."""
        if self.on_gpu:
            return Lines()
        gpu_overlap = self.chapter.recorded("overlap")
        if not gpu_overlap:
            return Lines(["nothing recorded yet for the reference GPU"])
        return Lines(f"recorded on {_ref()}, {name} ({o['setting']}): waiting "
                     f"{100 * o['waiting_share']:.0f}%{gpu_overlap_text(o)}"
                     for name, o in gpu_overlap.items())


OVERLAP_STEPS = 3  # steps profiled for each loader of the overlap (starving, tuned)


def workers_text(workers: int, knee: int, arithmetic: int | None) -> str:
    """Which worker count the knob table ran at, and why (review 2026-12-04l item 5): the
    arithmetic's, fixed before the knobs ran, so that every run measures the same settings
    (the measured knee moves between runs within one step of the sweep: 8, 8, 4 on the H200)."""
    if arithmetic is None:
        return f"Workers: {workers}, the measured knee ({knee}); no arithmetic to fix them from."
    return f"Workers: {workers}, the arithmetic's (the knee: {knee})."


def windows_text(baseline: loader_sweep.Run, workers_sweep: loader_sweep.Sweep) -> str:
    """What a knob window is, beside the worker sweep's window of the same setting (review
    2026-12-04l item 3: one setting, 1,335 and 1,041 samples/s on one H200 page): both are
    one window a round of a queue's steps after a warm-up of a batch per worker, the loader's
    start-up outside; where the worker sweep ran the baseline's setting, its samples/s and
    median step beside this table's, so a gap shows whether the step or the wait moved."""
    if not getattr(baseline, "window_steps", None):
        return ""
    text = (f"A window: {baseline.window_steps} steps after {baseline.warmup_steps} of warm-up, "
            f"start-up outside")
    same = [r for r in getattr(workers_sweep, "runs", []) if r.setting.label == baseline.setting.label
            and (r.window_steps, r.warmup_steps) == (baseline.window_steps, baseline.warmup_steps)]
    if not same or not same[0].compute_median_s > 0:
        return text + "."
    there = same[0]
    return (text + f", as in the worker sweep. There {baseline.setting.label} ran "
            f"{there.samples_per_s:.0f}/s (step {there.compute_median_s * 1e3:.1f} ms, waiting "
            f"{100 * there.wait_share:.0f}%), here {baseline.samples_per_s:.0f}/s (step "
            f"{baseline.compute_median_s * 1e3:.1f} ms, waiting {100 * baseline.wait_share:.0f}%); "
            f"each call reads its own rounds' baseline.")


def gpu_overlap_text(o: Mapping) -> str:
    """', GPU idle 75% of the 3 profiled steps' 36.0 ms (busy 9.0 ms), H2D copy beside kernels 7%
    (...)': the GPU part of an overlap line (the trace's span and the GPU's busy time in it,
    where recorded), with
    the bound beside the overlap share (review 2026-12-03e item 8): in a host-bound step the
    copy runs in the GPU's idle gaps, off the critical path, so a low share there is not a
    failed prefetcher (said where the GPU idles over half the time and the step waits for data
    under half: then the host's part of the step binds, not the loader). '' without a GPU."""
    idle = o.get("gpu_idle_share")
    if idle is None:
        return ""
    window, steps = o.get("window_us"), o.get("steps")
    # the trace's span and the GPU's busy time in it beside the share (review 2026-12-03g item
    # 9: a tuned loader idling 75% beside a plateau idling 62% read as 'tuning made the GPU
    # idler'; a share says nothing without what it is a share of)
    of = (f" of the {steps} profiled steps' {window / 1e3:.1f} ms (busy {window * (1 - idle) / 1e3:.1f} ms)"
          if window and steps else "")
    text = (f", GPU idle {100 * idle:.0f}%{of}, H2D copy beside kernels "
            f"{100 * (o.get('h2d_overlap_share') or 0):.0f}%")
    if idle > loader_sweep.HOST_BOUND_IDLE and (o.get("waiting_share") or 0) < 0.5:
        # review 2026-12-04m item 9: that the copy ran in the idle gaps was never measured
        text += " (host-bound: the GPU idles while the step hardly waits for data)"
    step = o.get("unprofiled_step_s")
    if step and window and steps:  # item 9: the share of the step the knob table timed unprofiled
        busy = window * (1 - idle) * 1e-6 / steps
        # review 2026-12-04n item 6: batch / samples/s is a batch's wall time, its wait included,
        # not the step (the knob table's 'step (median)' column): worded as what it is
        text += (f"; unprofiled, a batch took {step * 1e3:.1f} ms in the knob table's windows (wait included): "
                 f"GPU busy {busy * 1e3:.1f} ms of it, idle {100 * max(0.0, 1 - busy / step):.0f}%")
    return text


def parts_line(timings: Mapping[str, tuple[object, str]]) -> str:
    """'the step on the device 22.0 ms (IQR 2.2), the copy alone 6.4 ms (IQR 0.5); harness
    warnings: noisy, wall clock (print(lesson.bench.compute) ... reads them)': each Timing's
    median and IQR, and its harness warnings named by their first words only (each is a
    paragraph; `print(name)` shows them whole). Why so short: the plateau prints these
    medians again as parts of the step, and on the H200 the two full Timing lines and their
    warnings took some 70 words of the chapter's 1,500. A missing timing (None) is left out."""
    shown, kinds, names = [], [], []
    for what, (timing, name) in timings.items():
        if timing is None:
            continue
        shown.append(f"{what} {timing.median_s * 1e3:.1f} ms (IQR {timing.iqr_s * 1e3:.1f})")
        said = [w.split(":")[0] for w in getattr(timing, "warnings", ())]
        kinds += [k for k in said if k not in kinds]
        names += [name] if said else []
    text = ", ".join(shown)
    if kinds:
        text += f"; harness warnings: {', '.join(kinds)} ({', '.join(f'print({n})' for n in names)})"
    return text


_CALLS = {knee_experiment.GAIN: "a gain", knee_experiment.LOSS: "a loss",
          knee_experiment.NO_DIFFERENCE: "no difference", knee_experiment.NOT_RESOLVED: "not resolved",
          knee_experiment.UNDECIDED: "one round",
          knee_experiment.OLD_NO_CLEAR: "not resolved",  # an older rule: neither gain nor loss
          "no measurable difference": "straddles 1x"}  # the last: a table recorded before the band


def against_text(row: Mapping) -> str:
    """A knob_table row against the baseline: the geometric mean of its round-by-round ratios,
    its 95% interval, and the call of the rule printed above the table ('1.34x [1.17, 1.52]:
    a gain', knee_experiment.knob_rule). A row recorded under the older rule (no 'level': the
    median and the rounds' range, every round past the band) keeps that form, '1.21x
    (1.12-1.36)'. A row without the numbers keeps its stated sentence."""
    if row.get("decision") == "baseline":
        return "the baseline"
    if row.get("ratio") is None or row.get("ratio_low") is None or row.get("decision") not in _CALLS:
        return row["stated"]
    if "level" not in row:  # the older rule's median and range
        return f"{row['ratio']:.2f}x ({row['ratio_low']:.2f}-{row['ratio_high']:.2f}): {_CALLS[row['decision']]}"
    low, high = row["ratio_low"], row["ratio_high"]  # called again by today's rule (the band)
    decision = knee_experiment.judge_interval(row["ratio"], low, high, row.get("margin", knee_experiment.KNOB_MARGIN))
    if str(row.get("label", "")).endswith(knee_experiment.A_A) and decision in (knee_experiment.GAIN,
                                                                               knee_experiment.LOSS):
        wide = knee_experiment.control_interval(row)  # review 2026-12-04n item 4: its own rule
        own = knee_experiment.control_decision(row)
        if wide is not None and own not in (knee_experiment.GAIN, knee_experiment.LOSS):
            return (f"{row['ratio']:.2f}x [{low:.2f}, {high:.2f}]: {_CALLS[decision]} at 95% (a sound control: "
                    f"1 run in 20), held at its {100 * knee_experiment.CONTROL_LEVEL:.2f}% "
                    f"[{wide[0]:.2f}, {wide[1]:.2f}]")
    if row.get("within_control"):  # review 2026-12-04m item 2: within what the A/A shows
        return f"{row['ratio']:.2f}x [{low:.2f}, {high:.2f}]: {_CALLS[knee_experiment.NOT_RESOLVED]}, within the A/A's reach"
    return f"{row['ratio']:.2f}x [{low:.2f}, {high:.2f}]: {_CALLS[decision]}"


def step_name(label: str, base: str) -> str:
    """A row's label as its change from the baseline ('w8 b64 pin' over 'w8 b64': '+ pin')."""
    return f"+ {label[len(base):].strip()}" if label.startswith(base) and label != base else label


def increment_text(row: Mapping, rows: Sequence[Mapping]) -> str:
    """A ladder step's increment over the step before, as the table shows it and never calls:
    'over + pin: 1.10x [0.93, 1.29], shown, not called', and ', within the table's resolution'
    where its geometric mean lies inside the A/A's half-width (resolution): a step smaller than
    the table can call. '' for a row without an increment (knee_experiment.increment)."""
    step = row.get("increment")
    if not step or step.get("ratio") is None:
        return ""
    base = rows[0]["label"] if rows else ""
    ratio, low, high = step["ratio"], step.get("ratio_low"), step.get("ratio_high")
    spread = f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else " (one round)"
    half = resolution(rows)
    within = ", within the table's resolution" if half and 1 / half <= ratio <= half else ""
    return f"over {step_name(step['over'], base)}: {ratio:.2f}x{spread}, shown, not called{within}"


def call_cell(row: Mapping, rows: Sequence[Mapping], brackets: bool = False) -> str:
    """A row's call against the baseline (against_text) with what the reader must know beside
    it: a ladder step's increment (increment_text, after '; ' or in parentheses), or, for a row
    of an old record that could not be re-judged ('read_against', knee_experiment.rebased),
    the row it was read against: 'read against + pin (recorded under the earlier rule)'."""
    base = rows[0]["label"] if rows else ""
    text = against_text(row)
    if row.get("read_against"):
        return (f"{text}, read against {step_name(row['read_against'], base)} "
                "(recorded under the earlier rule)")
    beside = increment_text(row, rows)
    if not beside:
        return text
    return f"{text} ({beside})" if brackets else f"{text}; {beside}"


CONTROL_FAILED = "control failed: no knob call stands this run"


def link_text(curve: Sequence[Mapping], batch_bytes: int | None = None,
              batch_copy_s: float | None = None, seed: Mapping | None = None) -> str:
    """The link's ceiling and the pageable rates in one line (review 2026-12-04j item 5: the
    page printed ~14 GB/s for the batch's pageable copy and 8.7 GB/s at 147 MiB, and nothing
    reconciled them): the pinned curve's rate at its largest size (the practical ceiling, read
    from the curve, not from the PCIe generation), and the pageable rate at the batch's size
    (the plateau's copy part) beside the curve's pageable rates at its two largest sizes. ''
    without a pinned and a pageable point. seed: C23's evidence ('pageable_gbps',
    'transfer_bytes'), its pageable copy at the seed's size timed interleaved with the pinned
    ones: set beside the curve's rates either side of that size (review 2026-12-04m item 10:
    6.3 GB/s at 147 MiB against the curve's 5.6 at 64 and 5.4 at 256 MiB, unremarked)."""
    pinned = sorted((p for p in curve if p.get("memory") == "pinned"), key=lambda p: p["nbytes"])
    pageable = sorted((p for p in curve if p.get("memory") == "pageable"), key=lambda p: p["nbytes"])
    if not pinned or len(pageable) < 2:
        return ""

    def mib(n: int) -> str:
        return f"{n / 2**20:g} MiB"

    batch = (f"{batch_bytes / batch_copy_s / 1e9:.1f} GB/s for the {batch_bytes / 1e6:.1f} MB batch (the "
             "plateau's copy), " if batch_bytes and batch_copy_s else "")
    top = pinned[-1]
    text = (f"The link: pinned copies reach {top['gbps']:.1f} GB/s at {mib(top['nbytes'])}, the ceiling "
            f"measured here. Pageable: {batch}{pageable[-2]['gbps']:.1f} at {mib(pageable[-2]['nbytes'])}, "
            f"{pageable[-1]['gbps']:.1f} at {mib(pageable[-1]['nbytes'])}: the CPU stages a pageable copy "
            "through a pinned buffer (CUDA's documentation), so its rate is the CPU's copy's, and it "
            "changes with the size (why it falls at the largest is not measured here).")
    size, rate = (seed or {}).get("transfer_bytes"), (seed or {}).get("pageable_gbps")
    below = [p for p in pageable if size and p["nbytes"] < size]
    above = [p for p in pageable if size and p["nbytes"] > size]
    if rate and below and above:
        text += (f" At the seed's {size / 2**20:.0f} MiB, timed interleaved with the pinned copies, "
                 f"pageable ran {rate:.1f} GB/s against the curve's {below[-1]['gbps']:.1f} at "
                 f"{mib(below[-1]['nbytes'])} and {above[0]['gbps']:.1f} at {mib(above[0]['nbytes'])}: two "
                 "timings at different moments, and the curve has no point at that size (what moved "
                 "the rate is not measured).")
    return text


def c25_finding(evidence: Mapping) -> str:
    """C25's takeaway from its busy-stream rows (review 2026-12-04j item 3): what the pageable
    call did at the seed's batch (the rows the verdict reads, ch05 claims.seed_rows), and the
    smallest size that waited, labelled the course's own finding; '' without such rows."""
    from labkit.chapters.ch05_dataloader import claims as ch05_claims

    rows = sorted((r for r in evidence.get("busy_stream") or () if r.get("memory") == "pageable"),
                  key=lambda r: r["nbytes"])
    if not rows:
        return ""
    seed = ch05_claims.seed_rows(rows)
    waited = all(r["returned_share"] >= ch05_claims.BLOCKING_SHARE for r in seed)
    # review 2026-12-04m item 6: 'at the seed's batch' only where that row was measured
    where = (f"at the seed's batch ({ch05_claims.SEED_BATCH_BYTES / 1e6:.1f} MB)"
             if [r["nbytes"] for r in seed] == [ch05_claims.SEED_BATCH_BYTES] else
             f"at {' and '.join(format(r['nbytes'] / 2**20, 'g') for r in seed)} MiB, "
             f"around the seed's batch ({ch05_claims.SEED_BATCH_BYTES / 1e6:.1f} MB),")
    text = (f"{where} the call "
            + ("waited out the queued kernel" if waited else "did not wait out the queued kernel"))
    early = [r for r in rows if r["returned_share"] < ch05_claims.EARLY_SHARE]
    if waited and early:
        text += f"; up to {max(r['nbytes'] for r in early) / 2**20:g} MiB it returned at once (the course's finding)"
    return text


def resolution(rows: Sequence[Mapping]) -> float | None:
    """The table's resolution: what the A/A shows in this run, its distance from 1 times its
    95% interval's half-width, as a factor (knee_experiment.control_reach), or None without an
    A/A row with an interval. Review 2026-12-04m item 2: it was the half-width alone ('+/-9%'
    on the H200 page), and a reproduce run's A/A then read 1.10x [1.02, 1.18]: two identical
    loaders 10% apart, beyond that interval. A knob's mean must clear it to be called
    (knee_experiment.controlled)."""
    return knee_experiment.control_reach(rows)


def resolution_text(rows: Sequence[Mapping]) -> str:
    """The resolution in one line, '' without an A/A interval."""
    reach = resolution(rows)
    if reach is None:
        return ""
    # the A/A's read is its row above; how the reach is taken, the markdown above the table
    return f"Resolution: identical loaders (the A/A) differ by up to {100 * (reach - 1):.0f}% here; a call must clear that."


def control_call(rows: Sequence[Mapping]) -> str | None:
    """The A/A row's call by the control's own rule (knee_experiment.control_decision: its
    interval widened to CONTROL_LEVEL; review 2026-12-04n item 4: at the knobs' 95% a sound
    control failed one of a re-record's four A/As up to 19% of the time), or None where no A/A
    row with an interval was measured."""
    aa = next((r for r in rows if str(r.get("label", "")).endswith("(A/A)")), None)
    if aa is None or aa.get("ratio") is None or aa.get("ratio_low") is None:
        return None
    return knee_experiment.control_decision(aa)


def control_failed(rows: Sequence[Mapping]) -> bool:
    """Whether the A/A control was called anything but 'not resolved' or 'no difference'
    (review 2026-12-03h item 3: the CPU page called its A/A '1.34x [1.01, 1.77]: a gain' and
    still ranked the knobs): then the rule's 5% false calls are not what this run showed, and
    no knob call of the run stands."""
    call = control_call(rows)
    return call is not None and call not in (knee_experiment.NOT_RESOLVED, knee_experiment.NO_DIFFERENCE)


def wait_takeaway(w0: loader_sweep.Run, best: loader_sweep.Run, runs: Sequence[loader_sweep.Run]) -> str:
    """The first takeaway: the wait without workers, and the best setting against it. Where no
    worker count beat none (review 2026-12-04l item 10: the CPU page read 'w0 b16 waited 56% and
    ran 1.0x the samples/s'), it says so, with the fastest count that had workers."""
    head = (f"Measure the wait, and samples over wall time: with no workers a step waited "
            f"{100 * w0.wait_share:.0f}% of the time; ")
    if best.setting.num_workers:
        return (head + f"{best.setting.label} waited {100 * best.wait_share:.0f}% and ran "
                f"{best.samples_per_s / w0.samples_per_s:.1f}x the samples/s.")
    others = [r for r in runs if r.setting.num_workers]
    if not others:
        return head + "no worker count was swept here."
    top = max(others, key=lambda r: r.samples_per_s)
    return (head + f"no worker count beat none here (the fastest with workers, {top.setting.label}, "
            f"ran {top.samples_per_s / w0.samples_per_s:.2f}x): the workers and the step share "
            f"this machine's cores.")


def plateau_takeaway(plateau: loader_sweep.Plateau, pin_row: Mapping | None = None,
                     control_ok: bool = True) -> str:
    """The plateau's line of the takeaways in one sentence (review 2026-12-03h item 8: it was
    ~100 words copied from the plateau cell): measured against predicted with the band, the
    bound, and the gain pin_memory should give from both its parts (Plateau.pin_gain_range:
    the wait off the main thread, the pageable copy made pinned; on a GPU only), beside the gain
    the knob ladder measured (`pin_row`, its '+ pin' row; none that stands when the A/A control
    failed). Neither arithmetic within its band: 'not predicted this run'."""
    if not plateau.loaded_step_s:
        return _old_plateau_takeaway(plateau)
    if plateau.paired:  # review 2026-12-06z 05-07 item 2: the call round by round
        return _paired_takeaway(plateau)
    if plateau.drift is not None:  # review 2026-12-04k item 1: no prediction, not 'not predicted'
        # the numbers of the drift are in the plateau's cell; here only that it drifted (words)
        return (f"The plateau, {plateau.measured:.0f} samples/s: no check this run (its step "
                f"drifted, above); it is bound by {plateau.bound_name}.")
    if plateau.agrees:  # review 2026-12-04m item 3: the wait is the plateau runs' own
        head = (f"The plateau, {plateau.measured:.0f} samples/s, is consistent with batch / (the step "
                f"{plateau.step_used} + its runs' own wait) = {plateau.predicted:.0f} "
                f"({plateau.measured / plateau.predicted:.2f}x)"
                + (f"; the {plateau.wait_s * 1e3:.1f} ms wait a batch ({100 * plateau.wait_share:.0f}%) "
                   "is not explained," if plateau.wait_unexplained and plateau.handover_s is None else "")
                # review 2026-12-04m item 3: the step beside + the hand-over, both timed apart;
                # 2026-12-05o item 4: only where the workers out-supply the step, with its band
                + (f"; the step + the hand-over timed apart predict {plateau.predicted_handover:.0f} "
                   f"({plateau.handover_band()})," if plateau.handover_predicts else ""))
    elif plateau.cores_agrees:
        head = (f"The plateau, {plateau.measured:.0f} samples/s, is predicted by the cores' arithmetic "
                f"({plateau.measured / plateau.cores_ceiling:.2f}x of it)")  # type: ignore[operator]
    else:  # review 2026-12-04i item 3: neither arithmetic within its band
        ceiling = (f", the cores' {plateau.measured / plateau.cores_ceiling:.2f}x"
                   if plateau.cores_ceiling else "")
        head = (f"The plateau, {plateau.measured:.0f} samples/s, was not predicted this run (step + "
                f"wait: {plateau.measured / plateau.predicted:.2f}x{ceiling})")
    # review 2026-12-04m item 4: no pin_memory line here. Its arithmetic (Plateau.pin_gain_range,
    # recorded) was never tested: no row changes pin_memory alone, and the tuned row changes
    # three things; a takeaway states what was measured
    return f"{head} and is bound by {plateau.bound_name}."


def _paired_takeaway(plateau: loader_sweep.Plateau) -> str:
    """The plateau's takeaway from its round-by-round call (review 2026-12-06z 05-07 item 2):
    'holds', 'misses' or 'not resolved' with its interval, the cores' arithmetic where that is
    the prediction that holds, and the bound."""
    check = plateau.round_check() or {}
    decision = check.get("call")
    said = loader_sweep.round_text(check, why=False)  # the ratio's drift, if any, is in the cell above
    if decision == loader_sweep.HOLDS:
        head = (f"The plateau, {plateau.measured:.0f} samples/s, is consistent with batch / (the step "
                f"{plateau.step_used} + the wait), read round by round against windows at "
                f"{plateau.loaded_workers} worker(s): {said}")
    elif plateau.cores_agrees:
        head = (f"The plateau, {plateau.measured:.0f} samples/s, is predicted by the cores' arithmetic "
                f"({plateau.measured / plateau.cores_ceiling:.2f}x of it); step + wait round by "  # type: ignore[operator]
                f"round: {said}")
    else:
        head = (f"The plateau, {plateau.measured:.0f} samples/s: batch / (step + wait), round by round "
                f"against windows at {plateau.loaded_workers} worker(s), {said} this run")
    return f"{head}; it is bound by {plateau.bound_name}."


def as_sentences(line: str) -> str:
    """The plateau's takeaway as two sentences where it carries pin_memory's prediction (review
    2026-12-04j item 10: some 70 words in one run-on line): the plateau and its bound, then
    pinning; one list item since session aa (the curriculum's three to five takeaways)."""
    head, sep, pin = line.partition("; pin_memory takes ")
    return f"{head}. pin_memory takes {pin}" if sep else line


def _old_plateau_takeaway(plateau: loader_sweep.Plateau) -> str:
    """The plateau's line of the takeaways, on the step the explanation used (review
    2026-12-03g item 2: the takeaway said 'outside 15%' from the step timed apart while the
    page printed the step inside the sweep that gives the plateau): which step, its ratio,
    the step timed apart beside it, and the bound (no split where the parts were refused)."""
    # review 2026-12-04m item 3: a consistency check where the step is the sweep's own; the step
    # timed apart beside it stays in the plateau's cell above (words: 1,500 a page)
    check = ": a consistency check" if plateau.swept_step_s else ""
    return (f"The plateau: {plateau.measured:.0f} samples/s against {plateau.predicted:.0f} from "
            f"batch / (the step {plateau.step_used}, {plateau.step_used_s * 1e3:.1f} ms, + wait), "
            f"{'within' if plateau.agrees else 'outside'} {plateau.tolerance:.0%}{check}. "
            f"What bounds it: {plateau.bound}.")


def recorded_plateau(old: dict) -> str:
    """The reference GPU's plateau in one line: the same arithmetic as `explanation`, shorter
    (the learner has just read the long form for this machine), re-read by today's rules
    (Plateau.from_record): the step inside the sweep where recorded, and no split of the step
    (a record without the parts' IQRs cannot tell a negative part from noise)."""
    try:
        plateau = loader_sweep.Plateau.from_record(old)
        idle = plateau.idle_share
        apart = (f"; the step timed apart ({plateau.step_s * 1e3:.1f} ms) gives "
                 f"{plateau.predicted_apart:.0f} ({plateau.measured / plateau.predicted_apart:.2f}x)"
                 if plateau.swept_step_s and not plateau.loaded_step_s else "")
        # a record with the step beside the decoders: its bound by today's reading of the two
        # clocks (review 2026-12-04i item 2: 'host-bound launches', not a shared core)
        # review 2026-12-04k item 2: the idle share of the unprofiled step where the record has
        # the GPU's busy time, the profiler's beside it
        # the busy and profiled times are on the H200 page; here the share alone (words)
        # review 2026-12-04m item 9: the idle share there is taken on another step than this
        # line's (41.3 against 45.5 ms on the 18:55 H200 page): the bound's name alone
        bound = (f"bound: {plateau.bound_name}"
                 if plateau.loaded_step_s and idle is not None else
                 f"GPU idle {100 * idle:.0f}%" if idle is not None else plateau.bound)
        # review 2026-12-04k item 1: a drifted step (today's rule on the record) predicts nothing;
        # review 2026-12-06z 05-07 item 2: a record timed round by round, by its call
        arithmetic = (f"batch / (step + wait) round by round against windows at {plateau.loaded_workers} "
                      f"worker(s): {loader_sweep.round_text(plateau.round_check() or {}, why=False)}"  # why: the H200 page
                      if plateau.paired else
                      plateau.drift_text() if plateau.drift is not None else
                      f"{plateau.batch_size} / ({plateau.step_used_s * 1e3:.1f} ms, the step "
                      f"{plateau.step_used}, + {plateau.wait_s * 1e3:.1f} ms, its runs' own wait) = "
                      f"{plateau.predicted:.0f} ({plateau.measured / plateau.predicted:.2f}x, a "
                      f"consistency check"
                      + (f"; the {100 * plateau.wait_share:.0f}% wait not explained)"
                         if plateau.wait_unexplained and plateau.handover_s is None else ")")
                      + (f"; the step + the hand-over ({plateau.handover_s * 1e3:.1f} ms), timed apart, "
                         f"predict {plateau.predicted_handover:.0f} ({plateau.handover_band()})"
                         if plateau.handover_predicts else ""))
        return (f"recorded on {_ref()}: {plateau.measured:.0f} samples/s at "
                f"{', '.join(str(c) for c in plateau.counts)} workers; {arithmetic}{apart}; {bound}.")
    except (KeyError, TypeError, ValueError, ZeroDivisionError):  # an older record: its own sentence
        return f"recorded on {_ref()}: {old.get('explanation', 'no plateau recorded')}"
