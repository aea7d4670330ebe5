"""The ResNet-50 inference ladder: climb one setting at a time, gate every rung, time adjacent
rungs interleaved, and keep a step by what bound the rung.

A rung is a full set of `Settings` (precision, layout, TF32, folding, compile, graphs,
batch); a `Step` changes a few of them. `climb` applies steps in order from a start:

- every rung's logits on fixed, seeded images and weights are gated against strict-float32
  eager (`numerics`): the gate's images are copied into the rung's own input buffer after it
  was compiled or captured on other images, so a CUDA graph is gated on what it replays; a
  rung outside its math's tolerance is shown and never kept;
- each new rung is timed with `bench.compare` in interleaved rounds together with the rung it
  was built on and both float32 baselines, so drift cancels in the ratios; throughput is
  images over steady-state wall time (a block of calls, then one synchronisation);
- a few batches of each rung are profiled for where the device's time goes, by kernel class,
  and how many kernels a batch launches; several more batches are read from the profiler's
  kernel records alone (no host tracing) for the rung's device time per batch, with its spread;
- whether a rung is host-bound comes from the unprofiled numbers: idle = 1 - device time /
  the interleaved wall time per batch (a profile that also traces the host slows the host,
  and its idle share moved from 5% to 33% between runs of the same rung);
- `keep.decide` keeps a step only when a gain's interval lies above 1, on the clock that can
  show it (see keep.py), and the table shows both clocks;
- the rung a step is built on is timed again in the step's own rounds: its images/s and idle
  there (`Rung.here`) are what the step's gain is a ratio of and what the host-bound test
  reads, shown beside the gain; `keep.unstable` flags a step whose spread is wide or whose
  base moved outside its own interquartile range;
- a step whose base moved is re-timed, the two rungs alone, up to keep.RETIMES times while
  the run's budget lasts, and decided on the first timing whose base held; when none held it
  is decided only if the decision holds over either base timing, else "not decidable" and not
  kept (keep.over_moved_base): a gain over a base timed slow is the host's pace, not the step
  (review 2026-12-03e item 1);
- every round of every comparison ends with a probe of the host's pace (`host_pace_us`:
  microseconds per eager launch of a one-element add on the idle device), outside the timed
  blocks, so a step's rounds say whether the host ran fast or slow while they were timed.

Why two baselines: "float32" means two things on an NVIDIA GPU. Strict float32 (TF32 off)
is what the word says; PyTorch's defaults let cuDNN run float32 convolutions in TF32
(`torch.backends.cudnn.allow_tf32` is True by default), so an eager "float32" ResNet-50 is
already partly TF32. Every rung's speed-up is shown over both.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import itertools
import time as _clock
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from labkit.chapters.ch08_inference_ladder import attribution, keep, numerics
from labkit.core import env
from labkit.measure import bench
from labkit.models import folding, resnet

RESNET50_FLOPS_224 = 8.18e9  # multiply-adds counted twice, per 224x224 image (see roofline.flops_per_image)
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
COMPILE_MODES = (None, "default", "max-autotune-no-cudagraphs", "max-autotune")
GATE_IMAGES = 16     # the gate's fixed images on a CPU (every batch cycles through them)
# On a GPU: 64, the baselines' batch, so a rung at batch 64 or more is gated in one call, as
# before. With 16, top-1 agreement was counted over 15 clear images, and 3 of them decided a
# refusal ("80% < 90% of 15 clear images", review 2026-12-03d item 11); on a CPU each 16 more
# images cost 4 more calls per rung at batch 4, so it keeps 16.
GPU_GATE_IMAGES = 64


def gate_images(device: torch.device) -> int:
    """How many fixed images every rung is gated on, on this device."""
    return GPU_GATE_IMAGES if torch.device(device).type == "cuda" else GATE_IMAGES


@functools.lru_cache(maxsize=4)
def _images(n: int, image: int, seed: int) -> torch.Tensor:
    """numerics.fixed_images, made once per process: 64 at 224 px take ~0.3 s on a CPU, and
    every rung asks for them twice (capture and gate). Callers only read them (tiled copies,
    chunks copied into a rung's input buffer)."""
    return numerics.fixed_images(n, image, seed)


class LadderError(ValueError):
    """A rung was asked for that this machine or these settings cannot run."""


@dataclass(frozen=True)
class Settings:
    """Everything that decides how one batch of inference runs."""

    tf32: str = "off"             # "off", "conv" (PyTorch's default: cuDNN only), "on" (also matmuls)
    cudnn_benchmark: bool = False  # let cuDNN time its algorithms for each shape (GPU)
    channels_last: bool = False   # model and input in NHWC
    dtype: str = "float32"        # the model's weights converted to this precision
    autocast: str | None = None   # or run float32 weights under autocast to this precision
    fold_bn: bool = False         # BatchNorm folded into the convolution before it
    compile: str | None = None    # torch.compile mode (see COMPILE_MODES); never its own CUDA graphs
    freezing: bool = False        # Inductor's freezing: weights as constants, folded at compile time
    cuda_graphs: bool = False     # replay the whole batch as one CUDA graph (GPU)
    batch: int = 64
    threads: int | None = None    # CPU threads (None: torch's default, all the cores)

    def __post_init__(self) -> None:
        if self.tf32 not in ("off", "conv", "on"):
            raise LadderError(f"tf32 must be 'off', 'conv' or 'on', got {self.tf32!r}")
        if self.dtype not in DTYPES:
            raise LadderError(f"dtype must be one of {sorted(DTYPES)}, got {self.dtype!r}")
        if self.autocast not in (None, "float16", "bfloat16"):
            raise LadderError(f"autocast must be None, 'float16' or 'bfloat16', got {self.autocast!r}")
        if self.compile not in COMPILE_MODES:
            raise LadderError(f"compile must be one of {COMPILE_MODES}, got {self.compile!r}")
        if self.freezing and not self.compile:
            raise LadderError("freezing is an Inductor option: it needs compile")
        if not isinstance(self.batch, int) or self.batch < 1:
            raise LadderError(f"batch must be a positive int, got {self.batch!r}")

    @property
    def math(self) -> str:
        """The precision the convolutions run in: the gate's tolerance and the ceiling's math."""
        if self.autocast:
            return self.autocast
        if self.dtype != "float32":
            return self.dtype
        return "float32" if self.tf32 == "off" else "tf32"  # convolutions are ~all the FLOPs


@dataclass(frozen=True)
class Step:
    """One change to the settings, and why it should help."""

    name: str
    change: dict
    why: str

    def apply(self, settings: Settings) -> Settings:
        return dataclasses.replace(settings, **self.change)


STRICT_FP32 = Settings()
PYTORCH_DEFAULTS = Settings(tf32="conv")  # cuDNN's default: float32 convolutions in TF32

GPU_STEPS = (
    Step("TF32", {"tf32": "on"}, "float32 math on tensor cores (10-bit mantissa)"),
    Step("cudnn.benchmark", {"cudnn_benchmark": True}, "cuDNN times its algorithms once"),
    Step("channels_last", {"channels_last": True}, "NHWC, the layout tensor-core convolutions read"),
    Step("fp16 weights", {"dtype": "float16"}, "half the bytes, tensor cores at full rate; "
         "BatchNorm's weights stay float32"),
    # why it comes here (where it is kept, the GPU, not Python, sets the pace of every later
    # step) is the page's "Climb" paragraph: said once (review 2026-12-03h: the GPU page's
    # 1,500 words); where it is not decidable, later rungs are built without it and may run
    # host-bound, and it is tried again after folding (Ladder.retry)
    # torch.compile's reason as its profile shows it on the H200 (review 2026-12-04j item 1):
    # eager BatchNorm's 1.5 ms of kernels go, the Triton elementwise tails grow by 0.2 ms;
    # Inductor does not fuse into cuDNN's convolutions (extern kernels)
    Step("CUDA Graphs", {"cuda_graphs": True}, "one launch per batch, not one per kernel"),
    Step("torch.compile", {"compile": "default"}, "BatchNorm's kernels fused into Triton tails "
         "beside cuDNN's convolutions"),
    Step("Conv-BN folding", {"fold_bn": True}, "BatchNorm's scale and shift moved into the "
         "conv weights"),
    Step("batch 256", {"batch": 256}, "bigger convolutions fill the SMs"),
)
# Why this order (2026-12-03 18:45 UTC, three reproduce runs on the H200): with CUDA Graphs and
# Conv-BN folding after torch.compile, the eager fp16 rungs and the compiled one were timed
# while the host set the pace, and the host ran at about 10 or 15-17 us per launch, switching
# within a run; folding's wall gain (1.03-1.17x; 0.90x device time in eager) and CUDA Graphs'
# base (15,900-26,000 images/s) followed the host, so folding was kept in 2 runs of 3, CUDA
# Graphs was not decidable in 1, and the top rung was three different models (28,010-30,495
# images/s). Graphs first take the host out of every later rung where they are kept; folding
# is judged where it pays, on compiled code (its device time there: 25,453 images/s unfolded,
# 27,219-28,532 folded, at batch 64). Not where Graphs are refused: on 2026-12-05 they were not
# decidable in 2 of 3 reproduce runs and on the page (eager fp16, their base, timed in the
# host's fast mode in its own step and the slow one in theirs), every later rung was built
# without them, and torch.compile and folding ran host-bound (GPU idle 46-53%), C24's judged
# rung among them. So a not-decidable step is tried again over the last rung at batch 64
# (Ladder.retry, review 2026-12-05p 08 item 1).


def gpu_steps(lacks_tf32: str | None = None) -> tuple[Step, ...]:
    """The GPU's ladder: GPU_STEPS, less the TF32 step on a GPU without TF32 tensor cores.

    On a T4 (compute capability 7.5) the TF32 switch changes nothing, so that rung would time
    float32 under TF32's name: it is left out, and said so. lacks_tf32: env.gpu_lacks('tf32')
    unless given (a test's stand-in for the GPU).
    """
    why = env.gpu_lacks("tf32") if lacks_tf32 is None else lacks_tf32
    if not why:
        return GPU_STEPS
    print(f"The TF32 step is left out of this GPU's ladder: {why}")
    return tuple(step for step in GPU_STEPS if "tf32" not in step.change)


# Past stock PyTorch's defaults: Inductor's freezing (weights become constants, so it
# constant-folds and picks layouts once) at the top rung's batch.
BEYOND_STEPS = (
    Step("Inductor freezing", {"freezing": True}, "weights as constants: folded and laid out at compile time"),
)
MAX_AUTOTUNE = Step("max-autotune", {"compile": "max-autotune-no-cudagraphs"},
                    "Inductor times Triton and cuBLAS candidates for every convolution and GEMM")

# The interaction, with TF32 held fixed: each step alone on an eager base and on a
# compiled-and-graphed base.
REGIME_BASE = Settings(tf32="on", cudnn_benchmark=True)
REGIME_STEPS = tuple(s for s in GPU_STEPS if s.name in ("channels_last", "fp16 weights", "Conv-BN folding"))
COMPILED = {"compile": "default", "cuda_graphs": True}


def regime_base(lacks_tf32: str | None = None) -> tuple[Settings, str]:
    """The interaction's base and its name: TF32 on, or on a GPU without TF32 (a T4) float32,
    named so, since there the TF32 switch changes nothing. lacks_tf32: as in gpu_steps."""
    why = env.gpu_lacks("tf32") if lacks_tf32 is None else lacks_tf32
    if why:
        return dataclasses.replace(REGIME_BASE, tf32="off"), "float32 base"
    return REGIME_BASE, "TF32 base"


BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # CPU units that run bfloat16 arithmetic natively


def cpu_bf16_units(cpuinfo: str | None = None) -> tuple[str, ...]:
    """Which of BF16_FLAGS this CPU reports (/proc/cpuinfo's flags; none where it is absent).

    Without them oneDNN emulates bfloat16 through float32, and a bf16 rung times conversions
    the CPU has no hardware for: the step is then left out of the CPU ladder, and said so.
    """
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as f:
                cpuinfo = f.read()
        except OSError:
            return ()
    flags = set(cpuinfo.split())
    return tuple(flag for flag in BF16_FLAGS if flag in flags)


def cpu_steps(batch: int, bf16_units: tuple[str, ...] | None = None) -> tuple[Step, ...]:
    """The CPU's own ladder from PyTorch's defaults (all cores): no TF32, no graphs, no compile.

    bf16 autocast is a step only where the CPU has bfloat16 units (cpu_bf16_units).
    """
    units = cpu_bf16_units() if bf16_units is None else bf16_units
    bf16 = (Step("bf16 autocast", {"autocast": "bfloat16"},
                 f"half the bytes, on this CPU's {' and '.join(units)} units"),) if units else ()
    return (
        Step("channels_last", {"channels_last": True}, "oneDNN's convolutions prefer NHWC"),
        *bf16,
        Step("Conv-BN folding", {"fold_bn": True}, "one module fewer per conv for the host to call"),
        Step(f"batch {batch * 4}", {"batch": batch * 4}, "more work per call amortises the overheads"),
    )


@contextlib.contextmanager
def switches(settings: Settings) -> Iterator[None]:
    """Set TF32, cudnn.benchmark and the thread count for one rung; restore them after.

    Entered around every timed block, so it touches the thread pool only when the rung asks
    for another thread count (torch.set_num_threads is not free).
    """
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.backends.cudnn.benchmark)
    threads = torch.get_num_threads()
    torch.backends.cuda.matmul.allow_tf32 = settings.tf32 == "on"
    torch.backends.cudnn.allow_tf32 = settings.tf32 != "off"
    torch.backends.cudnn.benchmark = settings.cudnn_benchmark
    change_threads = bool(settings.threads) and settings.threads != threads
    if change_threads:
        torch.set_num_threads(settings.threads)
    try:
        yield
    finally:
        (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
         torch.backends.cudnn.benchmark) = saved
        if change_threads:
            torch.set_num_threads(threads)


