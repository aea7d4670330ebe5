"""Past the defaults (issue 41): the levers beyond chapter 08's top rung, each gated, timed
interleaved against the top rung, and kept only when its gain's interval excludes 1.

The top rung is the ladder's (fp16, channels_last, Conv-BN folded, TF32 on, cudnn.benchmark,
torch.compile default mode, one CUDA graph per batch, batch 256). Each lever changes it once:

- Inductor's own levers: freezing, `conv_1x1_as_mm` (the 1x1 convolutions lowered to GEMMs,
  whose epilogues Inductor can then fuse), max-autotune with Inductor's CUDA graphs and
  without them (the ladder's graph instead), and larger batches (512, 1024);
- FP8 (e4m3) for the 1x1 convolutions as `torch._scaled_mm` GEMMs (`fp8`), per-tensor and
  per-channel weight scales, plus one deliberately wrong activation scale that the gate
  must refuse; and INT8 for the same GEMMs through `torch._int_mm` (`int8`), gated alike;
- the 1x1 convolutions as a Triton GEMM with bias + residual + ReLU in its epilogue
  (`fused_epilogue`), and the same GEMM path in plain torch as its control, both eager + the
  ladder's CUDA graph; and the same Triton GEMM as the custom op `labkit::gemm_bias_res_relu`
  inside the top rung's own torch.compile and CUDA graph (at batch 256 and 1024), judged over
  the top rung (and batch 1024), which differ from it by the 1x1 path alone.

How each is judged, in order (numerics before speed):

1. the rung is prepared through `ladder.prepare` (the climb's own path: cold compile timed,
   the gate's images copied into the rung's input buffer after capture) and gated by
   `numerics.check`; FP8 rungs are held to bfloat16's tolerance, the loosest the course
   already has (not one widened to fit them). A refused rung is reported as refused and is
   never timed or ranked;
2. a passing rung is timed by `Ladder.compare` interleaved with the top rung (images over
   steady-state wall time, per-round ratios and their IQR) and profiled for device time per
   batch and its kernel classes; idle is 1 - device time / unprofiled wall time;
3. kept by the ladder's own rule (`keep`, keep.gained): the whole IQR of its gain over the
   top rung above 1 and its median at least 1 + keep.MIN_GAIN (2%); before review 2026-12-03e
   item 2 this section had a rule of its own without the 2% minimum, and kept freezing on
   1.010x beside its own control's 1.00x;
4. its cold compile is set against the time it saves: `payback` batches.

Every lever is guarded: one that fails (unsupported, compile error) records its error text
and the run moves on; a lever whose hardware or software is absent is skipped with the
reason; a lever that would start past the run's budget is skipped as such.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time as _clock
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from labkit.chapters.ch08_inference_ladder import (
    attribution,
    cudnn_fused,
    fp8,
    fused_prologue,
    int8,
    ladder,
    numerics,
)
from labkit.chapters.ch08_inference_ladder import fused_epilogue as fe
from labkit.chapters.ch08_inference_ladder import keep as keep_rule

TOP = ladder.Settings(tf32="on", cudnn_benchmark=True, channels_last=True, dtype="float16",
                      fold_bn=True, compile="default", cuda_graphs=True, batch=256)
CPU_TOP = ladder.Settings(channels_last=True, fold_bn=True, batch=4)  # the smoke path's base
FP8_GATE_MATH = "bfloat16"
TOP_NAME = "top rung"
AT_64 = "top rung at batch 64"
GOAL_IMAGES_PER_S = 35_000   # issue 41's goal for a gated rung on the H200
WRONG_SCALE = 1 / 64         # the wrong rung's activation amax: 64x too small, so it saturates


class PastDefaultsError(ValueError):
    """Bad arguments to the payback, keep or lever functions."""


# ---------------------------------------------------------------------------- arithmetic
def payback(compile_s: float, before_s_per_batch: float, after_s_per_batch: float) -> float:
    """Batches until a compile pays for itself: compile seconds / seconds saved per batch.

    inf when the rung saves nothing (it never pays back); 0 for a free change.
    """
    for name, value in (("compile_s", compile_s), ("before_s_per_batch", before_s_per_batch),
                        ("after_s_per_batch", after_s_per_batch)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise PastDefaultsError(f"{name} must be a finite number, got {value!r}")
    if compile_s < 0 or before_s_per_batch <= 0 or after_s_per_batch <= 0:
        raise PastDefaultsError(f"need compile_s >= 0 and positive times per batch, got "
                                f"{compile_s}, {before_s_per_batch}, {after_s_per_batch}")
    saved = before_s_per_batch - after_s_per_batch
    if compile_s == 0:
        return 0.0
    return math.inf if saved <= 0 else compile_s / saved


@dataclass(frozen=True)
class Keep:
    kept: bool
    why: str


def keep(gate_passed: bool, gate_why: str, gain: tuple[float, float, float] | None) -> Keep:
    """Kept only when right and the gain is measured by the ladder's rule (keep_rule.gained:
    its interval, q25 to q75 over rounds, above 1 and its median at least 1 + MIN_GAIN)."""
    if not gate_passed:
        return Keep(False, f"refused by the numerics gate: {gate_why}")
    if gain is None:
        return Keep(False, "not timed")
    median, low, high = gain
    if not low <= median <= high:
        raise PastDefaultsError(f"a gain's median {median} must lie inside its interval [{low}, {high}]")
    if keep_rule.gained(median, (low, high)):
        return Keep(True, f"{median:.3f}x, interval {low:.3f}-{high:.3f} above 1")
    if low > 1.0:
        return Keep(False, f"no material gain: {median:.3f}x, interval {low:.3f}-{high:.3f} above 1 "
                           f"but under {1 + keep_rule.MIN_GAIN:.2f}x")
    if high < 1.0:
        return Keep(False, f"slower: {median:.3f}x, interval {low:.3f}-{high:.3f} below 1")
    return Keep(False, f"no clear gain: {median:.3f}x, interval {low:.3f}-{high:.3f} holds 1")


# ---------------------------------------------------------------------------- levers
GEMM_CONTROL = "GEMM path in torch (control)"
TRITON_COMPILED = "Triton fused epilogue, compiled"
TRITON_COMPILED_1024 = "Triton compiled at batch 1024"
PROLOGUE_COMPILED = "Triton prologue, compiled"
PROLOGUE_COMPILED_1024 = "Triton prologue at batch 1024"
PROLOGUE_FROZEN_1024 = "Triton prologue, frozen, b1024"
PROLOGUE_2048 = "Triton prologue at batch 2048"
PROLOGUE_WIDE_1024 = "Triton prologue b1024, wide tuning"


@dataclass(frozen=True)
class Lever:
    """One change to the top rung."""

    name: str
    why: str
    change: dict = field(default_factory=dict)     # ladder.Settings fields changed
    inductor: dict = field(default_factory=dict)   # torch._inductor.config patched while compiling
    model: str = ""        # "", "gemm-torch", "triton", "triton-op", "triton-op-prologue",
    #                        "triton-op-prologue-wide", "cudnn-fused",
    #                        "fp8:<mode>", "fp8-wrong", "int8"
    honest: bool = True    # False: a wrong rung the gate must refuse
    needs: tuple = ()      # "cuda", "inductor", "triton", "fp8"
    est_s: float = 30.0    # start it only with this much of the budget left
    base: str = TOP_NAME   # the rung it is one change from, timed interleaved with it
    stays: bool = False    # kept prepared as the base of later levers
    short: str = ""        # what it changes in a few words, where its name does not say (the
    #                        section's list of levers not yet timed)


def gpu_levers() -> list[Lever]:
    """The GPU's levers, in the order they run: the cheap ones that bear on the goal first,
    the first max-autotune (minutes of autotuning) once they are in, the rest after it."""
    fp8_why = "the 1x1 convolutions' GEMMs in e4m3 on the FP8 tensor cores (2x fp16's rate)"
    inductor = ("cuda", "inductor")
    triton_compiled = ("the 1x1s as the custom op labkit::gemm_bias_res_relu (one Triton GEMM "
                       "each, bias + residual + ReLU in its epilogue, autotuned on its first call: "
                       "in the compile s), everything else compiled by Inductor as on the top rung, "
                       "one CUDA graph")
    prologue = (triton_compiled + ", and every 3x3 convolution's bias + ReLU applied by the next "
                "1x1's GEMM to its operand as it loads it (a prologue), not by a separate kernel")
    return [
        Lever(AT_64, "the baseline's batch: what batch 256 is worth", {"batch": 64},
              needs=("cuda",), stays=True),
        Lever("freezing", "weights as constants: folded and laid out at compile time",
              {"freezing": True}, needs=inductor, stays=True),
        Lever("conv_1x1_as_mm", "1x1 convolutions lowered to GEMMs Inductor can fuse epilogues into",
              inductor={"conv_1x1_as_mm": True}, needs=inductor),
        # timed interleaved with freezing, its own control, right after it: its gain over the
        # top rung mixed freezing's in, and over freezing it was a ratio of two gains from
        # separate rounds (review 2026-12-04m 08-09-99 item 7); freezing is released after it
        Lever("freezing + conv_1x1_as_mm", "the two Inductor levers together; over freezing",
              {"freezing": True}, inductor={"conv_1x1_as_mm": True}, needs=inductor, base="freezing"),
        Lever("batch 512", "more work per launch and per graph replay", {"batch": 512},
              needs=("cuda",)),
        Lever("batch 1024", "more work per launch and per graph replay", {"batch": 1024},
              needs=("cuda",), est_s=40, stays=True),
        # Right after the batches they are judged over, so a budget-cut run still reaches them.
        # est_s: Inductor's compile (~3-4 s), the autotuning (13 shapes x 5 configs, each timed
        # ~0.15 s by Triton's do_bench, plus ~15 kernel compiles a cold Triton cache pays once),
        # the interleaved timing and the profile (~10 s at batch 1024)
        # Each Triton rung stays prepared for the prologue rung right after it, which is timed
        # interleaved with it: the prologue is judged over the rung it changes, not over the top
        # rung (where it would inherit the epilogue's gain; review 2026-12-05o3 item 1).
        Lever(TRITON_COMPILED, triton_compiled + "; over the top rung, which differs only in "
              "its 1x1 path (cuDNN + Inductor's separate tails)", model="triton-op",
              needs=("cuda", "triton", "inductor"), est_s=75, stays=True),
        # The 3x3s' bias + ReLU moved into conv3's GEMM prologue (fused_prologue.py): about half
        # of the 12% of device time the Triton rung still spent in elementwise kernels on the
        # H200 (2026-12-03), estimated from the bytes those tails move; D1's kernel classes show it.
        Lever(PROLOGUE_COMPILED, prologue + "; over the Triton rung it changes",
              model="triton-op-prologue", needs=("cuda", "triton", "inductor"), est_s=60,
              base=TRITON_COMPILED),
        Lever(TRITON_COMPILED_1024, triton_compiled + " at batch 1024; over batch 1024",
              {"batch": 1024}, model="triton-op", needs=("cuda", "triton", "inductor"), est_s=60,
              base="batch 1024", stays=True),
        Lever(PROLOGUE_COMPILED_1024, prologue + " at batch 1024; over the Triton rung at batch "
              "1024", {"batch": 1024}, model="triton-op-prologue",
              needs=("cuda", "triton", "inductor"), est_s=60, base=TRITON_COMPILED_1024, stays=True),
        # Two steps on the prologue rung at batch 1024 (the best gated rung, 3% idle on the H200,
        # 2026-12-05), each over that rung: freezing (1.01x on the top rung; not yet timed here)
        # and a batch twice as large (timed by reproduce.py 08-past: no gain, 0.986-1.000x).
        # Batch 2048 keeps the kernel's int32 offsets (layer1's 6.4M rows x 256 < 2**31).
        Lever(PROLOGUE_FROZEN_1024, prologue + " at batch 1024, with freezing; over the prologue "
              "rung at batch 1024", {"batch": 1024, "freezing": True}, model="triton-op-prologue",
              needs=("cuda", "triton", "inductor"), est_s=60, base=PROLOGUE_COMPILED_1024),
        Lever(PROLOGUE_2048, prologue + " at batch 2048; over the prologue rung at batch 1024",
              {"batch": 2048}, model="triton-op-prologue", needs=("cuda", "triton", "inductor"),
              est_s=90, base=PROLOGUE_COMPILED_1024),
        # The same rung with the autotuner choosing from fused_epilogue.TUNING_SETS["wide"] (the
        # standard configs and WIDE_EXTRA_CONFIGS, whose comment says which and why): its own
        # autotuner, so the base keeps its choices while both are timed interleaved.
        # est_s: 13 shapes x 12 configs timed, ~30 more kernel compiles on a cold Triton cache.
        Lever(PROLOGUE_WIDE_1024, prologue + " at batch 1024, each GEMM shape's config chosen from "
              f"{len(fe.TUNING_SETS['wide'])} tile configs instead of {len(fe.TUNING_SETS['standard'])}; "
              "over the prologue rung at batch 1024", {"batch": 1024},
              model="triton-op-prologue-wide", needs=("cuda", "triton", "inductor"), est_s=100,
              base=PROLOGUE_COMPILED_1024,
              short=f"the prologue rung at batch 1024 with its Triton GEMM autotuned over "
                    f"{len(fe.TUNING_SETS['wide'])} tile configs, not {len(fe.TUNING_SETS['standard'])}; "
                    "each checked under Triton's CPU interpreter"),
        # judged over batch 1024 (its own control), so its gain is freezing's, not the batch's
        Lever("freezing at batch 1024", "the best stock setting measured before (about 33,000 img/s)",
              {"freezing": True, "batch": 1024}, needs=inductor, est_s=40, base="batch 1024"),
        Lever("cuDNN fused epilogues", "every convolution's bias, ReLU and residual add inside "
              "cuDNN's kernel (cudnn_convolution_relu / _add_relu), eager + the ladder's CUDA graph",
              {"compile": None}, model="cudnn-fused", needs=("cuda",), est_s=40),
        Lever("cuDNN fused epilogues at batch 1024", "the fused epilogues with the batch that "
              "helped the stock rung", {"compile": None, "batch": 1024}, model="cudnn-fused",
              needs=("cuda",), est_s=50),
        Lever("FP8 per-tensor", fp8_why, model="fp8:per-tensor", needs=("cuda", "fp8")),
        Lever("FP8 wrong activation scale", f"activation amax x{WRONG_SCALE:g}: saturates; the gate "
              "must refuse it", model="fp8-wrong", honest=False, needs=("cuda", "fp8")),
        # the control first: the Triton rung runs eager + CUDA graph as it does, and is judged
        # over it (over the compiled top rung it would compare regimes, not the fusion)
        Lever(GEMM_CONTROL, "1x1s as cuBLAS GEMMs, tails as separate kernels, "
              "eager + CUDA graph: the Triton rung's control", {"compile": None}, model="gemm-torch",
              needs=("cuda",), stays=True),
        Lever("Triton fused epilogue", "1x1s as one Triton GEMM each with bias + residual + ReLU "
              "in the epilogue, eager + CUDA graph", {"compile": None}, model="triton",
              needs=("cuda", "triton"), est_s=60, base=GEMM_CONTROL),
        Lever("max-autotune-no-cudagraphs", "Inductor times Triton and cuBLAS candidates for every "
              "convolution and GEMM (the ladder's CUDA graph around it)",
              {"compile": "max-autotune-no-cudagraphs"}, needs=inductor, est_s=150),
        Lever("conv_1x1_as_mm + max-autotune", "the 1x1 convolutions as GEMMs that max-autotune "
              "may give to Triton templates, whose epilogue Inductor fuses the bias, residual and "
              "ReLU into (cuBLAS, chosen in default mode, is an extern kernel it cannot fuse into)",
              {"compile": "max-autotune-no-cudagraphs"}, inductor={"conv_1x1_as_mm": True},
              needs=inductor, est_s=200),
        Lever("FP8 per-channel weights", fp8_why + "; one weight scale per output channel "
              "(row-wise _scaled_mm, bf16 out)", model="fp8:per-channel", needs=("cuda", "fp8")),
        Lever("FP8 per-tensor, fast accumulation", fp8_why + "; _scaled_mm's use_fast_accum",
              model="fp8:per-tensor:fast", needs=("cuda", "fp8")),
        # issue 41: 'INT8 where PyTorch can run it on the GPU' (int8.py says how and why)
        Lever("INT8 per-channel weights", "the same 1x1 GEMMs in int8 through torch._int_mm on the "
              "integer tensor cores; a weight scale per output channel, the calibrated activation "
              "scale per layer", model="int8", needs=("cuda", "int8")),
        Lever("freezing at batch 64", "freezing at the baseline's batch", {"batch": 64, "freezing": True},
              needs=inductor, base=AT_64),
        Lever("conv_1x1_as_mm at batch 64", "conv_1x1_as_mm at the baseline's batch", {"batch": 64},
              inductor={"conv_1x1_as_mm": True}, needs=inductor, base=AT_64),
        Lever("max-autotune", "the same autotuning with Inductor's own CUDA graphs (cudagraph "
              "trees) instead of the ladder's; after max-autotune-no-cudagraphs in one run it "
              "finds that lever's autotuning results in the cache (not a cold compile)",
              {"compile": "max-autotune", "cuda_graphs": False}, needs=inductor, est_s=150),
    ]


def cpu_levers() -> list[Lever]:
    """The CPU smoke path's levers: the GPU's (skipped with their reasons) plus emulated FP8."""
    emulated = [
        Lever("GEMM path in torch (CPU)", "the 1x1s as matmuls, tails separate (pure torch)",
              model="gemm-torch"),
        Lever("FP8 per-tensor (emulated)", "e4m3 values, float32 matmul: the gate's view of FP8",
              model="fp8:per-tensor"),
        Lever("FP8 per-channel weights (emulated)", "e4m3 values, per-channel weight scales",
              model="fp8:per-channel"),
        Lever("FP8 wrong activation scale (emulated)", f"activation amax x{WRONG_SCALE:g}: the gate "
              "must refuse it", model="fp8-wrong", honest=False),
    ]
    return emulated + [lv for lv in gpu_levers() if "cuda" in lv.needs]


def parse_names(spec: str, known: Sequence[str]) -> list[str]:
    """The lever names in a comma-separated list, where a name may hold commas itself
    ("Triton fused epilogue, compiled"): at each piece the longest run of pieces that spells a
    known name wins. An unknown name is a PastDefaultsError that lists the known ones."""
    def norm(text: str) -> str:
        return ",".join(part.strip() for part in text.split(","))

    by_form = {norm(name): name for name in known}
    pieces = [piece.strip() for piece in spec.split(",")]
    names, i = [], 0
    while i < len(pieces):
        if not pieces[i]:
            i += 1
            continue
        for j in range(len(pieces), i, -1):
            name = by_form.get(norm(",".join(pieces[i:j])))
            if name is not None:
                names.append(name)
                i = j
                break
        else:
            raise PastDefaultsError(f"unknown lever {pieces[i]!r} in {spec!r}; known: {list(known)}")
    return names


def select(levers: Sequence[Lever], spec: str) -> tuple[list[Lever], list[str]]:
    """The levers a --levers list names, with the bases they are judged over added (a lever
    whose base did not run is skipped), in the run's order; and the names of the bases added.

    The top rung always runs (Runner.run), so it is never added or asked for."""
    wanted = set(parse_names(spec, [lv.name for lv in levers]))
    by_name = {lv.name: lv for lv in levers}
    added: list[str] = []
    for name in list(wanted):
        base = by_name[name].base
        while base in by_name and base not in wanted:
            wanted.add(base)
            added.append(base)
            base = by_name[base].base
    return [lv for lv in levers if lv.name in wanted], [lv.name for lv in levers if lv.name in added]


def missing(lever: Lever, device: torch.device) -> str:
    """'' when the lever can run on this device, else why it is skipped."""
    on_gpu = torch.device(device).type == "cuda"
    if "triton" in lever.needs and fe.triton_available():
        return f"the Triton kernel cannot run here: {fe.triton_available()}"
    if "fp8" in lever.needs and fe.missing_fp8(device):
        return (f"{fe.missing_fp8(device)}; the emulated FP8 rungs gate the same e4m3 values"
                if not on_gpu else fe.missing_fp8(device))
    if "int8" in lever.needs and not hasattr(torch, "_int_mm"):
        return "this torch has no torch._int_mm"
    if "int8" in lever.needs and not on_gpu:
        return "the GPU's top rung: torch._int_mm's int8 GEMMs on a CUDA GPU's integer tensor cores"
    if "inductor" in lever.needs and not on_gpu:
        return ("an Inductor lever on the GPU's top rung (torch.compile and CUDA graphs); on this "
                "CPU each compile takes ~30 s and there are no CUDA graphs")
    if "cuda" in lever.needs and not on_gpu:
        return "the GPU's top rung (fp16 weights, TF32, CUDA graphs, batch 64-1024 at 224 px)"
    return ""


@dataclass
class Row:
    """One lever's outcome."""

    name: str
    why: str
    status: str                  # "measured", "refused", "gated only", "failed", "skipped"
    honest: bool = True
    settings: dict = field(default_factory=dict)
    inductor: dict = field(default_factory=dict)
    note: str = ""               # the error text, the skip's reason, what stayed fp16
    gate: dict | None = None
    as_expected: bool | None = None   # honest passed / wrong refused
    compile_s: float | None = None
    images_per_s: float | None = None
    median_s: float | None = None     # wall seconds per batch, unprofiled, steady state
    iqr_s: float | None = None
    gain: tuple | None = None         # (median, q25, q75) over the top rung, per image
    base: str = TOP_NAME              # the rung the gain is over
    base_images_per_s: float | None = None  # the base's speed in the same interleaved rounds
    device_gain: tuple | None = None  # (median, low, high) device time per image, base over this
    kept: bool = False
    keep_why: str = ""
    tflops: float | None = None       # images/s x ResNet-50's FLOPs per image at this size
    pct_of_ceiling: float | None = None  # of this machine's measured matmul ceiling, where cached
    device_s: float | None = None     # device-busy seconds per batch, from kernel records
    error_vs_base: float | None = None  # relative L2 error of its logits against its base's
    idle_share: float | None = None   # 1 - device_s / median_s (the unprofiled wall)
    kinds: dict = field(default_factory=dict)
    kernel_ms: dict = field(default_factory=dict)  # device ms per batch by kernel name, longest first
    payback_batches: float | None = None         # the whole cold compile
    extra_payback_batches: float | None = None   # compile beyond the top rung's own
    seconds: float = 0.0

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        for key in ("payback_batches", "extra_payback_batches"):
            if d[key] is not None and math.isinf(d[key]):
                d[key] = "never"
        return d


