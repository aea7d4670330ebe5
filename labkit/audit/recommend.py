"""Recommendations the audit has measured: applied, checked, timed interleaved, kept if they help.

- "channels_last before the first conv": the model and its input converted once, against
  the model as given on an NCHW input. Its numerics are checked first (max |difference|
  within TOLERANCE of the largest output), the copies of both are counted by the copy
  detector, and both are timed in interleaved rounds (labkit.measure.bench.compare). It is
  kept only when (`rule()`) its numerics pass, the per-round ratio's upper quartile is below 1,
  its median saves at least MIN_GAIN (2%, chapter 08's line: the H200's ViT was kept at 0.998x
  before it); rounds whose ratios' IQR is over NOISY_IQR_FRACTION of the median are flagged
  noisy (the CPU's ViT: 0.84x over rounds from 0.64 to 0.92), and a noisy gain is kept only
  when its upper quartile also saves MIN_GAIN. `outcome` names which test decided it. The clock: the harness's (bench.compare's device clock on a GPU, the CPU's clock
  on a CPU), the time a batch takes ("wall" below); when the audit found the GPU idle past
  the host-bound threshold (unprofiled, chapter 08's rule: `kernels.bound`), that clock mostly times the host's launches, so the fix
  is judged by device-busy time per call from the profiler's kernel records instead
  (labkit.measure.kernel_records), in interleaved rounds, and the report names the clock it
  was judged by and shows the wall ratio beside it (`wall_faster`): a fix can free the GPU
  while the batch, paced by the host, takes as long as before.
- "move the permute().contiguous()": a copy a module makes to reorder its input (a
  permute or transpose followed by contiguous(), or an op that copies a strided input) goes
  away when the tensor arrives already in the order it wants. The audit reports, module by
  module, the copies that the channels_last variant removed (bytes, deterministic); it is the
  same variant as the first recommendation, so it shows no timing of its own and follows that
  one's decision (`timing_of`). Copies no layout change removes are named for the learner to
  move by hand only when the profile puts copy and layout work above MOVE_SHARE of the time
  (`remaining_copies`): below it, moving them gains nothing measurable.
- "keep BatchNorm float32": a float16 audit's model was cast whole (`model.to(float16)`), so
  every BatchNorm ran all-half, which chapter 08's fp16 rung no longer does (on a GPU: ATen's
  own kernels, three a layer, where cuDNN takes a half input with float32 weights in one). Where
  the audited model holds half BatchNorms, the same model with them float32 (the activations
  stay half) is checked and timed against it by the same `measured` and `rule()` as
  channels_last, device-busy time included when host-bound. On a GPU the variant's kernels are
  also counted in one profiled pass (`kernels.launches`) beside the audited model's
  (`launches`): where the run is host-bound, the launches are the host's side of the fix, which
  the device's clock that judges it does not see.
- "convert before DDP": decided by strides alone (labkit ddp_contract): a correctness fix,
  not a speed-up, so it is not timed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from labkit.audit import ddp_contract, kernels, module_layouts
from labkit.audit.module_layouts import human_bytes
from labkit.measure import bench
from labkit.measure.timing import NOISY_IQR_FRACTION

TOLERANCE = {"cpu": 1e-4, "cuda": 1e-2}  # relative to max |output|; cuda convs may use TF32
# In reduced precision two layouts' kernels round differently by about the format's own step
# (float16 ~1e-3, bfloat16 ~8e-3 relative), far under a layout mix-up's error (the output's size).
REDUCED_TOLERANCE = {torch.float16: 1e-2, torch.bfloat16: 5e-2}
# A fix must save at least this share of the time to be kept: chapter 08's keep rule's line
# (its keep.MIN_GAIN), under which a step says nothing about where the time went.
MIN_GAIN = 0.02
# What bench.compare's GPU clock times (review 2026-12-05t 08-09-99 item 9): CUDA events bracket
# the stream, the gaps where the GPU idles waiting for the host included, so it is the batch's
# time on the GPU's stream, not device-busy time (the kernels' own time, from kernel records).
STREAM_CLOCK = "the stream's time per batch (CUDA events: idle gaps included)"
# the name records made before 2026-12-05 gave that clock; `clock_name` reads it as STREAM_CLOCK
EARLIER_STREAM_CLOCK = "the harness's device clock (CUDA events)"
BUSY_CLOCK = "device-busy time (kernel records)"


def clock_name(label: str) -> str:
    """A recorded clock's label as the audit names it now (the stream's time, never 'device
    clock', for CUDA events)."""
    return label.replace(EARLIER_STREAM_CLOCK, STREAM_CLOCK)
