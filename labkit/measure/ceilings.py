"""This machine's two ceilings: memory-copy bandwidth and matmul rate, measured and cached.

Every later timing in the course is shown as a share of these, because "12 ms" means
nothing by itself while "80% of what this GPU can copy" tells you there is little left
to win. They are measured with `labkit.measure.bench` on random data (never zeros: a GPU draws
less power and may clock higher on zeros, which would flatter the ceiling) and cached per
device in a JSON file, so that a chapter can read them instantly:

    from labkit.measure import ceilings
    c = ceilings.measure()             # measured once per device, then read from the cache
    c = ceilings.measure(refresh=True) # measure again (after a driver or torch upgrade)

On a GPU the matmul ceiling is measured in float32, in TF32 (float32 data, TF32 tensor-core
math: what float32 convolutions run in by default), in bfloat16 and in float16, so each
timing can be shown against the math it really ran in.

The cache lives in `labkit.core.env.cache_dir()`: $LABKIT_CACHE_DIR, else $XDG_CACHE_HOME/labkit,
else ~/.cache/labkit. The `Ceilings` record and the cache file are `labkit.measure.ceiling_store`'s
(re-exported here), so that `labkit.measure.bench` reads them without importing this module.
"""

from __future__ import annotations

import time as _clock
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

import torch

from labkit.core import env
from labkit.measure import bench
from labkit.measure.ceiling_store import Ceilings, cache_path, cached, save

__all__ = ["Ceilings", "cache_path", "cached", "measure", "copy_bandwidth_gbps",
           "matmul_tflops", "GPU_MATMUL_DTYPES"]

# The kinds of math a GPU matmul ceiling is measured in; 'tfloat32' is float32 with TF32 on.
GPU_MATMUL_DTYPES = ("float32", "tfloat32", "bfloat16", "float16")
REP_MS = 400.0  # sampling budget per ceiling: enough runs for a stable median, seconds in all


def measure(refresh: bool = False, verbose: bool = False) -> Ceilings:
    """This machine's ceilings: from the cache, or measured now (and cached) if refresh.

    On the CPU it takes a few seconds (each ceiling with all threads and with one, the
    better kept); on a GPU about fifteen seconds (a copy plus four matmuls: float32,
    TF32, bfloat16, float16).
    """
    if not isinstance(refresh, bool) or not isinstance(verbose, bool):
        raise TypeError(f"refresh and verbose must be True or False, got {refresh!r}, {verbose!r}")
    if not refresh:
        known = cached()
        if known is not None:
            return known
    result = _measure_now(verbose)
    save(result)
    return result


def copy_bandwidth_gbps(nbytes: int, where: torch.device, rep_ms: float | None = None,
                        threads: int | None = None) -> float:
    """GB/s of dst.copy_(src) on a buffer of nbytes, counting read + write."""
    src = torch.rand(nbytes // 4, device=where)
    dst = torch.empty_like(src)
    mode = "cold" if where.type == "cuda" else "hot"  # CPU buffers are far past the L3 anyway
    timing = bench.time(lambda: dst.copy_(src), mode=mode, warmup_ms=50, rep_ms=rep_ms or REP_MS,
                        bytes_moved=2 * src.numel() * 4, label="copy", device=where, threads=threads)
    return float(timing.gbps)


def matmul_tflops(n: int, dtype: torch.dtype | str, where: torch.device,
                  rep_ms: float | None = None, threads: int | None = None) -> float:
    """TFLOP/s of an n x n by n x n matmul in dtype on random normal data.

    dtype 'tfloat32' means float32 tensors with TF32 math switched on for the call; plain
    float32 is measured with TF32 switched off, whatever the notebook set, so that the
    float32 ceiling is float32 math. The switches are restored afterwards.
    """
    name = str(dtype).replace("torch.", "")
    tensor_dtype = torch.float32 if name == "tfloat32" else getattr(torch, name)
    a = torch.randn(n, n, device=where, dtype=tensor_dtype)
    b = torch.randn(n, n, device=where, dtype=tensor_dtype)
    out = torch.empty(n, n, device=where, dtype=tensor_dtype)
    with tf32_matmul(name == "tfloat32"):
        timing = bench.time(lambda: torch.matmul(a, b, out=out), mode="hot", warmup_ms=50,
                            rep_ms=rep_ms or REP_MS, flops=2 * n**3, flops_dtype=name,
                            label=f"matmul {name}", device=where, threads=threads)
    return float(timing.tflops)


@contextmanager
def tf32_matmul(enabled: bool) -> Iterator[None]:
    """Switch TF32 for float32 matmuls on or off for a block, then restore the setting."""
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if enabled else "highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(previous)


def _thread_counts(where: torch.device) -> list[int | None]:
    """On the CPU: all of torch's threads, and one. The ceiling is the better of the two.

    On a shared or oversubscribed machine, threads that wait for each other at every
    barrier can make an all-thread run slower than a single thread; the machine can
    still do what the single thread did, so that is its ceiling.
    """
    if where.type != "cpu":
        return [None]
    return sorted({torch.get_num_threads(), 1}, reverse=True)


def _measure_now(verbose: bool) -> Ceilings:
    where = env.device()
    sizes = env.sizes()
    started = _clock.perf_counter()
    per_threads: dict[str, dict] = {}   # what each thread count reached (CPU)

    def best(name: str, measure_one: Callable[[int | None], float]) -> float:
        # A ceiling is the best rate the machine showed: on a shared CPU a single short run
        # can land in someone else's burst, so the CPU keeps the better of two runs.
        attempts = 2 if where.type == "cpu" else 1
        values = {threads: max(measure_one(threads) for _ in range(attempts))
                  for threads in _thread_counts(where)}
        per_threads[name] = {str(k): v for k, v in values.items()}
        if verbose:
            print(f"{name}: " + ", ".join(f"{v:.4g}" + (f" ({k} threads)" if k else "")
                                          for k, v in values.items()))
        return max(values.values())

    copy_gbps = best("copy_gbps", lambda t: copy_bandwidth_gbps(sizes.copy_bytes, where, threads=t))
    dtypes = GPU_MATMUL_DTYPES if where.type == "cuda" else ("float32",)
    rates = {name: best(f"matmul_tflops.{name}", lambda t, name=name: matmul_tflops(
        sizes.matmul_n, name, where, threads=t)) for name in dtypes}
    if where.type == "cuda":
        torch.cuda.empty_cache()
    return Ceilings(
        device_key=env.device_key(), device=str(where), copy_gbps=copy_gbps,
        copy_bytes=sizes.copy_bytes, matmul_tflops=rates, matmul_n=sizes.matmul_n,
        threads=torch.get_num_threads() if where.type == "cpu" else None,
        torch_version=torch.__version__,
        tf32_allowed="tfloat32" in rates,
        measured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        seconds_to_measure=round(_clock.perf_counter() - started, 2),
        details={"by_thread_count": per_threads, "fingerprint": env.fingerprint()},
    )
