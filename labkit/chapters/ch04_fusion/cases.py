"""Chapter 04's cases, tables and quiz answers, moved out of the notebook so it shows measurements.

The notebook used to define these itself (a quiz's answer beside its question, hand-formatted
print tables for the add sweep, the recompile sweep and C18's numbers, the GradScaler steps,
`if on_gpu:` branches choosing a size, a backend or a record's key), so a learner read
formatting and set-up code between every prediction and its measurement. They live here, each
named for what it gives; the notebook reaches them as `chapter.lab.cases`. Nothing here decides
a verdict: the checks are in `claims.py`, and the measurements themselves stay in the notebook
or in the chapter's instruments (`fusion`, `launch_overhead`, `fused_kernels`).

The models layer's folding and ResNet-50 are re-exported (`cases.folding`, `cases.resnet`), so
the notebook imports one name.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import re
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np
import torch
import torch.fx.experimental.optimization as fx_optimization

from labkit import claims
from labkit.chapters.ch04_fusion import claims as c19_claims
from labkit.chapters.ch04_fusion import fused_kernels, fusion, launch_overhead
from labkit.chapters.ch04_fusion.claims import seed_contrast
from labkit.claims import quiz_keys
from labkit.core import results
from labkit.measure import bench, clocks, kernel_records, timeline
from labkit.models import folding, resnet
from labkit.show.table import Table, format_value, rows
from labkit.show.widgets.quiz import Key

__all__ = ["folding", "resnet"]  # re-exported for the notebook, with the functions below

FOLD_CLASSES = ("identical, bit for bit", "equal up to float32 rounding (relative error below 1e-4)",
                "visibly different (relative error above 1e-4)")
# No choice names the seed (review 2026-12-03h item 11: "(the seed's figure)" cued the key).
GAP_CLASSES = ("under 0.5 us", "0.5 to 2 us", "more than 2 us")
OVERFLOW_CLASSES = ("skips the optimizer step and halves the scale",
                    "applies the step and halves the scale", "skips the step and keeps the scale")
TIMELINE_FIGURES = ("kernels", "window_us", "gpu_busy_share", "launch_gap_median_us")
FLOAT_NOISE_US = 0.001  # the profiler writes times to the nanosecond: smaller differences are rounding


def key_here(name: str, on_gpu: bool) -> str:
    """The results key a measurement of this machine is kept under: the reference key on a GPU
    (what results/nvidia-h200.json holds), `<name>_cpu` elsewhere, so a CPU run never
    overwrites or reads as the GPU's record."""
    return name if on_gpu else f"{name}_cpu"


def _where(record: object) -> str:
    """'' for a result measured here, else the Recorded's label ('recorded on nvidia-h200, ...')."""
    return str(getattr(record, "label", "")) if getattr(record, "measured_here", True) is False else ""


def _payload(record: object) -> Mapping | None:
    """A measured dict, or a Recorded's payload (None when nothing is recorded)."""
    value = getattr(record, "value", record)
    return value if isinstance(value, Mapping) else None


def which_gpu(on_gpu: bool) -> str:
    """Whose GPU C18's and C19's quizzes ask about: this machine's; without one, the reference
    H200's, whose recorded answer grades them. Review 2026-12-06 item 11: the clause for a CPU
    cost a GPU page's 1,500-word core five words in each question, so a GPU page leaves it out."""
    return "this machine's GPU" if on_gpu else "this machine's GPU (without one, the reference H200's)"


# ---------------------------------------------------------------------------- C20: folding


def folding_error_class() -> str:
    """The folding quiz's answer: fold one ResNet-50 block (random BatchNorm statistics) and
    classify the output error, computed here when the learner submits."""
    block = folding.randomize_batchnorm(resnet.Bottleneck(64, 16, stride=2), seed=5).eval()
    x = torch.randn(2, 64, 16, 16)
    with torch.no_grad():
        error = folding.max_error(folding.fold_model(block)(x), block(x))["max_rel_error"]
    if error == 0:
        return FOLD_CLASSES[0]
    return FOLD_CLASSES[1] if error < 1e-4 else FOLD_CLASSES[2]


def fold_size(sizes: object, on_gpu: bool) -> tuple[int, int]:
    """(batch, image side) for the folded ResNet-50: the chapter's CNN size on a GPU, one 64x64
    image on a CPU (a ResNet-50 batch costs seconds on two cores)."""
    return (sizes.cnn_batch, sizes.cnn_image) if on_gpu else (1, 64)  # type: ignore[attr-defined]


def resnet50_folded_two_ways(device: torch.device) -> tuple[torch.nn.Module, torch.nn.Module,
                                                             torch.nn.Module]:
    """(original, folded by hand, folded by torch.fx's fuse): ResNet-50 in eval mode with random
    BatchNorm statistics (a fresh one would make folding change almost nothing)."""
    model = folding.randomize_batchnorm(resnet.resnet50(), seed=0).eval().to(device)
    return model, folding.fold_model(model), fx_optimization.fuse(model)


@contextlib.contextmanager
def full_float32() -> Iterator[None]:
    """TF32 off for convolutions and matmuls inside, restored after: on a GPU float32 runs in
    TF32 by default (a 10-bit mantissa), and comparing outputs is about the formula."""
    kept = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = kept


# The relative error chapter 04's tables show (`folding.max_error`): max |Δ| over the largest
# |output| of the reference, not an elementwise ratio (review 2026-12-06 item 10: a learner's
# elementwise relative error near zero outputs reads far larger)
REL_ERROR_COLUMN = "max |Δ| / max |out|"


def folding_table(nets: Mapping[str, torch.nn.Module], pair_check: folding.FoldCheck,
                  errors: Mapping[str, Mapping[str, float]]) -> Table:
    """BatchNorm2d modules left in each network, and each folded output's error against the
    original's; the formula's pair-by-pair check against PyTorch's utility as a note."""
    # review 2026-12-06 item 10: the column says which relative error (not elementwise)
    shown = Table("Conv-BN folding, checked", ["network", "BatchNorm2d modules",
                                               "max abs error", REL_ERROR_COLUMN])
    for name, net in nets.items():
        error = errors.get(name, {})
        shown.add(name, sum(isinstance(m, torch.nn.BatchNorm2d) for m in net.modules()),
                  error.get("max_abs_error"), error.get("max_rel_error"))
    # The per-pair errors are evidence (C20's verdict line states the deciding one): folded.
    return shown.fold(f"hand formula against fuse_conv_bn_eval, {pair_check.pairs} pairs",
                      f"max weight error {pair_check.max_weight_error:.1e}, max bias error "
                      f"{pair_check.max_bias_error:.1e} (largest weight "
                      f"{pair_check.max_weight_magnitude:.2f})")


def stated_gain(comparison: bench.Comparison, faster: str) -> tuple[float, tuple[float, float], str]:
    """(speed-up, its per-round spread, the stated ratio): `faster`'s speed against the
    baseline's, stated only inside its spread and where no flag could carry it across 1x (the
    trust rule's `stated_ratio`), otherwise said to be noise."""
    variant = comparison[faster]
    gain = 1 / variant.ratio
    spread = (1 / variant.ratio_q75, 1 / variant.ratio_q25)
    drift = drifted(comparison, faster)
    if drift:
        return gain, spread, f"no ratio to state: {drift}"
    return gain, spread, claims.trust.stated_ratio(gain, spread, flags=comparison.flags(), what=faster)


# How far outside its rounds' own ratios a ratio of the pooled medians must lie before the rounds
# are said to have drifted (review 2026-12-05o 03-04 item 1): a round-level shift common to both
# variants (a clock or thermal level, the case interleaving protects against) moves the pooled
# medians off a per-round ratio that stays right, and the H200's fold rounds span only ~0.1%.
DRIFT_TOLERANCE = 1.05


def drifted(comparison: bench.Comparison, faster: str) -> str:
    """'the rounds drifted (medians 1.55x, per-round 1.07-1.17x): read neither' where the ratio
    of the table's pooled medians (the baseline's over `faster`'s) lies outside every round's
    own ratio (min to max of the per-round speed-ups) by more than DRIFT_TOLERANCE: the rounds
    moved between them, so neither the medians nor the per-round ratio is the code's; ''
    otherwise.

    Review 2026-12-04n 03-04 item 6: the CPU page's folding table showed 82.2 against 53.2 ms
    (1.55x) beside a ratio column of 0.91x (0.86-0.94) and 'no ratio to state: 1.10x (rounds
    1.07-1.17)', the trust rule reading only the per-round ratios. Review 2026-12-05o item 1:
    with no tolerance the rule fired on about 1 H200 run in 10 (rounds 0.1% wide, a 0.2% shift
    common to both variants), discarding the per-round ratio interleaving exists to protect."""
    variant, base = comparison[faster], comparison[comparison.baseline]
    rounds = [1 / r for r in variant.round_ratios if r > 0]
    if not rounds or variant.timing.median_s <= 0:
        return ""
    pooled = base.timing.median_s / variant.timing.median_s
    low, high = min(rounds), max(rounds)
    if low / DRIFT_TOLERANCE <= pooled <= high * DRIFT_TOLERANCE:
        return ""
    return f"the rounds drifted (medians {pooled:.2f}x, per-round {low:.2f}-{high:.2f}x): read neither"


def fold_timing_form(model: torch.nn.Module, images: torch.Tensor, comparison: bench.Comparison,
                     original: str, matmul_tflops: Mapping[str, float], on_gpu: bool) -> str:
    """What the folding timing ran, in one line: batch, image size, dtype, the math the
    convolutions ran in (TF32 on a GPU with cuDNN's switch on, as PyTorch's default; float32
    otherwise) and the original's rate as a share of this machine's matmul ceiling in that math
    (review 2026-12-03h item 11: '9.48 -> 9.21 ms, 1.03x' named none of them). The FLOPs are
    counted on one forward pass by torch's FlopCounterMode, not typed."""
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(images)
    flops = counter.get_total_flops()
    tf32 = on_gpu and bool(torch.backends.cudnn.allow_tf32)
    math_key, math_name = ("tfloat32", "TF32") if tf32 else ("float32", "float32")
    median = comparison[original].timing.median_s
    rate = flops / median / 1e12 if median > 0 else 0.0
    ceiling = matmul_tflops.get(math_key)
    share = f", {100 * rate / ceiling:.0f}% of the {math_key} matmul ceiling" if ceiling else ""
    batch, _, height, _ = images.shape
    dtype = str(images.dtype).replace("torch.", "")
    math_said = "" if math_name == dtype else f" (convolutions in {math_name} math)"  # a CPU's float32: said once
    return (f"Batch {batch}, {height}x{height}, {dtype}{math_said}: the original ran {flops / 1e9:.3g} GFLOP "
            f"at {rate:.3g} TFLOP/s{share}.")


# What a computed loop figure is (review 2026-12-03e item 11): the slower of the host's launch
# and the device time, each measured apart. It explains a loop's pace; it does not time one
# (review 2026-12-03h item 4: reduce-overhead's computed row read 2.68x faster, 1.05x slower
# and 1.91x faster in three H200 records). Where a line says "in a loop", `timed_loop` times it.
LOOP_PACE = "loop pace = max(host launch, device) per call, computed, not timed"
LOOP_TIMED = "back-to-back calls timed on the wall clock"
LOOP_ROUNDS = 5


def timed_loop(variants: Mapping[str, Callable[[], object]], baseline: str, rounds: int = LOOP_ROUNDS,
               rep_ms: float = 200.0) -> dict:
    """A Python loop of each variant's calls, timed rather than computed: `clocks.interleaved_loops`
    (perf_counter around a round of back-to-back calls, synchronised before and after, nothing
    else between them), interleaved in `rounds` rounds so each round's ratio to `baseline` gives
    a spread the trust rule reads. Review 2026-12-05w item 2: the harness's hot mode on the wall
    clock, used before, recorded two CUDA events around every call, and read reduce-overhead's
    loop 21% slower than a plain loop of the same calls.

    Returns {'rows': per variant its median per call, ratio to baseline, its per-round spread and
    'round_medians_s' (what tells a disturbed host, `disturbed_by`), 'baseline', 'flags' (a
    variant whose rounds spread), 'rounds', 'clock': LOOP_TIMED}."""
    loop = clocks.interleaved_loops(dict(variants), baseline, rounds, rep_ms, clocks.loop_sync())
    return {**loop, "clock": LOOP_TIMED}


DISTURBED_LOOP_FACTOR = fused_kernels.DISTURBED_LOOP_FACTOR
# a timed loop over its pace whose rounds disagree: a disturbed host (the course's one rule, `clocks`)
disturbed_by = fused_kernels.disturbed_by


def loop_disturbed(loop_row: Mapping, host_s: float | None, device_s: float) -> float | None:
    """`disturbed_by` of one timed loop's row (`timed_loop`: its median and its rounds, the
    'round_medians_s' an older record lacks) against its host launch and device time."""
    return disturbed_by(loop_row["median_s"], host_s, device_s, rounds=loop_row.get("round_medians_s"))


def disturbed_note(found: Mapping[str, float]) -> str:
    """One line naming each disturbed loop (`disturbed_by`) and saying its readings are not
    stated; '' where none is."""
    if not found:
        return ""
    said = ", ".join(f"{name} {times:.1f}x" for name, times in found.items())
    return (f"Host disturbed: a loop call took over {DISTURBED_LOOP_FACTOR:g}x its pace ({said}), its "
            f"rounds spread over {clocks.DISTURBED_ROUNDS_SPREAD:g}x; those loop readings are not stated.")


def loop_reading(loop: Mapping, variant: str) -> str:
    """`variant`'s timed loop as a speed-up over the baseline (the baseline's time / its own,
    the table's direction: review 2026-12-04i item 8, where the table read 'ratio 1.10x' and
    the sentence '1.99x faster'), said as the trust rule lets it be said: 'reduce-overhead
    1.99x (IQR 1.95-2.03)', or why not. Only the two timings the ratio is built from (the
    variant's and the baseline's) can hold it back; a flag that does is named inline with its
    size and the margin it beats (`held_back_by`), not folded away."""
    found = {r["variant"]: r for r in loop["rows"]}
    row = found[variant]
    baseline = loop.get("baseline") or loop["rows"][0]["variant"]
    own = [f for f in loop.get("flags") or [] if f.get("timing") in (variant, baseline)]
    r, q25, q75 = float(row["ratio"]), float(row["ratio_q25"]), float(row["ratio_q75"])
    value, spread = 1 / r, (1 / q75, 1 / q25)
    stated = claims.trust.stated_ratio(value, spread, flags=own, what=variant)
    if claims.trust.is_plain_ratio(stated):
        return f"{variant} {stated}"
    why = held_back_by(own, value, spread)
    if why:
        return f"{variant} {value:.2f}x (IQR {spread[0]:.2f}-{spread[1]:.2f}), not stated: {why}"
    return f"{variant}: {brief(stated)}"


def held_back_by(flags: Sequence[object], value: float, spread: Sequence[float],
                 threshold: float = 1.0, short: bool = False) -> str:
    """Which flagged timing holds a ratio back, in one clause a learner can check: the timing,
    why the harness flagged it, by how much it could be off, and the margin it beats ("eager's
    timing is flagged (noisy: IQR 18% of the median) and could be off by ±8.3%, more than the
    rounds' 8.0% from 1x"). The trust rule's own reason names the same numbers in some sixty
    words, which a table note folded; a reader then saw a tight spread called noise with no
    reason (review 2026-12-04i item 8). '' where no flag reaches the margin. `short`: the
    clause a page's sentence carries ("eager's timing (noisy) ±8.3%, over the rounds' 8.0% from
    1x"; review 2026-12-04m: a noisy CPU run of 04 reached 1,504 words of its 1,500)."""
    decision = claims.trust.Decision("", value, list(spread), threshold)
    margin = decision.margin()
    if margin is None:
        return ""
    hits = [f for f in claims.trust.read_flags(flags) if f.uncertainty >= margin]
    if short:  # the largest alone: one is enough to hold the ratio back (the rest are folded)
        hits = sorted(hits, key=lambda f: -f.uncertainty)[:1]
    said = [(f"{f.timing}'s timing ({f.why.split(':')[0]}) ±{f.uncertainty:.1%}" if short else
             f"{f.timing}'s timing is flagged ({f.why.split(';')[0]}) and could be off by ±{f.uncertainty:.1%}")
            + ("" if f.spread is not None else " (its size not recorded)") for f in hits]
    if not said:
        return ""
    return f"{'; '.join(said)}, {'over' if short else 'more than'} the rounds' {margin:.1%} from {threshold:g}x"


