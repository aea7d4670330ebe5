"""Chapter 07's claims C15a-d (the seed's C15 chain, split) on constructed evidence, each
outcome reached, the forms named truthfully, and the evidence a real CPU run produces judged as
the chapter judges it."""

import pytest

from labkit import claims
from labkit.chapters.ch07_export_traps import claims as ch07
from tests.claim_helpers import assert_outcomes_follow_the_evidence, judge

ALL_CORRECT = {"NCHW": "correct", "channels_last": "correct", "transposed view": "correct"}
KEPT = dict(trace_records_strides=True, trace_keeps_contiguous=True, trace_outcomes=ALL_CORRECT)
LOST = dict(trace_records_strides=True, trace_keeps_contiguous=False,
            trace_outcomes={**ALL_CORRECT, "channels_last": "rejected"})
NO_TRT = dict(tensorrt_ran=False, tensorrt_fallback_devices=[], tensorrt_transposed_ratio=None,
              tensorrt_outcomes={})
TRT = dict(tensorrt_ran=True, tensorrt_outcomes=ALL_CORRECT)

CASES = {
    "C15a": {"confirmed": dict(**LOST), "refuted": dict(**KEPT)},
    "C15b": {"refuted": dict(**NO_TRT),
             "confirmed": dict(tensorrt_ran=True, tensorrt_outcomes={**ALL_CORRECT, "NCHW": "wrong"})},
    "C15c": {"confirmed": dict(**TRT, tensorrt_fallback_devices=["cpu"]),
             "refuted": dict(**TRT, tensorrt_fallback_devices=["cuda:0"]),
             "depends": dict(**TRT, tensorrt_fallback_devices=[])},
    # C15c without TensorRT: refuted as stated, from documentation (its own test below)
    "C15d": {"confirmed": dict(**TRT, tensorrt_transposed_ratio=4.2, tensorrt_transposed_ratio_iqr=[4.0, 4.4]),
             "refuted": dict(**TRT, tensorrt_transposed_ratio=1.1, tensorrt_transposed_ratio_iqr=[1.0, 1.2]),
             "depends": dict(**NO_TRT, trace_transposed_ratio=1.3)},
}


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_check_follows_the_evidence(claim_id):
    assert_outcomes_follow_the_evidence(claim_id, CASES[claim_id])


def test_c15_is_split_into_four_and_the_bundle_is_retired():
    assert [c.id for c in ch07.CLAIMS] == ["C15a", "C15b", "C15c", "C15d"]
    assert "C15" not in claims.REGISTRY
    assert [c.id for c in ch07.CLAIMS if c.timing_based] == ["C15d"]  # only the latency is a timing
    assert claims.get("C15a").deterministic


def test_the_contiguous_layout_is_the_audits():
    from labkit.audit import export_audit

    assert ch07.CONTIGUOUS_LAYOUT == export_audit.NCHW


def test_a_cpu_fallback_whose_cost_straddles_the_threshold_is_noise():
    verdict = judge("C15d", **TRT, tensorrt_transposed_ratio=2.7, tensorrt_transposed_ratio_iqr=[2.0, 3.0])
    assert verdict.outcome == "depends" and verdict.depends_on == claims.NOISE


def test_the_tensorrt_latency_follows_the_trust_rule_and_the_traced_ratio_is_only_shown():
    c15d = dict(**TRT, tensorrt_transposed_ratio=3.0, tensorrt_transposed_ratio_iqr=[2.9, 3.1])
    assert judge("C15d", **c15d).outcome == "confirmed"
    trt = {"timing": "TensorRT: transposed input", "spread": 0.15}  # 2.9/2.6: 12% away
    assert judge("C15d", **c15d, flags=[trt]).depends_on == claims.NOISE_FLAGGED
    trace_only = {"timing": "trace: transposed input", "spread": 0.5}
    assert judge("C15d", **c15d, flags=[trace_only]).outcome == "confirmed"


def test_a_wrong_traced_answer_counts_as_lost():
    lost, text = ch07.trace_lost_contiguity(dict(trace_records_strides=True, trace_keeps_contiguous=True,
                                                 trace_outcomes={**ALL_CORRECT, "transposed view": "silently wrong"}))
    assert lost and "transposed view" in text