# ---------------------------------------------------------------------------- models
def _fp8_model(folded: nn.Module, amax: dict[str, float], mode: str, emulate: bool,
               scale: float = 1.0, fast_accum: bool = False) -> fe.GemmResNet:
    def make(name: str, conv: nn.Conv2d) -> fe.Conv1x1 | None:
        if name not in amax or not fp8.is_gemm_conv(conv):
            return None
        return fe.Conv1x1(conv, "fp8", fp8.Fp8Gemm(conv, amax[name] * scale, mode, emulate,
                                                   fast_accum))
    return fe.GemmResNet(folded, make)


def _int8_model(folded: nn.Module, amax: dict[str, float]) -> fe.GemmResNet:
    """The folded network with its GEMM-shaped 1x1 convolutions in int8 (int8.Int8Gemm)."""
    def make(name: str, conv: nn.Conv2d) -> fe.Conv1x1 | None:
        if name not in amax or not fp8.is_gemm_conv(conv):
            return None
        return fe.Conv1x1(conv, "int8", int8.Int8Gemm(conv, amax[name]))
    return fe.GemmResNet(folded, make)


def config_set(lever: Lever | None) -> str:
    """The Triton GEMM's config set a lever tunes from (fused_epilogue.TUNING_SETS)."""
    return "wide" if lever is not None and lever.model.endswith("-wide") else "standard"


