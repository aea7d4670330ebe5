"""ResNet-50 with every convolution's epilogue inside cuDNN: bias + ReLU, and bias + residual + ReLU.

Why: on the ladder's top rung (fp16, channels_last, folded, torch.compile, CUDA graph) about
40% of the device time is elementwise kernels (the recorded H200 run of `past_defaults`):
the bias, ReLU and residual add that Inductor cannot fuse into cuDNN's convolutions, which it
calls as extern kernels. Each such kernel reads and writes a whole activation tensor, so it is
bound by memory, not arithmetic. cuDNN itself can run those tails in the convolution's epilogue
while the output is still in registers: PyTorch exposes that as two ATen operators,
`cudnn_convolution_relu` (conv + bias + ReLU) and `cudnn_convolution_add_relu` (conv + bias +
alpha * z + ReLU, z being the residual). Rewired that way, a Bottleneck block is three kernels
(plus the shortcut's convolution where there is one) instead of three convolutions and four
elementwise kernels.

On a machine without cuDNN (this course's CPUs) the same module runs `reference_ops`: the same
arithmetic as separate torch calls, so the rewiring itself is checked against the folded
model there; the speed is the GPU's question.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

STAGES = (3, 4, 6, 3)  # ResNet-50's Bottleneck blocks per stage


class CudnnFusedError(ValueError):
    """The model cannot be rewired: not a folded ResNet-50 of labkit's layout."""


def _args(conv: nn.Conv2d) -> tuple:
    return conv.stride, conv.padding, conv.dilation, conv.groups


def cudnn_conv_relu(x: torch.Tensor, conv: nn.Conv2d) -> torch.Tensor:
    """relu(conv(x) + bias) in one cuDNN call."""
    return torch.ops.aten.cudnn_convolution_relu(x, conv.weight, conv.bias, *_args(conv))


def cudnn_conv_add_relu(x: torch.Tensor, conv: nn.Conv2d, z: torch.Tensor) -> torch.Tensor:
    """relu(conv(x) + bias + z) in one cuDNN call (z: the residual, the output's shape)."""
    return torch.ops.aten.cudnn_convolution_add_relu(x, conv.weight, z, 1.0, conv.bias, *_args(conv))


def reference_conv_relu(x: torch.Tensor, conv: nn.Conv2d) -> torch.Tensor:
    """The same arithmetic as `cudnn_conv_relu`, as separate torch calls (any device)."""
    return torch.relu(conv(x))


def reference_conv_add_relu(x: torch.Tensor, conv: nn.Conv2d, z: torch.Tensor) -> torch.Tensor:
    """The same arithmetic as `cudnn_conv_add_relu`, as separate torch calls (any device)."""
    return torch.relu(conv(x) + z)


def missing_cudnn(device: torch.device) -> str:
    """'' when the fused cuDNN operators can run on `device`, else why not."""
    if torch.device(device).type != "cuda":
        return "the fused operators are cuDNN's: they need a CUDA GPU (this run checks the rewiring)"
    if not torch.backends.cudnn.is_available():
        return "cuDNN is not available to this PyTorch build"
    return ""


class FusedResNet(nn.Module):
    """A folded ResNet-50 whose convolutions carry their bias, ReLU and residual in one call.

    `fused=True` calls the cuDNN operators (CUDA only); False calls `reference_*`, which
    computes the same thing as separate kernels (the check of the rewiring).
    """

    def __init__(self, folded: nn.Module, fused: bool = True) -> None:
        super().__init__()
        modules = dict(folded.named_modules())
        if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in modules.values()):
            raise CudnnFusedError("fold the BatchNorms first (labkit.models.folding.fold_model): "
                                  "the fused operators carry a bias, not a BatchNorm")
        for name in ("conv1", "maxpool", "fc"):
            if name not in modules:
                raise CudnnFusedError(f"the model has no {name!r}: not labkit's ResNet-50 layout")
        self.stem, self.maxpool, self.fc = modules["conv1"], modules["maxpool"], modules["fc"]
        self.fused = fused
        blocks = []
        for stage, count in enumerate(STAGES, 1):
            for b in range(count):
                name = f"layer{stage}.{b}"
                block = nn.Module()
                for part in ("conv1", "conv2", "conv3"):
                    conv = modules.get(f"{name}.{part}")
                    if not isinstance(conv, nn.Conv2d) or conv.bias is None:
                        raise CudnnFusedError(f"{name}.{part} is not a folded convolution "
                                              "(a Conv2d with a bias)")
                    setattr(block, part, conv)
                down = modules.get(f"{name}.downsample.0")
                if down is not None:
                    block.downsample = down
                blocks.append(block)
        self.blocks = nn.ModuleList(blocks)

    def _ops(self) -> tuple[Callable, Callable]:
        if self.fused:
            return cudnn_conv_relu, cudnn_conv_add_relu
        return reference_conv_relu, reference_conv_add_relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv_relu, conv_add_relu = self._ops()
        x = self.maxpool(conv_relu(x, self.stem))
        for block in self.blocks:
            down = getattr(block, "downsample", None)
            shortcut = x if down is None else down(x)
            out = conv_relu(conv_relu(x, block.conv1), block.conv2)
            x = conv_add_relu(out, block.conv3, shortcut)
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


def fused_model(folded: nn.Module) -> FusedResNet:
    """The cuDNN-fused model on a GPU with cuDNN; on any other device, the reference ops
    (the same rewiring with separate kernels), so the gate still checks what was rewired."""
    device = next(folded.parameters()).device
    return FusedResNet(folded, fused=not missing_cudnn(device))
