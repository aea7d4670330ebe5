"""This machine's two ceilings: memory-copy bandwidth and matmul rate, measured and cached.

Every later timing in the course is shown as a share of these, because "12 ms" means
nothing by itself while "80% of what this GPU can copy" tells you there is little left
to win. They are measured with `labkit.measure.bench` on random data (never zeros: a GPU draws
less power and may clock higher on zeros, which would flatter the ceiling) and cached per
device in a JSON file, so that a chapter can read them instantly:

    from labkit.measure import ceilings
    c = ceilings.measure()             # measured once per device, then read from the cache
    c = ceilings.measure(refresh=True) # measure again; a higher cached reading of this machine stays

On a GPU the matmul ceiling is measured in float32, in TF32 (float32 data, TF32 tensor-core
math: what float32 convolutions run in by default), in bfloat16 and in float16, so each
timing can be shown against the math it really ran in.

A ceiling is the best rate over a sweep of sizes, not one size: on an H200 the 8192^3 bf16
matmul runs at the power cap (about 1.45-1.5 GHz) and a 4096^3 one beats it by 3 to 15%, so a
ceiling taken at 8192 alone read 103-115% for later timings. Copies: 64 MiB to 1 GiB on a
GPU (two sizes up to the course's buffer on a CPU); matmuls: n = 2048, 4096, 8192 on a GPU
(256, 512 and the course's n on a CPU). The record keeps each point, the size the best was
reached at and, on a GPU, the SM clock read after each matmul point. Up to 105% of a
ceiling then reads "at the ceiling" (labkit.measure.timing.AT_CEILING_PCT).

A refresh never lowers a ceiling measured on the same machine: where the cached record has the
same fingerprint (`env.fingerprint()`: the same CPU, GPU, driver, torch and thread count), each
ceiling kept is the higher of the cached and the new reading over the same sweep of sizes
(a sweep at the test suite's small sizes fits a cache and is no ceiling: it is not saved over
a sweep of larger buffers), and `details["kept_higher"]` says
which ones came from the earlier run, with its date and this run's reading. A ceiling is the
best the machine can do; a run taken while other programs load it reads low, and a share read
against it then reads high (review 2026-12-03e item 10: one host's copy ceiling read 25.0 GB/s
in three chapters and 45 GB/s an hour later, so a plain 64 MiB copy, the very operation the
ceiling times, read "31% of the copy ceiling"). A new machine, driver or torch measures afresh;
`keep_higher=False` replaces the record whatever it held.

The cache lives in `labkit.core.env.cache_dir()`: $LABKIT_CACHE_DIR, else $XDG_CACHE_HOME/labkit,
else ~/.cache/labkit. The `Ceilings` record and the cache file are `labkit.measure.ceiling_store`'s
(re-exported here), so that `labkit.measure.bench` reads them without importing this module.
"""

from __future__ import annotations

import subprocess
import time as _clock
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone

import torch

from labkit.core import env
from labkit.measure import bench
from labkit.measure.ceiling_store import Ceilings, cache_path, cached, save

__all__ = ["Ceilings", "cache_path", "cached", "measure", "higher_of", "kept_note",
           "copy_bandwidth_gbps", "matmul_tflops", "GPU_MATMUL_DTYPES"]

# The kinds of math a GPU matmul ceiling is measured in; 'tfloat32' is float32 with TF32 on.
GPU_MATMUL_DTYPES = ("float32", "tfloat32", "bfloat16", "float16")
REP_MS = 400.0  # sampling budget per ceiling (split over its sweep): a stable median, seconds in all
GPU_COPY_SWEEP_BYTES = (64 << 20, 256 << 20, 1 << 30)
GPU_MATMUL_SWEEP_N = (2048, 4096, 8192)
CPU_MATMUL_SWEEP_N = (256, 512)  # plus the course's matmul_n


def copy_sweep(where: torch.device, largest: int) -> list[int]:
    """Buffer sizes (bytes) the copy ceiling is the best of, none above `largest`."""
    if where.type == "cuda":
        sizes = [b for b in GPU_COPY_SWEEP_BYTES if b <= largest]
    else:
        sizes = [largest // 2] if largest // 2 >= 8 << 20 else []
    return sorted(set(sizes + [largest]))


def matmul_sweep(where: torch.device, largest: int) -> list[int]:
    """Matmul sides the matmul ceilings are the best of, none above `largest`."""
    candidates = GPU_MATMUL_SWEEP_N if where.type == "cuda" else CPU_MATMUL_SWEEP_N
    return sorted({n for n in candidates if n <= largest} | {largest})


def sm_clock_mhz() -> int | None:
    """The GPU's current SM clock in MHz (torch.cuda.clock_rate, else nvidia-smi), or None."""
    try:
        rate = torch.cuda.clock_rate()
        if rate:
            return int(rate)
    except Exception:  # pynvml missing or not supported: try the command line
        pass
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits",
                               f"--id={torch.cuda.current_device()}"],
                              capture_output=True, text=True, timeout=5)
        return int(done.stdout.strip().splitlines()[0]) if done.returncode == 0 else None
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None


