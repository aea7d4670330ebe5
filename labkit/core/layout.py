"""Stride arithmetic: where each element of a tensor sits in its storage.

A tensor is a window on a flat storage: element (i0, i1, ...) lives at storage index
``offset + i0*stride0 + i1*stride1 + ...`` and at byte address ``base + itemsize * that``.
Everything here is pure arithmetic on (shape, stride, offset, itemsize), so it can explain
a layout before any memory is touched, and it is checked against what torch does.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

# Above this many elements, overlap is decided by a sound rule instead of enumeration.
ENUMERATE_LIMIT = 1 << 20
# element_offsets() refuses to build arrays larger than this (they would not fit a notebook).
OFFSETS_LIMIT = 1 << 22
# Nothing a real tensor can address goes beyond this (int64 arithmetic must not overflow).
MAX_INDEX = 1 << 62
# torch keeps sizes, strides and offsets in int64: every number must be below this.
INT64_LIMIT = 1 << 63
# Layouts and view targets have at most this many dimensions: numpy's limit for the
# element_offsets array (torch allows more; a layout with thousands of dims is a typo).
MAX_NDIM = 64
# The largest element torch has is 16 bytes (complex128); a few times that leaves room for
# teaching examples while keeping every byte address inside int64.
MAX_ITEMSIZE = 64

MEMORY_FORMATS = ("contiguous_format", "channels_last", "channels_last_3d")
# Dimension order from fastest to slowest for each memory format (torch's c10/core/Contiguity.h).
_FORMAT_ORDER = {"channels_last": (1, 3, 2, 0), "channels_last_3d": (1, 4, 3, 2, 0)}
_FORMAT_NDIM = {"channels_last": 4, "channels_last_3d": 5}

_VIEW_FAILS = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)


class LayoutError(ValueError):
    """A shape, stride, offset or index that cannot describe a tensor; the message says why."""


class NotALayoutError(LayoutError, TypeError):
    """Something that is neither a tensor nor a Layout was given (a TypeError and a LayoutError)."""


def _as_int(value: object, what: str) -> int:
    """Accept Python/numpy/torch integers only; bools, floats and strings are refused."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise LayoutError(
            f"{what} must be an integer, got {value!r} ({type(value).__name__}); "
            "use whole numbers such as 3, not 3.0, True or '3'."
        )
    return int(value)


def _as_int_tuple(values: object, what: str, max_len: int = MAX_NDIM) -> tuple[int, ...]:
    """Turn a sequence (list, tuple, torch.Size) into a tuple of ints, refusing anything else.

    The length is checked before any element is read, so a million-entry list is refused
    at once instead of being converted first.
    """
    if isinstance(values, str | bytes | bytearray) or not isinstance(
            values, Sequence | np.ndarray | torch.Size):
        shown = repr(values) if len(repr(values)) < 80 else repr(values)[:77] + "..."
        raise LayoutError(f"{what} must be a sequence of integers such as (3, 4), got {shown}.")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise LayoutError(f"{what} must be a flat sequence of integers, got an array of shape "
                          f"{values.shape}.")
    if len(values) > max_len:
        raise LayoutError(
            f"{what} has {len(values)} entries; labkit handles up to {max_len} dimensions "
            "(numpy's limit for the offsets array). Use fewer dimensions.")
    return tuple(_as_int(v, f"{what}[{k}]") for k, v in enumerate(values))


def _check_int64(value: int, what: str) -> None:
    if not -INT64_LIMIT <= value < INT64_LIMIT:
        raise LayoutError(f"{what} = {value} does not fit in int64 (torch's index type, "
                          f"-2**63 .. 2**63 - 1); use a smaller number.")


