"""Chapter 03's exercises, easiest first: the strides of a channels_last tensor, and which
logical element [n, c, h, w] sits at a given place in its storage. Each reference asks torch."""

from __future__ import annotations

import random

import torch

from labkit.core import discovery
from labkit.exercises.grader import Exercise


def _image_shape(rng: random.Random) -> tuple[int, int, int, int]:
    return tuple(rng.randint(0 if rng.random() < 0.03 else 1, 6) for _ in range(4))  # type: ignore[return-value]


# ---------------------------------------------------------------- level 1
def reference_channels_last_strides(shape: tuple[int, int, int, int]) -> tuple[int, ...]:
    return torch.empty(shape, memory_format=torch.channels_last).stride()


CHANNELS_LAST_STRIDES = Exercise(
    id=discovery.exercise_id(__name__, "channels_last_strides"),
    title="the strides of a channels_last tensor",
    task="Write channels_last_strides(shape) -> tuple of 4 ints: the strides of "
         "torch.empty(shape, memory_format=torch.channels_last) for a shape [N, C, H, W], "
         "without calling torch.",
    reference=reference_channels_last_strides,
    make_case=lambda rng: (_image_shape(rng),),
    edge_cases=[((2, 3, 4, 5),), ((1, 3, 2, 2),), ((2, 1, 4, 5),), ((2, 3, 1, 1),), ((2, 0, 3, 3),)],
    hint="The shape stays [N, C, H, W]; only the storage order changes. In that order, "
         "which dim is fastest? Check what torch does with a size-0 dim.",
    level=1,
)


# ---------------------------------------------------------------- level 2
def reference_element_at(shape: tuple[int, int, int, int], position: int) -> tuple[int, ...]:
    numbered = torch.empty(shape, memory_format=torch.channels_last, dtype=torch.int64)
    numbered.as_strided((numbered.numel(),), (1,)).copy_(torch.arange(numbered.numel()))
    found = (numbered == position).nonzero()
    return tuple(int(i) for i in found[0])


def _element_case(rng: random.Random) -> tuple:
    shape = tuple(rng.randint(1, 5) for _ in range(4))
    return shape, rng.randrange(shape[0] * shape[1] * shape[2] * shape[3])


ELEMENT_AT = Exercise(
    id=discovery.exercise_id(__name__, "element_at"),
    title="which element sits at a place in channels_last storage",
    task="Write element_at(shape, position) -> (n, c, h, w): the logical index of the element "
         "stored at `position` (counted in elements from the start of the storage) of a "
         "channels_last tensor of shape [N, C, H, W].",
    reference=reference_element_at,
    make_case=_element_case,
    edge_cases=[((1, 3, 2, 2), 0), ((1, 3, 2, 2), 1), ((1, 3, 2, 2), 3), ((2, 3, 4, 5), 59),
                ((2, 3, 4, 5), 60), ((1, 1, 1, 1), 0)],
    hint="It is the inverse of computing a position from an index: peel the fastest dim off "
         "first. Return the index in the order n, c, h, w.",
    level=2,
)

EXERCISES = [CHANNELS_LAST_STRIDES, ELEMENT_AT]
