"""Host-to-device copies: pageable against pinned memory, what `non_blocking` and
`pin_memory_device` really do, what pinning costs, and the device-to-host trap.

Why pinned memory is faster: the GPU's copy engine can only read host memory that the
operating system promises not to move (page-locked). A copy from ordinary (pageable) memory
is staged by the driver through a pinned bounce buffer, chunk by chunk, with the CPU doing
a memcpy for each chunk; from pinned memory the copy engine reads directly (DMA). So:

- `bandwidth_curve` times copies of growing size from both kinds of memory (labkit.measure.bench,
  CUDA events): small copies are dominated by a fixed cost, large ones by bandwidth.
- `call_return_times`: `x.to('cuda', non_blocking=True)` on an idle stream: returns at once
  only when x is pinned; from pageable memory the call returns after the copy is done.
- `busy_stream_returns`: the same call queued behind a ~50 ms kernel, across sizes: does the
  CPU keep its run-ahead, or does the pageable call wait the kernel out (C25's evidence).
- `pinning_cost`: pinning is a copy too (into the pinned pool), plus page-locking the pool
  the first time a size is seen; the caching host allocator rounds blocks up (to a power of
  two in the torch versions read for this course), which costs host memory.
- `pin_thread_cpu_s`: the DataLoader pins in a thread of the main process, on its CPU time.
- `d2h_trap`: copying *to* the host with non_blocking=True returns before the values are
  there; reading the destination before synchronising reads stale values. Shown on a buffer
  filled with a sentinel, so nothing but a comparison is at stake.
- `pin_memory_device_probe`: what DataLoader(pin_memory_device='cuda:0') gives back in this
  torch (recent torch ignores it with a deprecation warning), and whether an explicit
  host-to-device memcpy still runs when its batch is moved to the GPU (the profiler says).

Every function here needs a CUDA GPU and says so when there is none.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from dataclasses import asdict, dataclass

import numpy as np
import torch

from labkit.measure import bench

DEFAULT_SIZES = tuple(4**k * 1024 for k in range(0, 10))  # 1 KiB to 256 MiB
SEED_BATCH_SHAPE = (256, 3, 224, 224)  # the seed's DataLoader: batch_size=256 ImageNet images
# Kineto names a host-to-device copy "Memcpy HtoD (Pinned -> Device)" or "(Pageable -> Device)".
H2D_MARKERS = ("HtoD", "Host to Device", "H2D")


class NoGPU(RuntimeError):
    """The measurement needs a CUDA GPU; the message says what the chapter shows instead."""


def require_gpu(what: str) -> torch.device:
    """The GPU to measure on, or a clear error naming what needs it."""
    if not torch.cuda.is_available():
        raise NoGPU(f"{what} needs a CUDA GPU and none is usable here; the chapter shows the "
                    "recorded reference run instead (labkit.core.results.recorded(...)).")
    return torch.device("cuda", torch.cuda.current_device())


# host_tensor draws this many random bytes and repeats them over the tensor.
FILL_TILE_BYTES = 2**20


def host_tensor(nbytes: int, pinned: bool) -> torch.Tensor:
    """nbytes of host bytes, pageable or pinned, every page written with random bytes.

    Why written and not zeros: an untouched or zero-filled page can be special-cased (mapped
    to the shared zero page), and the copy would then time page faults. Why a repeated tile:
    torch's random_ fills about 250 MB/s on one core (1.1 s for 256 MiB on the course's CPU;
    about half of C25's seconds on the H200, cost_model.fit_copies), while copying one tile of
    FILL_TILE_BYTES random bytes over the tensor writes every page at memory speed (0.17 s
    for 256 MiB there). A copy's time does not depend on the values it moves."""
    if nbytes < 1:
        raise ValueError(f"nbytes must be >= 1, got {nbytes}")
    t = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
    tile = torch.randint(0, 256, (min(nbytes, FILL_TILE_BYTES),), dtype=torch.uint8)
    whole, rest = divmod(nbytes, tile.numel())
    t[:whole * tile.numel()].view(whole, tile.numel()).copy_(tile.expand(whole, tile.numel()))
    t[whole * tile.numel():].copy_(tile[:rest])
    return t


