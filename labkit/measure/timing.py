"""What a measurement says: statistics of timing samples, the `Timing` and `Comparison` results.

`labkit.measure.bench` takes the samples; this module turns them into numbers a reader can trust
(median, IQR, rates, share of this machine's ceiling, page faults per call) and into text
and HTML tables. It measures nothing and imports neither matplotlib nor ipywidgets, so it
can be tested with made-up samples and used where no notebook runs. Plots and progress
bars live in `labkit.show.timing_plots`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from labkit.measure import clocks

NOISY_IQR_FRACTION = 0.10  # IQR/median above this and the median is not to be trusted to 10%
# A CPU timing whose fixed per-call cost (a one-element torch op, measured) is more than this
# share of its median measures call overhead as much as work (labkit.measure.clocks).
OVERHEAD_FRACTION = 0.10
# Faults "dominate" a timing when their estimated cost (faults per call times the cost of one
# fault, measured by labkit.measure.conditions.page_fault_cost_s) is at least this share of the median.
FAULTS_DOMINATE_FRACTION = 0.25
# A share up to this reads "at the ceiling": a ceiling is the best rate of a size sweep, and a
# run at another size, clock or moment can beat it by a few percent without anything wrong.
AT_CEILING_PCT = 105.0
# What can put a timing above that, in the order to check them. Not "a busy machine": a busy
# machine makes timings slower, never faster than the ceiling.
ABOVE_CEILING_CAUSES = {
    "copy": ("the cached ceiling was measured while other work shared the machine (on a shared "
             "CPU, Binder or a workshop host, it then reads low: labkit.measure.ceilings."
             "measure(refresh=True) on a quiet machine measures it again), "
             "the ceiling depends on size and clock (it is the best copy of a size sweep, see "
             "labkit.measure.ceilings; a size it did not try can beat it), the data sat in a cache "
             "(a working set under the last-level cache: time it with mode='cold'), or the byte "
             "count is wrong (count what the kernel really reads and writes)"),
    "matmul": ("the cached ceiling was measured while other work shared the machine (it then "
               "reads low: ceilings.measure(refresh=True) on a quiet machine), "
               "the ceiling depends on size, shape and clock (it is the best square matmul of a "
               "size sweep, at the SM clock it recorded; a GPU at its power cap clocks lower on "
               "large sizes, and another shape can run a faster kernel), the operands sat in a "
               "cache, or the FLOP count is wrong (2 per multiply-add, of the work that really ran)"),
}


@dataclass(frozen=True)
class Summary:
    """Median, interquartile range, min and count of a list of durations in seconds."""

    median_s: float
    iqr_s: float
    min_s: float
    count: int


def summarise(times_s: Sequence[float]) -> Summary:
    """Reduce samples to median (the headline), IQR (the spread), min and count.

    The median, not the mean: one sample hit by a page fault, an interrupt or another
    process can be 10x the rest and drags the mean anywhere, while the median only moves
    if half the samples move. The IQR (75th minus 25th percentile) is the matching
    measure of spread, equally deaf to a few outliers.
    """
    if len(times_s) == 0:
        raise ValueError("no timing samples to summarise: the function was never timed")
    samples = np.asarray(times_s, dtype=np.float64)
    if not np.all(np.isfinite(samples)) or np.any(samples < 0):
        raise ValueError("timing samples must be finite durations >= 0 seconds")
    q25, q50, q75 = np.percentile(samples, [25, 50, 75])
    return Summary(float(q50), float(q75 - q25), float(samples.min()), int(samples.size))


def format_seconds(seconds: float | None) -> str:
    """A duration with a unit a reader can take in at a glance: '12.3 us', '4.56 ms'.

    Rounded to 3 significant figures before the unit is chosen, so 999.6 us reads '1 ms',
    not '1e+03 us' (review 2026-12-03f item 11)."""
    if seconds is None or not np.isfinite(seconds):
        return "n/a"
    seconds = float(f"{seconds:.3g}")
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


# ---------------------------------------------------------------------------------------
# Shares of a ceiling


@dataclass(frozen=True)
class Shares:
    """A timing's rates as shares of the ceilings of the math it ran in, with the reasons.

    math names the matmul ceiling used ('float32', 'tfloat32', 'bfloat16', ...);
    notes explain every share above 100% and every choice a reader could doubt.
    """

    pct_of_copy_ceiling: float | None = None
    pct_of_matmul_ceiling: float | None = None
    math: str | None = None
    pct_of_tf32_ceiling: float | None = None
    notes: tuple[str, ...] = ()


def ceiling_shares(gbps: float | None, tflops: float | None, flops_dtype: str,
                   copy_gbps: float | None, matmul_tflops: Mapping[str, float] | None,
                   tf32_matmul: bool = False, tf32_conv: bool = False,
                   convolution: bool = False) -> Shares:
    """Shares of the copy and matmul ceilings, the matmul one in the math that really ran.

    On a GPU, float32 work may run in TF32 (10-bit mantissa, about 8x the float32 rate on
    an H200): torch.backends.cuda.matmul.allow_tf32 switches it on for matmuls (off by
    default) and torch.backends.cudnn.allow_tf32 for convolutions (on by default). So:
    float32 work with both switches on is compared with the TF32 ceiling; with only the
    convolution switch on, the float32 ceiling is the headline and the TF32 share is given
    beside it, since only the caller knows whether the work was convolutions; the note that says
    to read the TF32 share is added only where the caller says so (`convolution=True`): under a
    float32 matmul it warned about convolutions the timing never ran (review 2026-12-03h item
    11, chapter 00's first timing). A share up to
    AT_CEILING_PCT (105%) reads "at the ceiling"; above it, a note names the candidate causes
    (ABOVE_CEILING_CAUSES).
    """
    notes: list[str] = []
    dtype = str(flops_dtype).replace("torch.", "")
    if dtype in ("tf32", "tensorfloat32"):
        dtype = "tfloat32"
    pct_copy = 100 * gbps / copy_gbps if gbps is not None and copy_gbps else None
    known = dict(matmul_tflops or {})
    math_used = dtype if tflops is not None else None
    pct_matmul = pct_tf32 = None
    tf32_fallback = False
    if tflops is not None and dtype == "float32" and tf32_matmul and tf32_conv:
        math_used = "tfloat32"
    if tflops is not None and math_used is not None:
        rate = known.get(math_used)
        if rate is None and math_used == "tfloat32" and known.get("float32"):
            notes.append("TF32 was on, but no TF32 ceiling is cached for this machine; shown "
                         "against the float32 ceiling, which TF32 work can exceed "
                         "(labkit.measure.ceilings.measure(refresh=True) measures the TF32 one).")
            math_used, rate, tf32_fallback = "float32", known["float32"], True
        if rate:
            pct_matmul = 100 * tflops / rate
        if dtype == "float32" and math_used == "float32" and tf32_conv and known.get("tfloat32"):
            pct_tf32 = 100 * tflops / known["tfloat32"]
        if pct_tf32 is not None and convolution:
            notes.append(f"cuDNN convolutions run in TF32 here (torch.backends.cudnn.allow_tf32) "
                         f"while matmuls run in float32: for convolutions read the TF32 share, "
                         f"{pct_tf32:.0f}% of the TF32 ceiling.")
    for pct, which in ((pct_copy, "copy"), (pct_matmul, f"{math_used} matmul")):
        if pct is not None and 100 < pct <= AT_CEILING_PCT:
            # short: it prints under a timing that lands a little over a sweep's best, which on a
            # shared CPU happens run to run, and a page's word count should not swing with it
            notes.append(f"{pct:.0f}% of this machine's {which} ceiling: at the ceiling (a sweep's "
                         f"best, which one run can beat by up to {AT_CEILING_PCT - 100:.0f}%).")
    if pct_copy is not None and pct_copy > AT_CEILING_PCT:
        notes.append(f"{pct_copy:.0f}% of this machine's copy ceiling, more than the {AT_CEILING_PCT:.0f}% "
                     f"that reads 'at the ceiling': {ABOVE_CEILING_CAUSES['copy']}.")
    if pct_matmul is not None and pct_matmul > AT_CEILING_PCT:
        why = ("this float32 work may have run in TF32 on cuDNN (torch.backends.cudnn.allow_tf32 "
               "is on), which is faster than float32 math"
               if dtype == "float32" and math_used == "float32" and (tf32_conv or tf32_fallback) else
               ABOVE_CEILING_CAUSES["matmul"])
        notes.append(f"{pct_matmul:.0f}% of this machine's {math_used} matmul ceiling, more than "
                     f"the {AT_CEILING_PCT:.0f}% that reads 'at the ceiling': {why}.")
    return Shares(pct_copy, pct_matmul, math_used, pct_tf32, tuple(notes))


def fault_share(faults_per_call: float | None, median_s: float,
                fault_cost_s: float, threads: int | None = None) -> float | None:
    """Share of the median (wall time) that the page faults explain, at most all of it.

    getrusage counts the faults of every thread of the process, and `fault_cost_s` is one
    fault's cost measured on one thread, so faults x cost is CPU time. A timing whose work ran
    on `threads` threads may take them in parallel: their serial cost is spread over those
    threads (the most they can overlap) before it is set against the wall-time median. Without
    that, the 16 threads of an H200 host's eager run were priced serially at 406% of its median
    (review 2026-12-03h item 7)."""
    if faults_per_call is None or median_s <= 0:
        return None
    return min(1.0, faults_per_call * fault_cost_s / max(1, threads or 1) / median_s)


def page_fault_note(faults_per_call: float | None, median_s: float,
                    fault_cost_s: float, threads: int | None = None) -> str | None:
    """A warning when minor page faults explain a large share of the median, else None.

    A CPU timing that faults thousands of pages per call measures the allocator (memory
    returned to the system after each call and faulted in again) as much as the work. With
    several threads the faults' cost is CPU time, and the share of the wall-time median is
    that cost spread over the threads (`fault_share`): the note says both.
    """
    share = fault_share(faults_per_call, median_s, fault_cost_s, threads)
    if share is None or faults_per_call is None or share < FAULTS_DOMINATE_FRACTION:
        return None
    cpu_s, parallel = faults_per_call * fault_cost_s, max(1, threads or 1)
    cost = (f"about {format_seconds(cpu_s)} ({100 * share:.0f}%) of the {format_seconds(median_s)} median"
            if parallel == 1 else
            f"about {format_seconds(cpu_s)} of CPU time; spread over the {parallel} threads, "
            f"{format_seconds(cpu_s / parallel)} ({100 * share:.0f}%) of the {format_seconds(median_s)} "
            "wall-time median")
    return (f"page faults: {faults_per_call:.0f} minor page faults per call, {cost} at "
            f"~{fault_cost_s * 1e6:.1f} us each (measured here, on one thread): this timing partly "
            "measures the allocator returning memory to the system and taking it back. Time it again "
            "inside bench.allocator_kept() (or with keep_allocator_memory=True) to see the work alone.")


# ---------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Timing:
    """The result of `bench.time`: samples, their statistics and what they mean.

    median_s is the headline; iqr_s its spread; noisy is True when IQR/median > 10%.
    gbps / tflops are set when bytes_moved / flops were given, and the shares when this
    machine's ceilings were already measured (see `labkit.measure.ceilings`); `math` names the
    matmul ceiling compared with (TF32 when float32 work ran in TF32). On the CPU,
    minor_faults_per_call counts page faults per timed call, page_fault_share estimates the
    share of the median they explain, and `allocator` says whether malloc kept its freed
    memory ("kept") or ran with its defaults ("default").

    clock says what the median measures: "device" (a GPU call's device time: the events
    bracket the GPU's work alone), "device (kernel records)" (a short call's device time from
    the profiler's kernel records, without the few microseconds events add), "wall" (the host's pace: the window may hold launches, or
    the call synchronises), "cpu" (perf_counter on the CPU). host_s is the host's launch per
    call on a GPU (launch_bound when it exceeds the device time); call_overhead_s what a
    one-element torch op costs on this CPU (overhead_bound when over 10% of the median).
    """

    label: str
    device: str
    mode: str
    times_s: tuple[float, ...]
    median_s: float
    iqr_s: float
    min_s: float
    count: int
    threads: int | None = None
    bytes_moved: int | None = None
    flops: float | None = None
    gbps: float | None = None
    tflops: float | None = None
    pct_of_copy_ceiling: float | None = None
    pct_of_matmul_ceiling: float | None = None
    timer_resolution_s: float | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)
    minor_faults_per_call: float | None = None
    allocator: str | None = None
    math: str | None = None
    pct_of_tf32_ceiling: float | None = None
    page_fault_share: float | None = None
    shared_gpu: bool = False  # other processes used this GPU while it was timed (sharing.py)
    clock: str = "device"
    host_s: float | None = None
    call_overhead_s: float | None = None

    @property
    def launch_bound(self) -> bool:
        """On a GPU: the host takes longer to launch the call than the GPU takes to run it.

        Only a device clock separates the two; on the wall clock the launch is inside the median."""
        return (self.host_s is not None and self.clock in (clocks.DEVICE, clocks.RECORDS)
                and self.host_s > self.median_s)

    @property
    def overhead_share(self) -> float | None:
        """On the CPU: the share of the median a one-element op's cost explains."""
        if self.call_overhead_s is None or self.median_s <= 0:
            return None
        return min(self.call_overhead_s / self.median_s, 1.0)

    @property
    def overhead_bound(self) -> bool:
        """On the CPU: call overhead is over 10% of the median, so it is not the work's cost."""
        share = self.overhead_share
        return share is not None and share > OVERHEAD_FRACTION

    @property
    def clock_text(self) -> str:
        """One line: which clock the median reads, and the host's cost beside it."""
        if self.clock == "cpu":
            extra = (f"; {100 * self.overhead_share:.0f}% of it is call overhead"
                     if self.overhead_bound and self.overhead_share is not None else "")
            return f"CPU clock{extra}"
        host = f"; host launch {format_seconds(self.host_s)} per call" if self.host_s else ""
        bound = " (launch-bound: the host sets a loop's pace)" if self.launch_bound else ""
        what = {"device": "device time (CUDA events)",
                "device (kernel records)": "device time (kernel records)"}.get(
                    self.clock, "wall clock (host's pace)")
        return f"{what}{host}{bound}"

    @property
    def noisy(self) -> bool:
        """True when the spread is over 10% of the median: rerun or quiet the machine."""
        return self.median_s > 0 and self.iqr_s / self.median_s > NOISY_IQR_FRACTION

    @property
    def pct_of_ceiling(self) -> float | None:
        """Percent of the ceiling that binds: the larger of the copy and matmul shares."""
        shares = [p for p in (self.pct_of_copy_ceiling, self.pct_of_matmul_ceiling) if p is not None]
        return max(shares) if shares else None

    @property
    def above_ceiling(self) -> bool:
        """True when a share exceeds AT_CEILING_PCT (105%): a number to explain before it is used.

        Up to 105% reads "at the ceiling" (a ceiling is the best rate over a size sweep; a
        single run can beat it by a few percent)."""
        return self.pct_of_ceiling is not None and self.pct_of_ceiling > AT_CEILING_PCT

    def flag(self, case: str = "") -> dict | None:
        """Why the harness distrusts this timing, as evidence for the trust rule, or None.

        {'timing': label (prefixed 'case: '), 'why': text, 'spread': the factor-minus-one
        by which the timing could be off: IQR/median when noisy, the excess over 100% of
        the ceiling when above one (the larger when both)}. labkit.claims.trust reads it.
        """
        reasons, spread = [], 0.0
        if self.noisy:
            share = self.iqr_s / self.median_s
            reasons.append(f"noisy: IQR {100 * share:.0f}% of the median")
            spread = max(spread, share)
        if self.above_ceiling:
            pct = float(self.pct_of_ceiling)
            reasons.append(f"{pct:.0f}% of a ceiling")
            spread = max(spread, pct / 100 - 1)
        if self.overhead_bound and self.overhead_share is not None:
            share = self.overhead_share
            reasons.append(f"call overhead: {100 * share:.0f}% of the median")
            # As a measure of the work, the timing is off by overhead / (median - overhead).
            spread = max(spread, share / max(1.0 - share, 1e-3))
        if not reasons:
            return None
        return {"timing": f"{case}: {self.label}" if case else self.label,
                "why": ", ".join(reasons), "spread": spread}

    @property
    def faults_dominate(self) -> bool:
        """True when page faults explain a quarter or more of the median (CPU only)."""
        return self.page_fault_share is not None and (
            self.page_fault_share >= FAULTS_DOMINATE_FRACTION)

    def as_dict(self, samples: bool = False) -> dict:
        """The timing as plain JSON-friendly values (for `labkit.core.results`)."""
        out = {
            "label": self.label, "device": self.device, "mode": self.mode,
            "median_s": self.median_s, "iqr_s": self.iqr_s, "min_s": self.min_s,
            "count": self.count, "noisy": self.noisy, "threads": self.threads,
            "bytes_moved": self.bytes_moved, "flops": self.flops, "gbps": self.gbps,
            "tflops": self.tflops, "pct_of_ceiling": self.pct_of_ceiling,
            "math": self.math, "minor_faults_per_call": self.minor_faults_per_call,
            "page_fault_share": self.page_fault_share, "allocator": self.allocator,
            "clock": self.clock, "host_s": self.host_s, "launch_bound": self.launch_bound,
            "call_overhead_s": self.call_overhead_s, "overhead_bound": self.overhead_bound,
        }
        if samples:
            out["times_s"] = list(self.times_s)
        return out

    def __str__(self) -> str:
        text = (f"{self.label}: median {format_seconds(self.median_s)} "
                f"(IQR {format_seconds(self.iqr_s)}, min {format_seconds(self.min_s)}, "
                f"n={self.count}, {self.device}, {self.mode}; {self.clock_text})")
        if self.gbps is not None:
            text += f", {self.gbps:.1f} GB/s"
        if self.tflops is not None:
            text += f", {self.tflops:.3g} TFLOP/s"
        if self.pct_of_ceiling is not None:
            text += f", {self.pct_of_ceiling:.0f}% of ceiling"
        if self.minor_faults_per_call is not None:
            text += f", {self.minor_faults_per_call:.0f} page faults/call"
        return text + "".join(f"\n  warning: {w}" for w in self.warnings)

    def _rows(self) -> list[tuple[str, str]]:
        rows = [
            ("median", format_seconds(self.median_s)),
            ("IQR", f"{format_seconds(self.iqr_s)} ({100 * self.iqr_s / self.median_s:.1f}% of median)"
             if self.median_s > 0 else format_seconds(self.iqr_s)),
            ("min", format_seconds(self.min_s)),
            ("runs", str(self.count)),
            ("device, mode", f"{self.device}, {self.mode}"
             + (f", {self.threads} threads" if self.threads else "")),
            ("clock", self.clock_text),
        ]
        if self.minor_faults_per_call is not None:
            share = (f", about {100 * self.page_fault_share:.0f}% of the time"
                     if self.page_fault_share else "")
            rows.append(("page faults", f"{self.minor_faults_per_call:.0f} minor faults per call"
                         + share + (f" (allocator: {self.allocator})" if self.allocator else "")))
        if self.gbps is not None:
            rows.append(("bandwidth", f"{self.gbps:.1f} GB/s"
                         + _pct_text(self.pct_of_copy_ceiling, "copy")))
        if self.tflops is not None:
            which = f"{self.math} matmul" if self.math else "matmul"
            rows.append(("compute", f"{self.tflops:.3g} TFLOP/s"
                         + _pct_text(self.pct_of_matmul_ceiling, which)))
        return rows

    def _repr_html_(self) -> str:
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                       for k, v in self._rows())
        notes = "".join(f"<div style='color:#a15c00'>&#9888; {html.escape(w)}</div>"
                        for w in self.warnings)
        return (f"<div><b>{html.escape(self.label)}</b><table>{body}</table>{notes}</div>")


