"""The chapter's two sweeps as one experiment: the worker sweep and its knee, then every knob
at the knee. The notebook, benchmarks/gpu_05_loader.py and reproduce.py all run this, so
the number the chapter prints is the number the reproduce check compares.

    from labkit.chapters.ch05_dataloader import knee_experiment
    bench = knee_experiment.prepare()           # dataset, consumer, sample cost, compute time
    found = knee_experiment.worker_sweep(bench) # .sweep, .knee
    knobs = knee_experiment.knob_sweep(bench, found.knee.workers)

Each sweep has a hard time budget (WORKER_SWEEP_BUDGET_S, KNOB_SWEEP_BUDGET_S): a machine
slower than planned gets fewer settings (the dearest last) or fewer rounds, and the sweep says
so (Sweep.budget_note), instead of one slow machine eating a whole batch job. Bench.phases and
measure_knee()['phases'] say where the seconds went.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from labkit.chapters.ch05_dataloader import loader_data, loader_sweep, shm, train_step
from labkit.measure import bench as timing

_log = logging.getLogger(__name__)  # each phase's seconds, at INFO (reproduce.py shows them)
MAX_PREFETCH = 4  # the knob sweep's larger prefetch factor
# Hard wall-time limits (seconds) of the two sweeps. The worker sweep's plan costs about 20 s
# on a 16-core H200 host (about 12 batch decodes of one core per worker count, plus the
# workers' start-up and shutdown, over three rounds; 42 s simulated at batch 128 on 2 cores)
# and about 5 s on a 2-core CPU. The knob sweep runs KNOB_ROUNDS rounds: on the H200 host a
# knob costs 1.2 to 3.3 s a round (results/h200_05: the baseline 1.9, the tuned combination
# 1.4, uint8 1.3, pf1 1.2, pf4 3.3, pin 2.0), so the GPU list's six rows (pf4 left out) take
# about 10 s a round, 58 s for six; the 90 s budget (15 s a round) cuts a row only on a host
# ~50% slower, so every run measures the same knobs and reproduce.py can compare their calls.
# Chapter 05 then takes about 125 s on the H200, and three reproduce runs about 5.5 minutes.
WORKER_SWEEP_BUDGET_S = 45.0
KNOB_SWEEP_BUDGET_S = 90.0
# The knob rule (knob_ratio): a gain only when every round's ratio to the baseline is above
# 1 + KNOB_MARGIN, a loss only when every one is below 1 / (1 + KNOB_MARGIN). A knob that
# changes nothing falls either side of 1 with even odds each round (the balanced order makes
# that so), so it is called at most 2 / 2**rounds of the time (false_call_chance: 3.1% at 6
# rounds); the 5% band lowers that further and keeps a small order effect from deciding.
# A real knob clears it: the H200's tuned combination ran 1.24-1.52x in every round.
KNOB_ROUNDS = 6
KNOB_MARGIN = 0.05


@dataclass
class Bench:
    """What both sweeps need: the plan, the datasets (float32 and uint8), the consumer, and the
    two measured inputs of the arithmetic (one sample's cost, one step's compute).

    compute: the step with its batch already on the device; step_as_swept: the step as the
    sweep runs it, fed a pageable host batch, the copy to the device inside (on a CPU the
    two are one timing). The arithmetic uses the second: it is the step the loader meets."""

    plan: loader_sweep.Plan
    data: loader_data.SyntheticImages
    data_uint8: loader_data.SyntheticImages
    step: train_step.TrainingStep
    sample_cost: timing.Timing
    compute: timing.Timing
    worker_counts: tuple[int, ...]
    phases: dict[str, float] = field(default_factory=dict)  # seconds of each preparation step
    step_as_swept: timing.Timing | None = None
    copy_alone: timing.Timing | None = None  # a GPU run: the batch's pageable copy alone, idle stream

    @property
    def batch_load_s(self) -> float:
        return self.plan.batch_size * self.sample_cost.median_s

    @property
    def step_s(self) -> float:
        """The step as the sweep runs it (host batch in, copy inside), in seconds."""
        return (self.step_as_swept or self.compute).median_s

    def arithmetic(self) -> dict:
        return {"sample_cost_s": self.sample_cost.median_s, "compute_s": self.compute.median_s,
                "step_as_swept_s": self.step_s, "batch_load_s": self.batch_load_s,
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
    as_swept = compute  # on a CPU the host batch is the device batch: one timing
    copy_alone = None
    if step.device.type != "cpu":  # as the sweep runs it: pageable host batch, the copy inside
        # device=: the same harness and clock as `compute`, so the two medians subtract
        as_swept = timing.time(lambda: step(host), rep_ms=600, warmup_ms=200, device=step.device,
                               label=f"{chosen.model} training step, batch {chosen.batch_size}, "
                                     "pageable host batch in (as swept)")
        copy_alone = timing.time(lambda: [t.to(step.device) for t in host], rep_ms=300, warmup_ms=100,
                                 device=step.device, bytes_moved=sum(t.nbytes for t in host),
                                 label=f"the batch's pageable copy alone ({chosen.batch_size} samples)")
        lap("prepare: one step as swept, and its copy alone")
    return Bench(chosen, data, data_uint8, step, sample_cost, compute, tuple(counts), phases,
                 as_swept, copy_alone)


@dataclass
class Found:
    """A worker sweep and the knee read from it."""

    sweep: loader_sweep.Sweep
    knee: loader_sweep.Knee


def worker_sweep(bench: Bench, on_progress: Callable[[int, int, str], None] | None = None,
                 budget_s: float | None = WORKER_SWEEP_BUDGET_S) -> Found:
    """Every worker count of the bench at the plan's batch size (fewest first, so a budget
    cut drops the dearest); the knee from total time, over the counts that were measured."""
    plan = bench.plan
    result = loader_sweep.sweep(bench.data, loader_sweep.grid(sorted(bench.worker_counts),
                                                              plan.batch_size),
                                bench.step, steps=plan.steps, warmup_steps=plan.warmup_steps,
                                on_progress=on_progress, budget_s=budget_s)
    knee = loader_sweep.knee_of(result, cores=plan.cores, batch_size=plan.batch_size,
                                sample_cost_s=bench.sample_cost.median_s,
                                compute_s=bench.step_s)
    return Found(result, knee)


def plateau(bench: Bench, found: Found, gpu_idle_share: float | None = None) -> loader_sweep.Plateau:
    """The worker sweep's plateau against the arithmetic: batch / (step as swept + wait)."""
    copy = bench.copy_alone
    return loader_sweep.plateau_of(found.sweep, found.knee, bench.step_s, bench.compute.median_s,
                                   gpu_idle_share, copy_alone_s=copy.median_s if copy else None,
                                   copy_bytes=copy.bytes_moved if copy else None)