@dataclass(frozen=True)
class CopyPoint:
    """One copy size from one kind of host memory."""

    nbytes: int
    memory: str  # 'pageable' or 'pinned'
    median_s: float
    iqr_s: float
    gbps: float
    noisy: bool
    too_fast: bool = False  # under 20x the event timer's resolution: the fixed cost dominates


def bandwidth_curve(sizes: tuple[int, ...] = DEFAULT_SIZES,
                    memories: tuple[str, ...] = ("pageable", "pinned"),
                    rep_ms: float = 60.0) -> list[CopyPoint]:
    """Host-to-device GB/s against transfer size, timed with labkit.measure.bench (CUDA events)."""
    device = require_gpu("the host-to-device bandwidth curve")
    unknown = set(memories) - {"pageable", "pinned"}
    if unknown:
        raise ValueError(f"memories are 'pageable' and 'pinned', got {sorted(unknown)}")
    points = []
    for nbytes in sizes:
        target = torch.empty(nbytes, dtype=torch.uint8, device=device)
        for memory in memories:
            source = host_tensor(nbytes, pinned=memory == "pinned")
            with warnings.catch_warnings():  # the smallest copies are near the timer's floor:
                warnings.simplefilter("ignore", bench.TimingWarning)  # kept as too_fast instead
                timing = bench.time(lambda s=source, d=target: d.copy_(s), bytes_moved=nbytes,
                                    rep_ms=rep_ms, label=f"{memory} {nbytes} B")
            points.append(CopyPoint(nbytes, memory, timing.median_s, timing.iqr_s,
                                    float(timing.gbps or 0.0), bool(timing.noisy),
                                    any("too fast" in w for w in timing.warnings)))
            del source
        del target
    return points


# C23 at the seed's size (154 MB): 5 rounds and 300 ms of copies per source. reproduce's
# three H200 runs judged C23 with these (pin_memory_device/pinned 1.00x, quartiles within
# 1.001-1.005, against the 1.2x the claim needs; pinned/pageable 8.6-8.8x against 2x); the
# chapter's earlier 7 rounds and 700 ms cost 1.2 s more for the same call.
SEED_SIZE_ROUNDS, SEED_SIZE_REP_MS = 5, 300.0


def compare_sources(sources: dict[str, torch.Tensor], rounds: int = SEED_SIZE_ROUNDS,
                    rep_ms: float = SEED_SIZE_REP_MS) -> bench.Comparison:
    """Interleaved bench.compare of copying each host tensor to the GPU (first is the baseline)."""
    device = require_gpu("comparing host-to-device copies")
    nbytes = {t.numel() * t.element_size() for t in sources.values()}
    if len(nbytes) != 1:
        raise ValueError(f"compare copies of the same size; got sizes {sorted(nbytes)}")
    sample = next(iter(sources.values()))
    target = torch.empty(sample.shape, dtype=sample.dtype, device=device)
    variants = {label: (lambda s=src: target.copy_(s)) for label, src in sources.items()}
    return bench.compare(variants, rounds=rounds, rep_ms=rep_ms, bytes_moved=nbytes.pop())


def speedup_between(comparison: bench.Comparison, slower: str, faster: str) -> list[float]:
    """How many times faster `faster` copies than `slower`: [q25, q75] over the rounds.

    Each round timed every variant once, so the ratio taken inside a round cancels drift
    that hits both alike (see bench.compare); the quartiles are the ratio's spread.
    """
    a = np.asarray(comparison[slower].round_ratios, float)
    b = np.asarray(comparison[faster].round_ratios, float)
    per_round = a / b  # both are over the same baseline round, which cancels
    q25, q75 = np.percentile(per_round, [25, 75])
    return [float(q25), float(q75)]


# ---------------------------------------------------------------------------------------
# non_blocking from pageable memory still blocks


@dataclass(frozen=True)
class CallReturn:
    """How long `.to(device, non_blocking=...)` took to return, against the copy itself."""

    memory: str
    non_blocking: bool
    call_return_s: float  # median CPU time until the call returned
    copy_done_s: float  # median time until the copy had finished (after a synchronize)

    @property
    def blocked_share(self) -> float:
        """Share of the copy the CPU spent waiting inside the call (1: it blocked throughout)."""
        return self.call_return_s / self.copy_done_s if self.copy_done_s > 0 else 1.0


