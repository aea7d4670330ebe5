"""What a timing depends on besides the function: device, caches, clock and threads.

`labkit.bench` asks this module where to run (and refuses tensors on the wrong device),
how big the last-level cache is (so the cold-mode flush really evicts it), how fine the
clock is (so a too-fast function is flagged), and holds torch's thread count fixed.
"""

from __future__ import annotations

import os
import time as _clock
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache

import torch

from labkit import env

MODES = ("cold", "hot", "graph")
GPU_EVENT_RESOLUTION_S = 0.5e-6   # CUDA documents event timing "around 0.5 microseconds"


# ---------------------------------------------------------------------------------------
# Checks on what was asked


def check_arguments(fn: object, mode: str, warmup_ms: float, rep_ms: float, min_runs: int,
                     max_runs: int, label: str | None = None) -> None:
    name = f" for {label!r}" if label else ""
    if not callable(fn):
        hint = ""
        if isinstance(fn, torch.Tensor):
            hint = (" It looks like the result of running the code: wrap the code itself in "
                    "a function, e.g. bench.time(lambda: a @ b).")
        raise TypeError(f"bench needs a function to call{name}, got a {type(fn).__name__}.{hint}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "graph" and not torch.cuda.is_available():
        raise ValueError("mode='graph' replays a CUDA Graph and needs a GPU; use 'cold' or 'hot' here")
    if not (warmup_ms >= 0 and rep_ms > 0):
        raise ValueError(f"warmup_ms must be >= 0 and rep_ms > 0, got {warmup_ms}, {rep_ms}")
    if not (1 <= min_runs <= max_runs):
        raise ValueError(f"need 1 <= min_runs <= max_runs, got {min_runs}, {max_runs}")


def tensors_used_by(fn: Callable, args: tuple) -> list[torch.Tensor]:
    """Tensors in the arguments, the closure, and the globals the function's code names."""
    found: list[object] = list(_flatten(args))
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            found.extend(_flatten((cell.cell_contents,)))
        except ValueError:  # an empty cell
            continue
    code, names = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    if code is not None:
        found.extend(_flatten(tuple(names[n] for n in code.co_names if n in names)))
    return [t for t in found if isinstance(t, torch.Tensor)]


def _flatten(items: Iterable) -> Iterable:
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from item
        elif isinstance(item, dict):
            yield from item.values()
        else:
            yield item


def resolve_device(device: str | torch.device | None, fn: Callable, args: tuple) -> torch.device:
    """The device to time on: as asked, else where the tensors are, else env.device().

    A mismatch (asked for CUDA while the tensors are on the CPU, or the reverse) would
    time the wrong thing or fail deep inside torch, so it is refused here with a message.
    """
    tensors = [t for t in tensors_used_by(fn, args) if t.numel() > 1]
    kinds = {t.device.type for t in tensors}
    if device is None:
        where = torch.device("cuda") if "cuda" in kinds else (
            tensors[0].device if tensors else env.device())
    else:
        where = torch.device(device)
        stray = sorted({str(t.device) for t in tensors if t.device.type != where.type})
        if stray:
            raise ValueError(
                f"asked to time on {where} but the function uses tensors on {', '.join(stray)}. "
                f"Move them first (x = x.to('{where.type}')) or time on their device.")
    if where.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("asked to time on CUDA but no GPU is usable here; use device='cpu'")
        where = torch.device("cuda", torch.cuda.current_device() if where.index is None else where.index)
    elif where.type != "cpu":
        raise ValueError(f"bench times on 'cpu' or 'cuda', not on {where}")
    return where


def threads_for(where: torch.device, threads: int | None) -> int | None:
    if where.type != "cpu":
        return None
    threads = torch.get_num_threads() if threads is None else threads
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    return threads


@contextmanager
def fixed_threads(threads: int | None) -> Iterator[None]:
    """Hold torch's intra-op thread count for the measurement, then restore it."""
    if threads is None:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def describe(fn: Callable) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    return "lambda" if name.endswith("<lambda>") else name


# ---------------------------------------------------------------------------------------
# The cache flush


def last_level_cache_bytes(where: torch.device) -> int:
    """Size of the last-level cache the flush must overwrite: the GPU's L2 or the CPU's L3."""
    if where.type == "cuda":
        props = torch.cuda.get_device_properties(where)
        return int(getattr(props, "L2_cache_size", 0)) or 64 * 2**20
    return cpu_cache_sizes().get(max(cpu_cache_sizes(), default=0), 32 * 2**20)


@lru_cache(maxsize=1)
def cpu_cache_sizes() -> dict[int, int]:
    """{level: bytes} of this CPU's data caches (per core for L1/L2), read from sysfs."""
    sizes: dict[int, int] = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return sizes
    for entry in entries:
        try:
            with open(f"{base}/{entry}/level") as f:
                level = int(f.read())
            with open(f"{base}/{entry}/type") as f:
                kind = f.read().strip()
            with open(f"{base}/{entry}/size") as f:
                text = f.read().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        factor = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        sizes[level] = int(text.rstrip("KMG")) * factor
    return sizes


_flush_buffers: dict[str, torch.Tensor] = {}


def flush_buffer(where: torch.device) -> torch.Tensor:
    """A buffer twice the last-level cache: writing it evicts whatever a call left there."""
    key = str(where)
    if key not in _flush_buffers:
        size = 2 * last_level_cache_bytes(where)
        _flush_buffers[key] = torch.empty(size // 4, dtype=torch.int32, device=where)
    return _flush_buffers[key]


@lru_cache(maxsize=1)
def cpu_timer_resolution_s() -> float:
    """The smallest step perf_counter_ns really takes here (measured, not the nominal 1 ns)."""
    now = _clock.perf_counter_ns
    steps = []
    for _ in range(2000):
        a = now()
        b = now()
        while b == a:
            b = now()
        steps.append(b - a)
    return min(steps) * 1e-9


def timer_resolution_s(where: torch.device) -> float:
    """Resolution of the clock used on this device."""
    return GPU_EVENT_RESOLUTION_S if where.type == "cuda" else cpu_timer_resolution_s()


