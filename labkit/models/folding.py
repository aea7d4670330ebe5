"""Conv-BN folding from the formula, checked against PyTorch's own utility.

In eval mode BatchNorm is a fixed per-channel affine map, so it can be folded into the
convolution before it: with sigma = sqrt(running_var + eps), w' = w * gamma / sigma (per
output channel) and b' = (b - mean) * gamma / sigma + beta. `fold_conv_bn_weights` is that
formula and nothing else; `fold_model` applies it to every Conv2d -> BatchNorm2d pair of a
model through torch.fx; `against_pytorch` checks both against PyTorch's own utility
(`torch.nn.utils.fusion.fuse_conv_bn_eval`). Folding is a snapshot: the folded model does not
follow the original's later training steps.

It lives in the models layer, not in chapter 04's folder, because more than one chapter
uses it: chapter 04 teaches it and chapter 08's inference ladder climbs with it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn


def fold_conv_bn_weights(weight: torch.Tensor, bias: torch.Tensor | None,
                         running_mean: torch.Tensor, running_var: torch.Tensor,
                         gamma: torch.Tensor | None, beta: torch.Tensor | None,
                         eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The folded convolution's (weight, bias), straight from the formula.

    BatchNorm in eval mode computes gamma * (y - mean) / sigma + beta per output channel,
    with sigma = sqrt(var + eps). Substituting y = w * x + b gives a convolution with
    w' = w * gamma / sigma and b' = (b - mean) * gamma / sigma + beta. The arithmetic is
    per-channel factors are computed in float64; the weight is scaled in float32 (or the
    weight's own dtype if wider) and cast back once.
    """
    if weight.dim() < 2:
        raise ValueError(f"weight must be a convolution weight [out, in, *kernel], got shape "
                         f"{tuple(weight.shape)}")
    channels = weight.shape[0]
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is None or t.shape != (channels,):
            raise ValueError(f"{name} must have shape ({channels},) to match the weight's "
                             f"{channels} output channels; got "
                             f"{None if t is None else tuple(t.shape)} (track_running_stats=False "
                             "BatchNorm has no running statistics and cannot be folded)")
    if eps < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    ones, zeros = torch.ones(channels, dtype=torch.float64), torch.zeros(channels, dtype=torch.float64)
    b = zeros if bias is None else bias.detach().double().cpu()
    g = ones if gamma is None else gamma.detach().double().cpu()
    be = zeros if beta is None else beta.detach().double().cpu()
    sigma = torch.sqrt(running_var.detach().double().cpu() + eps)
    compute = torch.promote_types(weight.dtype, torch.float32)
    scale = (g / sigma).to(device=weight.device, dtype=compute)
    folded_w = weight.detach().to(compute) * scale.reshape(-1, *([1] * (weight.dim() - 1)))
    folded_b = (b - running_mean.detach().double().cpu()) * g / sigma + be
    return folded_w.to(weight.dtype), folded_b.to(device=weight.device, dtype=weight.dtype)


