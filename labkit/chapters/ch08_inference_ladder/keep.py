"""The keep rule: a step is judged on the clock that bound the rung, and only if it is right.

Why not "keep it if the wall time got faster": at batch 64 in eager mode a ResNet-50 on an
H200 is bound by the host's kernel launches (the GPU idles two thirds of the time), so a
step that halves the GPU's work (fp16) barely moves the wall clock. A greedy rule on wall
time drops it, and every later rung then runs in TF32: the top of the ladder halves. A
performance engineer reads the profile first: when the device idles more than IDLE_LIMIT of
the time, the host bound the rung, and a step's real gain is in the device-busy time, which
shows once the launches are removed (compile, CUDA graphs). So:

1. a rung outside the numerics gate is never kept, whatever its speed;
2. device-bound (the GPU idles at most IDLE_LIMIT before and after the step): kept unless
   its wall-time gain is clearly below 1 (the whole interleaved spread under 1x);
3. host-bound: dropped only when both clocks say slower (wall spread under 1x and device-busy
   time grown by more than DEVICE_NOISE); a device-time gain is kept for the rungs that
   remove the host bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.measure.device_time import HOST_BOUND_IDLE_SHARE

# the GPU idles more than this share of the wall time: the host bound the rung (the course's
# one host-bound threshold, labkit.measure.device_time's)
IDLE_LIMIT = HOST_BOUND_IDLE_SHARE
DEVICE_NOISE = 0.02   # device-busy times from a few profiled batches agree to ~1%


@dataclass(frozen=True)
class Decision:
    """Whether a step is kept, on which clock it was judged, and why."""

    kept: bool
    judged_by: str   # "wall", "device time", or "numerics"
    gain: float      # the gain on the judging clock (wall median when judged by wall)
    why: str


def decide(gate_passed: bool, gate_why: str, wall_gain: float, wall_spread: tuple[float, float],
           device_gain: float | None, idle_before: float | None,
           idle_after: float | None) -> Decision:
    """Judge one step (a rung against the rung it was built on); see the module's rule."""
    if not gate_passed:
        return Decision(False, "numerics", wall_gain, f"refused by the numerics gate: {gate_why}")
    idles = [i for i in (idle_before, idle_after) if i is not None]
    host_bound = bool(idles) and max(idles) > IDLE_LIMIT and device_gain is not None
    wall_slower = wall_spread[1] < 1.0
    if not host_bound:
        if wall_slower:
            return Decision(False, "wall", wall_gain,
                            f"slower: {wall_gain:.2f}x wall ({wall_spread[0]:.2f} to {wall_spread[1]:.2f})")
        return Decision(True, "wall", wall_gain, f"{wall_gain:.2f}x wall, device-bound")
    idle = max(idles)
    device_slower = device_gain < 1.0 - DEVICE_NOISE
    if wall_slower and device_slower:
        return Decision(False, "device time", device_gain,
                        f"slower on both clocks: {wall_gain:.2f}x wall, {device_gain:.2f}x device time")
    return Decision(True, "device time", device_gain,
                    f"host-bound (GPU idle {100 * idle:.0f}% > {100 * IDLE_LIMIT:.0f}%): "
                    f"{device_gain:.2f}x device time, {wall_gain:.2f}x wall")
