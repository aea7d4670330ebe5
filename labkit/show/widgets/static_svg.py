"""The static picture of a widget: SVG text drawn from the same view-model as the live grid.

A saved notebook opened on GitHub, nbviewer, in an HTML export or in a front end without
the widget manager cannot run the widget's JS; it shows the richest picture in the output
instead. The bundle each widget gets from `base.Widget` carries this SVG beside the view, drawn
from the same `_view` dict as grid_svg.js with the same geometry, labels (a cell's
value, else its index) and colours (one hue per storage cell), so the two agree. Labels
are drawn only where a cell is at least 20 px (the live grid's rule), at 11 px. Output is
deterministic (no ids, no dates), so tests compare it.
"""

from __future__ import annotations

import html
import math

from labkit.show.widgets import view_model

GAP = 10        # pixels between tiles, as in grid_svg.js
FONT = "font-family='DejaVu Sans, Arial, sans-serif'"
LABEL_PX = 11   # the smallest text drawn: readable at 100% zoom
MIN_LABELLED_CELL = 20


def _cell_size(count: int, widest: int) -> int:
    if count <= 64 and widest <= 16:
        return 30
    if count <= 256 and widest <= 32:
        return 20
    if count <= 1024:
        return 12
    return 8


def _fill(view: dict, cell: int) -> str:
    hue = view_model.cell_hue(cell, int(view["cell_low"]), int(view["cell_high"]))
    return f"hsl({hue:.2f}, 70%, 82%)"


def _geometry(shape: list[int]) -> tuple[int, int, int, int]:
    nd = len(shape)
    rows = shape[-2] if nd >= 2 else 1
    cols = shape[-1] if nd >= 1 else 1
    tile_rows, tile_cols = 1, 1
    if nd == 3:
        tile_cols = shape[0]
        if tile_cols > 8:
            tile_rows, tile_cols = math.ceil(tile_cols / 8), 8
    if nd == 4:
        tile_rows, tile_cols = shape[0], shape[1]
    return rows, cols, tile_rows, tile_cols


def _unravel(k: int, shape: list[int]) -> list[int]:
    index = [0] * len(shape)
    for d in range(len(shape) - 1, -1, -1):
        index[d] = k % shape[d]
        k //= shape[d]
    return index


def _text(x: float, y: float, text: str, size: int = LABEL_PX, anchor: str = "middle",
          colour: str = "#222") -> str:
    return (f"<text x='{x:g}' y='{y:g}' font-size='{size}' text-anchor='{anchor}' {FONT} "
            f"fill='{colour}'>{html.escape(text)}</text>")


SELECTED = "stroke='#111' stroke-width='3'"  # the live widget's .lt-selected / .lt-target
UNSELECTED = "stroke='#fff'"


