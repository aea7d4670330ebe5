"""Recommendations the audit has measured: applied, checked, timed interleaved, kept if they help.

- "channels_last before the first conv": the model and its input converted once, against
  the model as given on an NCHW input. Its numerics are checked first (max |difference|
  within TOLERANCE of the largest output), the copies of both are counted by the copy
  detector, and both are timed in interleaved rounds (labkit.measure.bench.compare). It is
  kept only when its numerics pass and the per-round ratio's upper quartile is below 1.
  The clock: the harness's (bench.compare's device clock on a GPU, the CPU's clock on a CPU);
  when the audit's profile found the GPU idle past the host-bound threshold, that clock
  mostly times the host's launches, so the fix is judged by device-busy time per call from
  the profiler's kernel records instead (labkit.measure.kernel_records), in interleaved
  rounds, and the report names the clock it was judged by.
- "move the permute().contiguous()": a copy a module makes to reorder its input (a
  permute or transpose followed by contiguous(), or an op that copies a strided input) goes
  away when the tensor arrives already in the order it wants. The audit reports, module by
  module, the copies that the channels_last variant removed (bytes, deterministic) and
  inherits that variant's timing; copies no layout change removes are left for the learner
  to move by hand, said so, never guessed at.
- "convert before DDP": decided by strides alone (labkit ddp_contract): a correctness fix,
  not a speed-up, so it is not timed.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from labkit.audit import ddp_contract, module_layouts
from labkit.measure import bench

TOLERANCE = {"cpu": 1e-4, "cuda": 1e-2}  # relative to max |output|; cuda convs may use TF32


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

    @property
    def timed(self) -> bool:
        return self.ratio is not None


def _relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    scale = float(want.abs().max()) or 1.0
    return float((got.float() - want.float()).abs().max()) / scale


def has_conv(model: nn.Module) -> bool:
    """True when a 2-D convolution is part of the model (channels_last can matter)."""
    return any(isinstance(m, nn.Conv2d) for m in model.modules())


DEVICE_CALLS = 5  # calls per variant per round read from kernel records (host-bound runs)


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


def channels_last(model: nn.Module, example: torch.Tensor, rounds: int = 5,
                  rep_ms: float = 1000.0,
                  known: dict[str, list[module_layouts.ModuleRow]] | None = None,
                  host_bound: bool | None = None,
                  ) -> tuple[Recommendation, Recommendation | None]:
    """Time channels_last against NCHW; also the copies it moved away, module by module.

    known: module rows already traced for a format ({"contiguous": rows} or
    {"channels_last": rows}), so the audit does not trace the same pass twice.
    host_bound: the audit's profile found the GPU idle past the threshold; the fix is then
    judged by device-busy time from kernel records (see the module's note).
    """
    known = known or {}
    original = model
    variant = copy.deepcopy(model).to(memory_format=torch.channels_last)
    x_plain = example.contiguous()
    x_cl = example.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        want, got = original(x_plain), variant(x_cl)
    error = _relative_error(got, want)
    tolerance = TOLERANCE.get(example.device.type, 1e-4)
    before = known.get("contiguous") or module_layouts.trace(original, x_plain)
    after = known.get("channels_last") or module_layouts.trace(variant, x_cl)
    bytes_before = sum(r.copy_bytes for r in before)
    bytes_after = sum(r.copy_bytes for r in after)

    def run_original() -> object:
        with torch.no_grad():
            return original(x_plain)

    def run_variant() -> object:
        with torch.no_grad():
            return variant(x_cl)

    result = bench.compare({"NCHW as given": run_original, "channels_last": run_variant},
                           rounds=rounds, rep_ms=rep_ms, mode="hot", progress=False,
                           device=example.device)
    v, o = result["channels_last"], result["NCHW as given"]
    ratio, q25, q75 = v.ratio, v.ratio_q25, v.ratio_q75
    clock = ("CPU clock" if example.device.type == "cpu"
             else "the harness's device clock (CUDA events)")
    if host_bound and example.device.type == "cuda":
        from labkit.measure import kernel_records

        try:
            with torch.no_grad():
                ratios = device_ratios(run_original, run_variant, example.device, rounds)
            q25, ratio, q75 = (float(q) for q in np.percentile(ratios, [25, 50, 75]))
            clock = "device-busy time (kernel records): the run is host-bound"
        except kernel_records.RecordsUnavailable as why_not:
            clock += f" (host-bound, but kernel records unavailable: {why_not})"
    numerics_ok = error <= tolerance
    faster = q75 < 1.0
    kept = numerics_ok and faster
    if not numerics_ok:
        why = f"numerics off: max relative error {error:.2g} > {tolerance:g}"
    elif faster:
        why = (f"faster in the rounds: {ratio:.3f}x the time "
               f"(per-round IQR {q25:.3f}-{q75:.3f}; judged by {clock})")
    else:
        why = (f"not faster here: {ratio:.3f}x the time "
               f"(per-round IQR {q25:.3f}-{q75:.3f} reaches 1; judged by {clock})")
    timing = dict(ratio=ratio, ratio_q25=q25, ratio_q75=q75, clock=clock,
                  original_ms=o.timing.median_s * 1e3, original_iqr_ms=o.timing.iqr_s * 1e3,
                  variant_ms=v.timing.median_s * 1e3, variant_iqr_ms=v.timing.iqr_s * 1e3,
                  max_error=error)
    first = Recommendation("convert to channels_last before the first conv", kept, why,
                           copy_bytes=(bytes_before, bytes_after), **timing)
    removed = _removed_copies(before, after)
    if not removed:
        return first, None
    moved_kept = numerics_ok and faster
    moved = Recommendation(
        "move the permute().contiguous(): hand these modules channels_last", moved_kept,
        (f"removes {sum(b for _, b in removed)} B of copies; " + why),
        copy_bytes=(bytes_before, bytes_after),
        details=tuple(f"{name}: {nbytes} B copied on NCHW, 0 B on channels_last"
                      for name, nbytes in removed), **timing)
    return first, moved


def _removed_copies(before: list[module_layouts.ModuleRow],
                    after: list[module_layouts.ModuleRow]) -> list[tuple[str, int]]:
    later = {r.name: r.copy_bytes for r in after}
    return [(r.name, r.copy_bytes) for r in before
            if r.copy_bytes > 0 and later.get(r.name, r.copy_bytes) == 0]


def remaining_copies(rows: list[module_layouts.ModuleRow]) -> list[str]:
    """Copies no layout change removed: where a learner moves the copy by hand."""
    return [f"{r.name} ({r.kind}): {r.copy_bytes} B via {', '.join(r.copy_ops)}"
            for r in rows if r.copy_bytes > 0]


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



