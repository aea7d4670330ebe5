"""Static pictures of a layout: the logical grid beside the storage strip, linked by colour.

Used wherever a widget cannot render (GitHub's notebook view, nbval, a PDF). Each storage
cell has its own colour (a continuous scale over the cells the elements use, so no two
cells share one) and every grid element shows the colour and the label of the storage
cell it reads, so stride 0 and overlap show up as repeated colours, and gaps as grey cells
in the strip. Labels follow the address grid widget (`labkit.show.widgets.view_model`): a
tensor's storage values when its storage is small, else the storage index, so the figure
and the grid number the same tensor the same way. One arrow per dimension shows the jump
in storage that a step along it makes.

Figures are built on matplotlib.figure.Figure with an Agg canvas: pyplot and the global
backend are never touched, so this is safe inside any notebook. Output is deterministic
(fixed sizes, no dates, fixed SVG hash salt) so tests can compare bytes.
"""

from __future__ import annotations

import colorsys
import io

import matplotlib
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from labkit.core import layout
from labkit.show.widgets import view_model  # the widget's labels and hue scale, shared

MAX_ELEMENTS = 1024  # grid elements drawn one by one; above this a summary is drawn
MAX_STORAGE = 1024  # storage cells drawn in the strip
STRIP_WIDTH = 32  # storage cells per strip row
CELL = 0.32  # inches per cell
LABEL_SIZE = 7   # points: the smallest label, readable at the figure's size
_ARROW_COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd")
_UNUSED = "#d9d9d9"  # storage inside the view's span that no element reads (a gap)
_OUTSIDE = "#f7f7f7"  # storage outside the span
_RC = {"svg.hashsalt": "labkit", "svg.fonttype": "none", "font.family": "DejaVu Sans"}


class StaticFigure(Figure):
    """A Figure that shows itself as PNG in a notebook without pyplot."""

    def _repr_png_(self) -> bytes:
        return to_png(self)


def storage_colour(storage_index: int, low: int = 0,
                   high: int | None = None) -> tuple[float, float, float, float]:
    """Colour of a storage cell when the elements use cells low..high (the widget's hues).

    Every grid element reading that cell gets the same colour; different cells always get
    different colours (no palette that wraps around after 20).
    """
    high = storage_index if high is None else high
    hue = 210.0 if high <= low else view_model.HUE_SPAN * (storage_index - low) / (high - low)
    red, green, blue = colorsys.hls_to_rgb(hue / 360.0, 0.82, 0.70)
    return (red, green, blue, 1.0)


def cell_labels(tensor_or_layout: torch.Tensor | layout.Layout, storage: int) -> list[str]:
    """The label of each storage cell: the tensor's value (small storages), else the index."""
    if isinstance(tensor_or_layout, torch.Tensor):
        values = view_model.storage_values(tensor_or_layout)
        if len(values) == storage:
            return values
    return [str(k) for k in range(storage)]


def grid_and_strip(
    tensor_or_layout: torch.Tensor | layout.Layout,
    *,
    highlight: tuple[int, ...] | None = None,
    max_elements: int = MAX_ELEMENTS,
    max_storage: int = MAX_STORAGE,
    title: str | None = None,
) -> Figure:
    """Draw the logical grid (3-D and 4-D as tiled 2-D slices) above its storage strip.

    Too many elements, too much storage or more than 4 dims: a summary figure that says
    why, never a huge drawing. highlight=(i, j, ...) outlines one element and its cell.
    """
    lay = tensor_or_layout if isinstance(tensor_or_layout, layout.Layout) else layout.of(
        tensor_or_layout)
    storage = lay.storage_size if lay.storage_size is not None else lay.max_index + 1
    kind = layout.classify(lay)
    heading = title or (f"shape {lay.shape}, stride {lay.stride}, offset {lay.offset}, "
                        f"{lay.itemsize} B per element: {kind.kind}")
    refusal = _too_big(lay, storage, max_elements, max_storage)
    if refusal:
        return _summary(lay, kind, heading, refusal)
    if highlight is not None:
        layout.element_offset(lay, highlight)  # raises LayoutError for a bad index
        highlight = tuple(int(i) % n for i, n in zip(highlight, lay.shape, strict=True))
    offsets = layout.element_offsets(lay) if lay.numel else np.zeros(lay.shape, dtype=np.int64)
    labels = cell_labels(tensor_or_layout, storage)
    low = int(offsets.min()) if offsets.size else 0
    high = int(offsets.max()) if offsets.size else 0
    cells = _grid_positions(lay.shape)
    grid_w = max((x for x, _ in cells.values()), default=0) + 1
    grid_h = max((y for _, y in cells.values()), default=0) + 1
    strip_rows = -(-max(storage, 1) // STRIP_WIDTH)
    strip_w = min(max(storage, 1), STRIP_WIDTH)
    width = max(grid_w, strip_w) + 1
    height = grid_h + strip_rows + 3.5
    fig = StaticFigure(figsize=(max(width * CELL, 6.0), height * CELL + 0.6))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.01, 0.01, 0.98, 0.98 - 0.5 / (height * CELL + 0.6)))
    ax.set_xlim(-0.5, width)
    ax.set_ylim(height, -1.0)
    ax.set_axis_off()
    fig.suptitle(heading, fontsize=9, y=0.995, va="top")

    strip_xy = _draw_strip(ax, lay, offsets, labels, storage, low, high, top=grid_h + 3.0,
                           caption_row=grid_h + 0.5)
    _draw_grid(ax, lay, offsets, labels, cells, low, high)
    if highlight is not None and lay.numel:
        _outline(ax, [cells[highlight], strip_xy[int(offsets[highlight])]])
    if lay.numel:
        _stride_arrows(ax, lay, cells, strip_xy, label_row=grid_h + 1.3)
    return fig


