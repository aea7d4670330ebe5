"""INT8 for ResNet-50's 1x1 convolutions, run as GEMMs through `torch._int_mm` (issue 41: "INT8
where PyTorch can run it on the GPU"): int8 x int8 -> int32 on the integer tensor cores, then
dequantised by the two scales and handed to the same bias + residual + ReLU as the FP8 rungs.

The same layers as FP8 (fp8.is_gemm_conv: 1x1, stride 1, channels multiples of 16) and the
same reasons for what stays fp16 (fp8's notes). Symmetric scales, no zero point: a weight
scale per output channel (its amax / 127) and one activation scale per layer from the amax
calibrated on the chapter's images (fp8.calibrate_amax), values past it saturating at 127.
Unlike e4m3, int8 is uniform: 127 steps from 0 to the amax, so a layer whose activations have
rare large values loses its small ones; the gate, at bfloat16's tolerance as for FP8, says
whether that costs the logits too much.

`torch._int_mm` runs on a CPU too (the tests compare it with an int32 matmul); on CUDA it
needs the first operand's rows over 16 and both channel counts multiples of 8, which every
1x1 GEMM of ResNet-50 at a batch of 64 or more meets.
"""

from __future__ import annotations

import torch
from torch import nn

from labkit.chapters.ch08_inference_ladder import fp8

INT8_MAX = 127.0


def scale_for(amax: torch.Tensor | float) -> torch.Tensor:
    """The dequantising scale that maps amax to 127: amax / 127 (float32; 1 where amax is 0)."""
    amax = torch.as_tensor(amax, dtype=torch.float32)
    if not bool(torch.isfinite(amax).all()) or bool((amax < 0).any()):
        raise fp8.Fp8Error(f"an amax must be finite and >= 0, got {amax.flatten()[:4].tolist()}")
    return torch.where(amax > 0, amax / INT8_MAX, torch.ones_like(amax))


def quantise(t: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """round(t / scale), clamped to +-127, as int8 (scale: one number or a column per row)."""
    return torch.round(t.float() / scale.to(t.device, torch.float32)).clamp(-INT8_MAX, INT8_MAX).to(torch.int8)


def round_trip_error(weight: torch.Tensor) -> float:
    """Relative L2 error of a [Cout, Cin] weight quantised per output channel and back."""
    w = weight.detach().double()
    scale = scale_for(w.abs().amax(dim=1)).view(-1, 1)
    back = quantise(w, scale).double() * scale.double()
    norm = torch.linalg.vector_norm(w)
    return float(torch.linalg.vector_norm(back - w) / norm) if norm > 0 else 0.0


class Int8Gemm(fp8.QuantisedBuffers):
    """One 1x1 convolution's GEMM in int8: [M, Cin] activations x [Cin, Cout] weight -> [M, Cout].

    forward(a, out_dtype) quantises a with the calibrated per-tensor scale, runs
    `torch._int_mm(a_q, weight_q.t())` (int32 accumulation: exact for these sizes) and
    multiplies back by the activation scale and each output channel's weight scale. The bias,
    residual and ReLU are the caller's (fused_epilogue.Conv1x1), as for fp8.Fp8Gemm."""

    def __init__(self, conv: nn.Conv2d, act_amax: float) -> None:
        super().__init__()
        if not fp8.is_gemm_conv(conv):
            raise fp8.Fp8Error(f"not a GEMM-shaped convolution: {conv}")
        weight = conv.weight.detach().float().flatten(1)                  # [Cout, Cin]
        w_scale = scale_for(weight.abs().amax(dim=1))                     # [Cout]
        self.act_amax = float(act_amax)
        self.register_buffer("weight_q", quantise(weight, w_scale.view(-1, 1)))   # [Cout, Cin] int8
        self.register_buffer("w_scale", w_scale.float())
        self.register_buffer("a_scale", scale_for(self.act_amax).float())
        self.out_features = conv.out_channels

    def extra_repr(self) -> str:
        return f"{tuple(self.weight_q.shape)}, per-channel int8, act amax {self.act_amax:.3g}"

    def forward(self, a: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        a_q = quantise(a, self.a_scale)
        acc = torch._int_mm(a_q, self.weight_q.t())                       # int32 [M, Cout]
        return (acc.float() * (self.a_scale * self.w_scale).view(1, -1)).to(out_dtype)
