"""Chapter 08's lesson of the steps that cut the GPU's work while the host set the pace: one
computed line (`host_paced`), the host's pace over the timings (`pace_range`) and a step kept on
device time as a lesson (`device_kept`).

A module of its own because both the ladder's table (`report.LadderTable`, which folds the line
beside the fresh runs' ranges) and the takeaways (`tables`) read it, and tables already reads
report: living in either, it tied the two in a circle.
"""

from __future__ import annotations

import numpy as np

from labkit.chapters.ch08_inference_ladder import explain, reproduce


def host_paced(rungs: list, by_device: list, fresh: dict | None) -> str | None:
    """The lesson of the steps that cut the GPU's work while the host set the pace, in one
    computed line: the steps whose device-time gain held over the fresh runs (within
    reproduce.HOLDS_WITHIN, a material gain) where their wall gain did not, each with its device
    range over the runs and this page, and the host's pace over those timings ('Device-time gains
    held in 3 of 3 fresh runs (TF32 2.18x, ..., Conv-BN folding 1.15-1.24x); the wall gains moved
    with the host (10-19 us a launch)'). Without a fresh record: the steps this run kept on
    device time (`device_kept`). None when there is nothing to say. Why: six near-identical
    sentences, about 250 words, said this once each (review 2026-12-05p 08 item 5)."""
    by_name = {r.name: r for r in rungs}
    steps = (fresh or {}).get("steps") or {}
    if not steps:
        return ("Kept on device time while the host bound it: "
                + "; ".join(device_kept(r, by_name.get(r.after)) for r in by_device) + ".") if by_device else None
    said, runs = [], 0
    for r in rungs[1:]:
        s = steps.get(r.name)
        if (r.error or s is None or r.name == reproduce.HOST_ONLY_STEP or r.device_gain is None
                or r.gain is None or not s.get("device") or reproduce.holds(s, r.gain)):
            continue
        low, high = s["device"]
        if low <= 1 + explain.MATERIAL or high / low - 1 > reproduce.HOLDS_WITHIN:
            continue   # its device gain did not hold either, or is no gain
        runs = max(runs, s["runs"])
        said.append(f"{r.name} {reproduce.spread(min(low, r.device_gain), max(high, r.device_gain))}")
    if not said:
        return None
    pace = pace_range(rungs, fresh)
    return (f"Device-time gains held in {runs} of {runs} fresh runs and here ({', '.join(said)}); "
            "the wall gains moved with the host"
            + (f" ({pace[0]:.0f}-{pace[1]:.0f} µs a launch)" if pace else "") + ".")


def pace_range(rungs: list, fresh: dict | None) -> tuple[float, float] | None:
    """The host's pace (µs per eager launch, the median of each timing's probes) over this
    run's timings and the fresh runs' (reproduce.fresh_runs' 'pace'); None without probes."""
    medians = [float(np.median(t["host_pace_us"])) for r in rungs for t in (r.timings or [])
               if t.get("host_pace_us")]
    found = (fresh or {}).get("pace")
    if found:
        medians += list(found)
    return (min(medians), max(medians)) if medians else None


def device_kept(rung: object, before: object | None) -> str:
    """A step kept on device time while the host bound it, as a lesson (review 2026-12-04l item
    6): both clocks, the kernels per batch it added, and where the profile shows BatchNorm in
    half precision leaving cuDNN (explain.half_batchnorm), what to do instead: 'fp16 weights
    1.84x device time, 0.92x wall, kernels 182 -> 282 (half BatchNorm left cuDNN: keep it
    float32, fold it or use autocast)'."""
    said = f"{rung.name} {rung.device_gain:.2f}x device time, {rung.gain:.2f}x wall"
    k0 = getattr(before, "kernels_per_batch", None)
    k1 = rung.kernels_per_batch
    if before is None or k0 is None or k1 is None or k1 <= 1.05 * k0:
        return said
    said += f", kernels {k0:.0f} -> {k1:.0f}"
    moved = explain.kernel_jump(before, rung) or explain.kernels_moved(before, rung)
    if explain.half_batchnorm(before, rung, moved):
        said += " (half BatchNorm left cuDNN: keep it float32, fold it or use autocast)"
    return said
