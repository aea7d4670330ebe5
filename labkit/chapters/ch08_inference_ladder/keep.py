"""The keep rule: a step is kept only when it is right and its gain is measured, not hoped for.

Two clocks, both from unprofiled or kernel-record timing (never from one profile that also
traces the host, which slows the host and moves the idle share from run to run):

- *wall*: the step's gain in images/s over the rung it was built on, the median of the
  per-round ratios of the interleaved comparison, with their interquartile range;
- *device time*: the step's gain in device-busy time per image, from the profiler's kernel
  records of several batches of each rung (labkit.measure.kernel_records), with the range
  those batches give.

Whether a rung is host-bound is read from the same unprofiled numbers: idle = 1 - device
time / wall time per batch. When the GPU idles more than IDLE_LIMIT of the wall time, the
host sets the pace: a step that only shrinks the GPU's work (fp16) hardly moves the wall
clock there, and shows in device time first; a step that only shrinks the host's work
(less Python per module) shows on the wall clock and not in device time. So:

1. a rung outside the numerics gate is never kept, whatever its speed;
2. device-bound (idle at most IDLE_LIMIT before and after the step): judged by wall time,
   kept only when the wall gain is measured (`gained`: its whole interquartile range above
   1 and its median at least 1 + MIN_GAIN); the reason still says which clock carried it;
3. host-bound: kept when either clock's gain is measured; judged_by names that
   clock (wall first: it is what the rung delivers now). When the other clock's whole range
   lies below 1 the step is a trade, kept and said so in its reason: a wall gain that costs
   device time shows as a loss once later rungs remove the host bound.

A range that contains 1 is no measured gain: the step is not kept, and says so. Nor is a
gain whose range lies above 1 but whose median is under 1 + MIN_GAIN (2%, the same line
explain.py's readings call "no change"): the H200's cudnn.benchmark gained 1.0006x (1.0000 to
1.0018) in one of three reproduce runs, and a range that tight above 1 kept it there and not
in the other two, so the runs reported 6, 7 and 6 steps kept (review 2026-12-03d item 2).

Any step can be unstable, and the next step may be built on it, so `unstable` flags every
decided step, kept or not (review 2026-12-03e item 4; its own spread is printed with the
decision, its base's move decides as below): its own images/s spread in its
step's rounds (IQR) over UNSTABLE_IQR of the median (the harness's noisy flag), or its base,
re-timed in this step's rounds, outside the base's own interquartile range from its step AND
more than BASE_MOVE from its median. The IQR alone is too strict on a device-bound rung: the
H200's TF32 base spanned 6,715-6,716 images/s (0.015%), so a re-time 0.07% away flagged it,
and 7 of 8 kept steps were flagged; BASE_MOVE keeps the flag for a base that really moved (the
host-bound fp16 rung timed at 7,468 images/s in its own step and 10,736 in the next one's).

A base that moved is more than a flag: the step's gain is a ratio over it, so a base timed
slow inflates the gain (review 2026-12-03e item 1: on the H200, Conv-BN folding's base, fp16
weights, ran 12,985 images/s in its own step and 6,636 in folding's, and folding was kept on
1.68x; over three reproduce runs its gain followed the base, 1.62x, 1.70x and 1.03x). So the
ladder re-times such a step, the two rungs alone, up to RETIMES more times while its budget
lasts, and decides on the first timing whose base held (`base_moved` says ''). When none
held, `over_moved_base`: the step is decided only when every timing gives the same decision
read over the base as re-timed and over the base's own step (a batch step 2.2x over every
timing is a gain whichever way the base ran); when the readings differ it is not decidable,
not kept, both gains printed, and the climb goes on from the base; the ladder tries such a
step once more after the last rung at the baselines' batch, by this same rule
(ladder.Ladder.retry: one refused step made every later rung host-bound, review 2026-12-05p 08
item 1).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass

from labkit.measure.device_time import HOST_BOUND_IDLE_SHARE
from labkit.measure.timing import NOISY_IQR_FRACTION

# the GPU idles more than this share of the wall time: the host bound the rung (the course's
# one host-bound threshold, labkit.measure.device_time's)
IDLE_LIMIT = HOST_BOUND_IDLE_SHARE
# a rung's images/s IQR over this share of its median: unstable (labkit.measure.timing's noisy flag)
UNSTABLE_IQR = NOISY_IQR_FRACTION
# a base re-timed outside its IQR is flagged only when it also moved more than this share of
# its median: below it the move is within what the course calls the same speed (explain.py's
# MATERIAL), whatever a tight IQR says
BASE_MOVE = 0.02
# A gain is measured only when its range lies above 1 AND its median is at least 1 + MIN_GAIN:
# below 2% a step says nothing about where the time went (explain.MATERIAL is this number)
MIN_GAIN = 0.02
# a step whose base moved is re-timed (the two rungs alone) at most this many more times
RETIMES = 2
# the judged_by of a step whose base never held: its gain says nothing about the step
NOT_DECIDABLE = "not decidable"
# When `over_moved_base` began to read a step over its base's own step with each timing's IQR
# (981ef6e; review 2026-12-05t 08 item 1): a recorded step decided over a moved base from
# timings without 'iqr_share' was decided by the reading before it (`earlier_reading`), which a
# record cannot be re-judged by (review 2026-12-05u item 3).
OVER_OWN_STEP_SINCE = "2026-12-05 18:43 UTC"
OVER_OWN_STEP_COMMIT = "981ef6e"


@dataclass(frozen=True)
class Decision:
    """Whether a step is kept, on which clock it was judged, and why."""

    kept: bool
    judged_by: str   # "wall", "device time", or "numerics"
    gain: float      # the gain on the judging clock
    why: str


def _range(spread: tuple[float, float] | None) -> str:
    return "" if spread is None else f" ({spread[0]:.2f} to {spread[1]:.2f})"


def above(spread: tuple[float, float] | None) -> bool:
    """The whole interval lies above 1 (with gained(), a measured gain)."""
    return spread is not None and spread[0] > 1.0


def gained(gain: float | None, spread: tuple[float, float] | None) -> bool:
    """A measured gain: the whole interval above 1 and the median at least 1 + MIN_GAIN."""
    return gain is not None and above(spread) and gain >= 1.0 + MIN_GAIN - 1e-12


def rule() -> str:
    """The keep rule's test, in words, for the chapter to print beside the gate."""
    return f"kept: its gain's range above 1 and median at least {1 + MIN_GAIN:.2f}x"


