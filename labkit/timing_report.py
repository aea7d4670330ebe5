"""The old home of the harness's statistics and presentation; kept so existing imports work.

Statistics and the `Timing`/`Comparison` results now live in `labkit.timing` (no
matplotlib, no ipywidgets); plots and progress bars in `labkit.timing_display`. Names
imported from here (``timing_report.Timing``, ``bench.timing_report.format_seconds``)
are the same objects.
"""

from __future__ import annotations

from labkit.timing import (
    NOISY_IQR_FRACTION,
    Comparison,
    Summary,
    Timing,
    VariantResult,
    format_seconds,
    ratio_spread,
    summarise,
)
from labkit.timing_display import SilentBar as _SilentBar
from labkit.timing_display import WidgetBar as _WidgetBar
from labkit.timing_display import progress_bar
from labkit.timing_display import unit_for as _unit_for

__all__ = ["NOISY_IQR_FRACTION", "Comparison", "Summary", "Timing", "VariantResult",
           "format_seconds", "progress_bar", "ratio_spread", "summarise",
           "_SilentBar", "_WidgetBar", "_unit_for"]
