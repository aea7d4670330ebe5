"""The layout audit: what each way of freezing a model records about its input, and what the
frozen artifact does when it is fed the same values in three layouts.

    from labkit.audit import export_audit
    model, example = export_audit.small_cnn(), export_audit.example_input(batch=4, image=32)
    audit = export_audit.run(model, example)       # one row per deployment path
    audit                                          # the table (HTML); audit.structure() for text

A deployed artifact is only ever asked for numbers. Whether it gives the right ones when the
caller's tensor is laid out differently from the example it was frozen with is a question of
what it recorded (shapes? strides? nothing?) and what it does with an input that does not
match: copy it, refuse it, or read its memory as if it matched. The last is the dangerous
one, so every row is checked against eager PyTorch with a tolerance before anything is timed.

Paths: torch.jit.trace, torch.jit.script, torch.export (the ExportedProgram's module), ONNX
through the current exporter run in ONNX Runtime (fed numpy arrays, and through IOBinding
from a tensor's data pointer, the zero-copy way GPU pipelines feed it), and AOTInductor when
it compiles within a time limit (a C++ compile that takes minutes on a small CPU).
"""

from __future__ import annotations

import contextlib
import html
import importlib.util
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from labkit.core import env

NCHW, CHANNELS_LAST, TRANSPOSED = "NCHW", "channels_last", "transposed view"
LAYOUTS = (NCHW, CHANNELS_LAST, TRANSPOSED)
CORRECT, REJECTED, WRONG, SKIPPED = "correct", "rejected", "silently wrong", "skipped"
# An eager reference that is all zeros (torchvision's ViT zero-initialises its head) agrees with
# any output of its shape within any relative tolerance: such a check checks nothing.
UNCHECKABLE = "not checkable"
# Agreement with eager: max |difference| <= TOLERANCE * max |eager output|, both computed in
# strict float32 (`reference_math`): room for reduction orders and kernel choices. A layout
# mix-up reads other pixels and gives errors of the size of the output itself.
TOLERANCE = {"cpu": 1e-4, "cuda": 1e-2}
AOTI_CHECK_ENV = "AOTI_RUNTIME_CHECK_INPUTS"  # AOTInductor checks input strides only when set


class AuditError(ValueError):
    """The audit was given something it cannot audit; the message says what to pass."""


# ---------------------------------------------------------------------------------------
# The reference: computed the way a float32 export computes


@dataclass(frozen=True)
class Reference:
    """How the check's eager reference is computed, and the tolerance it is held to."""

    math: str  # "float32" or "strict float32 (TF32 off)"
    tf32_off: bool  # the reference and the paths run in this process run with TF32 off
    tolerance: float  # relative to max |reference|
    why: str

    def __str__(self) -> str:
        return f"eager in {self.math}"


def tf32_flags() -> dict[str, bool]:
    """PyTorch's TF32 settings now: cuDNN convolutions and cuBLAS matmuls (a setting that cannot
    be read, under torch 2.9+'s mixed precision APIs, counts as on)."""
    flags = {}
    for name, read in (("convolutions", lambda: torch.backends.cudnn.allow_tf32),
                       ("matmuls", lambda: torch.backends.cuda.matmul.allow_tf32)):
        try:
            flags[name] = bool(read())
        except RuntimeError:
            flags[name] = True
    return flags


def reference_math(device_type: str, tf32: Mapping[str, bool] | None) -> Reference:
    """The export check's reference: eager computed the way a float32 export computes.

    A float32 export computes in float32: ONNX Runtime's CPU provider has no TF32 and an
    exported file carries no TF32 setting. PyTorch's default on a GPU runs cuDNN convolutions
    in TF32 (a 10-bit mantissa), which put the H200's ResNet-50 at 2.4% of its largest output
    from ONNX Runtime's float32 (0.0472 against 1.97), over the 1e-2 tolerance: a correct
    export reported "silently wrong" (review 2026-12-03g item 4). So on a GPU the check runs
    in strict float32, TF32 off for the reference and for the paths run in this process (and
    asked off of ONNX Runtime's CUDA provider), like against like; the tolerance stays
    TOLERANCE's. The alternative, a looser tolerance by TF32's error, would also let through a
    small real error. A CPU has no TF32: float32 as it is. The artifacts themselves are built
    with TF32 off on every device (`run`): torch.jit.trace writes the TF32 setting it was traced
    under into its graph (`traced_allow_tf32`), so a trace made with PyTorch's GPU default
    convolved in TF32 against this strict reference and read "silently wrong" on the H200's
    ResNet-50 (0.0489 against 1.95; review 2026-12-03h item 1). `tf32` is `tf32_flags()` (or a
    recorded run's, for a page showing what that run's check would be).
    """
    tolerance = TOLERANCE.get(device_type, 1e-4)
    if device_type != "cuda":
        return Reference("float32", False, tolerance, f"{device_type}: no TF32")
    on = [k for k, v in (tf32 or {}).items() if v]
    why = ("TF32 settings unknown: off for the check" if tf32 is None
           else f"TF32 was on for {' and '.join(on)}: off for the check" if on
           else "TF32 already off")
    return Reference("strict float32 (TF32 off)", True, tolerance, why)


