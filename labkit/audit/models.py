"""The networks the audit can load by name, and the loader for a learner's own.

A spec is "package.module:function" (the function builds the model with no arguments), or
"torchvision:NAME" (torchvision.models.NAME(weights=None): random weights, nothing
downloaded; a layer torchvision zero-initialises, such as the ViT's head, gets seeded random
weights: `seed_zero_layers`), or one of the built-ins below, which need nothing but torch. torchvision's
wheel does not import on every CPU build of torch, so the chapter runs on the built-ins
where it is missing: labkit.models.resnet's ResNet-50 (the same network) and two small
hand-built stand-ins for MobileNetV3 (depthwise convolutions, squeeze-excite, hardswish)
and a ViT (patch embedding, flatten + transpose, transformer encoder).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable

import torch
from torch import nn

from labkit.models import batchnorm, resnet


class ModelSpecError(ValueError):
    """A model spec that cannot be turned into a model; the message says what to write."""


class SqueezeExcite(nn.Module):
    """Channel attention: global pool, two 1x1 convolutions, a hard sigmoid gate."""

    def __init__(self, channels: int, reduced: int) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.reduce = nn.Conv2d(channels, reduced, 1)
        self.expand = nn.Conv2d(reduced, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x times a per-channel gate in [0, 1]."""
        gate = self.expand(torch.relu(self.reduce(self.pool(x))))
        return x * nn.functional.hardsigmoid(gate)


