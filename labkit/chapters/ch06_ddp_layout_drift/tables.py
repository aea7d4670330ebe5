"""Chapter 06's run, quiz answers and tables, built from what the DDP run measured.

The notebook used to import seven modules, format its tables by hand
(`print(f"{name:<22}{size_text(...):>14}...")`), define `size_text`, `time_text` and
`step_cost` inline and write `if on_gpu: ... else: recorded` for the ResNet-50 cost and the
reference run's variants. Those live here as `labkit.show.table.Table`s: the notebook reaches
them as `chapter.lab.tables`, shows one call per result, and what the reference GPU recorded
arrives as the session's `Recorded`, so its table says 'recorded on nvidia-h200, <date>'.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone

import numpy
import torch

from labkit.chapters.ch06_ddp_layout_drift import ddp_launch, layout_contract
from labkit.claims import tables as claims_tables
from labkit.claims import trust
from labkit.claims.core import Claim, Verdict
from labkit.claims.tables import deciding
from labkit.core import results
from labkit.measure import ceiling_store, intervals
from labkit.session import Recorded
from labkit.show import table as tables
from labkit.show.table import Stack

WRONG_MARK = {"WRONG": "#cf222e", "raised": "#9a6700"}
OWN_RATE = "chapter 00"  # run_copy_rate's 'machine' for this machine's own chapter 00 ceiling


def size_text(n: int | None) -> str:
    """Bytes in KiB, as the chapter's traffic is counted ('-' when not observed)."""
    return "-" if n is None else f"{n / 1024:.1f} KiB"


def bytes_text(n: float) -> str:
    """Bytes in the unit that reads best ('0 B', '19.7 KiB', '43.2 MiB'), as the tables' byte columns
    show them, so a sentence and the table beside it use one unit."""
    return str(tables.format_value(n, "B"))


def time_text(row: Mapping) -> str:
    """A variant's step time: median ± IQR in ms, '(noisy)' when the harness flagged it,
    '(launch-bound)' when the harness found the host's launch longer than the device's work in
    most rounds (a device clock only; review 2026-12-04m item 2)."""
    if row["median_step_s"] is None:
        return "-"
    flag = (" (noisy)" if row["timing_noisy"] else "") + (" (launch-bound)" if row.get("launch_bound") else "")
    return f"{row['median_step_s'] * 1e3:.2f} ms ± {row['iqr_step_s'] * 1e3:.2f}{flag}"


CLOCK_WORDS = {"cpu": "CPU clock", "wall": "wall clock", "device": "device time",
               "device (kernel records)": "device time"}


def step_clock(rows: Sequence[Mapping]) -> str:
    """The clock the harness read these rows' step times on, in words ('wall clock'), when they
    share one; '' when none says (an older record) or they differ. Read from the Timing, not
    typed (review 2026-12-04m item 2: the page said "rank 0's wall clock" of every run)."""
    found = {row.get("step_clock") for row in rows if row.get("median_step_s") is not None}
    if len(found) != 1 or None in found:
        return ""
    clock = str(next(iter(found)))
    return CLOCK_WORDS.get(clock, clock)


def clock_fold(rows: Mapping[str, Mapping], backend: str) -> str:
    """What the traffic table's step times are, from the Timing of the converted-first control
    (c): its clock as bench read it (`clock_text`: a step whose all-reduce synchronises with the
    host is read on the wall clock), the host's launch per step where a device clock separates it,
    and whether the rounds were launch-bound; what bounds the step is said only where the timing
    shows it (launch-bound), never asserted (review 2026-12-04m item 2)."""
    c = rows.get("c_convert_first") or {}
    what = c.get("step_clock_text") or "the harness's clock (not recorded)"
    parts = [f"Rank 0's training step (forward, backward, the gradient all-reduce over {backend}"
             f"{' through host memory' if backend == 'gloo' else ''}, the optimizer), median ± IQR over its "
             f"timed steps, read by labkit.measure.bench on: {what}."]
    bound = [name for name, row in rows.items() if row.get("launch_bound")]
    if bound:
        parts.append(f"Launch-bound (the host's launch longer than the device's work in most rounds): "
                     f"{', '.join(bound)}.")
    elif c.get("host_s") is not None and c.get("median_step_s"):
        parts.append(f"(c)'s host launch: {c['host_s'] * 1e3:.2f} ms a step, under its device time: "
                     "not launch-bound.")
    else:
        split = ("The CPU does all of the step, and this timing does not split its compute from the "
                 "all-reduce" if c.get("step_clock") == "cpu" else
                 "This clock does not split the step into the host's part and the device's")
        parts.append(f"{split}, so no part is named as its bound here (the ResNet-50 cell's no_sync "
                     "variant splits a real model's step into compute and all-reduce).")
    parts.append("Compare the variants with each other, not with a GPU's speed.")
    return " ".join(parts)


# A step-time difference inside this band is not called either way, whatever its interval: below
# the 1-2% at which a shared CPU or a power-capped GPU repeats (harness parity on the H200).
NO_CALL_BAND = 0.02


def ratio_interval(drifted_s: Sequence[float], matched_s: Sequence[float]) -> tuple[float, float, float, int] | None:
    """The geometric mean of the per-round ratios drifted/matched and its 95% Student-t interval:
    (ratio, low, high, rounds); None with fewer than two rounds or a round not timed."""
    pairs = [(d, m) for d, m in zip(drifted_s, matched_s, strict=False) if d and m and d > 0 and m > 0]
    if len(pairs) < 2 or len(pairs) != len(drifted_s) or len(pairs) != len(matched_s):
        return None
    ratio, low, high = intervals.geometric_interval([d / m for d, m in pairs])
    return ratio, low, high, len(pairs)


def round_spread(row: Mapping) -> float | None:
    """The relative IQR of a row's per-round medians (IQR / median): by how much the trust rule
    takes a noisy interleaved timing to be off; None with fewer than two rounds."""
    rounds = sorted(float(m) for m in row.get("round_medians_s") or [] if m)
    if len(rounds) < 2:
        return None
    q25, q50, q75 = (float(v) for v in numpy.percentile(rounds, [25, 50, 75]))
    return (q75 - q25) / q50 if q50 > 0 else None


def noise_kind(row: Mapping) -> str:
    """Which noise `step_flags` sized a row's flag by, named where the page prints it: the spread of
    its per-round medians ('round-to-round') or, without rounds, of its steps ('step-to-step').
    Review 2026-12-04k item 4: one ResNet-50 line printed 18% and 22% unnamed, two sizes for one noise."""
    return "round-to-round" if round_spread(row) is not None else "step-to-step"


def step_flags(drifted: Mapping, matched: Mapping) -> list[trust.Flag]:
    """The harness's noisy flags on (e) and (c), each sized as the trust rule sizes a timing of an
    interleaved comparison: the relative IQR of its per-round medians (its IQR/median without
    rounds)."""
    flags = []
    for name, row in (("(e)", drifted), ("(c)", matched)):
        if row.get("timing_noisy") and row.get("median_step_s"):
            share = row["iqr_step_s"] / row["median_step_s"]
            spread = round_spread(row)
            flags.append(trust.Flag(name, f"noisy: IQR {100 * share:.0f}% of the median",
                                    share if spread is None else spread))
    return flags


def no_added_launch(kernels: Kernels) -> str:
    """'the same 2 copy kernels run in (c): the drift adds no launch' (the count's source said).
    Why not kernels x launch gap, as before: the control (c) launches the same copy kernels into
    its buckets (one `mul_out` per gradient, strides matching or not), so only the drift's
    permuted bytes can cost more (review 2026-12-04k, chapter 06 item 1; 2026-12-04j item 7 had
    bounded the drift by its launches)."""
    many = kernels.count != 1
    return (f"the same {'at most ' if kernels.source else ''}{kernels.count} copy kernel{'s' if many else ''}"
            f"{kernels.source} {'run' if many else 'runs'} in (c): the drift adds no launch")


