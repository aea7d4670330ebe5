"""A stride-aware kernel against copy-then-kernel: y = x * scale + shift on a transposed view.

The seed (§3.2) says a kernel that takes strides as arguments beats calling .contiguous()
and then a kernel written for contiguous memory. Chapter 02 measures it both ways:

- on a GPU with Triton: `strided_scale_shift` reads the view through its strides (one
  pass: read N, write N), against `.contiguous()` (read N, write N) followed by
  `contiguous_scale_shift` (read N, write N);
- on any device with PyTorch's own elementwise kernels, which are stride-aware too
  (TensorIterator walks the view's strides), against .contiguous() then the same op.

Triton is imported only when a Triton kernel is asked for, so this module imports on a
CPU-only machine without Triton.
"""

# No `from __future__ import annotations` here: Triton reads the kernels' `tl.constexpr`
# annotations, which must be real objects, not strings.
from collections.abc import Callable
from functools import lru_cache

import torch

BLOCK_ROWS = 64  # a 64x64 tile: each program reads 16 KB of float32, enough to hide latency
BLOCK_COLS = 64
BLOCK_CONTIGUOUS = 1024  # elements per program of the 1-D contiguous kernel


def triton_available() -> bool:
    """True when a CUDA GPU is usable and Triton imports."""
    if not torch.cuda.is_available():
        return False
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def _require_triton(x: torch.Tensor) -> None:
    if not triton_available():
        raise RuntimeError("the Triton kernels need a CUDA GPU and the triton package; "
                           "on this machine use the torch_* paths or show the recorded result")
    if not isinstance(x, torch.Tensor) or x.device.type != "cuda":
        raise ValueError(f"the Triton kernels take a CUDA tensor, got "
                         f"{x.device if isinstance(x, torch.Tensor) else type(x).__name__}; "
                         "move it with x.cuda()")


def _check_matrix(x: torch.Tensor) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"expected a tensor, got {type(x).__name__}")
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor (a matrix or its transpose), got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"expected a floating-point tensor, got {x.dtype}")


