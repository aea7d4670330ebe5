"""ResNet-50's 1x1 convolutions as GEMMs over NHWC activations, with the bias, the residual
add and the ReLU in the GEMM's epilogue: a pure-torch reference, a Triton kernel, and the
folded network rebuilt on either (or on FP8 GEMMs, `fp8.Fp8Gemm`).

Why by hand. On CUDA a convolution is a cuDNN call that Inductor treats as an extern kernel:
it cannot fuse the folded bias, the residual add and the ReLU after it, so each Bottleneck's
tail is one or two extra passes over the activations (the H200 profile of the top rung spent
43% of its device time in elementwise kernels). A 1x1 convolution over a channels_last
tensor is a GEMM with no copy: the NCHW tensor's NHWC memory *is* the [N*H*W, Cin] matrix.
A GEMM kernel that adds the bias and the residual and clamps at zero before it stores its
tile reads the residual once and writes the result once, and the separate passes disappear.
The Triton kernel follows Triton's matmul tutorial (grouped tile order for L2 reuse, fp32
accumulation); the epilogue is the only addition.

Only the 1x1, stride-1 convolutions are rewritten (conv1 and conv3 of every Bottleneck, and
the stride-1 shortcut of layer1); the 3x3s, the stride-2 shortcuts and the stem stay
convolutions (see fp8's notes for why).

Inside torch.compile. Called directly, the Triton kernel leaves the rest of the network eager
(the 3x3s' bias + ReLU, the stem, the pool: one unfused kernel each; measured on the H200 at
0.84x the compiled top rung). The kernel is therefore also a PyTorch custom op,
`labkit::gemm_bias_res_relu` (`gemm_bias_res_relu`), on NCHW channels_last tensors: Dynamo
records it as one opaque node (no graph break), its fake says the output's shape and
channels_last strides without running it, Inductor compiles and fuses everything around it,
and the ladder's CUDA graph replays the lot. On CUDA it runs the Triton kernel; on the CPU the
torch reference, so the compiled graph can be checked here. A custom op rather than
`torch.library.triton_op`: the op must import and run where triton is absent (this CPU), and
inside a CUDA graph the Python launch that triton_op would save is not replayed anyway.

Checked before a GPU sees it. The kernel's one source also runs under Triton's interpreter
(TRITON_INTERPRET=1, numpy on CPU tensors: `triton_gemm(..., config=..., interpret=True)`),
which is how benchmarks/cpu_triton_interpret.py checks every ResNet-50 1x1 shape and config on
a CPU against float64 PyTorch (`check_case`). What the interpreter cannot show (shared memory,
TF32, Hopper's MMA code, timing, CUDA graph capture) the same script checks with --device cuda.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
from collections.abc import Callable, Iterator

import torch
from torch import nn

from labkit.chapters.ch08_inference_ladder import fp8
from labkit.core import env

STAGES = (3, 4, 6, 3)


class EpilogueError(ValueError):
    """Shapes, dtypes or a model the GEMM path cannot take."""


def to_rows(x: torch.Tensor) -> torch.Tensor:
    """[N, C, H, W] -> [N*H*W, C]: a view when x is channels_last, a copy otherwise."""
    if x.dim() != 4:
        raise EpilogueError(f"expected an [N, C, H, W] tensor, got shape {tuple(x.shape)}")
    return x.permute(0, 2, 3, 1).reshape(-1, x.shape[1])


def from_rows(y: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """[N*H*W, C'] -> [N, C', H, W] with `like`'s N, H, W, channels_last strides (a view)."""
    n, _, h, w = like.shape
    return y.view(n, h, w, y.shape[1]).permute(0, 3, 1, 2)


def reference(a: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
              residual: torch.Tensor | None = None, relu: bool = True) -> torch.Tensor:
    """relu(a @ weight.T + bias + residual) in torch: a [M, K], weight [N, K], residual [M, N]."""
    if a.dim() != 2 or weight.dim() != 2 or a.shape[1] != weight.shape[1]:
        raise EpilogueError(f"a {tuple(a.shape)} and weight {tuple(weight.shape)} do not "
                            "multiply as [M, K] x [N, K]^T")
    if residual is not None and residual.shape != (a.shape[0], weight.shape[0]):
        raise EpilogueError(f"residual {tuple(residual.shape)} is not [M, N] = "
                            f"{(a.shape[0], weight.shape[0])}")
    out = a @ weight.t()
    if bias is not None:
        out = out + bias
    if residual is not None:
        out = out + residual
    return torch.relu(out) if relu else out


def prologue_reference(a: torch.Tensor, in_bias: torch.Tensor) -> torch.Tensor:
    """relu(a + in_bias) rounded once to a's dtype: what the kernel's prologue (HAS_PRO) computes
    with one add in a's dtype (fp32's sum of two fp16 values is exact, so rounding it once gives
    the same bits; `fused_prologue`)."""
    return torch.relu(a.float() + in_bias.float()).to(a.dtype)


@functools.lru_cache(maxsize=1)
def triton_available() -> str:
    """'' when the Triton kernel can run here, else why not."""
    if not torch.cuda.is_available():
        return "no CUDA GPU: the Triton kernel runs on the GPU only"
    try:
        import triton  # noqa: F401
    except ImportError as error:
        return f"triton is not installed ({error})"
    return ""


_KERNELS: dict[str, object] = {}   # the compiled, autotuned kernel (CUDA) per config set, built on first use
_TUNING = "standard"               # the config set `launch_gemm` tunes from now (`tuning`)
_INTERPRETED = None   # the same kernel under Triton's interpreter (CPU tensors, numpy), untuned

