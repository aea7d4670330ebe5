"""Past the defaults (issue 41): the payback and keep arithmetic, FP8 scales and rounding, the
1x1-conv-as-GEMM path against PyTorch's convolution, the gate on FP8 rungs, and the GPU
script's CPU smoke path. The GPU legs (Inductor, Triton, _scaled_mm) run in
benchmarks/gpu_past_defaults.py; the Triton kernel's own check runs only where CUDA is."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
import torch
from torch import nn

from labkit.chapters.ch08_inference_ladder import fp8, ladder, numerics, past_defaults
from labkit.chapters.ch08_inference_ladder import fused_epilogue as fe

ROOT = Path(__file__).resolve().parents[3]


# ------------------------------------------------------------------ payback and keep
def test_payback_is_compile_over_seconds_saved_per_batch():
    # 12 s of compile, 10 ms -> 8 ms per batch: 2 ms saved, 6,000 batches to pay back
    assert past_defaults.payback(12.0, 0.010, 0.008) == pytest.approx(6000.0)
    assert past_defaults.payback(12.0, 0.008, 0.010) == math.inf      # slower: never
    assert past_defaults.payback(12.0, 0.010, 0.010) == math.inf      # no saving: never
    assert past_defaults.payback(0.0, 0.010, 0.012) == 0.0           # nothing to pay back


@pytest.mark.parametrize("args", [(-1.0, 0.01, 0.008), (1.0, 0.0, 0.008), (1.0, 0.01, -0.1),
                                  (float("nan"), 0.01, 0.008), (True, 0.01, 0.008),
                                  ("3", 0.01, 0.008), (1.0, float("inf"), 0.008)])
def test_payback_refuses_bad_input(args):
    with pytest.raises(past_defaults.PastDefaultsError):
        past_defaults.payback(*args)


def test_keep_only_when_the_gain_interval_excludes_one():
    assert past_defaults.keep(True, "", (1.05, 1.02, 1.08)).kept
    held = past_defaults.keep(True, "", (1.03, 0.99, 1.06))
    assert not held.kept and "holds 1" in held.why
    slower = past_defaults.keep(True, "", (0.95, 0.93, 0.97))
    assert not slower.kept and "slower" in slower.why
    refused = past_defaults.keep(False, "logits off", (1.5, 1.4, 1.6))
    assert not refused.kept and "numerics gate" in refused.why
    assert not past_defaults.keep(True, "", None).kept
    with pytest.raises(past_defaults.PastDefaultsError):
        past_defaults.keep(True, "", (1.2, 0.9, 1.1))   # a median outside its own interval


def test_only_measured_rungs_rank_and_by_speed():
    rows = [past_defaults.Row("slow", "", "measured", images_per_s=100.0),
            past_defaults.Row("wrong but fast", "", "refused", images_per_s=900.0),
            past_defaults.Row("broke", "", "failed"),
            past_defaults.Row("fast", "", "measured", images_per_s=300.0),
            past_defaults.Row("emulated", "", "gated only")]
    assert [r.name for r in past_defaults.ranked(rows)] == ["fast", "slow"]


def test_a_lever_whose_base_did_not_run_is_skipped_with_the_reason():
    runner = past_defaults.Runner(torch.device("cpu"), 32, past_defaults.CPU_TOP, rounds=2,
                                  rep_ms=20.0, profile_batches=0)
    lever = past_defaults.Lever("gemm", "test", model="gemm-torch")
    row = runner.measure(lever)          # the top rung was never measured
    assert row.status == "skipped" and "was not measured" in row.note


# ------------------------------------------------------------------ FP8 scales and rounding
def test_scale_maps_amax_to_e4m3_max_and_saturates_beyond():
    assert fp8.E4M3_MAX == 448.0
    scale = fp8.scale_for(3.5)
    assert float(scale) == pytest.approx(3.5 / 448)
    t = torch.tensor([3.5, -3.5, 7.0, -100.0, 0.0])
    q = fp8.quantise(t, scale)
    assert q.dtype == torch.float8_e4m3fn
    assert q.float().tolist()[:2] == [448.0, -448.0]
    back = fp8.dequantise(q, scale)
    assert torch.isfinite(back).all()                        # saturated, never NaN
    assert back[2] == pytest.approx(3.5) and back[3] == pytest.approx(-3.5)
    assert float(fp8.scale_for(0.0)) == 1.0


def test_round_trip_error_is_e4m3s_rounding_and_per_channel_beats_per_tensor():
    torch.manual_seed(0)
    w = torch.randn(256, 512)
    err = fp8.round_trip_error(w, "per-tensor")
    # 3 mantissa bits: a half-ulp is 2^-4 relative per element; the L2 error of a Gaussian
    # tensor sits well inside it but well above fp16's (2^-11)
    assert 2 ** -11 < err < 2 ** -4
    # rows a million times apart: one scale for all pushes the small rows into e4m3's
    # subnormals (or to zero); a scale per row keeps every row at full precision
    skewed = w * torch.logspace(-6, 0, 256).unsqueeze(1)
    per_tensor = fp8.round_trip_error(skewed, "per-tensor")
    per_channel = fp8.round_trip_error(skewed, "per-channel")
    assert per_channel < 2 ** -4
    row_err = (fp8.dequantise(fp8.quantise(skewed, fp8.weight_scale(skewed)), fp8.weight_scale(skewed))
               - skewed).norm(dim=1) / skewed.norm(dim=1)
    assert float(row_err[:16].min()) > 0.9                   # the smallest rows are lost per-tensor
    assert per_channel <= per_tensor


@pytest.mark.parametrize("amax", [float("nan"), -1.0, float("inf")])
def test_scale_refuses_bad_amax(amax):
    with pytest.raises(fp8.Fp8Error):
        fp8.scale_for(amax)


def test_weight_scale_refuses_bad_input():
    with pytest.raises(fp8.Fp8Error):
        fp8.weight_scale(torch.randn(4, 4), "per-row")
    with pytest.raises(fp8.Fp8Error):
        fp8.weight_scale(torch.randn(4, 4, 1, 1))


def test_calibration_reads_each_convolutions_input_amax():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(16, 32, 1), nn.ReLU(), nn.Conv2d(32, 16, 1)).eval()
    x = torch.randn(3, 16, 5, 5)
    amax = fp8.calibrate_amax(model, x, ["0", "2"])
    assert amax["0"] == pytest.approx(float(x.abs().amax()))
    with torch.no_grad():
        assert amax["2"] == pytest.approx(float(torch.relu(model[0](x)).abs().amax()))
    with pytest.raises(fp8.Fp8Error):
        fp8.calibrate_amax(model, x, ["nope"])


def test_emulated_fp8_gemm_matches_scaled_mm_where_the_cpu_has_it():
    torch.manual_seed(0)
    conv = nn.Conv2d(64, 32, 1)
    a = torch.randn(40, 64)
    emulated = fp8.Fp8Gemm(conv, float(a.abs().amax()), emulate=True)(a, torch.float32)
    real = fp8.Fp8Gemm(conv, float(a.abs().amax()), emulate=False)
    try:
        out = real(a, torch.float32)
    except (RuntimeError, NotImplementedError) as error:
        pytest.skip(f"torch._scaled_mm does not run on this CPU: {str(error)[:120]}")
    assert torch.allclose(out, emulated, rtol=1e-4, atol=1e-4)


def test_fp8_weights_and_scales_survive_the_rungs_move_to_float16():
    """A rung's model is moved with .to(device, float16, channels_last): float8 counts as
    floating point, so without Fp8Gemm's own _apply the e4m3 weights would become fp16."""
    torch.manual_seed(0)
    conv = nn.Conv2d(32, 16, 1)
    gemm = fe.Conv1x1(conv, "fp8", fp8.Fp8Gemm(conv, 3.0, "per-channel", emulate=True))
    before = gemm.gemm.weight_q.clone()
    gemm = gemm.to(dtype=torch.float16, memory_format=torch.channels_last)
    assert gemm.gemm.weight_q.dtype == torch.float8_e4m3fn
    assert torch.equal(gemm.gemm.weight_q.view(torch.uint8), before.view(torch.uint8))
    assert gemm.gemm.w_scale.dtype == gemm.gemm.a_scale.dtype == torch.float32
    assert gemm.bias.dtype == torch.float16          # the rest of the model does move


