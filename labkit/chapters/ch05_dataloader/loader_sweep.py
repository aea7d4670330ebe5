"""Where a training step waits for data: the DataLoader sweep, its knee, and start-up time.

Each step of a training loop does two things in turn: it asks the loader for the next batch
(waiting, if the workers have not produced it yet) and it computes (copy to the device,
forward, backward, optimiser step). This module runs a loader under one setting for a few
steps and times the two parts of every step separately:

    from labkit.chapters.ch05_dataloader import loader_data, loader_sweep, train_step
    data = loader_data.SyntheticImages(length=4096)
    step = train_step.TrainingStep(train_step.small_cnn(), device="cpu")
    run = loader_sweep.measure(data, loader_sweep.Setting(num_workers=1), step, steps=8)
    run.wait_share, run.samples_per_s

Why not `labkit.measure.bench.time`: a loader is a stream, not a function to call again and again;
its steps can only be taken in order. So each step is clocked with perf_counter (the GPU is
synchronised at the end of each step, as a loop that logs `loss.item()` does, so no GPU
work leaks into the next step's wait), the first steps are thrown away as warm-up, and the
median and IQR over the rest are reported as bench reports them, with a warning when noisy.

`find_knee` then reads a sweep over num_workers: the fewest workers whose throughput is
within `tolerance` of the best. Why it sits there: loading one batch costs
batch_size x (seconds per sample) of one core's time, a step computes in `compute_s`, so
about (batch x sample cost) / compute_s workers keep the step fed, and never more than the
cores left over once the main process has its own.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import torch
from torch.utils.data import DataLoader

from labkit.chapters.ch05_dataloader import shm, train_step

NOISY_IQR_FRACTION = 0.10  # as labkit.measure.bench: IQR over 10% of the median is not to be trusted
KNEE_TOLERANCE = 0.10  # the knee: the fewest workers within 10% of the best throughput


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
                                        ("devprefetch", self.device_prefetch)) if on]
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
    """One setting's steps: per-step wait and compute seconds (warm-up steps left out)."""

    setting: Setting
    wait_s: tuple[float, ...]
    compute_s: tuple[float, ...]
    first_batch_s: float
    main_threads: int
    warnings: tuple[str, ...] = field(default_factory=tuple)

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
    def noisy(self) -> bool:
        """IQR of the step time over 10% of its median, as labkit.measure.bench flags a timing."""
        return self.step_iqr_s > NOISY_IQR_FRACTION * self.step_median_s

    @property
    def wait_share(self) -> float:
        """Share of the step time spent waiting for data (0: never waits, 1: only waits)."""
        total = float(np.sum(self.step_times_s))
        return float(np.sum(self.wait_s)) / total if total > 0 else 0.0

    @property
    def samples_per_s(self) -> float:
        """Throughput from the median step: batch size over the median step time."""
        return self.setting.batch_size / self.step_median_s

    def as_dict(self) -> dict:
        """Numbers to save or to judge from (per-step samples included)."""
        return {**self.setting.as_dict(), "label": self.setting.label,
                "wait_median_s": self.wait_median_s, "compute_median_s": self.compute_median_s,
                "step_median_s": self.step_median_s, "step_iqr_s": self.step_iqr_s,
                "wait_share": self.wait_share, "samples_per_s": self.samples_per_s,
                "first_batch_s": self.first_batch_s, "steps": len(self.wait_s),
                "main_threads": self.main_threads, "noisy": self.noisy,
                "warnings": list(self.warnings)}


def measure(dataset: torch.utils.data.Dataset, setting: Setting, step: Callable[..., object],
            steps: int = 10, warmup_steps: int = 2, timeout_s: float = shm.DEFAULT_TIMEOUT_S,
            main_threads: int | None = 1) -> Run:
    """Run `warmup_steps + steps` steps of `step` on batches from a loader for `setting`.

    main_threads: torch's thread count in this process while it runs (1 by default, so the
    main process uses one core and the others are left to the workers, as each worker also
    runs one thread). The workers are stopped before this returns, whatever happens.
    """
    needed = (warmup_steps + steps) * setting.batch_size
    if steps < 1 or warmup_steps < 0:
        raise ValueError(f"steps must be >= 1 and warmup_steps >= 0, got {steps}, {warmup_steps}")
    if len(dataset) < needed:  # type: ignore[arg-type]
        raise ValueError(f"the dataset has {len(dataset)} samples but {steps}+{warmup_steps} "  # type: ignore[arg-type]
                         f"steps of {setting.batch_size} need {needed}; make it longer")
    previous_threads = torch.get_num_threads()
    if main_threads is not None:
        torch.set_num_threads(main_threads)
    waits, computes, first_batch_s = [], [], math.nan
    loader = iterator = None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loader = make_loader(dataset, setting, timeout_s)
            started = time.perf_counter()
            iterator = iter(loader)
            batches = (train_step.DevicePrefetcher(iterator, torch.device("cuda", torch.cuda.current_device()))
                       if setting.device_prefetch else iterator)
            for index in range(warmup_steps + steps):
                begin = time.perf_counter()
                batch = next(batches)
                got = time.perf_counter()
                step(batch, setting.non_blocking)
                done = time.perf_counter()
                if index == 0:
                    first_batch_s = got - started
                if index >= warmup_steps:
                    waits.append(got - begin)
                    computes.append(done - got)
    except RuntimeError as error:
        raise _explained(error, setting) from error
    finally:
        if loader is not None:
            close(loader, iterator)
        torch.set_num_threads(previous_threads)
    notes = tuple(dict.fromkeys(str(w.message).splitlines()[0] for w in caught))
    return Run(setting, tuple(waits), tuple(computes), first_batch_s,
               main_threads or previous_threads, notes)


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
    """The runs of a sweep, in the order they ran."""

    runs: list[Run]

    def rows(self) -> list[dict]:
        """One dict per run (as Run.as_dict, without the warnings)."""
        return [{k: v for k, v in r.as_dict().items() if k != "warnings"} for r in self.runs]

    def where(self, **fields: object) -> list[Run]:
        """The runs whose setting has these field values, e.g. where(batch_size=16)."""
        return [r for r in self.runs if all(getattr(r.setting, k) == v for k, v in fields.items())]

    def _repr_html_(self) -> str:
        head = ("<tr><th>setting</th><th>wait (median)</th><th>compute (median)</th>"
                "<th>waiting share</th><th>samples/s</th><th>first batch</th><th></th></tr>")
        body = "".join(
            f"<tr><td>{r.setting.label}</td><td>{r.wait_median_s * 1e3:.1f} ms</td>"
            f"<td>{r.compute_median_s * 1e3:.1f} ms</td><td>{100 * r.wait_share:.0f}%</td>"
            f"<td>{r.samples_per_s:.0f}</td><td>{r.first_batch_s * 1e3:.0f} ms</td>"
            f"<td>{'noisy (IQR ' + format(100 * r.step_iqr_s / r.step_median_s, '.0f') + '%)' if r.noisy else ''}</td></tr>"
            for r in self.runs)
        return f"<table>{head}{body}</table>"


