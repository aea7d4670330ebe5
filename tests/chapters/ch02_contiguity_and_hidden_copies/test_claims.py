"""Chapter 02's claim checks: each outcome reached from evidence a real run could produce, and
the recorded H200 and CPU evidence replayed through the checks."""

import json

import pytest

from labkit import claims
from labkit.chapters.ch02_contiguity_and_hidden_copies import claims as ch02
from labkit.claims import tables as claims_tables
from tests.claim_helpers import assert_outcomes_follow_the_evidence, judge
from tests.paths import ROOT

RESULTS = ROOT / "results" / "nvidia-h200.json"
DATA = ROOT / "tests" / "data" / "cpu_verdicts_ch02_ch03.json"


def patterns(aligned=0.10, misaligned=0.10, strided=0.12, both=0.12):
    return {ch02.ALIGNED_CONTIGUOUS: aligned, ch02.MISALIGNED_CONTIGUOUS: misaligned,
            ch02.ALIGNED_STRIDED: strided, ch02.MISALIGNED_STRIDED: both}


def c5a(fresh_bad=0, views_bad=2):
    """C5a evidence as chapter 02 reads it off data_ptr(): x[1:] and x[3:] start mid-line."""
    return dict(fresh_checked=24, fresh_misaligned=fresh_bad, views_checked=5,
                contiguous_views_misaligned=views_bad,
                view_offsets={"x[1:]": 4, "x[3:]": 12, "x[16:]": 0} if views_bad else {})


def c5(aligned=0.10, misaligned=0.10, strided=0.12, both=0.12, l1=None, **more):
    """C5b evidence as chapter 02 builds it: ns per element of the four patterns, two sizes, and
    the bytes each pattern fetches per useful byte (64-byte lines over 2,048 floats). The window
    runs 4x faster per element by default, as a CPU core's L1 does (this course's CPU: 4.2x)."""
    return dict(ns_per_element=patterns(aligned, misaligned, strided, both),
                ns_per_element_l1=patterns(*(l1 or (aligned / 4, misaligned / 4, strided / 4, both / 4))),
                fetched_per_useful=patterns(1.0, 1.0078, 2.0, 2.0), fetch_unit_bytes=64, **more)


def c9(transposed_gbps=1.4, plain_gbps=9.0, **more):
    return dict(transposed_copy_bytes=64 << 20, expected_bytes=64 << 20, contiguous_returns_self=True,
                contiguous_copy_bytes=0, transposed_gbps=transposed_gbps, plain_copy_gbps=plain_gbps,
                **more)


def gemm_case(case="1024 float16", view=1.0, aware=1.0, copied=0, **more):
    """One C10 case on a GPU: torch.matmul on the transposed view against the stride-aware GEMM."""
    return dict(case=case, operand_bytes=2 << 20, matmul_view_copy_bytes=copied,
                matmul_view_median_s=view, copy_then_matmul_median_s=view * 1.1,
                stride_aware_median_s=aware, **more)


def cpu_case(copied=0, view=1.0, then=1.05, **more):
    """A C10 case on a CPU: no stride-aware custom GEMM, only torch.matmul's own behaviour."""
    return dict(case="1024 float32", operand_bytes=4 << 20, matmul_view_copy_bytes=copied,
                matmul_view_median_s=view, copy_then_matmul_median_s=then,
                stride_aware_median_s=None, **more)


CASES = {
    "C2": {
        "confirmed": dict(cases=[dict(case="3-D", implicit_copy_bytes=1 << 20,
                                      implicit_median_s=4.0, explicit_median_s=1.0)]),
        "depends": dict(cases=[dict(case="3-D", implicit_copy_bytes=1 << 20,
                                    implicit_median_s=4.0, explicit_median_s=1.0),
                               dict(case="2-D", implicit_copy_bytes=0,
                                    implicit_median_s=1.0, explicit_median_s=1.1)]),
        "refuted": dict(cases=[dict(case="2-D", implicit_copy_bytes=0,
                                    implicit_median_s=1.0, explicit_median_s=1.1)]),
    },
    "C5a": {
        # an allocator that aligns, and views that all start on a line (x[16:], x[64:128])
        "confirmed": c5a(views_bad=0),
        # what every run prints: x[1:] is contiguous and 4 bytes past a line
        "refuted": c5a(),
    },
    "C5b": {
        # an old in-order core where a line-crossing load costs: both cells of the gap slow
        "confirmed": c5(misaligned=0.22, both=0.30),
        # the gap at DRAM size but not in a window that shows a cache
        "depends": c5(misaligned=0.22, both=0.30, l1=(0.025, 0.025, 0.0275, 0.0275)),
        "refuted": c5(),
    },
    "C5c": {
        # alignment alone 1.6x at both sizes: the seed's cause
        "confirmed": c5(misaligned=0.16, both=0.30),
        "depends": c5(misaligned=0.22, both=0.30, l1=(0.025, 0.025, 0.0275, 0.0275)),
        # this course's CPUs: the gap is the stride's, alignment alone costs nothing
        "refuted": c5(strided=0.20, both=0.21),
    },
    "C6": {
        "confirmed": dict(copy_bytes=2 << 20, shares_storage=False,
                          narrow_contiguous_median_s=1e-6, narrow_transposed_median_s=8e-6),
        "depends": dict(copy_bytes=2 << 20, shares_storage=False,
                        narrow_contiguous_median_s=1e-6, narrow_transposed_median_s=1.1e-6),
        "refuted": dict(copy_bytes=0, shares_storage=True,
                        narrow_contiguous_median_s=1e-6, narrow_transposed_median_s=1.1e-6),
    },
    "C9": {
        "confirmed": c9(),
        "depends": c9(transposed_gbps=8.0),
        "refuted": dict(c9(), contiguous_returns_self=False, contiguous_copy_bytes=64 << 20),
    },
    "C10": {
        "confirmed": dict(cases=[gemm_case(view=2.0, copied=2 << 20)]),
        "depends": dict(cases=[gemm_case(view=2.0, copied=2 << 20),
                               gemm_case("4096 float16", view=1.0, aware=1.1, copied=2 << 20)]),
        "refuted": dict(cases=[gemm_case(view=1.0, aware=1.3), gemm_case("4096 float32", aware=1.4)]),
    },
    "C12": {
        "confirmed": dict(config_exists=True, graph_count=2, graph_break_count=1),
        "refuted": dict(config_exists=False, graph_count=1, graph_break_count=0),
    },
}


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_check_follows_the_evidence(claim_id):
    assert_outcomes_follow_the_evidence(claim_id, CASES[claim_id])


