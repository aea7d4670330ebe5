"""The trust rule inside the claim type: every timing-based claim declares its decisions,
`Claim.judge` applies the whole rule (flags, launch-bound flags, a shared GPU) to them, and
no check can skip it; recorded verdicts under the old evidence keys still load and judge."""

import re

import pytest

from labkit import claims
from labkit.claims import trust
from labkit.claims.trust import Decision, Decisions
from labkit.core import results
from tests.claim_helpers import judge

# Evidence keys that hold a timing or a figure made from timings: a claim that reads one is
# timing-based (the rule applies to it), whatever its author remembered to say.
TIMING_KEY = re.compile(r"(_s|_us|_ms|_gbps|_img_s|ratio|speedup|ns_per_element)$|speedup_over")


def throwaway(check, decisions=None, **options):
    return claims.Claim("X1", "00_setup_check", claims.SEED_STRIDES, "s", "a throw-away claim",
                        evidence_keys=("ratio",), thresholds={"limit": 1.2}, check=check,
                        timing_based=True, decisions=decisions, **options)


def always_confirmed(ev, th):
    return claims.CONFIRMED, f"ratio {ev['ratio']}x", ""


def one_ratio(ev, th):
    return [Decision("", ev["ratio"], ev.get("ratio_iqr"), th["limit"])]


def test_every_registered_timing_based_claim_declares_its_decisions():
    timing_based = [c for c in claims.REGISTRY.values() if c.timing_based and c.tested]
    assert {"C2", "C5b", "C5c", "C6", "C7a", "C9", "C10", "C15d", "C18", "C19", "C23", "C24", "C25"} <= {
        c.id for c in timing_based}
    assert all(callable(c.decisions) for c in timing_based), [
        c.id for c in timing_based if not callable(c.decisions)]


def test_every_claim_that_reads_a_timing_is_timing_based():
    reads = {c.id: [k for k in c.evidence_keys if TIMING_KEY.search(k)]
             for c in claims.REGISTRY.values() if c.tested}
    missed = sorted(i for i, keys in reads.items() if keys and not claims.get(i).timing_based)
    assert not missed, f"claims that read timings but skip the trust rule: {missed}"


def test_a_timing_based_claim_without_decisions_is_refused():
    with pytest.raises(claims.ClaimError, match="declares its decisions"):
        throwaway(always_confirmed)
    with pytest.raises(claims.ClaimError, match="only a timing-based claim"):
        claims.Claim("X2", "00_setup_check", claims.SEED_STRIDES, "s", "s",
                     check=always_confirmed, decisions=one_ratio)
    assert throwaway(always_confirmed, one_ratio).decisions is one_ratio


def test_a_check_cannot_skip_the_rule():
    """The check says confirmed whatever the evidence; a flag that could carry 1.3x across
    1.2 (8% away) still gives 'depends' on noise, in today's key and in the old ones."""
    claim = throwaway(always_confirmed, one_ratio)
    big = {"timing": "t", "why": "noisy: IQR 20% of the median", "spread": 0.2}
    for key in ("flags", "distrusted", "noisy"):
        held = claim.judge({"ratio": 1.3, key: [big]}, machine="test")
        assert (held.outcome, held.depends_on) == ("depends", claims.NOISE_FLAGGED), key
        assert "20%" in held.reason and "could carry the ratio 1.3x against 1.2 across it" in held.reason
    small = dict(big, spread=0.05)
    kept = claim.judge({"ratio": 1.3, "flags": [small]}, machine="test")
    assert kept.outcome == "confirmed" and "too small to carry" in kept.reason
    assert claim.judge({"ratio": 1.3}, machine="test").outcome == "confirmed"


