"""The step as the sweep runs it: timed on batches fresh from DataLoader workers, with the
minor page faults each step takes, beside the same step on one private batch used again.

Why (review 2026-12-03e item 1): in the sweep every batch arrives from a worker in a newly
mapped shared-memory segment, so the step's first read of it (on a GPU the pageable copy,
on a CPU the forward pass) touches each of its pages for the first time. Linux maps up to
16 pages of such a mapping per minor fault (fault-around: on the course's CPU a 6.3 MB batch
of 1,537 pages took 98 faults a read, and 1.2 ms against 0.1 ms for the same read of a
private batch, tests/chapters/ch05_dataloader/test_fresh_step.py). A step timed again and
again on one batch of its own, already touched, pays none of that. The chapter's arithmetic (the knee's workers, the plateau) needs
the step the loader meets, so prepare() times both here and the plateau prints the
difference beside the faults that explain it.

    fresh = fresh_step.on_fresh_batches(data, step, workers=4, batch_size=64)
    again = fresh_step.on_one_batch(step, batch)
    fresh.median_s, fresh.faults_per_step, again.faults_per_step

Faults are the whole process's (getrusage), so a thread of the main process that touches
new memory during a step (the pin thread, say) counts too; the steps here run with none. On a
CPU the step's own allocations (activations, gradients) fault as well, and how often moves
from run to run with the allocator's thresholds (16 to 1,130 a step for the small CNN on the
course's CPU, fresh or private alike), so the chapter prints faults on a GPU only, where the
step's host side allocates little and the batch's first touch is what faults.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from labkit.chapters.ch05_dataloader import loader_sweep
from labkit.measure import conditions, timing

FRESH_STEPS = 8  # timed steps on fresh batches, after a warm-up of one batch per worker
FRESH_WORKERS = 4  # workers that feed them (fewer where the sweep has fewer)
PRIVATE_CALLS = 4  # timed calls on one private batch, after one untimed call


def workers_for(most: int, cores: int) -> int:
    """Workers that feed the fresh steps: FRESH_WORKERS, at most the sweep's largest count
    (`most`, what /dev/shm holds) and the cores left once the main process has one, so the
    workers do not take the step's core (on a 2-core CPU two workers made the step 3x slower
    and 20x noisier than in the sweep's plateau runs: one)."""
    if most < 0 or cores < 1:
        raise ValueError(f"need most >= 0 workers and cores >= 1, got {most}, {cores}")
    return max(0, min(FRESH_WORKERS, most, cores - 1))


def page_bytes() -> int:
    """This machine's page size in bytes (4096 on x86-64 Linux)."""
    try:
        return int(os.sysconf("SC_PAGESIZE"))
    except (ValueError, OSError, AttributeError):  # not POSIX
        return 4096