@contextlib.contextmanager
def strict_float32(active: bool = True) -> Iterator[None]:
    """TF32 off for cuDNN convolutions and cuBLAS matmuls inside the block, restored after
    (PyTorch's legacy flags, as chapter 08's numerics gate sets them); nothing when not active."""
    if not active:
        yield
        return
    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved


# ---------------------------------------------------------------------------------------
# The model and its inputs


class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 convolutions with batch norm and an identity shortcut."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + x)


POOLED = 4  # the classifier sees a 4x4 map, so where each pixel sits matters to the output


class SmallCNN(nn.Module):
    """A stem convolution, one ResNet basic block, pooling to 4x4 and a classifier.

    Small enough for Binder's 2 GB (about 7k parameters at 16 channels), yet it has what
    matters to layout: convolutions, batch norm, a residual add and a flatten.
    """

    def __init__(self, channels: int = 16, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels), nn.ReLU())
        self.block = BasicBlock(channels)
        self.pooled = POOLED
        self.head = nn.Linear(channels * POOLED * POOLED, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.adaptive_avg_pool2d(self.block(self.stem(x)), self.pooled)
        return self.head(torch.flatten(y, 1))


def small_cnn(channels: int = 16, seed: int = 0, device: str | torch.device = "cpu") -> SmallCNN:
    """A SmallCNN with seeded random weights and non-trivial batch-norm statistics, in eval mode."""
    torch.manual_seed(seed)
    model = SmallCNN(channels)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.1, 0.1)
            module.running_var.uniform_(0.5, 1.5)
    return model.to(device).eval()


def example_input(batch: int = 4, image: int = 32, seed: int = 1,
                  device: str | torch.device = "cpu") -> torch.Tensor:
    """A contiguous NCHW float32 image batch, the example every path is frozen with."""
    if batch < 1 or image < 1:
        raise AuditError(f"batch and image must be positive, got batch={batch}, image={image}")
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(batch, 3, image, image, generator=generator).to(device)


