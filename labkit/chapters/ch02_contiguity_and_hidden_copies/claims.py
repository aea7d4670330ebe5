"""Chapter 02, contiguity and hidden copies: C2, C5a, C5b, C5c, C6, C9, C10, C12.

C5 was split (C5a: alignment, read off addresses; C5b: the access-cost analogue); its id is
retired and a recorded verdict:C5 is ignored by the ledger. C5b's cause was split off as C5c
(issue 38: misalignment as the cause, judged from C5b's own evidence, `Claim.evidence_from`).

Each claim reads on one screen: the seed's statement (English gist, section), the rule,
its named thresholds and its check. Timing-based checks share three rules:
- a ratio whose measured spread straddles a threshold gives 'depends' on noise (`band`);
- a timing the harness flagged (noisy or above a ceiling, still so when measured again) is
  listed in the evidence's `flags`; it holds the verdict back only when it could carry the
  deciding ratio across its threshold (the one trust rule, `labkit.claims.trust`, printed on
  every timing-based claim card, applied by `Claim.judge` to the ratios each claim's
  `decisions_*` function declares); bytes copied decide on their own, before any timing;
- on a CPU, a verdict that rests on timings is measured twice, with glibc's default
  allocator and with malloc keeping freed memory (`kept`); the kept run is read only where
  its page faults fell (`kept_took`: else the setting did not take, or had nothing to change,
  and its figure is noise); when the two give different answers, the verdict is 'depends' on
  the allocator.
- a verdict states the ratio its comparison's table shows (`stated_ratio`), and a form away
  from the seed's setting names both devices (`analogue_form`).
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
from labkit.claims.tables import short_label as short_label
from labkit.claims.trust import Decision, Decisions, declared, flags_in
from labkit.claims.trust import judge as trust_judge
from labkit.core import discovery
from labkit.measure import conditions
from labkit.measure.conditions import KEPT_TOOK_SHARE as KEPT_TOOK_SHARE
from labkit.measure.conditions import kept_took
from labkit.measure.pace import AT_DEVICE_PACE as AT_DEVICE_PACE
from labkit.measure.pace import LAUNCH_BOUND_RATIO as LAUNCH_BOUND_RATIO
from labkit.measure.pace import pace_label as pace_label

CHAPTER = discovery.chapter_key(__name__)

COSTLY_RATIO = 1.5  # a copy is "implicit and costly" if the implicit path is > 1.5x the explicit one
MISALIGNED_COSTLY_RATIO = 1.5  # an access pattern "costs" if it is > 1.5x aligned-contiguous per element
CACHE_LINE_BYTES = 64  # the seed's cache line
SEED_NS = (42.7, 19.1)  # the seed's C5b table: misaligned non-contiguous, aligned contiguous (ns per access)
SEED_RATIO = SEED_NS[0] / SEED_NS[1]  # 2.24x, the comparison C5b's reason sets the measured one against
NARROW_COSTLY_RATIO = 1.5  # narrow on a transposed view is "costly" if > 1.5x narrow on contiguous
STRIDED_PENALTY_RATIO = 1.5  # a transposed copy costs "more than its bytes" if > 1.5x slower than a plain copy
STRIDE_AWARE_WIN_RATIO = 1.2  # a stride-aware GEMM "beats" torch.matmul if torch.matmul takes > 1.2x its time

# The four access patterns of C5's 2x2 design (alignment x stride), timed per element.
ALIGNED_CONTIGUOUS = "aligned, contiguous"
MISALIGNED_CONTIGUOUS = "misaligned, contiguous"
# The strided patterns' step, chosen by the course: the seed names no stride, and the ratio follows
# the bytes a stride fetches (2x at stride 2), so C5b's reason says it was chosen here (review
# 2026-12-04k item 2: '1.82x, the seed's 2.24x' invited a reproduction read into a coincidence).
PATTERN_STRIDE = 2
ALIGNED_STRIDED = "aligned, every 2nd element"
MISALIGNED_STRIDED = "misaligned, every 2nd element"
C5_PATTERNS = (ALIGNED_CONTIGUOUS, MISALIGNED_CONTIGUOUS, ALIGNED_STRIDED, MISALIGNED_STRIDED)
L1_CASE = "L1-resident"  # the case name of C5b's window summed many times in one call (its flags' prefix)
WINDOW_CASE = "16 KiB window"  # the same window's name where its time shows no cache effect
# The window is called L1-resident, and judged as a cache case, only if the measurement shows a
# cache: aligned-contiguous at least this much faster per element in the window than DRAM-sized.
# (An H200 read the window 1.37x *slower*, all four patterns alike: a stride-0 reduction's own
# bound, not a cache's; a CPU core read it about 4x faster.)
CACHE_EFFECT_SPEEDUP = 1.2

# Where C5b's buffer sits (review 2026-12-05u 00-04 item 2): one label, computed from the buffer's
# span against the cache sizes this machine reports, and used wherever the page names the place:
# the table's title and columns, C5b's and C5c's reasons, the takeaway, the sweep, the chase. A VM
# may report a host-sized L3 (480 MiB on the course's 2-core CPU machine), so a 64 MiB buffer the
# page used to call "DRAM-sized" sits inside the L3 it reports: there it is "L3". Evidence recorded
# before the label (no PLACE_KEY) was measured beyond the last-level cache on the GPU and read "DRAM".
PLACE_KEY = "buffer_place"
DRAM = conditions.BEYOND_CACHES  # the place of a buffer no reported cache holds (`conditions.cache_place`)


def place(ev: Mapping) -> str:
    """The place C5b's evidence names ('DRAM', 'L3'), DRAM where it was recorded before the label."""
    return str(ev.get(PLACE_KEY) or DRAM)


def sized(ev: Mapping) -> str:
    """'DRAM-sized', 'L3-sized': the buffer's place as an adjective."""
    return f"{place(ev)}-sized"


def at_place(ev: Mapping) -> str:
    """'at DRAM size', 'at L3 size': where a reason reads the buffer's timings."""
    return f"at {place(ev)} size"


def allocator_split(default_band: str, kept_band: str | None, what: str) -> tuple[str, str, str] | None:
    """'depends' on the allocator when default malloc and a kept-memory malloc disagree."""
    if kept_band is None or kept_band == default_band or "noise" in (default_band, kept_band):
        return None
    return (DEPENDS, f"{what} is {default_band} the threshold with glibc's default allocator but "
            f"{kept_band} it when malloc keeps freed memory",
            "the allocator: page faults from memory returned to the system decide it")


def stated_ratio(recorded: object, numerator: float, denominator: float) -> float:
    """The ratio a verdict states and decides on: the comparison's own, the median of its
    per-round ratios, which is the number its table shows (review 2026-12-03d item 7: C9's
    table said 27.94x and its verdict 26.74x); evidence recorded before it kept only the two
    medians, whose ratio stands in."""
    if recorded is not None:
        return float(recorded)
    return float(numerator) / float(denominator)


# The kept-memory rerun is read only where malloc's setting took (`conditions.kept_took`,
# shared with chapter 03; KEPT_TOOK_SHARE and kept_took are re-exported here).


def _kept_usable(kept: Mapping | None, default_faults: object, kept_faults_key: str) -> bool | None:
    """kept_took for one claim's evidence (None: no kept run, or counts not recorded)."""
    if not kept:
        return None
    return kept_took(default_faults, kept.get(kept_faults_key))


def _did_not_take(default_faults: float, kept_faults: float, what: str) -> str:
    """Why the kept-memory rerun is not read: the setting did not take, or had nothing to do."""
    if default_faults <= 0:
        return (f"; {what} faulted no pages with malloc's defaults, so keeping freed memory has "
                "nothing to change and its rerun is not read")
    return (f"; malloc keeping freed memory did not take for {what} ({kept_faults:,.0f} page "
            f"faults per call against {default_faults:,.0f} with the defaults), so its rerun is not read")


def _kept_text(kept: Mapping | None, ratio_key: str, label: str) -> str:
    if not kept or kept.get(ratio_key) is None:
        return ""
    return f"; with malloc keeping freed memory {label} {float(kept[ratio_key]):.2f}x"


