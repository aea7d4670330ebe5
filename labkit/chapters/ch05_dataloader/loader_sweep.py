"""Where a training step waits for data: the DataLoader sweep, its knee, and start-up time.

Each step of a training loop does two things in turn: it asks the loader for the next batch
(waiting, if the workers have not produced it yet) and it computes (copy to the device,
forward, backward, optimiser step). This module runs a loader under one setting and times
the two parts of every step separately:

    from labkit.chapters.ch05_dataloader import loader_data, loader_sweep, train_step
    data = loader_data.SyntheticImages(length=4096)
    step = train_step.TrainingStep(train_step.small_cnn(), device="cpu")
    run = loader_sweep.measure(data, loader_sweep.Setting(num_workers=1), step)
    run.wait_share, run.samples_per_s, run.samples_per_s_spread

Why not `labkit.measure.bench.time`: a loader is a stream, not a function to call again and
again; its steps can only be taken in order. So each step is clocked with perf_counter (the
GPU is synchronised at the end of each step, as a loop that logs `loss.item()` does, so no
GPU work leaks into the next step's wait). Throughput is samples over wall time at steady
state: a warm-up of at least one batch per worker drains the start-up burst (window_plan
says why), then three back-to-back windows of at least one queue each are timed, and
their spread is the run's spread. The median step would not do: a starved loader hands out
its queued batches quickly and then waits long for the next, so the median describes the
quick steps only.

`find_knee` then reads a sweep over num_workers: the fewest workers whose throughput is
within `tolerance` of the best. Why it sits there: loading one batch costs
batch_size x (seconds per sample) of one core's time, a step computes in `compute_s`, so
about (batch x sample cost) / compute_s workers keep the step fed, and never more than the
cores left over once the main process has its own.
"""

from __future__ import annotations

import logging
import math
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from dataclasses import fields as dataclass_fields

import numpy as np
import torch
from torch.utils.data import DataLoader

from labkit.chapters.ch05_dataloader import shm, train_step
from labkit.measure import conditions, intervals
from labkit.measure.device_time import HOST_BOUND_IDLE_SHARE

NOISY_IQR_FRACTION = 0.10  # as labkit.measure.bench: IQR over 10% of the median is not to be trusted
_log = logging.getLogger(__name__)  # each setting's seconds, at INFO (reproduce.py shows them)
KNEE_TOLERANCE = 0.10  # the knee: the fewest workers within 10% of the best throughput
DEFAULT_PREFETCH = 2  # torch's default prefetch_factor with workers
MIN_WINDOW_STEPS = 4  # the default shortest window (a plan may ask for fewer); the queue raises it
WINDOWS = 3  # windows per setting: their spread is the run's spread


@dataclass(frozen=True)
class Setting:
    """One DataLoader configuration, and the copy flag the training step uses.

    prefetch_factor None means the DataLoader's default (2 batches per worker; none without
    workers). pin_memory and non_blocking matter only with a GPU.
    """

    num_workers: int = 0
    batch_size: int = 16
    pin_memory: bool = False
    prefetch_factor: int | None = None
    persistent_workers: bool = False
    non_blocking: bool = False
    device_prefetch: bool = False
    ship_uint8: bool = False  # the dataset hands out uint8 images; the step normalises them
    control: bool = False  # an A/A control: the same loader as without it, run as a row of its own
    # a further identical copy's number (2, 3, ...; with control): the label only, so a probe
    # can time several identical loaders as rows of one sweep (benchmarks/probe_05_aa.py)
    replica: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.num_workers, int) or self.num_workers < 0:
            raise ValueError(f"num_workers must be a whole number >= 0, got {self.num_workers!r}")
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ValueError(f"batch_size must be a whole number >= 1, got {self.batch_size!r}")
        if self.num_workers == 0 and (self.prefetch_factor is not None or self.persistent_workers):
            raise ValueError("prefetch_factor and persistent_workers need num_workers > 0 (the "
                             "main process neither prefetches nor keeps workers); set num_workers "
                             "or leave them at None / False")
        if self.device_prefetch and not torch.cuda.is_available():
            raise ValueError("device_prefetch copies batches to a GPU on a side stream; there is "
                             "no GPU here, so leave it False")
        if self.replica and (not self.control or not isinstance(self.replica, int) or self.replica < 2):
            raise ValueError(f"replica numbers a further A/A copy (control=True): 2, 3, ...; got "
                             f"{self.replica!r} with control={self.control}")
        if self.prefetch_factor is not None and (not isinstance(self.prefetch_factor, int)
                                                 or self.prefetch_factor < 1):
            raise ValueError(f"prefetch_factor must be None or a whole number >= 1, got "
                             f"{self.prefetch_factor!r}")

    @property
    def label(self) -> str:
        """Short text for tables and plots: 'w2 b16 pf2 pin nb persist'."""
        parts = [f"w{self.num_workers}", f"b{self.batch_size}"]
        if self.prefetch_factor is not None:
            parts.append(f"pf{self.prefetch_factor}")
        parts += [name for name, on in (("pin", self.pin_memory), ("nb", self.non_blocking),
                                        ("persist", self.persistent_workers),
                                        ("devprefetch", self.device_prefetch),
                                        ("uint8", self.ship_uint8),
                                        ("(A/A)", self.control and not self.replica),
                                        (f"(A/A {self.replica})", self.replica)) if on]
        return " ".join(parts)

    def as_dict(self) -> dict:
        """The fields as a plain dict (saved with results)."""
        return asdict(self)


def make_loader(dataset: torch.utils.data.Dataset, setting: Setting,
                timeout_s: float = shm.DEFAULT_TIMEOUT_S, **extra: object) -> DataLoader:
    """A DataLoader for `setting`, with a timeout so a stuck worker raises instead of hanging.

    extra goes to DataLoader as is (for example pin_memory_device, to see what it does).
    """
    kwargs: dict = dict(batch_size=setting.batch_size, num_workers=setting.num_workers,
                        pin_memory=setting.pin_memory, drop_last=True)
    if setting.num_workers > 0:
        kwargs.update(timeout=timeout_s, persistent_workers=setting.persistent_workers)
        if setting.prefetch_factor is not None:
            kwargs["prefetch_factor"] = setting.prefetch_factor
    kwargs.update(extra)
    if setting.pin_memory and not torch.cuda.is_available():
        kwargs["pin_memory"] = False  # without a GPU torch would only warn and not pin
    return DataLoader(dataset, **kwargs)


def close(loader: DataLoader, iterator: object = None) -> None:
    """Stop a loader's worker processes now, rather than whenever garbage collection runs.

    Uses the iterator's private _shutdown_workers where this torch has it (it has for years);
    without it, dropping the references does the same a little later.
    """
    for it in (iterator, getattr(loader, "_iterator", None)):
        shutdown = getattr(it, "_shutdown_workers", None)
        if callable(shutdown):
            shutdown()
    if hasattr(loader, "_iterator"):
        loader._iterator = None


class WorkerFailure(RuntimeError):
    """A DataLoader worker died or stalled; the message says why and what to change."""


def _explained(error: RuntimeError, setting: Setting) -> RuntimeError:
    why = shm.explain_worker_failure(error)
    if not why:
        return error
    return WorkerFailure(f"with {setting.label}: {why}\n(original error: "
                         f"{str(error).strip().splitlines()[-1][:300]})")


# ---------------------------------------------------------------------------------------
# Measuring one setting


@dataclass(frozen=True)
class Run:
    """One setting's steady-state steps: per-step wait and compute seconds, and the wall time
    of each measuring window (warm-up steps left out).

    Throughput is samples over wall time, window by window: a starved loader delivers in
    bursts (a few quick steps from the queue, then one long wait while it refills), so the
    median step describes the quick steps and says nothing about the waits. `samples_per_s`
    is all the windows' samples over all their wall time; `samples_per_s_spread` the
    slowest and fastest window, which is what "noisy" is judged on.
    """

    setting: Setting
    wait_s: tuple[float, ...]
    compute_s: tuple[float, ...]
    first_batch_s: float
    main_threads: int
    warnings: tuple[str, ...] = field(default_factory=tuple)
    window_s: tuple[float, ...] = ()
    window_steps: int = 0
    warmup_steps: int = 0
    step_faults: tuple[int, ...] = ()  # minor page faults of each timed step (getrusage; () if none)

    def __post_init__(self) -> None:
        if self.window_s and self.window_steps * len(self.window_s) != len(self.wait_s):
            raise ValueError(f"{len(self.window_s)} windows of {self.window_steps} steps do not "
                             f"match the {len(self.wait_s)} steps measured")

    @property
    def wait_median_s(self) -> float:
        return float(np.median(self.wait_s))

    @property
    def compute_median_s(self) -> float:
        return float(np.median(self.compute_s))

    @property
    def step_times_s(self) -> np.ndarray:
        return np.asarray(self.wait_s) + np.asarray(self.compute_s)

    @property
    def step_median_s(self) -> float:
        return float(np.median(self.step_times_s))

    @property
    def step_iqr_s(self) -> float:
        q25, q75 = np.percentile(self.step_times_s, [25, 75])
        return float(q75 - q25)

    @property
    def windows(self) -> tuple[float, ...]:
        """Wall seconds of each window (the per-step sums, for a Run built without windows)."""
        if self.window_s:
            return self.window_s
        return (float(np.sum(self.step_times_s)),)

    @property
    def window_throughputs(self) -> list[float]:
        """Samples per second of each window."""
        steps = self.window_steps or len(self.wait_s)
        return [throughput(self.setting.batch_size, steps, w) for w in self.windows]

    @property
    def samples_per_s(self) -> float:
        """Samples over wall time, all windows together (not batch over the median step)."""
        steps = self.window_steps or len(self.wait_s)
        return throughput(self.setting.batch_size, steps * len(self.windows), sum(self.windows))

    @property
    def samples_per_s_spread(self) -> tuple[float, float]:
        """The slowest and the fastest window's samples per second."""
        rates = self.window_throughputs
        return (min(rates), max(rates))

    @property
    def spread_fraction(self) -> float:
        """(fastest - slowest window) over the overall throughput."""
        low, high = self.samples_per_s_spread
        return (high - low) / self.samples_per_s if self.samples_per_s > 0 else 0.0

    @property
    def noisy(self) -> bool:
        """The windows disagree by more than 10% of the throughput (as bench flags a timing).

        Judged on windows, not steps: a starved loader's steps differ by design (bursts), its
        windows need not."""
        return len(self.windows) > 1 and self.spread_fraction > NOISY_IQR_FRACTION

    @property
    def step_faults_median(self) -> float | None:
        """The median step's minor page faults (a fresh batch's first touch), None if not counted."""
        return float(np.median(self.step_faults)) if self.step_faults else None

    @property
    def wait_share(self) -> float:
        """The waiting share, one definition wherever the chapter prints one: the timed steps'
        waits over their wait + step, summed (0: never waits, 1: only waits)."""
        total = float(np.sum(self.step_times_s))
        return float(np.sum(self.wait_s)) / total if total > 0 else 0.0

    def as_dict(self) -> dict:
        """Numbers to save or to judge from (per-step and per-window seconds included)."""
        low, high = self.samples_per_s_spread
        return {**self.setting.as_dict(), "label": self.setting.label,
                "wait_median_s": self.wait_median_s, "compute_median_s": self.compute_median_s,
                "step_median_s": self.step_median_s, "step_iqr_s": self.step_iqr_s,
                "wait_share": self.wait_share, "samples_per_s": self.samples_per_s,
                "samples_per_s_low": low, "samples_per_s_high": high,
                "spread_fraction": self.spread_fraction,
                "throughput_from": "samples / wall time over steady-state windows",
                "first_batch_s": self.first_batch_s, "steps": len(self.wait_s),
                "warmup_steps": self.warmup_steps, "window_steps": self.window_steps,
                "window_s": list(self.windows), "wait_s": list(self.wait_s),
                "compute_s": list(self.compute_s), "step_faults_median": self.step_faults_median,
                "main_threads": self.main_threads, "noisy": self.noisy,
                "warnings": list(self.warnings)}


def throughput(batch_size: int, steps: int, wall_s: float) -> float:
    """Samples per second: batch_size x steps over the wall seconds they took."""
    if batch_size < 1 or steps < 1 or not wall_s > 0:
        raise ValueError(f"need batch_size >= 1, steps >= 1 and wall_s > 0; got {batch_size}, "
                         f"{steps}, {wall_s}")
    return batch_size * steps / wall_s


