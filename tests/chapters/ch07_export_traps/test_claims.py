"""Chapter 07's claim check on constructed evidence, each outcome reached, and the evidence a
real CPU run produces judged as the chapter judges it."""

import pytest

from labkit import claims
from labkit.chapters.ch07_export_traps import claims as ch07
from tests.claim_helpers import assert_outcomes_follow_the_evidence, judge

ALL_CORRECT = {"NCHW": "correct", "channels_last": "correct", "transposed view": "correct"}
KEPT = dict(trace_records_strides=True, trace_keeps_contiguous=True, trace_outcomes=ALL_CORRECT)
LOST = dict(trace_records_strides=True, trace_keeps_contiguous=False,
            trace_outcomes={**ALL_CORRECT, "channels_last": "rejected"})
NO_TRT = dict(tensorrt_ran=False, tensorrt_fallback_devices=[], tensorrt_transposed_ratio=None)

CASES = {
    "C15": {
        "confirmed": dict(**LOST, tensorrt_ran=True, tensorrt_fallback_devices=["cpu"],
                          tensorrt_transposed_ratio=4.2, tensorrt_transposed_ratio_iqr=[4.0, 4.4]),
        "depends": dict(**LOST, **NO_TRT),
        "refuted": dict(**KEPT, **NO_TRT),
    },
}


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_check_follows_the_evidence(claim_id):
    assert_outcomes_follow_the_evidence(claim_id, CASES[claim_id])


def test_a_measured_gpu_fallback_refutes_even_when_tracing_lost_contiguity():
    verdict = judge("C15", **LOST, tensorrt_ran=True, tensorrt_fallback_devices=["cuda:0"],
                    tensorrt_transposed_ratio=1.1, tensorrt_transposed_ratio_iqr=[1.0, 1.2])
    assert verdict.outcome == "refuted" and "cuda:0" in verdict.reason


def test_a_cpu_fallback_whose_cost_straddles_the_threshold_is_noise():
    verdict = judge("C15", **LOST, tensorrt_ran=True, tensorrt_fallback_devices=["cpu"],
                    tensorrt_transposed_ratio=2.7, tensorrt_transposed_ratio_iqr=[2.0, 3.0])
    assert verdict.outcome == "depends" and verdict.depends_on == claims.NOISE


def test_a_wrong_traced_answer_counts_as_lost():
    lost, text = ch07.trace_lost_contiguity(dict(trace_records_strides=True, trace_keeps_contiguous=True,
                                                 trace_outcomes={**ALL_CORRECT, "transposed view": "silently wrong"}))
    assert lost and "transposed view" in text


def test_no_layouts_is_a_clear_error():
    with pytest.raises(claims.ClaimError, match="no traced module"):
        judge("C15", **{**KEPT, "trace_outcomes": {}}, **NO_TRT)


def test_the_evidence_of_a_real_cpu_run_is_judged():
    """What the chapter gathers on this machine: trace keeps everything, TensorRT absent."""
    from labkit.chapters.ch07_export_traps import export_audit, export_traps

    model, example = export_audit.small_cnn(channels=4), export_audit.example_input(2, 8)
    audit = export_audit.run(model, example, paths=("trace",))
    row = audit.row("torch.jit.trace")
    with export_audit._quiet():
        import torch

        traced = torch.jit.trace(export_traps.ContiguousThenView(image=8).eval(), example)
    verdict = claims.get("C15").judge({
        "trace_records_strides": row.artifact.recorded_stride == tuple(example.stride()),
        "trace_keeps_contiguous": "contiguous" in export_traps.traced_ops(traced),
        "trace_outcomes": {k: o.kind for k, o in row.outcomes.items()},
        **NO_TRT}, machine="test", form="CPU: tracing measured, TensorRT read")
    assert verdict.outcome == "refuted", verdict.reason
    assert verdict.form == "CPU: tracing measured, TensorRT read"


def test_the_documentation_is_cited():
    assert all("Source" in text or "core/runtime" in text for text in ch07.DOCUMENTED.values())


def test_without_tensorrt_the_verdict_says_its_tensorrt_half_was_read_not_measured():
    verdict = judge("C15", **LOST, **NO_TRT)
    assert "TensorRT half was read from documentation, not measured" in verdict.reason
    form = "tracing measured here (torch 2.x, cpu); TensorRT half read from documentation, not measured"
    assert claims.form_kind(form) == "read from documentation"


def test_the_seeds_own_example_as_written_is_reported():
    seed = {"expression": "x.transpose(2, 3).transpose(1, 2)", "shape": [4, 32, 3, 32], "outcome": "raised",
            "error": "RuntimeError: expected input to have 3 channels, but got 32 channels instead"}
    verdict = judge("C15", **LOST, **NO_TRT, seed_example_as_written=seed)
    assert "(4, 32, 3, 32) tensor: as written it cannot feed the model" in verdict.reason
