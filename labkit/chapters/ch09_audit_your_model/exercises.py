"""Chapter 09's exercises: the two rules the audit's tables rest on, written by the learner.

The references are the audit's own functions (module_layouts.layout_verdict and
ddp_contract.status), so a learner who passes has written what the report computes.
"""

from __future__ import annotations

import random

from labkit.audit import ddp_contract, module_layouts
from labkit.core import discovery
from labkit.exercises.grader import Exercise

_FORMATS = ("contiguous", "channels_last", "both", "neither")


def _verdict_case(rng: random.Random) -> tuple[str, str, int]:
    return rng.choice(_FORMATS), rng.choice(_FORMATS), rng.choice([2, 3, 4, 4, 4])


LAYOUT_VERDICT = Exercise(
    id=discovery.exercise_id(__name__, "layout_verdict"),
    title="kept, dropped or converted: one module's verdict",
    task="Write verdict(input_format, output_format, output_ndim) -> str. Formats are "
         "'contiguous', 'channels_last', 'both' (a size-1 channel or 1x1 map: the formats agree) "
         "or 'neither'. Return 'ambiguous' when either side is 'both'; for a channels_last input "
         "'left 4-D' when the output is not 4-D, else 'kept' or 'dropped'; otherwise 'converted' "
         "when the output is channels_last and 'unchanged' for anything else.",
    reference=module_layouts.layout_verdict,
    make_case=_verdict_case,
    edge_cases=[("channels_last", "neither", 4), ("channels_last", "contiguous", 2),
                ("both", "channels_last", 4), ("neither", "channels_last", 4)],
    hint="Check 'both' first, then the input's format, then the output's.",
    level=1,
)


def _shape_case(rng: random.Random) -> tuple[tuple[int, ...]]:
    rank = rng.choice([1, 2, 4, 4, 4, 5])
    return (tuple(rng.choice([1, 1, 2, 3, 7, 64]) for _ in range(rank)),)


DRIFT_STATUS = Exercise(
    id=discovery.exercise_id(__name__, "drift_status"),
    title="which parameters break DDP's layout contract if converted late",
    task="Write status(shape) -> str | None for a parameter's shape. For 4-D shapes compare the "
         "contiguous strides with the channels_last strides (channels_last_3d for 5-D; other "
         "ranks return None). Return None when they are equal, 'drift-prone' when they differ "
         "in a dimension of size > 1, and 'warns harmlessly (size-1 dims)' when they differ "
         "only where the size is 1.",
    reference=ddp_contract.status,
    make_case=_shape_case,
    edge_cases=[((64, 64, 3, 3),), ((256, 64, 1, 1),), ((8, 1, 3, 3),), ((8, 3, 1, 1, 1),),
                ((10, 3),)],
    hint="torch.empty(shape, memory_format=torch.channels_last).stride() gives the strides "
         "without touching data (device='meta' keeps it free).",
    level=2,
)

EXERCISES = [LAYOUT_VERDICT, DRIFT_STATUS]