def row_samples_per_s(row: Mapping) -> float:
    """Throughput of a saved sweep row, from total time.

    A row saved by this version carries its windows: samples over their wall time. An older
    row (the first reference runs) kept only medians and the waiting share; then the total
    time is rebuilt from them: the compute part of the steps is steps x median compute (the
    step's compute is steady, its waits are not) and it is (1 - wait share) of the total, so
    samples/s = batch x (1 - wait share) / median compute.
    """
    if row.get("window_s"):
        return throughput(int(row["batch_size"]), int(row["window_steps"]) * len(row["window_s"]),
                          float(sum(row["window_s"])))
    share, compute = float(row["wait_share"]), float(row["compute_median_s"])
    if not 0 <= share < 1 or compute <= 0:
        raise ValueError(f"row {row.get('label')!r}: wait_share {share} and compute_median_s "
                         f"{compute} cannot give a throughput")
    return int(row["batch_size"]) * (1 - share) / compute


def in_flight_batches(setting: Setting) -> int:
    """Batches a loader keeps queued: workers x prefetch factor (1 without workers)."""
    if setting.num_workers == 0:
        return 1
    return setting.num_workers * (setting.prefetch_factor or DEFAULT_PREFETCH)


def window_plan(setting: Setting, steps: int = MIN_WINDOW_STEPS, warmup_steps: int = 2,
                windows: int = WINDOWS) -> tuple[int, int]:
    """(warm-up steps, steps per window) for a steady state.

    Warm-up: at least one batch per worker (one step without workers), which drains the
    start-up burst: while the main process waits for its first batch, every worker decodes
    its own first batch at the same time, so about one batch per worker is ready at once.
    The rest of the queue is not built during the start-up (a worker decodes its prefetched
    batches one after another), so from then on each worker hands over one batch per decode,
    as it does for the rest of the run: a loader that keeps up never waits, a starved one
    waits for every such wave alike. A warm-up of the whole queue (workers x prefetch) paid
    for prefetch - 1 waves that are already steady (cost_model prices the difference; test
    test_the_start_up_burst_is_one_batch_per_worker checks it on a starved loader). Each
    window: at least one queue's worth, so the windows together span >= `windows` x
    workers x prefetch steps and every window sees the queue drain and refill at least once.
    """
    if steps < 1 or warmup_steps < 0 or windows < 1:
        raise ValueError(f"steps >= 1, warmup_steps >= 0 and windows >= 1, please; got {steps}, "
                         f"{warmup_steps}, {windows}")
    return max(warmup_steps, setting.num_workers, 1), max(steps, in_flight_batches(setting))


def samples_needed(setting: Setting, steps: int = MIN_WINDOW_STEPS, warmup_steps: int = 2,
                   windows: int = WINDOWS) -> int:
    """Samples a dataset must hold for measure() under these arguments."""
    warm, per_window = window_plan(setting, steps, warmup_steps, windows)
    return (warm + windows * per_window) * setting.batch_size


def measure(dataset: torch.utils.data.Dataset, setting: Setting, step: Callable[..., object],
            steps: int = MIN_WINDOW_STEPS, warmup_steps: int = 2, windows: int = WINDOWS,
            timeout_s: float = shm.DEFAULT_TIMEOUT_S, main_threads: int | None = 1) -> Run:
    """Warm up, then time `windows` back-to-back windows of steps of `step` under `setting`.

    steps and warmup_steps are minimums: window_plan() raises the warm-up to one batch per
    worker and each window to the loader's queue (workers x prefetch), so what is timed is
    the steady state, not the start-up burst.
    main_threads: torch's thread count in this process while it runs (1 by default, so the
    main process uses one core and the others are left to the workers, as each worker also
    runs one thread). The workers are stopped before this returns, whatever happens.
    """
    if bool(getattr(dataset, "as_uint8", False)) != setting.ship_uint8:
        raise ValueError(f"setting {setting.label!r} says ship_uint8={setting.ship_uint8} but the "
                         f"dataset's as_uint8 is {getattr(dataset, 'as_uint8', None)}; pass the "
                         "dataset that matches (SyntheticImages(..., as_uint8=True) for uint8)")
    warm, per_window = window_plan(setting, steps, warmup_steps, windows)
    needed = (warm + windows * per_window) * setting.batch_size
    if len(dataset) < needed:  # type: ignore[arg-type]
        raise ValueError(f"the dataset has {len(dataset)} samples but {warm} warm-up steps and "  # type: ignore[arg-type]
                         f"{windows} windows of {per_window} steps of {setting.batch_size} need "
                         f"{needed}; make it longer (loader_sweep.samples_needed says how long)")
    previous_threads = torch.get_num_threads()
    if main_threads is not None:
        torch.set_num_threads(main_threads)
    waits, computes, window_s, faults, first_batch_s = [], [], [], [], math.nan
    loader = iterator = None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loader = make_loader(dataset, setting, timeout_s)
            started = time.perf_counter()
            iterator = iter(loader)
            batches = (train_step.DevicePrefetcher(iterator, torch.device("cuda", torch.cuda.current_device()))
                       if setting.device_prefetch else iterator)
            window_start = math.nan
            for index in range(warm + windows * per_window):
                begin = time.perf_counter()
                if index >= warm and (index - warm) % per_window == 0:
                    window_start = begin
                batch = next(batches)
                touched = conditions.minor_faults()  # a syscall: microseconds beside a step
                got = time.perf_counter()
                step(batch, setting.non_blocking)
                done = time.perf_counter()
                after = conditions.minor_faults()
                if index == 0:
                    first_batch_s = got - started
                if index >= warm:
                    waits.append(got - begin)
                    computes.append(done - got)
                    if touched is not None and after is not None:
                        faults.append(after - touched)
                    if (index - warm) % per_window == per_window - 1:
                        window_s.append(done - window_start)
    except RuntimeError as error:
        raise _explained(error, setting) from error
    finally:
        if loader is not None:
            close(loader, iterator)
        torch.set_num_threads(previous_threads)
    notes = tuple(dict.fromkeys(str(w.message).splitlines()[0] for w in caught))
    return Run(setting, tuple(waits), tuple(computes), first_batch_s,
               main_threads or previous_threads, notes, tuple(window_s), per_window, warm,
               tuple(faults) if len(faults) == len(waits) else ())


def profile_steps(dataset: torch.utils.data.Dataset, setting: Setting,
                  step: Callable[..., object], steps: int = 4,
                  warmup_steps: int = 2, main_threads: int | None = 1) -> torch.profiler.profile:
    """A finished torch.profiler run of `steps` steps (after warm-up) under `setting`.

    CPU activity always, CUDA too when there is a GPU; read it with labkit.measure.timeline.
    main_threads as in measure().
    """
    previous_threads = torch.get_num_threads()
    if main_threads is not None:
        torch.set_num_threads(main_threads)
    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    loader = make_loader(dataset, setting)
    iterator = iter(loader)
    try:
        batches = (train_step.DevicePrefetcher(iterator, torch.device("cuda", torch.cuda.current_device()))
                   if setting.device_prefetch else iterator)
        for _ in range(warmup_steps):
            step(next(batches), setting.non_blocking)
        with torch.profiler.profile(activities=activities) as profile:
            for _ in range(steps):
                with torch.profiler.record_function("step"):
                    batch = next(batches)
                    step(batch, setting.non_blocking)
    except RuntimeError as error:
        raise _explained(error, setting) from error
    finally:
        close(loader, iterator)
        torch.set_num_threads(previous_threads)
    return profile


def waiting_in_trace(trace: object) -> dict:
    """Share of the profiled steps spent inside the DataLoader's __next__ (from a timeline Trace).

    The profiler marks each `next()` on a DataLoader with a 'enumerate(DataLoader)#...__next__'
    range and each step with our 'step' range, so the two sums give the waiting share as the
    trace saw it, to set beside the sweep's own clock.
    """
    names = [trace.names[i] for i in trace.name_id]  # type: ignore[attr-defined]
    durations = np.asarray(trace.duration_us, dtype=float)  # type: ignore[attr-defined]
    waiting = sum(d for n, d in zip(names, durations, strict=True) if "DataLoader" in n and "__next__" in n)
    stepping = sum(d for n, d in zip(names, durations, strict=True) if n == "step")
    return {"waiting_us": float(waiting), "steps_us": float(stepping),
            "waiting_share": float(waiting / stepping) if stepping > 0 else None}


@dataclass
class Sweep:
    """The runs of a sweep, in the order they ran.

    left_out: labels of settings a time budget kept from being measured at all; rounds: how
    many rounds (windows per setting) ran; seconds: wall seconds spent on each setting, all
    its rounds together (worker start-up, warm-up and windows), to see where the time went;
    orders: each round's settings in the order they ran (to test for an order effect)."""

    runs: list[Run]
    left_out: tuple[str, ...] = ()
    rounds: int = 0
    rounds_asked: int = 0
    budget_s: float | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    orders: list[list[str]] = field(default_factory=list)  # each round's labels in the order run

    def budget_note(self) -> str:
        """'' when the budget cut nothing; else what it cut, said plainly."""
        parts = []
        if self.left_out:
            parts.append(f"left out {', '.join(self.left_out)} (the sweep would have run past "
                         f"its budget of {self.budget_s:.0f} s)")
        if self.rounds_asked and self.rounds < self.rounds_asked:
            parts.append(f"ran {self.rounds} of {self.rounds_asked} rounds (windows per setting) "
                         f"within its budget of {self.budget_s:.0f} s")
        if not parts:
            return ""
        return ("Time budget: " + "; ".join(parts) + ". " + (
            "What is shown was measured; the settings left out were not." if self.left_out else
            "Every setting ran the same rounds."))

    def rows(self) -> list[dict]:
        """One dict per run (as Run.as_dict, without the warnings)."""
        return [{k: v for k, v in r.as_dict().items() if k != "warnings"} for r in self.runs]

    def where(self, **fields: object) -> list[Run]:
        """The runs whose setting has these field values, e.g. where(batch_size=16)."""
        return [r for r in self.runs if all(getattr(r.setting, k) == v for k, v in fields.items())]

    def noise_note(self) -> str:
        """'' when every run's windows agreed within 10%; else which were noisy, by how much."""
        noisy = [r for r in self.runs if r.noisy]
        if not noisy:
            return ""
        return (f"Noisy (windows spread over {100 * NOISY_IQR_FRACTION:.0f}%): " + ", ".join(
            f"{r.setting.label} {100 * r.spread_fraction:.0f}%" for r in noisy)
            + "; read differences within it.")

    def __repr__(self) -> str:
        """One short line: the notebook's text/plain beside the HTML table (review 2026-12-04i
        item 8: the dataclass's repr was a 10,640-character 'Sweep(runs=[Run(...' dump)."""
        rows = ", ".join(f"{r.setting.label} {r.samples_per_s:.0f}/s" for r in self.runs)
        return f"Sweep of {len(self.runs)} setting(s), {self.rounds} round(s), samples/s: {rows}"

    def _repr_html_(self) -> str:
        head = ("<tr><th>setting (w workers, b batch)</th><th>samples/s (windows: slowest-fastest)</th>"
                "<th>waiting share</th><th>wait (median)</th><th>compute (median)</th>"
                "<th>steps timed</th><th>first batch</th><th></th></tr>")
        body = "".join(
            f"<tr><td>{r.setting.label}</td><td>{r.samples_per_s:.0f} "
            f"({r.samples_per_s_spread[0]:.0f}-{r.samples_per_s_spread[1]:.0f})</td>"
            f"<td>{100 * r.wait_share:.0f}%</td><td>{r.wait_median_s * 1e3:.1f} ms</td>"
            f"<td>{r.compute_median_s * 1e3:.1f} ms</td>"
            f"<td>{len(r.windows)} x {r.window_steps or len(r.wait_s)}</td>"
            f"<td>{r.first_batch_s * 1e3:.0f} ms</td>"
            f"<td>{'noisy (spread ' + format(100 * r.spread_fraction, '.0f') + '%)' if r.noisy else ''}</td></tr>"
            for r in self.runs)
        return f"<table>{head}{body}</table>"


def merged(runs: Sequence[Run]) -> Run:
    """One Run from several runs of the same setting (rounds of a sweep): their steps and
    windows together, the first round's first batch."""
    if not runs or len({r.setting for r in runs}) != 1 or len({r.window_steps for r in runs}) != 1:
        raise ValueError("merged() takes runs of one setting with the same window length")
    first = runs[0]
    return Run(first.setting, tuple(t for r in runs for t in r.wait_s),
               tuple(t for r in runs for t in r.compute_s), first.first_batch_s, first.main_threads,
               tuple(dict.fromkeys(w for r in runs for w in r.warnings)),
               tuple(t for r in runs for t in r.window_s), first.window_steps, first.warmup_steps,
               tuple(f for r in runs for f in r.step_faults) if all(r.step_faults for r in runs) else ())


