"""Chapter 02, contiguity and hidden copies: C2, C5, C6, C9, C10, C12.

Each claim reads on one screen: the seed's statement (English gist, section), the rule,
its named thresholds and its check. Timing-based checks go through `band`, so a ratio whose
measured spread straddles a threshold gives 'depends' on noise, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping

from labkit.claims.core import (
    CONFIRMED,
    DEPENDS,
    NOISE,
    REFUTED,
    SEED_STRIDES,
    Claim,
    ClaimError,
    band,
)

COSTLY_RATIO = 1.5  # a copy is "implicit and costly" if the implicit path is > 1.5x the explicit one
MISALIGNED_COSTLY_RATIO = 1.5  # misaligned reads "cost" if > 1.5x the aligned time per element
CACHE_LINE_BYTES = 64  # the seed's cache line
NARROW_COSTLY_RATIO = 1.5  # narrow on a transposed view is "costly" if > 1.5x narrow on contiguous
STRIDED_PENALTY_RATIO = 1.5  # a transposed copy costs "more than its bytes" if > 1.5x slower than a plain copy
STRIDE_AWARE_WIN_RATIO = 1.2  # a stride-aware kernel "beats" copy-then-kernel if > 1.2x faster


def check_c2(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    cases = list(ev["cases"])
    if not cases:
        raise ClaimError("C2: no matmul case was measured")
    holds, noisy, notes = [], [], []
    for c in cases:
        ratio = c["implicit_median_s"] / c["explicit_median_s"]
        copies = int(c["implicit_copy_bytes"]) > 0
        where = band(ratio, c.get("ratio_iqr"), th["costly_ratio"])
        notes.append(f"{c['case']}: implicit copy {'yes' if copies else 'no'}, "
                     f"implicit/explicit time {ratio:.2f}x")
        if copies and where == "above":
            holds.append(c["case"])
        elif copies and where == "noise":
            noisy.append(c["case"])
    text = "; ".join(notes)
    if noisy:
        return DEPENDS, text, NOISE
    if len(holds) == len(cases):
        return CONFIRMED, text, ""
    if not holds:
        return REFUTED, text, ""
    return DEPENDS, text, f"the case: holds only for {', '.join(holds)}"


C2 = Claim(
    "C2", "02", SEED_STRIDES, "Chapter 1: a typical performance comparison (A100, FP16, batch 64)",
    "x.transpose(0,1).matmul(w) pays an implicit contiguous copy: 84.2 ms against 21.7 ms with .contiguous() first.",
    f"a copy is recorded in the implicit path and it is > {COSTLY_RATIO}x slower than the explicit one",
    f"no implicit copy, or implicit/explicit <= {COSTLY_RATIO}",
    ("cases",), thresholds={"costly_ratio": COSTLY_RATIO}, check=check_c2,
    section_zh="第一章 典型性能对比 (A100, FP16 batch64)", seed_setting="A100 GPU, fp16, batch 64")


def check_c5(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    if int(ev["fresh_checked"]) <= 0 or int(ev["views_checked"]) <= 0:
        raise ClaimError("C5: no tensor's alignment was checked")
    ratio = ev["misaligned_ns_per_element"] / ev["aligned_ns_per_element"]
    fresh_bad, views_bad = int(ev["fresh_misaligned"]), int(ev["contiguous_views_misaligned"])
    aligned = fresh_bad == 0 and views_bad == 0
    where = band(ratio, ev.get("misaligned_ratio_iqr"), th["misaligned_costly_ratio"])
    text = (f"{fresh_bad}/{ev['fresh_checked']} fresh and {views_bad}/{ev['views_checked']} "
            f"contiguous views off a {th['cache_line_bytes']}-byte line; misaligned/aligned "
            f"time per element {ratio:.2f}x")
    if where == "noise":
        return DEPENDS, text, NOISE
    if where == "below":
        return REFUTED, text, ""
    if aligned:
        return CONFIRMED, text, ""
    return DEPENDS, text, "fresh allocation vs view: contiguous views can start mid-line"


C5 = Claim(
    "C5", "02", SEED_STRIDES, "2.2 What contiguous tensors really are (effect of alignment)",
    "Contiguous tensors are aligned to 64-byte cache lines; misaligned non-contiguous access costs 42.7 ns against 19.1 ns.",
    f"every contiguous tensor starts on a line and misaligned reads are > {MISALIGNED_COSTLY_RATIO}x slower",
    f"misaligned reads cost <= {MISALIGNED_COSTLY_RATIO}x; 'depends' if contiguous views start mid-line",
    ("fresh_checked", "fresh_misaligned", "views_checked", "contiguous_views_misaligned",
     "aligned_ns_per_element", "misaligned_ns_per_element"),
    thresholds={"misaligned_costly_ratio": MISALIGNED_COSTLY_RATIO,
                "cache_line_bytes": CACHE_LINE_BYTES}, check=check_c5,
    section_zh="2.2 contiguous张量的本质 (对齐优化效果对比)",
    seed_setting="a CPU: 64-byte cache lines, L1 miss rates")


def check_c6(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    copied = int(ev["copy_bytes"])
    ratio = ev["narrow_transposed_median_s"] / ev["narrow_contiguous_median_s"]
    if copied == 0 and ev["shares_storage"]:
        return (REFUTED, f"narrow on the transposed view copied 0 bytes and shares storage; "
                f"it takes {ratio:.2f}x the time of narrow on the contiguous tensor", "")
    if ratio > th["narrow_costly_ratio"]:
        return CONFIRMED, f"narrow copied {copied} bytes and took {ratio:.2f}x as long", ""
    return DEPENDS, f"narrow copied {copied} bytes but took only {ratio:.2f}x as long", "size"


C6 = Claim(
    "C6", "02", SEED_STRIDES, "2.3 The hidden cost of non-contiguous tensors",
    "narrow() on a transposed view triggers an implicit contiguous() copy (89.7 us against 12.3 us).",
    f"the copy detector records a copy and narrow takes > {NARROW_COSTLY_RATIO}x as long",
    "no copy is recorded and the result shares storage",
    ("copy_bytes", "shares_storage", "narrow_contiguous_median_s", "narrow_transposed_median_s"),
    thresholds={"narrow_costly_ratio": NARROW_COSTLY_RATIO}, check=check_c6,
    section_zh="2.3 非contiguous张量的隐式开销")


def check_c9(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    full_copy = int(ev["transposed_copy_bytes"]) >= int(ev["expected_bytes"]) > 0
    free_when_contiguous = bool(ev["contiguous_returns_self"]) and int(ev["contiguous_copy_bytes"]) == 0
    penalty = ev["plain_copy_gbps"] / ev["transposed_gbps"]
    text = (f"transposed: {ev['transposed_copy_bytes']} bytes copied at {ev['transposed_gbps']:.1f} "
            f"GB/s, {penalty:.2f}x slower than a plain copy; already contiguous: "
            f"{'returns itself, no copy' if free_when_contiguous else 'copies'}")
    if not (full_copy and free_when_contiguous):
        return REFUTED, text, ""
    where = band(penalty, ev.get("penalty_iqr"), th["strided_penalty_ratio"])
    if where == "noise":
        return DEPENDS, text, NOISE
    if where == "above":
        return CONFIRMED, text, ""
    return DEPENDS, text, "what 'cost' means: a full copy, but at a plain copy's speed"


C9 = Claim(
    "C9", "02", SEED_STRIDES, "3.1 Quantifying the cost of contiguous()",
    "contiguous() on a transposed 128x512x256 tensor is costly (18,420 MB/s, 2.7M DTLB misses) against a natively contiguous tensor (920 MB/s).",
    f"a full copy, free when already contiguous, > {STRIDED_PENALTY_RATIO}x slower than a plain copy of the same bytes",
    "no full copy, or a copy when already contiguous; 'depends' if it runs at a plain copy's speed",
    ("transposed_copy_bytes", "expected_bytes", "contiguous_returns_self",
     "contiguous_copy_bytes", "transposed_gbps", "plain_copy_gbps"),
    thresholds={"strided_penalty_ratio": STRIDED_PENALTY_RATIO}, check=check_c9,
    section_zh="3.1 contiguous()调用代价量化", seed_setting="a CPU (DTLB misses), 128x512x256")


def check_c10(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    ratio = ev["contiguous_path_median_s"] / ev["stride_aware_median_s"]
    text = (f"{ev['kernel']}: copy-then-kernel takes {ratio:.2f}x the time of the "
            "stride-aware kernel")
    where = band(ratio, ev.get("ratio_iqr"), th["stride_aware_win_ratio"])
    if where == "noise":
        return DEPENDS, text, NOISE
    return (CONFIRMED if where == "above" else REFUTED), text, ""


C10 = Claim(
    "C10", "02", SEED_STRIDES, "3.2 Designing stride-aware operators",
    "A stride-aware kernel beats contiguous()-then-kernel (8.7 ms against 3.2 ms, 8 MB against 0 B copied).",
    f"copy-then-kernel takes > {STRIDE_AWARE_WIN_RATIO}x the stride-aware kernel's time",
    f"the ratio is <= {STRIDE_AWARE_WIN_RATIO}",
    ("kernel", "stride_aware_median_s", "contiguous_path_median_s"),
    thresholds={"stride_aware_win_ratio": STRIDE_AWARE_WIN_RATIO}, check=check_c10,
    section_zh="3.2 stride-aware算子设计", seed_setting="a GPU, transposed 1024x1024 matmul")


def check_c12(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    exists, breaks = bool(ev["config_exists"]), int(ev["graph_break_count"])
    text = (f"output_graph_debug {'exists' if exists else 'does not exist'} in this torch; "
            f"torch._dynamo.explain finds {ev['graph_count']} graph(s), {breaks} break(s) "
            "in stride-changing code")
    return (CONFIRMED if exists and breaks > 0 else REFUTED), text, ""


C12 = Claim(
    "C12", "02", SEED_STRIDES, "4.1 Locating forward-pass bottlenecks",
    "torch._dynamo.config.output_graph_debug shows where stride changes split the graph.",
    "the setting exists and stride-changing code breaks the graph",
    "the setting does not exist, or stride changes cause no graph break",
    ("config_exists", "graph_count", "graph_break_count"), check=check_c12,
    section_zh="4.1 模型前向传播瓶颈定位")

CLAIMS = [C2, C5, C6, C9, C10, C12]
