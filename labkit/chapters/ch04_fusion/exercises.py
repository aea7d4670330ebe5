"""Chapter 04's exercises: fit the launch-overhead line, fold BatchNorm into a convolution,
and write a fused elementwise chain that never makes a full-size intermediate.

The references are numpy's least squares, PyTorch's own folding utility
(`torch.nn.utils.fusion.fuse_conv_bn_weights`) and eager PyTorch; the third exercise also
counts the new memory the learner's function makes, with labkit's copy detector.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np
import torch

from labkit.core import discovery
from labkit.exercises.grader import Exercise, Report
from labkit.measure import copies

# ---------------------------------------------------------------------------------------
# Level 1: the launch-overhead line


def reference_fit(counts: list[int], times_s: list[float]) -> tuple[float, float]:
    design = np.column_stack([np.ones(len(counts)), np.asarray(counts, dtype=np.float64)])
    (fixed, per_launch), *_ = np.linalg.lstsq(design, np.asarray(times_s, dtype=np.float64),
                                              rcond=None)
    return float(fixed), float(per_launch)


def _fit_case(rng: random.Random) -> tuple:
    counts = sorted(rng.sample(range(1, 513), rng.randint(3, 9)))
    fixed, per_launch = rng.uniform(0, 50e-6), rng.uniform(0.1e-6, 10e-6)
    times = [fixed + per_launch * n + rng.gauss(0, 1e-6) for n in counts]
    return counts, times


def _close_pair(expected: object, got: object) -> bool:
    try:
        return len(got) == 2 and all(math.isclose(float(g), e, rel_tol=1e-6, abs_tol=1e-12)
                                     for e, g in zip(expected, got, strict=True))
    except (TypeError, ValueError):
        return False


FIT_LAUNCH_OVERHEAD = Exercise(
    id=discovery.exercise_id(__name__, "fit_launch_overhead"),
    title="fixed cost and cost per launch, by least squares",
    task="Write fit(counts, times_s) -> (fixed_s, per_launch_s): the least-squares line "
         "time = fixed + per_launch * count through the points (count = kernels per call, "
         "time = seconds per call). This is how the chapter turns timings of N tiny kernels "
         "into microseconds per launch.",
    reference=reference_fit,
    make_case=_fit_case,
    edge_cases=[([1, 2], [3e-6, 5e-6]), ([1, 8, 64], [10e-6, 10e-6, 10e-6])],
    hint="A straight line through points that do not all lie on one: which line makes the "
         "squared misses smallest? numpy has a function for fitting polynomials.",
    same=_close_pair,
    level=1,
)

# ---------------------------------------------------------------------------------------
# Level 2: fold BatchNorm into the convolution


def reference_fold(weight: torch.Tensor, bias: torch.Tensor, mean: torch.Tensor,
                   var: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor,
                   eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    from torch.nn.utils.fusion import fuse_conv_bn_weights

    w, b = fuse_conv_bn_weights(weight, bias, mean, var, eps, gamma, beta)
    return w.detach(), b.detach()


def _fold_case(rng: random.Random) -> tuple:
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    out_c, in_c, k = rng.randint(1, 8), rng.randint(1, 4), rng.choice([1, 3])
    return (torch.randn(out_c, in_c, k, k, generator=g), torch.randn(out_c, generator=g),
            0.5 * torch.randn(out_c, generator=g), 0.1 + 2 * torch.rand(out_c, generator=g),
            0.5 + torch.rand(out_c, generator=g), 0.3 * torch.randn(out_c, generator=g),
            rng.choice([1e-5, 1e-3, 0.1]))


def _close_tensors(expected: object, got: object) -> bool:
    try:
        return len(got) == 2 and all(
            isinstance(g, torch.Tensor) and g.shape == e.shape
            and torch.allclose(g.detach().to(e.dtype), e, rtol=1e-5, atol=1e-6)
            for e, g in zip(expected, got, strict=True))
    except (TypeError, RuntimeError):
        return False


FOLD_BATCHNORM = Exercise(
    id=discovery.exercise_id(__name__, "fold_batchnorm"),
    title="fold BatchNorm into the convolution's weight and bias",
    task="Write fold(weight, bias, mean, var, gamma, beta, eps) -> (folded_weight, "
         "folded_bias) so that a convolution with them computes "
         "BatchNorm(conv(x)) in eval mode. weight is [out, in, kh, kw]; the other tensors have "
         "one value per output channel.",
    reference=reference_fold,
    make_case=_fold_case,
    hint="Write BatchNorm in eval mode as an affine map per output channel, and substitute "
         "the convolution's output into it. Which dim of the weight is the output channel? "
         "Mind eps.",
    same=_close_tensors,
    cases=100,
    level=2,
)

# ---------------------------------------------------------------------------------------
# Level 3: a fused chain without full-size intermediates

MEMORY_SLACK_BYTES = 1 << 20  # new memory allowed beyond the output itself: 1 MiB of blocks
WITHIN_BUDGET = "new memory within the output's size + 1 MiB"


def reference_chain(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple:
    return torch.nn.functional.silu((x + y) * z), WITHIN_BUDGET


def _chain_case(rng: random.Random) -> tuple:
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    n = rng.choice([1, 7, 1000, rng.randint(1, 300_000), rng.randint(300_000, 600_000)])
    return tuple(torch.randn(n, generator=g) for _ in range(3))


def _chain_same(expected: object, got: object) -> bool:
    try:
        value, budget = got
        return (isinstance(value, torch.Tensor) and value.shape == expected[0].shape
                and torch.allclose(value, expected[0], rtol=1e-5, atol=1e-6)
                and budget == expected[1])
    except (TypeError, ValueError, RuntimeError):
        return False


@dataclass(frozen=True, repr=False)
class MemoryBudgetExercise(Exercise):
    """An exercise whose answer must also stay within a memory budget: the learner's
    function runs under labkit's copy detector, and the new bytes it makes are compared
    with the output's size."""

    def check(self, fn: object, seed: int = 0) -> Report:
        """As Exercise.check, with the new memory the function made counted per case."""
        if not callable(fn):
            return super().check(fn, seed)

        def measured(*args: torch.Tensor) -> tuple:
            with copies.detect() as log:
                value = fn(*args)
            output_bytes = args[0].numel() * args[0].element_size()
            if log.new_bytes <= output_bytes + MEMORY_SLACK_BYTES:
                return value, WITHIN_BUDGET
            return value, (f"new memory {log.new_bytes / 2**20:.1f} MiB = "
                           f"{log.new_bytes / max(output_bytes, 1):.1f}x the output")

        return super().check(measured, seed)


FUSED_CHAIN = MemoryBudgetExercise(
    id=discovery.exercise_id(__name__, "fused_chain"),
    title="silu((x + y) * z) without a full-size intermediate",
    task="Write chain(x, y, z) -> silu((x + y) * z) for 1-D float32 tensors, making no new "
         "memory beyond the output and at most 1 MiB more. Eager PyTorch writes and "
         "rereads two full-size intermediates; a fused kernel keeps them in registers, a CPU "
         "in cache.",
    reference=reference_chain,
    make_case=_chain_case,
    edge_cases=[tuple(torch.full((1_000_000,), v) for v in (0.5, -1.0, 2.0)),
                tuple(torch.ones(1) for _ in range(3))],
    hint="Slices are views: they make no new memory. Which ops write into memory you "
         "already have (an out= argument, an in-place op)? Work on a piece of the arrays "
         "small enough to stay in cache (fused_kernels.CPU_BLOCK_ELEMENTS, 32K elements, is "
         "what the chapter's blocked path uses).",
    same=_chain_same,
    cases=8,
    level=3,
)

EXERCISES = [FIT_LAUNCH_OVERHEAD, FOLD_BATCHNORM, FUSED_CHAIN]
