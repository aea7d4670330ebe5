"""What each DDP process runs: a small CNN trained in several layout variants, observed closely.

Chapter 06's processes import this module (`python -m labkit.chapters.ch06_ddp_layout_drift.ddp_worker`, started by
`labkit.chapters.ch06_ddp_layout_drift.ddp_launch` from the notebook or by `torchrun`), so the code that runs in every rank
is the code a reader sees. Each variant builds the same model, wraps it in
DistributedDataParallel, changes its memory format at a chosen moment, trains a few steps,
and reports as plain data:

- the warning "Grad strides do not match bucket view strides", counted per step (the warning
  is TORCH_WARN_ONCE; `torch.set_warn_always(True)` makes it fire for every parameter, every
  step, so the count means something);
- per parameter: its strides when DDP built its buckets, now, its gradient's strides, and the
  bucket view's strides (read from the warning text, or the gradient itself when it *is* the
  bucket view, otherwise DDP's rule: a bucket view takes its parameter's strides when the
  buckets are built);
- the bytes the reducer writes into its buckets and copies back, seen at torch's dispatcher
  (the reducer divides while copying: `mul.out(grad, 1/world, out=bucket_view)`);
- step time through `labkit.measure.bench` with a fixed number of calls (every rank must call a
  collective the same number of times, so the harness's adaptive run count is pinned), every
  variant timed interleaved with the others in rounds (a rotating order, so drift hits them
  alike) and with no warning formatted or recorded inside the timed steps: the counts come
  from the observed steps, which are not timed (a variant that warns 53 times a step would
  otherwise time Python's warning machinery against one that warns never);
- whether each gradient DDP hands the optimizer is right: equal to every rank's local gradient
  (from a plain copy of the model on the same batch) summed by an explicit all_reduce and
  divided by the world size;
- whether the parameters are bit-identical on every rank afterwards (all_gather of a flat copy).

DDP rebuilds its buckets once, at the start of the second iteration, from the parameters'
strides at that moment; a memory-format change before then heals, one after it stays.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import gc
import json
import math
import os
import re
import sys
import traceback
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils._python_dispatch import TorchDispatchMode

WARNING_TEXT = "Grad strides do not match bucket view strides"
_WARNING_LAYOUT = re.compile(r"grad\.sizes\(\) = \[([^\]]*)\], strides\(\) = \[([^\]]*)\]\s*"
                             r"bucket_view\.sizes\(\) = \[([^\]]*)\], strides\(\) = \[([^\]]*)\]")
CONVERT_MOMENTS = ("before_wrap", "after_wrap", "after_rebuild", "never")
HOOKS = ("none", "seed", "seed_signature_fitted", "seed_per_parameter")
# A gradient is "right" when its relative error (norm of the difference over the norm of the
# reference) is below this. DDP divides before summing and the reference after, which moves
# float32 only by rounding; bf16 autocast or TF32 convolutions (another algorithm may run in the
# copy) move it by up to about 1e-2. A misplaced gradient is off by about 1.4, a zeroed one by 1.
GRAD_TOLERANCE_FLOAT32_CPU = 1e-4
GRAD_TOLERANCE_REDUCED = 5e-2


@dataclass(frozen=True)
class Variant:
    """One way of combining DDP with channels_last.

    convert_at: when the model goes to channels_last: before DDP wraps it, right after, or
    after the second step (once DDP has rebuilt its buckets). hook: the seed's backward
    hook as written, or with the signature PyTorch calls it with, or its body registered on
    every parameter (`p.register_hook`), the nearest form of its stated intent (every gradient
    standard row-major before the all-reduce; review 2026-12-04k, chapter 06 item 3: the
    module-level hook sees input gradients only, so it could not test the idea). amp: False runs the variant
    in float32 whatever the run's mixed precision (the seed's claim names AMP: does it matter?).
    no_sync: its timed steps run inside `ddp.no_sync()`, so they time forward, backward and the
    optimizer without the gradient all-reduce (its observed steps reduce as usual, so its gradient
    check holds; after the timed steps the ranks' parameters differ, as they must without a reduce).
    rewrap: after a conversion right after wrapping, the module is wrapped again in a new DDP and
    the first one dropped, so the new one builds its bucket views from the converted strides (the
    other repair than converting first; no gradient hook can be one, since AccumulateGrad restrides
    what a hook returns: review 2026-12-04m item 10).
    """

    name: str
    title: str
    convert_at: str = "after_wrap"
    hook: str = "none"
    gradient_as_bucket_view: bool = False
    set_to_none: bool = True
    amp: bool = True
    no_sync: bool = False  # timed steps inside DDP's no_sync(): the step without its all-reduce
    rewrap: bool = False  # after the conversion, wrap the module in a new DDP (the old one dropped)


LATE_CONVERSION_STEP = 2  # (d) and (e) convert before this observed step: after DDP's rebuild (step 1)

VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("a_drift", "channels_last applied after wrapping (the seed's drift)"),
    Variant("b_seed_fix", "(a) plus the seed's hook, exactly as written", hook="seed"),
    Variant("b2_seed_hook_fitted", "(a) plus the seed's hook, with the signature PyTorch calls it with",
            hook="seed_signature_fitted"),
    Variant("b3_seed_hook_per_param", "(a) plus the seed's hook body on every parameter's gradient "
            "(p.register_hook): its stated intent, every gradient row-major before the all-reduce",
            hook="seed_per_parameter"),
    Variant("c_convert_first", "channels_last applied before wrapping", convert_at="before_wrap"),
    Variant("d_bucket_view", "(e) with gradient_as_bucket_view=True, zero_grad(set_to_none=False)",
            convert_at="after_rebuild", gradient_as_bucket_view=True, set_to_none=False),
    Variant("e_late_drift", "channels_last applied after DDP rebuilt its buckets (step 2)",
            convert_at="after_rebuild"),
    Variant("f_drift_no_amp", "(a) with mixed precision off (float32)", amp=False),
    Variant("g_convert_then_rewrap", "(a), then wrapped again in a new DDP (the first one dropped)",
            rewrap=True),
    # timing only, asked for by name (the ResNet-50 cost): not in a run's default variants
    Variant("c2_convert_first_again", "(c) again: (c) against itself sizes what the timing resolves (A/A)",
            convert_at="before_wrap"),
    Variant("c_compute_only", "(c) timed inside no_sync(): its step without the gradient all-reduce",
            convert_at="before_wrap", no_sync=True),
)}
# Review 2026-12-04l items 2 and 4: the ResNet-50 step named no bound (compute or gloo's all-reduce)
# and its control had no A/A pair; these two answer that where the cost is run (opt-in, on a GPU).
TIMING_ONLY = ("c2_convert_first_again", "c_compute_only")
DEFAULT_VARIANTS = [name for name in VARIANTS if name not in TIMING_ONLY]


@dataclass
class WorkerConfig:
    """Everything a rank needs; plain values so it travels as JSON to every process."""

    variants: list[str] = field(default_factory=lambda: list(DEFAULT_VARIANTS))
    observed_steps: int = 4          # steps watched closely (strides, bucket traffic, gradients)
    timed_steps: int = 10            # steps timed by labkit.measure.bench after them, per variant
    timed_rounds: int = 5            # ... split over this many interleaved rounds (ABC, BCA, CAB, ...;
                                     # fewer when timed_steps is smaller)
    batch: int = 8
    image: int = 32
    width: int = 16
    amp: str = "auto"                # "auto" (bf16 where the device has it), "bf16", "fp16" (the seed's
                                     # AMP: float16 autocast with GradScaler), "off"
    model: str = "small"             # "small" (small_cnn) or "resnet50" (~100 MB of gradients, for the cost)
    seed: int = 0
    collective_timeout_s: float = 60.0
    fail_on_rank: int = -1           # tests: this rank raises at the start of the first variant
    hang_on_rank: int = -1           # tests: this rank skips a collective, so the others wait

    @classmethod
    def from_dict(cls, data: dict) -> WorkerConfig:
        """A config from JSON; unknown keys or variants are refused with the known ones."""
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown config keys {sorted(unknown)}; known: {sorted(cls.__dataclass_fields__)}")
        config = cls(**data)
        bad = [v for v in config.variants if v not in VARIANTS]
        if bad or not config.variants:
            raise ValueError(f"unknown variants {bad or '(none given)'}; choose from {list(VARIANTS)}")
        if config.model not in MODELS:
            raise ValueError(f"model must be one of {list(MODELS)}, got {config.model!r}")
        if config.amp not in ("auto", "bf16", "fp16", "off"):
            raise ValueError(f"amp must be 'auto', 'bf16', 'fp16' or 'off', got {config.amp!r}")
        if config.observed_steps < 3 or config.timed_steps < 1:
            raise ValueError("observed_steps must be >= 3 (the late drift converts after step 2) "
                             "and timed_steps >= 1")
        if not isinstance(config.timed_rounds, int) or config.timed_rounds < 1:
            raise ValueError(f"timed_rounds must be an integer >= 1 (at most timed_steps are run), "
                             f"got {config.timed_rounds!r}")
        return config


def small_cnn(width: int = 16, classes: int = 10) -> nn.Module:
    """Three convolutions (3x3, 3x3, 1x1) with BatchNorm and a linear head.

    The 1x1 convolution is there on purpose: its weight's strides change under
    channels_last while its memory order does not.
    """
    return nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
        nn.Conv2d(width, 2 * width, 3, padding=1, bias=False), nn.BatchNorm2d(2 * width), nn.ReLU(),
        nn.Conv2d(2 * width, 2 * width, 1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * width, classes))


def resnet50_10(width: int = 0) -> nn.Module:
    """labkit's ResNet-50 (random weights, 10 classes): 23.5 M parameters, about 94 MB of float32
    gradients, what a realistic DDP bucket traffic looks like. width is ignored."""
    from labkit.models import resnet

    return resnet.resnet50(num_classes=10)


MODELS: dict[str, Callable[[int], nn.Module]] = {"small": small_cnn, "resnet50": resnet50_10}


# The seed's fix (section 4.3), exactly as it is written there.
def _ddp_reduce_hook(grad):  # noqa: ANN001, ANN202 -- the seed's code, unchanged
    if grad is not None:
        # (the seed: "force the layout back, so channels_last and NCCL get along")
        return grad.contiguous(memory_format=torch.contiguous_format)


def _seed_hook_fitted(module: nn.Module, grad_input: tuple, grad_output: tuple) -> tuple:
    """The seed's hook given the (module, grad_input, grad_output) signature that
    register_full_backward_hook calls: grad_input are gradients of the module's *inputs*."""
    return tuple(_ddp_reduce_hook(g) for g in grad_input)


def same_memory_order(shape: list[int], a: list[int], b: list[int]) -> bool:
    """Whether two stride tuples walk memory in the same order, ignoring size-1 dims
    (whose stride is never used: a 1x1 kernel's strides differ under channels_last,
    its bytes do not move)."""
    return all(sa == sb for n, sa, sb in zip(shape, a, b, strict=True) if n != 1)


class _BucketTraffic(TorchDispatchMode):
    """Counts what the reducer copies into its buckets and back, at the dispatcher.

    Into a bucket: `mul.out(grad, 1/world, out=bucket_view)` (and copy_ into a known bucket
    storage); back: copy_ from a bucket storage into a gradient. A copy whose source and
    destination strides differ is counted as permuting.
    """

    def __init__(self) -> None:
        super().__init__()
        self.bucket_storages: set[int] = set()
        self.into_bucket_bytes = self.back_to_grad_bytes = self.permuting_bytes = 0
        self.permuting_copies = 0  # kernels: small copies cost launches, not bytes (tables.copy_clause)
        self.copies_into = self.copies_back = self.in_place_on_bucket = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        if name == "mul" and isinstance(kwargs.get("out"), torch.Tensor):
            out, src = kwargs["out"], args[0]
            self.bucket_storages.add(out.untyped_storage().data_ptr())
            self._count_into(out, src)
        elif name == "copy_" and isinstance(args[1], torch.Tensor):
            dst, src = args[0], args[1]
            if src.untyped_storage().data_ptr() in self.bucket_storages:
                self.copies_back += 1
                self.back_to_grad_bytes += dst.numel() * dst.element_size()
                self._permuting(dst, src)
            elif dst.untyped_storage().data_ptr() in self.bucket_storages:
                self._count_into(dst, src)
        elif name == "div_" and args[0].untyped_storage().data_ptr() in self.bucket_storages:
            self.in_place_on_bucket += 1
        return func(*args, **kwargs)

    def _count_into(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        self.copies_into += 1
        self.into_bucket_bytes += dst.numel() * dst.element_size()
        self._permuting(dst, src)

    def _permuting(self, dst: torch.Tensor, src: torch.Tensor) -> None:
        if not same_memory_order(list(dst.shape), list(dst.stride()), list(src.stride())):
            self.permuting_bytes += dst.numel() * dst.element_size()
            self.permuting_copies += 1

    def as_dict(self) -> dict:
        return {"into_bucket_bytes": self.into_bucket_bytes, "copies_into": self.copies_into,
                "back_to_grad_bytes": self.back_to_grad_bytes, "copies_back": self.copies_back,
                "permuting_bytes": self.permuting_bytes, "permuting_copies": self.permuting_copies,
                "in_place_on_bucket": self.in_place_on_bucket}


def relative_error(value: torch.Tensor, reference: torch.Tensor) -> float:
    """||value - reference|| / ||reference|| (0 when both are zero)."""
    scale = float(reference.double().norm())
    difference = float((value.double() - reference.double()).norm())
    return difference / scale if scale > 0 else difference


def in_memory_order(t: torch.Tensor, stride: list[int]) -> torch.Tensor:
    """t's values in the order a dense tensor with these strides stores them (outermost first)."""
    order = sorted(range(t.dim()), key=lambda d: (-stride[d], -t.shape[d]))
    return t.permute(order).reshape(-1)


def _shared_storages(grads: dict) -> set[int]:
    """Storages that hold the gradients of two or more parameters: only a DDP bucket does."""
    seen: dict[int, int] = {}
    for grad in grads.values():
        seen[grad["storage"]] = seen.get(grad["storage"], 0) + 1
    return {storage for storage, count in seen.items() if count > 1}


def parse_warning(message: str) -> dict | None:
    """sizes, grad strides and bucket-view strides from one warning's text."""
    found = _WARNING_LAYOUT.search(message)
    if not found:
        return None
    ints = [[int(v) for v in group.split(",") if v.strip()] for group in found.groups()]
    return {"sizes": ints[0], "grad_stride": ints[1], "bucket_stride": ints[3]}


def _amp_dtype(config: WorkerConfig, device: torch.device) -> torch.dtype | None:
    if config.amp == "off":
        return None
    if config.amp == "fp16":
        return torch.float16
    if config.amp == "bf16" or device.type == "cuda":
        return torch.bfloat16
    return torch.bfloat16 if cpu_has_bf16() else None


def cpu_has_bf16() -> bool:
    """Whether this CPU has bf16 units (AVX512-BF16 or AMX); without them a bf16 run would
    time arithmetic the CPU has no hardware for, not the layout."""
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return " avx512_bf16" in flags or " amx_bf16" in flags


class _Run:
    """One variant in one rank: build, wrap, convert, train, observe."""

    def __init__(self, variant: Variant, config: WorkerConfig, device: torch.device, rank: int,
                 world: int) -> None:
        self.variant, self.config, self.device, self.rank, self.world = variant, config, device, rank, world
        self.amp_dtype = _amp_dtype(config, device) if variant.amp else None
        self.grad_tolerance = (GRAD_TOLERANCE_FLOAT32_CPU if device.type == "cpu" and self.amp_dtype is None
                               else GRAD_TOLERANCE_REDUCED)
        torch.manual_seed(config.seed)
        model = MODELS[config.model](config.width).to(device)
        if variant.convert_at == "before_wrap":
            model = model.to(memory_format=torch.channels_last)
        self.built_strides = {n: list(p.stride()) for n, p in model.named_parameters()}
        self.ddp = DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None,
            gradient_as_bucket_view=variant.gradient_as_bucket_view)
        if variant.convert_at == "after_wrap":
            self.ddp.to(memory_format=torch.channels_last)
        if variant.rewrap:  # a new DDP around the converted module: its buckets from the new strides
            first, self.ddp = self.ddp, None
            del first  # the first reducer and its autograd hooks go with it
            gc.collect()  # and any cycle that would keep it (and its hooks) alive
            self.built_strides = {n: list(p.stride()) for n, p in model.named_parameters()}
            self.ddp = DistributedDataParallel(
                model, device_ids=[device.index] if device.type == "cuda" else None,
                gradient_as_bucket_view=variant.gradient_as_bucket_view)
        if variant.hook == "seed":
            self.ddp.register_full_backward_hook(_ddp_reduce_hook)  # as the seed writes it
        elif variant.hook == "seed_signature_fitted":
            self.ddp.register_full_backward_hook(_seed_hook_fitted)
        self.hook_calls = 0  # how often a per-parameter hook ran: a hook that never ran decides nothing
        if variant.hook == "seed_per_parameter":  # the seed's body where a parameter's gradient passes
            for parameter in self.ddp.module.parameters():
                parameter.register_hook(self._counted_seed_hook)
        self.optimizer = torch.optim.SGD(self.ddp.parameters(), lr=0.01, momentum=0.9)
        # The seed's AMP: float16 autocast with a GradScaler (bf16 needs no scaler)
        self.scaler = (torch.amp.GradScaler(device.type) if self.amp_dtype == torch.float16 else None)
        data = torch.Generator().manual_seed(config.seed * 1000 + rank)  # each rank its own batch
        self.x = torch.randn(config.batch, 3, config.image, config.image, generator=data).to(
            device, memory_format=torch.channels_last)
        self.y = torch.randint(0, 10, (config.batch,), generator=data).to(device)
        self.step_index = 0
        self.bucket_storages: set[int] = set()  # storages known to be DDP's buckets
        self.warnings_by_step: list[int] = []
        self.warned: list[dict] = []
        self.other_warnings: set[str] = set()
        self.timed_calls = 0

    def _counted_seed_hook(self, grad: torch.Tensor) -> torch.Tensor | None:
        """The seed's `_ddp_reduce_hook`, unchanged, on a parameter's gradient; counts its calls."""
        self.hook_calls += 1
        return _ddp_reduce_hook(grad)

    def _train_step(self, inspect: Callable[[], None] | None = None) -> None:
        with torch.autocast(self.device.type, dtype=self.amp_dtype or torch.bfloat16,
                            enabled=self.amp_dtype is not None):
            loss = nn.functional.cross_entropy(self.ddp(self.x), self.y)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            if inspect is not None:
                inspect()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            if inspect is not None:
                inspect()
            self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=self.variant.set_to_none)

    def quiet_step(self) -> None:
        """One training step as it is timed: nothing recorded (`timed` turns the warning off); a
        no_sync variant's inside `ddp.no_sync()`, without the gradient all-reduce."""
        if self.variant.no_sync:
            with self.ddp.no_sync():
                self._train_step()
        else:
            self._train_step()
        self.timed_calls += 1

    def step(self, inspect: Callable[[], None] | None = None) -> None:
        """One observed training step; counts the layout warnings it raised. inspect runs after
        backward (and, with a GradScaler, after unscaling), before the optimizer steps."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self._train_step(inspect)
        ours = [str(w.message) for w in caught if WARNING_TEXT in str(w.message)]
        for other in (w for w in caught if WARNING_TEXT not in str(w.message)):
            if str(other.message) not in self.other_warnings:  # pass each other warning on once
                self.other_warnings.add(str(other.message))
                warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
        self.warnings_by_step.append(len(ours))
        if self.step_index < self.config.observed_steps:
            self.warned.extend(p for p in map(parse_warning, ours) if p)
        self.step_index += 1

    def observe(self) -> dict:
        """The observed steps: strides and bucket traffic, step by step."""
        observed = []
        for index in range(self.config.observed_steps):
            if index == 1:  # DDP rebuilds its buckets in this forward, from the strides now
                self.built_strides = {n: list(p.stride()) for n, p in self.ddp.module.named_parameters()}
            if index == LATE_CONVERSION_STEP and self.variant.convert_at == "after_rebuild":
                self.ddp.to(memory_format=torch.channels_last)
            self.warned = []
            expected = self._reference_grads()
            traffic = _BucketTraffic()
            traffic.bucket_storages |= self.bucket_storages
            with traffic:
                grads = self._step_keeping_grads()
            self.bucket_storages = traffic.bucket_storages | _shared_storages(grads)
            errors = {name: relative_error(grad["value"], expected[name]) for name, grad in grads.items()}
            wrong = {name: self._diagnose(name, grads[name], expected[name]) for name, error in errors.items()
                     if error > self.grad_tolerance}
            # inf/nan (a GradScaler step it skips) compares as neither right nor wrong: said apart
            nonfinite = sorted(name for name, error in errors.items() if not math.isfinite(error))
            observed.append({"step": index, "warnings": self.warnings_by_step[-1],
                             "traffic": traffic.as_dict(), "wrong_grads": wrong, "nonfinite_grads": nonfinite,
                             "largest_grad_error": max(errors.values(), default=0.0),
                             "parameters": self._parameter_rows(grads),
                             "separate_grad_bytes": sum(
                                 g["nbytes"] for g in grads.values() if not g["in_bucket"])})
        return {"observed": observed}

    def _step_keeping_grads(self) -> dict:
        """A step, reading each gradient's layout after backward (before zero_grad)."""
        grads: dict = {}

        def read() -> None:
            for name, p in self.ddp.module.named_parameters():
                if p.grad is not None:
                    grads[name] = {"stride": list(p.grad.stride()), "value": p.grad.detach().clone(),
                                   "storage": p.grad.untyped_storage().data_ptr(),
                                   "nbytes": p.grad.numel() * p.grad.element_size()}
        self.step(inspect=read)
        return grads

    def _reference_grads(self) -> dict[str, torch.Tensor]:
        """What DDP's gradients must be: each rank's local gradient (a plain copy of the model,
        same batch), summed over ranks with an explicit all_reduce and divided by the world."""
        reference = copy.deepcopy(self.ddp.module)
        reference.zero_grad(set_to_none=True)
        with torch.autocast(self.device.type, dtype=self.amp_dtype or torch.bfloat16,
                            enabled=self.amp_dtype is not None):
            loss = nn.functional.cross_entropy(reference(self.x), self.y)
        scale = float(self.scaler.get_scale()) if self.scaler is not None else 1.0
        (loss * scale).backward()  # the same scaling as DDP's step, so fp16 underflows alike
        expected = {}
        for name, p in reference.named_parameters():
            grad = p.grad.detach().clone() / scale
            dist.all_reduce(grad)
            expected[name] = grad / self.world
        return expected

    def _diagnose(self, name: str, grad: dict, expected: torch.Tensor) -> str:
        """What a wrong gradient holds: zeros, the right values in the bucket view's memory
        order read through the parameter's strides, or something else."""
        value = grad["value"]
        if not value.any() and expected.any():
            return "all zeros"
        bucket_order = in_memory_order(expected, self.built_strides[name])
        if relative_error(in_memory_order(value, list(value.stride())), bucket_order) <= self.grad_tolerance:
            return "the right values, in the bucket view's memory order, read with the param's strides"
        return "other"

    def _parameter_rows(self, grads: dict) -> list[dict]:
        rows, warned = [], list(self.warned)
        for name, p in self.ddp.module.named_parameters():
            grad = grads.get(name, {})
            grad_stride = grad.get("stride")
            grad["in_bucket"] = grad.get("storage") in self.bucket_storages
            match = next((w for w in warned if w["sizes"] == list(p.shape)
                          and w["grad_stride"] == grad_stride), None)
            if match is not None:
                warned.remove(match)
                bucket, source = match["bucket_stride"], "warning text"
            elif grad["in_bucket"]:
                bucket, source = grad_stride, "the gradient is the bucket view"
            else:
                bucket, source = self.built_strides[name], "DDP's rule (param strides at bucket build)"
            rows.append({"name": name, "shape": list(p.shape), "param_stride": list(p.stride()),
                         "param_stride_at_build": self.built_strides[name], "grad_stride": grad_stride,
                         "bucket_stride": bucket, "bucket_stride_source": source,
                         "warned": match is not None,
                         "strides_differ": grad_stride is not None and grad_stride != bucket,
                         "memory_order_differs": grad_stride is not None
                         and not same_memory_order(list(p.shape), grad_stride, bucket)})
        return rows



