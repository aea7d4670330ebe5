"""An out-of-memory in a function the harness calls, explained, with the memory given back.

torch's own error keeps the traceback, and the traceback keeps the frames that hold the
tensors: in a notebook the memory stays taken and the next cell fails too. The harness's
callers (labkit.measure.bench's timings and its probe of where a function runs,
labkit.measure.device_time) drop that traceback, free the allocator's cache and raise a short
error that says what to do; the kernel stays usable. Other exceptions are theirs to handle.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import NoReturn, TypeVar

import torch

T = TypeVar("T")


class OutOfMemoryDuringTiming(MemoryError):
    """The timed function ran out of (GPU) memory; the harness released what it could."""


def _first_line(exc: BaseException) -> str:
    """torch's message, first line only (its advice on allocator settings follows it)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else "out of memory"


def explained(label: str, phase: str, action: Callable[[], T]) -> T:
    """action(), or, where it runs out of GPU memory, OutOfMemoryDuringTiming without its frames."""
    __tracebackhide__ = True
    try:
        return action()
    except torch.cuda.OutOfMemoryError as exc:
        text = _first_line(exc)
    _raise_explained(label, phase, text)  # outside the except: no __context__ keeps the frames


def _raise_explained(label: str, phase: str, oom_text: str) -> NoReturn:
    """Free what the failed call left cached and say what to do."""
    __tracebackhide__ = True
    freed = _release_memory()
    raise OutOfMemoryDuringTiming(
        f"{label!r} ran out of memory during {phase}: {oom_text}. The harness released "
        f"the cached memory ({freed}); the kernel is still usable. Use smaller tensors "
        "(labkit.core.env.sizes() gives sizes that fit this machine) or free tensors you no "
        "longer need (del x) before timing.")


def _release_memory() -> str:
    """Collect garbage and empty the CUDA allocator's cache; say how much it held before and after."""
    gc.collect()
    if not torch.cuda.is_available():
        torch.cuda.empty_cache()  # a no-op without CUDA; kept so the path is the same
        return "no GPU memory in use"
    before = torch.cuda.memory_reserved()
    torch.cuda.empty_cache()
    after = torch.cuda.memory_reserved()
    return f"reserved GPU memory {before / 2**20:.0f} MiB -> {after / 2**20:.0f} MiB"