# (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps): Triton's matmul tutorial's shapes for Hopper-class
# GPUs, few enough that tuning all of ResNet-50's 1x1 shapes stays in seconds. Shared memory per
# pipeline stage is (BLOCK_M + BLOCK_N) * BLOCK_K operand elements: in fp16 the largest tile
# takes 48 KiB a stage, 144 KiB over its 3 stages (the H200 has 228 KiB per SM, 227 KiB usable
# by one block), and every config fits. In float32 (TF32) the same stages take twice that: the
# first two configs (288 and 256 KiB) do not fit: their launch raises Triton's OutOfResources,
# which the autotuner catches, timing the rest (benchmarks/cpu_triton_interpret.py --device cuda
# records each config's compiled shared memory).
TUNING_CONFIGS = (
    (128, 256, 64, 3, 8),
    (128, 128, 64, 4, 8),
    (128, 128, 64, 3, 4),
    (64, 128, 64, 4, 4),
    (128, 64, 64, 4, 4),
)
# Issue 41's "wider tuning" lever (past_defaults.PROLOGUE_WIDE_1024) tunes from these too. Why
# they might help, from the H200's shape timing at batch 256 (results/h200_past_defaults/
# past_defaults.json, "shapes"), set against each GEMM's FLOP and byte floors, the fused GEMMs
# furthest from their floors were mostly those with a residual or K = 64 (one K step), where
# a 3- or 4-stage pipeline buys nothing and its shared memory holds each SM to one block, so no
# other block's loads overlap one block's epilogue (the residual read, the store). Two stages
# or smaller tiles let 2-4 blocks share an SM; a 128-deep K step halves the loop of the K = 1024
# and 2048 GEMMs; 256x128 is the 128x256 tile for the GEMMs with few output columns. Each fits
# an H200 SM's 227 KiB in fp16 (the largest, 128x128x128 over 3 stages, 192 KiB). Whether any
# is faster is the autotuner's to time per shape, and the lever's to show.
WIDE_EXTRA_CONFIGS = (
    (128, 256, 64, 2, 8),
    (256, 128, 64, 3, 8),
    (128, 128, 64, 2, 4),
    (128, 64, 64, 2, 4),
    (64, 256, 64, 3, 4),
    (128, 128, 128, 3, 8),
    (128, 256, 32, 4, 8),
)
TUNING_SETS = {"standard": TUNING_CONFIGS, "wide": TUNING_CONFIGS + WIDE_EXTRA_CONFIGS}
INT32_LIMIT = 2 ** 31   # the kernel's element offsets are int32 (tl.arange times a stride)


def shared_memory_bytes(config: tuple[int, int, int, int, int], element_bytes: int) -> int:
    """A config's operand buffers in shared memory: (BLOCK_M + BLOCK_N) x BLOCK_K x stages."""
    bm, bn, bk, stages, _ = config
    return (bm + bn) * bk * stages * element_bytes


def tuned() -> dict[str, str]:
    """The config the autotuner chose for each key it tuned in this process ({} before any),
    as 'BLOCK_MxBLOCK_NxBLOCK_K wW sS'; the key is Triton's (M, N, K, HAS_RES, PRECISION, dtypes...)."""
    cache = getattr(_KERNELS.get(_TUNING), "cache", None) or {}
    return {str(key): config_name(config) for key, config in cache.items()}


@contextlib.contextmanager
def tuning(config_set: str) -> Iterator[None]:
    """Tune (and report `tuned`, `forget_tuning`) from TUNING_SETS[config_set] inside the block.

    Each set has its own autotuner, so its choices never leak into another set's rungs. A rung
    built inside the block keeps its kernels after it: a captured CUDA graph replays them
    without asking the autotuner, and its first call (warm-up) is where the tuning happens.
    """
    global _TUNING
    if config_set not in TUNING_SETS:
        raise EpilogueError(f"no config set {config_set!r}; the sets are {sorted(TUNING_SETS)}")
    before, _TUNING = _TUNING, config_set
    try:
        yield
    finally:
        _TUNING = before


def config_name(config: object) -> str:
    """A triton.Config (or a TUNING_CONFIGS tuple) as '128x256x64 w8 s3' (tile M x N x K, warps, stages)."""
    if isinstance(config, tuple):
        bm, bn, bk, stages, warps = config
        return f"{bm}x{bn}x{bk} w{warps} s{stages}"
    kw = getattr(config, "kwargs", {})
    return (f"{kw.get('BLOCK_M')}x{kw.get('BLOCK_N')}x{kw.get('BLOCK_K')} "
            f"w{getattr(config, 'num_warps', '?')} s{getattr(config, 'num_stages', '?')}")


def tuning_note(choices: dict[str, str], of: int | None = None) -> str:
    """The autotuner's choices in one line: how many shapes (from how many configs, where `of`
    says), which configs how often."""
    if not choices:
        return "autotuner: no shape tuned in this process"
    counts: dict[str, int] = {}
    for name in choices.values():
        counts[name] = counts.get(name, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])
    source = "" if of is None else f" from {of} configs"
    return (f"autotuned {len(choices)} shape(s){source} before timing; chose "
            + ", ".join(f"{name} x{count}" for name, count in ranked))


def forget_tuning() -> int:
    """Drop the autotuner's choices (how many), so the next call of each shape tunes again.

    A rung whose compile seconds should hold its tuning calls this before it compiles: the
    shape timing or an earlier rung may have tuned the same shapes in this process. Live rungs
    are unaffected: a captured CUDA graph replays its kernels without asking the autotuner.
    """
    cache = getattr(_KERNELS.get(_TUNING), "cache", None)
    if not cache:
        return 0
    count = len(cache)
    cache.clear()
    return count


