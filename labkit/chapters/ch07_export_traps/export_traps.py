"""The known layout traps of deploying a model, reproduced and measured.

    from labkit.chapters.ch07_export_traps import export_traps
    export_traps.dropped_contiguous(example)        # a contiguous() that export drops
    export_traps.channels_last_declared_nchw(model, example)
    export_traps.ort_layout_preference(model, example)   # Transpose/Reorder nodes, timed
    export_traps.tensorrt_status()                  # detected, never assumed

1. `x.contiguous()` is a no-op when x already is contiguous, so a tracer that records what
   *ran* (torch.export) records nothing for it; a later `view` that needed it then fails on an
   input laid out otherwise. torch.jit.trace records the call itself and keeps it.
2. A channels_last model exported with an NCHW example: what the artifact declares, and
   whether the channels_last choice survives at all (in ONNX it cannot: ONNX has no strides).
3. ONNX Runtime rewrites layouts itself: on a CPU into blocked NCHWc (ReorderInput/Output
   nodes), on a GPU into NHWC when asked (`prefer_nhwc`, Transpose nodes). Counted and timed.
4. TensorRT and Torch-TensorRT run only where they are installed; what was skipped is said.
"""

from __future__ import annotations

import collections
import copy
import importlib.util
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from labkit.audit import export_audit
from labkit.audit.export_audit import CHANNELS_LAST, NCHW, TRANSPOSED

LAYOUT_NODES = ("Transpose", "ReorderInput", "ReorderOutput")  # what a layout change adds to a graph


# ---------------------------------------------------------------------------------------
# 1. The contiguous() that export drops


class ContiguousThenView(nn.Module):
    """conv -> relu -> .contiguous() -> .view(n, -1) -> linear: correct in eager on every layout,
    because contiguous() copies whenever the conv output is not contiguous."""

    def __init__(self, channels: int = 8, image: int = 16, classes: int = 10) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.fc = nn.Linear(channels * image * image, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x)).contiguous()
        return self.fc(y.view(y.shape[0], -1))


def graph_ops(program: torch.export.ExportedProgram) -> list[str]:
    """The ATen ops of an exported program, in order ('conv2d', 'relu', 'view', ...)."""
    return [str(n.target).split(".")[-2] if str(n.target).count(".") >= 2 else str(n.target)
            for n in program.graph.nodes if n.op == "call_function"]


def traced_ops(traced: torch.jit.ScriptModule) -> list[str]:
    """The aten ops a torch.jit.trace graph records (inlined), in order."""
    graph = traced.inlined_graph if hasattr(traced, "inlined_graph") else traced.graph
    return [n.kind().split("::")[-1] for n in graph.nodes() if n.kind().startswith("aten::")]


COPY_OPS = ("contiguous", "clone", "_to_copy", "copy")


@dataclass
class ConvStrides:
    """The first convolution's output strides, as eager produced them and as torch.export
    recorded them in its graph (node.meta['val']), for each example layout, on one device."""

    device: str
    rows: list[dict]  # {"example": layout, "eager": strides, "export": strides}

    def lines(self) -> list[str]:
        out = []
        for r in self.rows:
            same = "same" if r["eager"] == r["export"] else "DIFFERENT: the graph assumes a layout eager did not produce"
            out.append(f"{self.device}, {r['example']} example: eager conv output strides {r['eager']}, "
                       f"export recorded {r['export']} ({same})")
        return out

    @property
    def mismatched(self) -> list[str]:
        """The example layouts whose recorded strides differ from eager's."""
        return [r["example"] for r in self.rows if r["eager"] != r["export"]]

    def __repr__(self) -> str:
        return "\n".join(self.lines())


@dataclass
class DroppedContiguous:
    """What each path kept of the model's contiguous() call, and what each then did; with the
    first convolution's output strides, read off the same two exports."""

    exported_ops: dict[str, list[str]]  # example layout -> torch.export's ops
    traced_ops: list[str]
    audit: export_audit.Audit
    conv_strides: ConvStrides | None = None
    # example layout (other than NCHW) -> what its own export did with each input layout, its own
    # included: on the H200 the channels_last export dropped contiguous() and was never fed the
    # layout it was exported for (review 2026-12-03h item 10)
    own_layout: dict[str, dict[str, export_audit.Outcome]] = field(default_factory=dict)

    def kept_by_export(self, example_layout: str) -> bool:
        return any(op in COPY_OPS for op in self.exported_ops[example_layout])

    @property
    def kept_by_trace(self) -> bool:
        return any(op in COPY_OPS for op in self.traced_ops)

    def lines(self) -> list[str]:
        out = [f"torch.export with a {lay} example: {' -> '.join(ops)} "
               f"(contiguous {'kept' if self.kept_by_export(lay) else 'dropped'})"
               for lay, ops in self.exported_ops.items()]
        out.append(f"torch.jit.trace with an NCHW example: {' -> '.join(self.traced_ops)} "
                   f"(contiguous {'kept' if self.kept_by_trace else 'dropped'})")
        out += [f"torch.export with a {lay} example, fed "
                + ", ".join(f"{fed}: {outcome}" for fed, outcome in outcomes.items())
                for lay, outcomes in self.own_layout.items()]
        return out

    def __repr__(self) -> str:
        return "\n".join(self.lines())


