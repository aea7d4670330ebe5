"""Show that the numerics gate bites: known-wrong rungs refused and honest rungs passed, on
the chapter's own ResNet-50 at the chapter's own sizes.

A gate that passes everything looks the same as a gate that works until one checks it with
rungs known to be wrong. Each wrong rung here is a bug a real ladder can have:

- batch-mean: every image given the batch's mean logits (an output that ignores the input);
- stale input: the rung answers for the images it was captured with (a CUDA graph whose
  input buffer is never refreshed), simulated by a call that caches its first output;
- BatchNorm bias zeroed: one BatchNorm (layer3.2.bn2, mid-network) loses its shift;
- folded bias dropped: Conv-BN folding forgets one folded convolution's bias;
- scaled weight: one convolution's weight (layer3.2.conv2) multiplied by 1.1.

They run in float32, so their error is the bug's alone, and each is judged under every
math's tolerance: a wrong fp16 rung's error is the bug's plus fp16's rounding. The honest
rungs (a float32 reorder, folding, TF32, fp16 and bf16) must pass under their own math's.
`audit` runs a list of cases through `ladder.prepare`, the path every climbed rung takes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from labkit.chapters.ch08_inference_ladder import ladder, numerics

MUTATED_BN = "layer3.2.bn2"
MUTATED_CONV = "layer3.2.conv2"
STRICT_MATHS = ("float32", "tf32", "float16")  # every mutation must be refused under these
GPU_TOP = {"tf32": "on", "channels_last": True, "dtype": "float16", "fold_bn": True}


def batch_mean(run: Callable[[], torch.Tensor]) -> Callable[[], torch.Tensor]:
    """A rung that gives every image of its batch the batch's mean logits."""
    def call() -> torch.Tensor:
        out = run()
        return out.mean(dim=0, keepdim=True).expand_as(out)
    return call


def stale_input(run: Callable[[], torch.Tensor]) -> Callable[[], torch.Tensor]:
    """A rung that answers every call with its first output (a graph replaying a stale buffer)."""
    first: list[torch.Tensor] = []

    def call() -> torch.Tensor:
        if not first:
            first.append(run().detach().clone())
        return first[0]
    return call


def zero_bias(path: str) -> Callable[[nn.Module], nn.Module]:
    """A transform that zeroes the bias of the module at `path` (a BatchNorm's or a folded conv's)."""
    def transform(model: nn.Module) -> nn.Module:
        module = model.get_submodule(path)
        if getattr(module, "bias", None) is None:
            raise ValueError(f"{path} ({type(module).__name__}) has no bias to drop")
        with torch.no_grad():
            module.bias.zero_()
        return model
    return transform


def scale_weight(path: str, factor: float = 1.1) -> Callable[[nn.Module], nn.Module]:
    """A transform that multiplies the weight of the module at `path` by factor."""
    def transform(model: nn.Module) -> nn.Module:
        with torch.no_grad():
            model.get_submodule(path).weight.mul_(factor)
        return model
    return transform


def round_mantissa(t: torch.Tensor, bits: int = 10) -> torch.Tensor:
    """t rounded (to nearest, ties to even) to `bits` explicit mantissa bits: TF32 keeps 10."""
    mantissa, exponent = torch.frexp(t)  # t = mantissa * 2**exponent, |mantissa| in [0.5, 1)
    return torch.ldexp(torch.round(mantissa * 2.0 ** (bits + 1)) / 2.0 ** (bits + 1), exponent)


def tf32_emulated(model: nn.Module) -> nn.Module:
    """Convolutions and linears read TF32-rounded weights and inputs, accumulate in float32.

    What cuDNN and cuBLAS do with TF32 on, emulated where there is no tensor core (the CPU),
    so TF32's tolerance rests on a measured error on every machine.
    """
    def rounded_input(_module: nn.Module, args: tuple) -> tuple:
        return tuple(round_mantissa(a) if isinstance(a, torch.Tensor) else a for a in args)

    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Conv2d | nn.Linear):
                module.weight.copy_(round_mantissa(module.weight))
                module.register_forward_pre_hook(rounded_input)
    return model


@dataclass(frozen=True)
class Case:
    """One rung to gate: a change of settings, and for a wrong rung, how it is wrong."""

    name: str
    change: dict
    honest: bool
    math: str | None = None      # the math it is judged under (None: the settings' own)
    transform: Callable[[nn.Module], nn.Module] | None = None
    wrap: Callable[[Callable[[], torch.Tensor]], Callable[[], torch.Tensor]] | None = None


def mutations() -> list[Case]:
    """The five wrong rungs, each in float32 (the bug's error alone)."""
    return [
        Case("batch-mean logits", {}, False, wrap=batch_mean),
        Case("stale input buffer", {}, False, wrap=stale_input),
        Case(f"BatchNorm bias zeroed ({MUTATED_BN})", {}, False, transform=zero_bias(MUTATED_BN)),
        Case(f"folded bias dropped ({MUTATED_CONV})", {"fold_bn": True}, False,
             transform=zero_bias(MUTATED_CONV)),
        Case(f"conv weight x1.1 ({MUTATED_CONV})", {}, False, transform=scale_weight(MUTATED_CONV)),
    ]


