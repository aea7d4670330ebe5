"""Chapter 03's claim checks: each outcome reached from evidence a real run could produce, and
the recorded H200 and CPU evidence replayed through the checks."""

import json
from pathlib import Path

import pytest
import torch

from labkit import claims
from labkit.chapters.ch03_memory_layouts import cases
from labkit.chapters.ch03_memory_layouts import claims as c7
from labkit.claims import reproduced
from labkit.claims import tables as claims_tables
from tests.chapters.ch02_contiguity_and_hidden_copies.test_claims import DATA, RESULTS, _recorded
from tests.claim_helpers import assert_outcomes_follow_the_evidence, judge


def run(dtype="float16", batch=64, nchw=1000.0, nhwc=1300.0, **more):
    return dict(dtype=dtype, batch=batch, nchw_img_s=nchw, nhwc_img_s=nhwc, **more)


CASES = {
    "C7a": {
        "confirmed": dict(runs=[run()]),
        "depends": dict(runs=[run(), run("float32", 1, 100.0, 90.0)]),
        "refuted": dict(runs=[run("float32", 1, 100.0, 90.0)]),
    },
    # C7b: the channels_last model fed an NCHW batch (stride[1] = H*W) and the same values converted
    "C7b": {
        "confirmed": dict(input_stride1=12544, raised="RuntimeError: input must be channels_last",
                          max_abs_diff=None, output_scale=1.16),
        "depends": dict(input_stride1=12544, raised="", max_abs_diff=0.0, output_scale=1.16,
                        misread_max_abs_diff=0.001),
        "refuted": dict(input_stride1=12544, raised="", max_abs_diff=0.0, output_scale=1.16,
                        misread_max_abs_diff=2.24),
    },
    "C22": {
        "confirmed": dict(conv_conversion_bytes=0, conversion_kernels=["nhwcToNchwKernel"],
                          conv_output_format="contiguous", channel_matmul_nhwc_copy_bytes=0,
                          channel_matmul_nchw_copy_bytes=1 << 20),
        "refuted": dict(conv_conversion_bytes=0, conversion_kernels=[],
                        conv_output_format="channels_last", channel_matmul_nhwc_copy_bytes=0,
                        channel_matmul_nchw_copy_bytes=1 << 20),
    },
}


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_check_follows_the_evidence(claim_id):
    assert_outcomes_follow_the_evidence(claim_id, CASES[claim_id])


def test_c7_other_runs_are_shown_not_judged():
    verdict = judge("C7a", runs=[run()],
                    other_runs=[run("float32", 16, 100.0, 90.0)])
    assert verdict.outcome == "confirmed" and "not judged" in verdict.reason


def test_c7_cpu_form_can_be_decided_by_the_allocator():
    slower = [run("float32", 2, 100.0, 80.0, nhwc_time_ratio_iqr=[1.2, 1.3])]
    faster = [run("float32", 2, 100.0, 120.0, nhwc_time_ratio_iqr=[0.8, 0.85])]
    split = judge("C7a", runs=slower, kept=dict(runs=faster))
    assert split.outcome == "depends" and split.depends_on.startswith("the allocator")
    agree = judge("C7a", runs=slower, kept=dict(runs=slower))
    assert agree.outcome == "refuted" and "keeping freed memory" in agree.reason
    # faults recorded and falling: the allocator decides, as before
    took = judge("C7a", runs=[dict(slower[0], nchw_faults_per_call=300.0)],
                 kept=dict(runs=[dict(faster[0], nchw_faults_per_call=0.0)]))
    assert took.depends_on.startswith("the allocator")


def test_c7_a_kept_rerun_that_changed_no_faults_is_a_second_run_and_a_split_is_noise():
    """Review 2026-12-03d item 8: 0 page faults both ways, b2 1.39x then 1.15x: the same
    allocator twice, so where the two runs disagree, that is noise, not the allocator."""
    slower = [run("float32", 2, 100.0, 80.0, nhwc_time_ratio_iqr=[1.2, 1.3], nchw_faults_per_call=0.0)]
    faster = [run("float32", 2, 100.0, 120.0, nhwc_time_ratio_iqr=[0.8, 0.85], nchw_faults_per_call=0.0)]
    split = judge("C7a", runs=slower, kept=dict(runs=faster))
    assert split.outcome == "depends" and split.depends_on.startswith("noise: two runs under the same allocator")
    assert "a second run (malloc keeping freed memory changed no page faults" in split.reason
    agree = judge("C7a", runs=slower, kept=dict(runs=slower))
    assert agree.outcome == "refuted" and "a second run" in agree.reason
    assert c7.allocator_took(slower, faster) is False and c7.allocator_took([run()], [run()]) is None
    # this CPU's b1: one NHWC fault in three calls (0.33 per call), none kept: nothing to change
    third = [dict(slower[0], nhwc_faults_per_call=1 / 3)]
    assert c7.allocator_took(third, [dict(faster[0], nhwc_faults_per_call=0.0)]) is False


def test_c7_a_flagged_timing_vetoes_only_when_it_could_cross_the_threshold():
    near = [run(nhwc=1100.0, nhwc_time_ratio_iqr=[0.9, 0.92])]
    verdict = judge("C7a", runs=near, distrusted=["float16 b64 NCHW"])
    assert verdict.outcome == "depends" and verdict.depends_on == claims.NOISE_FLAGGED
    small = {"timing": "float16 b64: NCHW", "why": "noisy: IQR 12% of the median", "spread": 0.12}
    far = [run(nhwc=1500.0, nhwc_time_ratio_iqr=[0.66, 0.68])]
    assert judge("C7a", runs=far, distrusted=[small]).outcome == "confirmed"
    # a flag on a run that is shown, not judged, holds nothing back
    shown = judge("C7a", runs=near, other_runs=[run("float32", 16)],
                  distrusted=[dict(small, timing="float32 b16: NCHW", spread=None)])
    assert shown.outcome == "confirmed"


def test_c7_a_host_bound_run_is_judged_on_device_time():
    """fp16 eager ResNet-50 at batch 64 on an H200 leaves the GPU idle two thirds of the time:
    the wall ratio (here 1.02x) measures the host, the device-busy ratio (1.4x) the layout."""
    host_bound = dict(host_bound=True, nchw_busy_s=7e-3, nhwc_busy_s=5e-3, nchw_idle_share=0.66,
                      nhwc_idle_share=0.7, busy_speedup_rounds=[1.39, 1.41])
    wall_only = run(nhwc=1020.0, nhwc_time_ratio_iqr=[0.97, 0.99])
    assert judge("C7a", runs=[wall_only]).outcome == "refuted"
    verdict = judge("C7a", runs=[dict(wall_only, **host_bound)],
                    distrusted=[{"timing": "float16 b64: NCHW", "why": "noisy", "spread": 0.3}])
    assert verdict.outcome == "confirmed"
    assert "1.40x by device-busy time" in verdict.reason and "1.02x by the harness's clocks" in verdict.reason
    # a device-time ratio whose rounds straddle the threshold is noise, not a verdict
    straddling = dict(host_bound, busy_speedup_rounds=[1.0, 1.1], nchw_busy_s=5.2e-3)
    assert judge("C7a",
                 runs=[dict(wall_only, **straddling)]).depends_on == claims.NOISE
    # a device-bound run keeps the wall-time reading even with busy times measured
    bound = dict(host_bound, host_bound=False)
    assert judge("C7a", runs=[dict(wall_only, **bound)]).outcome == "refuted"