# Where no transposed copy is recorded for the run's device, a permuting copy is taken to run at
# this fraction of the straight copy rate, and every line that uses it says it is an assumption.
ASSUMED_SLOWDOWN = 4.0
STRIDED_CHAPTER, STRIDED_KEY = "02_contiguity_and_hidden_copies", "strided_elementwise"
TRANSPOSED_COPY = ("contiguous() then kernel", "stride-aware")  # chapter 02's pair: their difference is the copy


def transposed_copy_rate(record: object, copy_gbps: float | None, machine: str) -> dict | None:
    """The rate of a permuting copy, read from chapter 02's `strided_elementwise` record: its
    'contiguous() then kernel' minus its 'stride-aware' kernel is `contiguous()` of a transposed
    8192^2 float32 matrix alone, extra bytes over extra time (the H200: 512 MiB in 0.455 ms,
    ~1,180 GB/s). {'gbps', 'machine', 'slowdown': chapter 00's copy rate over it}; None when the
    record lacks either timing or they do not differ. Review 2026-12-04l item 5: the bound's
    permute penalty was a typed 4x beside a measurement the course already held."""
    if not isinstance(record, Mapping):
        return None
    rows = {str(r.get("variant")): r for r in record.get("comparison") or [] if isinstance(r, Mapping)}
    copied, aware = rows.get(TRANSPOSED_COPY[0]), rows.get(TRANSPOSED_COPY[1])
    try:
        extra_s = float(copied["median_s"]) - float(aware["median_s"])  # type: ignore[index]
        extra_bytes = float(copied["bytes_moved"]) - float(aware["bytes_moved"])  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        return None
    if extra_s <= 0 or extra_bytes <= 0:
        return None
    gbps = extra_bytes / extra_s / 1e9
    return {"gbps": gbps, "machine": machine, "slowdown": float(copy_gbps) / gbps if copy_gbps else None}


def permuted_copy_rate(device: str, rate: Mapping | None) -> dict | None:
    """The transposed-copy rate (`transposed_copy_rate`) of the device whose copy rate `rate` is:
    this machine's chapter 02 record when `rate` is this machine's chapter 00 ceiling (then the
    reference's, when this machine is the reference's device: a re-record writes there), else the
    reference machine's record; None where chapter 02 recorded none (then the slowdown is
    ASSUMED_SLOWDOWN, said as an assumption)."""
    if not rate:
        return None
    if rate.get("machine") == OWN_RATE:
        found = transposed_copy_rate(results.mine(STRIDED_CHAPTER, STRIDED_KEY), rate.get("gbps"), "chapter 02")
        reference = recorded_copy_rate(device)
        if found is None and reference is not None:
            found = transposed_copy_rate(results.recorded(STRIDED_CHAPTER, STRIDED_KEY, reference["machine"]),
                                         rate.get("gbps"), reference["machine"])
        return found
    return transposed_copy_rate(results.recorded(STRIDED_CHAPTER, STRIDED_KEY, str(rate["machine"])),
                                rate.get("gbps"), str(rate["machine"]))


def _permuted_time(seconds: float, permuting_bytes: float, permuted: Mapping | None,
                   digits: int = 1) -> tuple[float, str, str]:
    """(the permuting copy's time, how the line names its rate, the worked arithmetic's words):
    at chapter 02's measured transposed-copy rate, or ASSUMED_SLOWDOWN times the straight copy's
    time, said to be an assumption."""
    if permuted:
        slow = 2 * permuting_bytes / (float(permuted["gbps"]) * 1e9)
        under = f", {float(permuted['slowdown']):.1f}x under chapter 00's" if permuted.get("slowdown") else ""
        return (slow, "at a transposed copy's measured rate",
                f"{slow * 1e6:,.{digits}f} us at {float(permuted['gbps']):,.0f} GB/s, chapter 02's transposed copy "
                f"({permuted['machine']}{under})")
    slow = ASSUMED_SLOWDOWN * seconds
    return (slow, f"at an assumed 1/{ASSUMED_SLOWDOWN:.0f} of the copy rate",
            f"{ASSUMED_SLOWDOWN:.0f}x that {slow * 1e6:,.{digits}f} us (an assumption: no transposed copy is "
            "recorded for this device)")


def copy_parts(permuting_bytes: float | None, step_s: float | None, ratio: float, rate: Mapping | None,
               kernels: Kernels | None = None, gap: Mapping | None = None,
               permuted: Mapping | None = None) -> tuple[str, str, bool]:
    """`copy_clause` in its three parts: (the copy's time as the page states it, its worked
    arithmetic ('' when there is no kernel count and the statement already holds it), whether the
    ratio lies outside the no-call band and beyond the copy's share of the step). The copy's time
    is its bytes read and written at chapter 02's transposed-copy rate (`permuted`), else at
    ASSUMED_SLOWDOWN under the straight rate, said as an assumption (review 2026-12-04l item 5: a
    typed 4x). With a kernel count the worked arithmetic says that (c) runs as many copies,
    straight, so the drift adds no launch, and, given chapter 04's launch gap, when each copy is
    launch-sized: shorter than the gap, so its bytes bound nothing. The traffic table folds the
    arithmetic (review 2026-12-04k: the H200 page at 1,525 words)."""
    if not rate or not permuting_bytes or not step_s or step_s <= 0:
        return "", "", False
    seconds = 2 * permuting_bytes / (float(rate["gbps"]) * 1e9)  # straight, at the best copy rate: the least time
    slow, at, how = _permuted_time(seconds, permuting_bytes, permuted)
    share = slow / step_s
    if kernels is None:
        said = (f"; the {bytes_text(permuting_bytes)} permuting copy: {seconds * 1e6:,.1f} us at "
                f"{float(rate['gbps']):,.0f} GB/s (chapter 00, {rate_source(rate)}), {100 * share:.2f}% of (c)'s step {at}")
        worked = ""
    else:
        said = (f"; the {bytes_text(permuting_bytes)} permuting copy: {slow * 1e6:,.1f} us {at}, "
                f"{100 * share:.2f}% of (c)'s step")
        worked = (f"{no_added_launch(kernels)}, only a permuted order; bytes: {seconds * 1e6:,.1f} us at "
                  f"{float(rate['gbps']):,.0f} GB/s (chapter 00, {rate_source(rate)}), {how}" + launch_sized(slow, kernels, gap))
    return said, worked, ratio > 1 + max(NO_CALL_BAND, share)


def launch_sized(seconds: float, kernels: Kernels, gap: Mapping | None) -> str:
    """'; each copy is launch-sized: ...' when the copies' time per kernel is under the launch gap
    chapter 04 recorded (a kernel that short is set by its launch, not its bytes, and (c) pays the
    same launches); '' without a gap or when the copies are longer."""
    if not gap or not kernels.count or seconds / kernels.count >= float(gap["us"]) * 1e-6:
        return ""
    return (f"; each copy is launch-sized: under the {float(gap['us']):,.1f} us launch gap ({gap['source']}), "
            "which (c) pays alike")


NOT_THE_COPY = ": not the copy: noise or another cause"


def copy_clause(permuting_bytes: float | None, step_s: float | None, ratio: float, rate: Mapping | None,
                kernels: Kernels | None = None, gap: Mapping | None = None,
                permuted: Mapping | None = None) -> str:
    """The permuting copy's arithmetic beside a step-time ratio (`copy_parts`), its worked part
    inline in parentheses; where the ratio is outside the no-call band and beyond the copy's share
    of the step, 'not the copy: noise or another cause'. '' without bytes, a step or a rate
    (review 2026-12-04i item 4)."""
    said, worked, beyond = copy_parts(permuting_bytes, step_s, ratio, rate, kernels, gap, permuted)
    return said + (f" ({worked})" if worked else "") + (NOT_THE_COPY if beyond else "")


def step_cost(drifted: Mapping, matched: Mapping, rate: Mapping | None = None, gap: Mapping | None = None,
              permuted: Mapping | None = None) -> str:
    """(e)/(c) step time and what it can say (`step_cost_parts`), the copy's worked arithmetic
    inline in parentheses, for a line that has no fold beside it."""
    line, said, worked = _step_cost(drifted, matched, rate, gap, permuted)
    return line.replace(said, f"{said} ({worked})", 1) if said and worked else line


