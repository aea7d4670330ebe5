"""The classic timing mistakes, measured: no synchronisation, no warm-up, the cache, and
(on a CPU) the allocator.

Each function runs the naive measurement and the harness's side by side on real work,
so a notebook (and benchmarks/harness_parity.py on the GPU) can show how far off the
naive number is. Plots are in `plot_cache_curve`, which measures nothing.
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import ctypes.util
import dataclasses
import re
import statistics
import time as _clock
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import torch

from labkit.claims import quiz_keys, trust
from labkit.core import results
from labkit.measure import bench, clocks, conditions, out_of_memory, pace
from labkit.measure.timing import (
    NOISY_IQR_FRACTION,
    Comparison,
    Timing,
    fault_share,
    format_seconds,
    ratio_spread,
    summarise,
)
from labkit.show.table import Table, format_value
from labkit.show.widgets.quiz import Key


def no_sync_vs_sync(n: int = 4096, dtype: torch.dtype = torch.bfloat16, calls: int = 20) -> dict:
    """GPU only: wall-clock time per matmul without synchronising, with it, and the harness.

    CUDA launches are asynchronous: `c = a @ b` returns as soon as the kernel is queued,
    so a stopwatch without torch.cuda.synchronize() measures the launch, not the work.
    """
    if not torch.cuda.is_available():
        raise RuntimeError("no_sync_vs_sync needs a GPU: without one there is nothing asynchronous")
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start = _clock.perf_counter()
    for _ in range(calls):
        a @ b
    no_sync_s = (_clock.perf_counter() - start) / calls      # the mistake
    torch.cuda.synchronize()
    start = _clock.perf_counter()
    for _ in range(calls):
        a @ b
    torch.cuda.synchronize()
    with_sync_s = (_clock.perf_counter() - start) / calls
    harness = bench.time(lambda: a @ b, flops=2 * n**3, flops_dtype=str(dtype), label="matmul")
    return {"n": n, "dtype": str(dtype).replace("torch.", ""), "calls": calls,
            "no_sync_s": no_sync_s, "with_sync_s": with_sync_s, "harness_median_s": harness.median_s,
            "harness_iqr_s": harness.iqr_s, "understatement": harness.median_s / no_sync_s,
            # the harness's figure against the matmul ceiling: the synchronised one is the real one
            # (review 2026-12-04m item 10: 183 us for 2*4096^3 bf16 is 751 TFLOP/s, 97% of 771)
            "harness_tflops": harness.tflops, "harness_pct_of_matmul_ceiling": harness.pct_of_matmul_ceiling}


def first_call_vs_steady(fn: Callable[[], object], label: str, device: str | None = None,
                         threads: int | None = None, wall_calls: int = 21,
                         warm: Callable[[], object] | None = None) -> dict:
    """How long the very first call takes against the harness's steady-state median.

    The first call pays once for what later calls reuse: CUDA context and cuBLAS handle,
    kernel selection and loading, oneDNN primitive creation, the first touch of fresh
    memory (page faults). Call this with work this process has not run yet. On the CPU,
    threads (default: torch's current count) is held for the first call and the rest.

    The first call can only be timed by the wall clock (one call, synchronised), while the
    harness's median is device time on a GPU (CUDA events). So the steady state is also timed
    by the wall clock, `wall_calls` calls each synchronised (`steady_wall_s`), and
    `first_over_steady_wall` divides like by like; `first_over_steady` (against the harness's
    median) is kept, and on a GPU it mixes the two clocks.

    warm, when given, runs once before the first call, untimed, under the same threads: what
    the row is not about. The first convolution of a process loads the library and creates its
    handle (cuDNN on a GPU: the H200 timed 98.9 ms, 3,800x the steady median, and called it
    "a new shape"; review 2026-12-03e item 7), so a row about a new shape first runs one
    convolution on another shape.
    """
    # the probe of where fn runs, the warm-up, the first call and the wall-clock calls are this
    # function's own calls of fn: an out-of-memory in them is explained, the cache freed and the
    # kernel usable, as in the harness's timings (review 2026-12-05s: it reached the learner raw)
    where = out_of_memory.explained(label, "the probe of where it runs",
                                    lambda: conditions.resolve_device(device, fn, ()))
    threads = conditions.threads_for(where, threads)
    sync = torch.cuda.synchronize if where.type == "cuda" else (lambda: None)

    def first_call() -> float:
        if warm is not None:
            warm()
            sync()
        start = _clock.perf_counter()
        fn()
        sync()
        return _clock.perf_counter() - start

    def wall_clock_calls() -> list[float]:
        walls = []
        for _ in range(max(1, wall_calls)):
            start = _clock.perf_counter()
            fn()
            sync()
            walls.append(_clock.perf_counter() - start)
        return walls

    with conditions.fixed_threads(threads):
        first_s = out_of_memory.explained(label, "its first call", first_call)
        steady = bench.time(fn, mode="hot", label=label, device=where, threads=threads)
        walls = out_of_memory.explained(label, "the wall-clock calls", wall_clock_calls)
    steady_wall_s = max(statistics.median(walls), 1e-9)
    return {"label": label, "device": str(where), "first_call_s": first_s,
            "steady_median_s": steady.median_s, "steady_iqr_s": steady.iqr_s,
            "first_over_steady": first_s / steady.median_s,
            "steady_wall_s": steady_wall_s, "first_over_steady_wall": first_s / steady_wall_s}


CPU_BYTES_PER_CALL = 8 * 2**20    # a CPU point reads at least this much a call: the call's cost ~2-4% at L1 speed
GPU_BYTES_PER_GRAPH = 256 * 2**20  # a GPU point's graph moves at least this much a replay
GPU_MAX_COPIES = 1024             # copies one graph holds at most (capture time and memory grow with it)
GPU_FLOOR_COPIES = 256            # one-element copies in the graph that prices a copy kernel's fixed cost
STEP_RATIO = 0.8                  # a step shows where the bandwidth just beyond a level is under 0.8x just inside it
CPU_ROUNDS = 3                    # a CPU point is timed in 3 rounds over the sweep (other helpers load this machine)
# a GPU point too (review 2026-12-04m item 4: the H200's 1 GiB point, timed in one round, read 2,747 GB/s
# against 4,168 at 512 MiB and a 4,245 GB/s copy ceiling measured on a 1 GiB copy in the same run)
GPU_ROUNDS = 3
OVERHEAD_BOUND = 0.5              # a point whose call cost explains over half its median is read as overhead


def repeats_for(working_set_bytes: int, per_call_bytes: int, most: int | None = None) -> int:
    """How many times a point repeats its work inside one call: enough that one call moves at
    least per_call_bytes, so a call's fixed cost is spread over every pass (review 2026-12-04k
    item 5: one copy a call made the curve left of the last-level cache per-call cost)."""
    if working_set_bytes < 1 or per_call_bytes < 1:
        raise ValueError(f"sizes must be positive, got {working_set_bytes} and {per_call_bytes}")
    k = max(1, per_call_bytes // working_set_bytes)
    return min(k, most) if most else k


def repeated_copy(src: torch.Tensor, dst: torch.Tensor, copies: int) -> Callable[[], None]:
    """One call that copies src into dst `copies` times: what a GPU point captures in one CUDA
    Graph, so one replay (one launch) covers every copy."""
    if copies < 1:
        raise ValueError(f"copies must be >= 1, got {copies}")

    def run() -> None:
        for _ in range(copies):
            dst.copy_(src)
    return run


def _cpu_point(buffer: torch.Tensor, threads: int | None, rep_ms: float) -> dict:
    """One CPU point: a sum reading the buffer `passes` times in one call, through a view that
    repeats it (an outer dimension of stride 0, as chapter 02's C5b window): a copy cannot
    repeat inside one op (its destination may not overlap itself), a read can."""
    size = buffer.numel() * buffer.element_size()
    passes = repeats_for(size, CPU_BYTES_PER_CALL)
    view = buffer.as_strided((passes, buffer.numel()), (0, 1)) if passes > 1 else buffer
    t = bench.time(lambda: view.sum(), mode="hot", warmup_ms=5, rep_ms=rep_ms, min_runs=3,
                   bytes_moved=passes * size, device=buffer.device, threads=threads,
                   label=f"sum over {size} B, {passes} passes")
    return {"working_set_bytes": size, "gbps": t.gbps, "median_s": t.median_s, "iqr_s": t.iqr_s,
            "repeats": passes, "overhead_share": t.overhead_share, "graph": False, "op": "read"}


def _gpu_floor_s(where: torch.device, rep_ms: float) -> float | None:
    """A copy kernel's fixed cost on the device: a graph of one-element copies, per copy. A
    graph removes the host's launches, not this; None where no graph could be captured."""
    one, other = torch.ones(1, device=where), torch.empty(1, device=where)
    try:
        t = bench.time(repeated_copy(one, other, GPU_FLOOR_COPIES), mode="graph", warmup_ms=5,
                       rep_ms=rep_ms, min_runs=3, device=where, label="one-element copies, graph")
    except RuntimeError:
        return None
    return t.median_s / GPU_FLOOR_COPIES


def _gpu_point(src: torch.Tensor, dst: torch.Tensor, floor_s: float | None, rep_ms: float) -> dict:
    """One GPU point: a CUDA Graph replaying `copies` copies (one launch for all of them); where
    no graph can be captured, one copy a call, marked graph False. A point whose one copy moves
    GPU_BYTES_PER_GRAPH or more (tens of microseconds, where a launch hides behind the copy
    before it) is timed as a plain copy a call: review 2026-12-06b item 3 found the graph replay
    of the 1 GiB copy drew a cliff at 2,750 GB/s that the same copy without a graph (4,157 GB/s)
    does not have."""
    size = 2 * src.numel() * src.element_size()  # source + destination
    copies = repeats_for(size, GPU_BYTES_PER_GRAPH, GPU_MAX_COPIES)
    graph = copies > 1
    try:
        if not graph:
            raise RuntimeError("one copy a call: no graph needed")
        t = bench.time(repeated_copy(src, dst, copies), mode="graph", warmup_ms=5, rep_ms=rep_ms,
                       min_runs=3, bytes_moved=copies * size, device=src.device,
                       label=f"copy {size // 2} B, {copies} copies in a graph")
    except RuntimeError:  # no graph here: one copy a call, its fixed cost in every median
        graph, copies = False, 1
        t = bench.time(lambda: dst.copy_(src), mode="hot", warmup_ms=5, rep_ms=rep_ms, min_runs=3,
                       bytes_moved=size, device=src.device, label=f"copy {size // 2} B")
    share = min(copies * floor_s / t.median_s, 1.0) if floor_s and t.median_s > 0 else None
    return {"working_set_bytes": size, "gbps": t.gbps, "median_s": t.median_s, "iqr_s": t.iqr_s,
            "repeats": copies, "overhead_share": share, "graph": graph, "op": "copy"}


def cache_curve(max_bytes: int, min_bytes: int = 4096, device: str | None = None,
                threads: int | None = 1, rep_ms: float = 30.0) -> list[dict]:
    """Bandwidth against working-set size, from min_bytes to max_bytes, each point timed back
    to back ("hot") with its work repeated inside one call.

    While the working set fits a cache the work runs at that cache's speed, and beyond it drops
    to the next level's: the steps of this curve are the cache levels. One small copy a call
    measures the call instead (review 2026-12-04k item 5: left of the last-level cache both
    curves were per-call cost), so on the CPU each point is a sum reading the buffer `repeats`
    times in one op (threads=1, so per-core caches show), and on a GPU a CUDA Graph replaying
    `repeats` copies (source + destination) in one launch. Each point carries the share of its
    median a call's fixed cost explains (`overhead_share`: on the CPU a one-element op's, on a
    GPU a one-element copy kernel's times the copies), so `cache_steps` can leave out the points
    that still measure overhead. On the CPU the sweep runs CPU_ROUNDS times, rep_ms shared out,
    and each point keeps its fastest round: a 2-core machine shared with other jobs read 8 and 16
    KiB at 93 and 67 GB/s between 123 and 136 in one sweep. The GPU path ran on the H200 (the
    record's 'cache_curve_here', 2026-12-05); the tests here check its structure with the timing
    stood in for, and `cache_curve_text` on the points it recorded.
    """
    where = torch.device(device) if device else conditions.resolve_device(None, lambda: None, ())
    on_gpu = where.type == "cuda"
    top = max_bytes // 4 // (2 if on_gpu else 1)  # a GPU's working set is source plus destination
    src = torch.empty(top, device=where).fill_(1.5)
    dst = torch.empty_like(src) if on_gpu else None
    floor_s = _gpu_floor_s(where, rep_ms) if on_gpu else None
    sizes = []
    while min_bytes * 2 ** len(sizes) <= max_bytes:
        sizes.append(min_bytes * 2 ** len(sizes))
    rounds = GPU_ROUNDS if on_gpu else CPU_ROUNDS

    def point(size: int) -> dict:
        count = size // 4 // (2 if on_gpu else 1)
        return (_gpu_point(src[:count], dst[:count], floor_s, rep_ms / rounds)
                if dst is not None else _cpu_point(src[:count], threads, rep_ms / rounds))
    return swept_in_rounds(sizes, rounds, point)


def swept_in_rounds(sizes: list[int], rounds: int, point: Callable[[int], dict]) -> list[dict]:
    """Every size timed by `point`, the whole sweep `rounds` times, so a burst of other load (or a
    one-off cost, such as a first use of a large buffer) hits one round of a point; each point
    keeps its fastest round, since such costs only slow it, and says how many rounds it took."""
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    taken: dict[int, list[dict]] = {size: [] for size in sizes}
    for _ in range(rounds):
        for size in sizes:
            taken[size].append(point(size))
    return [min(found, key=lambda p: p["median_s"]) | {"rounds": rounds} for found in taken.values()]


def cache_steps(points: list[dict], levels: Mapping[str, int]) -> list[dict]:
    """For each marked cache level, the fastest point inside it (above twice the level below, up
    to the level's size) against the fastest just beyond it (from twice its size to half the
    next level's), leaving out points whose call cost explains over half the median. The fastest,
    because load from other processes only slows a point (this 2-core machine, shared, read 8 KiB
    at 91 GB/s between 117 and 132 in every round of one sweep), and a left side still rising from
    a fixed cost then does not hide the edge. A step 'shows' when beyond / inside < STEP_RATIO;
    None where a side has no point to read."""
    sizes = sorted(levels.values())
    usable = [p for p in points if p.get("gbps") and (p.get("overhead_share") or 0) <= OVERHEAD_BOUND]
    found = []
    for i, (name, size) in enumerate(sorted(levels.items(), key=lambda kv: kv[1])):
        below = sizes[i - 1] if i else 0
        above = sizes[i + 1] if i + 1 < len(sizes) else None
        inside = [p["gbps"] for p in usable if 2 * below <= p["working_set_bytes"] <= size]
        beyond = [p["gbps"] for p in usable if 2 * size <= p["working_set_bytes"]
                  and (above is None or p["working_set_bytes"] <= above // 2)]
        a, b = max(inside, default=None), max(beyond, default=None)
        ratio = b / a if a and b else None
        found.append({"level": name, "bytes": size, "inside_gbps": a, "beyond_gbps": b, "ratio": ratio,
                      "shows": None if ratio is None else ratio < STEP_RATIO})
    return found


def _gbps(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


ANOMALY_RATIO = 0.8  # a largest point under this times the fastest other point beyond the last level


def cache_point_probe(device: str) -> Path | None:
    """The latest recorded cache-point probe (results/h200_probes/probe_00_cache_point_*.log,
    benchmarks/probe_00_cache_point.py) where it ran on `device` ('NVIDIA H200', or a record's
    machine, 'nvidia-h200'); None where there is none for that device."""
    found = sorted((results.repository_results_dir() / "h200_probes").glob("probe_00_cache_point_*.log"))
    if not found:
        return None
    head = next(iter(found[-1].read_text().splitlines()), "")
    ran_on = re.search(r" on (.+?) \(", head)
    same = ran_on is not None and ran_on.group(1).lower().replace(" ", "-") == str(device).lower().replace(" ", "-")
    return found[-1] if same else None


PROBE_ROW = re.compile(r"^(?P<label>\S.*?)\s{2,}(?P<mib>\d+) MiB\s+\S+ \S+\s+(?P<gbps>[\d,.]+) GB/s")


def _probe_reading(path: Path | None, working_set_bytes: int) -> str:
    """What the recorded probe found for the largest point's copy (review 2026-12-05t 00-02 item
    4: the page called the 1 GiB point 'its own anomaly' while the probe had found it the CUDA
    graph's): the graph replay's rate (as the curve times it) against the same copy without a
    graph, hot and cold, from the log's rows; '' where the log has no such rows at that size."""
    if path is None:
        return ""
    rows = {}
    for line in path.read_text().splitlines():
        m = PROBE_ROW.match(line)
        if m and int(m["mib"]) << 20 == working_set_bytes:
            rows.setdefault(m["label"].strip(), float(m["gbps"].replace(",", "")))
    graph = next((v for k, v in rows.items() if k.startswith("as the curve")), None)
    hot, cold = rows.get("no graph, hot"), rows.get("no graph, cold")
    if graph is None or hot is None or cold is None:
        return ""
    return (f"; a probe recorded on that GPU ({path.name}): replayed in a CUDA graph, as the curve times it, "
            f"this copy runs at {_gbps(graph)} GB/s, without a graph at {_gbps(hot)} (hot) and {_gbps(cold)} "
            "(cold): the low point is the graph replay's, not memory's")


def _largest_point_anomaly(points: list[dict], levels: Mapping[str, int], top: Mapping,
                           probe: Path | None = None) -> str:
    """Where the largest point runs under ANOMALY_RATIO times the fastest other point beyond the
    last-level cache, ', 0.65x the 256 MiB point: its own anomaly, not memory's rate' (the
    fastest point beyond it named); else ''. Review 2026-12-05p 00-02 item 3: the
    H200's 1 GiB point read 63% of a copy ceiling measured at that same size while 256 and 512 MiB
    ran near it, so 'beyond the cache, 63%' was the point's, not DRAM's (its cause is not known:
    benchmarks/probe_00_cache_point.py times it other ways on a GPU)."""
    if not levels or not top.get("gbps"):
        return ""
    last = max(levels, key=levels.get)
    beyond = [p for p in points if p is not top and p.get("gbps") and p["working_set_bytes"] >= 2 * levels[last]
              and (p.get("overhead_share") or 0) <= OVERHEAD_BOUND]
    if not beyond:
        return ""
    best = max(beyond, key=lambda p: p["gbps"])
    ratio = top["gbps"] / best["gbps"]
    if ratio >= ANOMALY_RATIO:
        return ""
    # the probe read the graph replay of this copy: it explains only a point timed that way
    said = _probe_reading(probe, top["working_set_bytes"]) if top.get("graph") else ""
    if said:
        return f", {ratio:.2f}x the {_size(best['working_set_bytes'])} point{said}"
    return f", {ratio:.2f}x the {_size(best['working_set_bytes'])} point: its own anomaly, not memory's rate"


def cache_curve_text(curve: Mapping, probe: Path | None = None) -> str:
    """What the curve shows, from its points (how each was timed is in the page's prose): the
    largest share of a median a call's cost explains (each point's is plotted), each level's fastest point inside -> beyond and whether that is a step,
    and where only the last-level edge shows, that and why (review 2026-12-04k item 5). A record
    of one copy a call (no 'repeats') says that left of its last level it is per-copy cost."""
    points, levels = curve["points"], curve["levels"]
    last = max(levels, key=levels.get) if levels else "last-level"
    if not points or "repeats" not in points[0]:
        return f"Recorded one copy a call: left of the {last} line, per-copy cost."
    on_gpu = points[0]["op"] == "copy"
    shares = [p["overhead_share"] for p in points if p.get("overhead_share") is not None]
    # review 2026-12-05u 00-04 item 10: 'Call cost ≤100% of a point (grey); up to 4 MiB over half:
    # plotted, not read for steps' said what the grey line is in shorthand
    cost = (f"The grey line: the call's own share of each point (at most {100 * max(shares):.0f}%)"
            if shares else "Call cost not priced")
    bound = [p["working_set_bytes"] for p in points if (p.get("overhead_share") or 0) > OVERHEAD_BOUND]
    if bound:
        cost += f"; points over half (up to {_size(max(bound))}) are drawn but not read"
    steps = cache_steps(points, levels)
    said = "; ".join(f"{s['level']} " + (  # its size is in the plot's legend
        "too few points" if s["shows"] is None else
        f"{_gbps(s['inside_gbps'])} -> {_gbps(s['beyond_gbps'])}, {'step' if s['shows'] else 'no step'}")
        for s in steps)
    text = f"{cost}. Inside -> beyond (GB/s, fastest): {said}."
    ceiling = curve.get("copy_ceiling_gbps") if on_gpu else None
    if ceiling:  # the largest point against the copy ceiling, with its rounds (review 2026-12-04m item 4)
        top = max(points, key=lambda p: p["working_set_bytes"])
        text += (f" Largest point, {_size(top['working_set_bytes'])}: {100 * top['gbps'] / ceiling:.0f}% of the "
                 f"{_gbps(ceiling)} GB/s copy ceiling (best of {top.get('rounds', 1)})"
                 + _largest_point_anomaly(points, levels, top, probe) + ".")
    if steps and steps[-1]["shows"] and not any(s["shows"] for s in steps[:-1]):
        why = ("a graph removes launches, not each copy kernel's fixed cost on the device" if on_gpu
               else "streaming reads are prefetched, so an inner edge shows only where the next level "
                    "cannot keep up")
        text += f" Only the last-level edge is visible: {why}."
    return text


def cache_levels(device: str = "cpu") -> dict[str, int]:
    """Cache sizes to mark on the curve: the CPU's L1/L2/L3 (per core) or the GPU's L2."""
    if device.startswith("cuda"):
        return {"L2": conditions.last_level_cache_bytes(torch.device("cuda"))}
    return {f"L{level}": size for level, size in sorted(conditions.cpu_cache_sizes().items())}


def hot_cold_source_bytes(device: str = "cpu") -> int:
    """The source size for the hot/cold demo: its working set (source + destination) fits the
    cache the demo is about, yet is as large as that allows, so each call moves real bytes.

    CPU: 1 MiB (2 MiB working set, inside a server core's L2 or its L3 share). GPU: a quarter
    of the L2 (half of it in use), the most that stays cached: a copy of a few MiB on a GPU is
    only microseconds, possibly under the host's launch of it (review 2026-12-04j item 2), so on a
    GPU the demo times a loop of the hot copy by wall clock beside its device time and says what
    bound it (`hot_loop_reading`, review 2026-12-04m item 2); the quiz grades device time alone
    (`hot_cold_flags`, review 2026-12-04k item 3).
    """
    if device.startswith("cuda"):
        l2 = conditions.last_level_cache_bytes(torch.device("cuda"))
        return max(2**20, (l2 // 4) // 4096 * 4096)
    return 2**20


def plot_cache_curve(points: list[dict], levels: dict[str, int], title: str,  # noqa: ANN201
                     ceiling_gbps: float | None = None):
    """The curve on log axes with the cache sizes marked as vertical lines and, for a copy curve
    (a GPU's), the copy ceiling as a horizontal one (review 2026-12-04m item 4)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot([p["working_set_bytes"] for p in points], [p["gbps"] for p in points], "o-")
    if ceiling_gbps and points and points[0].get("op") == "copy":  # a read curve is not a copy's
        ax.axhline(ceiling_gbps, color="grey", linestyle="-.", label=f"copy ceiling = {ceiling_gbps:,.0f} GB/s")
    ax.set_xscale("log", base=2)
    read = bool(points) and points[0].get("op") == "read"  # the CPU's curve: a sum, no destination
    ax.set_xlabel("working set (bytes)" if read else "working set: source + destination (bytes)")
    ax.set_ylabel("read bandwidth, GB/s" if read else "copy bandwidth, GB/s (read + write)")
    ax.set_title(title)
    shares = [p.get("overhead_share") for p in points]
    if points and all(share is not None for share in shares):  # each point's call share (review 04k item 5)
        twin = ax.twinx()
        twin.plot([p["working_set_bytes"] for p in points], [100 * share for share in shares], ":",
                  color="grey")
        twin.set_ylim(0, 100)
        twin.set_ylabel("call cost, % of the point's time", color="grey")
    for i, (name, size) in enumerate(levels.items()):
        ax.axvline(size, color=f"C{i + 1}", linestyle="--", label=f"{name} = {size / 2**10:.0f} KiB")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    return fig


ALLOCATOR_ROUNDS = 4  # interleaved rounds of Mistake 4: each set-up in its own child process per round


def allocator_effect(fn: Callable[[], object], label: str, threads: int | None = 1,
                     rep_ms: float = 600.0, mode: str = "hot", rounds: int = ALLOCATOR_ROUNDS) -> dict:
    """CPU: time fn with glibc's default allocator and with malloc keeping freed memory,
    each set-up in its own child process, interleaved over `rounds` rounds.

    With the default settings glibc hands large freed blocks back to the kernel, so a
    function that allocates its outputs afresh (a CNN's forward pass) faults its memory in
    again on every call, and the timing partly measures the allocator. The same function
    timed inside `bench.allocator_kept()` shows the work alone. The kept timing must run in a
    child process (`conditions.run_in_child`): once malloc's thresholds are set by hand,
    glibc's adaptive threshold is off for the rest of the process (seen: 2,050 page faults
    per call in the next cell, 27% of its time, where glibc's defaults give about 20). The
    default timing runs in a child too, and the two alternate (default-kept, kept-default,
    ...): review 2026-12-04i item 1 found the H200 host's kept run, alone in a child, 36%
    slower with 0.9 faults per call, a gap of the process, not of malloc. rep_ms is the
    sampling budget per set-up, split over the rounds.

    Returns both set-ups' timings (the rounds' samples together) and each round's median
    (what the trust rule sizes a noisy timing by), faults per call, the ratio
    default/kept of the medians and the median of the per-round ratios with its spread,
    whether the rounds clear 1 (`allocator_decides`), the measured cost of one page
    fault here (`fault_cost_s`, which `allocator_conclusion` prices the fault difference
    with), and whether this process's thresholds were left untouched.
    """
    per_round_ms = rep_ms / max(1, rounds)
    parts: dict[bool, list[Timing]] = {False: [], True: []}
    names = {False: f"{label} (default allocator)", True: f"{label} (malloc keeps memory)"}
    for index in range(max(1, rounds)):
        for kept in ((False, True) if index % 2 == 0 else (True, False)):
            parts[kept].append(conditions.run_in_child(lambda kept=kept: bench.time(
                fn, mode=mode, threads=threads, rep_ms=per_round_ms, device="cpu",
                keep_allocator_memory=kept, label=names[kept])))
    fault_cost = conditions.page_fault_cost_s()
    default = merged_rounds(parts[False], fault_cost)
    kept = merged_rounds(parts[True], fault_cost)
    ratio = default.median_s / kept.median_s if kept.median_s > 0 else float("inf")
    q25, q75, per_round = ratio_spread([t.median_s for t in parts[False]], [t.median_s for t in parts[True]])
    spread = (default.iqr_s + kept.iqr_s) / 2
    return {
        "default_round_medians": [t.median_s for t in parts[False]],
        "kept_round_medians": [t.median_s for t in parts[True]],
        "label": label, "default": default, "kept": kept,
        "default_median_s": default.median_s, "kept_median_s": kept.median_s,
        "default_faults_per_call": default.minor_faults_per_call,
        "kept_faults_per_call": kept.minor_faults_per_call,
        "default_over_kept": ratio, "ratio_rounds": statistics.median(per_round),
        "ratio_q25": q25, "ratio_q75": q75, "rounds": len(per_round), "interleaved": True,
        "allocator_applied": kept.allocator == "kept",
        # the rounds decide, as the page's A/B table reads them (review 2026-12-06y item 6: 1.04x,
        # rounds 1.02-1.04, was 'within the two timings' spread' beside a table that calls rounds
        # clear of 1 outside the noise); the pooled IQRs stay as `spread_s`, shown, not deciding
        "allocator_decides": not q25 <= 1.0 <= q75, "spread_s": spread,
        "noisy": default.noisy or kept.noisy, "fault_cost_s": fault_cost, "threads": threads,
        "note": conditions.allocator_note(),
        "kept_timed_in_child": not conditions.thresholds_fixed(),
        "heap_serves": heap_serves(),
    }


def merged_rounds(parts: list[Timing], fault_cost_s: float) -> Timing:
    """One set-up's timings from several rounds as one Timing: every round's samples together
    (median and IQR over all of them, so a round that ran slower widens the spread), page faults
    per call weighted by each round's calls, the share of the median they explain, and the
    rounds' notes (the 'noisy' note re-judged on the samples together)."""
    if not parts:
        raise ValueError("no rounds to merge")
    samples = tuple(s for t in parts for s in t.times_s)
    stats = summarise(samples)
    counted = [(t.minor_faults_per_call, t.count) for t in parts if t.minor_faults_per_call is not None]
    calls = sum(c for _, c in counted)
    faults = sum(f * c for f, c in counted) / calls if counted and calls else None
    threads = parts[0].threads
    notes = [w for w in dict.fromkeys(w for t in parts for w in t.warnings) if not w.startswith("noisy")]
    if stats.median_s > 0 and stats.iqr_s / stats.median_s > NOISY_IQR_FRACTION:
        notes.append(f"noisy: IQR is {100 * stats.iqr_s / stats.median_s:.0f}% of the median over "
                     f"{len(parts)} rounds (over 10%); rerun, close other programs, or time more work per call.")
    return dataclasses.replace(
        parts[0], times_s=samples, median_s=stats.median_s, iqr_s=stats.iqr_s, min_s=stats.min_s,
        count=stats.count, minor_faults_per_call=faults, warnings=tuple(notes),
        page_fault_share=fault_share(faults, stats.median_s, fault_cost_s, threads) if faults is not None else None)


# Block sizes probed by `heap_serves`: glibc's default mmap threshold is 128 KiB, and its
# dynamic threshold can rise to 32 MiB (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit).
PROBE_BYTES = (256 * 2**10, 2**20, 4 * 2**20, 16 * 2**20)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
        "keepcost")]


def _heap_probe() -> dict[int, bool] | None:
    """For each of PROBE_BYTES, whether a malloc of that size came from the heap (True) or
    a fresh mmap (False, read from mallinfo2's count of mmapped blocks). Nothing is freed:
    freeing an mmapped block would raise the threshold it probes. None without glibc 2.33+."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        info = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    info.restype, libc.malloc.restype, libc.malloc.argtypes = _MallInfo2, ctypes.c_void_p, [ctypes.c_size_t]
    served = {}
    for size in sorted(PROBE_BYTES, reverse=True):
        before = info().hblks
        if not libc.malloc(size):
            return None
        served[size] = info().hblks == before
    return served


def heap_serves() -> dict[int, bool] | None:
    """Whether glibc's malloc, as this process left it, serves each of PROBE_BYTES from its
    heap (kept, no fault on reuse) or by mmap (handed back on free, faulted in again): why
    the defaults fault or not. glibc raises its mmap threshold to the size of each mmapped
    block freed, so the answer depends on what the process freed before (review 2026-12-03g
    item 5: on the H200's host the defaults faulted 0 per call, the reverse of the lesson).
    Probed in a forked child (`conditions.run_in_child`), which inherits the allocator's state
    and leaves this process's untouched; None where it cannot be read."""
    try:
        return conditions.run_in_child(_heap_probe, timeout_s=60.0)  # type: ignore[return-value]
    except Exception:  # noqa: BLE001 - a probe that cannot run says nothing; the text says so
        return None


def faults_text(per_call: float | None) -> str:
    """Page faults per call for prose: whole numbers from 10 up, one decimal below (review
    2026-12-03g item 5: 0.833 printed as '1' beside the defaults' '0' read as the reverse)."""
    value = float(per_call or 0)
    return f"{value:,.0f}" if value >= 10 or value == 0 else f"{value:.1f}"


def _size(nbytes: int) -> str:
    return f"{nbytes // 2**20} MiB" if nbytes >= 2**20 else f"{nbytes // 2**10} KiB"


def _probed(found: Mapping) -> tuple[list[int], list[int]] | None:
    """(sizes malloc served from the heap, sizes it mmapped) from `heap_serves`'s record, or
    None where none was recorded (a record read back from JSON has its sizes as strings)."""
    served = found.get("heap_serves")
    if not served:
        return None
    return ([int(n) for n, on_heap in served.items() if on_heap],
            [int(n) for n, on_heap in served.items() if not on_heap])


# Review 2026-12-06z 00-02 item 3: a fault difference this small is "no more faults". The H200
# page's 1.35 against 1.06 faults per call (0.3 a call, 0.4 us priced, 0.003% of the 14.8 ms median)
# counted as "the defaults faulted more", so the reason they did not was never printed.
FAULTS_NO_MORE_PER_CALL = 10.0   # extra faults a call under this are none worth pricing ...
FAULTS_NO_MORE_SHARE = 0.01      # ... and so are any whose price is under 1% of the defaults' median
FAULTS_NO_MORE_RULE = "a difference under 10 faults a call, or priced under 1% of the median, counts as none"


def _fault_difference_negligible(found: Mapping, extra: float) -> bool:
    """Whether `extra` faults a call (either sign) are none worth pricing: under
    FAULTS_NO_MORE_PER_CALL, or priced (one fault's measured cost, over the threads) under
    FAULTS_NO_MORE_SHARE of the defaults' median."""
    if abs(extra) < FAULTS_NO_MORE_PER_CALL:
        return True
    cost, median = found.get("fault_cost_s"), float(found.get("default_median_s") or 0)
    priced = abs(extra) * float(cost or 0) / max(1, int(found.get("threads") or 1))
    return bool(cost) and median > 0 and priced < FAULTS_NO_MORE_SHARE * median


def faulted_no_more(found: Mapping) -> bool:
    """Whether the defaults faulted no more than malloc keeping its memory, by the stated rule
    (FAULTS_NO_MORE_RULE): fewer or as many, or more by a difference too small to price."""
    extra = float(found["default_faults_per_call"] or 0) - float(found["kept_faults_per_call"] or 0)
    return extra <= 0 or _fault_difference_negligible(found, extra)


def faults_alike(found: Mapping) -> bool:
    """Whether the two set-ups' fault counts differ by too little to price, either way (the
    rule of `faulted_no_more`): then the allocator explains no gap, whatever the times' noise."""
    extra = float(found["default_faults_per_call"] or 0) - float(found["kept_faults_per_call"] or 0)
    return _fault_difference_negligible(found, extra)


def _no_more_words(found: Mapping, rule: bool = True) -> str:
    """'did not fault here', 'faulted no more than kept memory' or, where they faulted a few
    more, under the rule, 'faulted hardly more than kept memory' (with the rule, if asked)."""
    default, kept = float(found["default_faults_per_call"] or 0), float(found["kept_faults_per_call"] or 0)
    if faults_text(default) == "0":
        return "did not fault here"
    if default <= kept:
        return "faulted no more than kept memory"
    return "faulted hardly more than kept memory" + (f" ({FAULTS_NO_MORE_RULE})" if rule else "")


def why_defaults(found: Mapping, said: bool = False) -> str:
    """Where the defaults faulted no more than malloc keeping its memory (`faulted_no_more`, by
    FAULTS_NO_MORE_RULE: review 2026-12-06z 00-02 item 3), that they did not and why: glibc's
    dynamic mmap threshold, as this process's probe (`heap_serves`) read it, or named as the
    likely reason where no probe was recorded. '' where the defaults faulted more (the lesson as
    the prose tells it). said: the verdict just before already says they faulted no more, so the
    text starts 'Why' (with the rule where they faulted a few more) instead of saying it again."""
    if not faulted_no_more(found):
        return ""
    default = float(found["default_faults_per_call"] or 0)
    kept = float(found["kept_faults_per_call"] or 0)
    rule = "glibc raises its mmap threshold to each freed mmapped block's size, up to 32 MiB"
    # 'did not fault' only where they faulted none (review 2026-12-05p 00-02 item 7: the H200 page
    # said it beside 2.15 faults per call, against 2.46 with malloc keeping its memory)
    head = (("Why" + (f" ({FAULTS_NO_MORE_RULE})" if default > kept else "")) if said
            else "The defaults " + _no_more_words(found))  # the counts: the table's column
    probed = _probed(found)
    if probed is None:
        return f"{head}{':' if said else ';'} the likely reason ({rule}) was not probed in this record."
    heap, mapped = probed
    where = ((f"malloc served up to {_size(max(heap))} from the heap" if heap else
              f"malloc served no probed size ({_size(min(PROBE_BYTES))} up) from the heap")
             + (f", {_size(min(mapped))} by mmap" if mapped else ""))
    if not heap:
        return (f"{head}{': not clear, as' if said else ', though'} {where} (probed here): "
                "this model's blocks may all sit under the threshold.")
    reused = "reused without faults" if faults_text(default) == "0" else "reused"
    return (f"{head}: {rule}; this process's earlier frees had raised it "
            f"(probed here: {where}), so its blocks stay on the heap, {reused}.")


def threshold_risen(found: Mapping) -> bool | None:
    """Whether the probe read glibc's mmap threshold above its 128 KiB default (some probed
    size served from the heap); None where no probe was recorded."""
    probed = _probed(found)
    return None if probed is None else bool(probed[0])


FAULTS_EXPLAIN_SHARE = 0.5  # the priced fault difference must cover this share of the gap to blame malloc


def _timing_field(timing: object, name: str) -> object:
    """A field of a Timing, or of its dict read back from a record."""
    return timing.get(name) if isinstance(timing, Mapping) else getattr(timing, name, None)


def _relative_iqr(values: list[float]) -> float | None:
    """IQR/median of a few per-round medians (None for fewer than two, or a zero median)."""
    if len(values) < 2:
        return None
    stats = summarise(tuple(float(v) for v in values))
    return stats.iqr_s / stats.median_s if stats.median_s > 0 else None


def noise_flags(found: Mapping) -> list[trust.Flag]:
    """Mistake 4's timings the harness flags noisy (IQR over 10% of the median), as the trust
    rule's flags, each sized as the rule sizes a timing of an interleaved comparison: the
    relative IQR of its per-round medians (`allocator_effect` records them), else, on older
    records, its own IQR/median; a record that says only 'noisy' gives a flag of unknown size
    (off by up to 2x)."""
    flags = []
    for side in ("default", "kept"):
        timing = found.get(side)
        if timing is None or not _timing_field(timing, "noisy"):
            continue
        label = str(_timing_field(timing, "label") or f"the {side} timing")
        median, iqr = _timing_field(timing, "median_s"), _timing_field(timing, "iqr_s")
        own = float(iqr) / float(median) if median and iqr is not None and float(median) > 0 else None
        rounds = _relative_iqr(list(found.get(f"{side}_round_medians") or ()))
        size = rounds if rounds is not None else own
        why = (f"noisy: IQR {100 * own:.0f}% of its median" if own is not None else "noisy")
        flags.append(trust.Flag(label, why, size))
    if not flags and found.get("noisy"):
        flags.append(trust.Flag("a timing of the two", "noisy (recorded without its size)"))
    return flags


def allocator_trust(found: Mapping) -> trust.Trust:
    """The trust rule on Mistake 4 (review 2026-12-04j item 1): a noisy timing holds the reading
    back only if it could carry the rounds' default/kept ratio, with its spread, across 1. The
    CPU page concluded nothing from 3,042 against 2.0 faults and five rounds at 1.39-1.43x
    because one timing's IQR was 15% of its median, the veto the A/B section teaches against."""
    ratio = float(found.get("ratio_rounds") or found["default_over_kept"])
    spread = ([float(found["ratio_q25"]), float(found["ratio_q75"])]
              if found.get("ratio_q25") is not None and found.get("ratio_q75") is not None else None)
    return trust.judge(noise_flags(found), [trust.Decision("default/kept", ratio, spread, 1.0)])


def _noise_note(found: Mapping) -> str:
    """What the noisy flags were, where they could not carry the reading ('' where none)."""
    flags = noise_flags(found)
    if not flags:
        return ""
    low, high = found.get("ratio_q25"), found.get("ratio_q75")
    rounds = (f"the rounds' IQR {float(low):.2f}-{float(high):.2f}x" if low is not None and high is not None
              else "the ratio")
    names = {"(default allocator)": "the defaults'", "(malloc keeps memory)": "the kept one's"}
    named = "; ".join(next((short for end, short in names.items() if f.timing.endswith(end)), f.timing)
                      + " " + f.why.removeprefix("noisy: ").replace(" of its median", "")
                      + (f" (rounds {100 * f.uncertainty:.0f}% apart)" if f.spread is not None else "")
                      for f in flags)
    return f"noisy: {named}: too little to carry {rounds} across 1"


def priced_faults_text(priced_s: float, gap_s: float) -> str:
    """What priced page faults say of a time gap, as the page says it: 'cost P, N% of the G gap'
    where they cover at most the gap; where priced above it, a bound, not a share: 'can account
    for the whole G gap (priced at most P)' (review 2026-12-04k item 8, 2026-12-04m item 3: the
    H200 page read 'cost 6.38 ms, 118% ... of the 5.42 ms gap'; a part priced above the whole says
    the per-fault price, measured apart on a loaded host, is an upper bound)."""
    priced, gap = abs(priced_s), abs(gap_s)
    if gap and priced > gap:
        return f"can account for the whole {format_seconds(gap)} gap (priced at most {format_seconds(priced)})"
    share = priced / gap if gap else 0.0
    covered = "under 1% of" if share < 0.01 else f"{100 * share:.0f}% of"
    return f"cost {format_seconds(priced)}, {covered} the {format_seconds(gap)} gap"


def fault_account(found: Mapping) -> dict | None:
    """What the page faults can explain of Mistake 4's gap: the fault difference per call
    (defaults minus kept), priced at the cost of one fault measured here (`fault_cost_s`,
    spread over the timing's threads as `timing.fault_share` does), the time gap (default
    median minus kept), and the share of the gap the priced faults cover (negative where they
    point the other way). None where the record holds no measured fault cost (older records)."""
    cost = found.get("fault_cost_s")
    if not cost:
        return None
    faults = float(found["default_faults_per_call"] or 0) - float(found["kept_faults_per_call"] or 0)
    priced = faults * float(cost) / max(1, int(found.get("threads") or 1))
    gap = float(found["default_median_s"]) - float(found["kept_median_s"])
    return {"faults": faults, "cost_s": float(cost), "priced_s": priced, "gap_s": gap,
            "share": priced / gap if gap else 0.0}


def _what_differs(found: Mapping) -> str:
    """Where the faults do not explain the gap, what else differs between the two set-ups."""
    if found.get("interleaved"):
        # review 2026-12-06b item 4: the H200 host's kept set-up ran 1.31x slower with no more
        # faults, and the page named no cause; none is measured (THP or dTLB would be the probe)
        return ("only malloc's settings differ (both timed in child processes, interleaved); "
                "how they slow it without faults is not measured")
    return "what else differs: the kept run alone was timed in a child process"


def allocator_reading(found: Mapping) -> tuple[str, str]:
    """Mistake 4's reading from `allocator_effect`'s numbers (review 2026-12-04i item 1), as
    (evidence, verdict): the fault difference priced at the cost of one fault measured here and
    the share of the time gap it covers ('' where nothing is priced), and the verdict.

    A timing flagged noisy holds the verdict back only where the trust rule says it could carry
    the rounds' ratio across 1 (`allocator_trust`); a flag too small to is named in the evidence.
    Otherwise 'the allocator changes the result' only where the rounds' ratios stay clear of 1 *and* the
    priced fault difference covers at least FAULTS_EXPLAIN_SHARE of the gap, in the same
    direction. The H200 host's page blamed malloc for 16.5 against 22.4 ms with 0 against 0.9
    faults per call: about 2 us of faults for a 5.9 ms gap. Where they do not cover it, the gap
    is named as not the allocator's, with what else differs (`_what_differs`)."""
    if not found["allocator_decides"]:
        return "", "within the noise (the rounds straddle 1): nothing for the allocator to explain"
    vetoed = bool(allocator_trust(found).veto)
    if faults_alike(found):
        # review 2026-12-06z 00-02 item 3: the H200 page's 1.35 against 1.06 faults per call read
        # 'no conclusion from these times; rerun'; fault counts too close to price decide it without
        # the times: the allocator explains no gap, whatever the times' noise
        evidence, share = _alike_evidence(found)
        cost = f"the allocator cost {share} of the time here" if share else "the allocator explains no gap here"
        gap = float(found["default_median_s"]) - float(found["kept_median_s"])
        # the session-z code review (item 11): 'within their noise' beside rounds of 1.01-1.03x
        # misread the veto; a noisy timing decides nothing, whatever its rounds read
        tail = ("" if gap == 0 else ", and the times, flagged noisy, decide nothing about the gap" if vetoed
                else f"; the gap is not the allocator's: {_what_differs(found)}")
        return evidence, f"the defaults {_no_more_words(found, rule=False)}: {cost}{tail}"
    if vetoed:
        held = ("a noisy timing (IQR over 10% of its median) could carry the rounds' ratio across 1: "
                "no conclusion from these times")
        account, median = fault_account(found), float(found.get("default_median_s") or 0)
        if account is None or account["faults"] <= 0 or median <= 0:
            return "", held
        # review 2026-12-06z 00-02 item 3 (no 'rerun' in a takeaway): the fault counts and one fault's
        # measured cost do not rest on the noisy times; what they cost is said against the defaults' median
        return "", (f"{held} on the gap, but the {faults_text(account['faults'])} extra faults a call, at "
                    f"{format_seconds(account['cost_s'])} each, cost {format_seconds(account['priced_s'])}: "
                    f"{100 * account['priced_s'] / median:.0f}% of the defaults' {format_seconds(median)} median")
    noise = _noise_note(found)
    account = fault_account(found)
    if account is None:
        return noise, f"no measured cost of a page fault in this record: no conclusion; {_what_differs(found)}"
    if account["share"] <= 0:
        return noise, f"the slower one faulted no more pages: not the allocator's; {_what_differs(found)}"
    share = account["share"]
    evidence = (f"{noise}; " if noise else "") + (f"{faults_text(abs(account['faults']))} {'more' if account['faults'] > 0 else 'fewer'} faults per "
                f"call with the defaults at {format_seconds(account['cost_s'])} each "
                + priced_faults_text(account["priced_s"], account["gap_s"]))
    if share >= FAULTS_EXPLAIN_SHARE:
        return evidence, "here the allocator changes the result"
    return evidence, f"under half: not the allocator's; {_what_differs(found)}"


def _alike_evidence(found: Mapping) -> tuple[str, str]:
    """The fault difference too small to price, priced against the defaults' median (what the
    rule reads), and that share in words: ('0.3 more faults per call with the defaults at 1.41 us
    each cost 414 ns, under 1% of the 14.8 ms median', 'under 1%'); ('', '') where no fault cost
    was measured (then the count alone decides)."""
    account = fault_account(found)
    median = float(found.get("default_median_s") or 0)
    if account is None or median <= 0:
        return "", ""
    share = abs(account["priced_s"]) / median
    of = "under 1%" if share < 0.01 else f"{100 * share:.0f}%"
    return (f"{faults_text(abs(account['faults']))} {'more' if account['faults'] > 0 else 'fewer'} faults per call "
            f"with the defaults at {format_seconds(account['cost_s'])} each cost "
            f"{format_seconds(abs(account['priced_s']))}, {of} of the {format_seconds(median)} median"), of


def allocator_conclusion(found: Mapping) -> str:
    """Mistake 4's conclusion under its table: the evidence and the verdict of
    `allocator_reading` (the takeaway carries the verdict word for word)."""
    evidence, verdict = allocator_reading(found)
    if not evidence:
        return verdict
    return f"{evidence}, {verdict}" if verdict.startswith("under half") else f"{evidence}: {verdict}"


def allocator_text(found: Mapping) -> str:
    """Mistake 4's ratio and its conclusion (`allocator_conclusion`), under its table. The fault
    counts are the table's own column, not repeated here (review 2026-12-05o 00-02 item 5: the
    page's words; the takeaway states them, `faults_text`)."""
    why = why_defaults(found, said=allocator_reading(found)[1].startswith("the defaults "))
    return f"{found['note']}: {rounds_ratio_text(found)}: {allocator_conclusion(found)}." + (f" {why}" if why else "")


def rounds_ratio_text(found: Mapping) -> str:
    """Mistake 4's ratio as one statistic with its own spread (review 2026-12-06z 00-02 item 3: the
    H200 page printed the ratio of the pooled medians, 1.04x, beside rounds' IQR 1.01-1.03, a ratio
    outside its own spread; the rounds ran at 19.7 and 14.4 ms, so the pooled medians fell between).
    Where each round's medians are recorded: the median of the per-round ratios (default/kept,
    `ratio_spread`, as 00's A/B table reads them) with the rounds' lowest and highest; else the
    recorded median of the rounds with its IQR; on records before the rounds, the medians' ratio."""
    defaults, kept = found.get("default_round_medians"), found.get("kept_round_medians")
    if defaults and kept and len(defaults) == len(kept):
        per_round = ratio_spread(defaults, kept)[2]
        return (f"the defaults took {statistics.median(per_round):.2f}x the time with malloc keeping its memory, "
                f"the median of {len(per_round)} rounds' ratios (lowest {min(per_round):.2f}, highest {max(per_round):.2f})")
    # the rounds' ratios' IQR, named as such (review 2026-12-05p 00-02 item 7: 'rounds 0.91-0.98' read
    # as their range, which was 0.74-1.00)
    rounds = (f" (rounds' IQR {found['ratio_q25']:.2f}-{found['ratio_q75']:.2f})" if found.get("interleaved") else "")
    if found.get("ratio_rounds") is not None:
        return (f"the defaults took {float(found['ratio_rounds']):.2f}x the time with malloc keeping its memory, "
                f"the median of the rounds' ratios{rounds}")
    return f"the defaults' median is {found['default_over_kept']:.2f}x that with malloc keeping its memory{rounds}"


def allocator_takeaway(found: Mapping, fmt: Callable[[float], str]) -> str:
    """Mistake 4's line in 'What to remember': both fault counts (`faults_text`), both medians,
    what the faults cost of the gap in short, the verdict word for word (`allocator_reading`),
    and where the defaults did not fault, that they did not and why in short."""
    default, kept = found["default"], found["kept"]
    evidence, verdict = allocator_reading(found)
    account = fault_account(found) if evidence else None
    # priced only where the reading priced it against the gap (not where the counts were too close
    # to price: review 2026-12-06z 00-02 item 3, 'the faults cost 0.0 ms of the 0.6 ms gap')
    account = account if account and account["share"] > 0 and not faults_alike(found) else None
    # priced above the gap: a bound, no share (review 2026-12-04m item 3: 'the faults cost 6.38 ms of
    # the 5.42 ms gap')
    over = account is not None and abs(account["priced_s"]) > abs(account["gap_s"])
    priced = ("" if not account else
              f"; the extra faults can account for the whole {fmt(abs(account['gap_s']))} gap" if over else
              f"; the faults cost {fmt(abs(account['priced_s']))} of the {fmt(abs(account['gap_s']))} gap")
    text = (f"Know what a CPU timing includes: the CNN forward took {faults_text(default.minor_faults_per_call)} "
            f"page faults per call with malloc's defaults and {faults_text(kept.minor_faults_per_call)} with "
            f"malloc keeping its memory (median {fmt(default.median_s)} against {fmt(kept.median_s)}{priced}): "
            f"{verdict}")
    if why_defaults(found):  # why, at length, is under Mistake 4's table
        did = "the defaults " + _no_more_words(found, rule=False).removesuffix(" here").removesuffix(" than kept memory")
        # the verdict already says so where the counts were too close to price (review 2026-12-06z item 3)
        said = verdict.startswith("the defaults ")
        if threshold_risen(found):
            text += ("; " if said else f"; {did}: ") + "glibc's raised mmap threshold already kept the memory"
        else:
            text += " (why: under Mistake 4's table)" if said else f"; {did} (why: under Mistake 4's table)"
    return text + "."


PRACTICAL_SAME = 0.02  # a stated ratio within 2% of 1 (as printed) is the same time in practice


def ab_reading(comparison: Comparison, variant: str) -> str:
    """Whether `variant` differs from the baseline, read by the trust rule (review 2026-12-03d
    item 6: '(a * 2) @ b 1.09x (1.07-1.20)' sat unlabelled among timings flagged noisy, IQR
    12-42%): within the noise when its rounds straddle 1, or when a flagged timing of the two
    it is built from could carry its whole spread across 1; else outside the noise, and within
    +/-PRACTICAL_SAME the same time in practice. That last test reads the ratio the table and
    the takeaway print (the median of the rounds, to two decimals), not its spread's ends:
    the CPU page printed torch.mm at '1.02x (rounds 1.01-1.03), outside the noise' with no
    'the same time in practice' while the H200 page said it (review 2026-12-03h item 11)."""
    row, base = comparison[variant], comparison[comparison.baseline]
    if row.ratio_q25 <= 1.0 <= row.ratio_q75:
        return "within the noise (its rounds straddle 1)"
    own = {variant, comparison.baseline, row.timing.label, base.timing.label}
    flags = [f for f in comparison.flags() if f["timing"] in own]
    decision = trust.Decision(variant, row.ratio, [row.ratio_q25, row.ratio_q75], 1.0)
    if trust.judge(flags, [decision]).veto:
        return "within the noise (a flagged timing could carry it across 1)"
    if abs(round(row.ratio, 2) - 1) <= PRACTICAL_SAME + 1e-9:  # as printed: '1.02x' is within 2%
        return f"outside the noise but within {100 * PRACTICAL_SAME:.0f}%: the same time in practice"
    return "outside the noise"


def ab_table(comparison: Comparison) -> Table:
    """The A/B comparison as chapter 00 teaches it: each variant's median (on a GPU its device
    time), the ratio of the two medians beside the median of its per-round ratios (the
    comparison's own ratio) and their spread, and what that reading says (`ab_reading`); the
    harness's flags folded under it. No host-launch column (review 2026-12-04m item 2: a 3-call
    probe's 102 us for a 21 ms call, read elsewhere on the page as 74.8 us, decides nothing)."""
    base = comparison[comparison.baseline].timing.median_s
    median = "device time" if comparison.host_column else "median"  # on a GPU: device time
    table = Table(f"ratio to {comparison.baseline}, {comparison.rounds} interleaved rounds",
                  ["variant", median, "ratio of medians", "ratio (rounds)", "rounds' spread", "reading"],
                  units={median: "s", "ratio of medians": "x", "ratio (rounds)": "x"})
    for label, v in comparison.variants.items():
        baseline = label == comparison.baseline
        table.add(label, v.timing.median_s, v.timing.median_s / base, v.ratio,
                  f"{v.ratio_q25:.2f}-{v.ratio_q75:.2f}", "the baseline" if baseline else ab_reading(comparison, label))
    flags = [f"flagged: {flag['timing']}: {flag['why']}" for flag in comparison.flags()]
    if flags:
        table.fold(f"the harness's notes ({len(flags)} flagged)", "\n".join(flags))
    return table.note("ratio (rounds): the median of the per-round ratios (each round's time over "
                      f"{comparison.baseline}'s in the same round), the number a verdict reads; "
                      "reading: within the noise when the rounds straddle 1 or a flagged timing "
                      "could carry them across it (the trust rule)")


@contextlib.contextmanager
def timing_warnings() -> Iterator[list[str]]:
    """Collect the harness's TimingWarnings (too fast to time, noisy) instead of printing them:
    the cell says in a sentence what they mean. Yields the list the messages go into."""
    found: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bench.TimingWarning)
        yield found
    found += [str(w.message) for w in caught if issubclass(w.category, bench.TimingWarning)]


HOT_COLD_CHOICES = ("about the same (within 20%)", "1.2x to 3x", "more than 3x")


def _hot_cold_pick(ratio: float) -> str:
    return HOT_COLD_CHOICES[0 if ratio < 1.2 else 1 if ratio <= 3 else 2]


def hot_cold_flags(hot: object, cold: object) -> list[dict]:
    """The pair's flags for the quiz: the harness's own (`Timing.flag`), one per timing. A
    launch-bound timing is not a flag here (review 2026-12-04k item 3: counting the launch as
    one keyed 'about the same' too, against the table's 1.79x by device time; the quiz asks what
    hot *reports*, and the harness reports device time). What a loop of such copies would pay
    is a line of its own under the table (`hot_cold_notes`). Nor is the hot copy's excess over
    the memory ceiling (review 2026-12-04l item 1: the CPU page's hot copy at 213% of it made the
    key accept '1.2x to 3x' beside the measured 3.67x): a copy that stays in cache outruns
    memory, which is what the quiz teaches, not how far its timing could be off."""
    return [f for f in (_flag_apart_from_ceiling(hot), cold.flag()) if f is not None]  # type: ignore[attr-defined]


def _flag_apart_from_ceiling(timing: object) -> dict | None:
    """`Timing.flag` without its above-ceiling part: the noise and call-overhead parts alone."""
    found = timing.flag()  # type: ignore[attr-defined]
    if found is None or not getattr(timing, "above_ceiling", False):
        return found
    reasons, spread = [], 0.0
    if timing.noisy:  # type: ignore[attr-defined]
        share = timing.iqr_s / timing.median_s  # type: ignore[attr-defined]
        reasons.append(f"noisy: IQR {100 * share:.0f}% of the median")
        spread = max(spread, share)
    overhead = getattr(timing, "overhead_share", None)
    if getattr(timing, "overhead_bound", False) and overhead is not None:
        reasons.append(f"call overhead: {100 * overhead:.0f}% of the median")
        spread = max(spread, overhead / max(1.0 - overhead, 1e-3))
    return {**found, "why": ", ".join(reasons), "spread": spread} if reasons else None


def hot_cold_class(hot: object, cold: object) -> Key | str:
    """The hot/cold quiz's answer, graded on the careful measurement (the notebook's timings) by
    the clock the table reports (device time on a GPU, CPU time on a CPU); where a flagged timing
    of the two could carry the ratio across a choice's edge (the trust rule, `quiz_keys`), both
    choices count. The host's launch does not move the key (`hot_cold_flags`)."""
    if hot is None or cold is None:
        raise quiz_keys.NotYetMeasured("run the hot/cold cell below first, then submit again")
    ratio = hot.gbps / cold.gbps  # type: ignore[attr-defined]
    return quiz_keys.choice_key(ratio, None, hot_cold_flags(hot, cold), choices=HOT_COLD_CHOICES,
                                edges=(1.2, 3.0), pick=_hot_cold_pick, what="hot/cold")


def one_thread_copy_gbps(ceilings: object) -> float | None:
    """The copy ceiling this CPU reached on one thread (the ceilings' `by_thread_count`: the
    best over the copy sweep's sizes), or None where not recorded (a GPU; older records) or
    where the copy ceiling was kept from an earlier run: this run's readings, the 1-thread one
    among them, were then lower, a loaded machine's (a refresh at 9.1 GB/s beside a kept 26.8)."""
    details = getattr(ceilings, "details", None) or {}
    if "copy_gbps" in (details.get("kept_higher") or {}):
        return None
    per = details.get("by_thread_count") or {}
    found = [float(v["1"]) for k, v in per.items() if k.startswith("copy_gbps.") and v.get("1")]
    return max(found) if found else None


def hot_cold_share(timing: object, ceilings: object = None) -> tuple[float | None, str]:
    """(the timing's share of the copy ceiling in %, which ceiling): on the CPU a 1-thread copy
    against the ceiling one thread reached (review 2026-12-04j item 9: the 1 MiB cold copy read
    53% of the 2-thread 26.8 GB/s, 86% of the 1-thread 16.5), else the harness's share."""
    one = one_thread_copy_gbps(ceilings) if getattr(timing, "threads", None) == 1 else None
    if one and getattr(timing, "gbps", None):
        return 100 * float(timing.gbps) / one, "the 1-thread copy ceiling"  # type: ignore[attr-defined]
    threads = getattr(ceilings, "threads", None)
    which = (f"the {threads}-thread copy ceiling" if getattr(timing, "threads", None) == 1 and threads and threads > 1
             else "the copy ceiling")  # a 1-thread copy against a ceiling of more threads says so
    return getattr(timing, "pct_of_copy_ceiling", None), which


def hot_cold_rows(hot: object, cold: object, ceilings: object = None) -> list[dict]:
    """Mistake 3's table: each timing's median (on a GPU its device time), bandwidth and share of
    the ceiling (`hot_cold_share`). The host's 3-call launch probe is not a column (review
    2026-12-04m item 2: the same copy_ probed at 16.6 us and 10.7 us, an upper bound each); a
    loop of hot copies timed by wall clock says what bound them (`hot_loop_reading`)."""
    rows = []
    gpu = any(getattr(t, "host_s", None) is not None for t in (hot, cold))
    for t in (hot, cold):
        share, which = hot_cold_share(t, ceilings)
        rows.append({"timing": t.label, ("device time" if gpu else "median"): t.median_s,  # type: ignore[attr-defined]
                     "GB/s": t.gbps, f"of {which}": share})  # type: ignore[attr-defined]
    return rows


HOT_COLD_UNITS = {"median": "s", "device time": "s", "GB/s": "read + write"}


LOOP_CALLS = 1000  # calls a round of `loop_per_call`: milliseconds at a few microseconds a call
LOOP_CLOCK = f"wall (perf_counter around {LOOP_CALLS} calls and one synchronize)"


def loop_per_call(fn: Callable[[], object], device: str, label: str, calls: int = LOOP_CALLS, rounds: int = 7,
                  bytes_moved: int | None = None) -> Timing:
    """A loop's pace per call, as a Python loop runs it: perf_counter around `calls` back-to-back
    calls and one synchronize at the end, over `calls`, per round (one round first to warm up).
    No CUDA events bracket each call, so their own few microseconds (kernel_records.py) are not
    counted against a device time read from kernel records (review 2026-12-04n item 4: events
    around each call made a loop at the device's pace read 'launch-bound')."""
    sync = torch.cuda.synchronize if str(device).startswith("cuda") else (lambda: None)
    per_call = []
    for _ in range(rounds + 1):
        per_call.append(clocks.loop_round(fn, calls, sync))
    times = tuple(per_call[1:])
    q = statistics.quantiles(times, n=4) if len(times) > 1 else [times[0]] * 3
    median = statistics.median(times)
    return Timing(label=label, device=str(device), mode="hot", times_s=times, median_s=median, iqr_s=q[2] - q[0],
                  min_s=min(times), count=calls * rounds, bytes_moved=bytes_moved,
                  gbps=(bytes_moved / median / 1e9) if bytes_moved else None, clock=LOOP_CLOCK)


def hot_loop_range(hot: object, loop: object) -> tuple[float, float]:
    """A loop of the hot copy (`loop`, wall clock) over its device time (`hot`'s median): its
    rounds' fastest and slowest per-call times, each over the device time."""
    device = float(hot.median_s)  # type: ignore[attr-defined]
    times = [float(t) for t in (getattr(loop, "times_s", None) or (loop.median_s,))]  # type: ignore[attr-defined]
    return min(times) / device, max(times) / device


def hot_loop_reading(hot: object, loop: object) -> str:
    """What a loop of the hot copy, timed back to back by wall clock (`loop`), says against its
    device time: chapter 02's rule (`labkit.measure.pace.pace_label`) on the loop rounds' range,
    'launch-bound' only where every round is over 1.5x the device time, 'at the GPU's pace' only
    where every round is within 5% of it, else 'near launch-bound' (review 2026-12-05o 00-02 item
    1: a rule of its own, any excess over the two IQRs, called a 1.05x loop 'launch-bound', and
    the device time from kernel records leaves out the gap between back-to-back kernels, so it
    could hardly read anything else on an H200; review 2026-12-04m item 2 before it)."""
    return pace.pace_label(*hot_loop_range(hot, loop))


def hot_loop_line(hot: object, loop: object) -> str:
    """The line under Mistake 3's table on a GPU: the loop's per-call time against the device
    time, the ratio with the rounds' range, and `hot_loop_reading`; where the loop is not at the
    GPU's pace, that the quiz grades device time."""
    reading = hot_loop_reading(hot, loop)
    low, high = hot_loop_range(hot, loop)
    line = (f"a loop of the hot copy by wall clock, one sync: {format_seconds(loop.median_s)} per call against "  # type: ignore[attr-defined]
            f"{format_seconds(hot.median_s)} on the device, {loop.median_s / hot.median_s:.2f}x "  # type: ignore[attr-defined]
            f"(rounds {low:.2f}-{high:.2f}x): {reading}")
    return line + ("." if reading == pace.AT_GPU_PACE else ". The quiz grades device time.")


def hot_cold_notes(hot: object, cold: object, size_text: str, too_fast: bool,
                   ceilings: object = None, loop: object = None) -> list[str]:
    """The lines under Mistake 3's table: the ratio, on a GPU what bound the hot copy by a loop of
    it timed by wall clock (`hot_loop_line`; no bound where none was timed), a too-fast flag, and
    a hot share over 100% named as the cache."""
    lines = [f"hot reports {hot.gbps / cold.gbps:.2f}x the bandwidth of cold for the same {size_text} copy"  # type: ignore[attr-defined]
             + (" (device time)" if getattr(hot, "host_s", None) is not None else "")]
    if loop is not None:
        lines.append(hot_loop_line(hot, loop))
    if too_fast:
        lines.append("The harness flagged a timing as too fast to time: at this size a copy lasts only a "
                     "few times the timer's resolution, so this pair shows little about caches; read the "
                     "cache curve above instead.")
    share, which = hot_cold_share(hot, ceilings)
    if share is not None and share > 100:
        lines.append(f"hot claims {share:.0f}% of {which.replace('copy ceiling', 'memory-copy ceiling')}: "
                     "more than memory can deliver, so what it measured is the cache")
    kept = kept_ceiling_line(hot, ceilings)
    return lines + ([kept] if kept else [])


def kept_ceiling_line(timing: object, ceilings: object) -> str:
    """Why a 1-thread copy is set against a ceiling of more threads (review 2026-12-05t 00-02 item
    1: the page said 'the copy ceiling one core reached' above a table of the 2-thread one): the
    copy ceiling was kept from an earlier run, so this run's lower 1-thread reading is not used.
    '' where the 1-thread ceiling was used, or the timing is not a 1-thread one."""
    details = getattr(ceilings, "details", None) or {}
    if getattr(timing, "threads", None) != 1 or "copy_gbps" not in (details.get("kept_higher") or {}):
        return ""
    _, which = hot_cold_share(timing, ceilings)
    return (f"Shares are of {which}, not one thread's: the copy ceiling was kept from an earlier run "
            "(this run read lower)")


def hot_cold_table(hot: object, cold: object, size_text: str, too_fast: bool,
                   ceilings: object = None, loop: object = None) -> Table:
    """Mistake 3's table (`hot_cold_rows`) with its notes (`hot_cold_notes`) under it."""
    rows = hot_cold_rows(hot, cold, ceilings)
    table = Table("", list(rows[0]), [list(r.values()) for r in rows],
                  units={k: HOT_COLD_UNITS.get(k, "%") for k in rows[0] if k != "timing"})
    for line in hot_cold_notes(hot, cold, size_text, too_fast, ceilings, loop):
        table.note(line)
    return table


def hot_cold_takeaway(hot: object, cold: object, size_text: str, too_fast: bool, loop: object = None) -> str:
    """Mistake 3's line in 'What to remember', with the clock and, where a loop of the hot copy
    was timed, what it read (`hot_loop_reading`)."""
    if too_fast:
        return (f"Know where the data sits, and time enough work: the {size_text} hot/cold pair was too fast "
                "to time reliably here (a few times the timer's resolution), so the cache curve, not that "
                "pair, shows the caches.")
    # the table's own format (review 2026-12-04k item 10: '53.37 GB/s' against the table's 53.4)
    line = (f"Know where the data sits: the same {size_text} copy reported {format_value(hot.gbps)} GB/s hot "  # type: ignore[attr-defined]
            f"and {format_value(cold.gbps)} GB/s cold ({hot.gbps / cold.gbps:.1f}x")  # type: ignore[attr-defined]
    if loop is not None:
        # review 2026-12-06y item 7: 'a loop of it 3.02x' read as a hot/cold ratio; it is the loop
        # over the hot copy's own device time
        return line + (f" by device time; a Python loop of the hot copy ran {format_seconds(loop.median_s)} a call, "  # type: ignore[attr-defined]
                       f"{loop.median_s / hot.median_s:.2f}x its device time: {hot_loop_reading(hot, loop)})."  # type: ignore[attr-defined]
                       )
    return line + (" by device time)." if getattr(hot, "host_s", None) is not None else ").")


BUSY_CHOICES = ("under a third", "a third to two thirds", "over two thirds")


# Within this many points of a third or two thirds, both neighbouring choices count: three
# profiled steps give one share and no run-to-run spread (review 2026-12-04k item 10).
BUSY_MARGIN = 0.08


def busy_share(summary: object) -> tuple[float, str]:
    """(the share of its span the processor doing the work was busy, which processor): on a GPU
    trace the GPU (`gpu_busy_share`), on a CPU trace the busiest thread."""
    gpu = getattr(summary, "gpu_busy_share", None)
    if gpu is not None:
        return float(gpu), "the GPU"
    tracks = [t.busy_share for t in getattr(summary, "tracks", ()) if t.busy_share is not None]
    if not tracks:
        raise ValueError("the profile holds no busy share: run the training-step cell below again")
    return float(max(tracks)), "the busiest CPU thread"


def busy_class(summary: object) -> Key | str:
    """Part 4's quiz answer, graded on the timeline the chapter shows: the share of its span the
    processor doing the work was busy (`busy_share`). The quiz asked GEMM/conv's share of the busy
    time until review 2026-12-04m item 7: the pages read 60.0% and 64.9%, both within the margin of
    two thirds, so two of three answers passed, while the page's lesson was the other number (the
    H200's GPU idle 96% of its span). Within BUSY_MARGIN of an edge both neighbouring choices
    count (a Key saying why)."""
    if summary is None:
        raise quiz_keys.NotYetMeasured("run the training-step cell below first, then submit again")
    share, who = busy_share(summary)
    edges = (1 / 3, 2 / 3)
    index = 0 if share < edges[0] else 1 if share <= edges[1] else 2
    near = [i for i, edge in enumerate(edges) if abs(share - edge) <= BUSY_MARGIN]
    if not near:
        return BUSY_CHOICES[index]
    edge = near[0]
    return Key(BUSY_CHOICES[index], BUSY_CHOICES[edge:edge + 2],
               why=(f"{who} was busy {100 * share:.1f}% of its span, within {100 * BUSY_MARGIN:.0f} points of "
                    f"{'a third' if edge == 0 else 'two thirds'}: one profile of three steps, whose "
                    "spread between runs is not measured, cannot place it on one side"))


def inference(model: torch.nn.Module, images: torch.Tensor) -> Callable[[], torch.Tensor]:
    """A model's forward pass on `images` without autograd, as one call to time."""
    def forward() -> torch.Tensor:
        with torch.inference_mode():
            return model(images)

    return forward


def _segments() -> dict[int, dict] | None:
    """The caching allocator's cudaMalloc segments now, by address: size and pool ('small' holds
    blocks under 1 MiB); None where the snapshot cannot be read (it only names, never decides)."""
    try:
        return {int(s["address"]): {"bytes": int(s["total_size"]), "pool": str(s.get("segment_type", "?"))}
                for s in torch.cuda.memory_snapshot()}
    except Exception:  # noqa: BLE001 - an unreadable snapshot leaves the segments unnamed, nothing more
        return None


def gpu_allocator_segments(model: torch.nn.Module, images: torch.Tensor) -> dict:
    """GPU: the cudaMalloc segments made while `model` on `images` is timed. PyTorch's caching
    allocator keeps freed GPU memory for the next allocation, so after the first call (which
    allocates what later calls reuse) timing adds none, or next to none."""
    forward = inference(copy.deepcopy(model).to("cuda"), images.to("cuda"))
    forward()
    torch.cuda.synchronize()
    before = torch.cuda.memory_stats()["segment.all.allocated"]
    held = _segments()
    timed = bench.time(forward, label="small CNN forward, GPU")
    # each new segment's size and pool (review 2026-12-05p 00-02 item 7: the H200 made 1, unnamed)
    after = _segments()
    new = None if held is None or after is None else [s for address, s in after.items() if address not in held]
    return {"cudamalloc_segments_during_timing": torch.cuda.memory_stats()["segment.all.allocated"] - before,
            "calls_timed": timed.count, "median_s": timed.median_s, "new_segments": new}


def plot_recorded_curve(recorded: object):  # noqa: ANN201 -- a matplotlib figure, or None
    """The reference GPU's recorded cache curve, titled as recorded; None where none is asked
    for (a GPU shows its own), or, having said so, when nothing is recorded."""
    if recorded is None:
        return None
    if not recorded:
        print("No reference GPU run recorded yet: the GPU's cache curve is not shown.")
        return None
    print(cache_curve_text(recorded, cache_point_probe(getattr(recorded, "machine", ""))))
    return plot_cache_curve(recorded["points"], recorded["levels"],
                            f"copy bandwidth against working set (reference GPU, {recorded.label})",
                            recorded.get("copy_ceiling_gbps"))
