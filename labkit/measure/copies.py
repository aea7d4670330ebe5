"""The copy detector: see every operation that makes new memory while your code runs.

    with copies.detect() as log:
        y = x.t().contiguous()
    log.copies        # [aten.clone: 48 B, (4, 3) stride (1, 4) -> (4, 3) stride (3, 1)]

It sits at torch's dispatcher (a TorchDispatchMode), so it sees each aten operation with
its real inputs and outputs on CPU and CUDA. An output whose storage is one of the inputs'
storages is a view or an in-place write; any other output is new memory.

What counts as what (the rule, so a learner can tell "moved" from "made"):
- kind "copy": an op whose job is to move existing values, unchanged or cast (clone,
  copy_, _to_copy, cat, index, ... and every "*_copy" op). copy_ writes into memory that
  already existed, so its event has new_memory=False; all other copies allocate.
- kind "alloc": new memory that reads no tensor's values: factories (empty, zeros, randn,
  arange ...) and the *_like / new_* ops, whose inputs give only a shape.
- kind "compute": new memory holding the result of arithmetic (add, mm, conv, sum ...).
- views (view, t, permute, expand, _unsafe_view, ...) and in-place ops (add_) go to
  log.views: they make no new memory.
Limits: the detector sees aten ops, not what a kernel does inside (a BLAS library packing
a matrix, a temporary buffer). On CUDA each event also carries the caching allocator's
count of bytes the op allocated beyond its outputs (internal_bytes, approximate: the
allocator rounds blocks, and only the current device is counted); on CPU it is None.
Tensors built from Python data (torch.tensor([...])) are made before dispatch and appear
only as a lift_fresh view.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from labkit.core import layout

_COPY_OPS = {
    "clone", "copy_", "_to_copy", "to", "cat", "stack", "repeat", "flip", "roll", "index",
    "index_select", "gather", "take", "masked_select", "constant_pad_nd", "lift_fresh_copy",
    "_copy_from", "_copy_from_and_resize", "contiguous", "_pin_memory", "tile",
    "repeat_interleave",
}
_ALLOC_OPS = {
    "empty", "empty_strided", "zeros", "ones", "full", "rand", "randn", "randint", "randperm",
    "arange", "linspace", "logspace", "eye", "scalar_tensor", "normal", "bernoulli",
}


@dataclass(frozen=True)
class Event:
    """One aten op seen by the detector, with the layouts going in and coming out."""

    op: str
    kind: str  # "copy" | "alloc" | "compute" | "view" | "inplace"
    bytes: int
    in_shapes: tuple[tuple[int, ...], ...]
    in_strides: tuple[tuple[int, ...], ...]
    out_shape: tuple[int, ...]
    out_stride: tuple[int, ...]
    device: str
    new_memory: bool
    internal_bytes: int | None = None

    def __str__(self) -> str:
        ins = ", ".join(f"{s} stride {st}" for s, st in zip(self.in_shapes, self.in_strides,
                                                           strict=True)) or "nothing"
        inside = f", +{self.internal_bytes} B inside the op" if self.internal_bytes else ""
        return (f"{self.kind:7} {self.op}: {self.bytes} B on {self.device}{inside}, "
                f"{ins} -> {self.out_shape} stride {self.out_stride}")


@dataclass
class CopyLog:
    """Everything recorded inside one `with detect()` block."""

    events: list[Event] = field(default_factory=list)

    @property
    def copies(self) -> list[Event]:
        """Ops that copied existing values (kind "copy")."""
        return [e for e in self.events if e.kind == "copy"]

    @property
    def allocations(self) -> list[Event]:
        """Ops that made fresh memory without reading any values (kind "alloc")."""
        return [e for e in self.events if e.kind == "alloc"]

    @property
    def computed(self) -> list[Event]:
        """Ops whose new memory holds computed results (kind "compute")."""
        return [e for e in self.events if e.kind == "compute"]

    @property
    def views(self) -> list[Event]:
        """Ops whose output shares storage with an input: views and in-place ops."""
        return [e for e in self.events if e.kind in ("view", "inplace")]

    @property
    def total_bytes(self) -> int:
        """Bytes written by copies: the cost of moving data that already existed."""
        return sum(e.bytes for e in self.copies)

    @property
    def new_bytes(self) -> int:
        """Bytes of new memory of every kind (copies, allocations, computed results)."""
        return sum(e.bytes for e in self.events if e.new_memory)

    def summary(self) -> str:
        """A few readable lines: counts and bytes per kind, then each event."""
        head = (f"{len(self.copies)} copies ({self.total_bytes} B), "
                f"{len(self.allocations)} allocations, {len(self.computed)} computed results, "
                f"{len(self.views)} views/in-place; new memory {self.new_bytes} B")
        return "\n".join([head] + [f"  {e}" for e in self.events])

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        rows = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in (
                e.kind, e.op, e.bytes, e.device,
                "; ".join(f"{s} / {st}" for s, st in zip(e.in_shapes, e.in_strides,
                                                          strict=True)),
                f"{e.out_shape} / {e.out_stride}")) + "</tr>"
            for e in self.events)
        head = "".join(f"<th>{h}</th>" for h in (
            "kind", "op", "bytes", "device", "inputs (shape / stride)", "output (shape / stride)"))
        caption = html.escape(self.summary().splitlines()[0])
        return (f"<table class='labkit-copies'><caption>{caption}</caption>"
                f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")


def _storage_key(t: torch.Tensor) -> tuple[str, int] | None:
    """Identity of a tensor's storage (device and data pointer); None when it holds no bytes."""
    storage = t.untyped_storage()
    if storage.nbytes() == 0:
        return None
    return (str(t.device), storage.data_ptr())