def _source() -> Callable:
    """The kernel as a plain Python function (triton is imported only here), for triton.jit
    (the GPU) or for Triton's interpreter (CPU tensors): one source, so what the interpreter
    checks is what the GPU compiles."""
    import triton.language as tl

    def gemm_bias_res_relu(a_ptr, b_ptr, bias_ptr, res_ptr, c_ptr, pro_ptr, M, N, K,  # noqa: ANN001, ANN202
                           stride_am, stride_ak, stride_bk, stride_bn, stride_rm, stride_rn,  # noqa: ANN001
                           stride_cm, stride_cn, HAS_RES: tl.constexpr, RELU: tl.constexpr,  # noqa: ANN001
                           HAS_PRO: tl.constexpr,
                           PRECISION: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                           BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        # Grouped tile order (GROUP_M row tiles share each column tile of B while it is in L2).
        pid = tl.program_id(axis=0)
        num_m = tl.cdiv(M, BLOCK_M)
        num_n = tl.cdiv(N, BLOCK_N)
        in_group = GROUP_M * num_n
        group = pid // in_group
        first_m = group * GROUP_M
        size_m = min(num_m - first_m, GROUP_M)
        pid_m = first_m + ((pid % in_group) % size_m)
        pid_n = (pid % in_group) // size_m
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            k_left = K - k0
            a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
            if HAS_PRO:
                # The prologue (fused_prologue.py): the layer before left its output without its
                # bias and ReLU; they are applied here to each A tile as it is loaded, in A's own
                # dtype: one fp16 add is rounded once, bit for bit what fp32's sum rounded to fp16
                # gives, at a quarter of the instructions (review 2026-12-05o3 item 2; a literal
                # 0.0 would promote the max to fp32). Past K the bias loads as 0, so A stays 0
                # there; rows past M become relu(bias), and their outputs are masked at the store.
                pro = tl.load(pro_ptr + k0 + offs_k, mask=offs_k < k_left, other=0.0)
                a = tl.maximum(a + pro[None, :], tl.zeros_like(a))
            # fp16/bf16 operands: tensor cores, fp32 accumulation. fp32 operands: PRECISION says
            # "tf32" or "ieee", as torch's matmul setting does for the reference.
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        # The epilogue in fp32, rounded once at the store: bias, residual, ReLU.
        mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
        acc += tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
        if HAS_RES:
            r = tl.load(res_ptr + offs_m[:, None] * stride_rm + offs_n[None, :] * stride_rn,
                        mask=mask, other=0.0)
            acc += r.to(tl.float32)
        if RELU:
            acc = tl.maximum(acc, 0.0)
        tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
                 acc.to(c_ptr.dtype.element_ty), mask=mask)

    return gemm_bias_res_relu


def _kernel() -> object:
    """The compiled kernel behind the current config set's autotuner, built on first use."""
    if _TUNING in _KERNELS:
        return _KERNELS[_TUNING]
    import triton

    configs = [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8},
                             num_stages=stages, num_warps=warps)
               for m, n, k, stages, warps in TUNING_SETS[_TUNING]]
    # Tuned once per (M, N, K, HAS_RES, HAS_PRO, PRECISION) and the tensors' dtypes (Triton appends
    # those) on its first call (the rung's warm-up, so a rung's compile seconds hold it, and
    # before any CUDA graph capture: tuning syncs and allocates), and the choice kept for the
    # process (`tuned`, `forget_tuning`).
    kernel = triton.autotune(configs=configs, key=["M", "N", "K", "HAS_RES", "HAS_PRO", "PRECISION"])(
        triton.jit(_source()))
    _KERNELS[_TUNING] = kernel
    return kernel


def interpreter_missing() -> str:
    """'' when Triton's interpreter can run the kernel on CPU tensors in this process, else why not.

    Triton decides at import: its own helpers (tl.cdiv, ...) are interpreted only when
    TRITON_INTERPRET=1 was in the environment before triton was first imported, so a process
    cannot switch to it later (the test runs it in a subprocess for that reason).
    """
    try:
        import triton
    except ImportError as error:
        return f"triton is not installed ({error})"
    knobs = getattr(triton, "knobs", None)
    on = (knobs.runtime.interpret if knobs is not None
          else os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes"))
    if not on:
        return "Triton's interpreter needs TRITON_INTERPRET=1 in the environment before triton is imported"
    return ""


def _interpreted() -> object:
    """The same source under Triton's interpreter: runs on CPU tensors (numpy), any config,
    no autotuner (the interpreter has no device to time on). For checking only: slow."""
    global _INTERPRETED
    if _INTERPRETED is None:
        why = interpreter_missing()
        if why:
            raise EpilogueError(why)
        import triton

        _INTERPRETED = triton.jit(_source())   # an InterpretedFunction under TRITON_INTERPRET=1
    return _INTERPRETED


GEMM_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def _max_offset(t: torch.Tensor) -> int:
    """The largest element offset from t's first element that t's strides reach."""
    return sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride(), strict=True)
               if size > 0)


