"""The numerics gate: a rung is only as fast as it is right, and the gate is shown to bite.

MLPerf Inference gates every throughput on accuracy (ResNet-50 must keep 99% of the float32
model's top-1); Torch-TensorRT's ResNet-50 example checks the predictions. The ladder has no
trained weights and no ImageNet, so it gates each rung on what it can measure exactly: the
rung's logits against strict-float32 eager on the same fixed, seeded images and weights.

Why the reference model is calibrated. A random-weight ResNet-50 with made-up BatchNorm
statistics and seeded white-noise images hardly looks at its input: every BatchNorm
normalises with statistics unrelated to what reaches it, the output is dominated by what
every image shares, and global pooling averages each noise image to the same texture. Measured on this
CPU at the chapter's 32 px with 16 images (std of a class's logit over the images, averaged
over classes, against std over the classes, averaged over images): 0.26 against 2.77, and
all 16 images had the same top-1 class, so top-1 agreement tested nothing; a rung that gave
every image the batch's mean logits was off by 9e-2, a zeroed BatchNorm bias by 1.2e-2,
and a 5e-2 tolerance passed them. So the reference model is made to behave like a trained
network, in three seeded, deterministic steps (`reference_model`):

- images with their own global statistics (`fixed_images`): a smooth random field plus
  texture, with a colour cast, contrast and texture strength of each image's own, as
  photographs differ; white noise is the same texture in every image;
- the last BatchNorm of each residual branch scaled by RESIDUAL_GAMMA (0.2), as trained
  ResNets keep their branches small (torchvision's `zero_init_residual` starts them at 0):
  with full-size branches the calibrated network amplified rounding chaotically (bf16 off
  by 0.43, fp16 by 8.5e-2 at 32 px, more than a zeroed bias: no tolerance could separate
  them); at 0.2 the errors of the honest and the wrong rungs are 3x and more apart;
- BatchNorm running statistics calibrated on CALIBRATION_IMAGES of those images (one batch,
  train mode, cumulative average), so every layer sees normalised activations.

After it: 0.31 against 0.40 at 32 px (15 distinct top-1 classes in 16 images), 0.10 against
0.28 at 224 px (6 distinct; 15 of 16 images have a clear top-1, so top-1 agreement is
judged; a GPU gates on 64 images since 2026-12-03, ladder.gate_images, so that top-1 is
counted over more than 15). At 224 px global pooling still averages much of each image away, so the gate also compares what depends on the input: the logits centred per class
over the gate's images (`centred`). A rung whose output ignores its input (the batch's mean
for every image, a CUDA graph replaying a stale buffer) is off by 1.0 or more there, however
input-dependent the reference is.

Three figures, all from torch:

- the relative L2 error of the logits, ||out - ref|| / ||ref||, under a tolerance per math
  (the precision the convolutions ran in);
- the same error of the centred logits, under its own tolerance per math;
- top-1 agreement, counted only over images whose reference top-1 beats its runner-up by a
  clear margin (MARGIN of the logits' standard deviation): on a near-tie the class flips on
  rounding alone and says nothing about correctness.

Tolerances come from measured error (MEASURED: the honest rungs' largest error per math and
size) times HEADROOM (3), rounded up to two significant digits, never under FLOOR. The
float16 error recorded on the H200 for the old, uncalibrated model was 7.8e-4; the
calibrated model's H200 errors (benchmarks/gpu_gate.py, 2026-12-03, results/h200_gate/) are
below the CPU's 32 px ones for every math, so the tolerances did not move. What the
gate then refuses, measured on the calibrated model in float32 (tests/chapters/
ch08_inference_ladder/test_gate_bites.py; benchmarks/gpu_gate.py on the GPU): the batch's
mean logits for every image, a stale input, one BatchNorm's bias zeroed (layer3.2.bn2), one
folded convolution's bias dropped, one convolution's weight x1.1 (layer3.2.conv2) are off
by 4.6e-2 to 1.2 at 32 px and by 2.2e-2 to 0.61 at 224 px (full logits; centred 3.5e-2 to
1.6), so every one is refused under the float32, TF32 and fp16 tolerances (fp16's: 1.5e-2,
1.8e-2 centred). bf16's own rounding (3.8e-2 at 32 px) is as large as one mid-network layer
10% off, so under bf16's tolerance no output comparison can tell those two apart: it still
refuses the batch-mean, stale-input and dropped-folded-bias rungs (0.19 at 32 px, 0.13 at
224 px), and any wrong transform that touches every layer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from labkit.models import batchnorm

# The honest rungs' largest relative L2 error of the logits (full, centred) against strict
# float32 on the calibrated reference model, per math, measured by test_gate_bites and
# benchmarks/gpu_gate.py (see their records): float32 = a reordered float32 (channels_last,
# Conv-BN folding); tf32 = convolutions and matmuls with inputs rounded to TF32's 10-bit
# mantissa (emulated on the CPU); float16 and bfloat16 = autocast and converted weights.
# CPU: this course's 2-core CI machine (AVX-512 BF16), 16 gate images, batch 4 at 32 px and
# 16 at 224 px (fp16 weights not run at 224 px: minutes per batch without fp16 hardware).
MEASURED = {
    "float32": {"cpu 32 px": (3.3e-6, 4.2e-6), "cpu 224 px": (8.1e-7, 2.1e-6),
                "NVIDIA H200 224 px": (9.0e-7, 2.3e-6)},
    "tf32": {"cpu 32 px": (2.8e-3, 3.7e-3), "cpu 224 px": (8.5e-4, 2.0e-3),
             "NVIDIA H200 224 px": (8.5e-4, 2.0e-3)},
    "float16": {"cpu 32 px": (4.7e-3, 6.0e-3), "cpu 224 px": (1.1e-3, 2.6e-3),
                "NVIDIA H200 224 px": (1.3e-3, 3.1e-3)},
    "bfloat16": {"cpu 32 px": (3.8e-2, 5.0e-2), "cpu 224 px": (1.1e-2, 2.6e-2),
                 "NVIDIA H200 224 px": (1.1e-2, 2.5e-2)},
}
HEADROOM = 3.0   # a tolerance is this many times the largest honest error measured for its math
# Never tighter than this: a float32 rung may run cuDNN algorithms the CPU cannot measure
# (Winograd, FFT), and below it a tolerance refuses no more wrong rungs (the smallest
# mutation measured moves the logits by 2e-2).
FLOOR = 1e-4


def _tolerance(errors: list[float]) -> float:
    """HEADROOM x the largest error, rounded up to two significant digits, at least FLOOR."""
    raw = max(FLOOR, HEADROOM * max(errors))
    scale = 10.0 ** (math.floor(math.log10(raw)) - 1)
    return float(f"{math.ceil(raw / scale - 1e-9) * scale:.2g}")


TOLERANCES = {m: _tolerance([full for full, _ in sizes.values()]) for m, sizes in MEASURED.items()}
CENTRED_TOLERANCES = {m: _tolerance([c for _, c in sizes.values()]) for m, sizes in MEASURED.items()}
MIN_TOP1 = 0.90      # top-1 agreement over the clear images
MARGIN = 0.05        # a reference top-1 is clear when it beats the runner-up by 5% of the logits' std
MIN_CLEAR = 4        # with fewer clear images, top-1 agreement is not judged

GATE_SEED = 1         # the images every rung is gated on
CAPTURE_SEED = 2      # the images a rung is warmed, compiled and captured with (not the gate's)
CALIBRATION_SEED = 3  # the images the BatchNorm statistics are calibrated on
CALIBRATION_IMAGES = 64
RESIDUAL_GAMMA = 0.2


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
    centred_error: float | None = None      # None: one image (nothing to centre over)
    centred_tolerance: float | None = None
    input_spread: float | None = None       # the reference's spread over images / over classes

    @property
    def passed(self) -> bool:
        """Inside both tolerances, finite, and (where judged) agreeing on top-1."""
        return self.why == ""

    @property
    def why(self) -> str:
        """What refused the rung ('' when it passed)."""
        if not self.finite:
            return "non-finite logits (overflow?)"
        if self.rel_error > self.tolerance:
            return f"logits off by {self.rel_error:.1e} > {self.tolerance:.2g} allowed for {self.math}"
        if (self.centred_error is not None and self.centred_tolerance is not None
                and self.centred_error > self.centred_tolerance):
            return (f"what depends on the input (logits centred over the images) off by "
                    f"{self.centred_error:.1e} > {self.centred_tolerance:.2g} allowed for {self.math}")
        if self.top1_agreement is not None and self.top1_agreement < MIN_TOP1:
            return f"top-1 agrees on {100 * self.top1_agreement:.0f}% < {100 * MIN_TOP1:.0f}%"
        return ""

    def as_dict(self) -> dict:
        return {"math": self.math, "rel_error": self.rel_error, "tolerance": self.tolerance,
                "centred_error": self.centred_error, "centred_tolerance": self.centred_tolerance,
                "input_spread": self.input_spread,
                "top1_agreement": self.top1_agreement, "clear_images": self.clear_images,
                "finite": self.finite, "passed": self.passed, "why": self.why}


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| in float64, the whole batch's logits as one vector."""
    out64, ref64 = out.detach().double().cpu(), ref.detach().double().cpu()
    norm = torch.linalg.vector_norm(ref64)
    if norm == 0:
        raise NumericsError("the reference logits are all zero: nothing to compare with")
    return float(torch.linalg.vector_norm(out64 - ref64) / norm)


