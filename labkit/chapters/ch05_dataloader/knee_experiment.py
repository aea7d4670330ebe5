"""The chapter's two sweeps as one experiment: the worker sweep and its knee, then every knob
at the arithmetic's worker count, fixed before the knobs run (knob_workers). The notebook, benchmarks/gpu_05_loader.py and reproduce.py all run this, so
the number the chapter prints is the number the reproduce check compares.

    from labkit.chapters.ch05_dataloader import knee_experiment
    bench = knee_experiment.prepare()           # dataset, consumer, sample cost, compute time
    found = knee_experiment.worker_sweep(bench) # .sweep, .knee
    knobs = knee_experiment.knob_sweep(bench, knee_experiment.knob_workers(found.knee))

Each sweep has a hard time budget (WORKER_SWEEP_BUDGET_S, KNOB_SWEEP_BUDGET_S): a machine
slower than planned gets fewer settings (the dearest last) or fewer rounds, and the sweep says
so (Sweep.budget_note), instead of one slow machine eating a whole batch job. Bench.phases and
measure_knee()['phases'] say where the seconds went.
"""

from __future__ import annotations

import functools
import logging
import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from labkit.chapters.ch05_dataloader import (
    fresh_step,
    loader_data,
    loader_sweep,
    shm,
    train_step,
)
from labkit.measure import bench as timing
from labkit.measure import intervals
from labkit.measure.intervals import t_quantile
from labkit.show.widgets.quiz import Key

_log = logging.getLogger(__name__)  # each phase's seconds, at INFO (reproduce.py shows them)
MAX_PREFETCH = 4  # the knob sweep's larger prefetch factor
# Hard wall-time limits (seconds) of the two sweeps. Their cost on the H200 is computed, not
# typed: cost_model.fit() reads each setting's start-up and step from a recorded reproduce run,
# and cost_model.measured_seconds() prices this source's plan from the 16:01 H200 run of
# 2026-12-04 (142.4 s, its knob cell 67.7 s for three rows x ten rounds): about 112 s, the knob
# cell about 37 s (baseline, A/A and the tuned loader, KNOB_GPU_ROUNDS = 6 rounds of one-queue
# windows, a batch per worker of warm-up, ~6.2 s a round). The knob budget (90 s) never drops
# a row (loader_sweep.sweep's whole_rounds, review 2026-12-04l item 2): every row runs every
# round, and a host ~2.4x as slow as the H200 runs fewer pairs of rounds, said on the page.
# Why six rounds (review 2026-12-04l item 2, recomputed with simulate_calls, 20,000 sweeps):
# eight would price the chapter at ~124 s. At six the A/A's interval half-width at per-round
# sd 0.13 is x1.146 (ten: x1.097), a knob that does nothing is called 4.9% of the time. The
# tuned row ran 1.27x (sd of its per-round log ratios 0.14), 1.15x (0.09) and 1.40x (0.12, at
# 4 workers) in the 16:07 reproduce, 1.32x on the 13:47 page: at six rounds a true 1.27x is
# called a gain in 91% of runs at sd 0.14 (4 runs of 4: 68%), 99.9% at sd 0.09; a true 1.30x
# 97% at sd 0.13 (4 of 4: 89%); a true 1.15x only 86% at sd 0.09 (4 of 4: 53%). Why "+ pin"
# alone left the GPU table: a true 1.12x at sd 0.13 is called a gain in 41% of runs at six
# rounds, 69% at ten, 96% at twenty (4 of 4: 3%, 23%, 84%): no round count the chapter's
# 120 s afford reproduces it. Why rounds and not longer windows (review 2026-12-04j item 2):
# results/h200_05/gpu_05_window_noise_2026-12-04T0737.json doubled the window (16 -> 32
# steps) and the sd of the per-round log ratio did not fall (A/A 0.127 -> 0.163), so the noise
# is per round (start-up, drift), and only more rounds narrow the interval. Persistent
# workers per setting were weighed and not taken: a paused loader refills its whole queue (16
# batches at 8 workers, prefetch 2), so a fair window must first drain it, where the start-up
# it saves is 0.6 s a row (cost_model.fit), and idle workers would hold GBs of /dev/shm.
WORKER_SWEEP_BUDGET_S = 45.0
KNOB_SWEEP_BUDGET_S = 90.0
KNOB_GPU_WINDOW_QUEUES = 1.0
WORKER_GPU_ROUNDS = 2  # the worker sweep's rounds on a GPU (a CPU: loader_sweep.WINDOWS)
# The knob rule (knob_ratio): per round, the knob's throughput over the baseline's (both in
# that round, so drift that hits both cancels); over the rounds, the geometric mean of those
# ratios and its Student-t 95% interval (on the log ratios, rounds - 1 degrees of freedom).
# A gain when the interval's low end is above 1 and the mean above 1 + KNOB_MARGIN; a loss
# mirrored; no difference when the whole interval lies in the band 0.95-1.05x; else not
# resolved (judge_interval). A knob that does nothing (log ratios centred on 0:
# the balanced order makes knob and baseline exchangeable) is called a gain or a loss about
# 5% of the time, nominal and two-sided; the band only removes calls (false_call_chance).
# Simulated, 6 rounds of lognormal noise (1,000,000 sweeps; simulate_calls' 2,000 at seed 0
# in brackets): at sd 0.15 an A/A is called a gain or a loss 4.9% of the time (5.3%) and a
# true 1.3x a gain 92.3% (91.9%); at sd 0.106 (two-queue windows, if the noise falls as
# 1/sqrt(window)) 4.6% (4.9%) and 99.7% (99.5%). The H200's one-queue runs spread their
# per-round ratios by about 0.09-0.18 (sd of the log, the 16:07 reproduce); at the rounds now
# run, see the numbers above WORKER_SWEEP_BUDGET_S.
# What a record's warm-ups were (cost_model reads it; a record without it warmed up a queue).
WARMUP_RULE = "a batch per worker"
KNOB_ROUNDS = 10  # a CPU's knob rounds; even: the balanced order runs in pairs (forward, reversed)
KNOB_GPU_ROUNDS = 6  # a GPU's (its rounds cost seconds: the numbers above WORKER_SWEEP_BUDGET_S)
KNOB_MARGIN = 0.05
KNOB_LEVEL = 0.95  # the interval's coverage: two-sided, so 2.5% on each side
# The A/A control's own rule (review 2026-12-04n item 4). A run whose A/A is called keeps no
# knob call; called by the knobs' 95% rule, a sound control fails one of a re-record's
# CONTROL_RUNS A/As (the page and reproduce's three runs) up to 1 - 0.95^4 = 19% of the time,
# and reproduce's 3 of 3 with it. So the control is judged on its own interval, widened to
# CONTROL_LEVEL (Bonferroni over those runs: 1 - 5% / 4 = 98.75%): a sound control fails one of
# them at most 5% of the time (nominal), one run about 1.25%. An A/A called at 95% but not at
# CONTROL_LEVEL is printed as such (about 1 run in 20 of a sound control), and its reach still
# bounds every knob call of the run (controlled). reproduce prints the across-runs test too
# (runs_effect), which the per-run rule cannot see.
CONTROL_RUNS = 4
CONTROL_LEVEL = 1 - (1 - KNOB_LEVEL) / CONTROL_RUNS
DRIFT_SETTLE_S = 2.0  # the pause before the plateau's step is timed again (review 2026-12-04k item 1)