def below(spread: tuple[float, float] | None) -> bool:
    """The whole interval lies below 1: a measured loss."""
    return spread is not None and spread[1] < 1.0


def _idles(idle_before: float | None, idle_after: float | None) -> str:
    """The GPU's idle before and after the step, as the keep rule read them."""
    said = " -> ".join(f"{100 * i:.0f}%" for i in (idle_before, idle_after) if i is not None)
    return f"GPU idle {said}"


def carried(wall_gain: float, device_gain: float | None) -> str:
    """Which clock carried a gain judged on the wall: the wall gain over the device-time gain
    is the host's share (CUDA Graphs on the H200: 1.22x wall over 1.01x device time, a gain
    the host made although the GPU idled under the host-bound line). '' with no device clock."""
    if device_gain is None or device_gain <= 0:
        return ""
    host = wall_gain / device_gain
    if host > 1 + MIN_GAIN:
        return f"; device time {device_gain:.2f}x: the rest ({host:.2f}x) came off the host"
    if host < 1 - MIN_GAIN:
        return (f"; device time {device_gain:.2f}x: the wall took {host:.2f} of it (the host "
                "held the rest back)")
    return f"; device time {device_gain:.2f}x: the wall followed it"


def decide(gate_passed: bool, gate_why: str, wall_gain: float, wall_spread: tuple[float, float],
           device_gain: float | None = None, device_spread: tuple[float, float] | None = None,
           idle_before: float | None = None, idle_after: float | None = None) -> Decision:
    """Judge one step (a rung against the rung it was built on); see the module's rule.

    idle_before / idle_after: 1 - device time / wall time per batch of each rung (None on a
    CPU, where there is no device clock). The reason names both idles and, for a step judged
    on the wall with a device clock, which clock carried the gain (`carried`): a label read
    from the same comparison as the chapter's explanation of the step, never only a threshold.
    """
    if wall_spread[0] > wall_spread[1]:
        raise ValueError(f"the wall spread must be (low, high), got {wall_spread}")
    if not gate_passed:
        return Decision(False, "numerics", wall_gain, f"refused by the numerics gate: {gate_why}")
    wall = f"{wall_gain:.2f}x wall{_range(wall_spread)}"
    idles = [i for i in (idle_before, idle_after) if i is not None]
    host_bound = bool(idles) and max(idles) > IDLE_LIMIT and device_gain is not None
    small = f" under {1 + MIN_GAIN:.2f}x"
    if not host_bound:
        # without a device clock (a CPU) the table's idle column says n/a: nothing to add here
        bound = (f", {_idles(idle_before, idle_after)} (not over {100 * IDLE_LIMIT:.0f}%: "
                 "judged by wall)") if idles else ""
        if gained(wall_gain, wall_spread):
            return Decision(True, "wall", wall_gain, f"{wall}{bound}{carried(wall_gain, device_gain)}")
        if below(wall_spread):
            return Decision(False, "wall", wall_gain, f"slower: {wall}{bound}")
        if above(wall_spread):
            return Decision(False, "wall", wall_gain, f"no material gain: {wall}{small}{bound}")
        return Decision(False, "wall", wall_gain, f"no measured gain: {wall} contains 1{bound}")
    device = f"{device_gain:.2f}x device time{_range(device_spread)}"
    host = f"host-bound (GPU idle up to {100 * max(idles):.0f}% > {100 * IDLE_LIMIT:.0f}%)"
    if gained(wall_gain, wall_spread):
        # a trade only where the loss is material (review 2026-12-04m item 13b: CUDA Graphs'
        # 1.00x (0.99 to 1.00) device time read 'the device time it costs')
        trade = ": a trade, the device time it costs shows once the host bound goes" \
            if below(device_spread) and device_gain < 1 - MIN_GAIN else ""
        return Decision(True, "wall", wall_gain, f"{host}: {wall}, {device}{trade}")
    if gained(device_gain, device_spread):
        trade = (": a trade, slower on the wall until the host bound goes"
                 if below(wall_spread) and wall_gain < 1 - MIN_GAIN else "")
        return Decision(True, "device time", device_gain, f"{host}: {device}, {wall}{trade}")
    if below(wall_spread) or below(device_spread):
        return Decision(False, "device time", device_gain,
                        f"{host}: no gain, a loss ({wall}, {device})")
    if above(wall_spread) or above(device_spread):
        return Decision(False, "device time", device_gain,
                        f"{host}: no material gain on either clock ({wall}, {device};{small})")
    return Decision(False, "device time", device_gain,
                    f"{host}: no measured gain on either clock ({wall}, {device})")


