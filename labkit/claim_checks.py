"""How each claim is judged: measured evidence in, (outcome, reason, depends_on) out.

One check function per claim of the curriculum, named after its id (`check_c2` judges C2).
Each reads numbers only, compares them with a threshold written down below as a named
constant, and builds its one-sentence reason from those numbers, so the same code gives
`confirmed` on one machine and `refuted` or `depends` on another. `labkit.claims` holds
what each claim states and where it comes from, and calls these.
"""

from __future__ import annotations

from collections.abc import Mapping

CONFIRMED, REFUTED, DEPENDS = "confirmed", "refuted", "depends"
OUTCOMES = (CONFIRMED, REFUTED, DEPENDS)

# Thresholds, named so a reader sees what decides each verdict.
COSTLY_RATIO = 1.5  # a copy is "implicit and costly" if the implicit path is > 1.5x the explicit one
MISALIGNED_COSTLY_RATIO = 1.5  # misaligned reads "cost" if > 1.5x the aligned time per element
CACHE_LINE_BYTES = 64  # the seed's cache line
NARROW_COSTLY_RATIO = 1.5  # narrow on a transposed view is "costly" if > 1.5x narrow on contiguous
STRIDED_PENALTY_RATIO = 1.5  # a transposed copy costs "more than its bytes" if > 1.5x slower than a plain copy
STRIDE_AWARE_WIN_RATIO = 1.2  # a stride-aware kernel "beats" copy-then-kernel if > 1.2x faster
CHANNELS_LAST_FASTER_RATIO = 1.05  # channels_last "raises throughput" if NHWC/NCHW img/s > 1.05


class ClaimError(ValueError):
    """A claim was asked for a verdict it cannot give (unknown id, missing evidence, untested)."""