@dataclass
class Bench:
    """What both sweeps need: the plan, the datasets (float32 and uint8), the consumer, and the
    two measured inputs of the arithmetic (one sample's cost, one step's time).

    compute: the step with its batch already on the device; step_as_swept: the step as the
    sweep runs it, on batches fresh from workers (each a new shared-memory segment: first
    touch), the copy to the device inside, with its page faults (fresh_step); private_step:
    the same step on one private batch used again (its pages already touched). The
    arithmetic uses step_as_swept: it is the step the loader meets (review 2026-12-03e item 1:
    it used the private one)."""

    plan: loader_sweep.Plan
    data: loader_data.SyntheticImages
    data_uint8: loader_data.SyntheticImages
    step: train_step.TrainingStep
    sample_cost: timing.Timing
    compute: timing.Timing
    worker_counts: tuple[int, ...]
    phases: dict[str, float] = field(default_factory=dict)  # seconds of each preparation step
    step_as_swept: fresh_step.StepTimes | None = None
    copy_alone: timing.Timing | None = None  # a GPU run: the batch's pageable copy alone, idle stream
    private_step: fresh_step.StepTimes | None = None
    # one private batch as the loader hands it (host memory; on a GPU the step copies it, as in
    # the sweep, so the plateau's step beside decoders pays the copy the sweep's step pays)
    ready: list | None = None

    @property
    def batch_load_s(self) -> float:
        return self.plan.batch_size * self.sample_cost.median_s

    @property
    def step_s(self) -> float:
        """The step as the sweep runs it (fresh worker batches, copy inside), in seconds."""
        return (self.step_as_swept or self.compute).median_s

    def arithmetic(self) -> dict:
        fresh, private = self.step_as_swept, self.private_step
        return {"sample_cost_s": self.sample_cost.median_s, "sample_cost_iqr_s": self.sample_cost.iqr_s,
                "compute_s": self.compute.median_s,
                "step_as_swept_s": self.step_s, "batch_load_s": self.batch_load_s,
                "step_as_swept_faults": fresh.faults_per_step if fresh else None,
                "private_step_s": private.median_s if private else None,
                "private_step_faults": private.faults_per_step if private else None,
                "handover_s": fresh.handover_median_s if fresh else None,
                "handover_restart_s": fresh.handover_restart_median_s if fresh else None,
                "handover_dropped": fresh.handover_dropped if fresh else 0,
                "handover_workers": fresh.handover_workers if fresh else None,
                "workers_needed": loader_sweep.workers_needed(
                    self.plan.batch_size, self.sample_cost.median_s, self.step_s)}


def _largest_settings(chosen: loader_sweep.Plan, counts: Sequence[int]) -> list[loader_sweep.Setting]:
    top = max(counts)
    out = [loader_sweep.Setting(num_workers=top, batch_size=chosen.batch_size * 2)]
    if top:
        out.append(loader_sweep.Setting(num_workers=top, batch_size=chosen.batch_size,
                                        prefetch_factor=MAX_PREFETCH))
    return out


def prepare(quick: bool = False, chosen: loader_sweep.Plan | None = None) -> Bench:
    """Build the datasets and the consumer, and measure the arithmetic's two inputs.

    quick: every other worker count of the plan (its first and last kept), for a fast check.
    The worker counts are cut to what /dev/shm holds (shm.choose)."""
    chosen = chosen or loader_sweep.plan()
    phases: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        phases[name] = now - clock
        _log.info("%s: %.1f s", name, now - clock)
        clock = now

    counts = list(chosen.worker_counts)
    if quick and len(counts) > 3:
        counts = sorted(set(counts[::2]) | {counts[-1]})
    data_probe = loader_data.SyntheticImages(length=1, encoded_side=chosen.encoded_side,
                                             output_side=chosen.output_side)
    fits = shm.choose(max(counts), None, chosen.batch_size * data_probe.sample_bytes)
    counts = [w for w in counts if w <= fits.num_workers] or [0]
    length = loader_sweep.dataset_length(
        loader_sweep.grid(counts, chosen.batch_size) + _largest_settings(chosen, counts), chosen)
    data = loader_data.SyntheticImages(length=length, encoded_side=chosen.encoded_side,
                                       output_side=chosen.output_side)
    data_uint8 = loader_data.SyntheticImages(length=length, encoded_side=chosen.encoded_side,
                                             output_side=chosen.output_side, as_uint8=True)
    lap("prepare: datasets (draw and encode the images)")
    step = train_step.consumer(chosen.model)
    lap("prepare: consumer (model to its device)")
    sample_cost = loader_data.per_sample_cost(data)
    lap("prepare: one sample's cost")
    host = next(iter(torch.utils.data.DataLoader(data, batch_size=chosen.batch_size)))
    ready = [t.to(step.device) for t in host]
    compute = timing.time(lambda: step(ready), rep_ms=600, warmup_ms=200,
                          threads=1 if step.device.type == "cpu" else None,
                          label=f"{chosen.model} training step, batch {chosen.batch_size}, on the device")
    lap("prepare: one step's compute")
    # as the sweep runs it: batches fresh from workers, the copy inside (fresh_step says why),
    # and the same step on one private batch again, each with its page faults
    fresh = fresh_step.on_fresh_batches(data, step, fresh_step.workers_for(max(counts), chosen.cores),
                                        chosen.batch_size, handover_after_s=handover_settle_s(
                                            chosen.batch_size, sample_cost.median_s),
                                        decode_s=chosen.batch_size * sample_cost.median_s)
    private = fresh_step.on_one_batch(step, host)
    copy_alone = None
    if step.device.type != "cpu":
        copy_alone = timing.time(lambda: [t.to(step.device) for t in host], rep_ms=300, warmup_ms=100,
                                 device=step.device, bytes_moved=sum(t.nbytes for t in host),
                                 label=f"the batch's pageable copy alone ({chosen.batch_size} samples)")
    lap("prepare: one step as swept, and its copy alone")
    return Bench(chosen, data, data_uint8, step, sample_cost, compute, tuple(counts), phases,
                 fresh, copy_alone, private, list(host))


def handover_settle_s(batch_size: int, sample_cost_s: float) -> float:
    """The pause before a round of hand-over timings where the loader's queue cannot be read
    (and a quarter of the most prepare() waits for a full queue where it can):
    fresh_step.HANDOVER_WAVES batch decodes (batch x one sample's cost; review 2026-12-04m
    item 3). Workers decode slower than the main process's hot decode (the H200's 4 workers
    about 250 ms a batch against 202: review 2026-12-04n item 3), so where it can, prepare()
    waits on the queue itself, not on this arithmetic."""
    return fresh_step.HANDOVER_WAVES * batch_size * sample_cost_s


@dataclass
class Found:
    """A worker sweep and the knee read from it."""

    sweep: loader_sweep.Sweep
    knee: loader_sweep.Knee


def worker_sweep(bench: Bench, on_progress: Callable[[int, int, str], None] | None = None,
                 budget_s: float | None = WORKER_SWEEP_BUDGET_S) -> Found:
    """Every worker count of the bench at the plan's batch size (fewest first, so a budget
    cut drops the dearest; later rounds rotated like the knob sweep's, review 2026-12-03h
    item 10: no count always runs first or last in a round); the knee from total time, over
    the counts that were measured."""
    plan = bench.plan
    result = loader_sweep.sweep(bench.data, loader_sweep.grid(sorted(bench.worker_counts),
                                                              plan.batch_size),
                                bench.step, steps=plan.steps, warmup_steps=plan.warmup_steps,
                                on_progress=on_progress, budget_s=budget_s, rotate=True,
                                windows=worker_rounds(bench.step.device.type == "cuda"))
    knee = loader_sweep.knee_of(result, cores=plan.cores, batch_size=plan.batch_size,
                                sample_cost_s=bench.sample_cost.median_s,
                                compute_s=bench.step_s)
    return Found(result, knee)


def worker_rounds(on_gpu: bool) -> int:
    """Rounds of the worker sweep: WORKER_GPU_ROUNDS on a GPU (its rounds cost seconds: review
    2026-12-04i item 10), loader_sweep.WINDOWS on a CPU."""
    return WORKER_GPU_ROUNDS if on_gpu else loader_sweep.WINDOWS


def knee_candidates(spreads: dict[int, tuple[float, float]],
                    tolerance: float = loader_sweep.KNEE_TOLERANCE) -> list[int]:
    """Every worker count the windows' spread allows as the knee (the fewest within
    `tolerance` of the best), from each count's (slowest, fastest) window in samples/s.

    Count w can be the knee when some best throughput B the windows allow (between the
    largest slowest window and the fastest window of a count at or above w) puts its fastest
    window at or above (1 - tolerance) B while every fewer count's slowest window lies below it. The measured
    knee always qualifies (its overall rate lies between its windows)."""
    if not spreads:
        raise ValueError("knee_candidates needs each worker count's (slowest, fastest) window")
    if not 0 <= tolerance < 1:
        raise ValueError(f"tolerance is a fraction in [0, 1), got {tolerance}")
    keep = 1 - tolerance
    floor = keep * max(min(s) for s in spreads.values())
    found = []
    for w in sorted(spreads):
        # the best is some count's rate: one at or above w (a fewer one would itself be in reach)
        reach = min(max(spreads[w]), keep * max(max(spreads[v]) for v in spreads if v >= w))
        fewer = [min(spreads[v]) for v in spreads if v < w]
        if reach >= floor and all(low < reach for low in fewer):
            found.append(w)
    return found


