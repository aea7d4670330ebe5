"""This machine's two ceilings: memory-copy bandwidth and matmul rate, measured and cached.

Every later timing in the course is shown as a share of these, because "12 ms" means
nothing by itself while "80% of what this GPU can copy" tells you there is little left
to win. They are measured with `labkit.bench` on random data (never zeros: a GPU draws
less power and may clock higher on zeros, which would flatter the ceiling) and cached per
device in a JSON file, so that a chapter can read them instantly:

    from labkit import ceilings
    c = ceilings.measure()             # measured once per device, then read from the cache
    c = ceilings.measure(refresh=True) # measure again (after a driver or torch upgrade)

The cache lives in $LABKIT_CACHE_DIR, else $XDG_CACHE_HOME/labkit, else ~/.cache/labkit.
"""

from __future__ import annotations

import html
import json
import os
import time as _clock
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import torch

from labkit import env

GPU_MATMUL_DTYPES = ("float32", "bfloat16", "float16")
REP_MS = 400.0  # sampling budget per ceiling: enough runs for a stable median, seconds in all


@dataclass(frozen=True)
class Ceilings:
    """Measured ceilings of one device.

    copy_gbps counts bytes read plus bytes written (a copy of N bytes moves 2N), the
    convention of STREAM and of GPU vendors' bandwidth figures. matmul_tflops maps a
    dtype name ('float32', 'bfloat16', 'float16') to TFLOP/s of a square matmul of side
    matmul_n (2 n^3 flops per call).
    """

    device_key: str
    device: str
    copy_gbps: float
    copy_bytes: int
    matmul_tflops: dict[str, float]
    matmul_n: int
    threads: int | None = None
    torch_version: str = ""
    tf32_allowed: bool = False
    measured_at: str = ""
    seconds_to_measure: float = 0.0
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """Plain values, as stored in the cache file and in results."""
        return asdict(self)

    def _repr_html_(self) -> str:
        rows = [("device", f"{self.device} ({self.device_key})"),
                ("copy bandwidth", f"{self.copy_gbps:.1f} GB/s (read + write, "
                                   f"{self.copy_bytes / 2**20:.0f} MiB buffer)")]
        rows += [(f"matmul {dtype}", f"{rate:.3g} TFLOP/s (n = {self.matmul_n})")
                 for dtype, rate in self.matmul_tflops.items()]
        rows.append(("measured", f"{self.measured_at}, torch {self.torch_version}"
                     + (f", best of {self.threads} threads and 1" if self.threads and self.threads > 1 else "")))
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>" for k, v in rows)
        return f"<div><b>Ceilings of this machine</b><table>{body}</table></div>"


def cache_dir() -> Path:
    """Where labkit keeps what it measured on this machine (not in the repository)."""
    if os.environ.get("LABKIT_CACHE_DIR"):
        return Path(os.environ["LABKIT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "labkit"


def cache_path(device_key: str | None = None) -> Path:
    """The cache file of one device's ceilings."""
    return cache_dir() / f"ceilings-{device_key or env.device_key()}.json"


def cached(device_type: str | None = None) -> Ceilings | None:
    """The ceilings already measured for this machine's device, or None. Never measures.

    `labkit.bench` calls this to show percentages; measuring implicitly would make an
    innocent timing take seconds (CPU) or a minute (GPU, three dtypes). device_type
    'cpu' on a GPU machine returns None: only the course's device is measured.
    """
    if device_type is not None and device_type != env.device().type:
        return None
    path = cache_path()
    try:
        data = json.loads(path.read_text())
        return Ceilings(**data)
    except (OSError, ValueError, TypeError):
        return None  # missing, unreadable, or written by another version: not measured


def measure(refresh: bool = False, verbose: bool = False) -> Ceilings:
    """This machine's ceilings: from the cache, or measured now (and cached) if refresh.

    On the CPU it takes a few seconds (each ceiling with all threads and with one, the
    better kept); on a GPU about ten seconds (a copy plus three matmuls).
    """
    if not refresh:
        known = cached()
        if known is not None:
            return known
    result = _measure_now(verbose)
    path = cache_path(result.device_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result.as_dict(), indent=2))
    os.replace(tmp, path)
    return result


def copy_bandwidth_gbps(nbytes: int, where: torch.device, rep_ms: float | None = None,
                        threads: int | None = None) -> float:
    """GB/s of dst.copy_(src) on a buffer of nbytes, counting read + write."""
    from labkit import bench

    src = torch.rand(nbytes // 4, device=where)
    dst = torch.empty_like(src)
    mode = "cold" if where.type == "cuda" else "hot"  # CPU buffers are far past the L3 anyway
    timing = bench.time(lambda: dst.copy_(src), mode=mode, warmup_ms=50, rep_ms=rep_ms or REP_MS,
                        bytes_moved=2 * src.numel() * 4, label="copy", device=where, threads=threads)
    return float(timing.gbps)


def matmul_tflops(n: int, dtype: torch.dtype, where: torch.device, rep_ms: float | None = None,
                  threads: int | None = None) -> float:
    """TFLOP/s of an n x n by n x n matmul in dtype on random normal data."""
    from labkit import bench

    a = torch.randn(n, n, device=where, dtype=dtype)
    b = torch.randn(n, n, device=where, dtype=dtype)
    out = torch.empty(n, n, device=where, dtype=dtype)
    timing = bench.time(lambda: torch.matmul(a, b, out=out), mode="hot", warmup_ms=50,
                        rep_ms=rep_ms or REP_MS, flops=2 * n**3, label=f"matmul {dtype}",
                        device=where, threads=threads)
    return float(timing.tflops)


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
        sizes.matmul_n, getattr(torch, name), where, threads=t)) for name in dtypes}
    if where.type == "cuda":
        torch.cuda.empty_cache()
    return Ceilings(
        device_key=env.device_key(), device=str(where), copy_gbps=copy_gbps,
        copy_bytes=sizes.copy_bytes, matmul_tflops=rates, matmul_n=sizes.matmul_n,
        threads=torch.get_num_threads() if where.type == "cpu" else None,
        torch_version=torch.__version__,
        tf32_allowed=bool(torch.backends.cuda.matmul.allow_tf32) if where.type == "cuda" else False,
        measured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        seconds_to_measure=round(_clock.perf_counter() - started, 2),
        details={"by_thread_count": per_threads, "fingerprint": env.fingerprint()},
    )
