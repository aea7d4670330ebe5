"""Chapter 00's exercises: a right solution passes every case, typical wrong ones are caught."""

import numpy as np
import pytest

from labkit import exercises
from labkit.measure import timing


def copy_gbps(shape, dtype, seconds):
    count = 1
    for size in shape:
        count *= size
    return 2 * count * dtype.itemsize / seconds / 1e9


def median_and_iqr(samples):
    ordered = sorted(samples)

    def percentile(q):
        position = q / 100 * (len(ordered) - 1)
        low = int(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return percentile(50), percentile(75) - percentile(25)


RIGHT = {"00.copy_gbps": copy_gbps, "00.median_and_iqr": median_and_iqr}
WRONG = {
    "00.copy_gbps": [
        lambda shape, dtype, seconds: copy_gbps(shape, dtype, seconds) / 2,  # counts one direction
        lambda shape, dtype, seconds: copy_gbps(shape, dtype, seconds) * 1e9 / 2**30,  # GiB/s
    ],
    "00.median_and_iqr": [
        lambda samples: (sum(samples) / len(samples), max(samples) - min(samples)),  # mean, range
        lambda samples: (sorted(samples)[len(samples) // 2], 0.0),  # no interpolation, no spread
    ],
}


def test_chapter_00_has_two_exercises_of_rising_difficulty():
    assert [(e.id, e.level) for e in exercises.for_chapter("00_setup_check")] == [
        ("00.copy_gbps", 1), ("00.median_and_iqr", 2)]


@pytest.mark.parametrize("exercise_id", sorted(RIGHT))
def test_right_solution_passes(exercise_id):
    report = exercises.get(exercise_id).check(RIGHT[exercise_id])
    assert report.passed, report.summary


@pytest.mark.parametrize("exercise_id, wrong", [(k, fn) for k, fns in WRONG.items() for fn in fns])
def test_wrong_solution_shows_its_first_failing_case(exercise_id, wrong):
    report = exercises.get(exercise_id).check(wrong)
    assert not report.passed and report.failure is not None
    assert f"case {report.failure.case_number}" in report.summary


def test_the_reference_is_what_the_harness_reports():
    """The exercise teaches the statistics bench.time shows: same median and IQR."""
    samples = [3e-3, 1e-3, 2e-3, 2.5e-3, 9e-3]
    summary = timing.summarise(samples)
    median, iqr = exercises.get("00.median_and_iqr").reference(samples)
    assert np.isclose(summary.median_s, median) and np.isclose(summary.iqr_s, iqr)


def test_a_bool_or_a_string_is_not_a_number():
    ex = exercises.get("00.copy_gbps")
    assert not ex.check(lambda shape, dtype, seconds: True).passed
    assert not ex.check(lambda shape, dtype, seconds: "fast").passed