def _exports(model: nn.Module, example: torch.Tensor) -> dict[str, tuple[torch.export.ExportedProgram, tuple]]:
    """torch.export of `model` with an NCHW and with a channels_last example, each beside the
    strides eager's first convolution gives for that example (one export per layout, shared by
    Trap 1's two readings)."""
    out = {}
    with export_audit._quiet(), torch.no_grad():
        for name, x in ((NCHW, example), (CHANNELS_LAST, export_audit.layouts(example)[CHANNELS_LAST])):
            out[name] = (torch.export.export(model, (x,)), tuple(model.conv(x).stride()))
    return out


def _conv_strides(exports: dict[str, tuple[torch.export.ExportedProgram, tuple]], device: object) -> ConvStrides:
    rows = []
    for name, (program, eager) in exports.items():
        conv = next(n for n in program.graph.nodes if n.op == "call_function"
                    and ("conv" in str(n.target) or "convolution" in str(n.target)))
        rows.append({"example": name, "eager": eager, "export": tuple(conv.meta["val"].stride())})
    return ConvStrides(str(torch.device(device)), rows)


def dropped_contiguous(batch: int = 2, image: int = 16, device: str | torch.device = "cpu",
                       paths: tuple[str, ...] = ("trace", "script", "export", "onnx")) -> DroppedContiguous:
    """Export ContiguousThenView with an NCHW and with a channels_last example, trace it, and
    audit the paths on the three layouts (the NCHW-frozen artifacts); the two exports' first
    convolution strides come with it (`conv_strides`: no second pair of exports)."""
    torch.manual_seed(0)
    model = ContiguousThenView(image=image).to(device).eval()
    example = export_audit.example_input(batch, image, device=device)
    exports = _exports(model, example)
    with export_audit._quiet(), torch.no_grad():
        traced = traced_ops(torch.jit.trace(model, example))
    audit = export_audit.run(model, example, paths=paths)
    return DroppedContiguous({lay: graph_ops(program) for lay, (program, _) in exports.items()},
                             traced, audit, _conv_strides(exports, device), _fed_every_layout(model, example, exports))


def _fed_every_layout(model: nn.Module, example: torch.Tensor,
                      exports: dict[str, tuple[torch.export.ExportedProgram, tuple]]) -> dict[str, dict[str, export_audit.Outcome]]:
    """Each export made with a non-NCHW example, fed the three layouts (its own among them) and
    checked against eager: whether dropping contiguous() breaks the very layout it was made for."""
    inputs = export_audit.layouts(example)
    with torch.no_grad():
        expected = {name: model(x) for name, x in inputs.items()}
    return {lay: {name: export_audit.outcome(program.module(), x, expected[name]) for name, x in inputs.items()}
            for lay, (program, _) in exports.items() if lay != NCHW}


def conv_output_strides(batch: int = 2, image: int = 16, device: str | torch.device = "cpu") -> ConvStrides:
    """Eager's first-convolution output strides beside what torch.export recorded for it, for an
    NCHW and a channels_last example. Devices differ (cuDNN and the CPU kernels choose output
    layouts differently, and the exporter's fake kernels may not follow them), so print both.
    `dropped_contiguous` reads the same from its own exports."""
    torch.manual_seed(0)
    model = ContiguousThenView(image=image).to(device).eval()
    return _conv_strides(_exports(model, export_audit.example_input(batch, image, device=device)), device)


SEED_TRACE_EXAMPLE = "x.transpose(2, 3).transpose(1, 2)"  # the seed's 4.4 example input, as written


def seed_trace_example(run: Callable[[torch.Tensor], torch.Tensor], example: torch.Tensor) -> dict:
    """Feed a frozen model the seed's own example, x.transpose(2, 3).transpose(1, 2), as written.

    For an (N, 3, H, W) batch that is an (N, W, 3, H) tensor: it has W channels, so a 3-channel
    model can take it only when W == 3. Reported as plain data: the shape, and what happened.
    """
    x = example.transpose(2, 3).transpose(1, 2)
    try:
        with torch.no_grad(), export_audit._quiet():
            out = run(x)
    except Exception as error:  # the finding is the error itself
        last = str(error).strip().splitlines()[-1] if str(error).strip() else ""
        name = type(error).__name__
        text = last if last.startswith(name) else f"{name}: {last}"  # TorchScript repeats the type
        return {"expression": SEED_TRACE_EXAMPLE, "shape": list(x.shape), "outcome": "raised",
                "error": text[:240]}
    return {"expression": SEED_TRACE_EXAMPLE, "shape": list(x.shape), "outcome": "ran",
            "error": None, "output_shape": list(out.shape)}