# The recorded H200 verdicts replay unchanged: C7's recorded evidence has every run of the sweep
# in `runs` (chapter 03 now judges the seed's fp16 batch-64 run and shows the rest), so its
# replay stays 'depends' on dtype and batch; the next GPU run records the seed's form. C7 is
# retired (split into C7a and C7b): a record from before the split keeps C7a's evidence under C7.
H200_REPLAY = {"C7a": "depends", "C22": "refuted"}


def recorded_payload(claim_id: str) -> dict | None:
    """The reference's recorded verdict for a claim of chapter 03; for C7a, in a record from
    before the split, the retired C7's (`Claim.evidence_from`)."""
    found = _recorded(RESULTS, "03_memory_layouts")
    return found.get(claim_id) or (found.get(claims.get(claim_id).evidence_from) if claim_id == "C7a" else None)


def record_entry(record: dict) -> dict:
    """A reproduce record's C7a entry: its own, else (a record from before the split) C7's."""
    return record["claims"].get("C7a") or record["claims"]["C7"]


@pytest.mark.parametrize("claim_id", sorted(H200_REPLAY))
def test_recorded_h200_evidence_replays(claim_id):
    payload = recorded_payload(claim_id)
    if payload is None:
        pytest.skip(f"no recorded H200 verdict for {claim_id}")
    verdict = claims.get(claim_id).judge(payload["evidence"])
    assert verdict.outcome == payload["outcome"] == H200_REPLAY[claim_id] or (
        "other_runs" in payload["evidence"] and verdict.outcome == payload["outcome"])


def test_recorded_cpu_evidence_replays():
    if not Path(DATA).exists():
        pytest.skip("no CPU evidence recorded")
    recorded = json.loads(Path(DATA).read_text())
    for claim_id in ("C7a", "C22"):
        payload = recorded.get(claim_id) or (recorded.get("C7") if claim_id == "C7a" else None)  # before the split
        if payload is None:
            continue
        verdict = claims.get(claim_id).judge(payload["evidence"])
        expected = (payload["outcome"], payload["depends_on"])
        if claim_id == "C7a":
            # batch 1 and 2 at 112x112 (review 2026-12-03h item 8): 'depends' on size, whatever
            # its noise said, the ratios shown
            expected = ("depends", c7.SIZE)
            assert verdict.reason.startswith("shown, not judged, at batch 1, 2 at 112x112 (the seed's ARM row: 1.39x): ")
        if claim_id == "C22" and payload["outcome"] == "refuted":
            # review 2026-12-04i item 4: a CPU cannot see oneDNN's reorders, so none seen is no 'no'
            expected = ("depends", c7.NOT_OBSERVABLE)
        assert (verdict.outcome, verdict.depends_on) == expected


def test_c22_counts_cudnns_conversions_both_ways_on_the_h200():
    """Review 2026-12-04m 03-04 item 1: the reason said cuDNN converts only 'the opposite of
    the seed's direction' while its evidence listed nhwcToNchwKernel (the seed's direction, for
    the output) too: it counts each direction from the kernels recorded."""
    payload = _recorded(RESULTS, "03_memory_layouts").get("C22")
    if payload is None:
        pytest.skip("no recorded H200 verdict for C22")
    verdict = claims.get("C22").judge(payload["evidence"], machine="replay")
    assert verdict.outcome == payload["outcome"] == "refuted"
    kernels = payload["evidence"]["nchw_conversion_kernels"]
    into = sum("nchwToNhwcKernel" in k for k in kernels)
    out = sum("nhwcToNchwKernel" in k for k in kernels)
    assert into and out  # the record the review read: one of each
    assert (f"the NCHW conv ran {into} nchwToNhwcKernel in and {out} nhwcToNchwKernel out: "
            "cuDNN computes in NHWC; the NHWC conv, neither") in verdict.reason
    assert "opposite" not in verdict.reason


def test_c22_reason_names_only_the_directions_its_evidence_holds():
    base = dict(CASES["C22"]["refuted"], channel_matmul_nchw_batched_copy_bytes=0)
    out_only = judge("C22", **dict(base, nchw_conversion_kernels=["void nhwcToNchwKernel<float>(x)"] * 2))
    assert "the NCHW conv ran 2 nhwcToNchwKernel out; the NHWC conv, neither" in out_only.reason
    assert "cuDNN computes in NHWC" not in out_only.reason  # nothing converted in shows it
    none = judge("C22", **dict(base, nchw_conversion_kernels=[]))
    assert "the NCHW conv ran" not in none.reason


def test_one_way_checks_say_so_on_their_cards():
    assert "'depends (not observable here)'" in claims.get("C22").refute_if
    assert "can only come out one way" in claims.get("C12").refute_if


def test_c22_names_nchws_batched_gemm_and_judges_the_direction_of_the_seeds_table():
    """Issue 38: the reason says NCHW's own batched form copied nothing, and shows the seed's
    two paths timed here beside the seed's ratio. Review 2026-12-04m 03-04 item 11: the table's
    direction (converting first faster, 0.70x) is judged on the ratio's rounds and the GEMM
    timings' flags; its milliseconds are not (the card says why); the outcome stays the
    conversion's."""
    paths = {"nhwc_direct": {"median_s": 20e-6, "ratio": 1.0, "pct_of_copy_ceiling": 70.0},
             "nhwc_to_nchw": {"median_s": 34e-6, "ratio": 1.7, "ratio_spread": [1.65, 1.72],
                              "pct_of_copy_ceiling": 80.0}}
    verdict = judge("C22", **CASES["C22"]["refuted"], channel_matmul_nchw_batched_copy_bytes=0,
                    gemm_paths=paths)
    assert verdict.outcome == "refuted"  # the conversion decides; the direction is judged apart
    assert "0 through NCHW's own batched form" in verdict.reason
    assert "NHWC direct 20 us at 70% of the copy ceiling" in verdict.reason
    assert "the seed's table's 0.70x (converting first faster): refuted at this shape" in verdict.reason
    assert "1.70x (IQR 1.65-1.72) the direct time" in verdict.reason
    faster = {**paths, "nhwc_to_nchw": {**paths["nhwc_to_nchw"], "ratio": 0.7, "ratio_spread": [0.68, 0.72]}}
    # review 2026-12-04n 03-04 item 4: a card's words, 'confirmed' / 'refuted', not 'holds'
    assert c7.table_direction(faster) == ("confirmed", "0.70x (IQR 0.68-0.72)")
    straddles = {**paths, "nhwc_to_nchw": {**paths["nhwc_to_nchw"], "ratio": 1.01, "ratio_spread": [0.97, 1.04]}}
    assert c7.table_direction(straddles) == ("not decided (noise: its rounds straddle 1x)", "1.01x (IQR 0.97-1.04)")
    assert c7.table_direction({"nhwc_direct": paths["nhwc_direct"]}) == ("", "")
    # review 2026-12-06b item 7: a spread recorded as the rounds' lowest-highest is named so
    rounds = {**paths, "nhwc_to_nchw": {**paths["nhwc_to_nchw"], "ratio_spread_kind": "rounds"}}
    assert c7.table_direction(rounds) == ("refuted", "1.70x (rounds 1.65-1.72)")
    card = claims.get("C22").refute_if
    assert "Its direction (converting first faster) is judged in the reason, not the outcome" in card
    assert "name no shape, GPU or dtype" in card and "12.7 ms" in card and "cannot be judged" not in card
    # review 2026-12-05u 00-04 item 10: the card's 'refuted if' was one sentence of ~150 words
    assert max(len(sentence.split()) for sentence in card.split(". ")) <= 30