def test_c5b_and_c5c_split_the_seeds_comparison_from_its_cause():
    """Issue 38 (review 2026-12-04j item 5): C5b's 'depends (on the cause)' hid a confirmation
    (the seed's comparison) and a refutation (its cause). C5b now judges the comparison alone
    and never depends on the cause; C5c judges misalignment as the cause, from the same evidence."""
    cpu = c5(strided=0.20, both=0.21)
    stride, cause = judge("C5b", **cpu), judge("C5c", **cpu)
    assert stride.outcome == "confirmed" and "cause" not in stride.label
    # review 2026-12-04i item 5: the seed's comparison first, inside the card's visible part
    # review 2026-12-04k item 2: judged on direction, at a stride the course chose, the seed's 2.24x no target
    lead = ("the seed's direction holds at DRAM size (over 1.5x): misaligned+strided 2.10x aligned+contiguous at "
            "stride 2, chosen here; the seed names none (its 2.24x is no target)")
    assert stride.reason.startswith(lead) and lead in claims_tables.deciding(stride.reason)
    assert "judged as C5c" in stride.reason
    assert cause.outcome == "refuted"
    cause_lead = ("misalignment does not explain the gap at DRAM size and in L1: alignment alone 1.00x for 1.01x the bytes, "
                  "stride alone 2.00x for 2.00x")
    assert cause.reason.startswith(cause_lead) and cause_lead in claims_tables.deciding(cause.reason)
    assert ": the stride's bytes account for the gap (misaligned+strided 2.10x)" in cause.reason
    # review 2026-12-03e item 5: DRAM size alone names the cause, so the window's noise (a 64%
    # misaligned window timing on this CPU) holds back neither; the window is shown, not judged
    noisy_window = {"timing": "L1-resident: misaligned, contiguous", "why": "noisy: IQR 64% of the median",
                    "spread": 0.64}
    kept = judge("C5b", **cpu, flags=[noisy_window])
    assert kept.outcome == "confirmed" and "shown, not judged" in kept.reason
    assert "IQR 64%" not in kept.reason  # a flag on a case not judged is left out
    # review 2026-12-04l item 5: C5c judges L1 too (the seed's mechanism), so a flag there that
    # could carry alignment alone across 1.5x holds it back, as its printed rule says
    cause_held = judge("C5c", **cpu, flags=[noisy_window])
    assert cause_held.outcome != "refuted" and "shown, not judged" not in cause_held.reason
    # a flag on the seed's DRAM-sized timing holds C5b back, the numbers still read first
    noisy_seed = {"timing": ch02.MISALIGNED_STRIDED, "why": "noisy: IQR 50% of the median", "spread": 0.5}
    held = judge("C5b", **c5(strided=0.20, both=0.16), flags=[noisy_seed])
    assert held.depends_on == claims.NOISE_FLAGGED and claims_tables.deciding(held.reason).startswith(
        "at DRAM size, misaligned+strided 1.60x aligned+contiguous at stride 2, chosen here")
    assert "holds" not in held.reason  # a flagged DRAM timing: the numbers lead, no verdict word
    # a flag on alignment alone's timing holds back C5c only where it could carry 1.00x across 1.5
    noisy_align = {"timing": ch02.MISALIGNED_CONTIGUOUS, "why": "noisy: IQR 80% of the median", "spread": 0.8}
    assert judge("C5c", **cpu, flags=[noisy_align]).depends_on == claims.NOISE_FLAGGED
    assert judge("C5b", **cpu, flags=[noisy_align]).outcome == "confirmed"  # not C5b's timing
    # where alignment costs at DRAM size too, the window is judged for both (its noise can hold C5c back)
    both_costly = c5(misaligned=0.2, strided=0.2, both=0.3)
    assert [d.name for d in ch02.decisions_c5b(both_costly, TH5).decisions] == ["the seed's ratio", ch02.L1_CASE]
    assert [d.name for d in ch02.decisions_c5c(both_costly, TH5).decisions] == [
        "alignment alone", "alignment alone, " + ch02.L1_CASE]
    held = judge("C5c", **both_costly, flags=[dict(noisy_window, spread=5.0)])
    assert held.depends_on == claims.NOISE_FLAGGED and "L1-resident" in held.reason
    assert judge("C5b", **both_costly, flags=[dict(noisy_window, spread=5.0)]).outcome == "confirmed"
    # DRAM shows the gap, L1 does not: the seed's number is a memory-size effect here
    sized = judge("C5b", **c5(misaligned=0.22, both=0.30, l1=(0.025, 0.025, 0.0275, 0.0275)))
    assert sized.depends_on.startswith("the size") and "in DRAM but not in L1" in sized.depends_on
    assert "analogue" not in sized.depends_on and "not the seed's latencies" in sized.reason
    for claim_id in ("C5b", "C5c"):
        with pytest.raises(claims.ClaimError, match="all four patterns"):
            judge(claim_id, **dict(c5(), ns_per_element={ch02.ALIGNED_CONTIGUOUS: 0.1}))
        with pytest.raises(claims.ClaimError, match="fetched_per_useful needs all four"):
            judge(claim_id, **dict(c5(), fetched_per_useful={ch02.ALIGNED_CONTIGUOUS: 1.0}))


def test_c5b_and_c5c_name_the_buffer_s_place_and_decide_as_before():
    """Review 2026-12-05u 00-04 item 2: the reasons said 'at DRAM size' beside a title that put the
    buffer inside the reported L3. The place (evidence's buffer_place) words them; the outcomes,
    the decisions and what they depend on are those of the same evidence without it; evidence
    recorded before the label reads 'DRAM', as it did."""
    cases = {"seed holds, cause refuted": c5(strided=0.20, both=0.21),
             "both costly": c5(misaligned=0.16, both=0.30),
             "the size": c5(misaligned=0.22, both=0.30, l1=(0.025, 0.025, 0.0275, 0.0275)),
             "no cache": c5(aligned=0.00111, misaligned=0.00111, strided=0.0020, both=0.0020,
                            l1=(0.00152, 0.00152, 0.00152, 0.00152)),
             "a GPU's form": dict(c5(strided=0.20, both=0.21), ns_per_element_l1=None)}
    noisy_seed = {"timing": ch02.MISALIGNED_STRIDED, "why": "noisy: IQR 50% of the median", "spread": 0.5}
    cases["held back"] = dict(c5(strided=0.20, both=0.16), flags=[noisy_seed])
    for name, ev in cases.items():
        for claim_id in ("C5b", "C5c"):
            old, new = judge(claim_id, **ev), judge(claim_id, **ev, buffer_place="L3")
            assert (new.outcome, new.depends_on.replace("L3", "DRAM")) == (old.outcome, old.depends_on), name
            assert new.reason == old.reason.replace("at DRAM size", "at L3 size").replace(
                "DRAM-sized", "L3-sized"), name
            assert "DRAM" not in new.reason and "DRAM" not in new.depends_on, name
            assert "at L3 size" in new.reason or "L3-sized" in new.reason, name
    lead = judge("C5b", **cases["seed holds, cause refuted"], buffer_place="L3").reason
    assert lead.startswith("the seed's direction holds at L3 size (over 1.5x): misaligned+strided 2.10x")
    cause = judge("C5c", **cases["seed holds, cause refuted"], buffer_place="L3").reason
    assert cause.startswith("misalignment does not explain the gap at L3 size and in L1: ")
    assert "in L3 but not in L1" in judge("C5b", **cases["the size"], buffer_place="L3").depends_on


def test_c5c_is_confirmed_where_alignment_alone_costs_and_c5b_either_way():
    """Synthetic evidence of a core where a line-crossing load costs: alignment alone 1.6x (over
    the 1.5x threshold, which counts as not costly), the seed's ratio 3x: both confirmed."""
    costly = c5(misaligned=0.16, both=0.30)
    verdict = judge("C5c", **costly)
    assert verdict.outcome == "confirmed" and verdict.reason.startswith(
        "misalignment costs at DRAM size and in L1: alignment alone 1.60x for 1.01x the bytes")
    assert judge("C5b", **costly).outcome == "confirmed"
    at_threshold = c5(misaligned=0.15, both=0.30)  # 1.50x is not above 1.5: not costly
    assert judge("C5c", **at_threshold).outcome == "refuted"
    assert "costs nothing measurable" in judge("C5c", **c5()).reason  # no gap, no stride to name


TH5 = {"misaligned_costly_ratio": ch02.MISALIGNED_COSTLY_RATIO}


def test_c5b_judges_the_window_as_l1_only_where_it_shows_a_cache():
    """The H200's window (stride-0 reduction) ran 1.37x slower per element than DRAM-sized, all
    four patterns alike: no cache effect, so it is neither called L1-resident nor judged, and
    the verdict reads DRAM-sized alone (the cause: the stride's bytes)."""
    gpu = c5(aligned=0.00111, misaligned=0.00111, strided=0.0020, both=0.0020,
             l1=(0.00152, 0.00152, 0.00152, 0.00152))
    verdict = judge("C5b", **gpu)
    assert ch02.window_case(gpu) == "16 KiB window" and ch02.window_speedup(gpu) < ch02.CACHE_EFFECT_SPEEDUP
    assert verdict.outcome == "confirmed" and "L1" not in verdict.reason
    assert judge("C5c", **gpu).outcome == "refuted"
    assert "1.37x the DRAM-sized time per element" in verdict.reason and "not judged" in verdict.reason
    assert [d.name for d in ch02.decisions_c5b(gpu, TH5).decisions] == ["the seed's ratio"]
    assert [d.name for d in ch02.decisions_c5c(gpu, TH5).decisions] == ["alignment alone"]
    cpu = c5(strided=0.20, both=0.21)  # the window 4x faster: a cache, named and judged
    assert ch02.window_case(cpu) == ch02.L1_CASE and "L1-resident: " in judge("C5b", **cpu).reason
    assert len(ch02.decisions_c5b(cpu, TH5).decisions) == 1  # the cause at DRAM size: window not judged
    assert "more than its bytes explain" not in judge("C5b", **cpu).reason  # 2.00x for 2.00x
    beyond = judge("C5b", **c5(strided=0.20, both=0.21, l1=(0.033, 0.034, 0.116, 0.117))).reason
    assert "stride alone 3.52x for 2.00x, 1.76x more than its bytes explain" in beyond
    # the gap in the window alone decides 'the size' only where the window is a cache
    no_cache = c5(misaligned=0.22, both=0.30, l1=(0.10, 0.10, 0.11, 0.11))
    assert judge("C5b", **no_cache).outcome == "confirmed"
    with pytest.raises(claims.ClaimError, match="positive"):
        ch02.window_speedup(c5(l1=(0.0, 0.1, 0.1, 0.1)))


