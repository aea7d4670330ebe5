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
from labkit.measure import conditions, intervals, timing

FRESH_STEPS = 8  # timed steps on fresh batches, after a warm-up of one batch per worker
FRESH_WORKERS = 4  # workers that feed them (fewer where the sweep has fewer)
PRIVATE_CALLS = 4  # timed calls on one private batch, after one untimed call
# The hand-over (review 2026-12-04m item 3; 2026-12-04n items 2, 3): after the fresh steps the
# loader is left alone until every batch in flight (workers x prefetch factor) is queued, read
# from the loader's own queue every HANDOVER_POLL_S (where the platform cannot read it: a pause of
# HANDOVER_WAVES batch decodes), then a next() per batch in flight is timed. Each takes a batch
# already decoded and queued, but each also sends an index, so a worker starts decoding again:
# the i-th next() of a round (from 0) runs beside min(i, workers) decoding workers. The first
# `workers` of a round are the restart (fewer than all decoding), the rest run beside every worker
# of this loader decoding, the plateau's condition at this loader's count (its workers decode
# while the step takes a batch), so that median is the hand-over the prediction uses. The count
# is prepare()'s (workers_for: at most FRESH_WORKERS), not the plateau's (8 on the H200): the page
# prints both (review 2026-12-05o item 3). Rounds repeat until HANDOVER_MIN such timings
# are kept (a 1-worker CPU: one a round). In a round whose queue was not seen full (the platform
# cannot read it, or the wait ran out), a next() over HANDOVER_DROP of a batch decode waited for a
# decode: dropped, and counted; a round seen full drops none (every batch it times was queued).
# Before each round, batches the calls before took off the queue out of order (torch stashes
# them and returns them later without unpickling) are taken untimed (_drain_stashed).
HANDOVER_WAVES = 3.0
HANDOVER_POLL_S = 0.02
HANDOVER_SETTLE_S = 0.05  # after the queue is full: the workers' feeder threads finish writing
HANDOVER_MIN = 4
HANDOVER_DROP = 0.25
HANDOVER_MAX_ROUNDS = 8


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
    handover_s: tuple[float, ...] = ()  # next() on a batch already queued (on_fresh_batches)
    handover_decoding: tuple[int, ...] = ()  # workers decoding during each of those next() calls
    handover_workers: int = 0
    handover_dropped: int = 0  # next() calls over HANDOVER_DROP of a decode: not in handover_s
    handover_waits_s: tuple[float, ...] = ()  # each round's pause until its queue was full
    handover_drained: int = 0  # batches stashed out of order, taken untimed before a round

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

    def _handed(self, busy: bool) -> list[float]:
        if not self.handover_decoding:  # an old record: every time one condition
            return list(self.handover_s)
        return [t for t, d in zip(self.handover_s, self.handover_decoding, strict=True)
                if (d >= self.handover_workers) == busy]

    @property
    def handover_median_s(self) -> float | None:
        """The median hand-over of a queued batch beside every worker of this loader decoding
        (handover_workers of them; None where not timed)."""
        busy = self._handed(True)
        return float(np.median(busy)) if busy else None

    @property
    def handover_restart_median_s(self) -> float | None:
        """The median hand-over as the workers restart (fewer than all of them decoding)."""
        idle = self._handed(False) if self.handover_decoding else []
        return float(np.median(idle)) if idle else None

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
                "faults_per_step": self.faults_per_step, "pages": self.pages,
                "handover_s": list(self.handover_s), "handover_median_s": self.handover_median_s,
                "handover_decoding": list(self.handover_decoding), "handover_workers": self.handover_workers,
                "handover_dropped": self.handover_dropped, "handover_waits_s": list(self.handover_waits_s),
                "handover_drained": self.handover_drained,
                "handover_restart_median_s": self.handover_restart_median_s}

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


def _queued(iterator: object) -> tuple[int, int] | None:
    """(batches queued, batches in flight) of a multi-worker DataLoader iterator, read from its
    queue and its count of indices sent and not yet taken; None where the platform cannot
    read a queue's size (macOS) or the iterator has no such parts."""
    try:
        return (int(iterator._data_queue.qsize()),  # type: ignore[attr-defined]
                int(iterator._tasks_outstanding))  # type: ignore[attr-defined]
    except (AttributeError, NotImplementedError, OSError):
        return None