def _tuned_afresh(folded: nn.Module, prologue: bool = False) -> fe.GemmResNet:
    """The custom-op GEMM network (with the 3x3s' tails in conv3's prologue where asked), with
    the autotuner's earlier choices dropped: the shape timing or an earlier rung may have tuned
    these shapes, and this rung's compile seconds should hold its own tuning."""
    fe.forget_tuning()
    return fused_prologue.PrologueResNet(folded) if prologue else fe.GemmResNet(folded, fe.op_backend)


FP16_PARTS = ("the 7x7 stem, every 3x3 convolution, the stride-2 1x1 shortcuts and the classifier "
              "stay fp16 (fp8's notes say why); the bias, residual and ReLU run in fp16 after the "
              "FP8 GEMM")


def error_against(prepared: object, base: object) -> float | None:
    """The relative L2 error of a rung's gate logits against its base's (`numerics.relative_error`),
    None where either has none or their shapes differ (another batch)."""
    out, ref = getattr(prepared, "output", None), getattr(base, "output", None)
    if out is None or ref is None or out.shape != ref.shape:
        return None
    return numerics.relative_error(out, ref)


class Runner:
    """Measures the levers on one device against the top rung; see the module's notes."""

    def __init__(self, device: torch.device, image: int, top: ladder.Settings,
                 rounds: int = 5, rep_ms: float = 300.0, profile_batches: int = 3,
                 progress: Callable[[str], None] | None = None) -> None:
        self.device, self.image, self.top_settings = torch.device(device), image, top
        self.progress = progress or (lambda _line: None)
        self.ladder = ladder.Ladder(self.device, image, rep_ms=rep_ms, rounds=rounds,
                                    profile_batches=profile_batches)
        self._amax: dict[str, float] | None = None
        self.top: Row | None = None
        self.bases: dict[str, tuple[ladder.Live, Row]] = {}   # prepared rungs levers are built on

    # -- the models the levers name
    def amax(self) -> dict[str, float]:
        """Each GEMM convolution's input amax on the calibration images (once per run)."""
        if self._amax is None:
            folded = ladder.build_model(dataclasses.replace(self.top_settings, fold_bn=True),
                                        self.ladder.model_factory, 0, self.image, self.device)
            images = numerics.fixed_images(numerics.CALIBRATION_IMAGES, self.image,
                                           numerics.CALIBRATION_SEED)
            self._amax = fp8.calibrate_amax(folded.to(self.device), images.to(self.device),
                                            fe.gemm_convs(folded))
        return self._amax

    def transform(self, lever: Lever) -> Callable[[nn.Module], nn.Module] | None:
        if not lever.model:
            return None
        if lever.model == "gemm-torch":
            return lambda folded: fe.GemmResNet(folded, fe.torch_backend)
        if lever.model == "triton":
            return lambda folded: fe.GemmResNet(folded, fe.triton_backend)
        if lever.model == "triton-op":
            return _tuned_afresh
        if lever.model in ("triton-op-prologue", "triton-op-prologue-wide"):
            return lambda folded: _tuned_afresh(folded, prologue=True)
        if lever.model == "cudnn-fused":
            return cudnn_fused.fused_model
        if lever.model == "int8":
            return lambda folded: _int8_model(folded, self.amax())
        emulate = self.device.type != "cuda"
        if lever.model == "fp8-wrong":
            return lambda folded: _fp8_model(folded, self.amax(), "per-tensor", emulate, WRONG_SCALE)
        parts = lever.model.split(":")            # fp8:<mode>[:fast]
        mode, fast = parts[1], parts[2:] == ["fast"]
        return lambda folded: _fp8_model(folded, self.amax(), mode, emulate, fast_accum=fast)

    # -- one rung
    def _prepare(self, name: str, settings: ladder.Settings, lever: Lever | None) -> object:
        patch = contextlib.nullcontext()
        if lever is not None and lever.inductor:
            import torch._inductor.config as inductor_config

            patch = inductor_config.patch(**lever.inductor)
        # the Triton GEMMs tune on the rung's first calls, inside prepare: from the lever's set
        with patch, fe.tuning(config_set(lever)):
            return self.ladder.prepare(name, settings, self.transform(lever) if lever else None)

    def measure_top(self) -> Row:
        """Prepare, gate and time the top rung; it stays prepared as every comparison's base."""
        self.progress(TOP_NAME)
        started = _clock.perf_counter()
        made = self._prepare(TOP_NAME, self.top_settings, None)
        row = Row(TOP_NAME, "the ladder's top rung: every lever is one change from it", "failed",
                  settings=dataclasses.asdict(self.top_settings))
        if isinstance(made, ladder.Rung):
            row.note = made.error
            self.top = row
            return row
        gate = made.rung.gate
        row.gate, row.compile_s = gate.as_dict(), made.prepared.compile_s
        if not gate.passed:
            row.status, row.note = "refused", gate.why
        else:
            self.ladder.baselines.append(made)
            self.bases[TOP_NAME] = (made, row)
            self.ladder.compare([])
            row.status = "measured"
            self._fill_timing(row, made.rung)
        row.as_expected = gate.passed
        row.seconds = _clock.perf_counter() - started
        self.top = row
        return row

    def _fill_timing(self, row: Row, rung: ladder.Rung) -> None:
        row.images_per_s, row.median_s, row.iqr_s = rung.images_per_s, rung.median_s, rung.iqr_s
        row.tflops = rung.images_per_s * self.ladder.flops_per_image / 1e12
        row.pct_of_ceiling = rung.pct_of_ceiling
        row.device_s, row.kinds, row.kernel_ms = rung.device_s, dict(rung.kinds), dict(rung.kernel_ms)
        if rung.device_s is not None and rung.median_s > 0:   # from the unprofiled wall time
            row.idle_share = max(0.0, 1.0 - rung.device_s / rung.median_s)

    def measure(self, lever: Lever, deadline: float | None = None) -> Row:
        """One lever: skip, fail, refuse, or gate and time it against the top rung."""
        started = _clock.perf_counter()
        why_not = missing(lever, self.device)
        if why_not:
            return Row(lever.name, lever.why, "skipped", lever.honest, dict(lever.change),
                       dict(lever.inductor), note=why_not)
        try:
            settings = dataclasses.replace(self.top_settings, **lever.change)
        except ladder.LadderError as error:
            return Row(lever.name, lever.why, "failed", lever.honest, note=str(error))
        row = Row(lever.name, lever.why, "skipped", lever.honest, dataclasses.asdict(settings),
                  dict(lever.inductor), base=lever.base)
        if lever.base not in self.bases:
            row.note = f"its base, {lever.base!r}, was not measured (see its row)"
            return row
        if deadline is not None and deadline - _clock.perf_counter() < lever.est_s:
            row.note = (f"out of the run's budget (needs ~{lever.est_s:.0f} s, "
                        f"{max(0.0, deadline - _clock.perf_counter()):.0f} s left)")
            return row
        self.progress(lever.name)
        made = self._prepare(lever.name, settings, lever)
        if isinstance(made, ladder.Rung):
            row.status, row.note = "failed", made.error
            row.seconds = _clock.perf_counter() - started
            return row
        try:
            self._judge(row, lever, made)
        except Exception as failure:  # noqa: BLE001 -- a lever that breaks is reported, not fatal
            row.status, row.note = "failed", f"{type(failure).__name__}: {failure}"
        finally:
            if not (lever.stays and row.status == "measured"):
                made.prepared = None
                ladder.release_memory(self.device)
        row.seconds = _clock.perf_counter() - started
        return row

    def _judge(self, row: Row, lever: Lever, made: ladder.Live) -> None:
        prepared = made.prepared
        low = lever.model.startswith(("fp8", "int8"))   # held to the same loosest tolerance
        math_ = FP8_GATE_MATH if low else made.rung.settings.math
        rows = prepared.output.shape[0]
        gate = numerics.check(prepared.output, self.ladder.reference[:rows], math_)
        row.gate, row.compile_s = gate.as_dict(), prepared.compile_s
        # A wrong rung must be refused and an exact transform (batch, freezing, a GEMM in the
        # same precision) must pass; for FP8 the gate's verdict is the finding, not a check.
        row.as_expected = (None if lever.model.startswith("fp8:") or lever.model == "int8"
                           else gate.passed == lever.honest)
        if lever.model.startswith("triton-op"):
            with fe.tuning(config_set(lever)):
                row.note = fe.tuning_note(fe.tuned(), of=len(fe.TUNING_SETS[config_set(lever)]))
        if lever.model == "int8":
            row.note = FP16_PARTS.replace("FP8", "INT8")
        if lever.model.startswith("fp8"):
            row.note = FP16_PARTS + (" (emulated: dequantised e4m3 values, float32 matmul)"
                                     if self.device.type != "cuda" else "")
        if not gate.passed:
            row.status = "refused"
            row.keep_why = f"refused by the numerics gate: {gate.why}"
            return
        if self.device.type != "cuda" and lever.model.startswith("fp8"):
            row.status = "gated only"
            row.keep_why = "emulated FP8: its speed says nothing about FP8, so it is not timed"
            return
        self.ladder.compare([made])
        base_live, base_row = self.bases[lever.base]
        row.error_vs_base = error_against(prepared, base_live.prepared)
        if lever.model.startswith("triton-op-prologue") and row.error_vs_base is not None:
            # the gate's tolerance is for lower precision; against the rung it changes, which
            # computes the same bias + ReLU in fp32 rounded once, a wrong prologue shows at
            # 1e-2 and more where a right one reads ~0 (review 2026-12-05o3 item 3); a wider
            # tuning's other K tiles only reorder the fp32 sums (~1e-4 at most)
            row.note += f"; against {lever.base}: relative error {row.error_vs_base:.1e}"
        rung, base = made.rung, base_live.rung
        row.status = "measured"
        self._fill_timing(row, rung)
        row.gain = tuple(rung.over[base.name])
        # The base keeps the figures of its own first timing (Ladder.compare re-times no rung);
        # its speed in these rounds is the lever's over the interleaved ratio.
        row.base_images_per_s = rung.images_per_s / row.gain[0]
        if lever.stays:
            self.ladder.baselines.append(made)
            self.bases[lever.name] = (made, row)
        measured = ladder.device_gain(base, rung)
        row.device_gain = tuple(measured) if measured else None
        decision = keep(True, "", row.gain)
        row.kept, row.keep_why = decision.kept, decision.why
        own_s = rung.median_s / rung.settings.batch      # seconds per image
        base_s = own_s * row.gain[0]                      # the base's, by the interleaved ratio
        batch = rung.settings.batch
        row.payback_batches = payback(prepared.compile_s, base_s * batch, own_s * batch)
        extra = max(0.0, prepared.compile_s - (base_row.compile_s or 0.0))
        row.extra_payback_batches = payback(extra, base_s * batch, own_s * batch)

    def run(self, levers: Sequence[Lever], budget_s: float | None = None,
            on_row: Callable[[Row], None] | None = None) -> list[Row]:
        """The top rung, then every lever in order; on_row sees each row as it is made."""
        deadline = None if budget_s is None else _clock.perf_counter() + budget_s
        rows = [self.measure_top()]
        if on_row:
            on_row(rows[0])
        for at, lever in enumerate(levers):
            try:
                row = self.measure(lever, deadline)
            except Exception as failure:  # noqa: BLE001 -- never lose the run to one lever
                row = Row(lever.name, lever.why, "failed", lever.honest,
                          note=f"{type(failure).__name__}: {failure}")
                ladder.release_memory(self.device)
            rows.append(row)
            if on_row:
                on_row(row)
            self.release_bases({later.base for later in levers[at + 1:]})
        return rows

    def release_bases(self, needed: set[str]) -> None:
        """Drop every kept base but the top rung that no later lever is judged over: each kept
        base joins every later comparison's rounds, so one kept past its last lever only costs
        GPU time (freezing, kept for 'freezing + conv_1x1_as_mm' right after it)."""
        for name in [n for n in self.bases if n != TOP_NAME and n not in needed]:
            live, _ = self.bases.pop(name)
            if live in self.ladder.baselines:
                self.ladder.baselines.remove(live)
            live.prepared = None
            ladder.release_memory(self.device)