def unstable_rule() -> str:
    """The instability flag's rule, in words, for the chapter to print beside the keep rule."""
    return (f"unstable: IQR over {100 * UNSTABLE_IQR:.0f}% of the median, or the base re-timed "
            f"outside its IQR and over {100 * BASE_MOVE:.0f}% off its median")


def base_moved(base_images_per_s: float, base_iqr_share: float, base_here: float | None) -> str:
    """Why the base's re-time says it moved ('' when it held): outside the base's own IQR from
    its step AND more than BASE_MOVE off its median (see the module's last paragraphs)."""
    if base_iqr_share < 0:
        raise ValueError(f"an IQR share cannot be negative, got {base_iqr_share}")
    if not base_here or base_images_per_s <= 0:
        return ""
    low = base_images_per_s * (1 - base_iqr_share / 2)
    high = base_images_per_s * (1 + base_iqr_share / 2)
    moved = base_here / base_images_per_s - 1
    if low <= base_here <= high or abs(moved) <= BASE_MOVE:
        return ""
    # the re-timed images/s sit in the row's own base column (report.in_rounds, and the
    # recorded ladder's): the flag says only how far that is from the base's own step
    return (f"base re-timed {100 * moved:+.0f}% off its median {base_images_per_s:,.0f} "
            f"(IQR {low:,.0f}-{high:,.0f})")


def unstable(iqr_share: float, base_images_per_s: float, base_iqr_share: float,
             base_here: float | None) -> str:
    """Why a step's timing is unstable ('' when it is not): see the module's last paragraphs.

    iqr_share: the rung's IQR over its median in its own step's rounds; base_images_per_s and
    base_iqr_share: the base's from its own step; base_here: the base's images/s as re-timed in
    this step's rounds (None when it was not re-timed).
    """
    if iqr_share < 0 or base_iqr_share < 0:
        raise ValueError(f"an IQR share cannot be negative, got {iqr_share} and {base_iqr_share}")
    said = []
    if iqr_share > UNSTABLE_IQR:
        said.append(f"IQR {100 * iqr_share:.0f}% > {100 * UNSTABLE_IQR:.0f}%")
    moved = base_moved(base_images_per_s, base_iqr_share, base_here)
    if moved:
        said.append(moved)
    return "; ".join(said)


