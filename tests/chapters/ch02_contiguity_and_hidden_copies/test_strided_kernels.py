"""The stride-aware kernels: torch paths on any device, Triton paths on a CUDA GPU."""

import pytest
import torch

from labkit.chapters.ch02_contiguity_and_hidden_copies import strided_kernels as sk

needs_triton = pytest.mark.skipif(not sk.triton_available(), reason="needs a CUDA GPU and triton")


def transposed(rows=37, cols=53, device="cpu"):
    return torch.randn(cols, rows, device=device).t()


def test_unit_stride_dim():
    x = torch.randn(6, 5)
    assert sk.unit_stride_dim(x) == 1
    assert sk.unit_stride_dim(x.t()) == 0
    assert sk.unit_stride_dim(x[::2, ::2]) == -1


@pytest.mark.parametrize("path", [sk.torch_strided, sk.torch_copy_then_kernel])
def test_torch_paths_compute_the_same(path):
    x = transposed()
    out = torch.empty(x.shape)
    path(x, out, 3.0, -1.0)
    torch.testing.assert_close(out, x * 3.0 - 1.0)


def test_bytes_moved_counts_passes():
    x = transposed(4, 8)
    assert sk.bytes_moved(x, "strided") == 2 * 32 * 4
    assert sk.bytes_moved(x, "copy_then_kernel") == 4 * 32 * 4
    # PyTorch's CPU path is two ops (mul into out, add in place): 4N and, with the copy, 6N
    assert sk.bytes_moved(x, "strided", "torch-elementwise") == 4 * 32 * 4
    assert sk.bytes_moved(x, "copy_then_kernel", "torch-elementwise") == 6 * 32 * 4
    with pytest.raises(ValueError, match="kernel"):
        sk.bytes_moved(x, "strided", "cuda-graph")
    with pytest.raises(ValueError, match="path must be one of"):
        sk.bytes_moved(x, "magic")


def test_bad_inputs_get_clear_errors():
    x = transposed()
    with pytest.raises(ValueError, match="out must be a contiguous tensor"):
        sk.torch_strided(x, torch.empty(3, 3))
    with pytest.raises(ValueError, match="2-D tensor"):
        sk.torch_strided(torch.randn(2, 3, 4), torch.empty(2, 3, 4))
    with pytest.raises(TypeError, match="expected a tensor"):
        sk.unit_stride_dim([[1.0]])


def test_paths_pick_the_device_kernel():
    x = transposed()
    kernel, variants = sk.paths(x, torch.empty(x.shape))
    assert kernel == "torch-elementwise"
    assert set(variants) == {"stride-aware", "contiguous() then kernel"}
    for fn in variants.values():
        torch.testing.assert_close(fn(), x * 2.0 + 1.0)


@pytest.mark.skipif(sk.triton_available(), reason="checks the message shown without a GPU")
def test_triton_without_gpu_says_why():
    x = transposed()
    with pytest.raises(RuntimeError, match="need a CUDA GPU and the triton package"):
        sk.triton_strided(x, torch.empty(x.shape))


@needs_triton
@pytest.mark.gpu
@pytest.mark.parametrize("make", [lambda x: x, lambda x: x.t(), lambda x: x[::2, ::3]])
def test_triton_strided_matches_torch(make):
    base = torch.randn(300, 200, device="cuda")
    x = make(base)
    out = torch.empty(x.shape, device="cuda")
    sk.triton_strided(x, out)
    torch.testing.assert_close(out, x * 2.0 + 1.0)
    out2 = torch.empty(x.shape, device="cuda")
    sk.triton_copy_then_kernel(x, out2)
    torch.testing.assert_close(out2, x * 2.0 + 1.0)


@needs_triton
@pytest.mark.gpu
def test_triton_contiguous_refuses_a_view():
    x = torch.randn(64, 32, device="cuda").t()
    with pytest.raises(ValueError, match="needs a contiguous x"):
        sk.triton_contiguous(x, torch.empty(x.shape, device="cuda"))
