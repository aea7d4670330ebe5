"""The launch-overhead model: what N tiny kernels cost, eager against one CUDA Graph replay.

A tiny kernel does almost no work, so its time is the cost of getting it running. The model
is a straight line, time(N) = fixed + per_launch * N, fitted by least squares to timings
at several N:

- eager: each `x.add_(1)` goes through Python, the dispatcher and the CUDA driver; a tiny
  kernel finishes before the next one is launched, so the GPU waits for the CPU and the
  slope is the CPU's cost per launch;
- one CUDA Graph holding the same N kernels, replayed with one call: the slope is the
  cost per graph node, the fixed part the cost of launching the graph.

`fit_line` is plain least squares with the slope's standard error, tested on synthetic
timings with a known slope and intercept; `measure` takes the timings with labkit.measure.bench.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from labkit.claims.tables import first_sentence

DEFAULT_COUNTS = (1, 8, 16, 32, 64, 128, 256)  # kernels per call: spans fixed-cost- to launch-bound
# The line is fitted up to this many kernels per call; larger counts are drawn, not fitted (review
# 2026-12-03h item 10): the recorded H200 eager sweep bent at 256 (12.2 us per kernel against 8.6
# at 128; R^2 0.974 over all seven counts), and its fitted slope read 11.6 us where three fresh
# processes read 6.9-10.0 us. Up to 128 the same record fits 8.54 us per launch.
FIT_UP_TO = 128


@dataclass(frozen=True)
class LineFit:
    """time = fixed_s + per_item_s * count, with the slope's standard error and R^2."""

    fixed_s: float
    per_item_s: float
    per_item_stderr_s: float
    r_squared: float
    points: int

    def predict(self, count: float) -> float:
        """The fitted time for `count` items."""
        return self.fixed_s + self.per_item_s * count

    @property
    def per_item_us(self) -> float:
        """The slope in microseconds."""
        return self.per_item_s * 1e6

    @property
    def per_item_interval_us(self) -> tuple[float, float]:
        """The slope +- 2 standard errors, in microseconds (about a 95% interval)."""
        return ((self.per_item_s - 2 * self.per_item_stderr_s) * 1e6,
                (self.per_item_s + 2 * self.per_item_stderr_s) * 1e6)

    def as_dict(self) -> dict:
        """Plain values in microseconds (for results and claim evidence)."""
        low, high = self.per_item_interval_us
        return {"fixed_us": self.fixed_s * 1e6, "per_item_us": self.per_item_us,
                "per_item_interval_us": [low, high], "r_squared": self.r_squared,
                "points": self.points}

    def __str__(self) -> str:
        low, high = self.per_item_interval_us
        return (f"time = {self.fixed_s * 1e6:.2f} us + {self.per_item_us:.3f} us x N "
                f"(slope 95% interval {low:.3f} to {high:.3f} us, R^2 {self.r_squared:.4f}, "
                f"{self.points} points)")


def fit_line(counts: Sequence[float], times_s: Sequence[float]) -> LineFit:
    """Least-squares fit of times_s = fixed + per_item * counts.

    Why least squares over all points instead of (t(N_max) - t(N_min)) / (N_max - N_min):
    every point then helps, one noisy point moves the answer less, and the residuals give
    the slope's standard error, which says whether a threshold such as "0.5 us" is really
    above or below the measurement.
    """
    n = np.asarray(counts, dtype=np.float64)
    t = np.asarray(times_s, dtype=np.float64)
    if n.ndim != 1 or t.ndim != 1 or n.size != t.size:
        raise ValueError(f"counts and times must be two flat lists of the same length, got "
                         f"{n.shape} and {t.shape}")
    if not (np.all(np.isfinite(n)) and np.all(np.isfinite(t))):
        raise ValueError("counts and times must be finite numbers (a timing failed?)")
    if np.unique(n).size < 2:
        raise ValueError(f"need at least two different counts to fit a line, got {sorted(set(n))}")
    design = np.column_stack([np.ones_like(n), n])
    (fixed, slope), *_ = np.linalg.lstsq(design, t, rcond=None)
    residuals = t - (fixed + slope * n)
    total = float(np.sum((t - t.mean()) ** 2))
    r_squared = 1.0 - float(np.sum(residuals**2)) / total if total > 0 else 1.0
    dof = n.size - 2
    if dof > 0:
        sigma2 = float(np.sum(residuals**2)) / dof
        stderr = math.sqrt(sigma2 / float(np.sum((n - n.mean()) ** 2)))
    else:
        stderr = 0.0  # two points: the line goes through both, no spread to estimate
    return LineFit(float(fixed), float(slope), stderr, r_squared, int(n.size))