def knee_key(found: Found) -> Key | int:
    """The knee quiz's key: the measured knee, and every count the windows' spread allows
    (review 2026-12-03f item 13: this CPU's 1 and 2 workers overlapped, '650 to 1031' and
    '843 to 1260', yet only 2 was right), the trust rule's reading of a noisy sweep
    (`labkit.claims.quiz_keys` does the same for ratio quizzes)."""
    spreads = {r.setting.num_workers: r.samples_per_s_spread for r in found.sweep.runs}
    knee = found.knee.workers
    allowed = sorted({*knee_candidates(spreads, found.knee.tolerance), knee})
    if allowed == [knee]:
        return knee
    return Key(knee, span=(allowed[0], allowed[-1]),
               why=f"the windows' spread allows the knee at {', '.join(map(str, allowed))} worker(s): "
                   f"each one's fastest window within {found.knee.tolerance:.0%} of a best the windows allow")


def plateau(bench: Bench, found: Found, gpu_idle_share: float | None = None,
            launch_gap_us: float | None = None, loaded: bool = True,
            kernels_per_step: float | None = None,
            gpu_busy_step_s: float | None = None,
            settle_s: float | None = DRIFT_SETTLE_S, paired: bool = True) -> loader_sweep.Plateau:
    """The worker sweep's plateau against the arithmetic: batch / (step + wait). With loaded
    (and a ready batch), the step is timed here on one batch while the plateau's first count
    of workers decodes beside it (fresh_step.ready_beside_decoders: wall and main-thread CPU
    time), apart from the sweep's runs, so the arithmetic predicts (review 2026-12-03h item
    1); else the sweep's own step (a consistency check). The step timed apart on fresh
    batches is split into its measured parts where they agree within their IQRs
    (gpu_idle_share, launch_gap_us, kernels_per_step and gpu_busy_step_s: a timeline's of the
    step at the knee; workers_needed: the knee's arithmetic, which names the cores the bound
    where it asks for more workers than there are spare cores).
    paired (review 2026-12-06z 05-07 item 2): each of the step's rounds also times a plateau
    window (round_window: the plateau's first count, as the sweep runs it) back to back with its
    block beside the decoders, and the check is read round by round (loader_sweep.round_call),
    so a drift of the machine's pace common to both cancels; no settle and no second timing (a
    retry selects the run that passes). Unpaired (paired=False, or a timing without windows):
    where the loaded step drifts (Plateau.drift), its rounds are timed once more after settle_s
    (None: not again), as before."""
    copy, fresh, private = bench.copy_alone, bench.step_as_swept, bench.private_step
    found_plateau = loader_sweep.plateau_of(found.sweep, found.knee, bench.step_s, bench.compute.median_s,
                                            gpu_idle_share, copy_alone_s=copy.median_s if copy else None,
                                            copy_bytes=copy.bytes_moved if copy else None,
                                            on_gpu=bench.step.device.type == "cuda",
                                            private_step_s=private.median_s if private else None,
                                            step_faults=fresh.faults_per_step if fresh else None,
                                            private_faults=private.faults_per_step if private else None,
                                            launch_gap_us=launch_gap_us,
                                            iqrs={"step": fresh.iqr_s if fresh else None,
                                            "private": private.iqr_s if private else None,
                                            "ready": bench.compute.iqr_s,
                                            "copy": copy.iqr_s if copy else None})
    found_plateau = replace(found_plateau, workers_needed=found.knee.workers_needed, cores=bench.plan.cores,
                            kernels_per_step=kernels_per_step, gpu_busy_step_s=gpu_busy_step_s,
                            handover_s=fresh.handover_median_s if fresh else None,
                            handover_restart_s=fresh.handover_restart_median_s if fresh else None,
                            handover_dropped=fresh.handover_dropped if fresh else 0,
                            handover_workers=fresh.handover_workers or None if fresh else None)
    decoding = [c for c in found_plateau.counts if c > 0]
    if not loaded or bench.ready is None or not decoding:  # no workers on the plateau: none to time beside
        return found_plateau
    # the ready step beside the plateau's first count of workers decoding (review 2026-12-03h
    # item 1: the prediction's step, timed apart from the sweep's runs)
    workers = min(decoding)

    def timed() -> loader_sweep.Plateau:
        # the private step before and after the rounds, no worker alive either time (review
        # 2026-12-04l item 1: drift is read like with like; about five steps each)
        def private() -> float | None:
            return (fresh_step.on_one_batch(bench.step, bench.ready).median_s
                    if bench.private_step is not None else None)

        again = private()
        beside = fresh_step.ready_beside_decoders(
            bench.data, bench.step, bench.ready, workers, bench.plan.batch_size,
            **({"window": lambda: round_window(bench, workers)} if paired else {}))
        windows = [w for w in beside.windows if isinstance(w, loader_sweep.Run)]
        steps = beside.round_beside_s()
        rounds = ({"round_rates": tuple(w.samples_per_s for w in windows),
                   "round_waits_s": tuple(float(np.mean(w.wait_s)) for w in windows),
                   "round_steps_s": tuple(steps)}
                  if windows and len(windows) == len(steps) == beside.rounds else {})
        return replace(found_plateau, loaded_workers=workers, loaded_step_s=beside.median_s, **rounds,
                       loaded_cpu_s=beside.cpu_s, loaded_alone_s=beside.alone_median_s,
                       loaded_alone_cpu_s=beside.alone_cpu_median_s, batch_load_s=bench.batch_load_s,
                       loaded_times_s=tuple(beside.beside_s), loaded_alone_times_s=tuple(beside.alone_s),
                       loaded_rounds=beside.rounds, private_again_s=again, private_after_s=private(),
                       **dict(zip(
                           ("loaded_slowdown", "loaded_slowdown_low", "loaded_slowdown_high"),
                           beside.slowdown_interval() or (None, None, None), strict=True)))

    try:
        first = timed()
    except (loader_sweep.WorkerFailure, MemoryError) as failed:
        if not paired:  # unpaired: nothing to fall back to, the error as before
            raise
        # the session-z code review: a window's loader forks as many workers again beside the
        # parked decoders (Binder's 2 GB); where it fails, the step is timed unpaired, as before,
        # and the page says why (the exception's words), never a crashed cell
        warnings.warn(f"the plateau's round-by-round windows failed ({failed}); the step timed "
                      "beside the decoders alone, as before", stacklevel=2)
        paired = False
        first = timed()
    if first.paired or first.drift is None or settle_s is None:  # paired: the rounds judge it, no retry
        return first
    # review 2026-12-04k item 1: the step disagreed with itself beyond the band (a transient):
    # once more after a settle; if it still drifts, Plateau says so and predicts nothing
    settle(bench, settle_s)
    return replace(timed(), loaded_first_drift=first.drift)


def round_window(bench: Bench, workers: int) -> loader_sweep.Run:
    """One plateau window at `workers` workers, as the worker sweep runs one of its rounds
    (loader_sweep.measure: its own warm-up of a batch per worker, one window of at least a
    queue, the plan's steps). Review 2026-12-06z 05-07 item 2: the plateau's measured side of
    one round of the check, timed back to back with the step beside as many decoders."""
    plan = bench.plan
    return loader_sweep.measure(bench.data, loader_sweep.Setting(num_workers=workers, batch_size=plan.batch_size),
                                bench.step, steps=plan.steps, warmup_steps=plan.warmup_steps, windows=1)


def settle(bench: Bench, seconds: float) -> None:
    """Let work left in the process finish before timing again: a garbage collection, the
    device's queue drained, then a pause (review 2026-12-04k item 1's hypothesis: the knee's
    profile left work behind that slowed the next timing; not measured)."""
    import gc

    gc.collect()
    if bench.step.device.type == "cuda":
        torch.cuda.synchronize(bench.step.device)
    time.sleep(seconds)