@dataclass(frozen=True)
class VariantResult:
    """One variant of a comparison: its pooled timing and its ratio to the baseline."""

    timing: Timing
    ratio: float               # the median of the per-round ratios (inside its own spread)
    ratio_q25: float           # quartiles of the per-round ratios: the ratio's spread
    ratio_q75: float
    round_ratios: tuple[float, ...]
    round_medians_s: tuple[float, ...] = ()  # this variant's median in each round

    def flag(self, case: str = "") -> dict | None:
        """The timing's flag (Timing.flag) with the uncertainty of what the comparison uses.

        A comparison decides on medians taken round by round, not on single samples: a
        noisy timing's samples may scatter by 30% while its per-round medians agree within
        2%. So a noisy flag here carries the relative IQR of the per-round medians (how far
        the number the ratio is built from moves between rounds); an above-ceiling flag
        keeps its excess over the ceiling.
        """
        found = self.timing.flag(case)
        if found is None or not self.timing.noisy or len(self.round_medians_s) < 2:
            return found
        medians = np.asarray(self.round_medians_s, dtype=float)
        centre = float(np.median(medians))
        q25, q75 = np.percentile(medians, [25, 75])
        between_rounds = float((q75 - q25) / centre) if centre > 0 else 1.0
        ceiling_excess = (float(self.timing.pct_of_ceiling) / 100 - 1
                          if self.timing.above_ceiling else 0.0)
        found["spread"] = max(between_rounds, ceiling_excess)
        found["why"] += f"; its per-round medians spread {100 * between_rounds:.1f}%"
        return found