def test_c9_gives_the_seeds_rows_in_the_reasons_one_unit():
    """One byte convention (GB/s read + write, as the reason's own rate), and no rate of 0 for
    a copy that does not happen."""
    rows = {"contiguous() of the transposed tensor": 538283.0, "contiguous() of the natively contiguous tensor": 0.0}
    reason = judge("C9", **c9(seed_rows_mb_s=rows)).reason
    # review 2026-12-04m item 10: the reason's own format ('1,077'), not '1076.6' beside '1,075'
    assert "contiguous() of the transposed tensor 1,077 GB/s (read + write)" in reason
    assert "natively contiguous tensor: no copy (returns itself)" in reason
    slow = judge("C9", **c9(transposed_gbps=0.363, seed_rows_mb_s={**rows, "contiguous() of the transposed tensor": 135.0}))
    assert "0.363 GB/s against 9" in slow.reason and "tensor 0.27 GB/s" in slow.reason  # item 12: not 0.4, 0.3


def test_c9_says_costly_against_a_plain_copy_and_what_it_did_not_reproduce():
    """Review 2026-12-03h item 6: 'confirmed' read as if the seed's MB/s rows and DTLB counts
    held. The reason leads with the course's rule (costly against a plain copy), gives both rates
    with their copy-ceiling shares, says the seed's rows were not reproduced and its DTLB counts
    not measured; the H200's record reads as the review asked."""
    rows = {"contiguous() of the transposed tensor": 536767.8, "contiguous() of the natively contiguous tensor": 0.0}
    h200 = judge("C9", **c9(transposed_gbps=1073.26, plain_gbps=4048.56, penalty=3.7635,
                            penalty_iqr=[3.7635, 3.7828], transposed_pct_of_copy_ceiling=25.267,
                            plain_pct_of_copy_ceiling=95.3125, seed_rows_mb_s=rows))
    assert h200.outcome == "confirmed" and h200.reason.startswith("costly against a plain copy: ")
    assert "takes 3.76x its time, 1,073 GB/s (25% of the 4,248 GB/s copy ceiling) against 4,049 (95%)" in h200.reason
    assert "the seed's MB/s rows not reproduced" in h200.reason and h200.reason.endswith("its DTLB counts not measured")
    cheap = judge("C9", **c9(penalty=1.1, penalty_iqr=[1.05, 1.15]))
    assert cheap.reason.startswith("not costly against a plain copy") and cheap.outcome == "depends"
    near = {"contiguous() of the transposed tensor": 17_000.0, "contiguous() of the natively contiguous tensor": 1_000.0}
    assert ch02._seed_rows_reproduced(near) and not ch02._seed_rows_reproduced(rows)


def test_c9_on_a_cpu_names_the_dtlb_miss_its_stride_fits_as_a_hypothesis():
    """Review 2026-12-04m item 10: the CPU's 25.7x at 6.6% of the ceiling fits a DTLB miss per element
    (its reads step 512 KiB apart); the reason says so as a hypothesis, on a CPU only."""
    cpu = judge("C9", **c9(penalty=25.75, penalty_iqr=[21.3, 27.3], transposed_inner_stride_bytes=512 << 10,
                           device="cpu")).reason
    assert cpu.endswith("its DTLB counts not measured (a hypothesis: its reads step 512 KiB apart, a new 4 KiB "
                        "page each element, which could cost a DTLB miss per element)")
    # review 2026-12-05t 00-02 item 6: the count one miss per element predicts, beside the seed's
    counted = judge("C9", **c9(penalty=25.75, penalty_iqr=[21.3, 27.3], transposed_inner_stride_bytes=512 << 10,
                               transposed_elements=128 * 512 * 256, device="cpu")).reason
    assert counted.endswith("a new 4 KiB page each element; one DTLB miss per element would be 16.8M misses, "
                            "6.2x the seed's 2.7M, so the seed's count is not one miss per element)")
    assert "fits" not in counted
    gpu = judge("C9", **c9(penalty=3.76, penalty_iqr=[3.7, 3.8], transposed_inner_stride_bytes=512 << 10,
                           device="cuda:0")).reason
    assert gpu.endswith("its DTLB counts not measured")
    near = judge("C9", **c9(penalty=3.0, penalty_iqr=[2.9, 3.1], transposed_inner_stride_bytes=1024)).reason
    assert near.endswith("its DTLB counts not measured")


def test_c5a_reads_the_views_and_needs_them():
    fresh_only = judge("C5a", **c5a(fresh_bad=3, views_bad=0))
    assert fresh_only.outcome == "refuted"
    assert "x[1:] at +4 B" in judge("C5a", **c5a()).reason
    with pytest.raises(claims.ClaimError, match="views"):
        judge("C5a", **dict(c5a(), views_checked=0))
    assert claims.get("C5a").deterministic
    with pytest.raises(claims.ClaimError):
        claims.get("C5")  # retired: split into C5a and C5b


def test_c5a_on_real_tensors():
    import torch

    base = torch.empty(4096)
    views = [base[1:], base[3:], base[16:]]
    assert all(v.is_contiguous() for v in views)
    bad = sum(v.data_ptr() % 64 != 0 for v in views)
    verdict = judge("C5a", fresh_checked=1, fresh_misaligned=int(base.data_ptr() % 64 != 0),
                    views_checked=3, contiguous_views_misaligned=int(bad))
    assert verdict.outcome == "refuted" and bad == 2


def test_a_flagged_timing_vetoes_only_when_it_could_cross_the_threshold():
    """The trust rule (labkit.claims.trust) on each of chapter 02's timing-based claims."""
    near = dict(case="3-D", implicit_copy_bytes=1 << 20, implicit_median_s=1.8, explicit_median_s=1.0)
    for claim_id, evidence in (("C5b", c5()), ("C9", c9(transposed_gbps=5.0)),
                               ("C2", dict(cases=[near])),
                               ("C6", dict(CASES["C6"]["confirmed"], narrow_transposed_median_s=2e-6)),
                               ("C10", dict(cases=[gemm_case(view=1.0, aware=1.3)]))):
        verdict = judge(claim_id, **evidence, distrusted=["aligned, contiguous"])
        assert verdict.outcome == "depends" and verdict.depends_on == claims.NOISE_FLAGGED, claim_id
        assert "the harness flagged aligned, contiguous" in verdict.reason, claim_id
    # far from the threshold, the same flag cannot carry it across: the verdict stands
    far = dict(case="3-D", implicit_copy_bytes=1 << 20, implicit_median_s=4.0, explicit_median_s=1.0)
    for claim_id, evidence, outcome in (("C9", c9(), "confirmed"), ("C2", dict(cases=[far]), "confirmed"),
                                        ("C6", CASES["C6"]["confirmed"], "confirmed")):
        verdict = judge(claim_id, **evidence, distrusted=["aligned, contiguous"])
        assert verdict.outcome == outcome and "too small to carry" in verdict.reason, claim_id