def test_a_launch_bound_flag_counts_like_any_other():
    claim = throwaway(always_confirmed, one_ratio)
    launch = {"timing": "Triton add", "why": "launch-bound: host launch 21 us against a 4 us kernel",
              "spread": 0.5}
    held = claim.judge({"ratio": 1.3, "flags": [launch]}, machine="test")
    assert held.depends_on == claims.NOISE_FLAGGED and "launch-bound" in held.reason
    far = claim.judge({"ratio": 3.0, "flags": [launch]}, machine="test")  # 150% away
    assert far.outcome == "confirmed"


def test_an_old_timing_noisy_boolean_is_a_flag_of_unknown_size():
    flags = trust.flags_in({"triton_noisy": True, "torch_noisy": False})
    assert [(f.timing, f.uncertainty) for f in flags] == [("triton", trust.UNKNOWN_SPREAD)]
    assert trust.flags_in({"flags": [], "triton_noisy": True}) == []  # today's key wins
    assert trust.flags_in({"noisy": False}) == []  # a Timing's own bool is not a list of flags


def test_decisions_must_be_decisions():
    claim = throwaway(always_confirmed, lambda ev, th: [1.3])
    with pytest.raises(TypeError, match="not Decision"):
        claim.judge({"ratio": 1.3}, machine="test")
    assert trust.declared(Decisions((Decision("a", 1, None, 2),), ("b",))).not_judged == ("b",)


def test_the_shared_gpu_veto_lives_in_claims():
    decided = ("confirmed", "NHWC 1.4x faster", "")
    assert trust.shared_verdict(decided, {"ratio": 1.4}) == decided
    outcome, reason, on = trust.shared_verdict(decided, {"ratio": 1.4, "shared_gpu": True})
    assert (outcome, on) == ("depends", trust.SHARED_GPU) and "NHWC 1.4x faster" in reason
    already = ("depends", "noise", "noise")
    assert trust.shared_verdict(already, {"shared_gpu": True}) == already
    from labkit.measure import sharing
    assert not hasattr(sharing, "shared_verdict")  # verdict logic is not the measuring layer's
    shared = throwaway(always_confirmed, one_ratio).judge({"ratio": 9.0, "shared_gpu": True})
    assert shared.depends_on == trust.SHARED_GPU


C19_ALIGNED = dict(triton_gbps=3000.0, torch_gbps=1900.0, copy_ceiling_gbps=4000.0,
                   speedup_iqr=[1.55, 1.60], elements=2**24)


def test_claims_that_never_read_flags_now_follow_the_rule():
    """C15 (now C15d), C18, C19 and C24 printed the rule and ignored the flags; now the rule holds them."""
    launch = {"timing": "Triton add", "why": "launch-bound", "spread": 0.1}  # 1.55/1.5: 3% away
    assert judge("C19", **C19_ALIGNED).outcome == "confirmed"
    assert judge("C19", **C19_ALIGNED, flags=[launch]).depends_on == claims.NOISE_FLAGGED
    ladder = dict(speedup_over_strict=5.0, speedup_over_defaults=5.1, strict_spread=[4.95, 5.05],
                  defaults_spread=[5.05, 5.2], top_rung="CUDA Graphs", steps_kept=7)
    assert judge("C24", **ladder).outcome == "confirmed"
    strict_flag = {"timing": "over strict float32: strict float32 eager", "spread": 0.1}
    assert judge("C24", **ladder, flags=[strict_flag]).depends_on == claims.NOISE_FLAGGED
    c18 = dict(eager_per_launch_us=6.0, eager_interval_us=[5.9, 6.1], graph_per_node_us=1.3,
               graph_launch_gap_us=0.45, graph_kernel_us=1.0, fit_r_squared=0.999)  # eager gap 5.0: 11x
    assert judge("C18", **c18).outcome == "confirmed"
    gap_flag = {"timing": "graph replay's launch gap: timeline", "spread": 0.2}  # 0.5/0.45: 11%
    assert judge("C18", **c18, flags=[gap_flag]).depends_on == claims.NOISE_FLAGGED
    c15d = dict(tensorrt_ran=True, tensorrt_transposed_ratio=3.0, tensorrt_transposed_ratio_iqr=[2.9, 3.1])
    assert judge("C15d", **c15d).outcome == "confirmed"
    trt = {"timing": "TensorRT: transposed input", "spread": 0.15}  # 2.9/2.6: 12% away
    assert judge("C15d", **c15d, flags=[trt]).depends_on == claims.NOISE_FLAGGED
    trace_only = {"timing": "trace: transposed input", "spread": 0.5}  # shown, never judged
    assert judge("C15d", **c15d, flags=[trace_only]).outcome == "confirmed"