@lru_cache(maxsize=1)
def _kernels() -> tuple:
    """Compile-on-first-use Triton kernels (imports triton here, never at module import)."""
    global tl  # the kernels look `tl` up in this module's globals when Triton compiles them
    import triton
    import triton.language as tl

    @triton.jit
    def strided_scale_shift(x_ptr, out_ptr, rows, cols, stride_x_row, stride_x_col,  # noqa: ANN001, ANN202
                            stride_out_row, scale, shift, X_UNIT_STRIDE_DIM: tl.constexpr,  # noqa: ANN001
                            BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
        # One tile per program; element (r, c) of the view lives at r*stride_row + c*stride_col.
        # X_UNIT_STRIDE_DIM tells the compiler which stride is 1 (0: rows, as in a transposed
        # view; 1: columns; -1: neither), so it can coalesce the loads along that direction
        # (and the stores along the output's rows) instead of guessing.
        r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
        c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
        inside = (r < rows) & (c < cols)
        if X_UNIT_STRIDE_DIM == 0:
            x_offsets = r + c * stride_x_col
        elif X_UNIT_STRIDE_DIM == 1:
            x_offsets = r * stride_x_row + c
        else:
            x_offsets = r * stride_x_row + c * stride_x_col
        x = tl.load(x_ptr + x_offsets, mask=inside)
        tl.store(out_ptr + r * stride_out_row + c, x * scale + shift, mask=inside)

    @triton.jit
    def contiguous_scale_shift(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):  # noqa: ANN001, ANN202
        # Written for contiguous memory only: element i is at x_ptr + i.
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        inside = offsets < n
        x = tl.load(x_ptr + offsets, mask=inside)
        tl.store(out_ptr + offsets, x * scale + shift, mask=inside)

    return triton, strided_scale_shift, contiguous_scale_shift


def unit_stride_dim(x: torch.Tensor) -> int:
    """Which dim of a 2-D view has stride 1: 1 (rows stored in order), 0 (a transposed
    view), or -1 when neither does (e.g. x[::2, ::2])."""
    _check_matrix(x)
    if x.stride(1) == 1:
        return 1
    return 0 if x.stride(0) == 1 else -1


def triton_strided(x: torch.Tensor, out: torch.Tensor, scale: float = 2.0,
                   shift: float = 1.0) -> torch.Tensor:
    """out = x * scale + shift, reading the 2-D view x through its strides (no copy)."""
    _check_matrix(x)
    _require_triton(x)
    _check_out(x, out)
    triton, strided, _ = _kernels()
    rows, cols = x.shape
    grid = (triton.cdiv(rows, BLOCK_ROWS), triton.cdiv(cols, BLOCK_COLS))
    strided[grid](x, out, rows, cols, x.stride(0), x.stride(1), out.stride(0), scale, shift,
                  X_UNIT_STRIDE_DIM=unit_stride_dim(x), BLOCK_R=BLOCK_ROWS, BLOCK_C=BLOCK_COLS)
    return out


def triton_contiguous(x: torch.Tensor, out: torch.Tensor, scale: float = 2.0,
                      shift: float = 1.0) -> torch.Tensor:
    """out = x * scale + shift for a contiguous x only (refuses a strided view)."""
    _check_matrix(x)
    _require_triton(x)
    _check_out(x, out)
    if not x.is_contiguous():
        raise ValueError(f"triton_contiguous reads memory in order and needs a contiguous x, got "
                         f"strides {x.stride()}; call x.contiguous() first or use triton_strided")
    triton, _, contiguous = _kernels()
    n = x.numel()
    contiguous[(triton.cdiv(n, BLOCK_CONTIGUOUS),)](x, out, n, scale, shift, BLOCK=BLOCK_CONTIGUOUS)
    return out


def triton_copy_then_kernel(x: torch.Tensor, out: torch.Tensor, scale: float = 2.0,
                            shift: float = 1.0) -> torch.Tensor:
    """What the seed's "before" does: x.contiguous() (a copy), then the contiguous kernel."""
    return triton_contiguous(x.contiguous(), out, scale, shift)


def torch_strided(x: torch.Tensor, out: torch.Tensor, scale: float = 2.0,
                  shift: float = 1.0) -> torch.Tensor:
    """PyTorch's own stride-aware path: its elementwise kernels read the view directly."""
    _check_matrix(x)
    _check_out(x, out)
    return torch.add(torch.mul(x, scale, out=out), shift, out=out)


def torch_copy_then_kernel(x: torch.Tensor, out: torch.Tensor, scale: float = 2.0,
                           shift: float = 1.0) -> torch.Tensor:
    """x.contiguous() first, then the same elementwise ops on contiguous memory."""
    return torch_strided(x.contiguous(), out, scale, shift)


def _check_out(x: torch.Tensor, out: torch.Tensor) -> None:
    if not isinstance(out, torch.Tensor) or out.shape != x.shape or out.dtype != x.dtype \
            or out.device != x.device or not out.is_contiguous():
        raise ValueError("out must be a contiguous tensor with x's shape, dtype and device; "
                         "make it with torch.empty(x.shape, dtype=x.dtype, device=x.device)")


# Passes over N bytes each path makes, by the kernels that run it. The Triton kernel does
# y = x * scale + shift in one pass (read x, write y); PyTorch's path is two ops, mul into
# out then add in place (read x, write out; read out, write out); copy-then adds the copy's
# read and write to either.
PASSES = {"triton": {"strided": 2, "copy_then_kernel": 4},
          "torch-elementwise": {"strided": 4, "copy_then_kernel": 6}}


def bytes_moved(x: torch.Tensor, path: str, kernel: str = "triton") -> int:
    """Bytes read plus written by one call of a path, for the kernels that run it:
    Triton 'strided' 2N, 'copy_then_kernel' 4N; PyTorch's two elementwise ops 4N and 6N."""
    if kernel not in PASSES:
        raise ValueError(f"kernel must be one of {list(PASSES)}, got {kernel!r}")
    passes = PASSES[kernel]
    if path not in passes:
        raise ValueError(f"path must be one of {list(passes)}, got {path!r}")
    return passes[path] * x.numel() * x.element_size()


def paths(x: torch.Tensor, out: torch.Tensor) -> tuple[str, dict[str, Callable[[], torch.Tensor]]]:
    """The two variants to time on x's device: ('triton', {...}) on a GPU with Triton,
    else ('torch-elementwise', {...}). Keys: 'stride-aware', 'contiguous() then kernel'."""
    if x.device.type == "cuda" and triton_available():
        return "triton", {"stride-aware": lambda: triton_strided(x, out),
                          "contiguous() then kernel": lambda: triton_copy_then_kernel(x, out)}
    return "torch-elementwise", {"stride-aware": lambda: torch_strided(x, out),
                                 "contiguous() then kernel": lambda: torch_copy_then_kernel(x, out)}
