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
            "params_identical": identical, "max_abs_diff_across_ranks": diff, "wrong_grads": list(wrong)}


# What this CPU measured (torch 2.13, gloo): warned, ranks identical, gradients permuted, hook raises.
MEASURED_HERE = dict(drift_variants=[drift(wrong=["0.weight", "3.weight"]),
                                     drift("e_late_drift", 57, wrong=["0.weight", "3.weight"])],
                     control_params_identical=True,
                     seed_fix=drift("b_seed_fix", 0, error=TYPE_ERROR),
                     other_variants=[drift("d_bucket_view", 0, wrong=["0.weight"])],
                     backend="gloo", world_size=2)

CASES = {
    "C14": {
        # the seed's story: ranks diverge under drift, the hook runs and repairs it
        "confirmed": dict(drift_variants=[drift(identical=False, diff=1e-3)],
                          control_params_identical=True,
                          seed_fix=drift("b_seed_fix", 0, identical=True)),
        "refuted": MEASURED_HERE,
        "depends": dict(drift_variants=[drift(warnings=0)], control_params_identical=True,
                        seed_fix=drift("b_seed_fix", 0, error=TYPE_ERROR)),
    },
}


def test_check_follows_the_evidence():
    assert_outcomes_follow_the_evidence("C14", CASES["C14"])


def test_harmless_drift_with_a_crashing_hook_is_refuted_and_says_why():
    verdict = judge("C14", drift_variants=[drift()], control_params_identical=True,
                    seed_fix=drift("b_seed_fix", 0, error=TYPE_ERROR))
    assert verdict.outcome == "refuted"
    assert "strided copy" in verdict.reason and "TypeError" in verdict.reason


def test_broken_drift_with_a_hook_that_runs_but_leaves_the_warning_is_refuted():
    verdict = judge("C14", drift_variants=[drift(wrong=["0.weight"])], control_params_identical=True,
                    seed_fix=drift("b_seed_fix", 3))
    assert verdict.outcome == "refuted"
    assert "3 warnings remained" in verdict.reason and "silently and identically" in verdict.reason


def test_measured_reason_names_wrong_gradients_and_the_bucket_view_variant():
    verdict = judge("C14", **MEASURED_HERE)
    assert "gradients wrong for 0.weight, 3.weight" in verdict.reason
    assert "d_bucket_view gives wrong gradients" in verdict.reason


def test_ranks_that_diverge_without_drift_make_it_depend():
    verdict = judge("C14", drift_variants=[drift(identical=False)], control_params_identical=False,
                    seed_fix=drift("b_seed_fix", 0, error=TYPE_ERROR))
    assert verdict.outcome == "depends" and "rank divergence" in verdict.depends_on


def test_a_crashing_drift_counts_as_broken():
    verdict = judge("C14", drift_variants=[drift(error="RuntimeError: NCCL error: illegal memory access")],
                    control_params_identical=True, seed_fix=drift("b_seed_fix", 0, identical=True))
    assert verdict.outcome == "confirmed"


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
    assert claims.get("C14").judge(ev, machine="test").outcome == "refuted"


def test_claim_belongs_to_chapter_06_and_quotes_the_seed_fix():
    assert [c.id for c in claims.for_chapter("06_ddp_layout_drift")] == ["C14"]
    claim = claims.get("C14")
    assert claim.tested and claim.seed_setting and claim.section.startswith("4.3")
    assert "register_full_backward_hook(_ddp_reduce_hook)" in ch06.SEED_FIX_CODE
    assert "grad.contiguous(memory_format=torch.contiguous_format)" in ch06.SEED_FIX_CODE


def test_recorded_reference_replays():
    recorded = claims.recorded("C14")
    if recorded is None:
        pytest.skip("no reference verdict for C14 recorded yet")
    again = claims.get("C14").judge(recorded.evidence, machine=recorded.machine, form=recorded.form)
    assert again.outcome == recorded.outcome