def _many_compiled_rungs() -> contextlib.AbstractContextManager:
    """Dynamo's settings while a rung compiles, restored after: no process-wide change.

    Every rung compiles the same `forward` code object with other weights and shapes.
    Dynamo would otherwise treat a second batch size as dynamic (slower, shape-generic kernels)
    and fall back to eager after 8 recompilations; rungs are compared side by side, so their
    compiled code must coexist rather than be reset between rungs. Both settings are read when
    Dynamo compiles (a rung compiles inside prepare's warm-up and never after), so a patch
    around the warm-up is enough, and other code in the same kernel (chapter 04's recompile
    sweep, a learner's own torch.compile) keeps torch's defaults.
    """
    config = torch._dynamo.config
    limits = {name: max(256, getattr(config, name))
              for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                           "accumulated_recompile_limit") if hasattr(config, name)}
    return config.patch(automatic_dynamic_shapes=False, **limits)


@dataclass
class Prepared:
    """A rung ready to time: `run()` infers one batch; compile_s is what getting there cost."""

    settings: Settings
    run: Callable[[], object]
    compile_s: float
    output: torch.Tensor  # the gate images' logits (float32, CPU), through the rung's input buffer
    x: torch.Tensor | None = None  # the static input buffer run() reads (a CUDA graph's by address)


