"""The 3x3 convolution's tail moved into the next GEMM: each Bottleneck's conv2 (cuDNN) leaves
its output without its bias and ReLU, and conv3's Triton GEMM applies them to each tile of its
A operand as it loads it (a prologue), before the bias + residual + ReLU of its own epilogue.

Why. With the 1x1 convolutions as Triton GEMMs with fused epilogues (`fused_epilogue`, the
"Triton fused epilogue, compiled" rung), the H200 profile still spent 12% of its device time
in elementwise kernels (results/h200_past_defaults/past_defaults_triton_compiled.txt). About
half of that, estimated from the bytes they move, is the bias + ReLU after each of the 16 3x3
convolutions, which cuDNN runs as extern kernels Inductor cannot fuse into; the rest is the
stem's bias + ReLU and the stride-2 shortcuts' bias adds, which stay. Each 3x3 tail is one read
and one write of the 3x3's output. Its only reader is conv3, which loads it anyway: applying
bias + ReLU there costs two fp16 operations per loaded element (a tile of A is loaded once per
column tile of the output, so 2 to 16 times over, layer1 to layer4), and the separate pass
disappears, if Hopper's MMA keeps its pace with A in registers (the prologue moves the wgmma's
A operand from shared memory to registers). On the H200 it did, on balance: the rung ran 1.062x
the Triton rung it changes at batch 256 and 1.020x at batch 1024, by wall time in the same
rounds, 1.028x and 1.022x by device time (results/h200_past_defaults/past_defaults_prologue.txt).

Numerics. On CUDA, Inductor peels a convolution's bias off for cuDNN and adds it in its own
fp32 pointwise kernel, rounded once to fp16; the prologue's single fp16 add rounds the same sum
once, so the two rungs should agree to the bit or nearly. The rung is gated against strict
float32 like every rung, and its logits are compared with the Triton rung's it changes
(`past_defaults.error_against`, in its note): a dropped or misplaced bias shows there at 1e-2
and more. What stays outside: the stem, the stride-2 shortcuts' bias (the residual conv3
reads), the pool and the classifier.
"""

from __future__ import annotations

import torch
from torch import nn

from labkit.chapters.ch08_inference_ladder import fused_epilogue as fe

OP_NAME = "labkit::bias_relu_gemm_bias_res_relu"
OP_SCHEMA = ("(Tensor x, Tensor in_bias, Tensor weight_t, Tensor bias, Tensor? residual, "
             "bool relu) -> Tensor")


def _check(x: torch.Tensor, in_bias: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
           residual: torch.Tensor | None) -> None:
    fe._check_op(x, weight_t, bias, residual)
    if in_bias.shape != (x.shape[1],) or in_bias.dtype != x.dtype:
        raise fe.EpilogueError(f"in_bias {tuple(in_bias.shape)} ({in_bias.dtype}) is not [K] = "
                               f"[{x.shape[1]}] of x's {x.dtype}")


@torch.library.custom_op(OP_NAME, mutates_args=(), device_types="cpu", schema=OP_SCHEMA)
def bias_relu_gemm_bias_res_relu(x: torch.Tensor, in_bias: torch.Tensor, weight_t: torch.Tensor,
                                 bias: torch.Tensor, residual: torch.Tensor | None,
                                 relu: bool) -> torch.Tensor:
    """relu(conv1x1(relu(x + in_bias)) + bias + residual) as one op: x [N, K, H, W] (the 3x3's
    output before its bias and ReLU), in_bias [K], weight_t [K, Cout]. The CPU's kernel is the
    torch reference; CUDA's the Triton GEMM with its prologue. The output is channels_last."""
    _check(x, in_bias, weight_t, bias, residual)
    res = fe.to_rows(residual) if residual is not None else None
    a = fe.prologue_reference(fe.to_rows(x), in_bias)
    return fe.from_rows(fe.reference(a, weight_t.t(), bias, res, relu), x)


@bias_relu_gemm_bias_res_relu.register_kernel("cuda")
def _cuda(x: torch.Tensor, in_bias: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
          residual: torch.Tensor | None, relu: bool) -> torch.Tensor:
    return triton_conv1x1(x, in_bias, weight_t, bias, residual, relu)


@bias_relu_gemm_bias_res_relu.register_fake
def _fake(x: torch.Tensor, in_bias: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
          residual: torch.Tensor | None, relu: bool) -> torch.Tensor:
    """What the compiler sees: the output's shape, dtype and channels_last strides."""
    _check(x, in_bias, weight_t, bias, residual)
    n, _, h, w = x.shape
    cout = weight_t.shape[1]
    return x.new_empty_strided((n, cout, h, w), fe.channels_last_strides(n, cout, h, w))


def triton_conv1x1(x: torch.Tensor, in_bias: torch.Tensor, weight_t: torch.Tensor,
                   bias: torch.Tensor, residual: torch.Tensor | None = None, relu: bool = True,
                   config: tuple[int, int, int, int, int] | None = None,
                   interpret: bool = False) -> torch.Tensor:
    """The op's CUDA kernel (or, with interpret=True and a config, the same source under Triton's
    interpreter on CPU tensors): `fused_epilogue.launch_gemm` with the prologue's bias."""
    _check(x, in_bias, weight_t, bias, residual)
    res = fe.to_rows(residual) if residual is not None else None
    out, _ = fe.launch_gemm(fe.to_rows(x), weight_t, bias, res, relu, config, interpret,
                            in_bias=in_bias)
    return fe.from_rows(out, x)


def _without_bias(conv: nn.Conv2d) -> nn.Conv2d:
    """The same convolution with no bias (its weights shared, not copied)."""
    bare = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride,
                     conv.padding, conv.dilation, conv.groups, bias=False,
                     device=conv.weight.device, dtype=conv.weight.dtype)
    bare.weight = conv.weight
    return bare


class PrologueResNet(fe.GemmResNet):
    """`fused_epilogue.GemmResNet` on the custom op (`fused_epilogue.op_backend`), with every
    Bottleneck's conv2 bias-less and its bias + ReLU in conv3's GEMM prologue:
    relu(conv3(relu(conv2'(relu(conv1(x))) + b2)) + shortcut(x)), the middle relu in conv3."""

    def __init__(self, folded: nn.Module) -> None:
        super().__init__(folded, fe.op_backend)
        for block in self.blocks:
            conv2, conv3 = block.conv2, block.conv3
            if not isinstance(conv3, fe.Conv1x1) or conv3.backend != "op":
                raise fe.EpilogueError("the prologue needs every conv3 as the custom op")
            if conv2.bias is None:
                raise fe.EpilogueError("conv2 has no bias to move: fold the BatchNorms first")
            block.conv2_bias = nn.Parameter(conv2.bias.detach().clone(), requires_grad=False)
            block.conv2 = _without_bias(conv2)

    def tail(self, block: nn.Module, out: torch.Tensor, shortcut: torch.Tensor) -> torch.Tensor:
        """conv2 bare, its bias and ReLU in conv3's prologue, conv3's epilogue as the base's."""
        return bias_relu_gemm_bias_res_relu(block.conv2(out), block.conv2_bias, block.conv3.weight,
                                            block.conv3.bias, shortcut, True)