# Copy and layout work above this share of the profiled time: copies left are worth moving by
# hand; below it (the H200's ViT: 0.1% of GPU time) the audit names them and leaves them.
MOVE_SHARE = 0.05

KEPT, NOT_FASTER, NOISY, NUMERICS_OFF = "kept", "no measured gain", "too noisy to call", "numerics off"
# the original's output is all zeros (torchvision's ViT zero-initialises its head): every variant
# of its shape agrees with it, so its numerics were not checked and the fix is not kept
# (review 2026-12-03g item 5: "max |error| 0 against outputs up to 0" passed as checked)
UNCHECKABLE = "numerics not checkable"
# a measured loss: the whole per-round IQR of variant / original time above 1 (review 2026-12-03e
# item 3: the CPU's ResNet-50 at 1.48x, IQR 1.27-1.51, was reported as "no measured gain")
SLOWER = "slower"
# Rounds still noisy after one re-time, or fewer than MIN_ROUNDS: no decision, never kept (review
# 2026-12-05u item 2: on a 2-core CPU, 2 rounds with one disturbed read "KEPT 0.64x" where four
# quiet runs read 1.17-1.24x slower). NOISY stays for records made before.
NOT_DECIDABLE = "not decidable"
MIN_ROUNDS = 3   # rounds a fix is timed in before it can be kept (a quartile of 2 is interpolated)


def rule() -> str:
    """The keep rule in words, for the report and the chapter to print."""
    return (f"kept only when the numerics pass and, over at least {MIN_ROUNDS} interleaved rounds, the "
            f"per-round ratio's median saves {100 * MIN_GAIN:.0f}% (at most {1 - MIN_GAIN:.2f}x) and its "
            f"upper quartile is below 1; rounds still noisy when re-timed (IQR over "
            f"{100 * NOISY_IQR_FRACTION:.0f}% of the median) decide nothing")


def noisy(ratio: float, q25: float, q75: float) -> bool:
    """The rounds disagree: their ratios' IQR is over NOISY_IQR_FRACTION of the median (the
    harness's noisy line, labkit.measure.timing)."""
    return ratio > 0 and (q75 - q25) / ratio > NOISY_IQR_FRACTION


def noisy_note(ratio: float | None, q25: float | None, q75: float | None) -> str:
    """', noisy rounds (IQR 33% of the median)' where `noisy`, else '': said beside a wall
    ratio shown next to the deciding clock (review 2026-12-04j item 10: the H200's fp16 wall
    0.63x with an IQR 0.42-0.63 read 'faster', unflagged)."""
    if ratio is None or q25 is None or q75 is None or not noisy(ratio, q25, q75):
        return ""
    return f", noisy rounds (IQR {100 * (q75 - q25) / ratio:.0f}% of the median)"


def decide(ratio: float, q25: float, q75: float, numerics_ok: bool = True,
           checkable: bool = True, rounds: int | None = None, loose: bool = False) -> str:
    """Which test of `rule()` decides a ratio (variant / original time, per-round quartiles):
    UNCHECKABLE (the original's output is all zeros: nothing to check against), KEPT,
    NUMERICS_OFF, SLOWER (its whole IQR above 1: a measured loss, however noisy), NOT_FASTER,
    or NOT_DECIDABLE: noisy rounds (after `measured`'s one re-time), or fewer than MIN_ROUNDS
    rounds (rounds, where given), whatever the median says (review 2026-12-05u item 2).

    loose: the batch's own time shown beside a deciding clock (`Recommendation.wall_outcome`),
    not a keep decision: a noisy gain whose upper quartile saves MIN_GAIN reads faster there
    (NOISY under it otherwise), as before."""
    if not checkable:
        return UNCHECKABLE
    if not numerics_ok:
        return NUMERICS_OFF
    if q25 > 1.0:
        return SLOWER
    line = 1.0 - MIN_GAIN + 1e-12
    if loose:
        if not (q75 < 1.0 and ratio <= line):
            return NOT_FASTER
        return NOISY if noisy(ratio, q25, q75) and q75 > line else KEPT
    if noisy(ratio, q25, q75) or (rounds is not None and rounds < MIN_ROUNDS):
        return NOT_DECIDABLE
    if not (q75 < 1.0 and ratio <= line):
        return NOT_FASTER
    return KEPT