@dataclass(frozen=True)
class Comparison:
    """The result of `bench.compare`: each variant against the baseline.

    ratio > 1 means slower than the baseline. The spread is the IQR of the ratios taken
    round by round: when it straddles 1.0 the difference is within the noise.
    """

    baseline: str
    rounds: int
    variants: dict[str, VariantResult]
    order: tuple[str, ...]  # the labels in the order their blocks ran (ABCABC...)

    def __getitem__(self, label: str) -> VariantResult:
        try:
            return self.variants[label]
        except (KeyError, TypeError):
            raise KeyError(f"no variant {label!r} in this comparison; its labels are "
                           f"{', '.join(map(repr, self.variants))}") from None

    def flags(self, case: str = "") -> list[dict]:
        """The variants the harness flags (noisy, above a ceiling), as trust-rule evidence."""
        found = (v.flag(case) for v in self.variants.values())
        return [f for f in found if f is not None]

    def table(self) -> list[dict]:
        """One row per variant: label, median, IQR, ratio to baseline and its spread."""
        rows = []
        for label, v in self.variants.items():
            rows.append({
                "variant": label, "median_s": v.timing.median_s, "iqr_s": v.timing.iqr_s,
                "runs": v.timing.count, "ratio": v.ratio,
                "ratio_q25": v.ratio_q25, "ratio_q75": v.ratio_q75,
                "within_noise": label != self.baseline and v.ratio_q25 <= 1.0 <= v.ratio_q75,
                "bytes_moved": v.timing.bytes_moved, "gbps": v.timing.gbps,
                "minor_faults_per_call": v.timing.minor_faults_per_call,
                "clock": v.timing.clock, "host_s": v.timing.host_s,
                "launch_bound": v.timing.launch_bound, "overhead_bound": v.timing.overhead_bound,
            })
        return rows

    @property
    def host_column(self) -> bool:
        """Whether the table shows the host's launch beside device time (a GPU comparison)."""
        return any(v.timing.host_s is not None for v in self.variants.values())

    def __str__(self) -> str:
        host = self.host_column
        median = "device" if host else "median"
        lines = [f"{'variant':<24}{median:>12}{'IQR':>12}{'ratio':>8}  spread of ratio"
                 + ("   host launch" if host else "")]
        for row in self.table():
            extra = ""
            if host:
                extra = f"   {format_seconds(row['host_s'])}" + (
                    " (launch-bound)" if row["launch_bound"] else "")
            lines.append(f"{row['variant']:<24}{format_seconds(row['median_s']):>12}"
                         f"{format_seconds(row['iqr_s']):>12}{row['ratio']:>8.3f}  "
                         f"{row['ratio_q25']:.3f} - {row['ratio_q75']:.3f}{extra}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rates = any(row["gbps"] is not None for row in self.table())
        host = self.host_column
        head = ("<tr><th>variant</th><th>" + ("device time" if host else "median")
                + "</th><th>IQR</th><th>runs</th>"
                f"<th>ratio to {html.escape(self.baseline)}</th><th>ratio spread (IQR over rounds)</th>"
                + ("<th>GB/s</th>" if rates else "")
                + ("<th>host launch</th>" if host else "") + "</tr>")
        body = ""
        for row in self.table():
            note = " (within noise)" if row["within_noise"] else ""
            gbps = ("" if not rates else
                    f"<td>{row['gbps']:.1f}</td>" if row["gbps"] is not None else "<td></td>")
            if host:
                gbps += (f"<td>{format_seconds(row['host_s'])}"
                         + (" (launch-bound)" if row["launch_bound"] else "") + "</td>")
            body += (f"<tr><td>{html.escape(row['variant'])}</td>"
                     f"<td>{format_seconds(row['median_s'])}</td>"
                     f"<td>{format_seconds(row['iqr_s'])}</td><td>{row['runs']}</td>"
                     f"<td>{row['ratio']:.3f}</td>"
                     f"<td>{row['ratio_q25']:.3f} &ndash; {row['ratio_q75']:.3f}{note}</td>{gbps}</tr>")
        warnings = "".join(f"<div style='color:#a15c00'>&#9888; {html.escape(v.timing.label)}: "
                           f"{html.escape(w)}</div>"
                           for v in self.variants.values() for w in v.timing.warnings)
        return (f"<div><b>{len(self.variants)} variants, {self.rounds} interleaved rounds</b>"
                f"<table>{head}{body}</table>{warnings}</div>")


def ratio_spread(variant_round_medians: Sequence[float],
                 baseline_round_medians: Sequence[float]) -> tuple[float, float, tuple[float, ...]]:
    """Quartiles of the per-round ratios variant/baseline, and the ratios themselves.

    Taking the ratio inside each round cancels slow drift (thermal, frequency, another
    job) that hits both variants of the same round alike. A round whose baseline median
    is 0 (a function faster than the clock) gives an infinite ratio rather than a crash.
    """
    variant = np.asarray(variant_round_medians, float)
    baseline = np.asarray(baseline_round_medians, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(baseline > 0, variant / np.where(baseline > 0, baseline, 1.0),
                          np.where(variant > 0, math.inf, 1.0))
        q25, q75 = np.percentile(ratios, [25, 75])
    return float(q25), float(q75), tuple(float(r) for r in ratios)


def _pct_text(pct: float | None, which: str) -> str:
    if pct is None:
        return f" (% of {which} ceiling: run ceilings.measure() once to see it)"
    return f" = {pct:.0f}% of this machine's {which} ceiling"