def test_c10_on_the_h200_decides_despite_a_flag_its_spread_cannot_cross():
    """torch.matmul at 0.31x the stride-aware GEMM (spread 0.312-0.313) against 1.2: a timing
    noisy by 14% cannot carry that across, so the verdict is drawn (the issue's case)."""
    case = gemm_case(view=1.04e-5, aware=3.35e-5, ratio_iqr=[0.3116, 0.3134])
    flag = {"timing": "1024 float16: torch.matmul on the view", "why": "noisy: IQR 14% of the median",
            "spread": 0.14}
    verdict = judge("C10", cases=[case], distrusted=[flag])
    assert verdict.outcome == "refuted" and "too small to carry" in verdict.reason
    # the same flag on a case near the threshold does hold it back, and says by how much
    close = gemm_case("4096 float16", view=1.1, aware=1.0, ratio_iqr=[1.08, 1.15])
    held = judge("C10", cases=[case, close],
                 distrusted=[flag, dict(flag, timing="4096 float16: torch.matmul on the view")])
    assert held.depends_on == claims.NOISE_FLAGGED and "could carry 4096 float16 ratio" in held.reason


def test_c9_decides_at_27x_despite_a_flagged_plain_copy():
    """The CPU case of the issue: a 26.9x penalty against 1.5x, a flagged timing of unknown size."""
    verdict = judge("C9", **c9(transposed_gbps=1.0, plain_gbps=26.9, penalty_iqr=[25.0, 28.0]),
                    distrusted=["plain copy: dst.copy_(x)"])
    assert verdict.outcome == "confirmed"


def test_a_deterministic_part_decides_alone():
    """Bytes copied decide before any timing: a flag cannot hold back a verdict they make."""
    no_copy = judge("C2", **CASES["C2"]["refuted"], distrusted=["2-D: x.t().matmul(w)"])
    assert no_copy.outcome == "refuted"
    c9_no_full_copy = judge("C9", **CASES["C9"]["refuted"], distrusted=["x"])
    assert c9_no_full_copy.outcome == "refuted"
    c6_view = judge("C6", **CASES["C6"]["refuted"], distrusted=["narrow on transposed y"])
    assert c6_view.outcome == "refuted"
    c10_cpu = judge("C10", cases=[cpu_case()], distrusted=["1024 float32: torch.matmul on the view"])
    assert c10_cpu.outcome == "refuted"


def test_the_allocator_can_decide_a_cpu_verdict():
    split = judge("C9", **c9(kept=dict(penalty=1.2, penalty_iqr=[1.1, 1.3])))
    assert split.outcome == "depends" and split.depends_on.startswith("the allocator")
    same = judge("C9", **c9(kept=dict(penalty=6.0, penalty_iqr=[5.5, 6.5])))
    assert same.outcome == "confirmed" and "with malloc keeping freed memory" in same.reason
    c5_split = judge("C5b", **c5(kept=dict(seed_ratio=2.0, seed_ratio_iqr=[1.9, 2.1])))
    assert c5_split.depends_on.startswith("the allocator")
    # today's evidence: the allocator judged on .contiguous() (it allocates), not on copy_
    of_call = dict(of="x.transpose(0, 2).contiguous()")
    kept_fast = judge("C9", **c9(contiguous_call_penalty=9.0, contiguous_call_penalty_iqr=[8.0, 10.0],
                                 kept=dict(of_call, penalty=1.2, penalty_iqr=[1.1, 1.3])))
    assert kept_fast.depends_on.startswith("the allocator") and ".contiguous()'s penalty" in kept_fast.reason
    both_slow = judge("C9", **c9(contiguous_call_penalty=9.0, contiguous_call_penalty_iqr=[8.0, 10.0],
                                 kept=dict(of_call, penalty=7.0, penalty_iqr=[6.5, 7.5])))
    assert both_slow.outcome == "confirmed"
    assert ".contiguous() itself (it allocates): 9.00x a plain copy, 7.00x with malloc keeping" in both_slow.reason


def test_c10_on_a_cpu_judges_the_premise_that_matmul_copies():
    no_copy = judge("C10", cases=[cpu_case()])
    assert no_copy.outcome == "refuted" and "reads the transposed operand in place" in no_copy.reason
    copies = judge("C10", cases=[cpu_case(copied=4 << 20, view=1.3, then=1.0, ratio_iqr=[1.25, 1.35])])
    assert copies.outcome == "confirmed"
    noisy = judge("C10", cases=[cpu_case(copied=4 << 20, view=1.0, then=1.0, ratio_iqr=[0.9, 1.1])])
    assert noisy.depends_on == claims.NOISE
    faster_without_copy = judge("C10", cases=[gemm_case(view=2.0)])
    assert faster_without_copy.depends_on.startswith("the reason")


def _recorded(path, chapter):
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    entries = data.get("chapters", {}).get(chapter, {})
    return {k.split(":", 1)[1]: e["payload"] for k, e in entries.items() if k.startswith("verdict:")}


# How each recorded H200 verdict replays through today's checks. C10 changed on purpose: its
# recorded evidence judged a different comparison (the elementwise kernel), so today's check
# refuses it and says what is missing. C5 is retired (split into C5a and C5b): its recorded
# evidence is replayed into the two new claims below. C5c reads C5b's evidence (issue 38).
H200_REPLAY = {"C2": "refuted", "C6": "refuted", "C9": "confirmed", "C12": "refuted",
               "C10": "missing"}


@pytest.mark.parametrize("claim_id", sorted(H200_REPLAY))
def test_recorded_h200_evidence_replays(claim_id):
    payload = _recorded(RESULTS, "02_contiguity_and_hidden_copies").get(claim_id)
    if payload is None:
        pytest.skip(f"no recorded H200 verdict for {claim_id}")
    expected = H200_REPLAY[claim_id]
    if "ns_per_element" in payload["evidence"] or (
            claim_id == "C10" and "cases" in payload["evidence"]):
        expected = payload["outcome"]  # recorded with today's evidence: it must replay the same
    if expected == "missing":
        with pytest.raises(claims.ClaimError, match="lacks|needs all four"):
            claims.get(claim_id).judge(payload["evidence"])
        return
    assert claims.get(claim_id).judge(payload["evidence"]).outcome == expected


# Verdicts the one trust rule changed on purpose (issue 20), old -> new, with what decides:
# C9 on this CPU was 'depends' on noise because the plain copy was flagged, but the penalty is
# 20.5x (spread 16.9-36.7, with kept memory 24.4x) against 1.5x: a flag of unrecorded size
# (taken as 2x) cannot carry that across, so it is confirmed.
CPU_CHANGED = {"C9": ("confirmed", "")}


def test_recorded_cpu_evidence_replays():
    if not DATA.exists():
        pytest.skip("no CPU evidence recorded")
    recorded = json.loads(DATA.read_text())
    for claim_id in ("C2", "C6", "C9", "C10", "C12"):
        payload = recorded.get(claim_id)
        if payload is None:
            continue
        verdict = claims.get(claim_id).judge(payload["evidence"])
        expected = CPU_CHANGED.get(claim_id, (payload["outcome"], payload["depends_on"]))
        if claim_id in CPU_CHANGED:
            assert payload["outcome"] == "depends", "the recorded file changed: update CPU_CHANGED"
        assert (verdict.outcome, verdict.depends_on) == expected, claim_id


def test_recorded_h200_c10_is_held_back_only_by_the_cases_near_the_threshold():
    """The H200's C10 flags carry no size (recorded before the rule): the 1024 float16 case at
    0.31x no longer vetoes, the 4096 cases (0.73x, 0.89x against 1.2) still do."""
    payload = _recorded(RESULTS, "02_contiguity_and_hidden_copies").get("C10")
    old_flags = payload["evidence"].get("distrusted") if payload else None
    if not old_flags or any(isinstance(f, dict) for f in old_flags):
        pytest.skip("no recorded H200 C10 from before the trust rule")
    verdict = claims.get("C10").judge(payload["evidence"])
    assert verdict.depends_on == claims.NOISE_FLAGGED
    assert "and 1024 float16 ratio" not in verdict.reason and "and 4096 float16 ratio" in verdict.reason


