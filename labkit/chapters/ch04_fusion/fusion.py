"""Reading what torch.compile did: graphs, graph breaks, recompiles and fused kernels.

Chapter 04 measures what fusing changed. The Conv-BN folding it teaches is a shared tool
(`labkit.models.folding`, which chapter 08's ladder uses too); this module is the chapter's
own half:

- `explain` counts graphs and graph breaks (torch._dynamo.explain);
- `recompile_sweep` shows Dynamo recompiling for each new shape until its recompile limit,
  after which that code runs eager;
- `inductor_kernels` pulls the generated kernels out of Inductor's output code, whose names
  say what was fused.
"""

from __future__ import annotations

import contextlib
import re
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import torch

# ---------------------------------------------------------------------------------------
# Reading what torch.compile did


@dataclass(frozen=True)
class GraphReport:
    """torch._dynamo.explain's answer in plain values: graphs, breaks, why, and the graphs' code."""

    graph_count: int
    graph_break_count: int
    op_count: int
    break_reasons: tuple[str, ...]
    graph_code: tuple[str, ...] = field(default=(), repr=False)

    def as_dict(self) -> dict:
        """Plain values (for claim evidence and results)."""
        return {"graph_count": self.graph_count, "graph_break_count": self.graph_break_count,
                "op_count": self.op_count, "break_reasons": list(self.break_reasons)}

    def __str__(self) -> str:
        reasons = "; ".join(self.break_reasons) or "none"
        return (f"{self.graph_count} graph(s), {self.graph_break_count} graph break(s), "
                f"{self.op_count} op(s); break reasons: {reasons}")


def explain(fn: Callable, *args: object) -> GraphReport:
    """Count the graphs and graph breaks Dynamo makes of fn(*args), without compiling them.

    explain() runs Dynamo's capture only (no backend compile), so it costs seconds on any
    machine. Dynamo's own graph-break warnings are silenced: the report holds the reasons.
    """
    import logging

    torch._dynamo.reset()
    torch._logging.set_logs(dynamo=logging.ERROR)
    try:
        out = torch._dynamo.explain(fn)(*args)
    finally:
        torch._logging.set_logs()
    reasons = tuple(str(getattr(r, "reason", r)).strip().splitlines()[0][:160]
                    for r in out.break_reasons)
    code = tuple(g.code.strip() for g in out.graphs)
    return GraphReport(int(out.graph_count), int(out.graph_break_count), int(out.op_count),
                       reasons, code)


def recompile_limit() -> int:
    """Dynamo's limit on compiled versions of one function (recompile_limit; cache_size_limit
    in older torch), after which new shapes run that code eagerly."""
    config = torch._dynamo.config
    for name in ("recompile_limit", "cache_size_limit"):
        try:
            return int(getattr(config, name))
        except AttributeError:
            continue
    raise RuntimeError("this torch has neither torch._dynamo.config.recompile_limit nor "
                       "cache_size_limit; read the recompile limit in its documentation")


class CompileCounter:
    """A torch.compile backend that counts how often Dynamo hands it a new graph.

    It passes each graph on to a real backend ('eager' runs the captured graph as it is,
    'aot_eager' also traces the backward, 'inductor' generates kernels), so timings are of
    real compiled code and the count is exact.
    """

    def __init__(self, backend: str = "eager") -> None:
        self.backend, self.compiles = backend, 0
        self._inner = None if backend == "eager" else torch._dynamo.lookup_backend(backend)

    def __call__(self, graph_module: torch.fx.GraphModule, example_inputs: list) -> Callable:
        self.compiles += 1
        if self._inner is None:
            return graph_module.forward
        return self._inner(graph_module, example_inputs)


@dataclass(frozen=True)
class ShapeStep:
    """One new input shape in a recompile sweep: was a graph compiled, and what did it cost."""

    shape: tuple[int, ...]
    compiles_so_far: int
    new_graph: bool
    first_call_s: float


