"""Review 2026-12-03g items 4 and 5: what the audit's checks compare against.

Item 4: a float32 export was compared with TF32 eager on the H200 and a correct ONNX Runtime
run read "silently wrong". The rule (`export_audit.reference_math`) is tested on the recorded
GPU summary and on made-up flags: this CPU has no TF32, so its choice cannot be watched here.
Item 5: torchvision's ViT has a zero head, so every check against its output passed. The
audit's random-weight networks get a seeded head (`models.seed_zero_layers`), and a check
against an all-zero reference says "not checkable" instead of passing.
"""

import pytest
import torch

from labkit.audit import audit, export_audit, models, recommend, report
from labkit.chapters.ch09_audit_your_model import audits
from labkit.core import results


def _recorded(key: str) -> dict:
    entry = (results.load("nvidia-h200") or {}).get("chapters", {}).get("09_audit_your_model", {}).get(key)
    if not entry:
        pytest.skip(f"nothing recorded under {key} in results/nvidia-h200.json")
    return entry["payload"]


# ------------------------------------------------------------------ item 4: the reference


def test_the_recorded_gpu_run_would_be_checked_in_strict_float32():
    """The H200's ResNet-50 ran with TF32 on for convolutions (PyTorch's default): the rule
    turns it off for the check, so ONNX Runtime's float32 meets a float32 reference."""
    summary = _recorded("audit_resnet50")
    assert summary["device"].startswith("cuda") and summary["tf32"]["convolutions"]
    chosen = export_audit.reference_math(summary["device"].split(":")[0], summary["tf32"])
    assert chosen.tf32_off and chosen.math == "strict float32 (TF32 off)"
    assert "convolutions" in chosen.why and chosen.tolerance == export_audit.TOLERANCE["cuda"]
    assert str(chosen) == "eager in strict float32 (TF32 off)"


@pytest.mark.parametrize(("device", "tf32", "off", "math"), [
    ("cuda", {"convolutions": True, "matmuls": True}, True, "strict float32 (TF32 off)"),
    ("cuda", {"convolutions": False, "matmuls": False}, True, "strict float32 (TF32 off)"),
    ("cuda", None, True, "strict float32 (TF32 off)"),
    ("cpu", None, False, "float32"),
    ("cpu", {"convolutions": True, "matmuls": True}, False, "float32"),
])
def test_the_rule_turns_tf32_off_on_a_gpu_only(device, tf32, off, math):
    chosen = export_audit.reference_math(device, tf32)
    assert (chosen.tf32_off, chosen.math) == (off, math)
    assert chosen.tolerance == export_audit.TOLERANCE[device]
    if device == "cuda":
        assert ("already off" in chosen.why) == (tf32 is not None and not any(tf32.values()))


def test_strict_float32_turns_torchs_flags_off_and_restores_them():
    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True
        with export_audit.strict_float32():
            assert not torch.backends.cudnn.allow_tf32 and not torch.backends.cuda.matmul.allow_tf32
            assert export_audit.tf32_flags() == {"convolutions": False, "matmuls": False}
        assert torch.backends.cudnn.allow_tf32 and torch.backends.cuda.matmul.allow_tf32
        with export_audit.strict_float32(active=False):
            assert torch.backends.cudnn.allow_tf32
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved


def test_the_audit_says_what_it_checked_against():
    model, example = export_audit.small_cnn(channels=4), export_audit.example_input(batch=2, image=8)
    checked = export_audit.run(model, example, paths=("trace",))
    assert str(checked.reference) == "eager in float32"
    assert "against eager in float32" in checked._repr_html_()
    report_ = audit.run(model, example, export_paths=("trace",), recommend_rounds=0, profile=False)
    assert report_.exports[0].checked_against == "eager in float32"
    assert "export paths checked against eager in float32" in report_.notes
    assert report.summary(report_)["exports"][0]["checked_against"] == "eager in float32"
    shown = audits.setup(False, 2).table()
    assert "against eager in float32" in " ".join(shown.notes)


# ------------------------------------------------------------------ item 5: a zero head


def _zero_head_vit() -> models.ViTLike:
    model = models.vit_like(image=32)
    torch.nn.init.zeros_(model.fc.weight)
    torch.nn.init.zeros_(model.fc.bias)  # what torchvision's VisionTransformer does to heads.head
    return model.eval()


def test_a_zero_head_gets_seeded_weights_and_the_output_is_no_longer_zero():
    x = torch.randn(2, 3, 32, 32)
    first, second = _zero_head_vit(), _zero_head_vit()
    with torch.no_grad():
        assert float(first(x).abs().max()) == 0
    state = torch.random.get_rng_state()
    assert models.seed_zero_layers(first) == ["fc"]
    assert torch.equal(torch.random.get_rng_state(), state)  # the global stream is untouched
    assert models.seed_zero_layers(second) == ["fc"]
    assert torch.equal(first.fc.weight, second.fc.weight)  # seeded: the same on every run
    with torch.no_grad():
        assert float(first(x).abs().max()) > 0.1
    assert models.seed_zero_layers(first) == []  # nothing left to seed


def test_every_builtin_network_the_audit_loads_gives_non_zero_outputs():
    for name, spec in models.CHAPTER_NETWORKS:
        model = models.calibrate_batchnorm(models.load(spec, image=32), 32)
        with torch.no_grad():
            assert float(model(torch.randn(2, 3, 32, 32)).abs().max()) > 0, name