def profiled_plateau(bench: Bench, found: Found, profile: bool = True) -> loader_sweep.Plateau:
    """The plateau with its step timed first, then the knee's profile read into its bound
    (knee_profile). Why this order (review 2026-12-04k item 1): on the H200 the step timed
    right after the profile ran 1.9x slower than the same step minutes before (59.5 against
    32.1 ms), the main thread's CPU doubled; the profile's after-work is the hypothesis, and
    the step no longer runs in its wake. profile=False: no profile (a CPU run of reproduce)."""
    found_plateau = plateau(bench, found)
    return replace(found_plateau, **knee_profile(bench, found)) if profile else found_plateau


KNEE_PROFILED_STEPS = 3  # the knee's steps under the profiler (the plateau's bound reads them)


def knee_profile(bench: Bench, found: Found) -> dict:
    """The knee's steps under the profiler, as plateau()'s keyword arguments: the GPU's idle
    share, the mean launch gap, and on a GPU the kernels and GPU busy time a step. Why here:
    the plateau's bound is read from them, and reproduce.py must read it as the page does
    (review 2026-12-04j item 1: its runs recorded 'the step itself (not profiled here)')."""
    from labkit.measure import timeline

    at_knee = loader_sweep.Setting(num_workers=found.knee.workers, batch_size=bench.plan.batch_size)
    trace = timeline.from_profiler(loader_sweep.profile_steps(bench.data, at_knee, bench.step,
                                                              steps=KNEE_PROFILED_STEPS))
    figures = timeline.summary(trace).figures()
    on_gpu = bench.step.device.type == "cuda"
    busy = figures.get("gpu_busy_share")
    return {"gpu_idle_share": figures["gpu_idle_share"], "launch_gap_us": figures["launch_gap_mean_us"],
            "kernels_per_step": (figures["kernels"] / KNEE_PROFILED_STEPS
                                 if on_gpu and figures.get("kernels") else None),
            "gpu_busy_step_s": (busy * figures["window_us"] * 1e-6 / KNEE_PROFILED_STEPS
                                if on_gpu and busy is not None and figures.get("window_us") else None)}