def test_c22_direction_is_held_back_only_by_its_own_timings_flags():
    """Review 2026-12-04n 03-04 item 4: the CPU page's C22 read 'not decided at this shape: ...
    no ratio to state: 1.21x (IQR 1.19-1.45), but the harness flagged C22 GEMM paths: NCHW:
    W^T @ x.view(N, C, H*W), batched ... (noise) the direct time': flags on timings outside the
    ratio (NCHW's batched GEMM, the copy alone) vetoed it, the rule's whole reason went into the
    sentence, 'the direct time' followed it, and the shape was not named."""
    direct, seeds = "NHWC: [N*H*W, C] @ W, one GEMM", "NHWC -> NCHW copy, then batched (the seed's path)"
    paths = {"nhwc_direct": {"path": direct, "median_s": 20e-6, "ratio": 1.0},
             "nhwc_to_nchw": {"path": seeds, "median_s": 24e-6, "ratio": 1.21, "ratio_spread": [1.19, 1.45]}}

    def flag(path, spread):
        return {"timing": f"C22 GEMM paths: {path}", "why": f"noisy: spread {100 * spread:.0f}%", "spread": spread}
    others = [flag("NCHW: W^T @ x.view(N, C, H*W), batched", 0.73), flag("the seed's path: its copy alone", 0.27)]
    assert c7.ratio_flags(paths, others) == []
    assert c7.table_direction(paths, others) == ("refuted", "1.21x (IQR 1.19-1.45)")
    own = [flag(seeds, 0.49), flag(direct, 0.30)]
    word, head = c7.table_direction(paths, others + own)
    assert word == "not decided (noise: the seed's path spread 49% over its rounds)"
    assert head == "1.21x (IQR 1.19-1.45)"
    note = c7._seed_table_note(paths, others + own, [2, 64, 56, 56])
    assert "not decided (noise: the seed's path spread 49% over its rounds) at [N*H*W, C] @ W, N=2, C=64, HxW=56x56" in note
    assert note.endswith("ratio 1.21x (IQR 1.19-1.45)") and "the direct time" not in note
    assert "harness flagged" not in note and "holds" not in note
    plain = c7._seed_table_note(paths, others, [2, 64, 56, 56])
    assert plain.endswith("1.21x (IQR 1.19-1.45) the direct time")
    assert ": refuted at [N*H*W, C] @ W, N=2, C=64, HxW=56x56:" in plain


def test_c7_names_the_device_bound_runs_beside_the_judged_one():
    """Review 11: the seed's setting is host-bound on an H200; the reason names which regime
    bounded the judged number and which shown runs the device bounded."""
    host = dict(host_bound=True, nchw_busy_s=8e-3, nhwc_busy_s=5e-3, nchw_idle_share=0.12,
                nhwc_idle_share=0.46, busy_speedup_rounds=[1.6, 1.63])
    device = dict(host_bound=False, nchw_busy_s=17e-3, nhwc_busy_s=14e-3, nchw_idle_share=0.03,
                  nhwc_idle_share=0.03)
    verdict = judge("C7a", runs=[run(**host)],
                    other_runs=[run("float32", 128, 7221.0, 8943.0, **device), run("float32", 16)])
    assert "host-bound: the GPU idled 46%" in verdict.reason
    assert "device-bound" in verdict.reason and verdict.reason.endswith(": float32 b128")
    alone = judge("C7a", runs=[run(**device)])
    assert "by wall time (device-bound: the GPU idled 3% under the profiler" in alone.reason


# The H200 record of 10:46 (fp16 b64 and b128) with the clocks cell 39 printed for b128: NCHW
# read on the wall clock (12.96 ms a batch; its kernels 12.55 ms), NHWC on the device clock
# (8.13 ms) with the host's launch beside it (7.58 ms); b64's NHWC host launch taken as b128's
# (it launches the same kernels), 7.58 ms against its device time of 4.45 ms.
BUSY = dict(busy_speedup_rounds=[1.619, 1.62], host_bound=True, nchw_idle_share=0.46, nhwc_idle_share=0.63)
B64 = run(nchw=7862.0, nhwc=14374.0, nhwc_time_ratio_iqr=[0.50, 0.55], nchw_clock="wall",
          nhwc_clock="device", nchw_host_s=None, nhwc_host_s=7.58e-3, nchw_busy_s=6.64e-3,
          nhwc_busy_s=4.10e-3, **BUSY)
B128 = run(batch=128, nchw=9880.0, nhwc=15752.0, nhwc_time_ratio_iqr=[0.62, 0.64], nchw_clock="wall",
           nhwc_clock="device", nchw_host_s=None, nhwc_host_s=7.58e-3, nchw_busy_s=12.55e-3,
           nhwc_busy_s=7.77e-3, **dict(BUSY, nchw_idle_share=0.06, nhwc_idle_share=0.37))