def centred(logits: torch.Tensor) -> torch.Tensor:
    """Logits minus each class's mean over the images: the part that depends on the input."""
    logits = logits.detach().double().cpu()
    return logits - logits.mean(dim=0, keepdim=True)


def input_spread(ref: torch.Tensor) -> float:
    """How much the logits depend on the image: std over images / std over classes (means of each).

    Near 0 the model answers the same whatever it is shown, and a comparison of full logits
    cannot tell a rung that ignores its input from one that reads it.
    """
    ref = ref.detach().double().cpu()
    if ref.shape[0] < 2:
        return float("nan")
    return float(ref.std(dim=0).mean() / ref.std(dim=1).mean())


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
    centred_error = spread = None
    if ref.shape[0] >= 2:
        spread = input_spread(ref)
        if float(torch.linalg.vector_norm(centred(ref))) > 0:
            centred_error = relative_error(centred(out), centred(ref)) if finite else float("inf")
    clear = clear_rows(ref)
    n_clear = int(clear.sum())
    agreement = None
    if n_clear >= MIN_CLEAR and finite:
        agreement = float((out[clear].argmax(1) == ref.detach().cpu()[clear].argmax(1)).double().mean())
    return Gate(math, rel, TOLERANCES[math], agreement, n_clear, finite, centred_error,
                CENTRED_TOLERANCES[math] if centred_error is not None else None, spread)