def cpu_honest() -> list[Case]:
    """Honest rungs a CPU can run: float32 reorders, emulated TF32, fp16 and bf16."""
    return [
        Case("channels_last", {"channels_last": True}, True),
        Case("Conv-BN folding", {"fold_bn": True}, True),
        Case("folding + channels_last", {"fold_bn": True, "channels_last": True}, True),
        Case("TF32 (emulated)", {}, True, math="tf32", transform=tf32_emulated),
        Case("fp16 autocast", {"autocast": "float16"}, True),
        Case("fp16 weights", {"dtype": "float16"}, True),
        Case("bf16 autocast", {"autocast": "bfloat16"}, True),
        Case("bf16 weights", {"dtype": "bfloat16"}, True),
        Case("bf16 autocast + folding + channels_last",
             {"autocast": "bfloat16", "fold_bn": True, "channels_last": True}, True),
    ]


def gpu_honest() -> list[Case]:
    """Honest eager rungs of the GPU ladder, the CUDA-graph ones gated on fresh images in their buffer."""
    return [
        Case("TF32", {"tf32": "on"}, True),
        Case("channels_last (TF32)", {"tf32": "on", "channels_last": True}, True),
        Case("Conv-BN folding", {"fold_bn": True}, True),
        Case("fp16 weights", {"tf32": "on", "dtype": "float16"}, True),
        Case("fp16 autocast", {"autocast": "float16"}, True),
        Case("bf16 weights", {"dtype": "bfloat16"}, True),
        Case("fp16 + channels_last + folding", GPU_TOP, True),
        Case("CUDA graph, fp16 + channels_last + folding", {**GPU_TOP, "cuda_graphs": True}, True),
        Case("CUDA graph, strict float32", {"cuda_graphs": True}, True),
    ]


def gpu_compiled(mode: str = "default") -> list[Case]:
    """The ladder's top rung: compiled and captured as one CUDA graph (a cold compile: a minute)."""
    return [Case(f"torch.compile {mode} + CUDA graph, fp16 + channels_last + folding",
                 {**GPU_TOP, "compile": mode, "cuda_graphs": True}, True)]


def gpu_mutations() -> list[Case]:
    """The wrong rungs, plus the stale buffer on a real CUDA graph and a wrong fp16 top rung."""
    top = GPU_TOP
    return mutations() + [
        Case("stale input buffer, CUDA graph", {"cuda_graphs": True}, False, wrap=stale_input),
        Case(f"fp16 top rung, folded bias dropped ({MUTATED_CONV})", top, False,
             transform=zero_bias(MUTATED_CONV)),
        Case(f"fp16 top rung, conv weight x1.1 ({MUTATED_CONV})", top, False,
             transform=scale_weight(MUTATED_CONV)),
    ]


@dataclass
class Row:
    """One case's gate: its own math's verdict, and (for a wrong rung) every math's."""

    name: str
    honest: bool
    settings: ladder.Settings
    gate: numerics.Gate | None
    under: dict[str, numerics.Gate] = dataclasses.field(default_factory=dict)  # math -> gate
    error: str = ""

    @property
    def passed(self) -> bool:
        return self.gate is not None and self.gate.passed

    def refused_under(self, math: str) -> bool:
        return not self.under[math].passed

    @property
    def as_expected(self) -> bool:
        """An honest rung passed its gate; a wrong one was refused under float32, TF32 and fp16."""
        if self.gate is None:
            return False
        if self.honest:
            return self.passed
        return all(self.refused_under(m) for m in STRICT_MATHS)

    def as_dict(self) -> dict:
        return {"name": self.name, "honest": self.honest, "settings": dataclasses.asdict(self.settings),
                "gate": self.gate.as_dict() if self.gate else None,
                "refused_under": {m: not g.passed for m, g in self.under.items()},
                "as_expected": self.as_expected, "error": self.error}


def audit(cases: Sequence[Case], device: torch.device, image: int, batch: int,
          reference: torch.Tensor | None = None,
          model_factory: Callable[[], nn.Module] | None = None,
          progress: Callable[[str], None] | None = None) -> list[Row]:
    """Prepare and gate every case from strict float32 at this batch; a case that fails to run
    is a row with its error (and counts as not as expected). model_factory: the chapter's
    ResNet-50 unless given."""
    model = {} if model_factory is None else {"model_factory": model_factory}
    if reference is None:
        reference = ladder.reference_logits(device, image, **model)
    rows = []
    for case in cases:
        settings = dataclasses.replace(ladder.STRICT_FP32, batch=batch, **case.change)
        if progress:
            progress(case.name)
        try:
            with ladder.switches(settings):
                prepared = ladder.prepare(settings, device, image, **model,
                                          transform=case.transform, wrap=case.wrap)
        except Exception as failure:  # noqa: BLE001 -- a case that cannot run is reported
            rows.append(Row(case.name, case.honest, settings, None,
                            error=f"{type(failure).__name__}: {str(failure)[:300]}"))
            continue
        finally:
            ladder.release_memory(device)
        math = case.math or settings.math
        under = {m: numerics.check(prepared.output, reference, m) for m in numerics.TOLERANCES}
        rows.append(Row(case.name, case.honest, settings, under[math], under))
    return rows