def not_faster_why(ratio: float, q75: float) -> str:
    """What kept a ratio from a measured gain, from its own numbers: its median saves under
    MIN_GAIN, or its upper quartile reaches 1 (review 2026-12-05u item 2: 'no measured gain of
    2% here: 0.884x' described an 11.6% median gain)."""
    if ratio > 1.0 - MIN_GAIN + 1e-12:
        return f"the median {ratio:.3f}x saves under {100 * MIN_GAIN:.0f}%"
    return f"the median {ratio:.3f}x, but the upper quartile {q75:.3f}x reaches 1: not steady"


@dataclass(frozen=True)
class Recommendation:
    """One fix: what it is, what was measured, and whether the audit keeps it."""

    title: str
    kept: bool
    why: str
    ratio: float | None = None  # variant / original time: below 1 is faster
    ratio_q25: float | None = None
    ratio_q75: float | None = None
    original_ms: float | None = None
    original_iqr_ms: float | None = None
    variant_ms: float | None = None
    variant_iqr_ms: float | None = None
    max_error: float | None = None
    copy_bytes: tuple[int, int] | None = None  # (original, variant)
    details: tuple[str, ...] = field(default=())
    clock: str = ""  # what the ratio was timed with ("" when not timed)
    outcome: str = ""  # which test of rule() decided it (KEPT, SLOWER, NOT_FASTER, NOISY, NUMERICS_OFF)
    wall_ratio: float | None = None  # the harness's clock (the batch's time), also when judged
    wall_q25: float | None = None    # by device-busy time: shown beside it
    wall_q75: float | None = None
    wall_clock: str = ""
    output_scale: float | None = None  # max |output| of the original: what max_error is relative to
    timing_of: str = ""  # the recommendation whose timing decides this one (the same variant)
    launches: tuple[int, int] | None = None  # kernels a batch (original, variant), one profiled pass each
    # device-busy time (kernel records), per-round ratio and quartiles, timed beside the stream's
    # clock where that clock judged a GPU fix and `measured` was asked for both (busy_too)
    busy_ratio: float | None = None
    busy_q25: float | None = None
    busy_q75: float | None = None
    busy_unavailable: str = ""  # why device-busy time was asked for and not read (kernel records lost)
    # the model's 2-D convolutions by name, where channels_last was timed on a model with
    # ONE_CONV or fewer: its whole gain is theirs (review 2026-12-05u 08-09-99 item 8: ViT's
    # 0.97x on a CPU is its patch embedding's one convolution)
    convolutions: tuple[str, ...] = ()

    @property
    def timed(self) -> bool:
        return self.ratio is not None

    @property
    def wall_outcome(self) -> str:
        """The batch's own time under `rule()`: 'faster', 'slower' or 'no measured gain'."""
        if self.wall_ratio is None:
            return ""
        said = decide(self.wall_ratio, self.wall_q25, self.wall_q75, loose=True)
        word = "faster" if said == KEPT and self.outcome not in (NUMERICS_OFF, UNCHECKABLE) else (
            SLOWER if said == SLOWER else NOT_FASTER)
        return word + noisy_note(self.wall_ratio, self.wall_q25, self.wall_q75)

    @property
    def wall_faster(self) -> bool:
        """The batch itself measurably faster: `rule()` applied to the wall ratio."""
        return (self.wall_ratio is not None and self.outcome not in (NUMERICS_OFF, UNCHECKABLE)
                and decide(self.wall_ratio, self.wall_q25, self.wall_q75, loose=True) == KEPT)


def _relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    scale = float(want.abs().max()) or 1.0
    return float((got.float() - want.float()).abs().max()) / scale


def has_conv(model: nn.Module) -> bool:
    """True when a 2-D convolution is part of the model (channels_last can matter)."""
    return any(isinstance(m, nn.Conv2d) for m in model.modules())


