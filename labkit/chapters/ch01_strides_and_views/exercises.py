"""Chapter 01's exercises, easiest first: the strides of a contiguous shape, the storage
index an element reads, and the stride `view` gives when it merges two dims (or that it
cannot). Each reference asks torch itself, never a second copy of the arithmetic."""

from __future__ import annotations

import random

import torch

from labkit.core import discovery
from labkit.exercises.grader import Exercise
from labkit.exercises.random_layouts import random_shape as _random_shape
from labkit.exercises.random_layouts import random_strides as _random_strides


def _strided(shape: tuple[int, ...], stride: tuple[int, ...], offset: int = 0) -> torch.Tensor:
    """A tensor with exactly this layout over arange storage, so each value is its storage index."""
    span = sum((n - 1) * s for n, s in zip(shape, stride, strict=True)) if all(shape) else 0
    return torch.arange(offset + span + 1).as_strided(shape, stride, offset)


# ---------------------------------------------------------------- level 1
def reference_contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    return torch.empty(shape).stride()


CONTIGUOUS_STRIDES = Exercise(
    id=discovery.exercise_id(__name__, "contiguous_strides"),
    title="the strides of a contiguous tensor",
    task="Write contiguous_strides(shape) -> tuple of ints: the strides torch gives a new "
         "contiguous tensor of that shape (torch.empty(shape).stride()), without calling torch.",
    reference=reference_contiguous_strides,
    make_case=lambda rng: (_random_shape(rng),),
    edge_cases=[((3, 4),), ((5,),), ((2, 1, 3),), ((2, 0, 3),), ((1,),)],
    hint="Which dim's stride is 1 in a row-major tensor, and how far apart are two "
         "neighbours along the dim before it? Look at what torch does with a size 0 or 1 dim.",
    level=1,
)


# ---------------------------------------------------------------- level 2
def reference_storage_index(shape: tuple[int, ...], stride: tuple[int, ...], offset: int,
                            index: tuple[int, ...]) -> int:
    return int(_strided(shape, stride, offset)[index])


def _storage_index_case(rng: random.Random) -> tuple:
    shape = tuple(rng.randint(1, 5) for _ in range(rng.randint(1, 4)))
    index = tuple(rng.randrange(n) - (n if rng.random() < 0.25 else 0) for n in shape)
    return shape, _random_strides(rng, shape), rng.randint(0, 20), index


STORAGE_INDEX = Exercise(
    id=discovery.exercise_id(__name__, "storage_index"),
    title="which storage element an index reads",
    task="Write storage_index(shape, stride, offset, index) -> int: the position in the storage "
         "(counted in elements from its start) of the element t[index], for a tensor t with this "
         "shape, stride and storage offset. Indices may be negative, as in Python.",
    reference=reference_storage_index,
    make_case=_storage_index_case,
    edge_cases=[((3, 4), (4, 1), 0, (1, 2)), ((4, 3), (1, 4), 0, (2, 1)),
                ((2, 3), (12, 2), 5, (1, 1)), ((3, 4), (0, 1), 2, (2, 3)),
                ((4, 4), (4, 1), 0, (-1, -1))],
    hint="Each dim contributes its own step count times its stride. What does Python mean "
         "by index -1?",
    level=2,
)


# ---------------------------------------------------------------- level 3
def reference_merged_stride(shape: tuple[int, ...], stride: tuple[int, ...], dim: int) -> int | None:
    merged = shape[:dim] + (shape[dim] * shape[dim + 1],) + shape[dim + 2:]
    try:
        return _strided(shape, stride).view(merged).stride()[dim]
    except RuntimeError:  # "view size is not compatible with input tensor's size and stride"
        return None


def _merged_stride_case(rng: random.Random) -> tuple:
    ndim = rng.randint(2, 4)
    dim = rng.randrange(ndim - 1)
    shape = [rng.randint(1, 5) for _ in range(ndim)]
    if shape[dim] == 1 and shape[dim + 1] == 1:  # two size-1 dims merge with any stride: not asked
        shape[dim + 1] = rng.randint(2, 5)
    return tuple(shape), _random_strides(rng, tuple(shape)), dim


MERGED_STRIDE = Exercise(
    id=discovery.exercise_id(__name__, "merged_stride"),
    title="can view merge two dims, and with which stride",
    task="t has this shape and stride. t.view(...) merges dims dim and dim + 1 into one dim of "
         "size shape[dim] * shape[dim + 1]. Write merged_stride(shape, stride, dim) -> int or "
         "None: the stride torch gives the merged dim, or None when view raises. (Never both "
         "merged sizes are 1.)",
    reference=reference_merged_stride,
    make_case=_merged_stride_case,
    edge_cases=[((3, 4), (4, 1), 0), ((4, 3), (1, 4), 0), ((2, 3, 4), (12, 4, 1), 1),
                ((3, 2, 4), (4, 12, 1), 0), ((3, 4), (0, 1), 0), ((3, 1), (2, 7), 0),
                ((1, 5), (9, 2), 0)],
    hint="After the last element of a row of dim + 1, where does the next element along dim "
         "sit in memory? Does a dim of size 1 ever get stepped along?",
    level=3,
)

EXERCISES = [CONTIGUOUS_STRIDES, STORAGE_INDEX, MERGED_STRIDE]
