"""Elementwise kernels judged in bytes: a Triton add, and a fused add-multiply-SiLU chain.

An elementwise op does one or two flops per element it loads, so its speed limit is memory
bandwidth, not arithmetic: it is judged in GB/s against this machine's copy ceiling, never in
TFLOP/s. What fusion saves is memory traffic. `silu((x + y) * z)` in eager PyTorch is three
kernels, and each writes its result to memory and the next reads it back:

    add: read x, y, write t1     mul: read t1, z, write t2     silu: read t2, write out

8 tensors' worth of bytes. One fused kernel reads x, y, z and writes out: 4. The fused
kernel should take about half the time.

- On a GPU: `add` and `fused_chain` are Triton kernels (Triton is imported only when one is
  called, so this module imports on a CPU-only machine without Triton).
- On any device: `chain_eager` is PyTorch's three kernels; `chain_blocked` is a CPU analogue
  of fusion, the same three ops on blocks small enough that the intermediates stay in the
  cache, so main memory sees only x, y, z and out.
"""

# No `from __future__ import annotations` here: Triton reads the kernels' `tl.constexpr`
# annotations, which must be real objects, not strings.
from collections.abc import Callable
from functools import lru_cache

import torch

from labkit.measure import clocks

BLOCK = 1024  # elements per Triton program: 4 KB of float32 in, enough loads in flight
CPU_BLOCK_ELEMENTS = 32 * 1024  # 128 KB per float32 operand: x, y, z and two temporaries fit in L2

# Bytes each way of computing moves per element, in units of the element size.
ADD_TENSORS = 3  # read x, y; write out
CHAIN_EAGER_TENSORS = 8  # add (3) + mul (3) + silu (2)
CHAIN_FUSED_TENSORS = 4  # read x, y, z; write out

# Triton specialises an integer argument (the element count n) that is divisible by 16 and
# then knows every block starts 16-element aligned: its loads and stores compile to 128-bit
# vector instructions. For any other n it cannot prove that and issues scalar (width 1) loads.
TRITON_DIVISIBILITY = 16
SMALLEST_SWEEP_ELEMENTS = 2**20  # below ~1M elements an add is a few microseconds: launch-bound

# The C19 quiz's classes of Triton's speed-up over PyTorch's add (Triton time / PyTorch time).
ADD_SPEED_CLASSES = ("yes, about 2.3x as the seed says", "somewhat (1.1x to 1.8x)",
                     "no: within 10% of each other", "no: Triton is more than 10% slower")


def add_speed_class(speedup: float) -> str:
    """The quiz's class for a measured speed-up of Triton's add over PyTorch's (> 1: Triton faster).

    The classes cover every ratio with no gap: a 0.36x result is 'more than 10% slower',
    never 'within 10%'.
    """
    if not speedup > 0:
        raise ValueError(f"a speed-up is a positive ratio of times, got {speedup!r}")
    if speedup > 1.8:
        return ADD_SPEED_CLASSES[0]
    if speedup > 1.1:
        return ADD_SPEED_CLASSES[1]
    if speedup >= 1 / 1.1:
        return ADD_SPEED_CLASSES[2]
    return ADD_SPEED_CLASSES[3]


def aligned_sizes(max_elements: int, smallest: int = SMALLEST_SWEEP_ELEMENTS) -> list[int]:
    """Powers of two from `smallest` up to `max_elements`, as Triton's vector-add tutorial sweeps.

    A power of two (>= 16) is a multiple of 16, so Triton sees an aligned element count at
    every size; the largest sizes are far bigger than any cache, so they measure memory.
    """
    if smallest < TRITON_DIVISIBILITY or smallest & (smallest - 1):
        raise ValueError(f"smallest must be a power of two >= {TRITON_DIVISIBILITY}, got {smallest}")
    if max_elements < smallest:
        raise ValueError(f"max_elements {max_elements} is below the smallest size {smallest}")
    out, n = [], smallest
    while n <= max_elements:
        out.append(n)
        n *= 2
    return out