DEVICE_CALLS = 5  # calls per variant per round read from kernel records (host-bound runs)
ONE_CONV = 1      # a model with this many 2-D convolutions or fewer: the fix names them


def device_ratios(original: object, variant: object, device: torch.device,
                  rounds: int) -> list[float]:
    """Per-round ratios variant / original of device-busy time per call, from kernel records.

    Each round reads DEVICE_CALLS calls of each variant, interleaved round by round; a round's
    ratio is of the two medians. Raises kernel_records.RecordsUnavailable when the records do
    not split into calls.
    """
    from labkit.measure import kernel_records

    def calls(fn: object) -> list[float]:
        def block() -> None:
            for _ in range(DEVICE_CALLS):
                torch.cuda._sleep(kernel_records.SPIN_MARK_CYCLES)
                fn()
        return kernel_records.per_call_seconds(block, DEVICE_CALLS, device, flush_records=0)

    ratios = []
    for _ in range(max(1, rounds)):
        base, new = calls(original), calls(variant)
        ratios.append(float(np.median(new) / np.median(base)))
    return ratios


def measured(base: tuple[str, object], fix: tuple[str, object], want: torch.Tensor,
             got: torch.Tensor, example: torch.Tensor, rounds: int, rep_ms: float,
             host_bound: bool | None, busy_too: bool = False) -> tuple[dict, str]:
    """One fix's numerics, timing and decision by `rule()`: (the Recommendation's timing fields,
    its why). base and fix are (label, a call running one batch); want and got their outputs.

    Numerics: got within the tolerance of the device and the example's precision of want,
    relative to want's largest value. Timing: both interleaved in rounds (bench.compare); where
    the run is host-bound on a GPU, judged by device-busy time from kernel records instead, the
    harness's ratio kept beside it (see the module's note). busy_too: where the stream's clock
    judges a GPU fix (not host-bound), device-busy time is also read from kernel records, in as
    many interleaved rounds, and shown beside it (it does not decide)."""
    (base_label, run_original), (fix_label, run_variant) = base, fix
    rounds = max(rounds, MIN_ROUNDS)  # every clock below: the stream's, and device-busy time
    error = _relative_error(got, want)
    tolerance = max(TOLERANCE.get(example.device.type, 1e-4),
                    REDUCED_TOLERANCE.get(example.dtype, 0.0))
    def timed() -> object:
        return bench.compare({base_label: run_original, fix_label: run_variant},
                             rounds=rounds, rep_ms=rep_ms, mode="hot", progress=False,
                             device=example.device)
    result = timed()
    # noisy rounds are re-timed once; still noisy, the fix is not decidable (`decide`). Where the
    # run is host-bound on a GPU the device-busy clock below decides, not these rounds.
    retimed = noisy(result[fix_label].ratio, result[fix_label].ratio_q25, result[fix_label].ratio_q75) \
        and not (host_bound and example.device.type == "cuda")
    if retimed:
        result = timed()
    v, o = result[fix_label], result[base_label]
    ratio, q25, q75 = v.ratio, v.ratio_q25, v.ratio_q75
    clock = "CPU clock" if example.device.type == "cpu" else STREAM_CLOCK
    wall = dict(wall_ratio=ratio, wall_q25=q25, wall_q75=q75, wall_clock=clock)
    if host_bound and example.device.type == "cuda":
        from labkit.measure import kernel_records

        try:
            with torch.no_grad():
                ratios = device_ratios(run_original, run_variant, example.device, rounds)
            q25, ratio, q75 = (float(q) for q in np.percentile(ratios, [25, 50, 75]))
            clock = f"{BUSY_CLOCK}: the run is host-bound"
        except kernel_records.RecordsUnavailable as why_not:
            clock += f" (host-bound, but kernel records unavailable: {why_not})"
    busy = {}
    if busy_too and not host_bound and example.device.type == "cuda":
        from labkit.measure import kernel_records

        try:
            with torch.no_grad():
                busy_ratios = device_ratios(run_original, run_variant, example.device, rounds)
            b25, b50, b75 = (float(q) for q in np.percentile(busy_ratios, [25, 50, 75]))
            busy = dict(busy_q25=b25, busy_ratio=b50, busy_q75=b75)
        except kernel_records.RecordsUnavailable as why_not:  # said, not read as an old record
            busy = {"busy_unavailable": str(why_not).splitlines()[0][:160] if str(why_not) else "no reason given"}
    numerics_ok = error <= tolerance
    checkable = float(want.abs().max()) > 0
    outcome = decide(ratio, q25, q75, numerics_ok, checkable, rounds=getattr(result, "rounds", None))
    said = f"{ratio:.3f}x the time (per-round IQR {q25:.3f}-{q75:.3f}; judged by {clock})"
    if noisy(ratio, q25, q75):
        said += (f"; noisy rounds (IQR {100 * (q75 - q25) / ratio:.0f}% of the median, over "
                     f"{100 * NOISY_IQR_FRACTION:.0f}%" + (", re-timed once" if retimed else "") + ")")
    # the decision belongs to this input (review 2026-12-05u item 2: the command at 64 px and
    # the chapter at 112 px decided channels_last oppositely on one CPU, neither said so)
    said += f"; decided for input {tuple(example.shape)}"
    why = {UNCHECKABLE: f"{UNCHECKABLE}: the model's output is all zeros on this input, so any "
                        f"variant agrees with it (a zero-initialised last layer?); not kept: {said}",
           NUMERICS_OFF: f"numerics off: max relative error {error:.2g} > {tolerance:g}",
           KEPT: f"faster in the rounds: {said}",
           NOISY: f"too noisy to call: {said}: its upper quartile saves under "
                  f"{100 * MIN_GAIN:.0f}% (rerun on a quieter machine)",
           NOT_DECIDABLE: (f"not decidable (noisy rounds): {said} (rerun on a quieter machine)"
                           if noisy(ratio, q25, q75) else
                           f"not decidable ({getattr(result, 'rounds', rounds)} rounds; the rule needs "
                           f"{MIN_ROUNDS}): {said}"),
           SLOWER: f"slower: {said}",
           NOT_FASTER: f"no measured gain of {100 * MIN_GAIN:.0f}% here ({not_faster_why(ratio, q75)}): "
                       f"{said}"}[outcome]
    if wall["wall_clock"] != clock:
        why += (f"; the batch's own time (the harness's clock) {wall['wall_ratio']:.3f}x "
                f"(IQR {wall['wall_q25']:.3f}-{wall['wall_q75']:.3f})")
    if busy.get("busy_ratio") is not None:
        why += (f"; {BUSY_CLOCK} beside it {busy['busy_ratio']:.3f}x "
                f"(IQR {busy['busy_q25']:.3f}-{busy['busy_q75']:.3f}), not deciding")
    timing = dict(ratio=ratio, ratio_q25=q25, ratio_q75=q75, clock=clock,
                  original_ms=o.timing.median_s * 1e3, original_iqr_ms=o.timing.iqr_s * 1e3,
                  variant_ms=v.timing.median_s * 1e3, variant_iqr_ms=v.timing.iqr_s * 1e3,
                  max_error=error, outcome=outcome, output_scale=float(want.abs().max()), **wall, **busy)
    return timing, why


