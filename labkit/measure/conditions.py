"""What a timing depends on besides the function: device, caches, clock and threads.

`labkit.measure.bench` asks this module where to run (and refuses tensors on the wrong device),
how big the last-level cache is (so the cold-mode flush really evicts it), how fine the
clock is (so a too-fast function is flagged), and holds torch's thread count fixed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import inspect
import math
import numbers
import os
import time as _clock
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache

import torch

from labkit.core import env

MODES = ("cold", "hot", "graph")
GPU_EVENT_RESOLUTION_S = 0.5e-6   # CUDA documents event timing "around 0.5 microseconds"
MAX_BUDGET_MS = 600_000.0         # 10 minutes: a budget beyond this is a typo (or inf)


# ---------------------------------------------------------------------------------------
# Checks on what was asked


def check_arguments(fn: object, mode: str, warmup_ms: float, rep_ms: float, min_runs: int,
                    max_runs: int, label: str | None = None) -> None:
    """Refuse what cannot be timed, before anything runs, with a message that says what to do."""
    name = f" for {label!r}" if label else ""
    if not callable(fn):
        hint = ""
        if isinstance(fn, torch.Tensor):
            hint = (" It looks like the result of running the code: wrap the code itself in "
                    "a function, e.g. bench.time(lambda: a @ b).")
        raise TypeError(f"bench needs a function to call{name}, got a {type(fn).__name__}.{hint}")
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(f"bench times ordinary functions{name}; {describe(fn)!r} is async, so "
                        "calling it computes nothing until awaited. Time a plain function.")
    if inspect.isgeneratorfunction(fn):
        raise TypeError(f"bench times ordinary functions{name}; {describe(fn)!r} is a generator "
                        "function, so calling it computes nothing until iterated. Time "
                        "lambda: list(gen()) or return the result instead of yielding it.")
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "graph" and not torch.cuda.is_available():
        raise ValueError("mode='graph' replays a CUDA Graph and needs a GPU; use 'cold' or 'hot' here")
    for what, value in (("warmup_ms", warmup_ms), ("rep_ms", rep_ms)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{what} must be a number of milliseconds, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{what} must be a finite number of milliseconds, got {value!r}; "
                             f"a budget such as 100 (at most {MAX_BUDGET_MS:g}).")
    if not (warmup_ms >= 0 and rep_ms > 0):
        raise ValueError(f"warmup_ms must be >= 0 and rep_ms > 0, got {warmup_ms}, {rep_ms}")
    if warmup_ms > MAX_BUDGET_MS or rep_ms > MAX_BUDGET_MS:
        raise ValueError(f"warmup_ms and rep_ms are limited to {MAX_BUDGET_MS:g} ms (10 minutes) "
                         f"each, got {warmup_ms}, {rep_ms}; a longer budget only hides noise.")
    for what, value in (("min_runs", min_runs), ("max_runs", max_runs)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{what} must be a whole number, got {value!r}")
    if not (1 <= min_runs <= max_runs):
        raise ValueError(f"need 1 <= min_runs <= max_runs, got {min_runs}, {max_runs}")


def check_amount(value: object, what: str, label: str | None = None) -> float | None:
    """bytes_moved / flops: None, or a finite number >= 0 (checked before any timing)."""
    if value is None:
        return None
    name = f" for {label!r}" if label else ""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what}{name} must be a number per call (e.g. 2 * x.nbytes), got "
                        f"{value!r} ({type(value).__name__})")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what}{name} must be a finite number >= 0 per call, got {value!r}")
    return value


def check_result(result: object, label: str) -> None:
    """Refuse a timed function whose result shows that nothing was computed yet."""
    lazy = None
    if inspect.iscoroutine(result):
        result.close()  # never awaited: close it so Python does not warn later
        lazy = "a coroutine (an async function's call, not yet awaited)"
    elif inspect.isgenerator(result) or inspect.isasyncgen(result):
        lazy = "a generator (nothing runs until it is iterated)"
    elif isinstance(result, Iterator) and not isinstance(result, torch.Tensor):
        lazy = f"an iterator ({type(result).__name__}; nothing runs until it is consumed)"
    if lazy:
        raise TypeError(f"the function timed as {label!r} returned {lazy}, so the timing would "
                        "measure only its creation. Consume it inside the function, e.g. "
                        "lambda: list(map(f, xs)), or return the computed value.")


def _objects_used_by(fn: Callable, args: tuple) -> list[object]:
    found: list[object] = list(_flatten(args))
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            found.extend(_flatten((cell.cell_contents,)))
        except ValueError:  # an empty cell
            continue
    code, names = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    if code is not None:
        found.extend(_flatten(tuple(names[n] for n in code.co_names if n in names)))
    return found


def tensors_used_by(fn: Callable, args: tuple) -> list[torch.Tensor]:
    """Tensors in the arguments, the closure, and the globals the function's code names,
    and the first parameter or buffer of each nn.Module among them (a model's device)."""
    tensors = []
    for item in _objects_used_by(fn, args):
        if isinstance(item, torch.Tensor):
            tensors.append(item)
        elif isinstance(item, torch.nn.Module):
            first = next(iter(item.parameters()), None)
            first = first if first is not None else next(iter(item.buffers()), None)
            if first is not None:
                tensors.append(first.detach())
    return tensors


def launches_gpu_work(fn: Callable, args: tuple) -> bool:
    """Whether one call of fn runs any kernel, copy or memset on a GPU (asked of the profiler).

    Used only when no tensor tells where a function runs (an ONNX Runtime session fed numpy
    arrays, say): on a GPU machine such work must still be timed with the CPU clock, since
    CUDA events around it would time an idle stream and the L2 flush would be pointless.
    """
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(*args)
        torch.cuda.synchronize()
    return any(e.device_type == torch.autograd.DeviceType.CUDA for e in prof.events())


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

    With no tensor to go by on a GPU machine, one call is profiled: a function that runs
    nothing on the GPU (ONNX Runtime on the CPU, numpy) is timed on the CPU, with its clock.

    A mismatch (asked for CUDA while the tensors are on the CPU, or the reverse) would
    time the wrong thing or fail deep inside torch, so it is refused here with a message.
    """
    tensors = [t for t in tensors_used_by(fn, args) if _numel(t) > 1]
    kinds = {t.device.type for t in tensors}
    if device is None:
        where = torch.device("cuda") if "cuda" in kinds else (
            tensors[0].device if tensors else env.device())
        if not tensors and where.type == "cuda" and not launches_gpu_work(fn, args):
            where = torch.device("cpu")  # CPU work is timed with the CPU clock, also here
    else:
        where = parse_device(device)
        stray = sorted({str(t.device) for t in tensors if t.device.type != where.type})
        # Host tensors a GPU call copies in (a pageable batch fed to a step on the GPU, a
        # host-to-device copy timed alone) are its inputs, not a mistake: the call's work is on
        # the GPU, which the profiler confirms. Anything else that mixes devices is refused.
        copies_in = (stray and where.type == "cuda" and torch.cuda.is_available()
                     and all(d.startswith("cpu") for d in stray) and launches_gpu_work(fn, args))
        if stray and not copies_in:
            raise ValueError(
                f"asked to time on {where} but the function uses tensors on {', '.join(stray)}. "
                f"Move them first (x = x.to('{where.type}')) or time on their device.")
    if where.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("asked to time on CUDA but no GPU is usable here; use device='cpu'")
        index = torch.cuda.current_device() if where.index is None else where.index
        if index >= torch.cuda.device_count():
            raise ValueError(f"asked to time on cuda:{index}, but this machine has "
                             f"{torch.cuda.device_count()} GPU(s) (cuda:0 ...); pick one of them.")
        where = torch.device("cuda", index)
    elif where.type != "cpu":
        raise ValueError(f"bench times on 'cpu' or 'cuda', not on {where}")
    return where


def parse_device(device: object) -> torch.device:
    """'cpu', 'cuda', 'cuda:1' or a torch.device; anything else is refused with the choices."""
    if isinstance(device, torch.device):
        return device
    if isinstance(device, str):
        try:
            return torch.device(device)
        except (RuntimeError, ValueError):
            pass
    raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:N' or a torch.device, got {device!r} "
                     f"({type(device).__name__}); bench times on the CPU and on CUDA GPUs only.")


def _numel(t: torch.Tensor) -> int:
    try:
        return t.numel()
    except (RuntimeError, NotImplementedError):  # nested or otherwise sizeless tensors
        return 2


def threads_for(where: torch.device, threads: int | None) -> int | None:
    if where.type != "cpu":
        return None
    threads = torch.get_num_threads() if threads is None else threads
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
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


def reported_caches(where: torch.device) -> dict[str, int]:
    """The cache sizes this machine reports past L1, by name: a GPU's L2, a CPU's L2 and L3 (per
    core for L2, from sysfs, where a VM may report its host's). {} where the CPU reports none."""
    if where.type == "cuda":
        return {"L2": last_level_cache_bytes(where)}
    return {f"L{level}": size for level, size in sorted(cpu_cache_sizes().items()) if level >= 2}


BEYOND_CACHES = "DRAM"  # `cache_place` of a size no reported cache holds


def cache_place(nbytes: int, caches: dict[str, int]) -> str:
    """The smallest reported cache level ({'L2': bytes, 'L3': bytes}, `reported_caches`) that
    holds `nbytes`, or BEYOND_CACHES past the largest (or where no cache size is reported)."""
    if nbytes <= 0:
        raise ValueError(f"a buffer's size must be positive, got {nbytes}")
    for name, size in sorted(caches.items(), key=lambda item: item[1]):
        if 0 < nbytes <= size:
            return str(name)
    return BEYOND_CACHES


_flush_buffers: dict[str, torch.Tensor] = {}


# On a GPU the flush is at least triton's do_bench's (256 MB): the flush is also work the GPU
# does between calls, and on a power-capped GPU (an H200 at its 700 W cap in a bf16 GEMM) how
# much of it there is moves the clock the timed call runs at: with 2x the L2 (120 MiB) labkit
# timed the 8192 bf16 GEMM 3.8% faster than do_bench on the same GPU, at 1,500 MHz either way.
GPU_MIN_FLUSH_BYTES = 256 * 2**20


# On a CPU the flush is held for the kernel's life, in host memory the chapters also need: a
# VM's sysfs may report a host-sized L3 (480 MiB on the course's 2-core CPU machine, so a
# 960 MiB flush, nearly half of a 2 GB Binder container). It is capped at a quarter of the
# usable memory (`env.memory_limit_bytes`): 512 MiB on Binder, still more than that L3
# (review 2026-12-05t 00-02 item 7).
CPU_FLUSH_MEMORY_SHARE = 4


def flush_bytes(where: torch.device) -> int:
    """How many bytes the cold-mode flush writes: twice the last-level cache, at least 256 MB
    on a GPU, at most a quarter of usable host memory on a CPU."""
    size = 2 * last_level_cache_bytes(where)
    if where.type == "cuda":
        return max(size, GPU_MIN_FLUSH_BYTES)
    return min(size, env.memory_limit_bytes() // CPU_FLUSH_MEMORY_SHARE)


def flush_buffer(where: torch.device) -> torch.Tensor:
    """A buffer twice the last-level cache (`flush_bytes`): writing it evicts whatever a call
    left there."""
    key = str(where)
    if key not in _flush_buffers:
        size = flush_bytes(where)
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




# ---------------------------------------------------------------------------------------
# TF32, page faults and the allocator: what else the number depends on


def tf32_state() -> tuple[bool, bool]:
    """(matmul, convolution): whether float32 work runs in TF32 right now, read at timing time.

    Matmuls: torch.backends.cuda.matmul.allow_tf32, i.e. float32_matmul_precision other
    than 'highest' (off by default). Convolutions: torch.backends.cudnn.allow_tf32 (on by
    default). Both only matter on a GPU with tensor cores.
    """
    matmul = bool(getattr(torch.backends.cuda.matmul, "allow_tf32", False)) or (
        torch.get_float32_matmul_precision() != "highest")
    cudnn = torch.backends.cudnn
    conv = bool(getattr(cudnn, "allow_tf32", False)) and bool(getattr(cudnn, "enabled", True))
    return matmul, conv


def minor_faults() -> int | None:
    """This process's minor page faults so far (getrusage), or None where not available."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)


FALLBACK_PAGE_FAULT_COST_S = 1e-6


@lru_cache(maxsize=1)
def page_fault_cost_s() -> float:
    """What one minor page fault costs here, measured once: the best of three small runs.

    Writes one byte into each page of a fresh anonymous mapping (each write faults: the
    kernel traps, zeroes a 4 KiB page and maps it), then into the same pages again (no
    faults); the difference per page is the fault's cost. About 5 us on this course's
    2-core VM (faults are dearer in a VM), 0.2-2 us on bare metal. Used to say how much
    of a CPU timing page faults explain, never to correct it.
    """
    try:
        import mmap

        import numpy as np
    except ImportError:
        return FALLBACK_PAGE_FAULT_COST_S
    pages, found = 1024, []
    for _ in range(3):
        try:
            mapping = mmap.mmap(-1, pages * mmap.PAGESIZE)
        except OSError:
            return FALLBACK_PAGE_FAULT_COST_S
        view = np.frombuffer(mapping, dtype=np.uint8)[::mmap.PAGESIZE]
        start = _clock.perf_counter_ns()
        view[:] = 1
        middle = _clock.perf_counter_ns()
        view[:] = 2
        end = _clock.perf_counter_ns()
        del view
        mapping.close()
        found.append(((middle - start) - (end - middle)) * 1e-9 / pages)
    return min(max(min(found), 1e-8), 1e-4)


# glibc's mallopt parameters (malloc.h) and the values it starts with.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
GLIBC_DEFAULT_TRIM_THRESHOLD = 128 * 1024
GLIBC_DEFAULT_MMAP_THRESHOLD = 128 * 1024
# The largest mmap threshold glibc accepts on 64-bit (HEAP_MAX_SIZE / 2); larger blocks
# are always mmapped, whatever the setting.
KEPT_MMAP_THRESHOLD = 32 * 2**20
KEPT_TRIM_THRESHOLD = 2**31 - 1  # mallopt takes an int: the largest, i.e. "never trim"


_THRESHOLDS_SET = False  # whether this process has set malloc's thresholds by hand


def thresholds_fixed() -> bool:
    """Whether allocator_kept() ran in this process: glibc's thresholds are then fixed for
    good (its dynamic mmap threshold cannot be switched back on), so later CPU timings here
    see a different allocator than a fresh process does."""
    return _THRESHOLDS_SET


def run_in_child(task: Callable[[], object], timeout_s: float = 900.0) -> object:
    """task() run in a forked child process; its (picklable) result returned here.

    For demonstrations that change process-wide state that cannot be restored (glibc's
    malloc thresholds): the child inherits the function, its tensors and modules without
    pickling them (fork), changes what it likes and exits, and this process stays as it
    was. Where fork is unavailable (Windows, macOS's default), task() runs here and
    RuntimeError is not raised: the caller reads thresholds_fixed() to know.
    """
    import multiprocessing as mp
    import pickle
    import traceback

    if "fork" not in mp.get_all_start_methods():
        return task()
    context = mp.get_context("fork")
    receive, send = context.Pipe(duplex=False)

    def child() -> None:
        # plain pickle, not multiprocessing's: torch's reductions would share a tensor's memory
        # through a file descriptor that dies with this child before the parent reads it
        try:
            send.send_bytes(pickle.dumps(("ok", task())))
        except BaseException as exc:  # report any failure to the parent, then exit
            send.send_bytes(pickle.dumps(
                ("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")))
        finally:
            send.close()

    process = context.Process(target=child, daemon=True)
    process.start()
    send.close()
    try:
        if not receive.poll(timeout_s):
            raise RuntimeError(f"the child process gave no result within {timeout_s:.0f} s")
        status, value = pickle.loads(receive.recv_bytes())
    except EOFError:
        raise RuntimeError("the child process ended without a result (killed, or out of "
                           "memory?)") from None
    finally:
        receive.close()
        process.join(5)
        if process.is_alive():
            process.kill()
            process.join()
    if status == "error":
        raise RuntimeError(f"the task failed in its child process: {value}")
    return value


@lru_cache(maxsize=1)
def _glibc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        libc.gnu_get_libc_version.restype = ctypes.c_char_p
        libc.gnu_get_libc_version()
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.mallopt.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None  # macOS, Windows, musl: no glibc malloc to tune
    return libc


# A kept-memory rerun counts as a different allocator only where malloc's setting took: the
# faults per call fell to at most this share of the defaults'. (C9's .contiguous() of 64 MiB
# still took 16,385 faults per call with the setting, a block above the largest mmap
# threshold, so its "43.56x" was noise.) Chapters 02 and 03 both read their reruns by it.
KEPT_TOOK_SHARE = 0.5
# Fewer faults per call than this with the defaults is nothing for the setting to change (03's
# NHWC b1 took one fault in three calls, 0.33 per call, which its rerun "cut" to 0).
KEPT_MIN_FAULTS = 1.0


def kept_took(default_faults: object, kept_faults: object) -> bool | None:
    """Whether malloc keeping freed memory changed anything: the defaults took at least
    KEPT_MIN_FAULTS page faults per call and the kept run at most KEPT_TOOK_SHARE of them.
    None when either count is not recorded (older evidence: the rerun is read as before);
    False when the defaults faulted (almost) nothing (there was nothing for the setting to
    change: the rerun is a second run of the same allocator, and where it differs, that is
    noise)."""
    if default_faults is None or kept_faults is None:
        return None
    default, kept = float(default_faults), float(kept_faults)
    return default >= KEPT_MIN_FAULTS and kept <= KEPT_TOOK_SHARE * default


def allocator_note() -> str:
    """What allocator_kept() can do here, in one line."""
    libc = _glibc()
    if libc is None:
        return "no glibc malloc here: allocator_kept() changes nothing"
    return f"glibc {libc.gnu_get_libc_version().decode()} malloc"


@contextmanager
def allocator_kept() -> Iterator[bool]:
    """Let glibc's malloc keep the memory that is freed, for the block; yields True if it could.

    By default glibc returns large freed blocks to the kernel (blocks above its mmap
    threshold are unmapped, and the top of the heap is trimmed), so a function that
    allocates its outputs afresh on every call pays for page faults on every call, and a
    CPU timing partly measures the allocator. Inside this block both thresholds are
    raised (mallopt(M_MMAP_THRESHOLD, 32 MiB), mallopt(M_TRIM_THRESHOLD, 2**31 - 1)), as
    MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ would at start-up, so freed memory is
    reused without faults. On exit they go back to glibc's start values (128 KiB each).
    glibc cannot report or re-enable its dynamic threshold (which grows after large frees),
    so after the block the thresholds stay fixed at those values: time the default case
    first. Where glibc is absent this changes nothing and yields False (see allocator_note()).
    """
    global _THRESHOLDS_SET
    libc = _glibc()
    if libc is None:
        yield False
        return
    _THRESHOLDS_SET = True
    applied = bool(libc.mallopt(M_MMAP_THRESHOLD, KEPT_MMAP_THRESHOLD)) and bool(
        libc.mallopt(M_TRIM_THRESHOLD, KEPT_TRIM_THRESHOLD))
    try:
        yield applied
    finally:
        libc.mallopt(M_MMAP_THRESHOLD, GLIBC_DEFAULT_MMAP_THRESHOLD)
        libc.mallopt(M_TRIM_THRESHOLD, GLIBC_DEFAULT_TRIM_THRESHOLD)