@dataclass(frozen=True)
class Layout:
    """Shape, strides (in elements), storage offset, item size (bytes) and storage size.

    Construction validates everything (see check()), so a Layout always describes a
    tensor torch could build: no negative sizes or strides, no reach outside storage.
    """

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int = 0
    itemsize: int = 4
    storage_size: int | None = None  # in elements; None = "as large as needed"

    def __post_init__(self) -> None:
        shape = _as_int_tuple(self.shape, "shape")
        stride = _as_int_tuple(self.stride, "stride")
        offset = _as_int(self.offset, "offset")
        itemsize = _as_int(self.itemsize, "itemsize")
        if len(shape) != len(stride):
            raise LayoutError(
                f"shape {shape} has {len(shape)} dimensions but stride {stride} has "
                f"{len(stride)}; give one stride per dimension."
            )
        for d, size in enumerate(shape):
            if size < 0:
                raise LayoutError(f"shape[{d}] = {size} is negative; sizes must be >= 0.")
            _check_int64(size, f"shape[{d}]")
        for d, step in enumerate(stride):
            _check_int64(step, f"stride[{d}]")
            if step < 0:
                raise LayoutError(
                    f"stride[{d}] = {step} is negative; torch supports only strides >= 0 "
                    "(use .flip() to reverse a dimension, which copies)."
                )
        if offset < 0:
            raise LayoutError(f"offset = {offset} is negative; the storage offset must be >= 0.")
        if itemsize <= 0:
            raise LayoutError(f"itemsize = {itemsize} must be a positive number of bytes.")
        if itemsize > MAX_ITEMSIZE:
            raise LayoutError(f"itemsize = {itemsize} bytes is larger than any dtype "
                              f"(torch's largest is 16, complex128); use 1 to {MAX_ITEMSIZE}.")
        _check_int64(offset, "offset")
        # An empty tensor addresses nothing: torch's as_strided builds it with any int64 offset
        # and strides (even 2**63 - 1), so labkit agrees; the 2**62 reach applies to elements.
        empty = 0 in shape
        if offset > MAX_INDEX and not empty:
            raise LayoutError(f"offset = {offset} is beyond 2**62 elements, more than any "
                              "storage can hold; use a smaller offset.")
        if not empty and (math.prod(shape) > MAX_INDEX or _last_index(shape, stride, offset) > MAX_INDEX):
            raise LayoutError(
                f"shape {shape} with stride {stride} is too large to address (beyond 2**62 "
                "elements); use smaller sizes or strides."
            )
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "itemsize", itemsize)
        if self.storage_size is not None:
            storage_size = _as_int(self.storage_size, "storage_size")
            if storage_size < 0:
                raise LayoutError(f"storage_size = {storage_size} is negative.")
            if storage_size > MAX_INDEX:
                raise LayoutError(f"storage_size = {storage_size} is beyond 2**62 elements, more "
                                  "than any machine holds; use a smaller storage_size.")
            object.__setattr__(self, "storage_size", storage_size)
            if self.numel > 0 and self.max_index >= storage_size:
                raise LayoutError(
                    f"shape {shape}, stride {stride}, offset {offset} reaches storage index "
                    f"{self.max_index}, but the storage holds only {storage_size} elements "
                    f"(indices 0..{storage_size - 1}); use smaller sizes, strides or offset."
                )

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def numel(self) -> int:
        """Number of elements (logical, not storage)."""
        return math.prod(self.shape)

    @property
    def max_index(self) -> int:
        """Largest storage index any element reaches (offset - 1 when the tensor is empty)."""
        if self.numel == 0:
            return self.offset - 1
        return _last_index(self.shape, self.stride, self.offset)

    @property
    def nbytes(self) -> int:
        """Bytes of the elements themselves (numel * itemsize)."""
        return self.numel * self.itemsize


def _last_index(shape: tuple[int, ...], stride: tuple[int, ...], offset: int) -> int:
    return offset + sum((n - 1) * s for n, s in zip(shape, stride, strict=True) if n > 0)


def check(
    shape: Sequence[int],
    stride: Sequence[int],
    offset: int = 0,
    itemsize: int = 4,
    storage_size: int | None = None,
) -> Layout:
    """Validate a layout and return it; LayoutError says what is wrong and how to fix it."""
    return Layout(shape, stride, offset, itemsize, storage_size)


SUPPORTED_TENSORS = ("dense (strided) tensors on the CPU or a GPU; sparse, nested, quantized "
                     "and meta tensors have no storage layout that labkit can draw")


def check_tensor(t: object) -> torch.Tensor:
    """Accept a dense strided tensor with real storage; refuse other kinds saying what works.

    Sparse tensors keep indices and values instead of strides, nested tensors have no
    single stride, quantized tensors store integers with a scale, and meta tensors have
    no memory at all: none has the one-storage-many-strides picture labkit draws.
    """
    if not isinstance(t, torch.Tensor):
        raise NotALayoutError(f"expected a torch.Tensor, got {type(t).__name__}; labkit draws "
                              f"{SUPPORTED_TENSORS}.")
    kind = None
    if getattr(t, "is_nested", False):
        kind = "a nested tensor"
    elif t.layout != torch.strided:
        kind = f"a {t.layout} tensor"
    elif t.is_quantized:
        kind = "a quantized tensor"
    elif t.device.type == "meta":
        kind = "a meta tensor (shapes only, no memory)"
    if kind:
        raise LayoutError(f"labkit cannot lay out {kind}: it works on {SUPPORTED_TENSORS}. "
                          "Use .to_dense(), .dequantize(), or a real device first.")
    return t