NEAREST_SEED_EXAMPLE = "x.transpose(2, 3)"  # the seed's kind of example (not contiguous) that the model takes


def trace_noncontiguous_example(model: nn.Module, example: torch.Tensor) -> dict:
    """Trace with the seed's kind of example: a non-contiguous x.transpose(2, 3) of square images.

    The seed traces with a transposed view, not a contiguous tensor; its own expression has W
    channels (`seed_trace_example`), so the nearest form a 3-channel model takes swaps H and W
    only. Traced with it, the module is fed the same values in the three layouts and checked
    against eager; ContiguousThenView is traced with such an example too, to see whether its
    explicit contiguous() is kept. Plain data, for C15a's evidence."""
    if example.dim() != 4 or example.shape[2] != example.shape[3]:
        raise export_audit.AuditError(f"needs a 4-D NCHW batch of square images, got {tuple(example.shape)}")
    x = example.transpose(2, 3)
    row = export_audit.run(model, x, paths=("trace",)).row("torch.jit.trace")
    if row.artifact is None:
        raise export_audit.AuditError(f"torch.jit.trace could not trace with {NEAREST_SEED_EXAMPLE}: {row.note}")
    torch.manual_seed(0)
    viewer = ContiguousThenView(image=int(x.shape[-1])).to(x.device).eval()
    with export_audit._quiet(), torch.no_grad():
        ops = traced_ops(torch.jit.trace(viewer, x))
    return {"expression": NEAREST_SEED_EXAMPLE, "shape": list(x.shape), "stride": list(x.stride()),
            "contiguous": x.is_contiguous(),
            "recorded_stride": list(row.artifact.recorded_stride or ()),
            "keeps_contiguous": any(op in COPY_OPS for op in ops),
            "outcomes": {lay: o.kind for lay, o in row.outcomes.items()}}


# ---------------------------------------------------------------------------------------
# 2. A channels_last model exported with an NCHW example


@dataclass
class DeclaredNCHW:
    """What a channels_last model's artifacts declare when exported with an NCHW example."""

    export_input: str               # torch.export's input meta
    export_first_conv_output: str   # the layout the graph's first convolution produces
    trace_input: str                # torch.jit.trace's graph input type
    onnx_same_graph: bool | None    # ONNX of the channels_last model == ONNX of the NCHW model
    onnx_transposes: int | None
    eager: object | None = None     # bench Comparison: channels_last model fed NCHW vs channels_last
    # what eager's first convolution returned for the same NCHW example, set beside export's record
    # (review 2026-12-04i item 9: on the H200 export recorded contiguous NCHW; eager was never shown)
    eager_first_conv_output: str | None = None
    # the same two calls as a loop (wall clock), timed where the launch probe outlasts a device
    # time (review 2026-12-04m item 10: the 19:20 H200 page called 'within +-2%' on device time,
    # 440 against 445 us, while the probe read 584 and 648 us); tables.trap2_decision reads it
    loop: object | None = None

    def lines(self) -> list[str]:
        out = [f"torch.export input: {self.export_input}",
               f"torch.export first conv output: {self.export_first_conv_output}",
               f"torch.jit.trace input: {self.trace_input}"]
        if self.eager_first_conv_output is not None:
            out.append(f"{EAGER_FIRST_CONV}: {self.eager_first_conv_output}")
        if self.onnx_same_graph is not None:
            out.append(f"ONNX graph the same as the NCHW model's: {self.onnx_same_graph}; "
                       f"Transpose nodes: {self.onnx_transposes}")
        return out

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def export_layout_sentence(self, device: object) -> str:
        """What torch.export recorded for the first convolution's output, read off this run.

        It differs by device: export's fake kernels follow the backend's layout rules, so a
        CPU export can record channels_last where the H200's recorded contiguous NCHW."""
        layout = self.export_first_conv_output.rsplit(": ", 1)[-1]
        if layout == "channels_last":
            return f"On {device}, export's fake kernel followed the weights, not the input."
        return f"On {device}, export recorded {layout}: no trace of the weights' channels_last layout."


EAGER_FIRST_CONV = "eager first conv output"  # DeclaredNCHW.lines()'s line for what eager's first convolution returned