def test_recorded_verdicts_load_and_judge_again_under_their_old_keys():
    data = results.load("nvidia-h200")
    if not data:
        pytest.skip("no recorded reference results")
    recorded = claims.saved_verdicts("nvidia-h200")
    assert recorded and all(v.recorded for v in recorded.values())
    renamed = 0
    for claim_id, verdict in recorded.items():
        claim = claims.get(claim_id)
        if not claim.tested:
            continue
        again = claim.judge(verdict.evidence, machine=verdict.machine or "nvidia-h200", form=verdict.form)
        assert again.outcome in claims.OUTCOMES
        # A reference recorded before the one key ("flags") kept them under the old keys: the
        # same evidence under each old key is judged alike. A clean run records no flags, so
        # where a verdict has none, one noisy timing is added to test the reading.
        flags = verdict.evidence.get("flags") or [{"timing": "added by the test", "spread": 0.5}]
        current = {**verdict.evidence, "flags": flags}
        now = claim.judge(current, machine=verdict.machine or "nvidia-h200", form=verdict.form)
        for old_key in trust.LEGACY_FLAG_KEYS:
            evidence = {k: v for k, v in current.items() if k != "flags"}
            evidence[old_key] = flags
            old = claim.judge(evidence, machine=verdict.machine or "nvidia-h200", form=verdict.form)
            assert (old.outcome, old.depends_on) == (now.outcome, now.depends_on), (claim_id, old_key)
            renamed += 1
    assert renamed, "no recorded verdict was judged under the old keys"


def test_stated_ratio_says_noise_where_the_measurement_does_not_support_it():
    # the cases: a ratio outside its own rounds is not stated as a result
    assert trust.stated_ratio(1.77, [0.58, 1.73]).startswith("no stable ratio")
    assert trust.stated_ratio(1.47, [1.54, 1.83]).startswith("no stable ratio")
    assert trust.stated_ratio(1.02, [1.01, 1.03]) == "1.02x (IQR 1.01-1.03)"
    assert "no measurable difference" in trust.stated_ratio(0.99, [0.97, 1.02])
    flagged = trust.stated_ratio(1.05, [1.04, 1.06], flags=[{"timing": "t", "spread": 0.4}])
    assert flagged.startswith("no ratio to state") and "40%" in flagged
    assert trust.stated_ratio(3.0, [2.9, 3.1], flags=[{"timing": "t", "spread": 0.4}]).startswith("3.00x")
    assert "shared" in trust.stated_ratio(3.0, [2.9, 3.1], shared_gpu=True)
    assert trust.stated_ratio(2.0, None) == "2.00x"
    # a caller passing the rounds' quartiles names them (a page with both must tell them apart)
    assert trust.stated_ratio(1.02, [1.01, 1.03], spread_name="IQR") == "1.02x (IQR 1.01-1.03)"
    assert "outside its own rounds' IQR 1.54-1.83x" in trust.stated_ratio(1.47, [1.54, 1.83], spread_name="IQR")