def sweep(dataset: torch.utils.data.Dataset, settings: Sequence[Setting],
          step: Callable[..., object], steps: int = 10, warmup_steps: int = 2,
          on_progress: Callable[[int, int, str], None] | None = None,
          main_threads: int | None = 1) -> Sweep:
    """measure() each setting in turn; on_progress(done, total, label) after each (a bar)."""
    if not settings:
        raise ValueError("sweep needs at least one Setting")
    runs = []
    for number, setting in enumerate(settings, start=1):
        runs.append(measure(dataset, setting, step, steps, warmup_steps, main_threads=main_threads))
        if on_progress is not None:
            on_progress(number, len(settings), setting.label)
    return Sweep(runs)


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
    """Where more workers stop helping, and the arithmetic that says why it sits there."""

    workers: int
    best_workers: int
    throughputs: dict[int, float]
    tolerance: float
    cores: int
    load_batch_s: float | None
    compute_s: float | None
    workers_needed: float | None
    explanation: str

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


def find_knee(points: Sequence[tuple[int, float]], tolerance: float = KNEE_TOLERANCE,
              cores: int | None = None, batch_size: int | None = None,
              sample_cost_s: float | None = None, compute_s: float | None = None) -> Knee:
    """The fewest workers whose throughput is within `tolerance` of the best one measured.

    points: (num_workers, samples per second), one per worker count (a sweep that varies
    num_workers only). With the per-sample cost and the step's compute time, the explanation
    says how many workers the arithmetic asks for and how many cores there are to give.
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
    load_s = needed = None
    text = (f"The knee: {knee} worker(s), the fewest within {tolerance:.0%} of the best "
            f"throughput ({best:.0f} samples/s with {best_workers}).")
    if batch_size and sample_cost_s is not None and compute_s:
        load_s = batch_size * sample_cost_s
        needed = workers_needed(batch_size, sample_cost_s, compute_s)
        spare = max(cores - 1, 1)
        text += (f" Why there: loading a batch takes {batch_size} x {sample_cost_s * 1e3:.2f} ms = "
                 f"{load_s * 1e3:.0f} ms of one core, a step computes in {compute_s * 1e3:.0f} ms, "
                 f"so about {needed:.1f} worker(s) keep up; this machine has {cores} core(s), "
                 f"{spare} left once the main process has one. ")
        if needed <= spare:
            text += f"The arithmetic asks for ceil({needed:.1f}) = {math.ceil(needed)}."
        else:
            text += (f"The cores run out first: past {spare} worker(s), workers only take "
                     "time from each other and from the step.")
    return Knee(knee, best_workers, throughputs, tolerance, cores, load_s, compute_s, needed, text)


def knee_of(sweep_result: Sweep, **kwargs: object) -> Knee:
    """find_knee on a sweep that varies num_workers only (its runs' throughput)."""
    points = [(r.setting.num_workers, r.samples_per_s) for r in sweep_result.runs]
    return find_knee(points, **kwargs)  # type: ignore[arg-type]


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
    GPU machine ResNet-50 at 224 px, fed by up to cores-1 workers."""
    cores = cores or os.cpu_count() or 1
    gpu = torch.cuda.is_available() if gpu is None else gpu
    if gpu:
        counts = sorted({0, 2, 4, 8, 12, max(cores - 1, 1)} & set(range(0, cores)))
        return Plan("cuda", cores, 256, 224, 128, tuple(counts), 8, 3, "resnet50")
    counts = tuple(range(0, min(cores, 4) + 1))
    return Plan("cpu", cores, 256, 64, 16, counts, 6, 2, "small_cnn")