def measure(refresh: bool = False, verbose: bool = False, keep_higher: bool = True) -> Ceilings:
    """This machine's ceilings: from the cache, or measured now (and cached) if refresh.

    On the CPU it takes a few seconds (each point of each sweep with all threads and with
    one, the better kept); on a GPU about half a minute (three copy sizes, then four kinds
    of matmul math, float32, TF32, bfloat16 and float16, at three sizes each). A refresh keeps
    the higher of each cached and new ceiling of the same machine (`higher_of`) unless
    keep_higher is False.
    """
    if not all(isinstance(v, bool) for v in (refresh, verbose, keep_higher)):
        raise TypeError(f"refresh, verbose and keep_higher must be True or False, got {refresh!r}, "
                        f"{verbose!r}, {keep_higher!r}")
    known = cached()
    if not refresh and known is not None:
        return known
    result = _measure_now(verbose)
    if keep_higher:
        if known is not None and _same_machine(result, known) and _smaller_sweep(result, known):
            return result  # the test suite's sizes: not saved over the course's (see `_smaller_sweep`)
        result = higher_of(result, known)
    save(result)
    return result


def _same_machine(new: Ceilings, old: Ceilings) -> bool:
    found = old.details.get("fingerprint")
    return bool(found) and found == new.details.get("fingerprint")


def _smaller_sweep(new: Ceilings, old: Ceilings) -> bool:
    """Whether `new` swept only smaller copy buffers than `old`: the test suite's sizes
    (LABKIT_SIZES=ci, an 8 MiB copy) against the course's (64 and 128 MiB on this CPU). Such
    a copy fits a cache: `make test` executes chapter 00 at those sizes, and its 46 GB/s
    (cache speed) replaced this CPU's 25 GB/s in the shared cache, so the chapters run after
    it read every share against a cache's speed (review 2026-12-03e item 10: 25.0 GB/s in
    00-03, 45 GB/s in 04 an hour later). Such a refresh is returned, not saved."""
    sizes = [[float(k) for k in (r.sweep or {}).get("copy", {})] for r in (new, old)]
    return bool(sizes[0] and sizes[1]) and max(sizes[0]) < max(sizes[1])


def _kept_date(old: Ceilings, key: str) -> str:
    """When the cached reading `key` was measured: its own run, or the earlier one it kept."""
    return str(old.details.get("kept_higher", {}).get(key, {}).get("measured_at") or old.measured_at)


def _sizes_of(record: Ceilings, key: str, sweep: object) -> list[str] | None:
    """The sizes the reading `key` of `record` was swept over: its own sweep's, or, for a
    reading it kept from an earlier run, the sizes saved with it (None if not saved)."""
    kept = record.details.get("kept_higher", {}).get(key)
    if kept is not None:
        return kept.get("sizes")
    return sorted((str(k) for k in sweep), key=float) if sweep else None  # type: ignore[union-attr]


def _same_sizes(old: object, new: object) -> bool:
    """Whether two sweeps ({size: rate}) timed the same sizes: a copy ceiling swept at the test
    suite's small sizes fits a cache (this CPU's cache read 46 GB/s at 8 MiB against 25 GB/s at
    64 MiB) and is no ceiling for the course's sizes."""
    return bool(old) and bool(new) and {str(k) for k in old} == {str(k) for k in new}  # type: ignore[union-attr]


def higher_of(new: Ceilings, old: Ceilings | None) -> Ceilings:
    """`new` with each ceiling raised to `old`'s where `old` was measured on the same machine
    (the same fingerprint), over the same sweep of sizes, and reads higher; `details
    ["kept_higher"]` names each ceiling kept from `old`, with the date it was measured and this
    run's lower reading. A different machine, driver or torch (another fingerprint), other
    sizes, or a record without them, changes nothing."""
    if old is None or not _same_machine(new, old):
        return new
    kept: dict[str, dict] = {}
    copy_gbps, copy_bytes = new.copy_gbps, new.copy_bytes
    old_sweep, new_sweep = old.sweep or {}, new.sweep or {}
    sizes = _sizes_of(old, "copy_gbps", old_sweep.get("copy"))
    if old.copy_gbps > new.copy_gbps and _same_sizes(sizes, new_sweep.get("copy")):
        copy_gbps, copy_bytes = old.copy_gbps, old.copy_bytes
        kept["copy_gbps"] = {"kept": old.copy_gbps, "measured_at": _kept_date(old, "copy_gbps"),
                             "this_run": new.copy_gbps, "sizes": sizes}
    rates, best_n = dict(new.matmul_tflops), dict(new.matmul_best_n)
    clocks = dict(new.sm_clock_mhz)
    for name, rate in old.matmul_tflops.items():
        key = f"matmul_tflops.{name}"
        sizes = _sizes_of(old, key, old_sweep.get("matmul", {}).get(name))
        if name in rates and rate > rates[name] and _same_sizes(sizes, new_sweep.get("matmul", {}).get(name)):
            kept[key] = {"kept": rate, "measured_at": _kept_date(old, key), "this_run": rates[name],
                         "sizes": sizes}
            rates[name] = rate
            if name in old.matmul_best_n:
                best_n[name] = old.matmul_best_n[name]
            clocks[name] = old.sm_clock_mhz.get(name)
    if not kept:
        return new
    return replace(new, copy_gbps=copy_gbps, copy_bytes=copy_bytes, matmul_tflops=rates,
                   matmul_best_n=best_n, sm_clock_mhz=clocks,
                   details={**new.details, "kept_higher": kept})