def call_return_times(nbytes: int = 256 * 2**20, repeats: int = 7) -> list[CallReturn]:
    """Time the return of `.to('cuda', non_blocking=...)` for pageable and pinned sources.

    Not through bench.time: the question is when the *CPU* gets its thread back, so each call
    is clocked with perf_counter from before the call to its return, and again to the end of
    a synchronize (when the copy is done). Median over `repeats`, after one warm-up.
    """
    device = require_gpu("timing when a non_blocking copy returns")
    out = []
    for memory in ("pageable", "pinned"):
        source = host_tensor(nbytes, pinned=memory == "pinned")
        for non_blocking in (False, True):
            returns, dones = [], []
            for rep in range(repeats + 1):
                torch.cuda.synchronize(device)
                start = time.perf_counter()
                moved = source.to(device, non_blocking=non_blocking)
                returned = time.perf_counter()
                torch.cuda.synchronize(device)
                done = time.perf_counter()
                del moved
                if rep:
                    returns.append(returned - start)
                    dones.append(done - start)
            out.append(CallReturn(memory, non_blocking, float(np.median(returns)),
                                  float(np.median(dones))))
    return out


# ---------------------------------------------------------------------------------------
# non_blocking on a busy stream: does the CPU keep its run-ahead?

# 64 KiB to 256 MiB; 2, 4 and 8 MiB locate where the pageable call starts to wait (the H200
# returned at once at 1 MiB and waited from 16 MiB: review 2026-12-03d). Each size costs
# about 0.4 s (4 calls behind a 50 ms kernel, pageable and pinned: cost_model.busy_stream_s).
# the seed's batch among them (64 x 3 x 224 x 224 float32, 38,535,168 B: claims.SEED_BATCH_BYTES), so
# C25 is judged on its own row, not on the 16 and 64 MiB rows around it (review 2026-12-04m item 6)
BUSY_SIZES = (64 * 2**10, 2**20, 2 * 2**20, 4 * 2**20, 8 * 2**20, 16 * 2**20, 64 * 3 * 224 * 224 * 4,
              64 * 2**20, 256 * 2**20)
BUSY_KERNEL_S = 0.05  # the queued kernel: about 50 ms of GPU time, as a training step's kernels
# Timed calls per size and memory (after one warm-up), the median read. The two outcomes lie
# 300x apart (0.15-0.3 ms at once against 50-90 ms after the kernel, on the H200), so one odd
# call among three cannot move the median across the 20%/80% lines; reproduce.py times 5.
BUSY_REPEATS = 3


@dataclass(frozen=True)
class BusyReturn:
    """One non_blocking copy issued behind a queued kernel: when the call gave the CPU back.

    All times from the moment the kernel was queued (the call is issued right after):
    call_return_s: the median until `.to()` returned; done_s: until a synchronize saw the
    kernel and the copy finished; kernel_s: the queued kernel's own GPU time (CUDA events).
    share_q25/q75: the quartiles of call_return / done over the repeats (the spread)."""

    memory: str
    nbytes: int
    kernel_s: float
    call_return_s: float
    done_s: float
    share_q25: float
    share_q75: float

    @property
    def returned_share(self) -> float:
        """call_return / done: about 0 when the call returns at once, about 1 when it waits
        out the queued kernel and its own copy (the CPU lost its run-ahead)."""
        return self.call_return_s / self.done_s if self.done_s > 0 else 1.0

    @property
    def waited_for_kernel(self) -> bool:
        """The call returned only after the queued kernel had run (most of it)."""
        return self.call_return_s >= 0.8 * self.kernel_s

    def as_dict(self) -> dict:
        return {**asdict(self), "returned_share": self.returned_share,
                "waited_for_kernel": self.waited_for_kernel}