def _kind(name: str, has_tensor_inputs: bool) -> str:
    if name in _COPY_OPS or name.endswith("_copy"):
        return "copy"
    if (not has_tensor_inputs or name in _ALLOC_OPS or name.endswith("_like")
            or name.startswith("new_")):
        return "alloc"
    return "compute"


class _Recorder(TorchDispatchMode):
    """Runs each op unchanged and appends what it did to the log."""

    def __init__(self, log: CopyLog) -> None:
        super().__init__()
        self.log = log

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
        kwargs = kwargs or {}
        inputs = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
        before = _cuda_allocated()
        out = func(*args, **kwargs)
        outputs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
        if outputs:
            after = _cuda_allocated()
            internal = None if before is None or after is None else after - before
            self._record(func, inputs, outputs, internal)
        return out

    def _record(self, func, inputs: list[torch.Tensor], outputs: list[torch.Tensor],  # noqa: ANN001
                cuda_allocated: int | None) -> None:
        name = func.overloadpacket.__name__
        aliases = any(r.alias_info is not None for r in func._schema.returns)
        input_storages = {_storage_key(t) for t in inputs} - {None}
        seen: set = set()
        events = []
        for t in outputs:
            key = _storage_key(t)
            if key is not None and key in seen:
                continue
            seen.add(key)
            shared = aliases or (key is not None and key in input_storages)
            if not shared:
                kind, nbytes = _kind(name, bool(inputs)), t.untyped_storage().nbytes()
            elif name == "copy_":
                kind, nbytes = "copy", t.numel() * t.element_size()
            else:
                kind, nbytes = ("inplace" if name.endswith("_") else "view"), 0
            events.append(Event(
                op=str(func.name()), kind=kind, bytes=nbytes,
                in_shapes=tuple(tuple(i.shape) for i in inputs),
                in_strides=tuple(i.stride() for i in inputs),
                out_shape=tuple(t.shape), out_stride=t.stride(), device=str(t.device),
                new_memory=not shared,
            ))
        if cuda_allocated is not None and events:
            # The allocator rounds each block up to 512 B; what is left was made inside the op.
            outputs_bytes = sum(-(-e.bytes // 512) * 512 for e in events if e.new_memory)
            internal = max(cuda_allocated - outputs_bytes, 0)
            events[0] = dataclasses.replace(events[0], internal_bytes=internal)
        self.log.events.extend(events)


def _cuda_allocated() -> int | None:
    """Bytes the CUDA caching allocator has handed out so far (None without CUDA in use)."""
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return None
    return torch.cuda.memory_stats().get("allocated_bytes.all.allocated", 0)


class detect:  # noqa: N801 -- used like a function: `with copies.detect() as log:`
    """Context manager that records every op run inside it; yields a CopyLog."""

    def __init__(self) -> None:
        self.log = CopyLog()
        self._mode = _Recorder(self.log)

    def __enter__(self) -> CopyLog:
        self._mode.__enter__()
        return self.log

    def __exit__(self, *exc: object) -> None:
        self._mode.__exit__(*exc)


def bytes_copied(fn: Callable[[], object]) -> int:
    """Bytes of existing data that fn() copies, as the detector sees them.

    A one-number answer for quizzes and checks ("does this op copy?"); use
    `with detect() as log:` to see which ops did it.
    """
    with detect() as log:
        fn()
    return log.total_bytes


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when a and b are windows on the same storage (same device and data pointer).

    Only dense tensors with real memory have a storage to compare: sparse, nested, quantized
    and meta tensors (every meta tensor's data pointer is 0) are refused with
    `labkit.core.layout.check_tensor`'s message rather than answered wrongly.
    """
    for t in (a, b):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"shares_storage needs two tensors, got {type(t).__name__}.")
        layout.check_tensor(t)
    if a.device != b.device:
        return False
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