def fixed_images(n: int, image: int, seed: int = GATE_SEED) -> torch.Tensor:
    """n seeded images on the CPU, the same on every machine, each with statistics of its own.

    A smooth random field (bilinear from 4x4) plus white-noise texture, under a colour cast,
    a contrast and a texture strength drawn per image: white noise alone is one texture
    that global pooling averages to the same features in every image.
    """
    if n < 1 or image < 1:
        raise NumericsError(f"need at least one image of at least 1 px, got n={n}, image={image}")
    generator = torch.Generator().manual_seed(seed)
    coarse = torch.randn(n, 3, 4, 4, generator=generator)
    field = nn.functional.interpolate(coarse, size=(image, image), mode="bilinear", align_corners=False)
    field = field / field.std(dim=(1, 2, 3), keepdim=True).clamp_min(1e-6)
    texture = 0.2 + 0.8 * torch.rand(n, 1, 1, 1, generator=generator)
    contrast = 0.5 + torch.rand(n, 1, 1, 1, generator=generator)
    colour = 0.5 * torch.randn(n, 3, 1, 1, generator=generator)
    noise = torch.randn(n, 3, image, image, generator=generator)
    return (colour + contrast * (field + texture * noise)).contiguous()


def tiled(images: torch.Tensor, batch: int) -> torch.Tensor:
    """A batch of `batch` images cycling through the gate's images: any batch's first rows are them."""
    reps = -(-batch // images.shape[0])
    return images.repeat(reps, 1, 1, 1)[:batch].contiguous()


def quiet_residual_branches(model: nn.Module, gamma: float = RESIDUAL_GAMMA) -> nn.Module:
    """Scale the last BatchNorm's weight of every Bottleneck's residual branch by gamma, in place.

    A Bottleneck is found by its parts (conv3 followed by bn3, as labkit's and torchvision's
    ResNet-50 name them), so either network gets the same treatment.
    """
    with torch.no_grad():
        for module in model.modules():
            last = getattr(module, "bn3", None)
            if (isinstance(last, nn.modules.batchnorm._BatchNorm) and last.weight is not None
                    and isinstance(getattr(module, "conv3", None), nn.Conv2d)):
                last.weight.mul_(gamma)
    return model


def calibrate_batchnorm(model: nn.Module, images: torch.Tensor) -> nn.Module:
    """Set every BatchNorm's running statistics to those of `images` flowing through the model
    (`labkit.models.batchnorm.calibrate`): in eval mode afterwards every layer sees these
    images' activations normalised, as a trained network's are. The model comes back in eval mode."""
    return batchnorm.calibrate(model, images)


def reference_model(model: nn.Module, image: int, device: torch.device | str = "cpu") -> nn.Module:
    """Quiet the residual branches and calibrate BatchNorm on this size's images, on `device`.

    In strict float32 (TF32 off for the calibrating pass), so the statistics are the
    reference's own. The model comes back on the CPU, in eval mode.
    """
    quiet_residual_branches(model)
    images = fixed_images(CALIBRATION_IMAGES, image, CALIBRATION_SEED).to(device)
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        calibrate_batchnorm(model.to(device), images)
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
    return model.cpu().eval()


def through_input(x: torch.Tensor, infer: Callable[[], torch.Tensor], images: torch.Tensor) -> torch.Tensor:
    """The gate's images through a rung's own input buffer: the logits, float32 on the CPU.

    A prepared rung reads one static input (a CUDA graph replays kernels that read it by
    address). Each chunk of `images` (tiled to the buffer's batch) is copied into x and
    the rung is called with no argument, as it runs when timed; the first rows of its output
    are that chunk's logits. A rung that does not read what is in its buffer (a stale
    graph, a cached output) answers for other images and the gate refuses it. x is left
    holding what it held before.
    """
    if images.dim() != 4 or x.dim() != 4 or images.shape[1:] != x.shape[1:]:
        raise NumericsError(f"images {tuple(images.shape)} do not fit the input buffer {tuple(x.shape)}")
    batch, saved, rows = x.shape[0], x.detach().clone(), []
    try:
        for start in range(0, images.shape[0], batch):
            chunk = images[start:start + batch]
            with torch.no_grad():
                x.copy_(tiled(chunk, batch).to(x.device))
                out = infer()
            if not isinstance(out, torch.Tensor) or out.dim() != 2 or out.shape[0] != batch:
                raise NumericsError(f"a rung must return (batch={batch}, classes) logits, got "
                                    f"{type(out).__name__} {tuple(getattr(out, 'shape', ()))}")
            rows.append(out[:chunk.shape[0]].detach().float().cpu().clone())
    finally:
        with torch.no_grad():
            x.copy_(saved)
    return torch.cat(rows)