def test_retired_c5_evidence_replays_into_c5a_and_c5b():
    """The recorded C5 evidence (H200 and CPU) holds C5a's addresses; C5b needs an L1 case."""
    h200 = _recorded(RESULTS, "02_contiguity_and_hidden_copies").get("C5")
    cpu = json.loads(DATA.read_text()).get("C5") if DATA.exists() else None
    for payload in (p for p in (h200, cpu) if p):
        ev = payload["evidence"]
        assert claims.get("C5a").judge(ev).outcome == "refuted"  # x[1:], x[3:] off a line
        for claim_id in ("C5b", "C5c"):
            with pytest.raises(claims.ClaimError, match="lacks"):
                claims.get(claim_id).judge(ev)


def test_recorded_h200_c5b_evidence_decides_c5b_and_c5c():
    """Issue 38: the reference recorded C5b ('depends (on the cause)', 1.80x; alignment alone
    1.00x) before C5c was split off. Its evidence decides both: C5b confirmed, C5c refuted, and
    the ledger's reference column judges C5c from C5b's record, saying so."""
    payload = _recorded(RESULTS, "02_contiguity_and_hidden_copies").get("C5b")
    if payload is None or "ns_per_element" not in payload["evidence"]:
        pytest.skip("no recorded H200 C5b with the 2x2")
    assert claims.get("C5b").judge(payload["evidence"]).outcome == "confirmed"
    assert claims.get("C5c").judge(payload["evidence"]).outcome == "refuted"
    data = json.loads(RESULTS.read_text())
    found, _ = claims_tables.current_verdicts(data, recorded=True, only=["C5c"])
    if "verdict:C5c" not in data["chapters"]["02_contiguity_and_hidden_copies"]:
        assert found["C5c"].outcome == "refuted" and found["C5c"].recorded
        assert found["C5c"].reason.startswith("(judged by today's rule from C5b's evidence recorded")
    assert found["C5c"].form == payload["form"] or "verdict:C5c" in data["chapters"]["02_contiguity_and_hidden_copies"]
    # its reproduce mark is read from C5b's runs' evidence where the record judged no C5c itself
    from labkit.claims import reproduced
    from labkit.core import results as results_io
    record = reproduced.load_record(reproduced.record_path(results_io.DEFAULT_REFERENCE, "02_contiguity_and_hidden_copies"))
    if record is None or "C5c" in record["claims"] or not record.get("evidence"):
        return
    mark = reproduced.compare(found["C5c"], record, "", "the record")
    assert mark.reproduced and "C5c judged from C5b's runs' evidence" in mark.detail
    assert all(label == "the same" for label in mark.runs)


def test_c5b_evidence_recorded_before_the_bytes_were_counted_is_still_judged():
    """The H200's record from before issue 38 has no fetched_per_useful: judged by its timings,
    and its reason says the bytes were not recorded."""
    old = {k: v for k, v in c5(strided=0.20, both=0.21).items() if not k.startswith("fetch")}
    verdict = judge("C5b", **old)
    assert verdict.outcome == "confirmed" and "bytes fetched not recorded" in verdict.reason
    cause = judge("C5c", **old)
    assert cause.outcome == "refuted" and "(bytes fetched not recorded)" in cause.reason


def test_a_verdict_states_its_tables_ratio():
    """Review 2026-12-03d item 7: the table showed the median of per-round ratios (C9 27.94x)
    and the verdict the ratio of medians (26.74x). Where the evidence records the comparison's
    own ratio the check states and decides on it; older evidence falls back to the medians."""
    c9_now = judge("C9", **c9(penalty=27.94))
    assert "takes 27.94x its time" in c9_now.reason
    assert "takes 6.43x its time" in judge("C9", **c9()).reason  # 9.0 / 1.4, recorded before
    c6_now = judge("C6", **CASES["C6"]["refuted"], narrow_ratio=1.14)
    assert "takes 1.14x the time" in c6_now.reason
    c2_now = judge("C2", cases=[dict(CASES["C2"]["refuted"]["cases"][0], ratio=0.83)])
    assert "implicit/explicit time 0.83x" in c2_now.reason
    c10_now = judge("C10", cases=[cpu_case(ratio=0.84)])
    assert "takes 0.84x the time of contiguous()-then-matmul" in c10_now.reason
    # the decision reads the same number: a stated 1.6x (above 1.5) confirms where the medians' 1.3x would not
    near = dict(copy_bytes=2 << 20, shares_storage=False, narrow_contiguous_median_s=1e-6,
                narrow_transposed_median_s=1.3e-6)
    assert judge("C6", **near).outcome == "depends" and judge("C6", **near, narrow_ratio=1.6).outcome == "confirmed"
    assert ch02.stated_ratio(None, 3.0, 2.0) == 1.5 and ch02.stated_ratio(1.2, 3.0, 2.0) == 1.2


def test_the_kept_memory_figure_is_read_only_where_the_faults_fell():
    """Review 2026-12-03d item 8: C9 quoted '43.56x with malloc keeping freed memory' from a rerun
    still taking 16,385 faults per call: the setting had not taken, the figure was noise."""
    of_call = dict(of="x.transpose(0, 2).contiguous()")
    did_not_take = judge("C9", **c9(contiguous_call_penalty=32.0, contiguous_call_penalty_iqr=[30.0, 34.0],
                                    contiguous_call_faults_per_call=16385,
                                    kept=dict(of_call, penalty=1.2, penalty_iqr=[1.1, 1.3],
                                              contiguous_call_faults_per_call=16385)))
    assert did_not_take.outcome == "confirmed"  # the noise rerun's 1.2x no longer splits it
    assert "with malloc keeping freed memory" not in did_not_take.reason
    assert "malloc keeping freed memory did not take for .contiguous() (16,385 page faults" in did_not_take.reason
    took = judge("C9", **c9(contiguous_call_penalty=32.0, contiguous_call_penalty_iqr=[30.0, 34.0],
                            contiguous_call_faults_per_call=16385,
                            kept=dict(of_call, penalty=1.2, penalty_iqr=[1.1, 1.3], contiguous_call_faults_per_call=3)))
    assert took.depends_on.startswith("the allocator") and "1.20x with malloc keeping freed memory" in took.reason
    # C5b's sums allocate nothing: with no faults to remove, the kept rerun is not read
    no_faults = dict(faults_per_call=patterns(0, 0, 0, 0))
    sums = judge("C5b", **c5(kept=dict(seed_ratio=2.0, seed_ratio_iqr=[1.9, 2.1], **no_faults), **no_faults))
    assert sums.outcome == "refuted" and "faulted no pages with malloc's defaults" in sums.reason
    assert "with malloc keeping freed memory the seed's ratio" not in sums.reason
    assert ch02.kept_took(None, 3) is None and ch02.kept_took(0, 0) is False and ch02.kept_took(100, 40) is True


def test_a_launch_bound_h200_case_without_a_timed_loop_states_no_bound():
    """Review 2026-12-03d item 11, 2026-12-04k item 1: a host-launch probe over the device time
    (stride-aware host 80.4 us against device 11.4 us) decides nothing without a timed loop."""
    case = gemm_case(view=5.98e-6, aware=11.4e-6, ratio=0.52, ratio_iqr=[0.5, 0.54],
                     matmul_view_host_s=21.5e-6, stride_aware_host_s=80.4e-6)
    verdict = judge("C10", cases=[case])
    assert verdict.outcome == "refuted" and "no loop was timed, so no bound is stated" in verdict.reason
    assert "80.4 us" not in verdict.reason and "faster" not in verdict.reason
    device_bound = gemm_case(view=1e-3, aware=2e-3, matmul_view_host_s=2e-5, stride_aware_host_s=2e-5)
    assert "loop" not in judge("C10", cases=[device_bound]).reason
    assert "loop" not in judge("C10", cases=[gemm_case()]).reason  # hosts not recorded