def sweep(dataset: torch.utils.data.Dataset, settings: Sequence[Setting],
          step: Callable[..., object], steps: int = MIN_WINDOW_STEPS, warmup_steps: int = 2,
          on_progress: Callable[[int, int, str], None] | None = None,
          main_threads: int | None = 1, windows: int = WINDOWS,
          uint8_dataset: torch.utils.data.Dataset | None = None, interleave: bool = True,
          budget_s: float | None = None, rotate: bool = False, balanced: bool = False,
          clock: Callable[[], float] = time.perf_counter, whole_rounds: bool = False) -> Sweep:
    """Measure each setting for `windows` windows; on_progress(done, total, label) as each
    setting's last window ends (a bar).

    interleave (default): round by round, one window of every setting per round (each with
    its own warm-up), as labkit.measure.bench.compare interleaves variants: a change in the
    machine's load during the sweep then hits every setting alike instead of the ones that
    happened to run during it, and the spread of a setting is its spread across rounds.
    Settings with ship_uint8 read `uint8_dataset` (the same images, handed out as uint8).

    budget_s: a hard limit on the sweep's wall time, so one slow machine cannot take a whole
    batch job. In the first round a setting is started only if the round so far plus the
    last setting's time (settings are ordered cheap to dear, e.g. by workers) stays within
    budget_s / rounds; the rest are left out (Sweep.left_out). A later round starts only if
    it is expected to end within budget_s (it takes about as long as the first); otherwise
    the sweep stops with fewer rounds (Sweep.rounds). Sweep.budget_note() says what was cut.
    clock: what the budget reads (seconds); a test passes one its step advances, so the
    budget's arithmetic is checked exactly instead of against a loaded machine's sleeps.
    whole_rounds: the budget never drops a setting (review 2026-12-04l item 2: on the H200 the
    first round's share cut the knob ladder's top row, the seed's whole advice, from the page):
    every setting runs every round that runs; a later round (with balanced, a later pair of
    rounds: the balance holds only over whole pairs) starts only if it is expected to end
    within budget_s at the mean pace of the rounds so far; otherwise the sweep stops after its
    last complete round (pair), and Sweep.rounds and budget_note() say how many ran. A
    balanced sweep always finishes a pair it started, the first included (one round has no
    interval).

    rotate: round r starts at the r-th setting (round 1 keeps the given order, which the
    budget reads as cheap to dear), so no setting always runs first or last in a round, right
    after the same neighbour: a knob compared with the baseline round by round (knob_ratios)
    does not inherit a fixed position's advantage.

    balanced (implies rotate): rounds in pairs, the second of a pair the first reversed, and
    each pair rotated one further (round_order). Within a pair every setting runs once before
    and once after every other, and its two positions sum to the same, so an order effect
    (who runs first, right after whom, drift within a round) cannot favour one setting over
    another: the sign rule's even odds (knob_ratio) hold for a setting that changes nothing.
    """
    if not settings:
        raise ValueError("sweep needs at least one Setting")
    if any(s.ship_uint8 for s in settings) and uint8_dataset is None:
        raise ValueError("a ship_uint8 setting needs uint8_dataset= (SyntheticImages(as_uint8=True))")
    if budget_s is not None and not budget_s > 0:
        raise ValueError(f"budget_s must be a number of seconds > 0 (or None), got {budget_s!r}")
    rounds, per_round = (windows, 1) if interleave else (1, windows)
    kept = list(settings)
    parts: list[list[Run]] = [[] for _ in settings]
    seconds = [0.0 for _ in settings]
    started = clock()
    first_round_s = 0.0
    rounds_run = 0
    orders: list[list[str]] = []
    for round_index in range(rounds):
        if whole_rounds and round_index > 0 and budget_s is not None:
            ahead = 2 if balanced and round_index % 2 == 0 and round_index + 1 < rounds else 1
            if balanced and round_index % 2:  # the second of a pair: its first ran, finish it
                ahead = 0
            pace = (clock() - started) / round_index
            if ahead and clock() - started + ahead * pace > budget_s:
                _log.info("budget: %d more round(s) would end past %.0f s; stopping after %d",
                          ahead, budget_s, rounds_run)
                break
        elif round_index > 0 and budget_s is not None:
            if clock() - started + first_round_s > budget_s:
                _log.info("budget: round %d would end past %.0f s; stopping after %d round(s)",
                          round_index + 1, budget_s, rounds_run)
                break
        order = round_order(round_index, len(kept), rotate=rotate, balanced=balanced)
        orders.append([kept[i].label for i in order])
        for position, index in enumerate(order):
            number, setting = index + 1, kept[index]
            if round_index == 0 and budget_s is not None and number > 1 and not whole_rounds:
                so_far = clock() - started
                if so_far + seconds[number - 2] > budget_s / rounds:
                    _log.info("budget: %.1f s of round 1 spent (its share is %.1f s); leaving out %s",
                              so_far, budget_s / rounds, ", ".join(s.label for s in kept[number - 1:]))
                    kept = kept[:number - 1]
                    orders[-1] = orders[-1][:number - 1]
                    break
            source = uint8_dataset if setting.ship_uint8 else dataset
            begin = clock()
            parts[number - 1].append(measure(source, setting, step, steps, warmup_steps,
                                             windows=per_round, main_threads=main_threads))
            seconds[number - 1] += clock() - begin
            _log.info("sweep round %d of %d: %s took %.1f s (first batch after %.2f s)",
                      round_index + 1, rounds, setting.label, clock() - begin,
                      parts[number - 1][-1].first_batch_s)
            if on_progress is not None and round_index == rounds - 1:
                on_progress(position + 1, len(settings), setting.label)
        if round_index == 0:
            first_round_s = clock() - started
        rounds_run += 1
    return Sweep([merged(p) for p in parts[:len(kept)]],
                 left_out=tuple(s.label for s in settings[len(kept):]), rounds=rounds_run,
                 rounds_asked=rounds, budget_s=budget_s,
                 seconds={s.label: seconds[i] for i, s in enumerate(kept)}, orders=orders)


