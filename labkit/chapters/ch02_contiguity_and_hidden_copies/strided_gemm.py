"""A GEMM that takes strides (Triton), for claim C10: does it beat torch.matmul on a transposed view?

The seed (§3.2) says default `torch.matmul` copies a transposed operand (8 MB for 1024x1024)
and that a custom GEMM taking strides as arguments avoids that copy and wins. Chapter 02
measures exactly that comparison on a GPU:

- `matmul(a, b)`: C = A @ B where A and B are any 2-D views; element (i, k) of A is read at
  a_ptr + i*stride_am + k*stride_ak, so a transposed view costs no copy (the classic tiled
  GEMM of Triton's tutorial, with the strides passed in);
- against `torch.matmul` on the same transposed view, and `.contiguous()` then `torch.matmul`.

float32 runs in IEEE float32 unless torch itself allows TF32 for matmuls, so both sides do
the same math. `copies_inside(fn)` names the copies the profiler sees at every depth (the
copy detector of `labkit.measure.copies` sees only the top-level aten ops).

Triton is imported only when the kernel is first used, so this module imports on a
CPU-only machine.
"""

# No `from __future__ import annotations`: Triton reads the kernel's `tl.constexpr`
# annotations, which must be real objects, not strings.
from collections.abc import Callable
from functools import lru_cache

import torch

from labkit.chapters.ch02_contiguity_and_hidden_copies import strided_kernels

DTYPES = (torch.float16, torch.bfloat16, torch.float32)
# One tile shape per kind of math, chosen for an H100/H200-class GPU (fixed, not autotuned,
# so a timing measures the kernel and never the tuner). fp16/bf16: 128x128 tiles, 64-deep;
# IEEE float32 has no tensor cores and wants smaller tiles.
TILES = {"half": (128, 128, 64, 8, 3), "float32": (64, 64, 32, 4, 3)}  # BM, BN, BK, warps, stages
GROUP_M = 8  # programs walk tiles in groups of 8 rows so neighbours reuse B's columns in L2
COPY_OPS = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy")


def _check(a: torch.Tensor, b: torch.Tensor) -> None:
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a tensor, got {type(t).__name__}")
        if t.dim() != 2:
            raise ValueError(f"{name} must be 2-D (a matrix or a view of one), got shape {tuple(t.shape)}")
        if t.dtype not in DTYPES:
            raise ValueError(f"{name} has dtype {t.dtype}; the GEMM takes {[str(d) for d in DTYPES]}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner sizes differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}; "
                         "a's columns must equal b's rows")
    if a.dtype != b.dtype or a.device != b.device:
        raise ValueError(f"a and b must share dtype and device, got {a.dtype} on {a.device} and "
                         f"{b.dtype} on {b.device}")


@lru_cache(maxsize=1)
def _kernel() -> tuple:
    """Compile-on-first-use Triton GEMM (imports triton here, never at module import)."""
    global tl  # the kernel looks `tl` up in this module's globals when Triton compiles it
    import triton
    import triton.language as tl

    @triton.jit
    def strided_gemm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak,  # noqa: ANN001, ANN202
                     stride_bk, stride_bn, stride_cm, stride_cn,  # noqa: ANN001
                     IEEE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr, GROUP: tl.constexpr):
        # Which (row, column) tile of C this program computes, grouped for L2 reuse.
        pid = tl.program_id(0)
        tiles_m, tiles_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
        in_group = GROUP * tiles_n
        first_m = (pid // in_group) * GROUP
        group_rows = min(tiles_m - first_m, GROUP)
        tile_m = first_m + (pid % in_group) % group_rows
        tile_n = (pid % in_group) // group_rows
        rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
        ks = tl.arange(0, BLOCK_K)
        # The strides are arguments: A[i, k] is at a_ptr + i*stride_am + k*stride_ak, whatever
        # the view. A transposed view just swaps the two numbers; nothing is copied.
        a_tile = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
        b_tile = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for step in range(0, tl.cdiv(K, BLOCK_K)):
            left = K - step * BLOCK_K  # the last step may be a partial tile: mask it
            a = tl.load(a_tile, mask=(rows[:, None] < M) & (ks[None, :] < left), other=0.0)
            b = tl.load(b_tile, mask=(ks[:, None] < left) & (cols[None, :] < N), other=0.0)
            if IEEE:
                acc = tl.dot(a, b, acc, input_precision="ieee")
            else:
                acc = tl.dot(a, b, acc)
            a_tile += BLOCK_K * stride_ak
            b_tile += BLOCK_K * stride_bk
        c = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
        tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))

    return triton, strided_gemm


def _ieee_float32(dtype: torch.dtype) -> bool:
    """True when float32 must be computed in IEEE float32: torch's matmuls do so unless TF32
    is allowed (torch.backends.cuda.matmul.allow_tf32 / set_float32_matmul_precision)."""
    tf32 = bool(torch.backends.cuda.matmul.allow_tf32) or torch.get_float32_matmul_precision() != "highest"
    return dtype == torch.float32 and not tf32


def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """C = a @ b with a Triton GEMM that reads a and b through their strides (no copy)."""
    _check(a, b)
    if not strided_kernels.triton_available():
        raise RuntimeError("the strided GEMM needs a CUDA GPU and the triton package; on this "
                           "machine use torch.matmul, or show the recorded GPU result")
    if a.device.type != "cuda":
        raise ValueError(f"the strided GEMM takes CUDA tensors, got {a.device}; move them with .cuda()")
    M, K = a.shape
    N = b.shape[1]
    if out is None:
        out = torch.empty(M, N, device=a.device, dtype=a.dtype)
    elif out.shape != (M, N) or out.dtype != a.dtype or out.device != a.device:
        raise ValueError(f"out must be a ({M}, {N}) {a.dtype} tensor on {a.device}, got "
                         f"{tuple(out.shape)} {out.dtype} on {out.device}")
    triton, kernel = _kernel()
    block_m, block_n, block_k, warps, stages = TILES["float32" if a.dtype == torch.float32 else "half"]
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n),)
    kernel[grid](a, b, out, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                 out.stride(0), out.stride(1), IEEE=_ieee_float32(a.dtype), BLOCK_M=block_m,
                 BLOCK_N=block_n, BLOCK_K=block_k, GROUP=GROUP_M, num_warps=warps,
                 num_stages=stages)
    return out


def paths(a_view: torch.Tensor, b: torch.Tensor) -> dict[str, Callable[[], torch.Tensor]]:
    """The variants C10 times, all computing a_view @ b. On a GPU with Triton: the stride-aware
    GEMM on the view and after a copy; always: torch.matmul on the view and after a copy."""
    found: dict[str, Callable[[], torch.Tensor]] = {}
    if a_view.device.type == "cuda" and strided_kernels.triton_available():
        found["stride-aware GEMM on the view"] = lambda: matmul(a_view, b)
        found["contiguous() then stride-aware GEMM"] = lambda: matmul(a_view.contiguous(), b)
    found["torch.matmul on the view"] = lambda: torch.matmul(a_view, b)
    found["contiguous() then torch.matmul"] = lambda: torch.matmul(a_view.contiguous(), b)
    return found


def copies_inside(fn: Callable[[], object]) -> list[str]:
    """The copy ops the profiler saw while fn ran, nested ones included, e.g. ['aten::copy_'].

    The copy detector (labkit.measure.copies) sits at the dispatcher's top level, so a copy that an
    op makes inside its own kernel (mm calling .contiguous() on a stepped view) escapes it;
    the profiler records every aten op at every depth.
    """
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities) as profile:
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    return sorted(e.name for e in profile.events() if e.name in COPY_OPS)
