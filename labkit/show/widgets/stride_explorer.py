"""The stride explorer: shape, strides and offset as controls over a fixed storage buffer.

The learner edits the numbers (or picks a preset) and the address grid below redraws live.
Validation happens here, in Python, with ``labkit.core.layout``: the browser never writes the
layout traits directly. It sends a *proposal* (the raw text of the three fields, or a preset
name); Python either applies it or sets ``error`` and keeps the last valid layout. So an
out-of-bounds stride typed in the browser can never leave the model in an invalid state.

Presets for a storage of S elements (documented strides for S = 12 in brackets):

- ``contiguous``: row-major rows x cols with cols the smallest divisor of S >= sqrt(S)
  [shape (3, 4), stride (4, 1)]
- ``transpose``: the transpose of that [shape (4, 3), stride (1, 4)]
- ``broadcast_row``: one row repeated with stride 0 [shape (3, 4), stride (0, 1)]
- ``sliding_window``: windows of cols elements stepping by cols // 2, overlapping
  [shape (5, 4), stride (2, 1)]
- ``diagonal``: the diagonal of the largest n x n matrix that fits [shape (3,), stride (4,)]
- ``channels_last``: an N, C, H, W = 1, C, 2, 2 image stored channels-last (C = 3 when S >= 12,
  else 2) [shape (1, 3, 2, 2), stride (12, 1, 6, 3)]

DOM hooks (besides the grid's, see address_grid): inside ``.lt-explorer``,
``input[data-field=shape|stride|offset]``, ``button[data-preset=NAME]``, and
``[data-role=error]`` holding the error text (empty when the layout is valid); while
there is an error, ``.lt-explorer-grid`` carries ``lt-stale`` (greyed, not clickable).

Text is read by `labkit.show.widgets.parsing` (shared with the quiz): empty items, empty
fields, bytes and overlong numbers each set `error`; nothing a browser sends raises.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import traitlets

from labkit.core import layout
from labkit.show.widgets import parsing
from labkit.show.widgets.address_grid import MAX_DRAWN_CELLS, AddressGrid


@dataclass(frozen=True)
class Preset:
    """A named example layout over the explorer's storage, with what it teaches."""

    name: str
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int
    description: str