def first_conv_output(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The output of model's first nn.Conv2d when model runs on x (a forward hook, no_grad)."""
    conv = next((m for m in model.modules() if isinstance(m, nn.Conv2d)), None)
    if conv is None:
        raise export_audit.AuditError(f"{type(model).__name__} has no nn.Conv2d")
    seen: list[torch.Tensor] = []
    handle = conv.register_forward_hook(lambda _m, _args, out: seen.append(out))
    try:
        with torch.no_grad():
            model(x)
    finally:
        handle.remove()
    return seen[0]


def _onnx_op_types(path: Path) -> list[str]:
    import onnx

    return [n.op_type for n in onnx.load(str(path), load_external_data=False).graph.node]


def channels_last_declared_nchw(model: nn.Module, example: torch.Tensor, time_it: bool = True,
                                rep_ms: float = 200.0, onnx_path: str | Path | None = None,
                                force_loop: bool = False) -> DeclaredNCHW:
    """Convert model to channels_last, freeze it with an NCHW example, read what was recorded.

    onnx_path: the NCHW model's ONNX file if already exported (saves an export). Where the
    harness's launch probe outlasts a device time on a GPU, the two calls are timed again as a
    loop of calls on the wall clock (`loop`; force_loop: anywhere, a CPU test does)."""
    from labkit.measure import bench

    model_cl = copy.deepcopy(model).to(memory_format=torch.channels_last).eval()
    with export_audit._quiet(), torch.no_grad():
        program = torch.export.export(model_cl, (example,))
        shape, stride = export_audit.exported_input_layout(program)
        conv = next(n for n in program.graph.nodes if n.op == "call_function" and "conv" in str(n.target))
        value = conv.meta["val"]
        traced = torch.jit.trace(model_cl, example)
    eager_conv = first_conv_output(model_cl, example)  # what runs, beside what export recorded
    trace_type = list(traced.graph.inputs())[1].type()
    same, transposes = None, None
    if export_audit._has_onnx():
        with tempfile.TemporaryDirectory(prefix="labkit-cl-") as tmp:
            plain, channels_last = Path(onnx_path or Path(tmp) / "nchw.onnx"), Path(tmp) / "cl.onnx"
            if onnx_path is None:
                export_audit.export_onnx(model, example, plain)
            export_audit.export_onnx(model_cl, example, channels_last)
            ops_cl = _onnx_op_types(channels_last)
            same, transposes = _onnx_op_types(plain) == ops_cl, ops_cl.count("Transpose")
    comparison = loop = None
    if time_it:
        x_cl = example.contiguous(memory_format=torch.channels_last)
        calls = {"channels_last input": lambda: model_cl(x_cl),  # the baseline first
                 "NCHW input": lambda: model_cl(example)}
        with torch.no_grad():
            comparison = bench.compare(calls, baseline="channels_last input", rounds=5, rep_ms=rep_ms)
            if force_loop or (example.device.type == "cuda" and launch_bound(comparison)):
                with export_audit._quiet():  # a loop of calls, as the speed table's (timed_loop)
                    loop = bench.compare(calls, baseline="channels_last input", rounds=5, rep_ms=rep_ms,
                                         mode="hot", clock="wall", device=example.device, progress=False)
    return DeclaredNCHW(export_audit.describe_layout(shape, stride),
                        export_audit.describe_layout(tuple(value.shape), tuple(value.stride())),
                        export_audit.describe_layout(trace_type.sizes(), trace_type.strides()),
                        same, transposes, comparison,
                        export_audit.describe_layout(tuple(eager_conv.shape), tuple(eager_conv.stride())),
                        loop)


# ---------------------------------------------------------------------------------------
# 3. ONNX Runtime's own layout preference, on and off


class NHWCInput(nn.Module):
    """Declares an NHWC input (what an image pipeline hands over) and permutes it to NCHW."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x.permute(0, 3, 1, 2))


@dataclass
class LayoutSession:
    """One ONNX Runtime session: declared input layout, layout preference, its optimised graph."""

    declared: str
    preference: str
    node_counts: dict[str, int]
    outcome: export_audit.Outcome
    run: Callable[[], object] = field(repr=False)

    def layout_nodes(self) -> int:
        return sum(self.node_counts.get(op, 0) for op in LAYOUT_NODES)


@dataclass
class OrtLayout:
    """The four sessions (declared NCHW/NHWC x preference off/on) and their timing."""

    provider: str
    preference_name: str
    sessions: list[LayoutSession]
    comparison: object | None
    flops: float | None = None  # one call's FLOPs (`model_flops`), so the table can name a ceiling

    def lines(self) -> list[str]:
        out = [f"{'declared input':<16}{'layout preference':<20}" + "".join(f"{op:>14}" for op in LAYOUT_NODES)
               + f"{'all nodes':>11}  result"]
        for s in self.sessions:
            out.append(f"{s.declared:<16}{s.preference:<20}"
                       + "".join(f"{s.node_counts.get(op, 0):>14}" for op in LAYOUT_NODES)
                       + f"{sum(s.node_counts.values()):>11}  {s.outcome.kind}")
        return out

    def __repr__(self) -> str:
        return "\n".join(self.lines())


def _preference_options(provider: str, on: bool) -> tuple[object, list[dict] | None, str]:
    """Session options and provider options for the layout preference on or off."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    levels = ort.GraphOptimizationLevel
    if provider == "CUDAExecutionProvider":
        options.graph_optimization_level = levels.ORT_ENABLE_ALL
        return options, [{"prefer_nhwc": "1" if on else "0"}, {}], "prefer_nhwc"
    layout_level = getattr(levels, "ORT_ENABLE_LAYOUT", levels.ORT_ENABLE_ALL)
    options.graph_optimization_level = layout_level if on else levels.ORT_ENABLE_EXTENDED
    return options, None, "NCHWc layout optimisation"


def _optimised_node_counts(path: Path, providers: list[str], provider: str, on: bool) -> dict[str, int]:
    """Op counts of the graph ORT optimised (saved by a throwaway session); {} if it cannot save it."""
    options, provider_options, _ = _preference_options(provider, on)
    # beside the source model: the exporter keeps weights in an external file next to it
    optimised = path.parent / f"{path.stem}-{'on' if on else 'off'}-optimised.onnx"
    options.optimized_model_filepath = str(optimised)
    try:
        export_audit.ort_session(path, providers, options, provider_options)
        return dict(collections.Counter(_onnx_op_types(optimised)))
    except Exception:  # saving is not supported for every provider's rewritten graph
        return {}


def ort_clock(provider: str, example: torch.Tensor) -> torch.device:
    """The clock a session's work is timed on: a CPU provider's work is host work, timed on the
    CPU clock (CUDA events and an L2 flush time nothing of it, wherever the example lives); the
    CUDA provider's on the example's GPU."""
    if provider == "CUDAExecutionProvider":
        return example.device
    return torch.device("cpu")


# Trap 3's sampling. A session call takes 15-30 ms on the reference H200's host, so 200 ms over 5
# rounds timed one call per variant per round, and the page's 0.68x lay outside every reproduce run
# (0.50-0.60x; review 2026-12-04j item 6). 800 ms over 7 rounds takes 4-7 calls per round for about
# 2.4 s more. The sessions' threads are already pinned (`export_audit.ort_session`: torch's thread
# count, no spinning between runs), so more calls per round is the cheap part left.
ORT_REP_MS = 800.0
ORT_ROUNDS = 7


def ort_layout_preference(model: nn.Module, example: torch.Tensor, rep_ms: float = ORT_REP_MS,
                          time_it: bool = True, onnx_path: str | Path | None = None,
                          rounds: int = ORT_ROUNDS) -> OrtLayout:
    """Export the model with an NCHW and with an NHWC declared input; run each with ORT's layout
    preference off and on; count Transpose/Reorder nodes in the optimised graphs; check each
    against eager; time the correct ones interleaved (IOBinding of dense inputs, no copies), on
    the clock of the provider that ran them (`ort_clock`: a CPU session on the CPU clock), in
    `rounds` rounds of rep_ms in all per session (`ORT_REP_MS`: why that many)."""
    from labkit.measure import bench

    if not export_audit._has_onnx():
        raise export_audit.AuditError("onnx and onnxruntime are not installed: pip install onnx onnxruntime onnxscript")
    model = model.eval()
    nhwc = example.permute(0, 2, 3, 1).contiguous()
    with torch.no_grad():
        expected = model(example)
    sessions, name = [], ""
    with tempfile.TemporaryDirectory(prefix="labkit-ort-") as tmp:
        for declared, net, x in (("NCHW", model, example), ("NHWC", NHWCInput(model).eval(), nhwc)):
            path = Path(tmp) / f"{declared}.onnx"
            if declared == "NCHW" and onnx_path is not None:
                path = Path(onnx_path)
            else:
                export_audit.export_onnx(net, x, path)
            if declared == "NCHW":
                providers = export_audit.working_providers(path, example.device)
                provider = providers[0]
            for on in (False, True):
                counts = _optimised_node_counts(path, providers, provider, on)
                options, provider_options, name = _preference_options(provider, on)
                try:
                    session = export_audit.ort_session(path, providers, options, provider_options)
                except Exception as error:  # e.g. prefer_nhwc in a build without NHWC kernels
                    failed = export_audit.Outcome(export_audit.REJECTED, f"{type(error).__name__}: {str(error)[:160]}")
                    sessions.append(LayoutSession(declared, "on" if on else "off", counts, failed, lambda: None))
                    continue
                run = export_audit._ort_feed_pointer(session, tuple(expected.shape))
                got = export_audit.outcome(run, x, expected)
                # a CPU session is timed on host memory: no GPU round trip inside its timing
                fed = x if ort_clock(provider, example).type == x.device.type else x.cpu()
                sessions.append(LayoutSession(declared, "on" if on else "off", dict(counts), got,
                                              (lambda fn, inp: lambda: fn(inp))(run, fed)))
    comparison = None
    if time_it:  # interleaved in rounds, on the provider's own clock
        variants = {f"{s.declared} declared, {s.preference}": s.run for s in sessions
                    if s.outcome.kind == export_audit.CORRECT}
        if variants:
            comparison = bench.compare(variants, rounds=rounds, rep_ms=rep_ms, device=ort_clock(provider, example))
    return OrtLayout(provider.replace("ExecutionProvider", ""), name, sessions, comparison,
                     model_flops(model, example) if comparison is not None else None)


def model_flops(model: nn.Module, example: torch.Tensor) -> float:
    """FLOPs of one eager call (torch.utils.flop_counter: convolutions and matmuls, 2 per
    multiply-add), so a timing can say what share of the matmul ceiling it runs at (the speed
    table's eager; Trap 3's ONNX Runtime sessions run the same model, review 2026-12-04k item 9)."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(example)
    return float(counter.get_total_flops())


# ---------------------------------------------------------------------------------------
# 4. Where a fallback runs: ONNX Runtime's placement, TensorRT where installed


def ort_placement(model: nn.Module, example: torch.Tensor, onnx_path: str | Path | None = None) -> dict[str, int]:
    """Nodes per execution provider, read from ORT's own profile of one run (needs a GPU build
    for anything but 'CPUExecutionProvider')."""
    import onnxruntime as ort

    providers = export_audit.ort_providers(example.device)
    with tempfile.TemporaryDirectory(prefix="labkit-place-") as tmp:
        path = Path(onnx_path or Path(tmp) / "model.onnx")
        if onnx_path is None:
            export_audit.export_onnx(model, example, path)
        options = ort.SessionOptions()
        options.enable_profiling = True
        options.profile_file_prefix = str(Path(tmp) / "profile")
        session = export_audit.ort_session(path, providers, options)
        session.run(None, {session.get_inputs()[0].name: example.detach().cpu().numpy()})
        events = json.loads(Path(session.end_profiling()).read_text())
    nodes: dict[str, set] = collections.defaultdict(set)
    for event in events:
        provider = event.get("args", {}).get("provider")
        if event.get("cat") == "Node" and provider:
            nodes[provider].add(event["name"].removesuffix("_kernel_time"))
    return {provider: len(names) for provider, names in sorted(nodes.items())}


def ort_cpu_fallback_cost(model: nn.Module, example: torch.Tensor, rep_ms: float = 300.0,
                          onnx_path: str | Path | None = None) -> object | None:
    """On a GPU: the whole model on ORT's CPU provider against its CUDA provider (interleaved),
    both timed as wall time to a finished result on the CPU clock. What the seed's 'falls back
    to the CPU' would cost at most, on ORT. None without CUDA EP."""
    from labkit.measure import bench

    if export_audit.ort_providers(example.device)[0] != "CUDAExecutionProvider":
        return None
    with tempfile.TemporaryDirectory(prefix="labkit-fallback-") as tmp:
        path = Path(onnx_path or Path(tmp) / "model.onnx")
        if onnx_path is None:
            export_audit.export_onnx(model, example, path)
        gpu = export_audit.ort_session(path, ["CUDAExecutionProvider", "CPUExecutionProvider"])
        cpu = export_audit.ort_session(path, ["CPUExecutionProvider"])
    if "CUDAExecutionProvider" not in gpu.get_providers():
        return None  # listed, but it did not load here
    with torch.no_grad():
        shape = tuple(model(example).shape)
    run_gpu = export_audit._ort_feed_pointer(gpu, shape)
    run_cpu = export_audit._ort_feed_numpy(cpu)
    def gpu_to_completion() -> torch.Tensor:
        out = run_gpu(example)
        torch.cuda.synchronize(example.device)
        return out

    # One clock for both, the CPU's: wall time to a finished result (the GPU run waits for its
    # kernels), since the CPU provider's work is host work that CUDA events do not time.
    return bench.compare({"CUDA provider": gpu_to_completion,
                          "CPU provider (and copies)": lambda: run_cpu(example)},
                         baseline="CUDA provider", rounds=5, rep_ms=rep_ms, device="cpu")