def of(t: torch.Tensor) -> Layout:
    """The Layout of a real tensor, with its storage size in elements."""
    t = check_tensor(t)
    itemsize = t.element_size()
    return Layout(
        tuple(t.shape), t.stride(), t.storage_offset(), itemsize,
        t.untyped_storage().nbytes() // itemsize,
    )


def _layout(obj: Layout | torch.Tensor) -> Layout:
    if isinstance(obj, Layout):
        return obj
    if not isinstance(obj, torch.Tensor):
        raise NotALayoutError(f"expected a labkit.core.layout.Layout or a torch.Tensor, got "
                              f"{type(obj).__name__}; build one with layout.check(shape, stride).")
    return of(obj)


def element_offsets(lay: Layout | torch.Tensor) -> np.ndarray:
    """Storage index of every element, as an int64 array shaped like the tensor."""
    lay = _layout(lay)
    if lay.numel > OFFSETS_LIMIT:
        raise LayoutError(
            f"{lay.numel} elements is too many to list (limit {OFFSETS_LIMIT}); "
            "use element_offset(lay, index) for single elements."
        )
    try:
        result = np.full(lay.shape, lay.offset, dtype=np.int64)
    except ValueError:  # an empty shape whose other sizes are too big for numpy (e.g. (0, 2**61))
        raise LayoutError(
            f"numpy cannot hold an array of shape {lay.shape} (its sizes multiply past "
            "2**63 bytes), even an empty one; this layout has no elements to list.") from None
    for d, (size, step) in enumerate(zip(lay.shape, lay.stride, strict=True)):
        axis_shape = [1] * lay.ndim
        axis_shape[d] = size
        result += (np.arange(size, dtype=np.int64) * step).reshape(axis_shape)
    return result


def _normalise_index(lay: Layout, index: int | Sequence[int]) -> tuple[int, ...]:
    """Check an element index; negative entries count from the end, as in torch indexing."""
    if isinstance(index, str | bytes | bytearray | memoryview):
        # bytes are a Sequence of ints: b"\x01" would otherwise read as the index (1,)
        raise LayoutError(f"index must be an integer or a sequence of integers such as (1, 2), "
                          f"got {index!r} ({type(index).__name__}).")
    if isinstance(index, np.ndarray) and index.ndim == 0:
        index = index[()]  # a numpy scalar array: its one value, checked as an integer below
    if not isinstance(index, Sequence | torch.Size | np.ndarray):
        index = (index,)
    idx = _as_int_tuple(index, "index")
    if len(idx) != lay.ndim:
        raise LayoutError(
            f"index {idx} has {len(idx)} entries but the tensor has {lay.ndim} dimensions "
            f"(shape {lay.shape}); give one index per dimension."
        )
    out = []
    for d, (i, size) in enumerate(zip(idx, lay.shape, strict=True)):
        if not -size <= i < size:
            raise LayoutError(
                f"index[{d}] = {i} is out of range for dimension {d} of size {size}; "
                f"use 0..{size - 1}."
            )
        out.append(i + size if i < 0 else i)
    return tuple(out)


def element_offset(lay: Layout | torch.Tensor, index: int | Sequence[int]) -> int:
    """Storage index (in elements) of one element: offset + sum(index_k * stride_k)."""
    lay = _layout(lay)
    idx = _normalise_index(lay, index)
    return lay.offset + sum(i * s for i, s in zip(idx, lay.stride, strict=True))


def byte_address(lay: Layout | torch.Tensor, index: int | Sequence[int], base: int = 0) -> int:
    """Byte address of one element: base + itemsize * element_offset."""
    lay = _layout(lay)
    return _as_int(base, "base") + lay.itemsize * element_offset(lay, index)