def test_c7_regime_is_read_from_a_loop_against_its_kernels_with_a_margin():
    """Review 2026-12-03d item 1: host-bound only when a back-to-back loop takes more than 15%
    longer than its kernels, in either layout; the margin keeps NCHW's +3% to +12% device-bound."""
    loops = dict(nchw_loop_s=13.0e-3, nhwc_loop_s=8.0e-3)
    bound, how = c7.regime(dict(B128, **loops))
    assert bound is False
    assert "NCHW loop 13.00 ms against its kernels' 12.55 ms (+4%)" in how
    assert "NHWC loop 8.00 ms against its kernels' 7.77 ms (+3%)" in how and "past +15%" in how
    assert "no loop timing" not in how
    # the trace idled 37% under the profiler: named as disagreeing, the loop decides
    assert "the profiled trace disagrees (the GPU idled 37%" in how
    # 14% over its kernels stays device-bound; 16% is host-bound
    assert c7.regime(dict(B128, nchw_loop_s=12.55e-3 * 1.14, nhwc_loop_s=8.0e-3))[0] is False
    assert c7.regime(dict(B128, nchw_loop_s=12.55e-3 * 1.16, nhwc_loop_s=8.0e-3))[0] is True
    assert c7.regime(dict(B64, nchw_loop_s=6.9e-3, nhwc_loop_s=6.2e-3))[0] is True  # NHWC +51%
    assert c7.loop_ratio(dict(B64, nchw_loop_s=6.9e-3, nhwc_loop_s=6.2e-3)) == pytest.approx(6.9 / 6.2)
    # an older record without a loop: the harness's wall time, or the slower of host and device
    old_how = c7.regime(B128)[1]
    assert "NHWC pace 8.13 ms against its kernels' 7.77 ms (+5%)" in old_how and "no loop timing" in old_how
    assert c7.regime(B64)[0] is True
    assert c7.loop_ratio(B64) == pytest.approx((64 / 7862.0) / 7.58e-3, rel=1e-3)  # ~1.07x in a loop
    # without the unprofiled clocks (an older record still), the profiled idle share, said so
    older = {k: v for k, v in B128.items() if not k.endswith(("_clock", "_host_s"))}
    assert c7.regime(older)[0] is True and "no unprofiled host time" in c7.regime(older)[1]
    assert c7.regime(run(dtype="float32", batch=1))[0] is None  # a CPU run: no clock says


def test_c7_judges_img_s_where_the_device_bounds_it_and_shows_the_seeds_batch():
    """Issue 38: the seed's images per second, judged at fp16 b128 (device-bound, 1.59x by
    wall time), the seed's own b64 (host-bound) shown beside it as the lesson."""
    judged, shown = c7.gpu_judged([run("float32", 64), B64, B128])
    assert judged == [{**B128, c7.BY_WALL: True}] and shown[1] is B64
    verdict = judge("C7a", runs=judged, other_runs=shown)
    assert verdict.outcome == "confirmed"
    # B128 has no loop timed (an older record): each layout's stand-in pace, named so
    assert verdict.reason.startswith("NHWC/NCHW speed (the seed: 1.20x): float16 b128: 1.59x by a stand-in for "
                                     "a loop's pace "
                                     "(device-bound: ")
    assert "the seed's setting, float16 b64, shown, not judged: 1.62x by device-busy time (host-bound: " in verdict.reason
    assert "by wall time in a loop (the host's pace)" in verdict.reason
    # the batch is stated in advance: a device-bound batch 64 is still shown, a host-bound
    # batch 128 still judged, by its device-busy time
    bound64 = dict(B64, nchw_loop_s=7.0e-3, nhwc_loop_s=4.3e-3)
    assert c7.gpu_judged([bound64, B128])[0][0]["batch"] == 128
    hosted = dict(B128, nhwc_loop_s=9.5e-3, nchw_loop_s=13e-3)
    judged_hosted = c7.gpu_judged([B64, hosted])[0][0]
    assert c7.deciding(hosted)[2].startswith("device-busy time")  # shown, it would switch clocks
    assert c7.deciding(judged_hosted)[2] == c7.WALL_TIME  # judged, it does not
    verdict = judge("C7a", runs=[judged_hosted], other_runs=[B64])
    assert "by wall time in a loop (host-bound: " in verdict.reason  # its loop's regime said, not hidden
    assert c7.gpu_judged([run("float32", 1)]) == ([run("float32", 1)], [])  # no fp16 run: all judged


REPRODUCE = Path(__file__).resolve().parents[3] / "results" / "reproduce" / "nvidia-h200-03_memory_layouts.json"
# the 18:50 UTC runs under the old rule (judged two forms), kept for the replay below
OLD_RULE_RUNS = Path(__file__).resolve().parent / "data" / "reproduce_h200_2026-12-03T1850.json"


def test_the_recorded_reproduce_runs_show_why_the_judged_batch_is_stated_in_advance():
    """The three fresh H200 runs of 2026-12-03 18:50 UTC judged batch 64 where its loop looked
    device-bound, else the next batch that did: batch 64's NHWC loop read +16%, +50% and +21%
    over its kernels and batch 128's +5%, +5% and +16% (one point over the 15% margin), so the
    runs judged two forms though all three said 'confirmed'. Today's rule (batch 128 always,
    by wall time always) judges one quantity in one form over the same three runs."""
    recorded = json.loads(OLD_RULE_RUNS.read_text())
    runs = [cases.c7a_evidence(e)["runs"] + cases.c7a_evidence(e)["other_runs"] for e in recorded["evidence"]]
    judged = [c7.gpu_judged(rs)[0] for rs in runs]
    assert {j[0]["batch"] for j in judged} == {128}
    assert [c7.regime(j[0])[0] for j in judged] == [False, False, True]  # run 3's loop +16%
    assert {c7.deciding(j[0])[2] for j in judged} == {c7.WALL_TIME}  # one clock in every run
    ratios = [c7.deciding(j[0])[0] for j in judged]
    # each run's loop by wall time (review 2026-12-03h item 1; the harness's mixed clocks read
    # 1.58-1.59x): run 3's NHWC loop ran 16% over its kernels, so its loop reads 1.43x, still
    # over 1.05 in every round
    assert [round(r, 2) for r in ratios] == [1.58, 1.57, 1.43]
    assert all(min(c7.deciding(j[0])[1]) > c7.CHANNELS_LAST_FASTER_RATIO for j in judged)
    forms = {cases.c7_gpu_form(torch.device("cuda"), 224, j) for j in judged}
    assert len(forms) == 1 and "img/s by wall time" in forms.pop()
    verdicts = [judge("C7a", runs=j, other_runs=c7.gpu_judged(rs)[1])
                for j, rs in zip(judged, runs, strict=True)]
    assert {v.outcome for v in verdicts} == {"confirmed"}
    assert len({v["form"] for v in record_entry(recorded)["verdicts"]}) == 2  # the old rule's two forms


