"""A synthetic image dataset whose samples cost real work: decode real bytes, then augment.

A DataLoader is only worth tuning when producing a sample costs something. Random tensors
cost nothing, and a downloaded dataset is not allowed here, so this module draws a few dozen
images with Pillow at start-up, encodes them as JPEG or PNG bytes, and then does per sample
what an ImageNet pipeline does: decode the bytes, take a random resized crop, flip, and turn
the pixels into a normalised float tensor. The knobs set the cost: the encoded side, the
format (PNG decodes several times slower than JPEG) and `extra_passes` (each a blur over the
decoded image, a stand-in for heavier augmentation).

    from labkit.chapters.ch05_dataloader import loader_data
    data = loader_data.SyntheticImages(length=512, encoded_side=96, output_side=64)
    image, label = data[0]                  # float32 [3, 64, 64], int
    loader_data.per_sample_cost(data)       # a bench Timing: seconds per sample, one thread

The dataset lives in this module, not in a notebook, because DataLoader workers must be
able to import (or unpickle) it: a class defined in a notebook cell cannot be found by a
worker started with 'spawn' (macOS, Windows). It holds only bytes and numbers, so it pickles.
Randomness is seeded from the index (and `epoch`), so a sample is the same in every worker
and every run, which lets tests compare loaders with and without workers.
"""

from __future__ import annotations

import io
import itertools
import random

import numpy as np
import torch
from PIL import Image, ImageDraw, ImageFilter
from torch.utils.data import Dataset

from labkit.measure import bench

FORMATS = ("JPEG", "PNG")
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
_MEAN = np.array(IMAGENET_MEAN, np.float32)
_INV_STD = 1 / np.array(IMAGENET_STD, np.float32)
MAX_SIDE = 1024  # beyond this the start-up encoding alone takes seconds per image


def _draw_image(index: int, side: int) -> Image.Image:
    """A picture with structure (gradient, shapes, noise), so JPEG has real work to do."""
    rng = np.random.default_rng(index)
    ramp = np.linspace(0, 255, side, dtype=np.float32)
    base = np.stack([np.add.outer(ramp * rng.uniform(0.2, 1), ramp * rng.uniform(0.2, 1)) / 2,
                     np.add.outer(ramp[::-1], ramp) / 2,
                     np.full((side, side), rng.uniform(0, 255), np.float32)], axis=-1)
    noisy = base + rng.normal(0, 12, size=base.shape)
    image = Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(6):
        x0, y0 = (int(v) for v in rng.integers(0, side, 2))
        x1, y1 = x0 + int(rng.integers(4, side // 2)), y0 + int(rng.integers(4, side // 2))
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)((x0, y0, x1, y1), fill=colour)
    return image


def encode(image: Image.Image, fmt: str, quality: int = 90) -> bytes:
    """The image as the bytes of a JPEG or PNG file."""
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **({"quality": quality} if fmt == "JPEG" else {}))
    return buffer.getvalue()