# ------------------------------------------------------------------ the GEMM path
def _nhwc(*shape):
    return torch.randn(*shape).contiguous(memory_format=torch.channels_last)


def test_1x1_conv_as_gemm_equals_conv_bias_residual_relu():
    torch.manual_seed(0)
    conv = nn.Conv2d(32, 48, 1).double()
    x, res = _nhwc(2, 32, 5, 7).double(), _nhwc(2, 48, 5, 7).double()
    expected = torch.relu(nn.functional.conv2d(x, conv.weight, conv.bias) + res)
    got = fe.Conv1x1(conv, "torch")(x, res)
    assert got.shape == expected.shape
    assert torch.allclose(got, expected, rtol=1e-12, atol=1e-12)
    no_res = fe.Conv1x1(conv, "torch")(x, relu=False)
    assert torch.allclose(no_res, nn.functional.conv2d(x, conv.weight, conv.bias), atol=1e-12)
    # the NHWC rows are the channels_last tensor's own memory: no copy
    assert fe.to_rows(x).data_ptr() == x.data_ptr()


def test_gemm_path_refuses_what_is_not_a_gemm():
    with pytest.raises(fe.EpilogueError):
        fe.Conv1x1(nn.Conv2d(8, 8, 3), "torch")
    with pytest.raises(fe.EpilogueError):
        fe.Conv1x1(nn.Conv2d(8, 8, 1), "cublas")
    with pytest.raises(fe.EpilogueError):
        fe.reference(torch.randn(4, 8), torch.randn(6, 9), None)
    with pytest.raises(fe.EpilogueError):
        fe.GemmResNet(ladder.seeded_model(), fe.torch_backend)   # BatchNorms not folded


