"""The layout audit: each path is fed the same values as NCHW, channels_last and a transposed
view, and the audit says what each did (checked against eager, never assumed)."""

import json

import pytest
import torch

from labkit.audit import export_audit
from labkit.audit.export_audit import (
    CHANNELS_LAST,
    CORRECT,
    NCHW,
    REJECTED,
    SKIPPED,
    TRANSPOSED,
    WRONG,
)
from labkit.core import env, results


@pytest.fixture(scope="module")
def tiny():
    return export_audit.small_cnn(channels=4), export_audit.example_input(batch=2, image=8)


@pytest.fixture(scope="module")
def audit(tiny):
    model, example = tiny
    return export_audit.run(model, example, aoti_timeout_s=0)


def test_layouts_hold_the_same_values_in_three_layouts(tiny):
    _, example = tiny
    inputs = export_audit.layouts(example)
    assert list(inputs) == [NCHW, CHANNELS_LAST, TRANSPOSED]
    for x in inputs.values():
        assert torch.equal(x, example)
    assert inputs[NCHW].is_contiguous()
    assert inputs[CHANNELS_LAST].is_contiguous(memory_format=torch.channels_last)
    transposed = inputs[TRANSPOSED]
    assert not transposed.is_contiguous() and not transposed.is_contiguous(memory_format=torch.channels_last)


def test_each_path_is_fed_each_layout(audit):
    expected = {
        "torch.jit.trace": (CORRECT, CORRECT, CORRECT),
        "torch.jit.script": (CORRECT, CORRECT, CORRECT),
        "torch.export": (CORRECT, CORRECT, CORRECT),
        "ONNX Runtime CPU, numpy feed": (CORRECT, CORRECT, CORRECT),
        # a pointer and a shape: the memory is read as if it were NCHW
        "ONNX Runtime CPU, IOBinding of data_ptr": (CORRECT, WRONG, WRONG),
        "AOTInductor": (SKIPPED, SKIPPED, SKIPPED),
    }
    got = {r.path: tuple(r.outcomes[lay].kind for lay in export_audit.LAYOUTS) for r in audit.rows}
    assert got == expected


def test_what_each_path_records(audit):
    assert "strides (192, 64, 8, 1): contiguous NCHW" in audit.row("torch.jit.trace").records
    assert "no shape, no strides" in audit.row("torch.jit.script").records
    assert "strides (192, 64, 8, 1)" in audit.row("torch.export").records
    onnx_row = audit.row("ONNX Runtime CPU, numpy feed")
    assert "dims (2, 3, 8, 8): no strides" in onnx_row.records
    assert audit.exporter in onnx_row.note and audit.exporter in ("dynamo", "legacy")
    assert audit.row("torch.jit.trace").artifact.recorded_stride == (192, 64, 8, 1)


def test_a_skipped_path_says_why(audit):
    row = audit.row("AOTInductor")
    assert row.artifact is None and "takes minutes" in row.note


def test_structure_and_saved_form(audit):
    lines = audit.structure().splitlines()
    assert lines[0] == "path | NCHW | channels_last | transposed view"
    assert "ONNX Runtime CPU, IOBinding of data_ptr | correct | silently wrong | silently wrong" in lines
    saved = json.loads(json.dumps(results.to_jsonable(audit.as_dict())))
    assert saved["rows"][0]["outcomes"][NCHW]["kind"] == CORRECT
    assert "<table>" in audit._repr_html_()


def test_outcome_classifies_refusal_wrong_and_right():
    expected = torch.ones(2, 3)

    def refuses(x):
        raise RuntimeError("view size is not compatible with input tensor's size and stride\nmore")

    refused = export_audit.outcome(refuses, torch.ones(1), expected)
    assert refused.kind == REJECTED and refused.detail.startswith("RuntimeError: view size")
    assert export_audit.outcome(lambda x: expected * 1.5, torch.ones(1), expected).kind == WRONG
    assert export_audit.outcome(lambda x: torch.ones(3, 2), torch.ones(1), expected).kind == WRONG
    right = export_audit.outcome(lambda x: expected + 1e-7, torch.ones(1), expected)
    assert right.kind == CORRECT and right.max_error < 1e-6


def test_aoti_that_does_not_compile_in_time_is_a_row_not_a_hang(tiny):
    model, example = tiny
    audit = export_audit.run(model, example, paths=("aoti",), aoti_timeout_s=0.5)
    row = audit.row("AOTInductor")
    assert row.outcomes[NCHW].kind == SKIPPED
    assert "did not compile within" in row.note


def test_a_skipped_aoti_names_this_machine_and_how_to_run_it(tiny, monkeypatch):
    """Review 2026-12-04i 08-09-99 item 6: on the H200 the skip read "takes minutes on a small
    CPU ... see the recorded GPU run", a run that does not exist. The text names the machine
    it ran on and the command that compiles it, and cites no recorded run."""
    model, example = tiny
    row = export_audit.run(model, example, paths=("aoti",), aoti_timeout_s=0).row("AOTInductor")
    assert row.outcomes[NCHW].kind == SKIPPED
    assert f"not compiled on this machine (CPU {env.cpu_model()}, " in row.note
    assert "LABKIT_AOTI_TIMEOUT_S=600 python -m labkit.audit MODEL --exports aoti" in row.note
    assert "recorded GPU run" not in row.note and "small CPU" not in row.note
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H200")
    on_gpu = export_audit.aoti_skip_reason(torch.device("cuda"))
    assert on_gpu.startswith("not compiled on this machine (NVIDIA H200): its compile limit was 0 s")
    assert "--exports aoti" in on_gpu and "CPU" not in on_gpu


