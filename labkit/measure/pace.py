"""What a loop of GPU calls, timed back to back by wall clock, says against their device time.

A Python loop of short calls runs at the GPU's pace where the GPU is the slower of the two, and
at the host's (the launch's) where the host is: its per-call time over the device time per call
says which. Chapters 00 and 02 read that ratio by one rule, here, so the same number never gets
two words (review 2026-12-05o 00-02 item 1: chapter 00 called a 1.05x loop 'launch-bound' by a
rule of its own while chapter 02's called it 'at the GPU's pace'); chapter 07 keeps a copy of the
two thresholds, tested equal to these through chapter 02's names.

Why these thresholds (review 2026-12-04j item 4; 2026-12-04k item 1; 2026-12-04l item 2): one
threshold gave labels that four H200 runs of the same case did not agree on. torch.matmul at
1024 float32 read 1.07x on one page and 1.41x, 1.21x, 1.16x in three reproduce runs; chapter
02's stride-aware GEMM read 1.59x, 2.38x, 1.88x, 1.42x. So a loop is 'launch-bound' only over
LAUNCH_BOUND_RATIO times its device time, 'near launch-bound' between AT_DEVICE_PACE and that
(the ratio printed beside it), and at the GPU's pace below: on that record no run then says the
opposite of another, only 'near' beside 'bound'. A device time read from kernel records leaves
out the GPU's gap between back-to-back kernels (under a microsecond), so a loop the GPU paces can
read a little over 1x: 'near', never 'bound', for a call of a few microseconds.
"""

from __future__ import annotations

PACE_TOLERANCE = 0.05   # a loop within 5% of the device time runs at the GPU's pace
AT_DEVICE_PACE = 1 + PACE_TOLERANCE
LAUNCH_BOUND_RATIO = 1.5  # half again the GPU's time: above the 1.07-1.41x torch.matmul spread of four runs

LAUNCH_BOUND = "launch-bound"
NEAR_LAUNCH_BOUND = "near launch-bound"
AT_GPU_PACE = "at the GPU's pace"


def pace_label(loop_over_device_ratio: float, high: float | None = None) -> str:
    """'launch-bound' over LAUNCH_BOUND_RATIO, 'near launch-bound' over AT_DEVICE_PACE, else
    'at the GPU's pace': what a timed loop's per-call time over the device time says. Given a
    range (the loop rounds' lowest and highest), 'launch-bound' only where every round reads over
    LAUNCH_BOUND_RATIO and 'at the GPU's pace' only where every round reads under AT_DEVICE_PACE
    (review 2026-12-04m item 1: no label the rounds do not all carry)."""
    low = loop_over_device_ratio
    high = low if high is None else high
    if not 0 < low <= high:
        raise ValueError(f"a pace needs positive ratios, lowest first, got {low} and {high}")
    if low > LAUNCH_BOUND_RATIO:
        return LAUNCH_BOUND
    return AT_GPU_PACE if high <= AT_DEVICE_PACE else NEAR_LAUNCH_BOUND
