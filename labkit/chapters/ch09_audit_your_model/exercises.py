"""Chapter 09's exercises: the two readings the audit's tables rest on, graded against torch.

Each reference is computed from what torch itself reports (a tensor's contiguity checks;
where a conversion puts each element in memory), never from the audit's own functions, so a
learner who passes agrees with torch, and the tests check that the audit does too
(tests/chapters/ch09_audit_your_model). The tasks say what to decide, not how.
"""

from __future__ import annotations

import random

import torch

from labkit.core import discovery
from labkit.exercises.grader import Exercise


def _torch_layout(t: torch.Tensor) -> str:
    """Which memory formats torch says the tensor's strides satisfy."""
    plain = t.is_contiguous()
    nhwc = t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last)
    return "both" if plain and nhwc else "contiguous" if plain else "channels_last" if nhwc else "neither"


def _tensor_case(rng: random.Random) -> tuple[torch.Tensor]:
    rank = rng.choice([2, 3, 4, 4, 4, 4])
    shape = [rng.choice([1, 1, 2, 3, 5, 8]) for _ in range(rank)]
    t = torch.zeros(shape, device="meta")
    how = rng.choice(["plain", "channels_last", "transposed", "sliced"])
    if how == "channels_last" and rank == 4:
        t = t.contiguous(memory_format=torch.channels_last)
    elif how == "transposed" and rank >= 2:
        t = t.transpose(-1, -2)
    elif how == "sliced" and shape[-1] > 1:
        t = t[..., ::2]
    return (t,)


LAYOUT_OF = Exercise(
    id=discovery.exercise_id(__name__, "layout_of"),
    title="the layout column: which memory format a tensor is in",
    task="Write layout(t) -> str, the name the audit's module table gives a tensor's layout: "
         "'contiguous' (NCHW order), 'channels_last' (NHWC order, 4-D only), 'both' when its "
         "strides satisfy the two at once, or 'neither'. Graded against torch's own checks on "
         "tensors of ranks 2 to 4, plain, converted, transposed and sliced.",
    reference=_torch_layout,
    make_case=_tensor_case,
    edge_cases=[(torch.zeros(2, 1, 4, 4, device="meta"),),
                (torch.zeros(2, 8, 1, 1, device="meta"),),
                (torch.zeros(2, 3, 4, 4, device="meta").contiguous(memory_format=torch.channels_last),),
                (torch.zeros(2, 3, 4, 4, device="meta").transpose(2, 3),),
                (torch.zeros(3, 4, device="meta"),)],
    hint="Which of the two can a tensor with one channel, or a 1x1 map, not tell apart? "
         "Tensor.is_contiguous takes a memory_format.",
    level=1,
)


def _conversion(shape: tuple[int, ...]) -> torch.memory_format | None:
    return {4: torch.channels_last, 5: torch.channels_last_3d}.get(len(shape))


def _torch_drift(shape: tuple[int, ...]) -> str | None:
    """Where the conversion puts each element: read from the converted tensor's memory."""
    fmt = _conversion(shape)
    if fmt is None:
        return None
    values = torch.arange(torch.Size(shape).numel()).reshape(shape)
    converted = values.to(memory_format=fmt)  # what module.to(memory_format=...) does to a weight
    if converted.stride() == values.stride():
        return None
    in_memory = converted.as_strided((values.numel(),), (1,))
    return "warns harmlessly (size-1 dims)" if torch.equal(in_memory, values.reshape(-1)) else "drift-prone"


def _shape_case(rng: random.Random) -> tuple[tuple[int, ...]]:
    rank = rng.choice([1, 2, 4, 4, 4, 5])
    return (tuple(rng.choice([1, 1, 2, 3, 7, 16]) for _ in range(rank)),)


DRIFT_STATUS = Exercise(
    id=discovery.exercise_id(__name__, "drift_status"),
    title="which parameters break DDP's layout contract if converted late",
    task="Write status(shape) -> str | None: a parameter of this shape is converted to "
         "channels_last (channels_last_3d if 5-D; other ranks are not converted) after DDP "
         "has built its buckets, which view the parameters' memory in order. Return None when "
         "the conversion leaves its strides as they were, 'drift-prone' when it moves elements "
         "to other addresses (the bucket then reads other values), and 'warns harmlessly "
         "(size-1 dims)' when the strides change but every element stays where it was. "
         "Graded against where torch puts each element.",
    reference=_torch_drift,
    make_case=_shape_case,
    edge_cases=[((64, 64, 3, 3),), ((256, 64, 1, 1),), ((8, 1, 3, 3),), ((8, 3, 1, 1, 1),),
                ((10, 3),)],
    hint="torch.empty(shape, memory_format=torch.channels_last).stride() gives the strides "
         "without touching data (device='meta' keeps it free). Which dimensions' strides can "
         "change without moving anything?",
    level=2,
)

EXERCISES = [LAYOUT_OF, DRIFT_STATUS]