def check_gemm(a: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
               residual: torch.Tensor | None, in_bias: torch.Tensor | None = None) -> None:
    """What the Triton launch needs, checked before it (an EpilogueError, never a kernel fault):
    shapes that multiply, one dtype the tensor cores take, one device, and offsets int32 holds;
    in_bias (the prologue's, `fused_prologue`) is [K], on a's device."""
    if a.dim() != 2 or weight_t.dim() != 2 or a.shape[1] != weight_t.shape[0]:
        raise EpilogueError(f"a {tuple(a.shape)} and weight_t {tuple(weight_t.shape)} do not "
                            "multiply as [M, K] x [K, N]")
    m, n = a.shape[0], weight_t.shape[1]
    if bias.shape != (n,):
        raise EpilogueError(f"bias {tuple(bias.shape)} is not [N] = [{n}]")
    if residual is not None and residual.shape != (m, n):
        raise EpilogueError(f"residual {tuple(residual.shape)} is not [M, N] = {(m, n)}")
    if in_bias is not None and (in_bias.shape != (a.shape[1],) or in_bias.device != a.device
                                or in_bias.dtype != a.dtype):
        raise EpilogueError(f"in_bias {tuple(in_bias.shape)} ({in_bias.dtype}) on {in_bias.device} "
                            f"is not [K] = [{a.shape[1]}] of a's {a.dtype} on {a.device}")
    if a.dtype not in GEMM_DTYPES or weight_t.dtype != a.dtype:
        raise EpilogueError(f"a ({a.dtype}) and weight_t ({weight_t.dtype}) must share one of "
                            f"{[str(d) for d in GEMM_DTYPES]}")
    if not (a.device == weight_t.device == bias.device
            and (residual is None or residual.device == a.device)):
        tensors = [a, weight_t, bias] + ([residual] if residual is not None else [])
        raise EpilogueError(f"operands on several devices: {sorted({str(t.device) for t in tensors})}")
    if min(a.shape) == 0 or n == 0:
        raise EpilogueError(f"an empty GEMM: a {tuple(a.shape)}, weight_t {tuple(weight_t.shape)}")
    # The kernel forms row * stride + column * stride in int32: past 2**31 it would wrap and
    # read or write the wrong rows (ResNet-50 reaches it at batch ~2,700 in layer1).
    extents = {"a": _max_offset(a), "weight_t": _max_offset(weight_t), "output": m * n - 1}
    if residual is not None:
        extents["residual"] = _max_offset(residual)
    for name, extent in extents.items():
        if extent >= INT32_LIMIT:
            raise EpilogueError(f"{name} spans {extent + 1:,} elements: the kernel's int32 "
                                f"offsets stop at {INT32_LIMIT:,}; use a smaller batch")


def _meta(config: tuple[int, int, int, int, int]) -> dict:
    """A TUNING_CONFIGS-style tuple as the launch's meta-parameters."""
    if (len(config) != 5 or not all(isinstance(v, int) and v > 0 for v in config)
            or any(v & (v - 1) or v < 16 for v in config[:3])):
        raise EpilogueError(f"config must be (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps) with "
                            f"power-of-two blocks >= 16, got {config!r}")
    bm, bn, bk, stages, warps = config
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8,
            "num_stages": stages, "num_warps": warps}


def fp32_precision() -> str:
    """How the kernel multiplies float32 operands: "tf32" where torch's own CUDA matmul may,
    "ieee" where it must not (the numerics gate's strict float32). Triton's default is tf32
    whatever torch says, so the launch passes this.

    Read without raising: torch 2.9+ has a new setting (matmul.fp32_precision, "none" meaning
    the global one) beside the legacy allow_tf32, and reading allow_tf32 raises a RuntimeError
    once both have been set; inside a compiled graph that would fail the op.
    """
    matmul = torch.backends.cuda.matmul
    try:
        precision = getattr(matmul, "fp32_precision", None)
        if precision == "none":
            precision = getattr(torch.backends, "fp32_precision", None)
        if precision in ("tf32", "ieee"):
            return precision
        return "tf32" if matmul.allow_tf32 else "ieee"
    except (RuntimeError, AttributeError):
        return "tf32" if torch.get_float32_matmul_precision() != "highest" else "ieee"


def triton_gemm(a: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
                residual: torch.Tensor | None = None, relu: bool = True,
                config: tuple[int, int, int, int, int] | None = None,
                interpret: bool = False) -> torch.Tensor:
    """relu(a @ weight_t + bias + residual) in one Triton kernel: a [M, K], weight_t [K, N].

    The output is a new [M, N] row-major tensor of a's dtype. config (a TUNING_CONFIGS-style
    tuple) forces one tile shape instead of the autotuner's choice. interpret=True runs the
    same kernel source on CPU tensors under Triton's interpreter (numpy; checks only, slow,
    and it needs a config: there is nothing to tune on).
    """
    return launch_gemm(a, weight_t, bias, residual, relu, config, interpret)[0]


def launch_gemm(a: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
                residual: torch.Tensor | None = None, relu: bool = True,
                config: tuple[int, int, int, int, int] | None = None,
                interpret: bool = False, in_bias: torch.Tensor | None = None) -> tuple[torch.Tensor, object]:
    """`triton_gemm`'s output and what Triton's launch returned: on the GPU the compiled
    kernel (its metadata holds the shared memory and registers it took), None interpreted.
    in_bias: the prologue's per-K bias, A read as relu(A + in_bias) (`fused_prologue`)."""
    check_gemm(a, weight_t, bias, residual, in_bias)
    if interpret:
        if a.device.type != "cpu":
            raise EpilogueError(f"Triton's interpreter runs on CPU tensors, got {a.device}")
        if config is None:
            raise EpilogueError("the interpreter cannot time configs to tune them: pass config, "
                                f"one of {TUNING_CONFIGS}")
        kernel = _interpreted()
    else:
        why = triton_available()
        if why:
            raise EpilogueError(why)
        if not a.is_cuda:
            raise EpilogueError("the Triton GEMM needs its operands on the GPU "
                                "(or interpret=True on CPU tensors, for checking)")
        kernel = _kernel()
    m, k = a.shape
    n = weight_t.shape[1]
    out = torch.empty((m, n), device=a.device, dtype=a.dtype)
    res = residual if residual is not None else out   # never read: HAS_RES is False
    bias = bias.contiguous()                           # read as bias_ptr + column
    pro = in_bias.contiguous() if in_bias is not None else bias   # never read: HAS_PRO is False
    args = (a, weight_t, bias, res, out, pro, m, n, k, a.stride(0), a.stride(1),
            weight_t.stride(0), weight_t.stride(1), res.stride(0), res.stride(1),
            out.stride(0), out.stride(1))
    # float32 operands as torch's matmul setting says; fp16/bf16 ones take Triton's own default
    # ("tf32", which only float32 reads), so their kernel compiles exactly as it did before.
    precision = fp32_precision() if a.dtype == torch.float32 else "tf32"
    flags = {"HAS_RES": residual is not None, "RELU": bool(relu), "HAS_PRO": in_bias is not None,
             "PRECISION": precision}
    if config is None:
        def grid(meta: dict) -> tuple[int]:
            return (_tiles(m, meta["BLOCK_M"]) * _tiles(n, meta["BLOCK_N"]),)
        launched = kernel[grid](*args, **flags)
    else:
        meta = _meta(config)
        grid = (_tiles(m, meta["BLOCK_M"]) * _tiles(n, meta["BLOCK_N"]),)
        # the autotuner's own jitted function, so a forced config compiles what tuning would
        launched = (kernel if interpret else kernel.fn)[grid](*args, **flags, **meta)
    return out, (None if interpret else launched)


