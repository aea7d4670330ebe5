"""Chapter 08, the ResNet-50 inference ladder: C24.

The seed's title promises "7 steps to 4.8x ResNet-50 inference throughput". Its chapter 5,
which is meant to attribute the 4.8x, measures something else entirely: transactions per
second of an order-creation service (1,240 to 5,952 TPS, Protobuf parsing and connection
pools). So the ladder judges the title's claim on ResNet-50 itself: does climbing the usual
inference steps reach 4.8x over eager float32, and over which float32 (strict, or PyTorch's
defaults, under which cuDNN already runs float32 convolutions in TF32)?
"""

from __future__ import annotations

from collections.abc import Mapping

from labkit.chapters.ch08_inference_ladder import numerics
from labkit.claims.core import (
    CONFIRMED,
    DEPENDS,
    NOISE,
    REFUTED,
    SEED_PIPELINE,
    Claim,
    ClaimError,
    band,
)
from labkit.core import discovery

CHAPTER = discovery.chapter_key(__name__)

SEED_SPEEDUP = 4.8  # the title's "4.8x"
SEED_STEPS = 7      # and its "7 steps"


def check_c24(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    """Reached 4.8x? Judged over both float32 baselines, each with its measured spread."""
    strict, defaults = float(ev["speedup_over_strict"]), float(ev["speedup_over_defaults"])
    if strict <= 0 or defaults <= 0:
        raise ClaimError("C24: speed-ups must be positive; was the ladder measured?")
    target = th["seed_speedup"]
    if ev.get("top_gate_passed") is False:
        raise ClaimError("C24: the top rung failed the numerics gate; a wrong rung is never judged")
    over_strict = band(strict, ev.get("strict_spread"), target)
    over_defaults = band(defaults, ev.get("defaults_spread"), target)
    batches = ""
    if ev.get("top_batch") and ev.get("baseline_batch"):
        batches = f" (top rung at batch {ev['top_batch']}, baselines at batch {ev['baseline_batch']})"
    text = (f"the top gated rung ({ev['top_rung']}, {ev['steps_kept']} steps kept) runs "
            f"{strict:.1f}x strict float32 eager and {defaults:.1f}x PyTorch's default float32 "
            f"eager{batches}")
    if "noise" in (over_strict, over_defaults):
        return DEPENDS, text, NOISE
    if over_strict == over_defaults == "above":
        return CONFIRMED, text + f": past {target}x over both", ""
    if over_strict == over_defaults == "below":
        return REFUTED, text + f": short of {target}x over both", ""
    return (DEPENDS, text, "the baseline: past 4.8x only over strict float32; PyTorch's default "
            "float32 already runs convolutions in TF32")


C24 = Claim(
    "C24", CHAPTER, SEED_PIPELINE,
    "Title and chapter 5: seven steps raise ResNet-50 inference throughput 4.8x",
    "Seven optimisation steps (JIT compilation to operator fusion) raise ResNet-50 inference "
    "throughput 4.8x.",
    f"the ladder's top rung, inside the numerics gate (its logits within the tolerance of its "
    f"math of strict-float32 eager's), is faster than {SEED_SPEEDUP}x eager float32 at batch 64 "
    "(the top rung may use a larger batch; it is also reported at 64) over both the strict and the default float32 baseline, with the whole interleaved "
    "spread past it",
    f"the top rung stays under {SEED_SPEEDUP}x over both baselines",
    ("speedup_over_strict", "speedup_over_defaults", "top_rung", "steps_kept"),
    thresholds={"seed_speedup": SEED_SPEEDUP,
                **{f"max_logit_error_{m}": t for m, t in numerics.TOLERANCES.items()},
                "min_top1_agreement": numerics.MIN_TOP1}, check=check_c24, timing_based=True,
    section_zh="第五章 端到端吞吐提升4.8倍的归因分析 (标题: 7步实现ResNet50推理吞吐提升4.8倍)",
    seed_setting="a GPU (the seed names none for this figure), ResNet-50 inference")

CLAIMS = [C24]
