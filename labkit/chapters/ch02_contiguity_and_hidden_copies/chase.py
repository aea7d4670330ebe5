"""C5b's seed quantity, latency per access, measured as a chain of dependent loads (issue 38).

The seed's 42.7 ns against 19.1 ns are per-access latencies; C5b and C5c judge a sum's time per
element, an amortised cost. A pointer chase makes each load wait for the one before it: an
int32 buffer where the element at each visited position holds the index of the next, read
`steps` times inside one call (one kernel, or one Python loop), so the call's own cost is a
small share of what is timed and the time per step is a latency.

- On a GPU, one Triton program follows the chain (`chase_triton`, the kernel `_kernel`): per
  pattern, the four of C5b's 2x2 (aligned or 4 bytes in, stride 1 or 2) and strides 8 and 16
  (32 B and 64 B apart: a new sector, a new 64 B line each step), each for one lap with the
  last-level cache flushed before each call ('cold, one lap': each sector's
  first load from DRAM or L2, the loads after it in the same sector from L1), and C5b's four
  again inside a 16 KiB window (the GPU's L1 case, which C5b's sum cannot make: a stride-0 view
  runs another reduction kernel), timed at WINDOW_LAPS laps and at one lap, the difference over
  the laps between: the first lap's misses drop out, so the window's time per access is L1's
  (review 2026-12-04n item 1). Each cold pattern's bytes fetched are counted from the visited
  addresses (`cases.fetched_bytes`: 32-byte sectors, and 64-byte units beside them); its time
  per access less the window's L1 access, over its sectors per access, is a time per sector
  beyond an L1 hit; not one cost, so the note fits two (`sector_model`: a 64 B unit's first
  sector, its second) to strides 8 and 16 and checks them on C5b's four. The note compares
  alignment alone and stride 2 with the sectors each fetches, on that time beyond L1 (review
  2026-12-04n item 2: divided whole, the L1 hits a stride-1 chain makes between its sectors
  made the per-sector times differ whatever set them).
- On a CPU, a Python loop follows the chain (`Follower`, each call going on where the last
  stopped). The interpreter's own cost per step, tens of nanoseconds, is most of a step, and a
  sequential chain's lines are prefetched, so C5b's patterns would all read alike: instead
  random 64-byte lines are followed inside a 16 KiB window (L1), over a buffer beyond the
  caches page by page (a new line each step, a new 4 KiB page every 64), and over it in random
  pages (a new page nearly every step). The differences per step cancel the interpreter's cost:
  what a new line costs beyond an L1 hit (prefetchers may hide part of it), and what a new page
  costs beyond that (a page-table walk: C9's DTLB misses, a hypothesis).

Nothing here decides a verdict: C5b and C5c read the sums. Triton is imported only on a GPU (or
with TRITON_INTERPRET=1, for a test), so this module imports on a CPU-only machine without it.
"""

import os
from collections.abc import Callable, Mapping
from functools import lru_cache

import torch

from labkit.chapters.ch02_contiguity_and_hidden_copies import claims as ch02
from labkit.measure import bench, conditions
from labkit.measure.timing import Comparison
from labkit.show.table import Table
from labkit.show.table import rows as table_rows

GPU_STEPS = 4096  # dependent loads per call at DRAM size: 0.3-3 ms a call, so a launch is under 2% of it
WINDOW_LAPS = 17  # inside the 16 KiB window, against one lap: 16 laps between (the first lap's misses drop out)
ONE_LAP = ", one lap"  # the window's one-lap variant's label suffix (timed, not shown)
WINDOW_ELEMENTS = 4096  # int32: 16 KiB, inside any L1
GPU_STRIDES = (1, 2, 8, 16)  # int32 elements: C5b's 1 and 2; 32 B (a sector a step); 64 B (a line a step)
CPU_STEPS = 20000  # Python steps per call: a few ms, so the call's own cost is small beside it
PAGE_BYTES = 4096  # a CPU's base page: one DTLB entry
LINE_INTS = ch02.CACHE_LINE_BYTES // 4
DRAM_UNIT = 64  # bytes; a DRAM fill as the stride sweep counts it (a hypothesis, beside the 32 B sectors)
FLAT_PER_SECTOR = 1.25  # 'in proportion to its sectors': a ratio beyond L1 within this of the sectors' ratio
COLD = "cold, one lap"  # the GPU's chains, L2 flushed before each call
RANDOM_WINDOW = "random lines, 16 KiB window"
PAGE_BY_PAGE = "random lines, page by page"  # DRAM-sized: a new page every 64 steps
RANDOM_DRAM = "random lines, random pages"  # DRAM-sized: a new page nearly every step
SKIP_ENV = "LABKIT_SKIP_CHASE"  # =1: `measure_or_why` runs no chase (a session whose smoke run failed)