def test_an_all_zero_reference_is_not_checkable_never_correct():
    zeros = torch.zeros(2, 10)
    said = export_audit.outcome(lambda x: torch.ones(2, 10), torch.ones(1), zeros)
    assert said.kind == export_audit.UNCHECKABLE and "all zeros" in said.detail
    assert export_audit.outcome(lambda x: torch.zeros(2, 10), torch.ones(1), zeros).kind == export_audit.UNCHECKABLE
    refused = export_audit.outcome(lambda x: torch.ones(3), torch.ones(1), zeros)
    assert refused.kind == export_audit.WRONG  # a wrong shape is still wrong
    ran = export_audit.run(_zero_head_vit(), torch.randn(2, 3, 32, 32), paths=("trace",))
    assert {o.kind for o in ran.rows[0].outcomes.values()} == {export_audit.UNCHECKABLE}
    assert not ran.rows[0].correct_on_all


def test_the_audit_of_a_zero_head_keeps_no_fix_and_says_why():
    result = audit.run(_zero_head_vit(), torch.randn(2, 3, 32, 32), export_paths=("trace",),
                       recommend_rounds=1, recommend_rep_ms=5.0, profile=False)
    first = result.recommendations[0]
    assert first.outcome == recommend.UNCHECKABLE and not first.kept and not first.wall_faster
    assert "all zeros" in first.why
    shown = audits.readings(report.summary(result))
    assert shown["channels_last against NCHW: numerics"] == "not checkable (its outputs are all zeros)"
    assert shown["export paths correct on this layout"] == (
        "0 of 0 checked; 1 not checkable: its outputs are all zeros")


def test_the_recorded_vit_summary_is_read_as_not_checkable():
    """The H200's record of torchvision's ViT (before its head was seeded): outputs up to 0."""
    summary = _recorded("audit_vit")
    first = next(r for r in summary["recommendations"] if r.get("output_scale") is not None)
    shown = audits.readings(summary)
    if first["output_scale"] == 0:
        assert "not checkable" in shown["channels_last against NCHW: numerics"]
        assert "not checkable" in shown["export paths correct on this layout"]
    else:  # re-recorded with a seeded head: a real check
        assert shown["channels_last against NCHW: numerics"].startswith("max |error|")


def test_a_made_up_zero_summary_is_not_checkable_and_a_real_one_is_read():
    summary = report.summary(audit.run(export_audit.small_cnn(channels=4), torch.randn(2, 3, 8, 8),
                                       export_paths=("trace",), recommend_rounds=1,
                                       recommend_rep_ms=5.0, profile=False))
    assert audits.readings(summary)["channels_last against NCHW: numerics"].startswith("max |error|")
    assert audits.readings(summary)["export paths correct on this layout"] == "1 of 1 checked"
    summary["recommendations"][0]["output_scale"] = 0.0
    assert "not checkable" in audits.readings(summary)["channels_last against NCHW: numerics"]


def test_a_record_checked_against_tf32_eager_says_so():
    """The H200's record from before the fix compared float32 exports with TF32 eager (its two
    ONNX Runtime rows 'silently wrong'): the page says what they were checked against."""
    summary = _recorded("audit_resnet50")
    said = audits.readings(summary)["export paths correct on this layout"]
    legacy = not any(e.get("checked_against") for e in summary["exports"])
    assert ("against TF32 eager" in said) == legacy
    fresh = dict(summary, exports=[dict(e, checked_against="eager in strict float32 (TF32 off)")
                                   for e in summary["exports"]])
    assert "TF32 eager" not in audits.readings(fresh)["export paths correct on this layout"]


# ------------------------------------------------------------------ review 2026-12-03h items 1 and 3

def test_a_record_whose_trace_was_built_in_tf32_says_so():
    """The H200's ResNet-50 record (before the artifacts were built with TF32 off) has its trace
    'silently wrong' against strict float32 with TF32 on for convolutions: the page says the
    comparison was not like for like. A record built with TF32 off, or a CPU's, does not."""
    summary = {"device": "cuda", "tf32": {"convolutions": True, "matmuls": False},
               "exports": [{"path": "torch.jit.trace", "outcome": "silently wrong",
                            "others": {"NCHW": "silently wrong"},
                            "checked_against": "eager in strict float32 (TF32 off)"}]}
    assert "ran in TF32" in audits.traced_in_tf32(summary, summary["exports"])
    fresh = [dict(summary["exports"][0], built_tf32_off=True)]
    assert audits.traced_in_tf32(summary, fresh) == ""
    assert audits.traced_in_tf32(dict(summary, device="cpu", tf32=None), summary["exports"]) == ""
    recorded = _recorded("audit_resnet50")
    trace = next(e for e in recorded["exports"] if e["path"] == "torch.jit.trace")
    if "built_tf32_off" not in trace and trace["outcome"] == "silently wrong":
        shown = audits.readings(recorded)
        assert "ran in TF32" in shown["export paths correct on this layout"]
        assert "torch.jit.trace (traced in TF32)" in shown["export paths wrong or rejected"]


def test_a_fresh_summary_marks_its_exports_built_with_tf32_off_and_its_idle_rule():
    summary = report.summary(audit.run(export_audit.small_cnn(channels=4), torch.randn(2, 3, 8, 8),
                                       export_paths=("trace",), recommend_rounds=0))
    assert summary["exports"][0]["built_tf32_off"] is True
    assert all(not e["built_tf32_off"] for e in summary["exports"][1:])  # not built: skipped
    assert "in TF32" not in audits.readings(summary)["export paths correct on this layout"]
    assert summary["kernels"]["idle_rule"] is None  # a CPU: no idle, no rule


def test_the_recorded_idle_is_labelled_by_how_it_was_measured():
    recorded = _recorded("audit_resnet50")
    said = audits.readings(recorded)["copy and layout work"]
    if recorded["kernels"].get("idle_rule") is None:
        assert "(profiled pass, host traced)" in said
    else:
        assert "(unprofiled" in said
