"""The memory-address grid: a tensor's logical grid linked to the storage strip behind it.

Click (or hover) an element and its storage cell lights up, with the address formula filled
in; click a storage cell and every element that reads it lights up. Stride 0, overlapping
windows, gaps, a storage offset and channels_last all become visible at a glance.

All arithmetic comes from ``labkit.layout`` (the authority); the JS only draws the element
offsets Python sends and fills in the formula for hover previews. State lives in traitlets
with validators, so tests can drive the widget without a browser::

    grid = AddressGrid(torch.arange(12).reshape(3, 4).t())
    grid.selected = [1, 2]
    grid.address_text   # 'base + 8 B × (offset 0 + 1×1 + 2×4) = base + 8 B × 9 = base + 72 B'

Stable DOM hooks (for browser tests and later chapters), all inside ``.lt-grid-widget``:

- ``[data-role=grid] rect.lt-el[data-index=k][data-pos="i,j"]``: logical element k (row-major).
- ``[data-role=strip] rect.lt-cell[data-cell=c]``: storage cell c; ``.lt-unused`` when no
  element reads it, ``.lt-shared`` when several do, ``.lt-before-offset`` before the offset.
- ``.lt-selected`` / ``.lt-target``: the selected element(s) and the storage cell(s) they map to.
- ``[data-role=address-text]``: the address formula; ``data-source`` is ``kernel`` once the
  text came from Python (``address_text``/``cell_text``), ``preview`` while computed in JS.
- ``[data-role=info]`` carries ``data-storage-index`` and ``data-byte-address`` of the selection.
- ``[data-role=summary]``: shown instead of the grid beyond MAX_DRAWN_ELEMENTS elements.
- ``[data-role=kind]``: the classification (contiguous, broadcast, overlapping, gaps, ...).
- The widget root ``.lt-grid-widget`` carries ``data-title`` and ``data-flags``, the count of
  redraws ``data-render-count``, and timings measured in the page with performance.now():
  ``data-render-ms`` (build the SVG, style and layout), ``data-paint-ms`` (until the frame
  after), ``data-click-ms`` / ``data-click-paint-ms`` (a click's highlight and text) and
  ``data-kernel-ms`` (click until the kernel's formula arrived). Dispatching the DOM event
  ``lt-redraw`` on the root redraws it (benchmarks/widget_latency.py times idle redraws).
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence

import anywidget
import numpy as np
import torch
import traitlets

from labkit import layout

HERE = pathlib.Path(__file__).parent

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


def _trait_error(err: Exception) -> traitlets.TraitError:
    return traitlets.TraitError(str(err))


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
    itemsize = t.element_size()
    cells = t.untyped_storage().nbytes() // itemsize
    if cells > MAX_VALUE_CELLS or t.layout != torch.strided or t.device.type == "meta":
        return []
    flat = torch.empty(0, dtype=t.dtype, device=t.device)
    flat.set_(t.untyped_storage(), 0, (cells,), (1,))
    return [format_value(v) for v in flat.detach().cpu().tolist()]


def layout_of(obj: layout.Layout | torch.Tensor) -> layout.Layout:
    """Turn a tensor or a Layout into a Layout, refusing other things with a clear message."""
    if isinstance(obj, layout.Layout):
        return obj
    if isinstance(obj, torch.Tensor):
        if obj.layout != torch.strided:
            raise TypeError(
                f"the address grid draws strided tensors; this one has layout {obj.layout} "
                "(call .to_dense() first)."
            )
        return layout.of(obj)
    raise TypeError(
        f"expected a torch.Tensor or a labkit.layout.Layout, got {type(obj).__name__}; "
        "for raw numbers use layout.check(shape, stride, offset, itemsize, storage_size)."
    )


def minimal_storage_size(lay: layout.Layout) -> int:
    """Smallest storage that holds every element of lay (its last reachable index + 1)."""
    return max(lay.max_index + 1, lay.offset)


class AddressGrid(anywidget.AnyWidget):
    """Logical grid beside its storage strip; select an element to see its address formula.

    Construct from a tensor (its storage values are shown when small) or a
    ``labkit.layout.Layout``. ``base`` (bytes) makes formulas show real hex addresses,
    e.g. ``base=x.untyped_storage().data_ptr()``; by default the formula says "base".
    """

    _esm = HERE / "address_grid.js"
    _css = HERE / "widgets.css"

    shape = traitlets.List(help="logical shape").tag(sync=True)
    stride = traitlets.List(help="strides, in elements").tag(sync=True)
    offset = traitlets.Int(0, help="storage offset, in elements").tag(sync=True)
    itemsize = traitlets.Int(4, help="bytes per element").tag(sync=True)
    storage_size = traitlets.Int(1, help="storage size, in elements").tag(sync=True)
    base = traitlets.Int(None, allow_none=True, help="byte address of storage[0]").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    # Selection: a logical index (one int per dim, [] = none) or a storage cell (-1 = none).
    selected = traitlets.List(traitlets.Int(), default_value=[]).tag(sync=True)
    selected_cell = traitlets.Int(-1).tag(sync=True)
    # What the widget says about the selection, computed here by labkit.layout.
    address_text = traitlets.Unicode("").tag(sync=True)
    cell_text = traitlets.Unicode("").tag(sync=True)
    text_for = traitlets.Unicode("").tag(sync=True)  # "element:1,2" or "cell:5": what the texts describe
    storage_index = traitlets.Int(-1).tag(sync=True)
    byte_address = traitlets.Int(None, allow_none=True).tag(sync=True)
    kind = traitlets.Unicode("").tag(sync=True)
    explanation = traitlets.Unicode("").tag(sync=True)

    # Everything the JS draws, in one message so it redraws once per change.
    _view = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        tensor_or_layout: layout.Layout | torch.Tensor | None = None,
        *,
        base: int | None = None,
        title: str = "",
        **kwargs: object,
    ) -> None:
        self._batch = True  # no redraws while the constructor sets traits one by one
        self._values: list[str] = []
        try:
            super().__init__(title=title, base=base, **kwargs)
        finally:
            self._batch = False
        if tensor_or_layout is not None:
            self.show(tensor_or_layout)
        else:
            self._refresh()

    # ---------------------------------------------------------------- public API
    def show(self, tensor_or_layout: layout.Layout | torch.Tensor) -> None:
        """Draw another tensor or Layout (all traits change at once, validated together)."""
        lay = layout_of(tensor_or_layout)
        values = storage_values(tensor_or_layout) if isinstance(
            tensor_or_layout, torch.Tensor) else []
        storage = lay.storage_size if lay.storage_size is not None else minimal_storage_size(lay)
        self._set_layout(lay.shape, lay.stride, lay.offset, lay.itemsize, storage, values)

    @property
    def layout(self) -> layout.Layout:
        """The current layout as a validated labkit.layout.Layout."""
        return layout.check(self.shape, self.stride, self.offset, self.itemsize,
                            self.storage_size)

    def select(self, *index: int) -> str:
        """Select element `index` (like grid.selected = [...]) and return its address formula."""
        self.selected = list(index)
        return self.address_text

    def elements_at(self, cell: int) -> list[tuple[int, ...]]:
        """Every logical index whose element lives in storage cell `cell`."""
        lay = self.layout
        if lay.numel > MAX_LOOKUP_ELEMENTS:
            raise ValueError(f"{lay.numel} elements are too many to search; slice the tensor.")
        offsets = layout.element_offsets(lay)
        return [tuple(int(i) for i in idx) for idx in np.argwhere(offsets == cell)]

    def __repr__(self) -> str:
        """Deterministic text for places where widgets cannot render (nbval, GitHub)."""
        shape = tuple(self.shape)
        cells = f"{self.storage_size} element" + ("" if self.storage_size == 1 else "s")
        text = (f"AddressGrid: shape {shape}, stride {tuple(self.stride)}, offset {self.offset}, "
                f"itemsize {self.itemsize} B, storage {cells}")
        if self.kind:
            text += f" -- {self.kind}"
        return text

    # ---------------------------------------------------------------- validation
    def _set_layout(self, shape: Sequence[int], stride: Sequence[int], offset: int,
                    itemsize: int, storage_size: int, values: list[str] | None = None) -> None:
        """Set shape/stride/offset/itemsize/storage together; rolls back if they don't fit."""
        with self.hold_sync():
            self._batch = True
            try:
                with self.hold_trait_notifications():
                    self.shape = list(shape)
                    self.stride = list(stride)
                    self.offset = offset
                    self.itemsize = itemsize
                    self.storage_size = storage_size
            finally:
                self._batch = False
            self._values = list(values or [])
            self._refresh()

    def _check(self, **changed: object) -> layout.Layout:
        """Validate the layout with `changed` substituted; raise TraitError saying why not."""
        values = {"shape": self.shape, "stride": self.stride, "offset": self.offset,
                  "itemsize": self.itemsize, "storage_size": self.storage_size, **changed}
        shape = values["shape"]
        if isinstance(shape, Sequence) and len(shape) > MAX_DIMS:
            raise traitlets.TraitError(
                f"shape {tuple(shape)} has {len(shape)} dimensions; the grid draws up to "
                f"{MAX_DIMS} (tiled 2-D slices). Index a slice first, e.g. x[0]."
            )
        try:
            return layout.check(**values)
        except layout.LayoutError as err:
            raise _trait_error(err) from None

    @traitlets.validate("shape")
    def _valid_shape(self, proposal: traitlets.Bunch) -> list[int]:
        return list(self._check(shape=proposal["value"]).shape)

    @traitlets.validate("stride")
    def _valid_stride(self, proposal: traitlets.Bunch) -> list[int]:
        return list(self._check(stride=proposal["value"]).stride)

    @traitlets.validate("offset")
    def _valid_offset(self, proposal: traitlets.Bunch) -> int:
        return self._check(offset=proposal["value"]).offset

    @traitlets.validate("itemsize")
    def _valid_itemsize(self, proposal: traitlets.Bunch) -> int:
        return self._check(itemsize=proposal["value"]).itemsize

    @traitlets.validate("storage_size")
    def _valid_storage_size(self, proposal: traitlets.Bunch) -> int:
        return self._check(storage_size=proposal["value"]).storage_size

    @traitlets.validate("selected")
    def _valid_selected(self, proposal: traitlets.Bunch) -> list[int]:
        index = proposal["value"]
        if not index and self.shape:
            return []
        try:
            layout.element_offset(self.layout, index)
        except layout.LayoutError as err:
            raise _trait_error(err) from None
        return [i + n if i < 0 else i for i, n in zip(index, self.shape, strict=True)]

    @traitlets.validate("selected_cell")
    def _valid_selected_cell(self, proposal: traitlets.Bunch) -> int:
        cell = proposal["value"]
        if not -1 <= cell < self.storage_size:
            raise traitlets.TraitError(
                f"selected_cell = {cell} is outside the storage (cells 0..{self.storage_size - 1});"
                " use -1 to clear the selection."
            )
        return cell

    @traitlets.validate("base")
    def _valid_base(self, proposal: traitlets.Bunch) -> int | None:
        base = proposal["value"]
        if base is not None and base < 0:
            raise traitlets.TraitError(f"base = {base} is negative; a byte address is >= 0.")
        return base

    # ---------------------------------------------------------------- derived state
    @traitlets.observe("shape", "stride", "offset", "itemsize", "storage_size", "base", "title")
    def _on_layout_change(self, change: traitlets.Bunch) -> None:
        if not self._batch:
            self._refresh()

    def _refresh(self) -> None:
        """Recompute everything drawn from the current (valid) layout, then the selection."""
        lay = self.layout
        info = layout.classify(lay)
        numel = lay.numel
        view: dict[str, object] = {
            "shape": list(lay.shape), "stride": list(lay.stride), "offset": lay.offset,
            "itemsize": lay.itemsize, "storage_size": self.storage_size, "base": self.base,
            "numel": numel, "kind": info.kind, "explanation": info.explanation,
            "flags": sorted(info.flags), "title": self.title, "drawn": True, "reason": "",
        }
        if numel > MAX_DRAWN_ELEMENTS:
            view["drawn"] = False
            view["reason"] = (
                f"{numel} elements is more than the {MAX_DRAWN_ELEMENTS} this grid draws: "
                "a bigger picture is unreadable and slow. Slice a corner (e.g. x[:8, :8]) "
                "to see it element by element; the formula below still works for any element."
            )
            view.update(element_offsets=[], strip_start=0, strip_stop=0, storage_values=[])
        else:
            offsets = layout.element_offsets(lay).ravel()
            view["element_offsets"] = offsets.tolist()
            low = min(lay.offset, int(offsets.min()) if numel else lay.offset)
            high = int(offsets.max()) + 1 if numel else lay.offset
            start, stop = 0, self.storage_size
            if stop - start > MAX_DRAWN_CELLS:
                start, stop = low, min(max(high, low + 1), low + MAX_DRAWN_CELLS)
            view["strip_start"], view["strip_stop"] = start, stop
            view["storage_values"] = (self._values[start:stop]
                                      if len(self._values) == self.storage_size else [])
        with self.hold_sync():
            self.kind, self.explanation = info.kind, info.explanation
            self._view = view
            self._fix_selection()

    def _fix_selection(self) -> None:
        """Drop a selection the new layout no longer has; recompute the texts for the rest."""
        try:
            self.selected = list(self.selected)
        except traitlets.TraitError:
            self.selected = []
        if self.selected_cell >= self.storage_size:
            self.selected_cell = -1
        self._update_texts()

    @traitlets.observe("selected")
    def _on_selected(self, change: traitlets.Bunch) -> None:
        with self.hold_sync():
            if change["new"]:
                self.selected_cell = -1
            self._update_texts()

    @traitlets.observe("selected_cell")
    def _on_selected_cell(self, change: traitlets.Bunch) -> None:
        with self.hold_sync():
            if change["new"] >= 0:
                self.selected = []
            self._update_texts()

    def _update_texts(self) -> None:
        """Address formula of the selected element, or the elements of the selected cell.

        `text_for` names what the texts describe, so the browser can ignore a text that
        arrives after the learner has already clicked something else.
        """
        lay = self.layout
        with self.hold_sync():
            self.address_text, self.cell_text = "", ""
            self.storage_index, self.byte_address = -1, None
            if (self.selected or lay.ndim == 0) and lay.numel > 0:
                index = tuple(self.selected)
                self.storage_index = layout.element_offset(lay, index)
                self.byte_address = layout.byte_address(lay, index, self.base or 0)
                self.address_text = layout.address_formula(lay, index, self.base)
                self.text_for = "element:" + ",".join(str(i) for i in index)
            elif self.selected_cell >= 0:
                self.storage_index = self.selected_cell
                self.cell_text = self._describe_cell(self.selected_cell)
                self.text_for = f"cell:{self.selected_cell}"
            else:
                self.text_for = ""

    def _describe_cell(self, cell: int) -> str:
        if self.base is None:
            where = f"storage cell {cell} at base + {self.itemsize * cell} B"
        else:
            where = f"storage cell {cell} at {hex(self.base + self.itemsize * cell)}"
        try:
            found = self.elements_at(cell)
        except ValueError as err:
            return f"{where}: {err}"
        if not found:
            return f"{where}: no element reads it (unused)"
        shown = ", ".join(_index_text(idx) for idx in found[:8])
        more = f" and {len(found) - 8} more" if len(found) > 8 else ""
        noun = "element" if len(found) == 1 else "elements"
        return f"{where}: {len(found)} {noun} {shown}{more}"


def _index_text(index: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(i) for i in index) + ")"