def address_formula(
    lay: Layout | torch.Tensor, index: int | Sequence[int], base: int | None = None
) -> str:
    """The address formula with this element's numbers filled in, for reading aloud.

    Example: ``base + 4 B × (offset 0 + 1×4 + 2×1) = base + 4 B × 6 = base + 24 B``.
    With an integer base the result is a hex address.
    """
    lay = _layout(lay)
    idx = _normalise_index(lay, index)
    terms = "".join(f" + {i}×{s}" for i, s in zip(idx, lay.stride, strict=True))
    offset = element_offset(lay, idx)
    start = "base" if base is None else hex(_as_int(base, "base"))
    text = f"{start} + {lay.itemsize} B × (offset {lay.offset}{terms})"
    text += f" = {start} + {lay.itemsize} B × {offset}"
    if base is None:
        return f"{text} = base + {lay.itemsize * offset} B"
    return f"{text} = {hex(base + lay.itemsize * offset)}"


def addresses(t: torch.Tensor) -> np.ndarray:
    """Real byte address of every element (from the storage's data_ptr), int64, shaped like t."""
    lay = of(t)
    return t.untyped_storage().data_ptr() + lay.itemsize * element_offsets(lay)


def _memory_format_name(memory_format: object) -> str:
    names = {torch.contiguous_format: "contiguous_format", torch.channels_last: "channels_last",
             torch.channels_last_3d: "channels_last_3d"}
    if isinstance(memory_format, torch.memory_format):
        memory_format = names.get(memory_format, str(memory_format))
    # `in` on a numpy array compares elementwise (a raw numpy error): only a str can match.
    if not isinstance(memory_format, str) or memory_format not in MEMORY_FORMATS:
        raise LayoutError(
            f"memory_format {memory_format!r} is not one of {MEMORY_FORMATS}."
        )
    return memory_format


def is_contiguous(lay: Layout | torch.Tensor, memory_format: object = "contiguous_format") -> bool:
    """Does the layout match torch's rule for this memory format?

    Walk the dimensions from fastest to slowest (last to first for contiguous_format;
    C, W, H, N for channels_last); each dimension of size != 1 must have stride equal to
    the product of the sizes walked so far. Size-1 dimensions are skipped because their
    stride is never used. An empty tensor is contiguous in contiguous_format (torch's rule);
    channels_last needs 4 dimensions and channels_last_3d 5, else the answer is False.
    """
    lay = _layout(lay)
    fmt = _memory_format_name(memory_format)
    if fmt == "contiguous_format":
        if lay.numel == 0:
            return True
        order: Sequence[int] = range(lay.ndim - 1, -1, -1)
    else:
        if lay.ndim != _FORMAT_NDIM[fmt]:
            return False
        order = _FORMAT_ORDER[fmt]
    expected = 1
    for d in order:
        if lay.shape[d] != 1:
            if lay.stride[d] != expected:
                return False
            expected *= lay.shape[d]
    return True


@dataclass(frozen=True)
class Classification:
    """What kind of layout this is, one line saying why, and every property that holds."""

    kind: str
    explanation: str
    flags: frozenset[str]


def overlaps(lay: Layout | torch.Tensor) -> bool | None:
    """True if two different indices reach the same storage element; None if undecidable here.

    Exact by enumeration up to ENUMERATE_LIMIT elements. Above it, a sound rule: sort the
    dims of size > 1 by stride; if each stride is larger than the furthest reach of all
    smaller-stride dims together, no two indices can collide (False). If there are more
    elements than storage cells in the span, two must collide (True). Otherwise None.
    """
    lay = _layout(lay)
    if lay.numel <= 1:
        return False
    if any(s == 0 and n > 1 for n, s in zip(lay.shape, lay.stride, strict=True)):
        return True
    if lay.numel <= ENUMERATE_LIMIT:
        flat = element_offsets(lay).ravel()
        return bool(np.unique(flat).size != flat.size)
    reach = 0
    for n, s in sorted((p for p in zip(lay.shape, lay.stride, strict=True) if p[0] > 1),
                       key=lambda p: p[1]):
        if s <= reach:
            break
        reach += (n - 1) * s
    else:
        return False
    if lay.numel > lay.max_index - lay.offset + 1:
        return True
    return None


