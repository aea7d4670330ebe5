"""FP8 (e4m3) for ResNet-50's 1x1 convolutions, run as GEMMs: scales calibrated on the chapter's
images, quantise / dequantise, and a GEMM through `torch._scaled_mm` or its exact emulation.

Why only the 1x1 convolutions. A 1x1 convolution over NHWC activations is a plain GEMM
([N*H*W, Cin] x [Cin, Cout]), which `torch._scaled_mm` runs on Hopper's FP8 tensor cores; they
are about half of ResNet-50's FLOPs. What stays in fp16, and why:

- the 3x3 convolutions: `_scaled_mm` is a GEMM only; a 3x3 would need an im2col copy (9x the
  activation bytes) or an FP8 implicit-GEMM convolution, which stock PyTorch does not ship;
- the stride-2 1x1 shortcut convolutions (downsample): a strided 1x1 is a GEMM over a
  gathered copy of the activations, a copy that costs about what FP8 saves on these few layers;
- the 7x7 stem (3 input channels: K = 147 is not a multiple of 16, which `_scaled_mm` needs,
  and the first layer sees raw pixels) and the classifier (1000 outputs, not a multiple of
  16; the logits are what the gate reads).

Scales. e4m3 holds magnitudes up to E4M3_MAX (448) with 3 mantissa bits, so every tensor is
divided by a scale that maps its largest magnitude to E4M3_MAX before the cast, and the GEMM's
result is multiplied back (`_scaled_mm`'s scale_a, scale_b are these dequantising scales).
Weights are known: per tensor or per output channel, from their own amax. Activations are
not: their per-tensor amax is calibrated once on the chapter's calibration images (numerics'
CALIBRATION_SEED), and values past it at run time saturate (clamped to E4M3_MAX).

Module.to(dtype=float16) would convert float8 buffers too (float8 counts as floating point),
and the float32 scales with them (`_scaled_mm` wants float32 scales), so `Fp8Gemm` lets a
move change only their device: the rung's `.to(device, float16, channels_last)` leaves them
e4m3 and float32.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

FP8 = torch.float8_e4m3fn
E4M3_MAX = float(torch.finfo(FP8).max)  # 448
MODES = ("per-tensor", "per-channel")


class Fp8Error(ValueError):
    """A scale or tensor FP8 cannot be made from (non-finite, empty, wrong shape)."""


def scale_for(amax: torch.Tensor | float) -> torch.Tensor:
    """The dequantising scale that maps amax to E4M3_MAX: amax / 448 (float32; 1 where amax is 0)."""
    amax = torch.as_tensor(amax, dtype=torch.float32)
    if not bool(torch.isfinite(amax).all()) or bool((amax < 0).any()):
        raise Fp8Error(f"an amax must be finite and >= 0, got {amax.flatten()[:4].tolist()}")
    return torch.where(amax > 0, amax / E4M3_MAX, torch.ones_like(amax))


def weight_scale(weight: torch.Tensor, mode: str = "per-tensor") -> torch.Tensor:
    """A [Cout, Cin] weight's scale: one number (shape []) or one per output channel ([Cout])."""
    if mode not in MODES:
        raise Fp8Error(f"mode must be one of {MODES}, got {mode!r}")
    if weight.dim() != 2 or weight.numel() == 0:
        raise Fp8Error(f"a weight must be a non-empty [Cout, Cin] matrix, got {tuple(weight.shape)}")
    w = weight.detach().float().abs()
    return scale_for(w.amax() if mode == "per-tensor" else w.amax(dim=1))


