"""Where this machine's result stands: published reference points and the compute roof.

The roof is computed, not typed in: ResNet-50's FLOPs per image counted by PyTorch's own
FlopCounterMode on the model (about 4.1 G multiply-adds, 8.2 GFLOP at 224 px) divided into
this GPU's measured dense matmul rate in the top rung's precision (chapter 00's ceilings).
A convolution network never reaches it (small late-layer convolutions, elementwise tails,
the stem), so the roof says how far the top of the ladder could go at best.

The published point is labelled as published, with its source and its conditions, which
differ from the ladder's: INT8, TensorRT, batch 2048, data already on the GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from labkit.models import resnet

MLPERF_H200_RESNET50_OFFLINE = {
    "label": "published: MLPerf Inference (datacenter, closed division), ResNet-50 Offline, H200",
    "samples_per_s_per_gpu": 95_000,  # about 760k samples/s on 8 H200s
    "conditions": "INT8 with TensorRT, batch 2048, inputs already on the GPU, 99% of fp32 top-1",
    "source": "mlcommons.org/benchmarks/inference-datacenter (NVIDIA's submission; "
              "developer.nvidia.com/deep-learning-performance-training-inference)",
}
WHAT_CLOSES_THE_GAP = (
    "lower precision (FP8, INT8), fused epilogues, larger batches: see the optional section."
)


def flops_per_image(image: int = 224, model_factory: Callable[[], nn.Module] = resnet.resnet50) -> float:
    """ResNet-50's FLOPs for one image (a multiply-add counts 2), counted by FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    model = model_factory().eval()
    x = torch.zeros(1, 3, image, image, device="meta")
    model = model.to("meta")
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(x)
    return float(counter.get_total_flops())


def conv_output_elements(image: int = 224,
                         model_factory: Callable[[], nn.Module] = resnet.resnet50) -> int:
    """The elements every convolution of the model writes for one image (forward hooks on the
    meta device: shapes only, nothing computed); ResNet-50 at 224 px: about 11.1 M."""
    model = model_factory().eval().to("meta")
    total = 0

    def count(_module: nn.Module, _inputs: object, output: torch.Tensor) -> None:
        nonlocal total
        total += output[0].numel()   # one image of the batch of one
    hooks = [m.register_forward_hook(count) for m in model.modules() if isinstance(m, nn.Conv2d)]
    try:
        with torch.no_grad():
            model(torch.zeros(1, 3, image, image, device="meta"))
    finally:
        for hook in hooks:
            hook.remove()
    return total


BYTES = {"float32": 4, "tf32": 4, "float16": 2, "bfloat16": 2}


def memory_roof(top_images_per_s: float, math: str, copy_gbps: float, elements: int) -> tuple[str, str]:
    """An estimate of the byte floor, labelled so: each conv output written once and read once
    (by the next layer or its tail) in the rung's precision, at this machine's measured copy
    bandwidth; weights and the tails' own extra passes are left out, so the true floor is
    higher. A rung near this roof is bound by bytes: faster arithmetic cannot close its gap;
    fewer bytes (fused epilogues, 8-bit activations) can."""
    if copy_gbps <= 0 or elements <= 0:
        raise ValueError(f"copy_gbps and elements must be positive, got {copy_gbps} and {elements}")
    per_image = 2 * elements * BYTES.get(math, 4)
    images = copy_gbps * 1e9 / per_image
    # what the estimate counts is the page's text above the table: the label stays short
    return (f"memory roof (estimate: conv outputs, {per_image / 1e6:.3g} MB/image in {math} at "
            f"{copy_gbps:,.0f} GB/s copy)",
            f"{images:,.0f} images/s (top rung: {100 * top_images_per_s / images:.0f}%)")


@dataclass(frozen=True)
class Roof:
    """The dense compute roof in images/s for one math."""

    math: str
    matmul_tflops: float
    flops_per_image: float

    @property
    def images_per_s(self) -> float:
        return self.matmul_tflops * 1e12 / self.flops_per_image


def roof(matmul_tflops: dict[str, float], math: str, per_image: float) -> Roof | None:
    """The roof in `math` from a ceilings' matmul rates (None when that math was not measured)."""
    key = {"tf32": "tfloat32"}.get(math, math)
    rate = matmul_tflops.get(key)
    return None if not rate else Roof(math, float(rate), per_image)