def classify(lay: Layout | torch.Tensor) -> Classification:
    """Name the layout: contiguous, permuted, broadcast, overlapping or gaps (or empty/scalar).

    Flags can hold several at once (e.g. {"permuted", "gaps"} for a strided slice of a
    transpose); kind is the most important one, in the order above read right to left.
    """
    lay = _layout(lay)
    flags: set[str] = set()
    if lay.ndim == 0:
        return Classification("scalar", "0-dimensional: one element at storage index "
                              f"{lay.offset}, no strides.", frozenset({"scalar", "contiguous"}))
    if lay.numel == 0:
        return Classification("empty", f"shape {lay.shape} has no elements, so no storage is "
                              "read and strides do not matter.", frozenset({"empty", "contiguous"}))
    big = [(d, n, s) for d, (n, s) in enumerate(zip(lay.shape, lay.stride, strict=True)) if n > 1]
    if lay.offset:
        flags.add("offset")
    if is_contiguous(lay):
        flags.add("contiguous")
    for fmt in ("channels_last", "channels_last_3d"):
        if is_contiguous(lay, fmt):
            flags.add(fmt)
    moving = [s for _, _, s in big if s != 0]
    if any(moving[k] < moving[k + 1] for k in range(len(moving) - 1)):
        flags.add("permuted")
    zero = [d for d, _, s in big if s == 0]
    overlap = overlaps(lay)
    span = lay.max_index - lay.offset + 1
    if zero:
        flags.add("broadcast")
    elif overlap:
        flags.add("overlapping")
    elif overlap is None:
        flags.add("overlap_unknown")
    if not overlap and lay.numel < span:
        flags.add("gaps")

    if zero:
        dims = ", ".join(str(d) for d in zero)
        text = (f"stride 0 on dim {dims}: every index along it reads the same storage, "
                f"{lay.numel} elements from {_distinct(lay)} storage cells.")
        return Classification("broadcast", text, frozenset(flags))
    if overlap:
        text = (f"no stride is 0, yet {lay.numel} elements read only {_distinct(lay)} storage "
                "cells: some indices reach the same element, so writing one changes others.")
        return Classification("overlapping", text, frozenset(flags))
    if overlap is None:
        text = (f"{lay.numel} elements is too many to check every pair, and the strides do not "
                "prove the elements are distinct: this layout may overlap.")
        return Classification("overlapping", text, frozenset(flags))
    if "contiguous" in flags:
        text = f"row-major: strides {lay.stride} are the running products of shape {lay.shape}."
        return Classification("contiguous", text, frozenset(flags))
    if "gaps" in flags:
        text = (f"the elements use {lay.numel} of the {span} storage cells between the first "
                f"and the last element; the other {span - lay.numel} are skipped.")
        return Classification("gaps", text, frozenset(flags))
    text = (f"dense but not row-major: the {lay.numel} elements fill storage without gaps, "
            f"in another order (strides {lay.stride}), as after transpose/permute.")
    return Classification("permuted", text, frozenset(flags | {"permuted"}))


def _distinct(lay: Layout) -> str:
    if lay.numel <= ENUMERATE_LIMIT:
        return str(np.unique(element_offsets(lay)).size)
    return "fewer"


@dataclass(frozen=True)
class ViewCheck:
    """Whether Tensor.view(new_shape) succeeds: the new strides, or the reason it fails."""

    ok: bool
    stride: tuple[int, ...] | None
    reason: str
    shape: tuple[int, ...] | None = None  # the new shape with -1 filled in


def _wrap64(value: int) -> int:
    """value as a C++ int64 holds it after overflow (two's complement wrap-around)."""
    return (value + INT64_LIMIT) % (2 * INT64_LIMIT) - INT64_LIMIT


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    """torch's infer_size (aten/src/ATen/InferSize.h), messages and int64 arithmetic included.

    The running product is an int64 in ATen and wraps on overflow, so a huge target shape
    can pass this step and fail later with torch's "numel" overflow message, as in torch.
    """
    infer = None
    known = 1
    for d, size in enumerate(shape):
        if size == -1:
            if infer is not None:
                raise LayoutError("only one dimension can be inferred")
            infer = d
        elif size >= 0:
            known = _wrap64(known * size)
        else:
            raise LayoutError(
                f"invalid shape dimension {size} at index {d} of shape {_shape_text(shape)}")
    wanted = list(shape)
    if numel == known or (infer is not None and known > 0 and numel % known == 0):
        if infer is not None:
            if known == 0:
                raise LayoutError(
                    f"cannot reshape tensor of {numel} elements into shape {_shape_text(shape)} "
                    "because the unspecified dimension size -1 can be any value and is ambiguous")
            wanted[infer] = numel // known
        return tuple(wanted)
    raise LayoutError(f"shape '{_shape_text(shape)}' is invalid for input of size {numel}")