def quantise(t: torch.Tensor, scale: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """t / scale, clamped to +-E4M3_MAX (saturating), cast to e4m3.

    scale is one number, or one per index of `dim` (a per-channel scale along that dimension).
    """
    scale = scale.to(t.device, torch.float32)
    if scale.dim() == 1 and dim is not None:
        shape = [1] * t.dim()
        shape[dim] = -1
        scale = scale.view(shape)
    elif scale.numel() != 1:
        raise Fp8Error(f"a scale of shape {tuple(scale.shape)} needs the dimension it runs along")
    return (t.float() / scale).clamp(-E4M3_MAX, E4M3_MAX).to(FP8)


def dequantise(q: torch.Tensor, scale: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """The float32 values an e4m3 tensor stands for: q * scale (per-channel along `dim`)."""
    scale = scale.to(q.device, torch.float32)
    if scale.dim() == 1 and dim is not None:
        shape = [1] * q.dim()
        shape[dim] = -1
        scale = scale.view(shape)
    return q.float() * scale


def round_trip_error(t: torch.Tensor, mode: str = "per-tensor") -> float:
    """Relative L2 error of quantising a [Cout, Cin] weight and back: what e4m3 costs that tensor."""
    scale = weight_scale(t, mode)
    dim = 0 if mode == "per-channel" else None
    back = dequantise(quantise(t, scale, dim), scale, dim)
    norm = torch.linalg.vector_norm(t.double())
    return float(torch.linalg.vector_norm(back.double() - t.double()) / norm) if norm > 0 else 0.0


def is_gemm_conv(conv: nn.Module) -> bool:
    """Whether a convolution runs here as an FP8 GEMM: 1x1, stride 1, no padding, groups 1,
    both channel counts multiples of 16 (what `_scaled_mm` needs of K and N)."""
    return (isinstance(conv, nn.Conv2d) and conv.kernel_size == (1, 1) and conv.stride == (1, 1)
            and conv.padding in ((0, 0), "valid") and conv.groups == 1
            and conv.in_channels % 16 == 0 and conv.out_channels % 16 == 0)


def calibrate_amax(model: nn.Module, images: torch.Tensor, names: list[str]) -> dict[str, float]:
    """The largest |input| each named convolution sees over `images`, in float32 (TF32 off).

    The model runs on the images' device; forward pre-hooks read each convolution's input.
    """
    modules = dict(model.named_modules())
    missing = [n for n in names if n not in modules]
    if missing:
        raise Fp8Error(f"no module named {missing[:3]} in the model to calibrate")
    amax: dict[str, float] = {n: 0.0 for n in names}

    def hook(name: str) -> Callable:
        def record(_module: nn.Module, inputs: tuple) -> None:
            amax[name] = max(amax[name], float(inputs[0].detach().abs().amax()))
        return record

    handles = [modules[n].register_forward_pre_hook(hook(n)) for n in names]
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        with torch.no_grad():
            model(images)
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
        for h in handles:
            h.remove()
    bad = {n: a for n, a in amax.items() if not a > 0 or a != a}
    if bad:
        raise Fp8Error(f"calibration saw no signal (amax {bad}) at {list(bad)[:3]}")
    return amax


class QuantisedBuffers(nn.Module):
    """A module whose buffers hold quantised weights and float32 scales that must survive a
    model-wide move: `.half()` or `.to(float16)` would round the scales and cast e4m3/int8
    weights. Its `_apply` moves every buffer to the new device but keeps its dtype; the
    `anchor` buffer (uint8, never read) is what the move is applied to, so it tells the device.
    Shared by Fp8Gemm and int8.Int8Gemm."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("anchor", torch.zeros(1, dtype=torch.uint8))  # where a move put us

    def _apply(self, fn: Callable, recurse: bool = True) -> QuantisedBuffers:
        kept = {n: b for n, b in self._buffers.items() if n != "anchor" and b is not None}
        super()._apply(fn, recurse)
        for name, buffer in kept.items():
            self._buffers[name] = buffer.to(self.anchor.device)
        return self


class Fp8Gemm(QuantisedBuffers):
    """One 1x1 convolution's GEMM in e4m3: [M, Cin] activations x [Cin, Cout] weight -> [M, Cout].

    emulate: dequantise both operands and multiply in float32, which is what `_scaled_mm`
    computes up to its accumulation order; used on a CPU and wherever `_scaled_mm` is not
    available. fast_accum: `_scaled_mm`'s use_fast_accum (Hopper's FP8 tensor cores accumulate
    in reduced precision without periodic promotion to float32: faster, less exact). The bias, residual and ReLU are left to the caller (fused by Inductor when
    the rung is compiled).
    """

    def __init__(self, conv: nn.Conv2d, act_amax: float, mode: str = "per-tensor",
                 emulate: bool = False, fast_accum: bool = False) -> None:
        super().__init__()
        if not is_gemm_conv(conv):
            raise Fp8Error(f"not a GEMM-shaped convolution: {conv}")
        weight = conv.weight.detach().float().flatten(1)                 # [Cout, Cin]
        w_scale = weight_scale(weight, mode)
        q = quantise(weight, w_scale, 0 if mode == "per-channel" else None)
        self.mode, self.emulate, self.fast_accum = mode, emulate, fast_accum
        self.act_amax = float(act_amax)
        self.register_buffer("weight_q", q)                               # [Cout, Cin] e4m3
        self.register_buffer("w_scale", w_scale.float())                  # [] or [Cout]
        self.register_buffer("a_scale", scale_for(self.act_amax).float())  # []
        self.out_features = conv.out_channels

    def extra_repr(self) -> str:
        return f"{tuple(self.weight_q.shape)}, {self.mode}, act amax {self.act_amax:.3g}"

    def forward(self, a: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        a_q = (a.float() / self.a_scale).clamp(-E4M3_MAX, E4M3_MAX).to(FP8)
        w_q = self.weight_q                                               # [Cout, Cin]
        if self.emulate:
            w_scale = self.w_scale.view(-1, 1) if self.mode == "per-channel" else self.w_scale
            return ((a_q.float() * self.a_scale) @ (w_q.float() * w_scale).t()).to(out_dtype)
        if self.mode == "per-tensor":
            return torch._scaled_mm(a_q, w_q.t(), scale_a=self.a_scale, scale_b=self.w_scale,
                                    out_dtype=out_dtype, use_fast_accum=self.fast_accum)
        # Row-wise scaling: one scale per row of a (the per-tensor one repeated) and per column
        # of b; PyTorch's row-wise path has asked for a bfloat16 output, so it writes bf16.
        rows = self.a_scale.reshape(1, 1).expand(a_q.shape[0], 1).contiguous()
        return torch._scaled_mm(a_q, w_q.t(), scale_a=rows, scale_b=self.w_scale.reshape(1, -1),
                                out_dtype=torch.bfloat16, use_fast_accum=self.fast_accum).to(out_dtype)