def sleep_cycles(seconds: float, device: torch.device) -> int:
    """Cycles of torch.cuda._sleep that keep the GPU busy about `seconds` (calibrated here)."""
    probe = 10_000_000
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(probe)  # warm-up: the first launch pays for loading the kernel
    torch.cuda.synchronize(device)
    start.record()
    torch.cuda._sleep(probe)
    end.record()
    end.synchronize()
    per_cycle_s = start.elapsed_time(end) * 1e-3 / probe
    return max(int(seconds / per_cycle_s), 1)


def busy_stream_returns(sizes: tuple[int, ...] = BUSY_SIZES, kernel_s: float = BUSY_KERNEL_S,
                        repeats: int = BUSY_REPEATS) -> tuple[list[BusyReturn], list[str]]:
    """Queue a ~kernel_s kernel, then issue x.to('cuda', non_blocking=True) from pageable and
    from pinned memory; time when the call returns against the queued work, for each size.

    Why a busy stream: on an idle stream a blocking call and an asynchronous one finish
    alike, so the harm does not show. In a training loop the stream holds the previous
    step's kernels; a copy that may synchronise with the stream (CUDA documents that
    pageable cudaMemcpyAsync "might be synchronous") makes the CPU wait them out, and the
    CPU's run-ahead (queueing the next step while the GPU works) is lost. Returns the rows
    and every warning torch gave during the calls (recorded for real, so "torch said
    nothing" is a measurement)."""
    device = require_gpu("timing non_blocking copies behind a queued kernel")
    if not hasattr(torch.cuda, "_sleep"):
        raise NoGPU("this torch has no torch.cuda._sleep spin kernel to queue")
    if not sizes or any(n < 1 for n in sizes) or repeats < 1 or not kernel_s > 0:
        raise ValueError(f"sizes >= 1 byte, repeats >= 1 and kernel_s > 0, please; got "
                         f"{sizes}, {repeats}, {kernel_s}")
    cycles = sleep_cycles(kernel_s, device)
    rows: list[BusyReturn] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for nbytes in sizes:
            for memory in ("pageable", "pinned"):
                source = host_tensor(nbytes, pinned=memory == "pinned")
                returns, dones, kernels = [], [], []
                for rep in range(repeats + 1):  # the first is a warm-up
                    torch.cuda.synchronize(device)
                    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    begin.record()
                    torch.cuda._sleep(cycles)
                    end.record()
                    queued = time.perf_counter()
                    moved = source.to(device, non_blocking=True)
                    returned = time.perf_counter()
                    torch.cuda.synchronize(device)
                    done = time.perf_counter()
                    del moved
                    if rep:
                        returns.append(returned - queued)
                        dones.append(done - queued)
                        kernels.append(begin.elapsed_time(end) * 1e-3)
                shares = np.asarray(returns) / np.asarray(dones)
                q25, q75 = np.percentile(shares, [25, 75])
                rows.append(BusyReturn(memory, nbytes, float(np.median(kernels)),
                                       float(np.median(returns)), float(np.median(dones)),
                                       float(q25), float(q75)))
                del source
    said = sorted({str(w.message).splitlines()[0] for w in caught})
    return rows, said


def c25_busy_evidence(rows: list[dict], warned: list[str]) -> dict:
    """C25's evidence from busy_stream_returns() rows (as dicts, BusyReturn.as_dict) and the
    warnings captured while they ran.

    The claim's original keys stay (so old verdicts and new read alike): the largest size's
    pageable and pinned non_blocking calls, their return and done times counted from when the
    kernel was queued. 'busy_stream' holds every size; 'warnings' what torch said, recorded."""
    if not rows:
        raise ValueError("no busy-stream rows; pass the rows of h2d_copies.busy_stream_returns()")
    largest = max(r["nbytes"] for r in rows)

    def row(memory: str) -> dict:
        found = [r for r in rows if r["memory"] == memory and r["nbytes"] == largest]
        if not found:
            raise ValueError(f"no busy-stream row for {memory} memory at {largest} bytes")
        return found[0]

    pageable, pinned = row("pageable"), row("pinned")
    return {"pageable_nb_return_s": pageable["call_return_s"], "pageable_nb_copy_s": pageable["done_s"],
            "pinned_nb_return_s": pinned["call_return_s"], "pinned_nb_copy_s": pinned["done_s"],
            "transfer_bytes": largest, "queued_kernel_s": pageable["kernel_s"],
            "busy_stream": [dict(r) for r in rows], "warnings": list(warned),
            "warnings_recorded": True}