def test_a_plain_ratio_is_told_from_noise_under_either_spread_label():
    """03 and 04 decide whether a sentence may carry a stated ratio with one test, beside the
    function that words it: each label stated_ratio prints passes, each noise form does not."""
    assert trust.is_plain_ratio(trust.stated_ratio(1.32, [1.29, 1.43]))  # '1.32x (IQR 1.29-1.43)'
    assert trust.is_plain_ratio(trust.stated_ratio(1.32, [1.29, 1.43], spread_name="rounds"))
    assert trust.is_plain_ratio("1.32x")
    for noise in (trust.stated_ratio(0.99, [0.97, 1.02]), trust.stated_ratio(1.77, [0.58, 1.73]),
                  trust.stated_ratio(float("nan")), "no ratio (nan: not measured)"):
        assert not trust.is_plain_ratio(noise), noise


def test_stated_variant_reads_a_comparison():
    from labkit.measure.timing import Comparison, Timing, VariantResult

    def timing(label, iqr):
        return Timing(label=label, device="cpu", mode="cold", times_s=(1.0,), median_s=1.0,
                      iqr_s=iqr, min_s=1.0, count=1)
    quiet = Comparison("base", 3, {"base": VariantResult(timing("base", 0.01), 1, 1, 1, (1.0,) * 3),
                                   "fast": VariantResult(timing("fast", 0.01), 0.5, 0.49, 0.51,
                                                         (0.5,) * 3)}, ("base", "fast"))
    assert trust.stated_variant(quiet, "fast") == "0.50x (IQR 0.49-0.51)"
    loud = Comparison("base", 3, {"base": VariantResult(timing("base", 0.3), 1, 1, 1, (1.0,) * 3),
                                  "fast": VariantResult(timing("fast", 0.01), 0.8, 0.79, 0.81,
                                                        (0.8,) * 3)}, ("base", "fast"))
    assert trust.stated_variant(loud, "fast").startswith("no ratio to state")  # 30% vs 23% away


def test_the_ladder_flags_its_rungs_for_c24_under_the_decision_they_move():
    from types import SimpleNamespace

    from labkit.chapters.ch08_inference_ladder import experiment

    def rung(iqr, pct=None):
        return SimpleNamespace(median_s=1.0, iqr_s=iqr, pct_of_ceiling=pct)
    assert experiment.rung_flag(rung(0.05), "x") is None
    assert experiment.rung_flag(rung(0.2), "over strict float32: eager")["spread"] == pytest.approx(0.2)
    assert experiment.rung_flag(rung(0.01, 112.0), "x")["spread"] == pytest.approx(0.12)
    ladder = dict(speedup_over_strict=5.0, speedup_over_defaults=6.5, strict_spread=[4.95, 5.05],
                  defaults_spread=[6.4, 6.6], top_rung="CUDA Graphs", steps_kept=7)
    noisy_defaults = experiment.rung_flag(rung(0.2), "over default float32: PyTorch defaults")
    assert judge("C24", **ladder, flags=[noisy_defaults]).outcome == "confirmed"  # 33% away
    noisy_strict = experiment.rung_flag(rung(0.2), "over strict float32: strict eager")
    assert judge("C24", **ladder, flags=[noisy_strict]).depends_on == claims.NOISE_FLAGGED


def test_the_rejudge_tool_judges_every_recorded_verdict_again(monkeypatch):
    import importlib.util
    import sys

    from tests.paths import ROOT

    spec = importlib.util.spec_from_file_location("rejudge", ROOT / "scripts" / "rejudge_recorded.py")
    tool = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "rejudge", tool)  # its dataclass looks its module up there
    spec.loader.exec_module(tool)
    found = tool.rejudge("nvidia-h200")
    if not found:
        pytest.skip("no recorded reference results")
    recorded = {i for i, v in claims.saved_verdicts("nvidia-h200").items() if claims.get(i).tested}
    assert {r.claim_id for r in found} == recorded and all(r.new is not None for r in found)
    timed = [r for r in found if claims.get(r.claim_id).timing_based]
    assert timed and all("flags:" in r.deciding for r in timed)
    flipped = tool.Rejudged("C19", found[0].old, None, "", "KeyError: x")
    assert flipped.changed