def knob_settings(workers: int, batch_size: int, on_gpu: bool) -> list[loader_sweep.Setting]:
    """Each knob alone at `workers` (the knee), and on a GPU the usual tuned combination.

    The first row is the baseline the others are read against; the second is the baseline
    again (an A/A control, `Setting.control`), read against it like a knob: what the decision
    rule calls when nothing changed. uint8 rows hand out uint8 images (a quarter of the
    bytes) that the step normalises on its device. A time budget cuts from the end, so the
    order is what must be measured first. On a GPU: the tuned combination (pin_memory, the
    device prefetcher and uint8), uint8 alone, prefetch 1 and pin_memory alone: six rows, six
    rounds (KNOB_ROUNDS) within the budget on the H200. Prefetch 4 (issue 39 names both
    prefetch factors) costs 3.3 s a round there, 20 s of each run and 60 s of reproduce.py's
    three: the GPU list leaves it to the CPU list and the recorded tables, so three reproduce
    runs fit the session's device time.
    pin + non_blocking, the prefetcher without uint8 and non_blocking alone (from pageable
    memory it can only block: C25 measures that) are left to the recorded tables; each
    costs about 11 s of six rounds. On a CPU (rounds cost a fraction of a second): uint8,
    prefetch 1 and 4, half and twice the batch (which change the step itself)."""
    base = loader_sweep.Setting(num_workers=workers, batch_size=batch_size)
    out = [base, replace(base, control=True)]
    if on_gpu:
        out.append(replace(base, pin_memory=True, device_prefetch=True, ship_uint8=True))
    out.append(replace(base, ship_uint8=True))
    if workers:
        out.append(replace(base, prefetch_factor=1))
    if on_gpu:
        out.append(replace(base, pin_memory=True))
    if workers and not on_gpu:  # on a GPU the dearest knob (3.3 s a round) is left out: see above
        out.append(replace(base, prefetch_factor=MAX_PREFETCH))
    if not on_gpu:
        out += [replace(base, batch_size=max(batch_size // 2, 1)), replace(base, batch_size=batch_size * 2)]
    return out


def fits(bench: Bench, setting: loader_sweep.Setting) -> bool:
    """Whether the setting's batches in flight fit in /dev/shm (shm.choose keeps it as asked)."""
    sample = bench.data_uint8.sample_bytes if setting.ship_uint8 else bench.data.sample_bytes
    return not shm.choose(setting.num_workers, setting.prefetch_factor,
                          setting.batch_size * sample).changed


def knob_sweep(bench: Bench, workers: int,
               on_progress: Callable[[int, int, str], None] | None = None,
               budget_s: float | None = KNOB_SWEEP_BUDGET_S,
               windows: int = KNOB_ROUNDS) -> loader_sweep.Sweep:
    """knob_settings() at `workers` (at least 1 where the sweep had workers), measured; a
    setting whose batches in flight would not fit in /dev/shm is left out (compare the labels
    with knob_settings() to see which), and so are those the time budget cuts (the sweep's
    left_out and budget_note() name them). windows: rounds of the sweep, run in the balanced
    order (loader_sweep.round_order: forward then reversed, in pairs), so the rule's odds for a
    knob that changes nothing hold; fewer rounds fit more knobs but raise false_call_chance."""
    at = max(workers, 1 if max(bench.worker_counts) >= 1 else 0)
    settings = [s for s in knob_settings(at, bench.plan.batch_size, bench.step.device.type == "cuda")
                if fits(bench, s)]
    return loader_sweep.sweep(bench.data, settings, bench.step, steps=bench.plan.steps,
                              warmup_steps=bench.plan.warmup_steps, on_progress=on_progress,
                              uint8_dataset=bench.data_uint8, budget_s=budget_s,
                              windows=windows, balanced=True)


GAIN, LOSS, NO_DIFFERENCE, UNDECIDED = "gain", "loss", "no clear difference", "undecided"


def knob_ratio(baseline: loader_sweep.Run, run: loader_sweep.Run, margin: float = KNOB_MARGIN) -> dict:
    """A knob against the baseline, round by round: each round's throughput ratio (both were
    measured in that round, so drift that hits both cancels), their median and range, and
    the call of the rule (knob_rule): a gain only when every round is above 1 + margin, a
    loss only when every round is below 1 / (1 + margin), else no clear difference; one round
    has no range and decides nothing."""
    if not margin >= 0:
        raise ValueError(f"margin must be a fraction >= 0 (0.05 for a 5% band), got {margin!r}")
    base, knob = baseline.window_throughputs, run.window_throughputs
    if len(base) != len(knob) or not base:
        raise ValueError(f"{run.setting.label} has {len(knob)} round(s) and the baseline "
                         f"{len(base)}: compare runs of one interleaved sweep")
    ratios = [k / b for k, b in zip(knob, base, strict=True)]
    ratio = float(np.median(ratios))
    low, high = min(ratios), max(ratios)
    if len(ratios) < 2:
        decision, stated = UNDECIDED, f"{ratio:.2f}x (one round: no spread, no decision)"
    else:
        decision = (GAIN if low > 1 + margin else LOSS if high < 1 / (1 + margin)
                    else NO_DIFFERENCE)
        stated = f"{ratio:.2f}x (rounds {low:.2f}-{high:.2f}): {decision}"
    return {"round_ratios": ratios, "ratio": ratio, "ratio_low": low, "ratio_high": high,
            "decision": decision, "stated": stated, "margin": margin}


def knob_rule(rounds: int, margin: float = KNOB_MARGIN) -> str:
    """The rule that makes the knob table's calls, and its false-call chance, in one sentence
    (printed above the table: a rule that decides is shown)."""
    if rounds < 2:
        return f"{rounds} round: no spread, so no knob is called a gain or a loss."
    return (f"The rule: a knob is a gain when all {rounds} rounds' ratios to the baseline are "
            f"above {1 + margin:.2f}x, a loss when all are below {1 / (1 + margin):.2f}x, "
            f"else no clear difference; a knob that does nothing is called at most "
            f"{100 * false_call_chance(rounds):.1f}% of the time (2 / 2^{rounds}).")


def knob_table(knobs: loader_sweep.Sweep) -> list[dict]:
    """Per knob: samples/s with its window spread, waiting share, the ratio to the first row
    (overall), and the per-round ratio with its range and decision (knob_ratio)."""
    first = knobs.runs[0]
    base = first.samples_per_s
    return [{"label": r.setting.label, "samples_per_s": r.samples_per_s,
             "samples_per_s_low": r.samples_per_s_spread[0],
             "samples_per_s_high": r.samples_per_s_spread[1], "wait_share": r.wait_share,
             "vs_first_row": r.samples_per_s / base if base > 0 else None, "noisy": r.noisy,
             **(knob_ratio(first, r) if i else {"decision": "baseline"})}
            for i, r in enumerate(knobs.runs)]


def false_call_chance(rounds: int) -> float:
    """At most the chance that a knob doing nothing is called a gain or a loss by knob_ratio's
    rule: with no margin, every round on one side of 1, where each round falls either side
    with probability 1/2 (independent rounds, knob and baseline exchangeable in a round: the
    balanced order), so 2 * (1/2)**rounds (25% with 3 rounds, 3.1% with 6); the margin only
    removes calls, so this bounds the rule with a margin too. 1.0 below two rounds (no rule)."""
    if rounds < 2:
        return 1.0
    return 2 * 0.5 ** rounds


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


def knob_decisions(table: Sequence[dict]) -> dict[str, str]:
    """{label: decision} of a knob_table (the baseline left out): what a reproduce check
    compares across runs."""
    return {row["label"]: row["decision"] for row in table[1:]}


def measure_knee(quick: bool = False, knobs: bool = False,
                 budget_s: float | None = WORKER_SWEEP_BUDGET_S,
                 knob_budget_s: float | None = KNOB_SWEEP_BUDGET_S,
                 knob_windows: int = KNOB_ROUNDS) -> dict:
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
           "knee_testable": found.knee.testable, "plateau": plateau(bench, found).as_dict()}
    if knobs:
        knob_result = knob_sweep(bench, found.knee.workers, budget_s=knob_budget_s,
                                 windows=knob_windows)
        phases.update({f"knob sweep: {label}": t for label, t in knob_result.seconds.items()})
        out["knob_rows"] = knob_result.rows()
        out["knob_table"] = knob_table(knob_result)
        out["knob_decisions"] = knob_decisions(out["knob_table"])
        out["knob_noise"] = knob_result.noise_note()
        out["knob_budget_note"] = knob_result.budget_note()
        out["knob_rounds"] = knob_result.rounds  # the false-call chance: false_call_chance(rounds)
        out["knob_rule"] = knob_rule(knob_result.rounds)
        out["knob_orders"] = knob_result.orders
        out["aa_by_order"] = control_by_order(out["knob_table"], knob_result.orders)
    phases["total"] = time.perf_counter() - started
    out["phases"] = phases
    return out


def knees_reproduce(knees: Sequence[int], counts: Sequence[int]) -> bool:
    """Whether every measured knee lies within one step of the sweep of every other."""
    if not knees:
        raise ValueError("knees_reproduce needs the knees of at least one run")
    return all(loader_sweep.steps_apart(counts, a, b) <= 1 for a in knees for b in knees)