# ---------------------------------------------------------------------------------------
# What pinning costs


@dataclass(frozen=True)
class PinningCost:
    """The price of pinning `nbytes`: time (first and cached), CPU time, host memory."""

    nbytes: int
    first_pin_s: float  # wall time of the first pin of this size: page-locking a new block
    first_pin_cpu_s: float  # CPU time of this thread during it
    cached_pin_s: float  # bench median once a block of this size is cached: the copy alone
    cached_pin_gbps: float
    host_reserved_bytes: int | None  # what the pinned pool holds for it (host_memory_stats)
    rss_growth_bytes: int | None

    def as_dict(self) -> dict:
        return asdict(self)


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _host_reserved() -> int | None:
    stats = getattr(torch.cuda, "host_memory_stats", None)
    if stats is None:
        return None
    try:
        values = stats()
    except RuntimeError:
        return None
    for key in ("reserved_bytes.current", "segment.current", "allocated_bytes.current"):
        if key in values:
            return int(values[key])
    return None


def pinning_cost(nbytes: int = 192 * 2**20) -> PinningCost:
    """Pin a pageable tensor of an odd size (192 MiB: not a power of two) and see what it costs."""
    require_gpu("measuring what pinning costs")
    source = host_tensor(nbytes, pinned=False)
    reserved_before, rss_before = _host_reserved(), _rss_bytes()
    cpu_start, wall_start = time.thread_time(), time.perf_counter()
    pinned = source.pin_memory()
    first_s, first_cpu = time.perf_counter() - wall_start, time.thread_time() - cpu_start
    reserved_after, rss_after = _host_reserved(), _rss_bytes()
    del pinned  # its block goes back to the cache, to be reused by the next pin of this size
    cached = bench.time(lambda: source.pin_memory(), device="cpu", bytes_moved=nbytes,
                        rep_ms=200, label="pin_memory() on a cached block")
    grown = (reserved_after - reserved_before
             if reserved_after is not None and reserved_before is not None else None)
    rss = rss_after - rss_before if rss_after is not None and rss_before is not None else None
    return PinningCost(nbytes, first_s, first_cpu, cached.median_s, float(cached.gbps or 0.0),
                       grown, rss)


def _thread_cpu_s(native_id: int) -> float | None:
    """CPU seconds a thread of this process has run (Linux: schedstat, in nanoseconds)."""
    try:
        with open(f"/proc/self/task/{native_id}/schedstat") as f:
            return int(f.read().split()[0]) * 1e-9
    except (OSError, ValueError, IndexError):
        return None


def pin_thread_cpu_s(loader: torch.utils.data.DataLoader, batches: int) -> dict:
    """Run `batches` batches through a pin_memory loader; CPU seconds of its pin thread.

    Reads the iterator's private _pin_memory_thread (present for years; None if renamed), and
    its run time from /proc (Linux only).
    """
    require_gpu("the pin thread (pin_memory needs a GPU)")
    iterator = iter(loader)
    try:
        start = time.perf_counter()
        for _ in range(batches):
            next(iterator)
        wall = time.perf_counter() - start
        thread = getattr(iterator, "_pin_memory_thread", None)
        native_id = getattr(thread, "native_id", None)
        cpu = _thread_cpu_s(native_id) if native_id else None
    finally:
        shutdown = getattr(iterator, "_shutdown_workers", None)
        if callable(shutdown):
            shutdown()
    return {"batches": batches, "wall_s": wall, "pin_thread_cpu_s": cpu,
            "pin_thread_share_of_wall": cpu / wall if cpu is not None and wall > 0 else None}


# ---------------------------------------------------------------------------------------
# The device-to-host non_blocking trap, shown safely


@dataclass(frozen=True)
class TrapResult:
    """What was read from the host destination before and after synchronising."""

    destination: str  # 'pinned' or 'pageable'
    elements: int
    wrong_before_sync: int
    wrong_after_sync: int

    def as_dict(self) -> dict:
        return asdict(self)