def channels_last(model: nn.Module, example: torch.Tensor, rounds: int = 5,
                  rep_ms: float = 1000.0,
                  known: dict[str, list[module_layouts.ModuleRow]] | None = None,
                  host_bound: bool | None = None, busy_too: bool = False,
                  ) -> tuple[Recommendation, Recommendation | None]:
    """Time channels_last against NCHW; also the copies it moved away, module by module.

    known: module rows already traced for a format ({"contiguous": rows} or
    {"channels_last": rows}), so the audit does not trace the same pass twice.
    host_bound: the audit found the GPU idle past the threshold (unprofiled); the fix is then
    judged by device-busy time from kernel records (see the module's note).
    """
    known = known or {}
    original = model
    variant = copy.deepcopy(model).to(memory_format=torch.channels_last)
    x_plain = example.contiguous()
    x_cl = example.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        want, got = original(x_plain), variant(x_cl)
    before = known.get("contiguous") or module_layouts.trace(original, x_plain)
    after = known.get("channels_last") or module_layouts.trace(variant, x_cl)
    bytes_before = sum(r.copy_bytes for r in before)
    bytes_after = sum(r.copy_bytes for r in after)

    run_original, run_variant = _inference(original, x_plain), _inference(variant, x_cl)
    timing, why = measured(("NCHW as given", run_original), ("channels_last", run_variant),
                           want, got, example, rounds, rep_ms, host_bound, busy_too)
    kept = timing["outcome"] == KEPT
    outcome = timing["outcome"]
    convs = tuple(n or "(the model)" for n, m in model.named_modules() if isinstance(m, nn.Conv2d))
    first = Recommendation("convert to channels_last before the first conv", kept, why,
                           copy_bytes=(bytes_before, bytes_after),
                           convolutions=convs if len(convs) <= ONE_CONV else (), **timing)
    removed = _removed_copies(before, after)
    if not removed:
        return first, None
    moved = Recommendation(
        "move the permute().contiguous(): hand these modules channels_last", kept,
        (f"removes {human_bytes(sum(b for _, b in removed))} of copies; the same variant as "
         f"'{first.title}' (its timing, above, decides this one: {outcome})"),
        copy_bytes=(bytes_before, bytes_after), outcome=outcome, timing_of=first.title,
        details=tuple(f"{name}: {human_bytes(nbytes)} copied on NCHW, 0 B on channels_last"
                      for name, nbytes in removed))
    return first, moved