def test_no_layouts_is_a_clear_error():
    with pytest.raises(claims.ClaimError, match="no traced module"):
        judge("C15a", **{**KEPT, "trace_outcomes": {}})
    with pytest.raises(claims.ClaimError, match="no input layout"):
        judge("C15b", tensorrt_ran=True, tensorrt_outcomes={})
    with pytest.raises(claims.ClaimError, match="none of chapter 07"):
        ch07.form_of("C15", {"tensorrt_ran": False})


def test_the_evidence_of_a_real_cpu_run_is_judged():
    """What the chapter gathers on this machine: trace keeps everything, TensorRT absent."""
    import torch

    from labkit.audit import export_audit
    from labkit.chapters.ch07_export_traps import export_traps

    model, example = export_audit.small_cnn(channels=4), export_audit.example_input(2, 8)
    audit = export_audit.run(model, example, paths=("trace",))
    row = audit.row("torch.jit.trace")
    with export_audit._quiet():
        traced = torch.jit.trace(export_traps.ContiguousThenView(image=8).eval(), example)
    evidence = {"trace_records_strides": row.artifact.recorded_stride == tuple(example.stride()),
                "trace_keeps_contiguous": "contiguous" in export_traps.traced_ops(traced),
                "trace_outcomes": {k: o.kind for k, o in row.outcomes.items()},
                **NO_TRT, "device": "cpu", "torch": torch.__version__}
    verdicts = {i: claims.get(i).judge(evidence, machine="test", form=ch07.form_of(i, evidence))
                for i in ch07.C15_IDS}
    assert verdicts["C15a"].outcome == "refuted", verdicts["C15a"].reason
    assert verdicts["C15a"].form.startswith("nearest form, measured here: traced with a contiguous NCHW example")
    assert claims.form_kind(verdicts["C15a"].form) == "analogue"
    # both of the statement's cases: the seed's kind of example (not contiguous) traced too
    evidence["trace_noncontiguous_example"] = export_traps.trace_noncontiguous_example(model, example)
    both = claims.get("C15a").judge(evidence, machine="test", form=ch07.form_of("C15a", evidence))
    assert both.outcome == "refuted" and "nothing about contiguity was lost in either form" in both.reason
    assert both.reason.startswith("Traced with x.transpose(2, 3) (strides (192, 64, 1, 8): not contiguous, the "
                                  "seed's kind of example) and with a contiguous NCHW example, torch.jit.trace "
                                  "records each example's strides")
    assert both.form.startswith("measured here: traced with x.transpose(2, 3) and with")


NONCONTIGUOUS = {"expression": "x.transpose(2, 3)", "shape": [2, 3, 8, 8], "stride": [192, 64, 1, 8],
                 "contiguous": False, "recorded_stride": [192, 64, 1, 8], "keeps_contiguous": True,
                 "outcomes": ALL_CORRECT}


def test_either_case_of_c15a_losing_contiguity_confirms_it():
    """The seed's kind of example (not contiguous) and a contiguous one are both judged: one lost
    is enough, and the reason names the case that lost it."""
    assert judge("C15a", **KEPT, trace_noncontiguous_example=NONCONTIGUOUS).outcome == "refuted"
    for changed in ({"recorded_stride": [192, 64, 8, 1]}, {"keeps_contiguous": False},
                    {"outcomes": {**ALL_CORRECT, "NCHW": "silently wrong"}}):
        verdict = judge("C15a", **KEPT, trace_noncontiguous_example={**NONCONTIGUOUS, **changed})
        assert verdict.outcome == "confirmed", changed
        assert verdict.reason.startswith("Traced with x.transpose(2, 3)")
        assert "; traced with a contiguous NCHW example" in verdict.reason  # one sentence each: they differ
    assert judge("C15a", **LOST, trace_noncontiguous_example=NONCONTIGUOUS).outcome == "confirmed"
    with pytest.raises(claims.ClaimError, match="non-contiguous example was fed no input layout"):
        judge("C15a", **KEPT, trace_noncontiguous_example={**NONCONTIGUOUS, "outcomes": {}})