def knob_settings(workers: int, batch_size: int, on_gpu: bool) -> list[loader_sweep.Setting]:
    """The knob list at `workers` (the knee). The first row is the baseline; the second the
    baseline again (an A/A control, `Setting.control`): what the rule calls when nothing
    changed. Every other row is called against the baseline (reference_rows); a ladder step
    also shows its increment over the row whose changes it extends (step_rows), not called.
    A time budget cuts from the end, so the order is what must be measured first.

    On a GPU the tuned loader, the seed's advice together: pin_memory + the device prefetcher +
    uint8 (review 2026-12-04l item 2). Three rows, KNOB_GPU_ROUNDS rounds of
    KNOB_GPU_WINDOW_QUEUES-long windows, priced by cost_model within the chapter's time. Why
    "+ pin" alone left the GPU table: its effect sits at the table's resolution (the 16:01 H200
    page 1.16x [1.09, 1.24] a gain; the 16:07 reproduce 1.12x not resolved, 1.12x a gain, 1.01x
    not resolved at 4 workers), so its call cannot reproduce at any round count the chapter's
    120 s afford (about 20-25 rounds at its per-round sd); pinning's own effect is shown by
    C23's and C25's copy timings. Not separated there: pinning, the device prefetcher and
    uint8 (the CPU list measures uint8 alone), and both prefetch factors (the CPU list). On a CPU (rounds cost a fraction of a second):
    uint8, prefetch 1 and 4, half and twice the batch (which change the step itself), each
    read against the baseline."""
    base = loader_sweep.Setting(num_workers=workers, batch_size=batch_size)
    out = [base, replace(base, control=True)]
    if on_gpu:
        return [*out, replace(base, pin_memory=True, device_prefetch=True, ship_uint8=True)]
    out.append(replace(base, ship_uint8=True))
    if workers:
        out += [replace(base, prefetch_factor=1), replace(base, prefetch_factor=MAX_PREFETCH)]
    return out + [replace(base, batch_size=max(batch_size // 2, 1)), replace(base, batch_size=batch_size * 2)]


def _changes(setting: loader_sweep.Setting, base: loader_sweep.Setting) -> set[tuple[str, object]]:
    return {(name, value) for name, value in setting.as_dict().items()
            if name not in ("control", "replica") and value != getattr(base, name)}


def reference_rows(settings: Sequence[loader_sweep.Setting]) -> list[int | None]:
    """For each row, the index of the row its call is read against: the baseline (row 0) for
    every row, the A/A, a knob alone and a ladder step alike; None for the baseline itself.
    Why (issue 39, 2026-12-04 13:47 H200 reproduce): read against + pin, the ladder's top row
    was an increment near the table's resolution (1.08-1.21x) and was called a gain in 2 of 3
    runs; against the baseline it is about 1.35x, called a gain 3 of 3. A ladder step's
    increment over the step before is shown beside its call, not called (step_rows)."""
    return [None, *[0] * (len(settings) - 1)] if settings else []


def step_rows(settings: Sequence[loader_sweep.Setting]) -> list[int | None]:
    """For each row, the ladder step it extends, whose increment it shows (not called): the
    earlier non-baseline row with the most of its changes among those whose changes it all
    contains (+pin+devprefetch+uint8 over +pin). None for the baseline, the A/A, a knob alone,
    and a step whose row before was not measured (then only its call against the baseline)."""
    if not settings:
        return []
    base = settings[0]
    changes = [_changes(s, base) for s in settings]
    out: list[int | None] = [None]
    for i in range(1, len(settings)):
        inside = [j for j in range(1, i) if not settings[j].control and changes[j]
                  and changes[j] < changes[i]]
        out.append(max(inside, key=lambda j: (len(changes[j]), j)) if inside else None)
    return out


def fits(bench: Bench, setting: loader_sweep.Setting) -> bool:
    """Whether the setting's batches in flight fit in /dev/shm (shm.choose keeps it as asked)."""
    sample = bench.data_uint8.sample_bytes if setting.ship_uint8 else bench.data.sample_bytes
    return not shm.choose(setting.num_workers, setting.prefetch_factor,
                          setting.batch_size * sample).changed


def knob_rounds(on_gpu: bool) -> int:
    """Rounds of the knob sweep: KNOB_GPU_ROUNDS on a GPU (a round of its three rows costs
    about 6 s on the H200: cost_model prices the chapter with them), KNOB_ROUNDS on a CPU."""
    return KNOB_GPU_ROUNDS if on_gpu else KNOB_ROUNDS


def knob_workers(knee: loader_sweep.Knee) -> int:
    """The worker count the knob table runs at: the arithmetic's (Knee.arithmetic_workers: the
    swept count that batch x sample cost / step asks for, from prepare()'s two timings), not
    the measured knee. Why (review 2026-12-04l item 5): the 16:07 H200 reproduce measured knees
    8, 8 and 4 (within one step, as its rule allows), so its third run measured another
    experiment (at 4 workers the baseline waited 27-30% against 16%); the arithmetic pointed at
    8 in all three runs and on the page. Fixed before the knob sweep, from inputs no knob
    changes, every run measures the same settings. The knee where there is no arithmetic."""
    return knee.workers if knee.arithmetic_workers is None else knee.arithmetic_workers


def knob_sweep(bench: Bench, workers: int,
               on_progress: Callable[[int, int, str], None] | None = None,
               budget_s: float | None = KNOB_SWEEP_BUDGET_S,
               windows: int | None = None,
               settings: Sequence[loader_sweep.Setting] | None = None) -> loader_sweep.Sweep:
    """knob_settings() at `workers` (at least 1 where the sweep had workers), measured; a
    setting whose batches in flight would not fit in /dev/shm is left out (compare the labels
    with knob_settings() to see which), and so are those the time budget cuts (the sweep's
    left_out and budget_note() name them). windows: rounds of the sweep, run in the balanced
    order (loader_sweep.round_order: forward then reversed, in pairs), so a knob that changes
    nothing is as likely above the baseline as below; fewer rounds fit more knobs but widen
    the intervals (t has fewer degrees of freedom); None: knob_rounds(). On a GPU every window
    spans at least KNOB_GPU_WINDOW_QUEUES of the baseline's queues (knob_window_steps). The
    budget never drops a row (loader_sweep.sweep's whole_rounds, review 2026-12-04l item 2):
    every row runs every round; on a slow host fewer pairs of rounds, said in budget_note().
    settings: other rows in the place of knob_settings() (identical_settings: the A/A probe),
    timed exactly as the table's."""
    at = max(workers, 1 if max(bench.worker_counts) >= 1 else 0)
    on_gpu = bench.step.device.type == "cuda"
    windows = knob_rounds(on_gpu) if windows is None else windows
    chosen = knob_settings(at, bench.plan.batch_size, on_gpu) if settings is None else settings
    settings = [s for s in chosen if fits(bench, s)]
    steps = knob_window_steps(settings[0], bench.plan.steps, on_gpu) if settings else bench.plan.steps
    return loader_sweep.sweep(bench.data, settings, bench.step, steps=steps,
                              warmup_steps=bench.plan.warmup_steps, on_progress=on_progress,
                              uint8_dataset=bench.data_uint8, budget_s=budget_s,
                              windows=windows, balanced=True, whole_rounds=True)


def knob_window_steps(baseline: loader_sweep.Setting, steps: int, on_gpu: bool) -> int:
    """Steps of each knob window (a minimum every row of the sweep is timed over): on a GPU
    KNOB_GPU_WINDOW_QUEUES of the baseline's queues (workers x prefetch, rounded up; 16 at 8
    workers, prefetch 2), so the windows are one length for every row and each ratio averages
    over more queue refills; on a CPU the plan's steps (measure() raises them to the queue).
    The datasets prepare() builds hold such a round: a queue of warm-up and two of window at
    any swept count, fewer than the worker sweep's largest setting needs (one and three)."""
    if not on_gpu:
        return steps
    return max(steps, math.ceil(KNOB_GPU_WINDOW_QUEUES * loader_sweep.in_flight_batches(baseline)))


GAIN, LOSS, NO_DIFFERENCE, UNDECIDED = "gain", "loss", "no difference", "undecided"
# An interval that is neither a gain nor a loss nor inside the band [1 / (1 + margin), 1 +
# margin] (0.95-1.05x at the 5% margin) cannot tell: "not resolved", with the interval beside
# it (review 2026-12-03e item 3: "no clear difference" on [0.85, 2.02] read as "does nothing").
NOT_RESOLVED = "not resolved"
# What an older record called a row that was neither a gain nor a loss: re-judged from its
# interval where it holds one (judge_interval), else read as not resolved.
OLD_NO_CLEAR = "no clear difference"


def band(margin: float = KNOB_MARGIN) -> tuple[float, float]:
    """The equivalence band: a knob is "no difference" only when its whole interval lies in it."""
    return 1 / (1 + margin), 1 + margin


def judge_interval(mean: float, low: float, high: float, margin: float = KNOB_MARGIN) -> str:
    """The rule's call from a geometric mean and its interval: a gain when low > 1 and the mean
    > 1 + margin; a loss when high < 1 and the mean < 1 / (1 + margin); no difference when the
    whole interval lies inside the band (band()); else not resolved (too wide to tell)."""
    lo_band, hi_band = band(margin)
    if low > 1 and mean > hi_band:
        return GAIN
    if high < 1 and mean < lo_band:
        return LOSS
    if low >= lo_band and high <= hi_band:
        return NO_DIFFERENCE
    return NOT_RESOLVED


def call_text(decision: str, low: float | None, high: float | None) -> str:
    """The call as a reader sees it: 'not resolved (0.85-2.02x)' names the interval it could
    not tell within; the others as they are."""
    if decision == NOT_RESOLVED and low is not None and high is not None:
        return f"{decision} ({low:.2f}-{high:.2f}x)"
    return decision


def call(ratios: Sequence[float], margin: float = KNOB_MARGIN) -> dict:
    """The rule (knob_rule) on per-round ratios to the baseline: their geometric mean, its
    Student-t 95% interval over the rounds (on the logs, rounds - 1 degrees of freedom), and
    the call (judge_interval): a gain when the interval's low end is above 1 and the mean
    above 1 + margin, a loss when its high end is below 1 and the mean below 1 / (1 + margin),
    no difference when the whole interval lies inside the band (0.95-1.05x at 5%), else not
    resolved. One round has no spread: no interval, undecided.

    Logs, because a ratio's noise is multiplicative (1.25x and 0.8x are the same distance
    from 1x) and the mean of logs is what a geometric mean averages."""
    if not margin >= 0:
        raise ValueError(f"margin must be a fraction >= 0 (0.05 for a 5% band), got {margin!r}")
    values = np.asarray(ratios, dtype=float)
    if values.ndim != 1 or not len(values):
        raise ValueError("call needs the per-round ratios of at least one round")
    if not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError(f"ratios must be finite and > 0, got {list(values)}")
    logs = np.log(values)
    mean = float(np.exp(logs.mean()))
    out = {"round_ratios": [float(v) for v in values], "ratio": mean,
           "round_low": float(values.min()), "round_high": float(values.max()), "margin": margin,
           "level": KNOB_LEVEL, "rounds": len(values)}
    if len(values) < 2:
        return {**out, "ratio_low": None, "ratio_high": None, "decision": UNDECIDED,
                "stated": f"{mean:.2f}x (one round: no interval, no decision)"}
    _, low, high = intervals.geometric_interval(values)
    decision = judge_interval(mean, low, high, margin)
    return {**out, "ratio_low": low, "ratio_high": high, "decision": decision,
            "stated": f"{mean:.2f}x [{low:.2f}, {high:.2f}]: {call_text(decision, low, high)}"}


def knob_ratio(baseline: loader_sweep.Run, run: loader_sweep.Run, margin: float = KNOB_MARGIN) -> dict:
    """A knob against the baseline, round by round: each round's throughput ratio (both were
    measured in that round, so drift that hits both cancels), called by the rule (call,
    knob_rule). 'ratio' is the geometric mean, 'ratio_low' and 'ratio_high' its 95% interval
    (None with one round), 'round_low' and 'round_high' the slowest and fastest round."""
    base, knob = baseline.window_throughputs, run.window_throughputs
    if len(base) != len(knob) or not base:
        raise ValueError(f"{run.setting.label} has {len(knob)} round(s) and the baseline "
                         f"{len(base)}: compare runs of one interleaved sweep")
    return call([k / b for k, b in zip(knob, base, strict=True)], margin)


A_A = "(A/A)"  # the label's end of the A/A control row (the baseline again)


@functools.lru_cache(maxsize=256)
def t_quantile_at(df: int, level: float) -> float:
    """Student t's two-sided `level` multiplier at `df` degrees of freedom (0.95: the
    intervals module's 97.5% quantile), by bisection on the CDF integrated numerically (no
    scipy here; within 1e-3 of the tables)."""
    if not isinstance(df, int) or df < 1 or not 0 < level < 1:
        raise ValueError(f"need df >= 1 and a level in (0, 1), got {df!r}, {level!r}")
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def upper_tail(x: float) -> float:  # P(T > x) for x >= 0: 0.5 less the integral 0..x
        grid = np.linspace(0.0, x, 20001)
        dens = np.exp(log_c - (df + 1) / 2 * np.log1p(grid ** 2 / df))
        return 0.5 - float(np.sum((dens[1:] + dens[:-1]) * np.diff(grid)) / 2)

    want = (1 - level) / 2
    low, high = 0.0, 1.0
    while upper_tail(high) > want:
        high *= 2
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if upper_tail(mid) > want else (low, mid)
    return (low + high) / 2


def control_interval(row: Mapping, rounds: int | None = None) -> tuple[float, float] | None:
    """The A/A row's interval widened to CONTROL_LEVEL: from its round ratios where the row has
    them, else its 95% interval scaled by the two t multipliers (rounds: the row's 'rounds'
    where given). None where neither can be read."""
    values = row.get("round_ratios")
    if values and len(values) >= 2:
        logs = np.log(np.asarray(values, dtype=float))
        half = t_quantile_at(len(logs) - 1, CONTROL_LEVEL) * float(logs.std(ddof=1)) / math.sqrt(len(logs))
        return float(np.exp(logs.mean() - half)), float(np.exp(logs.mean() + half))
    rounds = row.get("rounds") or rounds
    if None in (row.get("ratio"), row.get("ratio_low"), row.get("ratio_high")) or not rounds or rounds < 2:
        return None
    centre = math.log(row["ratio"])
    half = (math.log(row["ratio_high"] / row["ratio_low"]) / 2 * t_quantile_at(int(rounds) - 1, CONTROL_LEVEL)
            / t_quantile_at(int(rounds) - 1, KNOB_LEVEL))
    return math.exp(centre - half), math.exp(centre + half)


def control_decision(row: Mapping, rounds: int | None = None) -> str | None:
    """The A/A control's call on its own rule (CONTROL_LEVEL's interval, the knobs' band):
    a gain or a loss fails the control. Where the interval cannot be widened (no rounds
    recorded), the 95% call, as before: the stricter reading, never a looser one."""
    if row.get("ratio") is None or row.get("ratio_low") is None or row.get("ratio_high") is None:
        return None
    margin = row.get("margin", KNOB_MARGIN)
    wide = control_interval(row, rounds)
    if wide is None:
        return judge_interval(row["ratio"], row["ratio_low"], row["ratio_high"], margin)
    return judge_interval(row["ratio"], *wide, margin)


def control_rule() -> str:
    """The control's rule in one sentence (printed where the knob rule is: the page's fold and
    reproduce)."""
    return (f"The A/A control fails, and no knob call of its run stands, where its own "
            f"{100 * CONTROL_LEVEL:.2f}% interval is called a gain or a loss: {CONTROL_RUNS} A/As a "
            f"re-record (the page and reproduce's runs), so a sound control fails any of them at most "
            f"{100 * (1 - KNOB_LEVEL):.0f}% of the time (nominal); called at 95% alone it reads so "
            f"about 1 run in 20, and its reach still bounds the run's calls.")


def control_reach(table: Sequence[Mapping]) -> float | None:
    """What the A/A control shows in one run, as a factor: its distance from 1 times its 95%
    interval's half-width (0.98x [0.90, 1.07]: x1.11; 1.10x [1.02, 1.18]: x1.18), or None
    without an A/A row with an interval. Review 2026-12-04m item 2: the table's resolution
    was the A/A's half-width alone (+/-9% on the H200 page), which holds only the rounds'
    spread; in the third H200 reproduce run two identical loaders read 1.10x [1.02, 1.18],
    1.10x when the A/A ran before the baseline and 1.09x after it: a run-level difference
    that the per-round interval does not cover (its cause is not measured). Two identical
    loaders then differ by up to this factor, and no knob effect within it can be told from
    theirs. (Review 2026-12-04n item 4: that run-level difference is not shown: across the three
    runs runs_effect read F 2.1, chance 0.16, what rounds this noisy give about one run in six.
    The reach stays each run's resolution, the A/A's own read in that run, not a claim that
    identical loaders differ by run; the control's pass or fail is control_decision's.)"""
    aa = next((r for r in table if str(r.get("label", "")).endswith(A_A)), None)
    if aa is None or None in (aa.get("ratio"), aa.get("ratio_low"), aa.get("ratio_high")):
        return None
    ratio = float(aa["ratio"])
    return max(ratio, 1 / ratio) * float((aa["ratio_high"] / aa["ratio_low"]) ** 0.5)


def controlled(table: Sequence[Mapping]) -> list[dict]:
    """A knob table whose gains and losses clear the A/A's reach in that run (control_reach):
    a gain only where its geometric mean lies above the reach, a loss only where it lies below
    its inverse (the reach takes the place of the 5% band where it is wider: the band says what
    no effect looks like in advance, the A/A what it looked like in this run; the interval must
    still clear 1x, judge_interval). A call within it becomes not resolved, 'within_control'
    naming the reach. The A/A row itself is called by the control's own rule (control_decision,
    review 2026-12-04n item 4; a called A/A fails the control: lesson.control_failed, and no knob
    call of the run stands), its 95% call kept as 'called_at_95' and the widened interval as
    'control_interval' where they differ. A table without an A/A interval is returned as it is."""
    out = [dict(row) for row in table]
    reach = control_reach(out)
    if reach is None:
        return out
    for row in out[1:]:
        if str(row.get("label", "")).endswith(A_A) and row.get("decision") in (GAIN, LOSS):
            wide = control_interval(row)
            own = control_decision(row)
            if wide is not None and own != row["decision"]:
                row.update(called_at_95=row["decision"], decision=own, control_interval=list(wide),
                           stated=f"{row['ratio']:.2f}x [{row['ratio_low']:.2f}, {row['ratio_high']:.2f}]: "
                                  f"{row['decision']} at 95%; at the control's {100 * CONTROL_LEVEL:.2f}% "
                                  f"[{wide[0]:.2f}, {wide[1]:.2f}]: {own}")
    for row in out[1:]:
        if str(row.get("label", "")).endswith(A_A) or row.get("ratio_low") is None:
            continue
        gain_within = row.get("decision") == GAIN and row["ratio"] <= reach
        loss_within = row.get("decision") == LOSS and row["ratio"] >= 1 / reach
        if gain_within or loss_within:
            row.update(decision=NOT_RESOLVED, within_control=reach,
                       stated=f"{row['ratio']:.2f}x [{row['ratio_low']:.2f}, {row['ratio_high']:.2f}]: "
                              f"{NOT_RESOLVED} (within the A/A's x{reach:.2f})")
    return out


def knob_rule(rounds: int, margin: float = KNOB_MARGIN) -> str:
    """The rule that makes the knob table's calls, with its numbers, in one sentence (printed
    above the table: a rule that decides is shown)."""
    if rounds < 2:
        return f"{rounds} round: no spread, so no interval, and no knob is called a gain or a loss."
    return (f"The rule: a knob's ratio is the geometric mean of its {rounds} per-round ratios "
            f"with a 95% interval [low, high] (Student t, {rounds - 1} df: "
            f"{t_quantile(rounds - 1):.2f}); a gain when low > 1x and the mean > {1 + margin:.2f}x, "
            f"a loss when high < 1x and the mean < {1 / (1 + margin):.2f}x, no difference when "
            f"[low, high] lies inside {band(margin)[0]:.2f}-{band(margin)[1]:.2f}x, else not "
            f"resolved. A gain's or a loss's mean must also clear what the A/A shows in that run "
            f"(its distance from 1 times its half-width, or the inverse), else not resolved. A knob that does nothing: called a gain or a loss "
            f"{100 * false_call_chance(rounds):.0f}% of the time by the interval alone (nominal). "
            + control_rule())


def increment(before: loader_sweep.Run, run: loader_sweep.Run) -> dict:
    """A ladder step's increment over the step before, round by round as knob_ratio reads it
    (the geometric mean of the per-round ratios of the two rows and its 95% interval), shown
    and never called: 'over' names the row before. Why not called (issue 39): an increment
    near the table's resolution (~x1.10 at 10 rounds) is called a gain in about half the runs,
    so its call cannot reproduce; the row's call is read against the baseline."""
    return shown_only({**knob_ratio(before, run), "over": before.setting.label})


def shown_only(numbers: Mapping) -> dict:
    """An increment's numbers without a call: the rule's decision and stated sentence dropped,
    'called': False, so nothing downstream reads it as a call."""
    return {**{k: v for k, v in numbers.items() if k not in ("decision", "stated")}, "called": False}


def knob_table(knobs: loader_sweep.Sweep) -> list[dict]:
    """Per knob: samples/s with its window spread, waiting share, the ratio to the first row
    (overall), and the per-round ratios to the baseline ('against': reference_rows) called by
    the rule: their geometric mean, its 95% interval and the decision (knob_ratio). A ladder
    step also carries 'increment': its per-round ratios over the step before (step_rows),
    shown, not called (increment)."""
    first = knobs.runs[0]
    base = first.samples_per_s
    settings = [r.setting for r in knobs.runs]
    refs, steps = reference_rows(settings), step_rows(settings)
    return controlled([{"label": r.setting.label, "samples_per_s": r.samples_per_s,
             "samples_per_s_low": r.samples_per_s_spread[0],
             "samples_per_s_high": r.samples_per_s_spread[1], "wait_share": r.wait_share,
             "compute_median_s": r.compute_median_s,
             "vs_first_row": r.samples_per_s / base if base > 0 else None, "noisy": r.noisy,
             **({"against": knobs.runs[ref].setting.label, **knob_ratio(knobs.runs[ref], r)}
                if ref is not None else {"decision": "baseline"}),
             **({"increment": increment(knobs.runs[step], r)} if step is not None else {})}
            for r, ref, step in zip(knobs.runs, refs, steps, strict=True)])


def rebased(table: Sequence[Mapping]) -> list[dict]:
    """A recorded knob table read by today's rule: every call against the baseline (row 0).
    A row recorded against another row (the ladder before issue 39's fix: the top row against
    + pin) is re-judged from its per-round ratios times its reference row's (itself against
    the baseline, both of one interleaved sweep), and its old reading kept as its
    'increment' (shown, not called). Where the rounds are not recorded it is kept as it was,
    with 'read_against' naming its row ('read against + pin (recorded under the earlier
    rule)'), so a reader never mistakes it for a call against the baseline."""
    if not table:
        return []
    out = [dict(row) for row in table]
    base = out[0].get("label")
    by_label = {row.get("label"): row for row in out}
    for row in out[1:]:
        ref = row.get("against")
        if ref is None or ref == base:
            continue
        before = by_label.get(ref)
        mine, theirs = row.get("round_ratios"), (before or {}).get("round_ratios")
        usable = (before is not None and before.get("against") in (None, base) and mine and theirs
                  and len(mine) == len(theirs))
        if not usable:
            row["read_against"] = ref
            continue
        old = shown_only({k: row[k] for k in ("ratio", "ratio_low", "ratio_high", "round_ratios",
                                              "round_low", "round_high", "rounds", "level", "margin")
                          if k in row})
        row.update(call([a * b for a, b in zip(mine, theirs, strict=True)],
                        row.get("margin", KNOB_MARGIN)))
        row.update({"against": base, "increment": {**old, "over": ref}, "rebased": True})
    return controlled(out)


def false_call_chance(rounds: int, level: float = KNOB_LEVEL) -> float:
    """The nominal chance that the rule (call) calls a knob that does nothing a gain or a
    loss: 1 - level (5% for a 95% interval, 2.5% on each side), where the rounds' log ratios
    are independent, alike in spread and near normal, and centred on 0 (knob and baseline
    exchangeable in a round: the balanced order). The band (the mean beyond 1 +/- margin) only
    removes calls, so the rule with it calls less; simulate_calls measures both. 1.0 below
    two rounds (no interval, no rule)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be a coverage between 0 and 1 (0.95), got {level!r}")
    if rounds < 2:
        return 1.0
    return 1 - level


def simulate_calls(true_ratio: float, sd: float, rounds: int = KNOB_ROUNDS, sweeps: int = 2000,
                   margin: float = KNOB_MARGIN, seed: int = 0) -> dict[str, float]:
    """What the rule calls over `sweeps` simulated sweeps of `rounds` rounds, each round's
    ratio true_ratio x exp(N(0, sd)) (lognormal noise, sd on the log ratio): the share of
    sweeps called each way. An A/A (true_ratio 1) shows the false-call rate; a real knob the
    rule's power at that noise."""
    if not true_ratio > 0 or not sd >= 0 or sweeps < 1 or rounds < 1:
        raise ValueError(f"need true_ratio > 0, sd >= 0, sweeps >= 1, rounds >= 1; got "
                         f"{true_ratio}, {sd}, {sweeps}, {rounds}")
    draws = true_ratio * np.exp(np.random.default_rng(seed).normal(0.0, sd, (sweeps, rounds)))
    counts = {GAIN: 0, LOSS: 0, NO_DIFFERENCE: 0, NOT_RESOLVED: 0, UNDECIDED: 0}
    for ratios in draws:
        counts[call(ratios, margin)["decision"]] += 1
    return {decision: n / sweeps for decision, n in counts.items()}


def control_by_order(table: Sequence[dict], orders: Sequence[Sequence[str]]) -> dict | None:
    """The A/A row's per-round ratios split by whether it ran before or after the baseline in
    that round, with the median of each: an order effect shows as two medians on either side
    of 1 (what the balanced order cancels in the calls). None without an A/A row."""
    if len(table) < 2:
        return None
    base = table[0]["label"]
    control = next((r for r in table[1:] if r["label"].endswith("(A/A)")), None)
    if control is None or "round_ratios" not in control:
        return None
    split: dict[str, list[float]] = {"before": [], "after": []}
    for order, ratio in zip(orders, control["round_ratios"], strict=False):
        if control["label"] in order and base in order:
            first = order.index(control["label"]) < order.index(base)
            split["before" if first else "after"].append(ratio)
    return {**split, **{f"{k}_median": float(np.median(v)) if v else None for k, v in split.items()}}


def identical_settings(workers: int, batch_size: int, copies: int = 4) -> list[loader_sweep.Setting]:
    """`copies` identical loaders as the knob table builds its first two rows: the baseline,
    its A/A copy, and further copies numbered 2, 3, ... (Setting.replica, the label only).
    Why (the 2026-12-04 19:13 H200 reproduce, run 3: the A/A read 1.10x [1.02, 1.18] before
    and after the baseline): with more than two identical rows, a difference between loaders
    that holds over a run's rounds (loader_effect) is told apart from the rounds' noise."""
    if copies < 2:
        raise ValueError(f"an A/A probe needs at least 2 identical loaders, got {copies}")
    base = loader_sweep.Setting(num_workers=workers, batch_size=batch_size)
    return [base, replace(base, control=True),
            *(replace(base, control=True, replica=k) for k in range(2, copies))]


F_SIMULATIONS = 20_000  # draws of the null that give an F statistic its chance (f_chance)


def _loader_f(logs: np.ndarray) -> tuple[float, float]:
    """A two-way table's (rounds x loaders, one value a cell) loaders' F and the residual's sd."""
    rounds, loaders = logs.shape
    resid = logs - logs.mean(axis=1, keepdims=True) - logs.mean(axis=0, keepdims=True) + logs.mean()
    ms_res = float((resid ** 2).sum()) / ((rounds - 1) * (loaders - 1))
    ms_loader = rounds * float(((logs.mean(axis=0) - logs.mean()) ** 2).sum()) / (loaders - 1)
    return (ms_loader / ms_res if ms_res > 0 else math.inf), math.sqrt(ms_res)


def _groups_f(groups: Sequence[Sequence[float]]) -> float:
    """One-way F: the groups' means against the spread within them."""
    values = [np.asarray(g, dtype=float) for g in groups]
    everything = np.concatenate(values)
    within = sum(float(((g - g.mean()) ** 2).sum()) for g in values) / (len(everything) - len(values))
    between = sum(len(g) * (g.mean() - everything.mean()) ** 2 for g in values) / (len(values) - 1)
    return float(between / within) if within > 0 else math.inf


def f_chance(observed: float, draw: Callable[[np.random.Generator], float],
             sims: int = F_SIMULATIONS, seed: int = 0) -> float:
    """The share of `sims` draws of the null (identical loaders, normal noise: `draw` returns
    one F from simulated data shaped as the measured) at or above `observed`: the F test's
    p-value without scipy (seeded, so a record reads the same again)."""
    rng = np.random.default_rng(seed)
    return sum(1 for _ in range(sims) if draw(rng) >= observed) / sims


def runs_effect(groups: Sequence[Sequence[float]]) -> dict | None:
    """Whether the A/A's mean moves from run to run more than its rounds predict: the per-round
    log ratios of each run as one group, a one-way F and its chance under no run-level effect
    (f_chance). The 19:13 H200 reproduce's three runs read 0.95x, 1.01x and 1.10x with per-round
    sds 0.15, 0.13 and 0.07 (log): F 2.1, a chance of about 0.16, so the third run's 1.10x
    is what rounds this noisy give about one run in six, and its interval was narrow because
    its own six rounds happened to spread less. None with fewer than two runs of two rounds."""
    logs = [np.log(np.asarray(g, dtype=float)) for g in groups if len(g) >= 2]
    if len(logs) < 2:
        return None
    f = _groups_f(logs)
    sizes = [len(g) for g in logs]
    within = math.sqrt(sum(float(((g - g.mean()) ** 2).sum()) for g in logs) / (sum(sizes) - len(sizes)))
    return {"f": f, "chance": f_chance(f, lambda rng: _groups_f([rng.normal(size=n) for n in sizes])),
            "means": [float(math.exp(g.mean())) for g in logs], "round_sd": within,
            "run_sd_expected": within / math.sqrt(float(np.mean(sizes))),
            "run_sd": float(np.std([g.mean() for g in logs], ddof=1))}


def runs_effect_text(effect: Mapping | None) -> str:
    """The A/A across runs in one line (runs_effect)."""
    if not effect:
        return ""
    verdict = ("more than its rounds predict: a run-level effect" if effect["chance"] < 0.05 else
               "no more than its rounds predict (no run-level effect shown)")
    return (f"the A/A across runs: {', '.join(f'{m:.2f}x' for m in effect['means'])}; run means spread "
            f"{effect['run_sd']:.3f} (sd of log) against {effect['run_sd_expected']:.3f} from the rounds' "
            f"{effect['round_sd']:.3f}: F {effect['f']:.1f}, chance {effect['chance']:.2f}, {verdict}")


def loader_effect(knobs: loader_sweep.Sweep) -> dict:
    """A sweep of identical loaders (identical_settings) read for what could make one of them
    differ: each round's log throughput less its round's mean (drift cancels) and less each
    loader's mean, then (a) the loaders' means against the rounds' noise (two-way F, its
    chance under identical loaders: f_chance; an A/A 'gain' that holds for the run shows as a
    loader effect), (b) the mean residual by position within the round and (c) by the row run
    just before it (across rounds too: a neighbour's after-effect), and (d) each loader's
    first batch (start-up, outside the timed window) in the first round. Each copy's call
    against the baseline is knob_table's."""
    runs = knobs.runs
    labels = [r.setting.label for r in runs]
    logs = np.log(np.array([r.window_throughputs for r in runs], dtype=float)).T  # rounds x loaders
    rounds, loaders = logs.shape
    if rounds < 2 or loaders < 2:
        raise ValueError(f"loader_effect needs 2 or more rounds of 2 or more loaders, got {rounds} x {loaders}")
    f, res_sd = _loader_f(logs)
    chance = f_chance(f, lambda rng: _loader_f(rng.normal(size=(rounds, loaders)))[0])
    centred = logs - logs.mean(axis=1, keepdims=True)
    resid = centred - centred.mean(axis=0, keepdims=True)
    by_position: dict[int, list[float]] = {}
    by_before: dict[str, list[float]] = {}
    previous = "(start of the sweep)"
    for r, order in enumerate(knobs.orders[:rounds]):
        for position, label in enumerate(order):
            value = float(resid[r, labels.index(label)])
            by_position.setdefault(position, []).append(value)
            by_before.setdefault(previous, []).append(value)
            previous = label
    table = knob_table(knobs)
    return {"labels": labels, "rounds": rounds, "loader_f": f, "loader_chance": chance,
            "residual_sd": res_sd,
            "loader_means": {label: float(math.exp(m)) for label, m in
                             zip(labels, centred.mean(axis=0) - centred.mean(axis=0)[0], strict=True)},
            "by_position": {p: float(math.exp(np.mean(v))) for p, v in sorted(by_position.items())},
            "after": {k: float(math.exp(np.mean(v))) for k, v in by_before.items()},
            "first_batch_s": {r.setting.label: r.first_batch_s for r in runs},
            "calls": {row["label"]: row.get("stated") for row in table[1:]},
            "round_rates": {r.setting.label: r.window_throughputs for r in runs},
            "orders": knobs.orders}


def loader_effect_lines(effect: Mapping) -> list[str]:
    """loader_effect as lines to print."""
    verdict = ("the loaders differ beyond the rounds' noise" if effect["loader_chance"] < 0.05
               else "no difference between the loaders beyond the rounds' noise")
    return [f"{len(effect['labels'])} identical loaders x {effect['rounds']} rounds; residual sd "
            f"(log) {effect['residual_sd']:.3f}; loaders' F {effect['loader_f']:.2f}, chance "
            f"{effect['loader_chance']:.2f}: {verdict}",
            "each copy against the baseline (the table's rule): " + "; ".join(
                f"{k}: {v}" for k, v in effect["calls"].items()),
            "each loader's mean over the baseline's (rounds' drift removed): " + ", ".join(
                f"{k} {v:.3f}x" for k, v in effect["loader_means"].items()),
            "by position in the round (after loader and round): " + ", ".join(
                f"{p + 1}: {v:.3f}x" for p, v in effect["by_position"].items()),
            "by the loader run just before: " + ", ".join(
                f"{k}: {v:.3f}x" for k, v in effect["after"].items()),
            "first batch (start-up, not timed) in round 1: " + ", ".join(
                f"{k} {v * 1e3:.0f} ms" for k, v in effect["first_batch_s"].items())]


def knob_decisions(table: Sequence[dict]) -> dict[str, str]:
    """{label: decision} of a knob_table (the baseline left out): what a reproduce check
    compares across runs."""
    return {row["label"]: row["decision"] for row in table[1:]}


def measure_knee(quick: bool = False, knobs: bool = False,
                 budget_s: float | None = WORKER_SWEEP_BUDGET_S,
                 knob_budget_s: float | None = KNOB_SWEEP_BUDGET_S,
                 knob_windows: int | None = None) -> dict:
    """One fresh measurement of the knee (and, with knobs=True, the knob table at it), as plain
    values: what a reproduce check compares across runs.

    'phases' holds the seconds of every step (preparation, each worker count and knob with
    all its rounds), so a run on another machine shows where its time went; 'budget_note'
    says what a budget cut ('' when nothing)."""
    started = time.perf_counter()
    bench = prepare(quick)
    phases = dict(bench.phases)
    found = worker_sweep(bench, budget_s=budget_s)
    phases.update({f"worker sweep: {label}": t for label, t in found.sweep.seconds.items()})
    out = {"plan": bench.plan.as_dict(), "worker_counts": list(bench.worker_counts),
           "measured_counts": [r.setting.num_workers for r in found.sweep.runs],
           **bench.arithmetic(), "rows": found.sweep.rows(), "knee": found.knee.as_dict(),
           "knee_workers": found.knee.workers,
           "arithmetic_workers": found.knee.arithmetic_workers, "agrees": found.knee.agrees,
           "noise": found.sweep.noise_note(), "rounds": found.sweep.rounds,
           "budget_s": budget_s, "budget_note": found.sweep.budget_note(),
           "knee_testable": found.knee.testable,
           # on a GPU the knee profiled once, so the bound is read as the page reads it
           "plateau": profiled_plateau(bench, found, bench.step.device.type == "cuda").as_dict(),
           "warmup_rule": WARMUP_RULE}
    if knobs:
        knob_result = knob_sweep(bench, knob_workers(found.knee), budget_s=knob_budget_s,
                                 windows=knob_windows)
        out["knob_workers"] = knob_workers(found.knee)  # fixed before the knob sweep (item 5)
        phases.update({f"knob sweep: {label}": t for label, t in knob_result.seconds.items()})
        out["knob_rows"] = knob_result.rows()
        out["knob_table"] = knob_table(knob_result)
        out["knob_decisions"] = knob_decisions(out["knob_table"])
        out["knob_noise"] = knob_result.noise_note()
        out["knob_budget_note"] = knob_result.budget_note()
        out["knob_left_out"] = list(knob_result.left_out)
        out["knob_rounds_asked"] = knob_result.rounds_asked
        out["knob_rounds"] = knob_result.rounds  # the false-call chance: false_call_chance(rounds)
        out["knob_window_steps"] = knob_result.runs[0].window_steps if knob_result.runs else None
        out["knob_rule"] = knob_rule(knob_result.rounds)
        out["knob_orders"] = knob_result.orders
        out["aa_by_order"] = control_by_order(out["knob_table"], knob_result.orders)
        # every row's throughput round by round, the baseline's too: which of two identical
        # loaders moved when their ratio does (the A/A probe's question, at no extra time)
        out["knob_round_rates"] = {r.setting.label: r.window_throughputs for r in knob_result.runs}
    phases["total"] = time.perf_counter() - started
    out["phases"] = phases
    return out


def knees_reproduce(knees: Sequence[int], counts: Sequence[int]) -> bool:
    """Whether every measured knee lies within one step of the sweep of every other."""
    if not knees:
        raise ValueError("knees_reproduce needs the knees of at least one run")
    return all(loader_sweep.steps_apart(counts, a, b) <= 1 for a in knees for b in knees)
