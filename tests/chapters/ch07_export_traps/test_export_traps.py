"""The export traps, reproduced: each function measures what it says, on this machine."""

import pytest
import torch

from labkit.audit import export_audit
from labkit.audit.export_audit import CHANNELS_LAST, CORRECT, NCHW, REJECTED
from labkit.chapters.ch07_export_traps import export_traps


@pytest.fixture(scope="module")
def tiny():
    return export_audit.small_cnn(channels=4), export_audit.example_input(batch=2, image=8)


def test_export_drops_a_contiguous_that_was_a_no_op_for_its_example():
    found = export_traps.dropped_contiguous(batch=2, image=8, paths=("trace", "export"))
    assert not found.kept_by_export(NCHW)          # no-op for the NCHW example: nothing recorded
    assert found.kept_by_export(CHANNELS_LAST)     # a real copy for a channels_last example
    assert found.kept_by_trace                     # torch.jit.trace records the call itself
    exported = found.audit.row("torch.export").outcomes
    assert exported[NCHW].kind == CORRECT
    assert exported[CHANNELS_LAST].kind == REJECTED and "view" in exported[CHANNELS_LAST].detail
    assert found.audit.row("torch.jit.trace").correct_on_all
    assert "contiguous dropped" in repr(found)


def test_the_model_is_correct_in_eager_on_every_layout():
    model = export_traps.ContiguousThenView(image=8).eval()
    x = export_audit.example_input(2, 8)
    with torch.no_grad():
        outs = [model(v) for v in export_audit.layouts(x).values()]
    assert all(torch.allclose(outs[0], o) for o in outs)


def test_channels_last_model_declared_nchw(tiny):
    model, example = tiny
    found = export_traps.channels_last_declared_nchw(model, example, time_it=False)
    assert found.export_input.endswith("contiguous NCHW")
    assert found.trace_input.endswith("contiguous NCHW")
    assert found.export_first_conv_output.endswith("channels_last")
    assert found.onnx_same_graph is True and found.onnx_transposes == 0


def test_ort_layout_preference_counts_layout_nodes(tiny, tmp_path):
    model, example = tiny
    onnx_path = tmp_path / "model.onnx"  # reused as the notebook reuses the audit's export
    export_audit.export_onnx(model, example, onnx_path)
    found = export_traps.ort_layout_preference(model, example, time_it=False, onnx_path=onnx_path)
    assert [(s.declared, s.preference) for s in found.sessions] == [
        ("NCHW", "off"), ("NCHW", "on"), ("NHWC", "off"), ("NHWC", "on")]
    assert all(s.outcome.kind == CORRECT for s in found.sessions)
    nhwc_off = found.sessions[2]
    assert nhwc_off.node_counts.get("Transpose", 0) >= 1  # the declared NHWC input's permute
    assert found.sessions[0].layout_nodes() == 0           # nothing to convert with it off
    assert all(sum(s.node_counts.values()) > 0 for s in found.sessions)  # every graph was read
    assert "Transpose" in found.lines()[0]


def test_placement_and_fallback_on_a_cpu_only_machine(tiny):
    model, example = tiny
    if torch.cuda.is_available():
        pytest.skip("CPU-only expectations")
    placement = export_traps.ort_placement(model, example)
    assert set(placement) == {"CPUExecutionProvider"} and placement["CPUExecutionProvider"] > 0
    assert export_traps.ort_cpu_fallback_cost(model, example) is None


def test_tensorrt_is_detected_not_assumed(tiny):
    status = export_traps.tensorrt_status()
    assert set(status) == {"cuda", "tensorrt", "torch_tensorrt", "ort_tensorrt_provider_listed",
                           "ort_cuda_provider_listed"}
    model, example = tiny
    run = export_traps.run_torch_tensorrt(model, example)
    if not torch.cuda.is_available() or status["torch_tensorrt"] is None:
        assert not run.ran and run.skipped_because and "not run" in repr(run)
    ort_run = export_traps.run_ort_tensorrt(model, example, "unused.onnx")
    if not torch.cuda.is_available():
        assert not ort_run.ran and "no CUDA GPU" in repr(ort_run)
    assert "onnxruntime" in export_traps.environment_line()


def test_the_seeds_trace_example_cannot_feed_a_three_channel_model_as_written():
    model = export_traps.ContiguousThenView(image=8).eval()
    example = export_audit.example_input(2, 8)
    traced = torch.jit.trace(model, example)
    seed = export_traps.seed_trace_example(traced, example)
    assert seed["shape"] == [2, 8, 3, 8] and seed["outcome"] == "raised"
    assert "channels" in seed["error"]


def test_conv_output_strides_put_eager_beside_export_on_the_cpu():
    strides = export_traps.conv_output_strides(batch=2, image=8)
    assert [r["example"] for r in strides.rows] == [export_audit.NCHW, export_audit.CHANNELS_LAST]
    nchw, cl = strides.rows
    assert nchw["eager"] == (512, 64, 8, 1)
    assert cl["eager"] == (512, 1, 64, 8)  # the CPU kernel keeps channels_last
    assert all("export recorded" in line for line in strides.lines())
    assert strides.mismatched == [r["example"] for r in strides.rows if r["eager"] != r["export"]]


def test_a_cpu_session_is_timed_on_the_cpu_clock_wherever_the_example_lives():
    """Trap 3 timed ONNX Runtime's CPU sessions with CUDA events and L2 flushes on the H200:
    a CPU provider's work is host work, so its clock is the CPU's."""
    on_gpu = torch.empty(1, device="meta")  # stands for an example on a GPU, here without one
    assert export_traps.ort_clock("CPUExecutionProvider", on_gpu) == torch.device("cpu")
    assert export_traps.ort_clock("CUDAExecutionProvider", on_gpu) == on_gpu.device


def test_ort_layout_timing_runs_interleaved_on_the_cpu_clock(tiny, tmp_path):
    model, example = tiny
    onnx_path = tmp_path / "model.onnx"
    export_audit.export_onnx(model, example, onnx_path)
    found = export_traps.ort_layout_preference(model, example, rep_ms=20.0, onnx_path=onnx_path)
    timings = [v.timing for v in found.comparison.variants.values()]
    assert len(timings) == 4 and all(str(t.device) == "cpu" for t in timings)
    assert len(found.comparison.order) > len(timings)  # in rounds, not one block each


def test_trap_1_reads_the_conv_strides_off_its_own_two_exports():
    found = export_traps.dropped_contiguous(batch=2, image=8, paths=("trace",))
    assert found.conv_strides is not None
    assert found.conv_strides.rows == export_traps.conv_output_strides(batch=2, image=8).rows
    assert [r["example"] for r in found.conv_strides.rows] == list(found.exported_ops)


@pytest.mark.parametrize(("found", "said"), [(None, "torch_tensorrt is not installed"),
                                             ("present but not importable: ImportError",
                                              "torch_tensorrt is not usable here (present but not importable: ImportError)")])
def test_torch_tensorrt_on_a_gpu_without_it_says_why_in_few_words(monkeypatch, found, said):
    """On the H200 it read 'torch_tensorrt is not installed here (absent)': the page's words."""
    status = {"cuda": True, "tensorrt": None, "torch_tensorrt": found,
              "ort_tensorrt_provider_listed": False, "ort_cuda_provider_listed": False}
    monkeypatch.setattr(export_traps, "tensorrt_status", lambda: status)
    run = export_traps.run_torch_tensorrt(None, None)
    assert not run.ran and run.skipped_because == said
