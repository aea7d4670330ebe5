"""The memory-address grid: a tensor's logical grid linked to the storage strip behind it.

Click (or hover) an element and its storage cell lights up, with the address formula filled
in; click a storage cell and every element that reads it lights up. Stride 0, overlapping
windows, gaps, a storage offset and channels_last all become visible at a glance.

All arithmetic comes from ``labkit.core.layout`` (the authority); the JS only draws the element
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

from collections.abc import Sequence

import torch
import traitlets

from labkit.core import layout
from labkit.show.widgets import static_svg, view_model
from labkit.show.widgets.base import Widget
from labkit.show.widgets.view_model import (  # noqa: F401 -- kept importable from here
    MAX_DIMS,
    MAX_DRAWN_CELLS,
    MAX_DRAWN_ELEMENTS,
    MAX_LOOKUP_ELEMENTS,
    MAX_VALUE_CELLS,
    format_value,
    minimal_storage_size,
    storage_values,
)


def _trait_error(err: Exception) -> traitlets.TraitError:
    return traitlets.TraitError(str(err))


def layout_of(obj: layout.Layout | torch.Tensor) -> layout.Layout:
    """Turn a tensor or a Layout into a Layout, refusing other things with a clear message."""
    if isinstance(obj, layout.Layout):
        return obj
    if isinstance(obj, torch.Tensor):
        try:
            return layout.of(obj)
        except layout.LayoutError as err:
            raise TypeError(f"the address grid cannot draw this tensor: {err}") from None
    raise TypeError(
        f"expected a torch.Tensor or a labkit.core.layout.Layout, got {type(obj).__name__}; "
        "for raw numbers use layout.check(shape, stride, offset, itemsize, storage_size)."
    )


class AddressGrid(Widget):
    """Logical grid beside its storage strip; select an element to see its address formula.

    Construct from a tensor (its storage values are shown when small) or a
    ``labkit.core.layout.Layout``. ``base`` (bytes) makes formulas show real hex addresses,
    e.g. ``base=x.untyped_storage().data_ptr()``; by default the formula says "base".
    """

    js_parts = ("grid_svg.js", "grid.js", "address_grid.js")

    shape = traitlets.List(help="logical shape").tag(sync=True)
    stride = traitlets.List(help="strides, in elements").tag(sync=True)
    offset = traitlets.Int(0, help="storage offset, in elements").tag(sync=True)
    itemsize = traitlets.Int(4, help="bytes per element").tag(sync=True)
    storage_size = traitlets.Int(1, help="storage size, in elements").tag(sync=True)
    base = traitlets.Int(None, allow_none=True, help="byte address of storage[0]").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    # Opt-in: the JS records render and click timings in data attributes (benchmarks only).
    timing_hooks = traitlets.Bool(False).tag(sync=True)

    # Selection: a logical index (one int per dim, [] = none) or a storage cell (-1 = none).
    selected = traitlets.List(traitlets.Int(), default_value=[]).tag(sync=True)
    selected_cell = traitlets.Int(-1).tag(sync=True)
    # What the widget says about the selection, computed here by labkit.core.layout.
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
        timing_hooks: bool = False,
        **kwargs: object,
    ) -> None:
        self._batch = True  # no redraws while the constructor sets traits one by one
        self._values: list[str] = []
        try:
            super().__init__(title=title, base=base, timing_hooks=timing_hooks, **kwargs)
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
        """The current layout as a validated labkit.core.layout.Layout."""
        return layout.check(self.shape, self.stride, self.offset, self.itemsize,
                            self.storage_size)

    def select(self, *index: int) -> str:
        """Select element `index` (like grid.selected = [...]) and return its address formula."""
        self.selected = list(index)
        return self.address_text

    def elements_at(self, cell: int) -> list[tuple[int, ...]]:
        """Every logical index whose element lives in storage cell `cell`."""
        return view_model.elements_at(self.layout, cell)

    def static_svg(self) -> str:
        """The picture a saved notebook shows where the widget cannot run (same numbers)."""
        target = self.storage_index if self.selected else -1
        return static_svg.grid_svg(self._view, list(self.selected), self.address_text, target)

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
            lay = layout.check(**values)
            if getattr(self, "base", None) is not None:
                view_model.check_base(self.base, lay, lay.storage_size)
        except layout.LayoutError as err:
            raise _trait_error(err) from None
        return lay

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
        try:
            return view_model.check_selection(self.layout, proposal["value"])
        except layout.LayoutError as err:
            raise _trait_error(err) from None

    @traitlets.validate("selected_cell")
    def _valid_selected_cell(self, proposal: traitlets.Bunch) -> int:
        try:
            return view_model.check_cell(proposal["value"], self.storage_size)
        except layout.LayoutError as err:
            raise _trait_error(err) from None

    @traitlets.validate("base")
    def _valid_base(self, proposal: traitlets.Bunch) -> int | None:
        try:
            return view_model.check_base(proposal["value"], self.layout, self.storage_size)
        except layout.LayoutError as err:
            raise _trait_error(err) from None

    @traitlets.validate("timing_hooks")
    def _valid_timing_hooks(self, proposal: traitlets.Bunch) -> bool:
        if not isinstance(proposal["value"], bool):
            raise traitlets.TraitError(f"timing_hooks must be True or False, got {proposal['value']!r}.")
        return proposal["value"]

    # ---------------------------------------------------------------- derived state
    @traitlets.observe("shape", "stride", "offset", "itemsize", "storage_size", "base", "title")
    def _on_layout_change(self, change: traitlets.Bunch) -> None:
        if not self._batch:
            self._refresh()

    def _refresh(self) -> None:
        """Recompute everything drawn from the current (valid) layout, then the selection."""
        lay = self.layout
        view = view_model.grid_view(lay, self.storage_size, self._values, self.base, self.title)
        with self.hold_sync():
            self.kind, self.explanation = view["kind"], view["explanation"]
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
        """Address formula of the selected element, or the elements of the selected cell."""
        texts = view_model.selection_texts(self.layout, list(self.selected), self.selected_cell,
                                           self.base)
        with self.hold_sync():
            for name, value in texts.items():
                setattr(self, name, value)