def d2h_trap(elements: int = 1 << 24, delay_cycles: int = 1_000_000_000) -> list[TrapResult]:
    """Copy GPU -> host with non_blocking=True, read the host copy at once, then after a sync.

    The GPU is held busy first (a spin kernel of `delay_cycles`, about 0.5 s at 2 GHz, longer
    than the read takes) so the copy surely has not run when the CPU reads: the pinned destination still holds its sentinel
    (-1). A pageable destination cannot be written asynchronously, so torch waits there and
    the values are right: non_blocking is only a request.
    """
    device = require_gpu("the device-to-host non_blocking trap")
    source = torch.arange(elements, device=device, dtype=torch.float32)
    out = []
    for destination in ("pinned", "pageable"):
        host = torch.full((elements,), -1.0, pin_memory=destination == "pinned")
        torch.cuda.synchronize(device)
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(delay_cycles)
        else:  # no spin kernel in this torch: a few large matmuls keep the GPU as busy
            big = torch.randn(4096, 4096, device=device)
            for _ in range(20):
                big = big @ big
                big /= big.norm()
        host.copy_(source, non_blocking=True)
        early = int((host != torch.arange(elements, dtype=torch.float32)).sum())
        torch.cuda.synchronize(device)
        late = int((host != torch.arange(elements, dtype=torch.float32)).sum())
        out.append(TrapResult(destination, elements, early, late))
    return out


# ---------------------------------------------------------------------------------------
# pin_memory_device: what it does in this torch


def _memcpy_h2d_events(profile: torch.profiler.profile) -> list[str]:
    names = [e.name for e in profile.events()]
    return [n for n in names if "memcpy" in n.lower() and any(m in n for m in H2D_MARKERS)]


def pin_memory_device_probe(batch_shape: tuple[int, ...] = (64, 3, 224, 224)) -> dict:
    """DataLoader(pin_memory=True) with and without pin_memory_device='cuda:0': what comes out.

    Records the warnings the DataLoader gives, whether the batch is pinned and where it lives,
    whether a GPU op accepts it as is, and the host-to-device memcpy events the profiler sees
    when it is moved with .to('cuda', non_blocking=True).
    """
    device = require_gpu("what pin_memory_device does")
    data = torch.utils.data.TensorDataset(torch.randn(*batch_shape))
    found: dict = {"torch": torch.__version__, "batch_shape": list(batch_shape)}
    for label, extra in (("pin_memory", {}), ("pin_memory_device", {"pin_memory_device": f"cuda:{device.index}"})):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loader = torch.utils.data.DataLoader(data, batch_size=batch_shape[0], pin_memory=True, **extra)
            (batch,) = next(iter(loader))
        try:
            _ = batch + torch.ones(1, device=device)  # only a GPU-resident (or mapped) batch passes
            gpu_reads_it = True
            refusal = ""
        except RuntimeError as error:
            gpu_reads_it = False
            refusal = str(error).splitlines()[0][:200]
        torch.cuda.synchronize(device)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as profile:
            moved = batch.to(device, non_blocking=True)
            torch.cuda.synchronize(device)
        copies = _memcpy_h2d_events(profile)
        found[label] = {
            "warnings": sorted({str(w.message).splitlines()[0][:240] for w in caught}),
            "batch_device": str(batch.device), "batch_pinned": bool(batch.is_pinned()),
            "gpu_op_accepts_batch": gpu_reads_it, "gpu_op_error": refusal,
            "h2d_memcpy_events": len(copies), "h2d_memcpy_names": sorted(set(copies)),
            "moved_equal": bool(torch.equal(moved.cpu(), batch)),
        }
        del moved, batch, loader
    return found


def environment_note() -> str:
    """The torch and CUDA versions a reader needs to interpret these numbers."""
    if not torch.cuda.is_available():
        return f"torch {torch.__version__}, no CUDA GPU"
    name = torch.cuda.get_device_name()
    return (f"torch {torch.__version__}, CUDA {torch.version.cuda}, {name}, "
            f"{os.cpu_count()} CPU cores")