def is_aligned(numel: int) -> bool:
    """Whether Triton can specialise this element count as divisible by 16 (vector loads)."""
    return numel % TRITON_DIVISIBILITY == 0


def triton_available() -> bool:
    """True when a CUDA GPU is usable and Triton imports."""
    if not torch.cuda.is_available():
        return False
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def bytes_moved(numel: int, element_size: int, tensors: int) -> int:
    """Bytes read plus written by an elementwise op touching `tensors` arrays of numel elements."""
    if numel < 0 or element_size <= 0 or tensors <= 0:
        raise ValueError(f"need numel >= 0, element_size > 0, tensors > 0; got {numel}, "
                         f"{element_size}, {tensors}")
    return numel * element_size * tensors


def implied_bandwidth_gbps(tflops: float, dtype: torch.dtype, tensors: int = ADD_TENSORS,
                           flops_per_element: int = 1) -> float:
    """The memory bandwidth a 'TFLOP/s' figure for an elementwise op would need, in GB/s.

    An add does one flop per element and moves `tensors` elements' worth of bytes, so
    X TFLOP/s means X * 1e12 elements per second, each moving tensors * itemsize bytes.
    """
    itemsize = torch.empty((), dtype=dtype).element_size()
    return tflops * 1e12 / flops_per_element * tensors * itemsize / 1e9


def _check_operands(*tensors: torch.Tensor, gpu: bool) -> None:
    first = tensors[0]
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"expected tensors, got {type(t).__name__}")
        if t.shape != first.shape or t.dtype != first.dtype or t.device != first.device:
            raise ValueError("all operands need the same shape, dtype and device; got "
                             + ", ".join(f"{tuple(u.shape)} {u.dtype} {u.device}" for u in tensors))
    if not first.is_floating_point():
        raise ValueError(f"expected floating-point tensors, got {first.dtype}")
    if gpu:
        if not triton_available():
            raise RuntimeError("the Triton kernels need a CUDA GPU and the triton package; on "
                               "this machine use chain_eager / chain_blocked, or show the "
                               "recorded result")
        if first.device.type != "cuda":
            raise ValueError(f"the Triton kernels take CUDA tensors, got {first.device}; "
                             "move them with .cuda()")


@lru_cache(maxsize=1)
def _kernels() -> tuple:
    """Compile-on-first-use Triton kernels (imports triton here, never at module import)."""
    global tl  # the kernels look `tl` up in this module's globals when Triton compiles them
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):  # noqa: ANN001, ANN202
        # The seed's kernel (section 2.4): each program adds one block; the mask guards the tail.
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        inside = offsets < n
        x = tl.load(x_ptr + offsets, mask=inside)
        y = tl.load(y_ptr + offsets, mask=inside)
        tl.store(out_ptr + offsets, x + y, mask=inside)

    @triton.jit
    def chain_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):  # noqa: ANN001, ANN202
        # silu((x + y) * z) in registers: three loads, one store, no intermediate in memory.
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        inside = offsets < n
        x = tl.load(x_ptr + offsets, mask=inside).to(tl.float32)
        y = tl.load(y_ptr + offsets, mask=inside).to(tl.float32)
        z = tl.load(z_ptr + offsets, mask=inside).to(tl.float32)
        t = (x + y) * z
        out = t * tl.sigmoid(t)
        tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=inside)

    return add_kernel, chain_kernel