def step_cost_parts(drifted: Mapping, matched: Mapping, rate: Mapping | None = None,
                    gap: Mapping | None = None, permuted: Mapping | None = None) -> tuple[str, str]:
    """(e)/(c) step time from the rounds in which the two were timed interleaved: the geometric
    mean of the per-round ratios with its 95% interval, and what that can say: slower or faster
    only when the interval excludes 1, the ratio is outside the +-2% no-call band and no noisy
    timing could carry it across 1x (the trust rule, `labkit.claims.TRUST_RULE`: 1.26x with 4 of 5
    timings noisy was called 'slower', review 2026-12-04i item 4). Given a copy rate, the permuting
    copy's arithmetic bound is said beside the ratio (`copy_parts`; with a launch gap, kernels x
    gap where that is larger), its worked arithmetic returned apart for the table to fold; 'not the
    copy: noise or another cause' only where a difference was called or held back: beside 'no cost
    this run can resolve' there is nothing to attribute (the H200 page said both). A record without
    rounds (the two timed one after the other, an older run) gives its two medians' ratio and says
    that it is no measured cost. Returns (line, worked arithmetic or '')."""
    line, _, worked = _step_cost(drifted, matched, rate, gap, permuted)
    return line, worked


def _step_cost(drifted: Mapping, matched: Mapping, rate: Mapping | None,
               gap: Mapping | None, permuted: Mapping | None = None) -> tuple[str, str, str]:
    """(line, the copy's clause as the line holds it, its worked arithmetic)."""
    if drifted["median_step_s"] is None or matched["median_step_s"] is None:
        return "not timed", "", ""
    found = ratio_interval(drifted.get("round_medians_s") or [], matched.get("round_medians_s") or [])
    if found is None:
        ratio = drifted["median_step_s"] / matched["median_step_s"]
        return (f"(e)/(c) step time {ratio:.2f}x from an older record that timed them one after the other, "
                "warnings recorded inside the timed steps: not a measured cost"), "", ""
    ratio, low, high, rounds = found
    held = trust.judge(step_flags(drifted, matched),
                       [trust.Decision("(e)/(c) step time", ratio, [low, high], 1.0)]).held_back()
    unresolved = False
    if held and (low > 1 or high < 1):
        worst = max(step_flags(drifted, matched), key=lambda f: f.uncertainty)
        verdict = (f"not called: a noisy timing ({noise_kind(drifted if worst.timing == '(e)' else matched)} "
                   f"{100 * worst.uncertainty:.0f}%) could carry it across 1x")
    elif low > 1 and ratio > 1 + NO_CALL_BAND:
        verdict = "slower"
    elif high < 1 and ratio < 1 - NO_CALL_BAND:
        verdict = "faster"
    elif low > 1 or high < 1:
        verdict = f"a difference inside the +-{100 * NO_CALL_BAND:.0f}% band, too small to call"
    else:
        verdict, unresolved = NO_COST, True
    said, worked, beyond = copy_parts(drifted.get("permuting_bytes"), matched["median_step_s"], ratio, rate,
                                      permuting_kernels(drifted), gap, permuted)
    return (f"(e)/(c) step time {ratio:.2f}x (95% interval {low:.2f}-{high:.2f}x, {rounds} interleaved "
            f"rounds): {verdict}" + said + (NOT_THE_COPY if beyond and not unresolved else "")), said, worked


def rate_source(rate: Mapping) -> str:
    """Whose chapter 00 record a copy rate is: 'this machine', or the machine it was recorded on
    (review 2026-12-05q browser 05-07 item 11: '(chapter 00)' did not say whose)."""
    return "this machine" if rate.get("machine") == OWN_RATE else str(rate.get("machine"))


def run_copy_rate(device: str) -> dict | None:
    """The copy rate of the device a run's step ran on, {'gbps', 'machine'}: chapter 00's
    ceiling cached on this machine when the run's device is this machine's, else chapter 00's
    record of the reference machine when the device is that one's (`recorded_copy_rate`); None
    when neither measured it (then no bound is claimed)."""
    kind = "cpu" if str(device).lower().startswith("cpu") else "cuda"
    known = ceiling_store.cached(kind)
    if known is not None and known.copy_gbps:
        return {"gbps": float(known.copy_gbps), "machine": OWN_RATE}
    return recorded_copy_rate(str(device))


# ---------------------------------------------------------------------------------------
# Before the run: the parameters and the layout contract, asked of torch


def parameters_table(model: torch.nn.Module, model_cl: torch.nn.Module) -> tables.Table:
    """The parameters whose strides channels_last changes, NCHW beside channels_last; those it
    leaves alone (biases, BatchNorm, the linear head) folded. Deterministic, for nbval."""
    shown = tables.Table("", ["parameter", "shape", "NCHW strides", "channels_last strides"])
    same = []
    for (name, p), (_, q) in zip(model.named_parameters(), model_cl.named_parameters(), strict=True):
        if p.stride() == q.stride():
            same.append(f"{name} {tuple(p.shape)}: {p.stride()}")
            continue
        shown.add(name, str(tuple(p.shape)), str(p.stride()), str(q.stride()))
    if same:
        shown.fold(f"{len(same)} parameters channels_last leaves alone", "\n".join(same))
    return shown


def size_one_table(shapes: Sequence[tuple[int, ...]]) -> tables.Table:
    """For each weight shape, a channels_last gradient handed to a contiguous parameter: the
    strides AccumulateGrad keeps, and whether DDP would warn (asked of torch, deterministic)."""
    shown = tables.Table("", ["weight", "param strides", "kernel's gradient", ".grad kept", "", "DDP warns"])
    for shape in shapes:
        given = torch.empty(shape).to(memory_format=torch.channels_last).stride()
        kept = layout_contract.kept_grad_stride(shape, given)
        shown.add(str(shape), str(torch.empty(shape).stride()), str(given), str(kept),
                  "kept as it came" if kept == given else "restrided to the parameter",
                  layout_contract.ddp_warns(shape, given))
    return shown


# ---------------------------------------------------------------------------------------
# The run


@dataclass
class Run:
    """One launch of the nine variants: the ranks' reports, one summary row per variant, the
    mixed precision used and how long it took."""

    result: dict
    seconds: float

    @property
    def rows(self) -> dict[str, dict]:
        return {row["name"]: row for row in ddp_launch.variant_summary(self.result)}

    @property
    def amp(self) -> str:
        return self.result["ranks"][0][0]["amp_dtype"]

    @property
    def reports(self) -> dict[str, dict]:
        """Rank 0's report of each variant, by name."""
        return {report["variant"]["name"]: report for report in self.result["ranks"][0]}

    def payload(self) -> dict:
        """What is recorded under 'ddp_variants' (the reference run's key and shape)."""
        return {"config": self.result["config"], "backend": self.result["backend"],
                "world_size": self.result["world_size"], "device": self.result["device"],
                "amp_dtype": self.amp, "variants": list(self.rows.values())}

    def __str__(self) -> str:
        r = self.result
        return (f"{r['world_size']} ranks over {r['backend']} on {r['device']}, {len(self.rows)} variants, "
                f"mixed precision: {self.amp}; took {self.seconds:.0f} s")

    __repr__ = __str__


def run_config(on_gpu: bool) -> dict:
    """The nine variants' settings: the seed's fp16 AMP and a 64-wide model on 64x64 images on a
    GPU; a 16-wide model on 32x32 images and 10 timed steps on a CPU (a chapter's time budget);
    the timed steps split over interleaved rounds (5 steps a block on the GPU, 2 on a CPU)."""
    if on_gpu:
        return {"batch": 64, "image": 64, "width": 64, "timed_steps": 30, "timed_rounds": 6, "amp": "fp16"}
    return {"batch": 8, "image": 32, "width": 16, "timed_steps": 10, "timed_rounds": 5}


