"""The ResNet-50 inference ladder: climb one setting at a time and measure every rung.

A rung is a full set of `Settings` (precision, layout, TF32, folding, compile, graphs,
batch); a `Step` changes a few of them. `climb` applies steps in order from a start, and
times each rung with `labkit.measure.bench` in the same run, so every speed-up is a ratio of two
measurements taken minutes apart on one machine. Climbing the same steps in another order
shows that a step's gain depends on what came before it (Inductor already picks
channels_last for convolutions; TF32 matters only while the math is float32).

Why two baselines: "float32" means two things on an NVIDIA GPU. Strict float32 (TF32 off)
is what the word says; PyTorch's defaults let cuDNN run float32 convolutions in TF32
(`torch.backends.cudnn.allow_tf32` is True by default), so an eager "float32" ResNet-50 is
already partly TF32. Every rung's speed-up is shown over both.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time as _clock
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from labkit.chapters.ch04_fusion import fusion
from labkit.core import resnet
from labkit.measure import bench

RESNET50_FLOPS_224 = 8.18e9  # multiply-adds counted twice, per 224x224 image (FlopCounterMode)
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


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
    compile: str | None = None    # torch.compile mode: None, "default" or "max-autotune"
    cuda_graphs: bool = False     # replay the whole batch as one CUDA graph (GPU)
    batch: int = 64
    threads: int | None = None    # CPU threads (None: torch's default)

    def __post_init__(self) -> None:
        if self.tf32 not in ("off", "conv", "on"):
            raise LadderError(f"tf32 must be 'off', 'conv' or 'on', got {self.tf32!r}")
        if self.dtype not in DTYPES:
            raise LadderError(f"dtype must be one of {sorted(DTYPES)}, got {self.dtype!r}")
        if self.autocast not in (None, "float16", "bfloat16"):
            raise LadderError(f"autocast must be None, 'float16' or 'bfloat16', got {self.autocast!r}")
        if self.compile not in (None, "default", "max-autotune"):
            raise LadderError(f"compile must be None, 'default' or 'max-autotune', got {self.compile!r}")
        if not isinstance(self.batch, int) or self.batch < 1:
            raise LadderError(f"batch must be a positive int, got {self.batch!r}")

    @property
    def math(self) -> str:
        """The precision the convolutions run in, for the ceiling a rung is compared with."""
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
    Step("TF32", {"tf32": "on"}, "float32 convolutions and matmuls on the tensor cores (10-bit mantissa)"),
    Step("cudnn.benchmark", {"cudnn_benchmark": True}, "cuDNN times its algorithms for this shape once"),
    Step("channels_last", {"channels_last": True}, "NHWC: the layout the tensor-core convolutions read"),
    Step("fp16 weights", {"dtype": "float16"}, "half the bytes, tensor cores at full rate"),
    Step("Conv-BN folding", {"fold_bn": True}, "one kernel and one pass over the activations fewer per BN"),
    Step("torch.compile", {"compile": "default"}, "Inductor fuses the elementwise tails into fewer kernels"),
    Step("CUDA Graphs", {"cuda_graphs": True}, "one launch per batch instead of one per kernel"),
    Step("batch 256", {"batch": 256}, "bigger GEMMs and convolutions keep all 132 SMs busy"),
)
GPU_OTHER_ORDER = (
    GPU_STEPS[5], GPU_STEPS[2], GPU_STEPS[3], GPU_STEPS[0], GPU_STEPS[1], GPU_STEPS[4],
    GPU_STEPS[6], GPU_STEPS[7],
)


def cpu_steps(batch: int, threads: int) -> tuple[Step, ...]:
    """The CPU's own ladder: no TF32, no graphs; compile only where it compiles in time."""
    return (
        Step("channels_last", {"channels_last": True}, "oneDNN's convolutions prefer NHWC"),
        Step("bf16 autocast", {"autocast": "bfloat16"}, "half the bytes; fast only with AVX-512 BF16 or AMX"),
        Step("Conv-BN folding", {"fold_bn": True}, "one pass over the activations fewer per BN"),
        Step(f"{threads} threads", {"threads": threads}, "all the cores this machine has"),
        Step(f"batch {batch * 4}", {"batch": batch * 4}, "more work per call amortises the overheads"),
    )


