"""Chapter 06's exercises, easiest first: the channels_last strides DDP's warning prints, whether
copying between two layouts moves bytes out of order (what the drift really costs), and which
parameters of a model DDP warns about when it goes to channels_last after wrapping. Each
reference asks torch: strides from `Tensor.to(memory_format=...)`, order from a real copy_."""

from __future__ import annotations

import random

import torch

from labkit.exercises.grader import Exercise


def _conv_shape(rng: random.Random) -> tuple[int, int, int, int]:
    """A conv weight or activation shape, with the size-1 dims people forget now and then."""
    def size(high: int) -> int:
        return 1 if rng.random() < 0.25 else rng.randint(2, high)
    return size(8), size(8), size(5), size(5)


# ---------------------------------------------------------------- level 1
def reference_channels_last_strides(shape: tuple[int, int, int, int]) -> tuple[int, ...]:
    return torch.empty(shape).to(memory_format=torch.channels_last).stride()


CHANNELS_LAST_STRIDES = Exercise(
    id="06.channels_last_strides",
    title="the strides of a 4-D tensor in channels_last",
    task="Write channels_last_strides(shape) -> tuple of 4 ints: the strides torch gives "
         "torch.empty(shape).to(memory_format=torch.channels_last), shape being (N, C, H, W). "
         "These are the 'grad strides' DDP's warning prints for a weight converted after wrapping.",
    reference=reference_channels_last_strides,
    make_case=lambda rng: (_conv_shape(rng),),
    edge_cases=[((16, 3, 3, 3),), ((32, 32, 1, 1),), ((2, 1, 4, 4),), ((1, 3, 2, 2),),
                ((4, 5, 1, 3),)],
    hint="Memory order is N, H, W, C: C steps by 1, W by C, H by W*C, N by H*W*C. A size-1 dim "
         "still gets a stride: compare yours with torch's for (32, 32, 1, 1).",
    level=1,
)


# ---------------------------------------------------------------- level 2
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
    id="06.copy_in_order",
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
    level=2,
)


# ---------------------------------------------------------------- level 3
def reference_drift_report(shapes: list[tuple[int, ...]]) -> tuple[int, int]:
    warned = permuting = 0
    for shape in shapes:
        param = torch.empty(shape)
        bucket_stride = param.stride()  # DDP's rule: the bucket view takes the strides at wrap time
        converted = param.to(memory_format=torch.channels_last) if param.dim() == 4 else param
        grad_stride = converted.stride()  # the layout contract: a grad takes its param's strides
        if grad_stride != bucket_stride:
            warned += 1
            if not reference_copy_in_order(shape, grad_stride, bucket_stride):
                permuting += 1
    return warned, permuting


def _model_shapes(rng: random.Random) -> tuple:
    shapes: list[tuple[int, ...]] = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        if kind < 0.5:
            shapes.append(_conv_shape(rng))
        elif kind < 0.8:
            shapes.append((rng.randint(1, 8),))
        else:
            shapes.append((rng.randint(1, 8), rng.randint(1, 8)))
    return (shapes,)


DRIFT_REPORT = Exercise(
    id="06.drift_report",
    title="which parameters DDP warns about, and which of them cost a permuting copy",
    task="A model with parameters of these shapes is wrapped in DDP (all contiguous), then "
         "converted with .to(memory_format=torch.channels_last) (only 4-D parameters change). "
         "Write drift_report(shapes) -> (warned, permuting): how many parameters get DDP's "
         "'Grad strides do not match bucket view strides' warning on the next step, and how "
         "many of those copy their gradient into the bucket out of order.",
    reference=reference_drift_report,
    make_case=_model_shapes,
    edge_cases=[([(16, 3, 3, 3), (16,), (32, 32, 1, 1), (10, 32)],), ([(8,)],),
                ([(4, 1, 3, 3), (1, 1, 1, 1), (6, 2, 1, 1)],)],
    hint="The bucket view keeps the strides the parameter had when DDP was built; the gradient "
         "takes the parameter's strides now. Warned: the strides differ. Permuting: they differ "
         "on a dim of size > 1 (your copy_in_order helps).",
    level=3,
)

EXERCISES = [CHANNELS_LAST_STRIDES, COPY_IN_ORDER, DRIFT_REPORT]