def _tiles(size: int, block: int) -> int:
    return (size + block - 1) // block


def triton_conv1x1(x: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
                   residual: torch.Tensor | None = None, relu: bool = True,
                   config: tuple[int, int, int, int, int] | None = None,
                   interpret: bool = False) -> torch.Tensor:
    """The op's CUDA kernel: x [N, K, H, W] (channels_last: its rows are a view), weight_t
    [K, Cout], residual [N, Cout, H, W], to a channels_last [N, Cout, H, W]. config and
    interpret as in `triton_gemm` (the interpreter check, `check_case`, calls this very path)."""
    return _conv1x1_launch(x, weight_t, bias, residual, relu, config, interpret)[0]


def _conv1x1_launch(x: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
                    residual: torch.Tensor | None, relu: bool,
                    config: tuple[int, int, int, int, int] | None,
                    interpret: bool, in_bias: torch.Tensor | None = None) -> tuple[torch.Tensor, object]:
    _check_op(x, weight_t, bias, residual)
    res = to_rows(residual) if residual is not None else None
    out, launched = launch_gemm(to_rows(x), weight_t, bias, res, relu, config, interpret, in_bias)
    return from_rows(out, x), launched


# Allowed error, as a fraction of the output's largest magnitude: one rounding of the output
# (fp16 2**-11, bf16 2**-8 of a value) with margin; float32 only its sums' order; TF32 its
# operands' 10-bit mantissas summed over K. A dropped bias, a lost K tail or a wrong stride
# moves the output by a whole operand's size, hundreds of times these.
TOLERANCES = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5, "float32 tf32": 5e-3}


def compare(out: torch.Tensor, ref: torch.Tensor, tolerance: float) -> dict:
    """out against ref: max abs error, that over ref's largest magnitude (max_rel), the
    relative L2 error, whether every value is finite, and passed (finite, max_rel <= tolerance)."""
    if out.shape != ref.shape:
        raise EpilogueError(f"out {tuple(out.shape)} and ref {tuple(ref.shape)} differ in shape")
    diff = (out.double() - ref.double()).abs()
    scale = float(ref.abs().max()) if ref.numel() else 0.0
    max_abs = float(diff.max()) if diff.numel() else 0.0
    finite = bool(torch.isfinite(out).all())
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    l2 = float(torch.linalg.vector_norm(ref.double()))
    rel_l2 = float(torch.linalg.vector_norm(diff)) / l2 if l2 > 0 else max_rel
    return {"max_abs": max_abs, "max_rel": max_rel, "rel_l2": rel_l2, "scale": scale,
            "finite": finite, "tolerance": tolerance, "passed": finite and max_rel <= tolerance}