def test_speed_times_only_correct_paths(audit, tiny):
    model, example = tiny
    speed = export_audit.speed(audit, example, model, rounds=1, rep_ms=5)
    assert list(speed.comparisons) == [export_audit.CPU_CLOCK]  # a CPU example: one clock
    assert set(speed.variants) == {"eager", "torch.jit.trace", "torch.jit.script", "torch.export",
                                   "ONNX Runtime CPU, numpy feed", "ONNX Runtime CPU, IOBinding of data_ptr"}
    fastest = speed.fastest_correct()[export_audit.CPU_CLOCK]
    assert fastest == "eager" or fastest in speed.correct_on_all
    # IOBinding reads channels_last memory as NCHW: timed (right on NCHW), never named fastest
    assert "ONNX Runtime CPU, IOBinding of data_ptr" not in speed.correct_on_all


def test_bad_inputs_say_what_to_pass(tiny):
    model, example = tiny
    with pytest.raises(export_audit.AuditError, match="nn.Module"):
        export_audit.run(lambda x: x, example)
    with pytest.raises(export_audit.AuditError, match="float32"):
        export_audit.run(model, example.double())
    with pytest.raises(export_audit.AuditError, match="unknown paths"):
        export_audit.run(model, example, paths=("tensorrt",))
    with pytest.raises(export_audit.AuditError, match="square"):
        export_audit.layouts(torch.ones(1, 3, 4, 5))
    with pytest.raises(export_audit.AuditError, match="positive"):
        export_audit.example_input(batch=0)


def test_describe_layout_names_the_format():
    assert export_audit.describe_layout((1, 3, 2, 2), (12, 1, 6, 3)).endswith("channels_last")
    assert export_audit.describe_layout((1, 1, 2, 2), (4, 4, 2, 1)).endswith("both formats")
    assert export_audit.describe_layout((2, 3), (1, 2)).endswith("not contiguous")


# ------------------------------------------------------------------ review 2026-12-03h item 1
# A trace records aten::_convolution's allow_tf32 as a constant at trace time. The H200's
# ResNet-50 trace, made with PyTorch's default (TF32 on for cuDNN convolutions) and checked
# against a strict float32 reference, read "silently wrong" (0.0489 against 1.95). The audit now
# builds every artifact with TF32 off. A CPU convolution ignores TF32, so on this CPU the test
# reads the traced graph's constant; the GPU test below runs only where CUDA is (not here).


@pytest.fixture
def tf32_on():
    """TF32 on for convolutions and matmuls, as a GPU user may have it, restored after."""
    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = True
    yield
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved


def test_a_plain_trace_keeps_the_tf32_setting_it_was_traced_under(tiny, tf32_on):
    """The trap itself: traced with TF32 on, the graph says allow_tf32=1 whatever the setting
    when it runs (what made the audit's trace row wrong before the fix)."""
    model, example = tiny
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
    assert export_audit.traced_allow_tf32(traced) is True
    with export_audit.strict_float32(), torch.no_grad():
        assert export_audit.traced_allow_tf32(torch.jit.trace(model, example)) is False
    assert export_audit.traced_allow_tf32(torch.jit.script(model)) is None  # no _convolution node


def test_the_audit_traces_with_tf32_off_even_when_it_is_on(tiny, tf32_on):
    model, example = tiny
    audit = export_audit.run(model, example, paths=("trace", "script", "export"), aoti_timeout_s=0)
    row = audit.row("torch.jit.trace")
    assert row.correct_on_all
    assert export_audit.traced_allow_tf32(row.artifact.run) is False
    # on a CPU the recorded flag changes nothing: not said (review 2026-12-05u 08-09-99 item 8)
    assert ("allow_tf32=0" in row.note) if example.device.type == "cuda" else ("allow_tf32" not in row.note)
    assert all(r.correct_on_all for r in audit.rows)
    # the caller's setting is left as it was
    assert torch.backends.cudnn.allow_tf32 and torch.backends.cuda.matmul.allow_tf32


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (not run on the CPU)")
def test_on_a_gpu_a_trace_made_under_tf32_reads_correct(tf32_on):
    """GPU only. With TF32 on globally, every in-process path is built and checked in strict
    float32 on a GPU: the trace's convolutions record allow_tf32=0 and it reads correct."""
    model = export_audit.small_cnn(channels=64, device="cuda")
    example = export_audit.example_input(batch=8, image=64, device="cuda")
    audit = export_audit.run(model, example, paths=("trace", "script", "export"), aoti_timeout_s=0)
    assert audit.reference.tf32_off
    assert export_audit.traced_allow_tf32(audit.row("torch.jit.trace").artifact.run) is False
    assert all(r.correct_on_all for r in audit.rows), audit.structure()
