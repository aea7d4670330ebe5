"""Chapter 03's exercises beyond what every exercise is held to
(tests/exercises/test_every_exercise.py grades each with this chapter's solutions.py)."""

from labkit import exercises
from tests.chapters.ch03_memory_layouts.solutions import channels_last_strides, element_at


def test_channels_last_strides():
    ex = exercises.get("03.channels_last_strides")
    assert ex.check(channels_last_strides).passed
    row_major = ex.check(lambda s: (s[1] * s[2] * s[3], s[2] * s[3], s[3], 1))
    assert not row_major.passed and row_major.failure.case_number == 1


def test_element_at():
    ex = exercises.get("03.element_at")
    assert ex.check(element_at).passed
    nchw_order = ex.check(lambda s, p: (p // (s[1] * s[2] * s[3]), p // (s[2] * s[3]) % s[1],
                                        p // s[3] % s[2], p % s[3]))
    assert not nchw_order.passed and nchw_order.failure.expected == (0, 1, 0, 0)
    assert [e.level for e in exercises.for_chapter("03_memory_layouts")] == [1, 2]