def check_case(batch: int, side: int, k: int, n: int, residual: bool, relu: bool,
               dtype: torch.dtype, config: tuple[int, int, int, int, int] | None,
               interpret: bool, device: torch.device | str = "cpu", seed: int = 0,
               channels_last: bool = True, prologue: bool = False) -> dict:
    """One 1x1 convolution through the op's Triton path (`triton_conv1x1`) against float64
    PyTorch: its errors, its output's shape/dtype/strides against the op's fake's, and on the
    GPU the compiled kernel's shared memory, registers and spills. prologue: the input is read
    as relu(x + in_bias) in the kernel (`fused_prologue`), the reference likewise. Failures are
    recorded (error), never raised: a sweep reports every case."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    device = torch.device(device)
    row: dict = {"batch": batch, "side": side, "M": batch * side * side, "K": k, "N": n,
                 "residual": residual, "relu": relu, "dtype": str(dtype).replace("torch.", ""),
                 "config": config_name(config) if config else "autotuned",
                 "layout": "channels_last" if channels_last else "nchw", "prologue": prologue}
    tf32 = dtype == torch.float32 and fp32_precision() == "tf32" and not interpret
    tolerance = TOLERANCES[row["dtype"] + (" tf32" if tf32 else "")]
    try:
        g = torch.Generator(device=device).manual_seed(seed)   # operands made where they run

        def randn(*shape: int) -> torch.Tensor:
            return torch.randn(*shape, generator=g, device=device)
        layout = torch.channels_last if channels_last else torch.contiguous_format
        x = (randn(batch, k, side, side) if prologue else torch.relu(randn(batch, k, side, side)))
        x = x.to(dtype).contiguous(memory_format=layout)
        in_bias = (0.5 * randn(k)).to(dtype) if prologue else None
        weight_t = (randn(k, n) / k ** 0.5).to(dtype)
        bias = (0.5 * randn(n)).to(dtype)
        res = (randn(batch, n, side, side).to(dtype).contiguous(memory_format=layout)
               if residual else None)
        out, launched = _conv1x1_launch(x, weight_t, bias, res, relu, config, interpret, in_bias)
        rows = to_rows(x).double()
        if in_bias is not None:   # the prologue rounded to x's dtype once, as the kernel's add
            rows = prologue_reference(to_rows(x), in_bias).double()
        ref = rows @ weight_t.double() + bias.double()
        if res is not None:
            ref = ref + to_rows(res).double()
        ref = from_rows(torch.relu(ref) if relu else ref, x)
        with FakeTensorMode() as mode:
            fake = gemm_bias_res_relu(*(mode.from_tensor(t) if t is not None else None
                        for t in (x, weight_t, bias, res)), relu)
        row.update(compare(out, ref, tolerance))
        row["strides"] = list(out.stride())
        row["layout_ok"] = (out.shape == fake.shape and out.dtype == fake.dtype == dtype
                            and out.stride() == fake.stride()
                            == channels_last_strides(*out.shape))
        row["passed"] = row["passed"] and row["layout_ok"]
        metadata = getattr(launched, "metadata", None)
        if metadata is not None:
            row["shared_bytes"] = getattr(metadata, "shared", None)
            row["registers"] = getattr(launched, "n_regs", None)
            row["spills"] = getattr(launched, "n_spills", None)
    except Exception as failure:  # noqa: BLE001 -- a sweep records each case's failure
        row.update(passed=False, error=f"{type(failure).__name__}: {str(failure)[:300]}")
    return row


OP_NAME = "labkit::gemm_bias_res_relu"
OP_SCHEMA = "(Tensor x, Tensor weight_t, Tensor bias, Tensor? residual, bool relu) -> Tensor"


def channels_last_strides(n: int, c: int, h: int, w: int) -> tuple[int, int, int, int]:
    """The strides of a dense channels_last [N, C, H, W] tensor: its memory is NHWC rows."""
    return (h * w * c, 1, w * c, c)


def _check_op(x: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
              residual: torch.Tensor | None) -> None:
    """The op's shape contract, checked by its fake (at trace time) and by its kernels."""
    if x.dim() != 4 or weight_t.dim() != 2 or x.shape[1] != weight_t.shape[0]:
        raise EpilogueError(f"x {tuple(x.shape)} and weight_t {tuple(weight_t.shape)} are not "
                            "[N, K, H, W] and [K, Cout]")
    if bias.shape != (weight_t.shape[1],):
        raise EpilogueError(f"bias {tuple(bias.shape)} is not [Cout] = [{weight_t.shape[1]}]")
    n, _, h, w = x.shape
    if residual is not None and residual.shape != (n, weight_t.shape[1], h, w):
        raise EpilogueError(f"residual {tuple(residual.shape)} is not the output's "
                            f"{(n, weight_t.shape[1], h, w)}")
    # One dtype throughout, as the fake promises (the output is x's dtype): on the CPU a float32
    # bias or residual would promote an fp16 output, and the real output would not be the fake's.
    odd = {name: t.dtype for name, t in (("weight_t", weight_t), ("bias", bias), ("residual", residual))
           if t is not None and t.dtype != x.dtype}
    if odd:
        raise EpilogueError(f"x is {x.dtype} but " + ", ".join(f"{k} is {v}" for k, v in odd.items()))


@torch.library.custom_op(OP_NAME, mutates_args=(), device_types="cpu", schema=OP_SCHEMA)
def gemm_bias_res_relu(x: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
                       residual: torch.Tensor | None, relu: bool) -> torch.Tensor:
    """relu(conv1x1(x) + bias + residual) as one op: x [N, K, H, W], weight_t [K, Cout].

    The CPU's kernel is the torch reference; CUDA's is the Triton GEMM (registered below).
    The output is channels_last ([N*H*W, Cout] rows), whatever x's layout.
    """
    _check_op(x, weight_t, bias, residual)
    res = to_rows(residual) if residual is not None else None
    return from_rows(reference(to_rows(x), weight_t.t(), bias, res, relu), x)


@gemm_bias_res_relu.register_kernel("cuda")
def _gemm_bias_res_relu_cuda(x: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
                             residual: torch.Tensor | None, relu: bool) -> torch.Tensor:
    return triton_conv1x1(x, weight_t, bias, residual, relu)


@gemm_bias_res_relu.register_fake
def _gemm_bias_res_relu_fake(x: torch.Tensor, weight_t: torch.Tensor, bias: torch.Tensor,
                             residual: torch.Tensor | None, relu: bool) -> torch.Tensor:
    """What the compiler sees: the output's shape, dtype and channels_last strides."""
    _check_op(x, weight_t, bias, residual)
    n, _, h, w = x.shape
    cout = weight_t.shape[1]
    return x.new_empty_strided((n, cout, h, w), channels_last_strides(n, cout, h, w))


