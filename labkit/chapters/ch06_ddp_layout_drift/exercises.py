"""Chapter 06's exercises, easiest first (chapter 03 has the channels_last strides): whether
copying between two layouts moves bytes out of order (what the drift really costs), and which
gradients DDP warns about under AccumulateGrad's layout contract and its size-1 exemption (the
1x1 weight that warns on a GPU before any conversion). Each reference asks torch: order from a real copy_, the kept gradient from AccumulateGrad."""

from __future__ import annotations

import random

import torch

from labkit.chapters.ch06_ddp_layout_drift import layout_contract
from labkit.core import discovery
from labkit.exercises.grader import Exercise


def _conv_shape(rng: random.Random) -> tuple[int, int, int, int]:
    """A conv weight or activation shape, with the size-1 dims people forget now and then."""
    def size(high: int) -> int:
        return 1 if rng.random() < 0.25 else rng.randint(2, high)
    return size(8), size(8), size(5), size(5)


# ---------------------------------------------------------------- level 1
def _dense_layouts(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    plain = torch.empty(shape)
    return [plain.stride(), plain.to(memory_format=torch.channels_last).stride(),
            plain.permute(0, 3, 2, 1).contiguous().permute(0, 3, 2, 1).stride()]


def reference_copy_in_order(shape: tuple[int, ...], src_stride: tuple[int, ...],
                            dst_stride: tuple[int, ...]) -> bool:
    numel = 1
    for n in shape:
        numel *= n
    src = torch.arange(numel, dtype=torch.float32).as_strided(shape, src_stride)
    dst = torch.empty_strided(shape, dst_stride)
    dst.copy_(src)
    storage = torch.empty(0).set_(dst.untyped_storage()).view(-1)[:numel] if numel else dst
    return bool(torch.equal(storage, torch.arange(numel, dtype=torch.float32)))


def _copy_case(rng: random.Random) -> tuple:
    shape = _conv_shape(rng)
    layouts = _dense_layouts(shape)
    return shape, rng.choice(layouts), rng.choice(layouts)


COPY_IN_ORDER = Exercise(
    id=discovery.exercise_id(__name__, "copy_in_order"),
    title="does a copy between two layouts move bytes out of order",
    task="DDP copies each gradient (strides src_stride) into its bucket view (strides dst_stride), "
         "both dense over the same shape. Write copy_in_order(shape, src_stride, dst_stride) -> "
         "bool: True when element k of the source's memory lands at element k of the "
         "destination's memory for every k (a straight memcpy), False when the copy permutes.",
    reference=reference_copy_in_order,
    make_case=_copy_case,
    edge_cases=[((32, 32, 1, 1), (32, 1, 32, 32), (32, 1, 1, 1)),
                ((16, 3, 3, 3), (27, 1, 9, 3), (27, 9, 3, 1)),
                ((4, 1, 3, 3), (9, 1, 3, 1), (9, 9, 3, 1)),
                ((2, 3, 4, 5), (60, 20, 5, 1), (60, 20, 5, 1))],
    hint="A dim of size 1 is never stepped along, so its stride does not matter. Drop those "
         "dims and compare what is left.",
    level=1,
)


# ---------------------------------------------------------------- level 2
def reference_drift_report(shape: tuple[int, ...], grad_stride: tuple[int, ...]) -> tuple[tuple[int, ...], bool]:
    kept = layout_contract.kept_grad_stride(shape, grad_stride)  # torch's AccumulateGrad decides
    return kept, kept != tuple(torch.empty(shape).stride())


def _dense_permutation(shape: tuple[int, ...], rng: random.Random) -> tuple[int, ...]:
    """The strides of a dense tensor of `shape` whose dims are laid out in a random order."""
    order = list(range(len(shape)))
    rng.shuffle(order)
    return torch.empty([shape[d] for d in order]).permute(*[order.index(i) for i in range(len(shape))]).stride()


def _grad_case(rng: random.Random) -> tuple:
    shape = _conv_shape(rng) if rng.random() < 0.8 else (rng.randint(1, 6), rng.randint(1, 6))
    if len(shape) == 4 and rng.random() < 0.5:
        return shape, tuple(torch.empty(shape).to(memory_format=torch.channels_last).stride())
    return shape, tuple(_dense_permutation(shape, rng))


DRIFT_REPORT = Exercise(
    id=discovery.exercise_id(__name__, "drift_report"),
    title="AccumulateGrad's layout contract and its size-1 exemption: which gradients DDP warns about",
    task="A contiguous parameter of this shape is wrapped in DDP (its bucket view takes the "
         "parameter's contiguous strides) and never converted. The backward kernel returns its "
         "gradient with strides grad_stride (cuDNN may return a 1x1 weight's gradient in "
         "channels_last). Write drift_report(shape, grad_stride) -> (kept_stride, warns): the "
         "strides .grad has after AccumulateGrad, and whether DDP warns 'Grad strides do not "
         "match bucket view strides' (its check compares the whole stride tuples).",
    reference=reference_drift_report,
    make_case=_grad_case,
    edge_cases=[((32, 16, 1, 1), (16, 1, 16, 16)), ((16, 3, 3, 3), (27, 1, 9, 3)),
                ((4, 1, 3, 3), (9, 1, 3, 1)), ((1, 1, 1, 1), (1, 1, 1, 1)), ((6, 2, 1, 1), (2, 1, 2, 2))],
    hint="AccumulateGrad keeps the gradient if its strides equal the parameter's on every dim "
         "whose size is not 1 (grad_layout_contract.h); otherwise it stores a copy with the "
         "parameter's strides. DDP then compares all the strides, size-1 dims included.",
    level=2,
)

EXERCISES = [COPY_IN_ORDER, DRIFT_REPORT]
