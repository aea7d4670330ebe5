"""Chapter 08's claim check on constructed evidence, each outcome reached."""

import pytest

from tests.claim_helpers import assert_outcomes_follow_the_evidence, judge

TOP = dict(top_rung="batch 256", steps_kept=8)
CASES = {
    "C24": {
        "confirmed": dict(TOP, speedup_over_strict=9.5, speedup_over_defaults=6.1,
                          strict_spread=[9.2, 9.8], defaults_spread=[5.9, 6.3]),
        "depends": dict(TOP, speedup_over_strict=6.0, speedup_over_defaults=3.9,
                        strict_spread=[5.8, 6.2], defaults_spread=[3.8, 4.0]),
        "refuted": dict(TOP, speedup_over_strict=2.2, speedup_over_defaults=2.0),
    },
}


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_check_follows_the_evidence(claim_id):
    assert_outcomes_follow_the_evidence(claim_id, CASES[claim_id])


def test_a_spread_across_4_8_is_noise():
    verdict = judge("C24", **dict(CASES["C24"]["confirmed"], strict_spread=[4.5, 5.2]))
    assert verdict.outcome == "depends" and verdict.depends_on.startswith("noise")


def test_the_cpu_form_is_labelled():
    verdict = judge("C24", **CASES["C24"]["refuted"])
    assert verdict.label == "refuted"
    from labkit import claims

    cpu = claims.get("C24").judge(CASES["C24"]["refuted"], form="CPU analogue: ResNet-50 at 32 px")
    assert cpu.form == "CPU analogue: ResNet-50 at 32 px"


def test_judged_at_the_baselines_batch_with_the_top_rung_shown():
    """Batch 256 is not one of the seed's steps: the like-for-like rung at batch 64 decides."""
    ev = dict(TOP, speedup_over_strict=10.2, speedup_over_defaults=4.8, top_batch=256,
              baseline_batch=64, strict_spread=[10.0, 10.4], defaults_spread=[4.7, 4.9],
              at_baseline_batch=dict(rung="CUDA Graphs", speedup_over_strict=8.3,
                                     speedup_over_defaults=3.9, strict_spread=[8.2, 8.4],
                                     defaults_spread=[3.85, 3.95]))
    verdict = judge("C24", **ev)
    assert verdict.outcome == "depends" and verdict.depends_on.startswith("the baseline")
    assert "CUDA Graphs at batch 64" in verdict.reason and "not judged" in verdict.reason
    # the same evidence without the split is judged on its top rung (older recorded results)
    old = {k: v for k, v in ev.items() if k != "at_baseline_batch"}
    assert judge("C24", **old).depends_on.startswith("noise")
