"""A compact, readable ResNet-50 and a tracer of memory formats through it.

Chapter 03 needs a real ResNet-50 with random weights. torchvision's PyPI wheel does not
import on a CPU-only torch build of a different version, so this module builds the same
network (same module names, so torchvision's state_dict loads into it; same 25,557,032
parameters) from torch.nn alone. Where torchvision is present the tests compare the two.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

RESNET50_PARAMETERS = 25_557_032  # torchvision.models.resnet50(weights=None), counted
RESNET50_STAGES = (3, 4, 6, 3)  # Bottleneck blocks per stage


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (carries the stride), 1x1 expand by 4, plus the shortcut.

    The stride sits on the 3x3 convolution, as in torchvision ("ResNet v1.5").
    """

    expansion = 4

    def __init__(self, in_channels: int, width: int, stride: int = 1) -> None:
        super().__init__()
        out_channels = width * self.expansion
        self.conv1 = nn.Conv2d(in_channels, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out_channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.downsample: nn.Module | None = None
        if stride != 1 or in_channels != out_channels:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Residual block: relu(branch(x) + shortcut(x))."""
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + shortcut)


class ResNet50(nn.Module):
    """ResNet-50: a 7x7 stem, four stages of Bottlenecks [3, 4, 6, 3], pooling, a classifier."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        in_channels = 64
        for stage, (blocks, width) in enumerate(zip(RESNET50_STAGES, (64, 128, 256, 512), strict=True), 1):
            stride = 1 if stage == 1 else 2
            layers = []
            for block in range(blocks):
                layers.append(Bottleneck(in_channels, width, stride if block == 0 else 1))
                in_channels = width * Bottleneck.expansion
            setattr(self, f"layer{stage}", nn.Sequential(*layers))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_channels, num_classes)
        self._init_weights()

    def _init_weights(self) -> None:
        """Kaiming-normal convolutions and unit batch norms, as torchvision does."""
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Images [N, 3, H, W] to class logits [N, num_classes]."""
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet50(num_classes: int = 1000) -> ResNet50:
    """A ResNet-50 with random weights (nothing is downloaded)."""
    return ResNet50(num_classes)


def parameter_count(model: nn.Module) -> int:
    """Number of trainable and frozen parameters (not buffers)."""
    return sum(p.numel() for p in model.parameters())


def memory_format_of(t: torch.Tensor) -> str:
    """Name the memory format a tensor is in: 'channels_last', 'contiguous', 'both' or 'neither'.

    'both' happens when the two formats give the same strides (a size-1 channel or a 1x1
    image), so the tensor cannot be said to have kept or dropped channels_last.
    """
    if t.dim() != 4:
        return "contiguous" if t.is_contiguous() else "neither"
    nchw = t.is_contiguous()
    nhwc = t.is_contiguous(memory_format=torch.channels_last)
    if nchw and nhwc:
        return "both"
    return "contiguous" if nchw else "channels_last" if nhwc else "neither"


@dataclass(frozen=True)
class LayerLayout:
    """What one module received and returned: names, shapes, strides, memory formats."""

    name: str
    kind: str
    input_format: str
    output_format: str
    output_shape: tuple[int, ...]
    output_stride: tuple[int, ...]

    @property
    def verdict(self) -> str:
        """'kept', 'dropped', 'gained', 'ambiguous' or 'unchanged' for channels_last."""
        if "both" in (self.input_format, self.output_format):
            return "ambiguous"
        if self.input_format == "channels_last":
            return "kept" if self.output_format == "channels_last" else "dropped"
        return "gained" if self.output_format == "channels_last" else "unchanged"


def trace_layouts(
    model: nn.Module, x: torch.Tensor, include: Callable[[nn.Module], bool] | None = None
) -> list[LayerLayout]:
    """Run `model(x)` once with forward hooks and record each module's input and output format.

    Hooks see the tensors each module really got and produced, so the table shows where
    channels_last propagates and where it is lost, module by module (a Bottleneck's output
    includes its residual add). `include` picks modules (default: every named module).
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"trace_layouts needs a tensor input, got {type(x).__name__}")
    records: list[LayerLayout] = []
    handles = []

    def hook(name: str) -> Callable:
        def record(module: nn.Module, inputs: tuple, output: torch.Tensor) -> None:
            first = next((a for a in inputs if isinstance(a, torch.Tensor)), None)
            if first is None or not isinstance(output, torch.Tensor):
                return
            records.append(LayerLayout(
                name=name,
                kind=type(module).__name__,
                input_format=memory_format_of(first),
                output_format=memory_format_of(output),
                output_shape=tuple(output.shape),
                output_stride=tuple(output.stride()),
            ))
        return record

    for name, module in model.named_modules():
        if name and (include is None or include(module)):
            handles.append(module.register_forward_hook(hook(name)))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return records
