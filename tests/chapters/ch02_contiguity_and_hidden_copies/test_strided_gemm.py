"""The stride-aware GEMM of claim C10: clear refusals everywhere, correctness on a GPU, and the
profiler-based copy finder that sees copies the top-level copy detector cannot."""

import pytest
import torch

from labkit.chapters.ch02_contiguity_and_hidden_copies import strided_gemm as sg
from labkit.measure import copies

needs_triton = pytest.mark.skipif(not sg.strided_kernels.triton_available(),
                                  reason="needs a CUDA GPU and triton")


def test_bad_inputs_get_clear_errors():
    a, b = torch.randn(4, 3), torch.randn(3, 5)
    with pytest.raises(TypeError, match="a must be a tensor"):
        sg.matmul([[1.0]], b)
    with pytest.raises(ValueError, match="must be 2-D"):
        sg.matmul(torch.randn(2, 4, 3), b)
    with pytest.raises(ValueError, match="inner sizes differ"):
        sg.matmul(a, torch.randn(4, 5))
    with pytest.raises(ValueError, match="dtype torch.int64"):
        sg.matmul(a.long(), b.long())
    with pytest.raises(ValueError, match="share dtype and device"):
        sg.matmul(a, b.half())


@pytest.mark.skipif(sg.strided_kernels.triton_available(), reason="checks the message shown without a GPU")
def test_without_a_gpu_says_why():
    with pytest.raises(RuntimeError, match="needs a CUDA GPU and the triton package"):
        sg.matmul(torch.randn(4, 3).t(), torch.randn(4, 5))


def test_paths_on_the_cpu_are_torch_only_and_agree():
    a_view = torch.randn(48, 32).t()
    b = torch.randn(48, 16)
    variants = sg.paths(a_view, b)
    assert set(variants) == {"torch.matmul on the view", "contiguous() then torch.matmul"}
    for fn in variants.values():
        torch.testing.assert_close(fn(), a_view @ b)


def test_copies_inside_sees_what_the_copy_detector_cannot():
    a, b = torch.randn(64, 64), torch.randn(32, 32)
    stepped = lambda: a[::2, ::2] @ b  # noqa: E731 -- mm copies the stepped view inside its kernel
    assert copies.bytes_copied(stepped) == 0
    assert "aten::copy_" in sg.copies_inside(stepped)
    assert sg.copies_inside(lambda: a.t() @ a) == []  # BLAS takes the transpose as a flag


def test_float32_math_follows_torch_setting():
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        assert sg._ieee_float32(torch.float32) and not sg._ieee_float32(torch.float16)
        torch.set_float32_matmul_precision("high")
        assert not sg._ieee_float32(torch.float32)
    finally:
        torch.set_float32_matmul_precision(before)


@needs_triton
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("make", [lambda t: t, lambda t: t.t(), lambda t: t[::2, 1::3], lambda t: t[:301, :77]])
def test_matches_torch_on_any_view(dtype, make):
    a = make(torch.randn(400, 400, device="cuda", dtype=dtype))
    b = torch.randn(a.shape[1], 130, device="cuda", dtype=dtype).t().contiguous().t()
    got = sg.matmul(a, b).double()
    want = a.double() @ b.double()
    scale = float(want.abs().max())
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    assert float((got - want).abs().max()) <= tolerance * scale


@needs_triton
@pytest.mark.gpu
def test_out_is_checked_and_written():
    a, b = torch.randn(64, 32, device="cuda").t(), torch.randn(64, 16, device="cuda")
    out = torch.empty(32, 16, device="cuda")
    assert sg.matmul(a, b, out=out) is out
    with pytest.raises(ValueError, match="out must be a"):
        sg.matmul(a, b, out=torch.empty(16, 32, device="cuda"))
