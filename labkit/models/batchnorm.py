"""BatchNorm statistics for random-weight networks.

A random-weight network keeps BatchNorm's made-up running statistics (mean 0, variance 1), so
its activations shrink or grow layer by layer and its outputs barely depend on the input: a
numerics check on such a network checks nothing. One pass in train mode with a cumulative
average (momentum None) records each layer's own statistics, as a trained network's would be.
Chapter 08's gate and the audit (chapter 09) both calibrate this way.
"""

from __future__ import annotations

import torch
from torch import nn


def calibrate(model: nn.Module, images: torch.Tensor) -> nn.Module:
    """Set every BatchNorm's running statistics to those of `images` flowing through `model`.

    Each BatchNorm normalises with the batch's own statistics and records them, so in eval
    mode afterwards every layer sees these images' activations normalised. The affine weights
    and each layer's momentum are kept. The model comes back in eval mode (a model with no
    BatchNorm too, unchanged otherwise)."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return model.eval()
    saved = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    try:
        with torch.no_grad():
            model(images)
    finally:
        for m, momentum in zip(norms, saved, strict=True):
            m.momentum = momentum
        model.eval()
    return model
