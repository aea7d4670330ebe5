"""Chapter 05's claim checks on constructed evidence, each outcome reached, and the
recorded reference evidence replayed when there is some."""

import json

import pytest

from labkit import claims
from tests.claim_helpers import assert_outcomes_follow_the_evidence, judge
from tests.paths import RESULTS

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
    "C25": {
        # the reference H200's recorded call_return rows (256 MiB): blocked 99.7%, pinned 0.4%
        "confirmed": dict(pageable_nb_return_s=0.03165, pageable_nb_copy_s=0.03175,
                          pinned_nb_return_s=1.7e-5, pinned_nb_copy_s=0.00487,
                          transfer_bytes=256 << 20),
        "depends": dict(pageable_nb_return_s=0.015, pageable_nb_copy_s=0.03,
                        pinned_nb_return_s=1.7e-5, pinned_nb_copy_s=0.00487,
                        transfer_bytes=256 << 20),
        "refuted": dict(pageable_nb_return_s=2e-5, pageable_nb_copy_s=0.03,
                        pinned_nb_return_s=1.7e-5, pinned_nb_copy_s=0.00487,
                        transfer_bytes=256 << 20),
    },
    "C26": {
        "refuted": dict(getitem_raises=True, error_type="RuntimeError",
                        error_message="required rank 4 tensor to use channels_last format",
                        advised_batch_channels_last=False, sample_dim=3,
                        plain_batch_shape=[4, 3, 16, 16], batch_converted_channels_last=True,
                        batch_converted_stride=[768, 1, 48, 3]),
        "confirmed": dict(getitem_raises=False, error_type="", error_message="",
                          advised_batch_channels_last=True, sample_dim=3,
                          plain_batch_shape=[4, 3, 16, 16], batch_converted_channels_last=True,
                          batch_converted_stride=[768, 1, 48, 3]),
        "depends": dict(getitem_raises=False, error_type="", error_message="",
                        advised_batch_channels_last=False, sample_dim=3,
                        plain_batch_shape=[4, 3, 16, 16], batch_converted_channels_last=True,
                        batch_converted_stride=[768, 1, 48, 3]),
    },
}


def test_c25_without_an_asynchronous_control_depends():
    verdict = judge("C25", pageable_nb_return_s=0.03, pageable_nb_copy_s=0.03,
                    pinned_nb_return_s=0.0049, pinned_nb_copy_s=0.0049, transfer_bytes=1 << 20)
    assert verdict.outcome == "depends" and "control" in verdict.depends_on


def test_c25_from_recorded_call_return_rows():
    from labkit.chapters.ch05_dataloader import h2d_copies
    from labkit.core import results

    rows = results.recorded("05_dataloader", "call_return")
    if not rows:
        pytest.skip("nothing recorded for chapter 05 on the reference GPU")
    verdict = claims.get("C25").judge(h2d_copies.c25_evidence(rows, 256 << 20), machine="nvidia-h200")
    assert verdict.outcome == "confirmed" and "MiB" in verdict.reason
    with pytest.raises(ValueError, match="call_return"):
        h2d_copies.c25_evidence([], 1)


def test_c26_on_this_torch_raises_for_the_3d_sample_and_works_on_the_batch():
    from labkit.chapters.ch05_dataloader import channels_last_probe

    evidence = channels_last_probe.probe()
    assert evidence["getitem_raises"] and evidence["error_type"] == "RuntimeError"
    assert "rank 4" in evidence["error_message"]
    assert evidence["batch_converted_channels_last"] and evidence["batch_converted_stride"][1] == 1
    assert not evidence["unsqueezed_batch_channels_last"]  # collation stacks [1,C,H,W] into 5-D
    verdict = claims.get("C26").judge(evidence)
    assert verdict.outcome == "refuted" and claims.get("C26").deterministic
    with pytest.raises(ValueError, match="layout"):
        channels_last_probe.AdvisedImages("sideways")


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


def test_c23_a_noisy_pageable_copy_cannot_hold_back_the_pin_memory_device_row():
    """H200, reproduce run 2: pageable flagged noisy (size unknown), pinned/pageable 6.9x against
    a far threshold, pin_memory_device/pinned 1.00x: refuted by the third row, as runs 1 and 3."""
    ev = dict(pageable_gbps=7.95, pinned_gbps=54.56, pin_memory_device_gbps=54.71,
              pinned_speedup_iqr=[6.57, 7.67], pin_memory_device_speedup_iqr=[0.998, 1.001],
              transfer_bytes=154140672)
    assert judge("C23", **ev, noisy=["pageable"]).outcome == "refuted"
    # a flag on the pinned copy is part of both ratios, and 1.00x is only 20% from 1.2
    assert judge("C23", **ev, noisy=["pinned"]).depends_on == claims.NOISE_FLAGGED


def test_c23_pmd_gain_without_pinned_gain_is_its_own_depends():
    verdict = judge("C23", pageable_gbps=20.0, pinned_gbps=25.0, pin_memory_device_gbps=40.0,
                    transfer_bytes=1 << 20)
    assert verdict.outcome == "depends" and "row" in verdict.depends_on


