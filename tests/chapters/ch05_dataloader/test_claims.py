"""Chapter 05's claim checks on constructed evidence, each outcome reached, and the
recorded reference evidence replayed when there is some."""

import pytest

from labkit import claims
from tests.claim_helpers import assert_outcomes_follow_the_evidence, judge

PMD_REFUTED = dict(h2d_memcpy_events=1, batch_device="cpu", batch_pinned=True,
                   gpu_op_accepts_batch=False,
                   warnings=["pin_memory_device is deprecated, the current accelerator will be used"])

CASES = {
    "C13": {
        "confirmed": dict(h2d_memcpy_events=0, batch_device="cuda:0", batch_pinned=False,
                          gpu_op_accepts_batch=True),
        "depends": dict(h2d_memcpy_events=0, batch_device="cpu", batch_pinned=True,
                        gpu_op_accepts_batch=False),
        "refuted": PMD_REFUTED,
    },
    "C23": {
        "confirmed": dict(pageable_gbps=4.2, pinned_gbps=12.8, pin_memory_device_gbps=18.6,
                          transfer_bytes=154 << 20),
        "depends": dict(pageable_gbps=20.0, pinned_gbps=50.0, pin_memory_device_gbps=60.0,
                        transfer_bytes=154 << 20, pinned_speedup_iqr=[2.4, 2.6],
                        pin_memory_device_speedup_iqr=[1.1, 1.3]),
        "refuted": dict(pageable_gbps=20.0, pinned_gbps=50.0, pin_memory_device_gbps=50.2,
                        transfer_bytes=154 << 20, pinned_speedup_iqr=[2.4, 2.6],
                        pin_memory_device_speedup_iqr=[0.99, 1.01]),
    },
}


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_check_follows_the_evidence(claim_id):
    assert_outcomes_follow_the_evidence(claim_id, CASES[claim_id])


def test_c23_noise_depends_and_says_so():
    verdict = judge("C23", **CASES["C23"]["depends"])
    assert verdict.depends_on == claims.NOISE


def test_c23_flagged_noisy_timings_give_depends():
    verdict = judge("C23", **CASES["C23"]["confirmed"], noisy=["pageable"])
    assert verdict.depends_on == claims.NOISE_FLAGGED and "pageable" in verdict.reason
    small = {"timing": "pageable", "why": "noisy", "spread": 0.11}  # 1.45x vs 1.2 needs 21%
    assert judge("C23", **CASES["C23"]["confirmed"], noisy=[small]).outcome == "confirmed"


def test_c23_pmd_gain_without_pinned_gain_is_its_own_depends():
    verdict = judge("C23", pageable_gbps=20.0, pinned_gbps=25.0, pin_memory_device_gbps=40.0,
                    transfer_bytes=1 << 20)
    assert verdict.outcome == "depends" and "row" in verdict.depends_on


def test_c13_reason_quotes_the_deprecation_warning():
    verdict = judge("C13", **PMD_REFUTED)
    assert "deprecated" in verdict.reason and "1 host-to-device memcpy" in verdict.reason


def test_claims_belong_to_chapter_05():
    assert [c.id for c in claims.for_chapter("05_dataloader")] == ["C13", "C23"]
    for claim_id in ("C13", "C23"):
        claim = claims.get(claim_id)
        assert claim.tested and claim.seed_setting and claim.section.startswith("4.3")


@pytest.mark.parametrize("claim_id", ["C13", "C23"])
def test_recorded_reference_replays(claim_id):
    recorded = claims.recorded(claim_id)
    if recorded is None:
        pytest.skip(f"no reference verdict for {claim_id} recorded yet")
    again = claims.get(claim_id).judge(recorded.evidence, machine=recorded.machine,
                                       form=recorded.form)
    assert again.outcome == recorded.outcome