class Conv1x1(nn.Module):
    """A 1x1 stride-1 convolution (+ bias, + residual, + ReLU) run as a GEMM on a backend.

    backend: "torch" (reference: matmul then separate elementwise), "triton" (one fused
    kernel, called directly: eager only), "op" (the custom op `gemm_bias_res_relu`: the same
    Triton kernel on CUDA, the reference on the CPU, one node to torch.compile), or an
    fp8.Fp8Gemm (the GEMM in e4m3; bias, residual and ReLU in torch after it), or an
    int8.Int8Gemm (the GEMM in int8 through torch._int_mm; the same tails after it).
    """

    def __init__(self, conv: nn.Conv2d, backend: str = "torch", gemm: nn.Module | None = None) -> None:
        super().__init__()
        if not (isinstance(conv, nn.Conv2d) and conv.kernel_size == (1, 1) and conv.stride == (1, 1)
                and conv.groups == 1 and conv.padding in ((0, 0), "valid")):
            raise EpilogueError(f"only a 1x1, stride-1, ungrouped, unpadded convolution is a GEMM: {conv}")
        if backend not in ("torch", "triton", "op", "fp8", "int8"):
            raise EpilogueError(f"backend must be 'torch', 'triton', 'op', 'fp8' or 'int8', got {backend!r}")
        if backend == "fp8" and not isinstance(gemm, fp8.Fp8Gemm):
            raise EpilogueError("the fp8 backend needs its fp8.Fp8Gemm")
        if backend == "int8" and type(gemm).__name__ != "Int8Gemm":
            raise EpilogueError("the int8 backend needs its int8.Int8Gemm")
        self.backend = backend
        weight = conv.weight.detach().flatten(1)                          # [Cout, Cin]
        bias = conv.bias.detach() if conv.bias is not None else torch.zeros(conv.out_channels)
        self.bias = nn.Parameter(bias.clone(), requires_grad=False)
        if backend in ("triton", "op"):   # [Cin, Cout], contiguous: the kernel's B operand, read along N
            self.weight = nn.Parameter(weight.t().contiguous(), requires_grad=False)
        elif backend == "torch":
            self.weight = nn.Parameter(weight.clone(), requires_grad=False)
        self.gemm = gemm

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None,
                relu: bool = True) -> torch.Tensor:
        if self.backend == "op":
            return gemm_bias_res_relu(x, self.weight, self.bias, residual, relu)
        a = to_rows(x)
        res = to_rows(residual) if residual is not None else None
        if self.backend == "triton":
            out = triton_gemm(a, self.weight, self.bias, res, relu)
        elif self.backend == "torch":
            out = reference(a, self.weight, self.bias, res, relu)
        else:
            out = self.gemm(a, x.dtype) + self.bias
            if res is not None:
                out = out + res
            out = torch.relu(out) if relu else out
        return from_rows(out, x)


def _block_names(model: nn.Module) -> list[str]:
    names, modules = [], dict(model.named_modules())
    for stage, blocks in enumerate(STAGES, 1):
        for b in range(blocks):
            name = f"layer{stage}.{b}"
            if f"{name}.conv3" not in modules:
                raise EpilogueError(f"the model has no {name}.conv3: not labkit's ResNet-50 layout")
            names.append(name)
    return names


class GemmResNet(nn.Module):
    """The folded ResNet-50 with its 1x1 stride-1 convolutions run by `make(name, conv)`.

    make returns the Conv1x1 that replaces a convolution, or None to keep it a convolution.
    The forward is Bottleneck's, written out so the residual add and ReLU can go into conv3's
    epilogue: relu(conv3(relu(conv2(relu(conv1(x))))) + shortcut(x)).
    It shares the folded model's modules (the stem, the 3x3s, fc): moving or casting it moves
    the folded model too, so build it on a copy where the folded model is still needed.
    """

    def __init__(self, folded: nn.Module, make: Callable[[str, nn.Conv2d], Conv1x1 | None]) -> None:
        super().__init__()
        modules = dict(folded.named_modules())
        if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in modules.values()):
            raise EpilogueError("fold the BatchNorms first (labkit.models.folding.fold_model): "
                                "the GEMM path carries a bias, not a BatchNorm")
        self.stem, self.maxpool, self.fc = modules["conv1"], modules["maxpool"], modules["fc"]
        self.replaced: list[str] = []
        blocks = []
        for name in _block_names(folded):
            block = nn.Module()
            for part in ("conv1", "conv2", "conv3", "downsample.0"):
                conv = modules.get(f"{name}.{part}")
                if conv is None:
                    continue
                made = make(f"{name}.{part}", conv) if part != "conv2" else None
                if made is not None:
                    self.replaced.append(f"{name}.{part}")
                setattr(block, part.replace(".0", ""), made if made is not None else conv)
            blocks.append(block)
        self.blocks = nn.ModuleList(blocks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(torch.relu(self.stem(x)))
        for block in self.blocks:
            down = getattr(block, "downsample", None)
            shortcut = x if down is None else (down(x, relu=False) if isinstance(down, Conv1x1)
                                               else down(x))
            out = block.conv1(x) if isinstance(block.conv1, Conv1x1) else torch.relu(block.conv1(x))
            x = self.tail(block, out, shortcut)
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)

    def tail(self, block: nn.Module, out: torch.Tensor, shortcut: torch.Tensor) -> torch.Tensor:
        """A Bottleneck from conv1's output on: relu(conv3(relu(conv2(out))) + shortcut), the
        residual and ReLU in conv3's epilogue where it is a GEMM (`fused_prologue` overrides it)."""
        out = torch.relu(block.conv2(out))
        if isinstance(block.conv3, Conv1x1):
            return block.conv3(out, residual=shortcut)
        return torch.relu(block.conv3(out) + shortcut)


def gemm_convs(model: nn.Module) -> list[str]:
    """The names of the model's convolutions the GEMM path rewrites (1x1, stride 1)."""
    return [n for n, m in model.named_modules()
            if n.startswith("layer") and not n.endswith("conv2") and isinstance(m, nn.Conv2d)
            and m.kernel_size == (1, 1) and m.stride == (1, 1)]


def torch_backend(name: str, conv: nn.Conv2d) -> Conv1x1 | None:
    """The pure-torch GEMM path for every 1x1 stride-1 convolution (the reference)."""
    return Conv1x1(conv, "torch") if conv.stride == (1, 1) else None


def triton_backend(name: str, conv: nn.Conv2d) -> Conv1x1 | None:
    """The fused Triton kernel for every 1x1 stride-1 convolution."""
    return Conv1x1(conv, "triton") if conv.stride == (1, 1) else None


def op_backend(name: str, conv: nn.Conv2d) -> Conv1x1 | None:
    """The custom op for every 1x1 stride-1 convolution: what torch.compile can take whole."""
    return Conv1x1(conv, "op") if conv.stride == (1, 1) else None