def test_the_runs_recorded_under_today_s_rule_judged_one_form_the_same_in_3_of_3():
    """The fresh H200 runs of 2026-12-03 22:05 UTC, under the rule stated in advance (fp16 batch
    128 by wall time): one form in every run, the same verdict, the deciding ratio within 1%."""
    if not REPRODUCE.exists():
        pytest.skip("no recorded reproduce runs for chapter 03")
    recorded = json.loads(REPRODUCE.read_text())
    verdicts = record_entry(recorded)["verdicts"]
    if len(verdicts) < 3 or not all("b128" in v["form"] or "128" in v["form"] for v in verdicts):
        pytest.skip("the recorded runs predate today's rule")
    assert record_entry(recorded)["agree"]
    assert len({v["form"] for v in verdicts}) == 1
    runs = [cases.c7a_evidence(e)["runs"] + cases.c7a_evidence(e)["other_runs"] for e in recorded["evidence"]]
    judged = [c7.gpu_judged(rs)[0] for rs in runs]
    if any(c7.graphed(r) for rs in runs for r in rs):  # recorded under the CUDA Graph rule
        assert all({r["batch"] for r in j} == {64, 128} for j in judged)
        assert {c7.deciding(r)[2] for j in judged for r in j} == {c7.GRAPH_TIME}
        ratios = [c7.deciding(r)[0] for j in judged for r in j]
        assert max(ratios) / min(ratios) < 1.10  # the device bounds a replay: runs agree
        return
    # recorded under the eager rule (no graph timed): the fallback judges b128 by an eager loop.
    # Its ratio moved 1.43-1.58x over three runs (review 2026-12-04i item 1: host-bound, +16%),
    # why the rule now judges CUDA Graph replays; the outcome still agreed.
    assert {j[0]["batch"] for j in judged} == {128}
    assert {c7.deciding(j[0])[2] for j in judged} == {c7.WALL_TIME}
    assert all(c7.deciding(j[0])[0] > c7.CHANNELS_LAST_FASTER_RATIO for j in judged)


def test_reproduce_counts_a_changed_form_as_not_the_same():
    """Review 2026-12-03d item 1: the three recorded runs agreed on 'confirmed' in three forms;
    benchmarks/reproduce.py now compares the form judged too."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("reproduce_tool", REPRODUCE.parents[2] / "benchmarks" / "reproduce.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)

    def verdict(form):
        return {"claim_id": "C7a", "outcome": "confirmed", "depends_on": "", "form": form, "deciding_ratios": {}}
    mixed = tool.summarise([{"verdicts": [verdict("b64 wall")]}, {"verdicts": [verdict("b128 wall")]}])
    assert not mixed["C7a"]["agree"]
    assert any("DIFFERENT in 1 of 2 (2 forms judged)" in line for line in tool.report("03", mixed, 2))
    same = tool.summarise([{"verdicts": [verdict("b128 wall")]}, {"verdicts": [verdict("b128 wall")]}])
    assert same["C7a"]["agree"]


def test_recorded_h200_c7_falls_back_to_the_profiled_idle_share_and_says_so():
    """The 10:46 record holds no unprofiled host time: its replay keeps its outcome and names
    the fallback; the next H200 record carries the clocks."""
    payload = recorded_payload("C7a")
    if payload is None:
        pytest.skip("no recorded H200 verdict for C7a (or C7)")
    if "nhwc_host_s" in payload["evidence"]["runs"][0]:
        pytest.skip("the record carries the unprofiled clocks")
    verdict = claims.get("C7a").judge(payload["evidence"], machine="replay")
    assert verdict.outcome == payload["outcome"]
    assert "this record has no unprofiled host time" in verdict.reason


def test_c7_where_noise_decides_the_visible_reason_leads_with_it():
    """Review 2026-12-03f item 4: this CPU's b1 read 1.21x (every visible ratio cleared 1.05)
    and its NCHW timing, +-16%, could carry it across; the card's visible reason must say so
    first, with the rerun's ratios, and name the run left out within noise."""
    b1 = run("float32", 1, 13.0, 15.7, nhwc_time_ratio_iqr=[0.80, 0.93], nchw_faults_per_call=0.0)
    b2 = run("float32", 2, 21.0, 24.0, nhwc_time_ratio_iqr=[0.88, 0.99], nchw_faults_per_call=0.0)
    kept = [run("float32", 1, 12.0, 12.2, nhwc_time_ratio_iqr=[1.08, 1.31], nchw_faults_per_call=0.0),
            run("float32", 2, 14.0, 14.9, nhwc_time_ratio_iqr=[0.86, 0.99], nchw_faults_per_call=0.0)]
    flag = {"timing": "float32 b1: NCHW", "why": "noisy: IQR 16% of the median", "spread": 0.16}
    noisy = judge("C7a", runs=[b1, b2], kept=dict(runs=kept), flags=[flag])
    assert noisy.outcome == "depends" and noisy.depends_on == claims.NOISE_FLAGGED
    visible = claims.tables.deciding(noisy.reason)
    assert visible.startswith("noise decided: float32 b1's NCHW timing (±16%) could carry its 1.21x "
                              "across 1.05; the rerun read b1 1.02x, b2 1.06x."), visible
    assert "(float32 b2 within noise, left out)" in noisy.reason
    # a flag too small to cross the threshold decides nothing: the runs' disagreement leads
    quiet = judge("C7a", runs=[b1, b2], kept=dict(runs=kept),
                  flags=[dict(flag, spread=0.01)])
    assert quiet.reason.startswith("noise decided: two runs under the same allocator disagree "
                                   "(confirmed, then refuted); the rerun read b1 1.02x, b2 1.06x. "
                                   "NHWC/NCHW speed (the seed: 1.20x): float32 b1: 1.21x"), quiet.reason
    # rounds that straddle 1.05 in every run: those spreads lead
    straddle = judge("C7a", runs=[b2])
    assert straddle.reason.startswith("noise decided: the rounds straddle 1.05 (float32 b2 1.01-1.14x). ")
    # where noise decided nothing, the ratios lead as before
    clear = judge("C7a", runs=[b1])
    assert clear.outcome == "confirmed" and clear.reason.startswith("NHWC/NCHW speed (the seed: 1.20x): float32 b1: 1.21x")


def _cpu_run(batch, image, nchw, nhwc):
    return run("float32", batch, nchw, nhwc, image=image, nchw_clock="cpu", nhwc_clock="cpu",
               nhwc_time_ratio_iqr=[nchw / nhwc * 0.98, nchw / nhwc * 1.02], nchw_faults_per_call=0.0)


def test_c7_runs_smaller_than_the_seeds_depend_on_size():
    """Review 2026-12-03h item 8: this CPU ran batch 1 and 2 at 112x112 and read 'refuted',
    with one batch left out as noise (b1 at 19:48, b2 at 22:36). Runs that small do not judge
    a throughput claim made at batch 64, 224x224: 'depends (on size)', the ratios shown, the
    trust rule's flags deciding nothing; a run at the seed's size is judged as before."""
    small = [_cpu_run(1, 112, 27.8, 27.0), _cpu_run(2, 112, 36.0, 37.0)]
    flag = {"timing": "float32 b2: NCHW", "why": "noisy", "spread": 0.3}
    verdict = judge("C7a", runs=small, kept=dict(runs=small), flags=[flag])
    assert (verdict.outcome, verdict.depends_on) == ("depends", c7.SIZE)
    assert verdict.label == "depends (on size: not run at the seed's size here, batch 64 at 224x224)"
    assert verdict.reason.startswith("shown, not judged, at batch 1, 2 at 112x112 (the seed's ARM row: 1.39x): "
                                     "float32 b1: 0.97x, "
                                     "float32 b2: 1.03x")
    assert "left out" not in verdict.reason
    # one run at 224 but batch 16 is still smaller; batch 64 at 224 is the seed's and is judged
    assert judge("C7a", runs=[_cpu_run(16, 224, 10.0, 9.0)]).depends_on == c7.SIZE
    assert judge("C7a", runs=[_cpu_run(64, 224, 10.0, 9.0)]).outcome == "refuted"
    assert c7.smaller_than_seed([run()]) == ""  # no image side recorded: not read as smaller
    # a GPU's judged batch 128 at 224 is not smaller
    assert c7.smaller_than_seed([dict(B128, image=224)]) == ""