class InvertedResidual(nn.Module):
    """MobileNetV3's block: 1x1 expand, depthwise 3x3, squeeze-excite, 1x1 project (+ skip)."""

    def __init__(self, cin: int, expand: int, cout: int, stride: int) -> None:
        super().__init__()
        self.skip = stride == 1 and cin == cout
        self.expand = nn.Sequential(nn.Conv2d(cin, expand, 1, bias=False), nn.BatchNorm2d(expand),
                                    nn.Hardswish())
        self.depthwise = nn.Sequential(
            nn.Conv2d(expand, expand, 3, stride, 1, groups=expand, bias=False),
            nn.BatchNorm2d(expand), nn.Hardswish())
        self.se = SqueezeExcite(expand, max(8, expand // 4))
        self.project = nn.Sequential(nn.Conv2d(expand, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The block's output, with the residual add when shapes allow it."""
        out = self.project(self.se(self.depthwise(self.expand(x))))
        return x + out if self.skip else out


class MobileNetV3Like(nn.Module):
    """A small MobileNetV3-style network (random weights)."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16),
                                  nn.Hardswish())
        blocks, cin = [], 16
        for expand, cout, stride in ((64, 24, 2), (72, 24, 1), (96, 40, 2), (240, 40, 1),
                                     (240, 80, 2), (480, 80, 1)):
            blocks.append(InvertedResidual(cin, expand, cout, stride))
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Sequential(nn.Conv2d(cin, 480, 1, bias=False), nn.BatchNorm2d(480),
                                  nn.Hardswish(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  nn.Linear(480, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Images [N, 3, H, W] to logits."""
        return self.head(self.blocks(self.stem(x)))


class ViTLike(nn.Module):
    """A small Vision Transformer: a strided convolution cuts patches, then an encoder.

    The patch grid [N, D, h, w] becomes a sequence with flatten(2).transpose(1, 2), the
    step whose layout decides whether the encoder's first op copies.
    """

    def __init__(self, image: int = 224, patch: int = 16, dim: int = 192, depth: int = 4,
                 heads: int = 3, classes: int = 1000) -> None:
        super().__init__()
        self.patch = patch
        self.embed = nn.Conv2d(3, dim, patch, patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.position = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 4, dropout=0.0, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Images [N, 3, H, W] (H = W = image) to logits, from the class token."""
        tokens = self.embed(x).flatten(2).transpose(1, 2)
        tokens = torch.cat([self.cls.expand(x.shape[0], -1, -1), tokens], dim=1) + self.position
        return self.fc(self.norm(self.encoder(tokens))[:, 0])


def mobilenet_v3_like() -> MobileNetV3Like:
    """The MobileNetV3 stand-in with random weights."""
    torch.manual_seed(0)
    return MobileNetV3Like()


def vit_like(image: int = 224) -> ViTLike:
    """The ViT stand-in with random weights, for square images of side `image`."""
    torch.manual_seed(0)
    return ViTLike(image=image)


# The seed of the weights `seed_zero_layers` gives a layer initialised to zeros.
HEAD_SEED = 0


def seed_zero_layers(model: nn.Module, seed: int = HEAD_SEED) -> list[str]:
    """Give every Linear or convolution whose weight is all zeros seeded random weights (the
    layer's own default initialisation, under `seed`); the names of those changed.

    torchvision's VisionTransformer zero-initialises its classifier head (`heads.head`, weight
    and bias), so with random weights every output is 0, and every check against it ("max
    |error| 0 against outputs up to 0") passes whatever it checks (review 2026-12-03g item 5).
    Only for random-weight networks the audit builds itself: a learner's own model is never
    changed (an all-zero reference is reported as not checkable instead). The global random
    state is left as it was.
    """
    changed = []
    for name, module in model.named_modules():
        weight = getattr(module, "weight", None)
        if (isinstance(module, nn.Linear | nn.Conv1d | nn.Conv2d | nn.Conv3d)
                and isinstance(weight, torch.Tensor) and not bool(weight.detach().any())):
            with torch.random.fork_rng(devices=[]), torch.no_grad():
                torch.manual_seed(seed)
                module.reset_parameters()
            changed.append(name)
    return changed


BUILTIN: dict[str, Callable[..., nn.Module]] = {
    "labkit:resnet50": resnet.resnet50,
    "labkit:mobilenet_v3": mobilenet_v3_like,
    "labkit:vit": vit_like,
}
# What the chapter runs: torchvision's network where it imports, else the built-in one.
TORCHVISION_NAMES = {"labkit:resnet50": "resnet50", "labkit:mobilenet_v3": "mobilenet_v3_large",
                     "labkit:vit": "vit_b_16"}


def has_torchvision() -> bool:
    """True when torchvision is installed and imports with this torch."""
    if importlib.util.find_spec("torchvision") is None:
        return False
    try:
        importlib.import_module("torchvision.models")
    except Exception:  # a wheel built for another torch fails at import (operator registration)
        return False
    return True


def preferred(builtin: str) -> str:
    """torchvision's spec for a built-in network where torchvision works, else the built-in."""
    return f"torchvision:{TORCHVISION_NAMES[builtin]}" if has_torchvision() else builtin


def load(spec: str, image: int | None = None) -> nn.Module:
    """Build the model a spec names; ModelSpecError (never a traceback) when it cannot."""
    if not isinstance(spec, str) or ":" not in spec:
        raise ModelSpecError(f"a model spec looks like 'mypkg.mymod:build_model' or "
                             f"'torchvision:resnet50', got {spec!r}")
    if spec in BUILTIN:
        built = vit_like(image) if spec == "labkit:vit" and image is not None else BUILTIN[spec]()
        seed_zero_layers(built)
        return built
    module_name, _, attribute = spec.partition(":")
    if module_name == "torchvision":
        if not has_torchvision():
            raise ModelSpecError(f"{spec}: torchvision is not installed (or does not import with "
                                 f"torch {torch.__version__}); the built-ins need nothing: "
                                 f"{', '.join(BUILTIN)}")
        module_name = "torchvision.models"
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        raise ModelSpecError(f"{spec}: module {module_name!r} does not import "
                             f"({type(error).__name__}: {error})") from None
    builder = getattr(module, attribute, None)
    if not callable(builder):
        raise ModelSpecError(f"{spec}: {module_name} has no callable {attribute!r}")
    try:
        model = builder(weights=None) if module_name == "torchvision.models" else builder()
    except Exception as error:
        raise ModelSpecError(f"{spec}: calling {attribute}() failed "
                             f"({type(error).__name__}: {error})") from None
    if not isinstance(model, nn.Module):
        raise ModelSpecError(f"{spec}: {attribute}() returned {type(model).__name__}, "
                             "not a torch.nn.Module")
    if module_name == "torchvision.models":  # random weights: a zero head gets seeded ones
        seed_zero_layers(model)
    return model


# The chapter's three networks: (name, built-in spec); torchvision's where it imports.
CHAPTER_NETWORKS = (("ResNet-50", "labkit:resnet50"), ("MobileNetV3", "labkit:mobilenet_v3"),
                    ("ViT", "labkit:vit"))


def chapter_networks() -> list[tuple[str, str]]:
    """(name, spec) for the three networks, torchvision's where available."""
    return [(name, preferred(spec)) for name, spec in CHAPTER_NETWORKS]


# Images a random-weight network's BatchNorm statistics are calibrated on (`calibrate_batchnorm`):
# a seed apart from the audit's example, so the check is not on the images it was fitted to.
CALIBRATION_SEED = 3
CALIBRATION_IMAGES = 8


def calibrate_batchnorm(model: nn.Module, image: int, channels: int = 3) -> nn.Module:
    """Set every BatchNorm's running statistics to those of CALIBRATION_IMAGES random images.

    A random-weight network keeps BatchNorm's made-up statistics (mean 0, variance 1), so its
    activations shrink layer by layer: the built-in MobileNetV3's outputs reached 3.9e-10 on
    the H200, and a numerics check on outputs that small checks nothing (and near-denormal
    values can slow a CPU). One pass in train mode with a cumulative average (momentum None)
    records each layer's own statistics (`labkit.models.batchnorm.calibrate`, which chapter 08's
    gate uses too). The affine weights are kept; the model comes back in eval mode. A model with no
    BatchNorm is returned as it was. Only for random weights: a trained model has its own.
    """
    if not any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        return model.eval()
    generator = torch.Generator().manual_seed(CALIBRATION_SEED)
    images = torch.randn(CALIBRATION_IMAGES, channels, image, image, generator=generator)
    return batchnorm.calibrate(model, images.to(next(model.parameters()).device))