def resnet50_gemm_shapes(batch: int, image: int) -> list[dict]:
    """Every distinct (M, K, N, residual) of ResNet-50's 1x1 stride-1 convolutions, with its count."""
    shapes: dict[tuple, int] = {}
    side, cin = image // 4, 64
    for stage, (blocks, width) in enumerate(zip(STAGES, (64, 128, 256, 512), strict=True), 1):
        for b in range(blocks):
            side_in = side                      # conv1 runs before the block's stride (on conv2)
            if stage > 1 and b == 0:
                side = (side + 1) // 2
            for key in ((side_in, cin, width, False), (side, width, 4 * width, True)):
                shapes[key] = shapes.get(key, 0) + 1
            if stage == 1 and b == 0:           # layer1's shortcut: 1x1, stride 1, 64 -> 256
                key = (side, cin, 4 * width, False)
                shapes[key] = shapes.get(key, 0) + 1
            cin = 4 * width
    return [{"M": batch * h * h, "K": k, "N": n, "side": h, "residual": r, "count": c}
            for (h, k, n, r), c in shapes.items()]


VARIANTS = ("cudnn + separate", "cublas + separate", "triton fused", "fp8 + separate")


def bench_shapes(batch: int, image: int, device: torch.device, calls: int = 20) -> dict:
    """Each ResNet-50 1x1 shape's device time per call (kernel records, `device_time`), three ways:

    cuDNN's convolution (bias in it) then the residual add and ReLU as separate kernels; the
    same GEMM through cuBLAS (torch's matmul) with the same separate tails, which tells the
    GEMM's share of a difference from the fusion's; the Triton kernel with all of it in its
    epilogue; and (where FP8 runs) the activation
    quantisation + `_scaled_mm` + the same tails. Errors are relative L2 against float32.
    Totals weight each shape by how often the network runs it. On a CPU there is no device
    clock (device_us None, no totals): only the errors mean something there (a smoke test).
    """
    from labkit.measure.device_time import device_time

    if batch < 1 or image < 32:
        raise EpilogueError(f"need batch >= 1 and image >= 32 px, got batch={batch}, image={image}")
    rows, totals = [], {name: 0.0 for name in VARIANTS}
    errors: dict[str, str] = {}
    generator = torch.Generator(device=device).manual_seed(0)   # operands made on the GPU
    saved = torch.backends.cudnn.benchmark, torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.benchmark = True    # as on the top rung: cuDNN picks its best algorithm
    torch.backends.cudnn.allow_tf32 = False  # the float32 reference convolution stays float32
    try:
        for shape in resnet50_gemm_shapes(batch, image):
            row = _bench_one(shape, batch, torch.device(device), calls, generator, device_time)
            for name in totals:
                cell = row.get(name, {})
                if "error" in cell:
                    errors[name] = cell["error"]
                elif cell.get("device_us"):
                    totals[name] += 1e-6 * cell["device_us"] * shape["count"]
            rows.append(row)
    finally:
        torch.backends.cudnn.benchmark, torch.backends.cudnn.allow_tf32 = saved
    return {"batch": batch, "image": image, "shapes": rows, "errors": errors,
            "total_ms_per_batch": {k: 1e3 * v for k, v in totals.items()
                                   if k not in errors and v > 0}}


def _bench_one(shape: dict, batch: int, device: torch.device, calls: int,
               generator: torch.Generator, device_time: Callable) -> dict:
    """One shape of bench_shapes: its operands, its variants, their device times and errors."""
    k, n, h, res_on = shape["K"], shape["N"], shape["side"], shape["residual"]
    x = torch.relu(torch.randn(batch, k, h, h, generator=generator, device=device,
                               dtype=torch.float16)).contiguous(memory_format=torch.channels_last)
    conv = nn.Conv2d(k, n, 1).to(device, torch.float16).eval()
    res = (torch.randn(batch, n, h, h, generator=generator, device=device, dtype=torch.float16)
           .contiguous(memory_format=torch.channels_last) if res_on else None)
    w, b = conv.weight.detach(), conv.bias.detach()
    row = dict(shape)
    with torch.no_grad():
        # PyTorch's own answer in float32: convolution + bias, + residual, ReLU
        ref = nn.functional.conv2d(x.float(), w.float(), b.float())
        ref = to_rows(torch.relu(ref + res.float()) if res_on else torch.relu(ref))

        def cudnn() -> torch.Tensor:
            out = nn.functional.conv2d(x, w, b)
            return torch.relu(out + res) if res_on else torch.relu(out)
        variants: dict[str, Callable[[], torch.Tensor]] = {"cudnn + separate": cudnn}
        plain = Conv1x1(conv, "torch")
        variants["cublas + separate"] = lambda: plain(x, res)
        if not triton_available():
            fused = Conv1x1(conv, "triton")
            variants["triton fused"] = lambda: fused(x, res)
        if not missing_fp8(device):
            quant = Conv1x1(conv, "fp8", fp8.Fp8Gemm(copy.deepcopy(conv).float(), float(x.abs().amax())))
            variants["fp8 + separate"] = lambda: quant(x, res)
        for name, fn in variants.items():
            try:
                out = fn()
                d = device_time(fn, calls=calls, label=name)
                error = torch.linalg.vector_norm(to_rows(out).float() - ref) / torch.linalg.vector_norm(ref)
                row[name] = {"device_us": 1e6 * d.device_busy_s if d.device_busy_s else None,
                             "rel_error": float(error)}
            except Exception as failure:  # noqa: BLE001 -- one path failing is recorded
                row[name] = {"error": f"{type(failure).__name__}: {str(failure)[:300]}"}
    return row


def missing_fp8(device: torch.device) -> str:
    """'' when `_scaled_mm` can run e4m3 GEMMs on this device, else why not."""
    device = torch.device(device)
    if device.type != "cuda":
        return "FP8 GEMMs need a CUDA GPU (compute capability 8.9 or newer)"
    if not hasattr(torch, "_scaled_mm"):
        return "this torch has no torch._scaled_mm"
    return env.gpu_lacks("fp8", device)
