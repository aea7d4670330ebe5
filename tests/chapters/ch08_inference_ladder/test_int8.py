"""Issue 41's 'INT8 where PyTorch can run it on the GPU': the 1x1 GEMMs in int8 through
torch._int_mm (labkit.chapters.ch08_inference_ladder.int8), checked on the CPU, where
torch._int_mm runs too: the integer GEMM is exact, the scales map each amax to 127, and the
INT8 rung goes through the same gate as FP8 (bfloat16's tolerance). The GPU's speed is the
next record's (benchmarks/gpu_past_defaults.py's 'INT8 per-channel weights')."""

import pytest
import torch

from labkit.chapters.ch08_inference_ladder import fp8, int8, numerics, past_defaults
from labkit.chapters.ch08_inference_ladder import fused_epilogue as fe


def test_int_mm_is_an_exact_int32_gemm_and_the_scales_map_amax_to_127():
    torch.manual_seed(0)
    a = torch.randint(-127, 128, (32, 64), dtype=torch.int8)
    w = torch.randint(-127, 128, (48, 64), dtype=torch.int8)
    assert torch.equal(torch._int_mm(a, w.t()), a.int() @ w.int().t())
    assert float(int8.scale_for(2.54)) == pytest.approx(0.02)
    q = int8.quantise(torch.tensor([2.54, -2.54, 10.0, 0.004]), int8.scale_for(2.54))
    assert q.tolist() == [127, -127, 127, 0]                   # saturates; rounds to nearest
    # 127 uniform steps per row: a Gaussian weight's L2 error near 1%, well under FP8's 3 bits
    w = torch.randn(256, 512)
    assert 1e-3 < int8.round_trip_error(w) < fp8.round_trip_error(w, "per-channel")


def test_the_int8_gemm_matches_the_float_gemm_and_keeps_its_scales_float32_through_half():
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(64, 128, 1)
    x = torch.randn(2, 64, 8, 8).to(memory_format=torch.channels_last)
    gemm = int8.Int8Gemm(conv, float(x.abs().amax()))
    a = fe.to_rows(x)
    expected = a @ conv.weight.detach().flatten(1).t()
    assert numerics.relative_error(gemm(a, torch.float32), expected) < 0.03
    gemm.half()
    assert gemm.weight_q.dtype == torch.int8 and gemm.w_scale.dtype == torch.float32
    layer = fe.Conv1x1(conv, "int8", gemm)
    res = torch.randn(2, 128, 8, 8).to(memory_format=torch.channels_last)
    want = torch.relu(torch.nn.functional.conv2d(x, conv.weight, conv.bias) + res)
    assert numerics.relative_error(layer(x, res).float(), want) < 0.03
    with pytest.raises(fe.EpilogueError):
        fe.Conv1x1(conv, "int8", None)


def test_the_int8_rung_is_gated_at_fp8s_tolerance_and_the_gpu_lever_says_why_it_skips_here():
    runner = past_defaults.Runner(torch.device("cpu"), 32, past_defaults.CPU_TOP, rounds=2,
                                  rep_ms=20.0, profile_batches=0)
    assert runner.measure_top().status == "measured"
    row = runner.measure(past_defaults.Lever("INT8 (CPU)", "test", model="int8"))
    assert row.gate["math"] == past_defaults.FP8_GATE_MATH and row.as_expected is None
    assert row.status in ("measured", "refused") and "INT8 GEMM" in row.note
    honest = next(lv for lv in past_defaults.cpu_levers() if lv.model == "fp8:per-tensor" and not lv.needs)
    fp8_row = runner.measure(honest)
    # int8's 127 uniform steps against e4m3's 3 mantissa bits on the same calibrated amax
    assert row.gate["rel_error"] < fp8_row.gate["rel_error"]
    gpu = next(lv for lv in past_defaults.gpu_levers() if lv.model == "int8")
    assert "_int_mm" in past_defaults.missing(gpu, torch.device("cpu"))