def kept_note(result: Ceilings) -> str:
    """One line on the ceilings a refresh kept from an earlier run of this machine, or ''.

    Why it is said once at the end: on a GPU five ceilings (copy and four kinds of matmul
    math) can each be kept, and chapter 00's page has 1,500 words in all."""
    kept = result.details.get("kept_higher") or {}
    if not kept:
        return ""
    return ("Kept from earlier runs, a ceiling being the best reading (a loaded run reads low): "
            + "; ".join(f"{key.replace('_gbps', '').replace('_tflops.', ' ')} {v['kept']:.4g} "
                        f"({str(v['measured_at'])[:16]}; this run {v['this_run']:.4g})"
                        for key, v in kept.items()) + ".")


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


# The tensor-core feature (env.gpu_lacks) each kind of GPU matmul math needs.
MATH_FEATURE = {"tfloat32": "tf32", "bfloat16": "bf16"}


def gpu_matmul_math(where: torch.device | None = None) -> tuple[tuple[str, ...], dict[str, str]]:
    """The kinds of matmul math this GPU has ceilings for, and why each other one is left out.

    A T4 (compute capability 7.5) has no TF32 and no bfloat16 tensor cores: a 'TF32' ceiling
    there would be float32's under another name, a bfloat16 one an emulation's.
    """
    skipped = {name: why for name, feature in MATH_FEATURE.items()
               if (why := env.gpu_lacks(feature, where))}
    return tuple(name for name in GPU_MATMUL_DTYPES if name not in skipped), skipped


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
    copy_sizes = copy_sweep(where, sizes.copy_bytes)
    matmul_sizes = matmul_sweep(where, sizes.matmul_n)

    def best(name: str, measure_one: Callable[[int | None], float]) -> float:
        # On a shared CPU a single short run can land in someone else's burst: the sweep's
        # several points are the second chances (one run each), with all threads and one.
        values = {threads: measure_one(threads) for threads in _thread_counts(where)}
        per_threads[name] = {str(k): v for k, v in values.items()}
        if verbose:
            print(f"{name}: " + ", ".join(f"{v:.4g}" + (f" ({k} threads)" if k else "")
                                          for k, v in values.items()))
        return max(values.values())

    copy_points = {nbytes: best(f"copy_gbps.{nbytes}", lambda t, nbytes=nbytes: copy_bandwidth_gbps(
        nbytes, where, rep_ms=REP_MS / len(copy_sizes), threads=t)) for nbytes in copy_sizes}
    copy_at = max(copy_points, key=copy_points.get)
    dtypes, skipped = gpu_matmul_math(where) if where.type == "cuda" else (("float32",), {})
    for name, why in skipped.items():
        print(f"matmul ceiling in {name} not measured: {why}")
    matmul_points: dict[str, dict[int, float]] = {}
    clocks: dict[str, int | None] = {}
    for name in dtypes:
        points, point_clocks = {}, {}
        for n in matmul_sizes:
            points[n] = best(f"matmul_tflops.{name}.{n}", lambda t, n=n, name=name: matmul_tflops(
                n, name, where, rep_ms=REP_MS / len(matmul_sizes), threads=t))
            point_clocks[n] = sm_clock_mhz() if where.type == "cuda" else None
        matmul_points[name] = points
        clocks[name] = point_clocks[max(points, key=points.get)]
    rates = {name: max(points.values()) for name, points in matmul_points.items()}
    best_n = {name: max(points, key=points.get) for name, points in matmul_points.items()}
    if where.type == "cuda":
        torch.cuda.empty_cache()
    return Ceilings(
        device_key=env.device_key(), device=str(where), copy_gbps=copy_points[copy_at],
        copy_bytes=copy_at, matmul_tflops=rates, matmul_n=sizes.matmul_n,
        threads=torch.get_num_threads() if where.type == "cpu" else None,
        torch_version=torch.__version__,
        tf32_allowed="tfloat32" in rates,
        measured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        seconds_to_measure=round(_clock.perf_counter() - started, 2),
        details={"by_thread_count": per_threads, "fingerprint": env.fingerprint(),
                 **({"math_not_measured": skipped} if skipped else {})},
        matmul_best_n=best_n,
        sweep={"copy": {str(k): v for k, v in copy_points.items()},
               "matmul": {name: {str(n): v for n, v in points.items()}
                          for name, points in matmul_points.items()}},
        sm_clock_mhz=clocks,
    )
