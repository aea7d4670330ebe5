"""The propagation quiz's key, computed from a real trace: a 1x1 map counts as channels_last."""

import pytest
import torch

from labkit.chapters.ch03_memory_layouts import propagation
from labkit.models import resnet


def _tail():
    """A ResNet-shaped tail: conv, 1x1 adaptive pool, flatten, linear."""
    model = torch.nn.Sequential()
    model.add_module("conv1", torch.nn.Conv2d(3, 8, 3, padding=1))
    model.add_module("avgpool", torch.nn.AdaptiveAvgPool2d(1))
    model.add_module("flatten", torch.nn.Flatten())
    model.add_module("fc", torch.nn.Linear(8, 4))
    return model.eval().to(memory_format=torch.channels_last)


def test_avgpool_keeps_channels_last_and_fc_is_the_first_that_does_not():
    records = resnet.trace_layouts(_tail(), torch.randn(1, 3, 8, 8).to(memory_format=torch.channels_last))
    pooled = next(r for r in records if r.name == "avgpool")
    assert pooled.output_format == "both"  # a 1x1 map: channels_last too
    first = propagation.first_not_channels_last(records)
    assert first.name == "flatten" or first.name == "fc"
    fc_only = [r for r in records if r.name != "flatten"]
    assert propagation.quiz_choice(propagation.first_not_channels_last(fc_only)) == "fc"


def test_resnet50_key_is_fc():
    model = resnet.resnet50().eval().to(memory_format=torch.channels_last)
    records = resnet.trace_layouts(model, torch.randn(1, 3, 32, 32).to(memory_format=torch.channels_last))
    assert propagation.quiz_choice(propagation.first_not_channels_last(records)) == "fc"


def test_all_channels_last_is_an_error():
    records = resnet.trace_layouts(torch.nn.Sequential(torch.nn.Conv2d(3, 3, 1)).to(
        memory_format=torch.channels_last), torch.randn(1, 3, 4, 4).to(memory_format=torch.channels_last))
    with pytest.raises(ValueError, match="nothing dropped"):
        propagation.first_not_channels_last(records)
