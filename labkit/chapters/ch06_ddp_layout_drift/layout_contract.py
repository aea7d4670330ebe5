"""AccumulateGrad's layout contract, asked of torch itself, and its size-1 exemption.

When backward hands a parameter its first gradient, AccumulateGrad keeps that tensor as
`.grad` if it "obeys the layout contract" with the parameter, and otherwise stores a copy with
the parameter's strides. The contract (torch/csrc/autograd/utils/grad_layout_contract.h,
`obeys_layout_contract`) compares strides *only on dims whose size is not 1*. So a 1x1
convolution's weight gradient that cuDNN returns in channels_last, strides (C, 1, C, C) for a
weight (K, C, 1, 1) with strides (C, 1, 1, 1), is kept as it is: it walks memory in the same
order. DDP's reducer compares the full stride tuples with its bucket view's, so it warns
"Grad strides do not match bucket view strides" for that weight on a GPU before any
conversion (pytorch/pytorch#47163, #70222): the most common real-world form of the warning.
"""

from __future__ import annotations

import torch


class _EmitGradient(torch.autograd.Function):
    """Identity-like op whose backward returns a gradient with chosen strides, as a kernel
    (cuDNN's 1x1 weight gradient, say) may."""

    @staticmethod
    def forward(ctx, weight: torch.Tensor, grad_stride: tuple[int, ...]) -> torch.Tensor:  # noqa: ANN001
        ctx.shape, ctx.grad_stride = tuple(weight.shape), tuple(grad_stride)
        return weight.sum()

    @staticmethod
    def backward(ctx, _grad_out: torch.Tensor) -> tuple[torch.Tensor, None]:  # noqa: ANN001
        return torch.empty_strided(ctx.shape, ctx.grad_stride).fill_(1.0), None


def is_dense(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """Whether these strides cover shape's elements once each, with no gap (any dim order);
    a size-1 dim's stride is never stepped along, so it is not looked at."""
    expected = 1
    for step, size in sorted((s, n) for n, s in zip(shape, stride, strict=True) if n != 1):
        if step != expected:
            return False
        expected *= size
    return True


def kept_grad_stride(shape: tuple[int, ...], grad_stride: tuple[int, ...],
                     param_stride: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """The strides `.grad` ends up with when backward returns a gradient with `grad_stride` to a
    fresh parameter of `shape` (contiguous, or `param_stride`): torch's AccumulateGrad decides.

    Raises ValueError for strides that do not describe a dense tensor of that shape.
    """
    shape, grad_stride = tuple(shape), tuple(grad_stride)
    if len(shape) != len(grad_stride):
        raise ValueError(f"shape {shape} and grad_stride {grad_stride} differ in length")
    if not is_dense(shape, grad_stride):
        raise ValueError(f"grad_stride {grad_stride} is not a dense layout of shape {shape}")
    param = (torch.zeros(shape) if param_stride is None
             else torch.empty_strided(shape, tuple(param_stride)).zero_()).requires_grad_()
    _EmitGradient.apply(param, grad_stride).backward()
    return tuple(param.grad.stride())


def ddp_warns(shape: tuple[int, ...], grad_stride: tuple[int, ...]) -> bool:
    """Whether DDP, its bucket view built with a contiguous parameter's strides, warns when the
    backward kernel returns the gradient with `grad_stride` (the reducer compares every stride)."""
    return kept_grad_stride(shape, grad_stride) != tuple(torch.empty(shape).stride())