def run(on_gpu: bool, world_size: int, timeout_s: float = 300.0) -> Run:
    """Launch the variants in `world_size` fresh processes (ddp_launch) and time the whole run."""
    started = time.perf_counter()
    result = ddp_launch.launch(run_config(on_gpu), world_size, timeout_s=timeout_s)
    return Run(result, time.perf_counter() - started)


# ---------------------------------------------------------------------------------------
# The quizzes' answers, computed after the learner predicts

STEP_CHOICES = ("never", "on step 0 only", "on every step", "from step 1 on")
ORDER_CHOICES = ("yes: a permuting copy, like the 3x3 weights", "no: its bytes are already in order")
HOOK_CHOICES = ("yes", "it runs, but the warning stays", "it raises an error in the first backward")
GRAD_CHOICES = ("yes: the warning is only about speed", "no: some gradients hold wrong values")


def _ran(run: Run | None) -> Run:
    if run is None:
        raise ValueError("run the cell that launches the DDP run first: the answer is read off it")
    return run


def warned_steps(run: Run | None) -> str:
    """On which steps variant (a) warned, as one of STEP_CHOICES."""
    steps = _ran(run).result["ranks"][0][0]["warnings_by_step"]
    if sum(steps) == 0:
        return STEP_CHOICES[0]
    if steps[0] and not sum(steps[1:]):
        return STEP_CHOICES[1]
    return STEP_CHOICES[2] if all(steps) else STEP_CHOICES[3]


def step0_parameters(run: Run) -> list[dict]:
    """Variant (a)'s parameters on step 0: strides of each, its gradient and its bucket view."""
    return run.result["ranks"][0][0]["observed"][0]["parameters"]


def one_by_one_shape(run: Run | None) -> tuple[int, ...]:
    """The run's 1x1 convolution weight shape (its first, at step 0), for the quiz to name the
    model that ran, not a smaller one (review 2026-12-03g item 7: the H200's is wider)."""
    one_by_one = next(p for p in step0_parameters(_ran(run)) if p["shape"][2:] == [1, 1])
    return tuple(one_by_one["shape"])


def one_by_one_moves_bytes(run: Run | None) -> str:
    """Whether the 1x1 weight's gradient copy into its bucket permutes bytes, as ORDER_CHOICES."""
    one_by_one = next(p for p in step0_parameters(_ran(run)) if p["shape"][2:] == [1, 1])
    return ORDER_CHOICES[0] if one_by_one["memory_order_differs"] else ORDER_CHOICES[1]


def seed_hook_outcome(run: Run | None) -> str:
    """What the seed's hook as written did (variant b), as one of HOOK_CHOICES."""
    row = _ran(run).rows["b_seed_fix"]
    if row["error"]:
        return HOOK_CHOICES[2]
    return HOOK_CHOICES[0] if row["warnings_step0"] == 0 else HOOK_CHOICES[1]


def drifted_grads(run: Run | None) -> str:
    """Whether variant (a) handed the optimizer a wrong gradient, as one of GRAD_CHOICES."""
    return GRAD_CHOICES[1] if _ran(run).rows["a_drift"]["wrong_grads"] else GRAD_CHOICES[0]


# ---------------------------------------------------------------------------------------
# The run's tables


def runs_of(counts: Sequence[int]) -> str:
    """Per-step counts with repeats written once: [3, 0, 0, 0] -> '3, 0 ×3' ('-' for none; review
    2026-12-05q browser 05-07 item 10: '3 0x3' read as hex)."""
    out: list[str] = []
    for i, n in enumerate(counts):
        if i and n == counts[i - 1]:
            continue
        repeat = next((k for k in range(i, len(counts)) if counts[k] != n), len(counts)) - i
        out.append(f"{n} ×{repeat}" if repeat > 1 else str(n))
    return ", ".join(out) or "-"


REWRAP = "g_convert_then_rewrap"  # converted after wrapping, then wrapped again: the other repair
WAYS = ("c_convert_first", REWRAP, "a_drift", "e_late_drift", "d_bucket_view")  # when and how the model is converted
HELD = {"all zeros": "zeros",  # the worker's diagnosis of a wrong gradient, in a takeaway's words
        "the right values, in the bucket view's memory order, read with the param's strides": "values misplaced"}
PER_PARAM_HOOK = "b3_seed_hook_per_param"  # the seed's body on every parameter's gradient: C14c's nearest form
HOOK_VARIANTS = ("b_seed_fix", "b2_seed_hook_fitted", PER_PARAM_HOOK)  # what the seed's hook did: quiz_hook's answer


def warnings_table(run: Run, leave_out: Sequence[str] = HOOK_VARIANTS) -> tables.Table:
    """Rank 0's warnings per observed training step, per variant, and where a variant stopped.

    The variants in `leave_out` (by default the seed's hook, b and b2) are not shown: whether
    the hook raised is the answer to a quiz further down, whose own table shows them."""
    shown = tables.Table("'Grad strides do not match bucket view strides', per observed step (rank 0; "
                         "0 ×3: 0 on 3 steps in a row)", ["variant", "warnings per step", "stopped"],
                         marks=WRONG_MARK)
    errors, left = [], []
    for name, report in zip(run.rows, run.result["ranks"][0], strict=True):
        if name in leave_out:
            left.append(name)
            continue
        steps, error = report["warnings_by_step"], run.rows[name]["error"]
        shown.add(name, runs_of(steps), f"raised {error.split(':')[0]}" if error else "")
        errors += [f"{name}: {error}"] if error else []
    if errors:
        shown.fold("what was raised", "\n".join(errors))
    if left:
        shown.note(f"{', '.join(left)}: further below")
    return shown


def contract_table(run: Run) -> tables.Table:
    """Variant (a), step 0: each parameter's strides, its gradient's and its bucket view's, whether
    DDP warned and whether the copy into the bucket moves bytes out of order."""
    step0 = step0_parameters(run)
    shown = tables.Table("variant (a), step 0", ["parameter", "param", "grad", "bucket view", "warned",
                                                 "order differs"])
    agreeing = []
    for p in step0:
        strides = [tuple(p["param_stride"]), tuple(p["grad_stride"]), tuple(p["bucket_stride"])]
        if not p["warned"] and strides[0] == strides[1] == strides[2]:
            agreeing.append(f"{p['name']}: {strides[0]}")  # nothing to see: folded
            continue
        shown.add(p["name"], *map(str, strides), "yes" if p["warned"] else "",
                  "yes" if p["memory_order_differs"] else "")
    if agreeing:
        shown.fold(f"{len(agreeing)} parameters whose three strides agree", "\n".join(agreeing))
    shown.fold("where each bucket view's strides come from",
               "\n".join(f"{p['name']}: {p['bucket_stride_source']}" for p in step0))
    warned, free = strides_only(run)
    # the free ones by name only: the "order differs" column and the takeaway count them already
    shown.note(f"{len(warned)} of {len(step0)} parameters warned; " + (
        f"{', '.join(free)} differ{'s' if len(free) == 1 else ''} in strides only, not in memory order: "
        "a straight memcpy" if free else "each warned one's copy permutes memory order"))
    return shown


def strides_only(run: Run) -> tuple[list[dict], list[str]]:
    """(a)'s warned parameters on step 0, and the names of those whose memory order is the same."""
    warned = [p for p in step0_parameters(run) if p["warned"]]
    return warned, [p["name"] for p in warned if not p["memory_order_differs"]]


def hook_table(run: Run) -> tables.Table:
    """The seed's hook as written (b), given PyTorch's signature (b2), its body on every parameter's
    gradient (b3, with how often it ran: a hook that never ran decides nothing), and no hook (a)."""
    shown = tables.Table("", ["variant", "outcome"], marks=WRONG_MARK)
    for name in ("b_seed_fix", "b2_seed_hook_fitted", PER_PARAM_HOOK, "a_drift"):
        row = run.rows.get(name)
        if row is None:  # a run without b3 (an older record)
            continue
        calls = f"; hook calls: {row['hook_calls']}" if name == PER_PARAM_HOOK and row.get("hook_calls") is not None else ""
        shown.add(name, f"raised {row['error']}" if row["error"] else
                  f"ran {row.get('trained_steps', row['steps'])} steps; warnings on step 0: {row['warnings_step0']}, "
                  f"after: {row['warnings_after_step0']}{calls}")
    return shown