def loop_pace(comparison: bench.Comparison, original: str, changed: str) -> str:
    """On a GPU, whether the host or the device bounds each variant (its host launch per call
    against its device time, both measured by the harness) and the ratio of the slower of the
    two: what a loop of calls would gain, which device time alone misses when the original is
    launch-bound (folding removes launches as well as memory passes). '' where no host launch
    was measured (a CPU, or a call that waited for the GPU).

    The two clocks are the table's own columns just above (device time, host launch), so the
    line names only which one bounds each (the H200's page repeated all four times in 25 words);
    where the device bounds both, a loop's gain is the device time's, said so.
    """
    a, b = comparison[original].timing, comparison[changed].timing
    if a.host_s is None or b.host_s is None:
        return ""
    bound_a, bound_b = ("host" if t.launch_bound else "device" for t in (a, b))  # type: ignore[attr-defined]
    if bound_a == bound_b == "device":  # the slower clock is the device's for both: nothing to compute
        return "Per call both device-bound, so a loop gains the same."
    bounds = (f"both {bound_a}-bound" if bound_a == bound_b
              else f"original {bound_a}-bound, folded {bound_b}-bound")
    pace = max(a.host_s, a.median_s) / max(b.host_s, b.median_s)
    return f"Per call {bounds}; {LOOP_PACE}: {pace:.2f}x."


# Review 2026-12-04m 03-04 item 9: the page asserted 'cuDNN adds a bias as a kernel of its own ...
# about the same bytes and launches' beside a host launch 31% shorter folded. What one forward of
# each launches is counted instead, with its module calls, so the mechanism is shown.
# an elementwise kernel's op: its functor's name, else the kernel function it wraps
ELEMENTWISE_OPS = (re.compile(r"Functor(?:OnSelf|OnOther)?_(\w+?)[<>,]"),
                   re.compile(r"(?<![A-Za-z])(?!gpu_)(\w+?)_kernel_(?:cuda|impl)"))


def _profile_once(model: torch.nn.Module, images: torch.Tensor,
                  on_gpu: bool) -> tuple[Counter | None, int, int, int]:
    """One profiled forward of `model`: what it ran (CUDA kernels on a GPU, after the profile's
    head marks, `kernel_records.profile_after_marks`, None where the profiler dropped them; top-level
    aten ops on a CPU), its nn.Module calls, how many of those were BatchNorms and how many
    containers (a module with children of its own: a Sequential, a Bottleneck, the network)."""
    calls = [0, 0, 0]

    def count(module: torch.nn.Module, args: object) -> None:
        calls[0] += 1
        calls[1] += isinstance(module, torch.nn.modules.batchnorm._BatchNorm)
        calls[2] += next(module.children(), None) is not None

    hook = torch.nn.modules.module.register_module_forward_pre_hook(count)
    try:
        if on_gpu:
            after = kernel_records.profile_after_marks(lambda: model(images), images.device)
            names = None if after is None else [e.name for e in after]
        else:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*Profiler clears events.*")
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                    model(images)
            names = [e.name for e in prof.events() if e.cpu_parent is None]
    finally:
        hook.remove()
    return (None if names is None else Counter(names)), calls[0], calls[1], calls[2]


def forward_profile(model: torch.nn.Module, images: torch.Tensor, on_gpu: bool) -> dict:
    """One forward of `model` (after one unprofiled warm-up) under the profiler: `ran`, how many
    of each kernel it launched on a GPU (CUDA kernels) or, on a CPU, which launches none, of
    each aten op Python called (the top-level ops); `module_calls`, how many nn.Module calls it
    made (a global forward pre-hook counting them), `batchnorm_calls` and `container_calls` how
    many of those were BatchNorms and containers; `complete`, whether the kernels are whole.

    Review 2026-12-04n 03-04 item 7: a process that has opened several CUPTI sessions may lose
    kernel records at a session's start (pytorch/pytorch#192021). Review 2026-12-05o item 2: two
    profiles that both lost records agreed, so agreement proved nothing; the profile now opens
    with head marks that take the loss (`kernel_records.profile_after_marks`), and where none is
    left, `complete` is False and no count is shown (`ran` empty)."""
    with torch.no_grad():
        model(images)  # warm-up: cuDNN's algorithm choice and the allocator out of the profile
        if on_gpu:
            torch.cuda.synchronize()
        ran, calls, batchnorms, containers = _profile_once(model, images, on_gpu)
    return {"ran": dict(ran or {}), "module_calls": calls, "batchnorm_calls": batchnorms,
            "container_calls": containers, "complete": ran is not None}


def kernel_short(name: str) -> str:
    """A kernel's or op's name for a sentence: no namespace or template arguments, and an
    elementwise kernel by its op ('vectorized_elementwise_kernel<4, CUDAFunctor_add<float>...>'
    is 'elementwise add'): cuDNN's bias-add is one of those."""
    base = name.split("<")[0].split("(")[0].split("::")[-1].strip() or name
    if "elementwise" in base:
        found = [m.group(1) for m in (pattern.search(name) for pattern in ELEMENTWISE_OPS) if m]
        op = found[0] if found else ""
        return f"elementwise {op}".strip()
    return base


def fold_kernel_line(profiles: Mapping[str, Mapping], host: bool = True) -> str:
    """What one forward of the original and of the folded network ran (`forward_profile` of
    each, with the host launch per call the timing measured, `host_s`, None on a CPU), in one
    line: kernels (aten ops on a CPU) before and after and what went and came, module calls
    before and after with the BatchNorms among them, and on a GPU (`host`) the host launch's
    change (the table above gives both), not divided among causes (the markdown says so).

    Review 2026-12-04n 03-04 item 2: the line divided the host's saving by the module calls
    fewer ('28 us per call fewer'), most of which are containers fold_model's flat graph no
    longer calls, not BatchNorms; the saving is one figure, the causes counted beside it. Review
    2026-12-05o item 2: where a profile's kernels are not whole (`complete` False; an older
    record's `stable` False), no count is shown: 'kernel counts incomplete (profiler dropped
    records)'."""
    a, b = profiles["original"], profiles["folded"]
    unit = "kernels" if profiles.get("on_gpu") else "aten ops"
    ran_a, ran_b = a["ran"], b["ran"]
    if all(p.get("complete", p.get("stable", True)) for p in (a, b)):
        # review 2026-12-06 item 11: in brief, as the recorded clause gives them ('53 BatchNorm out,
        # 53 add in', not cuDNN's 'bn_fw_inf_1C11_kernel_NCHW'), for the 1,500-word core
        line = (f"One forward, profiled: {sum(ran_a.values())} {unit} -> {sum(ran_b.values())} "
                f"({_went_and_came(ran_a, ran_b)}{_conversions(ran_a)})")
    else:
        line = f"One forward, profiled: {unit.removesuffix('s')} {kernel_records.INCOMPLETE}"
    line += f", module calls {a['module_calls']} -> {b['module_calls']}" + _fewer_calls(a, b)
    host_a, host_b = a.get("host_s"), b.get("host_s")
    if host and host_a is not None and host_b is not None:
        # review 2026-12-06y item 8: '-3.72 ms' read as a negative launch
        change = 1e3 * (host_b - host_a)
        line += f"; host launch (probe) {abs(change):.2f} ms {'shorter' if change < 0 else 'longer'} folded"
    return line + "."


LAYOUT_CONVERSION = re.compile(r"nchwToNhwc|nhwcToNchw")  # cuDNN's own layout-conversion kernels


def _conversions(ran: Mapping[str, int]) -> str:
    """'; the original's include 67 cuDNN layout conversions (NCHW: chapter 03)' where the original's forward ran
    any, else '': review 2026-12-06b item 5 found the page's '14% of the tfloat32 matmul
    ceiling' unexplained while its own profile held 43 nchwToNhwc and 24 nhwcToNchw kernels of
    280, cuDNN converting an NCHW network around its convolutions (chapter 03's lesson)."""
    n = sum(count for name, count in ran.items() if LAYOUT_CONVERSION.search(name))
    return f"; the original's include {n} cuDNN layout conversions (NCHW: chapter 03)" if n else ""


def _fewer_calls(a: Mapping, b: Mapping) -> str:
    """' (77 fewer: 53 BatchNorms, 24 containers)': the module calls the folded forward (`b`) no
    longer makes, by kind (BatchNorms, containers, any other), or '' where none are fewer.
    Review 2026-12-05o 03-04 item 5: '183 -> 106 (53 BatchNorms)' read as 106 including 53
    BatchNorms. An older record without container counts gives the BatchNorms alone."""
    fewer = int(a["module_calls"]) - int(b["module_calls"])
    if fewer <= 0:
        return ""
    parts, named = [], 0
    for key, what in (("batchnorm_calls", "BatchNorms"), ("container_calls", "containers")):
        x, y = a.get(key), b.get(key)
        if x is not None and y is not None and x != y:
            parts.append(f"{x - y} {what}")
            named += x - y
    if parts and "container_calls" in a and "container_calls" in b and fewer != named:
        parts.append(f"{fewer - named} other")
    return f" ({fewer} fewer" + (f": {', '.join(parts)})" if parts else ")")


def fold_kernel_lines(here: Mapping, recorded: object = None) -> str:
    """`fold_kernel_line` of this run, and on a CPU the reference GPU's kernels from its record
    (`recorded`, a `Recorded`, labelled), where one is kept: the prose's cuDNN bias kernel is a
    GPU's, which a CPU's aten ops do not show.

    Review 2026-12-05p 03-04 item 2: the recorded clause repeated the module calls (the same
    network's, the same as this run's) and full kernel names, and pushed the CPU page over its
    1,500 words; it now gives the kernel counts and what went and came, briefly
    (`_changed_briefly`)."""
    line = fold_kernel_line(here)
    if recorded and isinstance(getattr(recorded, "value", None), Mapping):
        when = f"recorded {recorded.date}" if getattr(recorded, "date", "") else "recorded"
        line += f" {recorded.machine} ({when}): {_recorded_kernels(recorded.value)}."  # type: ignore[attr-defined]
    return line


def _recorded_kernels(profiles: Mapping[str, Mapping]) -> str:
    """'280 -> 280 kernels (53 BatchNorm out, 53 add in)' from a GPU record's two profiles, or
    the incomplete note where a profile's kernels are not whole."""
    a, b = profiles["original"], profiles["folded"]
    if not all(p.get("complete", p.get("stable", True)) for p in (a, b)):
        return f"kernel {kernel_records.INCOMPLETE}"
    ran_a, ran_b = a["ran"], b["ran"]
    return f"{sum(ran_a.values())} -> {sum(ran_b.values())} kernels ({_went_and_came(ran_a, ran_b)})"


def _went_and_came(before: Mapping[str, int], after: Mapping[str, int]) -> str:
    """'53 BatchNorm out, 53 add in': what ran fewer times after folding and what ran more
    (`_changed_briefly`), the second left out where nothing came in (review 2026-12-05p 03-04
    item 2: '; in: none' cost the 1,500-word core words)."""
    went, came = _changed_briefly(before, after, "out"), _changed_briefly(after, before, "in")
    return went if came == "none in" else f"{went}, {came}"


def _changed_briefly(counts: Mapping[str, int], than: Mapping[str, int], way: str) -> str:
    """What `counts` ran more often than `than`, in a few words, largest first (two at most, then
    the rest counted): a BatchNorm kernel (cuDNN's bn_*, ATen's batch_norm_*, a CPU's
    aten::batch_norm) named 'BatchNorm', an elementwise kernel by its op ('53 add out'), others by
    short name; 'none out'."""
    more: Counter[str] = Counter()
    for name, n in counts.items():
        if n > than.get(name, 0):
            short = kernel_short(name)
            if re.search(r"(^|_)(bn|batch_norm)(_|$)", short):  # aten's batch_norm (a CPU's op) too
                short = "BatchNorm"
            more[short.removeprefix("elementwise ").strip() or short] += n - than.get(name, 0)
    if not more:
        return f"none {way}"
    return ", ".join(f"{n} {name} {way}" for name, n in more.most_common(2)) + (
        f", {sum(more.values()) - sum(n for _, n in more.most_common(2))} other {way}" if len(more) > 2 else "")


def fold_kernels(model: torch.nn.Module, folded: torch.nn.Module, images: torch.Tensor,
                 comparison: bench.Comparison, original: str, changed: str, on_gpu: bool) -> dict:
    """`fold_kernel_line`'s record: each network's `forward_profile` with the host launch per call
    its timing in `comparison` measured (None on a CPU)."""
    found: dict = {"on_gpu": on_gpu}
    for key, net, row in (("original", model, original), ("folded", folded, changed)):
        found[key] = {**forward_profile(net, images, on_gpu), "host_s": comparison[row].timing.host_s}
    return found


def brief(stated: str) -> str:
    """A stated ratio without the trust rule's reasons when it held the ratio back ('no ratio
    to state: 0.92x (rounds 0.89-0.98)' and that it is noise): the reasons name every flagged
    timing and run to a hundred words, so a line or a takeaway shows this and the table folds
    the rest (`noted`)."""
    head, held, _ = stated.partition(", but ")
    return f"{head} (noise: the trust rule's reason folded)" if held else stated


def noted(shown: Table, sentence: str, stated: str, why: str = "") -> Table:
    """`sentence` under the table, with `brief(stated)` put in for its '{}'; the trust rule's
    whole reason folded under it when the rule held the ratio back. A ratio the rule did not
    let through is not put into the sentence ('ran at no ratio to state ... the speed' reads
    as nonsense): the sentence's subject (up to its colon) is followed by what the rule says,
    or, given `why` (`held_back_by`: the vetoing flag, its size and the margin), by the ratio
    and that clause inline (review 2026-12-04i item 8)."""
    if claims.trust.is_plain_ratio(stated):
        shown.note(sentence.format(stated))
        return shown
    subject = sentence.split("{}")[0].rsplit(":", 1)[0].strip()
    head = stated.removeprefix("no ratio to state: ").partition(", but ")[0]
    # review 2026-12-04m: the sentence is kept, its ratio held back by name ('... the speed of
    # eager PyTorch, not stated: ...'), the flag in `held_back_by`'s short clause
    shown.note(f"{sentence.format(head).rstrip('.')}, not stated: {why}" if why and claims.trust.is_plain_ratio(head)
               else f"{subject}: {brief(stated)}")
    if brief(stated) != stated:
        shown.fold("the trust rule's reason", stated)
    return shown


def compile_backend(on_gpu: bool) -> str:
    """Inductor on a GPU; `eager` on a CPU (Dynamo captures the graph and runs it as it is:
    Inductor's C++ compile takes about 30 s on two cores)."""
    return "inductor" if on_gpu else "eager"


@contextlib.contextmanager
def quiet_dynamo() -> Iterator[None]:
    """Dynamo's warnings off inside (its log lines say nothing the chapter reads)."""
    torch._logging.set_logs(dynamo=logging.ERROR)
    try:
        yield
    finally:
        torch._logging.set_logs()


def one_training_step(block: torch.nn.Module, x: torch.Tensor) -> None:
    """One SGD step (lr 0.1) on the squared output's mean, in training mode; eval mode after."""
    block.train()
    optimizer = torch.optim.SGD(block.parameters(), lr=0.1)
    block(x).square().mean().backward()
    optimizer.step()
    block.eval()


def follow_tolerance(on_gpu: bool) -> tuple[float, str]:
    """The relative error under which a model 'follows the update', and why: on a GPU float32
    convolutions run in TF32 (cudnn.allow_tf32, on by default: relative rounding ~1e-3) and
    Inductor may pick another cuDNN algorithm than eager; in plain float32 ~1e-5."""
    if on_gpu and torch.backends.cudnn.allow_tf32:
        return 1e-3, "TF32 convolutions and possibly different cuDNN algorithms"
    return 1e-4, "float32 rounding"


def stale_table(stale: Mapping[str, Mapping[str, float]], tolerance: float, why: str) -> Table:
    """Each model's error against the trained block, and whether it follows the update. Its
    tolerance is printed as what it bounds, max |Δ| <= tolerance x max |out| (review 2026-12-06
    item 10: said once, where a tolerance is printed; C20's card keeps '(relative)', since its
    text is part of the rule's fingerprint, and the folding table under it heads the column)."""
    shown = Table("after one training step, against the trained block",
                  ["model", REL_ERROR_COLUMN, "follows the update?"])
    for name, error in stale.items():
        shown.add(name, error["max_rel_error"],
                  "follows" if error["max_rel_error"] <= tolerance else "is stale")
    return shown.note(f"'follows' if max |Δ| <= {tolerance:g} x max |out|: {why}")


# ---------------------------------------------------------------------------- C17: graphs


def graph_table(reports: Mapping[str, fusion.GraphReport]) -> Table:
    """Per function: Dynamo's graphs and breaks, and each graph's operations in one line."""
    shown = Table("what Dynamo made of each function", ["function", "graphs", "breaks", "graph code"])
    for name, report in reports.items():
        code = [" | ".join(line.strip() for line in text.splitlines()[1:]
                           if line.strip() and "= None" not in line)
                for text in report.graph_code]
        shown.add(name, report.graph_count, report.graph_break_count,
                  " || ".join(f"graph {k}: {c}" for k, c in enumerate(code, start=1)) or "-")
    return shown


# ---------------------------------------------------------------------------- Inductor


