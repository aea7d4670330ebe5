"""AccumulateGrad's layout contract on the CPU: a 1x1 weight's channels_last gradient is kept
(the size-1 exemption), a 3x3 weight's is restrided, and DDP's full-stride check warns for the
kept one: why 1x1 convolutions warn on a GPU before any conversion."""

import pytest
import torch

from labkit.chapters.ch06_ddp_layout_drift import layout_contract


def channels_last(shape):
    return tuple(torch.empty(shape).to(memory_format=torch.channels_last).stride())


def test_a_1x1_weight_keeps_its_channels_last_gradient():
    shape = (32, 16, 1, 1)
    assert channels_last(shape) == (16, 1, 16, 16) != torch.empty(shape).stride()
    assert layout_contract.kept_grad_stride(shape, channels_last(shape)) == (16, 1, 16, 16)
    assert layout_contract.ddp_warns(shape, channels_last(shape))


def test_a_3x3_weight_gets_its_parameters_strides_back():
    shape = (16, 3, 3, 3)
    assert layout_contract.kept_grad_stride(shape, channels_last(shape)) == (27, 9, 3, 1)
    assert not layout_contract.ddp_warns(shape, channels_last(shape))


def test_a_channels_last_parameter_keeps_a_matching_gradient():
    shape = (8, 4, 3, 3)
    assert layout_contract.kept_grad_stride(shape, channels_last(shape), channels_last(shape)) == channels_last(shape)


def test_bad_strides_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="not a dense layout"):
        layout_contract.kept_grad_stride((2, 3), (1, 1))
    with pytest.raises(ValueError, match="differ in length"):
        layout_contract.kept_grad_stride((2, 3), (1,))