# chapter 08's fp16 rung keeps BatchNorm float32 (its ladder.batchnorm_float32): an audit cannot
# import a chapter (the import contract), so the same few lines live here, and a test holds the two
# to the same result
BATCHNORM_SOURCE = "chapter 08's ladder.batchnorm_float32"


def half_batchnorms(model: nn.Module) -> list[str]:
    """The names of the model's BatchNorm modules holding float16 weights or statistics: what
    `model.to(torch.float16)` makes of every BatchNorm, run then all in half (on a GPU, ATen's
    own kernels instead of cuDNN's one: chapter 08)."""
    return [name for name, m in model.named_modules()
            if isinstance(m, nn.modules.batchnorm._BatchNorm)
            and any(t.dtype == torch.float16 for t in (*m.parameters(recurse=False),
                                                       *m.buffers(recurse=False)))]


def batchnorm_to_float32(model: nn.Module) -> nn.Module:
    """Each BatchNorm's weights and statistics back in float32, in place; the activations stay
    float16 (the BatchNorm's output keeps its input's dtype)."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.float()
    return model


def batchnorm_float32(model: nn.Module, example: torch.Tensor, rounds: int = 5,
                      rep_ms: float = 1000.0, host_bound: bool | None = None,
                      launches: int | None = None, busy_too: bool = False) -> Recommendation | None:
    """Time the float16 model with its BatchNorms float32 against the model as audited (every
    BatchNorm half), on the audited input and layout, by `measured` (numerics within float16's
    tolerance; device-busy time when host-bound); None where no BatchNorm is half.

    launches: the audited model's kernels a batch (its profiled pass, `KernelReport.launches`);
    where given, the audited model and the variant are each counted again in one profiled pass
    (`kernels.launches`, on a GPU), back to back, and both kept in `launches` and said in the
    details: two adjacent profiles, not the audit's first one against one a dozen profiling
    sessions later, where a CUPTI losing head records per session (pytorch/pytorch#192021)
    would skew the difference (review 2026-12-05o2 item 1); `launches` stands where the
    re-count gives none."""
    names = half_batchnorms(model)
    if not names:
        return None
    variant = batchnorm_to_float32(copy.deepcopy(model))

    run_original, run_variant = _inference(model, example), _inference(variant, example)
    want, got = run_original(), run_variant()
    timing, why = measured(("all-half BatchNorm", run_original), ("BatchNorm float32", run_variant),
                           want, got, example, rounds, rep_ms, host_bound, busy_too)
    listed = ", ".join(names[:3]) + (f", ... ({len(names)} in all)" if len(names) > 3 else "")
    original = None if launches is None else kernels.launches(model, example)
    counted = None if launches is None else kernels.launches(variant, example)
    pair = None if counted is None else (int(launches if original is None else original), counted)
    # the title names the fix, the source the details (review 2026-12-05o 08-09-99 item 5)
    return Recommendation(
        f"keep BatchNorm float32 ({len(names)} of them half)",
        timing["outcome"] == KEPT, why,
        details=(f"half BatchNorm: {listed}; the variant keeps their weights and statistics "
                 f"float32, its activations float16 (output {got.dtype}), as {BATCHNORM_SOURCE}",
                 *(() if pair is None else (f"{launches_text(pair)} (one profiled pass each)",))),
        launches=pair, **timing)


def launches_text(pair: tuple[int, int] | list[int] | None) -> str:
    """'launches a batch 282 -> 176' ('' without the pair)."""
    return "" if not pair else f"launches a batch {pair[0]} -> {pair[1]}"


def _inference(module: nn.Module, x: torch.Tensor) -> Callable[[], object]:
    """module(x) without autograd, as a no-argument call for `measured` to time."""
    def run() -> object:
        with torch.no_grad():
            return module(x)
    return run


def _removed_copies(before: list[module_layouts.ModuleRow],
                    after: list[module_layouts.ModuleRow]) -> list[tuple[str, int]]:
    later = {r.name: r.copy_bytes for r in after}
    return [(r.name, r.copy_bytes) for r in before
            if r.copy_bytes > 0 and later.get(r.name, r.copy_bytes) == 0]


def remaining_copies(rows: list[module_layouts.ModuleRow], share: float | None = None) -> str:
    """A note on the copies left in the audited format ('' when there are none).

    share: copy and layout work's share of the profiled time (None: not profiled). Above
    MOVE_SHARE, or unmeasured, the copies in the user's own modules are named as worth moving by
    hand; below it they are named and left alone, with the share and the line that decided it.
    Copies charged to torch's own modules (nn.MultiheadAttention's) are named apart as not
    movable from the user's code, whatever the share: the CPU page advised moving by hand a clone
    inside a ViT's MultiheadAttention (review 2026-12-04k item 9).
    """
    own = [r for r in rows if r.copy_bytes > 0 and not r.inside_torch]
    inside = [r for r in rows if r.copy_bytes > 0 and r.inside_torch]
    if not own and not inside:
        return ""
    said = []
    if own:
        named = _named(own)
        if share is None:
            said.append(f"copies left in the audited format (not profiled: move them by hand if they cost time): {named}")
        elif share > MOVE_SHARE:
            said.append(f"copies left in the audited format, worth moving by hand (copy and layout work "
                        f"{100 * share:.1f}% of the time, over {100 * MOVE_SHARE:.0f}%): {named}")
        else:
            said.append(f"copies left in the audited format, not worth moving (copy and layout work "
                        f"{100 * share:.1f}% of the time, under {100 * MOVE_SHARE:.0f}%): {named}")
    if inside:
        kinds = ", ".join(dict.fromkeys(r.kind for r in inside))
        cost = "" if share is None else f" (copy and layout work {100 * share:.1f}% of the time)"
        said.append(f"{'Copies' if said else 'copies'} inside torch's {kinds}{cost}, not movable "
                    f"from your code: {_named(inside)}")
    return ". ".join(said)


def _named(rows: list[module_layouts.ModuleRow]) -> str:
    """The first five copying modules, each with its bytes and ops, and how many more."""
    left = [f"{r.name} ({r.kind}): {human_bytes(r.copy_bytes)} via {', '.join(r.copy_ops)}" for r in rows]
    return "; ".join(left[:5]) + (f"; ... and {len(left) - 5} more" if len(left) > 5 else "")


def before_ddp(params: list[ddp_contract.ParameterRow]) -> Recommendation:
    """Convert before wrapping in DDP: needed when any parameter is drift-prone."""
    drift = [p for p in params if p.status == ddp_contract.DRIFT]
    if not drift:
        return Recommendation("convert the memory format before wrapping in DDP", False,
                              "no parameter's strides change where it matters: nothing to fix")
    return Recommendation(
        "convert the memory format before wrapping in DDP", True,
        f"{len(drift)} parameters change strides with channels_last (measured from their "
        "shapes; a correctness fix, not timed)",
        details=tuple(f"{p.name} {p.shape}: {p.contiguous_stride} -> {p.channels_last_stride}"
                      for p in drift[:5]) + ((f"... and {len(drift) - 5} more",)
                                             if len(drift) > 5 else ()))