def fold_conv_bn(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    """A new Conv2d equal to bn(conv(x)) in eval mode; the originals are not touched.

    Refuses a BatchNorm in training mode: there it normalises with the batch's own mean
    and variance, which no fixed weight can reproduce.
    """
    if not isinstance(conv, nn.Conv2d) or not isinstance(bn, nn.BatchNorm2d):
        raise TypeError(f"fold_conv_bn takes (nn.Conv2d, nn.BatchNorm2d), got "
                        f"({type(conv).__name__}, {type(bn).__name__})")
    if bn.training:
        raise ValueError("the BatchNorm is in training mode, where it uses each batch's own "
                         "statistics; call model.eval() before folding")
    weight, bias = fold_conv_bn_weights(conv.weight, conv.bias, bn.running_mean, bn.running_var,
                                        bn.weight, bn.bias, bn.eps)
    folded = copy.copy(conv)  # same hyper-parameters; its own parameter dict below
    folded._parameters = dict(conv._parameters)
    folded.weight = nn.Parameter(weight, requires_grad=False)
    folded.bias = nn.Parameter(bias, requires_grad=False)
    return folded.eval()


def conv_bn_pairs(graph_module: torch.fx.GraphModule) -> list[tuple[str, str]]:
    """(conv, bn) module names where a Conv2d's only user is a BatchNorm2d."""
    modules = dict(graph_module.named_modules())
    pairs = []
    for node in graph_module.graph.nodes:
        if node.op != "call_module" or not isinstance(modules.get(node.target), nn.BatchNorm2d):
            continue
        source = node.args[0]
        if (isinstance(source, torch.fx.Node) and source.op == "call_module"
                and isinstance(modules.get(source.target), nn.Conv2d) and len(source.users) == 1):
            pairs.append((source.target, node.target))
    return pairs


def fold_model(model: nn.Module) -> torch.fx.GraphModule:
    """A copy of an eval-mode model with every Conv2d -> BatchNorm2d pair folded into one Conv2d.

    The model is traced with torch.fx (symbolic_trace), each BatchNorm that only follows a
    convolution is removed from the graph, and the convolution is replaced by
    `fold_conv_bn` of the pair. The original model is left as it was.
    """
    if model.training:
        raise ValueError("fold_model needs an eval-mode model (model.eval()): folding uses "
                         "the running statistics, which only eval mode uses")
    traced = torch.fx.symbolic_trace(copy.deepcopy(model))
    modules = dict(traced.named_modules())
    for conv_name, bn_name in conv_bn_pairs(traced):
        folded = fold_conv_bn(modules[conv_name], modules[bn_name])
        parent, _, leaf = conv_name.rpartition(".")
        setattr(traced.get_submodule(parent) if parent else traced, leaf, folded)
        for node in list(traced.graph.nodes):
            if node.op == "call_module" and node.target == bn_name:
                node.replace_all_uses_with(node.args[0])
                traced.graph.erase_node(node)
    traced.graph.lint()
    traced.delete_all_unused_submodules()
    traced.recompile()
    return traced


def randomize_batchnorm(model: nn.Module, seed: int = 0) -> nn.Module:
    """Give every BatchNorm non-trivial statistics and affine parameters, in place.

    A freshly built network has mean 0, var 1, gamma 1, beta 0, for which folding changes
    almost nothing and so tests almost nothing. Values stay in a range that keeps a deep
    network's activations finite.
    """
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.modules.batchnorm._BatchNorm) and module.running_var is not None:
                c = module.num_features
                module.running_mean.copy_(0.1 * torch.randn(c, generator=generator))
                module.running_var.copy_(0.5 + 1.5 * torch.rand(c, generator=generator))
                if module.weight is not None:
                    module.weight.copy_(0.5 + torch.rand(c, generator=generator))
                    module.bias.copy_(0.1 * torch.randn(c, generator=generator))
    return model


@dataclass(frozen=True)
class FoldCheck:
    """The hand formula against PyTorch's fuse_conv_bn_eval, pair by pair."""

    pairs: int
    max_weight_error: float
    max_bias_error: float
    max_weight_magnitude: float

    def as_dict(self) -> dict:
        """Plain values (for results and claim evidence)."""
        return {"pairs": self.pairs, "max_weight_error": self.max_weight_error,
                "max_bias_error": self.max_bias_error,
                "max_weight_magnitude": self.max_weight_magnitude}


def against_pytorch(model: nn.Module) -> FoldCheck:
    """Fold each Conv2d -> BatchNorm2d pair of an eval model by hand and with PyTorch; compare."""
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    traced = torch.fx.symbolic_trace(model)
    modules = dict(traced.named_modules())
    pairs = conv_bn_pairs(traced)
    if not pairs:
        raise ValueError("the model has no Conv2d followed only by a BatchNorm2d: nothing to fold")
    w_err = b_err = w_max = 0.0
    for conv_name, bn_name in pairs:
        conv, bn = modules[conv_name], modules[bn_name]
        mine = fold_conv_bn(conv, bn)
        theirs = fuse_conv_bn_eval(conv, bn)
        w_err = max(w_err, (mine.weight - theirs.weight).abs().max().item())
        b_err = max(b_err, (mine.bias - theirs.bias).abs().max().item())
        w_max = max(w_max, theirs.weight.abs().max().item())
    return FoldCheck(len(pairs), w_err, b_err, w_max)


def utility_in_train_mode() -> str:
    """What PyTorch's fuse_conv_bn_eval says when the modules are in training mode."""
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    conv, bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)  # fresh modules start in training mode
    try:
        fuse_conv_bn_eval(conv, bn)
    except Exception as error:  # the real exception, whatever its type
        return f"{type(error).__name__}: {error}"
    return "no error: the utility folded modules in training mode"


def max_error(a: torch.Tensor, b: torch.Tensor) -> dict:
    """Max absolute difference, and relative to the largest magnitude of the reference b."""
    absolute = (a.double() - b.double()).abs().max().item()
    scale = max(b.double().abs().max().item(), 1e-30)
    return {"max_abs_error": absolute, "max_rel_error": absolute / scale}
