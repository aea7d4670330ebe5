"""One rule for a timed loop against its device time, shared by chapters 00 and 02 (review
2026-12-05o 00-02 item 1)."""

import pytest

from labkit.measure import pace


def test_a_loop_is_launch_bound_only_over_half_again_its_device_time():
    assert [pace.pace_label(r) for r in (1.0, 1.05, 1.06, 1.21, 1.5, 1.51)] == [
        "at the GPU's pace", "at the GPU's pace", "near launch-bound", "near launch-bound", "near launch-bound",
        "launch-bound"]


def test_a_range_carries_a_label_only_where_every_round_does():
    assert pace.pace_label(1.4, 1.6) == "near launch-bound" and pace.pace_label(1.51, 3.0) == "launch-bound"
    assert pace.pace_label(1.0, 1.04) == "at the GPU's pace" and pace.pace_label(1.0, 1.06) == "near launch-bound"


def test_a_ratio_that_is_no_ratio_is_refused():
    for bad in ((0.0, None), (-1.0, None), (1.2, 1.1)):
        with pytest.raises(ValueError, match="positive ratios"):
            pace.pace_label(*bad)
