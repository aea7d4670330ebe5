"""The parameters that would break DDP's gradient layout contract if converted after wrapping.

DDP builds its gradient buckets with each parameter's strides at wrap time; converting the
model to channels_last afterwards gives gradients whose strides disagree with the bucket
views (chapter 06: "Grad strides do not match bucket view strides", and, measured there,
wrong gradients handed to the optimizer while the ranks stay bit-identical). A parameter is exposed when its channels_last strides differ from its
contiguous ones in a dimension of size > 1 (a 3x3 convolution weight). Where they differ
only in size-1 dimensions (a 1x1 convolution weight [O, I, 1, 1]), the layouts address the
same elements: AccumulateGrad keeps such a gradient as the kernel returned it, silently (its
layout contract ignores size-1 dims), and DDP's reducer, whose stride check
(`check_grad_layout`) compares every stride, may still warn, harmlessly.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

_FORMATS = {4: torch.channels_last, 5: torch.channels_last_3d}
DRIFT, SIZE_ONE = "drift-prone", "warns harmlessly (size-1 dims)"


@dataclass(frozen=True)
class ParameterRow:
    """One parameter whose strides change with the memory format."""

    name: str
    shape: tuple[int, ...]
    contiguous_stride: tuple[int, ...]
    channels_last_stride: tuple[int, ...]
    status: str  # DRIFT or SIZE_ONE


def strides_for(shape: tuple[int, ...], memory_format: torch.memory_format) -> tuple[int, ...]:
    """The strides a tensor of this shape has in this memory format (no data touched)."""
    return tuple(torch.empty(shape, device="meta", memory_format=memory_format).stride())


def status(shape: tuple[int, ...]) -> str | None:
    """DRIFT, SIZE_ONE, or None when the shape's strides do not depend on the memory format."""
    fmt = _FORMATS.get(len(shape))
    if fmt is None:
        return None
    plain, other = strides_for(shape, torch.contiguous_format), strides_for(shape, fmt)
    if plain == other:
        return None
    if any(a != b and n > 1 for a, b, n in zip(plain, other, shape, strict=True)):
        return DRIFT
    return SIZE_ONE


def audit(model: nn.Module) -> list[ParameterRow]:
    """Every 4-D/5-D parameter whose strides depend on the memory format, in model order."""
    rows = []
    for name, p in model.named_parameters():
        shape = tuple(p.shape)
        found = status(shape)
        if found is not None:
            rows.append(ParameterRow(name, shape, strides_for(shape, torch.contiguous_format),
                                     strides_for(shape, _FORMATS[len(shape)]), found))
    return rows
