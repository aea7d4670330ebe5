"""The fused elementwise chain and the Triton add: correct on every path, bytes counted right."""

import pytest
import torch

from labkit.chapters.ch04_fusion import fused_kernels

gpu = pytest.mark.skipif(not fused_kernels.triton_available(), reason="needs a CUDA GPU and Triton")


def _operands(n, device="cpu", dtype=torch.float32):
    g = torch.Generator(device="cpu").manual_seed(n)
    return [torch.randn(n, generator=g).to(device=device, dtype=dtype) for _ in range(3)]


@pytest.mark.parametrize("n", [1, 5, 1000, 70_001])
def test_blocked_chain_equals_eager(n):
    x, y, z = _operands(n)
    torch.testing.assert_close(fused_kernels.chain_blocked(x, y, z, block=4096),
                               fused_kernels.chain_eager(x, y, z))


def test_blocked_chain_keeps_the_shape_and_takes_views():
    x, y, z = (t.reshape(70, 10).t() for t in _operands(700))
    out = fused_kernels.chain_blocked(x, y, z, block=64)
    assert out.shape == (10, 70)
    torch.testing.assert_close(out, torch.nn.functional.silu((x + y) * z))


def test_bytes_and_the_seeds_tflops():
    assert fused_kernels.bytes_moved(1000, 4, fused_kernels.CHAIN_EAGER_TENSORS) == 32_000
    assert fused_kernels.CHAIN_EAGER_TENSORS == 2 * fused_kernels.CHAIN_FUSED_TENSORS
    # 28.9e12 adds/s in fp16, each reading two and writing one 2-byte value: 173 TB/s
    assert fused_kernels.implied_bandwidth_gbps(28.9, torch.float16) == pytest.approx(173_400)


def test_bad_inputs():
    x, y, _ = _operands(10)
    with pytest.raises(ValueError, match="same shape"):
        fused_kernels.chain_eager(x, y, torch.randn(11))
    with pytest.raises(ValueError, match="floating"):
        fused_kernels.chain_eager(*(torch.ones(3, dtype=torch.int32) for _ in range(3)))
    with pytest.raises(ValueError, match="positive"):
        fused_kernels.chain_blocked(x, y, x, block=0)
    if not fused_kernels.triton_available():
        with pytest.raises(RuntimeError, match="CUDA GPU"):
            fused_kernels.add(x, y)


def test_cpu_paths_are_named():
    assert list(fused_kernels.paths(*_operands(8))) == ["eager PyTorch (3 ops)", "blocked (in cache)"]


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
@pytest.mark.parametrize("n", [1, 1023, 1025, 1 << 20])
def test_triton_add_and_chain(dtype, n):
    x, y, z = _operands(n, "cuda", dtype)
    torch.testing.assert_close(fused_kernels.add(x, y), x + y)
    torch.testing.assert_close(fused_kernels.fused_chain(x, y, z),
                               fused_kernels.chain_eager(x, y, z), rtol=2e-3, atol=2e-3)


@pytest.mark.gpu
@gpu
def test_triton_refuses_cpu_tensors():
    with pytest.raises(ValueError, match="CUDA tensors"):
        fused_kernels.add(*_operands(4)[:2])


def test_add_speed_classes_cover_every_ratio_without_calling_a_gap_within_ten_percent():
    from labkit.chapters.ch04_fusion.fused_kernels import ADD_SPEED_CLASSES, add_speed_class

    assert add_speed_class(0.36) == ADD_SPEED_CLASSES[3]  # the H200's misaligned 2.8x gap
    assert add_speed_class(1.0) == ADD_SPEED_CLASSES[2]
    assert add_speed_class(0.95) == ADD_SPEED_CLASSES[2]
    assert add_speed_class(1.5) == ADD_SPEED_CLASSES[1]
    assert add_speed_class(2.33) == ADD_SPEED_CLASSES[0]
    with pytest.raises(ValueError):
        add_speed_class(0.0)


def test_aligned_sizes_are_powers_of_two_up_to_the_limit():
    from labkit.chapters.ch04_fusion.fused_kernels import aligned_sizes, is_aligned

    sizes = aligned_sizes(178_956_970)
    assert sizes[0] == 2**20 and sizes[-1] == 2**27
    assert all(is_aligned(n) and n & (n - 1) == 0 for n in sizes)
    assert not is_aligned(178_956_970) and not is_aligned(2**26 - 1)
    with pytest.raises(ValueError):
        aligned_sizes(1000)
    with pytest.raises(ValueError):
        aligned_sizes(2**22, smallest=24)
