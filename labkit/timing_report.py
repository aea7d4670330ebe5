"""What a measurement says: the statistics of timing samples and how they are shown.

`labkit.bench` takes the samples; this module turns them into a `Timing` (median, IQR,
rates, share of this machine's ceiling) or a `Comparison` (ratios to a baseline with their
spread), each with an HTML table for notebooks and a plot of every sample. Nothing here
measures anything, so it can be tested with made-up samples.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

NOISY_IQR_FRACTION = 0.10  # IQR/median above this and the median is not to be trusted to 10%


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
    q25, q50, q75 = np.percentile(samples, [25, 50, 75])
    return Summary(float(q50), float(q75 - q25), float(samples.min()), int(samples.size))


def format_seconds(seconds: float | None) -> str:
    """A duration with a unit a reader can take in at a glance: '12.3 us', '4.56 ms'."""
    if seconds is None or not np.isfinite(seconds):
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


@dataclass(frozen=True)
class Timing:
    """The result of `bench.time`: samples, their statistics and what they mean.

    median_s is the headline; iqr_s its spread; noisy is True when IQR/median > 10%.
    gbps / tflops are set when bytes_moved / flops were given, and pct_of_ceiling when
    this machine's ceilings were already measured (see `labkit.ceilings`).
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

    @property
    def noisy(self) -> bool:
        """True when the spread is over 10% of the median: rerun or quiet the machine."""
        return self.median_s > 0 and self.iqr_s / self.median_s > NOISY_IQR_FRACTION

    @property
    def pct_of_ceiling(self) -> float | None:
        """Percent of the ceiling that binds: the larger of the copy and matmul shares."""
        shares = [p for p in (self.pct_of_copy_ceiling, self.pct_of_matmul_ceiling) if p is not None]
        return max(shares) if shares else None

    def as_dict(self, samples: bool = False) -> dict:
        """The timing as plain JSON-friendly values (for `labkit.results`)."""
        out = {
            "label": self.label, "device": self.device, "mode": self.mode,
            "median_s": self.median_s, "iqr_s": self.iqr_s, "min_s": self.min_s,
            "count": self.count, "noisy": self.noisy, "threads": self.threads,
            "bytes_moved": self.bytes_moved, "flops": self.flops, "gbps": self.gbps,
            "tflops": self.tflops, "pct_of_ceiling": self.pct_of_ceiling,
        }
        if samples:
            out["times_s"] = list(self.times_s)
        return out

    def __str__(self) -> str:
        text = (f"{self.label}: median {format_seconds(self.median_s)} "
                f"(IQR {format_seconds(self.iqr_s)}, min {format_seconds(self.min_s)}, "
                f"n={self.count}, {self.device}, {self.mode})")
        if self.gbps is not None:
            text += f", {self.gbps:.1f} GB/s"
        if self.tflops is not None:
            text += f", {self.tflops:.3g} TFLOP/s"
        if self.pct_of_ceiling is not None:
            text += f", {self.pct_of_ceiling:.0f}% of ceiling"
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
        ]
        if self.gbps is not None:
            rows.append(("bandwidth", f"{self.gbps:.1f} GB/s"
                         + _pct_text(self.pct_of_copy_ceiling, "copy")))
        if self.tflops is not None:
            rows.append(("compute", f"{self.tflops:.3g} TFLOP/s"
                         + _pct_text(self.pct_of_matmul_ceiling, "matmul")))
        return rows

    def _repr_html_(self) -> str:
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                       for k, v in self._rows())
        notes = "".join(f"<div style='color:#a15c00'>&#9888; {html.escape(w)}</div>"
                        for w in self.warnings)
        return (f"<div><b>{html.escape(self.label)}</b><table>{body}</table>{notes}</div>")

    def plot(self, ax=None):  # noqa: ANN001, ANN201 -- matplotlib types stay optional
        """Every sample as a strip (in time order) beside their histogram, median marked.

        Seeing the samples shows what one number hides: a slow first few (warm-up not
        long enough), two clusters (frequency changes), or a long tail (interference).
        """
        import matplotlib.pyplot as plt

        unit, scale = _unit_for(self.median_s)
        samples = np.asarray(self.times_s) / scale
        if ax is None:
            fig, (ax_strip, ax_hist) = plt.subplots(1, 2, figsize=(9, 3),
                                                   gridspec_kw={"width_ratios": [2, 1]})
        else:
            fig, ax_strip, ax_hist = ax.figure, ax, None
        ax_strip.plot(np.arange(samples.size), samples, ".", ms=3 if samples.size > 50 else 8, alpha=0.6)
        ax_strip.axhline(self.median_s / scale, color="C3", label="median")
        ax_strip.set_xlabel("sample (in the order taken)")
        ax_strip.set_ylabel(f"time per call ({unit})")
        ax_strip.set_title(self.label)
        ax_strip.legend(loc="upper right")
        if ax_hist is not None:
            ax_hist.hist(samples, bins=min(40, max(5, samples.size // 5)), orientation="horizontal")
            ax_hist.axhline(self.median_s / scale, color="C3")
            ax_hist.set_xlabel("count")
            ax_hist.sharey(ax_strip)
            fig.tight_layout()
        return fig


@dataclass(frozen=True)
class VariantResult:
    """One variant of a comparison: its pooled timing and its ratio to the baseline."""

    timing: Timing
    ratio: float               # median of this variant / median of the baseline
    ratio_q25: float           # quartiles of the per-round ratios: the ratio's spread
    ratio_q75: float
    round_ratios: tuple[float, ...]


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
        return self.variants[label]

    def table(self) -> list[dict]:
        """One row per variant: label, median, IQR, ratio to baseline and its spread."""
        rows = []
        for label, v in self.variants.items():
            rows.append({
                "variant": label, "median_s": v.timing.median_s, "iqr_s": v.timing.iqr_s,
                "runs": v.timing.count, "ratio": v.ratio,
                "ratio_q25": v.ratio_q25, "ratio_q75": v.ratio_q75,
                "within_noise": label != self.baseline and v.ratio_q25 <= 1.0 <= v.ratio_q75,
            })
        return rows

    def __str__(self) -> str:
        lines = [f"{'variant':<24}{'median':>12}{'IQR':>12}{'ratio':>8}  spread of ratio"]
        for row in self.table():
            lines.append(f"{row['variant']:<24}{format_seconds(row['median_s']):>12}"
                         f"{format_seconds(row['iqr_s']):>12}{row['ratio']:>8.3f}  "
                         f"{row['ratio_q25']:.3f} - {row['ratio_q75']:.3f}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = ("<tr><th>variant</th><th>median</th><th>IQR</th><th>runs</th>"
                f"<th>ratio to {html.escape(self.baseline)}</th><th>ratio spread (IQR over rounds)</th></tr>")
        body = ""
        for row in self.table():
            note = " (within noise)" if row["within_noise"] else ""
            body += (f"<tr><td>{html.escape(row['variant'])}</td>"
                     f"<td>{format_seconds(row['median_s'])}</td>"
                     f"<td>{format_seconds(row['iqr_s'])}</td><td>{row['runs']}</td>"
                     f"<td>{row['ratio']:.3f}</td>"
                     f"<td>{row['ratio_q25']:.3f} &ndash; {row['ratio_q75']:.3f}{note}</td></tr>")
        warnings = "".join(f"<div style='color:#a15c00'>&#9888; {html.escape(v.timing.label)}: "
                           f"{html.escape(w)}</div>"
                           for v in self.variants.values() for w in v.timing.warnings)
        return (f"<div><b>{len(self.variants)} variants, {self.rounds} interleaved rounds</b>"
                f"<table>{head}{body}</table>{warnings}</div>")


def ratio_spread(variant_round_medians: Sequence[float],
                 baseline_round_medians: Sequence[float]) -> tuple[float, float, tuple[float, ...]]:
    """Quartiles of the per-round ratios variant/baseline, and the ratios themselves.

    Taking the ratio inside each round cancels slow drift (thermal, frequency, another
    job) that hits both variants of the same round alike.
    """
    ratios = np.asarray(variant_round_medians, float) / np.asarray(baseline_round_medians, float)
    q25, q75 = np.percentile(ratios, [25, 75])
    return float(q25), float(q75), tuple(float(r) for r in ratios)


class _SilentBar:
    def step(self) -> None:
        pass

    def close(self) -> None:
        pass


class _WidgetBar:
    def __init__(self, total: int) -> None:
        import ipywidgets
        from IPython.display import display

        self.widget = ipywidgets.IntProgress(value=0, min=0, max=total, description="rounds")
        display(self.widget)

    def step(self) -> None:
        self.widget.value += 1

    def close(self) -> None:
        self.widget.bar_style = "success"


def progress_bar(total: int, progress: bool | None, expected_s: float) -> _SilentBar | _WidgetBar:
    """An ipywidgets bar inside a notebook kernel for sweeps over ~2 s; silent elsewhere."""
    if progress is False or (progress is None and expected_s < 2.0):
        return _SilentBar()
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None or not hasattr(shell, "kernel"):
            return _SilentBar()
        return _WidgetBar(total)
    except Exception:  # no IPython or no widgets: measuring matters more than the bar
        return _SilentBar()


def _pct_text(pct: float | None, which: str) -> str:
    if pct is None:
        return f" (% of {which} ceiling: run ceilings.measure() once to see it)"
    return f" = {pct:.0f}% of this machine's {which} ceiling"


def _unit_for(seconds: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "ns", 1e-9