AMP_ONLY = ("f_drift_no_amp",)  # variants that ask whether mixed precision matters, nothing else
# ... or whether a hook or a new DDP repairs the drift: the traffic table leaves them out (the gradients table answers)
NOT_A_COST = (*AMP_ONLY, PER_PARAM_HOOK, REWRAP)


def traffic_table(run: Run) -> Stack:
    """Bytes into and out of the buckets per variant (rank 0, steady and step 0), gradient memory
    outside the buckets and step time; then (d)'s steps one by one and what the persistent drift
    (e) costs against converting first (c); on a GPU, each variant's peak memory (folded)."""
    rows = run.rows
    clock = step_clock([row for name, row in rows.items() if name not in NOT_A_COST])
    columns = ["variant", "into buckets", "out of buckets", "permuting", "permuting @0", "grad memory",
               f"step time (median ± IQR{', ' + clock if clock else ''})"]
    shown = tables.Table("bucket traffic per step", columns, units={c: "B" for c in columns[1:6]})
    for name, row in rows.items():
        if name in NOT_A_COST:  # a question about AMP or the hook, not cost: the gradients table answers it
            continue
        shown.add(name, row["into_bucket_bytes"], row["back_to_grad_bytes"], row["permuting_bytes"],
                  row["permuting_bytes_step0"], row["separate_grad_bytes"], time_text(row))
    device = str(run.result["device"])
    rate = run_copy_rate(device)
    line, worked = step_cost_parts(rows["e_late_drift"], rows["c_convert_first"],  # its bytes are e_late_drift's row
                                   rate, recorded_launch_gap(device), permuted_copy_rate(device, rate))
    shown.note(line)
    peaks = {name: row["peak_memory_bytes"] for name, row in rows.items() if row["peak_memory_bytes"]}
    if peaks:  # a GPU run: every variant's peak folded, no range. Review 2026-12-04m item 9: the
        # range's top was the first variant built (the H200: a_drift 524 MiB, the others 458-459 MiB,
        # and (f), float32, 777 MiB left out), not a difference of gradients between the variants
        first = next(iter(peaks))
        shown.fold("peak GPU memory per variant", "\n".join(
            [f"{name}: {bytes_text(peak)}" for name, peak in peaks.items()]
            + [f"each above what the GPU held before it was built; {first}, built first, also holds what "
               "the run allocates once (a hypothesis: not measured apart)"]))
    if worked:
        shown.fold("the copy's bound, worked", worked)
    shown.fold("the step time's clock", clock_fold(rows, str(run.result["backend"])))
    shown.fold("d_bucket_view, step by step", "\n".join(
        f"step {o['step']}: into buckets {size_text(o['traffic']['into_bucket_bytes'])}, out of buckets "
        f"{size_text(o['traffic']['back_to_grad_bytes'])}, grad memory outside the buckets "
        f"{size_text(o['separate_grad_bytes'])}" for o in run.reports["d_bucket_view"]["observed"]))
    return Stack(shown)


RESNET50_OPT_IN = "LABKIT_DDP_RESNET50"  # 1: run the ResNet-50 cost here (on a GPU); unset: show its record


def resnet50_asked() -> bool:
    """Whether the reader asked for the ResNet-50 cost to run here (LABKIT_DDP_RESNET50=1 in the
    kernel's environment). Opt-in, as AOTInductor is in chapter 07: on any GPU it runs two ranks
    of ResNet-50 over gloo through host memory, seconds on the H200 but (unmeasured) minutes on a
    shared T4, so a Colab room would otherwise pay for what is an optional section."""
    raw = os.environ.get(RESNET50_OPT_IN, "").strip()
    if raw in ("", "0"):
        return False
    if raw == "1":
        return True
    raise ValueError(f"{RESNET50_OPT_IN} must be 1 (run the ResNet-50 cost here) or 0, got {raw!r}")


def resnet50_steps(config: Mapping) -> int:
    """Training steps each rank is *asked* for per the config: every variant's observed steps
    (each with a reference backward beside it) and its timed ones. Fewer than it trains: the
    timing harness also runs untimed calls of the step in every block (a first call, an estimate,
    a launch probe, a warm-up), so `trained_per_variant` reads what a record really trained."""
    return len(config["variants"]) * (int(config["observed_steps"]) + int(config["timed_steps"]))


SAME_SCHEDULE = ("observed_steps", "timed_steps", "timed_rounds")  # what sets how many steps a variant trains


def trained_per_variant(recorded_value: object, config: Mapping) -> int | None:
    """How many training steps a record's variants each trained (its rows' `trained_steps`, the
    harness's untimed calls included), when the record ran the same schedule as `config`
    (SAME_SCHEDULE); None otherwise (an older record, or another schedule). Review 2026-12-04m
    item 3: the page counted 3 + 30 asked steps a variant, the record trained 123."""
    if not isinstance(recorded_value, Mapping):
        return None
    ran = recorded_value.get("config")
    rows = recorded_value.get("rows")
    if not isinstance(ran, Mapping) or not isinstance(rows, Mapping) or not rows:
        return None
    if any(ran.get(k) != config.get(k) for k in SAME_SCHEDULE):
        return None
    counts = {int(r["trained_steps"]) for r in rows.values() if isinstance(r, Mapping) and r.get("trained_steps")}
    return max(counts) if counts else None


def resnet50_cost(config: Mapping, world_size: int, timeout_s: float = 540.0) -> dict:
    """(c) against (e) with a ResNet-50 (about 94 MB of float32 gradients; `config` names the
    model and the variants: the chapter adds (c) again, the A/A pair, and (c) inside no_sync(),
    its step without the all-reduce), as recorded under 'ddp_resnet50_cost', with the wall time it
    took (its cost to a reader who asks for it: `resnet50_asked`)."""
    started = time.perf_counter()
    big = ddp_launch.launch(dict(config), world_size, timeout_s=timeout_s)
    rows = {row["name"]: row for row in ddp_launch.variant_summary(big)}
    return {"world_size": big["world_size"], "backend": big["backend"], "device": big["device"],
            "config": big["config"], "rows": rows, "seconds": time.perf_counter() - started,
            "verdict": step_cost(rows["e_late_drift"], rows["c_convert_first"])}


def resnet50_cost_line(config: Mapping, world_size: int, cost: object, on_gpu: bool) -> str:
    """What running the ResNet-50 cost here would take, and how to ask for it: the steps it
    trains and the wall time, both read from the record where it ran the same schedule (its rows'
    `trained_steps`, the harness's untimed calls included; the time scaled by the variants asked
    against those it ran, said as an estimate), else the steps asked, said as such; and why it
    did not run here."""
    value = cost.value if isinstance(cost, Recorded) and cost else None
    took = value.get("seconds") if isinstance(value, Mapping) else None
    per_variant = trained_per_variant(value, config)
    asked = len(config["variants"])
    if per_variant:
        ran = len(value["rows"])  # type: ignore[index]
        steps = (f"{world_size} ranks x {asked * per_variant} ResNet-50 training steps ({asked} variants x "
                 f"{per_variant}, as many as the record trained one: "
                 f"{int(config['observed_steps']) + int(config['timed_steps'])} asked, the rest the timing "
                 "harness's untimed calls)")
        took_text = (f"the record took {took:.0f} s on {cost.machine} for its {ran * per_variant}, so about "  # type: ignore[union-attr]
                     f"{took * asked / ran:.0f} s" if took else "its wall time was not recorded")
    else:
        steps = (f"{world_size} ranks x {resnet50_steps(config)} ResNet-50 steps asked (observed and timed; "
                 "the timing harness adds untimed calls)")
        took_text = (f"a record of another schedule took {took:.0f} s on {cost.machine}" if took  # type: ignore[union-attr]
                     else "its wall time was not recorded")
    why = (f"set {RESNET50_OPT_IN}=1 before starting the kernel to run it on this GPU" if on_gpu
           else "it needs a GPU")
    return f"not run here: {steps}, gloo through host memory; {took_text}; {why}"