LOOP_ROUNDS = 5      # the speed table's own rounds (export_audit.speed)
LOOP_REP_MS = 300.0  # and its sampling per variant


def launch_bound(comparison: object) -> list[str]:
    """The variants of a GPU comparison whose host launch outlasts their device time
    (`Timing.launch_bound`): a loop of their calls runs at the host's pace, not the GPU's."""
    return [name for name, v in getattr(comparison, "variants", {}).items()
            if getattr(v.timing, "launch_bound", False)]


def timed_loop(speed: export_audit.Speed, audit: export_audit.Audit, example: torch.Tensor, model: nn.Module,
               rounds: int = LOOP_ROUNDS, rep_ms: float = LOOP_REP_MS, force: bool = False) -> object | None:
    """Where a path on the GPU clock is launch-bound, eager and every path of that comparison
    timed as a Python loop of calls: bench's hot mode (back to back, the same input, nothing
    flushed) on the wall clock (nothing holds the GPU while the host launches, so a call is
    timed at the slower of its launch and its device time), interleaved in rounds like the
    device-time table. On the H200 every path was launch-bound (eager: launch 690 us, device
    448 us) and the page called 'fastest' on device time, a clock that did not set the pace
    (review 2026-12-04l item 9); this is the measured pace the call is taken on. The chapters
    02 (`c10_loop`) and 04 (`timed_loop`) time their loops the same way.

    Returns the `Comparison`, or None where no path is launch-bound or nothing ran on a GPU
    clock (`force`: time it anyway, on the first comparison's device; a CPU test does)."""
    from labkit.measure import bench

    gpu = [c for clock, c in speed.comparisons.items() if clock != export_audit.CPU_CLOCK]
    comparison = gpu[0] if gpu else (next(iter(speed.comparisons.values()), None) if force else None)
    if comparison is None or not (force or launch_bound(comparison)):
        return None
    x = example.contiguous()
    calls: dict[str, Callable[[], object]] = {}
    for name in comparison.variants:  # type: ignore[attr-defined]
        if name.startswith("eager"):
            calls[name] = lambda: model(x)
        else:
            calls[name] = (lambda fn: lambda: fn(x))(audit.row(name).artifact.run)
    baseline = next(name for name in calls if name.startswith("eager"))
    with torch.no_grad(), export_audit._quiet():
        return bench.compare(calls, baseline=baseline, rounds=rounds, rep_ms=rep_ms, mode="hot",
                             clock="wall", device=x.device, progress=False)