class SyntheticImages(Dataset):
    """`length` samples over `unique` encoded images; each __getitem__ decodes and augments.

    Returns (image, label): image is float32 [3, output_side, output_side] normalised with
    ImageNet's mean and std (or uint8 when `as_uint8`: four times fewer bytes to move
    between processes, normalise on the device instead), label an int in [0, classes).
    """

    def __init__(self, length: int = 512, unique: int = 32, encoded_side: int = 96,
                 output_side: int = 64, fmt: str = "JPEG", extra_passes: int = 0,
                 classes: int = 10, as_uint8: bool = False, epoch: int = 0) -> None:
        for name, value, low in (("length", length, 1), ("unique", unique, 1),
                                 ("encoded_side", encoded_side, 8), ("output_side", output_side, 8),
                                 ("classes", classes, 1), ("extra_passes", extra_passes, 0)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")
        if encoded_side > MAX_SIDE or output_side > MAX_SIDE:
            raise ValueError(f"encoded_side and output_side must be at most {MAX_SIDE} "
                             f"(got {encoded_side}, {output_side}); the course uses 64 to 256")
        if fmt not in FORMATS:
            raise ValueError(f"fmt must be one of {FORMATS}, got {fmt!r}")
        self.length, self.encoded_side, self.output_side = length, encoded_side, output_side
        self.fmt, self.extra_passes, self.classes = fmt, extra_passes, classes
        self.as_uint8, self.epoch = as_uint8, epoch
        self.encoded = [encode(_draw_image(i, encoded_side), fmt) for i in range(unique)]

    def __len__(self) -> int:
        return self.length

    @property
    def sample_bytes(self) -> int:
        """Bytes of one returned image tensor (what a worker hands to the main process)."""
        return 3 * self.output_side**2 * (1 if self.as_uint8 else 4)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        if not 0 <= index < self.length:
            raise IndexError(f"index {index} is outside this dataset of {self.length} samples")
        rng = random.Random(index * 1_000_003 + self.epoch)
        with Image.open(io.BytesIO(self.encoded[index % len(self.encoded)])) as encoded:
            image = encoded.convert("RGB")  # the decode happens here
        image = self._random_resized_crop(image, rng)
        if rng.random() < 0.5:
            image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        for _ in range(self.extra_passes):
            image = image.filter(ImageFilter.GaussianBlur(radius=1.5))
        # numpy, not torch, for the per-pixel work: single-threaded like a DataLoader worker
        # (torch sets workers to one thread; in the main process torch's thread pool would
        # spin against the training step for these small arrays).
        pixels = np.asarray(image)  # [H, W, 3] uint8
        label = index % self.classes
        if self.as_uint8:
            return torch.from_numpy(np.ascontiguousarray(pixels.transpose(2, 0, 1))), label
        scaled = (pixels.astype(np.float32) * (1 / 255) - _MEAN) * _INV_STD
        return torch.from_numpy(np.ascontiguousarray(scaled.transpose(2, 0, 1))), label

    def _random_resized_crop(self, image: Image.Image, rng: random.Random) -> Image.Image:
        """torchvision's RandomResizedCrop in short: 35-100% of the area, aspect 3/4 to 4/3."""
        side = image.width
        area = side * side * rng.uniform(0.35, 1.0)
        aspect = rng.uniform(3 / 4, 4 / 3)
        width = min(side, max(8, int(round((area * aspect) ** 0.5))))
        height = min(side, max(8, int(round((area / aspect) ** 0.5))))
        left, top = rng.randint(0, side - width), rng.randint(0, side - height)
        return image.resize((self.output_side, self.output_side), Image.Resampling.BILINEAR,
                            box=(left, top, left + width, top + height))


class Trivial(Dataset):
    """Samples that cost nothing (a small tensor of zeros): what is left of an epoch's first
    batch is the worker start-up itself, a fork (or a fresh interpreter with 'spawn')."""

    def __init__(self, length: int = 64, side: int = 8) -> None:
        if length < 1 or side < 1:
            raise ValueError(f"length and side must be >= 1, got {length}, {side}")
        self.length, self.side = length, side

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        if not 0 <= index < self.length:
            raise IndexError(f"index {index} is outside this dataset of {self.length} samples")
        return torch.zeros(3, self.side, self.side), 0


def normalise_on_device(batch: torch.Tensor) -> torch.Tensor:
    """uint8 [N, 3, H, W] to normalised float32, on whatever device the batch is on."""
    mean = torch.tensor(IMAGENET_MEAN, device=batch.device).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD, device=batch.device).view(1, 3, 1, 1)
    return (batch.float().div_(255) - mean) / std


def per_sample_cost(dataset: SyntheticImages, rep_ms: float = 300.0) -> bench.Timing:
    """Seconds to produce one sample in this process (decode + augment + to tensor), one thread.

    Timed with labkit.measure.bench in 'hot' mode on one thread, as a DataLoader worker runs it (torch
    gives each worker one thread; its caches stay warm from sample to sample); each call takes
    the next of a spread of indices, so the median covers many crops and both flips.
    """
    indices = itertools.count()
    return bench.time(lambda: dataset[(next(indices) * 7919) % len(dataset)], mode="hot",
                      device="cpu", threads=1, rep_ms=rep_ms, warmup_ms=20,
                      label="one sample: decode + augment")