def recorded_label(record: Recorded) -> str:
    """A record's label with its time in UTC, read from the entry's `recorded_at`: 'recorded on
    nvidia-h200, 2026-12-04 14:01 UTC'; the session's date-only label where the time is not there.
    Review 2026-12-04m item 1: the ResNet-50 record (14:01) and the page's own variants (19:18)
    carried one label, 'recorded on nvidia-h200, 2026-12-04', on one page."""
    data = results.load(record.machine) or {}
    entry = data.get("chapters", {}).get(record.chapter, {}).get(record.key)
    at = entry.get("recorded_at") if isinstance(entry, Mapping) else None
    try:
        when = datetime.fromisoformat(str(at))
    except ValueError:
        return record.label
    when = (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)
    return f"recorded on {record.machine}, {when:%Y-%m-%d %H:%M} UTC"


TIMING_VARIANT_WORDS = {"c2_convert_first_again": "A/A", "c_compute_only": "no_sync"}


def missing_variants(value: Mapping, asked: Sequence[str], when: str) -> str:
    """'made before this cell's A/A and no_sync variants: neither can print' for a record whose
    config lacks timing variants the cell asks for ('' when it has them all): what sizes the
    timing's resolution (A/A) and splits the step (no_sync) is then absent, and the page says so
    (review 2026-12-04m item 1)."""
    ran = set((value.get("config") or {}).get("variants") or value.get("rows") or ())
    missing = [TIMING_VARIANT_WORDS[n] for n in asked if n in TIMING_VARIANT_WORDS and n not in ran]
    if not missing:
        return ""
    which = " and ".join(missing)
    return (f"this record ({when}) was made before this cell's {which} variant{'s' if len(missing) > 1 else ''}: "
            f"{'neither' if len(missing) > 1 else 'it'} can print")


def resnet50_table(cost: object, not_run: str = "", asked: Sequence[str] = ()) -> object:
    """The ResNet-50 cost, measured here or recorded on the reference GPU (labelled), or what
    is missing; `not_run` says why it did not run here and what running it would take; `asked`, the
    variants the cell asks for, names those a record lacks (`missing_variants`). A record
    whose two step times were taken one after the other (an older run) shows no step-time pair:
    their ratio is no measured cost."""
    if isinstance(cost, Recorded) and not cost:
        return ("The reference GPU run has not recorded the ResNet-50 cost yet (it records it when "
                f"this chapter runs on a GPU with {RESNET50_OPT_IN}=1)." + (f" {not_run}." if not_run else ""))
    value = cost.value if isinstance(cost, Recorded) else cost
    e_big, c_big = value["rows"]["e_late_drift"], value["rows"]["c_convert_first"]  # type: ignore[index]
    shown = tables.Table(f"ResNet-50, {value['world_size']} ranks over {value['backend']} on "  # type: ignore[index]
                         f"{value['device']}, batch {value['config']['batch']} at "  # type: ignore[index]
                         f"{value['config']['image']} px", ["", "(c) converted first", "(e) drifted"],  # type: ignore[index]
                         recorded=recorded_label(cost) if isinstance(cost, Recorded) else "")
    shown.add("permuting copy per step", tables.format_value(c_big["permuting_bytes"], "B"),
              tables.format_value(e_big["permuting_bytes"], "B"))
    shown.add("copied into the buckets", tables.format_value(c_big["into_bucket_bytes"], "B"),
              tables.format_value(e_big["into_bucket_bytes"], "B"))
    if interleaved(e_big, c_big):
        clock = step_clock([c_big, e_big])
        shown.add(f"step time ({clock})" if clock else "step time", time_text(c_big), time_text(e_big))
        shown.note(step_cost(e_big, c_big))  # read from the recorded rows, by today's rule
    else:
        shown.note("step times not shown: this record timed (c) and (e) one after the other, so their "
                   "ratio is no measured cost")
    device = str(value["device"])  # type: ignore[index]
    rate = recorded_copy_rate(device)
    bound = copy_bound(e_big["permuting_bytes"], c_big["median_step_s"], c_big["iqr_step_s"],
                       rate, permuting_kernels(e_big), recorded_launch_gap(device), permuted_copy_rate(device, rate))
    if bound:
        shown.note(bound)
    resolution = a_a_line(value["rows"].get(A_A), c_big)  # type: ignore[index]
    if resolution:
        shown.note(resolution)
    split = step_split(value, c_big, value["rows"].get(COMPUTE_ONLY))  # type: ignore[arg-type,index]
    if split:
        shown.note(split)
    if isinstance(cost, Recorded):
        lacking = missing_variants(value, asked, recorded_label(cost).split(", ", 1)[-1])  # type: ignore[arg-type]
        if lacking:
            shown.note(lacking)
    if not_run:
        shown.note(not_run)
    return shown


def interleaved(drifted: Mapping, matched: Mapping) -> bool:
    """Whether two rows were timed in interleaved rounds (a ratio per round), not one after the other."""
    return ratio_interval(drifted.get("round_medians_s") or [], matched.get("round_medians_s") or []) is not None


def recorded_copy_rate(device: str, machine: str = results.DEFAULT_REFERENCE) -> dict | None:
    """The device-to-device copy rate chapter 00 recorded on the reference machine,
    {'gbps', 'machine'}, when the ResNet-50 cost was measured on that machine's device (its
    name in chapter 00's record); None otherwise: a bound needs the copy rate of the device
    that ran the step."""
    ceilings = results.recorded("00_setup_check", "ceilings", machine)
    if not isinstance(ceilings, Mapping) or not ceilings.get("copy_gbps"):
        return None
    key = str(ceilings.get("device_key", "")).replace("_", " ").lower()
    if not key or key not in device.lower():
        return None
    return {"gbps": float(ceilings["copy_gbps"]), "machine": machine}


@dataclass(frozen=True)
class Kernels:
    """How many permuting copy kernels a step runs, and where the count comes from ('' when
    counted at the dispatcher; otherwise a parenthesis naming the upper bound it stands on)."""

    count: int
    source: str = ""


def permuting_kernels(row: Mapping) -> Kernels | None:
    """The permuting copies of a row's steady step: counted at the dispatcher where the run
    recorded them ('permuting_copies'); in an older record, the last step's stride warnings, one
    per gradient whose strides differ from its bucket view's (an upper bound: a 1x1 kernel's
    strides differ without moving a byte); None where neither is there."""
    if row.get("permuting_copies") is not None:
        return Kernels(int(row["permuting_copies"]))
    if row.get("permuting_bytes") and row.get("warnings_last_step"):
        return Kernels(int(row["warnings_last_step"]), " (the last step's stride warnings)")
    return None


def recorded_launch_gap(device: str, machine: str = results.DEFAULT_REFERENCE) -> dict | None:
    """The eager launch gap chapter 04 recorded on the reference machine (its timeline's median
    gap between eager kernels), {'us', 'source'}, when the run's device is that machine's (the
    same test as `recorded_copy_rate`); None otherwise: read from the record, never typed."""
    if recorded_copy_rate(device, machine) is None:
        return None
    gaps = results.recorded("04_fusion", "timeline_launch_gaps", machine)
    eager = gaps.get("eager") if isinstance(gaps, Mapping) else None
    if not isinstance(eager, Mapping) or not eager.get("launch_gap_median_us"):
        return None
    return {"us": float(eager["launch_gap_median_us"]), "source": f"chapter 04's timeline, {machine}"}


A_A, COMPUTE_ONLY = "c2_convert_first_again", "c_compute_only"  # the worker's timing-only variants


def a_a_line(again: Mapping | None, matched: Mapping) -> str:
    """(c) against itself, timed in the same interleaved rounds: the ratio of two identical
    variants and its 95% interval, the spread this timing cannot tell from a cost (review
    2026-12-04l item 4: the control ran 16% slower than (e) with the same compute, and nothing said
    that the control misbehaved). '' without such a variant or its rounds (an older record)."""
    if not again:
        return ""
    found = ratio_interval(again.get("round_medians_s") or [], matched.get("round_medians_s") or [])
    if found is None:
        return ""
    ratio, low, high, rounds = found
    return (f"A/A, (c) again against (c): {ratio:.2f}x (95% interval {low:.2f}-{high:.2f}x, {rounds} rounds): "
            "a ratio inside that is this timing's noise, not a cost")