def recompile_sweep(fn: Callable, inputs: Iterable[tuple], backend: str = "eager",
                    dynamic: bool | None = False, sync: Callable[[], None] | None = None
                    ) -> tuple[Callable, list[ShapeStep]]:
    """Compile fn and call it once on each argument tuple (each with a new shape).

    `inputs` may be a generator that makes each tuple when the loop reaches it: the loop lets
    go of a tuple before asking for the next, so only one shape's tensors are held at a time
    (review 2026-12-05u 00-04 item 5d: 11 shapes of three 128 MiB arrays were 4.4 GB at once).

    Returns the compiled function (so the caller can time steady-state calls with
    labkit.measure.bench) and, per shape, whether Dynamo compiled a new graph and how long the
    first call took (wall clock, one call: that is what a user waits for). With
    dynamic=False every new shape is a recompile until the recompile limit; with
    dynamic=None (the default of torch.compile) the second shape makes Dynamo compile a
    shape-generic graph and later shapes reuse it.
    """
    import logging

    torch._dynamo.reset()
    counter = CompileCounter(backend)
    compiled = torch.compile(fn, backend=counter, dynamic=dynamic)
    steps = []
    torch._logging.set_logs(dynamo=logging.ERROR)  # the recompile-limit warning: shown as data
    # torch.compile's default (automatic dynamic shapes on), whatever this process set before
    # (a learner's own cell may turn it off; chapter 08's ladder once leaked that here)
    try:
        with torch._dynamo.config.patch(automatic_dynamic_shapes=True):
            for args in inputs:
                before = counter.compiles
                begin = time.perf_counter()
                compiled(*args)
                if sync is not None:
                    sync()
                elapsed = time.perf_counter() - begin
                shape = tuple(args[0].shape) if args and isinstance(args[0], torch.Tensor) else ()
                steps.append(ShapeStep(shape, counter.compiles, counter.compiles > before, elapsed))
                del args  # let go of this shape's tensors before the next shape's are made
    finally:
        torch._logging.set_logs()
    if not steps:
        raise ValueError("recompile_sweep needs at least one tuple of arguments")
    return compiled, steps


# name = async_compile.triton('name', '''source''', ...)  on a GPU;
# name = async_compile.cpp_pybinding(['float*', ...], r'''source''')  on a CPU.
_KERNEL_DEFINITION = re.compile(
    r"^(\w+)\s*=\s*async_compile\.(\w+)\(([^\n]*?)r?(?:'''|\"\"\")(.*?)(?:'''|\"\"\")",
    re.S | re.M)


def inductor_kernels(source_code: str) -> dict[str, str]:
    """{kernel name: its source} for each kernel in one file of Inductor's output code.

    Inductor names a fused kernel after what it fused ('triton_poi_fused_add_mul_relu_0'
    is one pointwise kernel doing an add, a mul and a relu), so the names alone show the
    fusion; the source shows the loads and stores.
    """
    return {m.group(1): m.group(4).strip("\n") for m in _KERNEL_DEFINITION.finditer(source_code)}


@contextlib.contextmanager
def without_compile_caches() -> Iterator[None]:
    """A context in which Inductor compiles from scratch (its on-disk caches ignored).

    Without it a second run, or a graph compiled earlier in the same session, may come from
    the cache: then a "compile time" measures a cache lookup and no code is generated to read.
    """
    import torch._inductor.config as inductor_config

    if not hasattr(inductor_config, "force_disable_caches"):
        yield
        return
    with inductor_config.patch(force_disable_caches=True), warnings.catch_warnings():
        # dynamo then says, once per compile, that it disabled its profile-guided cache too:
        # the point of this context, not news to the learner (the GPU pages printed it twice)
        warnings.filterwarnings("ignore", message=".*dynamo_pgo force disabled.*")
        yield


def inductor_code(fn: Callable, *args: object) -> tuple[object, list[str]]:
    """Compile fn with Inductor, run it once, and return (result, generated source files).

    Costs a real Inductor compile (caches off): seconds on a GPU, about 30 s for a tiny
    function on a 2-core CPU (its C++ compiler is the slow part).
    """
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    with without_compile_caches():
        result, sources = run_and_get_code(torch.compile(fn), *args)
    return result, list(sources)


def excerpt(source: str, lines: int = 12) -> str:
    """The first `lines` non-empty lines of a kernel's source (the rest goes behind a fold)."""
    kept = [line for line in source.splitlines() if line.strip()]
    more = len(kept) - lines
    return "\n".join(kept[:lines]) + (f"\n    ... ({more} more lines)" if more > 0 else "")


def calls_to_pay_back(compile_s: float, eager_call_s: float, compiled_call_s: float) -> float:
    """How many calls the compiled version needs before its compile time is paid back.

    Infinite when the compiled call is not faster than the eager one.
    """
    if compile_s < 0 or eager_call_s <= 0 or compiled_call_s <= 0:
        raise ValueError("times must be positive (compile time may be 0), got "
                         f"{compile_s}, {eager_call_s}, {compiled_call_s}")
    saved = eager_call_s - compiled_call_s
    return float("inf") if saved <= 0 else compile_s / saved


