"""The cuDNN-fused ResNet-50 computes what the folded model computes (its rewiring, on the CPU)."""

import dataclasses

import pytest
import torch

from labkit.chapters.ch08_inference_ladder import cudnn_fused, ladder


def _folded():
    settings = dataclasses.replace(ladder.Settings(), fold_bn=True)
    return ladder.build_model(settings, ladder.resnet.resnet50, 0, 32)


def test_the_rewired_model_matches_the_folded_one():
    folded = _folded()
    fused = cudnn_fused.fused_model(folded)
    assert not fused.fused, "on the CPU the reference ops run, not cuDNN's"
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(fused(x), folded(x), rtol=1e-4, atol=1e-4)


def test_a_dropped_residual_is_caught():
    """A wrong rewiring (the residual forgotten) gives other logits: the check above can fail."""
    folded = _folded()
    fused = cudnn_fused.FusedResNet(folded, fused=False)
    x = torch.randn(2, 3, 32, 32)

    def no_residual(inp, conv, z):
        return torch.relu(conv(inp))
    original = cudnn_fused.reference_conv_add_relu
    try:
        cudnn_fused.reference_conv_add_relu = no_residual
        with torch.no_grad():
            wrong = fused(x)
    finally:
        cudnn_fused.reference_conv_add_relu = original
    with torch.no_grad():
        assert not torch.allclose(wrong, folded(x), rtol=1e-3, atol=1e-3)


def test_unfolded_model_is_refused_with_a_clear_error():
    with pytest.raises(cudnn_fused.CudnnFusedError, match="fold the BatchNorms"):
        cudnn_fused.FusedResNet(ladder.seeded_model())


def test_the_cpu_says_why_the_fused_operators_cannot_run():
    assert "CUDA" in cudnn_fused.missing_cudnn(torch.device("cpu"))
