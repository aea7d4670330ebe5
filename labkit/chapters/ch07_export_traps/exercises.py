"""Chapter 07's exercises: what an engine that takes a data pointer and a shape reads.

ONNX Runtime's IOBinding, a TensorRT binding and AOTInductor's compiled code all get an address
and the declared shape, never the strides. Level 1: when does such an engine read a tensor
correctly? Level 2: what does it read otherwise? Level 3: hand an NHWC image buffer to an
NCHW model without a copy. Each reference asks torch itself.
"""

from __future__ import annotations

import random

import torch

from labkit.core import discovery
from labkit.exercises.grader import Exercise


def _random_shape(rng: random.Random, dims: int | None = None) -> tuple[int, ...]:
    return tuple(rng.randint(1, 4) for _ in range(dims or rng.randint(1, 4)))


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    return torch.empty(shape, device="meta").stride()


def _random_layout(rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A shape with the strides of a random permutation of a dense tensor (sometimes dense
    row-major itself, sometimes with a size-1 dim whose stride is arbitrary)."""
    shape = _random_shape(rng)
    order = list(range(len(shape)))
    if rng.random() < 0.7:
        rng.shuffle(order)
    permuted = torch.empty([shape[i] for i in order], device="meta")
    stride = list(permuted.permute(*[order.index(i) for i in range(len(shape))]).stride())
    for i, size in enumerate(shape):
        if size == 1 and rng.random() < 0.5:
            stride[i] = rng.randint(1, 50)
    return shape, tuple(stride)


def reference_reads_correctly(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    return torch.empty_strided(shape, stride, device="meta").is_contiguous()


POINTER_READS_CORRECTLY = Exercise(
    id=discovery.exercise_id(__name__, "pointer_reads_correctly"),
    title="does an engine that only gets a pointer and a shape read this tensor right?",
    task="Write pointer_reads_correctly(shape, stride) -> bool: True when reading memory as a dense "
         "row-major array of `shape` gives every element where the strides put it (what ONNX "
         "Runtime's IOBinding and AOTInductor assume), without calling torch.",
    reference=reference_reads_correctly,
    make_case=lambda rng: _random_layout(rng),
    edge_cases=[((2, 3), (3, 1)), ((2, 3), (1, 2)), ((4, 1, 3), (3, 7, 1)), ((1,), (5,)),
                ((2, 3, 4, 4), (48, 1, 12, 3))],
    hint="Compare each stride with the row-major stride of its dim (the product of the sizes "
         "after it). A dim of size 1 is never stepped along, so its stride does not matter.",
    level=1,
)


def reference_engine_sees(x: torch.Tensor) -> torch.Tensor:
    return torch.as_strided(x, x.shape, _row_major(tuple(x.shape)))


def _permuted_tensor(rng: random.Random) -> tuple[torch.Tensor]:
    shape = _random_shape(rng, dims=rng.randint(2, 4))
    order = list(range(len(shape)))
    rng.shuffle(order)
    generator = torch.Generator().manual_seed(rng.randint(0, 2**31))
    dense = torch.arange(1, 1 + torch.Size(shape).numel(), dtype=torch.float32)
    dense = dense[torch.randperm(dense.numel(), generator=generator)]
    stored = dense.reshape([shape[i] for i in order])
    return (stored.permute(*[order.index(i) for i in range(len(shape))]),)


ENGINE_SEES = Exercise(
    id=discovery.exercise_id(__name__, "what_the_engine_sees"),
    title="what a pointer-fed engine reads from a permuted tensor",
    task="Write engine_sees(x) -> Tensor: the tensor of x's shape that an engine reads when it is "
         "given x.data_ptr() and x.shape and assumes dense row-major memory (x is a permutation "
         "of a dense tensor, as channels_last or a transposed view is).",
    reference=reference_engine_sees,
    make_case=_permuted_tensor,
    edge_cases=[(torch.arange(6.0).reshape(2, 3).t(),),
                (torch.arange(24.0).reshape(1, 2, 3, 4).contiguous(memory_format=torch.channels_last),)],
    hint="The memory holds the elements in storage order. torch.as_strided(x, size, stride) "
         "reinterprets x's storage (from x's storage offset) with any strides you give it.",
    level=2,
)


def reference_nhwc_as_nchw(buffer: torch.Tensor, n: int, c: int, h: int, w: int) -> torch.Tensor:
    return buffer.view(n, h, w, c).permute(0, 3, 1, 2)


def _same_view(expected: object, got: object) -> bool:
    """Equal values and shape, and a view of the same memory with the same strides (no copy)."""
    return (isinstance(got, torch.Tensor) and isinstance(expected, torch.Tensor)
            and got.shape == expected.shape and torch.equal(got, expected)
            and got.data_ptr() == expected.data_ptr() and got.stride() == expected.stride())


def _nhwc_case(rng: random.Random) -> tuple:
    n, c, h, w = (rng.randint(1, 3), rng.randint(1, 5), rng.randint(1, 4), rng.randint(1, 4))
    return torch.arange(float(n * h * w * c)), n, c, h, w


NHWC_AS_NCHW = Exercise(
    id=discovery.exercise_id(__name__, "nhwc_buffer_as_nchw"),
    title="hand an NHWC image buffer to an NCHW model without copying",
    task="Write nhwc_as_nchw(buffer, n, c, h, w) -> Tensor: `buffer` is a flat tensor holding an "
         "image batch in N, H, W, C order (as camera and decoder pipelines hand it over). Return "
         "the [N, C, H, W] tensor of the same pixels as a view of buffer: no copy, so its strides "
         "are channels_last.",
    reference=reference_nhwc_as_nchw,
    make_case=_nhwc_case,
    edge_cases=[(torch.arange(24.0), 1, 3, 2, 4), (torch.arange(8.0), 2, 1, 2, 2)],
    same=_same_view,
    hint="First give the buffer the shape it really has (view as N, H, W, C), then reorder the "
         "dims with permute; .contiguous() or reshape-after-permute would copy.",
    level=3,
)

EXERCISES = [POINTER_READS_CORRECTLY, ENGINE_SEES, NHWC_AS_NCHW]
