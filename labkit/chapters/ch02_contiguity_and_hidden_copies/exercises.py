"""Chapter 02's exercises, easiest first: how many bytes `.contiguous()` copies for a layout,
and whether a layout is contiguous in a memory format. Each reference asks torch itself (the
copy detector watches the real `.contiguous()`), never a second copy of the arithmetic."""

from __future__ import annotations

import random

import torch

from labkit.core import discovery
from labkit.exercises.grader import Exercise
from labkit.exercises.random_layouts import random_strides as _random_strides
from labkit.measure import copies

ITEMSIZES = (1, 2, 4, 8)
_DTYPE_OF_ITEMSIZE = {1: torch.uint8, 2: torch.float16, 4: torch.float32, 8: torch.float64}


def _random_shape(rng: random.Random, dims: int | None = None) -> tuple[int, ...]:
    return tuple(rng.randint(0 if rng.random() < 0.04 else 1, 5)
                 for _ in range(dims or rng.randint(1, 4)))


# ---------------------------------------------------------------- level 1
def reference_contiguous_bytes(shape: tuple[int, ...], stride: tuple[int, ...], itemsize: int) -> int:
    return copies.bytes_copied(lambda: _layout(shape, stride, _DTYPE_OF_ITEMSIZE[itemsize]).contiguous())


def _layout(shape: tuple[int, ...], stride: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """An uninitialised tensor with exactly this shape and stride (any strides, overlaps too)."""
    storage = torch.empty(_span(shape, stride), dtype=dtype).untyped_storage()
    return torch.empty(0, dtype=dtype).set_(storage, 0, shape, stride)


def _span(shape: tuple[int, ...], stride: tuple[int, ...]) -> int:
    return (sum((n - 1) * s for n, s in zip(shape, stride, strict=True)) + 1) if all(shape) else 1


def _bytes_case(rng: random.Random) -> tuple:
    shape = _random_shape(rng)
    return shape, _random_strides(rng, shape), rng.choice(ITEMSIZES)


CONTIGUOUS_BYTES = Exercise(
    id=discovery.exercise_id(__name__, "contiguous_bytes"),
    title="how many bytes .contiguous() copies",
    task="Write contiguous_bytes(shape, stride, itemsize) -> int: the bytes t.contiguous() copies: "
         "0 when torch calls t contiguous (it returns t), else every element once.",
    reference=reference_contiguous_bytes,
    make_case=_bytes_case,
    edge_cases=[((3, 4), (4, 1), 4), ((4, 3), (1, 4), 4), ((2, 1, 3), (3, 99, 1), 2),
                ((3, 0, 2), (1, 3, 5), 8), ((6,), (2,), 1), ((4, 4), (0, 1), 4)],
    hint="Compare the strides with the ones a fresh tensor of that shape would have. Which "
         "dims are never stepped along, and what about a tensor with no elements?",
    level=1,
)


# ---------------------------------------------------------------- level 2
FORMATS = ("contiguous_format", "channels_last")


def reference_is_contiguous_in(shape: tuple[int, ...], stride: tuple[int, ...], memory_format: str) -> bool:
    return bool(_layout(shape, stride).is_contiguous(memory_format=getattr(torch, memory_format)))


def _format_case(rng: random.Random) -> tuple:
    shape = tuple(rng.randint(1, 5) for _ in range(4))  # empty tensors have their own rules per format
    if rng.random() < 0.4:  # a real channels_last layout, sometimes with its strides disturbed
        n, c, h, w = shape
        stride = [h * w * c, 1, w * c, c]
        stride = [max(s, 1) for s in stride]
        if rng.random() < 0.3:
            stride[rng.randrange(4)] *= 2
        return shape, tuple(stride), rng.choice(FORMATS)
    return shape, _random_strides(rng, shape), rng.choice(FORMATS)


IS_CONTIGUOUS_IN = Exercise(
    id=discovery.exercise_id(__name__, "is_contiguous_in"),
    title="contiguous in which memory format",
    task="Write is_contiguous_in(shape, stride, memory_format) -> bool for a 4-D [N, C, H, W] "
         "layout: what t.is_contiguous(memory_format=torch.<memory_format>) says, for "
         "'contiguous_format' or 'channels_last' (stored N, H, W, C).",
    reference=reference_is_contiguous_in,
    make_case=_format_case,
    edge_cases=[((2, 3, 4, 5), (60, 20, 5, 1), "contiguous_format"),
                ((2, 3, 4, 5), (60, 1, 15, 3), "channels_last"),
                ((2, 3, 4, 5), (60, 20, 5, 1), "channels_last"),
                ((2, 1, 4, 5), (20, 20, 5, 1), "channels_last"),
                ((2, 3, 1, 1), (3, 1, 3, 3), "contiguous_format")],
    hint="channels_last is row-major over the dims in another order. Which order, and what "
         "did the contiguous_format case teach you about dims of size 1?",
    level=2,
)

EXERCISES = [CONTIGUOUS_BYTES, IS_CONTIGUOUS_IN]