def step_split(value: Mapping, matched: Mapping, compute: Mapping | None = None) -> str:
    """One line on what the ResNet-50 step is made of, compute against the backend's all-reduce
    (review 2026-12-04j item 7, 04l item 2). With the compute-only variant (c timed inside DDP's
    no_sync(), in the same rounds) the step is split: its compute alone, as the geometric mean of
    the per-round shares of (c)'s step with its interval, and the rest (the all-reduce over the
    backend and its copies), named as the step's larger part. Without it (an older record) the
    line says the record cannot split it and names neither as the step's bound."""
    step, buckets = matched.get("median_step_s"), matched.get("into_bucket_bytes")
    if not step:
        return ""
    moved = f" of {bytes_text(buckets)}" if buckets else ""
    backend = value.get("backend", "the backend")
    found = ratio_interval((compute or {}).get("round_medians_s") or [], matched.get("round_medians_s") or [])
    if found is None:
        return (f"the record does not split the {step * 1e3:.1f} ms step into compute and "
                f"{backend}'s all-reduce{moved} (through host memory): not measured, so "
                "neither is named as its bound")
    share, low, high, _ = found
    if high < 0.5:
        larger = f": {backend}'s all-reduce sets the step"
    elif low > 0.5:
        larger = ": compute sets the step"
    else:
        larger = ": neither part is the larger beyond doubt"
    return (f"the step without its all-reduce (no_sync(), same rounds): {100 * share:.0f}% of (c)'s "
            f"{step * 1e3:.1f} ms (95% interval {100 * low:.0f}-{100 * high:.0f}%); the rest is "
            f"{backend}'s all-reduce{moved} and its copies{larger}")


def copy_bound(permuting_bytes: float, step_s: float, step_iqr_s: float, rate: Mapping | None,
               kernels: Kernels | None = None, gap: Mapping | None = None,
               permuted: Mapping | None = None) -> str:
    """What the permuting copy costs by arithmetic, against the step and the spread the timing
    resolves. Its bytes read and written at the device's measured copy rate take the least time
    a copy of them can (review 2026-12-04l item 5: this docstring called it an upper bound); a
    permuting copy is slower, at chapter 02's transposed-copy rate where it is recorded
    (`permuted`, `transposed_copy_rate`), else at ASSUMED_SLOWDOWN under it, said as an
    assumption. With a kernel count, the line says the control (c) runs the same copy kernels,
    so the drift adds no launch (review 2026-12-04k, chapter 06 item 1)."""
    if not rate or permuting_bytes <= 0 or step_s <= 0:
        return ""
    seconds = 2 * permuting_bytes / (float(rate["gbps"]) * 1e9)
    slow, at, how = _permuted_time(seconds, permuting_bytes, permuted, digits=0)  # the line's whole us
    spread = (f"far below the step-to-step {100 * step_iqr_s / step_s:.0f}% IQR of that step's time alone, "
              "so this timing cannot resolve it")
    if kernels is not None:
        return (f"by arithmetic: the {bytes_text(permuting_bytes)} permuting copy takes {slow * 1e6:,.0f} us {at}, "
                f"{100 * slow / step_s:.2f}% of the {step_s * 1e3:.1f} ms step ({no_added_launch(kernels)}; "
                f"bytes read and written at the {float(rate['gbps']):,.0f} GB/s copy rate chapter 00 recorded "
                f"({rate_source(rate)}): {seconds * 1e6:,.0f} us, {how}): {spread}")
    return (f"by arithmetic: reading and writing the {bytes_text(permuting_bytes)} permuting copy at the "
            f"{float(rate['gbps']):,.0f} GB/s copy rate chapter 00 recorded ({rate_source(rate)}) takes "
            f"{seconds * 1e6:,.0f} us, {100 * seconds / step_s:.2f}% of the {step_s * 1e3:.1f} ms step, "
            f"and {slow * 1e6:,.0f} us {at} is still {100 * slow / step_s:.2f}%: {spread}")


def reference_variants(reference: object) -> object:
    """The reference machine's variants (recorded, labelled), or None when this run is on GPUs (the
    session measured it here: the tables above are the GPU's). The line that said so took 15 words
    of a GPU page at its 1,500-word limit (review 2026-12-04k item 5, paying for item 3's variant)."""
    if not isinstance(reference, Recorded):
        return None
    if not reference:
        return "The reference GPU run (NCCL) has recorded nothing for this chapter yet."
    shown = tables.Table(f"{reference['world_size']} ranks over {reference['backend']} on "
                         f"{reference['device']}, mixed precision {reference['amp_dtype']}",
                         ["variant", "warnings at step 0", "after", "ranks identical", "step time", "raised"],
                         recorded=recorded_label(reference), marks=WRONG_MARK)
    for row in reference["variants"]:  # type: ignore[union-attr]
        shown.add(row["name"], row["warnings_step0"], row["warnings_after_step0"], row["params_identical"],
                  time_text(row), row["error"] or "")
    return shown


def error_text(row: Mapping) -> str:
    """A row's largest relative gradient error over its observed steps and ranks, beside the
    tolerance it was judged by: '3.2e-07 (1e-04)'; '-' where the run did not record it (an older
    record, or a variant that raised). The margin is the evidence that a 'right' variant has no
    deviation, small or large (review 2026-12-04l item 3: the seed's outcome is a silent
    deviation, which need not be large; a misplaced gradient is off by about 1 or more)."""
    error, tolerance = row.get("largest_grad_error"), row.get("grad_tolerance")
    if error is None:
        return "-"
    return f"{float(error):.1e}" + (f" ({float(tolerance):.0e})" if tolerance else "")


def gradients_table(run: Run) -> tables.Table:
    """Per variant: whether the ranks ended bit-identical, whether each observed step's gradients
    matched the reference (the explicit all_reduce of local gradients), and the largest relative
    error measured, beside the tolerance (`error_text`)."""
    shown = tables.Table("", ["variant", "ranks identical", "gradients", "largest error (tolerance)"],
                         marks=WRONG_MARK)
    for name, row in run.rows.items():
        if row["error"]:
            shown.add(name, "-", f"stopped before any gradient: {row['error'].split(':')[0]}", "-")
            continue
        shown.add(name, row["params_identical"], "right on every observed step" if not row["wrong_grads"] else
                  f"WRONG on steps {row['wrong_grad_steps']} for {', '.join(row['wrong_grads'])}", error_text(row))
    # (a) and (c) ending with different parameters is not shown: without a control (the same
    # layouts, no DDP) kernel choice alone could explain it (the review of issue 39).
    return shown


def findings(run: Run, explanations: Mapping[str, str]) -> tables.Table:
    """What went wrong with each wrong gradient, in words: the worker's diagnosis, explained by
    `explanations` (diagnosis -> sentence; an unknown diagnosis is shown as it is)."""
    shown = tables.Table("", ["what the gradient held", "variants (steps)"])
    by_diagnosis: dict[str, list[str]] = {}
    for name, row in run.rows.items():
        for why in row["wrong_grad_diagnosis"]:
            by_diagnosis.setdefault(why, []).append(f"{name} {row['wrong_grad_steps']}")
    for why, where in by_diagnosis.items():
        shown.add(explanations.get(why, why), ", ".join(where))
    if not shown.rows:
        shown.add("every gradient matched the reference: here the drift costs copies, not correctness",
                  "every variant")
    shown.note(f"torch {run.result['torch']}: another release may differ")
    return shown


# ---------------------------------------------------------------------------------------
# The verdicts