# ---------------------------------------------------------------------------- reading
def longest_kernels(row: Row, count: int = 6) -> str:
    """The row's `count` longest kernels by device ms per batch, as one line ('' when none were
    profiled): which kernels the time between the rung and its floors sits in."""
    named = [(k, v) for k, v in row.kernel_ms.items() if k != attribution.OTHER_KERNELS][:count]
    if not named:
        return ""
    return "; ".join(f"{name[:60]} {ms:.2f} ms" for name, ms in named)


def ranked(rows: Sequence[Row]) -> list[Row]:
    """The measured, gated rungs by images/s (refused, failed and skipped rungs never rank)."""
    return sorted([r for r in rows if r.status == "measured" and r.images_per_s],
                  key=lambda r: -r.images_per_s)


def _num(value: float | None, fmt: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and math.isinf(value):
        return "never"
    return format(value, fmt)


def table(rows: Sequence[Row]) -> str:
    """The rows as fixed-width text: status, speed, gain and keep, error, compile, payback."""
    head = (f"{'rung':<34} {'status':<10} {'img/s':>8} {'(base)':>8} {'gain over base [IQR]':>22} {'kept':>4} "
            f"{'err (tol)':>16} {'compile s':>9} {'payback':>8} {'dev ms/b':>8} {'dev gain':>8} {'idle':>5}")
    lines = [head, "-" * len(head),
             "(base): the images/s of the rung the lever changes (the top rung, or the top rung at "
             "batch 64 for the batch-64 levers) in the same interleaved rounds; payback: batches "
             "until the lever's whole cold compile is repaid by the time it saves per batch (the "
             "JSON's extra_payback_batches counts only the compile beyond the base's own, which "
             "the process's first compile inflates); dev ms/b: device time per batch "
             "(kernel records); dev gain: the base's device time per image over this rung's; "
             "idle: 1 - device time / unprofiled wall time, %"]
    for r in rows:
        gain = (f"{r.gain[0]:.3f} [{r.gain[1]:.3f}-{r.gain[2]:.3f}]" if r.gain else "-")
        err = (f"{r.gate['rel_error']:.1e} ({r.gate['tolerance']:.2g})" if r.gate else "-")
        lines.append(
            f"{r.name[:34]:<34} {r.status:<10} {_num(r.images_per_s, ',.0f'):>8} "
            f"{_num(r.base_images_per_s, ',.0f'):>8} {gain:>22} "
            f"{('yes' if r.kept else 'no') if r.status == 'measured' and r.gain else '-':>4} "
            f"{err:>16} {_num(r.compile_s, '.1f'):>9} {_num(r.payback_batches, ',.0f'):>8} "
            f"{_num(None if r.device_s is None else 1e3 * r.device_s, '.2f'):>8} "
            f"{_num(None if r.device_gain is None else r.device_gain[0], '.3f'):>8} "
            f"{_num(None if r.idle_share is None else 100 * r.idle_share, '.0f'):>5}")
        if r.status in ("failed", "skipped", "refused") or r.note:
            why = r.note if r.status != "refused" else (r.gate or {}).get("why", "")
            lines.append(f"    {r.status}: {why[:300]}")
        if r.kinds:
            lines.append("    time by kernel class: " + ", ".join(f"{k} {100 * v:.0f}%" for k, v in r.kinds.items()))
    return "\n".join(lines)