# ---------------------------------------------------------------- review 2026-12-04i


def _graphed(r, nchw_s, nhwc_s, spread=(1.55, 1.62)):
    """A run with its CUDA Graph replay times (`cases.graph_evidence`'s keys)."""
    return dict(r, nchw_graph_s=nchw_s, nhwc_graph_s=nhwc_s, graph_speedup_spread=list(spread),
                graph_clock="wall")


LOOPS64 = dict(nchw_loop_s=10.64e-3, nhwc_loop_s=9.32e-3, nchw_loop_rounds=[10.6e-3], nhwc_loop_rounds=[9.3e-3])


def test_the_reason_gives_the_eager_loop_s_ratio_with_its_rounds_spread():
    """Review 2026-12-06 item 6: the H100's reason quoted fp16 b64's 'eager loop 1.10x, +53% over
    kernels' while its rounds spread 1.00-1.36 (NCHW 10.02, 8.08, 7.73 ms against NHWC 7.36,
    6.68, 7.71 ms): the spread is printed beside the ratio, computed from the rounds; a record
    without rounds prints the ratio alone."""
    rounds = dict(nchw_loop_s=8.08e-3, nhwc_loop_s=7.36e-3, nchw_loop_rounds=[10.02e-3, 8.08e-3, 7.73e-3],
                  nhwc_loop_rounds=[7.36e-3, 6.68e-3, 7.71e-3])
    b64 = _graphed(dict(B64, **rounds), 7.30e-3, 4.90e-3)
    low = min(a / b for a, b in zip(rounds["nchw_loop_rounds"], rounds["nhwc_loop_rounds"], strict=True))
    high = max(a / b for a, b in zip(rounds["nchw_loop_rounds"], rounds["nhwc_loop_rounds"], strict=True))
    beside = c7._graph_beside(b64)
    assert f"eager loop {8.08 / 7.36:.2f}x, rounds {low:.2f}-{high:.2f}, +" in beside
    assert "rounds 1.00-1.36" in beside  # the H100's own figures, by hand
    bare = {k: v for k, v in b64.items() if not k.endswith("_loop_rounds")}
    assert f"eager loop {8.08 / 7.36:.2f}x, +" in c7._graph_beside(bare) and "rounds" not in c7._graph_beside(bare)


def test_c7_judges_fp16_b64_and_b128_by_cuda_graph_replay_and_shows_the_eager_loop():
    """Item 1: the judged regime is bounded by the device by construction: each layout's
    CUDA Graph replayed in a loop, by wall time, at the seed's b64 and at b128; the eager loop
    (host-bound, 1.14x) is shown beside it as the lesson, and the eager runs' flags do not
    touch the graph decisions."""
    b64 = _graphed(dict(B64, **LOOPS64), 6.8e-3, 4.25e-3)
    b128 = _graphed(B128, 12.8e-3, 8.0e-3)
    other = run("float32", 64)
    judged, shown = c7.gpu_judged([other, b64, b128])
    assert [r["batch"] for r in judged] == [64, 128] and all(r[c7.BY_GRAPH] for r in judged)
    assert shown == [other]
    assert c7.deciding(judged[0]) == (pytest.approx(6.8 / 4.25), [1.55, 1.62], c7.GRAPH_TIME)
    verdict = judge("C7a", runs=judged, other_runs=shown,
                    flags=[{"timing": "float16 b64: NCHW", "why": "noisy", "spread": 0.9}])
    assert verdict.outcome == "confirmed", verdict.reason
    # the eager loop's rounds beside its ratio (review 2026-12-06 item 6; b128 here times no rounds)
    assert verdict.reason.startswith("NHWC/NCHW speed (the seed: 1.20x): float16 b64: 1.60x by CUDA Graph "
                                     "replay (replay +2% / +4% over its kernels; eager loop 1.14x, rounds "
                                     "1.14-1.14, +127% over kernels)")
    assert "eager loop 1.59x)" in verdict.reason
    assert "the seed's 1.20x reached here" in verdict.reason and "shown, not judged: " not in verdict.reason
    # a flag on a replay timing that could carry its ratio across 1.05 holds it back
    held = judge("C7a", runs=judged, other_runs=shown,
                 flags=[{"timing": "graphed float16 b64: NHWC (channels_last)", "why": "noisy", "spread": 0.9}])
    assert held.outcome == "depends", held.reason
    form = cases.c7_gpu_form(torch.device("cuda"), 224, judged)
    assert form.endswith("fp16, batch 64 and 128, 224x224, img/s by a CUDA Graph replay loop's wall time")


def test_c7_falls_back_to_the_eager_rule_where_capture_failed_and_says_so():
    """Item 1: if capture fails on some GPU, the eager rule (b128 by an eager loop) judges, said so."""
    why = "CUDA error: operation not permitted when stream is capturing"
    b64, b128 = dict(B64, graph_error=why), dict(B128, graph_error=why)
    judged, shown = c7.gpu_judged([b64, b128])
    assert judged == [{**b128, c7.BY_WALL: True}] and shown == [b64]
    verdict = judge("C7a", runs=judged, other_runs=shown)
    assert f"(CUDA Graph capture failed, so the eager rule: {why})" in verdict.reason
    assert cases.c7_gpu_form(torch.device("cuda"), 224, judged).endswith("graph capture failed")


def test_c7_cpu_form_prints_the_seeds_arm_row():
    """Review 2026-12-05t 03-04 item 5: C7's CPU form is set against the seed's ARM row
    (142 -> 198 img/s, 1.39x), yet its reason printed the A100's 1.20x; a CPU's reason and its
    'reached' line read the ARM row's ratio, a GPU's the A100's."""
    assert c7.SEED_ARM_RATIO == pytest.approx(198 / 142)
    small = [_cpu_run(1, 112, 27.8, 27.0), _cpu_run(2, 112, 36.0, 37.0)]
    for ev in (dict(runs=small), dict(runs=small, device="cpu")):
        reason = judge("C7a", **ev).reason
        assert reason.startswith("shown, not judged, at batch 1, 2 at 112x112 (the seed's ARM row: 1.39x): ")
        assert "1.20x" not in reason
    seed_size = [_cpu_run(64, 224, 100.0, 130.0)]
    cpu = judge("C7a", runs=seed_size, device="cpu")
    assert cpu.outcome == "confirmed"
    assert cpu.reason.startswith("NHWC/NCHW speed (the seed's ARM row: 1.39x): float32 b64: 1.30x")
    assert "the seed's 39% not reached here" in cpu.reason
    gpu = judge("C7a", runs=[run(nchw=1000.0, nhwc=1160.0)], device="cuda:0")
    assert gpu.reason.startswith("NHWC/NCHW speed (the seed: 1.20x): ")