def round_order(round_index: int, count: int, rotate: bool = True, balanced: bool = False) -> list[int]:
    """The order (indices into the settings) in which round `round_index` runs `count` settings.

    Round 0 keeps the given order (a budget reads it as cheap to dear). rotate: round r starts
    at setting r. balanced: rounds 2k and 2k+1 are one order, forward then reversed, that
    starts at setting k: with 4 settings 0123, 3210, 1230, 0321, 2301, 1032."""
    if count < 0 or round_index < 0:
        raise ValueError(f"round_order needs round_index >= 0 and count >= 0, got {round_index}, {count}")
    order = list(range(count))
    if not count:
        return order
    if balanced:
        shift = (round_index // 2) % count
        order = order[shift:] + order[:shift]
        return order[::-1] if round_index % 2 else order
    if rotate:
        shift = round_index % count
        order = order[shift:] + order[:shift]
    return order


def grid(num_workers: Sequence[int], batch_size: int, **fixed: object) -> list[Setting]:
    """Settings over num_workers with everything else fixed (workers 0 drop the worker-only knobs)."""
    out = []
    for workers in num_workers:
        chosen = dict(fixed)
        if workers == 0:
            chosen.pop("prefetch_factor", None)
            chosen.pop("persistent_workers", None)
        out.append(Setting(num_workers=workers, batch_size=batch_size, **chosen))  # type: ignore[arg-type]
    return out


# ---------------------------------------------------------------------------------------
# The knee


@dataclass(frozen=True)
class Knee:
    """Where more workers stop helping, and the arithmetic that says where it should sit.

    arithmetic_workers: the swept count the arithmetic points at (the fewest swept counts
    >= min(ceil(workers_needed), spare cores)); agrees: the measured knee is within one step
    of the sweep of it (None without the arithmetic's inputs, and None where the grid cannot
    test it). testable: whether some count of the grid lies more than one step from the
    arithmetic's, so that a knee there would disagree; on a grid like [0, 1, 2] every
    possible knee is within one step, and an "agreement" there says nothing.
    """

    workers: int
    best_workers: int
    throughputs: dict[int, float]
    tolerance: float
    cores: int
    load_batch_s: float | None
    compute_s: float | None
    workers_needed: float | None
    explanation: str
    arithmetic_workers: int | None = None
    agrees: bool | None = None
    testable: bool | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return self.explanation


def workers_needed(batch_size: int, sample_cost_s: float, compute_s: float) -> float:
    """Workers that keep a step fed: one batch's loading time over one step's compute time."""
    if batch_size < 1 or sample_cost_s < 0 or compute_s <= 0:
        raise ValueError(f"need batch_size >= 1, sample_cost_s >= 0, compute_s > 0; got "
                         f"{batch_size}, {sample_cost_s}, {compute_s}")
    return batch_size * sample_cost_s / compute_s


def steps_apart(counts: Sequence[int], a: int, b: int) -> int:
    """How many steps of the sweep `counts` lie between worker counts a and b (both swept)."""
    ordered = sorted(counts)
    return abs(ordered.index(a) - ordered.index(b))


def find_knee(points: Sequence[tuple[int, float]], tolerance: float = KNEE_TOLERANCE,
              cores: int | None = None, batch_size: int | None = None,
              sample_cost_s: float | None = None, compute_s: float | None = None) -> Knee:
    """The fewest workers whose throughput is within `tolerance` of the best one measured.

    points: (num_workers, samples per second from total time), one per worker count (a sweep
    that varies num_workers only). With the per-sample cost and the step's compute time, the
    explanation says how many workers the arithmetic asks for, how many cores there are to
    give, and whether the measured knee agrees (within one step of the sweep).
    """
    if not points:
        raise ValueError("find_knee needs (num_workers, samples_per_s) points from a sweep")
    workers = [w for w, _ in points]
    if len(set(workers)) != len(workers):
        raise ValueError(f"each worker count once, please; got {workers} (sweep num_workers only)")
    if not 0 <= tolerance < 1:
        raise ValueError(f"tolerance is a fraction in [0, 1), got {tolerance}")
    throughputs = dict(sorted((int(w), float(t)) for w, t in points))
    best_workers = max(throughputs, key=lambda w: throughputs[w])
    best = throughputs[best_workers]
    knee = min(w for w, t in throughputs.items() if t >= (1 - tolerance) * best)
    cores = cores or os.cpu_count() or 1
    load_s = needed = arithmetic = agrees = testable = None
    text = (f"The knee: {knee} worker(s), the fewest within {tolerance:.0%} of the best "
            f"throughput ({best:.0f} samples/s with {best_workers}).")
    if batch_size and sample_cost_s is not None and compute_s:
        load_s = batch_size * sample_cost_s
        needed = workers_needed(batch_size, sample_cost_s, compute_s)
        spare = max(cores - 1, 1)
        asked = min(math.ceil(needed), spare)
        arithmetic = min((w for w in throughputs if w >= asked), default=max(throughputs))
        testable = any(steps_apart(list(throughputs), w, arithmetic) > 1 for w in throughputs)
        agrees = steps_apart(list(throughputs), knee, arithmetic) <= 1 if testable else None
        text += (f" The arithmetic: a batch's decode takes {batch_size} x {sample_cost_s * 1e3:.2f} ms "
                 f"= {load_s * 1e3:.0f} ms of one core, a step {compute_s * 1e3:.0f} ms, "
                 f"so about {needed:.1f} worker(s) keep up; of {cores} core(s), "
                 f"{spare} spare once the main process has one: it asks for {asked} "
                 f"({arithmetic} in this sweep). ")
        if not testable:
            text += (f"This grid {sorted(throughputs)} cannot test the agreement: every "
                     f"possible knee lies within one step of {arithmetic}.")
        elif agrees:
            accepted = [w for w in throughputs if steps_apart(list(throughputs), w, arithmetic) <= 1]
            text += (f"The measured knee agrees (within one step of the sweep, a coarse test: it "
                     f"accepts any of {accepted}, {len(accepted)} of the {len(throughputs)} counts).")
        else:
            text += (f"The measured knee does not agree: it is {steps_apart(list(throughputs), knee, arithmetic)} "
                     "steps of the sweep away; one of the two inputs (sample cost or compute "
                     "time) is not what the loader met in the sweep.")
    return Knee(knee, best_workers, throughputs, tolerance, cores, load_s, compute_s, needed, text,
                arithmetic, agrees, testable)


def knee_of(sweep_result: Sweep, **kwargs: object) -> Knee:
    """find_knee on a sweep that varies num_workers only (its runs' throughput)."""
    points = [(r.setting.num_workers, r.samples_per_s) for r in sweep_result.runs]
    return find_knee(points, **kwargs)  # type: ignore[arg-type]


def knee_of_rows(rows: Sequence[Mapping], **kwargs: object) -> Knee:
    """find_knee on saved sweep rows, their throughput from total time (row_samples_per_s)."""
    points = [(int(r["num_workers"]), row_samples_per_s(r)) for r in rows]
    return find_knee(points, **kwargs)  # type: ignore[arg-type]


PLATEAU_TOLERANCE = 0.15  # the plateau's arithmetic "predicts" it within 15% of what was measured
HOST_BOUND_IDLE = 0.5  # profiled idle share over which a record without GPU busy time reads host-bound
# Which timings each part of the step is read from (Plateau._all_parts): a difference of
# medians, whose spread is taken as the sum of their IQRs (generous to noise on purpose).
_PART_TERMS = {"first touch": ("step", "private"), "rest": ("private", "ready", "copy")}


def handover_beside(handover_workers: int | None, loaded_workers: int | None) -> str:
    """Whom the hand-over was timed beside: 'its 4 decoding worker(s) (the plateau's: 8)' where
    that is not the plateau's count (review 2026-12-05o item 3: prepare()'s loader has at most
    fresh_step.FRESH_WORKERS), 'every worker decoding' in a record without the count."""
    if not handover_workers:
        return "every worker decoding"
    plateau = (f" (the plateau's: {loaded_workers})"
               if loaded_workers and loaded_workers != handover_workers else "")
    return f"its {handover_workers} decoding worker(s){plateau}"


# --- the plateau's check, round by round (review 2026-12-06z 05-07 item 2) ------------------
# Why: the check compared the plateau, measured in the sweep, with a step timed 10-20 s later;
# on the H200 the host's pace moved within the process (the private step, no worker alive, rose
# 12-26% across the rounds in 3 of 3 reproduce runs), so the absolute step drifted past the band
# and vetoed the check in 2 of 3 runs whose measured / predicted read 0.98x and 0.96x. The fix
# changes the measurement, not the rule: each round times a plateau window (the plateau's first
# worker count, samples over wall time, as the sweep runs it) back to back with the step beside
# as many decoding workers, and measured / predicted is read round by round, so a drift common
# to both cancels within a round. The band stays 15%; the call is an interval's, as the knobs'.
HOLDS, MISSES, ROUND_NOT_RESOLVED = "holds", "misses", "not resolved"


def round_ratios(batch_size: int, rates: Sequence[float], waits_s: Sequence[float],
                 steps_s: Sequence[float]) -> list[float]:
    """Each round's step beside the decoders over the step its plateau window ran: the window's
    own step is its wall time a step less its mean wait (batch / samples/s - wait; the sweep's
    windows are steps and waits back to back). Review 2026-12-06z 05-07 item 2: both from one
    round, so a drift of the machine's pace that slows both alike cancels in it. The session-z
    code review: the plateau's measured / predicted, (step + wait) / (window's step + wait),
    reads this ratio diluted by the wait (a step 30% off read 1.10x at 67% waiting), and tends to
    1 as the wait grows; the step ratio is what the arithmetic rests on, undiluted."""
    if not len(rates) == len(waits_s) == len(steps_s):
        raise ValueError(f"one window rate, wait and step a round, got {len(rates)}, {len(waits_s)}, "
                         f"{len(steps_s)}")
    if batch_size < 1 or any(not r > 0 or not s > 0 or w < 0
                             for r, w, s in zip(rates, waits_s, steps_s, strict=True)):
        raise ValueError("need batch_size >= 1, rates and steps > 0, waits >= 0")
    own = [batch_size / float(r) - float(w) for r, w in zip(rates, waits_s, strict=True)]
    if any(not o > 0 for o in own):
        raise ValueError(f"a window's step (batch / rate - wait) must be > 0, got {own}")
    return [float(s) / o for s, o in zip(steps_s, own, strict=True)]


def _ratio_halves(ratios: Sequence[float]) -> tuple[float, float] | None:
    """The geometric mean of the first half of rounds and of the last half (the middle round
    left out where they are odd); None below two rounds."""
    half = len(ratios) // 2
    if half < 1:
        return None
    logs = np.log(np.asarray(ratios, dtype=float))
    return float(np.exp(logs[:half].mean())), float(np.exp(logs[-half:].mean()))


def round_call(ratios: Sequence[float], tolerance: float = PLATEAU_TOLERANCE) -> dict:
    """The plateau's call from its per-round measured / predicted (review 2026-12-06z 05-07 item
    2): the geometric mean with a 95% Student-t interval on the logs (the knob rule's interval,
    intervals.geometric_interval); 'holds' when the interval lies inside the band (1 -
    tolerance to 1 + tolerance, the band the check always had), 'misses' when it lies wholly
    outside it, else 'not resolved'. The veto stays, on the ratio, not on the absolute step:
    where the ratio's first and last half of rounds differ past the band, a drift did not cancel
    within the rounds, so 'not resolved' too ('drift' says by how much). Below two rounds: no
    interval, not resolved. Never a wider band, never a retry."""
    values = [float(v) for v in ratios]
    if any(not np.isfinite(v) or v <= 0 for v in values):
        raise ValueError(f"ratios must be finite and > 0, got {values}")
    out: dict = {"ratios": values, "rounds": len(values), "tolerance": tolerance, "ratio": None,
                 "low": None, "high": None, "drift": None, "call": ROUND_NOT_RESOLVED}
    if len(values) < 2:
        return out
    mean, low, high = intervals.geometric_interval(values)
    out.update(ratio=mean, low=low, high=high)
    # a miss first (the session-z code review: ratios 0.60-0.70, every round far outside the
    # band, read 'not resolved' behind the drift veto); the veto then guards a 'holds' only
    if high < 1 - tolerance or low > 1 + tolerance:
        out["call"] = MISSES
        return out
    halves = _ratio_halves(values)
    if halves is not None and max(halves) > (1 + tolerance) * min(halves):
        out["drift"] = halves
        return out
    if 1 - tolerance <= low and high <= 1 + tolerance:
        out["call"] = HOLDS
    return out


def windows_rate(rates: Sequence[float]) -> float | None:
    """Windows of as many steps each, together: samples over wall time, their rates' harmonic
    mean; None without windows."""
    return len(rates) / sum(1 / float(r) for r in rates) if rates else None


def windows_call(call: dict, rounds_rate: float | None, measured: float | None,
                 tolerance: float = PLATEAU_TOLERANCE) -> dict:
    """round_call's dict, with the rounds' windows set against the sweep's plateau: where their
    samples/s differ past the band, the windows were not the plateau the arithmetic explains,
    so a 'holds' is not resolved ('windows_off' says by how much). The session-z code review:
    the round call never looked at the plateau it vouched for (windows 1,580 against the
    sweep's 1,495 predicted at 1,753 read 'holds')."""
    out = dict(call)
    if rounds_rate and measured:
        off = float(rounds_rate) / float(measured)
        out["windows_off"] = off
        if out["call"] == HOLDS and abs(off - 1) > tolerance:
            out["call"] = ROUND_NOT_RESOLVED
    return out


def round_rule(rounds: int, tolerance: float = PLATEAU_TOLERANCE) -> str:
    """The round-by-round rule in words, as the page's fold and reproduce print it."""
    df = max(rounds - 1, 1)
    return (f"The plateau's check, round by round: each of {rounds} rounds times a window of the "
            "plateau's first worker count (samples over wall time, as the sweep runs it) back to "
            "back with the step beside as many decoding workers; its ratio is that step over the "
            "window's own step (batch / its samples/s, less its wait a step): the arithmetic "
            "batch / (step + wait) rests on the two being one step. The call is the "
            f"geometric mean of the ratios with a 95% interval (Student t, {df} df: "
            f"{intervals.t_quantile(df):.2f}): it misses when the interval lies outside the "
            f"{tolerance:.0%} band ({1 - tolerance:.2f}-{1 + tolerance:.2f}x), holds when it lies "
            "inside it, else not resolved; not resolved too where the ratio's first and last "
            "half of rounds differ past the band (a drift that did not cancel), or where the "
            "windows' samples/s differ from the sweep's plateau past the band (they were not "
            "the plateau). A drift common to the window and the step cancels within its round "
            "(review 2026-12-06z 05-07 item 2).")


def round_text(call: Mapping, why: bool = True) -> str:
    """'0.98x [0.93, 1.04]: holds' from round_call's dict; why: with the ratio's drift where
    that made it not resolved (False: the call alone, as a takeaway says it)."""
    if call.get("low") is None:
        return f"{call.get('rounds', 0)} round(s): no interval, {ROUND_NOT_RESOLVED}"
    said = f"{call['ratio']:.2f}x [{call['low']:.2f}, {call['high']:.2f}]: {call['call']}"
    if call.get("drift") and why and call["call"] != MISSES:
        first, last = call["drift"]
        said += (f" (the ratio moved {first:.2f}x over the first rounds, {last:.2f}x over the last: "
                 "past the band, a drift that did not cancel)")
    off = call.get("windows_off")
    if off is not None and why and abs(off - 1) > float(call.get("tolerance") or PLATEAU_TOLERANCE):
        said += f" (the windows ran {off:.2f}x the sweep's plateau: past the band, not the plateau)"
    return said


@dataclass(frozen=True)
class Plateau:
    """What the throughput levels off at, what the arithmetic gives for it, and what bounds it.

    Why: the knee says where more workers stop helping, not what the best throughput is. Once
    the workers keep up, each step costs the step plus whatever the main process still waits
    for each batch (`wait_s`, the plateau runs' mean wait per step: handing a batch over from a
    worker is not free). So batch / (step + wait) gives the plateau. Which step: the one the
    plateau runs timed inside the sweep (`swept_step_s`, their median) where it exists, else
    `step_s`, the step timed apart before the sweep (on batches fresh from workers, the copy
    to the device inside; fresh_step). Review 2026-12-03g item 2: on the H200 the step took
    40.6 ms inside the sweep and 31.0 ms apart, and 64 / (40.6 + 7.6 ms) = 1,328 against 1,327
    measured while the page said the arithmetic missed (0.80x, from 31.0 ms). With the step
    from the sweep this is a consistency check, not a prediction: step and wait come from the
    very runs it is checked against (agrees: within PLATEAU_TOLERANCE). The step timed apart
    gives `predicted_apart` beside it; how far the two steps differ is printed, not explained
    (nothing here measures why a step runs slower beside busy workers).

    The step's parts (parts()): `ready_step_s` with the batch already on the device;
    `copy_alone_s` the pageable copy of a private batch alone (a GPU run); first touch, the
    fresh step less the same step on one private batch (`private_step_s`), beside the page
    faults that explain it (`step_faults` against `private_faults`); and the rest of the
    private step, which nothing here splits further. These are timed apart, at different
    moments and by two harnesses, so they need not add up: a part below zero is noise only
    within its spread (the IQRs of the timings it is read from: `step_iqr_s`, `private_iqr_s`,
    `ready_iqr_s`, `copy_iqr_s`); beyond it, or with no spread recorded, the split is refused
    for the run (refused()) and nothing (the bound included) reads from it. Review 2026-12-03g
    item 1: ready 28.6 + copy 2.8 ms against a private step of 23.7 ms is a rest of -7.7 ms,
    beyond the 4.5 ms of their IQRs, and the page had called it noise.
    `wait_share` is the plateau runs' waiting share, the one definition of Run.wait_share.

    Review 2026-12-03h item 1 (the plateau neither predicted nor explained): where the step
    was timed beside the plateau's workers decoding without pause (`loaded_step_s`, wall, and
    `loaded_cpu_s`, the main thread's CPU; fresh_step.ready_beside_decoders), that step is the
    arithmetic's: timed apart from the sweep's runs, so batch / (it + wait) is a prediction.
    The bound is read from it: the cores, where the plateau reaches cores x batch / (decode +
    step CPU) within the band (a CPU run: `cores_ceiling`); the main thread's core, where the
    step beside the decoders takes longer than alone beyond the band, in the 95% interval of
    interleaved rounds (`loaded_slowdown_low`, review 2026-12-04j item 1: one block of each was
    noise); else the host's side from the knee's profile, or as before.
    """

    batch_size: int
    counts: tuple[int, ...]  # the worker counts on the plateau (within the knee's tolerance of the best)
    measured: float  # samples/s: the median of the plateau runs' throughput
    step_s: float
    ready_step_s: float
    wait_s: float
    gpu_idle_share: float | None
    tolerance: float = PLATEAU_TOLERANCE
    swept_step_s: float | None = None  # the plateau runs' median step inside the sweep (its own clock)
    copy_alone_s: float | None = None  # the batch's pageable copy timed alone, on an idle stream
    copy_bytes: int | None = None  # the bytes of that copy (one batch)
    on_gpu: bool = False
    private_step_s: float | None = None  # the step on one private batch again (pages in place)
    step_faults: float | None = None  # minor faults a step on fresh batches (timed apart)
    private_faults: float | None = None  # ... and on the private batch
    swept_faults: float | None = None  # ... and in the plateau runs of the sweep (median step)
    launch_gap_us: float | None = None  # the profiled steps' mean gap between kernel launches
    wait_share: float = 0.0  # the plateau runs' waiting share (Run.wait_share, pooled)
    step_iqr_s: float | None = None  # the IQRs of the timings the parts are read from
    private_iqr_s: float | None = None
    ready_iqr_s: float | None = None
    copy_iqr_s: float | None = None
    # the ready step beside decoding workers (fresh_step.LoadedStep, review 2026-12-03h item 1)
    loaded_workers: int | None = None  # decoders beside the step (the plateau's first count)
    loaded_step_s: float | None = None  # its wall time beside them (median): the prediction's step
    loaded_cpu_s: float | None = None  # the main thread's CPU time in that step (median)
    loaded_alone_s: float | None = None  # the same ready step alone, wall ...
    loaded_alone_cpu_s: float | None = None  # ... and the main thread's CPU
    batch_load_s: float | None = None  # one batch's decode on one core (the cores' arithmetic)
    cores: int | None = None  # this machine's cores (the cores' arithmetic)
    # review 2026-12-04i items 2 and 3: the few timed steps themselves (their spread is printed),
    # the workers the arithmetic asks for, and the knee's profiled steps (kernels and GPU busy
    # time a step: what a host-bound step is bound by)
    loaded_times_s: tuple[float, ...] = ()  # each step beside the decoders, wall
    loaded_alone_times_s: tuple[float, ...] = ()  # each step alone, wall
    workers_needed: float | None = None  # batch x sample cost / step (Knee.workers_needed)
    kernels_per_step: float | None = None  # the profiled steps' kernels, a step
    gpu_busy_step_s: float | None = None  # the profiled steps' GPU busy time, a step
    # review 2026-12-04j item 1: beside / alone over interleaved rounds, its geometric mean and
    # 95% interval (fresh_step.LoadedStep.slowdown_interval); None in a record from before
    loaded_rounds: int | None = None
    loaded_slowdown: float | None = None
    loaded_slowdown_low: float | None = None
    loaded_slowdown_high: float | None = None
    # review 2026-12-04k item 1: where the first timing of the step drifted, its (earlier, later)
    # seconds (drift), and the rounds kept are those timed again after a settle; None in a
    # record from before, or where the first timing held
    loaded_first_drift: tuple[float, float] | None = None
    # review 2026-12-04l item 1: the private step timed right before the plateau's rounds and
    # right after them, both with no worker alive: like with like, so a change between them is
    # the machine's, not the conditions'. (prepare()'s private step is not: on the course's
    # loaded 2-core CPU it ran 1.3-2.7x the one timed here in 3 of 3 runs.) None: from before
    private_again_s: float | None = None
    private_after_s: float | None = None
    # review 2026-12-04m item 3: the hand-over alone, next() on a batch already queued (timed
    # in prepare(), fresh_step.on_fresh_batches); None: not timed (a record from before)
    handover_s: float | None = None
    # review 2026-12-04n item 2: handover_s is the median beside every worker decoding (the
    # plateau's condition); this one as the workers restart (fewer decoding), and the next()
    # calls dropped as waits for a decode (fresh_step.HANDOVER_DROP). None/0: not recorded
    handover_restart_s: float | None = None
    handover_dropped: int = 0
    # review 2026-12-05o item 3: the workers decoding beside those timings (prepare()'s fresh
    # loader, fresh_step.workers_for: at most FRESH_WORKERS, 4, where the plateau ran 8 on the
    # H200); None: not recorded
    handover_workers: int | None = None
    # review 2026-12-06z 05-07 item 2: the check round by round. Each round's plateau window
    # (samples/s, and its own mean wait a step) and the median step beside the decoders timed
    # back to back with it; () in a record from before, which is judged as before (drift, agrees)
    round_rates: tuple[float, ...] = ()
    round_waits_s: tuple[float, ...] = ()
    round_steps_s: tuple[float, ...] = ()

    @classmethod
    def from_record(cls, record: Mapping) -> Plateau:
        """A Plateau from its as_dict() (a recorded run's; keys it lacks take their defaults)."""
        known = {f.name for f in dataclass_fields(cls)}
        values = {k: v for k, v in record.items() if k in known}
        values["counts"] = tuple(values.get("counts") or ())
        for key in ("loaded_times_s", "loaded_alone_times_s", "round_rates", "round_waits_s", "round_steps_s"):
            values[key] = tuple(values.get(key) or ())
        if values.get("loaded_first_drift") is not None:
            values["loaded_first_drift"] = tuple(values["loaded_first_drift"])
        return cls(**values)

    @property
    def paired(self) -> bool:
        """Whether the check was timed round by round (review 2026-12-06z 05-07 item 2): a
        window rate, its wait and the step beside for each round. False in a record from before."""
        return bool(self.round_rates) and len(self.round_rates) == len(self.round_waits_s) \
            == len(self.round_steps_s)

    def round_check(self) -> dict | None:
        """round_call on this plateau's per-round measured / predicted (round_ratios); None
        where it was not timed round by round (a record from before: drift and agrees judge it)."""
        if not self.paired:
            return None
        return windows_call(round_call(round_ratios(self.batch_size, self.round_rates, self.round_waits_s,
                                                    self.round_steps_s), self.tolerance),
                            self.rounds_rate, self.measured, self.tolerance)

    @property
    def round_decision(self) -> str | None:
        """'holds', 'misses' or 'not resolved' by the round-by-round rule; None without rounds."""
        check = self.round_check()
        return None if check is None else check["call"]

    @property
    def rounds_rate(self) -> float | None:
        """The rounds' windows together: samples over wall time (their rates' harmonic mean:
        each window runs as many steps)."""
        return windows_rate(self.round_rates)

    @property
    def step_used_s(self) -> float:
        """The step the arithmetic uses: the ready step beside decoding workers where measured
        (a prediction: timed apart from the sweep's runs), else inside the sweep (a
        consistency check: read from the runs it is checked against), else timed apart."""
        return self.loaded_step_s or self.swept_step_s or self.step_s

    @property
    def step_used(self) -> str:
        if self.loaded_step_s:
            return f"beside {self.loaded_workers} decoding worker(s)"
        return "inside the sweep" if self.swept_step_s else "timed apart"

    @property
    def cores_ceiling(self) -> float | None:
        """Samples/s the cores allow (a CPU run): cores x batch / (one batch's decode + the
        step's CPU time alone): every batch costs both, on cores shared by the workers and
        the main thread. None on a GPU (a synchronize may spin: the thread's CPU time counts
        it) or where not measured."""
        if self.on_gpu or not self.cores or not self.batch_load_s or not self.loaded_alone_cpu_s:
            return None
        return self.cores * self.batch_size / (self.batch_load_s + self.loaded_alone_cpu_s)

    @property
    def cores_bound(self) -> bool:
        """The measured plateau within the band of the cores' ceiling: the cores are spent."""
        ceiling = self.cores_ceiling
        return ceiling is not None and self.measured >= (1 - self.tolerance) * ceiling

    @property
    def pin_gain_predicted(self) -> float:
        """The gain pin_memory should give where it moves the hand-over (the wait) off the main
        thread (its pin thread takes the batch from the workers): (step + wait) / step. The
        wait's part only: pin_gain_range adds the copy's."""
        return (self.step_used_s + self.wait_s) / self.step_used_s

    @property
    def pin_gain_range(self) -> tuple[float, float] | None:
        """pin_memory's predicted gain from both its parts (review 2026-12-04i item 7): it takes
        the wait off the main thread, and it turns the step's pageable copy (copy_alone_s,
        inside the step the prediction uses) into a pinned one. A pinned copy's time lies
        between none and the pageable one's, so the gain lies between (step + wait) / step
        (the wait alone) and (step + wait) / (step - copy) (the wait and the whole copy).
        None without a GPU (nothing to copy, nothing to pin) or without the copy timed."""
        if not self.on_gpu or not self.copy_alone_s or self.copy_alone_s >= self.step_used_s:
            return None
        total = self.step_used_s + self.wait_s
        return total / self.step_used_s, total / (self.step_used_s - self.copy_alone_s)

    @property
    def cores_short(self) -> bool:
        """The arithmetic asks for more workers than the cores left once the main process has
        one (review 2026-12-04i item 3): then the cores bound the plateau, the decode on them."""
        return self.workers_needed is not None and self.cores is not None and \
            self.workers_needed > max(self.cores - 1, 1)

    @property
    def cores_agrees(self) -> bool:
        """The measured plateau within the band of the cores' ceiling (either side)."""
        ceiling = self.cores_ceiling
        return ceiling is not None and abs(self.measured / ceiling - 1) <= self.tolerance

    @property
    def predicted_this_run(self) -> bool:
        """Either prediction (batch / (step + wait), or the cores' ceiling) within its band, from
        a step that did not drift (review 2026-12-04k item 1: then there is no prediction).
        Timed round by round (review 2026-12-06z 05-07 item 2): the round-by-round call holds
        (its interval inside the band), or the cores' ceiling within its band."""
        if self.paired:
            return self.round_decision == HOLDS or self.cores_agrees
        return self.drift is None and (self.agrees or self.cores_agrees)

    @staticmethod
    def _spread(times: Sequence[float]) -> str:
        """' (6 steps, 40.2-44.0 ms)': how many steps a median rests on, fastest to slowest."""
        if not times:
            return ""
        return f" ({len(times)} steps, {min(times) * 1e3:.1f}-{max(times) * 1e3:.1f} ms)"

    def _halves(self, times: Sequence[float]) -> tuple[float, float] | None:
        """One arm's median over its first half of rounds and over its last half (the middle
        round left out where they are odd; fresh_step.ready_beside_decoders keeps each arm's
        steps round by round); None below two rounds."""
        rounds = self.loaded_rounds or 1
        if rounds < 2 or not times or len(times) % rounds:
            return None
        half = (len(times) // rounds) * (rounds // 2)
        return float(np.median(times[:half])), float(np.median(times[-half:]))

    def _drifted_arm(self) -> tuple[str, tuple[float, float]] | None:
        """The timing that disagrees with itself beyond the band: an arm whose first half of
        rounds and last half do (the larger where both do: 'alone' or 'beside'), else the
        private step timed right before the rounds against the same step right after them
        ('private'); with its (earlier, later) seconds."""
        limit = 1 + self.tolerance
        found = [(max(h) / min(h), arm, h) for arm, h in (
            ("alone", self._halves(self.loaded_alone_times_s)), ("beside", self._halves(self.loaded_times_s)))
            if h is not None and max(h) > limit * min(h)]
        if not found and self._private_moved() and not self.direct_holds:
            return "private", (self.private_again_s, self.private_after_s)  # type: ignore[return-value]
        if not found:
            return None
        _, arm, halves = max(found)
        return arm, halves

    def _private_moved(self) -> bool:
        """The private step timed right before the rounds and right after them differ beyond
        the band (no worker alive either time)."""
        if not (self.private_again_s and self.private_after_s and self.loaded_step_s):
            return False
        pair = (self.private_again_s, self.private_after_s)
        return max(pair) > (1 + self.tolerance) * min(pair)

    @property
    def direct_holds(self) -> bool:
        """The step beside the decoders (timed apart) within the band of the step inside the
        sweep's plateau runs: the direct check of the step the arithmetic uses. Review
        2026-12-04m item 3: the H200 reproduce's run 1 was vetoed by the private step before
        and after the rounds (46 then 38 ms), an indirect check, while the direct one held
        (beside 44.1 against inside 44.0 ms) and so did the plateau (1.00x)."""
        return bool(self.swept_step_s and self.loaded_step_s
                    and abs(self.loaded_step_s / self.swept_step_s - 1) <= self.tolerance)

    def private_note(self) -> str:
        """Where the private step moved around the rounds but the direct check held: a note,
        not a veto ('' otherwise)."""
        if not self._private_moved() or not self.direct_holds:
            return ""
        return (f"(The private step moved, {self.private_again_s * 1e3:.1f} then "  # type: ignore[operator]
                f"{self.private_after_s * 1e3:.1f} ms, but the step beside agrees with the step inside "  # type: ignore[operator]
                f"the sweep, {self.loaded_step_s * 1e3:.1f} against "  # type: ignore[operator]
                f"{self.swept_step_s * 1e3:.1f} ms: no veto.) ")  # type: ignore[operator]

    @property
    def drift(self) -> tuple[float, float] | None:
        """(earlier, later) seconds where the plateau's step disagrees with itself beyond the
        band (1 + tolerance, either way), else None, each check like with like: one arm's first
        half of rounds against its own last half; the private step timed right before the
        rounds against the same step right after them, no worker alive either time
        (private_again_s, private_after_s).
        Review
        2026-12-04k item 1: on the H200 44 of 50 steps beside the decoders took 58-71 ms, then
        six 34.7-38.5 ms: a transient, and the absolute step fed the prediction; the
        step alone there took 1.85x the private step of prepare() (what the re-timed private
        step catches where every round was slowed alike). Not compared (review 2026-12-04l item 1): the step alone here against the private step
        timed in prepare(). They are two conditions, not two timings of one: alone here runs
        between decode blocks with the plateau's workers alive, the private step before any
        worker ran. Their gap was steady on the H200 (1.25-1.39x in 3 of 4 runs) while the
        prediction held within its band in all four, and vetoing on it withheld a prediction
        that held. It is printed as a finding (private_gap), not a veto.
        Timed round by round (paired): None. Review 2026-12-06z 05-07 item 2: the absolute step
        moved with the machine's pace (no worker alive, too); each round's ratio pairs it with
        its own window, and round_call vetoes a drift of that ratio instead (moved_text prints
        the step's move as a finding)."""
        if self.paired:
            return None
        found = self._drifted_arm()
        return None if found is None else found[1]

    @property
    def private_gap(self) -> float | None:
        """The step alone here over the private step timed in prepare() (the same batch, the
        copy inside on a GPU): a finding beside the prediction, not a drift (see drift)."""
        if not self.loaded_alone_s or not self.private_step_s:
            return None
        return self.loaded_alone_s / self.private_step_s

    def drift_text(self) -> str:
        """Why no prediction, in numbers: 'the step alone drifted within its own rounds: 49 ms
        over its first 2 rounds, 40 ms over its last 2 (0.82x, past the 15% band): no prediction
        from it' ('' without drift)."""
        found = self._drifted_arm()
        if found is None:
            return ""
        arm, (earlier, later) = found
        if arm == "private":
            return (f"the private step took {earlier * 1e3:.1f} ms before these rounds and "
                    f"{later * 1e3:.1f} ms after ({later / earlier:.2f}x, past the {self.tolerance:.0%} "
                    f"band): the machine changed during them, no prediction from it")
        half = (self.loaded_rounds or 2) // 2
        what = "alone" if arm == "alone" else f"beside {self.loaded_workers} decoding worker(s)"
        again = ", timed again after a settle" if self.loaded_first_drift else ""
        return (f"the step {what} drifted within its own rounds{again}: {earlier * 1e3:.1f} ms over "
                f"its first {half} rounds, {later * 1e3:.1f} ms over its last {half} "
                f"({later / earlier:.2f}x, past the {self.tolerance:.0%} band): no prediction from it")

    def gap_text(self) -> str:
        """The step alone here against the private step timed earlier, where they differ beyond
        the band: printed as what it is (two conditions), not read as drift ('' otherwise)."""
        gap = self.private_gap
        if gap is None or abs(gap - 1) <= self.tolerance:
            return ""
        return (f"Alone here: {gap:.2f}x the private step timed before any worker ran "
                f"({self.private_step_s * 1e3:.1f} ms): another condition. ")  # type: ignore[operator]

    @property
    def idle_share(self) -> float | None:
        """The GPU's idle share of the unprofiled step: 1 - GPU busy a step (the knee's profile)
        / the step timed apart on fresh batches (step_s, as the profiled steps ran: fresh worker
        batches, the copy inside). Review 2026-12-04k item 2: the profiled share (62% on the
        H200) is inflated by the profiler, whose steps took longer (893 kernels x 47 us of gaps
        = 42 ms, more than the 37.7 ms step unprofiled); 1 - 22.9 / 37.7 is 39%. Without the
        busy time (a record from before, or a CPU) the profiled share, or None.
        Review 2026-12-06z 05-07 item 3: against the plateau's own step (the step inside the
        sweep, swept_step_s) where measured, not the step timed apart in prepare(): on the H200
        page the apart step (30.0 ms, 4 workers) gave 24% idle, "the GPU's compute", where the
        plateau's steps took 36.3 ms (37% idle: the host's side, as the timeline said)."""
        step = self.idle_step_s
        if self.gpu_busy_step_s is not None and step > 0:
            return max(0.0, 1 - self.gpu_busy_step_s / step)
        return self.gpu_idle_share

    @property
    def idle_step_s(self) -> float:
        """The step the GPU's idle share is read against: the plateau's own step inside the sweep
        where measured, else the step timed apart (step_s)."""
        return self.swept_step_s or self.step_s

    @property
    def host_bound(self) -> bool:
        """The GPU idles over HOST_BOUND_IDLE_SHARE of the unprofiled step (chapter 08's rule),
        or, in a record without GPU busy time, over HOST_BOUND_IDLE of the profiled steps."""
        idle = self.idle_share
        if idle is None:
            return False
        return idle > (HOST_BOUND_IDLE_SHARE if self.gpu_busy_step_s is not None else HOST_BOUND_IDLE)

    def idle_text(self) -> str:
        """'the GPU idles 39% of the unprofiled step (busy 22.9 of 37.7 ms; 62% under the
        profiler)', or the profiled share labelled as such where no busy time was recorded."""
        if self.idle_share is None:
            return ""
        if self.gpu_busy_step_s is None:
            return f"the GPU idles {100 * self.idle_share:.0f}% of the profiled steps"
        profiled = (f"; {100 * self.gpu_idle_share:.0f}% under the profiler"
                    if self.gpu_idle_share is not None else "")
        which = "the plateau's unprofiled step" if self.swept_step_s else "the unprofiled step"
        return (f"the GPU idles {100 * self.idle_share:.0f}% of {which} (busy "
                f"{self.gpu_busy_step_s * 1e3:.1f} of {self.idle_step_s * 1e3:.1f} ms{profiled})")

    def loaded_text(self) -> str:
        """'the ready step alone 8.8 ms (CPU 8.1); beside 2 decoding workers 34.3 ms (CPU 11.7)'."""
        if not self.loaded_step_s:
            return ""
        def cpu(v: float | None) -> str:
            return f" (its CPU {v * 1e3:.1f})" if v is not None else ""

        what = "on a private batch, its copy inside," if self.on_gpu else "on a ready batch"
        rounds = (f"; beside / alone over {self.loaded_rounds} interleaved rounds {self.loaded_slowdown:.2f}x "
                  f"[{self.loaded_slowdown_low:.2f}, {self.loaded_slowdown_high:.2f}]"
                  if self.loaded_rounds and self.loaded_slowdown is not None
                  and self.loaded_slowdown_low is not None and self.loaded_slowdown_high is not None else "")
        # with rounds, their interval says the spread (the steps' min-max over 50 steps does not)
        alone_spread, beside_spread = (("", "") if rounds else
                                       (self._spread(self.loaded_alone_times_s), self._spread(self.loaded_times_s)))
        return (f"The step {what} alone: {(self.loaded_alone_s or 0) * 1e3:.1f} ms"
                f"{alone_spread}{cpu(self.loaded_alone_cpu_s)}; "
                f"beside {self.loaded_workers} decoding worker(s): "
                f"{self.loaded_step_s * 1e3:.1f} ms{beside_spread}{cpu(self.loaded_cpu_s)}"
                f"{rounds}")

    def cores_text(self) -> str:
        """The cores' arithmetic ('' where it does not apply)."""
        ceiling = self.cores_ceiling
        if ceiling is None:
            return ""
        return (f"{self.cores} cores x {self.batch_size} / ({self.batch_load_s * 1e3:.1f} ms decode + "  # type: ignore[operator]
                f"{self.loaded_alone_cpu_s * 1e3:.1f} ms step) = {ceiling:.0f}/s"  # type: ignore[operator]
                f" ({self.measured / ceiling:.2f}x of it measured)")

    @property
    def ceiling(self) -> float:
        """Samples/s if no step waited: batch / the step used."""
        return self.batch_size / self.step_used_s

    @property
    def predicted(self) -> float:
        """Samples/s the arithmetic gives: batch / (the step used + per-batch wait)."""
        return self.batch_size / (self.step_used_s + self.wait_s)

    @property
    def predicted_apart(self) -> float:
        """Samples/s from the step timed apart: batch / (step_s + per-batch wait)."""
        return self.batch_size / (self.step_s + self.wait_s)

    @property
    def predicted_handover(self) -> float | None:
        """A prediction from two timings apart from the sweep's runs (review 2026-12-04m item
        3): batch / (the step beside the decoders + the hand-over of a queued batch). None
        where either was not timed."""
        if not self.loaded_step_s or self.handover_s is None:
            return None
        return self.batch_size / (self.loaded_step_s + self.handover_s)

    def handover_measured_text(self) -> str:
        """'. The hand-over of a queued batch, timed apart beside its 4 decoding worker(s) (the
        plateau's: 8): 0.4 ms (0.2 as they restart)': the timing alone, no prediction ('' where
        not timed)."""
        if self.handover_s is None:
            return ""
        restart = (f" ({self.handover_restart_s * 1e3:.1f} as they restart"
                   if self.handover_restart_s is not None else "")
        dropped = f"; {self.handover_dropped} dropped as a decode" if self.handover_dropped else ""
        return (f". The hand-over of a queued batch, timed apart beside "
                f"{handover_beside(self.handover_workers, self.loaded_workers)}: "
                f"{self.handover_s * 1e3:.1f} ms{restart}{dropped}{')' if restart else ''}")

    @property
    def handover_predicts(self) -> bool:
        """Whether batch / (step beside + hand-over) is a prediction of this plateau: only where
        the workers out-supply the step (wait_unexplained). Where the decode bounds it (supply
        within the band), step + hand-over models a plateau it is not (review 2026-12-05o item 4:
        the CPU page printed 1565 predicted, 0.82x, beside 'bound by the cores')."""
        return self.predicted_handover is not None and self.wait_unexplained

    @property
    def handover_agrees(self) -> bool | None:
        """measured / (step beside + hand-over) within the tolerance; None where not predicted."""
        predicted = self.predicted_handover
        return None if predicted is None else abs(self.measured / predicted - 1) <= self.tolerance

    def handover_band(self) -> str:
        """'0.85x: outside the 15% band' (the consistency check's band); '' where not predicted."""
        predicted = self.predicted_handover
        if predicted is None:
            return ""
        return (f"{self.measured / predicted:.2f}x: {'within' if self.handover_agrees else 'outside'} "
                f"the {self.tolerance:.0%} band")

    def handover_text(self) -> str:
        """'. The hand-over of a queued batch, timed apart beside every worker decoding: 0.4 ms
        (0.2 as they restart); 64 / (45.5 + 0.4 ms) = 1394 predicted (measured 0.85x: outside the
        15% band)' ('' where not timed; review 2026-12-04n item 2: the two conditions apart, the
        plateau's used; review 2026-12-05o item 4: judged against the band)."""
        predicted = self.predicted_handover
        if predicted is None:
            return ""
        return (self.handover_measured_text() + "; "
                f"{self.batch_size} / ({self.loaded_step_s * 1e3:.1f} + {self.handover_s * 1e3:.1f} ms) = "  # type: ignore[operator]
                f"{predicted:.0f} predicted (measured {self.handover_band()})")

    @property
    def agrees(self) -> bool:
        """measured / predicted within the tolerance: the ratio the explanation prints."""
        return abs(self.measured / self.predicted - 1) <= self.tolerance

    @property
    def apart_agrees(self) -> bool:
        return abs(self.measured / self.predicted_apart - 1) <= self.tolerance

    def _all_parts(self) -> dict[str, float]:
        """Every part measured, a negative one included (see parts)."""
        out = {"ready": self.ready_step_s}
        private = self.private_step_s
        if self.on_gpu and self.copy_alone_s:
            out["copy"] = self.copy_alone_s
        if private is not None:
            out["first touch"] = self.step_s - private
            if self.on_gpu:
                out["rest"] = private - sum(out[k] for k in ("ready", "copy") if k in out)
        return out

    def spread(self, part: str) -> float | None:
        """A difference part's spread: the sum of the IQRs of the timings it is read from
        (_PART_TERMS; the copy only where it is a part); None where one was not recorded."""
        iqrs = {"step": self.step_iqr_s, "private": self.private_iqr_s, "ready": self.ready_iqr_s,
                "copy": self.copy_iqr_s}
        terms = [t for t in _PART_TERMS.get(part, ()) if t != "copy" or "copy" in self._all_parts()]
        values = [iqrs[t] for t in terms]
        return None if not values or any(v is None for v in values) else float(sum(values))  # type: ignore[arg-type]

    def refused(self) -> dict[str, float]:
        """The parts below zero by more than their spread (or with no spread recorded), in
        seconds: the parts were timed at different paces, and the run gets no split."""
        out = {}
        for k, v in self._all_parts().items():
            spread = self.spread(k)
            if v < 0 and (spread is None or -v > spread):
                out[k] = v
        return out

    def parts(self) -> dict[str, float]:
        """The step as swept in seconds, split where measured: 'ready' (batch on the device),
        'copy' (the pageable copy alone, a GPU run), 'first touch' (fresh less private step),
        'rest' (the private step less ready and copy: Python, launches, the loss's read-back;
        not split further). Parts not measured are left out; on a CPU the step reads its batch
        in place, so ready and private are one step and there is no copy. A part below zero
        within its spread is noise: left out here, so no sum counts it (`within_noise` names
        it). One beyond its spread refuses the split: {} (refused() names it)."""
        if self.refused():
            return {}
        return {k: v for k, v in self._all_parts().items() if v >= 0}

    def within_noise(self) -> dict[str, float]:
        """The parts below zero within their spread, in seconds ({} when the split is refused)."""
        if self.refused():
            return {}
        return {k: v for k, v in self._all_parts().items() if v < 0}

    def refusal_text(self) -> str:
        """Why the run has no split, in numbers ('' when it has one)."""
        refused = self.refused()
        if not refused:
            return ""
        shown = {k: v for k, v in self._all_parts().items() if v >= 0}
        spreads = [self.spread(k) for k in refused]
        spread = ("no spread recorded" if None in spreads
                  else f"beyond their spread ({sum(spreads) * 1e3:.1f} ms of IQRs)")  # type: ignore[arg-type]
        return (f"parts timed apart ({' + '.join(f'{k} {v * 1e3:.1f}' for k, v in shown.items())} = "
                f"{sum(shown.values()) * 1e3:.1f} ms) exceed the {self.step_s * 1e3:.1f} ms step by "
                f"{-sum(refused.values()) * 1e3:.1f} ms, {spread}: timed at different paces, no "
                "split this run")

    @property
    def bound(self) -> str:
        """What sets the plateau's pace, in a phrase read from the numbers (and the timeline)."""
        # review 2026-12-06z 05-07 item 7: the cause (too few spare cores for the decode) before
        # its symptom (the wait): on the CPU page a noisy 51% against 45% waiting flipped the
        # label between two runs while the cores were short in both
        if self.cores_short:
            waits = (f"; the step waits {100 * self.wait_share:.0f}% of the time for data"
                     if self.wait_share > 0.5 else "")
            return (f"the cores (the decode): the arithmetic asks for {self.workers_needed:.1f} "
                    f"workers, {max((self.cores or 1) - 1, 1)} core(s) are spare{waits}")
        if self.wait_share > 0.5:
            return (f"the loader: waiting is {100 * self.wait_share:.0f}% of the plateau's wait + "
                    "step")
        if self.cores_bound:
            return f"the cores: the decode and the step use them up ({self.cores_text()})"
        beside = self._beside_bound()
        if beside:
            return beside
        if self.idle_share is None and self.on_gpu:
            return "the step itself (not profiled here: how long the GPU idles is not known)"
        if self.idle_share is None:
            return "the step itself (no GPU: all of it runs on the CPU)"
        if self.host_bound:
            host = {k: v for k, v in self.parts().items() if k != "ready"}  # {} when refused
            added = (f"; {' + '.join(host)} = {sum(host.values()) * 1e3:.1f} of "
                     f"{self.step_s * 1e3:.1f} ms" if host else "")
            # review 2026-12-04j item 1: what the profile says a step is, and why it is serial;
            # review 2026-12-04k item 2: the share from the unprofiled step, the profiler's
            # beside it, and no profiled gap between launches (the profiler's, not the step's)
            kernels = f"; {self.kernels_per_step:.0f} kernels a step" if self.kernels_per_step else ""
            synced = ("; each step ends in a synchronize, so the host's work and the GPU's run "
                      "in series" if self.on_gpu else "")
            return f"the host's side: {self.idle_text()}{kernels}{added}{synced}"
        where = ("profiled steps" if self.gpu_busy_step_s is None else
                 "plateau's unprofiled step" if self.swept_step_s else "unprofiled step")
        return f"the GPU's compute: it is busy {100 * (1 - self.idle_share):.0f}% of the {where}"

    def _beside_bound(self) -> str:
        """The bound where the step ran slower beside the decoders beyond the band ('' where it
        did not, or its CPU time was not measured), read from the two clocks (review
        2026-12-04i item 2): time-slicing with the decoders shows as time off the main thread's
        CPU clock, so the core is named shared only where the off-CPU time grew at least as
        much as the CPU time did. Where the CPU time grew instead, the thread's own work ran
        slower (the clock does not say why: a busy sibling core, memory bandwidth, or, on a
        GPU, spinning in the synchronize); on a host-bound GPU step (its profiled GPU idles
        host_bound) that work is the launches, named with the profile's kernels and
        busy time a step."""
        alone, loaded = self.loaded_alone_s, self.loaded_step_s
        if not loaded or not alone or loaded <= (1 + self.tolerance) * alone \
                or self.loaded_cpu_s is None or self.loaded_alone_cpu_s is None:
            return ""
        # review 2026-12-04j item 1: only an interval over interleaved rounds whose low end
        # clears the band names the decoders: 3 steps alone against 6 beside, once (records
        # before 2026-12-04 08:00), named noise on the H200 (1.28x on the page, 0.85-1.27x in
        # the three reproduce runs), so a record without an interval names nothing here
        if self.loaded_slowdown_low is None or self.loaded_slowdown_low <= 1 + self.tolerance:
            return ""
        cpu_grew = self.loaded_cpu_s - self.loaded_alone_cpu_s
        off_alone, off_loaded = alone - self.loaded_alone_cpu_s, loaded - self.loaded_cpu_s
        off_grew = off_loaded - off_alone
        clock = "off its CPU clock" if self.on_gpu else "off its core"
        clocks = (f"its CPU time {self.loaded_alone_cpu_s * 1e3:.1f} -> {self.loaded_cpu_s * 1e3:.1f} ms, "
                  f"{clock} {off_alone * 1e3:.1f} -> {off_loaded * 1e3:.1f} ms")
        if off_grew >= cpu_grew and off_grew > 0:
            # the two clocks themselves are in loaded_text, printed before the bound
            return (f"the main thread's core, shared with the decoders: beside them the step took "
                    f"{loaded / alone:.2f}x as long, {off_grew * 1e3:.1f} ms more of it {clock}")
        slower = (f"{self.loaded_cpu_s / max(self.loaded_alone_cpu_s, 1e-9):.2f}x slower beside the "
                  f"decoders ({clocks}: the growth is CPU time, not descheduling)")
        if self.on_gpu and self.host_bound:
            launches = (f"{self.kernels_per_step:.0f} kernels a step, " if self.kernels_per_step else "")
            busy = (f"the GPU busy {self.gpu_busy_step_s * 1e3:.1f} of {loaded * 1e3:.1f} ms"
                    if self.gpu_busy_step_s is not None else
                    f"the GPU idle {100 * (self.idle_share or 0):.0f}% of the profiled steps")
            return f"host-bound launches: {launches}{busy}; the main thread's work {slower}"
        return f"the main thread's work: {slower}"

    @property
    def bound_name(self) -> str:
        """The bound in a few words, without its numbers ('the cores', 'the step itself')."""
        return self.bound.split(":")[0].split(" (")[0]

    def _faults(self, faults: float | None) -> str:
        """', 588 page faults' on a GPU; '' on a CPU, where the step's own allocations fault a
        varying number of times (fresh_step says why), or where none were counted."""
        return "" if faults is None or not self.on_gpu else f", {faults:,.0f} page faults"

    def apart_text(self) -> str:
        """The step timed apart beside the one the arithmetic used: what it gives, and, where
        that misses, how much longer the step took inside the sweep (and, on a GPU, its page
        faults in both), without a cause ('' when the arithmetic used the step timed apart)."""
        if not self.swept_step_s:
            return ""
        apart = self.measured / self.predicted_apart
        text = (f"The step timed apart ({self.step_s * 1e3:.1f} ms) gives {self.predicted_apart:.0f} "
                f"({apart:.2f}x)")
        if self.apart_agrees:
            return text + "."
        faults = (f", page faults {self.swept_faults:,.0f} against {self.step_faults:,.0f}"
                  if self.on_gpu and self.swept_faults is not None and self.step_faults is not None else "")
        return (text + f": inside the sweep the step took {self.swept_step_s / self.step_s:.2f}x as "
                f"long{faults}; what slows it there was not measured.")

    def explanation(self) -> str:
        if self.loaded_step_s:
            return self._loaded_explanation()
        text = (f"The plateau ({', '.join(str(c) for c in self.counts)} worker(s)): "
                f"{self.measured:.0f} samples/s. The step timed apart: {self.step_s * 1e3:.1f} ms"
                f"{self._faults(self.step_faults)}")
        if self.private_step_s is not None:
            text += (f"; on a private batch {self.private_step_s * 1e3:.1f} ms"
                     f"{self._faults(self.private_faults)}")
        parts = self.parts()
        if self.on_gpu and self.refused():
            text += "; " + self.refusal_text()
        elif self.on_gpu and len(parts) > 1:
            text += "; parts: " + " + ".join(f"{k} {v * 1e3:.1f}" for k, v in parts.items()) + " ms"
            if self.copy_alone_s and self.copy_bytes:
                text += (f" (copy: {self.copy_bytes / 1e6:.1f} MB at "
                         f"{self.copy_bytes / self.copy_alone_s / 1e9:.1f} GB/s, pageable)")
            text += "".join(f"; {k}: within noise" for k in self.within_noise())  # within its spread
        if self.swept_step_s:
            text += (f". Inside the sweep: {self.swept_step_s * 1e3:.1f} ms a step"
                     f"{self._faults(self.swept_faults)}")
        text += (f". Each batch waits {self.wait_s * 1e3:.1f} ms (waiting {100 * self.wait_share:.0f}% "
                 f"of wait + step). {self.batch_size} / ({self.step_used_s * 1e3:.1f} ms, the step "
                 f"{self.step_used}, + {self.wait_s * 1e3:.1f} ms) = {self.predicted:.0f} against "
                 f"{self.measured:.0f} measured ({self.measured / self.predicted:.2f}x: "
                 f"{'within' if self.agrees else 'outside'} {self.tolerance:.0%})"
                 + (": a consistency check, both read from the plateau's runs. " if self.swept_step_s
                    else ". ")
                 + (self.apart_text() + " " if self.apart_text() else "")
                 + f"What bounds it: {self.bound}.")
        if not self.agrees:
            text += (" It misses: the plateau's wall time is not its median step plus its mean wait."
                     if self.swept_step_s else " It misses: the step timed apart is not the sweep's.")
        return text

    def _loaded_explanation(self) -> str:
        """The plateau predicted from the ready step timed beside decoding workers (review
        2026-12-03h item 1): the step's two clocks, the prediction with its band, the step
        inside the sweep beside it, the cores' arithmetic (a CPU run) and the bound."""
        ratio = self.measured / self.predicted
        text = (f"The plateau ({', '.join(str(c) for c in self.counts)} worker(s)): "
                f"{self.measured:.0f} samples/s. {self.loaded_text()}. Each batch waits "
                f"{self.wait_s * 1e3:.1f} ms (waiting {100 * self.wait_share:.0f}%). ")
        if self.paired:  # review 2026-12-06z 05-07 item 2: the check round by round
            return text + self._paired_text()
        drift = self.drift_text()
        if drift:  # review 2026-12-04k item 1: an instrument failure, not a plateau 'not predicted'
            text += drift[0].upper() + drift[1:]
            if self.swept_step_s:
                text += f". Inside the sweep a step took {self.swept_step_s * 1e3:.1f} ms"
            # review 2026-12-04n item 5: timed in prepare(), apart from the drifting step, so it
            # stands; the drift vetoes only the prediction from the step
            return text + self.handover_measured_text() + f". What bounds it: {self.bound}."
        if self.loaded_first_drift:
            first, then = self.loaded_first_drift
            text += (f"(The first timing drifted, {first * 1e3:.0f} ms then {then * 1e3:.0f} ms: these "
                     "rounds were timed again after a settle.) ")
        # review 2026-12-04m item 3: the wait is the plateau runs' own mean wait (plateau_of), so
        # this is a consistency check, not an independent prediction; what it leaves unexplained
        # is the wait itself, with the workers' supply against the step's demand beside it
        text += self.gap_text() + self.private_note() + (f"A consistency check (the wait is these "
                 f"runs' own): {self.batch_size} / ({self.step_used_s * 1e3:.1f} + {self.wait_s * 1e3:.1f} ms) = "
                 f"{self.predicted:.0f} against {self.measured:.0f} measured ({ratio:.2f}x: "
                 f"{'within' if self.agrees else 'outside'} the {self.tolerance:.0%} band)")
        text += self.wait_text()
        if self.swept_step_s:
            text += f". Inside the sweep a step took {self.swept_step_s * 1e3:.1f} ms"
        if self.cores_text() and not self.cores_bound:
            text += f". The cores allow {self.cores_text()}"
        if not self.predicted_this_run:  # review 2026-12-04i item 3: neither within its band
            text += ". This run misses: " + (
                "neither arithmetic within its band" if self.cores_ceiling else
                "the arithmetic outside its band")
        return text + f". What bounds it: {self.bound}."

    def moved_text(self) -> str:
        """Where the step (an arm's halves of rounds, or the private step before against after
        the rounds, no worker alive) moved past the band: a finding, not a veto, in a check
        timed round by round ('' where nothing moved). Review 2026-12-06z 05-07 item 2."""
        if not self.paired:
            return ""
        found = self._drifted_arm()
        if found is None and self._private_moved():  # a finding whatever the direct check says
            found = ("private", (self.private_again_s, self.private_after_s))  # type: ignore[assignment]
        if found is None:
            return ""
        arm, (earlier, later) = found
        what = {"alone": "alone", "private": "on its private batch, no worker alive, before -> after the rounds"}.get(
            arm, f"beside {self.loaded_workers} decoding worker(s)")
        # said only where the call held (the session-z code review: beside a not-resolved call,
        # or an arm no window was paired with, 'their windows moved with it' claimed too much)
        check = self.round_check() or {}
        shared = ("; the rounds' ratios did not move past the band: their windows moved with it"
                  if check.get("call") == HOLDS and arm == "beside" else "")
        return f"The step {what} moved {earlier * 1e3:.1f} -> {later * 1e3:.1f} ms over the rounds{shared}"

    def _paired_text(self) -> str:
        """The round-by-round check in the page's words (review 2026-12-06z 05-07 item 2): what
        each round paired, the interval, the call and its rule in short; the hand-over, the step
        inside the sweep, the cores and the bound as before."""
        check = self.round_check() or {}
        said = [f"Round by round ({len(self.round_rates)} rounds, each a window of {self.loaded_workers} "
                f"worker(s) as the sweep runs it, {self.rounds_rate:.0f} samples/s in all, back to back "
                f"with the step beside {self.loaded_workers} decoding worker(s)): that step over the "
                f"window's own step = {round_text(check)} (against a {self.tolerance:.0%} band: the rule "
                "in the fold below)",
                self.moved_text(), self.wait_text().removeprefix(". ")]
        if self.swept_step_s:
            said.append(f"Inside the sweep a step took {self.swept_step_s * 1e3:.1f} ms")
        if self.cores_text() and not self.cores_bound:
            said.append(f"The cores allow {self.cores_text()}")
        said.append(f"What bounds it: {self.bound}.")
        return self.gap_text() + ". ".join(s for s in said if s)

    @property
    def supply(self) -> float | None:
        """The plateau's first worker count over the workers the arithmetic asks for: how many
        times the batches the step takes the workers decode (None where not measured)."""
        if not self.loaded_workers or not self.workers_needed:
            return None
        return self.loaded_workers / self.workers_needed

    @property
    def wait_unexplained(self) -> bool:
        """The workers out-supply the step beyond the band, so the wait is not the decode's."""
        return self.supply is not None and self.supply > 1 + self.tolerance

    def wait_text(self) -> str:
        """What the check leaves unexplained (review 2026-12-04m item 3): the wait itself.
        '. Not explained: the 8.3 ms wait a batch (16%), while 8 workers decode 1.6x the
        batches the step takes' where the workers out-supply the step, with the hand-over's
        prediction where timed (handover_text); where they do not, the wait is the decode's and
        the bound says so: the hand-over's timing alone, no prediction from it ('' untimed)."""
        supply = self.supply
        if not self.wait_unexplained:  # review 2026-12-05o item 4: the hand-over predicts nothing here
            measured = self.handover_measured_text()
            return measured + ("; no prediction from it: the decode bounds this plateau" if measured else "")
        handed = self.handover_text()
        if self.handover_s is not None:  # the hand-over timed: what of the wait it leaves
            return (handed + f"; {max(self.wait_s - self.handover_s, 0) * 1e3:.1f} ms of the wait not "
                    f"explained, {self.loaded_workers} workers decoding {supply:.1f}x the step's batches")
        return (f". Not explained: the {self.wait_s * 1e3:.1f} ms wait a batch "
                f"({100 * self.wait_share:.0f}%), while {self.loaded_workers} workers decode "
                f"{supply:.1f}x the batches the step takes")

    def as_dict(self) -> dict:
        return {**asdict(self), "ceiling": self.ceiling, "predicted": self.predicted,
                "cores_ceiling": self.cores_ceiling, "pin_gain_predicted": self.pin_gain_predicted,
                "pin_gain_range": self.pin_gain_range, "predicted_this_run": self.predicted_this_run,
                "agrees": self.agrees, "step_used": self.step_used, "step_used_s": self.step_used_s,
                "drift": self.drift, "private_gap": self.private_gap,
                "predicted_handover": self.predicted_handover, "idle_share": self.idle_share, "host_bound": self.host_bound,
                "predicted_apart": self.predicted_apart, "bound": self.bound,
                "parts_s": self.parts(), "within_noise_s": self.within_noise(),
                "refused_s": self.refused(), "paired": self.paired, "round_check": self.round_check(),
                "round_decision": self.round_decision, "explanation": self.explanation()}


def plateau_of(sweep_result: Sweep, knee: Knee, step_s: float, ready_step_s: float,
               gpu_idle_share: float | None = None, copy_alone_s: float | None = None,
               copy_bytes: int | None = None, on_gpu: bool = False,
               private_step_s: float | None = None, step_faults: float | None = None,
               private_faults: float | None = None, launch_gap_us: float | None = None,
               iqrs: Mapping[str, float | None] | None = None) -> Plateau:
    """The plateau of a worker sweep: its runs at or past the knee within the knee's tolerance
    of the best, their median throughput, mean wait per step, waiting share and own steps
    (median, with their page faults), beside the step timed apart (step_s, on fresh batches).
    iqrs: the IQRs of the timings the parts are read from ('step', 'private', 'ready',
    'copy'), which say whether a part below zero is noise (Plateau.refused)."""
    if not step_s > 0 or not ready_step_s > 0:
        raise ValueError(f"step_s and ready_step_s are the step's seconds (> 0), got {step_s}, "
                         f"{ready_step_s}")
    if gpu_idle_share is not None and not 0 <= gpu_idle_share <= 1:
        raise ValueError(f"gpu_idle_share is a share in [0, 1] or None, got {gpu_idle_share}")
    iqrs = dict(iqrs or {})
    unknown = set(iqrs) - {"step", "private", "ready", "copy"}
    if unknown or any(v is not None and not v >= 0 for v in iqrs.values()):
        raise ValueError(f"iqrs maps 'step', 'private', 'ready', 'copy' to seconds >= 0 (or None), "
                         f"got {iqrs}")
    best = max(r.samples_per_s for r in sweep_result.runs)
    on = [r for r in sweep_result.runs if r.setting.num_workers >= knee.workers
          and r.samples_per_s >= (1 - knee.tolerance) * best]
    if not on:
        raise ValueError("no run of this sweep is on its plateau: pass the sweep the knee came from")
    batch = {r.setting.batch_size for r in on}
    if len(batch) != 1:
        raise ValueError(f"a worker sweep has one batch size; these runs have {sorted(batch)}")
    wait = float(np.mean([float(np.mean(r.wait_s)) for r in on]))
    waited = float(sum(np.sum(r.wait_s) for r in on))
    share = waited / float(sum(np.sum(r.step_times_s) for r in on) or 1.0)
    inside = float(np.median([t for r in on for t in r.compute_s]))
    faults = [f for r in on for f in r.step_faults]
    return Plateau(batch.pop(), tuple(r.setting.num_workers for r in on),
                   float(np.median([r.samples_per_s for r in on])), float(step_s),
                   float(ready_step_s), wait, gpu_idle_share, swept_step_s=inside,
                   copy_alone_s=copy_alone_s, copy_bytes=copy_bytes, on_gpu=on_gpu,
                   private_step_s=private_step_s, step_faults=step_faults,
                   private_faults=private_faults,
                   swept_faults=float(np.median(faults)) if faults else None,
                   launch_gap_us=launch_gap_us, wait_share=share,
                   step_iqr_s=iqrs.get("step"), private_iqr_s=iqrs.get("private"),
                   ready_iqr_s=iqrs.get("ready"), copy_iqr_s=iqrs.get("copy"))


# ---------------------------------------------------------------------------------------
# Start-up: time to the first batch of each epoch


@dataclass(frozen=True)
class Startup:
    """Seconds to the first batch of each epoch, for one setting."""

    setting: Setting
    first_batch_s: tuple[float, ...]
    epoch_s: tuple[float, ...]

    def as_dict(self) -> dict:
        return {"label": self.setting.label, "persistent_workers": self.setting.persistent_workers,
                "first_batch_s": list(self.first_batch_s), "epoch_s": list(self.epoch_s)}


def startup(dataset: torch.utils.data.Dataset, setting: Setting, epochs: int = 3,
            timeout_s: float = shm.DEFAULT_TIMEOUT_S) -> Startup:
    """Iterate whole epochs (keep the dataset short: a few batches); time each first batch.

    Without persistent_workers every epoch starts its workers again (a fork, or a fresh
    interpreter with 'spawn', and the dataset sent to each); with them, only the first does.
    """
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {epochs}")
    firsts, totals = [], []
    loader = make_loader(dataset, setting, timeout_s)
    iterator = None
    try:
        for _ in range(epochs):
            start = time.perf_counter()
            iterator = iter(loader)
            next(iterator)
            firsts.append(time.perf_counter() - start)
            for _batch in iterator:
                pass
            totals.append(time.perf_counter() - start)
            if not setting.persistent_workers:
                close(loader, iterator)
    except RuntimeError as error:
        raise _explained(error, setting) from error
    finally:
        close(loader, iterator)
    return Startup(setting, tuple(firsts), tuple(totals))


def with_persistence(setting: Setting, persistent: bool) -> Setting:
    """The same setting with persistent_workers on or off."""
    return replace(setting, persistent_workers=persistent)


# ---------------------------------------------------------------------------------------
# Sizes for this machine


@dataclass(frozen=True)
class Plan:
    """What the chapter runs here: the dataset, the consumer and the sweeps' ranges."""

    device: str
    cores: int
    encoded_side: int
    output_side: int
    batch_size: int
    worker_counts: tuple[int, ...]
    steps: int
    warmup_steps: int
    model: str  # 'small_cnn' or 'resnet50'

    def as_dict(self) -> dict:
        return asdict(self)


def plan(cores: int | None = None, gpu: bool | None = None) -> Plan:
    """Sizes that fit: on a CPU (2 cores, Binder) within about 30 s of sweeping in all; on a
    GPU machine ResNet-50 at 224 px, fed by up to cores-1 workers.

    The GPU sweep: 0, 2, 4, 8, 12, 16 and cores-1 workers (those below the core count); when
    that makes six or more, the top count goes if another lies within a quarter of it (it
    adds the dearest rounds and no new part of the curve: the counts below it already reach
    past the knee), else 2 goes (0 and 4 show the starved end). So a 16-core host sweeps 0,
    2, 4, 8, 12: five counts, two of them finer where the arithmetic points (3 to 5 workers
    on the H200), and its dearest count (15, 3.4 s a round there) left out; cost_model prices
    it at about 22 s of sweeping (the recorded 0, 4, 8, 12, 15: 32 s). Batches of 64, so
    benchmarks/reproduce.py 05 runs it three times in one batch job. Where the knee sits
    hardly moves with the batch: a batch's decode and a step's compute both grow with it.

    steps and warmup_steps are minimums per window and for the warm-up; measure() raises
    them (one batch per worker, a queue a window: window_plan())."""
    cores = cores or os.cpu_count() or 1
    gpu = torch.cuda.is_available() if gpu is None else gpu
    if gpu:
        counts = sorted({0, 2, 4, 8, 12, 16, max(cores - 1, 1)} & set(range(0, cores)))
        if len(counts) > 5:
            counts.remove(counts[-1] if counts[-2] >= 0.75 * counts[-1] else 2)
        # warm-up 1 and windows of 3: only the no-worker setting uses these minimums (its
        # steady state starts at once, and each of its steps costs a whole batch's decode);
        # with workers window_plan() raises them (a batch per worker, a queue a window).
        return Plan("cuda", cores, 256, 224, 64, tuple(counts), 3, 1, "resnet50")
    counts = tuple(range(0, min(cores, 4) + 1))
    return Plan("cpu", cores, 256, 64, 16, counts, 3, 2, "small_cnn")


def dataset_length(settings: Sequence[Setting], chosen: Plan) -> int:
    """Samples a dataset needs so that measure() can run every one of `settings` under `chosen`."""
    if not settings:
        raise ValueError("dataset_length needs the settings it is to be long enough for")
    return max(samples_needed(s, chosen.steps, chosen.warmup_steps) for s in settings)
