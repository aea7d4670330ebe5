"""What the address grid shows, as pure functions of a layout and a selection.

The widget classes hold state in traitlets and the JS only draws; everything a cell, a
label or a line of text says is decided here, from a `labkit.core.layout.Layout`, so it is
tested without traitlets or a browser, and the static picture (`static_svg`) draws the
same numbers and colours as the live grid.
"""

from __future__ import annotations

import numpy as np
import torch

from labkit.core import layout

# A grid with more cells than this is unreadable and slow to draw; we show a summary instead.
MAX_DRAWN_ELEMENTS = 4096
# The storage strip draws at most this many cells (the range the elements actually use).
MAX_DRAWN_CELLS = 4096
# Tiled 2-D slices are readable up to 4 dimensions (a grid of grids); beyond that, slice first.
MAX_DIMS = 4
# Above this many elements, cell look-ups ("which elements read cell c") are not enumerated.
MAX_LOOKUP_ELEMENTS = 1 << 20
# Values are printed in cells only for small storages (they would not fit otherwise).
MAX_VALUE_CELLS = 4096
# Byte addresses are 64-bit: base plus the storage must stay below this.
ADDRESS_LIMIT = 1 << 64
# Hues run from 0 (red) to this (violet) over the storage cells the elements use.
HUE_SPAN = 300.0


def format_value(value: object) -> str:
    """A short label for one storage value (cells are small)."""
    if isinstance(value, bool):
        return "T" if value else "F"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, complex):
        return f"{value:.2g}"
    return str(value)


def storage_values(t: torch.Tensor) -> list[str]:
    """Every element of t's storage as a short label, or [] when too many or not readable.

    Reads the whole storage (not just t's elements) so gaps and the offset region show
    their real contents too.
    """
    layout.check_tensor(t)
    itemsize = t.element_size()
    cells = t.untyped_storage().nbytes() // itemsize
    if cells > MAX_VALUE_CELLS:
        return []
    flat = torch.empty(0, dtype=t.dtype, device=t.device)
    flat.set_(t.untyped_storage(), 0, (cells,), (1,))
    return [format_value(v) for v in flat.detach().cpu().resolve_conj().resolve_neg().tolist()]


def minimal_storage_size(lay: layout.Layout) -> int:
    """Smallest storage that holds every element of lay (its last reachable index + 1)."""
    return max(lay.max_index + 1, lay.offset)


def cell_hue(cell: int, low: int, high: int) -> float:
    """Hue (degrees) of storage cell `cell` when the elements use cells low..high.

    One colour per storage cell, different for every cell (a continuous scale, no palette
    that wraps around), and every element shows the colour of the cell it reads: repeated
    colours in the grid mean elements that share a cell (stride 0, overlap), nothing else.
    """
    if high <= low:
        return 210.0
    return HUE_SPAN * (cell - low) / (high - low)


def check_base(base: object, lay: layout.Layout | None = None,
               storage_size: int | None = None) -> int | None:
    """A byte address for storage[0]: None, or a whole number with the storage below 2**64."""
    if base is None:
        return None
    if isinstance(base, bool) or not isinstance(base, int | np.integer):
        raise layout.LayoutError(f"base must be a whole number of bytes (e.g. "
                                 f"x.untyped_storage().data_ptr()) or None, got {base!r}.")
    base = int(base)
    if base < 0:
        raise layout.LayoutError(f"base = {base} is negative; a byte address is >= 0.")
    reach = (lay.itemsize * (storage_size or 0)) if lay is not None else 0
    if base + reach >= ADDRESS_LIMIT:
        raise layout.LayoutError(f"base = {base} puts the storage beyond 2**64 bytes; a byte "
                                 "address is a 64-bit number.")
    return base


def check_selection(lay: layout.Layout, index: object) -> list[int]:
    """A logical index with negative entries made positive; [] (none) for a non-scalar."""
    if isinstance(index, str | bytes) or not isinstance(index, list | tuple):
        raise layout.LayoutError(f"selected must be a list of whole numbers, got {index!r}.")
    if not index and lay.ndim:
        return []
    for k, i in enumerate(index):
        if isinstance(i, bool) or not isinstance(i, int | np.integer):
            raise layout.LayoutError(f"selected[{k}] = {i!r} is not a whole number.")
    layout.element_offset(lay, tuple(index))
    return [int(i) + n if i < 0 else int(i) for i, n in zip(index, lay.shape, strict=True)]


def check_cell(cell: object, storage_size: int) -> int:
    """A storage cell to select: -1 (none) or 0..storage_size-1, a whole number (not a bool)."""
    if isinstance(cell, bool) or not isinstance(cell, int | np.integer):
        raise layout.LayoutError(f"selected_cell must be a whole number (-1 for none), got {cell!r}.")
    if not -1 <= cell < storage_size:
        raise layout.LayoutError(
            f"selected_cell = {cell} is outside the storage (cells 0..{storage_size - 1}); "
            "use -1 to clear the selection.")
    return int(cell)