def test_c7_names_the_form_when_the_seeds_20_percent_is_not_reached():
    """Item 3: the seed's 1820 -> 2190 img/s is 1.20x, computed from its two numbers, printed
    beside the deciding ratios; a confirmed ratio under it says the direction was judged."""
    assert c7.SEED_RATIO == pytest.approx(2190 / 1820)
    short = judge("C7a", runs=[run(nchw=1000.0, nhwc=1160.0)])
    assert short.outcome == "confirmed"
    assert short.reason.startswith("NHWC/NCHW speed (the seed: 1.20x): float16 b64: 1.16x")
    assert "; direction judged (faster by over 5%); the seed's 20% not reached here" in short.reason
    both = judge("C7a", runs=[run(nchw=1000.0, nhwc=1160.0), run(batch=128, nhwc=1500.0)])
    assert "the seed's 20% not reached here at float16 b64" in both.reason
    reached = judge("C7a", runs=[run(nchw=1000.0, nhwc=1300.0)])
    assert "the seed's 1.20x reached here" in reached.reason and "not reached" not in reached.reason
    refuted = judge("C7a", runs=[run(nchw=1000.0, nhwc=900.0)])
    assert refuted.outcome == "refuted" and "reached" not in refuted.reason


def test_c22_on_a_cpu_depends_on_what_it_cannot_observe():
    """Item 4: oneDNN reorders inside its kernels, where neither instrument sees: a CPU that
    sees no conversion cannot refute; a GPU that profiles none does."""
    seen_none = dict(CASES["C22"]["refuted"])
    cpu = judge("C22", **seen_none, device="cpu")
    assert (cpu.outcome, cpu.depends_on) == ("depends", c7.NOT_OBSERVABLE)
    assert cpu.label == "depends (on what is not observable here: oneDNN reorders inside its kernels)"
    assert judge("C22", **seen_none, device="cuda:0").outcome == "refuted"
    assert judge("C22", **dict(seen_none, conversion_kernels=["nhwcToNchwKernel"]), device="cpu").outcome == "confirmed"


def test_c22_on_a_gpu_whose_profile_lost_its_head_marks_is_not_refuted():
    """Review 2026-12-05o 03-04 item 2: a profile that kept none of its head marks may have lost
    the convolutions' first kernels (pytorch/pytorch#192021), so seeing no conversion kernel there
    refutes nothing: it depends on the profiler; bytes copied still confirm."""
    seen_none = dict(CASES["C22"]["refuted"])
    lost = judge("C22", **seen_none, device="cuda:0", kernels_complete=False)
    assert (lost.outcome, lost.depends_on) == ("depends", c7.DROPPED)
    assert judge("C22", **seen_none, device="cuda:0", kernels_complete=True).outcome == "refuted"
    copied = dict(seen_none, conv_conversion_bytes=4096)
    assert judge("C22", **copied, device="cuda:0", kernels_complete=False).outcome == "confirmed"


# --- C7 split (review 2026-12-06aa 03-04 item 2): C7a the speed, C7b the input's layout ----------

C7B_MATCH = dict(input_stride1=12544, raised="", max_abs_diff=0.0, output_scale=1.16, misread_max_abs_diff=2.24,
                 dtype="float32", conv1_formats=["contiguous", "channels_last"], output_format="channels_last",
                 extra_ops=["aten::clone", "aten::contiguous", "aten::copy_", "aten::empty", "aten::empty_like"],
                 extra_copies=1, input_bytes=301056)


def test_c7_is_retired_and_split_into_the_speed_and_the_input():
    assert "C7" not in claims.REGISTRY and c7.RETIRED == {"C7": ("C7a", "C7b")}
    assert [c.id for c in claims.for_chapter("03_memory_layouts")] == ["C7a", "C7b", "C22"]
    speed, layout = claims.get("C7a"), claims.get("C7b")
    assert speed.timing_based and "1820 to 2190 img/s" in speed.statement and "stride" not in speed.statement
    # C7b decides by errors and outputs, never a timing: deterministic, so reproduce never runs it
    assert layout.deterministic and not layout.timing_based and layout.decisions is None
    assert "stride[1] == 1" in layout.statement and "converted" in layout.statement
    assert speed.evidence_from == "C7" and not layout.evidence_from  # C7's records hold no C7b measurement
    from labkit.chapters.ch03_memory_layouts import reproduce
    assert reproduce.CLAIM_IDS == ("C7a",)


def test_the_c7a_card_no_longer_judges_the_stride_tautology():
    """C7's card read 'stride[1] == 1 can only come out one way (PyTorch defines channels_last
    so)' and judged `channels_last_stride1` off `img_cl`: a tautology, not the seed's claim (that
    the input must be converted). C7a reads no stride and its card says none; a stride that
    is not 1 no longer decides anything."""
    speed = claims.get("C7a")
    card = speed._repr_html_()  # the statement, the rule, and what its fold holds
    assert speed.statement in card or "channels_last raises" in card
    assert "stride[1]" not in card and "can only come out one way" not in card
    assert not any("stride" in text for text in (speed.statement, speed.confirm_if, speed.refute_if))
    assert "channels_last_stride1" not in speed.evidence_keys
    base = judge("C7a", runs=[run()])
    assert base.outcome == "confirmed"
    for stride1 in (1, 4):  # a recorded C7's stride key is read by nothing
        again = judge("C7a", runs=[run()], channels_last_stride1=stride1)
        assert (again.outcome, again.reason) == (base.outcome, base.reason)
    assert "stride" not in base.reason


def test_c7b_is_confirmed_where_the_nchw_input_raises_or_gives_another_output():
    raised = judge("C7b", **dict(C7B_MATCH, raised="RuntimeError: expected stride[1] == 1", max_abs_diff=None))
    assert raised.outcome == "confirmed"
    assert raised.reason == ("NCHW input (stride[1] 12544) raised RuntimeError: expected stride[1] == 1: "
                             "the input must be converted")
    wrong = judge("C7b", **dict(C7B_MATCH, max_abs_diff=0.5))  # over 1% of the output's spread, 1.16
    assert wrong.outcome == "confirmed" and "max |diff| 0.5 > 0.0116" in wrong.reason
    assert wrong.reason.endswith("the input must be converted")