def _draw_strip(ax: Axes, lay: layout.Layout, offsets: np.ndarray, labels: list[str], storage: int,
                low: int, high: int, top: float, caption_row: float) -> dict[int, tuple[int, float]]:
    """The storage strip: one box per storage cell, coloured by which element reads it, hatched
    inside the view's span but unread, plain outside it; returns each cell's position."""
    uses = np.bincount(offsets.ravel(), minlength=storage) if offsets.size else np.zeros(
        storage, dtype=np.int64)
    first, last = lay.offset, lay.max_index
    ax.text(-0.4, caption_row, "storage (value or index; ×n = read by n elements)",
            fontsize=LABEL_SIZE + 1, va="center")
    strip_xy = {}
    for k in range(storage):
        x, y = k % STRIP_WIDTH, top + k // STRIP_WIDTH
        strip_xy[k] = (x, y)
        if uses[k]:
            face, hatch = storage_colour(k, low, high), None
        elif first <= k <= last:
            face, hatch = _UNUSED, "//"
        else:
            face, hatch = _OUTSIDE, None
        ax.add_patch(Rectangle((x, y), 0.92, 0.92, facecolor=face, edgecolor="#555555",
                               linewidth=0.4, hatch=hatch, gid=f"strip-{k}"))
        label = labels[k] if uses[k] <= 1 else f"{labels[k]}\n×{uses[k]}"
        ax.text(x + 0.46, y + 0.46, label, ha="center", va="center",
                fontsize=LABEL_SIZE if uses[k] <= 1 else LABEL_SIZE - 1, color="#222222")
    return strip_xy


def _draw_grid(ax: Axes, lay: layout.Layout, offsets: np.ndarray, labels: list[str],
               cells: dict[tuple[int, ...], tuple[int, int]], low: int, high: int) -> None:
    """The logical grid: each element in the colour of the storage cell it reads (3-D and 4-D
    tensors as 2-D slices, each titled with its leading index)."""
    for index, (x, y) in cells.items():
        if lay.ndim >= 3 and index[-2:] == (0, 0):
            ax.text(x, y - 0.3, "[" + ", ".join(str(i) for i in index[:-2]) + ", :, :]",
                    fontsize=LABEL_SIZE, va="bottom", color="#444444")
        k = int(offsets[index])
        ax.add_patch(Rectangle((x, y), 0.92, 0.92, facecolor=storage_colour(k, low, high),
                               edgecolor="#333333", linewidth=0.4,
                               gid="grid-" + "-".join(str(i) for i in index)))
        ax.text(x + 0.46, y + 0.46, labels[k], ha="center", va="center", fontsize=LABEL_SIZE)


def _outline(ax: Axes, places: list[tuple[float, float]]) -> None:
    """A black outline around the highlighted element and around the storage cell it reads."""
    for (x, y), gid in zip(places, ("highlight-grid", "highlight-strip"), strict=True):
        ax.add_patch(Rectangle((x - 0.05, y - 0.05), 1.02, 1.02, fill=False,
                               edgecolor="black", linewidth=1.6, gid=gid))


