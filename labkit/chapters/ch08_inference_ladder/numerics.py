"""The numerics gate: a rung is only as fast as it is right.

MLPerf Inference gates every throughput on accuracy (ResNet-50 must keep 99% of the float32
model's top-1); Torch-TensorRT's ResNet-50 example checks the predictions. The ladder has no
trained weights and no ImageNet, so it gates each rung on what it can measure exactly: the
rung's logits against strict-float32 eager on the same fixed, seeded images and weights.

Two figures, both from torch:

- the relative L2 error of the logits, ||out - ref|| / ||ref||, under a tolerance named per
  math (the precision the convolutions ran in): reduced-precision math is allowed its
  rounding, a wrong transform (a folding that drops a bias) is not;
- top-1 agreement, counted only over images whose reference top-1 beats its runner-up by a
  clear margin (MARGIN of the logits' standard deviation): on a near-tie the class flips on
  rounding alone and says nothing about correctness.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# Relative L2 error of the logits allowed per math. float32 rungs (folding, layouts, compile
# without TF32) change only the order of float32 sums: 1e-4 over 50 layers. TF32 and fp16
# keep 10 mantissa bits and bf16 7; over ResNet-50 they measure ~0.2% and ~1% here, so
# 1e-2 and 5e-2 leave room for rounding and none for a wrong transform (a dropped bias or a
# mis-scaled weight moves the logits by 10% or more).
TOLERANCES = {"float32": 1e-4, "tf32": 1e-2, "float16": 5e-2, "bfloat16": 5e-2}
MIN_TOP1 = 0.90      # top-1 agreement over the clear images
MARGIN = 0.05        # a reference top-1 is clear when it beats the runner-up by 5% of the logits' std
MIN_CLEAR = 4        # with fewer clear images, top-1 agreement is not judged


class NumericsError(ValueError):
    """The outputs cannot be compared (shapes differ, no reference, unknown math)."""


@dataclass(frozen=True)
class Gate:
    """One rung's numerics against the float32 reference."""

    math: str
    rel_error: float
    tolerance: float
    top1_agreement: float | None  # None: too few clear images to judge
    clear_images: int
    finite: bool

    @property
    def passed(self) -> bool:
        """Inside the tolerance, finite, and (where judged) agreeing on top-1."""
        return (self.finite and self.rel_error <= self.tolerance
                and (self.top1_agreement is None or self.top1_agreement >= MIN_TOP1))

    @property
    def why(self) -> str:
        """What refused the rung ('' when it passed)."""
        if not self.finite:
            return "non-finite logits (overflow?)"
        if self.rel_error > self.tolerance:
            return f"logits off by {self.rel_error:.1e} > {self.tolerance:.0e} allowed for {self.math}"
        if self.top1_agreement is not None and self.top1_agreement < MIN_TOP1:
            return f"top-1 agrees on {100 * self.top1_agreement:.0f}% < {100 * MIN_TOP1:.0f}%"
        return ""

    def as_dict(self) -> dict:
        return {"math": self.math, "rel_error": self.rel_error, "tolerance": self.tolerance,
                "top1_agreement": self.top1_agreement, "clear_images": self.clear_images,
                "finite": self.finite, "passed": self.passed, "why": self.why}


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| in float64, the whole batch's logits as one vector."""
    out64, ref64 = out.detach().double().cpu(), ref.detach().double().cpu()
    norm = torch.linalg.vector_norm(ref64)
    if norm == 0:
        raise NumericsError("the reference logits are all zero: nothing to compare with")
    return float(torch.linalg.vector_norm(out64 - ref64) / norm)


def clear_rows(ref: torch.Tensor, margin: float = MARGIN) -> torch.Tensor:
    """Which images' reference top-1 is clear of the runner-up (a bool mask)."""
    ref = ref.detach().double().cpu()
    top2 = ref.topk(2, dim=1).values
    return (top2[:, 0] - top2[:, 1]) >= margin * ref.std(dim=1)


def check(out: torch.Tensor, ref: torch.Tensor, math: str) -> Gate:
    """Gate one rung's logits (batch, classes) against the float32 reference's."""
    if math not in TOLERANCES:
        raise NumericsError(f"no tolerance for math {math!r}; known: {sorted(TOLERANCES)}")
    if out.shape != ref.shape or out.dim() != 2:
        raise NumericsError(f"logits of shape {tuple(out.shape)} cannot be compared with the "
                            f"reference's {tuple(ref.shape)} (both must be (batch, classes))")
    out = out.detach().float().cpu()
    finite = bool(torch.isfinite(out).all())
    rel = relative_error(out, ref) if finite else float("inf")
    clear = clear_rows(ref)
    n_clear = int(clear.sum())
    agreement = None
    if n_clear >= MIN_CLEAR and finite:
        agreement = float((out[clear].argmax(1) == ref.detach().cpu()[clear].argmax(1)).double().mean())
    return Gate(math, rel, TOLERANCES[math], agreement, n_clear, finite)


def fixed_images(n: int, image: int, seed: int = 1) -> torch.Tensor:
    """The gate's images: n seeded standard-normal images on the CPU, the same on every machine."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, image, image, generator=generator)


def tiled(images: torch.Tensor, batch: int) -> torch.Tensor:
    """A batch of `batch` images cycling through the gate's images: any batch's first rows are them."""
    reps = -(-batch // images.shape[0])
    return images.repeat(reps, 1, 1, 1)[:batch].contiguous()