def _wait_full(iterator: object, pause_s: float, wait_full: bool) -> tuple[float, bool]:
    """Leave the loader alone until every batch in flight is queued (polled every
    HANDOVER_POLL_S, then HANDOVER_SETTLE_S more), at most max(4 x pause_s, 1 s); where the
    queue cannot be read, or not wait_full, pause_s. Returns the seconds waited and whether the
    queue was seen full."""
    start = time.perf_counter()
    if not wait_full or _queued(iterator) is None:
        time.sleep(pause_s)
        return time.perf_counter() - start, False
    while time.perf_counter() - start < max(4 * pause_s, 1.0):
        queued, flight = _queued(iterator)  # type: ignore[misc]
        if queued >= flight:
            time.sleep(HANDOVER_SETTLE_S)
            return time.perf_counter() - start, True
        time.sleep(HANDOVER_POLL_S)
    return time.perf_counter() - start, False


def _stashed(iterator: object) -> int:
    """Batches a multi-worker DataLoader iterator took off its queue out of order and keeps for
    their turn (torch's _task_info entries that carry their data: _next_data stashes a batch that
    arrives before the one it waits for, and returns it later without unpickling); 0 where the
    iterator has no such part."""
    try:
        return sum(1 for info in iterator._task_info.values() if len(info) == 2)  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        return 0


def _drain_stashed(iterator: object, most: int) -> int:
    """next() untimed until no batch is stashed (at most `most` calls), so that a round's first
    timed next() is not a stashed batch returned in microseconds, labelled as a restart's
    hand-over, with the labels after it shifted by one (review 2026-12-05o item 9; stashed
    batches are not in _tasks_outstanding, so the round's count of batches in flight left them
    out). Returns the calls made."""
    calls = 0
    while calls < most and _stashed(iterator):
        next(iterator)  # type: ignore[call-overload]
        calls += 1
    return calls