def claim_cards(claim: Callable[[str], object], ids: Sequence[str], marked: str = "") -> Stack:
    """The claims' cards, one under the other (each the claim and what decides it).

    `marked`: one seed sentence that several cards judge, with each card's clause marked
    '[C14a: ...]'. It is shown once, above the cards, and a card whose id is marked in it says
    which clause it judges instead of restating the sentence (review 2026-12-03h item 6: C14a's
    and C14b's statements were nearly the same sentence twice)."""
    cards = []
    for claim_id in ids:
        card = claim(claim_id)
        if marked and f"[{claim_id}:" in marked and isinstance(card, Claim):
            card = replace(card, statement=f"judges the clause marked {claim_id} in the sentence above")
        cards.append(card)
    return Stack(*([f"The seed's sentence (section 4.3): {marked}"] if marked else []), *cards)


def works_and_not(run: Run, ways: Sequence[str] = WAYS) -> tuple[str, str]:
    """The takeaway's 'What works' and 'What does not', from the run's gradient check: among the
    ways to convert (`ways`: before wrapping, after it, after the rebuild, with
    gradient_as_bucket_view), those whose gradients matched the reference on every observed step,
    and the others by what their gradients held, 'silently' when DDP did not warn on a step whose
    gradients were wrong (review 2026-12-03h item 4: (d) was listed as working while it handed
    back zeros with 0 warnings)."""
    rows = run.rows
    works = [name for name in ways if name in rows and not rows[name]["error"] and not rows[name]["wrong_grads"]]
    broken: dict[str, list[str]] = {}
    for name in ways:
        row = rows.get(name)
        if not row or not row["wrong_grads"] or row["error"]:
            continue
        said = "; ".join(HELD.get(why, why) for why in row["wrong_grad_diagnosis"]) or "wrong"
        steps = run.reports[name]["warnings_by_step"]
        if not any(steps[i] for i in row["wrong_grad_steps"] if i < len(steps)):
            said += ", silently"
        broken.setdefault(said, []).append(_letter(name))
    silent_first = sorted(broken.items(), key=lambda item: not item[0].endswith("silently"))
    yes = f"What works: {'/'.join(map(_letter, works)) or 'none of them'}."
    no = "What does not: " + "; ".join(f"{'/'.join(v)} {k}" for k, v in silent_first) + "." if broken else ""
    return yes, no


def _letter(name: str) -> str:
    """A variant's letter as the page names it: 'd_bucket_view' -> '(d)'."""
    return f"({name.split('_')[0]})"


def wrong_for_how_long(run: Run, name: str) -> str:
    """How long a variant's gradients stayed wrong, from the observed steps of the gradient check:
    'on step 0 only, repaired by DDP's rebuild at step 1' (the conversion right after wrapping),
    'on every step from step 2 on, 2 of 4 observed' (after the rebuild: nothing repairs it), other
    step lists as they are, 'on no step' when right. Review 2026-12-04l item 6: 'wrong on (a)'s
    drifted steps' and 'wrong in (e)' did not tell one bad step from a permanent error, which is
    what decides whether a late conversion ruins a run."""
    row = run.rows[name]
    wrong, observed = list(row["wrong_grad_steps"]), int(row["steps"])
    if not wrong:
        return "on no step"
    if wrong == [0] and observed > 1:
        return "on step 0 only, repaired by DDP's rebuild at step 1"
    if wrong == list(range(wrong[0], observed)) and wrong[0] > 0:
        return f"on every step from step {wrong[0]} on, {len(wrong)} of {observed} observed"
    return f"on steps {wrong}"


NO_COST = "no cost this run can resolve"  # _step_cost's verdict when the interval holds 1x
HARM_IS_CORRECTNESS = ": its harm is wrong gradients, not time"


def cost_takeaway(run: Run) -> str:
    """One computed line on what the persistent drift costs: the (e)/(c) step-time ratio with its
    interval and what it can say, and the permuting copy's arithmetic beside it, as the traffic
    table's note says it (`step_cost_parts`; nothing where no copy rate is known). Where the ratio
    resolves no cost and (e)'s gradients were wrong, it says that the drift's harm is correctness.
    Review 2026-12-04l item 6 (04k item 8): no takeaway said that the drift's cost is below what a
    step can resolve; 2026-12-04m item 7: the line cut the bound, the number that says it."""
    rows, device = run.rows, str(run.result["device"])
    rate = run_copy_rate(device)
    line, _ = step_cost_parts(rows["e_late_drift"], rows["c_convert_first"], rate,
                              recorded_launch_gap(device), permuted_copy_rate(device, rate))
    harm = HARM_IS_CORRECTNESS if rows["e_late_drift"]["wrong_grads"] and NO_COST in line else ""
    return f"The persistent drift's cost: {line}{harm}."


def amp_wording(run: Run) -> str:
    """The clause that places AMP, for the end of the takeaway's (a)/(e) sentence: a run without
    mixed precision says that every variant was float32 (no 'AMP off too' on a page whose run had
    AMP off, review 2026-12-03h item 10); a run with it names the float32 drift (f), (a)'s
    conversion with AMP off, and what its gradients were. Review 2026-12-04m item 6: the clause sat
    in (e)'s parenthesis, and (e) never ran without AMP."""
    if run.amp == "off":
        return "; all in float32, no AMP"
    f = run.rows.get("f_drift_no_amp")
    if not f or f["error"]:
        return f" (with {run.amp} AMP)"
    return "; (f), (a) without AMP, had " + ("wrong gradients too" if f["wrong_grads"] else "right gradients")


def verdicts(card: object, nearest: Verdict) -> Stack:
    """The chapter's verdict card, and under it C14c judged again on the hook's nearest working
    form (its deciding numbers shown, its whole reason folded; it is not kept as the chapter's
    C14c, whose form is the hook as written). The card's form, the same for every claim of one
    run, is said once (`one_form`), its deciding numbers cut shorter (`SHORT_NUMBERS`)."""
    shown = card.card() if hasattr(card, "card") else card
    again = tables.Table("", ["judged again", "on", "this machine"],
                         [[nearest.claim_id, "the hook's nearest working form", nearest.label]],
                         marks={"refuted": "#cf222e", "confirmed": "#1a7f37", "depends": "#9a6700"})
    again.fold("form judged and deciding numbers", f"{nearest.form}\n\n{deciding(nearest.reason)}\n\n"
                                                   f"whole reason: {nearest.reason}")
    return Stack(one_form(shown) if isinstance(shown, tables.Table) else shown, again)


FOLDED_REST = claims_tables.CUT_MARK  # labkit.claims.tables.deciding's mark of a cut reason
SHORT_NUMBERS = 150  # characters of a reason the card shows (the shared card's 220 less the form's room)


def shorter(text: str, limit: int = SHORT_NUMBERS) -> str:
    """A reason the shared card cut (it ends in FOLDED_REST) cut again at a word boundary
    within `limit` characters; any other text as it is. The whole reason stays folded."""
    if not text.endswith(FOLDED_REST):
        return text
    head = text[:-len(FOLDED_REST)]
    return text if len(head) <= limit else head[:limit].rsplit(" ", 1)[0].rstrip(",;:") + FOLDED_REST


def one_form(card: tables.Table) -> tables.Table:
    """The verdict card with its 'form judged' column said once, as the card's first note, when
    every claim was judged on the same form (chapter 06 judges C14a-c on one run: the H200 page
    printed 'analogue: gloo, 2 processes on NVIDIA H200, fp16 + GradScaler' three times, 29 of
    the page's 1,525 words with its heading, review 2026-12-04k), and each deciding number cut by `shorter`. A
    card whose forms differ keeps its column."""
    if "form judged" not in card.columns:
        return card
    forms = set(card.column("form judged"))
    if len(forms) != 1 or not next(iter(forms)):
        return card
    keep = [i for i, c in enumerate(card.columns) if c != "form judged"]
    columns = [card.columns[i] for i in keep]
    rows = [[shorter(v) if isinstance(v, str) else v for v in (row[i] for i in keep)] for row in card.rows]
    return tables.Table(card.title, columns, rows, {c: u for c, u in card.units.items() if c in columns},
                        [f"form judged, every claim: {next(iter(forms))}", *card.notes], list(card.folded),
                        card.recorded, card.marks)
