"""Chapter 05, DataLoader tuning: C13 (a "zero-copy DMA path") and C23 (its GB/s table).

Both come from the seed's section 4.3, which sets `pin_memory=True, pin_memory_device='cuda:0'`
on a DataLoader and says the second "binds to the GPU and enables the zero-copy path" (CUDA
UVA, the GPU reading the host memory directly over PCIe, "removing the explicit .to('cuda')
copy"), then gives a table: 4.2 GB/s pageable, 12.8 pinned, 18.6 with pin_memory_device.
Both need a CUDA GPU: a CPU run shows the recorded reference verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping

from labkit.claims.core import (
    CONFIRMED,
    DEPENDS,
    NOISE,
    REFUTED,
    SEED_PIPELINE,
    Claim,
    band,
)
from labkit.claims.trust import Decision, verdict_or_veto
from labkit.core import discovery

CHAPTER = discovery.chapter_key(__name__)

SECTION = "4.3 Pre-allocated pinned memory and a zero-copy DMA path"
SECTION_ZH = "4.3 Pinned memory预分配与零拷贝DMA通道绑定"
SEED_GBPS = {"pageable": 4.2, "pinned": 12.8, "pin_memory_device": 18.6}
PINNED_GAIN_RATIO = 2.0  # pinned "beats" pageable if > 2x its GB/s (the seed: 12.8/4.2 = 3.0x)
PMD_GAIN_RATIO = 1.2  # pin_memory_device "adds" bandwidth if > 1.2x pinned (the seed: 18.6/12.8 = 1.45x)


def check_c13(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    copies, on_host = int(ev["h2d_memcpy_events"]), ev["batch_device"] == "cpu"
    reads_host = bool(ev["gpu_op_accepts_batch"])
    text = (f"with pin_memory_device the batch lives on {ev['batch_device']} "
            f"({'pinned' if ev['batch_pinned'] else 'not pinned'}); a GPU op "
            f"{'accepts' if reads_host else 'refuses'} it as is; moving it to the GPU runs "
            f"{copies} host-to-device memcpy(s)")
    if ev.get("warnings"):
        text += f"; the DataLoader warns: {ev['warnings'][0]}"
    if copies > 0 and on_host and not reads_host:
        return REFUTED, text, ""
    if copies == 0 and (reads_host or not on_host):
        return CONFIRMED, text, ""
    return DEPENDS, text, "what the profile caught: the copy events and the batch disagree"


C13 = Claim(
    "C13", CHAPTER, SEED_PIPELINE, SECTION,
    "pin_memory_device='cuda:0' binds the pinned memory to the GPU and gives a zero-copy DMA "
    "path (UVA): the GPU reads the batch directly, with no explicit host-to-device copy.",
    "no host-to-device memcpy runs when the batch is used on the GPU, and a GPU op takes it as is",
    "the batch is an ordinary pinned CPU tensor: GPU ops refuse it, and moving it runs an "
    "explicit host-to-device memcpy",
    ("h2d_memcpy_events", "batch_device", "batch_pinned", "gpu_op_accepts_batch"),
    check=check_c13, section_zh=SECTION_ZH,
    seed_setting="a CUDA GPU, DataLoader(pin_memory=True, pin_memory_device='cuda:0')")


def check_c23(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    pageable, pinned, pmd = ev["pageable_gbps"], ev["pinned_gbps"], ev["pin_memory_device_gbps"]
    pinned_gain, pmd_gain = pinned / pageable, pmd / pinned
    pinned_where = band(pinned_gain, ev.get("pinned_speedup_iqr"), th["pinned_gain_ratio"])
    pmd_where = band(pmd_gain, ev.get("pin_memory_device_speedup_iqr"), th["pmd_gain_ratio"])
    text = (f"{pageable:.1f} GB/s pageable, {pinned:.1f} pinned ({pinned_gain:.2f}x), "
            f"{pmd:.1f} with pin_memory_device ({pmd_gain:.2f}x pinned), copies of "
            f"{ev['transfer_bytes'] / 2**20:.0f} MiB; the seed: "
            f"{SEED_GBPS['pageable']}, {SEED_GBPS['pinned']} and {SEED_GBPS['pin_memory_device']}")
    if "noise" in (pinned_where, pmd_where):
        return DEPENDS, text, NOISE
    vetoed, text = verdict_or_veto(ev.get("noisy"), [
        Decision("pinned/pageable", pinned_gain, ev.get("pinned_speedup_iqr"), th["pinned_gain_ratio"]),
        Decision("pin_memory_device/pinned", pmd_gain, ev.get("pin_memory_device_speedup_iqr"),
                 th["pmd_gain_ratio"])], text)
    if vetoed:
        return vetoed
    if pmd_where == "below":
        return REFUTED, text, ""
    if pinned_where == "above":
        return CONFIRMED, text, ""
    return DEPENDS, text, "the row: pin_memory_device gains, but pinned does not beat pageable"


C23 = Claim(
    "C23", CHAPTER, SEED_PIPELINE, SECTION + " (performance comparison)",
    "Host-to-device bandwidth is 4.2 GB/s pageable, 12.8 GB/s with pin_memory=True and "
    "18.6 GB/s with pin_memory_device='cuda:0' added.",
    f"pinned copies are > {PINNED_GAIN_RATIO}x pageable and pin_memory_device adds > "
    f"{PMD_GAIN_RATIO}x on top (the seed's own ratios: 3.0x and 1.45x; absolute GB/s belong "
    "to a machine)",
    f"pin_memory_device's copies are <= {PMD_GAIN_RATIO}x the pinned ones (the third row does "
    "not hold)",
    ("pageable_gbps", "pinned_gbps", "pin_memory_device_gbps", "transfer_bytes"),
    thresholds={"pinned_gain_ratio": PINNED_GAIN_RATIO, "pmd_gain_ratio": PMD_GAIN_RATIO},
    check=check_c23, timing_based=True, section_zh=SECTION_ZH + " (性能对比)",
    seed_setting="a CUDA GPU, DataLoader batches of 256 ImageNet images (154 MB in float32)")

CLAIMS = [C13, C23]