def inductor_kernels(fn: Callable, device: torch.device, elements: int = 1 << 20) -> dict:
    """Compile `fn` with Inductor on three random vectors and keep its kernels' names and
    sources (the first 6,000 characters of each): the payload under 'inductor_kernels'."""
    operands = [torch.randn(elements, device=device) for _ in range(3)]
    _, sources = fusion.inductor_code(fn, *operands)
    kernels = {name: src for code in sources for name, src in fusion.inductor_kernels(code).items()}
    return {"torch": torch.__version__, "names": list(kernels),
            "sources": {name: src[:6000] for name, src in kernels.items()}}


def inductor_excerpts(record: object, lines: int = 14) -> str:
    """Each kernel's first lines, under where they were recorded when not measured here."""
    payload = _payload(record)
    if payload is None:
        return str(record)  # a Recorded with nothing: it says so
    head = f"{_where(record)}: " if _where(record) else ""
    return head + "kernels: " + ", ".join(payload["names"]) + "".join(
        f"\n\n# {name} (first lines)\n" + fusion.excerpt(source, lines=lines)
        for name, source in payload["sources"].items())


def compile_payback(fn: Callable, elements: int, device: torch.device) -> dict:
    """The first call of `torch.compile(fn)` (a real compile: no disk cache), eager and compiled
    calls timed interleaved, and the calls it takes to pay the compile back."""
    xyz = [torch.randn(elements, device=device) for _ in range(3)]
    torch._dynamo.reset()
    compiled = torch.compile(fn)
    with fusion.without_compile_caches():
        begin = time.perf_counter()
        compiled(*xyz)
        torch.cuda.synchronize()
        first_call_s = time.perf_counter() - begin
    cmp = bench.compare({"eager": lambda: fn(*xyz), "compiled": lambda: compiled(*xyz)},
                        baseline="eager", rounds=5, rep_ms=200)
    eager_s, compiled_s = cmp["eager"].timing.median_s, cmp["compiled"].timing.median_s
    return {"elements": elements, "first_call_s": first_call_s, "eager_s": eager_s,
            "compiled_s": compiled_s,
            "calls_to_pay_back": fusion.calls_to_pay_back(max(first_call_s - compiled_s, 0.0),
                                                          eager_s, compiled_s)}


def payback_table(record: object) -> Table | str:
    """The compile payback as one row, labelled recorded when it was not measured here."""
    payload = _payload(record)
    if payload is None:
        return str(record)
    shown = Table("compile time against run time", ["elements", "first call", "eager call",
                                                    "compiled call", "calls to pay back"],
                  units={"first call": "s", "eager call": "s", "compiled call": "s"},
                  recorded=_where(record))
    return shown.add(payload["elements"], payload["first_call_s"], payload["eager_s"],
                     payload["compiled_s"], about(payload["calls_to_pay_back"]))


def about(count: object) -> object:
    """A count of calls to two significant figures, said so ('about 7,300'): it divides a
    first-call time measured once by a per-call gain (review 2026-12-04m 03-04 item 11: '7,301'
    claimed a precision the one compile does not have). Anything but a number as it is."""
    if isinstance(count, bool) or not isinstance(count, (int, float)) or not math.isfinite(count) or count < 100:
        return count
    digits = len(str(int(count))) - 2
    return f"about {round(count, -digits):,.0f}"


# ---------------------------------------------------------------------------- recompiles


def recompile_sweep(fn: Callable, limit: int, device: torch.device, backend: str,
                    elements: int = 1024) -> dict:
    """Shapes `elements`, + 1024, + 2048, ... up to three past Dynamo's recompile limit, compiled with
    dynamic=False and with dynamic=None: per shape whether a graph was compiled, the first
    call, wall time per call (50 calls, synchronised at the end) of the compiled step and of
    eager with the host's launch time per call in that same loop (the calls returned, before
    the final sync), and on a GPU each one's device time (the payload under 'recompile_sweep').
    Wall time, because a compiled call spends its time in guards and a Python wrapper on the
    host and an eager one in kernels: only wall time compares them. The host time comes from
    the loop that gives the wall time, so it can never exceed it (the harness's cold calls,
    each after a cache flush, gave host times above the loop's wall time: another run).

    With `elements` above SMALL_SHAPE (a GPU's `recompile_elements`: 2^25 on the H200), the
    sweep of small shapes (1024, 2048, ...) runs too, kept under 'small' and shown as one line
    (`small_sweep_line`): at 1-11K elements host work sets the pace of every call, compiled or
    not, so that sweep cannot show what the limit costs (review 2026-12-05t 03-04 item 2)."""
    payload = {"backend": backend, "limit": limit, "timed_by": "wall time per call",
               "host_from": HOST_FROM_LOOP, "rows": _recompile_rows(fn, limit, device, backend, elements)}
    if elements != SMALL_SHAPE:  # review 2026-12-05t 03-04 item 2: the small sweep kept, as one line
        payload["small"] = {"rows": _recompile_rows(fn, limit, device, backend, SMALL_SHAPE)}
    return payload


SMALL_SHAPE = 1024  # the small sweep's first shape and its step: 1024, 2048, ...
# float32 arrays of one shape alive at once in the sweep: x, y, z, eager's two intermediates and
# the output (the fused step: the inputs and the output)
RECOMPILE_ARRAYS = 6


def payback_elements(sizes: object) -> int:
    """The compile-payback chain's size: an eighth of the copy size in float32 elements (2^25 on
    the H200's 1 GiB), where the fused kernel wins on wall time; the recompile sweep starts from it."""
    return sizes.copy_bytes // 4 // 8  # type: ignore[attr-defined]


