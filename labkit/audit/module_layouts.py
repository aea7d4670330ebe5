"""Per module: the layout it received and returned, and the bytes it copied itself.

One forward pass runs under the copy detector (labkit.measure.copies) with forward hooks
on every module. The hooks note where each module's call starts and ends in the detector's
event list, so every copy is charged to the innermost module running when it happened
(its *self* bytes: a Sequential is not charged for its children's copies). Copies made by
a module's own forward code (a `permute().contiguous()` between two children) are charged
to that module; copies outside every submodule to "(model)". Ops that join several tensors
into one (cat, stack: `ASSEMBLES`) are not charged: building new data is their purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from labkit.measure import copies
from labkit.models.resnet import memory_format_of

ROOT = "(model)"
# Ops that build one new tensor out of several (a ViT's class token joined to its patches):
# they copy values, but as the op's purpose, not as a layout's side effect, and no layout
# change removes them, so they are not charged as hidden copies (review 2026-12-03d item 9).
ASSEMBLES = frozenset({"cat", "stack", "hstack", "vstack", "concat", "concatenate"})


def human_bytes(count: int) -> str:
    """A byte count a reader takes in at once: '37 MiB', '102 KiB', '512 B'."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if abs(count) >= 1 << shift:
            return f"{count / (1 << shift):.3g} {unit}"
    return f"{count} B"


@dataclass(frozen=True)
class ModuleRow:
    """One module's call: formats in and out, what happened to channels_last, bytes copied."""

    name: str
    kind: str
    input_format: str
    output_format: str
    output_shape: tuple[int, ...]
    verdict: str  # kept | dropped | converted | left 4-D | unchanged | ambiguous
    copy_bytes: int
    copy_ops: tuple[str, ...] = field(default=())
    # the module's class is torch's own (nn.MultiheadAttention, ...): a copy charged to it runs
    # inside torch, where the user's code cannot move it (review 2026-12-04k item 9)
    inside_torch: bool = False

    @property
    def finding(self) -> bool:
        """A row worth a learner's attention: a dropped layout or a copy."""
        return self.verdict == "dropped" or self.copy_bytes > 0


def is_torch_module(module: nn.Module) -> bool:
    """Whether the module's class is torch's own (defined under the `torch` package: nn.Conv2d,
    nn.MultiheadAttention), not the user's nor another library's. Why: the audit advised moving
    by hand a clone charged to a ViT's `self_attn`, which runs inside nn.MultiheadAttention where
    no user code can move it (review 2026-12-04k item 9)."""
    return type(module).__module__.split(".")[0] == "torch"


def layout_verdict(input_format: str, output_format: str, output_ndim: int) -> str:
    """What one module did to channels_last.

    kept: channels_last in and out. dropped: channels_last in, a 4-D output that is not.
    converted: a 4-D non-channels_last input, channels_last out. left 4-D: a 4-D
    channels_last input and an output of another rank (flatten: nothing to keep).
    ambiguous: either side has a size-1 channel or 1x1 map ('both': the formats agree).
    unchanged: anything else (contiguous in and out, or no 4-D tensor involved).
    """
    if "both" in (input_format, output_format):
        return "ambiguous"
    if input_format == "channels_last":
        if output_ndim != 4:
            return "left 4-D"
        return "kept" if output_format == "channels_last" else "dropped"
    if output_format == "channels_last":
        return "converted"
    return "unchanged"


def _first_tensor(values: object) -> torch.Tensor | None:
    if isinstance(values, torch.Tensor):
        return values
    if isinstance(values, list | tuple):
        for v in values:
            found = _first_tensor(v)
            if found is not None:
                return found
    if isinstance(values, dict):
        return _first_tensor(list(values.values()))
    return None


def trace(model: nn.Module, x: torch.Tensor,
          include: Callable[[str, nn.Module], bool] | None = None) -> list[ModuleRow]:
    """Run model(x) once, under no_grad, and return one row per module call, in call order.

    A module called twice gives two rows. `include(name, module)` picks which rows to keep
    (every module's copies are still charged to it: the filter only hides rows).
    """
    log_holder: list[copies.CopyLog] = []
    stack: list[str] = [ROOT]
    marks: list[tuple[int, str]] = []  # (event index where a segment starts, module running)
    calls: list[dict] = []
    open_calls: list[dict] = []
    handles = []

    def events_so_far() -> int:
        return len(log_holder[0].events) if log_holder else 0

    def pre(name: str) -> Callable:
        def hook(module: nn.Module, inputs: tuple) -> None:
            first = _first_tensor(inputs)
            call = {"name": name, "kind": type(module).__name__,
                    "torch": is_torch_module(module),
                    "in": memory_format_of(first) if first is not None else "none",
                    "order": len(calls)}
            calls.append(call)
            open_calls.append(call)
            stack.append(name)
            marks.append((events_so_far(), name))
        return hook

    def post(name: str) -> Callable:
        def hook(module: nn.Module, inputs: tuple, output: object) -> None:
            call = open_calls.pop()
            out = _first_tensor(output)
            call["out"] = memory_format_of(out) if out is not None else "none"
            call["shape"] = tuple(out.shape) if out is not None else ()
            call["ndim"] = out.dim() if out is not None else 0
            stack.pop()
            marks.append((events_so_far(), stack[-1]))
        return hook

    for name, module in model.named_modules():
        if name:
            handles.append(module.register_forward_pre_hook(pre(name)))
            handles.append(module.register_forward_hook(post(name)))
    try:
        with torch.no_grad(), copies.detect() as log:
            log_holder.append(log)
            marks.append((0, ROOT))
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    charged = _charge(log, marks)
    rows = [ModuleRow(ROOT, type(model).__name__, memory_format_of(x),
                      "-", (), "-", charged.get(ROOT, (0, ()))[0], charged.get(ROOT, (0, ()))[1])]
    seen: dict[str, int] = {}
    for call in calls:
        # the n-th call of a module takes the n-th share of its charge (calls rarely repeat)
        count = seen[call["name"]] = seen.get(call["name"], 0) + 1
        nbytes, ops = charged.get(call["name"], (0, ())) if count == 1 else (0, ())
        row = ModuleRow(call["name"], call["kind"], call["in"], call.get("out", "none"),
                        call.get("shape", ()),
                        layout_verdict(call["in"], call.get("out", "none"), call.get("ndim", 0)),
                        nbytes, ops, call["torch"])
        if include is None or include(call["name"], None):  # type: ignore[arg-type]
            rows.append(row)
    return rows


def _charge(log: copies.CopyLog, marks: list[tuple[int, str]]) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Bytes and op names of the copies in each segment, summed per running module."""
    out: dict[str, tuple[int, tuple[str, ...]]] = {}
    bounds = marks + [(len(log.events), ROOT)]
    for (start, name), (end, _) in zip(bounds, bounds[1:], strict=False):
        for event in log.events[start:end]:
            op = event.op.removeprefix("aten::").split(".")[0]
            if event.kind == "copy" and op not in ASSEMBLES:
                nbytes, ops = out.get(name, (0, ()))
                out[name] = (nbytes + event.bytes, ops if op in ops else (*ops, op))
    return out
