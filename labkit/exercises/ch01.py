"""Chapter 01's exercises: strides of a contiguous shape, the storage offset of an index,
and whether `view` can merge two dims. Each reference asks torch itself."""

from __future__ import annotations

import random

import torch

from labkit.exercises import Exercise


def _random_shape(rng: random.Random, max_dims: int = 4, max_size: int = 6) -> tuple[int, ...]:
    return tuple(rng.randint(0 if rng.random() < 0.05 else 1, max_size)
                 for _ in range(rng.randint(1, max_dims)))


def reference_contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    return torch.empty(shape).stride()


CONTIGUOUS_STRIDES = Exercise(
    id="01.contiguous_strides",
    title="the strides of a contiguous tensor",
    task="Write contiguous_strides(shape) -> tuple of ints: the strides torch gives a new "
         "contiguous tensor of that shape (torch.empty(shape).stride()), without calling torch.",
    reference=reference_contiguous_strides,
    make_case=lambda rng: (_random_shape(rng),),
    edge_cases=[((3, 4),), ((5,),), ((2, 1, 3),), ((2, 0, 3),), ((1,),)],
    hint="Walk the shape from the last dim to the first; each stride is the product of the "
         "sizes after it. Look at what torch does with a size 0 or 1 dim.",
    level=1,
)

EXERCISES = [CONTIGUOUS_STRIDES]