def _handover_rounds(workers: int, prefetch: int = loader_sweep.DEFAULT_PREFETCH) -> int:
    """Rounds that give HANDOVER_MIN timings beside every worker decoding, none dropped."""
    busy = workers * (prefetch - 1)
    return -(-HANDOVER_MIN // busy) if busy else 0


def on_fresh_batches(dataset: torch.utils.data.Dataset, step: Callable[..., object], workers: int,
                     batch_size: int, steps: int = FRESH_STEPS, main_threads: int | None = 1,
                     handover_after_s: float | None = None, decode_s: float | None = None,
                     wait_full: bool = True) -> StepTimes:
    """`steps` steps, each on the next batch from a loader of `workers` workers (each batch a
    fresh shared-memory segment, as in the sweep), after a warm-up of one batch per worker
    (the start-up burst, as the sweep's warm-up); only the step is timed, not the wait.
    main_threads as loader_sweep.measure (one, as the sweep runs the step).
    handover_after_s: then time the hand-over of queued batches in rounds (the comment at
    HANDOVER_WAVES says how): each round leaves the loader alone until every batch in flight is
    queued (wait_full; at most 4 x handover_after_s, or handover_after_s where the queue cannot be
    read or not wait_full), then times a next() per batch in flight, each labelled with the workers
    decoding beside it; in a round whose queue was not seen full, a next() over HANDOVER_DROP x
    decode_s (a batch's decode) is dropped and counted. None: not timed (no workers: nothing queued)."""
    if steps < 1 or workers < 0 or batch_size < 1:
        raise ValueError(f"need steps >= 1, workers >= 0, batch_size >= 1; got {steps}, {workers}, "
                         f"{batch_size}")
    warm = max(workers, 1)
    # every batch in flight (a worker's prefetch factor each) is queued after the pause
    flight = workers * loader_sweep.DEFAULT_PREFETCH if handover_after_s is not None else 0
    rounds = _handover_rounds(workers) if flight else 0
    handing = flight * rounds
    if len(dataset) < (warm + steps + handing) * batch_size:  # type: ignore[arg-type]
        raise ValueError(f"the dataset has {len(dataset)} samples; {warm + steps + handing} batches of "  # type: ignore[arg-type]
                         f"{batch_size} need {(warm + steps + handing) * batch_size}")
    setting = loader_sweep.Setting(num_workers=workers, batch_size=batch_size)
    previous = torch.get_num_threads()
    if main_threads is not None:
        torch.set_num_threads(main_threads)
    loader = loader_sweep.make_loader(dataset, setting)
    iterator = iter(loader)
    handover: list[float] = []
    decoding: list[int] = []
    waits: list[float] = []
    dropped = drained = 0
    longest = HANDOVER_DROP * decode_s if decode_s else None
    try:
        for _ in range(warm):
            first = next(iterator)
            step(first)
        times, faults = _timed_steps(step, lambda: next(iterator), steps)
        try:  # the sampler may run out in a round added for a dropped timing
            kept = 0
            for _ in range(HANDOVER_MAX_ROUNDS if rounds else 0):
                if kept >= HANDOVER_MIN:
                    break
                # batches stashed out of order by the calls before: taken untimed, then the wait
                drained += _drain_stashed(iterator, 2 * flight)
                waited, full = _wait_full(iterator, handover_after_s, wait_full)  # type: ignore[arg-type]
                waits.append(waited)
                state = _queued(iterator)
                in_flight = min(flight, state[1]) if state is not None else flight
                if in_flight <= 0:  # the sampler ran out
                    break
                for i in range(in_flight):
                    start = time.perf_counter()
                    next(iterator)
                    took = time.perf_counter() - start
                    # a queue seen full holds every batch timed: none waits for a decode, so none
                    # is dropped (the CPU page's loaded 2 cores: 15 of 16 hand-overs over a quarter
                    # of the main process's decode, all of them queued: dropping biased the median)
                    if not full and longest is not None and took > longest:
                        dropped += 1  # waited for a decode: not a hand-over
                        continue
                    handover.append(took)
                    decoding.append(min(i, workers))
                    kept += i >= workers
        except StopIteration:
            pass
    finally:
        loader_sweep.close(loader, iterator)
        torch.set_num_threads(previous)
    return StepTimes(f"step, fresh batches from {workers} worker(s)", tuple(times), tuple(faults),
                     _batch_bytes(first), tuple(handover), tuple(decoding), workers if flight else 0,
                     dropped, tuple(waits), drained)


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


# --- the ready step beside decoding workers (review 2026-12-03h item 1) ---------------------
# The ready step alone and beside the decoding workers, in LOADED_ROUNDS interleaved rounds of
# LOADED_STEPS steps each (review 2026-12-04j item 1: 3 alone then 6 beside, once, gave
# beside/alone 1.28x on the H200 page and 0.85-1.27x in the three reproduce runs of the same
# sources: the bound it named was noise). Each round times a block alone (the decoders parked)
# and a block beside them, the order alternating round by round (ABBA: drift hits both alike);
# the slowdown is the geometric mean of the rounds' ratios with a 95% interval. cost_model
# prices it on the H200 (plateau_step_seconds: about 4 s there with 5 rounds).
# 8 rounds since session aa: on the H200 (2026-12-06 09:41, reproduce 05 on b5f96c8) the plateau's
# round-by-round ratios (loader_sweep.round_call) spread 0.10-0.22 (sd of their logs) round to round,
# so 5 rounds (Student t 2.78, 4 df) could not hold the 15% band even at a mean of exactly 1x unless
# that sd was under 0.113: "not resolved" in 3 of 3 runs (0.95x [0.72, 1.26], 1.02x [0.89, 1.18],
# 1.05x [0.92, 1.20]), and halves of 2 rounds each tripped the drift veto by chance. 8 rounds (t
# 2.36, 7 df, halves of 4) resolve a mean within about 5% of 1x at sd 0.11; the band and the rule
# are the same. Not enough for that host's worst runs: the rounds' step medians moved 3-7x more
# than their steps' own noise predicts (a round-level state), so a run at sd 0.22 holds about 6% of
# the time even at 8 (session aa's code review); about 20 rounds would be needed there.
LOADED_STEPS = 10
LOADED_ALONE_STEPS = 10
LOADED_ROUNDS = 8
DECODER_START_S = 20.0  # how long the decoders may take to decode their first batch


@dataclass(frozen=True)
class LoadedStep:
    """The ready step (its batch already where the step reads it) timed alone and then beside
    `workers` processes that decode batches without pause, each step on two clocks: wall time
    and the main thread's CPU time (time.thread_time()).

    Why (review 2026-12-03h item 1): the plateau's step ran 1.43x longer inside the sweep than
    timed apart on the H200, and nothing measured why. The hypothesis to test: the main thread
    shares the cores with the decoding workers. The wall time beside the decoders less the
    main thread's CPU time is the time the thread was off its core (descheduled, or waiting on
    the GPU); beside the decoders against alone says what the decoding costs the step. The
    decoders drop what they decode: nothing is handed over, so no wait is timed here (the
    plateau's wait is read from the sweep)."""

    workers: int
    alone_s: tuple[float, ...]
    alone_cpu_s: tuple[float, ...]
    beside_s: tuple[float, ...]
    beside_cpu_s: tuple[float, ...]
    rounds: int = 1  # the interleaved rounds the steps came from, in equal blocks, round by round
    # review 2026-12-06z 05-07 item 2: what the window callback returned in each round (a
    # plateau window, loader_sweep.Run), timed back to back with that round's beside block
    windows: tuple[object, ...] = ()

    def __post_init__(self) -> None:
        if not self.alone_s or not self.beside_s or len(self.alone_s) != len(self.alone_cpu_s) \
                or len(self.beside_s) != len(self.beside_cpu_s):
            raise ValueError("a LoadedStep needs one CPU time per wall time, alone and beside")

    @staticmethod
    def _median(values: Sequence[float]) -> float:
        return float(np.median(values))

    @property
    def median_s(self) -> float:
        """The ready step's wall time beside the decoders (median)."""
        return self._median(self.beside_s)

    @property
    def cpu_s(self) -> float:
        """The main thread's CPU time in that step (median)."""
        return self._median(self.beside_cpu_s)

    @property
    def alone_median_s(self) -> float:
        return self._median(self.alone_s)

    @property
    def alone_cpu_median_s(self) -> float:
        return self._median(self.alone_cpu_s)

    @property
    def iqr_s(self) -> float:
        return timing.summarise(self.beside_s).iqr_s

    @property
    def slowdown(self) -> float:
        """Beside the decoders over alone (wall time, medians)."""
        return self.median_s / self.alone_median_s

    def round_ratios(self) -> list[float]:
        """Each round's beside / alone (medians of its two blocks); [] with one round."""
        if self.rounds < 2 or len(self.alone_s) % self.rounds or len(self.beside_s) % self.rounds:
            return []
        a, b = len(self.alone_s) // self.rounds, len(self.beside_s) // self.rounds
        return [self._median(self.beside_s[r * b:(r + 1) * b]) / self._median(self.alone_s[r * a:(r + 1) * a])
                for r in range(self.rounds)]

    def round_beside_s(self) -> list[float]:
        """Each round's median step beside the decoders (its block); [] where the steps do not
        split into `rounds` equal blocks. Review 2026-12-06z 05-07 item 2: the step each round's
        plateau window is read against."""
        if self.rounds < 1 or len(self.beside_s) % self.rounds:
            return []
        b = len(self.beside_s) // self.rounds
        return [self._median(self.beside_s[r * b:(r + 1) * b]) for r in range(self.rounds)]

    def slowdown_interval(self) -> tuple[float, float, float] | None:
        """(geometric mean, low, high) of the rounds' beside / alone, a Student-t 95% interval
        on their logs (the knob rule's interval, intervals.geometric_interval); None below two rounds."""
        ratios = self.round_ratios()
        if len(ratios) < 2:
            return None
        return intervals.geometric_interval(ratios)

    def as_dict(self) -> dict:
        return {"workers": self.workers, "alone_s": list(self.alone_s), "alone_cpu_s": list(self.alone_cpu_s),
                "beside_s": list(self.beside_s), "beside_cpu_s": list(self.beside_cpu_s),
                "median_s": self.median_s, "cpu_s": self.cpu_s, "alone_median_s": self.alone_median_s,
                "alone_cpu_median_s": self.alone_cpu_median_s, "slowdown": self.slowdown,
                "rounds": self.rounds, "slowdown_interval": self.slowdown_interval()}


def _decode_forever(dataset: torch.utils.data.Dataset, batch_size: int, first: object, stop: object,
                    seed: int, go: object | None = None, parked: object | None = None) -> None:
    """A decoder process: batch after batch of the dataset, collated and dropped, until `stop`
    is set; `first` (an Event) is set after the first batch. While `go` (an Event, if given) is
    clear it parks: it drops the batch it is on at the next sample, sets `parked` and waits."""
    torch.set_num_threads(1)
    n = len(dataset)  # type: ignore[arg-type]
    i = seed * batch_size
    while not stop.is_set():  # type: ignore[attr-defined]
        if go is not None and not go.is_set():  # type: ignore[attr-defined]
            parked.set()  # type: ignore[union-attr]
            go.wait(0.05)  # type: ignore[attr-defined]
            continue
        if parked is not None:
            parked.clear()  # type: ignore[attr-defined]
        samples = []
        for k in range(batch_size):
            if (go is not None and not go.is_set()) or stop.is_set():  # type: ignore[attr-defined]
                break
            samples.append(dataset[(i + k) % n])
        else:
            collated = torch.utils.data.default_collate(samples)  # as a DataLoader worker does
            del collated, samples
            i += batch_size
            first.set()  # type: ignore[attr-defined]
            continue
        del samples


def _clocked_steps(step: Callable[..., object], batch: object, count: int) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for _ in range(count):
        start, start_cpu = time.perf_counter(), time.thread_time()
        step(batch)
        cpu.append(time.thread_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    return wall, cpu


def ready_beside_decoders(dataset: torch.utils.data.Dataset, step: Callable[..., object], batch: object,
                          workers: int, batch_size: int, steps: int = LOADED_STEPS,
                          main_threads: int | None = 1, alone_steps: int = LOADED_ALONE_STEPS,
                          rounds: int = LOADED_ROUNDS,
                          window: Callable[[], object] | None = None) -> LoadedStep:
    """The ready step on `batch`, after one untimed, in `rounds` interleaved rounds: each a
    block of `alone_steps` with the decoders parked and a block of `steps` while `workers`
    forked processes decode batches of `batch_size` without pause (timed once each has
    decoded its first), alone first in even rounds and beside first in odd ones; each step on
    the wall clock and the main thread's CPU clock (LoadedStep, its steps round by round).
    main_threads as loader_sweep.measure (one, as the sweep runs the step).
    window: called once a round with the decoders parked, right before the beside block in even
    rounds and right after it in odd ones (window, beside, alone; then alone, beside, window),
    so each round's window and step are timed back to back and neither always runs first; what
    it returns is kept in LoadedStep.windows. Review 2026-12-06z 05-07 item 2: the plateau's
    check is read round by round from them, so a drift of the machine's pace cancels."""
    if steps < 1 or alone_steps < 1 or workers < 0 or batch_size < 1 or rounds < 1:
        raise ValueError(f"need steps >= 1, alone_steps >= 1, workers >= 0, batch_size >= 1, "
                         f"rounds >= 1; got {steps}, {alone_steps}, {workers}, {batch_size}, {rounds}")
    import multiprocessing

    previous = torch.get_num_threads()
    if main_threads is not None:
        torch.set_num_threads(main_threads)
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods()
                                          else None)
    stop, go = context.Event(), context.Event()
    procs, firsts, parks = [], [], []
    alone: list[float] = []
    alone_cpu: list[float] = []
    beside: list[float] = []
    beside_cpu: list[float] = []
    windows: list[object] = []

    def park() -> None:  # the decoders stop at their next sample
        go.clear()
        for parked in parks:
            parked.wait(DECODER_START_S)

    def decode() -> None:  # they decode again (after their first batch, once)
        for parked in parks:
            parked.clear()
        go.set()
        deadline = time.perf_counter() + DECODER_START_S
        for first in firsts:
            first.wait(max(0.0, deadline - time.perf_counter()))

    try:
        step(batch)
        for w in range(workers):
            first, parked = context.Event(), context.Event()
            proc = context.Process(target=_decode_forever,
                                   args=(dataset, batch_size, first, stop, w, go, parked), daemon=True)
            proc.start()
            procs.append(proc)
            firsts.append(first)
            parks.append(parked)
        for r in range(rounds):
            if window is None:
                order = ("alone", "beside") if r % 2 == 0 else ("beside", "alone")
            else:
                order = ("window", "beside", "alone") if r % 2 == 0 else ("alone", "beside", "window")
            for part in order:
                if part == "window":
                    park()
                    windows.append(window())  # type: ignore[misc]
                    continue
                beside_now = part == "beside"
                (decode if beside_now else park)()
                wall, cpu = _clocked_steps(step, batch, steps if beside_now else alone_steps)
                (beside if beside_now else alone).extend(wall)
                (beside_cpu if beside_now else alone_cpu).extend(cpu)
    finally:
        stop.set()
        go.set()
        for proc in procs:  # ended at once: a decoder would finish its sample first
            proc.terminate()
        for proc in procs:
            proc.join(timeout=5)
        torch.set_num_threads(previous)
    return LoadedStep(workers, tuple(alone), tuple(alone_cpu), tuple(beside), tuple(beside_cpu), rounds,
                      tuple(windows))