def test_c13_reason_quotes_the_deprecation_warning():
    verdict = judge("C13", **PMD_REFUTED)
    assert "deprecated" in verdict.reason and "1 host-to-device memcpy" in verdict.reason


def test_claims_belong_to_chapter_05():
    assert [c.id for c in claims.for_chapter("05_dataloader")] == ["C13", "C23", "C25", "C26"]
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


def test_c23_the_recorded_h200_reproduce_runs_replay_the_same_verdict():
    """The three fresh H200 runs of benchmarks/reproduce.py 05 gave refuted, depends, refuted;
    run 2's 'depends' came from a pageable flag applied to a ratio it is not part of. Their
    recorded evidence, replayed under the scoped rule, gives one verdict."""
    path = RESULTS / "reproduce" / "nvidia-h200-05_dataloader.json"
    if not path.exists():
        pytest.skip("no recorded H200 reproduce file for chapter 05")
    runs = json.loads(path.read_text())["evidence"]
    outcomes = {claims.get("C23").judge(run["C23"]).outcome for run in runs}
    assert outcomes == {"refuted"}


def busy_row(memory, nbytes, call_ms, done_ms=60.0, kernel_ms=50.0, spread=0.01):
    share = call_ms / done_ms
    return {"memory": memory, "nbytes": nbytes, "kernel_s": kernel_ms / 1e3,
            "call_return_s": call_ms / 1e3, "done_s": done_ms / 1e3, "returned_share": share,
            "share_q25": max(share - spread, 0.0), "share_q75": share + spread,
            "waited_for_kernel": call_ms >= 0.8 * kernel_ms}


def busy_rows(pageable_ms):
    """pageable_ms: {nbytes: call-return ms behind a 50 ms kernel}; pinned returns in 20 us."""
    return ([busy_row("pageable", n, ms) for n, ms in pageable_ms.items()]
            + [busy_row("pinned", n, 0.02) for n in pageable_ms])


@pytest.mark.parametrize("pageable_ms, outcome, words", [
    ({64 << 10: 59.0, 256 << 20: 59.5}, "confirmed", "torch said nothing"),
    ({64 << 10: 0.05, 256 << 20: 0.08}, "refuted", "256 MiB"),
    # review 2026-12-04j item 3: judged at the seed's batch (38.5 MB: the 16 and 64 MiB rows);
    # the small sizes' early return is the course's own finding, named beside the verdict
    ({64 << 10: 0.05, 16 << 20: 58.0, 256 << 20: 59.5}, "confirmed", "the course's own finding, not the "
                                                                    "seed's claim: up to 64 KiB"),
    ({64 << 10: 0.05, 16 << 20: 0.06, 64 << 20: 58.0, 256 << 20: 59.5}, "depends", "16 MiB returned at once"),
    ({16 << 20: 0.04, 64 << 20: 0.05, 256 << 20: 59.0}, "refuted", "the 16 MiB and 64 MiB rows"),
])
def test_c25_behind_a_queued_kernel_is_judged_size_by_size(pageable_ms, outcome, words):
    from labkit.chapters.ch05_dataloader import h2d_copies

    evidence = h2d_copies.c25_busy_evidence(busy_rows(pageable_ms), [])
    assert evidence["transfer_bytes"] == max(pageable_ms)  # the original keys: the largest size
    assert evidence["pageable_nb_return_s"] == pytest.approx(pageable_ms[max(pageable_ms)] / 1e3)
    verdict = claims.get("C25").judge(evidence, machine="test")
    assert verdict.outcome == outcome and words in verdict.reason + verdict.depends_on
    assert "behind a 50 ms kernel" in verdict.reason


def test_c25_busy_control_and_warnings_are_measured_not_assumed():
    from labkit.chapters.ch05_dataloader import h2d_copies

    rows = busy_rows({256 << 20: 59.5})
    rows[-1] = busy_row("pinned", 256 << 20, 55.0)  # the pinned control waited too
    verdict = claims.get("C25").judge(h2d_copies.c25_busy_evidence(rows, []), machine="test")
    assert verdict.outcome == "depends" and "control" in verdict.depends_on
    warned = h2d_copies.c25_busy_evidence(busy_rows({256 << 20: 59.5}), ["a copy warning"])
    assert "torch warned: a copy warning" in claims.get("C25").judge(warned, machine="t").reason
    # an old (idle-stream) evidence never recorded warnings: it no longer says "said nothing"
    old = judge("C25", **CASES["C25"]["confirmed"])
    assert "not recorded" in old.reason and "idle stream" in old.reason
    # a spread across the blocking threshold holds the verdict back (the trust rule)
    noisy = h2d_copies.c25_busy_evidence(busy_rows({256 << 20: 59.5}), [])
    noisy["flags"] = [{"timing": "pageable 268435456 B", "why": "noisy", "spread": 0.3}]
    held = claims.get("C25").judge(noisy, machine="t")
    assert (held.outcome, held.depends_on) == ("depends", claims.NOISE_FLAGGED), held.reason
    with pytest.raises(ValueError, match="busy-stream"):
        h2d_copies.c25_busy_evidence([], [])