def test_every_analogue_form_names_this_device_and_the_seeds():
    """Review 2026-12-03d item 12: one style, 'analogue: <device> (the seed: <device>)'."""
    assert ch02.analogue_form("NVIDIA H200", "A100", "float16, batch 64") == (
        "analogue: NVIDIA H200 (the seed: A100); float16, batch 64")
    # review 2026-12-04k item 6: one builder, 'measured: ...; not measured: ...' in that order
    assert ch02.analogue_form("H200", "a CPU", "float32, stride 2", "time", "latency") == (
        "analogue: H200 (the seed: a CPU); float32, stride 2; measured: time; not measured: latency")
    assert ch02.c9_form(True, ch02.analogue_form("NVIDIA H200", ch02.SEED_DEVICES["C9"])).startswith(
        "analogue: NVIDIA H200 (the seed: a CPU); float32")
    with pytest.raises(ValueError, match="names this device"):
        ch02.analogue_form("", "A100")
    assert set(ch02.SEED_DEVICES) == {"C2", "C6", "C9", "C10", "C5b", "C5c"}


def test_c5b_reads_the_dram_buffers_own_bytes_at_dram_size():
    """The DRAM-sized misaligned view crosses one more line in millions (1.00x the bytes); the
    16 KiB window's crosses one in 512 (1.01x). The DRAM text and the cause read the DRAM's."""
    dram = dict(fetched_per_useful_dram=patterns(1.0, 1.0000001, 2.0, 2.0))
    verdict = judge("C5c", **CASES["C5c"]["refuted"], **dram)
    assert verdict.reason.startswith("misalignment does not explain the gap at DRAM size and in L1: alignment alone 1.00x "
                                     "for 1.00x the bytes, stride alone 2.00x for 2.00x")
    assert "alignment alone 1.00x the time for 1.01x the bytes" in verdict.reason  # the window's, in L1


def test_c6_names_the_clock_it_was_timed_on():
    """Review 2026-12-03e item 8: on a GPU narrow is timed on CPU tensors (it runs no kernel);
    the reason says so instead of 'the time' under a seed that gives GPU time."""
    on_gpu = judge("C6", **CASES["C6"]["refuted"], narrow_ratio=1.14, clock=ch02.c6_clock(True))
    # the clock's name in the comparison, what it means after it (not a parenthesis mid-sentence)
    assert on_gpu.reason.endswith(
        "it takes 1.14x the host time of narrow on the contiguous tensor (timed on CPU tensors of the "
        "same layout: narrow runs no kernel, so the seed's GPU time has nothing to time)")
    on_cpu = judge("C6", **CASES["C6"]["refuted"], narrow_ratio=1.14, clock=ch02.c6_clock(False))
    assert on_cpu.reason.endswith("it takes 1.14x the CPU time of narrow on the contiguous tensor")
    unnamed = judge("C6", **CASES["C6"]["refuted"], narrow_ratio=1.14)  # a record from before the clock
    assert unnamed.reason.endswith("it takes 1.14x the time of narrow on the contiguous tensor")


# The H200 record of 2026-12-04 13:37-14:07 (results/nvidia-h200.json), C10's two launch-probed cases.
H200_C10_SEED_CASE = gemm_case("1024 float32", view=52.256e-6, aware=52.64e-6, ratio=0.9927, ratio_iqr=[0.99, 0.995],
                               matmul_view_host_s=22.46e-6, stride_aware_host_s=140.8e-6, loop_ratio=0.878,
                               loop_ratio_iqr=[0.876, 0.886], loop_view_s=55.71e-6, loop_baseline_s=63.33e-6)
H200_C10_FP16 = gemm_case("1024 float16", view=5.952e-6, aware=11.232e-6, ratio=0.53, ratio_iqr=[0.52, 0.54],
                          matmul_view_host_s=105.4e-6, stride_aware_host_s=187.7e-6, loop_ratio=0.5517,
                          loop_ratio_iqr=[0.5509, 0.5546], loop_view_s=29.73e-6, loop_baseline_s=53.86e-6)


def test_launch_bound_is_read_from_the_timed_loop_against_device_time_not_the_probe():
    """Review 2026-12-04k item 1: 'the stride-aware GEMM launch-bound: host 141 us, device 52.6 us,
    loop 63.3 us per call (the host figure overstates ...)' rested a label on a probe the loop
    contradicts, and stated a loop ratio (0.88) that read 0.61-0.75 in reproduce. One ratio per side
    now, loop over device, labelled by `pace_label` (review 2026-12-04l item 2): 63.3/52.6 = 1.20 and
    55.7/52.3 = 1.07 are both near launch-bound, under 1.5x."""
    text = ch02.launch_bound_text(H200_C10_SEED_CASE)
    assert text == (" (a loop of calls, per call: the stride-aware GEMM about 1.20x its cold device time (near launch-bound), "
                    "torch.matmul about 1.07x (near launch-bound))")
    assert "141" not in text and "faster" not in text and "0.88" not in text
    both = ch02.launch_bound_text(H200_C10_FP16)
    assert "the stride-aware GEMM about 4.80x its cold device time (launch-bound), torch.matmul about 4.99x (launch-bound)" in both
    quiet = dict(H200_C10_SEED_CASE, loop_view_s=53e-6, loop_baseline_s=54e-6)
    assert ch02.launch_bound_text(quiet).endswith("about 1.03x its cold device time (at the GPU's pace), "
                                                  "torch.matmul about 1.01x (at the GPU's pace))")


def test_a_side_is_named_launch_bound_only_where_every_loop_round_reads_over_the_line():
    """Review 2026-12-04m item 1: the card prints each side's pace as 'about Nx its device time'
    with the loop rounds' range, and a label every round carries: 'launch-bound' only where the
    lowest round is over LAUNCH_BOUND_RATIO, 'at the GPU's pace' only where the highest is under
    AT_DEVICE_PACE, else 'near launch-bound'."""
    timed = dict(H200_C10_SEED_CASE, loop_baseline_rounds_s=[100e-6, 104e-6, 110e-6],
                 loop_view_rounds_s=[54e-6, 56e-6, 90e-6])
    text = ch02.launch_bound_text(timed)
    assert "the stride-aware GEMM about 1.20x its cold device time (rounds 1.90-2.09x: launch-bound)" in text
    assert "torch.matmul about 1.07x (rounds 1.03-1.72x: near launch-bound)" in text
    assert ch02.pace_label(1.4, 1.6) == "near launch-bound" and ch02.pace_label(1.51, 3.0) == "launch-bound"
    assert ch02.pace_label(1.0, 1.04) == "at the GPU's pace" and ch02.pace_label(1.0, 1.06) == "near launch-bound"
    # no rounds on an older record: the single ratio decides, as before
    assert ch02.loop_over_device_range(H200_C10_SEED_CASE) == {}


# C10 1024 float32, loop per call over device time, each side, in the four H200 runs of 2026-12-04
# 16:01-16:10: the page (results/h200_notebooks/02_*.ipynb) and the three reproduce runs
# (results/reproduce/nvidia-h200-02_*.json), as (the stride-aware GEMM, torch.matmul).
H200_C10_LOOP_OVER_DEVICE = {"page": (1.59, 1.07), "run 1": (2.38, 1.41), "run 2": (1.88, 1.21), "run 3": (1.42, 1.16)}


def test_the_launch_labels_of_four_h200_runs_do_not_contradict_each_other():
    """Review 2026-12-04l item 2: the page said torch.matmul was not launch-bound (1.07x, under
    the old 1.15 line) and three reproduce runs said it was (1.41x, 1.21x, 1.16x). No run's label
    may now be the opposite of another's: 'near launch-bound' may stand beside 'launch-bound' or
    'at the GPU's pace', never 'launch-bound' beside 'at the GPU's pace'."""
    for side in (0, 1):
        labels = {ch02.pace_label(ratios[side]) for ratios in H200_C10_LOOP_OVER_DEVICE.values()}
        assert labels != {"launch-bound", "at the GPU's pace"} and len(labels - {"near launch-bound"}) <= 1, labels
    assert {ch02.pace_label(r[1]) for r in H200_C10_LOOP_OVER_DEVICE.values()} == {"near launch-bound"}
    assert ch02.pace_label(1.59) == "launch-bound" and ch02.pace_label(1.04) == "at the GPU's pace"
    # the same check on the stored records themselves, where their loops are present
    reproduce = ROOT / "results" / "reproduce" / "nvidia-h200-02_contiguity_and_hidden_copies.json"
    runs = [e["C10"]["cases"][0] for e in json.loads(reproduce.read_text())["evidence"] if "C10" in e]
    found = [(c["loop_baseline_s"] / c["stride_aware_median_s"], c["loop_view_s"] / c["matmul_view_median_s"])
             for c in runs if c.get("loop_view_s")]
    # the 2026-12-04 18:55 record had 2: its run 2 timed no loop, since the loop then ran only where
    # the probe fired (review 2026-12-04m item 1); `cases.c10_loop` times it on every GPU case, and
    # the 2026-12-05 04:00 re-record (call A, 9d58b58) holds 3 of 3
    assert len(found) == 3, f"{len(found)} of 3 reproduce runs timed C10's loop: re-record 02 on the H200"
    for side in (0, 1):
        labels = {ch02.pace_label(r[side]) for r in found}
        assert labels != {"launch-bound", "at the GPU's pace"}, labels


