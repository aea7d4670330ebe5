"""The Student-t interval on per-round ratios: the geometric mean of ratios measured in
interleaved rounds and its two-sided 95% interval, on their logs.

Why here, in labkit.measure: chapter 05 (its knob rule, knee_experiment.call, and the plateau's
beside / alone slowdown, fresh_step.LoadedStep.slowdown_interval) and chapter 06 (the drifted
step against the converted one, tables.ratio_interval) read rounds the same way; each kept its
own t table until 2026-12-04, and chapters may not import each other.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Student t's 97.5% quantiles (two-sided 95%) for 1-30 degrees of freedom (scipy is not in the
# environment); above 30 the table's last value, a little wider than the true quantile
# (1.96 at infinity), so the rule only gets more cautious.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
         2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
         2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_quantile(df: int) -> float:
    """Student t's 97.5% quantile at `df` degrees of freedom (the two-sided 95% interval's
    multiplier), from the table _T975 (df 1-30; above 30 its df-30 value, a little wide)."""
    if not isinstance(df, int) or df < 1:
        raise ValueError(f"degrees of freedom must be an integer >= 1, got {df!r}")
    return _T975[min(df, len(_T975)) - 1]


def geometric_interval(ratios: Sequence[float]) -> tuple[float, float, float]:
    """(geometric mean, low, high) of at least two positive ratios: a Student-t 95% interval
    on their logs, rounds - 1 degrees of freedom. Logs, because a ratio's noise is
    multiplicative (1.25x and 0.8x are the same distance from 1x)."""
    logs = np.log(np.asarray(ratios, dtype=float))
    if logs.ndim != 1 or len(logs) < 2 or not np.all(np.isfinite(logs)):
        raise ValueError(f"need two or more finite ratios > 0, got {list(ratios)}")
    half = t_quantile(len(logs) - 1) * float(logs.std(ddof=1)) / np.sqrt(len(logs))
    centre = float(logs.mean())
    return float(np.exp(centre)), float(np.exp(centre - half)), float(np.exp(centre + half))