def standing(top_images_per_s: float, top_math: str, matmul_tflops: dict[str, float],
             per_image: float, with_source: bool = True) -> list[tuple[str, str]]:
    """(what, value) rows: this run's top rung, its roof, and the published point (with its
    source unless with_source is False: a table that folds the source away)."""
    rows = [("top rung",
             f"{top_images_per_s:,.0f} images/s in {top_math}")]
    r = roof(matmul_tflops, top_math, per_image)
    if r is not None:
        rows.append((f"dense {top_math} compute roof ({r.matmul_tflops:.3g} TFLOP/s measured)",
                     f"{r.images_per_s:,.0f} images/s (top rung: "
                     f"{100 * top_images_per_s / r.images_per_s:.0f}%)"))
    published = MLPERF_H200_RESNET50_OFFLINE
    rows.append((published["label"] + f" [{published['conditions']}]",
                 f"~{published['samples_per_s_per_gpu']:,} samples/s per GPU"
                 + (f" (source: {published['source']})" if with_source else "")))
    return rows


# Published dense (no sparsity) tensor-core peaks of the H200 SXM, from NVIDIA's datasheet:
# labelled as published wherever shown, and applied only to a run on an H200.
H200_DENSE_SPEC = {
    "label": "published: NVIDIA H200 SXM datasheet, dense tensor-core peak (no sparsity)",
    "tflops": {"float16": 989.0, "bfloat16": 989.0, "int8": 1979.0},
    "source": "nvidia.com/en-us/data-center/h200 (the datasheet halves the 'with sparsity' figures)",
}


@dataclass(frozen=True)
class GapSplit:
    """The published MLPerf figure over this run's best rung, split into precision and efficiency.

    gap = precision x efficiency, where precision is the ratio of the two maths' published
    dense peaks (INT8 over the rung's), and efficiency the ratio of the shares of their own
    peak that the two reach. Every input is either measured in this run or published and
    labelled as such.
    """

    top_tflops: float          # measured: images/s x FLOPs per image
    top_share_of_peak: float   # of the published dense peak of its math
    published_tflops: float    # MLPerf's samples/s x the same FLOPs per image
    published_share_of_peak: float  # of the published dense INT8 peak
    gap: float
    precision: float
    efficiency: float
    elementwise_share: float | None  # measured: the best rung's elementwise share of device time
    # where the page times removing that share (the chapter's core points to its optional
    # section; the section itself says nothing: review 2026-12-04j item 3's self-reference)
    pointer: str = ""

    def lines(self, math: str) -> list[str]:
        spec = H200_DENSE_SPEC["tflops"]
        said = [
            f"the best rung runs {self.top_tflops:,.0f} TFLOP/s: {100 * self.top_share_of_peak:.0f}% of "
            f"the published dense {math} peak ({spec[math]:,.0f} TFLOP/s)",
            f"MLPerf's figure is {self.published_tflops:,.0f} TFLOP/s at the same FLOPs per image: "
            f"{100 * self.published_share_of_peak:.0f}% of the published dense INT8 peak "
            f"({spec['int8']:,.0f} TOP/s)",
            # two decimals each, so the product reads right (review 2026-12-04m item 13a: '3.1x
            # = 2.0x x 1.5x' for 3.08 = 2.00 x 1.54)
            f"the {self.gap:.2f}x gap = {self.precision:.2f}x precision (INT8's peak over {math}'s) "
            f"x {self.efficiency:.2f}x efficiency (share of peak reached)",
        ]
        if self.elementwise_share is not None:
            said.append(f"{100 * self.elementwise_share:.0f}% of the best rung's device time is "
                        "elementwise work (measured above)" + self.pointer)
        return said


def gap_split(top_images_per_s: float, math: str, per_image: float, device_name: str,
              elementwise_share: float | None = None) -> GapSplit | None:
    """Split MLPerf's figure over this run's best rung (None off an H200, or for a math with no
    published peak here: the spec numbers are the H200's)."""
    peaks = H200_DENSE_SPEC["tflops"]
    if "H200" not in device_name or math not in peaks or math == "int8" or top_images_per_s <= 0:
        return None
    top = top_images_per_s * per_image / 1e12
    published = MLPERF_H200_RESNET50_OFFLINE["samples_per_s_per_gpu"] * per_image / 1e12
    top_share, published_share = top / peaks[math], published / peaks["int8"]
    return GapSplit(top, top_share, published, published_share, published / top,
                    peaks["int8"] / peaks[math], published_share / top_share, elementwise_share)
