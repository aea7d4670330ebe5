"""labkit.measure.intervals: the Student-t interval chapters 05 and 06 put on per-round ratios."""

import math

import pytest

from labkit.measure import intervals


def test_the_interval_is_students_t_on_the_logs_of_the_ratios():
    ratios = [1.10, 1.25, 0.95, 1.20, 1.05]
    logs = [math.log(r) for r in ratios]
    mean = sum(logs) / 5
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 4)
    half = 2.776 * sd / math.sqrt(5)  # t at 4 degrees of freedom, two-sided 95%
    got = intervals.geometric_interval(ratios)
    assert got == pytest.approx((math.exp(mean), math.exp(mean - half), math.exp(mean + half)))


def test_the_t_table_past_thirty_degrees_keeps_its_last_value_and_refuses_nonsense():
    assert intervals.t_quantile(1) == 12.706 and intervals.t_quantile(200) == intervals.t_quantile(30)
    with pytest.raises(ValueError, match="degrees of freedom"):
        intervals.t_quantile(0)
    with pytest.raises(ValueError, match="two or more"):
        intervals.geometric_interval([1.0])


def test_chapter_06_reads_rounds_with_the_same_interval():
    from labkit.chapters.ch06_ddp_layout_drift import tables

    drifted, matched = [0.0072, 0.0081, 0.0070, 0.0079], [0.0070, 0.0075, 0.0071, 0.0074]
    ratio, low, high, rounds = tables.ratio_interval(drifted, matched)
    assert (ratio, low, high) == pytest.approx(intervals.geometric_interval([d / m for d, m in zip(drifted, matched, strict=True)]))
    assert rounds == 4