def recompile_elements(sizes: object, on_gpu: bool, limit: int = 8) -> int:
    """The recompile sweep's first shape: on a GPU the compile-payback size (an eighth of the copy
    size in float32: 2^25 elements on the H200), where the fused kernel wins on wall time; on a
    CPU SMALL_SHAPE (the eager backend fuses nothing, and Binder's 2 GB would not hold 33
    large shapes).

    On a GPU it is capped so that every one of the sweep's limit + 3 shapes, RECOMPILE_ARRAYS
    arrays each, would fit the machine's memory budget (`sizes.memory_budget_bytes`, a quarter
    of the GPU's memory) even if none were freed: the sweep makes and frees each shape's inputs
    in turn (`shape_inputs`), and the cap holds if a compiled graph kept some alive (review
    2026-12-05u 00-04 item 5d: a 15 GB Colab T4 must be safe). A multiple of SMALL_SHAPE, at
    least SMALL_SHAPE.

    One SMALL_SHAPE past the payback size: compile_payback, earlier in the page, compiles the
    same chain statically at exactly that size, and Triton's on-disk cache (which
    `fusion.without_compile_caches` leaves on) would hand the sweep's first shape a warm
    kernel, its compile seconds read low (the GPU-path review of 2026-12-05u, item 2)."""
    if not on_gpu:
        return SMALL_SHAPE
    wanted = payback_elements(sizes)
    budget = getattr(sizes, "memory_budget_bytes", None)
    if budget:
        wanted = min(wanted, int(budget) // (4 * RECOMPILE_ARRAYS * (limit + 3)) - SMALL_SHAPE)
    return max(SMALL_SHAPE, wanted // SMALL_SHAPE * SMALL_SHAPE + SMALL_SHAPE)


def shape_inputs(shapes: Sequence[int], device: torch.device) -> Iterator[tuple[torch.Tensor, ...]]:
    """Three float32 inputs of each shape, made when the loop reaches it (a generator): a loop
    that lets go of one shape's tuple before asking for the next holds one shape's at a time."""
    for n in shapes:
        yield tuple(torch.randn(n, device=device) for _ in range(3))


def _recompile_rows(fn: Callable, limit: int, device: torch.device, backend: str, first: int) -> list[dict]:
    """One recompile sweep's rows: shapes first, first + 1024, ... (limit + 3 of them). Each
    shape's inputs are made when it is compiled or timed and freed before the next's (review
    2026-12-05u 00-04 item 5d: all 11 shapes' were made up front, 4.4 GB on the H200)."""
    shapes = [first + SMALL_SHAPE * k for k in range(limit + 3)]
    sync = torch.cuda.synchronize if device.type == "cuda" else None
    step, steps = fusion.recompile_sweep(fn, shape_inputs(shapes, device), backend=backend,
                                         dynamic=False, sync=sync)
    timed = []
    for args in shape_inputs(shapes, device):  # every shape compiled (or not) first, then timed
        timed.append((fusion.wall_and_host_per_call(step, args, sync=sync),
                      fusion.wall_and_host_per_call(fn, args, sync=sync),
                      fusion.device_and_host_per_call(step, args), fusion.device_and_host_per_call(fn, args)))
        del args  # this shape's inputs go before the next shape's are made
    del step
    _, automatic = fusion.recompile_sweep(fn, shape_inputs(shapes, device), backend=backend,
                                          dynamic=None, sync=sync)
    return [{"elements": s.shape[0], "new_graph": s.new_graph,
             "first_call_s": s.first_call_s, "step_s": t[0], "eager_s": e[0],
             "step_device_s": sc[0], "step_host_s": t[1],
             "eager_device_s": ec[0], "eager_host_s": e[1],
             "dynamic_none_new_graph": a.new_graph}
            for s, a, (t, e, sc, ec) in zip(steps, automatic, timed, strict=True)]


HOST_FROM_LOOP = "the timed loop: host time per call until the 50 calls returned, before the sync"


def recompile_table(record: object) -> Table | None:
    """The recompile sweep, one row per shape; on a GPU each call's device time, host launch and
    what bound it. None for None (nothing to show on this machine). A record whose host times
    come from another run than its wall times (before 'host_from') says so under the table,
    with how many rows show a host time above the wall time per call."""
    if record is None:
        return None
    payload = _payload(record)
    if payload is None:
        return str(record)  # type: ignore[return-value] -- a Recorded saying nothing is recorded
    gpu = any(r.get("step_device_s") is not None for r in payload["rows"])
    # dynamic=None's own new-graph column (review 2026-12-03c item 8: the prose says it
    # recompiles once, at the second shape; the sweep measures it, and the table shows it)
    dyn = all("dynamic_none_new_graph" in r for r in payload["rows"])
    columns = ["shape", "new graph"] + (["dynamic=None"] if dyn else []) + [
        "first call", "step per call", "eager per call"]
    bounds_by_row = [(fusion.bound_by(r["step_s"], r.get("step_device_s"), r.get("step_host_s")),
                      fusion.bound_by(r["eager_s"], r.get("eager_device_s"), r.get("eager_host_s")))
                     for r in payload["rows"]] if gpu else []
    # one bound for every row is said once, under the table, not on each row
    same_bound = gpu and len(set(bounds_by_row)) == 1
    # the device columns come from cold calls (a flushed L2, `fusion.device_and_host_per_call`), the
    # wall columns from a hot loop, so a wall time may read under its device time: the header says
    # which (review 2026-12-05w item 10: 176 us a step beside 181 us of device time, unexplained)
    columns += ["step device (cold)", "step host", "eager device (cold)", "eager host"] if gpu else []
    columns += ["bound by (step, eager)"] if gpu and not same_bound else []
    shown = Table(f"backend={payload['backend']}, recompile limit {payload['limit']}", columns,
                  units={c: "s" for c in columns if c.endswith(("call", "device (cold)", "host"))},
                  recorded=_where(record))
    for i, r in enumerate(payload["rows"]):
        values = [r["elements"], r["new_graph"]] + ([r["dynamic_none_new_graph"]] if dyn else []) + [
            r["first_call_s"], r["step_s"], r["eager_s"]]
        if gpu:
            bounds = bounds_by_row[i]
            values += [r.get("step_device_s"), r.get("step_host_s"), r.get("eager_device_s"),
                       r.get("eager_host_s")]
            values += [] if same_bound else [f"{bounds[0] or '-'}, {bounds[1] or '-'}"]
        shown.add(*values)
    swept = swept_line(payload) if gpu else ""
    if swept:
        shown.note(swept)
    if same_bound:
        step_bound, eager_bound = bounds_by_row[0]
        shown.note(f"bound by, in every row: step {step_bound or '-'}, eager {eager_bound or '-'}")
    lesson = recompile_lesson(payload["rows"])
    if lesson:
        shown.note(lesson)
    small = small_sweep_line((payload.get("small") or {}).get("rows") or [])
    if small:
        shown.note(small)
    if gpu and payload.get("host_from") is None:
        over = sum((r.get("step_host_s") or 0) > r["step_s"] or (r.get("eager_host_s") or 0) > r["eager_s"]
                   for r in payload["rows"])
        shown.note(f"host columns: the harness's cold calls (a cache flush before each), another run "
                   f"than the wall time per call; {over} of {len(payload['rows'])} rows show a host "
                   "time above the wall time for that reason (newer runs take it from the timed loop)")
    return shown


def swept_line(payload: Mapping) -> str:
    """Which shapes a GPU's recompile record swept, read from its keys (review 2026-12-05u 00-04
    item 6: the markdown described the large-shape sweep above a recorded table of small shapes
    only): with 'small', its rows' span and where the small shapes are; without it, from
    SMALL_SHAPE, that the record swept small shapes only (the H200's of 2026-12-05 17:41 predates
    the large-shape sweep); '' for no rows."""
    sizes = [r["elements"] for r in payload.get("rows") or ()]
    if not sizes:
        return ""
    span = f"{min(sizes):,}-{max(sizes):,} elements"
    if (payload.get("small") or {}).get("rows"):
        return f"Shapes {span}; the small shapes' sweep is the last line."
    if min(sizes) <= SMALL_SHAPE:
        return f"Small shapes only ({span}); no sweep at large shapes in this record."
    return f"Shapes {span}."


# The recompile quiz's choices (review 2026-12-05p 03-04 item 10: it asked the limit, a config
# value; it asks a measurement): the compiled fn's wall time per call over eager's, past the limit.
# Review 2026-12-05w item 3: the quiz asked a call's cost past the limit against eager, with no
# size named, and its two sizes answered it two ways (the large sweep about eager's, the small
# shapes 1.6x); it asks for the cliff at the sweep's own size: a call past the limit against the
# same compiled fn's calls before it. Review 2026-12-06 item 3: both sides are repeated calls of a
# shape (the sweep's 'step per call'), and the question says so (`recompile_question`)
RECOMPILE_COST_CLASSES = ("about the same or less (under 1.1x)", "somewhat more (1.1x to 1.5x)",
                          "much more (over 1.5x)")
RECOMPILE_COST_EDGES = (1.1, 1.5)


def recompile_cost_class(ratio: float) -> str:
    """A call's wall time past the limit over the calls' before it, as a RECOMPILE_COST_CLASSES
    choice (an edge itself counts with the class below it)."""
    low, high = RECOMPILE_COST_EDGES
    return RECOMPILE_COST_CLASSES[0] if ratio < low else RECOMPILE_COST_CLASSES[1] if ratio <= high \
        else RECOMPILE_COST_CLASSES[2]


SIZE_SPAN_FIT = 1.05  # compiled shapes whose sizes span more than this: their time fitted against size


def past_limit(record: object) -> list[float]:
    """The compiled step's wall time per call at each shape past the recompile limit over what the
    compiled shapes before it took at that size, from `recompile_sweep`'s 'step per call'; []
    where either side was not timed.

    'At that size' (review 2026-12-06z 03-04 item 4, then the session-z code review): the CPU's
    shapes run 1,024 to 11,264 elements, so the raw wall times read 1.22x from the arrays' growth
    alone; read against eager at each shape they over-corrected (eager grew 3.6 -> 9.6 us while
    the compiled step, fixed overhead, grew 19.5 -> 24.2 us). Where the compiled shapes' sizes
    span more than SIZE_SPAN_FIT, their step times are fitted against size (least squares, a
    line) and each shape past the limit is read against the fit at its size; where they do not
    (the GPU's 2^25 + k x 1,024, 0.03% apart), against their median, as the question says."""
    rows, before = _compiled_rows(record)
    if not before:
        return []
    if _sizes_fitted(record):
        slope, intercept = np.polyfit([float(r["elements"]) for r in before], [float(r["step_s"]) for r in before], 1)

        def expected(r: Mapping) -> float:
            return float(slope * float(r.get("elements") or 0) + intercept)
    else:
        compiled = float(np.median([float(r["step_s"]) for r in before]))

        def expected(r: Mapping) -> float:
            return compiled
    limit = int((_payload(record) or {}).get("limit") or 0)
    return [float(r["step_s"]) / expected(r) for r in rows[limit:] if r.get("step_s") and expected(r) > 0]


def _compiled_rows(record: object) -> tuple[list[Mapping], list[Mapping]]:
    """The sweep's rows, and those before the recompile limit that timed a step (the compiled shapes)."""
    payload = _payload(record) or {}
    rows, limit = list(payload.get("rows") or ()), int(payload.get("limit") or 0)
    return rows, [r for r in rows[:limit] if r.get("step_s")]


def _sizes_fitted(record: object) -> bool:
    """Whether `past_limit` reads each call against a fit of the compiled shapes' time on size: two
    or more compiled shapes whose sizes span more than SIZE_SPAN_FIT."""
    sizes = [float(r.get("elements") or 0) for r in _compiled_rows(record)[1]]
    return len(sizes) >= 2 and min(sizes) > 0 and max(sizes) > SIZE_SPAN_FIT * min(sizes)


def array_size(elements: int, itemsize: int = 4) -> str:
    """An array's size said aloud: '~33.6 M-element (128 MiB)' from a million elements up, else
    '1,024-element (4 KiB)'; float32 unless `itemsize` says otherwise. Review 2026-12-06 item 3:
    'about 33,555,456 elements' is hard to read aloud."""
    count = f"~{elements / 1e6:.3g} M" if elements >= 1_000_000 else f"{elements:,}"
    return f"{count}-element ({format_value(elements * itemsize, 'B')})"


def recompile_question(elements: int) -> str:
    """The recompile quiz's question, at the size the sweep below runs (`recompile_elements`).

    Review 2026-12-06 item 3: 'a new shape each call ... against the calls before it' read
    literally compares first calls, each paying a compile before the limit, so a call past it is
    far cheaper; the key (`recompile_cost_key`, `past_limit`) grades repeated calls of each shape
    (the sweep's 'step per call'). The question says so."""
    # review 2026-12-06z 03-04 item 4: the sweep's shapes grow by SMALL_SHAPE each, so the
    # question says so, and that each call is read at the same size (`past_limit`)
    return (f"torch.compile(fn, dynamic=False) on float32 arrays from {array_size(elements)} up, "
            f"{SMALL_SHAPE:,} elements more for each new shape, each called many times: past the recompile "
            "limit, a repeated call's wall time against a repeated call of a shape that compiled (at the "
            "same size) is ...")


def recompile_cost_key(record: object) -> Key | str:
    """The recompile quiz's key, from the sweep measured here (`recompile_sweep`): the median of
    the shapes past the limit over the compiled calls before it (`past_limit`), the shapes'
    lowest and highest as its spread, through the trust rule's quiz keys (`quiz_keys.choice_key`:
    where the shapes straddle an edge, both choices count). Run the sweep cell first."""
    if record is None:
        raise quiz_keys.NotYetMeasured("run the sweep cell below first, then submit again")
    ratios = past_limit(record)
    if not ratios:
        raise ValueError("the sweep timed no shape past the recompile limit, or none before it")
    median = float(np.median(ratios))
    key = quiz_keys.choice_key(median, [min(ratios), max(ratios)], None,
                               choices=RECOMPILE_COST_CLASSES, edges=RECOMPILE_COST_EDGES,
                               pick=recompile_cost_class, what="a call past the limit")
    # the figure the class came from, read after grading (review 2026-12-05q browser item 2)
    measured = (f"a call past the limit took {median:.1f}x the compiled calls' wall time, {_span(ratios)} "
                f"over the {len(ratios)} shapes past it{SAME_SIZE if _sizes_fitted(record) else ''}")
    if isinstance(key, Key):
        return dataclasses.replace(key, why=f"{measured}; {key.why}")
    return Key(key, (key,), why=measured)


SAME_SIZE = " (each against the compiled shapes' time fitted at its size: the arrays grow with the shapes)"


def _span(values: Sequence[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.1f}x" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}-{high:.1f}x"


def kernels_not_bytes(compiled: Sequence[Mapping]) -> str:
    """'' or, where the fused kernel's device time grew by under half as much as the elements
    across the compiled shapes (a kernel's fixed cost, not its bytes, set it), a clause saying
    the device ratio counts kernels (review 2026-12-05t 03-04 item 7: at 1-8K elements eager's
    three launches against one read 2.7-3.1x, above the chain quiz whose key is a bytes ratio)."""
    if len(compiled) < 2:
        return ""
    low, high = min(compiled, key=lambda r: r["elements"]), max(compiled, key=lambda r: r["elements"])
    grew, more = high["step_device_s"] / low["step_device_s"], high["elements"] / low["elements"]
    if grew >= more / 2:
        return ""
    return (f": {low['elements']:,}-{high['elements']:,} elements, where its time grew {grew:.1f}x "
            f"for {more:.0f}x the bytes, so the ratio counts kernels, not bytes")


def _wall_ratios(rows_: Sequence[Mapping]) -> list[float]:
    """The compiled step's wall time per call over eager's, row by row."""
    return [r["step_s"] / r["eager_s"] for r in rows_ if r.get("eager_s")]


def _outcome(rows_: Sequence[Mapping]) -> str:
    """Won or lost by wall time, with the step's wall time over eager's before the limit (the rows
    that compiled a graph) and past it, each measured apart (review 2026-12-05t 03-04 item 2: one
    span over both hid that the limit changed nothing)."""
    wall = _wall_ratios(rows_)
    before, past = _wall_ratios([r for r in rows_ if r["new_graph"]]), _wall_ratios([r for r in rows_ if not r["new_graph"]])
    split = (f": {_span(before)} eager's wall time before the limit, {_span(past)} past it" if before and past
             else f" ({_span(wall)} eager's wall time)")
    if min(wall) > 1:
        return f"the compiled step lost to eager at every shape{split}"
    if max(wall) < 1:
        return f"the compiled step beat eager at every shape{split}"
    if before and past:
        return f"the compiled step took {split.removeprefix(': ')}"
    return f"the compiled step beat eager at {sum(w < 1 for w in wall)} of {len(wall)} shapes{split}"


def recompile_lesson(rows_: Sequence[Mapping]) -> str:
    """What the recompile table shows, in one line computed from its rows (review 2026-12-04i
    item 11: the prose above it was generic). On a GPU: how much shorter the fused kernel ran on
    the device where a graph was compiled, the step's device time over eager's past the limit
    (eager's kernels again, or not), and the step's wall time over eager's before the limit and
    past it, each apart (review 2026-12-05t 03-04 item 2); where the step's host time exceeded
    eager's and it lost everywhere, that too. Without device times (a CPU's eager backend: no
    fusion, only Dynamo's guards and wrapper) the wall-time part alone. '' for no rows."""
    if not rows_ or not _wall_ratios(rows_):
        return ""
    outcome = _outcome(rows_)
    compiled = [r for r in rows_ if r["new_graph"] and r.get("step_device_s") and r.get("eager_device_s")]
    fused = [r["eager_device_s"] / r["step_device_s"] for r in compiled]
    if not fused:
        return f"Here {outcome}."
    past = [r["step_device_s"] / r["eager_device_s"] for r in rows_
            if not r["new_graph"] and r.get("step_device_s") and r.get("eager_device_s")]
    wall = _wall_ratios(rows_)
    hosts = [(r.get("step_host_s"), r.get("eager_host_s")) for r in rows_]
    more_host = all(s is not None and e is not None and s > e for s, e in hosts)
    device = (f"the fused kernel ran {_span(fused)} shorter on the GPU than eager's kernels "
              f"(the shapes compiled{kernels_not_bytes(compiled)})"
              + (f"; past the limit the step's device time was {_span(past)} eager's" if past else ""))
    if more_host and min(wall) > 1:
        return (f"Here {device}, but guards and the wrapper cost more host time than eager's "
                f"launches: {outcome}.")
    return f"Here {device}; {outcome}."


def small_sweep_line(rows_: Sequence[Mapping]) -> str:
    """The small shapes' sweep (a GPU's 'small', 1,024-11,264 elements) in one line: the step's
    wall time over eager's before the limit and past it, and, where every call's host time in the
    loop exceeded its device time, that host work set the pace, so the fused kernel's shorter
    device time did not show. '' without rows."""
    if not rows_ or not _wall_ratios(rows_):
        return ""
    sizes = [r["elements"] for r in rows_]
    line = f"Small shapes, {min(sizes):,}-{max(sizes):,} elements: {_outcome(rows_)}"
    host_bound = all(fusion.bound_by(r[f"{k}_s"], r.get(f"{k}_device_s"), r.get(f"{k}_host_s")) == "host launch"
                     for r in rows_ for k in ("step", "eager"))
    fused = [r["eager_device_s"] / r["step_device_s"] for r in rows_
             if r["new_graph"] and r.get("step_device_s") and r.get("eager_device_s")]
    if host_bound and fused:
        line += (f"; every call host-bound (host per call above device time), so the fused kernel's "
                 f"{_span(fused)} shorter device time did not show")
    return line + "."


# ---------------------------------------------------------------------------- C18: launches


def graph_gap_class(evidence: Mapping | None, on_gpu: bool, recorded_gaps: object) -> str:
    """C18's quiz answer: the launch gap its verdict judges (the graph replay's median gap on
    the timeline), measured here on a GPU (run the timeline and verdict cells first) or the
    reference GPU's recorded one, as a choice."""
    if on_gpu:
        if evidence is None:
            raise quiz_keys.NotYetMeasured("run the timeline and the verdict cells below first, then submit again")
        gap_us = evidence["graph_launch_gap_us"]
    else:
        gaps = _payload(recorded_gaps)
        if gaps is None:
            raise ValueError("no GPU here and nothing recorded yet for the reference GPU")
        gap_us = gaps["graph replay"]["launch_gap_median_us"]
    return GAP_CLASSES[0] if gap_us < 0.5 else GAP_CLASSES[1] if gap_us <= 2 else GAP_CLASSES[2]


def sweep_table(sweep: launch_overhead.LaunchSweep, on_gpu: bool) -> Table:
    """The fitted line of each way, time = fixed + per kernel x N: its two parts, the slope's
    95% interval and R^2. The medians it was fitted to are drawn above and folded here."""
    shown = Table("time per call = fixed + per kernel x N, fitted", ["way", "fixed", "per kernel",
                                                                     "per kernel, 95%", "R^2"],
                  units={"fixed": "s", "per kernel": "s"})
    for way, fit in sweep.fits.items():
        low, high = fit.per_item_interval_us
        # a fixed part below 0 is not a time (review 2026-12-04k item 10: 'fixed -820 ns'): the
        # line's intercept, folded below with why, not printed as a cost
        shown.add(way, fit.fixed_s if fit.fixed_s >= 0 else "below 0", fit.per_item_s,
                  f"{low:.3f}-{high:.3f} us", round(fit.r_squared, 4))
    medians = Table("", ["kernels per call", *sweep.times_s], units=dict.fromkeys(sweep.times_s, "s"))
    for i, count in enumerate(sweep.counts):
        medians.add(count, *(values[i] for values in sweep.times_s.values()))
    # the harness's flags on single timings, beside the medians they went into (a median over
    # rounds; the fit weighs each count alike)
    flags = "".join(f"\nFlagged by the harness: {said}." for said in sweep.flagged)
    shown.fold(f"the medians per call at {len(sweep.counts)} counts", str(medians) + flags)
    if max(sweep.counts) > launch_overhead.FIT_UP_TO:  # the linear part only (review 2026-12-03h item 10)
        shown.note(f"Fitted up to N = {launch_overhead.FIT_UP_TO} (larger N: drawn only).")
    if not on_gpu:
        shown.note("No GPU here: the slope is the host's cost per tiny op.")
    for said in sweep.notes:  # what the sweep could not time (review 2026-12-05u 00-04 item 5a)
        shown.note(said)
    if any(fit.fixed_s < 0 for fit in sweep.fits.values()):
        below = ", ".join(f"{way} {fit.fixed_s * 1e9:.0f} ns" for way, fit in sweep.fits.items() if fit.fixed_s < 0)
        shown.fold("a fixed part below 0", f"The fitted intercept ({below}) is not a time: the cost per kernel changes with N "
                   + ("(the first calls overlap the cache flush before each call)"
                      if on_gpu else "(timed back to back, hot)")
                   + "; only the slope is read.")
    return shown


def plot_sweeps(here: Mapping, title: str, recorded: object = None) -> None:
    """Median time per call against kernels per call with each fitted line: this machine's
    sweep, and beside it the reference GPU's recorded one when given."""
    import matplotlib.pyplot as plt

    panels = [(launch_overhead.refit(here), title)]
    if _payload(recorded) is not None:
        panels.append((launch_overhead.refit(_payload(recorded)), str(getattr(recorded, "label", "recorded"))))
    figure, axes_row = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 3.6), squeeze=False)
    for axes, (data, name) in zip(axes_row[0], panels, strict=True):
        for way, times_us in data["times_us"].items():
            fit = data["fits"][way]
            points = axes.plot(data["counts"], times_us, "o",
                               label=f"{way}: {fit['per_item_us']:.2f} us/kernel")
            axes.plot(data["counts"], [fit["fixed_us"] + fit["per_item_us"] * n for n in data["counts"]],
                      "-", color=points[0].get_color(), linewidth=1)
        axes.set(xlabel="tiny kernels per call (N)", ylabel="time per call (us)", title=name)
        axes.legend(fontsize=8)
    figure.tight_layout()
    plt.show()


def launch_traces(device: torch.device, count: int = 64) -> dict[str, timeline.Trace]:
    """`count` tiny kernels profiled: eager, and on a GPU also as one CUDA Graph replay (each
    run once before its profiled run)."""
    on_gpu = device.type == "cuda"
    activities = [torch.profiler.ProfilerActivity.CPU] + (
        [torch.profiler.ProfilerActivity.CUDA] if on_gpu else [])
    tiny = torch.zeros(1, device=device)
    ways = {"eager": launch_overhead.tiny_kernels(tiny, count)}
    if on_gpu:
        ways["graph replay"] = launch_overhead.graph_of(launch_overhead.tiny_kernels(tiny, count))
    traces = {}
    for name, run in ways.items():
        run()
        with torch.profiler.profile(activities=activities) as profile:
            run()
            if on_gpu:
                torch.cuda.synchronize()
        traces[name] = timeline.from_profiler(profile)
    return traces


def timestamp_step_us(trace: timeline.Trace) -> float | None:
    """The smallest step the trace's clock takes, measured: the smallest nonzero difference
    between the times of its GPU events (of all its events on a CPU), among the times
    themselves and among the intervals between them (kernels last multiples of the step, so
    two durations differ by one step where the times alone may not). Differences under a
    nanosecond are the export's float rounding. None for fewer than two distinct times.

    Why: a launch gap identical to 1e-10 in every run (0.25605 us on the H200) is a whole
    number of clock steps, not a continuous measurement; the step says how coarse it is."""
    gpu = trace.kind < len(timeline.GPU_KINDS)
    chosen = gpu if gpu.any() else np.ones(len(trace), dtype=bool)
    times = np.unique(np.concatenate([trace.start_us[chosen],
                                      trace.start_us[chosen] + trace.duration_us[chosen]]))
    steps = np.diff(times)
    steps = steps[steps > FLOAT_NOISE_US]
    if steps.size == 0:
        return None
    between = np.diff(np.unique(steps))
    candidates = np.concatenate([steps, between[between > FLOAT_NOISE_US]])
    return float(candidates.min())


def gap_figures(traces: Mapping[str, timeline.Trace]) -> dict[str, dict]:
    """Per trace: kernels, window, GPU busy share, median launch gap and the clock's step (the
    payload under 'timeline_launch_gaps')."""
    return {name: {**{k: timeline.summary(trace).figures()[k] for k in TIMELINE_FIGURES},
                   "timestamp_step_us": timestamp_step_us(trace)}
            for name, trace in traces.items()}


def step_note(gap_us: float | None, step_us: float | None) -> str:
    """The replay's gap in plain words, with how finely the profiler's times can read it. The
    step (the smallest nonzero time difference in the exported trace) is how coarsely the
    export rounds its times; it moved from 0.001 to 0.031 us between H200 runs, so it is
    given as the gap's uncertainty, not as a figure of its own (review 2026-12-03d item 13)."""
    if gap_us is None:
        return ""
    if step_us is None:
        return f"replay gap {gap_us:.3f} us"
    return f"replay gap {gap_us:.3f} ± {step_us:.3f} us (± the trace's time resolution)"


def summaries(traces: Mapping[str, timeline.Trace]) -> Table:
    """Per trace: its events and span, the whole timeline summaries folded under the table in
    one fold (on a CPU: the ops, their kinds and the time between them; one summary line for
    both traces, not one each).

    The span is the GPU's own (first kernel to last) on a GPU trace and the whole trace's on a
    CPU one, headed so ('GPU span', 'trace span'): review 2026-12-04m 03-04 item 11 read the H200's 'span 83.3 us' beside
    the timeline widget's 'over 1.02 ms' for the same replay, which covers the whole trace."""
    figures = {name: timeline.summary(trace).figures() for name, trace in traces.items()}
    on_gpu = any(f["device"] == "gpu" for f in figures.values())
    span = "GPU span" if on_gpu else "trace span"  # the widgets below span the whole trace
    shown = Table("the profiled runs", ["way", "events", span], units={span: "s"})
    for name, found in figures.items():
        shown.add(name, found.get("events"), found["window_us"] * 1e-6)
    return shown.fold("each timeline's summary", "\n\n".join(
        f"{name}:\n{timeline.summary(trace)}" for name, trace in traces.items()))


def gaps_table(record: object) -> Table | str:
    """Per way: kernels, window, GPU busy share and median launch gap, labelled recorded when
    it was not measured here."""
    payload = _payload(record)
    if payload is None:
        return str(record)
    shown = Table("launch gaps on the timeline", ["way", "kernels", "window (us)", "GPU busy (%)",
                                                  "median launch gap (us)"], recorded=_where(record))
    for name, figures in payload.items():
        share = figures["gpu_busy_share"]
        shown.add(name, figures["kernels"], figures["window_us"],
                  None if share is None else round(100 * share, 1), figures["launch_gap_median_us"])
    replay = payload.get("graph replay")
    if replay is not None:
        shown.note(step_note(replay["launch_gap_median_us"], replay.get("timestamp_step_us")))
    return shown


def c18_evidence(sweep_data: Mapping, gaps: Mapping) -> dict:
    """C18's evidence from a launch sweep and a profiled replay of the same tiny kernels. The
    sweep's lines are refitted over their linear part (`launch_overhead.refit`), so a sweep
    recorded with a fit over every count reads as a fresh one does."""
    sweep_data = launch_overhead.refit(sweep_data)
    eager_fit, graph_fit = sweep_data["fits"]["eager (CPU-bound)"], sweep_data["fits"]["graph replay"]
    replay = gaps["graph replay"]
    kernel_us = replay["gpu_busy_share"] * replay["window_us"] / replay["kernels"]
    return {"eager_per_launch_us": eager_fit["per_item_us"],
            "eager_interval_us": eager_fit["per_item_interval_us"],
            "graph_per_node_us": graph_fit["per_item_us"],
            "graph_interval_us": graph_fit["per_item_interval_us"],
            # the replay's slope on the device (events after a spin), where the sweep timed it
            "graph_device_per_node_us": (sweep_data["fits"].get(launch_overhead.DEVICE_WAY) or {}).get("per_item_us"),
            "sweep_measured": sweep_data.get("measured", ""),
            "graph_fixed_us": graph_fit["fixed_us"],
            "graph_launch_gap_us": replay["launch_gap_median_us"], "graph_kernel_us": kernel_us,
            "eager_launch_gap_us": gaps["eager"]["launch_gap_median_us"],
            "graph_timestamp_step_us": replay.get("timestamp_step_us"),
            "fit_r_squared": min(eager_fit["r_squared"], graph_fit["r_squared"]),
            "sweep": dict(sweep_data)}


def c18_case(on_gpu: bool, sweep_data: Mapping, gaps: Mapping, recorded_sweep: object,
             recorded_gaps: object, device_name: str) -> tuple[dict | None, str]:
    """(C18's evidence, where it comes from): this run's sweep and timeline on a GPU (with the
    device's name); elsewhere the reference GPU's recorded ones (None if either is missing)."""
    if on_gpu:
        return {**c18_evidence(sweep_data, gaps), "device": device_name}, ""
    if _payload(recorded_sweep) is None or _payload(recorded_gaps) is None:
        return None, "nothing recorded for the reference GPU yet"
    return c18_evidence(_payload(recorded_sweep), _payload(recorded_gaps)), _where(recorded_sweep)


def device_room(evidence: Mapping) -> float | None:
    """The room the unprofiled device left for a graph's launch gap (its per-node slope on CUDA
    events minus the kernel's run, at least 0), where that is below the profiled gap: the
    profiled gap is then an upper bound, and the contrast of gaps a lower one. None where the
    device's slope was not timed (an older record) or leaves room for the profiled gap. Review
    2026-12-05w item 4 (C18's table) and 2026-12-06 item 8 (the takeaway, which stated the
    bound as a measured value)."""
    device = evidence.get("graph_device_per_node_us")
    if device is None:
        return None
    room = float(device) - float(evidence["graph_kernel_us"])
    return max(0.0, room) if room < float(evidence["graph_launch_gap_us"]) else None


def _room_row(difference: float) -> list:
    """C18's table row of the device's per-node slope minus the kernel's run: the difference where
    positive, else no value and why (the profiled kernel outlasts the unprofiled slope)."""
    if difference > 0:
        return ["  device slope minus kernel", difference, ""]
    return ["  device slope minus kernel", None, "none measurable: the kernel (profiler on) outlasts it"]


def c18_rows(ev: Mapping, where: str) -> Table:
    """Every row of C18's table, each marked where the verdict uses it (`c18_table` shows the
    judged ones and folds the rest)."""
    uses = "<- judged"
    ratio, _, eager_gap, eager_how = seed_contrast(ev)
    by_slope = eager_how.startswith("the fitted")
    return Table("C18: launch latency, not time per node", ["quantity", "us", ""], [
        # review 2026-12-05p 03-04 item 4: the slope is timed on the wall clock, so it holds the
        # host's replay work (it moved 1.15 -> 1.72 us with the host; the kernel and gap held)
        ["graph replay, per node (fitted slope, wall clock)", ev["graph_per_node_us"], ""],
        # review 2026-12-05t 03-04 item 3: the same replays timed on the device (events after a spin)
        *([["  on the device (events, fitted slope)", ev["graph_device_per_node_us"], ""]]
          if ev.get("graph_device_per_node_us") is not None else []),
        # review 2026-12-05p 03-04 items 9 and 10: shorter labels pay for the small-add note's
        # steady-excess clause on the 1,500-word core ("the seed's contrast" is the card's)
        ["  kernel run (timeline busy / kernels)", ev["graph_kernel_us"], ""],
        ["  slope minus kernel", ev["graph_per_node_us"] - ev["graph_kernel_us"], ""],
        # review 2026-12-05w item 4: the unprofiled device's room for a gap beside the profiled one
        # review 2026-12-06z 03-04 item 8: a difference at or below zero is no gap, not a negative one
        # (the kernel's run is read with the profiler on, the slope without it)
        *([_room_row(float(ev["graph_device_per_node_us"]) - float(ev["graph_kernel_us"]))]
          if ev.get("graph_device_per_node_us") is not None else []),
        ["  launch gap (timeline median, profiler on)", ev["graph_launch_gap_us"], uses],
        ["eager, per launch (fitted slope)", ev["eager_per_launch_us"], ""],
        ["  slope minus kernel: eager's gap", eager_gap if by_slope else None, uses if by_slope else ""],
        ["  eager gap (timeline median, profiler on)", ev["eager_launch_gap_us"], "" if by_slope else uses],
        ["eager gap / graph gap (x)", ratio, uses],
    ], recorded=where and f"{where}; not this machine's verdict")


def c18_table(evidence: Mapping | None, where: str, verdict: claims.Verdict | None = None) -> Table:
    """Both graph-replay numbers side by side, the eager ones, and which the verdict uses; the
    verdict's line under them. The judged rows are shown, the rest folded (`judged_rows`)."""
    if evidence is None:
        return Table(f"C18: no GPU here, and {where}", ["quantity", "us"])
    ev = evidence
    ratio, _, eager_gap, eager_how = seed_contrast(ev)
    by_slope = eager_how.startswith("the fitted")
    shown = judged_rows(c18_rows(ev, where), by_slope)
    # the graph gap's trace step is under the gaps table (`step_note`), not repeated here
    # the fresh processes' range only where their record is of the GPU this evidence came from
    # (review 2026-12-04j item 5): this run's GPU, or the reference machine's recorded evidence
    # review 2026-12-05p 03-04 item 1b: this run's own figures (`where` empty) name a slower host
    # where only they moved; a CPU's recorded ones keep 'not measured' (its 1,500-word core)
    fresh = fresh_process_note(eager_gap, ev.get("device") or None, graph_slope=float(ev["graph_per_node_us"]),
                               kernel=None if where else float(ev["graph_kernel_us"]),
                               after_profiling=ev.get("sweep_measured") != SWEEP_FIRST)
    # the profiled gap against the device's room for one (review 2026-12-05w item 4: kernel 1.09 +
    # gap 0.256 us exceeded the device's 1.15 us per node): an upper bound, said so
    room = device_room(ev)
    bound = ("" if room is None else "; the profiled graph gap is an upper bound (the device left "
             + (f"{room:.2f} us)" if room > 0 else "no measurable room for one)"))
    shown.note(f"eager gap {eager_gap:.2f} us (the seed's 5-8 us){bound}" + (f"; {fresh}" if fresh else "."))
    if TAX_SAID in fresh:  # review 2026-12-05t 03-04 item 3: the project's probe of the drift, cited
        shown.fold(TAX_FOLD, f"The graph replay's wall slope: {profiler_tax()}.")
    if verdict is None:
        return shown
    # The outcome under the table; its reason, which restates the table's numbers, folded.
    return shown.note(f"{verdict.claim_id} {verdict.label}").fold("the verdict's reason", verdict.reason)


C18_FOLD = "the graph's per-node times and the gaps not judged"


def judged_rows(every: Table, by_slope: bool) -> Table:
    """C18's table cut to the rows a room reads: the graph's gap, eager's slope, eager's gap and
    their ratio (the rows marked judged, and the eager slope the eager gap is read from); the rest
    (the graph's per-node slopes, the kernel's run and the differences, the eager gap not judged)
    folded under it (C18_FOLD), each row as it was. Review 2026-12-06z 03-04 item 8: ten rows,
    one of them a negative difference, then a 120-word reason, unreadable for a room."""
    kept = {"  launch gap (timeline median, profiler on)": "graph replay: launch gap (timeline median, profiler on)",
            "eager, per launch (fitted slope)": "eager: per launch (fitted slope)",
            **({"  slope minus kernel: eager's gap": "eager: gap (slope minus kernel)"} if by_slope else
               {"  eager gap (timeline median, profiler on)": "eager: gap (timeline median, profiler on)"}),
            "eager gap / graph gap (x)": "eager gap / graph gap (x)"}
    shown = Table(every.title, every.columns, units=every.units, recorded=every.recorded)
    rest = Table("", every.columns, units=every.units)
    for row in every.rows:
        if row[0] in kept:
            shown.add(kept[row[0]], *row[1:])
        else:
            rest.add(*row)
    return shown.fold(C18_FOLD, str(rest)) if rest.rows else shown


FRESH_RECORD = "nvidia-h200-04_fusion.json"  # reproduce.py's C18 runs, each a fresh process
FRESH_FIGURES = {"eager gap, slope minus kernel (us)": "eager gap"}  # reproduce's name: ours


def fresh_record(gpu_name: str | None, record: Mapping | None = None) -> Mapping | None:
    """reproduce's record of C18 in fresh processes (results/reproduce/FRESH_RECORD; `record`
    replaces the file in tests), only where it is of the GPU the figures beside it came from:
    `gpu_name` (a GPU's own run), or, where None (evidence recorded on the reference machine
    and shown on a CPU), the reference machine. Review 2026-12-04j item 5: an A100's page
    would have printed the H200's fresh range as if it were its own. None otherwise."""
    if record is None:
        try:
            record = json.loads((results.repository_results_dir() / "reproduce" / FRESH_RECORD).read_text())
        except (OSError, ValueError):
            return None
    if gpu_name is None:
        return record if record.get("machine") == results.DEFAULT_REFERENCE else None
    return record if (record.get("fingerprint") or {}).get("gpu_name") == gpu_name else None


def against_range(value: float, low: float, high: float) -> str:
    """'inside', 'above' or 'below' a range, to the 2 decimals it is printed with."""
    value, low, high = round(value, 2), round(low, 2), round(high, 2)
    return "above" if value > high else "below" if value < low else "inside"


def fresh_spread(found: Mapping | None) -> tuple[int, object, dict[str, tuple[float, float]]]:
    """(runs whose fit the rule accepted, runs in all, {figure: (low, high)} over those runs)
    from reproduce's C18 record. Review 2026-12-04k item 3: the takeaway read '4.03-8.65 us ...
    15.7-33.8x, in 3 fresh processes' where 2 of the 3 sweeps were refused (R^2 0.946 and 0.409
    < 0.95), so their slopes and contrasts were never judged. A run counts where its evidence's
    fit_r_squared reaches MIN_FIT_R_SQUARED; a record without per-run evidence counts all."""
    spread = (((found or {}).get("claims") or {}).get("C18") or {}).get("spread") or {}
    total = (found or {}).get("runs", "?")
    evidence = (found or {}).get("evidence") or []
    fits = [((run or {}).get("C18") or {}).get("fit_r_squared") for run in evidence]
    keep = None
    if fits and all(f is not None for f in fits):
        keep = [float(f) >= c19_claims.MIN_FIT_R_SQUARED for f in fits]
    out: dict[str, tuple[float, float]] = {}
    for key, figure in spread.items():
        values = figure.get("runs")
        if keep is not None and values is not None and len(values) == len(keep):
            chosen = [float(v) for v, k in zip(values, keep, strict=True) if k]
            if chosen:
                out[key] = (min(chosen), max(chosen))
        elif "min" in figure and "max" in figure:
            out[key] = (float(figure["min"]), float(figure["max"]))
    decided = sum(keep) if keep is not None else (total if isinstance(total, int) else 0)
    return decided, total, out


def fresh_runs(decided: int, total: object) -> str:
    """'3 fresh processes (reproduce.py)', or '1 of 3 fresh processes (reproduce.py; 2 fits
    refused)' where the rule refused some."""
    if not isinstance(total, int) or decided == total:
        return f"{total} fresh processes (reproduce.py)"
    return f"{decided} of {total} fresh processes (reproduce.py; {total - decided} fits refused)"


def fresh_slopes(found: Mapping | None) -> tuple[float, float] | None:
    """(lowest, highest) graph per-node slope (us) over reproduce's C18 runs whose fit the rule
    accepted (their evidence's graph_per_node_us), or None where the record holds none."""
    slopes = [float(c18["graph_per_node_us"]) for run in (found or {}).get("evidence") or []
              if (c18 := (run or {}).get("C18") or {}).get("graph_per_node_us") is not None
              and float(c18.get("fit_r_squared", 1.0)) >= c19_claims.MIN_FIT_R_SQUARED]
    return (min(slopes), max(slopes)) if slopes else None


FRESH_MARGIN = 0.05  # a kernel this near the fresh processes' is 'the same kernel' (`slower_host`)


def fresh_kernels(found: Mapping | None) -> tuple[float, float] | None:
    """(lowest, highest) profiled kernel time (us, `graph_kernel_us`) over reproduce's C18 runs,
    or None where the record holds none."""
    kernels = [float(c18["graph_kernel_us"]) for run in (found or {}).get("evidence") or []
               if (c18 := (run or {}).get("C18") or {}).get("graph_kernel_us") is not None]
    return (min(kernels), max(kernels)) if kernels else None


def slower_host(kernel: float | None, found: Mapping | None) -> str:
    """Where this process's launch figures lie above the fresh processes' and its profiled
    kernel is theirs (within FRESH_MARGIN of their range): 'its kernel as theirs (1.04 us;
    1.05): only the host-paced figures moved, as do the host launches below (why is not
    measured)', else ''.
    Review 2026-12-05p 03-04 item 1b: the slow page said 'why is not measured' where the
    device figures held and only the host-paced ones moved; said once, above the reduce-
    overhead and small-add notes, whose host launches are this process's too."""
    kernels = fresh_kernels(found)
    if kernel is None or kernels is None:
        return ""
    low, high = kernels
    if not low / (1 + FRESH_MARGIN) <= kernel <= high * (1 + FRESH_MARGIN):
        return ""
    theirs = "-".join(dict.fromkeys(f"{v:.2f}" for v in kernels))
    # a slower process or a slower machine (the fresh processes may be another call's): nothing
    # here tells them apart (review 2026-12-05p2 00-04 item 4)
    return (f"its kernel as theirs ({kernel:.2f} us; {theirs}): only the host-paced figures moved, "
            "as do the host launches below (why is not measured)")


# Where the notebook measures C18's launch sweep: first, before any profiler session of the page
# (kept with the sweep's record, so a note knows a sweep measured after the page's profiles)
SWEEP_FIRST = "first in the page, before its profiler sessions"
SWEEP_AGAIN = "measured again, after the page's profiler sessions"  # C18's cell run a second time


def sweep_measured(sweep: launch_overhead.LaunchSweep) -> str:
    """Where the sweep C18's cell shows was measured, for its record: SWEEP_FIRST for the one
    `launch_overhead.measure_first` took at the top of the page (`first`), SWEEP_AGAIN for one
    measured when the cell ran again (review 2026-12-05u 00-04 item 5b: a re-run was stamped
    first, and the note then dropped the profiler-tax clause for the sweep it applies to)."""
    return SWEEP_FIRST if sweep.first else SWEEP_AGAIN
PROFILER_TAX_PROBE = "h200_probes/probe_profiler_tax_2026-12-05T1750.json"  # benchmarks/probe_profiler_tax.py
TAX_WAY = "sweep: graph replay"
TAX_SAID = "timed after profiler sessions (tax: folded)"  # the note's clause; the probe folded
TAX_FOLD = "profiler tax probe"


def profiler_tax(found: Mapping | None = None) -> str:
    """The profiler-tax probe's graph-replay finding in one clause, read from its record
    (results/PROFILER_TAX_PROBE; `found` replaces it in tests): 'profiler sessions earlier in a
    process raised it in a probe (1.150 -> 1.351 us after 5 sessions, 1.17x; control 1.02x:
    results/h200_probes/...)'; '' where the record or its figures are missing. Review 2026-12-05t
    03-04 item 3: the page said 'why is not measured' beside the project's own probe of it."""
    if found is None:
        try:
            found = json.loads((results.repository_results_dir() / PROFILER_TAX_PROBE).read_text())
        except (OSError, ValueError):
            return ""
    way = TAX_WAY.removeprefix("sweep: ")
    before = ((found.get("before") or {}).get("sweep") or {}).get(way)
    after = ((found.get("after") or {}).get("sweep") or {}).get(way)
    control = ((found.get("control") or {}).get("sweep") or {}).get(way)
    if not (before and after and control):
        return ""
    return (f"profiler sessions earlier in a process raised it in a probe ({before:.3f} -> {after:.3f} us "
            f"after {found.get('sessions', '?')} sessions, {after / before:.2f}x; control {control / before:.2f}x: "
            f"results/{PROFILER_TAX_PROBE})")


def fresh_process_note(eager_gap: float, gpu_name: str | None, record: Mapping | None = None,
                       graph_slope: float | None = None, kernel: float | None = None,
                       after_profiling: bool = False, tax: Mapping | None = None) -> str:
    """This process's eager gap against the fresh processes' (reproduce's C18 spread, read from
    `fresh_record`, never typed), worded from the numbers: inside, above or below their range.
    Review 2026-12-04j item 5: the note implied that a late reading reads high, and the
    2026-12-04 record put the in-process 7.00 us inside. Review 2026-12-04l item 1: outside
    the range it named a cause ('this one after the chapter's compiled work') that nothing
    measured (the 16:01 page's graph slope was 36% above the fresh runs' too, device-paced
    work); it says only that the cause is not measured. '' where no record of this GPU holds
    the figure."""
    found = fresh_record(gpu_name, record)
    decided, total, spread = fresh_spread(found)
    key = "eager gap, slope minus kernel (us)"
    if key not in spread:
        return ""
    low, high = spread[key]
    span = f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}"
    where = against_range(eager_gap, low, high)
    # review 2026-12-04m 03-04 item 5: the graph's slope lay outside the fresh runs too (1.40 us
    # against 1.25-1.26 at 18:55, 1.62 against 1.19 at 16:01), unsaid: said where it lies outside
    slopes = fresh_slopes(found) if graph_slope is not None else None
    slope_where = against_range(graph_slope, *slopes) if slopes else "inside"  # type: ignore[arg-type]
    graph = (f", graph slope {graph_slope:.2f} us {slope_where} their {slopes[0]:.2f}-{slopes[1]:.2f}"  # type: ignore[index]
             if slope_where != "inside" else "")
    if where == "inside" and not graph:
        return f"{where} the {span} us of {fresh_runs(decided, total)}."
    why = (f"why the notebook's process reads {'higher' if where == 'above' else 'lower'} is not measured"
           if not graph else "why is not measured")
    if where == "above" and slope_where in ("above", "inside"):  # `kernel` is given for this run's own figures
        why = slower_host(kernel, found) or why
    # a wall slope above theirs, timed after the page's profiler sessions: the probe measured that
    # tax (its figures folded under C18's table, `c18_table`: the 1,500-word core)
    if slope_where == "above" and after_profiling and profiler_tax(tax):
        why = TAX_SAID + ("" if where == "inside" else
                          f"; why the eager gap reads {'higher' if where == 'above' else 'lower'} is not measured")
    return f"{where} the {span} us of {fresh_runs(decided, total)}{graph}; {why}."