def wall_and_host_per_call(fn: Callable, args: tuple, sync: Callable[[], None] | None = None,
                           calls: int = 50, repeats: int = 5) -> tuple[float, float]:
    """(wall, host) seconds per call: the median batch of `repeats` batches of `calls`
    back-to-back calls, and in that same batch the host's time until the last call returned
    (before the final sync).

    Why wall time: a compiled call and an eager call spend their time in different places
    (guards and a Python wrapper on the host; kernels on the device). CUDA events time the
    device only, so a host-bound call looks slower or faster than it is next to a
    device-bound one. Wall time over a batch of calls, synchronised at the end, is what a
    loop of steps sees, for both alike. The host time comes from the same batch, so it is at
    most the wall time: where it is close to it, the host paced the loop.
    """
    if calls < 1 or repeats < 1:
        raise ValueError(f"calls and repeats must be at least 1, got {calls}, {repeats}")
    fn(*args)  # warm
    if sync:
        sync()
    batches = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        launched = time.perf_counter()
        if sync:
            sync()
        batches.append(((time.perf_counter() - start) / calls, (launched - start) / calls))
    return sorted(batches)[len(batches) // 2]


def wall_time_per_call(fn: Callable, args: tuple, sync: Callable[[], None] | None = None,
                       calls: int = 50, repeats: int = 5) -> float:
    """Median wall-clock seconds per call over `repeats` batches of `calls` back-to-back calls
    (`wall_and_host_per_call` without the host's part)."""
    return wall_and_host_per_call(fn, args, sync, calls, repeats)[0]


def device_and_host_per_call(fn: Callable, args: tuple) -> tuple[float | None, float | None]:
    """(device time, host launch) per call on a GPU, from the harness's device clock.

    Beside `wall_and_host_per_call`: the wall time says what a loop pays, the device time what
    the kernels cost. The host launch here is the harness's, timed on cold calls (a cache flush
    before each): another run than the loop's, and it can exceed the loop's wall time per call,
    so the recompile table takes the host time from the loop. (None, None) on the CPU, which
    has no device clock apart from its own.
    """
    from labkit.measure import bench

    if not any(isinstance(a, torch.Tensor) and a.is_cuda for a in args):
        return None, None
    timing = bench.time(lambda: fn(*args), mode="cold", warmup_ms=5, rep_ms=20,
                        label=getattr(fn, "__name__", "call"))
    return timing.median_s, timing.host_s


def bound_by(wall_s: float, device_s: float | None, host_s: float | None) -> str:
    """What paced a call in a loop: 'host launch' when the host's launch exceeds the device
    time, else 'device'; '' without a device clock (the CPU)."""
    if device_s is None or host_s is None:
        return ""
    return "host launch" if host_s > device_s else "device"


def recompile_table(rows: Sequence[Mapping]) -> str:
    """The recompile sweep as text: per shape, the first call, wall time per call of the
    compiled step and of eager, and on a GPU each one's device time, host launch and bound."""
    def us(value: object) -> str:
        return f"{float(value) * 1e6:7.1f}" if isinstance(value, int | float) else f"{'-':>7}"

    gpu = any(r.get("step_device_s") is not None for r in rows)
    head = f"{'shape':>8} {'new graph':>9} {'first call':>10} | {'wall per call (us)':^17}"
    head += f" | {'device / host launch (us)':^31} | bound by (step, eager)" if gpu else ""
    lines = [head, f"{'':>8} {'':>9} {'':>10} | {'step':>8} {'eager':>8}"
             + (f" | {'step':>15} {'eager':>15} |" if gpu else "")]
    for r in rows:
        line = (f"{r['elements']:>8} {str(r['new_graph']):>9} {r['first_call_s'] * 1e3:>7.1f} ms"
                f" | {us(r['step_s']):>8} {us(r['eager_s']):>8}")
        if gpu:
            step_bound = bound_by(r["step_s"], r.get("step_device_s"), r.get("step_host_s"))
            eager_bound = bound_by(r["eager_s"], r.get("eager_device_s"), r.get("eager_host_s"))
            line += (f" | {us(r.get('step_device_s'))} /{us(r.get('step_host_s'))}"
                     f" {us(r.get('eager_device_s'))} /{us(r.get('eager_host_s'))} |"
                     f" {step_bound or '-'}, {eager_bound or '-'}")
        lines.append(line)
    return "\n".join(lines)