def test_the_host_figure_shown_never_exceeds_the_loops_per_call_time():
    """Review 2026-12-04k item 1: a call cannot take 141 us to launch when a loop of them runs at
    63.3 us per call; the fold under C10's table shows the launch capped at the loop's time."""
    assert ch02.launch_shown(140.8e-6, 63.33e-6) == 63.33e-6
    assert ch02.launch_shown(22.46e-6, 55.71e-6) == 22.46e-6
    with pytest.raises(ValueError, match="positive"):
        ch02.launch_shown(0.0, 1.0)
    recorded = json.loads(RESULTS.read_text())["chapters"]["02_contiguity_and_hidden_copies"]["verdict:C10"]
    for case in recorded["payload"]["evidence"]["cases"]:
        for host, loop in (("stride_aware_host_s", "loop_baseline_s"), ("matmul_view_host_s", "loop_view_s")):
            if case.get(loop) is not None and case.get(host) is not None:
                assert ch02.launch_shown(case[host], case[loop]) <= case[loop], case["case"]


def test_c5b_s_reason_opens_with_the_seeds_comparison_then_its_cause():
    """Review 2026-12-04i item 5: the seed's comparison (2.24x) reproduces, its cause does not;
    the reason said the stride first, and a learner read 'depends' as 'half right on speed'.
    The CPU page's numbers: 2.52x, alignment alone 1.06x for 1.00x, stride 2 2.36x for 2.00x."""
    cpu = c5(aligned=0.160, misaligned=0.168, strided=0.377, both=0.402, l1=(0.04, 0.0425, 0.094, 0.10),
             fetched_per_useful_dram=patterns(1.0, 1.0, 2.0, 2.0))
    verdict, cause = judge("C5b", **cpu), judge("C5c", **cpu)
    assert verdict.outcome == "confirmed" and cause.outcome == "refuted"
    lead = "the seed's direction holds at DRAM size (over 1.5x): misaligned+strided 2.51x aligned+contiguous at stride 2"
    cause_lead = ("misalignment does not explain the gap at DRAM size and in L1: alignment alone 1.05x for 1.00x the bytes, "
                  "stride alone 2.36x for 2.00x")
    assert verdict.reason.startswith(lead) and lead in claims_tables.deciding(verdict.reason)
    assert cause.reason.startswith(cause_lead) and cause_lead in claims_tables.deciding(cause.reason)
    # a flag too small to carry a ratio across (the CPU page's 13%-noisy aligned timing) keeps the leads
    small = {"timing": ch02.ALIGNED_CONTIGUOUS, "why": "noisy: IQR 13% of the median", "spread": 0.14}
    assert judge("C5b", **cpu, flags=[small]).reason.startswith(lead)
    assert judge("C5c", **cpu, flags=[small]).reason.startswith(cause_lead)


def test_a_time_per_element_reads_in_one_precision():
    """Review 2026-12-04i item 5: the H200 column read '1.11 ps' above '2 ps'."""
    assert [ch02.per_element_text(ns) for ns in (0.00111, 0.002, 0.16, 0.955, 42.7, 1.0)] == [
        "1.11 ps", "2.00 ps", "160 ps", "955 ps", "42.7 ns", "1.00 ns"]


def test_c5b_on_a_gpu_form_measures_no_l1_case_and_says_so():
    """Review 2026-12-03h item 3: the H200's '16 KiB window' (a stride-0 sum: another reduction
    kernel) read 1.36x slower than DRAM-sized. The GPU form leaves it out (ns_per_element_l1
    None): the verdict judges DRAM-sized alone, says 'L1 not measured on this form', and gives
    the time per element in ps with its rate and ceiling share."""
    gpu = c5(aligned=0.00112, misaligned=0.00112, strided=0.00203, both=0.00203,
             fetched_per_useful_dram=patterns(1.0, 1.0, 2.0, 2.0),
             gbps_fetched_dram=patterns(3570.0, 3567.0, 3938.0, 3938.0),
             pct_of_copy_ceiling_dram=patterns(84.0, 84.0, 93.0, 93.0))
    gpu.update(ns_per_element_l1=None, fetch_unit_bytes=32)
    verdict = judge("C5b", **gpu)
    assert verdict.outcome == "confirmed" and judge("C5c", **gpu).outcome == "refuted"
    assert ch02.L1_NOT_MEASURED in verdict.reason and "16 KiB window" not in verdict.reason
    assert "1.12 ps per element, 3,570 GB/s fetched, 84% of a read + write copy ceiling)" in verdict.reason
    # review 2026-12-04m item 5: the CPU page's '175% of the copy ceiling', a sum on a loaded ceiling, is flagged
    loaded = dict(gpu, pct_of_copy_ceiling_dram=patterns(175.0, 173.0, 146.0, 148.0))
    assert ("175% of a read + write copy ceiling (over 100%: a read-only sum against a copy's rate, on a ceiling "
            "measured under load: no fact about memory)") in judge("C5b", **loaded).reason
    assert len(ch02.decisions_c5b(gpu, TH5).decisions) == 1 and ch02.window_case(gpu) == ch02.WINDOW_CASE
    assert ch02.per_element_text(0.955) == "955 ps" and ch02.per_element_text(42.7) == "42.7 ns"


def test_c6_s_form_says_which_form_it_is():
    """Review 2026-12-03h item 9: the H200 labelled C6 'the seed's form' while timing host time
    on CPU tensors against the seed's GPU times."""
    gpu = ch02.c6_form("NVIDIA H200", on_gpu=True)
    assert gpu == ("analogue: NVIDIA H200 (the seed: a GPU); float32 1024x1024; measured: bytes copied, "
                   "kernels, host time; not measured: GPU time (no kernel runs)")
    assert ch02.c6_form("AMD EPYC, 2 threads", on_gpu=False).endswith(
        "measured: bytes copied, narrow's CPU time; not measured: GPU time")


def test_c9_s_takeaway_sets_the_transposed_copy_against_the_plain_one_with_no_ceiling_share():
    """Review 2026-12-04m item 5: the CPU takeaway read 'a transposed copy ran at 6.6% of the copy
    ceiling, a plain one at 159%' on a ceiling measured under load. The takeaway states the penalty
    against the plain copy timed in the same rounds, and both rates; no share."""
    ev = {"transposed_gbps": 1072.0, "plain_copy_gbps": 4052.0, "transposed_pct_of_copy_ceiling": 25.2,
          "plain_pct_of_copy_ceiling": 95.4, "penalty": 3.77}
    assert ch02.c9_shares(ev) == "a transposed copy took 3.8x a plain copy's time (1,072 against 4,052 GB/s)"
    cpu = {"transposed_gbps": 0.884, "plain_copy_gbps": 21.2, "transposed_pct_of_copy_ceiling": 6.6,
           "plain_pct_of_copy_ceiling": 159.0, "penalty": 25.75}
    assert ch02.c9_shares(cpu) == "a transposed copy took 25.8x a plain copy's time (0.884 against 21.2 GB/s)"
    assert "%" not in ch02.c9_shares(cpu)
    # the card: no share of a ceiling the plain copy beat, and it says why
    assert ch02.c9_rates(cpu) == ("0.884 GB/s against a plain copy's 21.2, read + write (no share of the copy "
                                  "ceiling: the plain copy read 159% of it, a ceiling that read low)")
    assert ch02.c9_rates(ev).startswith("1,072 GB/s (25% of the 4,247 GB/s copy ceiling)")


