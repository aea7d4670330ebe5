"""Chapter 06's claim check on constructed evidence (each outcome reached, each from evidence a
real run could produce), the evidence built from a launch result, and the recorded reference
evidence replayed when there is some."""

import pytest

from labkit import claims
from labkit.chapters.ch06_ddp_layout_drift import claims as ch06
from tests.claim_helpers import assert_outcomes_follow_the_evidence, judge

TYPE_ERROR = "TypeError: _ddp_reduce_hook() takes 1 positional argument but 3 were given"


def drift(name="a_drift", warnings=3, identical=True, wrong=(), error=None, diff=0.0):
    return {"name": name, "warnings": warnings, "steps": 21, "error": error,
            "params_identical": identical, "max_abs_diff_across_ranks": diff, "wrong_grads": list(wrong),
            "wrong_every_rank": bool(wrong)}


# What this CPU measured (torch 2.13, gloo): warned, ranks identical, gradients permuted, hook raises.
MEASURED_HERE = dict(drift_variants=[drift(wrong=["0.weight", "3.weight"]),
                                     drift("e_late_drift", 57, wrong=["0.weight", "3.weight"])],
                     control_params_identical=True, control=drift("c_convert_first", 0),
                     seed_fix=drift("b_seed_fix", 0, error=TYPE_ERROR),
                     other_variants=[drift("d_bucket_view", 0, wrong=["0.weight"])],
                     backend="gloo", world_size=2)

FITTED_STILL_WRONG = drift("b2_seed_hook_fitted", 3, wrong=["0.weight", "3.weight"])
MEASURED_HERE["seed_hook_fitted"] = FITTED_STILL_WRONG
# the seed's body on every parameter's gradient (p.register_hook): measured on this CPU (gloo, torch
# 2.13), the same 3 warnings and wrong gradients as (a), the gradients DDP copied in their parameters' strides
PER_PARAM_STILL_WRONG = dict(drift("b3_seed_hook_per_param", 3, wrong=["0.weight", "3.weight"]),
                             hook="seed_per_parameter", grad_strides_as_param=True)
MEASURED_HERE["seed_hook_per_param"] = PER_PARAM_STILL_WRONG
ILLEGAL = "RuntimeError: CUDA error: an illegal memory access was encountered"

CASES = {
    "C14a": {
        # a drifted rank reading illegal memory, or ranks that drift apart: the seed's story
        "confirmed": dict(drift_variants=[drift(identical=False, diff=1e-3)], control_params_identical=True),
        # over NCCL, nothing failed and the ranks stayed identical
        "refuted": dict(MEASURED_HERE, backend="nccl"),
        # over gloo (this CPU, one GPU): the NCCL half is untested
        "depends": MEASURED_HERE,
    },
    "C14b": {
        # wrong gradients even when converted before wrapping, the documented way
        "confirmed": dict(MEASURED_HERE, control=drift("c_convert_first", 0, wrong=["0.weight"])),
        # a release whose reducer copies back through the build-time views: gradients right
        "refuted": dict(drift_variants=[drift(), drift("e_late_drift", 57)], control=drift("c_convert_first", 0)),
        # what this machine measured: right before wrapping, wrong after
        "depends": MEASURED_HERE,
    },
    "C14c": {
        # a hook that ran and left every gradient right (a form that reaches the parameters)
        "confirmed": dict(MEASURED_HERE, seed_fix=drift("b_seed_fix", 0), seed_hook_fitted=None),
        "refuted": MEASURED_HERE,
        "depends": dict(drift_variants=[drift()], seed_fix=drift("b_seed_fix", 0, error=TYPE_ERROR)),
    },
}


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_check_follows_the_evidence(claim_id):
    assert_outcomes_follow_the_evidence(claim_id, CASES[claim_id])