def test_the_noncontiguous_example_refuses_a_shape_it_cannot_transpose():
    import torch

    from labkit.audit import export_audit
    from labkit.chapters.ch07_export_traps import export_traps

    with pytest.raises(export_audit.AuditError, match="square images"):
        export_traps.trace_noncontiguous_example(export_audit.small_cnn(channels=4), torch.zeros(2, 3, 8, 6))


BINDING = {"path": "ONNX Runtime CPU, IOBinding of data_ptr",
           "outcomes": {**ALL_CORRECT, "channels_last": "silently wrong", "transposed view": "silently wrong"}}


def test_c15b_is_measured_on_the_chapters_own_pointer_bound_engine_and_says_the_trap_runs_the_other_way():
    verdict = judge("C15b", **NO_TRT, pointer_binding=BINDING)
    assert verdict.outcome == "refuted"
    assert verdict.reason.startswith("Measured on ONNX Runtime CPU, IOBinding of data_ptr, bound by address")
    assert "read the contiguous NCHW input right and channels_last, transposed view silently wrong" in verdict.reason
    assert "the trap runs the other way" in verdict.reason
    assert "read from documentation, not measured" in verdict.reason  # TensorRT's binding itself
    form = ch07.form_of("C15b", {**NO_TRT, "pointer_binding": BINDING, "device": "cpu"})
    assert form.startswith("analogue measured on cpu (ONNX Runtime's IOBinding)")
    assert claims.form_kind(form) == "analogue"  # measured; TensorRT's half read (review 03h 05-07 item 5)
    misread = {**BINDING, "outcomes": {**ALL_CORRECT, "NCHW": "silently wrong"}}
    assert judge("C15b", **NO_TRT, pointer_binding=misread).outcome == "confirmed"
    right = judge("C15b", **NO_TRT, pointer_binding={**BINDING, "outcomes": ALL_CORRECT})
    assert right.outcome == "refuted" and "other way" not in right.reason
    with pytest.raises(claims.ClaimError, match="fed no input layout"):
        judge("C15b", **NO_TRT, pointer_binding={**BINDING, "outcomes": {}})


def test_c15b_s_form_does_not_call_a_cpu_provider_s_binding_a_gpu_measurement():
    # On the reference H200 onnxruntime is the CPU build: the IOBinding path ran on its CPU
    # provider from host memory while the chapter's device was cuda:0.
    gpu = ch07.form_of("C15b", {**NO_TRT, "pointer_binding": BINDING, "device": "cuda:0"})
    assert gpu.startswith("analogue measured on ONNX Runtime's CPU provider (host memory")
    assert "the chapter on cuda:0" in gpu and claims.form_kind(gpu) == "analogue"
    assert "cuda:0 (ONNX" not in gpu  # never called a measurement on the GPU
    cuda = {**BINDING, "path": "ONNX Runtime CUDA, IOBinding of data_ptr"}
    assert ch07.form_of("C15b", {**NO_TRT, "pointer_binding": cuda, "device": "cuda:0"}).startswith(
        "analogue measured on cuda:0 (ONNX Runtime's IOBinding)")


def test_a_tensorrt_engine_that_misreads_a_noncontiguous_input_refutes_c15b_as_the_reverse_trap():
    verdict = judge("C15b", tensorrt_ran=True, tensorrt_outcomes={**ALL_CORRECT, "transposed view": "silently wrong"})
    assert verdict.outcome == "refuted" and "the trap runs the other way" in verdict.reason


def test_the_plain_text_table_says_which_verdicts_were_read_and_which_not_measured():
    evidence = {**KEPT, **NO_TRT, "device": "cpu", "torch": "x"}
    verdicts = [claims.get(i).judge(evidence, machine="test", form=ch07.form_of(i, evidence)) for i in ch07.C15_IDS]
    text = claims.table(verdicts).structure()
    assert "C15b: read from documentation, in whole or part" in text
    assert "C15c: read from documentation, in whole or part" in text
    assert "C15d: not measured here" in text and "measured (varies" not in text