@dataclass(frozen=True)
class StepTimes:
    """Seconds and minor page faults of each timed step, and the bytes of one batch."""

    label: str
    times_s: tuple[float, ...]
    faults: tuple[int, ...]  # minor faults during each step; () where getrusage is missing
    batch_bytes: int

    def __post_init__(self) -> None:
        if not self.times_s or (self.faults and len(self.faults) != len(self.times_s)):
            raise ValueError(f"{self.label}: need at least one step, and one fault count per step "
                             f"(got {len(self.times_s)} times, {len(self.faults)} fault counts)")

    @property
    def median_s(self) -> float:
        return timing.summarise(self.times_s).median_s

    @property
    def iqr_s(self) -> float:
        return timing.summarise(self.times_s).iqr_s

    @property
    def faults_per_step(self) -> float | None:
        """The median step's minor faults (None where they cannot be counted)."""
        return float(np.median(self.faults)) if self.faults else None

    @property
    def pages(self) -> int:
        """Pages of one batch: the most first-touch faults its read can take."""
        return -(-self.batch_bytes // page_bytes())

    def as_dict(self) -> dict:
        return {"label": self.label, "times_s": list(self.times_s), "faults": list(self.faults),
                "batch_bytes": self.batch_bytes, "median_s": self.median_s, "iqr_s": self.iqr_s,
                "faults_per_step": self.faults_per_step, "pages": self.pages}

    def line(self, pages: bool = True, faults: bool = True) -> str:
        """One line: the median and IQR, (faults) the faults a step, and (pages) the batch's pages."""
        text = f"{self.label}: {self.median_s * 1e3:.1f} ms (IQR {self.iqr_s * 1e3:.1f})"
        if not faults:
            return text
        return text + (", faults not counted here" if self.faults_per_step is None else
                       f", {self.faults_per_step:,.0f} page faults"
                       + (f" (a batch: {self.pages:,} pages)" if pages else ""))

    def __str__(self) -> str:
        return self.line()


def _timed_steps(step: Callable[..., object], next_batch: Callable[[], object],
                 count: int) -> tuple[list[float], list[int]]:
    times, faults = [], []
    for _ in range(count):
        batch = next_batch()  # not timed: the loader's wait is the sweep's 'wait', not the step
        before = conditions.minor_faults()
        start = time.perf_counter()
        step(batch)
        times.append(time.perf_counter() - start)
        after = conditions.minor_faults()
        if before is not None and after is not None:
            faults.append(after - before)
    return times, faults


def _batch_bytes(batch: Sequence[torch.Tensor]) -> int:
    return int(sum(t.nbytes for t in batch))


def on_fresh_batches(dataset: torch.utils.data.Dataset, step: Callable[..., object], workers: int,
                     batch_size: int, steps: int = FRESH_STEPS, main_threads: int | None = 1) -> StepTimes:
    """`steps` steps, each on the next batch from a loader of `workers` workers (each batch a
    fresh shared-memory segment, as in the sweep), after a warm-up of one batch per worker
    (the start-up burst, as the sweep's warm-up); only the step is timed, not the wait.
    main_threads as loader_sweep.measure (one, as the sweep runs the step)."""
    if steps < 1 or workers < 0 or batch_size < 1:
        raise ValueError(f"need steps >= 1, workers >= 0, batch_size >= 1; got {steps}, {workers}, "
                         f"{batch_size}")
    warm = max(workers, 1)
    if len(dataset) < (warm + steps) * batch_size:  # type: ignore[arg-type]
        raise ValueError(f"the dataset has {len(dataset)} samples; {warm + steps} batches of "  # type: ignore[arg-type]
                         f"{batch_size} need {(warm + steps) * batch_size}")
    setting = loader_sweep.Setting(num_workers=workers, batch_size=batch_size)
    previous = torch.get_num_threads()
    if main_threads is not None:
        torch.set_num_threads(main_threads)
    loader = loader_sweep.make_loader(dataset, setting)
    iterator = iter(loader)
    try:
        for _ in range(warm):
            first = next(iterator)
            step(first)
        times, faults = _timed_steps(step, lambda: next(iterator), steps)
    finally:
        loader_sweep.close(loader, iterator)
        torch.set_num_threads(previous)
    return StepTimes(f"step, fresh batches from {workers} worker(s)", tuple(times), tuple(faults),
                     _batch_bytes(first))


def on_one_batch(step: Callable[..., object], batch: Sequence[torch.Tensor], calls: int = PRIVATE_CALLS,
                 main_threads: int | None = 1) -> StepTimes:
    """`calls` steps on the same private batch (after one untimed call): its pages are
    touched once, and every timed call finds them in place."""
    if calls < 1:
        raise ValueError(f"calls must be >= 1, got {calls}")
    previous = torch.get_num_threads()
    if main_threads is not None:
        torch.set_num_threads(main_threads)
    try:
        step(batch)
        times, faults = _timed_steps(step, lambda: batch, calls)
    finally:
        torch.set_num_threads(previous)
    return StepTimes("step, one private batch again", tuple(times), tuple(faults), _batch_bytes(batch))