def test_c14_is_retired_and_split():
    assert [c.id for c in claims.for_chapter("06_ddp_layout_drift")] == ["C14a", "C14b", "C14c"]
    assert ch06.RETIRED == {"C14": ("C14a", "C14b", "C14c")}
    with pytest.raises(claims.ClaimError):
        claims.get("C14")


def test_c14a_an_illegal_access_in_a_drifted_rank_confirms():
    verdict = judge("C14a", drift_variants=[drift(error=ILLEGAL)], control_params_identical=True)
    assert verdict.outcome == "confirmed" and "illegal memory access" in verdict.reason


def test_c14a_ranks_that_diverge_without_drift_make_it_depend():
    verdict = judge("C14a", drift_variants=[drift(identical=False)], control_params_identical=False)
    assert verdict.outcome == "depends" and "rank divergence" in verdict.depends_on


def test_c14a_measured_here_says_the_ranks_stayed_identical():
    verdict = judge("C14a", **MEASURED_HERE)
    # every variant of the evidence that trained (b raised), the takeaway's count (review 2026-12-04m item 5)
    assert verdict.reason.startswith("The ranks' views never disagreed (bit-identical parameters in 6 of 6 "
                                     "variants that trained)")


def test_c14a_speaks_of_no_drift_half_the_restated_claim_lacks():
    """Review 2026-12-04l item 7: "the claim's drift half is refuted here" inside a 'depends', of a
    statement that (restated, 04k item 7) has only the views' disagreement and NCCL's illegal access."""
    said = judge("C14a", **MEASURED_HERE).reason
    assert "half" not in said and "refuted" not in said
    apart = dict(MEASURED_HERE, control=dict(MEASURED_HERE["control"], params_identical=False))
    assert "(bit-identical parameters in 5 of 6 variants that trained)" in judge("C14a", **apart).reason


def test_c14a_over_gloo_cannot_refute_the_nccl_half():
    gloo = judge("C14a", **MEASURED_HERE)
    assert gloo.outcome == "depends" and gloo.depends_on == ch06.NCCL_ARM
    assert "the illegal memory access needs NCCL: untested, this run used gloo" in gloo.reason
    assert judge("C14a", drift_variants=[drift(warnings=0)], control_params_identical=True).outcome == "depends"
    nccl = judge("C14a", **dict(MEASURED_HERE, backend="nccl"))
    assert nccl.outcome == "refuted" and "over NCCL" in nccl.reason


def test_c14b_reason_opens_with_the_wrong_gradients_and_names_the_bucket_view_variant():
    verdict = judge("C14b", **MEASURED_HERE)
    first_sentence = verdict.reason.split(". ")[0]
    assert "wrong gradients for 0.weight, 3.weight" in first_sentence
    assert "the course's own finding, not the seed's claim" in first_sentence
    assert "d_bucket_view gives wrong gradients" in verdict.reason


def test_c14b_says_the_controls_margin_where_the_evidence_holds_it():
    """Review 2026-12-04l item 3: 'right' showed no margin; the seed's deviation need not be large."""
    control = dict(drift("c_convert_first", 0), largest_grad_error=2.1e-7, grad_tolerance=1e-4)
    said = judge("C14b", **dict(MEASURED_HERE, control=control)).reason
    assert said.startswith("Converted before DDP was built (the documented way) the gradients were right "
                           "(largest error 2.1e-07, tolerance 1e-04); ")
    assert "largest error" not in judge("C14b", **MEASURED_HERE).reason  # an older record: not said
    assert ch06.error_margin(dict(control, largest_grad_error=float("nan"))) == ""


def test_c14b_depends_on_when_the_layout_changes():
    verdict = judge("C14b", **MEASURED_HERE)
    assert verdict.outcome == "depends" and verdict.depends_on.startswith(ch06.WHEN_IT_CHANGES)