def time_interleaved(runs: dict[str, _Run], config: WorkerConfig, device: torch.device) -> dict[str, dict]:
    """Step times of every variant still training, interleaved in rounds, on labkit.measure.bench.

    Each round times a block of timed_steps / timed_rounds steps of every variant, the order
    rotated by one each round (ABC, BCA, CAB), so that a machine's drift (clocks, heat, another
    job) falls on all of them alike and a ratio can be taken inside each round. The calls are
    pinned (every rank must join each collective the same number of times). No warning is
    formatted or recorded while timed: torch.set_warn_always(False) leaves DDP's stride warning
    to TORCH_WARN_ONCE (it fires once, in a harness call that is not timed) and Python's
    filter ignores the rest; the observed steps, which are not timed, did the counting.
    Returns per variant: the pooled timing, each round's median and the calls timed.
    """
    from labkit.measure import bench, timing  # late: keeps `python -m ...ddp_worker --help` light

    if not runs:
        return {}
    names = list(runs)
    rounds = min(config.timed_rounds, config.timed_steps)
    per_block = math.ceil(config.timed_steps / rounds)
    samples: dict[str, list[float]] = {name: [] for name in names}
    medians: dict[str, list[float]] = {name: [] for name in names}
    blocks: dict[str, list] = {name: [] for name in names}  # each round's Timing: its clock and host cost
    torch.set_warn_always(False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for index in range(rounds):
                for name in names[index % len(names):] + names[:index % len(names)]:
                    block = bench.time(runs[name].quiet_step, mode="hot", warmup_ms=0, rep_ms=1e-3,
                                       min_runs=per_block, max_runs=per_block, device=device,
                                       threads=torch.get_num_threads(), label=name)
                    samples[name].extend(block.times_s)
                    medians[name].append(block.median_s)
                    blocks[name].append(block)
    finally:
        torch.set_warn_always(True)
    out = {}
    for name in names:
        stats = timing.summarise(samples[name])
        noisy = stats.median_s > 0 and stats.iqr_s / stats.median_s > timing.NOISY_IQR_FRACTION
        read = blocks[name]
        hosts = sorted(b.host_s for b in read if b.host_s is not None)
        bound = sum(bool(b.launch_bound) for b in read)
        # what the harness read, carried, not typed (review 2026-12-04m item 2): the clock of the
        # last block (a step that synchronises with the host is read on the wall clock), the host's
        # launch per step (the median over the rounds, where a device clock separates it) and
        # whether most rounds were launch-bound
        out[name] = {"timing": {"label": name, "median_s": stats.median_s, "iqr_s": stats.iqr_s,
                                "min_s": stats.min_s, "count": stats.count, "noisy": bool(noisy),
                                "clock": read[-1].clock, "clock_text": read[-1].clock_text,
                                "host_s": hosts[len(hosts) // 2] if hosts else None,
                                "launch_bound": bound > len(read) / 2, "launch_bound_rounds": bound,
                                "times_s": list(samples[name]), "rounds": rounds, "interleaved_with": names},
                     "round_medians_s": medians[name], "timed_calls": runs[name].timed_calls}
    return out


def ranks_identical(module: nn.Module, world: int) -> dict:
    """all_gather a flat copy of every parameter and compare them bit for bit."""
    flat = torch.cat([p.detach().float().flatten() for p in module.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    diffs = [float((g - gathered[0]).abs().max()) for g in gathered]
    return {"params_identical": all(torch.equal(g, gathered[0]) for g in gathered),
            "max_abs_diff_across_ranks": max(diffs), "param_checksum": float(flat.double().sum())}


def start_variant(name: str, config: WorkerConfig, device: torch.device, rank: int,
                  world: int) -> tuple[_Run | None, dict]:
    """Build one variant and watch its observed steps; returns the run (None when a step raised:
    every rank raises the same error at the same step, and its report is then finished) and
    its report so far. peak_memory_bytes is this variant's peak above what the GPU held before
    it was built (the variants before it stay alive, to be timed interleaved with it)."""
    variant = VARIANTS[name]
    held = torch.cuda.memory_allocated(device) if device.type == "cuda" else 0
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    run = _Run(variant, config, device, rank, world)
    report: dict = {"variant": asdict(variant), "error": None,
                    "amp_dtype": str(run.amp_dtype).replace("torch.", "") if run.amp_dtype else "off",
                    # what "right" meant for this variant: the page prints each observed step's
                    # largest_grad_error beside it (review 2026-12-04l item 3)
                    "grad_tolerance": run.grad_tolerance}
    try:
        report.update(run.observe())
    except Exception as exc:  # the seed's hook raises TypeError in backward on every rank
        report["error"] = {"type": type(exc).__name__, "message": str(exc).splitlines()[0],
                           "step": run.step_index}
    if device.type == "cuda":
        report["peak_memory_bytes"] = torch.cuda.max_memory_allocated(device) - held
    if report["error"] is None:
        return run, report
    return None, finish_variant(run, report, world)


def finish_variant(run: _Run, report: dict, world: int, timed: dict | None = None) -> dict:
    """Add the timing (when it was timed) and the warnings per observed step, then compare the
    ranks' parameters (a collective: every rank finishes its variants in the same order)."""
    report.update(timed or {})
    report["warnings_by_step"] = run.warnings_by_step  # the observed steps: none is timed
    report["trained_steps"] = len(run.warnings_by_step) + run.timed_calls
    report["hook_calls"] = run.hook_calls
    module = run.ddp.module
    del run.ddp  # a failed backward leaves the reducer mid-iteration: drop it whole
    report.update(ranks_identical(module, world))
    return report


def run_variant(name: str, config: WorkerConfig, device: torch.device, rank: int, world: int) -> dict:
    """One variant alone: observed, then timed (with no other variant to interleave)."""
    run, report = start_variant(name, config, device, rank, world)
    if run is None:
        return report
    timed = time_interleaved({name: run}, config, device)[name]
    return finish_variant(run, report, world, timed)


def run_rank(config: WorkerConfig) -> dict | None:
    """This process's part: join the group (env:// as torchrun sets it), run every variant;
    rank 0 returns everything, gathered from all ranks; the others return None."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    # NCCL when every rank has a GPU of its own; gloo otherwise (CUDA tensors on a shared GPU)
    backend = "nccl" if gpus >= world >= 2 else "gloo"
    device = torch.device("cuda", local_rank % gpus) if gpus else torch.device("cpu")
    if gpus:
        torch.cuda.set_device(device)
    timeout = datetime.timedelta(seconds=config.collective_timeout_s)
    dist.init_process_group(backend, timeout=timeout, **({"device_id": device} if backend == "nccl" else {}))
    torch.set_warn_always(True)  # the layout warning is TORCH_WARN_ONCE: count it every time
    try:
        started: dict[str, tuple[_Run | None, dict]] = {}
        for name in config.variants:
            if rank == config.fail_on_rank:
                raise RuntimeError(f"injected failure in rank {rank} (fail_on_rank), to test the launcher")
            if rank == config.hang_on_rank:
                dist.barrier()  # an extra collective the others never join: they wait
            started[name] = start_variant(name, config, device, rank, world)
        alive = {name: run for name, (run, _) in started.items() if run is not None}
        timed = time_interleaved(alive, config, device)
        reports = [report if run is None else finish_variant(run, report, world, timed[name])
                   for name, (run, report) in started.items()]
        gathered: list = [None] * world
        dist.all_gather_object(gathered, reports)
        _mark_done(rank)
    finally:
        torch.set_warn_always(False)
    if rank != 0:
        dist.destroy_process_group()
        return None
    dist.destroy_process_group()
    return {"backend": backend, "world_size": world, "device": _device_text(device),
            "torch": torch.__version__, "threads_per_rank": torch.get_num_threads(),
            "config": asdict(config), "ranks": gathered}


def _mark_done(rank: int) -> None:
    """Leave a marker once this rank's work is gathered: gloo can abort a process while it
    tears down its process group ("terminate called without an active exception", seen once
    under load), and the launcher must not mistake that for a failed run."""
    folder = os.environ.get("LABKIT_DDP_OUT")
    if folder:
        Path(folder, f"done-rank{rank}").touch()


def _device_text(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return "cpu"


def main(argv: list[str] | None = None, run: Callable[[WorkerConfig], dict | None] = run_rank) -> int:
    """Entry point for every rank: `python -m labkit.chapters.ch06_ddp_layout_drift.ddp_worker --config C --out DIR`.

    Rank 0 writes DIR/result.json; a rank that fails writes DIR/error-rank<R>.txt with its
    traceback (the launcher reads it) and exits 1.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="a JSON file of WorkerConfig fields (default: all defaults)")
    parser.add_argument("--out", required=True, help="directory for result.json / error files")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    os.environ["LABKIT_DDP_OUT"] = args.out
    rank = os.environ.get("RANK", "?")
    try:
        config = WorkerConfig.from_dict(json.load(open(args.config)) if args.config else {})
        result = run(config)
        if result is not None:
            tmp = os.path.join(args.out, "result.json.tmp")
            with open(tmp, "w") as f:
                json.dump(result, f)
            os.replace(tmp, os.path.join(args.out, "result.json"))
        return 0
    except BaseException:
        with open(os.path.join(args.out, f"error-rank{rank}.txt"), "w") as f:
            f.write(traceback.format_exc())
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main())