def c25_evidence(rows: list[dict], nbytes: int, warnings: list[str] | None = None) -> dict:
    """C25's evidence from call_return_times() rows (as dicts): the non_blocking calls'
    return and completion times from pageable and from pinned memory."""
    def row(memory: str, non_blocking: bool) -> dict:
        found = [r for r in rows if r["memory"] == memory and r["non_blocking"] == non_blocking]
        if not found:
            raise ValueError(f"no call_return row for {memory} non_blocking={non_blocking}; "
                             "pass the rows of h2d_copies.call_return_times()")
        return found[0]

    pageable, pinned, blocking = row("pageable", True), row("pinned", True), row("pageable", False)
    return {"pageable_nb_return_s": pageable["call_return_s"], "pageable_nb_copy_s": pageable["copy_done_s"],
            "pinned_nb_return_s": pinned["call_return_s"], "pinned_nb_copy_s": pinned["copy_done_s"],
            "pageable_blocking_return_s": blocking["call_return_s"], "transfer_bytes": nbytes,
            "warnings": list(warnings or [])}


# The fresh process: imports first (torch and this module: most of its seconds), then waits
# for the size on its stdin; nothing is pinned and CUDA is not touched before the size comes.
FRESH_PIN_SCRIPT = (
    "import json, sys, time\n"
    "started = time.perf_counter()\n"
    "from labkit.chapters.ch05_dataloader import h2d_copies\n"
    "print('IMPORTED', time.perf_counter() - started, flush=True)\n"
    "line = sys.stdin.readline()\n"
    "if line.strip():\n"
    "    print('RESULT', json.dumps(h2d_copies.pinning_cost(int(line)).as_dict()), flush=True)\n")


class FreshPinProcess:
    """pinning_cost() in a fresh Python process, which may be started cells ahead.

    Why a fresh process: the CUDA caching host allocator keeps every pinned block it ever
    made (rounded up to a power of two) and reuses it for any later request that fits, so in
    a process that pinned anything larger before, a "first" pin is only a copy into a cached
    block, and the pool does not grow. A fresh process shows the page-locking and the
    rounding (192 MiB asks, the pool grows by 256 MiB).

    Why started ahead: its imports took most of the 5.6 s this measurement cost on the H200.
    The process imports at once and then waits, having pinned nothing and touched no GPU,
    for `measure(nbytes)`; started early, it is still fresh when asked, and its imports
    overlap the cells between. If nobody asks, it exits when this process does (its stdin
    closes). import_s: its imports' seconds, as it reported them."""

    def __init__(self, timeout_s: float = 120.0) -> None:
        import subprocess
        import sys

        require_gpu("measuring what pinning costs")
        self.timeout_s = timeout_s
        self.import_s: float | None = None
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
        self._process = subprocess.Popen([sys.executable, "-c", FRESH_PIN_SCRIPT], env=env, text=True,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)

    def close(self) -> None:
        """End the waiting process without measuring (a cell run again starts another)."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.communicate()

    def measure(self, nbytes: int = 192 * 2**20) -> PinningCost:
        """Pin nbytes in the waiting process and read what it cost (once per process)."""
        import subprocess

        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 1:
            raise ValueError(f"nbytes is a whole number of bytes >= 1, got {nbytes!r}")
        if self._process.returncode is not None or self._process.stdin is None or self._process.stdin.closed:
            raise RuntimeError("this fresh process has already measured (or exited): start another")
        try:
            out, err = self._process.communicate(f"{nbytes}\n", timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            self._process.kill()
            out, err = self._process.communicate()
        lines = out.splitlines()
        imported = [line for line in lines if line.startswith("IMPORTED ")]
        result = [line for line in lines if line.startswith("RESULT ")]
        if imported:
            self.import_s = float(imported[-1].split()[1])
        if self._process.returncode != 0 or not result:
            raise RuntimeError(f"the fresh process that pins {nbytes} bytes failed (exit "
                               f"{self._process.returncode}): {err.strip()[-500:]}")
        return PinningCost(**json.loads(result[-1][len("RESULT "):]))


def pinning_cost_fresh(nbytes: int = 192 * 2**20, timeout_s: float = 120.0) -> PinningCost:
    """pinning_cost() in a fresh Python process started now (FreshPinProcess says why)."""
    return FreshPinProcess(timeout_s).measure(nbytes)