def _grid(n: int) -> tuple[int]:
    return ((n + BLOCK - 1) // BLOCK,)


def add(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """x + y with the Triton kernel (contiguous CUDA tensors of one shape and dtype)."""
    _check_operands(x, y, gpu=True)
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x) if out is None else out
    add_kernel, _ = _kernels()
    add_kernel[_grid(x.numel())](x, y, out, x.numel(), BLOCK_SIZE=BLOCK)
    return out


def fused_chain(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor,
                out: torch.Tensor | None = None) -> torch.Tensor:
    """silu((x + y) * z) in one Triton kernel (computed in float32, stored in x's dtype)."""
    _check_operands(x, y, z, gpu=True)
    x, y, z = x.contiguous(), y.contiguous(), z.contiguous()
    out = torch.empty_like(x) if out is None else out
    _, chain_kernel = _kernels()
    chain_kernel[_grid(x.numel())](x, y, z, out, x.numel(), BLOCK_SIZE=BLOCK)
    return out


def add_sweep(counts: list[int], dtype: torch.dtype = torch.float16, rounds: int = 3,
              rep_ms: float = 60.0) -> list[dict]:
    """Triton's add against PyTorch's at each element count, interleaved (bench.compare).

    One row per count: GB/s of each (3 tensors' worth of bytes), the speed-up (PyTorch time /
    Triton time, > 1 when Triton is faster) and its per-round spread, and whether the count
    is aligned for Triton. Times are device time (the harness's default clock: at small sizes
    Triton's Python launcher takes longer than the kernel, and the events would otherwise
    count it), with each add's host launch per call beside it; at the smallest count, also a
    loop of each add timed on the wall clock (`timed_loop_row`). Needs a CUDA GPU with Triton.
    """
    from labkit.measure import bench

    if not triton_available():
        raise RuntimeError("the add sweep needs a CUDA GPU and Triton; on a CPU show the "
                           "recorded sweep")
    rows = []
    for n in counts:
        a, b = (torch.randn(int(n), device="cuda", dtype=dtype) for _ in range(2))
        out_triton, out_torch = torch.empty_like(a), torch.empty_like(a)
        torch.testing.assert_close(add(a, b, out_triton), a + b)
        moved = bytes_moved(int(n), a.element_size(), ADD_TENSORS)
        adds = {"Triton add": lambda a=a, b=b, o=out_triton: add(a, b, o),
                "PyTorch add": lambda a=a, b=b, o=out_torch: torch.add(a, b, out=o)}
        cmp = bench.compare(adds, baseline="PyTorch add", rounds=rounds, rep_ms=rep_ms,
                            bytes_moved=moved, progress=False)
        triton_t, torch_t = cmp["Triton add"].timing, cmp["PyTorch add"].timing
        ratio = cmp["Triton add"]
        rows.append({"elements": int(n), "aligned": is_aligned(int(n)),
                     "triton_gbps": triton_t.gbps, "torch_gbps": torch_t.gbps,
                     # ratio is Triton's time / PyTorch's: its inverse is the speed-up
                     "speedup": 1 / ratio.ratio,
                     "speedup_iqr": [1 / ratio.ratio_q75, 1 / ratio.ratio_q25],
                     "triton_noisy": bool(triton_t.noisy), "torch_noisy": bool(torch_t.noisy),
                     "flags": cmp.flags(),  # C19's evidence for the trust rule, with their sizes
                     # the clock the times read (device time by default) and the host's launch
                     "clock": triton_t.clock, "triton_us": triton_t.median_s * 1e6,
                     "torch_us": torch_t.median_s * 1e6,
                     "triton_host_us": _us(triton_t.host_s), "torch_host_us": _us(torch_t.host_s),
                     "triton_launch_bound": triton_t.launch_bound,
                     "torch_launch_bound": torch_t.launch_bound})
        if n == counts[0]:  # the smallest size: a loop of such adds, timed (review 2026-12-03h item 4)
            row = rows[-1]
            row.update(timed_loop_row(adds, rounds, rep_ms))
            if any(disturbed_by(row[f"{k}_loop_us"], row[f"{k}_host_us"], row[f"{k}_us"],
                                rounds=row[f"{k}_loop_rounds_us"]) for k in ("triton", "torch")):
                # timed once more where the host disturbed it (review 2026-12-04k item 1)
                row.update(timed_loop_row(adds, rounds, rep_ms), loop_retimed=True)
        del a, b, out_triton, out_torch
    return rows


# A loop of back-to-back calls costs about the larger of each call's host launch and its device
# time (its pace); a loop timed well above it whose rounds disagree was disturbed by the host, not
# paced by the code. Review 2026-12-04k item 1: the 13:57 H200 page printed eager's loop at
# 1.02 ms per call beside a 238 us host launch and 29 us of device time, and the add loop at 86 us
# per add beside 47 + 3.4 us; the previous record read 210 us. Review 2026-12-05o 03-04 item 3:
# one rule with chapter 03 (labkit.measure's `clocks.disturbed_by`), its rounds deciding.
DISTURBED_LOOP_FACTOR = clocks.DISTURBED_LOOP_FACTOR
disturbed_by = clocks.disturbed_by


def timed_loop_row(adds: dict[str, Callable[[], object]], rounds: int, rep_ms: float) -> dict:
    """A loop of each add, timed rather than computed from device time and host launch: rounds of
    back-to-back calls between two syncs (`clocks.interleaved_loops`: no per-call CUDA event adds
    its own microseconds, review 2026-12-05w item 2), interleaved. Keys: loop_speedup (PyTorch's
    loop time / Triton's, > 1 when Triton's loop is faster), its per-round spread
    loop_speedup_iqr, loop_flags (the trust rule's evidence), each loop's time per add
    (triton_loop_us, torch_loop_us) and per round (triton_loop_rounds_us, torch_loop_rounds_us:
    what tells a disturbed host, `disturbed_by`)."""
    from labkit.measure import clocks

    loop = clocks.interleaved_loops(adds, "PyTorch add", rounds, rep_ms, clocks.loop_sync())
    rows = {r["variant"]: r for r in loop["rows"]}
    triton, torch_ = rows["Triton add"], rows["PyTorch add"]
    return {"loop_speedup": 1 / triton["ratio"], "loop_speedup_iqr": [1 / triton["ratio_q75"], 1 / triton["ratio_q25"]],
            "loop_flags": loop["flags"], "loop_rounds": loop["rounds"],
            "triton_loop_us": triton["median_s"] * 1e6, "torch_loop_us": torch_["median_s"] * 1e6,
            "triton_loop_rounds_us": [t * 1e6 for t in triton["round_medians_s"]],
            "torch_loop_rounds_us": [t * 1e6 for t in torch_["round_medians_s"]]}


def _us(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e6


def chain_eager(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """silu((x + y) * z) the way eager PyTorch runs it: three kernels, two intermediates."""
    _check_operands(x, y, z, gpu=False)
    return torch.nn.functional.silu((x + y) * z)


def chain_blocked(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor,
                  block: int = CPU_BLOCK_ELEMENTS) -> torch.Tensor:
    """silu((x + y) * z) block by block, so the intermediates never leave the cache.

    The CPU analogue of a fused kernel: the same three ops, but each runs on a block small
    enough to stay in L2 before the next op reads it, so main memory sees x, y, z and out
    only (4 tensors' worth of bytes instead of 8).
    """
    _check_operands(x, y, z, gpu=False)
    if block < 1:
        raise ValueError(f"block must be a positive number of elements, got {block}")
    flat = [t.reshape(-1) for t in (x, y, z)]
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    out_flat = out.view(-1)
    for start in range(0, out_flat.numel(), block):
        stop = min(start + block, out_flat.numel())
        t = out_flat[start:stop]  # the block of the result; the next two ops find it in cache
        torch.add(flat[0][start:stop], flat[1][start:stop], out=t)
        t.mul_(flat[2][start:stop])
        torch.nn.functional.silu(t, inplace=True)
    return out


def paths(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> dict[str, Callable[[], object]]:
    """The ways this machine can compute the chain, by name, for labkit.measure.bench.compare."""
    if triton_available() and x.device.type == "cuda":
        out = torch.empty_like(x)
        return {"eager PyTorch (3 kernels)": lambda: chain_eager(x, y, z),
                "fused Triton kernel": lambda: fused_chain(x, y, z, out)}
    return {"eager PyTorch (3 ops)": lambda: chain_eager(x, y, z),
            "blocked (in cache)": lambda: chain_blocked(x, y, z)}