def test_gemm_resnet_equals_the_folded_network():
    settings = ladder.Settings(channels_last=True, fold_bn=True, batch=4)
    folded = ladder.build_model(settings, ladder.resnet.resnet50, 0, 32)
    gemm = fe.GemmResNet(folded, fe.torch_backend)
    # conv1 and conv3 of 16 blocks, and layer1's stride-1 shortcut
    assert len(gemm.replaced) == 33 == len(fe.gemm_convs(folded))
    x = numerics.fixed_images(4, 32).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        assert numerics.relative_error(gemm(x), folded(x)) < 1e-5
    shapes = fe.resnet50_gemm_shapes(256, 224)
    assert sum(s["count"] for s in shapes) == 33
    # layer2's first conv1 runs before the stride (on conv2): 56 x 56, 256 -> 128
    assert {"M": 256 * 56 * 56, "K": 256, "N": 128, "side": 56, "residual": False,
            "count": 1} in shapes


def test_shape_benchmark_checks_every_path_it_can_run_against_float32():
    """On the CPU (no device clock) only the cuDNN-path and cuBLAS-path errors are read."""
    result = fe.bench_shapes(1, 32, torch.device("cpu"), calls=1)
    assert len(result["shapes"]) == len(fe.resnet50_gemm_shapes(1, 32))
    for row in result["shapes"]:
        for path in ("cudnn + separate", "cublas + separate"):
            assert row[path]["rel_error"] < 5e-3, (row, path)      # fp16 against float32
        assert "triton fused" not in row and "fp8 + separate" not in row
    assert result["total_ms_per_batch"] == {} and result["errors"] == {}


