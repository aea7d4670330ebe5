import torch
from torch import nn

from labkit.models import batchnorm


def test_calibrate_records_the_images_statistics_and_keeps_momentum():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, momentum=0.3), nn.ReLU())
    images = torch.randn(8, 3, 12, 12) * 5 + 2
    out = batchnorm.calibrate(model, images)
    bn = model[1]
    assert out is model and not model.training and bn.momentum == 0.3
    conv = model[0](images)
    torch.testing.assert_close(bn.running_mean, conv.mean(dim=(0, 2, 3)), rtol=1e-4, atol=1e-4)


def test_a_model_without_batchnorm_comes_back_in_eval_mode_unchanged():
    model = nn.Sequential(nn.Linear(3, 2)).train()
    before = [p.clone() for p in model.parameters()]
    assert batchnorm.calibrate(model, torch.randn(2, 3)) is model and not model.training
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