@contextlib.contextmanager
def switches(settings: Settings) -> Iterator[None]:
    """Set TF32, cudnn.benchmark and the thread count for one rung; restore them after."""
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.backends.cudnn.benchmark, torch.get_num_threads())
    torch.backends.cuda.matmul.allow_tf32 = settings.tf32 == "on"
    torch.backends.cudnn.allow_tf32 = settings.tf32 != "off"
    torch.backends.cudnn.benchmark = settings.cudnn_benchmark
    if settings.threads:
        torch.set_num_threads(settings.threads)
    try:
        yield
    finally:
        (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
         torch.backends.cudnn.benchmark) = saved[:3]
        torch.set_num_threads(saved[3])


@dataclass
class Prepared:
    """A rung ready to time: `run()` infers one batch; compile_s is what getting there cost."""

    settings: Settings
    run: Callable[[], object]
    compile_s: float
    output: torch.Tensor


def prepare(settings: Settings, device: torch.device, image: int,
            model_factory: Callable[[], nn.Module] = resnet.resnet50, seed: int = 0) -> Prepared:
    """Build the model and input for these settings, warm it, and capture or compile it.

    compile_s is the wall time of the first calls beyond an ordinary call: Dynamo tracing,
    Inductor's code generation and autotuning, and CUDA graph capture.
    """
    if device.type != "cuda" and (settings.cuda_graphs or settings.tf32 != "off"
                                  or settings.cudnn_benchmark):
        raise LadderError("TF32, cudnn.benchmark and CUDA Graphs need a CUDA GPU")
    torch.manual_seed(seed)
    model = model_factory().eval()
    fusion.randomize_batchnorm(model, seed)
    if settings.fold_bn:
        model = fusion.fold_model(model)
    dtype = DTYPES[settings.dtype]
    memory_format = torch.channels_last if settings.channels_last else torch.contiguous_format
    model = model.to(device=device, dtype=dtype, memory_format=memory_format)
    x = torch.randn(settings.batch, 3, image, image, device=device, dtype=dtype)
    x = x.contiguous(memory_format=memory_format)

    def forward(inp: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():  # (inference_mode trips torch.compile on 2.11 with a weakref error)
            if settings.autocast:
                with torch.autocast(device.type, dtype=DTYPES[settings.autocast]):
                    return model(inp)
            return model(inp)

    step = forward
    if settings.compile:
        mode = "reduce-overhead" if settings.cuda_graphs and settings.compile == "default" else settings.compile
        torch._dynamo.reset()
        step = torch.compile(forward, mode=mode)
    started = _clock.perf_counter()
    out = None
    for _ in range(3):  # compiles, captures (reduce-overhead records on its 2nd and 3rd call)
        out = step(x)
    if settings.cuda_graphs and not settings.compile:
        step, out = _graphed(forward, x)
    _sync(device)
    warm_s = _clock.perf_counter() - started
    call_started = _clock.perf_counter()
    step(x)
    _sync(device)
    one_call_s = _clock.perf_counter() - call_started
    compile_s = max(0.0, warm_s - 3 * one_call_s) if settings.compile or settings.cuda_graphs else 0.0
    return Prepared(settings, lambda: step(x), compile_s, out)


def _graphed(forward: Callable, x: torch.Tensor) -> tuple[Callable[[], object], torch.Tensor]:
    """Capture one eager batch as a CUDA graph; replays read the same input buffer."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            forward(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = forward(x)
    return (lambda _x=None: graph.replay()), out


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@dataclass
class Rung:
    """One measured rung."""

    name: str
    settings: Settings
    images_per_s: float
    median_s: float
    iqr_s: float
    compile_s: float
    pct_of_ceiling: float | None
    timing: object = dataclasses.field(repr=False, default=None)
    after: str = ""      # the rung this one was built on ("" for the start)
    kept: bool = True    # False: it measured slower, and the climb went on without it
    trace: object = dataclasses.field(repr=False, default=None)  # a labkit.measure.timeline.Trace

    def speedup_over(self, base: Rung) -> float:
        return self.images_per_s / base.images_per_s

    def speedup_spread(self, base: Rung) -> tuple[float, float]:
        """The speed-up's range from the two IQRs (slowest quartile against fastest)."""
        batches = self.settings.batch / base.settings.batch
        low = (base.median_s - base.iqr_s / 2) / (self.median_s + self.iqr_s / 2)
        high = (base.median_s + base.iqr_s / 2) / max(self.median_s - self.iqr_s / 2, 1e-12)
        return low * batches, high * batches

    def as_dict(self) -> dict:
        return {"name": self.name, "settings": dataclasses.asdict(self.settings),
                "images_per_s": self.images_per_s, "median_s": self.median_s, "iqr_s": self.iqr_s,
                "compile_s": self.compile_s, "pct_of_ceiling": self.pct_of_ceiling,
                "math": self.settings.math, "after": self.after, "kept": self.kept}


def measure(name: str, settings: Settings, device: torch.device, image: int,
            rep_ms: float = 300.0, model_factory: Callable[[], nn.Module] = resnet.resnet50,
            min_runs: int = 5, profile_batches: int = 0) -> Rung:
    """Prepare and time one rung with the course's harness (hot mode: batches back to back).

    profile_batches > 0 also records that many batches with torch.profiler, for the
    timeline's attribution of where the time goes (rung.trace).
    """
    flops = RESNET50_FLOPS_224 * (image / 224) ** 2 * settings.batch
    with switches(settings):
        prepared = prepare(settings, device, image, model_factory)
        timing = bench.time(prepared.run, mode="hot", warmup_ms=100, rep_ms=rep_ms, flops=flops,
                            flops_dtype=settings.math, label=name, min_runs=min_runs)
        trace = profile(prepared.run, device, profile_batches) if profile_batches else None
    pct = getattr(timing, "pct_of_matmul_ceiling", None)
    rung = Rung(name, settings, settings.batch / timing.median_s, timing.median_s, timing.iqr_s,
                prepared.compile_s, pct, timing, trace=trace)
    del prepared
    release(device)
    return rung


def profile(run: Callable[[], object], device: torch.device, batches: int) -> object:
    """A timeline (labkit.measure.timeline.Trace) of `batches` calls of run, recorded with torch.profiler."""
    import os

    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    from labkit.measure import timeline

    os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # kineto's start/stop lines say nothing here
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with torch_profile(activities=activities) as prof:
        for _ in range(batches):
            run()
        _sync(device)
    return timeline.from_profiler(prof)


def release(device: torch.device) -> None:
    """Drop compiled code and cached blocks between rungs, so one rung's memory is not the next's."""
    torch._dynamo.reset()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def climb(steps: Sequence[Step], start: Settings, device: torch.device, image: int,
          start_name: str = "start", rep_ms: float = 300.0, keep_only_gains: bool = False,
          progress: Callable[[str], None] | None = None, profile_batches: int = 0,
          model_factory: Callable[[], nn.Module] = resnet.resnet50, first: Rung | None = None,
          min_runs: int = 5) -> list[Rung]:
    """Measure the start and each cumulative step, in order.

    keep_only_gains: a step that makes this machine slower (its whole IQR range below 1x)
    is measured, marked `kept=False`, and the climb goes on from the rung before it, as an
    engineer would: a step is kept because it measured faster, not because an article says so.
    """
    if first is None:  # a start already measured (another order's) can be passed in
        first = measure(start_name, start, device, image, rep_ms, model_factory, min_runs,
                        profile_batches)
    rungs, current = [first], first
    for step in steps:
        if progress:
            progress(step.name)
        rung = measure(step.name, step.apply(current.settings), device, image, rep_ms,
                       model_factory, min_runs, profile_batches)
        rung.after = current.name
        if keep_only_gains and rung.speedup_spread(current)[1] < 1.0:
            rung.kept = False
        else:
            current = rung
        rungs.append(rung)
    return rungs


def kept(rungs: Sequence[Rung]) -> list[Rung]:
    """The rungs the climb kept (those that measured faster than the rung they built on)."""
    return [r for r in rungs if r.kept]


def step_gains(rungs: Sequence[Rung]) -> dict[str, float]:
    """Each step's own speed-up: its rung over the rung it was built on."""
    by_name = {r.name: r for r in rungs}
    return {r.name: r.speedup_over(by_name[r.after]) for r in rungs if r.after in by_name}


def payback_batches(compile_s: float, before_s_per_image: float, after_s_per_image: float,
                    batch: int) -> float:
    """How many batches pay back a compile: compile time over the time saved per batch.

    inf when the compiled rung is not faster (it never pays back).
    """
    saved = (before_s_per_image - after_s_per_image) * batch
    return float("inf") if saved <= 0 else compile_s / saved