def fit_linear_part(counts: Sequence[float], times_s: Sequence[float], up_to: int = FIT_UP_TO) -> LineFit:
    """`fit_line` over the counts up to `up_to` (FIT_UP_TO: the part of the sweep where the time
    per call is a line); all of them where fewer than two are that small."""
    kept = [(n, t) for n, t in zip(counts, times_s, strict=True) if n <= up_to]
    if len({n for n, _ in kept}) < 2:
        kept = list(zip(counts, times_s, strict=True))
    return fit_line([n for n, _ in kept], [t for _, t in kept])


def refit(sweep: Mapping) -> dict:
    """A kept sweep (`LaunchSweep.as_dict`, times in us) with each way's fit recomputed over the
    linear part (`fit_linear_part`): a sweep recorded before FIT_UP_TO carries fits over every
    count, and C18's evidence must read the same fit wherever the sweep came from."""
    counts = list(sweep["counts"])
    fits = {way: fit_linear_part(counts, [t * 1e-6 for t in times]).as_dict()
            for way, times in sweep["times_us"].items()}
    return {**dict(sweep), "fits": fits, "fit_up_to": FIT_UP_TO}


def tiny_kernels(x: torch.Tensor, count: int) -> Callable[[], None]:
    """A function that launches `count` tiny kernels: x.add_(1) on a small tensor."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")

    def launch() -> None:
        for _ in range(count):
            x.add_(1.0)

    return launch


def graph_of(fn: Callable[[], None]) -> Callable[[], None]:
    """Capture fn (which must only launch GPU work) in a CUDA Graph; return its replay.

    Warm-up runs happen on a side stream first, as PyTorch's documentation asks, so that
    lazy initialisation is not captured.
    """
    if not torch.cuda.is_available():
        raise RuntimeError("CUDA Graphs need a CUDA GPU; on a CPU show the recorded result")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    torch.cuda.synchronize()
    return graph.replay


@dataclass(frozen=True)
class LaunchSweep:
    """Median times per call at each kernel count, for each way of launching, and their fits."""

    counts: tuple[int, ...]
    times_s: dict[str, tuple[float, ...]]
    noisy: dict[str, int]
    fits: dict[str, LineFit]
    device: str
    # what the sweep could not time, said under its table, not printed where it ran (review
    # 2026-12-05u 00-04 item 5a: the page's first cell measures it, 30 cells above C18)
    notes: tuple[str, ...] = ()
    # the harness's TimingWarnings, one line per timing it flagged ('graph replay, N=1: too fast
    # to time reliably ...'): folded with the medians under C18's table, where the page's first
    # cell, which measures the sweep, printed them 30 cells above it (the H100 smoke run of
    # 2026-12-05 23:20: 50 words at the page's top)
    flagged: tuple[str, ...] = ()
    # handed out by `measured` as the sweep `measure_first` took, before the page's profiler
    # sessions; False for one measured later (a re-run cell: review 2026-12-05u 00-04 item 5b)
    first: bool = False

    def as_dict(self) -> dict:
        """Plain values (for results and claim evidence)."""
        return {"counts": list(self.counts), "device": self.device,
                "times_us": {k: [v * 1e6 for v in ts] for k, ts in self.times_s.items()},
                "noisy_points": dict(self.noisy),
                "fits": {k: f.as_dict() for k, f in self.fits.items()}, "fit_up_to": FIT_UP_TO,
                **({"notes": list(self.notes)} if self.notes else {})}

    def rows(self) -> list[str]:
        """One line per way of launching: its fit."""
        return [f"{name:<28} {fit}" for name, fit in self.fits.items()]

    def __str__(self) -> str:
        return "\n".join(self.rows())


# Graph replays also timed on the device (review 2026-12-05t 03-04 item 3): the wall slope holds
# the host's replay work, which profiler sessions earlier in a process raise (benchmarks/
# probe_profiler_tax.py: 1.150 -> 1.351 us after 5 sessions on the H200); CUDA events around
# replays queued behind a spin time the GPU's side alone. No profiler: kernel records would open one.
DEVICE_WAY = "graph replay (device)"
DEVICE_CALLS = 20  # replays per round and count, queued behind one spin
HOLD_PER_CALL_S = 100e-6  # the spin per queued replay: more than the host needs to queue one


def device_per_call_s(run: Callable[[], None], calls: int, device: torch.device) -> list[float]:
    """`calls` runs of `run` (GPU work only) queued behind one spin kernel, each between two CUDA
    events: the GPU's time per run, the host's launches hidden behind the spin (as bench's device
    clock holds the GPU). Where the spin ended before the host had queued them all, the spin is
    made 4x longer and the runs timed again (once); where that too ended early, RuntimeError."""
    from labkit.measure import clocks

    for hold in (HOLD_PER_CALL_S, 4 * HOLD_PER_CALL_S):
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(calls)]
        torch.cuda.synchronize(device)
        torch.cuda._sleep(clocks.cycles_for(hold * calls, str(device)))
        for start, end in zip(starts, ends, strict=True):
            start.record()
            run()
            end.record()
        # held while the spin still runs once every run is queued: the first start event, right
        # behind the spin, not yet reached (the stream's own query would read the queued runs)
        held = not starts[0].query()
        torch.cuda.synchronize(device)
        if held:
            return [start.elapsed_time(end) * 1e-3 for start, end in zip(starts, ends, strict=True)]
    # even the longer spin ended before the runs were queued: the events would hold the host's
    # queueing, not the GPU's time alone; `device_or_note` turns this into the fit table's note
    raise RuntimeError(f"the spin ended before {calls} replays were queued, twice: not timed on the device")


SWEEP_ROUNDS = 5  # interleaved rounds per count (2026-12-04 14:00 H200, reproduce 04: counts timed one after
# the other read 80, 316, 589, 1,066, 526, 988 us eager at N = 1..128 in one fresh process, a burst
# of host noise across four counts in a row; R^2 0.41 and C18 'depends (noise)' in 2 of 3 runs)
NOISY_ROUNDS_IQR = 0.10  # a count whose rounds' IQR is over 10% of their median is counted noisy


def round_orders(counts: Sequence[int], rounds: int) -> list[tuple[int, ...]]:
    """The order each round times the counts in: rotated by one each round, so a burst of host
    noise lands on different counts in different rounds and the per-count median drops it."""
    counts = tuple(counts)
    return [counts[r % len(counts):] + counts[:r % len(counts)] for r in range(rounds)]


def measure(counts: Sequence[int] = DEFAULT_COUNTS, device: torch.device | None = None,
            rep_ms: float = 40.0, rounds: int = SWEEP_ROUNDS) -> LaunchSweep:
    """Time N tiny kernels per call for each N: eager and (on a GPU) one graph replay.

    On a GPU both run in bench's cold mode on the wall clock (clock="wall"): CUDA events
    around each call with nothing holding the GPU while the host launches, so the eager
    kernels run as fast as the CPU launches them and the slope is the host's cost per
    launch, which is what this model is about. (The harness's default, the device clock,
    would hide exactly that: it queues the whole call before the GPU starts it and reports
    the kernels' own time; `labkit.measure.clocks` says how, and measures how long the cold
    flush keeps the GPU busy on this GPU.) On a CPU there are no kernel launches: 'eager
    (CPU ops)' is the dispatcher's cost per tiny op, the closest analogue.

    Each count is timed in `rounds` interleaved rounds (`round_orders`, rep_ms shared among
    them) and its time is the median over rounds: a host's noise comes in bursts longer than
    one count's timing, and timed one count after the other a burst bent the line.

    On a GPU the same graph replays are also timed on the device (DEVICE_WAY, `device_per_call_s`:
    CUDA events around replays queued behind a spin, no profiler): the wall slope is the host's
    view of a replay, the device slope the GPU's.
    """
    from labkit.measure import bench

    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    device = device or (torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu"))
    counts = tuple(int(c) for c in counts)
    x = torch.zeros(1, device=device)
    ways: dict[str, tuple[str, Callable[[int], Callable[[], None]]]]
    if device.type == "cuda":
        ways = {"eager (CPU-bound)": ("cold", lambda n: tiny_kernels(x, n)),
                "graph replay": ("cold", lambda n: graph_of(tiny_kernels(x, n)))}
    else:
        ways = {"eager (CPU ops)": ("hot", lambda n: tiny_kernels(x, n))}
    calls = {(name, n): make(n) for name, (_, make) in ways.items() for n in counts}  # graphs captured once
    per_round: dict[tuple[str, int], list[float]] = {key: [] for key in calls}
    on_device = [DEVICE_WAY] if device.type == "cuda" else []  # the same replays, on the device
    per_round.update({(DEVICE_WAY, n): [] for n in counts for _ in on_device})
    notes: list[str] = []
    harness_flags: dict[str, None] = {}  # each flag once, in the order first met
    for order in round_orders(counts, rounds):
        for name, (mode, _) in ways.items():
            for n in order:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", bench.TimingWarning)
                    timing = bench.time(calls[(name, n)], mode=mode, rep_ms=rep_ms / rounds,
                                        warmup_ms=10.0 / rounds, min_runs=3, label=f"{name}, N={n}",
                                        device=device, clock="wall")
                per_round[(name, n)].append(timing.median_s)
                for w in caught:
                    if issubclass(w.category, bench.TimingWarning):
                        # its finding without its advice (to its first full stop)
                        harness_flags.setdefault(first_sentence(str(w.message)).rstrip("."), None)
                    else:  # not the harness's: shown as it came
                        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        for n in order if on_device else ():
            got = device_or_note(lambda n=n: float(np.median(
                device_per_call_s(calls[("graph replay", n)], DEVICE_CALLS, device))))
            if isinstance(got, str):  # not timed: the note goes with the sweep, under C18's table
                notes.append(got)
                on_device = []
                for key in [k for k in per_round if k[0] == DEVICE_WAY]:
                    del per_round[key]
                break
            per_round[(DEVICE_WAY, n)].append(got)
    times: dict[str, tuple[float, ...]] = {}
    noisy: dict[str, int] = {}
    for name in [*ways, *on_device]:
        medians, flagged = [], 0
        for n in counts:
            q25, q50, q75 = np.percentile(per_round[(name, n)], [25, 50, 75])
            medians.append(float(q50))
            flagged += bool(q50 > 0 and (q75 - q25) / q50 > NOISY_ROUNDS_IQR)
        times[name], noisy[name] = tuple(medians), flagged
    fits = {name: fit_linear_part(counts, ts) for name, ts in times.items()}
    return LaunchSweep(counts, times, noisy, fits, str(device), tuple(notes), tuple(harness_flags))


def device_or_note(time_one: Callable[[], float]) -> float | str:
    """`time_one()`, or where it raises anything (an Exception, not only a RuntimeError: an older
    torch without `torch.cuda._sleep` raises AttributeError, a clock read ValueError), the note
    `not_timed_note` makes of it. The replays' device time is an extra view: C18 is judged
    without it, so no failure of it stops the page (review 2026-12-05u 00-04 item 5c), and it is
    said under C18's fit table, not where the sweep ran (item 5a)."""
    try:
        return time_one()
    except Exception as exc:  # any failure: the wall-clock sweep alone
        return not_timed_note(exc)