def test_c7b_is_refuted_where_the_nchw_input_runs_and_matches_and_says_the_cost():
    verdict = judge("C7b", **C7B_MATCH)
    assert verdict.outcome == "refuted" and verdict.depends_on == ""
    assert verdict.reason == ("NCHW input (stride[1] 12544) ran; outputs equal (max |diff| 0 <= 0.0116, "
                              "float32; misread input: 2.24); conv1 converted it to channels_last: 1 extra "
                              "copy of the 294 KiB input")
    # within the tolerance is a match too (a GPU's fp16 may round differently); none profiled: the
    # cost said as one conversion, no copy counted
    close = judge("C7b", **dict(C7B_MATCH, max_abs_diff=0.01, extra_copies=None))
    assert close.outcome == "refuted" and close.reason.endswith(
        "conv1 converted it to channels_last: one conversion of the 294 KiB input")
    assert c7.conversion_said({}) == "one conversion of the input" and c7.conversion_said(
        {"conv1_formats": ["contiguous", "contiguous"]}) == "conv1 kept it contiguous"
    assert c7.conversion_said(dict(C7B_MATCH, extra_copies=0)).endswith("inside the convolution (no extra copy)")
    # a comparison that cannot tell a misread input from the right one proves nothing
    blind = judge("C7b", **dict(C7B_MATCH, misread_max_abs_diff=0.001))
    assert blind.outcome == "depends" and blind.depends_on.startswith("the comparison")


@pytest.mark.parametrize("bad, message", [
    (dict(input_stride1=1), "channels_last already"),
    (dict(input_stride1=True), "an int other than 1"),
    (dict(raised=None), "raised must be"),
    (dict(max_abs_diff=None), "max_abs_diff must be a number"),
    (dict(max_abs_diff=float("nan")), "max_abs_diff must be finite"),
    (dict(max_abs_diff=-1.0), "max_abs_diff must be finite"),
    (dict(output_scale=0.0), "output_scale must be finite and above 0"),
    (dict(output_scale="big"), "output_scale must be a number"),
    (dict(misread_max_abs_diff=float("inf")), "misread_max_abs_diff must be finite"),
])
def test_c7b_refuses_evidence_that_compares_nothing_with_a_clear_error(bad, message):
    with pytest.raises(claims.ClaimError, match=message):
        judge("C7b", **dict(C7B_MATCH, **bad))
    with pytest.raises(claims.ClaimError, match="lacks"):
        claims.get("C7b").judge({k: v for k, v in C7B_MATCH.items() if k != "output_scale"})


class _RefusesNchw(torch.nn.Module):
    """A model that does what the seed says one needs: it refuses an input with stride[1] != 1."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.stride()[1] != 1:
            raise RuntimeError(f"expected a channels_last input (stride[1] == 1), got stride {x.stride()}")
        return self.net(x)


class _IgnoresStrides(_RefusesNchw):
    """A model whose first layer reads the input's storage as channels_last, whatever its strides:
    what a kernel that assumed stride[1] == 1 would compute."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cl = torch.empty_like(x, memory_format=torch.channels_last).stride()
        return self.net(x.as_strided(x.shape, cl))


def _small_net() -> torch.nn.Module:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3),
                              torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 4)).eval()
    return cases.channels_last(net)


def test_c7b_evidence_from_a_real_model_refutes_and_the_check_bites_on_known_wrong_models():
    """The chapter's measurement on a small channels_last CNN (CPU, float32): PyTorch converts the
    NCHW input at the first convolution, the outputs agree, the misread input does not. A model
    that refuses NCHW, and one that misreads it, are confirmed: the check bites both ways."""
    net, x = cases.input_case(_small_net(), torch.device("cpu"), False, batch=3, image=10)
    assert x.dtype == torch.float32 and tuple(x.shape) == (3, 3, 10, 10) and x.stride()[1] == 100
    ev = cases.input_evidence(net, x, on_gpu=False)
    assert ev["raised"] == "" and ev["max_abs_diff"] == 0.0 and ev["input_stride1"] == 100
    assert ev["conv1_formats"] == ["contiguous", "channels_last"] and ev["output_format"] == "channels_last"
    assert ev["extra_copies"] >= 1 and any("copy" in op for op in ev["extra_ops"])
    assert ev["input_bytes"] == x.numel() * 4 and ev["misread_max_abs_diff"] > 0.01 * ev["output_scale"]
    verdict = claims.get("C7b").judge(ev, form="analogue: test")
    assert verdict.outcome == "refuted" and "conv1 converted it to channels_last: 1 extra cop" in verdict.reason
    refused = cases.input_evidence(_RefusesNchw(net), x, on_gpu=False)
    assert refused["raised"].startswith("RuntimeError: expected a channels_last input")
    assert claims.get("C7b").judge(refused, form="analogue: test").outcome == "confirmed"
    misread = cases.input_evidence(_IgnoresStrides(net), x, on_gpu=False)
    assert misread["max_abs_diff"] > 0.01 * misread["output_scale"]
    assert claims.get("C7b").judge(misread, form="analogue: test").outcome == "confirmed"
    with pytest.raises(ValueError, match="NCHW image batch"):
        cases.input_evidence(net, x.to(memory_format=torch.channels_last), on_gpu=False)


def test_the_takeaway_gives_c7bs_finding_from_its_verdict():
    refuted = judge("C7b", **C7B_MATCH)
    assert cases.input_takeaway(refuted) == "An NCHW input costs one conversion, at conv1 (C7b: refuted)."
    raised = judge("C7b", **dict(C7B_MATCH, raised="RuntimeError: no", max_abs_diff=None))
    assert cases.input_takeaway(raised) == "An NCHW input must be converted first: it raised (C7b: confirmed)."
    assert cases.input_takeaway(None) == ""


def test_the_recorded_c7_evidence_is_read_as_c7a_by_the_ledger_and_its_reproduce_record():
    """The reference recorded C7 before the split: the ledger judges C7a from that verdict's
    evidence, saying so, and reads C7a's reproduce mark from the record's C7 runs, as C5c reads
    C5b's (issue 38); C7b, which no C7 record measured, is not recorded yet."""
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    entries = data.get("chapters", {}).get("03_memory_layouts", {})
    if "verdict:C7" not in entries or "verdict:C7a" in entries:
        pytest.skip("the reference holds no C7 from before the split (or records C7a itself)")
    found, _ = claims_tables.current_verdicts(data, recorded=True, only=["C7a", "C7b"])
    assert "C7b" not in found
    old = entries["verdict:C7"]["payload"]
    assert found["C7a"].outcome == old["outcome"] and found["C7a"].form == old["form"] and found["C7a"].recorded
    assert found["C7a"].reason.startswith("(judged by today's rule from C7's evidence recorded")
    from labkit.core import results as results_io
    record = reproduced.load_record(reproduced.record_path(results_io.DEFAULT_REFERENCE, "03_memory_layouts"))
    if record is None or "C7a" in record["claims"] or not record.get("evidence"):
        return
    mark = reproduced.compare(found["C7a"], record, entries["verdict:C7"].get("recorded_at", ""), "the record")
    assert "C7a judged from C7's runs' evidence" in mark.detail
    assert mark.reproduced == all(v["outcome"] == old["outcome"] for v in record["claims"]["C7"]["verdicts"])