def _numel_overflows(shape: Sequence[int]) -> bool:
    """c10's safe_compute_numel: the product taken in uint64, flagged once it overflows."""
    product, overflow = 1, False
    for size in shape:
        product *= size
        if product >= 1 << 64:
            overflow = True
            product %= 1 << 64
    return overflow or product >= INT64_LIMIT


def _compute_stride(
    old_shape: tuple[int, ...], old_stride: tuple[int, ...], new_shape: tuple[int, ...]
) -> tuple[int, ...] | None:
    """Port of ATen's computeStride (aten/src/ATen/TensorUtils.cpp).

    Split the old shape into chunks of dimensions that are contiguous with each other
    (stride[i] == size[i+1] * stride[i+1]); the new shape must split into chunks with the
    same element counts, each of which then gets strides from its chunk's base stride.
    Products are int64 as in ATen and wrap; for an empty tensor ATen refuses a stride that
    wrapped to a negative number ("Stride calculation overflowed", raised here as
    LayoutError), while one that wrapped to 0 or above passes, as it does in torch.
    """
    if not old_shape:
        return (1,) * len(new_shape)
    numel = math.prod(old_shape)
    if numel == 0 and old_shape == new_shape:
        return old_stride
    new_stride = [0] * len(new_shape)
    if numel == 0:
        for d in range(len(new_shape) - 1, -1, -1):
            if d == len(new_shape) - 1:
                new_stride[d] = 1
            else:
                # ATen multiplies in int64 (wrapping) and refuses a negative result.
                new_stride[d] = _wrap64(max(new_shape[d + 1], 1) * new_stride[d + 1])
                if new_stride[d] < 0:
                    raise LayoutError("Stride calculation overflowed")
        return tuple(new_stride)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_stride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = _wrap64(view_numel * chunk_base_stride)
                view_numel = _wrap64(view_numel * new_shape[view_d])
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)


def can_view(lay: Layout | torch.Tensor, new_shape: int | Sequence[int]) -> ViewCheck:
    """Predict Tensor.view(new_shape): the strides it would get, or torch's reason to refuse.

    The reason is torch's own error text, checked in the same order as ATen (infer the -1,
    compute the strides, then check the element count fits int64). A target with more than
    MAX_NDIM dimensions, or entries that are not integers, raise LayoutError instead.
    """
    lay = _layout(lay)
    if isinstance(new_shape, numbers.Integral) and not isinstance(new_shape, bool | np.bool_):
        new_shape = (new_shape,)
    shape = _as_int_tuple(new_shape, "new_shape")
    for d, size in enumerate(shape):
        _check_int64(size, f"new_shape[{d}]")
    try:
        shape = _infer_shape(shape, lay.numel)
        stride = _compute_stride(lay.shape, lay.stride, shape)
    except LayoutError as err:
        return ViewCheck(False, None, str(err))
    if stride is None:
        return ViewCheck(False, None, _VIEW_FAILS, shape)
    if _numel_overflows(shape):
        return ViewCheck(False, None, "numel: integer multiplication overflow", shape)
    return ViewCheck(True, stride, f"view works: shape {shape} with strides {stride} reads the "
                     "same storage cells in the same order, no copy.", shape)


def safe_as_strided(
    t: torch.Tensor,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> torch.Tensor:
    """torch.as_strided that first proves the view stays inside t's storage.

    Raw as_strided trusts its arguments; this checks the largest reachable storage index
    against the storage size (as torch's own bounds check does, and with the same exception
    for empty views), so nothing outside the storage is ever read. storage_offset=None
    keeps t's own storage offset, as Tensor.as_strided does.
    """
    t = check_tensor(t)
    if storage_offset is None:
        storage_offset = t.storage_offset()
    storage = of(t).storage_size
    try:
        lay = Layout(size, stride, storage_offset, t.element_size())
    except LayoutError as err:
        raise LayoutError(f"as_strided refused: {err}") from None
    if lay.numel > 0 and lay.max_index >= storage:
        raise LayoutError(
            f"as_strided refused: size {lay.shape}, stride {lay.stride}, offset {lay.offset} "
            f"reaches storage index {lay.max_index}, but the storage holds only {storage} "
            f"elements (0..{storage - 1}); reduce the sizes, strides or offset."
        )
    return t.as_strided(lay.shape, lay.stride, lay.offset)
