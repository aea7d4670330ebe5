"""Chapter 03's exercises: a right solution passes, a plausible wrong one shows its first failing case."""

from labkit import exercises


def channels_last_strides(shape):
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def element_at(shape, position):
    n, c, h, w = shape
    position, channel = divmod(position, c)
    position, column = divmod(position, w)
    batch, row = divmod(position, h)
    return (batch, channel, row, column)


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