def check_c2(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    cases = list(ev["cases"])
    if not cases:
        raise ClaimError("C2: no matmul case was measured")
    holds, noisy, notes = [], [], []
    for c in cases:
        ratio = stated_ratio(c.get("ratio"), c["implicit_median_s"], c["explicit_median_s"])
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


def decisions_c2(ev: Mapping, th: Mapping) -> list[Decision]:
    """Each case's implicit/explicit time decides only where a copy is: no copy refutes alone."""
    return [Decision(c["case"], stated_ratio(c.get("ratio"), c["implicit_median_s"], c["explicit_median_s"]),
                     c.get("ratio_iqr"), th["costly_ratio"])
            for c in ev["cases"] if int(c["implicit_copy_bytes"]) > 0]


C2 = Claim(
    "C2", CHAPTER, SEED_STRIDES, "Chapter 1: a typical performance comparison (A100, FP16, batch 64)",
    "x.transpose(0,1).matmul(w) pays an implicit contiguous copy: 84.2 ms against 21.7 ms with .contiguous() first.",
    f"a copy is recorded in the implicit path and it is > {COSTLY_RATIO}x slower than the explicit one",
    f"no implicit copy, or implicit/explicit <= {COSTLY_RATIO}",
    ("cases",), thresholds={"costly_ratio": COSTLY_RATIO}, check=check_c2, timing_based=True,
    decisions=decisions_c2,
    section_zh="第一章 典型性能对比 (A100, FP16 batch64)", seed_setting="A100 GPU, fp16, batch 64",
    seed_text='x.transpose(0,1).matmul(w)84.2是x.transpose(0,1).contiguous().matmul(w)21.7否显式可控')


def check_c5a(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    """Read off data_ptr(): fresh tensors, and the contiguous views the chapter builds (x[1:]...)."""
    fresh, views = int(ev["fresh_checked"]), int(ev["views_checked"])
    if fresh <= 0 or views <= 0:
        raise ClaimError("C5a: check fresh tensors and contiguous views (such as x[1:]): a rule "
                         "about every contiguous tensor needs both")
    fresh_bad, views_bad = int(ev["fresh_misaligned"]), int(ev["contiguous_views_misaligned"])
    if not (0 <= fresh_bad <= fresh and 0 <= views_bad <= views):
        raise ClaimError("C5a: a count of misaligned tensors is outside 0..checked")
    offsets = dict(ev.get("view_offsets") or {})
    shown = ", ".join(f"{k} at +{int(v)} B" for k, v in offsets.items() if int(v)) or ""
    text = (f"{fresh_bad}/{fresh} fresh tensors and {views_bad}/{views} contiguous views start "
            f"off a {th['cache_line_bytes']}-byte line" + (f" ({shown})" if shown else ""))
    if views_bad or fresh_bad:
        return (REFUTED, text + ": is_contiguous() is about strides, not where the data starts", "")
    return CONFIRMED, text, ""


C5a = Claim(
    "C5a", CHAPTER, SEED_STRIDES, "2.2 What contiguous tensors really are (effect of alignment)",
    "Contiguous tensors are aligned to 64-byte cache lines.",
    f"every fresh tensor and every contiguous view checked starts on a {CACHE_LINE_BYTES}-byte "
    "line (data_ptr() % 64 == 0)",
    f"any contiguous tensor checked, fresh or a view such as x[1:], starts off a "
    f"{CACHE_LINE_BYTES}-byte line. Deterministic: it reads addresses, and x[1:] of float32 "
    "data is contiguous and 4 bytes past a line wherever the allocator aligns its blocks",
    ("fresh_checked", "fresh_misaligned", "views_checked", "contiguous_views_misaligned"),
    thresholds={"cache_line_bytes": CACHE_LINE_BYTES}, check=check_c5a, deterministic=True,
    section_zh="2.2 contiguous张量的本质 (对齐优化效果对比)",
    seed_setting="any device: alignment is an address, read off data_ptr()",
    seed_text='contiguous张量要求元素在内存中物理连续且首地址对齐至缓存行边界避免跨行访问导致的额外cache miss')


def _c5b_ratios(ns_raw: Mapping, what: str) -> dict[str, float]:
    ns = {k: float(v) for k, v in dict(ns_raw).items()}
    missing = [p for p in C5_PATTERNS if p not in ns]
    if missing or ns[ALIGNED_CONTIGUOUS] <= 0:
        raise ClaimError(f"C5b: {what} needs all four patterns {list(C5_PATTERNS)}, missing "
                         f"{missing}")
    return {p: ns[p] / ns[ALIGNED_CONTIGUOUS] for p in C5_PATTERNS}


def _fetch_text(ratio: Mapping[str, float], fetched: Mapping[str, float] | None) -> str:
    """Each cause's time ratio beside the bytes it fetches per useful byte (when recorded)."""
    if fetched is None:
        return (f"alignment alone {ratio[MISALIGNED_CONTIGUOUS]:.2f}x, stride alone "
                f"{ratio[ALIGNED_STRIDED]:.2f}x")
    return (f"alignment alone {ratio[MISALIGNED_CONTIGUOUS]:.2f}x the time for "
            f"{fetched[MISALIGNED_CONTIGUOUS] / fetched[ALIGNED_CONTIGUOUS]:.2f}x the bytes, "
            f"stride alone {ratio[ALIGNED_STRIDED]:.2f}x for "
            f"{fetched[ALIGNED_STRIDED] / fetched[ALIGNED_CONTIGUOUS]:.2f}x")


def _c5b_fetched(ev: Mapping) -> tuple[dict[str, float] | None, int]:
    """The bytes each pattern fetches per useful byte, and the unit; (None, 64) for evidence
    recorded before they were counted (it is still judged by its timings)."""
    if ev.get("fetched_per_useful") is None:
        return None, CACHE_LINE_BYTES
    fetched = {k: float(v) for k, v in dict(ev["fetched_per_useful"]).items()}
    missing = [p for p in C5_PATTERNS if p not in fetched]
    if missing or fetched[ALIGNED_CONTIGUOUS] <= 0:
        raise ClaimError(f"C5b: fetched_per_useful needs all four patterns {list(C5_PATTERNS)}, "
                         f"missing {missing}")
    return fetched, int(ev.get("fetch_unit_bytes") or CACHE_LINE_BYTES)


def _dram_fetched(ev: Mapping, window: dict[str, float] | None) -> dict[str, float] | None:
    """The bytes each pattern fetches per useful byte over the DRAM-sized buffer, where recorded
    with all four patterns; else the window's (`_c5b_fetched`)."""
    found = {k: float(v) for k, v in dict(ev.get("fetched_per_useful_dram") or {}).items()}
    if window is None or any(p not in found for p in C5_PATTERNS) or found[ALIGNED_CONTIGUOUS] <= 0:
        return window
    return found


# Review 2026-12-03h item 3: on a GPU the window (a stride-0 view summed) runs another reduction
# kernel, 1.36x *slower* per element than DRAM-sized on the H200, all four patterns alike: no
# cache read. The GPU form no longer measures it (evidence ns_per_element_l1: None) and says so;
# the chapter's optional chase times L1 on the GPU (review 2026-12-05p 00-02 item 2: 'L1 not
# measured on this form' sat above it), so the words say the sum has no L1 case.
L1_NOT_MEASURED = "no L1 case in the sum"


def l1_measured(ev: Mapping) -> bool:
    """Whether C5b's evidence holds the window's timings (a CPU's); None on a GPU's form."""
    return ev.get("ns_per_element_l1") is not None


def window_speedup(ev: Mapping) -> float:
    """How many times faster per element aligned-contiguous ran in the 16 KiB window than
    DRAM-sized: above CACHE_EFFECT_SPEEDUP the window shows a cache effect."""
    dram = float(ev["ns_per_element"][ALIGNED_CONTIGUOUS])
    window = float(ev["ns_per_element_l1"][ALIGNED_CONTIGUOUS])
    if dram <= 0 or window <= 0:
        raise ClaimError(f"C5b: ns per element must be positive, got {dram} (DRAM-sized) and {window} (window)")
    return dram / window


def window_case(ev: Mapping) -> str:
    """The window's name as measured: 'L1-resident' only where its time shows a cache effect."""
    return L1_CASE if l1_measured(ev) and window_speedup(ev) >= CACHE_EFFECT_SPEEDUP else WINDOW_CASE


def _three_figures(value: float) -> str:
    """Three significant figures, trailing zeros kept ('2.00', '1.11', '42.7', '955'), so a
    column reads in one precision (review 2026-12-04i item 5: '1.11 ps' above '2 ps')."""
    return f"{value:.0f}" if value >= 99.95 else f"{value:.1f}" if value >= 9.995 else f"{value:.2f}"


def per_element_text(ns: float) -> str:
    """A time per element in a unit a reader takes in: ps under a nanosecond (an H200's sum
    reads 1.12 ps per float, which printed as '0.00112 ns'), else ns; three figures."""
    if ns <= 0:
        raise ValueError(f"a time per element must be positive, got {ns} ns")
    return f"{_three_figures(1000 * ns)} ps" if ns < 0.9995 else f"{_three_figures(ns)} ns"


def _rate_text(ev: Mapping) -> str:
    """Aligned-contiguous's DRAM-sized rate (bytes fetched) and its share of the copy ceiling,
    where recorded: the ratios beside what the memory ran at."""
    gbps = dict(ev.get("gbps_fetched_dram") or {}).get(ALIGNED_CONTIGUOUS)
    if gbps is None:
        return ""
    pct = dict(ev.get("pct_of_copy_ceiling_dram") or {}).get(ALIGNED_CONTIGUOUS)
    # a sum reads only: its share is of a read + write copy ceiling, and over OVER_CEILING_PCT it
    # is flagged, not stated (review 2026-12-04m item 5: '175% of the copy ceiling')
    share = "" if pct is None else f", {float(pct):.0f}% of a read + write copy ceiling" + (
        " (over 100%: a read-only sum against a copy's rate, on a ceiling measured under load: no fact "
        "about memory)" if float(pct) > OVER_CEILING_PCT else "")
    return (f" (aligned, contiguous: {per_element_text(float(ev['ns_per_element'][ALIGNED_CONTIGUOUS]))} "
            f"per element, {_gbps_big(float(gbps))} GB/s fetched" + share + ")")


def _window_text(ev: Mapping, l1: Mapping[str, float], fetched: Mapping[str, float] | None) -> str:
    """The window's part of the reason: judged as L1 where it shows a cache; otherwise what it is."""
    speedup = window_speedup(ev)
    if speedup >= CACHE_EFFECT_SPEEDUP:
        text = f"L1-resident: {l1[MISALIGNED_STRIDED]:.2f}x; {_fetch_text(l1, fetched)}"
        bytes_ratio = fetched and fetched[ALIGNED_STRIDED] / fetched[ALIGNED_CONTIGUOUS]
        if bytes_ratio and l1[ALIGNED_STRIDED] > CACHE_EFFECT_SPEEDUP * bytes_ratio:
            # in L1 a contiguous sum runs on whole vector loads, a strided one cannot: not timed here
            text += (f", {l1[ALIGNED_STRIDED] / bytes_ratio:.2f}x more than its bytes explain "
                     "(a contiguous sum's vector loads, which a strided one loses, are the likely rest)")
        return text + " "
    spread = max(l1.values()) / min(l1.values())
    return (f"{WINDOW_CASE} read many times in one call (a stride-0 view): {1 / speedup:.2f}x the "
            f"{sized(ev)} time per element, and its four patterns within {100 * (spread - 1):.1f}% "
            "of each other: no cache effect, so its time is not the memory's and is not judged ")


def _faults(ev: Mapping | None) -> float | None:
    """C5b's page faults per call, summed over the four patterns (None where not recorded)."""
    found = (ev or {}).get("faults_per_call")
    return None if not found else sum(float(v or 0) for v in dict(found).values())


def _window_judged(ev: Mapping, th: Mapping) -> bool:
    """Whether the window is judged beside DRAM size (for C5b's ratio and C5c's alignment alike):
    only where its time shows a cache (`window_case`) and DRAM size alone does not name the cause
    (`_cause_at_dram`), the rule C5b applied before C5c was split off (issue 38)."""
    return l1_measured(ev) and window_speedup(ev) >= CACHE_EFFECT_SPEEDUP and not _cause_at_dram(ev, th)


def _window_shows_cache(ev: Mapping) -> bool:
    """Whether the window was measured and its time shows a cache: then C5c judges it beside DRAM
    size whatever DRAM size says (review 2026-12-04l item 5: the seed's mechanism is L1, 64-byte
    lines, and the CPU page's one alignment effect, 1.20x in L1, was shown and set aside while the
    verdict read DRAM size alone, where streaming bandwidth hides a line split)."""
    return l1_measured(ev) and window_speedup(ev) >= CACHE_EFFECT_SPEEDUP


def _held_back(ev: Mapping, decided: Decisions) -> bool:
    """Whether the trust rule holds these decisions back (a flag could carry a ratio across its
    threshold, or the GPU was shared): the reason then leads with numbers, no verdict word."""
    found = declared(decided)
    return bool(ev.get("shared_gpu")) or trust_judge(flags_in(ev), found.decisions, found.not_judged).held_back()


def _window_tail(ev: Mapping, th: Mapping, judged: bool = False) -> str:
    """The reason's part on the window (a CPU's; on a GPU why there is none), and the units.
    judged: the claim judges the window (C5c wherever it shows a cache), so it is not 'shown'."""
    ratio = _c5b_ratios(ev["ns_per_element"], "ns_per_element (DRAM-sized)")
    l1 = _c5b_ratios(ev["ns_per_element_l1"], "ns_per_element_l1 (L1-resident)") if l1_measured(ev) else ratio
    fetched, unit = _c5b_fetched(ev)
    cached = l1_measured(ev) and window_speedup(ev) >= CACHE_EFFECT_SPEEDUP
    return ((_window_text(ev, l1, fetched) if l1_measured(ev) else
             f"{L1_NOT_MEASURED}: on a GPU a small window's sum is another reduction kernel, not an "
             f"L1 read; {sized(ev)} alone is judged (latency and L1: the optional chase) ")
            + (f"(shown, not judged: the cause is read {at_place(ev)}) "
               if _cause_at_dram(ev, th) and cached and not judged else "")
            + (f"(bytes fetched in whole {unit}-byte units, computed from the addresses; " if fetched
               else "(bytes fetched not recorded; ")
            + "time per element of a sum, not the seed's latencies)")


def check_c5b(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    """The seed's comparison as stated (misaligned AND strided against aligned AND contiguous)
    per element of a sum, at two sizes: one pass over a DRAM-sized buffer, and many passes over
    an L1-resident 16 KiB window inside one call. The window counts as L1-resident, and is
    judged, only where its time shows a cache and DRAM size alone does not name the cause
    (`_window_judged`): otherwise the verdict reads DRAM-sized alone, and the reason says what
    the window measured. The seed's cause (misalignment) is C5c's, judged from the same
    evidence (issue 38: one verdict, 'depends (on the cause)', hid a confirmation and a
    refutation)."""
    ratio = _c5b_ratios(ev["ns_per_element"], "ns_per_element (DRAM-sized)")
    l1 = _c5b_ratios(ev["ns_per_element_l1"], "ns_per_element_l1 (L1-resident)") if l1_measured(ev) else ratio
    _c5b_fetched(ev)  # refuses a fetch table that misses a pattern
    iqr, iqr_l1 = dict(ev.get("ratio_iqr") or {}), dict(ev.get("ratio_iqr_l1") or {})
    limit = th["misaligned_costly_ratio"]
    seed_band = band(ratio[MISALIGNED_STRIDED], iqr.get(MISALIGNED_STRIDED), limit)
    l1_band = (band(l1[MISALIGNED_STRIDED], iqr_l1.get(MISALIGNED_STRIDED), limit)
               if _window_judged(ev, th) else seed_band)
    both = ratio[MISALIGNED_STRIDED]
    # the seed's comparison leads (review 2026-12-04i item 5), inside the card's visible part;
    # where the trust rule holds the verdict back the numbers lead without 'holds'
    # judged on direction (over the threshold), at a stride the seed never names (review
    # 2026-12-04k item 2): the seed's 2.24x is no target, the stride sets the ratio
    word = (f"the seed's direction holds {at_place(ev)} (over {limit:g}x): " if seed_band == "above" and not
            _held_back(ev, decisions_c5b(ev, th)) else f"{at_place(ev)}, ")
    text = (f"{word}misaligned+strided {both:.2f}x aligned+contiguous at stride {PATTERN_STRIDE}, chosen here; "
            f"the seed names none (its {SEED_RATIO:.2f}x is no target)"
            + _rate_text(ev) + "; its cause, misalignment, is judged as C5c. " + _window_tail(ev, th))
    kept = ev.get("kept")
    default_faults, kept_faults = _faults(ev), _faults(kept)
    took = kept_took(default_faults, kept_faults) if kept else None
    if took is False:  # the rerun measured the same allocator: its figure is noise, not read
        text += _did_not_take(default_faults, kept_faults, "the sums")
        kept = None
    else:
        text += _kept_text(kept, "seed_ratio", "the seed's ratio")
    if "noise" in (seed_band, l1_band):
        return DEPENDS, text, NOISE
    kept_band = (band(float(kept["seed_ratio"]), kept.get("seed_ratio_iqr"), limit)
                 if kept and kept.get("seed_ratio") is not None else None)
    split = allocator_split(seed_band, kept_band, "the seed's ratio")
    if split:
        return split[0], text + "; " + split[1], split[2]
    return _by_size(seed_band, l1_band, text, "the seed's gap shows", place(ev))


def _by_size(dram_band: str, l1_band: str, text: str, what: str, where: str = DRAM) -> tuple[str, str, str]:
    """C5b's and C5c's last step, one rule for both: the same band at both sizes decides
    (above: confirmed, below: refuted); bands that differ make it depend on the size, named
    (`where`: the big buffer's place, `place`)."""
    if dram_band != l1_band:
        return (DEPENDS, text, f"the size: {what} in "
                f"{where if dram_band == 'above' else 'L1'} but not in "
                f"{'L1' if dram_band == 'above' else where}")
    return (CONFIRMED if dram_band == "above" else REFUTED), text, ""


def _cause_at_dram(ev: Mapping, th: Mapping) -> bool:
    """Whether DRAM size alone names the cause: the seed's gap clear above the threshold, alignment
    alone clear below it, and the bytes each pattern fetches recorded. Then the window's timings
    (shown beside it) are not judged, for C5b or C5c: its noise may hold back only a conclusion
    that rests on the window (review 2026-12-03e item 5: a 64%-noisy misaligned window timing
    held back the CPU's plain DRAM finding, 'stride alone 2.13x the time for 2.00x the bytes,
    alignment alone 1.07x for 1.00x')."""
    ratio = _c5b_ratios(ev["ns_per_element"], "ns_per_element (DRAM-sized)")
    iqr = dict(ev.get("ratio_iqr") or {})
    limit = th["misaligned_costly_ratio"]
    fetched, _ = _c5b_fetched(ev)
    return (_dram_fetched(ev, fetched) is not None
            and band(ratio[MISALIGNED_STRIDED], iqr.get(MISALIGNED_STRIDED), limit) == "above"
            and band(ratio[MISALIGNED_CONTIGUOUS], iqr.get(MISALIGNED_CONTIGUOUS), limit) == "below")


def _c5_decisions(ev: Mapping, th: Mapping, pattern: str, name: str, window: bool | None = None) -> Decisions:
    """One cell of the 2x2 over aligned-contiguous, DRAM-sized, and in the window where it is
    judged (`_window_judged`); elsewhere the window's cases are shown or unmeasured, not judged.
    The 2x2's other two cells decide nothing for this claim (C5b reads the seed's cell, C5c
    alignment alone): their timings are listed as not judged, so a flag on one holds back only
    the claim it decides (a flag naming no decision would otherwise apply to all). window: whether
    the window is judged (C5c's `_window_shows_cache`); by default C5b's `_window_judged`."""
    ratio = _c5b_ratios(ev["ns_per_element"], "ns_per_element (DRAM-sized)")
    iqr, iqr_l1 = dict(ev.get("ratio_iqr") or {}), dict(ev.get("ratio_iqr_l1") or {})
    limit = th["misaligned_costly_ratio"]
    others = tuple(p for p in C5_PATTERNS if p not in (ALIGNED_CONTIGUOUS, pattern))
    l1_name = L1_CASE + ": "
    dram = Decision(name, ratio[pattern], iqr.get(pattern), limit, (ALIGNED_CONTIGUOUS, pattern))
    if not (_window_judged(ev, th) if window is None else window):
        return Decisions((dram,), (L1_CASE, WINDOW_CASE, *others))
    l1 = _c5b_ratios(ev["ns_per_element_l1"], "ns_per_element_l1 (L1-resident)")
    window = L1_CASE if pattern == MISALIGNED_STRIDED else f"{name}, {L1_CASE}"
    return Decisions((dram, Decision(window, l1[pattern], iqr_l1.get(pattern), limit,
                                     (l1_name + ALIGNED_CONTIGUOUS, l1_name + pattern))),
                     (*others, *(l1_name + p for p in others)))


def decisions_c5b(ev: Mapping, th: Mapping) -> Decisions:
    """The seed's ratio (misaligned+strided over aligned+contiguous), DRAM-sized and, where it is
    judged, in the window (`_window_judged`)."""
    return _c5_decisions(ev, th, MISALIGNED_STRIDED, "the seed's ratio")


C5b = Claim(
    "C5b", CHAPTER, SEED_STRIDES, "2.2 What contiguous tensors really are (effect of alignment)",
    "Misaligned non-contiguous access costs 42.7 ns against 19.1 ns for aligned contiguous "
    "access (the seed's table, 2.24x).",
    f"misaligned+strided > {MISALIGNED_COSTLY_RATIO}x aligned+contiguous per element of a big buffer's "
    "sum (and in the window, where judged)",
    f"misaligned+strided is <= {MISALIGNED_COSTLY_RATIO}x aligned+contiguous at the sizes judged; "
    "'depends' when the gap shows at one size only, or on the allocator. Time per element of a "
    "sum is an analogue of the seed's latency. The window is judged "
    "only where it shows a cache and the buffer alone does not name the cause. Its cause is C5c's",
    ("ns_per_element", "ns_per_element_l1"),  # fetched_per_useful too, since issue 38 (read if there)
    thresholds={"misaligned_costly_ratio": MISALIGNED_COSTLY_RATIO}, check=check_c5b, timing_based=True,
    decisions=decisions_c5b,
    section_zh="2.2 contiguous张量的本质 (对齐优化效果对比)",
    seed_setting="a CPU: 64-byte cache lines, per-access latency and L1 miss rates",
    seed_text='未对齐 非contiguous42.718.3%对齐 contiguous19.12.1%')


def check_c5c(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    """The seed's cause for C5b's gap, misalignment (64-byte lines, L1 misses), judged from the
    same 2x2 as C5b: alignment alone (misaligned+contiguous over aligned+contiguous), with the
    bytes each pattern fetches (computed from the addresses, not counted by hardware), DRAM-sized
    and in L1 wherever the window shows a cache (`_window_shows_cache`; on a GPU's form there is
    no L1 case, and the reason says so). Refuted when alignment alone is
    clear below the threshold (the reason names what the stride accounts for); confirmed when
    it is clear above at every size judged. The kept-memory rerun times only the seed's ratio,
    so the allocator is not read here (the sums allocate nothing)."""
    ratio = _c5b_ratios(ev["ns_per_element"], "ns_per_element (DRAM-sized)")
    l1 = _c5b_ratios(ev["ns_per_element_l1"], "ns_per_element_l1 (L1-resident)") if l1_measured(ev) else ratio
    fetched, _ = _c5b_fetched(ev)
    dram_fetched = _dram_fetched(ev, fetched)
    iqr, iqr_l1 = dict(ev.get("ratio_iqr") or {}), dict(ev.get("ratio_iqr_l1") or {})
    limit = th["misaligned_costly_ratio"]
    dram_band = band(ratio[MISALIGNED_CONTIGUOUS], iqr.get(MISALIGNED_CONTIGUOUS), limit)
    in_l1 = _window_shows_cache(ev)
    l1_band = band(l1[MISALIGNED_CONTIGUOUS], iqr_l1.get(MISALIGNED_CONTIGUOUS), limit) if in_l1 else dram_band
    gap = ratio[MISALIGNED_STRIDED]
    if dram_fetched is None:
        numbers = (f"alignment alone {ratio[MISALIGNED_CONTIGUOUS]:.2f}x, stride alone "
                   f"{ratio[ALIGNED_STRIDED]:.2f}x (bytes fetched not recorded)")
    else:
        base = dram_fetched[ALIGNED_CONTIGUOUS]
        numbers = (f"alignment alone {ratio[MISALIGNED_CONTIGUOUS]:.2f}x for "
                   f"{dram_fetched[MISALIGNED_CONTIGUOUS] / base:.2f}x the bytes, stride alone "
                   f"{ratio[ALIGNED_STRIDED]:.2f}x for {dram_fetched[ALIGNED_STRIDED] / base:.2f}x")
    clear = not _held_back(ev, decisions_c5c(ev, th))
    stride_has_it = band(ratio[ALIGNED_STRIDED], iqr.get(ALIGNED_STRIDED), limit) == "above"
    sizes = f"{at_place(ev)} and in L1" if in_l1 else at_place(ev)
    if clear and dram_band == l1_band == "below":
        lead = (f"misalignment does not explain the gap {sizes}: " if stride_has_it
                else f"misalignment costs nothing measurable {sizes}: ")
    elif clear and dram_band == l1_band == "above":
        lead = f"misalignment costs {sizes}: "
    else:
        lead = f"{at_place(ev)}, "
    # the L1 case's alignment cost, said beside DRAM size's where the window is judged (review
    # 2026-12-04l item 5: 'alignment alone costs 1.20x in L1, below 1.5x')
    l1_said = (f"; in L1 alignment alone costs {l1[MISALIGNED_CONTIGUOUS]:.2f}x, "
               f"{'over' if l1_band == 'above' else 'below' if l1_band == 'below' else 'within the noise of'} "
               f"{limit:g}x" if in_l1 else "")  # the stride's L1 figures follow, in the window's text
    text = (f"{lead}{numbers}"
            + (": the stride's bytes account for the gap" if stride_has_it and dram_band == "below" else "")
            + f" (misaligned+strided {gap:.2f}x){l1_said}. " + _window_tail(ev, th, judged=in_l1))
    if "noise" in (dram_band, l1_band):
        return DEPENDS, text, NOISE
    return _by_size(dram_band, l1_band, text, "alignment alone costs", place(ev))


def decisions_c5c(ev: Mapping, th: Mapping) -> Decisions:
    """Alignment alone (misaligned+contiguous over aligned+contiguous), DRAM-sized and in the
    window wherever the window shows a cache (`_window_shows_cache`)."""
    return _c5_decisions(ev, th, MISALIGNED_CONTIGUOUS, "alignment alone", window=_window_shows_cache(ev))


C5c = Claim(
    "C5c", CHAPTER, SEED_STRIDES, "2.2 What contiguous tensors really are (effect of alignment)",
    "C5b's gap comes from misalignment (64-byte cache lines, L1 misses).",
    f"misaligned+contiguous is > {MISALIGNED_COSTLY_RATIO}x aligned+contiguous per element of a big buffer's "
    "sum and L1-resident (where the window shows a cache; a GPU's form has no L1 case)",
    f"misaligned+contiguous is <= {MISALIGNED_COSTLY_RATIO}x aligned+contiguous at both sizes "
    "(the reason names the stride's share, with the bytes each pattern fetches, computed from the "
    "addresses); 'depends' when it costs at one size only",
    ("ns_per_element", "ns_per_element_l1"),
    thresholds={"misaligned_costly_ratio": MISALIGNED_COSTLY_RATIO}, check=check_c5c, timing_based=True,
    decisions=decisions_c5c, evidence_from="C5b",
    section_zh="2.2 contiguous张量的本质 (对齐优化效果对比)",
    seed_setting="a CPU: 64-byte cache lines, per-access latency and L1 miss rates (18.3% against "
    "2.1%, not measured here)",
    seed_text='未对齐 非contiguous42.718.3%对齐 contiguous19.12.1%')


def c6_form(device: str, on_gpu: bool) -> str:
    """C6's form, saying which form it is (review 2026-12-03h item 9: the H200 called its host
    timing of CPU tensors 'the seed's form', beside the seed's GPU times of 89.7 and 12.3 us).
    narrow runs no kernel, so a GPU has no time of its own to give it; the reason says the host
    time was taken on CPU tensors of the same layout."""
    if on_gpu:
        return analogue_form(device, SEED_DEVICES["C6"], C6_SHAPE, "bytes copied, kernels, host time",
                             "GPU time (no kernel runs)")
    return analogue_form(device, SEED_DEVICES["C6"], C6_SHAPE, "bytes copied, narrow's CPU time", "GPU time")


C6_SHAPE = "float32 1024x1024"  # y, the transposed view narrow is called on


def c6_clock(on_gpu: bool) -> str:
    """Which clock timed narrow, as C6's reason names it (review 2026-12-03e item 8: on a GPU
    the reason said 'takes 1.14x the time' of a timing taken on CPU tensors, under a seed whose
    numbers are GPU time). narrow makes a tensor header on the host and runs no kernel, so
    there is no GPU time to take: on a GPU it is timed on CPU tensors of the same layout.
    The clock's name comes first; what follows in parentheses, `check_c6` puts after the
    comparison it qualifies, so the sentence reads whole."""
    return ("host time (timed on CPU tensors of the same layout: narrow runs no kernel, so the "
            "seed's GPU time has nothing to time)" if on_gpu else "CPU time")


def check_c6(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    copied = int(ev["copy_bytes"])
    ratio = stated_ratio(ev.get("narrow_ratio"), ev["narrow_transposed_median_s"], ev["narrow_contiguous_median_s"])
    clock, qualified, why = str(ev.get("clock") or "time").partition(" (")  # c6_clock's name (why)
    if copied == 0 and ev["shares_storage"]:
        return (REFUTED, f"narrow on the transposed view copied 0 bytes and shares storage; "
                f"it takes {ratio:.2f}x the {clock} of narrow on the contiguous tensor"
                + (f" ({why}" if qualified else ""), "")
    text = f"narrow copied {copied} bytes"
    if ratio > th["narrow_costly_ratio"]:
        return CONFIRMED, f"{text}; it took {ratio:.2f}x as long", ""
    return DEPENDS, f"{text}; it took only {ratio:.2f}x as long", "size"


def decisions_c6(ev: Mapping, th: Mapping) -> list[Decision]:
    """narrow's transposed/contiguous time, where it copied (no copy refutes on its own)."""
    if int(ev["copy_bytes"]) == 0 and ev["shares_storage"]:
        return []
    return [Decision("narrow", stated_ratio(ev.get("narrow_ratio"), ev["narrow_transposed_median_s"],
                                            ev["narrow_contiguous_median_s"]),
                     ev.get("ratio_iqr"), th["narrow_costly_ratio"])]


C6 = Claim(
    "C6", CHAPTER, SEED_STRIDES, "2.3 The hidden cost of non-contiguous tensors",
    "narrow() on a transposed view triggers an implicit contiguous() copy (89.7 us against 12.3 us).",
    f"the copy detector records a copy and narrow takes > {NARROW_COSTLY_RATIO}x as long",
    "no copy is recorded and the result shares storage",
    ("copy_bytes", "shares_storage", "narrow_contiguous_median_s", "narrow_transposed_median_s"),
    thresholds={"narrow_costly_ratio": NARROW_COSTLY_RATIO}, check=check_c6, timing_based=True,
    decisions=decisions_c6,
    section_zh="2.3 非contiguous张量的隐式开销",
    seed_text='x.narrow(0,0,512)12.3否x.transpose().narrow(0,0,512)89.7是')


def gbps_text(gbps: float) -> str:
    """A rate in GB/s to one decimal from 10 up, else to three figures: 0.363 and 0.27 GB/s, two
    different copies, read '0.4' and '0.3' at one decimal (review 2026-12-03e item 12)."""
    return f"{gbps:.1f}" if gbps >= 10 else f"{gbps:.3g}"


def _seed_rows_text(rows: Mapping[str, float], free_when_contiguous: bool) -> str:
    """The seed's two rows (recorded in its unit, MB/s one way) in the reason's one convention,
    GB/s read + write, to three figures (review 2026-12-03e item 12: 0.363 and 0.27 GB/s, two
    different copies, read '0.4' and '0.3' at one decimal); a row with no copy says so."""
    return ", ".join(
        f"{k} {_gbps_big(2 * float(v) / 1000)} GB/s (read + write)" if float(v) > 0 else
        f"{k}: {'no copy (returns itself)' if free_when_contiguous else 'not timed'}"
        for k, v in rows.items())


# The seed's two rows (MB/s, one way): contiguous() of the transposed tensor, of a natively
# contiguous one. They are reproduced only where both come within this factor.
SEED_C9_MB_S = {"transposed": 18_420.0, "natively contiguous": 920.0}
SEED_ROW_FACTOR = 1.5
SEED_C9_DTLB_MISSES = 2.7e6  # the seed's DTLB misses for its transposed 128x512x256 copy ("2.7M")


def _gbps_big(gbps: float) -> str:
    """GB/s as the C9 reason reads them: whole with thousands separators from 100 up ('1,073')."""
    return f"{gbps:,.0f}" if gbps >= 100 else gbps_text(gbps)


def seed_rows_rate(gbps: float) -> str:
    """The transposed .contiguous()'s rate in the fold of the seed's rows, in the reason's format
    and count (review 2026-12-04m item 10: the fold printed '1074.8 GB/s' beside the reason's
    '1,075', and hedged 'if the seed counts one way, it reads half' where the reason reads the
    seed's MB/s as one way): read + write, then one way, the count set against the seed's rows."""
    return f"{_gbps_big(gbps)} GB/s read + write, {_gbps_big(gbps / 2)} one way (the seed's rows' count)"


# A share of a ceiling up to this reads 'at the ceiling' (chapter 00's rule); above it the ceiling
# read low (measured under load, at another size) or the byte count is wrong: no fact to state.
OVER_CEILING_PCT = 105.0


def c9_rates(ev: Mapping) -> str:
    """The transposed and plain copies' rates, each with its share of the copy ceiling where
    recorded (review 2026-12-03h item 6: '1,073 GB/s (25% of the 4,248 GB/s copy ceiling)
    against 4,049 (95%)'). Where the plain copy ran over the ceiling (OVER_CEILING_PCT), no share
    is stated: the plain copy, timed in the same rounds, is the yardstick (review 2026-12-04m
    item 5: the CPU page read '6.6% of the 13.4 GB/s copy ceiling against 21.2 (159%)', on a
    ceiling measured under load)."""
    moved, plain = float(ev["transposed_gbps"]), float(ev["plain_copy_gbps"])
    moved_pct, plain_pct = ev.get("transposed_pct_of_copy_ceiling"), ev.get("plain_pct_of_copy_ceiling")
    if not moved_pct or not plain_pct:
        return f"{_gbps_big(moved)} GB/s against {_gbps_big(plain)} (read + write)"
    if float(plain_pct) > OVER_CEILING_PCT:
        return (f"{_gbps_big(moved)} GB/s against a plain copy's {_gbps_big(plain)}, read + write (no share of "
                f"the copy ceiling: the plain copy read {_pct(float(plain_pct))} of it, a ceiling that read low)")
    ceiling = 100 * plain / float(plain_pct)
    return (f"{_gbps_big(moved)} GB/s ({_pct(float(moved_pct))} of the {_gbps_big(ceiling)} GB/s copy "
            f"ceiling) against {_gbps_big(plain)} ({_pct(float(plain_pct))}), read + write")


def c9_shares(ev: Mapping) -> str:
    """C9's takeaway, short: the transposed copy's time over the plain copy's, timed in the same
    rounds, and both rates; no share of a ceiling (review 2026-12-04m item 5: the CPU page's
    'a plain one at 159%' of a ceiling measured under load, stated as a fact). The shares stay
    in C9's card, where they are flagged (`c9_rates`)."""
    moved, plain = float(ev["transposed_gbps"]), float(ev["plain_copy_gbps"])
    penalty = stated_ratio(ev.get("penalty"), plain, moved)
    return (f"a transposed copy took {penalty:.1f}x a plain copy's time "
            f"({_gbps_big(moved)} against {_gbps_big(plain)} GB/s)")


def _pct(share: float) -> str:
    """A share of a ceiling: whole percent from 10 up, two figures below ('0.34%', not '0%')."""
    return f"{share:.0f}%" if share >= 10 else f"{share:.2g}%"


PAGE_BYTES = 4096  # a CPU's base page: one DTLB entry each


def _dtlb_hypothesis(ev: Mapping) -> str:
    """On a CPU, where the transposed copy's reads step a page or more apart, what its penalty
    may come from, as a hypothesis (review 2026-12-04m item 10: inner stride 512 KiB, a new page
    each element), with the misses one per element predicts beside the seed's count (review
    2026-12-05t 00-02 item 6). '' on a GPU, or where the stride was not recorded."""
    stride = ev.get("transposed_inner_stride_bytes")
    if not stride or str(ev.get("device", "cpu")).startswith("cuda") or int(stride) < PAGE_BYTES:
        return ""
    step = int(stride)
    step_text = _bytes_text(step) if step >= 2**20 else f"{step >> 10} KiB" if step % 1024 == 0 else f"{step:,} B"
    head = f" (a hypothesis: its reads step {step_text} apart, a new {PAGE_BYTES >> 10} KiB page each element"
    elements = ev.get("transposed_elements")
    if not elements:  # older evidence: the count a miss per element predicts cannot be stated
        return head + ", which could cost a DTLB miss per element)"
    # review 2026-12-05t 00-02 item 6: 'fits a DTLB miss per element' where one miss per element is
    # 16.8M misses, 6x the seed's 2.7M: the predicted count stated beside the seed's
    predicted = int(elements)
    ratio = predicted / SEED_C9_DTLB_MISSES
    against = (f"near the seed's {SEED_C9_DTLB_MISSES / 1e6:.1f}M" if 1 / SEED_ROW_FACTOR <= ratio <= SEED_ROW_FACTOR
               else f"{ratio:.1f}x the seed's {SEED_C9_DTLB_MISSES / 1e6:.1f}M, so the seed's count is not one "
               "miss per element" if ratio > 1
               else f"{1 / ratio:.1f}x under the seed's {SEED_C9_DTLB_MISSES / 1e6:.1f}M")
    return head + f"; one DTLB miss per element would be {predicted / 1e6:.1f}M misses, {against})"


def _seed_rows_reproduced(rows: Mapping[str, float]) -> bool:
    """Whether this run's two rows (MB/s one way, transposed first) come within SEED_ROW_FACTOR
    of the seed's 18,420 and 920 MB/s; a row with no copy (0) reproduces nothing."""
    found = [float(v) for v in rows.values()]
    return len(found) == 2 and all(
        v > 0 and 1 / SEED_ROW_FACTOR <= v / seed <= SEED_ROW_FACTOR
        for v, seed in zip(found, SEED_C9_MB_S.values(), strict=True))


def check_c9(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    """Judged by the course's rule (a full copy, free when contiguous, > 1.5x a plain copy's
    time); the reason leads with that, with both rates and their ceiling shares, then says
    whether the seed's MB/s rows were reproduced and that its DTLB counts were not measured
    (review 2026-12-03h item 6: 'confirmed' read as if the seed's numbers held)."""
    full_copy = int(ev["transposed_copy_bytes"]) >= int(ev["expected_bytes"]) > 0
    free_when_contiguous = bool(ev["contiguous_returns_self"]) and int(ev["contiguous_copy_bytes"]) == 0
    penalty = stated_ratio(ev.get("penalty"), ev["plain_copy_gbps"], ev["transposed_gbps"])
    where = band(penalty, ev.get("penalty_iqr"), th["strided_penalty_ratio"])
    kept = ev.get("kept")
    # The allocator can change only what allocates: .contiguous() (a fresh 64 MiB each call),
    # its penalty with each allocator. Older evidence kept the copy_ penalty (no allocation).
    of_call = bool(kept) and kept.get("of") is not None and ev.get("contiguous_call_penalty") is not None
    default_faults = ev.get("contiguous_call_faults_per_call")
    took = _kept_usable(kept, default_faults, "contiguous_call_faults_per_call") if of_call else None
    lead = {"above": "costly against a plain copy", "below": "not costly against a plain copy"}.get(
        where, "against a plain copy")
    copied = int(ev["transposed_copy_bytes"])
    text = (f"{lead}: the transposed copy ({copied >> 20 if copied >= 1 << 20 else copied} "
            f"{'MiB' if copied >= 1 << 20 else 'bytes'}) takes {penalty:.2f}x its "
            f"time, {c9_rates(ev)}; already contiguous: "
            f"{'returns itself, no copy' if free_when_contiguous else 'copies'}")
    if of_call:
        text += f"; .contiguous() itself (it allocates): {float(ev['contiguous_call_penalty']):.2f}x a plain copy"
        if took is False:  # the rerun's faults did not fall: its figure measures noise, not the allocator
            text += _did_not_take(float(default_faults), float(kept["contiguous_call_faults_per_call"]),
                                  ".contiguous()")
            kept = None
        else:
            text += f", {float(kept['penalty']):.2f}x with malloc keeping freed memory"
    else:
        text += _kept_text(kept, "penalty", "the penalty is")
    if ev.get("seed_rows_mb_s"):
        rows = dict(ev["seed_rows_mb_s"])
        text += (f"; the seed's MB/s rows {'reproduced' if _seed_rows_reproduced(rows) else 'not reproduced'} "
                 f"(the seed's 18,420 and 920 MB/s one way are {gbps_text(2 * SEED_C9_MB_S['transposed'] / 1000)} "
                 f"and {gbps_text(2 * SEED_C9_MB_S['natively contiguous'] / 1000)} GB/s read + write; here: "
                 + _seed_rows_text(rows, free_when_contiguous) + ")")
    text += "; its DTLB counts not measured" + _dtlb_hypothesis(ev)
    if not (full_copy and free_when_contiguous):
        return REFUTED, text, ""
    if where == "noise":
        return DEPENDS, text, NOISE
    kept_band = (band(float(kept["penalty"]), kept.get("penalty_iqr"), th["strided_penalty_ratio"])
                 if kept and kept.get("penalty") is not None else None)
    default_band = (band(float(ev["contiguous_call_penalty"]), ev.get("contiguous_call_penalty_iqr"),
                         th["strided_penalty_ratio"]) if of_call else where)
    split = allocator_split(default_band, kept_band,
                            ".contiguous()'s penalty" if of_call else "the transposed copy's penalty")
    if split:
        return split[0], text + "; " + split[1], split[2]
    if where == "above":
        return CONFIRMED, text, ""
    return DEPENDS, text, "what 'cost' means: a full copy, but at a plain copy's speed"


def decisions_c9(ev: Mapping, th: Mapping) -> list[Decision]:
    """The transposed copy's penalty against a plain copy, where the copy is the seed's
    (a full copy, free when already contiguous): otherwise the bytes refute on their own."""
    full_copy = int(ev["transposed_copy_bytes"]) >= int(ev["expected_bytes"]) > 0
    free = bool(ev["contiguous_returns_self"]) and int(ev["contiguous_copy_bytes"]) == 0
    if not (full_copy and free):
        return []
    return [Decision("the penalty", stated_ratio(ev.get("penalty"), ev["plain_copy_gbps"], ev["transposed_gbps"]),
                     ev.get("penalty_iqr"), th["strided_penalty_ratio"])]


# The device each claim's seed states it on, as a form names it ("the seed: A100").
SEED_DEVICES = {"C2": "A100", "C6": "a GPU", "C9": "a CPU", "C10": "a GPU", "C5b": "a CPU", "C5c": "a CPU"}


def analogue_form(device: str, seed: str, detail: str = "", measured: str = "", not_measured: str = "") -> str:
    """One style for every form this chapter judges away from the seed's setting (review
    2026-12-03d item 12, which found 'GPU analogue: cuda' beside 'analogue: NVIDIA H200 (the
    seed: A100)'; review 2026-12-04k item 6, which found 'L1 not measured on this form', 'no DTLB
    on this form' and 'not measured: GPU time' side by side): 'analogue: <this device> (the seed:
    <the seed's>)', then the cases' dtype and shapes, 'measured: ...' and 'not measured: ...',
    each after '; ' where given."""
    if not device or not seed:
        raise ValueError(f"an analogue form names this device and the seed's, got {device!r} and {seed!r}")
    parts = [f"analogue: {device} (the seed: {seed})", detail,
             f"measured: {measured}" if measured else "", f"not measured: {not_measured}" if not_measured else ""]
    return "; ".join(part for part in parts if part)


def c9_form(on_gpu: bool, analogue: str = "") -> str:
    """The form C9 is judged in, truthfully: the seed states it on a CPU with DTLB misses, which
    the chapter never counts (only bytes copied and copy speed), so no run is the seed's form.
    One style on both devices (review 2026-12-04j item 8: the CPU read 'CPU, float32, ...', neither
    the seed's form nor an analogue): 'analogue: <this device> (the seed: a CPU), float32,
    128x512x256; measured: ...; not measured: ...', in `analogue_form`'s order and words on both
    devices (review 2026-12-04m item 10: the CPU read 'the DTLB misses the seed names not
    measured', the GPU 'no DTLB on this form', C5b 'not measured: latency, L1 misses')."""
    if not isinstance(on_gpu, bool):
        raise TypeError(f"on_gpu must be True or False, got {on_gpu!r}")
    head = analogue or analogue_form("a GPU" if on_gpu else "a CPU", SEED_DEVICES["C9"])
    return f"{head}; float32, 128x512x256; measured: bytes copied, copy speed; not measured: {C9_NOT_MEASURED}"


C9_NOT_MEASURED = "the DTLB misses the seed counts"


C9 = Claim(
    "C9", CHAPTER, SEED_STRIDES, "3.1 Quantifying the cost of contiguous()",
    "contiguous() on a transposed 128x512x256 tensor is costly (18,420 MB/s, 2.7M DTLB misses) "
    "against a natively contiguous tensor (920 MB/s, 12K).",
    f"a full copy, free when already contiguous, > {STRIDED_PENALTY_RATIO}x slower than a plain copy "
    "of the same bytes",
    "no full copy, or a copy when already contiguous; 'depends' if it runs at a plain copy's "
    "speed (on records from before 2026-12-04, also if glibc's allocator decided it)",
    ("transposed_copy_bytes", "expected_bytes", "contiguous_returns_self",
     "contiguous_copy_bytes", "transposed_gbps", "plain_copy_gbps"),
    thresholds={"strided_penalty_ratio": STRIDED_PENALTY_RATIO}, check=check_c9, timing_based=True,
    decisions=decisions_c9,
    section_zh="3.1 contiguous()调用代价量化", seed_setting="a CPU (DTLB misses), 128x512x256",
    seed_text='contiguous() on 128×512×25618,4202.7Mnative contiguous tensor92012K')


def _bytes_text(nbytes: int) -> str:
    """Bytes for prose: whole MiB where exact ('4 MiB', not '4194304 B': review 2026-12-04j item 10)."""
    return f"{nbytes >> 20} MiB" if nbytes >= 2**20 and nbytes % 2**20 == 0 else f"{nbytes:,} B"


def _us(seconds: float) -> str:
    return f"{1e6 * seconds:.3g} us"


# A side of a C10 case is read from a loop of its calls, timed by wall clock, over its device time
# per call, by the rule chapter 00 reads its hot loop by too (`labkit.measure.pace`: its docstring
# says why 1.05x and 1.5x; review 2026-12-05o 00-02 item 1 moved it there from here).


def launch_shown(host: float, loop: float) -> float:
    """The host launch figure a page may show beside a timed loop: the probe's, capped at the
    loop's per-call time (review 2026-12-04k item 1: the probe, 3 calls behind a spin, read 141 us
    for a call a loop repeated every 63.3 us; a call cannot take longer to launch than a loop of
    them takes per call, so the loop's time is the tighter upper bound)."""
    if min(host, loop) <= 0:
        raise ValueError(f"a launch figure needs positive times, got host {host}, loop {loop}")
    return min(host, loop)


def loop_over_device(c: Mapping) -> dict[str, float]:
    """Each side's timed loop per call over its device time ({} where no loop was timed per
    call): the ratio that decides whether a side is launch-bound (`pace_label`)."""
    view_loop, aware_loop = c.get("loop_view_s"), c.get("loop_baseline_s")
    aware_dev = c.get("stride_aware_median_s")
    if view_loop is None or aware_loop is None or aware_dev is None:
        return {}
    return {"the stride-aware GEMM": float(aware_loop) / float(aware_dev),
            "torch.matmul": float(view_loop) / float(c["matmul_view_median_s"])}


def loop_over_device_range(c: Mapping) -> dict[str, tuple[float, float]]:
    """Each side's loop rounds' medians over its device time, lowest and highest ({} on a record
    from before the rounds were kept, review 2026-12-04m item 1)."""
    rounds = {"the stride-aware GEMM": (c.get("loop_baseline_rounds_s"), c.get("stride_aware_median_s")),
              "torch.matmul": (c.get("loop_view_rounds_s"), c.get("matmul_view_median_s"))}
    if any(not found or device is None for found, device in rounds.values()):
        return {}
    return {side: (min(found) / float(device), max(found) / float(device))
            for side, (found, device) in rounds.items()}


def launch_bound_text(c: Mapping) -> str:
    """A GPU case's bound, from its row, in one deciding ratio per side: a loop of calls timed by
    wall clock against the device time per call, 'about Nx its device time' with the loop rounds'
    range, each side labelled by `pace_label` on that range (review 2026-12-04m item 1). The
    host-launch probe decides nothing and is not in the reason (review 2026-12-04k item 1: it read
    141 us for a call a loop repeated every 63.3 us); the figures are folded under the table
    (`cases.c10_table`). The loop's ratio of the two paths is not stated: it read 0.88 on a page
    and 0.61-0.75 in three reproduce runs, a tenth of its spread. Every GPU case times its loop
    now (`cases.c10_loop`); '' where no host launch was recorded, or on an older record where
    none ran over its device time; an older record with a probe over the device time and no loop
    says so and states no bound."""
    view_host, aware_host = c.get("matmul_view_host_s"), c.get("stride_aware_host_s")
    view_dev, aware_dev = c["matmul_view_median_s"], c.get("stride_aware_median_s")
    if view_host is None or aware_host is None or aware_dev is None:
        return ""
    ratios = loop_over_device(c)
    if not ratios:
        if view_host <= view_dev and aware_host <= aware_dev:
            return ""
        return " (the host's launch probe read over the device time; no loop was timed, so no bound is stated)"
    ranges = loop_over_device_range(c)
    said = []
    for side, r in ratios.items():
        what = "x its cold device time" if not said else "x"
        if side in ranges:
            low, high = ranges[side]
            said.append(f"{side} about {r:.2f}{what} (rounds {low:.2f}-{high:.2f}x: {pace_label(low, high)})")
        else:
            said.append(f"{side} about {r:.2f}{what} ({pace_label(r)})")
    return f" (a loop of calls, per call: {', '.join(said)})"


def _c10_gpu_case(c: Mapping, th: Mapping) -> tuple[str, float]:
    """(band of torch.matmul-on-the-view / stride-aware GEMM, that ratio)."""
    ratio = stated_ratio(c.get("ratio"), c["matmul_view_median_s"], c["stride_aware_median_s"])
    return band(ratio, c.get("ratio_iqr"), th["stride_aware_win_ratio"]), ratio


def _c10_launch_summary(cases: list[Mapping]) -> str:
    """The sides a timed loop names launch-bound, case by case, each with its loop's per-call
    time over its device time (`pace_label` on the loop rounds' range where recorded): the
    reason's last clause, '' where no case timed a loop and no probe read over the device time
    (review 2026-12-04m item 10: C10's reason was one ~900-character sentence; each side's loop,
    'near' labels included, is under the table: `cases.c10_cases_fold`)."""
    bound, probe_only, looped, every_round = [], [], False, True
    for c in cases:
        ratios = loop_over_device(c)
        if not ratios:
            if launch_bound_text(c):  # an older record: a probe over the device time, no loop
                probe_only.append(c["case"])
            continue
        looped = True
        ranges = loop_over_device_range(c)
        every_round = every_round and bool(ranges)
        sides = [(side, r) for side, r in ratios.items() if pace_label(*ranges.get(side, (r,))) == "launch-bound"]
        if len(sides) == len(ratios):
            bound.append(f"{c['case']} both ({', '.join(f'{r:.2f}x' for _, r in sides)})")
        elif sides:
            bound.append(f"{c['case']} " + ", ".join(f"{side} ({r:.2f}x)" for side, r in sides))
    said = []
    if bound:
        said.append(f"launch-bound (a loop of calls over {LAUNCH_BOUND_RATIO:g}x its device time"
                    + (" in every round" if every_round else "") + "): " + "; ".join(bound))
    elif looped:
        said.append(f"no side launch-bound (no timed loop over {LAUNCH_BOUND_RATIO:g}x its device time)")
    if probe_only:
        said.append(f"{', '.join(probe_only)}: the host's launch probe read over the device time; no loop "
                    "was timed, so no bound is stated")
    return "; " + "; ".join(said) if said else ""


def _c10_gpu_text(cases: list[Mapping], ratios: list[float]) -> str:
    """C10's reason on a GPU in one short sentence (review 2026-12-04m item 10): the bytes
    torch.matmul on the view copied (once where every case agrees), its time over the
    stride-aware GEMM's per case, then the launch-bound sides (`_c10_launch_summary`)."""
    copied = [int(c["matmul_view_copy_bytes"]) for c in cases]
    if len(set(copied)) == 1:
        bytes_said = f"copied {copied[0]} B" + (f" in all {len(cases)} cases" if len(cases) > 1 else "")
    else:
        bytes_said = "copied " + ", ".join(f"{b} B ({c['case']})" for b, c in zip(copied, cases, strict=True))
    times = ", ".join(f"{r:.2f}x ({c['case']})" for r, c in zip(ratios, cases, strict=True))
    return (f"torch.matmul on the view {bytes_said} and takes {times} the stride-aware GEMM's time"
            + _c10_launch_summary(cases))


def check_c10(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    """The seed's form (a GPU with a stride-aware GEMM): the GEMM against torch.matmul on the
    transposed view, case by case (size, dtype). Without a stride-aware GEMM (a CPU), the
    claim's premise: does torch.matmul copy the transposed operand, and does the copy cost?"""
    cases = list(ev["cases"])
    if not cases:
        raise ClaimError("C10: no GEMM case was measured")
    gpu_form = all(c.get("stride_aware_median_s") is not None for c in cases)
    if gpu_form:
        found = [_c10_gpu_case(c, th) for c in cases]
        text = _c10_gpu_text(cases, [r for _, r in found])
        if any(b == "noise" for b, _ in found):
            return DEPENDS, text, NOISE
        wins = [c for c, (b, _) in zip(cases, found, strict=True) if b == "above"]
        copied = [c for c in cases if int(c["matmul_view_copy_bytes"]) > 0]
        if len(wins) == len(cases) and len(copied) == len(cases):
            return CONFIRMED, text, ""
        if not wins:
            return REFUTED, text, ""
        if len(wins) == len(cases):
            return (DEPENDS, text, "the reason: the stride-aware GEMM is faster, but torch.matmul "
                    "copied nothing, so the seed's copy does not explain it")
        return DEPENDS, text, "size and dtype: the stride-aware GEMM wins only for " + ", ".join(
            c["case"] for c in wins)
    notes, copies_found, noisy = [], [], False
    for c in cases:
        ratio = stated_ratio(c.get("ratio"), c["matmul_view_median_s"], c["copy_then_matmul_median_s"])
        where = band(ratio, c.get("ratio_iqr"), 1.0)
        copied = int(c["matmul_view_copy_bytes"])
        if copied > 0:
            copies_found.append(c["case"])
            noisy = noisy or where == "noise"
        notes.append(f"{c['case']}: torch.matmul on the view copied {copied} B "
                     f"(operand {_bytes_text(int(c['operand_bytes']))}) and takes {ratio:.2f}x the time of "
                     "contiguous()-then-matmul")
    # that no stride-aware GEMM runs on a CPU is the form's ('not measured'), beside this reason on
    # every card (review 2026-12-05o 00-02 item 5: the CPU page said it twice in one row)
    text = "; ".join(notes)
    if not copies_found:
        return REFUTED, text + ": torch.matmul reads the transposed operand in place", ""
    if noisy:
        return DEPENDS, text, NOISE
    if len(copies_found) == len(cases):
        return CONFIRMED, text + ": a kernel that read the strides could save that copy", ""
    return DEPENDS, text, "the case: torch.matmul copies only for " + ", ".join(copies_found)


def decisions_c10(ev: Mapping, th: Mapping) -> list[Decision]:
    """The seed's form: torch.matmul on the view over the stride-aware GEMM, every case. The
    CPU form: torch.matmul on the view over contiguous()-then-matmul (1.0), where it copied."""
    cases = list(ev["cases"])
    if cases and all(c.get("stride_aware_median_s") is not None for c in cases):
        return [Decision(c["case"], stated_ratio(c.get("ratio"), c["matmul_view_median_s"], c["stride_aware_median_s"]),
                         c.get("ratio_iqr"), th["stride_aware_win_ratio"]) for c in cases]
    return [Decision(c["case"], stated_ratio(c.get("ratio"), c["matmul_view_median_s"], c["copy_then_matmul_median_s"]),
                     c.get("ratio_iqr"), 1.0) for c in cases if int(c["matmul_view_copy_bytes"]) > 0]


C10 = Claim(
    "C10", CHAPTER, SEED_STRIDES, "3.2 Designing stride-aware operators",
    "A stride-aware custom GEMM beats default torch.matmul on a transposed 1024x1024 matmul, "
    "which copies 8 MB (8.7 ms and 8 MB against 3.2 ms and 0 B).",
    f"torch.matmul on the transposed view copies and takes > {STRIDE_AWARE_WIN_RATIO}x the "
    "stride-aware GEMM's time, in every case measured",
    f"torch.matmul on the view takes <= {STRIDE_AWARE_WIN_RATIO}x the stride-aware GEMM's time in "
    "every case (without a custom GEMM: torch.matmul copies nothing); 'depends' if mixed",
    ("cases",),
    thresholds={"stride_aware_win_ratio": STRIDE_AWARE_WIN_RATIO}, check=check_c10, timing_based=True,
    decisions=decisions_c10,
    section_zh="3.2 stride-aware算子设计", seed_setting="a GPU, transposed 1024x1024 matmul",
    seed_text='默认torch.matmul8.78MBstride-aware custom kernel3.20B')


def check_c12(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    exists, breaks = bool(ev["config_exists"]), int(ev["graph_break_count"])
    # the torch version the setting was looked up in, from the evidence (review 2026-12-04m item 10:
    # 'the seed's form' on torch 2.13.0 here beside 2.11.0 on the H200, neither named)
    version = f"torch {ev['torch']}" if ev.get("torch") else "this torch"
    text = (f"output_graph_debug {'exists' if exists else 'does not exist'} in {version}; "
            f"torch._dynamo.explain finds {ev['graph_count']} graph(s), {breaks} break(s) "
            "in stride-changing code")
    return (CONFIRMED if exists and breaks > 0 else REFUTED), text, ""


C12 = Claim(
    "C12", CHAPTER, SEED_STRIDES, "4.1 Locating forward-pass bottlenecks",
    "torch._dynamo.config.output_graph_debug shows where stride changes split the graph.",
    "the setting exists and stride-changing code breaks the graph",
    "the setting does not exist, or stride changes cause no graph break. The existence test "
    "can only come out one way on a given torch: the setting is in torch._dynamo.config or not, "
    "whatever runs; only the graph-break part is measured",
    ("config_exists", "graph_count", "graph_break_count"), check=check_c12,
    section_zh="4.1 模型前向传播瓶颈定位",
    seed_text='Dynamo 将按内存连续性contiguity与 stride 模式自动切分子图')

CLAIMS = [C2, C5a, C5b, C5c, C6, C9, C10, C12]

