"""Chapter 00's exercises beyond what every exercise is held to
(tests/exercises/test_every_exercise.py grades each with this chapter's solutions.py)."""

import numpy as np

from labkit import exercises
from labkit.measure import timing


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