def test_c14b_depends_names_the_seeds_causes_the_same_run_ruled_out():
    """Review 2026-12-03h item 6: not AMP, not across ranks, each only when this run measured it."""
    fp32 = judge("C14b", **MEASURED_HERE, amp_dtype="off")
    assert fp32.depends_on == ("when the layout changes; not AMP; not across ranks: every rank gets the "
                               "same wrong gradient")
    wrong_too = judge("C14b", **MEASURED_HERE, amp_dtype="float16",
                      amp_off_drift=drift("f_drift_no_amp", wrong=["0.weight"]))
    assert ch06.NOT_AMP in wrong_too.depends_on
    right_off = judge("C14b", **MEASURED_HERE, amp_dtype="float16", amp_off_drift=drift("f_drift_no_amp"))
    assert ch06.NOT_AMP not in right_off.depends_on and ch06.AND_AMP in right_off.depends_on
    untested = judge("C14b", **MEASURED_HERE, amp_dtype="float16")  # no float32 drift this run
    assert "AMP" not in untested.depends_on
    one_rank = dict(MEASURED_HERE, drift_variants=[dict(d, wrong_every_rank=False)
                                                   for d in MEASURED_HERE["drift_variants"]])
    assert ch06.NOT_ACROSS_RANKS not in judge("C14b", **one_rank, amp_dtype="off").depends_on


def test_c14b_is_the_seeds_statement_not_a_rewording():
    claim = claims.get("C14b")
    assert "after DDP was built" not in claim.statement and "after DDP was built" not in claim.seed_text
    assert "AMP" in claim.statement and "silent numerical deviation" in claim.statement
    assert "静默数值偏差" in claim.seed_text and "AMP 混合精度" in claim.seed_text


def test_c14b_says_amp_played_no_part_only_when_it_was_off():
    assert "AMP plays no part" in judge("C14b", **MEASURED_HERE, amp_dtype="off").reason
    assert "AMP plays no part" not in judge("C14b", **MEASURED_HERE, amp_dtype="float16").reason


def test_c14b_reads_the_amp_question_off_the_same_drift_in_float32():
    wrong_too = drift("f_drift_no_amp", wrong=["0.weight"])
    said = judge("C14b", **MEASURED_HERE, amp_dtype="float16", amp_off_drift=wrong_too).reason
    assert "the same drift with AMP off gave wrong gradients too, so AMP plays no part" in said
    right = judge("C14b", **MEASURED_HERE, amp_dtype="float16", amp_off_drift=drift("f_drift_no_amp")).reason
    assert "with AMP off gave right gradients, so AMP is part of it" in right
    raised = judge("C14b", **MEASURED_HERE, amp_dtype="float16",
                   amp_off_drift=drift("f_drift_no_amp", error="RuntimeError: x")).reason
    assert "AMP off" not in raised  # a run that raised says nothing about AMP


def test_c14b_a_drift_that_only_raises_is_not_silent():
    verdict = judge("C14b", drift_variants=[drift(error=ILLEGAL, wrong=["0.weight"])],
                    control=drift("c_convert_first", 0))
    assert verdict.outcome == "depends" and verdict.depends_on == "whether the drifted run completes"


def test_c14c_as_written_is_refuted_by_its_type_error_and_reports_the_nearest_form():
    verdict = judge("C14c", **MEASURED_HERE)
    assert verdict.outcome == "refuted" and "TypeError" in verdict.reason
    assert "nearest working form" in verdict.reason and "still wrong for 0.weight" in verdict.reason