@functools.lru_cache(maxsize=4)
def _reference_weights(model_factory: Callable[[], nn.Module], seed: int, image: int,
                       device: torch.device) -> nn.Module:
    """The seeded model with BatchNorm calibrated at this image size (numerics.reference_model),
    made once per process and size, so the reference and every rung share the same weights."""
    return numerics.reference_model(seeded_model(model_factory, seed), image, device)


def seeded_model(model_factory: Callable[[], nn.Module] = resnet.resnet50, seed: int = 0) -> nn.Module:
    """The seeded model before calibration: random weights, made-up BatchNorm statistics.

    randomize_batchnorm gives the affine weights non-trivial values, which calibration keeps
    (so folding has something to fold); the made-up statistics are what calibration replaces.
    """
    torch.manual_seed(seed)
    model = model_factory().eval()
    folding.randomize_batchnorm(model, seed)
    return model


def build_model(settings: Settings, model_factory: Callable[[], nn.Module], seed: int,
                image: int, device: torch.device | None = None) -> nn.Module:
    """The same seeded, calibrated weights for every rung (a copy), folded if the rung folds."""
    device = torch.device("cpu") if device is None else torch.device(device)
    model = copy.deepcopy(_reference_weights(model_factory, seed, image, device))
    if settings.fold_bn:
        model = folding.fold_model(model)
    return model


