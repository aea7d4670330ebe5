"""The fused-epilogue Triton kernel before the H200 (issue 41): what its launcher refuses
before Triton sees it, how it picks float32's precision, that the case check bites, and (where
triton is importable) the kernel itself run by Triton's interpreter on this CPU against
float64 PyTorch through benchmarks/cpu_triton_interpret.py --quick, and the folded ResNet-50
with it as the op's kernel, eager and through Inductor. CI has no triton: that test skips
there, with the reason."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from labkit.chapters.ch08_inference_ladder import fused_epilogue as fe
from tests import triton_interpreter

ROOT = Path(__file__).resolve().parents[3]
NO_TRITON = importlib.util.find_spec("triton") is None


def _meta_gemm(m: int, k: int, n: int, dtype: torch.dtype = torch.float16, residual: bool = True):
    """Operands on the meta device: shapes and strides without memory, so huge batches check."""
    a = torch.empty(m, k, device="meta", dtype=dtype)
    w = torch.empty(k, n, device="meta", dtype=dtype)
    b = torch.empty(n, device="meta", dtype=dtype)
    r = torch.empty(m, n, device="meta", dtype=dtype) if residual else None
    return a, w, b, r


# ------------------------------------------------------------------ what the launcher refuses
def test_resnet50_shapes_fit_int32_offsets_at_batch_1024_but_not_4096():
    for shape in fe.resnet50_gemm_shapes(1024, 224):
        fe.check_gemm(*_meta_gemm(shape["M"], shape["K"], shape["N"], residual=shape["residual"]))
    widest = max(fe.resnet50_gemm_shapes(4096, 224), key=lambda s: s["M"] * max(s["K"], s["N"]))
    with pytest.raises(fe.EpilogueError, match="int32"):
        fe.check_gemm(*_meta_gemm(widest["M"], widest["K"], widest["N"]))
    # the line itself: 2**31 elements (largest offset 2**31 - 1) taken, one row more refused
    fe.check_gemm(*_meta_gemm(2 ** 21, 2 ** 10, 8, residual=False))
    with pytest.raises(fe.EpilogueError, match="a spans 2,147,484,672"):
        fe.check_gemm(*_meta_gemm(2 ** 21 + 1, 2 ** 10, 8, residual=False))


def test_launcher_refuses_mixed_dtypes_devices_and_empty_gemms():
    a, w, b, r = _meta_gemm(10, 16, 8)
    with pytest.raises(fe.EpilogueError, match="share one of"):
        fe.check_gemm(a, w.float(), b, r)
    with pytest.raises(fe.EpilogueError, match="share one of"):
        fe.check_gemm(a.double(), w.double(), b, r)
    with pytest.raises(fe.EpilogueError, match="several devices"):
        fe.check_gemm(a, w, torch.zeros(8, dtype=torch.float16), r)
    with pytest.raises(fe.EpilogueError, match="empty GEMM"):
        fe.check_gemm(*_meta_gemm(0, 16, 8))
    with pytest.raises(fe.EpilogueError, match="bias"):
        fe.check_gemm(a, w, torch.empty(9, device="meta", dtype=torch.float16), r)
    with pytest.raises(fe.EpilogueError, match="residual"):
        fe.check_gemm(a, w, b, torch.empty(10, 9, device="meta", dtype=torch.float16))


def test_forced_configs_must_be_tile_shapes():
    for bad in ((128, 256, 64, 3), (100, 128, 64, 3, 4), (128, 128, 8, 3, 4), (128, 128, 64, 0, 4)):
        with pytest.raises(fe.EpilogueError, match="config must be"):
            fe._meta(bad)
    assert fe._meta(fe.TUNING_CONFIGS[0]) == {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64,
                                              "GROUP_M": 8, "num_stages": 3, "num_warps": 8}


def test_the_op_refuses_a_bias_or_residual_of_another_dtype():
    """On the CPU a float32 bias promoted an fp16 output to float32 while the fake said fp16."""
    x = torch.randn(1, 8, 3, 3, dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    w, b = torch.randn(8, 4, dtype=torch.float16), torch.randn(4, dtype=torch.float16)
    with pytest.raises(fe.EpilogueError, match="bias is torch.float32"):
        torch.ops.labkit.gemm_bias_res_relu(x, w, b.float(), None, True)
    with pytest.raises(fe.EpilogueError, match="residual is torch.float32"):
        torch.ops.labkit.gemm_bias_res_relu(x, w, b, torch.randn(1, 4, 3, 3), True)
    assert torch.ops.labkit.gemm_bias_res_relu(x, w, b, None, True).dtype == torch.float16


@pytest.mark.skipif(not NO_TRITON, reason="checks the message shown where triton is absent")
def test_without_triton_the_launch_and_the_interpreter_say_why():
    a, w, b = torch.randn(4, 16), torch.randn(16, 8), torch.randn(8)
    with pytest.raises(fe.EpilogueError, match="triton is not installed|no CUDA GPU"):
        fe.triton_gemm(a, w, b)
    assert "triton is not installed" in fe.interpreter_missing()
    with pytest.raises(fe.EpilogueError, match="triton is not installed"):
        fe.triton_gemm(a, w, b, config=fe.TUNING_CONFIGS[0], interpret=True)


def test_float32_precision_follows_torchs_matmul_setting(monkeypatch):
    """Triton's tl.dot takes float32 operands as TF32 unless told: the launch says what torch's
    own matmul would do, from the legacy setting or the new one, without raising when mixed."""
    saved = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        assert fe.fp32_precision() == "ieee"
        torch.set_float32_matmul_precision("high")
        assert fe.fp32_precision() == "tf32"
    finally:
        torch.set_float32_matmul_precision(saved)

    class Mixed:
        """torch 2.9+ once both APIs were used: the new setting reads, allow_tf32 raises."""
        def __init__(self, precision: str) -> None:
            self.fp32_precision = precision

        @property
        def allow_tf32(self) -> bool:
            raise RuntimeError("you have used mix of the legacy and new APIs")

    for new, want in (("ieee", "ieee"), ("tf32", "tf32")):
        monkeypatch.setattr(torch.backends.cuda, "matmul", Mixed(new))
        assert fe.fp32_precision() == want
    monkeypatch.setattr(torch.backends.cuda, "matmul", Mixed("none"))   # "none": the global one
    monkeypatch.setattr(torch.backends, "fp32_precision", "tf32", raising=False)
    assert fe.fp32_precision() == "tf32"
    monkeypatch.setattr(torch.backends, "fp32_precision", "none", raising=False)
    assert fe.fp32_precision() in ("ieee", "tf32")   # from get_float32_matmul_precision, no raise


def test_shared_memory_fp16_configs_fit_an_h200_sm_and_two_fp32_ones_do_not():
    limit = 227 * 1024                              # what one block may take on sm_90
    fp16 = [fe.shared_memory_bytes(c, 2) for c in fe.TUNING_CONFIGS]
    assert max(fp16) == 144 * 1024 and all(b <= limit for b in fp16)
    too_big = [fe.config_name(c) for c in fe.TUNING_CONFIGS if fe.shared_memory_bytes(c, 4) > limit]
    assert too_big == ["128x256x64 w8 s3", "128x128x64 w8 s4"]   # the autotuner drops these in fp32


# ------------------------------------------------------------------ the check bites
def test_compare_passes_output_rounding_and_fails_a_dropped_bias():
    torch.manual_seed(0)
    ref = torch.randn(50, 40, dtype=torch.float64) * 3
    rounded = ref.half()
    good = fe.compare(rounded, ref, fe.TOLERANCES["float16"])
    assert good["passed"] and 0 < good["max_rel"] < 2 ** -11 * 1.01
    dropped = fe.compare((ref - 0.5).half(), ref, fe.TOLERANCES["float16"])   # a bias of 0.5 lost
    assert not dropped["passed"] and dropped["max_rel"] > 10 * fe.TOLERANCES["float16"]
    one_nan = rounded.clone()
    one_nan[3, 4] = float("nan")
    assert not fe.compare(one_nan, ref, 1.0)["passed"]
    with pytest.raises(fe.EpilogueError, match="shape"):
        fe.compare(ref[:-1], ref, 1.0)


def test_check_case_records_a_failure_instead_of_raising():
    row = fe.check_case(1, 3, 8, 4, True, True, torch.float16, fe.TUNING_CONFIGS[0],
                        interpret=False)   # CPU tensors, no interpreter asked for
    assert row["passed"] is False and row["error"].startswith("EpilogueError")
    assert row["M"] == 9 and row["config"] == "128x256x64 w8 s3" and row["layout"] == "channels_last"


# ------------------------------------------------------------------ Triton's interpreter
@pytest.mark.skipif(NO_TRITON, reason="triton is not importable here (CI has none): the kernel "
                                      "runs under Triton's interpreter only where triton is")
@pytest.mark.parametrize("configs", ["standard", "wide-extra"])
def test_the_kernel_under_tritons_interpreter_matches_pytorch(tmp_path, configs):
    """A subprocess, because Triton chooses the interpreter when it is first imported; the
    standard configs, and those issue 41's wider tuning adds (other K tiles, two stages)."""
    if triton_interpreter.cannot_loop():  # Triton 3.6 with NumPy 2.4 (the module says why)
        pytest.skip(triton_interpreter.cannot_loop())
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cpu_triton_interpret.py"),
                           "--out", str(tmp_path), "--quick", "--configs", configs], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    record = json.loads((tmp_path / "cpu_triton_interpret.json").read_text())
    assert record["machine"] == "this CPU, Triton interpreter" and "NOT an H200" in record["note"]
    cases = record["cases"]
    assert len(cases) == record["passed"] >= 40 and record["failed"] == 0
    assert {c["dtype"] for c in cases} == {"float16", "float32"}
    assert len({c["config"] for c in cases}) >= 2 and {c["layout"] for c in cases} == {"channels_last", "nchw"}
    forced = fe.WIDE_EXTRA_CONFIGS if configs == "wide-extra" else fe.TUNING_CONFIGS
    assert {c["config"] for c in cases} <= {fe.config_name(c) for c in forced}
    assert {(c["residual"], c["relu"]) for c in cases} >= {(True, True), (False, True), (False, False)}
    assert any(c["M"] % 64 for c in cases) and any(c["K"] % 64 for c in cases)
    assert any(c["prologue"] and c["M"] % 64 for c in cases)   # the prologue, off the tiles too
    for case in cases:
        assert case["passed"] and case["layout_ok"] and case["max_rel"] <= case["tolerance"], case
    # the whole folded ResNet-50 on the interpreted kernel, eager and through Inductor
    network = record["network"]
    assert network["kernel_calls_eager"] == network["kernel_calls_inductor"] == 33, network
    assert max(network["rel_error_eager"], network["rel_error_inductor"]) <= 1e-5, network