def test_c14c_names_one_nearest_form_b3_with_its_verdict_and_b2_as_fitted():
    """Review 2026-12-04l item 1: the reason (and so the ledger's row) called b2 'its nearest working
    form' while the card under it judged b3 as that form. One name: b3, its verdict in the reason
    the ledger saves; b2 is 'fitted to PyTorch's signature'."""
    said = judge("C14c", **MEASURED_HERE).reason
    nearest = said.split("nearest working form")[1]
    assert nearest.startswith(", the body on every parameter's gradient (b3_seed_hook_per_param): refuted (ran")
    assert said.count("nearest working form") == 1 and "b2_seed_hook_fitted" not in nearest.split(";")[0]
    assert "; fitted to PyTorch's signature (b2_seed_hook_fitted) ran, gradients still wrong" in said
    fixed_b3 = dict(drift("b3_seed_hook_per_param", 0), hook="seed_per_parameter")
    assert "(b3_seed_hook_per_param): confirmed (ran, gradients right" in judge(
        "C14c", **dict(MEASURED_HERE, seed_hook_per_param=fixed_b3)).reason
    without = judge("C14c", **dict(MEASURED_HERE, seed_hook_per_param=None)).reason
    assert "nearest working form" not in without and "fitted to PyTorch's signature" in without


def test_c14c_nearest_form_is_the_per_parameter_hook_judged_on_its_own_and_labelled():
    """Review 2026-12-04k item 3: the nearest form is the seed's body on every parameter's gradient
    (b3), not the module-level hook fitted to its signature (b2), which never sees a parameter's."""
    ev = ch06.nearest_form_evidence(MEASURED_HERE)
    verdict = claims.get("C14c").judge(ev, machine="test", form=ch06.NEAREST_HOOK_FORM)
    assert verdict.outcome == "refuted" and "b3_seed_hook_per_param" in verdict.reason
    assert "b2_seed_hook_fitted" not in verdict.reason and "input gradients" not in verdict.reason
    assert verdict.reason.count("b3_seed_hook_per_param") == 1  # judged once, not said again beside itself
    assert "still had their parameters' strides" in verdict.reason
    assert verdict.form.startswith("nearest working form") and "p.register_hook" in verdict.form
    unknown = dict(PER_PARAM_STILL_WRONG, grad_strides_as_param=None)
    said = claims.get("C14c").judge(dict(ev, seed_fix=unknown), machine="test").reason
    assert "strides" not in said.split("warnings")[-1]  # not measured: not said
    fixed = ch06.nearest_form_evidence(dict(MEASURED_HERE, seed_hook_per_param=dict(
        drift("b3_seed_hook_per_param", 0), hook="seed_per_parameter")))
    assert claims.get("C14c").judge(fixed, machine="test").outcome == "confirmed"
    with pytest.raises(ValueError, match="b3_seed_hook_per_param"):
        ch06.nearest_form_evidence(dict(MEASURED_HERE, seed_hook_per_param=None))


def test_c14a_states_the_seeds_clause_and_measures_the_drift_apart_in_its_rule():
    """Review 2026-12-04k item 7: the statement is the clause marked C14a, no 'ranks drift apart'."""
    c14a = claims.get("C14a")
    assert "drift apart" not in c14a.statement and "drift apart" in c14a.confirm_if
    clause = ch06.SEED_SENTENCE_MARKED.split("[C14a: ")[1].split("]")[0]
    assert c14a.statement.rstrip(".").endswith(clause)


def test_c14bs_label_stays_balanced_where_it_is_cut():
    """Review 2026-12-04k item 6: the card's and ledger's cut at the first colon lost a parenthesis."""
    from labkit.claims.tables import short_label

    verdict = judge("C14b", **MEASURED_HERE, amp_dtype="off")
    for text in (short_label(verdict), verdict.label, verdict.label.split(":")[0] + ")"):
        assert text.count("(") == text.count(")"), text


def test_c14c_a_hook_that_runs_but_leaves_wrong_gradients_is_refuted():
    verdict = judge("C14c", drift_variants=[drift(wrong=["0.weight"])], seed_fix=drift("b_seed_fix", 3, wrong=["0.weight"]))
    assert verdict.outcome == "refuted" and "3 warnings" in verdict.reason


