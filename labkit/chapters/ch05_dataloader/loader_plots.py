"""Pictures and the progress bar of chapter 05: the sweep, the copy curve, a few samples.

Drawing only: every function takes numbers already measured (a `loader_sweep.Sweep`, a list
of `h2d_copies.CopyPoint`, or their saved dicts) and never measures. Figures are
`labkit.show.figures.StaticFigure`s (no pyplot state; PNG in a notebook, deterministic SVG).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

from labkit.chapters.ch05_dataloader import loader_data
from labkit.show.figures import StaticFigure

WAIT_COLOUR, COMPUTE_COLOUR, LINE_COLOUR = "#d62728", "#1f77b4", "#2ca02c"
MEMORY_COLOURS = {"pageable": "#ff7f0e", "pinned": "#1f77b4"}


class ProgressBar:
    """The harness's notebook progress bar (labkit.show.timing_plots), a silent no-op elsewhere.

    Pass its `update` as `on_progress` to `loader_sweep.sweep`.
    """

    def __init__(self, total: int, description: str = "settings") -> None:
        self.bar = None
        try:
            from IPython import get_ipython

            shell = get_ipython()
            if shell is not None and hasattr(shell, "kernel"):
                from labkit.show.timing_plots import WidgetBar

                self.bar = WidgetBar(total, description)
        except Exception:  # no IPython or no widgets: measuring matters more than the bar
            self.bar = None

    def update(self, done: int, total: int, label: str = "") -> None:
        if self.bar is not None:
            self.bar.update(done, total, label)


def _rows(runs: Sequence[object]) -> list[Mapping]:
    return [r.as_dict() if hasattr(r, "as_dict") else r for r in runs]


def sweep_figure(runs: Sequence[object], title: str = "Where each step's time goes") -> StaticFigure:
    """Stacked bars (median wait, median compute per step) and samples/s on a second axis."""
    rows = _rows(getattr(runs, "runs", runs))
    if not rows:
        raise ValueError("nothing to draw: the sweep has no runs")
    fig = StaticFigure(figsize=(max(4.5, 0.9 * len(rows) + 2), 3.2))
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(rows))
    wait = np.array([r["wait_median_s"] for r in rows]) * 1e3
    compute = np.array([r["compute_median_s"] for r in rows]) * 1e3
    ax.bar(x, compute, color=COMPUTE_COLOUR, label="compute (median)")
    ax.bar(x, wait, bottom=compute, color=WAIT_COLOUR, label="waiting for data (median)")
    ax.set_xticks(x, [r["label"] for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("ms per step")
    ax.set_title(title, fontsize=10, pad=18)
    twin = ax.twinx()
    twin.plot(x, [r["samples_per_s"] for r in rows], "o-", color=LINE_COLOUR, label="samples/s")
    twin.set_ylabel("samples/s", color=LINE_COLOUR)
    twin.set_ylim(bottom=0)
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    # above the axes: inside them the legend covered the bars it explains
    ax.legend(handles, [h.get_label() for h in handles], fontsize=7, loc="lower left",
              bbox_to_anchor=(0, 1.02), ncols=3, frameon=False, borderaxespad=0)
    fig.tight_layout()
    return fig


def startup_figure(startups: Sequence[object]) -> StaticFigure:
    """Time to the first batch of each epoch, one line per setting."""
    rows = _rows(startups)
    fig = StaticFigure(figsize=(4.5, 2.8))
    ax = fig.add_subplot(1, 1, 1)
    for row, colour in zip(rows, (WAIT_COLOUR, COMPUTE_COLOUR, LINE_COLOUR), strict=False):
        epochs = np.arange(1, len(row["first_batch_s"]) + 1)
        ax.plot(epochs, np.array(row["first_batch_s"]) * 1e3, "o-", color=colour,
                label=row["label"])
    ax.set_xlabel("epoch")
    ax.set_ylabel("ms to the first batch")
    ax.set_ylim(bottom=0)
    ax.set_xticks(epochs)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def bandwidth_figure(points: Sequence[object], seed_gbps: Mapping[str, float] | None = None) -> StaticFigure:
    """Host-to-device GB/s against transfer size, one line per kind of host memory."""
    rows = [p if isinstance(p, Mapping) else vars(p) for p in points]
    if not rows:
        raise ValueError("nothing to draw: no copy was measured")
    fig = StaticFigure(figsize=(5, 3.2))
    ax = fig.add_subplot(1, 1, 1)
    for memory in sorted({r["memory"] for r in rows}):
        mine = sorted((r for r in rows if r["memory"] == memory), key=lambda r: r["nbytes"])
        ax.plot([r["nbytes"] for r in mine], [r["gbps"] for r in mine], "o-",
                color=MEMORY_COLOURS.get(memory, "#7f7f7f"), label=memory)
    for name, value in (seed_gbps or {}).items():
        ax.axhline(value, color="#7f7f7f", linestyle=":", linewidth=1)
        ax.text(rows[0]["nbytes"], value, f" {name.removeprefix('seed ')}: {value:g} GB/s (seed)",
                fontsize=6, va="bottom")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes per copy")
    ax.set_ylabel("GB/s host to device")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def samples_figure(dataset: loader_data.SyntheticImages, count: int = 6) -> StaticFigure:
    """A few decoded, augmented samples as the model sees them (un-normalised for display)."""
    fig = StaticFigure(figsize=(1.3 * count, 1.5))
    mean = torch.tensor(loader_data.IMAGENET_MEAN).view(3, 1, 1)
    std = torch.tensor(loader_data.IMAGENET_STD).view(3, 1, 1)
    for i in range(count):
        image, label = dataset[i]
        pixels = image.float() / 255 if image.dtype == torch.uint8 else image * std + mean
        ax = fig.add_subplot(1, count, i + 1)
        ax.imshow(pixels.clamp(0, 1).permute(1, 2, 0).numpy())
        ax.set_title(f"#{i}, label {label}", fontsize=7)
        ax.axis("off")
    fig.tight_layout()
    return fig