def _label(offset: int, stride: int) -> str:
    """C5b's own labels at its stride and 1; 'aligned, every 8th element' beyond."""
    if stride == 1:
        return ch02.ALIGNED_CONTIGUOUS if offset == 0 else ch02.MISALIGNED_CONTIGUOUS
    if stride == ch02.PATTERN_STRIDE:
        return ch02.ALIGNED_STRIDED if offset == 0 else ch02.MISALIGNED_STRIDED
    return f"{'aligned' if offset == 0 else 'misaligned'}, every {stride}th element"


def chain(positions: torch.Tensor, size: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """An int32 buffer of `size` elements where `positions[k]` holds `positions[k + 1]` (the last
    holds the first: a cycle), so following it from `positions[0]` visits them in order. Every
    other element is -1. Checked to start on a 64-byte line, so the offsets mean what they say."""
    pos = positions.to(torch.int64).cpu()
    if pos.numel() < 1 or int(pos.min()) < 0 or int(pos.max()) >= size:
        raise ValueError(f"positions must lie in [0, {size}), got {pos.numel()} from {int(pos.min())}")
    if torch.unique(pos).numel() != pos.numel():
        raise ValueError("a chain visits each position once a lap: the positions repeat")
    buf = torch.full((size,), -1, dtype=torch.int32)
    buf[pos] = torch.roll(pos, -1).to(torch.int32)
    out = buf.to(device)
    if out.data_ptr() % ch02.CACHE_LINE_BYTES != 0:
        raise RuntimeError("the allocator gave a chain off a cache line: its offsets need an aligned start")
    return out


def strided_positions(offset: int, stride: int, count: int) -> torch.Tensor:
    """`count` positions `stride` apart from `offset`, in order (a sequential chain)."""
    return offset + stride * torch.arange(count, dtype=torch.int64)


def random_line_positions(lines: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """One int32 at the start of each of `lines` 64-byte lines, in a random order (a prefetcher
    cannot guess the next line)."""
    return torch.randperm(lines, generator=generator) * LINE_INTS


def visited_view(buf: torch.Tensor, offset: int, stride: int, count: int) -> torch.Tensor:
    """The elements a sequential chain reads, as a view: what `cases.fetched_bytes` counts."""
    return buf.as_strided((count,), (stride,), offset)


def gpu_chains(device: torch.device | str, steps: int = GPU_STEPS, strides: tuple[int, ...] = GPU_STRIDES,
               window_laps: int = WINDOW_LAPS) -> dict[str, dict]:
    """The GPU's chains: each of `strides` aligned and 4 bytes in, `steps` positions, read with L2
    flushed before each call (COLD, one lap a call), and C5b's four again cycling inside a 16 KiB window for
    `window_laps` laps ('16 KiB window'; `lap_steps` a lap, timed alone too). Per pattern: its
    buffer, its start, its steps, its size (COLD or '16 KiB window') and its visited view (COLD
    only)."""
    if window_laps < 2:
        raise ValueError(f"the window needs at least 2 laps to subtract a one-lap call, got {window_laps}")
    found = {}
    for stride in strides:
        for offset in (0, 1):
            size = offset + stride * steps + LINE_INTS
            buf = chain(strided_positions(offset, stride, steps), size, device)
            found[_label(offset, stride)] = {"buf": buf, "start": offset, "steps": steps, "size": COLD,
                                             "view": visited_view(buf, offset, stride, steps)}
    for stride in (1, ch02.PATTERN_STRIDE):
        for offset in (0, 1):
            lap = (WINDOW_ELEMENTS - LINE_INTS) // stride
            buf = chain(strided_positions(offset, stride, lap), WINDOW_ELEMENTS, device)
            found[f"{_label(offset, stride)}, 16 KiB window"] = {
                "buf": buf, "start": offset, "steps": window_laps * lap, "size": "16 KiB window",
                "laps": window_laps, "lap_steps": lap}
    return found


def page_local_positions(lines: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """One int32 at the start of each of `lines` 64-byte lines, page by page (4 KiB, 64 lines)
    in order, the lines of each page in a random order: a new line each step, a new page (a DTLB
    miss) only every 64 steps."""
    per_page = PAGE_BYTES // ch02.CACHE_LINE_BYTES
    pages = lines // per_page
    order = torch.argsort(torch.rand(pages, per_page, generator=generator), dim=1)
    return ((torch.arange(pages)[:, None] * per_page + order).reshape(-1)) * LINE_INTS


def cpu_chains(dram_bytes: int, steps: int = CPU_STEPS, seed: int = 0) -> dict[str, dict]:
    """The CPU's three chains of random 64-byte lines: inside 16 KiB (L1), over `dram_bytes`
    page by page (DRAM, a DTLB miss every 64 steps) and over `dram_bytes` in a random order of
    pages too (DRAM and, nearly every step, a page-table walk)."""
    gen = torch.Generator().manual_seed(seed)
    lines = dram_bytes // PAGE_BYTES * (PAGE_BYTES // ch02.CACHE_LINE_BYTES)
    if lines < steps:
        raise ValueError(f"{dram_bytes:,} B holds {lines:,} lines, fewer than the {steps:,} steps a call takes")
    found = {RANDOM_WINDOW: (random_line_positions(WINDOW_ELEMENTS // LINE_INTS, gen), WINDOW_ELEMENTS, "16 KiB window"),
             PAGE_BY_PAGE: (page_local_positions(lines, gen), lines * LINE_INTS, "DRAM-sized"),
             RANDOM_DRAM: (random_line_positions(lines, gen), lines * LINE_INTS, "DRAM-sized")}
    return {label: {"buf": chain(pos, size), "start": int(pos[0]), "steps": steps, "size": where, "positions": pos}
            for label, (pos, size, where) in found.items()}


def distinct_per_step(positions: torch.Tensor, steps: int, unit_bytes: int) -> float:
    """Distinct `unit_bytes` blocks (64 B lines, 4 KiB pages) a call's `steps` visits of a
    cyclic chain touch, per step: the lines or DTLB entries it needs, counted from the addresses
    (the window's 256 lines are touched again and again: 256 over 20,000 steps)."""
    visited = positions[torch.arange(steps) % positions.numel()] * 4
    return torch.unique(visited // unit_bytes).numel() / steps


@lru_cache(maxsize=1)
def _kernel() -> Callable:
    """The chase kernel, compiled on first use (imports triton here, never at module import)."""
    import triton
    import triton.language as tl

    @triton.jit(do_not_specialize=["start", "steps"])
    def chase_kernel(chain_ptr, out_ptr, start, steps):  # noqa: ANN001, ANN202
        idx = start
        for _ in range(steps):
            idx = tl.load(chain_ptr + idx)  # the next address is the value just loaded
        tl.store(out_ptr, idx)

    return chase_kernel


def chase_triton(buf: torch.Tensor, start: int, steps: int, out: torch.Tensor) -> torch.Tensor:
    """Follow `buf`'s chain from `start` for `steps` dependent loads in one Triton program (one
    warp); the index reached is stored in `out` (so the loads cannot be dropped)."""
    if buf.device.type != "cuda" and os.environ.get("TRITON_INTERPRET") != "1":
        raise ValueError(f"chase_triton takes a CUDA tensor (or TRITON_INTERPRET=1), got {buf.device}")
    _kernel()[(1,)](buf, out, start, steps, num_warps=1)
    return out


def chase_python(buf: torch.Tensor, start: int, steps: int) -> int:
    """Follow a CPU chain for `steps` dependent loads in a Python loop over its memory."""
    memory = memoryview(buf.numpy())
    idx = start
    for _ in range(steps):
        idx = memory[idx]
    return idx


def check_ends(chains: Mapping[str, Mapping], follow: Callable[[torch.Tensor, int, int], int]) -> int:
    """Each chain followed once by `follow(buf, start, steps)` (the Triton kernel, on the GPU),
    for its own steps and, for a window chain, its one-lap steps, its end index compared with
    the one a Python loop reaches on a copy of its buffer on the CPU (`chase_python`). A kernel
    compiled wrong (loads hoisted, the loop shortened) would time something else and print
    plausible, untrue latencies: a RuntimeError naming the chain says so instead (review
    2026-12-05o 00-02 item 2). Returns the number of runs checked."""
    checked = 0
    for label, found in chains.items():
        start, host = _start(found), found["buf"].cpu()
        for steps in dict.fromkeys((int(found["steps"]), int(found.get("lap_steps", found["steps"])))):
            got, want = int(follow(found["buf"], start, steps)), chase_python(host, start, steps)
            if got != want:
                raise RuntimeError(f"the chase kernel ended at index {got}, not {want}, on '{label}' after "
                                   f"{steps:,} steps: its times would not be this chain's")
            checked += 1
    return checked


class Follower:
    """A CPU chain followed `steps` at a time, each call going on where the last stopped, so the
    calls of a timing walk the whole buffer instead of the same first lines again (which a hot
    timing would then read from the caches, not DRAM)."""

    def __init__(self, buf: torch.Tensor, start: int, steps: int) -> None:
        self.memory, self.at, self.steps = memoryview(buf.numpy()), start, steps

    def __call__(self) -> int:
        memory, idx = self.memory, self.at
        for _ in range(self.steps):
            idx = memory[idx]
        self.at = idx
        return idx


def _start(found: Mapping) -> int:
    """A chain's first position (where its positions begin: page by page, a page's first line)."""
    return int(found["start"])


def measure(device: torch.device | str, on_gpu: bool, dram_bytes: int, rounds: int = 3,
            rep_ms: float = 60.0) -> tuple[dict, Comparison]:
    """Every chain followed and timed in interleaved rounds (`bench.compare`): on a GPU cold (the
    last-level cache flushed before each call; each window chain also at one lap, whose time the
    record subtracts), on a CPU hot (the random lines miss anyway; each call goes on where the
    last stopped) over `dram_bytes` (C5b's buffer size; on a CPU its place against the reported
    caches is recorded, `conditions.cache_place`). On a GPU every chain's
    end index is checked first (`check_ends`: ~0.1 s). About 2-4 s on either device, the Triton
    kernel's compile included. Returns (the record, the comparison)."""
    chains = gpu_chains(device) if on_gpu else cpu_chains(dram_bytes)
    out = torch.zeros(1, dtype=torch.int32, device=device)
    if on_gpu:  # the kernel's end index checked on every chain before any is timed (item 2)
        check_ends(chains, lambda b, s, n: int(chase_triton(b, s, n, out)[0]))
    variants = {}
    for label, found in chains.items():
        start, steps = _start(found), int(found["steps"])
        if not on_gpu:
            variants[label] = Follower(found["buf"], start, steps)
            continue
        variants[label] = lambda b=found["buf"], s=start, n=steps: chase_triton(b, s, n, out)
        if "lap_steps" in found:
            variants[label + ONE_LAP] = lambda b=found["buf"], s=start, n=int(found["lap_steps"]): chase_triton(
                b, s, n, out)
    baseline = ch02.ALIGNED_CONTIGUOUS if on_gpu else RANDOM_WINDOW
    cmp = bench.compare(variants, baseline=baseline, rounds=rounds, rep_ms=rep_ms,
                        mode="cold" if on_gpu else "hot", device=device, progress=False)
    # a CPU's chains over dram_bytes: where that buffer sits against the caches this machine
    # reports, C5b's label (review 2026-12-05u 00-04 item 2: '64 MiB ... DRAM's latency' inside a
    # reported 480 MiB L3, timed hot)
    place = {} if on_gpu else {"dram_bytes": dram_bytes, ch02.PLACE_KEY: conditions.cache_place(
        dram_bytes, conditions.reported_caches(torch.device(device)))}
    return record(chains, cmp, on_gpu) | place, cmp


def measure_or_why(device: torch.device | str, on_gpu: bool, dram_bytes: int) -> tuple[dict | None, str]:
    """`measure`, or (None, why) where it raised: the chase is optional and decides nothing, so a
    failure (a Triton compile error on a new machine) must not stop the chapter before its
    verdicts; the page prints the reason instead of the table (review 2026-12-04n item 3). A CUDA
    error (an illegal address) is sticky: the process's GPU is lost whatever this catches, so the
    reason says so; with SKIP_ENV set to 1 the chase is not run at all, for a session whose smoke
    run (benchmarks/smoke_chase.py) failed (review 2026-12-05o 00-02 item 2)."""
    if os.environ.get(SKIP_ENV) == "1":
        return None, f"the chase was not run here ({SKIP_ENV}=1; nothing recorded)"
    try:
        return measure(device, on_gpu, dram_bytes)[0], ""
    except Exception as err:  # noqa: BLE001 - any failure is shown, never hidden
        first = (str(err).strip().splitlines() or [""])[0]
        first = first if len(first) <= 200 else first[:197] + "..."
        lost = ("; a CUDA error leaves this process's GPU unusable, so the cells below fail too"
                if "CUDA error" in str(err) else "")
        return None, f"the chase did not run here: {type(err).__name__}: {first} (nothing recorded{lost})"


def _window_per_step(found: Mapping, cmp: Comparison, label: str) -> dict:
    """A window chain's L1 time per access: its WINDOW_LAPS-lap call less its one-lap call, over
    the steps between (pooled medians, and per round where both have rounds); the first lap's
    share of the long call (its misses: the one-lap call beyond the laps' L1 pace)."""
    lap, steps = int(found["lap_steps"]), int(found["steps"])
    full, one = cmp[label], cmp[label + ONE_LAP]
    per = (full.timing.median_s - one.timing.median_s) / (steps - lap)
    rounds = [(f - o) / (steps - lap) for f, o in zip(full.round_medians_s, one.round_medians_s, strict=False)]
    first = one.timing.median_s - per * lap
    return {"ns_per_step": 1e9 * per, "one_lap_ns_per_step": 1e9 * one.timing.median_s / lap,
            "one_lap_rounds_spread": (max(one.round_medians_s) / min(one.round_medians_s)
                                      if one.round_medians_s and min(one.round_medians_s) > 0 else None),
            "first_lap_share": first / full.timing.median_s if full.timing.median_s > 0 else None,
            "rounds_spread": (max(rounds) / min(rounds)) if rounds and min(rounds) > 0 else None}


def record(chains: Mapping[str, Mapping], cmp: Comparison, on_gpu: bool) -> dict:
    """The chase's record: per pattern, ns per step and its rounds' spread (a window chain's from
    its long call less its one-lap call, `_window_per_step`); on a GPU also the 32-byte sectors
    and 64-byte units its visited addresses touch per step (counted, not timed)."""
    from labkit.chapters.ch02_contiguity_and_hidden_copies import cases

    rows = []
    for label, found in chains.items():
        v = cmp[label]
        steps = int(found["steps"])
        row = {"pattern": label, "size": found["size"], "steps": steps, "ns_per_step": 1e9 * v.timing.median_s / steps,
               "ratio": v.ratio, "ratio_iqr": [v.ratio_q25, v.ratio_q75],
               "rounds_spread": max(v.round_medians_s) / min(v.round_medians_s) if v.round_medians_s else None}
        if "view" in found:
            row["sectors_per_step"] = cases.fetched_bytes(found["view"], cases.SECTOR_BYTES) / cases.SECTOR_BYTES / steps
            row["dram_units_per_step"] = cases.fetched_bytes(found["view"], DRAM_UNIT) / DRAM_UNIT / steps
        if "positions" in found:
            row["lines_per_step"] = distinct_per_step(found["positions"], steps, ch02.CACHE_LINE_BYTES)
            row["pages_per_step"] = distinct_per_step(found["positions"], steps, PAGE_BYTES)
        if "lap_steps" in found:
            row |= {"laps": found["laps"], "lap_steps": int(found["lap_steps"])} | _window_per_step(found, cmp, label)
            del row["ratio"], row["ratio_iqr"]  # the whole call's ratio to a cold chain means nothing here
        rows.append(row)
    return {"rows": rows, "rounds": cmp.rounds, "on_gpu": on_gpu, "clock": "device" if on_gpu else "wall"}


def _rows(rec: Mapping, size: str) -> dict[str, dict]:
    return {r["pattern"]: r for r in rec["rows"] if r["size"] == size}


def _l1_ns(rec: Mapping) -> float | None:
    """The window's aligned contiguous chain's time per access (L1's), None if not recorded."""
    found = _rows(rec, "16 KiB window").get(f"{ch02.ALIGNED_CONTIGUOUS}, 16 KiB window")
    return found["ns_per_step"] if found else None


def _beyond_l1(r: Mapping, l1: float | None, unit: str = "sectors_per_step") -> float | None:
    """A cold row's ns per sector (or 64 B unit) beyond an L1 hit: its time per access less the
    window's L1 access, over the sectors it fetches per access."""
    if l1 is None or not r.get(unit):
        return None
    return (r["ns_per_step"] - l1) / r[unit]


SECTORS_BEYOND_L1 = "per sector beyond an L1 hit"


def table(rec: Mapping, title: str = "") -> Table:
    """The chase as a table: per pattern, ns per dependent access; on a GPU its ratio to the
    aligned contiguous chain of its size, the sectors each access fetches and the ns per sector
    beyond an L1 hit (`_beyond_l1`); on a CPU the lines and pages a call's accesses touch."""
    l1 = _l1_ns(rec) if rec["on_gpu"] else None
    shown = []
    for size in dict.fromkeys(r["size"] for r in rec["rows"]):
        found = _rows(rec, size)
        base = next((r for label, r in found.items() if label.startswith(ch02.ALIGNED_CONTIGUOUS)), None)
        for label, r in found.items():
            row = {"chain": label if rec["on_gpu"] else r["pattern"], "per access": r["ns_per_step"]}
            if rec["on_gpu"]:
                row["x aligned, contiguous"] = r["ns_per_step"] / base["ns_per_step"]
                row["32 B sectors per access"] = r.get("sectors_per_step")
                row[SECTORS_BEYOND_L1] = _beyond_l1(r, l1)
            elif "lines_per_step" in r:  # a CPU's: what each access needs, from its addresses
                row["64 B lines per access"] = r["lines_per_step"]
                row["distinct 4 KiB pages per access (a call)"] = r["pages_per_step"]
            shown.append(row)
    units = {"per access": "ns"} | ({"x aligned, contiguous": "x", SECTORS_BEYOND_L1: "ns"} if rec["on_gpu"] else {})
    title = f"{title}: " if title else ""
    return table_rows(shown, f"{title}a chain of dependent loads, {rec['rounds']} interleaved rounds, {clock_text(rec)}",
                      units)


def clock_text(rec: Mapping) -> str:
    """The clock the chase's times are read by (review 2026-12-05o 00-02 item 3: the title gave none)."""
    if rec["on_gpu"]:
        return "device time (CUDA events), L2 flushed before each call"
    return "wall clock of a Python loop (hot)"


ROUNDS_SPREAD = 1.25  # a chain whose slowest round is over this times its fastest: the note says so


def _noise(rec: Mapping) -> str:
    """' (noisy: ...)' naming each chain whose rounds' medians spread over ROUNDS_SPREAD, '' if none."""
    wide = [f"{r['pattern']} {r['rounds_spread']:.2f}x" for r in rec["rows"]
            if r.get("rounds_spread") and r["rounds_spread"] > ROUNDS_SPREAD]
    return f" Noisy: rounds spread {', '.join(wide)} (slowest over fastest); read these as rough." if wide else ""


def _against_sectors(name: str, got: float, sectors: float) -> str:
    """One pattern's cost beyond L1 against its sectors' ratio: in proportion within
    FLAT_PER_SECTOR, else more or less than its sectors account for."""
    if got > FLAT_PER_SECTOR * sectors:
        return f"{name} {got:.2f}x for {sectors:.2f}x the sectors: more than its sectors account for"
    if got * FLAT_PER_SECTOR < sectors:
        return f"{name} {got:.2f}x for {sectors:.2f}x the sectors: less than its sectors account for"
    return f"{name} {got:.2f}x for {sectors:.2f}x the sectors: in proportion"


def _seed_pair(rec: Mapping, cold: Mapping[str, Mapping]) -> str:
    """The seed's own comparison as a latency (review 2026-12-05o 00-02 item 3): misaligned every
    2nd element against aligned contiguous per dependent access, cold, one lap, beside the seed's
    (`ch02.SEED_NS`), and the same pair inside the 16 KiB window (L1) where it was timed."""
    worst, best = cold[ch02.MISALIGNED_STRIDED]["ns_per_step"], cold[ch02.ALIGNED_CONTIGUOUS]["ns_per_step"]
    window = _rows(rec, "16 KiB window")
    w_worst, w_best = (window.get(f"{k}, 16 KiB window") for k in (ch02.MISALIGNED_STRIDED, ch02.ALIGNED_CONTIGUOUS))
    in_l1 = f"; in L1 (the window) {w_worst['ns_per_step'] / w_best['ns_per_step']:.2f}x" if w_worst and w_best else ""
    return (f"The seed's pair as a latency, cold, one lap: {ch02.MISALIGNED_STRIDED} {worst:,.1f} ns against "
            f"{ch02.ALIGNED_CONTIGUOUS} {best:,.1f} ns per dependent access ({worst / best:.2f}x; the seed, on a "
            f"CPU: {ch02.SEED_NS[0]:g} against {ch02.SEED_NS[1]:g} ns, {ch02.SEED_RATIO:.2f}x){in_l1}. ")


AGREE = 1.05  # the two cold readings of a pattern agree within this, or their rounds' spread if wider


def latency_takeaway(rec: Mapping | None) -> str:
    """The seed's pair as a latency for the page's last lines (review 2026-12-05p 00-02 item 2: the
    takeaway named the sums alone, beside a chase that measured the seed's quantity): ' The optional
    chase, per dependent access, misaligned every 2nd element against aligned contiguous: 1.59x
    cold, 1.00x in L1.' from a GPU's rows; '' where no GPU chase ran
    (a CPU's chase follows random lines, not C5b's patterns)."""
    if not rec or not rec.get("on_gpu"):
        return ""
    cold, window = _rows(rec, COLD), _rows(rec, "16 KiB window")
    pair = (ch02.MISALIGNED_STRIDED, ch02.ALIGNED_CONTIGUOUS)
    if not all(k in cold for k in pair):
        return ""
    # review 2026-12-06z 00-02 items 1 and 7: say which pair, and that the chase is optional (the
    # notebook passes globals().get("chase_record"), None where that section was skipped)
    text = (f" The optional chase, per dependent access, {pair[0].replace(', ', ' ')} against "
            f"{pair[1].replace(', ', ' ')}: "
            f"{cold[pair[0]]['ns_per_step'] / cold[pair[1]]['ns_per_step']:.2f}x cold")
    w = [window.get(f"{k}, 16 KiB window") for k in pair]
    return text + (f", {w[0]['ns_per_step'] / w[1]['ns_per_step']:.2f}x in L1." if all(w) else ".")


def _cold_against_one_lap(rec: Mapping, cold: Mapping[str, Mapping]) -> str:
    """The check the chase carries (review 2026-12-05o 00-02 item 7): each of C5b's four patterns
    is read once, cold, two ways, by its cold chain and by its window's one-lap call, so the two
    times per access should agree. Review 2026-12-05p 00-02 item 1: a GPU's rounds agree within
    0.3%, so 'apart more than the rounds' spread' called readings 0.4% apart suspect; the
    tolerance is the larger of the spread and AGREE, over all four pairs, and twice the largest gap
    (either of two rows may be off by it) is printed as the line under which row differences are
    not read."""
    window = _rows(rec, "16 KiB window")
    pairs = []
    for label in ch02.C5_PATTERNS:
        w, c = window.get(f"{label}, 16 KiB window"), cold.get(label)
        if w and c and w.get("one_lap_ns_per_step"):
            pairs.append((label, c["ns_per_step"], w["one_lap_ns_per_step"],
                          [x for x in (c.get("rounds_spread"), w.get("one_lap_rounds_spread")) if x]))
    if not pairs:
        return ""
    label, a, b, _ = max(pairs, key=lambda p: max(p[1], p[2]) / min(p[1], p[2]))
    apart = max(a, b) / min(a, b)
    tolerance = max([AGREE, *(x for p in pairs for x in p[3])])
    said = (f"Each of C5b's four patterns read once, cold, two ways (its cold chain, its window's one-lap call): "
            f"the largest gap {100 * (apart - 1):.1f}% ({label}, {a:,.1f} against {b:,.1f} ns)")
    if apart > tolerance:
        return said + (f", over {100 * (tolerance - 1):.0f}% (5% or their rounds' spread, the larger): read the "
                       "cold rows as suspect. ")
    # two rows, each read within that gap: a difference between them under twice it is not read
    # (review 2026-12-05t 00-02 item 9a: 'under 3.0% are not read' left aligned and misaligned
    # every 2nd element, 3.7% apart, neither read nor inside the band)
    return said + (f": they agree, so row differences under {200 * (apart - 1):.1f}% (the gap on either of two "
                   "rows) are not read. ")


ROUNDING_NS = 1e-6  # a fitted cost closer to zero than this is zero (sector_model)
FIT_STRIDES = (8, 16)  # the chains fetching a sector a step: every 16th, each its 64 B unit's first; every 8th, half


def sector_model(cold: Mapping[str, Mapping], l1: float) -> dict | None:
    """Review 2026-12-05p 00-02 item 4: one cost per 32 B sector or per 64 B unit (the ranges the
    note printed) fit none of the H200's cold rows, where two costs might fit all of them: a 64 B
    unit's first sector (from DRAM?) and its second (from L2?). A cold row's time per access, as
    L1's plus those costs per access: `l1 + units * first + (sectors - units) * second`, with units
    and sectors the row's counted 64 B units and 32 B sectors per access (each unit touched has
    one first sector). The two costs are fitted by least squares to the chains at FIT_STRIDES
    (aligned and misaligned: a sector a step, every one a unit's first at stride 16, half at 8);
    every other cold row's time per access is predicted and checked, within AGREE or its rounds'
    spread (the larger). Arithmetic on the rows, nothing timed. Returns {'first', 'second',
    'fitted_on', 'checks': [(label, measured ns, predicted ns, within)]}, None where the fit rows
    are missing or cannot separate the two costs."""
    fit_labels = [_label(offset, stride) for stride in FIT_STRIDES for offset in (0, 1)]
    rows = [cold[k] for k in fit_labels if k in cold and cold[k].get("dram_units_per_step") is not None]
    if len(rows) < 2:
        return None
    xs = [(r["dram_units_per_step"], r["sectors_per_step"] - r["dram_units_per_step"]) for r in rows]
    ys = [r["ns_per_step"] - l1 for r in rows]
    aa, ab, bb = (sum(x[i] * x[j] for x in xs) for i, j in ((0, 0), (0, 1), (1, 1)))
    ay, by = (sum(x[i] * y for x, y in zip(xs, ys, strict=True)) for i in (0, 1))
    det = aa * bb - ab * ab
    if det <= 1e-9 * aa * bb:  # one kind of row only: the two costs are not separable
        return None
    first, second = (bb * ay - ab * by) / det, (aa * by - ab * ay) / det
    # a cost a hair from zero is rounding in the sums above: on the H100 machine (2026-12-05) a
    # fit whose second cost is exactly zero read 'a negative cost, no model' (cause there not
    # traced; here the same rows give exactly 0); -0.0 too, which would print as '-0 ns'
    first, second = (0.0 if abs(v) < ROUNDING_NS else v for v in (first, second))
    checks = []
    for label, r in cold.items():
        if label in fit_labels or r.get("dram_units_per_step") is None:
            continue
        units = r["dram_units_per_step"]
        predicted = l1 + units * first + (r["sectors_per_step"] - units) * second
        got = r["ns_per_step"]
        apart = max(got, predicted) / min(got, predicted) if min(got, predicted) > 0 else float("inf")
        checks.append((label, got, predicted, apart <= max(AGREE, r.get("rounds_spread") or 1.0)))
    return {"first": first, "second": second, "fitted_on": [r["pattern"] for r in rows], "checks": checks}


def _model_line(cold: Mapping[str, Mapping], l1: float) -> str:
    """The note's line beyond L1 (replacing the two one-cost ranges, review 2026-12-05p 00-02
    item 4): the two fitted costs, each other cold row measured against predicted, and which the
    model explains, all from `sector_model` on this run's rows."""
    fit = sector_model(cold, l1)
    if fit is None:
        return "Beyond L1: the every-8th and every-16th chains are missing, so no model of it"
    if fit["first"] < 0 or fit["second"] < 0:
        return (f"Beyond L1, a 64 B unit's first and second 32 B sectors fitted to the every-8th and every-16th "
                f"chains cost {fit['first']:,.0f} and {fit['second']:,.0f} ns: a negative cost, no model")
    pairs = "; ".join(f"{label} {got:,.1f}/{want:,.1f}" for label, got, want, _ in fit["checks"])
    missed = [label for label, *_, within in fit["checks"] if not within]
    tolerance = f"{100 * (AGREE - 1):.0f}%"
    verdict = (f"outside {tolerance} or its rounds' spread: {', '.join(missed)}, which the model does not explain"
               if missed else f"all within {tolerance}: it fits them")
    # what a '64 B unit' is, what the two costs might be and how a row is predicted, said where
    # they are used (review 2026-12-05q browser item 6)
    return (f"Beyond L1, a hypothesis fitted to the every-8th and every-16th chains: each 64 B unit "
            f"(two 32 B sectors) costs {fit['first']:,.0f} ns for the first sector read from it "
            f"(perhaps DRAM's latency) and {fit['second']:,.0f} ns for its second (perhaps L2's); "
            f"a row is predicted as the window's L1 access ({l1:,.1f} ns) plus its sectors' costs per "
            f"access; measured/predicted ns: {pairs}; {verdict}")


def note(rec: Mapping) -> str:
    """What the chase says, computed from its rows (nothing here is typed in). On a GPU: alignment
    alone and stride 2 per access beside their sectors (the deciding readings, first); then, less
    the window's L1 access, each against its sectors' ratio (`_against_sectors`: either way), the
    verdict 'the sectors set it' only where both are in proportion; beyond L1, two costs per 64 B
    unit fitted and checked on the other cold rows (`sector_model`); the window's ratios and its
    first lap's share. On a CPU: DRAM's cost beyond L1."""
    if not rec["on_gpu"]:
        steps = {r["pattern"]: r["ns_per_step"] for r in rec["rows"]}
        near, local, far = (steps[k] for k in (RANDOM_WINDOW, PAGE_BY_PAGE, RANDOM_DRAM))
        where = ch02.place(rec)  # DRAM in a record from before the label
        return (f"a dependent load of a random line took {near:,.0f} ns a step inside 16 KiB, {local:,.0f} ns over "
                f"{rec['dram_bytes'] >> 20} MiB ({where}-sized) page by page, {far:,.0f} ns in random pages: a new line "
                f"of a page {local - near:,.0f} ns more than an L1 hit (prefetchers may hide part of {where}'s latency), random "
                f"pages {far - local:,.0f} ns more again (page-table walks, the DTLB misses C9's seed counts: a "
                "hypothesis). The Python loop's own cost per step cancels in each difference; it is too "
                "slow to tell C5b's sequential patterns apart, so C5b's sums attribute the cost on a CPU." + _noise(rec))
    cold = _rows(rec, COLD)
    a, m, s = (cold[k] for k in (ch02.ALIGNED_CONTIGUOUS, ch02.MISALIGNED_CONTIGUOUS, ch02.ALIGNED_STRIDED))
    sm, ss = m["sectors_per_step"] / a["sectors_per_step"], s["sectors_per_step"] / a["sectors_per_step"]
    text = _seed_pair(rec, cold) + _cold_against_one_lap(rec, cold)
    text += (f"Cold, one lap (a sector's later loads hit L1), per access: alignment alone "
             f"{m['ns_per_step'] / a['ns_per_step']:.2f}x for {sm:.2f}x the sectors, stride "
             f"{ch02.PATTERN_STRIDE} {s['ns_per_step'] / a['ns_per_step']:.2f}x for {ss:.2f}x. ")
    l1 = _l1_ns(rec)
    if l1 is None:
        return text + "No window was timed, so no L1 time to take out." + _noise(rec)
    if a["ns_per_step"] <= l1:
        return (text + f"The aligned cold chain ran no slower than the window's L1 access ({l1:,.1f} ns): "
                "nothing beyond L1 to attribute (L1 may keep its lines across calls, which the flush of L2 "
                "does not reach: a hypothesis)." + _noise(rec))
    beyond = a["ns_per_step"] - l1
    parts = [_against_sectors("alignment alone", (m["ns_per_step"] - l1) / beyond, sm),
             _against_sectors(f"stride {ch02.PATTERN_STRIDE}", (s["ns_per_step"] - l1) / beyond, ss)]
    verdict = ("so the sectors fetched, not alignment, set the cost" if all(p.endswith("in proportion") for p in parts)
               else "so the sectors alone do not set it here")
    text += f"Less the window's L1 access ({l1:,.1f} ns): {'; '.join(parts)}; {verdict}. "
    text += _model_line(cold, l1)
    window = _rows(rec, "16 KiB window")
    wa, wm, ws = (window[f"{k}, 16 KiB window"] for k in (ch02.ALIGNED_CONTIGUOUS, ch02.MISALIGNED_CONTIGUOUS,
                                                           ch02.ALIGNED_STRIDED))
    share = wa.get("first_lap_share")
    misses = f"the first lap's misses, {share:.0%} of a call," if share is not None else "the first lap's misses"
    text += (f". In a 16 KiB window (L1: {wa['laps']} laps less a one-lap call, so {misses} drop out): alignment alone {wm['ns_per_step'] / wa['ns_per_step']:.2f}x, "
             f"stride {ch02.PATTERN_STRIDE} {ws['ns_per_step'] / wa['ns_per_step']:.2f}x per access")
    return text + "." + _noise(rec)


def recorded_table(recorded: object) -> Table:
    """The reference GPU's chase as recorded (its label says where and when), its note computed
    from its own rows; where nothing is recorded yet, one row that says so (the chase is new
    with issue 38's C5b bullet: the next GPU run of the chapter records it)."""
    value = getattr(recorded, "value", None)
    label = getattr(recorded, "label", "nothing recorded")
    if not value:
        return table_rows([{"the reference GPU's chase": f"{label} (the chapter's next GPU run records it)"}])
    return table(value, f"the reference GPU's chase, {label}").note(note(value))