@pytest.mark.skipif(bool(fe.triton_available()), reason=fe.triton_available() or "runs")
def test_triton_kernel_equals_conv_bias_residual_relu_on_the_gpu():
    torch.manual_seed(0)
    conv = nn.Conv2d(256, 64, 1).cuda().half()
    x = _nhwc(4, 256, 14, 14).cuda().half()
    res = _nhwc(4, 64, 14, 14).cuda().half()
    expected = torch.relu(nn.functional.conv2d(x.float(), conv.weight.float(), conv.bias.float())
                          + res.float())
    got = fe.Conv1x1(conv, "triton")(x, res).float()
    assert numerics.relative_error(got, expected) < 2e-3


# ------------------------------------------------------------------ the gate on FP8 rungs
def test_gate_refuses_an_fp8_rung_whose_scale_is_wrong():
    """Emulated on the CPU: the same e4m3 values the GPU's _scaled_mm multiplies."""
    runner = past_defaults.Runner(torch.device("cpu"), 32, past_defaults.CPU_TOP, rounds=2,
                                  rep_ms=20.0, profile_batches=0)
    honest, wrong = (lv for lv in past_defaults.cpu_levers()
                     if lv.model in ("fp8:per-tensor", "fp8-wrong") and not lv.needs)
    assert runner.measure_top().status == "measured"
    honest_row, wrong_row = runner.measure(honest), runner.measure(wrong)
    assert wrong_row.status == "refused" and wrong_row.as_expected is True
    assert not wrong_row.gate["passed"]
    # refused by a margin, not by a hair: the saturated rung is off several times more
    assert wrong_row.gate["rel_error"] > 3 * honest_row.gate["rel_error"]
    assert honest_row.gate["math"] == wrong_row.gate["math"] == past_defaults.FP8_GATE_MATH
    assert honest_row.status in ("refused", "gated only")       # never timed: emulated


# ------------------------------------------------------------------ the script's smoke path
def test_script_smoke_path_on_the_cpu(tmp_path, monkeypatch):
    # the script points Inductor's and Triton's caches at a fresh directory; undo it afterwards
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import gpu_past_defaults

    started = time.perf_counter()
    code = gpu_past_defaults.main(["--out", str(tmp_path), "--device", "cpu", "--image", "32",
                                   "--batch", "4", "--rounds", "2", "--rep-ms", "20"])
    elapsed = time.perf_counter() - started
    assert code == 0
    assert elapsed < 60
    record = json.loads((tmp_path / "past_defaults.json").read_text())
    rows = {r["name"]: r for r in record["rows"]}
    assert rows["top rung"]["status"] == "measured" and rows["top rung"]["images_per_s"] > 0
    assert rows["GEMM path in torch (CPU)"]["status"] == "measured"
    assert rows["FP8 wrong activation scale (emulated)"]["status"] == "refused"
    for name in ("freezing", "conv_1x1_as_mm", "max-autotune", "max-autotune-no-cudagraphs"):
        assert rows[name]["status"] == "skipped" and "Inductor" in rows[name]["note"]
    assert rows["Triton fused epilogue"]["status"] == "skipped" and rows["Triton fused epilogue"]["note"]
    for name in (past_defaults.TRITON_COMPILED, past_defaults.TRITON_COMPILED_1024):
        assert rows[name]["status"] == "skipped" and "Triton" in rows[name]["note"], rows[name]
    assert rows["FP8 per-tensor"]["status"] == "skipped" and "CUDA" in rows["FP8 per-tensor"]["note"]
    assert all(r["status"] != "failed" for r in record["rows"]), [r["note"] for r in record["rows"]]
    text = (tmp_path / "past_defaults.txt").read_text()
    assert "top rung" in text and "refused" in text
