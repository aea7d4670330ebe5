"""How timings are shown beyond text: a plot of every sample and a progress bar for sweeps.

The presentation layer of the harness: matplotlib and ipywidgets are imported here, and
only when a plot or a bar is actually asked for, so `labkit.measure.bench` and `labkit.measure.timing`
run where neither is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from labkit.measure import progress

if TYPE_CHECKING:
    from labkit.measure.timing import Timing


def plot_timing(timing: Timing, ax=None):  # noqa: ANN001, ANN201 -- matplotlib types stay optional
    """Every sample as a strip (in time order) beside their histogram, median marked.

    Seeing the samples shows what one number hides: a slow first few (warm-up not
    long enough), two clusters (frequency changes), or a long tail (interference).
    """
    import matplotlib.pyplot as plt

    unit, scale = unit_for(timing.median_s)
    samples = np.asarray(timing.times_s) / scale
    if ax is None:
        fig, (ax_strip, ax_hist) = plt.subplots(1, 2, figsize=(9, 3),
                                               gridspec_kw={"width_ratios": [2, 1]})
    else:
        fig, ax_strip, ax_hist = ax.figure, ax, None
    ax_strip.plot(np.arange(samples.size), samples, ".", ms=3 if samples.size > 50 else 8, alpha=0.6)
    ax_strip.axhline(timing.median_s / scale, color="C3", label="median")
    ax_strip.set_xlabel("sample (in the order taken)")
    ax_strip.set_ylabel(f"time per call ({unit})")
    ax_strip.set_title(timing.label)
    ax_strip.legend(loc="upper right")
    if ax_hist is not None:
        ax_hist.hist(samples, bins=min(40, max(5, samples.size // 5)), orientation="horizontal")
        ax_hist.axhline(timing.median_s / scale, color="C3")
        ax_hist.set_xlabel("count")
        ax_hist.sharey(ax_strip)
        fig.tight_layout()
    return fig


def unit_for(seconds: float) -> tuple[str, float]:
    """The unit (and its size in seconds) that shows `seconds` with 1 to 3 digits."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "ns", 1e-9


class WidgetBar:
    """An ipywidgets IntProgress shown in the notebook while a sweep runs.

    When it finishes, its output is replaced in place by one line of HTML ("rounds: 15 of 15
    done") and the widget is closed, so a saved notebook holds text that GitHub, nbviewer and
    an HTML export can show, not a widget view with nothing behind it.
    """

    def __init__(self, total: int, description: str = "rounds") -> None:
        import ipywidgets
        from IPython.display import display

        self.description = description
        self.widget = ipywidgets.IntProgress(value=0, min=0, max=total, description=description)
        self.handle = display(self.widget, display_id=True)

    def step(self) -> None:
        self.update(self.widget.value + 1)

    def update(self, done: int, total: int | None = None, label: str = "") -> None:
        """Show `done` of the total (a loader sweep calls this with its own label)."""
        self.widget.value = done
        if label:
            self.widget.description = label[:14]
        if done >= self.widget.max:
            self.close()

    def close(self) -> None:
        import html

        from IPython.display import HTML

        if self.handle is None:
            return
        self.handle.update(HTML(f"<span class='lt-progress-done'>{html.escape(self.description)}: "
                                f"{self.widget.value} of {self.widget.max} done</span>"))
        self.handle = None
        self.widget.close()


def notebook_bar(total: int) -> WidgetBar | None:
    """An ipywidgets bar when running inside a notebook kernel, else None (silent)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return None
    return WidgetBar(total)


progress.use_display(notebook_bar)
