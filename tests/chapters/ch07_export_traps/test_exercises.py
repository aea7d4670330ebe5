"""Chapter 07's exercises: a right solution passes, a plausible wrong one shows a failing case."""

import torch

from labkit import exercises


def reads_correctly(shape, stride):
    expected = 1
    for size, step in reversed(list(zip(shape, stride, strict=True))):
        if size != 1 and step != expected:
            return False
        expected *= size
    return True


def reads_correctly_strict(shape, stride):  # forgets that a size-1 dim's stride is free
    expected = 1
    for size, step in reversed(list(zip(shape, stride, strict=True))):
        if step != expected:
            return False
        expected *= size
    return True


def engine_sees(x):
    strides, step = [], 1
    for size in reversed(x.shape):
        strides.append(step)
        step *= size
    return x.as_strided(x.shape, tuple(reversed(strides)))


def engine_sees_logical(x):  # the values as the strides say: what a stride-aware reader sees
    return x.contiguous()


def nhwc_as_nchw(buffer, n, c, h, w):
    return buffer.view(n, h, w, c).permute(0, 3, 1, 2)


def nhwc_as_nchw_copying(buffer, n, c, h, w):
    return buffer.view(n, h, w, c).permute(0, 3, 1, 2).contiguous()


def nhwc_as_nchw_wrong_order(buffer, n, c, h, w):
    return buffer.view(n, c, h, w)


def test_pointer_reads_correctly():
    ex = exercises.get("07.pointer_reads_correctly")
    assert ex.check(reads_correctly).passed
    report = ex.check(reads_correctly_strict)
    assert not report.passed and report.failure.expected is True


def test_what_the_engine_sees():
    ex = exercises.get("07.what_the_engine_sees")
    assert ex.check(engine_sees).passed
    report = ex.check(engine_sees_logical)
    assert not report.passed and report.failure is not None


def test_nhwc_buffer_as_nchw_must_be_a_view():
    ex = exercises.get("07.nhwc_buffer_as_nchw")
    assert ex.check(nhwc_as_nchw).passed
    assert not ex.check(nhwc_as_nchw_copying).passed
    assert not ex.check(nhwc_as_nchw_wrong_order).passed


def test_the_result_is_channels_last():
    view = nhwc_as_nchw(torch.arange(2.0 * 3 * 4 * 5), 2, 5, 3, 4)
    assert view.is_contiguous(memory_format=torch.channels_last)


def test_stubs_are_not_yet_written_and_ordered_by_level():
    def stub(*args):
        raise NotImplementedError

    chapter = exercises.for_chapter("07_export_traps")
    assert [e.level for e in chapter] == [1, 2, 3]
    for ex in chapter:
        report = ex.check(stub)
        assert not report.passed and "not written yet" in report.summary