def _report(name, warnings_by_step, identical=True, error=None, wrong=None):
    observed = [{"step": i, "wrong_grads": (wrong or {}) if i == 0 else {}, "traffic": {},
                 "parameters": [], "separate_grad_bytes": 0, "warnings": n}
                for i, n in enumerate(warnings_by_step[:4])]
    return {"variant": {"name": name, "title": name}, "error": error, "amp_dtype": "off",
            "warnings_by_step": warnings_by_step, "observed": observed if not error else [],
            "params_identical": identical, "max_abs_diff_across_ranks": 0.0 if identical else 0.5,
            "param_checksum": 1.0}


def test_evidence_from_a_launch_result_needs_every_rank_to_agree():
    names = ["a_drift", "b_seed_fix", "c_convert_first", "d_bucket_view", "e_late_drift"]

    def rank(identical_a):
        return [_report("a_drift", [3, 0, 0, 0], identical_a, wrong={"0.weight": "x"}),
                _report("b_seed_fix", [], error={"type": "TypeError", "message": "boom", "step": 0}),
                _report("c_convert_first", [0, 0, 0, 0]), _report("d_bucket_view", [0, 0, 0, 0]),
                _report("e_late_drift", [0, 0, 3, 3])]

    result = {"ranks": [rank(True), rank(False)], "backend": "gloo", "world_size": 2,
              "device": "cpu", "torch": "2.13"}
    ev = ch06.evidence_from_run(result)
    assert [d["name"] for d in ev["drift_variants"]] == ["a_drift", "e_late_drift"]
    a = ev["drift_variants"][0]
    assert a["warnings"] == 3 and a["params_identical"] is False and a["wrong_grads"] == ["0.weight"]
    assert ev["seed_fix"]["error"] == "TypeError: boom"
    assert ev["control_params_identical"] is True and ev["other_variants"][0]["name"] == "d_bucket_view"
    assert set(names) >= {d["name"] for d in ev["drift_variants"]}
    assert claims.get("C14a").judge(ev, machine="test").outcome == "confirmed"  # rank 1 disagrees
    assert ev["control"]["name"] == "c_convert_first" and ev["control"]["wrong_grads"] == []
    assert a["wrong_every_rank"] is True and ev["control"]["wrong_every_rank"] is False
    assert claims.get("C14b").judge(ev, machine="test").outcome == "depends"  # right before, wrong after
    assert claims.get("C14c").judge(ev, machine="test").outcome == "refuted"


def test_claims_belong_to_chapter_06_and_quote_the_seed_fix():
    for claim_id in ("C14a", "C14b", "C14c"):
        claim = claims.get(claim_id)
        assert claim.tested and "GradScaler" in claim.seed_setting and claim.section.startswith("4.3")
    assert "register_full_backward_hook(_ddp_reduce_hook)" in ch06.SEED_FIX_CODE
    assert "grad.contiguous(memory_format=torch.contiguous_format)" in ch06.SEED_FIX_CODE


@pytest.mark.parametrize("claim_id", ["C14a", "C14b", "C14c"])
def test_recorded_reference_replays(claim_id):
    recorded = claims.recorded(claim_id)
    if recorded is None:
        pytest.skip(f"no reference verdict for {claim_id} recorded yet")
    missing = [k for k in claims.get(claim_id).evidence_keys if k not in recorded.evidence]
    if missing:  # C14b was restated (issue 39): its rule now reads the converted-first control
        pytest.skip(f"{claim_id}'s recorded evidence predates its rule (lacks {missing}): re-record on the GPU")
    if claim_id == "C14a" and recorded.outcome == "refuted" and recorded.evidence.get("backend") != "nccl":
        pytest.skip("C14a recorded 'refuted' over gloo, before gloo could only say 'depends' (the NCCL half "
                    "untested, review 2026-12-03d item 9): re-record on the GPU")
    again = claims.get(claim_id).judge(recorded.evidence, machine=recorded.machine, form=recorded.form)
    assert again.outcome == recorded.outcome