def layouts(x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The same values in three layouts: contiguous NCHW, channels_last, and a transposed view.

    The transposed view is `x.transpose(2, 3).contiguous().transpose(2, 3)`: equal to x element
    for element, but with the H and W strides swapped, so it is neither contiguous nor
    channels_last (square images only, so that its shape is x's shape).
    """
    if x.dim() != 4 or x.shape[2] != x.shape[3]:
        raise AuditError(f"layouts() needs a 4-D NCHW batch of square images, got shape {tuple(x.shape)}")
    return {NCHW: x.contiguous(),
            CHANNELS_LAST: x.contiguous(memory_format=torch.channels_last),
            TRANSPOSED: x.transpose(2, 3).contiguous().transpose(2, 3)}


def describe_layout(shape: tuple[int, ...] | torch.Size, stride: tuple[int, ...]) -> str:
    """'(4, 3, 32, 32), strides (3072, 1024, 32, 1): contiguous NCHW'."""
    probe = torch.empty_strided(tuple(shape), tuple(stride), device="meta")
    if probe.dim() == 4:
        nchw, nhwc = probe.is_contiguous(), probe.is_contiguous(memory_format=torch.channels_last)
        name = ("contiguous NCHW" if nchw and not nhwc else "channels_last" if nhwc and not nchw
                else "both formats" if nchw else "neither format")
    else:
        name = "contiguous" if probe.is_contiguous() else "not contiguous"
    return f"{tuple(shape)}, strides {tuple(stride)}: {name}"


# ---------------------------------------------------------------------------------------
# Artifacts: one builder per path


@dataclass
class Artifact:
    """A frozen model: how to call it, what it records about its input, how long it took."""

    path: str
    run: Callable[[torch.Tensor], torch.Tensor]
    records: str
    build_s: float
    note: str = ""
    recorded_stride: tuple[int, ...] | None = None


@dataclass
class Outcome:
    """What one artifact did with one input layout."""

    kind: str  # CORRECT, REJECTED, WRONG or SKIPPED
    detail: str = ""
    max_error: float | None = None

    def __str__(self) -> str:
        return self.kind if not self.detail else f"{self.kind}: {self.detail}"


@dataclass
class Row:
    """One path of the audit."""

    path: str
    records: str
    outcomes: dict[str, Outcome]
    build_s: float | None = None
    note: str = ""
    artifact: Artifact | None = field(default=None, repr=False)

    @property
    def correct_on_all(self) -> bool:
        return all(o.kind == CORRECT for o in self.outcomes.values())


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the exporters' warnings and log lines (TorchScript deprecation, onnxscript's
    'torchvision is not installed'): the audit reports what matters in its own columns."""
    loggers = [logging.getLogger(n) for n in ("torch.onnx", "torch.export", "onnxscript", "torch._dynamo")]
    levels = [lg.level for lg in loggers]
    try:
        for lg in loggers:
            lg.setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _timed(build: Callable[[], Artifact]) -> Artifact:
    start = time.perf_counter()
    with _quiet(), torch.no_grad():
        artifact = build()
    artifact.build_s = artifact.build_s or time.perf_counter() - start  # kept where it timed itself
    return artifact


def build_trace(model: nn.Module, example: torch.Tensor) -> Artifact:
    """torch.jit.trace: runs the model once and records the ops it called, with the example's
    shapes and strides written into the graph's input type."""
    traced = torch.jit.trace(model, example)
    graph_input = list(traced.graph.inputs())[1].type()
    sizes, strides = graph_input.sizes(), graph_input.strides()
    records = (f"graph input type {describe_layout(sizes, strides)}" if sizes and strides
               else f"graph input type {graph_input}")
    # TF32 is a GPU's: on a CPU the recorded flag changes nothing, so it is not said there
    # (review 2026-12-05u 08-09-99 item 8: the CPU page's export table carried it)
    tf32 = traced_allow_tf32(traced) if example.device.type == "cuda" else None
    note = ("" if tf32 is None else
            f"its convolutions record allow_tf32={int(tf32)}: a trace keeps the TF32 setting it was "
            "traced under")
    return Artifact("torch.jit.trace", traced, records, 0.0, note=note,
                    recorded_stride=tuple(strides) if strides else None)


def traced_allow_tf32(module: object) -> bool | None:
    """Whether a traced module's convolutions run in TF32 where a GPU allows it: True when any
    recorded aten::_convolution has allow_tf32=1, False when all have 0, None when it recorded
    none (or is not a TorchScript module). A trace records the flag's value at trace time as a
    constant: the global setting at run time does not change it."""
    graph = getattr(module, "inlined_graph", None)
    if graph is None:
        return None
    found = []
    for node in graph.nodes():
        if node.kind() != "aten::_convolution":
            continue
        inputs = list(node.inputs())
        try:
            names = [a.name for a in node.schema().arguments] if hasattr(node, "schema") else []
        except Exception:  # a node without a readable schema: the flag is its last argument
            names = []
        index = names.index("allow_tf32") if "allow_tf32" in names else len(inputs) - 1
        value = inputs[index].toIValue()
        if isinstance(value, bool):
            found.append(value)
    return any(found) if found else None


def build_script(model: nn.Module, example: torch.Tensor) -> Artifact:
    """torch.jit.script: compiles the Python source; the input is typed only as 'Tensor'."""
    scripted = torch.jit.script(model)
    graph_input = list(scripted.graph.inputs())[1].type()
    return Artifact("torch.jit.script", scripted, f"graph input type '{graph_input}': no shape, no strides", 0.0)


def exported_input_layout(program: torch.export.ExportedProgram) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shape and strides of the first user input, as the ExportedProgram's graph records them."""
    user_inputs = set(program.graph_signature.user_inputs)
    for node in program.graph.nodes:
        if node.op == "placeholder" and node.name in user_inputs:
            value = node.meta["val"]
            return tuple(value.shape), tuple(value.stride())
    raise AuditError("the exported program has no user input")


def build_export(model: nn.Module, example: torch.Tensor) -> Artifact:
    """torch.export: an ATen graph whose nodes carry fake tensors with the example's strides;
    the module it returns checks shapes and dtypes of its inputs, not strides."""
    program = torch.export.export(model, (example,))
    shape, stride = exported_input_layout(program)
    return Artifact("torch.export", program.module(), f"input meta {describe_layout(shape, stride)}",
                    0.0, recorded_stride=stride)


def onnx_exporter() -> str:
    """'dynamo' (torch.onnx.export(dynamo=True), needs onnxscript) or 'legacy' (TorchScript-based)."""
    return "dynamo" if importlib.util.find_spec("onnxscript") is not None else "legacy"


def export_onnx(model: nn.Module, example: torch.Tensor, path: str | Path) -> str:
    """Write the model as ONNX with the current exporter where it is installed; returns which."""
    exporter = onnx_exporter()
    with _quiet(), torch.no_grad():
        if exporter == "dynamo":
            torch.onnx.export(model, (example,), str(path), dynamo=True, verbose=False)
        else:
            torch.onnx.export(model, (example,), str(path), dynamo=False)
    return exporter


def ort_providers(device: torch.device) -> list[str]:
    """CUDA then CPU where this onnxruntime build has the CUDA provider and the model is on a
    GPU; else the CPU provider alone."""
    import onnxruntime as ort

    available = ort.get_available_providers()
    if device.type == "cuda" and "CUDAExecutionProvider" in available:
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    return ["CPUExecutionProvider"]


def ort_session(model_path: str | Path, providers: list[str], options: object | None = None,
                provider_options: list[dict] | None = None) -> object:
    """An InferenceSession with quiet logs and torch's thread count, so timings compare."""
    import onnxruntime as ort

    if options is None:
        options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = torch.get_num_threads()
    # ORT's threads spin after each run by default, stealing the cores the next timed
    # variant (eager PyTorch, another session) needs on a small machine.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if providers and providers[0] == "CUDAExecutionProvider":
        # Run on torch's current stream, so CUDA events (labkit.measure.bench) bracket ORT's kernels
        # and a tensor torch just wrote is ready when ORT reads it.
        stream = {"user_compute_stream": str(torch.cuda.current_stream().cuda_stream),
                  "has_user_compute_stream": "1"}
        given = list(provider_options or [{} for _ in providers])
        try:
            return ort.InferenceSession(str(model_path), options, providers=providers,
                                        provider_options=[{**given[0], **stream}, *given[1:]])
        except Exception:  # an onnxruntime build that refuses the option: its own stream then
            pass
    if provider_options is not None:
        try:
            return ort.InferenceSession(str(model_path), options, providers=providers,
                                        provider_options=provider_options)
        except Exception:  # a build that refuses an option (use_tf32 is ORT 1.16+): its defaults
            pass
    return ort.InferenceSession(str(model_path), options, providers=providers)


def working_providers(model_path: str | Path, device: torch.device) -> list[str]:
    """The providers a session really got: a CUDA provider that is listed but cannot load
    (missing CUDA or cuDNN libraries) leaves ONNX Runtime on the CPU, with only a log line."""
    return list(ort_session(model_path, ort_providers(device)).get_providers())


def onnx_input_record(model_path: str | Path) -> str:
    """What an ONNX file declares about its first input: element type and dims, nothing more."""
    import onnx

    graph_input = onnx.load(str(model_path), load_external_data=False).graph.input[0]
    tensor_type = graph_input.type.tensor_type
    dims = tuple(d.dim_value if d.HasField("dim_value") else d.dim_param for d in tensor_type.shape.dim)
    return (f"input '{graph_input.name}' {onnx.TensorProto.DataType.Name(tensor_type.elem_type)} "
            f"dims {dims}: no strides (ONNX tensors are dense, row-major)")


def _ort_feed_numpy(session: object) -> Callable[[torch.Tensor], torch.Tensor]:
    name = session.get_inputs()[0].name

    def run(x: torch.Tensor) -> torch.Tensor:
        out = session.run(None, {name: x.detach().cpu().numpy()})[0]
        return torch.from_numpy(out).to(x.device)
    return run


def _ort_feed_pointer(session: object, out_shape: tuple[int, ...]) -> Callable[[torch.Tensor], torch.Tensor]:
    """Bind the tensor's data pointer with its shape: the zero-copy way to feed ORT from torch.
    ORT gets an address and a shape, never the strides."""
    import numpy as np

    in_name, out_name = session.get_inputs()[0].name, session.get_outputs()[0].name
    on_gpu = "CUDAExecutionProvider" in session.get_providers()

    def run(x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda and not on_gpu:  # the CUDA provider did not load: bind host memory
            return run(x.cpu()).to(x.device)  # .cpu() keeps the strides of a dense tensor
        out = torch.empty(out_shape, dtype=x.dtype, device=x.device)
        kind, index = ("cuda", x.device.index or 0) if x.is_cuda else ("cpu", 0)
        if x.is_cuda:
            torch.cuda.synchronize(x.device)  # ORT reads on its own stream
        binding = session.io_binding()
        binding.bind_input(in_name, kind, index, np.float32, tuple(x.shape), x.data_ptr())
        binding.bind_output(out_name, kind, index, np.float32, tuple(out.shape), out.data_ptr())
        session.run_with_iobinding(binding)
        return out
    return run


def build_onnx(model: nn.Module, example: torch.Tensor, workdir: Path,
               feed: str = "numpy", strict: bool = False) -> Artifact:
    """ONNX through the current exporter, run in ONNX Runtime, fed numpy arrays ('numpy') or a
    bound data pointer ('pointer'). strict: ask the CUDA provider for strict float32
    (use_tf32=0; its default is TF32 on), as `reference_math` computes the reference."""
    model_path = workdir / "model.onnx"
    if not model_path.exists():
        export_onnx(model, example, model_path)
    providers = ort_providers(example.device)
    no_tf32 = ([{"use_tf32": "0"}] + [{} for _ in providers[1:]]
               if strict and providers[0] == "CUDAExecutionProvider" else None)
    session = ort_session(model_path, providers, provider_options=no_tf32)
    exporter = onnx_exporter()
    provider = session.get_providers()[0].replace("ExecutionProvider", "")
    if feed == "numpy":
        run = _ort_feed_numpy(session)
        name, how = f"ONNX Runtime {provider}, numpy feed", "numpy array (ORT copies a strided array to dense)"
    else:
        out_shape = tuple(model(example).shape)
        run = _ort_feed_pointer(session, out_shape)
        name, how = f"ONNX Runtime {provider}, IOBinding of data_ptr", "data pointer and shape only"
    return Artifact(name, run, onnx_input_record(model_path), 0.0,
                    note=f"exporter: {exporter}; fed as {how}")


# The child compiles without precompiled headers: a precompiled header pays only when later
# compiles reuse it, and a chapter compiles once. Measured on the course's shared 2-core CPU,
# three cold compiles of the audit's SmallCNN each way: 36.8, 48.4, 29.6 s with them, 30.0,
# 28.6, 31.4 s without (faster without in two of three; the machine was noisy).
# benchmarks/gpu_07_aoti.py measures the same on a GPU. The child prints its own seconds.
# It compiles with TF32 off, as the in-process paths are built (`_row`).
AOTI_COMPILE = ("import sys, time, torch\n"
                "torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False\n"
                "start = time.perf_counter()\n"
                "headers = getattr(torch._inductor.config.aot_inductor, 'precompile_headers', None)\n"
                "if headers is not None:\n"
                "    torch._inductor.config.aot_inductor.precompile_headers = False\n"
                "program = torch.export.load(sys.argv[1])\n"
                "torch._inductor.aoti_compile_and_package(program, package_path=sys.argv[2])\n"
                "print(f'compile_s={time.perf_counter() - start:.1f}')\n")


@dataclass
class PendingAOTI:
    """An AOTInductor compile running in a child process, started before the audit's other
    paths are built so that it overlaps them (`run`); `finish` waits for it and loads it."""

    child: subprocess.Popen
    package_path: Path
    records: str
    stride: tuple[int, ...]
    started: float
    export_s: float

    def finish(self, timeout_s: float) -> Artifact:
        """Wait for the compile (at most timeout_s since it started), then load the package.
        The note says where the time went: export, the child's compile, the wait, the load."""
        left = max(0.0, timeout_s - (time.perf_counter() - self.started))
        try:
            out, errors = self.child.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            os.killpg(self.child.pid, signal.SIGKILL)  # the compile and its worker processes
            self.child.communicate()
            raise TimeoutError(f"AOTInductor did not compile within {timeout_s:.0f} s on this machine "
                               "(LABKIT_AOTI_TIMEOUT_S=600 allows it 10 minutes)") from None
        if self.child.returncode != 0:
            last = (errors or "").strip().splitlines()[-1:] or ["no message"]
            raise RuntimeError(f"AOTInductor compile failed: {last[0][:200]}")
        compiled = time.perf_counter()
        runner = torch._inductor.aoti_load_package(str(self.package_path))
        loaded = time.perf_counter()
        child_s = next((line.split("=", 1)[1] for line in (out or "").splitlines()
                        if line.startswith("compile_s=")), "?")
        checked = os.environ.get(AOTI_CHECK_ENV, "0") not in ("", "0")
        return Artifact("AOTInductor", runner, self.records, loaded - self.started + self.export_s,
                        note=f"input strides checked at run time: {'yes' if checked else 'no'} "
                             f"({AOTI_CHECK_ENV}={'1' if checked else 'unset'}); seconds: export "
                             f"{self.export_s:.1f}, compile {child_s} (child process, "
                             f"{compiled - self.started:.1f} from its start to its end), "
                             f"load {loaded - compiled:.1f}",
                        recorded_stride=self.stride)


def start_aoti(model: nn.Module, example: torch.Tensor, workdir: Path) -> PendingAOTI:
    """torch.export the model, save the program and start AOTInductor's compile of it in a
    child process (a C++ and, on a GPU, Triton compile), so it can be stopped after a time
    limit and can run while other work goes on. The compiled code assumes the example's
    strides; it checks them only when AOTI_RUNTIME_CHECK_INPUTS=1 was set before loading."""
    begin = time.perf_counter()
    with _quiet(), torch.no_grad():
        program = torch.export.export(model, (example,))
    shape, stride = exported_input_layout(program)
    program_path, package_path = workdir / "program.pt2", workdir / "model_aoti.pt2"
    torch.export.save(program, str(program_path))
    export_s = time.perf_counter() - begin
    child = subprocess.Popen([sys.executable, "-c", AOTI_COMPILE, str(program_path), str(package_path)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    return PendingAOTI(child, package_path, f"compiled for {describe_layout(shape, stride)}", stride,
                       time.perf_counter(), export_s)


def build_aoti(model: nn.Module, example: torch.Tensor, workdir: Path, timeout_s: float) -> Artifact:
    """AOTInductor: torch.export, then a compile into a package in a child process (stopped
    after timeout_s: a few minutes on a small CPU), then the package loaded here."""
    return start_aoti(model, example, workdir).finish(timeout_s)


# ---------------------------------------------------------------------------------------
# Running the audit


ZERO_REFERENCE = ("the eager reference is all zeros, so any output of its shape would agree "
                  "(a zero-initialised last layer? give it non-zero weights or audit the features before it)")


def outcome(run: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, expected: torch.Tensor,
            tolerance: float | None = None) -> Outcome:
    """Call the artifact on x: an exception is 'rejected', a result off eager is 'silently wrong',
    and against an all-zero reference 'not checkable' (it would agree with anything).
    tolerance: relative to max |expected| (default TOLERANCE for expected's device)."""
    try:
        with _quiet(), torch.no_grad():
            got = run(x)
    except Exception as error:  # any refusal counts; its first line says why
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        return Outcome(REJECTED, f"{type(error).__name__}: {first[:160]}")
    if tuple(got.shape) != tuple(expected.shape):
        return Outcome(WRONG, f"shape {tuple(got.shape)}, eager gives {tuple(expected.shape)}")
    scale = float(expected.abs().max())
    error = float((got.float() - expected.float()).abs().max())
    if scale == 0:
        return Outcome(UNCHECKABLE, ZERO_REFERENCE, error)
    if tolerance is None:
        tolerance = TOLERANCE.get(expected.device.type, 1e-4)
    if error <= tolerance * scale:
        return Outcome(CORRECT, "", error)
    return Outcome(WRONG, f"max |error| {error:.3g} against outputs up to {scale:.3g}", error)


@dataclass
class Audit:
    """The audit table: rows, the input layouts, and what ran where."""

    rows: list[Row]
    device: str
    example_shape: tuple[int, ...]
    exporter: str
    reference: Reference | None = None  # how the eager reference was computed (`reference_math`)

    COLUMNS = ("path", "what it records about its input", *LAYOUTS)

    def row(self, path_prefix: str) -> Row:
        """The first row whose path starts with path_prefix ('torch.jit.trace', 'ONNX Runtime')."""
        for r in self.rows:
            if r.path.startswith(path_prefix):
                return r
        raise KeyError(f"no row for {path_prefix!r}; rows: {[r.path for r in self.rows]}")

    def cells(self) -> list[dict[str, str]]:
        """One dict per row with COLUMNS as keys (plain text)."""
        return [{"path": r.path, "what it records about its input": r.records + (f" ({r.note})" if r.note else ""),
                 **{lay: str(r.outcomes[lay]) for lay in LAYOUTS}} for r in self.rows]

    def structure(self) -> str:
        """Path and outcome kinds only: deterministic for a given torch/onnxruntime, for nbval."""
        lines = [" | ".join(("path", *LAYOUTS))]
        lines += [" | ".join((r.path, *(r.outcomes[lay].kind for lay in LAYOUTS))) for r in self.rows]
        return "\n".join(lines)

    def as_dict(self) -> dict:
        """Plain values for labkit.core.results."""
        return {"device": self.device, "example_shape": list(self.example_shape), "exporter": self.exporter,
                "reference": str(self.reference) if self.reference else None,
                "rows": [{"path": r.path, "records": r.records, "note": r.note, "build_s": r.build_s,
                          "outcomes": {lay: {"kind": o.kind, "detail": o.detail, "max_error": o.max_error}
                                       for lay, o in r.outcomes.items()}} for r in self.rows]}

    def __repr__(self) -> str:
        return self.structure()

    def _repr_html_(self) -> str:
        colours = {CORRECT: "#1a7f37", REJECTED: "#9a6700", WRONG: "#cf222e", SKIPPED: "#57606a",
                   UNCHECKABLE: "#57606a"}
        head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in self.COLUMNS)
        body = ""
        for r, cells in zip(self.rows, self.cells(), strict=True):
            tds = ""
            for column in self.COLUMNS:
                colour = colours.get(r.outcomes[column].kind) if column in LAYOUTS else None
                style = f"text-align:left;color:{colour};font-weight:bold" if colour else "text-align:left"
                tds += f"<td style='{style}'>{html.escape(cells[column])}</td>"
            body += f"<tr>{tds}</tr>"
        caption = (f"example input {self.example_shape} on {self.device}; ONNX exporter: {self.exporter}; "
                   f"checked against {self.reference or 'eager'} before any timing")
        return f"<table><caption>{html.escape(caption)}</caption><tr>{head}</tr>{body}</table>"


AOTI_COMMAND = "python -m labkit.audit MODEL --exports aoti"


def machine_name(device: torch.device) -> str:
    """This machine in a few words: the GPU's name on cuda, else the CPU's model and cores."""
    if device.type == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_name(device)
    return f"CPU {env.cpu_model()}, {os.cpu_count()} cores"


def aoti_skip_reason(device: torch.device) -> str:
    """Why AOTInductor was not compiled, naming this machine and how to run it. The text used to
    read "takes minutes on a small CPU ... see the recorded GPU run" on every machine, the H200
    too, where no such run was recorded (review 2026-12-04i 08-09-99 item 6)."""
    if device.type == "cuda":
        return (f"not compiled on this machine ({machine_name(device)}): its compile limit was 0 s "
                f"(LABKIT_AOTI_TIMEOUT_S=0 or aoti_timeout_s=0); the C++ and Triton compile takes "
                f"minutes. To run it: LABKIT_AOTI_TIMEOUT_S=600 {AOTI_COMMAND}")
    return (f"not compiled on this machine ({machine_name(device)}): AOTInductor's C++ compile takes "
            f"minutes on a CPU, so a CPU run skips it unless given a limit. To run it: "
            f"LABKIT_AOTI_TIMEOUT_S=600 {AOTI_COMMAND}")


def default_aoti_timeout_s(device: torch.device) -> float:
    """0 (skip) on a CPU: the C++ compile takes minutes on a small CPU, past a chapter's budget;
    100 s on a GPU machine (a chapter there must finish within 4 minutes). LABKIT_AOTI_TIMEOUT_S
    overrides either."""
    override = os.environ.get("LABKIT_AOTI_TIMEOUT_S", "")
    if override.replace(".", "", 1).isdigit():
        return float(override)
    return 100.0 if device.type == "cuda" else 0.0


def run(model: nn.Module, example: torch.Tensor, paths: tuple[str, ...] | None = None,
        aoti_timeout_s: float | None = None, workdir: str | Path | None = None) -> Audit:
    """Freeze `model` with `example` along each path and feed it the three layouts of `example`.

    paths: a subset of PATHS (default all). aoti_timeout_s: how long AOTInductor may compile
    (0 skips it, saying why; default from default_aoti_timeout_s). A path that fails to build
    is a row that says why, never an exception.
    """
    if not isinstance(model, nn.Module):
        raise AuditError(f"run() needs an nn.Module, got {type(model).__name__}")
    if not isinstance(example, torch.Tensor) or example.dtype != torch.float32:
        raise AuditError("run() needs a float32 example tensor (NCHW), e.g. export_audit.example_input()")
    unknown = set(paths or ()) - set(PATHS)
    if unknown:
        raise AuditError(f"unknown paths {sorted(unknown)}; choose from {PATHS}")
    device = example.device
    timeout = default_aoti_timeout_s(device) if aoti_timeout_s is None else aoti_timeout_s
    model = model.eval()
    inputs = layouts(example)
    reference = reference_math(device.type, tf32_flags())
    with torch.no_grad(), strict_float32(reference.tf32_off):
        expected = model(inputs[NCHW])
    owned = tempfile.TemporaryDirectory(prefix="labkit-export-") if workdir is None else None
    where = Path(owned.name if owned else workdir)
    (where / "model.onnx").unlink(missing_ok=True)  # never reuse another model's export
    builders: dict[str, Callable[[], Artifact]] = {
        "trace": lambda: build_trace(model, example),
        "script": lambda: build_script(model, example),
        "export": lambda: build_export(model, example),
        "onnx": lambda: build_onnx(model, example, where, "numpy", strict=reference.tf32_off),
        "onnx_pointer": lambda: build_onnx(model, example, where, "pointer", strict=reference.tf32_off),
        "aoti": lambda: build_aoti(model, example, where, timeout),
    }
    rows = []
    try:
        chosen = paths or PATHS
        if "aoti" in chosen and timeout > 0:  # the longest build starts first, the others overlap it
            try:
                with torch.no_grad(), strict_float32():
                    pending = start_aoti(model, example, where)
                builders["aoti"] = lambda: pending.finish(timeout)
            except Exception as error:  # export or save failed: the row says so, as a build would
                builders["aoti"] = lambda error=error: _raise(error)
        for key in chosen:
            rows.append(_row(key, builders[key], inputs, expected, timeout, reference))
    finally:
        if owned is not None:
            owned.cleanup()
    exporter = onnx_exporter() if _has_onnx() else "not installed"
    return Audit(rows, str(device), tuple(example.shape), exporter, reference)


def _raise(error: Exception) -> Artifact:
    raise error


PATHS = ("trace", "script", "export", "onnx", "onnx_pointer", "aoti")
PATH_NAMES = {"trace": "torch.jit.trace", "script": "torch.jit.script", "export": "torch.export",
              "onnx": "ONNX Runtime, numpy feed", "onnx_pointer": "ONNX Runtime, IOBinding of data_ptr",
              "aoti": "AOTInductor"}


def _has_onnx() -> bool:
    return all(importlib.util.find_spec(n) is not None for n in ("onnx", "onnxruntime"))


def _skipped(key: str, reason: str) -> Row:
    return Row(PATH_NAMES[key], "not built", {lay: Outcome(SKIPPED) for lay in LAYOUTS}, None, reason)


def _row(key: str, build: Callable[[], Artifact], inputs: dict[str, torch.Tensor],
         expected: torch.Tensor, aoti_timeout_s: float, reference: Reference | None = None) -> Row:
    if key.startswith("onnx") and not _has_onnx():
        return _skipped(key, "onnx / onnxruntime not installed (pip install onnx onnxruntime onnxscript)")
    if key == "aoti" and aoti_timeout_s <= 0:
        return _skipped(key, aoti_skip_reason(expected.device))
    try:
        # built with TF32 off on every device: a trace keeps the setting it was traced under
        # (traced_allow_tf32), and one traced with TF32 on read "silently wrong" against the
        # strict reference on a GPU (review 2026-12-03h item 1); on a CPU the flags change no
        # result, but a trace made there and run on a GPU would carry them
        with strict_float32():
            artifact = _timed(build)
    except Exception as error:  # a path that cannot be built is a finding, not a crash
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        return _skipped(key, f"could not be built: {type(error).__name__}: {first[:200]}")
    reference = reference or reference_math(expected.device.type, None)
    with strict_float32(reference.tf32_off):  # the artifact run the way its reference was
        outcomes = {lay: outcome(artifact.run, x, expected, reference.tolerance) for lay, x in inputs.items()}
    return Row(artifact.path, artifact.records, outcomes, artifact.build_s, artifact.note, artifact)


CPU_CLOCK = "CPU clock"


def _on_cpu_session(path: str) -> bool:
    """An ONNX Runtime session on its CPU provider: it runs on the host whatever the input's device."""
    return "ONNX Runtime CPU" in path


@dataclass
class Speed:
    """The correct paths timed, one comparison per clock: device events for what runs on the GPU,
    the CPU clock for what runs on the host (ONNX Runtime's CPU provider on a GPU machine gets
    its own comparison, against eager on the CPU, never CUDA events beside GPU eager)."""

    comparisons: dict[str, object]  # clock label -> labkit.measure.bench.Comparison
    correct_on_all: list[str]  # paths that gave eager's answer on every tested layout

    @property
    def variants(self) -> dict[str, object]:
        """Every timed variant, labelled with its clock where there are several."""
        several = len(self.comparisons) > 1
        return {(f"{label} [{clock}]" if several else label): v
                for clock, c in self.comparisons.items() for label, v in c.variants.items()}

    def fastest_correct(self) -> dict[str, str]:
        """Per clock, the fastest path among those correct on all tested layouts (eager included:
        it is correct by definition); a path wrong on some layout is never named fastest."""
        out = {}
        for clock, comparison in self.comparisons.items():
            eligible = [k for k in comparison.variants if k.startswith("eager") or k in self.correct_on_all]
            out[clock] = min(eligible, key=lambda k: comparison[k].ratio)
        return out

    def _repr_html_(self) -> str:
        return "".join(f"<p><b>timed with: {html.escape(clock)}</b></p>{c._repr_html_()}"
                       for clock, c in self.comparisons.items())

    def __repr__(self) -> str:
        return "\n".join(f"timed with {clock}:\n{c}" for clock, c in self.comparisons.items())


def speed(audit: Audit, example: torch.Tensor, model: nn.Module, rounds: int = 5,
          rep_ms: float = 300.0) -> Speed:
    """Time eager and every path that was correct on the NCHW input, interleaved (labkit.measure.bench).

    Only correct paths are timed: a fast wrong answer is not a result. Each path is timed by the
    clock of the place it runs: on a GPU machine the CPU-provider ONNX Runtime sessions are
    timed with the CPU clock (bench device='cpu') against eager on the CPU.
    """
    import copy as _copy

    from labkit.measure import bench

    x = example.contiguous()
    timed = [r for r in audit.rows if r.artifact is not None and r.outcomes[NCHW].kind == CORRECT]
    on_host = [r for r in timed if x.is_cuda and _on_cpu_session(r.path)]
    here: dict[str, Callable[[], object]] = {"eager": lambda: model(x)}
    for r in timed:
        if r not in on_host:
            here[r.path] = (lambda fn: lambda: fn(x))(r.artifact.run)
    comparisons: dict[str, object] = {}
    clock = f"CUDA events on {x.device}" if x.is_cuda else CPU_CLOCK
    with torch.no_grad(), _quiet():
        comparisons[clock] = bench.compare(here, baseline="eager", rounds=rounds, rep_ms=rep_ms,
                                           device=x.device)
        if on_host:
            x_cpu, model_cpu = x.cpu(), _copy.deepcopy(model).cpu()
            host: dict[str, Callable[[], object]] = {"eager on the CPU": lambda: model_cpu(x_cpu)}
            for r in on_host:
                host[r.path] = (lambda fn: lambda: fn(x_cpu))(r.artifact.run)
            comparisons[CPU_CLOCK] = bench.compare(host, baseline="eager on the CPU", rounds=rounds,
                                                   rep_ms=rep_ms, device="cpu")
    return Speed(comparisons, [r.path for r in timed if r.correct_on_all])