def presets(storage_size: int) -> dict[str, Preset]:
    """The example layouts that fit a storage of `storage_size` elements, by name."""
    size = storage_size
    found: dict[str, Preset] = {}
    if size < 1:
        return found
    cols = next(d for d in range(1, size + 1) if size % d == 0 and d * d >= size)
    rows = size // cols
    found["contiguous"] = Preset(
        "contiguous", (rows, cols), (cols, 1), 0,
        "row-major: the last index moves fastest, each row follows the previous one.")
    found["transpose"] = Preset(
        "transpose", (cols, rows), (1, cols), 0,
        "x.t(): same storage, strides swapped; walking a row now jumps through storage.")
    found["broadcast_row"] = Preset(
        "broadcast_row", (rows, cols), (0, 1), 0,
        "x[0].expand(rows, cols): stride 0 repeats one row without copying it.")
    if size >= 2:
        window = max(2, min(cols, size))
        step = max(1, window // 2)
        count = (size - window) // step + 1
        found["sliding_window"] = Preset(
            "sliding_window", (count, window), (step, 1), 0,
            f"x.unfold(0, {window}, {step}): windows of {window} stepping by {step} overlap.")
    side = math.isqrt(size)
    found["diagonal"] = Preset(
        "diagonal", (side,), (side + 1,), 0,
        f"x.view({side}, {side}).diagonal(): one stride of {side + 1} hops along the diagonal.")
    if size >= 8:
        channels, height, width = (3, 2, 2) if size >= 12 else (2, 2, 2)
        found["channels_last"] = Preset(
            "channels_last", (1, channels, height, width),
            (channels * height * width, 1, width * channels, channels), 0,
            "NCHW indices over NHWC storage: the channel index moves fastest (stride 1).")
    return found


def parse_ints(text: object, what: str) -> tuple[int, ...]:
    """Read '3, 4' / '(3, 4)' / '[3 4]' (or a sequence) as integers; LayoutError says why not."""
    try:
        return parsing.parse_int_list(text, what)
    except parsing.InputError as err:
        raise layout.LayoutError(str(err)) from None


def parse_offset(text: object) -> int:
    """Read the offset field: one whole number (layout.check refuses negative values)."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    if not isinstance(text, str | bytes | bytearray):
        raise layout.LayoutError(f"offset: expected a whole number such as 0 or 2, got {text!r}.")
    try:
        return parsing.parse_int(text, "offset")
    except parsing.InputError as err:
        raise layout.LayoutError(str(err)) from None


class StrideExplorer(AddressGrid):
    """Edit shape, strides and offset over a storage of fixed size; the grid follows live.

    ``StrideExplorer(storage_size=12)`` starts on the contiguous preset; pass ``shape`` and
    ``stride`` (and ``offset``) to start elsewhere. The storage holds 0, 1, 2, ... so each
    cell shows its own index. ``propose(...)`` and ``apply_preset(name)`` are what the
    browser controls call; from Python they return whether the proposal was applied.
    """

    js_parts = ("grid_svg.js", "grid.js", "stride_explorer.js")  # the grid's drawing, then the controls

    proposal = traitlets.Dict(help="what the browser asks for; validated before use").tag(
        sync=True)
    error = traitlets.Unicode("", help="why the last proposal was refused").tag(sync=True)
    preset = traitlets.Unicode("", help="name of the preset on screen, if any").tag(sync=True)
    presets = traitlets.List(help="the presets that fit this storage").tag(sync=True)

    def __init__(
        self,
        storage_size: int = 12,
        shape: Sequence[int] | None = None,
        stride: Sequence[int] | None = None,
        offset: int = 0,
        *,
        itemsize: int = 4,
        title: str = "",
        timing_hooks: bool = False,
    ) -> None:
        size = storage_size
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_DRAWN_CELLS:
            raise traitlets.TraitError(
                f"storage_size must be a whole number from 1 to {MAX_DRAWN_CELLS}, got "
                f"{storage_size!r}; the explorer draws every storage cell.")
        self._storage_fixed = False
        super().__init__(title=title, timing_hooks=timing_hooks)
        self._preset_table = presets(size)
        start = self._preset_table["contiguous"]
        self._set_layout(
            shape if shape is not None else start.shape,
            stride if stride is not None else start.stride,
            offset, itemsize, size, [str(v) for v in range(size)])
        self._storage_fixed = True
        self.preset = "contiguous" if shape is None and stride is None and offset == 0 else ""
        self.presets = [
            {"name": p.name, "shape": list(p.shape), "stride": list(p.stride),
             "offset": p.offset, "description": p.description}
            for p in self._preset_table.values()
        ]

    def propose(self, shape: object = None, stride: object = None, offset: object = None) -> bool:
        """Apply a new shape/stride/offset if valid (text or numbers); else set `error`.

        Omitted fields keep their current values. Returns True when applied.
        """
        try:
            new_shape = self.shape if shape is None else parse_ints(shape, "shape")
            new_stride = self.stride if stride is None else parse_ints(stride, "stride")
            new_offset = self.offset if offset is None else parse_offset(offset)
            self._check(shape=new_shape, stride=new_stride, offset=new_offset)
        except (layout.LayoutError, traitlets.TraitError) as err:
            self.error = str(err)
            return False
        except Exception as err:  # noqa: BLE001 -- a browser must never crash the kernel's handler
            self.error = f"could not read the fields ({type(err).__name__}: {err}); type whole numbers."
            return False
        with self.hold_sync():
            self._set_layout(new_shape, new_stride, new_offset, self.itemsize,
                             self.storage_size, self._values)
            self.error = ""
            self.preset = ""
        return True

    def apply_preset(self, name: str) -> bool:
        """Switch to a named preset (see the module docstring); unknown names set `error`."""
        found = self._preset_table.get(name) if isinstance(name, str) else None
        if found is None:
            self.error = (f"no preset {name!r} for a storage of {self.storage_size} elements; "
                          f"choose one of {', '.join(self._preset_table)}.")
            return False
        with self.hold_sync():
            applied = self.propose(found.shape, found.stride, found.offset)
            if applied:
                self.preset = name
        return applied

    def __repr__(self) -> str:
        """Deterministic text for places where widgets cannot render (nbval, GitHub)."""
        return "StrideExplorer over " + super().__repr__().removeprefix("AddressGrid: ")

    @traitlets.validate("storage_size")
    def _valid_storage_size(self, proposal: traitlets.Bunch) -> int:
        if getattr(self, "_storage_fixed", False) and proposal["value"] != self.storage_size:
            raise traitlets.TraitError(
                f"the explorer's storage size is fixed at construction ({self.storage_size} "
                "elements); build a new StrideExplorer(storage_size=...) for another size.")
        return super()._valid_storage_size(proposal)

    @traitlets.observe("proposal")
    def _on_proposal(self, change: traitlets.Bunch) -> None:
        """Handle what the browser sent: {"preset": name} or {"shape", "stride", "offset"}."""
        asked = change["new"]
        if not asked:
            return
        if "preset" in asked:
            self.apply_preset(str(asked["preset"])[:100])
        else:
            self.propose(asked.get("shape"), asked.get("stride"), asked.get("offset"))
