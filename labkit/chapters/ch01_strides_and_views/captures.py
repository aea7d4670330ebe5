"""C11b's experiment: capture a function that uses `as_strided` with each of torch's tools.

Each tool this torch has (TorchScript's trace and script, FX, torch.export, and
torch.compile with fullgraph=True, where any graph break is an error) captures the function;
the captured version runs on the input it was captured with and on a longer one, and is
compared with eager. A failure is evidence too: its exception and first line are kept.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

import torch

Fn = Callable[[torch.Tensor], torch.Tensor]


def _export(fn: Fn, example: torch.Tensor) -> Callable:
    class Wrapped(torch.nn.Module):
        """torch.export captures modules, not functions."""

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return fn(x)

    dim = torch.export.Dim
    length = dim.DYNAMIC if hasattr(dim, "DYNAMIC") else dim("length", min=4)
    return torch.export.export(Wrapped(), (example,), dynamic_shapes={"x": {0: length}}).module()


def tools(fn: Fn, example: torch.Tensor, compile_backend: str) -> dict[str, tuple[bool, Callable]]:
    """tool name -> (does this torch have it, how to capture fn with it)."""
    return {
        "torch.jit.trace": (hasattr(torch.jit, "trace"), lambda: torch.jit.trace(fn, (example,))),
        "torch.jit.script": (hasattr(torch.jit, "script"), lambda: torch.jit.script(fn)),
        "torch.fx.symbolic_trace": (hasattr(torch, "fx"), lambda: torch.fx.symbolic_trace(fn)),
        "torch.export.export": (hasattr(torch, "export"), lambda: _export(fn, example)),
        "torch.compile(fullgraph=True)": (hasattr(torch, "compile"), lambda: torch.compile(
            fn, fullgraph=True, backend=compile_backend)),
    }


def try_capture(capture: Callable, fn: Fn, first: torch.Tensor, longer: torch.Tensor) -> dict:
    """Capture, run on both inputs, compare with eager; any failure is the evidence we want."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            captured = capture()
            result = {"ok": True, "matches_eager": torch.equal(captured(first), fn(first)),
                      "matches_eager_longer_input": torch.equal(captured(longer), fn(longer)),
                      "error": ""}
        except Exception as err:  # noqa: BLE001 -- every failure is a finding here
            result = {"ok": False, "matches_eager": False, "matches_eager_longer_input": False,
                      "error": f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"}
    result["warnings"] = sorted({str(w.message).splitlines()[0][:120] for w in caught})
    return result


@functools.cache
def capture_all(fn: Fn, device: torch.device) -> dict[str, dict]:
    """Every capture tool's result on fn, computed once per function and device.

    On a GPU torch.compile uses Inductor (it generates Triton); on a CPU 'aot_eager', which
    captures the same graph without a C++ compiler's minute-long first build.
    """
    torch._dynamo.reset()
    first = torch.arange(10.0, device=device)
    longer = torch.arange(20.0, device=device)
    backend = "inductor" if device.type == "cuda" else "aot_eager"
    found = {}
    for name, (available, capture) in tools(fn, first, backend).items():
        found[name] = try_capture(capture, fn, first, longer) if available else {
            "ok": False, "matches_eager": False, "matches_eager_longer_input": False,
            "error": "not in this torch", "warnings": []}
        found[name]["available"] = available
    found["torch.compile(fullgraph=True)"]["backend"] = backend
    return found