def judge_c18(chapter: object, evidence: Mapping | None) -> claims.Verdict | None:
    """On a GPU, this run's verdict (kept for the chapter); elsewhere the reference GPU's
    recorded evidence judged by the same rule, not kept as this machine's; None without any."""
    if evidence is None:
        return None
    if chapter.on_gpu:  # type: ignore[attr-defined]
        return chapter.judge("C18", dict(evidence), form=c18_form(chapter))  # type: ignore[attr-defined]
    return claims.get("C18").judge(dict(evidence), machine=results.DEFAULT_REFERENCE,
                                   form=c18_form(chapter, str(evidence.get("device") or "the reference GPU")))


C18_SEED = "a CUDA GPU"  # the seed's setting (C18's card): fixed-shape batch inference on any CUDA GPU


def c18_form(chapter: object, device: str = "") -> str:
    """C18's form by the course's one rule: the seed's form where the measurement's device meets
    the seed's setting, an analogue naming the device (`Chapter.analogue_form`) where it does
    not. C18's evidence is always a CUDA GPU's (CUDA Graph replays: C18_SEED, the seed's
    setting), this run's on a GPU page and the recorded run's (`device`) on a CPU page alike,
    so its form is the seed's, as C22's on a GPU (`Chapter.form`).

    Review 2026-12-04n 03-04 item 5: the H200 page labelled C22 'the seed's form' and C18
    'analogue: NVIDIA H200 (the seed: a CUDA GPU)', the same situation two ways. Review
    2026-12-05o 03-04 item 4: the bare 'the seed's form' hid that the card judges eager's gap
    by a derived contrast (`c19_claims.C18_FORM`), its seed range only printed (an 8.77 us eager
    gap confirmed under a label saying the claim was judged as stated): the detail is said."""
    eager = f"{c19_claims.SEED_EAGER_LOW_US:g}-{c19_claims.SEED_EAGER_HIGH_US:g} us"
    return f"{chapter.seed_form}; eager by {c19_claims.C18_FORM}, its {eager} printed"  # type: ignore[attr-defined]