def time_eager_allocator_kept(model: nn.Module, example: torch.Tensor, threads: int | None = None,
                              rep_ms: float = 300.0) -> object:
    """Eager on the CPU timed inside bench.allocator_kept() (glibc's malloc keeps freed memory), in a
    fresh child process: what the harness's page-fault note advises when faults weigh on eager's
    CPU timing (review 2026-12-03h item 7). A child, because fixing malloc's thresholds by hand
    disables its dynamic threshold for the rest of the process (DESIGN's gotcha): the chapter's
    later CPU timings keep the defaults. Returns the child's `Timing`."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        return pool.apply(_eager_kept_child, (copy.deepcopy(model).cpu().eval(), example.detach().cpu(),
                                              threads, rep_ms))


def _eager_kept_child(model: nn.Module, x: torch.Tensor, threads: int | None, rep_ms: float) -> object:
    from labkit.measure import bench

    with torch.no_grad():  # keep_allocator_memory: the timing runs inside bench.allocator_kept()
        return bench.time(lambda: model(x), device="cpu", threads=threads, rep_ms=rep_ms,
                          keep_allocator_memory=True, label="eager, allocator kept")


def tensorrt_status() -> dict[str, object]:
    """What is installed for TensorRT, detected, not assumed."""
    def version(name: str) -> str | None:
        if importlib.util.find_spec(name) is None:
            return None
        try:
            module = __import__(name)
        except Exception as error:  # installed but broken (missing libnvinfer) counts as absent
            return f"present but not importable: {type(error).__name__}"
        return str(getattr(module, "__version__", "unknown"))

    ort_providers: list[str] = []
    if importlib.util.find_spec("onnxruntime") is not None:
        import onnxruntime as ort

        ort_providers = list(ort.get_available_providers())
    return {"cuda": torch.cuda.is_available(), "tensorrt": version("tensorrt"),
            "torch_tensorrt": version("torch_tensorrt"),
            "ort_tensorrt_provider_listed": "TensorrtExecutionProvider" in ort_providers,
            "ort_cuda_provider_listed": "CUDAExecutionProvider" in ort_providers}


def _usable(version: object) -> bool:
    return isinstance(version, str) and not version.startswith("present but")


@dataclass
class TensorRTRun:
    """Torch-TensorRT on the three layouts, with one op forced to run in PyTorch."""

    ran: bool
    skipped_because: str = ""
    outcomes: dict[str, export_audit.Outcome] = field(default_factory=dict)
    fallback_devices: list[str] = field(default_factory=list)  # where the PyTorch-run parts ran
    comparison: object | None = None  # contiguous vs transposed input, through the engine

    def __repr__(self) -> str:
        if not self.ran:
            return f"Torch-TensorRT not run: {self.skipped_because}"
        shown = ", ".join(f"{k}: {v.kind}" for k, v in self.outcomes.items())
        return f"Torch-TensorRT: {shown}; parts run in PyTorch ran on {self.fallback_devices or 'none'}"


FORCED_TO_PYTORCH = "torch.ops.aten.relu.default"  # an op Torch-TensorRT can convert, forced out


def run_torch_tensorrt(model: nn.Module, example: torch.Tensor, rep_ms: float = 300.0) -> TensorRTRun:
    """Compile with Torch-TensorRT where installed (GPU only), force one op to run in PyTorch,
    and record where that part ran and what the engine does with the three layouts."""
    status = tensorrt_status()
    if not status["cuda"]:
        return TensorRTRun(False, "no CUDA GPU here")
    if not _usable(status["torch_tensorrt"]):
        found = status["torch_tensorrt"]
        return TensorRTRun(False, "torch_tensorrt is not installed" if found is None else
                           f"torch_tensorrt is not usable here ({found})")
    from labkit.measure import bench

    try:
        import torch_tensorrt

        with export_audit._quiet():
            compiled = torch_tensorrt.compile(model.eval(), ir="dynamo", inputs=[example], min_block_size=1,
                                              torch_executed_ops={FORCED_TO_PYTORCH})
    except Exception as error:  # report, do not crash the chapter
        return TensorRTRun(False, f"torch_tensorrt.compile failed: {type(error).__name__}: {str(error)[:200]}")
    devices: list[str] = []

    def record(_module: nn.Module, args: tuple, _out: object) -> None:
        devices.extend(str(a.device) for a in args if isinstance(a, torch.Tensor))

    for name, child in compiled.named_children():
        if "run_on_gpu" in name or "run_on_cpu" in name:  # Torch-TensorRT's PyTorch-run parts
            child.register_forward_hook(record)
    inputs = export_audit.layouts(example)
    with torch.no_grad():
        expected = model(example)
    outcomes = {lay: export_audit.outcome(compiled, x, expected) for lay, x in inputs.items()}
    comparison = None
    if outcomes[NCHW].kind == export_audit.CORRECT and outcomes[TRANSPOSED].kind == export_audit.CORRECT:
        with torch.no_grad():
            comparison = bench.compare({"contiguous input": lambda: compiled(inputs[NCHW]),
                                        "transposed input": lambda: compiled(inputs[TRANSPOSED])},
                                       rounds=5, rep_ms=rep_ms)
    return TensorRTRun(True, "", outcomes, sorted(set(devices)), comparison)


def _nvinfer_loadable() -> bool:
    """Whether TensorRT's runtime library can be loaded (what ONNX Runtime's TensorRT provider needs)."""
    import ctypes
    import ctypes.util

    names = [n for n in (ctypes.util.find_library("nvinfer"),) if n] + ["libnvinfer.so.10", "libnvinfer.so"]
    for name in names:
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            continue
    return False


@dataclass
class OrtTensorRTRun:
    """ONNX Runtime's TensorRT provider, where it loads: outcomes and where the nodes ran."""

    ran: bool
    skipped_because: str = ""
    outcomes: dict[str, export_audit.Outcome] = field(default_factory=dict)
    placement: dict[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:
        if not self.ran:
            return f"ONNX Runtime's TensorRT provider not run: {self.skipped_because}"
        shown = ", ".join(f"{k}: {v.kind}" for k, v in self.outcomes.items())
        return f"ONNX Runtime TensorRT provider, IOBinding feed: {shown}; nodes per provider {self.placement}"


def run_ort_tensorrt(model: nn.Module, example: torch.Tensor, onnx_path: str | Path) -> OrtTensorRTRun:
    """Run the ONNX file with [TensorRT, CUDA, CPU] providers where TensorRT's library loads;
    record what the engine does with the three layouts and which provider ran each node."""
    status = tensorrt_status()
    if not status["cuda"]:
        return OrtTensorRTRun(False, "no CUDA GPU here")
    if not status["ort_tensorrt_provider_listed"]:
        return OrtTensorRTRun(False, "this onnxruntime build has no TensorRT provider")
    if not _nvinfer_loadable():
        return OrtTensorRTRun(False, "the TensorRT provider is listed, but TensorRT's library "
                                     "(libnvinfer) is not installed here")
    import onnxruntime as ort

    providers = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    try:
        options = ort.SessionOptions()
        options.enable_profiling = True
        with tempfile.TemporaryDirectory(prefix="labkit-trt-") as tmp:
            options.profile_file_prefix = str(Path(tmp) / "profile")
            session = ort.InferenceSession(str(onnx_path), options, providers=providers,
                                           provider_options=[{"trt_builder_optimization_level": "1"}, {}, {}])
            if "TensorrtExecutionProvider" not in session.get_providers():
                return OrtTensorRTRun(False, "the TensorRT provider did not load (see ONNX Runtime's log)")
            with torch.no_grad():
                expected = model(example)
            run = export_audit._ort_feed_pointer(session, tuple(expected.shape))
            outcomes = {lay: export_audit.outcome(run, x, expected)
                        for lay, x in export_audit.layouts(example).items()}
            events = json.loads(Path(session.end_profiling()).read_text())
    except Exception as error:  # report, do not crash the chapter
        return OrtTensorRTRun(False, f"{type(error).__name__}: {str(error)[:200]}")
    nodes: dict[str, set] = collections.defaultdict(set)
    for event in events:
        provider = event.get("args", {}).get("provider")
        if event.get("cat") == "Node" and provider:
            nodes[provider].add(event["name"])
    return OrtTensorRTRun(True, "", outcomes, {k: len(v) for k, v in sorted(nodes.items())})


def environment_line() -> str:
    """One line naming the deployment stack found here."""
    parts = [f"torch {torch.__version__}"]
    for name in ("onnx", "onnxruntime", "onnxscript"):
        if importlib.util.find_spec(name) is not None:
            parts.append(f"{name} {__import__(name).__version__}")
        else:
            parts.append(f"{name} not installed")
    status = tensorrt_status()
    parts.append(f"tensorrt {status['tensorrt'] or 'not installed'}")
    parts.append(f"torch_tensorrt {status['torch_tensorrt'] or 'not installed'}")
    return "; ".join(parts)
