"""Hand-built models with one known problem each, and a clean one (for the audit's tests)."""

import torch
from torch import nn


class SwapHW(nn.Module):
    """Transposes H and W: a view, so no copy, but channels_last is lost (a layout drop)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(2, 3)


class Reorder(nn.Module):
    """permute to NHWC, contiguous(), permute back: a hidden copy on an NCHW input, none on
    a channels_last one (there permute(0, 2, 3, 1) is already contiguous)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)


def _head(channels: int) -> list[nn.Module]:
    return [nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 4)]


def clean() -> nn.Module:
    """1x1 convolution only: keeps channels_last, copies nothing, no drift-prone weight."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 1), *_head(8))


def layout_drop() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 1), SwapHW(), *_head(8))


def hidden_copy() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 1), Reorder(), *_head(8))


def drift_prone() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), *_head(8))


def with_batchnorm(channels: int = 8, layers: int = 2) -> nn.Module:
    """Convolutions each followed by a BatchNorm whose statistics are not the identity's (so
    running them in float16 or float32 changes the numbers): the float16 audit's BatchNorm case."""
    torch.manual_seed(0)
    body: list[nn.Module] = [nn.Conv2d(3, channels, 1)]
    for _ in range(layers):
        norm = nn.BatchNorm2d(channels)
        norm.running_mean.uniform_(-0.5, 0.5)
        norm.running_var.uniform_(0.5, 2.0)
        nn.init.uniform_(norm.weight, 0.5, 1.5)
        nn.init.uniform_(norm.bias, -0.2, 0.2)
        body += [norm, nn.ReLU(), nn.Conv2d(channels, channels, 1)]
    return nn.Sequential(*body, *_head(channels))


def build_model() -> nn.Module:
    """What `python -m labkit.audit tests.audit.handmade:build_model` loads."""
    return hidden_copy()


def example(batch: int = 2, side: int = 8) -> torch.Tensor:
    torch.manual_seed(1)
    return torch.randn(batch, 3, side, side)