def _grid(view: dict, x0: float, y0: float,
          selected: tuple[int, ...] | None = None) -> tuple[list[str], float, float]:
    shape = list(view["shape"])
    numel = int(view["numel"])
    rows, cols, _, tile_cols = _geometry(shape)
    cs = _cell_size(numel, max(rows, cols))
    label_h = 16 if len(shape) >= 3 else 0
    tile_w, tile_h = cols * cs, rows * cs + label_h
    tiles = shape[0] if len(shape) == 3 else (shape[0] * shape[1] if len(shape) == 4 else 1)
    tile_size = rows * cols
    parts = []
    width = height = 0.0
    for t in range(tiles):
        ox = x0 + (t % tile_cols) * (tile_w + GAP)
        oy = y0 + (t // tile_cols) * (tile_h + GAP)
        if label_h:
            label = (f"[{t}, :, :]" if len(shape) == 3
                     else f"[{t // shape[1]}, {t % shape[1]}, :, :]")
            parts.append(_text(ox, oy + 12, label, anchor="start", colour="#444"))
        for r in range(rows):
            for c in range(cols):
                k = t * tile_size + r * cols + c
                if k >= numel:
                    continue
                cell = int(view["element_offsets"][k])
                x, y = ox + c * cs, oy + label_h + r * cs
                picked = selected is not None and tuple(_unravel(k, shape)) == selected
                parts.append(f"<rect x='{x:g}' y='{y:g}' width='{cs}' height='{cs}' "
                             f"fill='{_fill(view, cell)}' "
                             f"{SELECTED if picked else UNSELECTED}/>")
                if cs >= MIN_LABELLED_CELL:
                    parts.append(_text(x + cs / 2, y + cs / 2 + 4, view_model.cell_label(view, cell)))
        width = max(width, ox + tile_w - x0)
        height = max(height, oy + tile_h - y0)
    return parts, width, height


def _strip(view: dict, x0: float, y0: float,
           target: int = -1) -> tuple[list[str], float, float]:
    start, stop = int(view["strip_start"]), int(view["strip_stop"])
    n = stop - start
    cs = 30 if n <= 64 else 20 if n <= 256 else 12 if n <= 1024 else 8
    per_row = max(n, 1) if n <= 24 else (16 if cs >= 20 else 64)
    labelled = cs >= MIN_LABELLED_CELL
    mark_h = 16 if labelled else 4
    counts: dict[int, int] = {}
    for cell in view["element_offsets"]:
        counts[int(cell)] = counts.get(int(cell), 0) + 1
    parts = []
    for c in range(start, stop):
        j = c - start
        x = x0 + (j % per_row) * cs
        y = y0 + mark_h + (j // per_row) * (cs + mark_h)
        count = counts.get(c, 0)
        if count:
            fill, extra = _fill(view, c), ""
        else:
            fill = "#e3e3e3" if c < int(view["offset"]) else "#f1f1f1"
            extra = " stroke-dasharray='2 2'"
        stroke = "#7a3a00' stroke-width='2" if count > 1 else "#bbb"
        outline = SELECTED if c == target else f"stroke='{stroke}'{extra}"
        parts.append(f"<rect x='{x:g}' y='{y:g}' width='{cs}' height='{cs}' fill='{fill}' "
                     f"{outline}/>")
        if labelled:
            parts.append(_text(x + cs / 2, y + cs / 2 + 4, view_model.cell_label(view, c)))
            if count > 1:
                parts.append(_text(x + cs - 2, y + 10, f"×{count}", size=9, anchor="end",
                                   colour="#7a3a00"))
            if j % per_row == 0 or c % 4 == 0:
                parts.append(_text(x + 1, y - 4, str(c), size=9, anchor="start", colour="#666"))
    rows = max(1, math.ceil(n / per_row))
    return parts, per_row * cs, rows * (cs + mark_h) + mark_h


def grid_svg(view: dict, selected: list[int] | tuple[int, ...] = (), address_text: str = "",
             target: int = -1) -> str:
    """The address grid as the live widget draws it (grid above, storage strip below).

    `selected` (an element's index), its storage cell `target` and its `address_text` are
    drawn as the widget draws them: the element and the cell outlined, the formula beneath,
    so a saved page outlines the element its text says is selected.
    """
    picked = tuple(int(i) for i in selected) if selected else None
    title = view.get("title") or ""
    head = (f"{title}: " if title else "") + (
        f"shape {view_model.index_text(tuple(view['shape']))}, stride "
        f"{view_model.index_text(tuple(view['stride']))}, offset {view['offset']}, "
        f"{view['itemsize']} B per element: {view['kind']}")
    parts = [_text(4, 16, head, size=13, anchor="start")]
    width, y = 8 * len(head) + 8.0, 28.0
    if not view.get("drawn"):
        parts.append(_text(4, y + 14, str(view.get("reason", ""))[:160], size=12, anchor="start"))
        width, height = max(width, 7.0 * min(160, len(str(view.get("reason", ""))))), y + 24
    else:
        parts.append(_text(4, y + 12, "logical grid (each element shows the storage cell it "
                           "reads)", size=12, anchor="start", colour="#444"))
        grid, grid_w, grid_h = _grid(view, 4, y + 20, picked)
        strip_top = y + 20 + grid_h + 16
        parts += grid
        parts.append(_text(4, strip_top + 12, "storage (value or index; ×n = read by n "
                           "elements; grey = unused)", size=12, anchor="start", colour="#444"))
        strip, strip_w, strip_h = _strip(view, 4, strip_top + 18, target)
        parts += strip
        width = max(width, grid_w + 8, strip_w + 8, 420.0)
        height = strip_top + 18 + strip_h + 4
        if address_text:
            parts.append(_text(4, height + 12, address_text, size=12, anchor="start"))
            width, height = max(width, 7.0 * len(address_text) + 8), height + 20
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:g}' height='{height:g}' "
            f"viewBox='0 0 {width:g} {height:g}' role='img' aria-label='{html.escape(head)}'>"
            f"<rect width='100%' height='100%' fill='#fff'/>{''.join(parts)}</svg>")


def quiz_svg(question: str, how: str, choices: list[str]) -> str:
    """A quiz as a static card: the question and how to answer, never the answer."""
    lines = [question] + [f"○ {c}" for c in choices] + [how]
    wrapped: list[tuple[str, int]] = []
    for n, line in enumerate(lines):
        size = 14 if n == 0 else 12
        chunk = 90
        for start in range(0, max(len(line), 1), chunk):
            wrapped.append((line[start:start + chunk], size))
    width = 16 + 8 * min(90, max(len(t) for t, _ in wrapped))
    parts, y = [], 8
    for text, size in wrapped:
        y += size + 8
        parts.append(_text(10, y, text, size=size, anchor="start"))
    height = y + 12
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"viewBox='0 0 {width} {height}' role='img' aria-label='quiz'>"
            f"<rect width='100%' height='100%' fill='#fff' stroke='#ccc'/>{''.join(parts)}"
            "</svg>")