def check_c1(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    stride, contiguous = tuple(ev["stride"]), bool(ev["is_contiguous"])
    if stride == (1, 4) and not contiguous:
        return CONFIRMED, f"x.t() has strides {stride} and is_contiguous() is False", ""
    return REFUTED, f"x.t() has strides {stride}, is_contiguous() = {contiguous}", ""


def check_c3(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    checked = int(ev["elements_checked"])
    if checked <= 0:
        raise ClaimError("C3: no element addresses were checked; evidence is empty")
    in_elements, in_bytes = int(ev["element_formula_mismatches"]), int(ev["byte_formula_mismatches"])
    if in_elements:
        return REFUTED, f"{in_elements} of {checked} addresses differ from base + sum(i_k*stride_k)", ""
    if in_bytes:
        return (DEPENDS, f"right for all {checked} elements counted in elements; read as bytes it "
                f"misses {in_bytes} addresses", "units: strides count elements, so byte "
                "addresses need x itemsize (and + storage offset from the storage start)")
    return CONFIRMED, f"all {checked} addresses match, in elements and in bytes", ""


def check_c4(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    shape, stride = tuple(ev["shape"]), tuple(ev["stride"])
    if stride == (12, 1, 4) and shape == (2, 4, 3):
        return CONFIRMED, f"permute(0,2,1) gives shape {shape}, strides {stride}", ""
    return REFUTED, f"permute(0,2,1) gives shape {shape}, strides {stride}", ""


def check_c8a(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    if not ev["raised"]:
        return REFUTED, "view(-1, 4) on the transposed tensor succeeded", ""
    what = f"{ev['error_type']}: {ev['error_message']}"
    if ev["noncontiguous_view_succeeded"]:
        return (DEPENDS, f"view(-1, 4) raised {what}, yet another view of the same "
                "non-contiguous tensor succeeded", "which dims are merged: view needs "
                "stride-compatible dims, not contiguity")
    return CONFIRMED, f"view raised {what} and no view of the non-contiguous tensor worked", ""


def check_c8b(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    cases = list(ev["cases"])
    if not cases:
        raise ClaimError("C8b: no broadcasting cases were run")
    wrong = [c for c in cases if _as_outcome(c["observed"]) != _as_outcome(c["seed_says"])]
    if wrong:
        first = wrong[0]
        return (REFUTED, f"{len(wrong)} of {len(cases)} cases differ, e.g. {first['a']} with "
                f"{first['b']} gave {first['observed']}, the seed says {first['seed_says']}", "")
    return CONFIRMED, f"all {len(cases)} broadcasting cases behave as the seed says", ""


def _as_outcome(value: object) -> object:
    return "error" if value == "error" else tuple(value)


def check_c8c(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    if not ev["raised"]:
        return REFUTED, "permute(0, 0, 1) did not raise", ""
    what = f"{ev['error_type']}: {ev['error_message']}"
    if ev["error_type"] == "IndexError" and "repeated dim" in ev["error_message"]:
        return CONFIRMED, f"raised {what}", ""
    return (REFUTED, f"repeated dims are rejected, but with {what} "
            "(not IndexError: repeated dim)", "")


def check_c11a(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    shares, copied = bool(ev["shares_storage"]), int(ev["copy_bytes"])
    if shares and copied == 0:
        return CONFIRMED, "as_strided shares the input's storage and the copy detector saw 0 bytes", ""
    return REFUTED, f"shares storage: {shares}, bytes copied: {copied}", ""


def check_c11b(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    tools = dict(ev["tools"])
    if not tools:
        raise ClaimError("C11b: no tracer was tried")
    worked = sorted(t for t, r in tools.items() if r["ok"] and r["matches_eager"])
    failed = sorted(t for t in tools if t not in worked)
    if not worked:
        return CONFIRMED, f"none of {failed} captured as_strided correctly", ""
    if not failed:
        return REFUTED, f"{', '.join(worked)} all captured as_strided and match eager", ""
    return (DEPENDS, f"worked: {', '.join(worked)}; failed: {', '.join(failed)}",
            f"the tool: {', '.join(failed)} fail")


def _band(value: float, spread: object, threshold: float) -> str:
    """'above' or 'below' a threshold, or 'noise' when the measured spread straddles it.

    spread is the IQR of the per-round ratios from bench.compare (optional); the pooled
    ratio itself counts too, so a verdict never rests on a ratio the rounds do not support.
    """
    values = [value] + ([float(v) for v in spread] if spread else [])
    if min(values) > threshold:
        return "above"
    if max(values) <= threshold:
        return "below"
    return "noise"


NOISE = "noise: the spread of the measured ratio straddles the threshold; rerun on a quiet machine"


def check_c2(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    cases = list(ev["cases"])
    if not cases:
        raise ClaimError("C2: no matmul case was measured")
    holds, noisy, notes = [], [], []
    for c in cases:
        ratio = c["implicit_median_s"] / c["explicit_median_s"]
        copies = int(c["implicit_copy_bytes"]) > 0
        band = _band(ratio, c.get("ratio_iqr"), th["costly_ratio"])
        notes.append(f"{c['case']}: implicit copy {'yes' if copies else 'no'}, "
                     f"implicit/explicit time {ratio:.2f}x")
        if copies and band == "above":
            holds.append(c["case"])
        elif copies and band == "noise":
            noisy.append(c["case"])
    text = "; ".join(notes)
    if noisy:
        return DEPENDS, text, NOISE
    if len(holds) == len(cases):
        return CONFIRMED, text, ""
    if not holds:
        return REFUTED, text, ""
    return DEPENDS, text, f"the case: holds only for {', '.join(holds)}"


def check_c5(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    if int(ev["fresh_checked"]) <= 0 or int(ev["views_checked"]) <= 0:
        raise ClaimError("C5: no tensor's alignment was checked")
    ratio = ev["misaligned_ns_per_element"] / ev["aligned_ns_per_element"]
    fresh_bad, views_bad = int(ev["fresh_misaligned"]), int(ev["contiguous_views_misaligned"])
    aligned = fresh_bad == 0 and views_bad == 0
    band = _band(ratio, ev.get("misaligned_ratio_iqr"), th["misaligned_costly_ratio"])
    text = (f"{fresh_bad}/{ev['fresh_checked']} fresh and {views_bad}/{ev['views_checked']} "
            f"contiguous views off a {th['cache_line_bytes']}-byte line; misaligned/aligned "
            f"time per element {ratio:.2f}x")
    if band == "noise":
        return DEPENDS, text, NOISE
    if band == "below":
        return REFUTED, text, ""
    if aligned:
        return CONFIRMED, text, ""
    return DEPENDS, text, "fresh allocation vs view: contiguous views can start mid-line"


def check_c6(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    copied = int(ev["copy_bytes"])
    ratio = ev["narrow_transposed_median_s"] / ev["narrow_contiguous_median_s"]
    if copied == 0 and ev["shares_storage"]:
        return (REFUTED, f"narrow on the transposed view copied 0 bytes and shares storage; "
                f"it takes {ratio:.2f}x the time of narrow on the contiguous tensor", "")
    if ratio > th["narrow_costly_ratio"]:
        return CONFIRMED, f"narrow copied {copied} bytes and took {ratio:.2f}x as long", ""
    return DEPENDS, f"narrow copied {copied} bytes but took only {ratio:.2f}x as long", "size"


def check_c9(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    full_copy = int(ev["transposed_copy_bytes"]) >= int(ev["expected_bytes"]) > 0
    free_when_contiguous = bool(ev["contiguous_returns_self"]) and int(ev["contiguous_copy_bytes"]) == 0
    penalty = ev["plain_copy_gbps"] / ev["transposed_gbps"]
    text = (f"transposed: {ev['transposed_copy_bytes']} bytes copied at {ev['transposed_gbps']:.1f} "
            f"GB/s, {penalty:.2f}x slower than a plain copy; already contiguous: "
            f"{'returns itself, no copy' if free_when_contiguous else 'copies'}")
    if not (full_copy and free_when_contiguous):
        return REFUTED, text, ""
    band = _band(penalty, ev.get("penalty_iqr"), th["strided_penalty_ratio"])
    if band == "noise":
        return DEPENDS, text, NOISE
    if band == "above":
        return CONFIRMED, text, ""
    return DEPENDS, text, "what 'cost' means: a full copy, but at a plain copy's speed"


def check_c10(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    ratio = ev["contiguous_path_median_s"] / ev["stride_aware_median_s"]
    text = (f"{ev['kernel']}: copy-then-kernel takes {ratio:.2f}x the time of the "
            "stride-aware kernel")
    band = _band(ratio, ev.get("ratio_iqr"), th["stride_aware_win_ratio"])
    if band == "noise":
        return DEPENDS, text, NOISE
    return (CONFIRMED if band == "above" else REFUTED), text, ""


def check_c12(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    exists, breaks = bool(ev["config_exists"]), int(ev["graph_break_count"])
    text = (f"output_graph_debug {'exists' if exists else 'does not exist'} in this torch; "
            f"torch._dynamo.explain finds {ev['graph_count']} graph(s), {breaks} break(s) "
            "in stride-changing code")
    return (CONFIRMED if exists and breaks > 0 else REFUTED), text, ""


def check_c7(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    runs = list(ev["runs"])
    if not runs:
        raise ClaimError("C7: no ResNet-50 run was measured")
    if int(ev["channels_last_stride1"]) != 1:
        return REFUTED, f"a channels_last tensor has stride[1] = {ev['channels_last_stride1']}", ""
    bands = [_band(r["nhwc_img_s"] / r["nchw_img_s"], _inverse(r.get("nhwc_time_ratio_iqr")),
                   th["channels_last_faster_ratio"]) for r in runs]
    certain = [(r, band) for r, band in zip(runs, bands, strict=True) if band != "noise"]
    faster = [r for r, band in certain if band == "above"]
    ratios = ", ".join(f"{r['dtype']} b{r['batch']}: {r['nhwc_img_s'] / r['nchw_img_s']:.2f}x"
                       for r in runs)
    text = f"NHWC/NCHW img/s: {ratios}"
    if len(certain) < len(runs):
        text += f" ({len(runs) - len(certain)} run(s) within noise, left out)"
    if not certain:
        return DEPENDS, text, NOISE
    if len(faster) == len(certain):
        return CONFIRMED, text, ""
    if not faster:
        return REFUTED, text, ""
    return DEPENDS, text, "dtype and batch: faster for " + ", ".join(
        f"{r['dtype']} b{r['batch']}" for r in faster)


def _inverse(spread: object) -> list[float] | None:
    """A time ratio's spread turned into the spread of the matching speed ratio."""
    return [1.0 / float(v) for v in spread] if spread else None


def check_c22(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    conv, nhwc_mm = int(ev["conv_conversion_bytes"]), int(ev["channel_matmul_nhwc_copy_bytes"])
    nchw_mm, kernels = int(ev["channel_matmul_nchw_copy_bytes"]), list(ev["conversion_kernels"])
    text = (f"NHWC conv: {conv} bytes of layout copies, {len(kernels)} layout-conversion kernel(s), "
            f"output {ev['conv_output_format']}; channel matmul copied {nhwc_mm} bytes from NHWC, "
            f"{nchw_mm} from NCHW")
    if conv > 0 or nhwc_mm > 0 or kernels:
        return CONFIRMED, text, ""
    return REFUTED, text, ""