def reduce_overhead(device: torch.device, layers: int = 6, width: int = 512) -> dict:
    """A small MLP (`layers` x Linear(width) + GELU) at batch 1: eager, torch.compile and
    mode='reduce-overhead' timed interleaved (the payload under 'reduce_overhead'): device time
    and host launch per call (bench's default clock), then a loop of calls timed on the wall
    clock (`timed_loop`, under 'loop'), which is what decides "in a loop", and each variant's
    host time per call in a loop of 50 calls (HOST_FROM_LOOP, under 'loop_host': what the table
    shows and reads launch-bound from; the probe's host launch over-read the loops 1.8-2.5x)."""
    mlp = torch.nn.Sequential(*[m for _ in range(layers)
                                for m in (torch.nn.Linear(width, width), torch.nn.GELU())]).to(device).eval()
    one = torch.randn(1, width, device=device)
    torch._dynamo.reset()
    counters = _inductor_counters()
    skipped_before = counters["inductor"]["cudagraph_skips"] if counters is not None else 0
    default_mlp, graph_mlp = torch.compile(mlp), torch.compile(mlp, mode="reduce-overhead")
    with torch.no_grad():
        # Inductor's advice to enable TF32 for float32 matmuls (a UserWarning at compile, 25 words
        # on the GPU page, the H100 smoke run of 2026-12-05 23:20): this section times the
        # launches of a batch-1 MLP kept in float32 for every variant; the advice is about math
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*TensorFloat32 tensor cores", category=UserWarning)
            for _ in range(3):
                default_mlp(one)
                graph_mlp(one)
        variants = {"eager": lambda: mlp(one), "compiled": lambda: default_mlp(one),
                    "reduce-overhead": lambda: graph_mlp(one)}
        cmp = bench.compare(variants, baseline="eager", rounds=5, rep_ms=200)
        # the host's time per call from a timed loop of calls (`fusion.wall_and_host_per_call`, as
        # `recompile_sweep` takes it: HOST_FROM_LOOP), not the harness's probe, which over-read the
        # H200's loops 1.8-2.5x (review 2026-12-05t 03-04 item 4)
        sync = torch.cuda.synchronize if device.type == "cuda" else None
        loop_host = {name: dict(zip(("wall_s", "host_s"), fusion.wall_and_host_per_call(fn, (), sync=sync),
                                    strict=True)) for name, fn in variants.items()}
        # the loop a reader's code runs, timed (review 2026-12-03h item 4): it decides "in a loop"
        loop = timed_loop(variants, "eager")
        # a disturbed loop (over its pace, its rounds disagreeing) is timed once more, and the
        # table still flags it if the second is too (review 2026-12-04k item 1; 2026-12-05o item
        # 3); its pace reads the same host figure the table shows (the loop's, not the probe's)
        if any(loop_disturbed(loop_row, loop_host[row["variant"]]["host_s"], row["median_s"])
               for row, loop_row in zip(cmp.table(), loop["rows"], strict=True)):
            loop = {**timed_loop(variants, "eager"), "retimed": True}
    # whether reduce-overhead captured a graph at all (review 2026-12-03g item 2: the H200 row
    # went from 2.68x faster at 13:22 to 1.05x slower at 18:27, its host launch equal to plain
    # compile's, as if no graph ran); Inductor counts each skip (torch/_inductor/cudagraph_utils.py)
    skips = None if counters is None else int(counters["inductor"]["cudagraph_skips"] - skipped_before)
    # the kernels of one compiled call, the graph reduce-overhead replays (review 2026-12-06 item 9:
    # with C18's fit they bound what a raw replay of them costs, `replay_bound_line`); profiled last,
    # after every timing, and None where the profile lost kernel records
    kernels = None
    if device.type == "cuda":  # no module hook (forward_profile's): nothing Dynamo could guard on
        with torch.no_grad():
            ran = kernel_records.profile_after_marks(lambda: default_mlp(one), device)
        kernels = None if ran is None else len(ran)
    return {"comparison": cmp.table(), "loop": loop, "layers": layers, "width": width, "batch": 1,
            "cudagraph_skips": skips, "loop_host": loop_host, "host_from": HOST_FROM_LOOP,
            "graph_kernels": kernels}


def replay_bound_line(record: object, c18: Mapping | None) -> str:
    """What of reduce-overhead's time per call in its timed loop a raw graph replay can explain,
    from C18's fit of graph replay on the wall clock (fixed + per node x kernels, the device
    included: what a loop of raw replays would take a call at most) and the kernels of one
    compiled call (the graph it replays, `reduce_overhead`'s 'graph_kernels'): the rest, at
    least, is torch.compile's own work around the replay (guards, the graph tree's bookkeeping). Review 2026-12-06 item 9 (and
    2026-12-05w item 9): the page said a replay call's host time was 'not measured here' while
    C18 had measured what a replay costs. '' where either figure is missing (an older record)."""
    payload = _payload(record)
    kernels = (payload or {}).get("graph_kernels")
    timed = {r["variant"]: r for r in ((payload or {}).get("loop") or {}).get("rows", [])}
    # the loop the table decides on (its wall time per call, which no host time inside it can
    # exceed), not the 50-call batch the host column comes from: review 2026-12-06b item 2, the
    # two loops of the same calls differed 9-15% on the H200 (89.5 against 81.8 us)
    loop = timed.get("reduce-overhead", {}).get("median_s")
    if not kernels or loop is None or not c18 or c18.get("graph_fixed_us") is None:
        return ""
    replay_us = float(c18["graph_fixed_us"]) + float(c18["graph_per_node_us"]) * int(kernels)
    loop_us = float(loop) * 1e6
    if loop_us <= replay_us:
        return (f"A raw replay of its {kernels} kernels costs up to {replay_us:.0f} us by C18's fit; "
                f"reduce-overhead's timed loop took {loop_us:.0f} us a call: within it.")
    return (f"A raw replay of its {kernels} kernels costs up to {replay_us:.0f} us by C18's fit "
            f"({float(c18['graph_fixed_us']):.2f} + {float(c18['graph_per_node_us']):.2f} us a node, wall clock); "
            f"reduce-overhead's timed loop took {loop_us:.0f} us a call, so at least {loop_us - replay_us:.0f} us "
            "is torch.compile's work around the replay (guards, graph bookkeeping).")