def test_c5c_is_judged_in_l1_too_and_says_the_l1_alignment_cost():
    """Review 2026-12-04l item 5: the CPU page measured alignment alone at 1.20x in L1 (the seed's
    mechanism: 64-byte lines, L1 misses) and set it aside, 'shown, not judged: the cause is read at
    DRAM size'. C5c now judges both sizes where both were measured, says the L1 cost, and its
    outcome follows its printed rule (<= 1.5x at both sizes: refuted; one size only: depends)."""
    cpu = c5(aligned=0.13199, misaligned=0.13211, strided=0.32317, both=0.32666,
             l1=(0.021342, 0.025510, 0.099750, 0.099649), fetched_per_useful_dram=patterns(1.0, 1.0000019, 2.0, 2.0),
             ratio_iqr=patterns([1.0, 1.0], [0.958, 1.062], [2.37, 2.67], [2.32, 2.61]),
             ratio_iqr_l1=patterns([1.0, 1.0], [1.190, 1.209], [4.61, 4.78], [4.63, 5.41]))
    cause = judge("C5c", **cpu)
    assert cause.outcome == "refuted"
    assert cause.reason.startswith("misalignment does not explain the gap at DRAM size and in L1: ")
    assert "; in L1 alignment alone costs 1.20x, below 1.5x. L1-resident" in cause.reason
    assert "stride alone 4.67x for 2.00x" in cause.reason
    assert "shown, not judged" not in cause.reason
    assert [d.name for d in ch02.decisions_c5c(cpu, TH5).decisions] == ["alignment alone", f"alignment alone, {ch02.L1_CASE}"]
    assert "at both sizes" in ch02.C5c.refute_if and "L1-resident" in ch02.C5c.confirm_if
    # C5b keeps its rule: DRAM size names the cause, so its window is shown, not judged
    assert "shown, not judged" in judge("C5b", **cpu).reason
    # alignment costing in L1 only: the rule says 'depends' on the size, and the verdict does
    l1_only = dict(cpu, ns_per_element_l1=patterns(0.021342, 0.040, 0.099750, 0.099649), ratio_iqr_l1={})
    split = judge("C5c", **l1_only)
    assert split.outcome == "depends" and "alignment alone costs in L1 but not in DRAM" in split.depends_on
    # a GPU's form has no L1 case: DRAM size alone decides, and the reason says so
    gpu = dict(cpu, ns_per_element_l1=None, fetch_unit_bytes=32)
    on_gpu = judge("C5c", **gpu)
    assert on_gpu.outcome == "refuted" and ch02.L1_NOT_MEASURED in on_gpu.reason and "in L1" not in on_gpu.reason.split(".")[0]
    assert "DRAM-sized alone is judged" in on_gpu.reason
    assert len(ch02.decisions_c5c(gpu, TH5).decisions) == 1


# The 18:58 H200 page's C10 cases (results/h200_notebooks/02_*.ipynb, cell 23): device times, ratios
# and each side's loop per call, as recorded (no loop rounds on that record).
H200_C10_1858 = [
    gemm_case("1024 float32", view=5.2063e-05, aware=5.2479e-05, ratio=0.9912, ratio_iqr=[0.9901, 0.9924],
              matmul_view_host_s=4.01e-05, stride_aware_host_s=1.310e-04, loop_view_s=6.2016e-05,
              loop_baseline_s=1.03728e-04),
    gemm_case("1024 float16", view=5.984e-06, aware=1.1232e-05, ratio=0.5314, ratio_iqr=[0.5312, 0.5358],
              matmul_view_host_s=5.36e-05, stride_aware_host_s=1.205e-04, loop_view_s=2.6720e-05,
              loop_baseline_s=4.9184e-05),
    gemm_case("4096 float16", view=1.8397e-04, aware=2.5942e-04, ratio=0.7063, ratio_iqr=[0.7045, 0.7175],
              matmul_view_host_s=2.72e-05, stride_aware_host_s=4.45e-05),
    gemm_case("4096 float32", view=2.6541e-03, aware=2.9851e-03, ratio=0.8897, ratio_iqr=[0.8886, 0.8899],
              matmul_view_host_s=8.02e-05, stride_aware_host_s=1.380e-04),
]


def test_c10_s_gpu_reason_is_short_and_names_only_the_launch_bound_sides():
    """Review 2026-12-04m item 10: C10's reason was one ~900-character sentence, a clause per case
    with each side's loop. Now: the bytes copied once where every case agrees, the four ratios,
    then only the launch-bound sides with their loop over device time, every figure from the
    evidence; each case's loop ('near' labels too) is folded under C10's table (`cases.c10_every_case`)."""
    verdict = judge("C10", cases=H200_C10_1858)
    assert verdict.outcome == "refuted"
    assert verdict.reason == (
        "torch.matmul on the view copied 0 B in all 4 cases and takes 0.99x (1024 float32), 0.53x (1024 float16), "
        "0.71x (4096 float16), 0.89x (4096 float32) the stride-aware GEMM's time; launch-bound (a loop of calls "
        "over 1.5x its device time): 1024 float32 the stride-aware GEMM (1.98x); 1024 float16 both (4.38x, 4.47x)")
    assert len(verdict.reason) < 400 and "near launch-bound" not in verdict.reason
    # the ratios are in the card's visible part (claims_tables.deciding cuts at NUMBERS_CHARACTERS)
    assert "0.89x (4096 float32)" in claims_tables.deciding(verdict.reason)
    # with the loop rounds recorded, the rule says 'in every round', and a side a round reads under
    # 1.5x is not named launch-bound
    rounds = [dict(H200_C10_1858[0], loop_baseline_rounds_s=[1.0e-4, 1.04e-4, 1.1e-4],
                   loop_view_rounds_s=[6.0e-5, 6.2e-5, 6.4e-5]),
              dict(H200_C10_1858[1], loop_baseline_rounds_s=[4.9e-5, 5.0e-5, 5.1e-5],
                   loop_view_rounds_s=[7.0e-6, 2.6e-5, 2.7e-5])]
    timed = judge("C10", cases=rounds)
    assert timed.reason.endswith("(a loop of calls over 1.5x its device time in every round): 1024 float32 the "
                                 "stride-aware GEMM (1.98x); 1024 float16 the stride-aware GEMM (4.38x)")
    quiet = [dict(c, loop_view_s=c["matmul_view_median_s"], loop_baseline_s=c["stride_aware_median_s"])
             for c in H200_C10_1858[:2]]
    assert judge("C10", cases=quiet).reason.endswith("; no side launch-bound (no timed loop over 1.5x its device time)")
    copied = judge("C10", cases=[H200_C10_1858[2], dict(H200_C10_1858[3], matmul_view_copy_bytes=8 << 20)])
    assert "copied 0 B (4096 float16), 8388608 B (4096 float32) and takes" in copied.reason


def test_c12_names_the_torch_version_it_looked_the_setting_up_in():
    """Review 2026-12-04m item 10: C12 is judged on the seed's form on torch 2.13.0 (CPU) and
    2.11.0 (H200); the reason names the version from the evidence ('this torch' on a record without it)."""
    found = dict(config_exists=False, setting_error="", graph_count=1, graph_break_count=0,
                 control_graph_break_count=1)
    assert judge("C12", **found, torch="2.13.0+cpu").reason.startswith(
        "output_graph_debug does not exist in torch 2.13.0+cpu; torch._dynamo.explain finds 1 graph(s)")
    assert judge("C12", **found).reason.startswith("output_graph_debug does not exist in this torch;")


def test_the_seed_rows_fold_reads_the_rate_as_the_reason_does():
    """Review 2026-12-04m item 10: the fold printed '1074.8 GB/s' beside the reason's '1,075' and
    hedged the seed's count the reason asserts (MB/s one way)."""
    assert ch02.seed_rows_rate(1074.8) == "1,075 GB/s read + write, 537 one way (the seed's rows' count)"
    assert ch02.seed_rows_rate(0.71) == "0.71 GB/s read + write, 0.355 one way (the seed's rows' count)"