def not_timed_note(exc: BaseException) -> str:
    """The note a sweep keeps where its replays could not be timed on the device: the error's
    type and first line (at most 160 characters), and what C18 reads instead."""
    said = (str(exc).strip().splitlines() or [""])[0]
    said = said if len(said) <= 160 else said[:157] + "..."
    return (f"Graph replay on the device not timed ({type(exc).__name__}" + (f": {said}" if said else "")
            + "); C18 reads the wall-clock sweep alone.")


# Review 2026-12-05t 03-04 item 3: profiler sessions earlier in a process slow its later graph
# replays (benchmarks/probe_profiler_tax.py), and chapter 04 profiles and times short calls from
# kernel records (a profiler session each) long before its C18 section. The notebook measures the
# sweep at its top (`measure_first`) and shows it in C18's section (`measured`).
_FIRST: dict[str, LaunchSweep] = {}


def measure_first(device: torch.device) -> None:
    """`measure` on `device` now, kept for `measured` (this process's first sweep, before a
    page's profiler sessions)."""
    _FIRST[str(device)] = measure(device=device)


def measured(device: torch.device) -> LaunchSweep:
    """The sweep `measure_first` took on `device`, handed out once with `first` set; else (the
    cell run again, after the page's profiler sessions) one measured now, `first` unset, so the
    page stamps it as measured after them (review 2026-12-05u 00-04 item 5b)."""
    kept = _FIRST.pop(str(device), None)
    return dataclasses.replace(kept, first=True) if kept is not None else measure(device=device)