def prepare(settings: Settings, device: torch.device, image: int,
            model_factory: Callable[[], nn.Module] = resnet.resnet50, seed: int = 0,
            transform: Callable[[nn.Module], nn.Module] | None = None,
            wrap: Callable[[Callable[[], torch.Tensor]], Callable[[], torch.Tensor]] | None = None,
            ) -> Prepared:
    """Build the model and input for these settings, warm it, compile or capture it, gate it.

    compile_s is the wall time of the first calls beyond an ordinary call: Dynamo tracing,
    Inductor's code generation and autotuning, and CUDA graph capture. The rung is warmed
    and captured on CAPTURE_SEED's images; its `output` is the gate's images' logits, each
    batch copied into the same input buffer and run as the timed calls run
    (numerics.through_input). transform (a model to model function, applied after folding)
    and wrap (a function of the rung's call, applied after capture) are how a test injects
    a wrong rung: a dropped bias, a stale input buffer.
    """
    if device.type != "cuda" and (settings.cuda_graphs or settings.tf32 != "off"
                                  or settings.cudnn_benchmark):
        raise LadderError("TF32, cudnn.benchmark and CUDA Graphs need a CUDA GPU")
    model = build_model(settings, model_factory, seed, image, device)
    if transform is not None:
        model = transform(model)
    dtype = DTYPES[settings.dtype]
    memory_format = torch.channels_last if settings.channels_last else torch.contiguous_format
    model = batchnorm_float32(model.to(device=device, dtype=dtype, memory_format=memory_format),
                              settings.dtype)
    images = numerics.tiled(_images(gate_images(device), image, numerics.CAPTURE_SEED),
                            settings.batch)
    x = images.to(device=device, dtype=dtype).contiguous(memory_format=memory_format)

    def forward(inp: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():  # (inference_mode trips torch.compile on 2.11 with a weakref error)
            if settings.autocast:
                with torch.autocast(device.type, dtype=DTYPES[settings.autocast]):
                    return model(inp)
            return model(inp)

    step: Callable = forward
    patches: list[contextlib.AbstractContextManager] = []  # entered around the warm-up only
    if settings.compile:
        patches.append(_many_compiled_rungs())
        step = torch.compile(own_code(forward), mode=settings.compile, dynamic=False)
        if settings.freezing:
            import torch._inductor.config as inductor_config

            patches.append(inductor_config.patch(freezing=True))
    started = _clock.perf_counter()
    # Every call under no_grad, the compiling one too: Inductor freezes only when grad mode is
    # off as it compiles, and Dynamo guards on grad mode (a call with grad on would recompile).
    with contextlib.ExitStack() as options, torch.no_grad():
        for patch in patches:
            options.enter_context(patch)
        for _ in range(3):  # the first call compiles; the others warm the allocator and cuDNN
            step(x)
        if settings.cuda_graphs:
            step, _ = _graphed(step, x)
    _sync(device)
    warm_s = _clock.perf_counter() - started
    compiled = step

    def run() -> torch.Tensor:
        with torch.no_grad():
            return compiled(x)
    if wrap is not None:
        run = wrap(run)
    call_started = _clock.perf_counter()
    run()
    _sync(device)
    one_call_s = _clock.perf_counter() - call_started
    compile_s = max(0.0, warm_s - 3 * one_call_s) if settings.compile or settings.cuda_graphs else 0.0
    logits = numerics.through_input(x, run, _images(gate_images(device), image, numerics.GATE_SEED))
    _sync(device)
    return Prepared(settings, run, compile_s, logits, x)


_RUNGS = itertools.count()


def own_code(fn: Callable) -> Callable:
    """The same function with a code object of its own.

    Dynamo caches compiled code per code object; with nn.Module inlining, a second rung's
    model (other weights, same graph) would reuse the first rung's compiled code, and an
    Inductor option such as freezing would silently not apply. A code object per rung gives
    each rung its own compile, and no rung's compile can evict another's.
    """
    code = fn.__code__.replace(co_name=f"{fn.__code__.co_name}_rung{next(_RUNGS)}")
    return types.FunctionType(code, fn.__globals__, code.co_name, fn.__defaults__, fn.__closure__)


def _graphed(forward: Callable, x: torch.Tensor) -> tuple[Callable[[], object], torch.Tensor]:
    """Capture one batch (eager or compiled) as a CUDA graph; replays read the same input buffer."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            forward(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = forward(x)
    graph.replay()

    def replay(_x: object = None, _reads: tuple = (forward, x)) -> torch.Tensor:
        # The graph replays kernels that read the model's weights (through forward, compiled
        # or not) and x by address; holding them here keeps that memory alive as long as the
        # graph. Without it the weights were freed once prepare() returned, and emptying the
        # allocator's cache later turned a replay into an illegal memory access (seen on the H200).
        # It returns the graph's static output: what this replay wrote, for the gate to read.
        graph.replay()
        return out
    return replay, out


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def batchnorm_float32(model: nn.Module, dtype: str) -> nn.Module:
    """In a float16 model, each BatchNorm's weights and statistics back in float32 (in place).

    Why: cuDNN's BatchNorm takes a half input only with float32 weights (ATen's use_cudnn
    test); an all-half BatchNorm falls back to ATen's own kernels, three per layer where cuDNN
    ran one. On the H200 that turned the 53 layers' 53 kernels into 159 (182 -> 282 per batch),
    made the fp16 rung host-bound at 17-54% GPU idle, and its wall gain followed the host's pace
    over the fresh runs (0.94-1.61x; review 2026-12-04m item 1, 04k and 04l item 2). The
    output stays half (cuDNN's, and Inductor's decomposition casts back to the input's dtype),
    as autocast's BatchNorm does; a folded model has no BatchNorm left, so nothing changes.
    Other dtypes are returned as they are (cuDNN takes no bfloat16 BatchNorm either way)."""
    if dtype == "float16":
        for module in model.modules():
            if isinstance(module, nn.modules.batchnorm._BatchNorm):
                module.float()
    return model


def reference_logits(device: torch.device, image: int,
                     model_factory: Callable[[], nn.Module] = resnet.resnet50,
                     seed: int = 0) -> torch.Tensor:
    """Strict-float32 eager's logits on the gate's images: what every rung is gated against.

    Run at batch gate_images(device) through the same input-buffer path as every rung.
    """
    settings = dataclasses.replace(STRICT_FP32, batch=gate_images(device))
    with switches(settings):
        return prepare(settings, device, image, model_factory, seed).output


@dataclass
class Rung:
    """One measured rung."""

    name: str
    settings: Settings
    images_per_s: float
    median_s: float               # wall seconds per batch, at steady state
    iqr_s: float
    compile_s: float
    pct_of_ceiling: float | None
    after: str = ""               # the rung this one was built on ("" for the start)
    kept: bool = True
    why: str = ""                 # the keep rule's reason
    judged_by: str = ""
    gate: numerics.Gate | None = None
    device_s: float | None = None     # device-busy seconds per batch (kernel records, median)
    device_samples: list = dataclasses.field(default_factory=list)  # each recorded batch's
    idle_share: float | None = None   # 1 - device_s / median_s: from the unprofiled wall time
    profiled_idle: float | None = None  # the idle share the profile saw (host traced too)
    kernels_per_batch: float | None = None  # from the profile
    host_launches: dict | None = None  # the host's launch calls per batch, from the profile
    kinds: dict = dataclasses.field(default_factory=dict)  # device (or CPU) time by kernel class
    # kernels per batch by class and by name (the most launched), from the profile
    kernel_counts: dict = dataclasses.field(default_factory=dict)
    kernel_names: dict = dataclasses.field(default_factory=dict)
    kernel_ms: dict = dataclasses.field(default_factory=dict)  # device ms per batch by kernel name
    gain: float | None = None     # the step's wall gain over `after`, as the keep rule saw it
    gain_spread: tuple[float, float] | None = None  # its IQR over rounds
    device_gain: float | None = None  # the step's device-time gain per image over `after`
    device_spread: tuple[float, float] | None = None  # its range over the recorded batches
    over: dict = dataclasses.field(default_factory=dict)  # {baseline: (median, q25, q75)} speed-ups
    # {baseline: its images/s in this rung's rounds over its median in the run}: `over` read over
    # the baseline's steady speed (experiment.settle_baselines; 1 where it held, under 1 if slowed)
    baseline_scale: dict = dataclasses.field(default_factory=dict)
    # every other rung of this rung's own comparison as timed in those rounds:
    # {name: {"images_per_s", "iqr_share", "idle_share"}}; the base's entry is what the step's
    # gain and the keep rule's host-bound test read (one comparison, one set of numbers)
    here: dict = dataclasses.field(default_factory=dict)
    unstable: str = ""            # why the step's timing is not stable enough to build on ("" if it is)
    # each timing of the step: its first comparison, then any re-time of the two rungs alone
    # (keep.RETIMES at most, when the base moved): {"gain", "base_images_per_s", "images_per_s",
    # "base_idle", "idle", "host_pace_us", "base_moved"}; the decision read the last one
    timings: list = dataclasses.field(default_factory=list)
    host_pace_us: list = dataclasses.field(default_factory=list)  # per round of its first comparison
    error: str = ""               # a rung that failed to prepare or run
    trace: object = dataclasses.field(repr=False, default=None)  # a labkit.measure.timeline.Trace
    # where this rung's wall seconds went: prepare (build, compile, capture, gate), profile,
    # device (kernel-record batches), timing (the interleaved comparison it was first timed in)
    phase_s: dict = dataclasses.field(default_factory=dict)

    def speedup_over(self, base: Rung) -> float:
        """Images/s over base's (from the interleaved comparison when both were in it)."""
        if base.name in self.over:
            return self.over[base.name][0]
        return self.images_per_s / base.images_per_s

    def speedup_spread(self, base: Rung) -> tuple[float, float]:
        """The speed-up's IQR over interleaved rounds (else from the two timings' IQRs)."""
        if base.name in self.over:
            return self.over[base.name][1], self.over[base.name][2]
        batches = self.settings.batch / base.settings.batch
        low = (base.median_s - base.iqr_s / 2) / (self.median_s + self.iqr_s / 2)
        high = (base.median_s + base.iqr_s / 2) / max(self.median_s - self.iqr_s / 2, 1e-12)
        return low * batches, high * batches

    @property
    def device_busy_share(self) -> float | None:
        return None if self.idle_share is None else 1.0 - self.idle_share

    def as_dict(self) -> dict:
        return {"name": self.name, "settings": dataclasses.asdict(self.settings),
                "images_per_s": self.images_per_s, "median_s": self.median_s, "iqr_s": self.iqr_s,
                "compile_s": self.compile_s, "pct_of_ceiling": self.pct_of_ceiling,
                "math": self.settings.math, "after": self.after, "kept": self.kept,
                "why": self.why, "judged_by": self.judged_by,
                "gate": self.gate.as_dict() if self.gate else None, "device_s": self.device_s,
                "idle_share": self.idle_share, "profiled_idle": self.profiled_idle,
                "device_samples": list(self.device_samples),
                "kernels_per_batch": self.kernels_per_batch, "kinds": self.kinds,
                "kernel_counts": dict(self.kernel_counts), "kernel_names": dict(self.kernel_names),
                "kernel_ms": dict(self.kernel_ms), "gain": self.gain, "gain_spread": list(self.gain_spread) if self.gain_spread else None,
                "device_gain": self.device_gain,
                "device_spread": list(self.device_spread) if self.device_spread else None,
                "over": {k: list(v) for k, v in self.over.items()}, "error": self.error,
                "here": dict(self.here), "baseline_scale": dict(self.baseline_scale),
                "unstable": self.unstable,
                "timings": [dict(t) for t in self.timings], "host_pace_us": list(self.host_pace_us),
                "host_launches": self.host_launches,
                "phase_s": dict(self.phase_s)}


def rung_from_dict(d: Mapping) -> Rung:
    """A Rung back from its `as_dict()` (a record's), so a recorded ladder is read by the same
    code as a live one (the CPU page replays the reference H200's interaction this way); keys a
    newer or older record lacks or adds are left at their defaults or ignored."""
    fields = {k: v for k, v in d.items() if k in Rung.__dataclass_fields__}
    fields["settings"] = Settings(**{k: v for k, v in dict(d.get("settings") or {}).items()
                                     if k in Settings.__dataclass_fields__})
    if fields.get("gate"):
        fields["gate"] = numerics.Gate(**{k: v for k, v in fields["gate"].items()
                                          if k in numerics.Gate.__dataclass_fields__})
    for k in ("gain_spread", "device_spread"):
        if fields.get(k):
            fields[k] = tuple(fields[k])
    fields["over"] = {k: tuple(v) for k, v in (fields.get("over") or {}).items()}
    for k in ("here", "baseline_scale", "kinds", "kernel_counts", "kernel_names", "kernel_ms"):
        fields[k] = dict(fields.get(k) or {})
    for k in ("timings", "host_pace_us", "device_samples"):
        fields[k] = list(fields.get(k) or [])
    return Rung(**fields)


@dataclass
class Live:
    """A prepared rung kept alive so later comparisons can interleave with it."""

    rung: Rung
    prepared: Prepared


class Ladder:
    """Prepared rungs on one device, timed against each other in interleaved rounds.

    The two baselines stay prepared for the whole climb, so every comparison includes them
    and each speed-up over them is a ratio taken inside the same rounds.
    """

    def __init__(self, device: torch.device, image: int, rep_ms: float = 400.0, rounds: int = 8,
                 model_factory: Callable[[], nn.Module] = resnet.resnet50,
                 profile_batches: int = 3, flops_per_image: float | None = None,
                 progress: Callable[[str], None] | None = None, device_batches: int = 8) -> None:
        self.device, self.image, self.rep_ms, self.rounds = device, image, rep_ms, rounds
        self.model_factory, self.profile_batches = model_factory, profile_batches
        self.device_batches = device_batches
        self.flops_per_image = flops_per_image or RESNET50_FLOPS_224 * (image / 224) ** 2
        self.progress = progress
        self.reference = reference_logits(device, image, model_factory)
        self.baselines: list[Live] = []

    # ------------------------------------------------------------------ preparing
    def prepare(self, name: str, settings: Settings,
                transform: Callable[[nn.Module], nn.Module] | None = None,
                profiled: bool = True) -> Live | Rung:
        """Prepare, gate and profile one rung; a rung that fails comes back as a Rung with error.

        profiled=False skips the host-and-device profile (kernel classes, the timeline) for a
        rung whose table shows neither: its device time still comes from kernel records."""
        if self.progress:
            self.progress(name)
        phases, clock = {}, _clock.perf_counter()

        def lap(phase: str) -> None:
            nonlocal clock
            now = _clock.perf_counter()
            phases[phase], clock = now - clock, now
        try:
            with switches(settings):
                prepared = prepare(settings, self.device, self.image, self.model_factory,
                                   transform=transform)
                lap("prepare")
                trace = (profile(prepared.run, self.device, self.profile_batches)
                         if self.profile_batches and profiled else None)
                lap("profile")
                samples = (device_seconds(prepared.run, self.device, self.device_batches)
                           if self.device.type == "cuda" and self.device_batches else [])
                lap("device")
        except Exception as failure:  # noqa: BLE001 -- a failing rung is reported, not fatal
            release_memory(self.device)
            return Rung(name, settings, 0.0, 0.0, 0.0, 0.0, None, kept=False,
                        why=f"failed: {type(failure).__name__}: {str(failure)[:200]}",
                        error=f"{type(failure).__name__}: {failure}")
        rows = prepared.output.shape[0]
        gate = numerics.check(prepared.output, self.reference[:rows], settings.math)
        rung = Rung(name, settings, 0.0, 0.0, 0.0, prepared.compile_s, None, gate=gate, trace=trace,
                    phase_s=phases)
        if trace is not None:
            figures = attribution.of_trace(trace, self.profile_batches)
            rung.device_s, rung.profiled_idle, rung.kinds = (figures.device_s, figures.idle_share,
                                                             figures.kinds)
            rung.kernels_per_batch = figures.kernels_per_batch
            rung.host_launches = figures.host_launches
            rung.kernel_counts = dict(figures.kernel_counts or {})
            rung.kernel_names = dict(figures.kernel_names or {})
            rung.kernel_ms = dict(figures.kernel_ms or {})
        if samples:
            rung.device_samples = samples
            rung.device_s = float(np.median(samples))
        return Live(rung, prepared)

    def baseline(self, name: str, settings: Settings) -> Live:
        live = self.prepare(name, settings)
        if isinstance(live, Rung):
            raise LadderError(f"the baseline {name!r} could not run: {live.error}")
        self.baselines.append(live)
        return live

    # ------------------------------------------------------------------ timing
    def _timed(self, live: Live) -> Callable[[], None]:
        """A block of batches then one synchronisation: steady-state wall time, whatever the device."""
        run, settings, device = live.prepared.run, live.rung.settings, self.device
        calls = live_calls(device)

        def block() -> None:
            with switches(settings):
                for _ in range(calls):
                    run()
                _sync(device)
        return block

    def compare(self, lives: Sequence[Live], with_baselines: bool = True) -> None:
        """Time these rungs and (unless with_baselines is False) the baselines interleaved; fill
        images/s, spreads and speed-ups of the rungs not timed before (the ones already timed
        keep their own step's figures), and give each new rung, in `here`, every other rung's
        images/s, spread and idle share as timed in these same rounds: a step's gain is read
        beside its base's figures from the rounds that gave it, never from an earlier run."""
        others = list(self.baselines) if with_baselines else []
        everyone = {live.rung.name: live for live in others + list(lives)}
        names = list(everyone)
        calls = live_calls(self.device)
        started = _clock.perf_counter()
        pace: list[float] = []
        result = bench.compare({n: self._timed(everyone[n]) for n in names}, baseline=names[0],
                               rounds=self.rounds, mode="hot", warmup_ms=50, rep_ms=self.rep_ms,
                               device="cpu", progress=False,
                               after_round=lambda: pace.append(host_pace_us(self.device)))
        timing_s = _clock.perf_counter() - started
        per_round = {n: np.asarray(result[n].round_ratios) for n in names}  # time / baseline's
        here = {}
        for n in names:
            rung, timing = everyone[n].rung, result[n].timing
            per_batch = timing.median_s / calls
            here[n] = {"images_per_s": rung.settings.batch / per_batch,
                       "iqr_share": timing.iqr_s / timing.median_s if timing.median_s > 0 else 0.0,
                       "idle_share": idle_share(rung.device_s, per_batch)}
        for n in names:
            rung, timing = everyone[n].rung, result[n].timing
            if rung.median_s > 0:
                # a rung keeps the figures of its own step's comparison; a later comparison it
                # joins (as the next step's base) re-times it, and those figures go to the new
                # rung's `here`, beside the gain they belong to
                continue
            rung.here = {other: dict(here[other]) for other in names if other != n}
            rung.host_pace_us = list(pace)
            rung.median_s, rung.iqr_s = timing.median_s / calls, timing.iqr_s / calls
            rung.phase_s["timing"] = timing_s  # the whole comparison it was first timed in
            rung.images_per_s = rung.settings.batch / rung.median_s
            rung.pct_of_ceiling = _pct_of_ceiling(rung.images_per_s * self.flops_per_image,
                                                  rung.settings.math, self.device)
            rung.idle_share = idle_share(rung.device_s, rung.median_s)
            for other in names:
                if other == n:
                    continue
                batches = rung.settings.batch / everyone[other].rung.settings.batch
                gains = batches * per_round[other] / per_round[n]
                # the median of the per-round gains, so it lies inside its own spread
                q25, median, q75 = np.percentile(gains, [25, 50, 75])
                rung.over[other] = (float(median), float(q25), float(q75))

    # ------------------------------------------------------------------ climbing
    def step(self, current: Live, name: str, settings: Settings,
             transform: Callable[[nn.Module], nn.Module] | None = None,
             with_baselines: bool = True, profiled: bool = True,
             retime_until: float | None = None) -> tuple[Rung, Live]:
        """Measure one step from `current`; returns the new rung and the rung the climb goes on
        from. with_baselines=False times it against `current` alone (no speed-ups over the
        float32 baselines: the interaction table needs only the gain over its base);
        profiled=False leaves out the profile (see prepare). A step whose base moved is
        re-timed (see the module's docstring) only while perf_counter() is before retime_until
        (None: always, up to keep.RETIMES)."""
        made = self.prepare(name, settings, transform, profiled)
        if isinstance(made, Rung):
            made.after = current.rung.name
            return made, current
        made.rung.after = current.rung.name
        self.compare([current, made] if current not in self.baselines else [made], with_baselines)
        rung, before = made.rung, current.rung
        measured = device_gain(before, rung)
        if measured is not None:
            rung.device_gain, rung.device_spread = measured[0], (measured[1], measured[2])
        base_here = rung.here.get(before.name, {})
        before_iqr = before.iqr_s / before.median_s if before.median_s > 0 else 0.0
        # the first timing: the step's own comparison (with the baselines); the base's idle in
        # it is what the host-bound test reads (one comparison, one set of numbers)
        timing = {"gain": tuple(rung.over[before.name]),
                  "base_images_per_s": base_here.get("images_per_s"),
                  "images_per_s": rung.images_per_s,
                  "iqr_share": rung.iqr_s / rung.median_s if rung.median_s > 0 else None,
                  "base_idle": base_here.get("idle_share", before.idle_share),
                  "idle": rung.idle_share, "host_pace_us": list(rung.host_pace_us)}
        timing["base_moved"] = keep.base_moved(before.images_per_s, before_iqr,
                                               timing["base_images_per_s"])
        rung.timings = [timing]
        while (rung.gate.passed and rung.timings[-1]["base_moved"] and len(rung.timings) <= keep.RETIMES
               and (retime_until is None or _clock.perf_counter() < retime_until)):
            started = _clock.perf_counter()
            again = self.retime(current, made)
            rung.phase_s["timing"] = rung.phase_s.get("timing", 0.0) + _clock.perf_counter() - started
            again["base_moved"] = keep.base_moved(before.images_per_s, before_iqr,
                                                  again["base_images_per_s"])
            rung.timings.append(again)
        last = rung.timings[-1]
        rung.gain, rung.gain_spread = last["gain"][0], (last["gain"][1], last["gain"][2])
        if len(rung.timings) > 1:
            # the deciding timing's gain and base figures are the ones shown beside the gain
            # (speedup_over(before), the interaction table's cell, reads `over`)
            rung.over[before.name] = last["gain"]
            rung.here[before.name] = {**base_here, "images_per_s": last["base_images_per_s"],
                                      "idle_share": last["base_idle"],
                                      "step_images_per_s": last["images_per_s"]}
        if rung.gate.passed and last["base_moved"]:
            decision = keep.over_moved_base(before.images_per_s, before.idle_share, rung.timings,
                                            rung.device_gain, rung.device_spread, before_iqr)
        else:
            decision = keep.decide(rung.gate.passed, rung.gate.why, rung.gain, rung.gain_spread,
                                   rung.device_gain, rung.device_spread, last["base_idle"],
                                   last["idle"])
        rung.kept, rung.judged_by, rung.why = decision.kept, decision.judged_by, decision.why
        own_iqr = rung.iqr_s / rung.median_s if rung.median_s > 0 else 0.0
        rung.unstable = keep.unstable(own_iqr, before.images_per_s, before_iqr,
                                      last["base_images_per_s"])
        # every decided step is flagged, kept or not (review 2026-12-03e item 4); where its
        # reason already says the base moved, only the rung's own spread is added
        flag = keep.unstable(own_iqr, before.images_per_s, before_iqr, None) \
            if last["base_moved"] else rung.unstable
        if flag and decision.judged_by not in (keep.NOT_DECIDABLE, "numerics"):
            rung.why += f"; unstable: {flag}"
        if len(rung.timings) > 1 and not last["base_moved"]:
            rung.why += f"; decided on re-time {len(rung.timings) - 1} (base held)"
        return rung, (made if decision.kept else current)

    def retime(self, base: Live, made: Live) -> dict:
        """The step timed again, its two rungs alone in fresh interleaved rounds (no baselines:
        about half a comparison's time), as one entry of `Rung.timings`."""
        names = [base.rung.name, made.rung.name]
        pace: list[float] = []
        result = bench.compare({n: self._timed(live) for n, live in zip(names, (base, made), strict=True)},
                               baseline=names[0], rounds=self.rounds, mode="hot", warmup_ms=50,
                               rep_ms=self.rep_ms, device="cpu", progress=False,
                               after_round=lambda: pace.append(host_pace_us(self.device)))
        calls = live_calls(self.device)
        per_batch = {n: result[n].timing.median_s / calls for n in names}
        batches = made.rung.settings.batch / base.rung.settings.batch
        gains = batches / np.asarray(result[names[1]].round_ratios)
        q25, median, q75 = np.percentile(gains, [25, 50, 75])
        return {"gain": (float(median), float(q25), float(q75)),
                "base_images_per_s": base.rung.settings.batch / per_batch[names[0]],
                "images_per_s": made.rung.settings.batch / per_batch[names[1]],
                "iqr_share": (result[names[1]].timing.iqr_s / result[names[1]].timing.median_s
                              if result[names[1]].timing.median_s > 0 else None),
                "base_idle": idle_share(base.rung.device_s, per_batch[names[0]]),
                "idle": idle_share(made.rung.device_s, per_batch[names[1]]),
                "host_pace_us": pace}

    def climb(self, steps: Sequence[Step], start: Live, deadline: float | None = None,
              retime_until: float | None = None, retry_until: float | None = None,
              retry: bool = True) -> list[Rung]:
        """Apply the steps in order from start; a rung past the deadline (perf_counter) is
        skipped; a step whose base moved is re-timed only before retime_until (see step).

        A step that was not decidable (keep.NOT_DECIDABLE) is tried once more after the last
        rung at the start's batch, before the step that raises the batch (`retry`), judged by
        the same rule, and begun only before retry_until (None: always); past it the retry is
        shown as skipped. retry=False: no retry (a CPU's ladder: its noise leaves steps not
        decidable often, and a retry there costs the page's time and words for no lesson)."""
        rungs, current, retried = [], start, not retry
        for s in steps:
            if not retried and "batch" in s.change and s.change["batch"] != start.rung.settings.batch:
                retried = True
                current = self.retry(steps, rungs, current, retry_until, retime_until)
            settings = s.apply(current.rung.settings)
            if deadline is not None and _clock.perf_counter() > deadline:
                rungs.append(Rung(s.name, settings, 0.0, 0.0, 0.0, 0.0, None, after=current.rung.name,
                                  kept=False, why="skipped: out of the run's time budget",
                                  error="skipped"))
                continue
            rung, after = self.step(current, s.name, settings, retime_until=retime_until)
            current = self._move_on(current, after)
            rungs.append(rung)
        if not retried:
            current = self.retry(steps, rungs, current, retry_until, retime_until)
        self.top = current
        return rungs

    def retry(self, steps: Sequence[Step], rungs: list[Rung], current: Live,
              retry_until: float | None, retime_until: float | None) -> Live:
        """Each step of the climb so far that was not decidable, tried once more from `current`
        (appended to rungs as '<step>, retried'); returns the rung the climb goes on from.

        Why: on the H200 (2026-12-05) CUDA Graphs was not decidable over eager fp16 (its base
        timed in the host's fast mode in its own step and the slow one in Graphs' rounds), so
        every later rung was built without graphs, and the compiled batch-64 rung C24 is
        judged on ran host-bound (GPU idle 46-53%). Over compiled, folded code the host's pace
        matters less; the retry is judged by the same `decide` / `over_moved_base`, and "not
        decidable" still never counts as kept (review 2026-12-05p 08 item 1a)."""
        undecided = [r.name for r in rungs if r.judged_by == keep.NOT_DECIDABLE and not r.error
                     and r.name in RETRY_STEPS]
        for s in steps:
            if s.name not in undecided:
                continue
            name = f"{s.name}{RETRIED}"
            settings = s.apply(current.rung.settings)
            if settings == current.rung.settings:
                continue
            if retry_until is not None and _clock.perf_counter() > retry_until:
                rungs.append(Rung(name, settings, 0.0, 0.0, 0.0, 0.0, None, after=current.rung.name,
                                  kept=False, error="skipped",
                                  why="retry skipped: out of the run's time for it"))
                continue
            until = retime_until if retry_until is None or retime_until is None else min(retime_until, retry_until)
            rung, after = self.step(current, name, settings, retime_until=until)
            current = self._move_on(current, after)
            rungs.append(rung)
        return current

    def _move_on(self, current: Live, after: Live) -> Live:
        """The rung the climb goes on from; a superseded one (not a baseline) drops its model
        and graphs, so a climb holds one network besides the baselines."""
        if after is not current and current not in self.baselines:
            current.prepared = None
            release_memory(self.device)
        return after


RETRIED = ", retried"   # a not-decidable step tried again after the last rung at the start's batch
# what a retry costs (prepare: a compile warm from the folded rung's, capture, gate; one
# comparison with the baselines), and the step that raises the batch after it (H200 records of
# 2026-12-05: folding's compile 4.5-7.0 s, a step's rounds 6-10 s; the batch-256 step 12.6-16.6 s,
# 13.3 s on the page; estimates, not measured for the retry itself):
# a caller begins the retry only where both fit before its end (experiment.retry_deadline)
# (review 2026-12-05p2 08 item 2: the measured maxima, so a page at 2026-12-05's pace keeps its
# 150 s: prepare 5-8 s + a first timing 5.4-7.5 s; the batch step 12.4-16.6 s)
RETRY_S = 15.0
LAST_STEP_S = 17.0
# the steps a retry may try again: CUDA Graphs only, the step whose worth is the host's pace by
# construction (device gain ~1.00x); a not-decidable cudnn.benchmark (~1.00x) would spend the
# window Graphs' retry needs (review 2026-12-05p2 08 item 4)
RETRY_STEPS = ("CUDA Graphs",)


def step_name(name: str) -> str:
    """A rung's step name without RETRIED: a retried step is the same step, later."""
    return name[:-len(RETRIED)] if name.endswith(RETRIED) else name


def idle_share(device_s: float | None, wall_s: float) -> float | None:
    """1 - device time / wall time per batch: the share of the unprofiled wall time the GPU
    idled (None without a device clock or a timing)."""
    if device_s is None or not wall_s > 0:
        return None
    return max(0.0, 1.0 - device_s / wall_s)


def device_gain(before: Rung, after: Rung) -> tuple[float, float, float] | None:
    """The step's device-time gain per image (median, low, high) from each rung's recorded batches.

    The median is the ratio of the medians; the range pairs the quartiles the pessimistic and
    the optimistic way (before's lower over after's upper, and back), so it holds the
    batch-to-batch spread of both rungs. None when either rung has no device samples (a CPU).
    """
    if not before.device_samples or not after.device_samples:
        return None
    a = np.asarray(before.device_samples) / before.settings.batch
    b = np.asarray(after.device_samples) / after.settings.batch
    qa, qb = np.percentile(a, [25, 50, 75]), np.percentile(b, [25, 50, 75])
    return float(qa[1] / qb[1]), float(qa[0] / qb[2]), float(qa[2] / qb[0])


def device_seconds(run: Callable[[], object], device: torch.device, batches: int) -> list[float]:
    """Each of `batches` batches' device-busy seconds, from the profiler's kernel records alone.

    No host activity is traced, so the host runs as it does unprofiled; a spin kernel before
    each batch marks where one batch's records end (labkit.measure.kernel_records). When the
    records do not split into batches, an empty list: the rung then has no device clock.
    """
    from labkit.measure import kernel_records

    def block() -> None:
        for _ in range(batches):
            torch.cuda._sleep(kernel_records.SPIN_MARK_CYCLES)
            run()
    run()
    _sync(device)
    try:
        return kernel_records.per_call_seconds(block, batches, device, flush_records=0)
    except kernel_records.RecordsUnavailable:
        return []


PACE_LAUNCHES = 32   # launches per host-pace probe: ~0.5-1 ms of host time, once per round


def host_pace_us(device: torch.device) -> float:
    """The host's pace now: microseconds per eager launch of a one-element add, the device
    idle (synchronised before and after). Why: the H200's host-bound rungs ran in two modes,
    about 17.5 and 34 us per launch (review 2026-12-03e item 1); this measures which one a
    round ran in instead of inferring it from the rungs' own images/s."""
    x = torch.zeros(1, device=device)
    _sync(device)
    started = _clock.perf_counter()
    for _ in range(PACE_LAUNCHES):
        x.add_(1.0)
    elapsed = _clock.perf_counter() - started
    _sync(device)
    return 1e6 * elapsed / PACE_LAUNCHES


def live_calls(device: torch.device) -> int:
    """Batches per timed block: enough that one synchronisation per block costs under ~1%."""
    return 10 if device.type == "cuda" else 1


def _pct_of_ceiling(flops_per_s: float, math: str, device: torch.device) -> float | None:
    from labkit.measure import ceiling_store

    cached = ceiling_store.cached(device.type)
    if cached is None:
        return None
    key = {"tf32": "tfloat32"}.get(math, math)
    rate = cached.matmul_tflops.get(key)
    return None if not rate else 100 * flops_per_s / (rate * 1e12)


def profile(run: Callable[[], object], device: torch.device, batches: int) -> object:
    """A timeline (labkit.measure.timeline.Trace) of `batches` calls of run, recorded with torch.profiler."""
    import os

    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    from labkit.measure import timeline

    os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # kineto's start/stop lines say nothing here
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    run()
    _sync(device)
    with torch_profile(activities=activities) as prof:
        for _ in range(batches):
            run()
        _sync(device)
    return timeline.from_profiler(prof)


def release_memory(device: torch.device) -> None:
    """Return cached blocks after a rung is dropped (compiled code stays: rungs coexist)."""
    import gc

    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def release(device: torch.device) -> None:
    """Drop compiled code and cached blocks at the end of a climb."""
    torch._dynamo.reset()
    release_memory(device)


def baseline_timings(base: Rung, rungs: Sequence[Rung]) -> list[float]:
    """Every timing of a float32 baseline in a run: its own, then its images/s in the rounds of
    each rung it was compared with (`Rung.here`), each timing once. PyTorch's defaults are first
    timed in the strict rung's comparison, so the strict rung's `here` holds that same timing:
    counted twice it weighed double in the steady median, and it was the noisy one on the H200's
    16:19 record (22% IQR; review 2026-12-04l item 1)."""
    found = [float(r.here[base.name]["images_per_s"]) for r in rungs
             if r is not base and (r.here.get(base.name) or {}).get("images_per_s")]
    return found if base.images_per_s in found else [base.images_per_s, *found]


def kept(rungs: Sequence[Rung]) -> list[Rung]:
    """The rungs the climb kept (right, and not slower on the clock that bound them)."""
    return [r for r in rungs if r.kept]


def step_gains(rungs: Sequence[Rung]) -> dict[str, float]:
    """Each measured step's own wall speed-up: its rung over the rung it was built on.

    The gain the keep rule judged (from the step's own interleaved comparison), not a later
    comparison's, so the table and the decision show the same number.
    """
    by_name = {r.name: r for r in rungs}
    return {r.name: r.gain if r.gain is not None else r.speedup_over(by_name[r.after])
            for r in rungs if r.after in by_name and not r.error}


def payback_batches(compile_s: float, before_s_per_image: float, after_s_per_image: float,
                    batch: int) -> float:
    """How many batches pay back a compile: compile time over the time saved per batch.

    inf when the compiled rung is not faster (it never pays back).
    """
    saved = (before_s_per_image - after_s_per_image) * batch
    return float("inf") if saved <= 0 else compile_s / saved