def grid_view(lay: layout.Layout, storage_size: int, values: list[str], base: int | None,
              title: str) -> dict:
    """Everything the JS draws for one layout, as plain JSON values (the `_view` trait)."""
    info = layout.classify(lay)
    numel = lay.numel
    view: dict[str, object] = {
        "shape": list(lay.shape), "stride": list(lay.stride), "offset": lay.offset,
        "itemsize": lay.itemsize, "storage_size": storage_size, "base": base,
        "numel": numel, "kind": info.kind, "explanation": info.explanation,
        "flags": sorted(info.flags), "title": title, "drawn": True, "reason": "",
        "cell_low": lay.offset, "cell_high": lay.offset, "hue_span": HUE_SPAN,
    }
    if numel > MAX_DRAWN_ELEMENTS:
        view["drawn"] = False
        view["reason"] = (
            f"{numel} elements is more than the {MAX_DRAWN_ELEMENTS} this grid draws: "
            "a bigger picture is unreadable and slow. Slice a corner (e.g. x[:8, :8]) "
            "to see it element by element; the formula below still works for any element.")
        view.update(element_offsets=[], strip_start=0, strip_stop=0, storage_values=[])
        return view
    offsets = layout.element_offsets(lay).ravel() if numel else np.zeros(0, dtype=np.int64)
    view["element_offsets"] = offsets.tolist()
    low = min(lay.offset, int(offsets.min()) if numel else lay.offset)
    high = int(offsets.max()) + 1 if numel else lay.offset
    if numel:
        view["cell_low"], view["cell_high"] = int(offsets.min()), int(offsets.max())
    start, stop = 0, storage_size
    if stop - start > MAX_DRAWN_CELLS:
        start, stop = low, min(max(high, low + 1), low + MAX_DRAWN_CELLS)
    view["strip_start"], view["strip_stop"] = start, stop
    view["storage_values"] = values[start:stop] if len(values) == storage_size else []
    return view


def cell_label(view: dict, cell: int) -> str:
    """What a cell (and every element reading it) is labelled with: its value, else its index."""
    values = view.get("storage_values") or []
    j = cell - int(view.get("strip_start", 0))
    if values and 0 <= j < len(values):
        return str(values[j])
    return str(cell)


def elements_at(lay: layout.Layout, cell: int) -> list[tuple[int, ...]]:
    """Every logical index whose element lives in storage cell `cell` ([] for a cell no element
    reads). A cell is a whole number >= 0: 'a', None, 2.5 or True raise LayoutError instead of
    silently matching nothing (True would otherwise compare equal to cell 1)."""
    if isinstance(cell, bool | np.bool_) or not isinstance(cell, int | np.integer):
        raise layout.LayoutError(f"a storage cell must be a whole number >= 0, got {cell!r} "
                                 f"({type(cell).__name__}).")
    if cell < 0:
        raise layout.LayoutError(f"storage cell {cell} is negative; cells are numbered from 0.")
    if lay.numel > MAX_LOOKUP_ELEMENTS:
        raise ValueError(f"{lay.numel} elements are too many to search; slice the tensor.")
    offsets = layout.element_offsets(lay)
    return [tuple(int(i) for i in idx) for idx in np.argwhere(offsets == cell)]


def index_text(index: tuple[int, ...]) -> str:
    """'(1, 2)': how an index is written in the widget."""
    return "(" + ", ".join(str(i) for i in index) + ")"


def describe_cell(lay: layout.Layout, cell: int, base: int | None) -> str:
    """'storage cell 5 at base + 20 B: 2 elements (0, 1), (1, 1)' for the info line."""
    if base is None:
        where = f"storage cell {cell} at base + {lay.itemsize * cell} B"
    else:
        where = f"storage cell {cell} at {hex(base + lay.itemsize * cell)}"
    try:
        found = elements_at(lay, cell)
    except ValueError as err:
        return f"{where}: {err}"
    if not found:
        return f"{where}: no element reads it (unused)"
    shown = ", ".join(index_text(idx) for idx in found[:8])
    more = f" and {len(found) - 8} more" if len(found) > 8 else ""
    noun = "element" if len(found) == 1 else "elements"
    return f"{where}: {len(found)} {noun} {shown}{more}"


def selection_texts(lay: layout.Layout, selected: list[int], selected_cell: int,
                    base: int | None) -> dict:
    """The address formula of the selected element, or the elements of the selected cell.

    `text_for` names what the texts describe ("element:1,2" or "cell:5"), so the browser
    can ignore a text that arrives after the learner has already clicked something else.
    """
    out = {"address_text": "", "cell_text": "", "storage_index": -1, "byte_address": None,
           "text_for": ""}
    if (selected or lay.ndim == 0) and lay.numel > 0:
        index = tuple(selected)
        out["storage_index"] = layout.element_offset(lay, index)
        out["byte_address"] = layout.byte_address(lay, index, base or 0)
        out["address_text"] = layout.address_formula(lay, index, base)
        out["text_for"] = "element:" + ",".join(str(i) for i in index)
    elif selected_cell >= 0:
        out["storage_index"] = selected_cell
        out["cell_text"] = describe_cell(lay, selected_cell, base)
        out["text_for"] = f"cell:{selected_cell}"
    return out