@pytest.mark.parametrize("claim_id", ["C15b", "C15c"])
def test_without_tensorrt_the_form_and_reason_say_read_from_documentation_not_measured(claim_id):
    verdict = judge(claim_id, **NO_TRT)
    assert "read from documentation, not measured" in verdict.reason
    assert claims.form_kind(ch07.form_of(claim_id, NO_TRT)) == "read from documentation"


def test_where_tensorrt_ran_the_forms_say_measured():
    for claim_id in ch07.C15_IDS:
        assert claims.form_kind(ch07.form_of(claim_id, {**TRT, "device": "cuda:0"})) == "analogue"


def test_without_tensorrt_the_latency_is_not_measured_and_not_judged_from_the_trace():
    verdict = judge("C15d", **NO_TRT, trace_transposed_ratio=5.0)  # a large traced ratio decides nothing
    assert verdict.outcome == "depends" and "not measured" in ch07.form_of("C15d", NO_TRT)
    assert "shown, not judged" in verdict.reason


def test_the_documentation_is_cited():
    assert all("Source" in text or "core/runtime" in text for text in ch07.DOCUMENTED.values())


def test_a_refuted_c15a_says_why_a_may_is_refuted_and_a_confirmed_one_does_not():
    """Review 2026-12-04j item 10: a 'may' is refuted by the mechanism (no flag to ignore), with
    its scope (this model), not by two examples alone."""
    kept = judge("C15a", **KEPT).reason
    assert "a 'may' refuted, not merely unseen" in kept and "on this model" in kept
    assert "a 'may'" not in judge("C15a", **LOST).reason


def test_the_seeds_own_example_as_written_is_reported():
    seed = {"expression": "x.transpose(2, 3).transpose(1, 2)", "shape": [4, 32, 3, 32], "outcome": "raised",
            "error": "RuntimeError: expected input to have 3 channels, but got 32 channels instead"}
    verdict = judge("C15a", **LOST, seed_example_as_written=seed)
    assert "(4, 32, 3, 32) tensor: as written it cannot feed the model" in verdict.reason
    # refuted: what was found first, then why the nearest form was judged (no "so nothing was lost"
    # following from the seed's example not fitting)
    kept = judge("C15a", **KEPT, seed_example_as_written=seed).reason
    assert kept.index("nothing about contiguity was lost") < kept.index("The seed's own example")
    assert kept.endswith("cannot feed the model (raised RuntimeError: expected input to have 3 channels, "
                         "but got 32 channels instead), so the nearest form was judged")


def test_without_tensorrt_c15c_is_refuted_as_stated_and_c15b_follows_its_cards_documentation_branch():
    """C15c: the seed's trigger is the input's layout and no documented path turns a layout into
    a CPU fallback, so refuted as stated, from documentation, not measured (review 2026-12-04j
    item 4); ONNX Runtime's operator fallback stays in the reason as context. C15b: the card
    names the branch."""
    c15c = judge("C15c", **NO_TRT)
    assert c15c.outcome == "refuted" and not c15c.depends_on
    assert c15c.reason.startswith("Refuted as stated (read from documentation, not measured")
    assert "DLA layers fall back to the GPU" in c15c.reason and "contiguous before binding" in c15c.reason
    # each documentation sentence the reason leans on is in the cited table
    assert "never to the CPU" in ch07.DOCUMENTED["tensorrt_engine"]
    assert "tensors'" in ch07.DOCUMENTED["torch_tensorrt"] and "contiguous" in ch07.DOCUMENTED["torch_tensorrt_inputs"]
    assert "CPU" in ch07.DOCUMENTED["ort_tensorrt_provider"] and "provider list" in c15c.reason
    assert "operator" in c15c.reason.split("Context:")[1]  # the ORT fallback: context, not the trigger
    assert "without TensorRT, from documentation" in ch07.C15c.refute_if
    assert judge("C15b", **NO_TRT).outcome == "refuted"
    assert "read from documentation where TensorRT does not run" in ch07.C15b.refute_if
