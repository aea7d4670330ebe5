"""Chapter 05's exercises: the bytes of a batch, the strides the DataLoader's collate gives
it, and where channels_last can go (C26). Every reference asks torch (a meta tensor,
default_collate, Tensor.contiguous), never a labkit formula, and no task states the rule."""

from __future__ import annotations

import random

import torch
from torch.utils.data import default_collate

from labkit.core import discovery
from labkit.exercises.grader import Exercise

_DTYPES = ("uint8", "float16", "bfloat16", "float32", "float64")


def reference_batch_bytes(batch_size: int, channels: int, side: int, dtype: str) -> int:
    return torch.empty((batch_size, channels, side, side), dtype=getattr(torch, dtype),
                       device="meta").nbytes


BATCH_BYTES = Exercise(
    id=discovery.exercise_id(__name__, "batch_bytes"),
    title="the bytes of one collated batch",
    task="Write batch_bytes(batch_size, channels, side, dtype) -> int: how many bytes a batch "
         "of square images [batch_size, channels, side, side] takes, dtype given by name "
         "('uint8', 'float16', 'bfloat16', 'float32', 'float64'), without calling torch.",
    reference=reference_batch_bytes,
    make_case=lambda rng: (rng.randint(1, 512), rng.choice((1, 3, 4)), rng.randint(8, 512),
                           rng.choice(_DTYPES)),
    edge_cases=[(256, 3, 224, "float32"), (256, 3, 224, "uint8"), (1, 1, 8, "bfloat16")],
    hint="Elements times bytes per element; a bfloat16 takes as many bytes as a float16.",
    level=1,
)


def reference_collated_stride(batch_size: int, sample_shape: tuple[int, ...]) -> tuple[int, ...]:
    samples = [torch.empty(sample_shape) for _ in range(batch_size)]
    return tuple(default_collate(samples).stride())


def _random_sample_shape(rng: random.Random) -> tuple[int, tuple[int, ...]]:
    return rng.randint(1, 8), tuple(rng.randint(1, 7) for _ in range(rng.randint(1, 3)))


COLLATED_STRIDE = Exercise(
    id=discovery.exercise_id(__name__, "collated_stride"),
    title="the strides of a collated batch",
    task="A Dataset returns contiguous samples of one shape; the DataLoader's default collate "
         "turns batch_size of them into one batch tensor. Write collated_stride(batch_size, "
         "sample_shape) -> tuple: that batch's strides, in elements. Checked against "
         "torch.utils.data.default_collate.",
    reference=reference_collated_stride,
    make_case=_random_sample_shape,
    edge_cases=[(4, (3, 5, 5)), (1, (3, 2, 2)), (3, (7,)), (2, (1, 4, 1))],
    hint="Collating stacks the samples along a new first dimension; what does one step along "
         "it skip over?",
    level=2,
)


def reference_channels_last_stride(shape: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(torch.empty(shape).contiguous(memory_format=torch.channels_last).stride())
    except RuntimeError:
        return None


def _random_layout_shape(rng: random.Random) -> tuple[tuple[int, ...]]:
    # sizes from 2: with a size-1 dimension torch may keep a tensor that already counts as
    # channels_last (its strides there are arbitrary), a puzzle about torch, not the layout
    return (tuple(rng.randint(2, 6) for _ in range(rng.choice((3, 4, 4, 4)))),)


CHANNELS_LAST_STRIDE = Exercise(
    id=discovery.exercise_id(__name__, "channels_last_stride"),
    title="where channels_last can go",
    task="Write channels_last_stride(shape) -> tuple | None: the strides, in elements, of a "
         "tensor of this shape after .contiguous(memory_format=torch.channels_last), or None "
         "where torch refuses that layout. shape is a sample's [C, H, W] or a batch's "
         "[N, C, H, W]. Checked against torch itself.",
    reference=reference_channels_last_stride,
    make_case=_random_layout_shape,
    edge_cases=[((3, 8, 8),), ((2, 3, 4, 5),), ((1, 3, 4, 4),), ((8, 3, 2, 2),)],
    hint="channels_last keeps the channels of one pixel next to each other: C changes "
         "fastest, then W, then H, then N. Try it on a sample first (C26).",
    level=3,
)

EXERCISES = [BATCH_BYTES, COLLATED_STRIDE, CHANNELS_LAST_STRIDE]
