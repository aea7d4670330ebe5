"""labkit.models.folding: Conv-BN folding from the formula against torch, on small models."""

import pytest
import torch
from torch import nn

from labkit.chapters.ch04_fusion import claims as ch04
from labkit.models import folding, resnet


def _conv_bn(in_channels=3, out_channels=5, bias=True, seed=0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=bias),
                          nn.BatchNorm2d(out_channels), nn.ReLU())
    folding.randomize_batchnorm(model, seed)
    return model.eval()


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_formula_equals_conv_then_batchnorm(bias, seed):
    model = _conv_bn(bias=bias, seed=seed)
    conv, bn = model[0], model[1]
    folded = folding.fold_conv_bn(conv, bn)
    x = torch.randn(2, 3, 9, 7)
    with torch.no_grad():
        torch.testing.assert_close(folded(x), bn(conv(x)), rtol=1e-5, atol=1e-5)


def test_formula_in_float64_matches_to_rounding():
    model = _conv_bn().double()
    w, b = folding.fold_conv_bn_weights(model[0].weight, model[0].bias, model[1].running_mean,
                                       model[1].running_var, model[1].weight, model[1].bias,
                                       model[1].eps)
    sigma = torch.sqrt(model[1].running_var + model[1].eps)
    gamma, beta, mean = model[1].weight, model[1].bias, model[1].running_mean
    # The seed's two lines, written out: w' = gamma/sigma * w, b' = gamma/sigma * b + beta - gamma*mu/sigma
    torch.testing.assert_close(w, (gamma / sigma).reshape(-1, 1, 1, 1) * model[0].weight)
    torch.testing.assert_close(b, gamma / sigma * model[0].bias + beta - gamma * mean / sigma)


def test_bottleneck_folded_matches_within_the_claims_tolerance():
    block = folding.randomize_batchnorm(resnet.Bottleneck(64, 16, stride=2), seed=3).eval()
    folded = folding.fold_model(block)
    assert not any(isinstance(m, nn.BatchNorm2d) for m in folded.modules())
    assert sum(isinstance(m, nn.BatchNorm2d) for m in block.modules()) == 4  # the original is intact
    x = torch.randn(2, 64, 16, 16)
    with torch.no_grad():
        error = folding.max_error(folded(x), block(x))
    assert error["max_rel_error"] < ch04.FOLD_OUTPUT_REL_TOLERANCE


def test_hand_fold_agrees_with_pytorch_utility():
    block = folding.randomize_batchnorm(resnet.Bottleneck(16, 8), seed=1).eval()
    check = folding.against_pytorch(block)
    assert check.pairs == 4  # conv1..3 and the downsample's conv
    assert max(check.max_weight_error, check.max_bias_error) / check.max_weight_magnitude \
        < ch04.FOLD_WEIGHT_REL_TOLERANCE


def test_folding_refuses_training_mode_and_pytorch_says_eval_only():
    model = _conv_bn().train()
    with pytest.raises(ValueError, match="eval"):
        folding.fold_conv_bn(model[0], model[1])
    with pytest.raises(ValueError, match="eval"):
        folding.fold_model(model)
    assert "eval" in folding.utility_in_train_mode().lower()


def test_folded_copy_is_stale_after_training_continues():
    model = _conv_bn()
    folded = folding.fold_model(model)
    x = torch.randn(4, 3, 6, 6)
    with torch.no_grad():
        torch.testing.assert_close(folded(x), model(x), rtol=1e-5, atol=1e-5)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    model(x).square().mean().backward()
    optimizer.step()
    model.eval()
    with torch.no_grad():
        assert folding.max_error(folded(x), model(x))["max_rel_error"] > 1e-3


def test_bad_inputs_say_what_to_do():
    model = _conv_bn()
    with pytest.raises(TypeError, match="Conv2d"):
        folding.fold_conv_bn(model[1], model[0])
    with pytest.raises(ValueError, match="output channels"):
        folding.fold_conv_bn_weights(torch.randn(4, 3, 3, 3), None, torch.zeros(5), torch.ones(5),
                                    None, None, 1e-5)
    with pytest.raises(ValueError, match="nothing to fold"):
        folding.against_pytorch(nn.Sequential(nn.ReLU()))