def _too_big(lay: layout.Layout, storage: int, max_elements: int, max_storage: int) -> str:
    if lay.ndim > 4:
        return f"{lay.ndim} dimensions: this picture draws up to 4; index it (x[0]) to draw a slice."
    if lay.numel > max_elements:
        return (f"{lay.numel} elements is above the drawing limit of {max_elements}; "
                "slice it (for example x[:8, :8]) to draw it.")
    if storage > max_storage:
        return (f"the storage holds {storage} elements, above the strip limit of {max_storage}; "
                "draw a smaller tensor or a Layout with a smaller storage_size.")
    return ""


def _summary(lay: layout.Layout, kind: layout.Classification, heading: str,
             why: str) -> Figure:
    """A text-only figure: what the layout is, and why it was not drawn cell by cell."""
    fig = StaticFigure(figsize=(7.0, 1.6))
    FigureCanvasAgg(fig)
    lines = [heading, f"{kind.kind}: {kind.explanation}", f"not drawn: {why}"]
    for n, line in enumerate(lines):
        fig.text(0.02, 0.8 - 0.3 * n, line, fontsize=8, va="center", wrap=True,
                 gid=f"summary-{n}")
    return fig


def _grid_positions(shape: tuple[int, ...]) -> dict[tuple[int, ...], tuple[int, int]]:
    """(x, y) cell of each element: 2-D as rows/columns, 3-D as slices side by side,
    4-D as a grid of slices (dim 0 down, dim 1 across), one empty cell between tiles."""
    shape4 = (1,) * (4 - len(shape)) + tuple(shape)
    if len(shape) == 1:
        shape4 = (1, 1, 1, shape[0])
    n0, n1, rows, cols = shape4
    positions = {}
    for full in np.ndindex(*shape4):
        a, b, r, c = full
        index = full[4 - len(shape):] if shape else ()
        positions[tuple(int(i) for i in index)] = (b * (cols + 1) + c, a * (rows + 1) + r)
    return positions


def _stride_arrows(ax: object, lay: layout.Layout, cells: dict, strip_xy: dict,
                   label_row: float) -> None:
    """One arrow per dim: in the grid one step along it, in the strip the jump it makes."""
    origin = (0,) * lay.ndim
    start = lay.offset
    for d, (size, step) in enumerate(zip(lay.shape, lay.stride, strict=True)):
        colour = _ARROW_COLOURS[d % len(_ARROW_COLOURS)]
        label = f"dim {d}: +{step} ({step * lay.itemsize} B)"
        if size < 2:
            continue
        sx, sy = strip_xy[start]
        nxt = tuple(1 if k == d else 0 for k in range(lay.ndim))
        (gx0, gy0), (gx1, gy1) = cells[origin], cells[nxt]
        ax.add_patch(FancyArrowPatch((gx0 + 0.46, gy0 + 0.46), (gx1 + 0.46, gy1 + 0.46),
                                     arrowstyle="-|>", mutation_scale=7, color=colour,
                                     linewidth=1.0, gid=f"grid-arrow-{d}"))
        if step == 0:
            ax.text(-0.4 + 7 * d, label_row, f"dim {d}: stride 0, same cell",
                    color=colour, fontsize=LABEL_SIZE, va="center", gid=f"strip-arrow-{d}")
            continue
        tx, ty = strip_xy[start + step]
        distance = max(float(np.hypot(tx - sx, ty - sy)), 1.0)
        bend = min(0.5, (1.4 + 0.3 * d) / distance)  # arcs stay about one row high
        ax.add_patch(FancyArrowPatch((sx + 0.46, sy), (tx + 0.46, ty),
                                     connectionstyle=f"arc3,rad={-bend:.3f}",
                                     arrowstyle="-|>", mutation_scale=7, color=colour,
                                     linewidth=1.0, gid=f"strip-arrow-{d}"))
        ax.text(-0.4 + 7 * d, label_row, label, color=colour, fontsize=LABEL_SIZE, va="center")


def to_svg(fig: Figure) -> bytes:
    """SVG bytes of a figure, identical on every run (fixed hash salt, no date)."""
    buffer = io.BytesIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return buffer.getvalue()


def to_png(fig: Figure, dpi: int = 100) -> bytes:
    """PNG bytes of a figure (no software or date stamps)."""
    buffer = io.BytesIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()