def over_moved_base(base_images_per_s: float, base_idle: float | None, timings: list[dict],
                    device_gain: float | None = None,
                    device_spread: tuple[float, float] | None = None,
                    base_iqr_share: float | None = None) -> Decision:
    """A step whose base moved in every timing of it: decided only when the decision does not
    depend on which timing of the base it is read over, else not decidable (not kept).

    Each timing is read twice by `decide`: over the base as re-timed there (the gain measured),
    and over the base's own step, with the base's own idle (base_idle). When every reading keeps,
    or none does, that is the decision, said with the move; when they differ (the H200's folding:
    1.68x over a base re-timed 49% slow, 0.86x over the base's own step) it is NOT_DECIDABLE, both
    gains printed. timings: {"gain": (median, q25, q75), "base_images_per_s", "base_idle",
    "idle", and, since 2026-12-05, "images_per_s" and "iqr_share"} per timing.

    Over its own step is the rung's images/s in that timing over the base's in its own step,
    each with its own IQR (`iqr_share`, base_iqr_share: IQR over the median of the time per
    batch), the interval their quartiles allow. Review 2026-12-05t 08 item 1: it was the
    re-timed gain's quartiles scaled by the base's re-timed median over its own, and a base that
    switched speed within the rounds counted twice: the H200's CUDA Graphs step (the rung
    13,365-13,397 images/s in every timing, its base 12,767 in its own step) read [0.84, ...]
    over its own step, a fast-base round scaled again by 0.80, and was not decidable in one
    fresh run of three. A timing (or base) without its IQR (a record before that) is read the
    old way."""
    if not timings:
        raise ValueError("a step needs at least one timing")
    if base_images_per_s <= 0:
        raise ValueError(f"the base's own images/s must be positive, got {base_images_per_s}")
    readings, own = [], []
    for t in timings:
        gain, low, high = t["gain"]
        readings.append(decide(True, "", gain, (low, high), device_gain, device_spread,
                               t.get("base_idle"), t.get("idle")))
        over_own = _over_own_step(t, base_images_per_s, base_iqr_share)
        own.append(over_own[0])
        readings.append(decide(True, "", over_own[0], over_own[1], device_gain,
                               device_spread, base_idle, t.get("idle")))
    n = len(timings)
    if len({r.kept for r in readings}) == 1:
        last = readings[-2]
        return Decision(last.kept, last.judged_by, last.gain,
                        f"{last.why}; base moved in {'all ' if n > 1 else ''}{n} timing"
                        f"{'s' if n > 1 else ''}; same decision either way")
    measured = ", ".join(f"{t['gain'][0]:.2f}x" for t in timings)
    return Decision(False, NOT_DECIDABLE, timings[-1]["gain"][0],
                    f"not decidable: base moved in {n} of {n} timings; {measured} over it as "
                    f"re-timed, {', '.join(f'{g:.2f}x' for g in own)} over its own step's "
                    f"{base_images_per_s:,.0f}")


def _over_own_step(timing: Mapping, base_images_per_s: float,
                   base_iqr_share: float | None) -> tuple[float, tuple[float, float]]:
    """(gain, (low, high)) of one timing's rung over the base's own step (see over_moved_base).
    A time per batch t with IQR share r spans images/s from 1/(t (1 + r/2)) to 1/(t (1 - r/2))."""
    images, share = timing.get("images_per_s"), timing.get("iqr_share")
    if images and share is not None and base_iqr_share is not None and max(share, base_iqr_share) < 2:
        gain = images / base_images_per_s
        return gain, (gain * (1 - base_iqr_share / 2) / (1 + share / 2),
                      gain * (1 + base_iqr_share / 2) / (1 - share / 2))
    gain, low, high = timing["gain"]   # a record without the IQRs: the re-timed gain, scaled
    scale = timing["base_images_per_s"] / base_images_per_s
    return gain * scale, (low * scale, high * scale)


def over_steady(gain: float, spread: tuple[float, float], here: float | None,
                timings: list[float]) -> tuple[float, tuple[float, float], float]:
    """A speed-up over a float32 baseline read over the baseline's steady images/s: the ratio
    from one comparison's rounds (gain, spread) scaled by the baseline's images/s in those
    rounds (here) over the median of every timing of it in the run (timings). Returns (gain,
    spread, scale); scale 1 where the baseline was not in the rung's rounds.

    Why: the baselines join every comparison, and a host that slows them in one comparison
    inflates every ratio read over them there. On the H200 (2026-12-03 18:40 UTC) PyTorch's
    default float32 ran 5,328 images/s in CUDA Graphs' rounds, its GPU idle 24%, and about
    6,700 in the others: C24 read 5.1x over it where three reproduce runs read 3.8-4.1x
    (review 2026-12-03g item 1). A device-bound baseline's median over the run is its speed;
    the per-round spread still comes from the rounds."""
    if not timings or any(t <= 0 for t in timings):
        raise ValueError(f"a baseline's timings must be positive images/s, got {timings}")
    if here is None or here <= 0:
        return gain, spread, 1.0
    steady = statistics.median(timings)
    scale = here / steady
    return gain * scale, (spread[0] * scale, spread[1] * scale), scale


def earlier_reading(step: Mapping) -> bool:
    """A recorded step decided over a base that moved in every timing (`over_moved_base`) from
    timings that lack the IQR share today's reading takes: decided by the keep rule before
    OVER_OWN_STEP_SINCE. False where the record does not say (no timings, no 'base_moved')."""
    timings = [t for t in step.get("timings") or [] if isinstance(t, Mapping)]
    return bool(timings) and all(t.get("base_moved") for t in timings) and \
        any(t.get("iqr_share") is None for t in timings)