def _inductor_counters() -> object | None:
    """torch._dynamo's counters (Inductor counts each CUDA graph capture it skips under
    ['inductor']['cudagraph_skips']), or None where this torch has none: a private table, so
    its absence leaves the skip count unknown (None) instead of failing the cell."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return None
    return counters


def comparison_table(record: object, title: str, faster: bool = False,
                     c18: Mapping | None = None) -> Table | str | None:
    """A kept comparison (a payload's 'comparison': bench's rows) as a table: each variant's
    median (device time where a host launch was measured), ratio, host launch and whether it
    was launch-bound; labelled recorded if so. None for None (nothing to show on this machine:
    `chapter.only_on` gives None elsewhere, and a cell must then show nothing, not 'None').

    Where the record holds a timed loop (`timed_loop`, under 'loop'), that decides "in a loop":
    its median per call, speed-up and per-round spread are columns, the reading under the table
    goes through the trust rule, and no computed pace (max of host launch and device time,
    LOOP_PACE) is printed beside it (`_timed_loop_table`). On the H200 every row of the small MLP is
    launch-bound, and the computed pace flipped direction across three records (2.68x faster,
    1.05x slower, 1.91x faster: review 2026-12-03h item 4). An older record without a timed
    loop shows the computed pace as such and reads no loop direction from it.

    `faster`: the ratios as speed-ups over the first variant ('speed-up', its time / each
    variant's: review 2026-12-04i item 10, 'times faster 0.56x' read wrong on a CPU), for a
    table read under a quiz that asks for the speed against the first (review
    2026-12-03g item 8: 04's CPU page showed its own chain as 'times faster 0.56x' and the
    recorded H200 chain under the same quiz as 'ratio 0.49x', a time ratio).

    `c18`: C18's evidence (its graph-replay fit), for reduce-overhead's replay bound
    (`replay_bound_line`), a note where the record counted the compiled graph's kernels."""
    if record is None:
        return None
    payload = _payload(record)
    if payload is None:
        return str(record)
    shown = _comparison_table(record, payload, title, faster)
    skips = payload.get("cudagraph_skips")
    if skips and hasattr(shown, "note"):
        shown.note(f"Inductor skipped CUDA graph capture {skips} time(s) in this run (its "
                   "cudagraph_skips counter): the reduce-overhead row timed compiled code without a graph.")
    elif (bound := replay_bound_line(record, c18)) and hasattr(shown, "note"):
        shown.note(bound)
    return shown


def _comparison_table(record: object, payload: Mapping, title: str, faster: bool) -> Table:
    """comparison_table's table, before its CUDA-graph note."""
    found = payload["comparison"]
    ratio = "speed-up" if faster else "ratio"

    def said(r: Mapping) -> float:  # the row's ratio in the table's direction
        return 1 / r["ratio"] if faster else r["ratio"]

    timed = {r["variant"]: r for r in (payload.get("loop") or {}).get("rows", [])}
    if timed and all(r["variant"] in timed for r in found):  # a loop timed: it decides "in a loop"
        return _timed_loop_table(record, payload, found, title, faster)
    # With a host-launch figure the median is the device's clock (the harness's GPU timing).
    if not any(r.get("host_s") is not None for r in found):
        shown = rows([{"variant": r["variant"], "median": r["median_s"], ratio: said(r),
                       "host launch": r.get("host_s"), "launch-bound": r.get("launch_bound")}
                      for r in found], title, units={"median": "s", ratio: "x", "host launch": "s"})
        shown.recorded = _where(record)
        return shown
    loops = [max(r["median_s"], r.get("host_s") or 0.0) for r in found]
    if loops == [r["median_s"] for r in found]:  # no launch outlasts its kernels: device time decides
        shown = rows([{"variant": r["variant"], "device time": r["median_s"], ratio: said(r),
                       "host launch": r.get("host_s")} for r in found], title,
                     units={"device time": "s", ratio: "x", "host launch": "s"})
        shown.recorded = _where(record)
        return shown
    shown = rows([{"variant": r["variant"], "device time": r["median_s"], f"device {ratio}": said(r),
                   "host launch": r.get("host_s"), "loop pace": loop,
                   f"loop {ratio}": loops[0] / loop if faster else loop / loops[0]}
                  for r, loop in zip(found, loops, strict=True)], title,
                 units={"device time": "s", f"device {ratio}": "x", "host launch": "s", "loop pace": "s",
                        f"loop {ratio}": "x"})
    bound = [r["variant"] for r in found if r.get("launch_bound")]
    # A record without a timed loop (before review 2026-12-03h item 4) reads no loop direction:
    # the computed pace flipped between records, so it only explains which clock bounds a row.
    shown.note(f"{LOOP_PACE}: an explanation; this record timed no loop, so no loop direction "
               "is read from it."
               + (f" Launch-bound (host launch above device time): {', '.join(bound)}." if bound else ""))
    shown.recorded = _where(record)
    return shown


def _timed_loop_table(record: object, payload: Mapping, found: Sequence[Mapping], title: str,
                      faster: bool) -> Table:
    """The comparison with its timed loop (`timed_loop`) as the column that decides a Python
    loop. One convention in the table and the sentence under it: each ratio is a speed-up over
    the baseline (its time / the row's), whatever `faster` says (review 2026-12-04i item 8: the
    table's 'loop ratio' read compiled 1.10x, slower, while the sentence read reduce-overhead
    '1.99x faster'). The note says why launch-bound rows run at the host's pace by naming the
    two columns, without a computed pace (max of host launch and device time) beside the timed
    loop: two different 'loop' numbers in one paragraph (review 2026-12-04i item 7)."""
    del faster  # a timed loop always reads as a speed-up
    loop = payload["loop"]
    timed = {r["variant"]: r for r in loop["rows"]}

    def spread(r: Mapping) -> str:  # the timed loop's per-round spread, as a speed-up
        low, high = sorted((1 / r["ratio_q25"], 1 / r["ratio_q75"]))
        return f"{low:.2f}-{high:.2f}"

    device = any(r.get("host_s") is not None for r in found)  # a GPU's: the median is device time
    per_call = "device time" if device else "median"
    speedup = "device speed-up" if device else "speed-up"
    # the host's time per call from a timed loop (`loop_hosts`); the harness's probe, which over-read
    # the loops 1.8-2.5x, is no longer shown (review 2026-12-05t 03-04 item 4)
    hosts = loop_hosts(payload)
    host = "host per call, loop"
    shown = rows([{"variant": r["variant"], per_call: r["median_s"], speedup: 1 / r["ratio"],
                   **({host: hosts[r["variant"]]} if hosts else {}),
                   "loop, timed": timed[r["variant"]]["median_s"],
                   "loop speed-up": 1 / timed[r["variant"]]["ratio"],
                   "loop spread": spread(timed[r["variant"]])}
                  for r in found], title,
                 units={per_call: "s", speedup: "x", **({host: "s"} if hosts else {}),
                        "loop, timed": "s", "loop speed-up": "x"})
    baseline = loop.get("baseline") or found[0]["variant"]
    disturbed = {r["variant"]: times for r in found
                 if (times := loop_disturbed(timed[r["variant"]], hosts.get(r["variant"], r.get("host_s")),
                                             r["median_s"]))}
    readings = "; ".join(
        f"{r['variant']}: not stated (disturbed)" if {r["variant"], baseline} & set(disturbed)
        else loop_reading(loop, r["variant"]) for r in found[1:])
    shown.note(f"In a loop ({LOOP_TIMED}, {loop.get('rounds', '?')} interleaved rounds), speed-up "
               f"over {baseline}: {readings}." + (launch_bound_line(found, hosts) if device else "")
               + (" Timed twice: the first loop read disturbed." if loop.get("retimed") else ""))
    if disturbed:
        shown.note(disturbed_note(disturbed))
    shown.recorded = _where(record)
    return shown


def loop_hosts(payload: Mapping) -> dict[str, float]:
    """{variant: host seconds per call} from the record's loop of calls (`reduce_overhead`'s
    'loop_host', HOST_FROM_LOOP: the host's time until the calls returned, before the sync), {}
    for an older record, which kept only the harness's probe (it over-read the loops 1.8-2.5x:
    review 2026-12-05t 03-04 item 4; not shown)."""
    found = payload.get("loop_host") or {}
    return {name: float(v["host_s"]) for name, v in found.items() if v.get("host_s") is not None}


def launch_bound_line(found: Sequence[Mapping], hosts: Mapping[str, float]) -> str:
    """' Launch-bound (host per call in the loop above device time): eager, compiled.' or that
    none is, from each row's device time against its host time per call in a loop (`loop_hosts`);
    an older record, whose host figure was the probe: that launch-bound is not read from it."""
    if not hosts or not all(r["variant"] in hosts for r in found):
        return " Host time per call not taken from a loop in this record: launch-bound not read."
    bound = [r["variant"] for r in found if hosts[r["variant"]] > float(r["median_s"])]
    if not bound:
        return " No row launch-bound: host per call in the loop under device time in each."
    which = "every row" if len(bound) == len(found) else ", ".join(bound)
    return f" Launch-bound (host per call in the loop above device time): {which}."


def _faster(speedup: float) -> str:
    """'2.68x faster' or '1.32x slower' (a speed-up over the baseline, said in words)."""
    return f"{speedup:.2f}x faster" if speedup >= 1 else f"{1 / speedup:.2f}x slower"


# ---------------------------------------------------------------------------- C19: Triton


def triton_add_class(measured: object, has_triton: bool, recorded: object) -> Key | str:
    """C19's quiz answer, graded on the sweep's largest aligned size: this run's sweep where
    Triton runs (run the sweep cell first), else the reference GPU's recorded one. Where its
    spread or a flagged timing could carry the speed-up across a class's edge (the trust rule,
    `quiz_keys`), both classes count."""
    payload = _payload(measured if has_triton else recorded)
    if payload is None:
        if has_triton:
            raise quiz_keys.NotYetMeasured("run the sweep cell below first, then submit again")
        raise ValueError("no GPU here and no aligned sweep recorded yet for the reference GPU")
    row = payload["rows"][-1]
    classes = fused_kernels.ADD_SPEED_CLASSES[::-1]  # from Triton slowest to fastest
    return quiz_keys.choice_key(row["speedup"], row.get("speedup_iqr"), row.get("flags"),
                                choices=classes, edges=(1 / 1.1, 1.1, 1.8),
                                pick=fused_kernels.add_speed_class, what="Triton/PyTorch")


# review 2026-12-06 item 1: the folded launch figures are the harness's probe, which over-read a
# loop of the same adds on the H100 (67.7 us against 18.1 us per add): labelled as the probe's
# Review 2026-12-06z 03-04 item 3: the probe's launch read above the whole call in a loop (Triton
# 24.2 us against 18.9 at 2^20), which no launch can: it is headed an upper bound.
ADD_TIMES_FOLD = "device time and host launch (probe, upper bound) per add"


def add_table(record: object, title: str = "Triton's add against PyTorch's, fp16") -> Table | str:
    """One row per size: each add's GB/s and the speed-up; labelled recorded when it was not
    measured here. Each add's device time and host launch (the harness's probe), measured apart,
    are folded under it (32 numbers, some 50 words of a page limited to 1,500); the note reads a
    loop of the smallest adds against their device time (`small_add_line`)."""
    payload = _payload(record)
    if payload is None:
        return str(record)
    # The aligned column only where some size is not aligned (a sweep of powers of two is all aligned).
    aligned = [] if all(r["aligned"] for r in payload["rows"]) else ["aligned"]
    shown = Table(title, ["elements", *aligned, "Triton GB/s", "PyTorch GB/s", "Triton/PyTorch"],
                  units={"Triton/PyTorch": "x"}, recorded=_where(record))
    times = Table("", ["elements", "device T", "device P", "host launch T", "host launch P"],
                  units={"device T": "us", "device P": "us", "host launch T": "us", "host launch P": "us"})
    for r in payload["rows"]:
        shown.add(elements(r["elements"]), *([r["aligned"]] if aligned else []), r["triton_gbps"],
                  r["torch_gbps"], r["speedup"])
        times.add(elements(r["elements"]), r.get("triton_us"), r.get("torch_us"), r.get("triton_host_us"),
                  r.get("torch_host_us"))
    rows_ = payload["rows"]
    small = small_add_line(rows_[0]) if len(rows_) > 2 else ""
    if small:
        shown.note(small)
    if len(rows_) == 2 and rows_[0]["aligned"] != rows_[1]["aligned"]:
        shown.note(f"one element fewer: Triton's add runs at "
                   f"{rows_[1]['triton_gbps'] / rows_[0]['triton_gbps']:.0%} of its aligned speed, "
                   f"PyTorch's at {rows_[1]['torch_gbps'] / rows_[0]['torch_gbps']:.0%}.")
    marked = flagged_rows(rows_)
    if marked:
        shown.note(marked)
    if any(v is not None for row in times.rows for v in row[1:]):
        over = probe_over_loop(rows_[0])
        shown.fold(ADD_TIMES_FOLD, str(times) + (f"\n{over}" if over else ""))
    return shown


def probe_over_loop(row: Mapping) -> str:
    """Where the probe's host launch of an add reads above that add's whole call in a timed loop
    (`fused_kernels.timed_loop_row`), which no launch can: 'At 2^20 the probe reads above a loop's
    whole call (Triton 24.2 against 18.9 us): an upper bound.' '' where it does not or no loop was
    timed. Review 2026-12-06z 03-04 item 3."""
    said = [f"{name} {float(row[f'{k}_host_us']):.3g} against {float(row[f'{k}_loop_us']):.3g} us"
            for name, k in (("Triton", "triton"), ("PyTorch", "torch"))
            if row.get(f"{k}_host_us") is not None and row.get(f"{k}_loop_us") is not None
            and float(row[f"{k}_host_us"]) > float(row[f"{k}_loop_us"])]
    return (f"At {elements(row['elements'])} the probe reads above a loop's whole call ({'; '.join(said)}): "
            "an upper bound, not a launch time.") if said else ""


def flagged_rows(rows_: Sequence[Mapping]) -> str:
    """One line naming each add row the harness flagged (its timing and why) and each row timed
    on CUDA events (which count Triton's Python launcher; kernel records do not) below a size
    timed from kernel records; '' where none is. Review 2026-12-04k item 1: the 13:57 H200
    sweep's 2^20 row read Triton at 70 GB/s (0.04x) on events, flagged 'noisy: IQR 28%', with
    nothing in the table to say so, while the larger rows were timed from kernel records."""
    said = []
    for i, r in enumerate(rows_):
        why = [f"{f['timing']} {str(f['why']).split(';')[0].replace(': ', ' (', 1)})" if ": " in str(f["why"])
               else f"{f['timing']} {f['why']}" for f in r.get("flags") or []]
        # bench reads kernel records for short calls and events for long ones: events at a size
        # below one read from kernel records means the choice was made on a disturbed estimate
        larger = {str(later.get("clock")) for later in rows_[i + 1:] if later["elements"] > r["elements"]}
        if "kernel records" not in str(r.get("clock")) and any("kernel records" in c for c in larger):
            why.append("timed by CUDA events (with the launcher), not kernel records")
        if why:
            said.append(f"{elements(r['elements'])}: {', '.join(why)}")
    return ("Flagged: " + "; ".join(said) + ".") if said else ""


elements = c19_claims.elements  # '2^20' for a power of two, as the sweep names its sizes


def small_add_line(row: Mapping) -> str:
    """The seed's latency column (8.7 us PyTorch, 3.2 us Triton: a small add) beside the
    sweep's smallest row, in one line: what a loop of such adds pays. Where the row holds a
    timed loop (`fused_kernels.timed_loop_row`), that is the reading, through the trust rule:
    each loop's time per add against its own device time, then the seed's pair and the loop's
    ratio. An older row without one gives the four times (each add's device time and host launch,
    measured apart), says its loop was not timed and reads no direction from them (computed, such
    a figure read 1.88x on one H200 record and 2.5x on another). '' where no host launch was
    measured.

    Review 2026-12-06 item 1: the line printed the probe's launch pair ('launch 67.7, 9.7 us')
    beside a loop of the same adds that ran faster (18.1 and 7.29 us per add), which no launch
    can allow: the probe over-read. With a timed loop the probe's pair is left to the folded
    table ('host launch (probe)'), and the loop is set against the device time it ran over."""
    host_t, host_p = row.get("triton_host_us"), row.get("torch_host_us")
    dev_t, dev_p = row.get("triton_us"), row.get("torch_us")
    if None in (host_t, host_p, dev_t, dev_p):
        return ""
    seed = c19_claims.SEED_LATENCY_US
    size = elements(row["elements"])
    if row.get("loop_speedup") is None:
        # review 2026-12-05w item 8: the seed's pair follows the measured one instead of opening the line
        return (f"At {size}, device Triton {dev_t:.3g}, PyTorch {dev_p:.3g} us; launch {host_t:.3g}, "
                f"{host_p:.3g} us (the seed's small-add latencies: Triton {seed['Triton']}, PyTorch "
                f"{seed['PyTorch']} us): this record timed no loop of adds, so no loop direction is read from these.")
    seeds = f"(the seed's small-add latencies: {seed['Triton']}, {seed['PyTorch']} us)"
    disturbed = {name: times for name, k, host, dev in (("Triton", "triton", host_t, dev_t), ("PyTorch", "torch", host_p, dev_p))
                 if (times := disturbed_by(row.get(f"{k}_loop_us"), host, dev, rounds=row.get(f"{k}_loop_rounds_us")))}
    if disturbed:  # the loop's figures are the host's disturbance, not the adds': not read
        said = ", ".join(f"{name}'s {times:.1f}x" for name, times in disturbed.items())
        return (f"At {size}, device Triton {dev_t:.3g}, PyTorch {dev_p:.3g} us {seeds}; the loop of adds "
                f"is not read: host disturbed ({said} its pace, rounds disagreeing).")
    speed, (low, high) = float(row["loop_speedup"]), row["loop_speedup_iqr"]
    faster = speed >= 1
    value, spread = (speed, (low, high)) if faster else (1 / speed, (1 / high, 1 / low))
    stated = claims.trust.stated_ratio(value, spread, flags=row.get("loop_flags"), what="Triton add")
    reading = (f"Triton {stated} {'faster' if faster else 'slower'}" if claims.trust.is_plain_ratio(stated)
               else f"Triton: {brief(stated)}")
    loop_t, loop_p = float(row["triton_loop_us"]), float(row["torch_loop_us"])
    # no clock named: a loop of adds is back-to-back calls on the wall clock already (review
    # 2026-12-04m: a noisy CPU run of 04 read 1,503 core words; this line is on it, recorded)
    return (f"At {size} a loop of adds takes Triton {loop_t:.3g}, PyTorch {loop_p:.3g} us per add, "
            f"{loop_t / dev_t:.1f}x and {loop_p / dev_p:.1f}x their device time {seeds}: "
            f"{reading}{small_add_excess(row)}.")


def small_add_excess(row: Mapping) -> str:
    """"; PyTorch's loop 1.73x its pace (pace: the larger of probed launch and device time)": each
    add's loop that the course's one rule (`clocks.steady_excess`) calls a steady excess over its
    pace (the larger of its host launch, as the probe read it, and its device time); '' where none
    is. Review 2026-12-05p 03-04 item 9: PyTorch's loop of small adds ran 30.8 us against a 17.8 us
    probe with steady rounds, and the note said only 'Triton 1.68x slower'. Review 2026-12-06
    item 1: the line no longer prints the probe's launch, so the pace names it ('probed launch',
    the folded table's 'host launch (probe)'); a probe that over-reads only hides an excess here."""
    over = [f"{name}'s loop {times:.2f}x its pace" for name, k in (("Triton", "triton"), ("PyTorch", "torch"))
            if (times := clocks.steady_excess(row.get(f"{k}_loop_us"), row.get(f"{k}_host_us"), row.get(f"{k}_us"),
                                              rounds=row.get(f"{k}_loop_rounds_us")))]
    # the note says what its pace is: the chapter's table label (LOOP_PACE) is in another section
    # (review 2026-12-05q browser item 4)
    return f"; {', '.join(over)} (pace: the larger of probed launch and device time)" if over else ""


def judge_c19(chapter: object, add_sweep: object, copy_gbps: float,
              seed_implied_gbps: float, device_name: str) -> claims.Verdict | None:
    """C19's verdict from the sweep's largest size, by device time, kept for the chapter; None
    for a sweep not measured here (the reference GPU's recorded one has its recorded verdict)."""
    if getattr(add_sweep, "measured_here", True) is False or _payload(add_sweep) is None:
        return None
    largest = add_sweep["rows"][-1]  # type: ignore[index]
    return chapter.judge("C19", {  # type: ignore[attr-defined]
        "triton_gbps": largest["triton_gbps"], "torch_gbps": largest["torch_gbps"],
        "copy_ceiling_gbps": copy_gbps, "speedup_iqr": largest["speedup_iqr"],
        "seed_implied_gbps": seed_implied_gbps, "elements": largest["elements"],
        "dtype": "float16", "flags": largest["flags"], "sweep": add_sweep["rows"],  # type: ignore[index]
        "device": device_name,
    }, form=chapter.analogue_form("A100", f"fp16, sizes up to {elements(largest['elements'])}",  # type: ignore[attr-defined]
                                  device=device_name))


def c19_evidence(verdict: claims.Verdict | None, recorded: object) -> tuple[Mapping | None, str]:
    """(C19's evidence, '' or the label of the reference run it was recorded on): this run's
    verdict's where Triton ran here, else the reference GPU's recorded verdict's."""
    if verdict is not None:
        return verdict.evidence, ""
    payload = _payload(recorded)
    if not payload or not payload.get("evidence"):
        return None, ""
    return payload["evidence"], _where(recorded)


def seed_rate_line(seed_gbps: float, here_gbps: float, evidence: Mapping | None, where: str) -> str:
    """What the seed's 28.9 TFLOP/s would move, beside the copy ceiling of the machine whose
    add table follows: this machine's where Triton ran here, else the reference GPU's recorded
    one, labelled so. Review 2026-12-04m 03-04 item 8: the CPU page set the recorded H200
    table under 'the copy ceiling here: 13 GB/s'."""
    if where and evidence and evidence.get("copy_ceiling_gbps"):
        ceiling = f"the copy ceiling {where.split(',')[0]}: {float(evidence['copy_ceiling_gbps']):,.0f} GB/s"
    else:
        ceiling = f"the copy ceiling here: {here_gbps:,.0f} GB/s"
    return f"28.9 TFLOP/s of fp16 adds would move {seed_gbps / 1000:.0f} TB/s ({ceiling})"


def add_line(evidence: Mapping | None, where: str) -> str:
    """The Triton add's takeaway, from C19's evidence (the sweep's largest size, by device time):
    each add's share of the copy ceiling, their ratio, and what that leaves of the seed's 2.3x;
    the reference run named where the evidence is recorded. '' without evidence. Review
    2026-12-04m 03-04 item 6: 'What to remember' had no line on the section that refutes it."""
    if not evidence or not evidence.get("copy_ceiling_gbps"):
        return ""
    ceiling = float(evidence["copy_ceiling_gbps"])
    triton, torch_ = float(evidence["triton_gbps"]), float(evidence["torch_gbps"])
    share = (f"both at {triton / ceiling:.0%} of the copy ceiling" if f"{triton / ceiling:.0%}" == f"{torch_ / ceiling:.0%}"
             else f"at {triton / ceiling:.0%} and {torch_ / ceiling:.0%} of the copy ceiling")
    room = ceiling / torch_  # the most any add could gain on PyTorch's: reaching the ceiling
    seed = f"the seed's {c19_claims.SEED_TRITON_SPEEDUP:.1f}x"
    so = (f"no kernel wins {seed}" if room < c19_claims.SEED_TRITON_SPEEDUP else
          f"an add at the ceiling could win {room:.1f}x, {seed} within reach")
    return (f"An add is memory-bound: Triton and PyTorch {share} ({triton / torch_:.2f}x); {so}"
            + (f" ({where.split(',')[0]})." if where else "."))


def fold_speed(stated: str, gain: float, spread: Sequence[float]) -> str:
    """Folding's measured speed for the fold takeaway: the stated ratio, or its value and rounds
    said to be noise where the trust rule held it back (review 2026-12-04m 03-04 item 6)."""
    if claims.trust.is_plain_ratio(stated):
        return f"it ran at {stated} the original's speed"
    if "drifted" in stated:  # review 2026-12-04n 03-04 item 6: neither figure read
        return f"its speed: {stated.removeprefix('no ratio to state: ')}"
    # review 2026-12-06z 03-04 item 5: `stated_gain`'s spread is the quartiles, not the rounds' range
    return f"its speed: noise ({gain:.2f}x, IQR {min(spread):.2f}-{max(spread):.2f})"


def chain_operands(sizes: object, device: torch.device) -> tuple[torch.Tensor, ...]:
    """x, y, z for silu((x + y) * z): a quarter of the copy size per float32 array on a GPU,
    an eighth on a CPU."""
    n = sizes.copy_bytes // 4 // (4 if device.type == "cuda" else 8)  # type: ignore[attr-defined]
    return tuple(torch.randn(n, device=device) for _ in range(3))


def chain_speedup(comparison: bench.Comparison | None, faster: str = "") -> Key:
    """The chain quiz's key, graded on the careful interleaved measurement below: `faster`'s
    speed-up over the baseline, with every value its per-round spread and the flags of its two
    timings allow (the trust rule, `claims.quiz_keys`); not graded where the rounds drifted
    (`drifted`: the table's note reads neither figure)."""
    if comparison is None:
        raise quiz_keys.NotYetMeasured("run the measurement cell below first, then submit again")
    drift = drifted(comparison, faster)
    if drift:  # review 2026-12-05o 03-04 item 1: the note below says read neither, so no key either
        raise ValueError(f"not graded: {drift.removesuffix(': read neither')}")
    return quiz_keys.comparison_key(comparison, faster, inverse=True)


def chain_bytes(elements: int, slow: str, fast: str) -> dict[str, int]:
    """Bytes each path moves: eager writes and reads back both intermediates (8 arrays' worth),
    the fused kernel reads three arrays and writes one."""
    return {slow: fused_kernels.bytes_moved(elements, 4, fused_kernels.CHAIN_EAGER_TENSORS),
            fast: fused_kernels.bytes_moved(elements, 4, fused_kernels.CHAIN_FUSED_TENSORS)}


def time_column(comparison: bench.Comparison) -> str:
    """A timing table's time column named by its clock ('device time', 'wall time', 'CPU time'),
    read from the baseline's timing. Review 2026-12-06z 03-04 item 12: the chain table headed it
    'median', the CPU page's recorded copy of the same run 'device time'."""
    clock = str(comparison[comparison.baseline].timing.clock or "")
    if clock.startswith("device") or "kernel records" in clock:
        return "device time"
    return "wall time" if clock == "wall" else "CPU time"


def chain_table(comparison: bench.Comparison, moved: Mapping[str, int], stated: str) -> Table:
    """Per path: median time, speed-up over the baseline (its time / the path's, per round) and
    its spread, bytes moved, GB/s and share of the copy ceiling; the stated speed-up under it,
    the harness's notes folded. The quiz above asks for the speed against eager's, so the table gives
    that direction (review 2026-12-03e item 12: a CPU's blocked path showed 'ratio 1.62x', a
    time ratio, where the quiz's key was 0.62x faster)."""
    clock = time_column(comparison)
    shown = Table(f"silu((x + y) * z), {comparison.rounds} interleaved rounds",
                  # review 2026-12-06z 03-04 item 5: 'spread' held the quartiles, beside a takeaway
                  # giving the rounds' lowest-highest; item 12: 'median' named no clock
                  ["path", clock, "speed-up", "IQR", "moves", "GB/s", "of the copy ceiling"],
                  units={clock: "s", "speed-up": "x", "moves": "B", "of the copy ceiling": "%"})
    for label, variant in comparison.variants.items():
        shown.add(label, variant.timing.median_s, 1 / variant.ratio,
                  f"{1 / variant.ratio_q75:.2f}-{1 / variant.ratio_q25:.2f}", moved[label],
                  variant.timing.gbps, variant.timing.pct_of_copy_ceiling)
    slow, fast = list(comparison.variants)[0], list(comparison.variants)[-1]
    notes = [f"flagged: {flag['timing']}: {flag['why']}" for flag in comparison.flags()]
    if notes:
        shown.fold(f"the harness's notes ({len(notes)} flagged)", "\n".join(notes))
    variant = comparison.variants[fast]
    why = held_back_by(comparison.flags(), 1 / variant.ratio, (1 / variant.ratio_q75, 1 / variant.ratio_q25),
                       short=True)
    return noted(shown, f"{fast}: {{}} the speed of {slow}.", stated, why)


# ---------------------------------------------------------------------------- C21: GradScaler


def make_scaler(on_gpu: bool, **options: float) -> torch.amp.GradScaler:
    """A GradScaler for this device ('cuda' on a GPU, 'cpu' elsewhere)."""
    return torch.amp.GradScaler("cuda" if on_gpu else "cpu", **options)


def scale_text(scale: float) -> str:
    """A GradScaler scale for prose: a whole number with thousands separators, and its power of
    two where it is one ('33,554,432 (2^25)', '0.5 (2^-1)'); review 2026-12-03g item 8: C21b
    printed '3.35544e+07' beside '2^24 = 16777216'."""
    value = float(scale)
    if not math.isfinite(value) or value <= 0:
        return f"{value:g}"
    power = math.log2(value)
    text = f"{value:,.0f}" if value >= 1 and value == int(value) else f"{value:g}"
    return text + (f" (2^{int(power)})" if power == int(power) else "")


def scaled_step(scaler: torch.amp.GradScaler, weight: torch.nn.Parameter, x: torch.Tensor) -> dict:
    """One step of loss = sum(weight * x) through the scaler: scale before, after, skipped?"""
    optimizer = torch.optim.SGD([weight], lr=0.1)
    optimizer.zero_grad()
    before, old = scaler.get_scale(), weight.detach().clone()
    scaler.scale((weight * x).sum()).backward()
    scaler.step(optimizer)
    scaler.update()
    return {"scale_before": before, "scale_after": scaler.get_scale(),
            "skipped": bool(torch.equal(old, weight.detach()))}


def overflow_outcome(device: torch.device) -> str:
    """The GradScaler quiz's answer: one step whose scaled gradient overflows, classified."""
    w = torch.nn.Parameter(torch.ones(4, device=device))
    step = scaled_step(make_scaler(device.type == "cuda"), w, torch.full((4,), 1e35, device=device))
    skipped, halved = step["skipped"], step["scale_after"] == step["scale_before"] / 2
    return {(True, True): OVERFLOW_CLASSES[0], (False, True): OVERFLOW_CLASSES[1],
            (True, False): OVERFLOW_CLASSES[2]}.get((skipped, halved), "something else")


def scaler_defaults(scaler: torch.amp.GradScaler) -> dict:
    """A scaler's init scale, growth interval, backoff and growth factors."""
    return {"init_scale": scaler.get_scale(), "growth_interval": scaler.get_growth_interval(),
            "backoff_factor": scaler.get_backoff_factor(), "growth_factor": scaler.get_growth_factor()}


SCALER_SEED = "CUDA AMP, torch.amp.GradScaler('cuda')"  # C21's setting, as a form names it


def scaler_form(chapter: object) -> str:
    """The form a GradScaler verdict judges: the seed's on a GPU, else the CPU scaler's analogue
    in the course's one style ('analogue: <this CPU> (the seed: CUDA AMP, ...); ...': review
    2026-12-04m 03-04 item 10)."""
    return chapter.form("torch.amp.GradScaler('cpu'), float32", seed=SCALER_SEED)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- what to remember


def launch_line(on_gpu: bool, c18: Mapping | None, sweep: launch_overhead.LaunchSweep,
                gpu_name: str | None = None, record: Mapping | None = None, where: str = "") -> str:
    """The launch takeaway: the graph's cut on a GPU; the CPU's own cost per tiny op elsewhere.

    On a GPU it states this process's gaps and contrast, the measurement the page shows (review
    2026-12-06b item 8: the takeaway paired the fresh processes' eager range with this page's
    graph gap), then the fresh processes' range beside them (reproduce.py's C18 spread, read from
    results/reproduce/FRESH_RECORD, never typed; `record` replaces the file in tests) where that
    record is of this GPU (`gpu_name`): review 2026-12-04i item 13 found a late process's 7.34 us
    and 29x alone where three fresh processes read 5.87-5.93 us and 22.9-23.2x. Where its eager
    gap lies against that range is C18's table note (review 2026-12-04j item 5).

    Review 2026-12-06z 03-04 item 12: off a GPU the line ended 'a CUDA Graph removes it on a GPU',
    measured nowhere on the page and too strong (a node still takes 1.18 us): where C18's evidence
    was recorded (`c18`, labelled by `where`, C18's table's own label), it quotes the recorded gaps;
    with none recorded it claims nothing of a GPU."""
    if not (on_gpu and c18 is not None):
        here = f"{sweep.fits['eager (CPU ops)'].per_item_us:.1f} us of Python and dispatcher per tiny op here"
        if c18 is None or not where:
            return here
        _, _, eager_gap, _ = seed_contrast(c18)
        at_most = "" if device_room(c18) is None else "at most "
        return (f"{here}; {where}, a CUDA Graph cut the GPU's wait between kernels from {eager_gap:.2f} to "
                f"{at_most}{float(c18['graph_launch_gap_us']):.2f} us")
    ratio, _, eager_gap, _ = seed_contrast(c18)
    # review 2026-12-06 item 8: where the device left less room than the profiled gap, that gap is
    # an upper bound and the contrast a lower one, said so (C18's table says it too)
    room = device_room(c18)
    at_most, more = ("", "") if room is None else ("at most ", " or more")
    # review 2026-12-06b item 8: this page's own contrast to three figures (20.9x was rounded up
    # into '21x or more'), led by this page's gaps; the fresh processes' range follows it
    here = f"{eager_gap:.2f} us (eager) to {at_most}{c18['graph_launch_gap_us']:.2f} us, {ratio:.3g}x{more}"
    fresh = fresh_launch_range(gpu_name, record)
    if fresh is None:
        # the device's per-node time where timed (review 2026-12-05w item 4: the wall slope holds
        # the host's replay work too)
        node, clock = ((c18["graph_device_per_node_us"], "on the device")
                       if c18.get("graph_device_per_node_us") is not None else (c18["graph_per_node_us"], "wall"))
        per_node = (f"{node:.2f} us per node {clock}, with the kernel's run" if room is None else
                    f"profiler on; on the device {node:.2f} us per node, "
                    + (f"{room:.2f} us beyond the kernel's run" if room > 0 else "no measurable time beyond the kernel's run"))
        return f"a CUDA Graph cut the GPU's wait between kernels from {here} ({per_node}), in this process"
    runs, eager, graph, contrast, _ = fresh
    # the per-node slope and where this eager gap lies against the fresh range (no cause named
    # unmeasured, review 2026-12-04l item 1) are C18's table note above (`fresh_process_note`)
    return (f"a CUDA Graph cut the GPU's wait between kernels from {here} in this process "
            f"({runs}: {eager} us to {graph} us, {contrast}x)")


def fresh_launch_range(gpu_name: str | None, record: Mapping | None = None) -> tuple[object, ...] | None:
    """('3 fresh processes' or '1 of 3 fresh processes (2 fits refused)', eager gap, graph gap,
    contrast, (eager gap's low, high)) as ranges ('5.87-5.93') from reproduce's C18 spread over
    the runs whose fit the rule accepted (`fresh_spread`), the eager gap's bounds also as numbers (what `launch_line`
    words 'inside / above / below' from), or None: no record, figures missing, or a record of
    another GPU than `gpu_name` (its range would say nothing of this one)."""
    if gpu_name is None:
        return None
    record = fresh_record(gpu_name, record)
    if record is None:
        return None
    decided, total, spread = fresh_spread(record)
    keys = ("eager gap, slope minus kernel (us)", "graph launch gap (us)", "eager gap / graph gap")
    if not all(k in spread for k in keys):
        return None

    def span(key: str, digits: int) -> str:
        low, high = f"{spread[key][0]:.{digits}f}", f"{spread[key][1]:.{digits}f}"
        return low if low == high else f"{low}-{high}"

    return (fresh_runs(decided, total), span(keys[0], 2), span(keys[1], 2), span(keys[2], 1), spread[keys[0]])


def chain_line(moved: Mapping[str, int], comparison: bench.Comparison, spread: Sequence[float],
               stated: str) -> str:
    """The fusion takeaway: fewer bytes paid when the spread (the per-round speed-ups' IQR) lies
    above 1, else why not.

    Review 2026-12-04l item 7: the CPU page said "'blocked (in cache)' moved 50% of the bytes at
    48% of the other's bandwidth" where eager ran at 25% and blocked at 12% of the copy
    ceiling: bandwidth there is only bytes over time, so the sentence was circular. Where
    every path sits under MEMORY_BOUND_SHARE of the copy ceiling, the line says neither is
    memory-bound, with the shares measured, and so fewer bytes could not set the pace."""
    slow, fast = list(comparison.variants)[0], list(comparison.variants)[-1]
    rates = {label: v.timing.gbps for label, v in comparison.variants.items()}
    share, stated = moved[fast] / moved[slow], brief(stated)
    if min(spread) > 1:
        return (f"Fusion pays in bytes: '{fast}' moved {share:.0%} of the chain's bytes "
                f"and ran at {stated} the speed of '{slow}'.")
    # 'in every round' is read from the rounds themselves, not from the IQR `spread` (review
    # 2026-12-05r2 item 3: the quartiles of five rounds can sit under 1 while one round does not)
    rounds = [1 / r for r in comparison[fast].round_ratios if r > 0]  # each round's speed-up
    slower = sum(r < 1 for r in rounds)
    if rounds and slower == len(rounds):
        # review 2026-12-06z 03-04 item 5: named by its statistic, beside the table's IQR
        outcome = f"slower than '{slow}' in every round (lowest-highest {min(rounds):.2f}-{max(rounds):.2f}x)"
    elif max(spread) < 1:  # the count only where the rounds were kept (an older record has none)
        counted = f" in {slower} of {len(rounds)} rounds" if rounds else ""
        outcome = f"slower than '{slow}'{counted} (IQR {min(spread):.2f}-{max(spread):.2f}x)"
    else:
        outcome = f"not reliably faster than '{slow}' (IQR {min(spread):.2f}-{max(spread):.2f}x)"
    shares = [comparison.variants[label].timing.pct_of_copy_ceiling for label in (slow, fast)]
    if all(p is not None for p in shares) and max(shares) < MEMORY_BOUND_SHARE:  # type: ignore[type-var]
        return (f"Fewer bytes pay only where memory sets the pace: neither path is memory-bound here "
                f"({shares[0]:.0f}% and {shares[1]:.0f}% of the copy ceiling); '{fast}', with "
                f"{share:.0%} of the bytes, was {outcome}.")
    return (f"Fewer bytes pay only at the same bandwidth: '{fast}' moved {share:.0%} of the bytes "
            f"at {rates[fast] / rates[slow]:.0%} of the other's bandwidth, so it was {outcome}.")


# Under this share of the copy ceiling (%) on every path, the chain's takeaway calls neither
# path memory-bound: bytes over time there is no bandwidth the path was limited by.
MEMORY_BOUND_SHARE = 50.0


# the host's pace at the chapter's start and end, kept in results/ (review 2026-12-05p 03-04 item 1c)
host_pace = clocks.host_pace
