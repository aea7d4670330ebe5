"""Chapter 07's exercises beyond what every exercise is held to
(tests/exercises/test_every_exercise.py grades each with this chapter's solutions.py)."""

import torch

from labkit import exercises
from tests.chapters.ch07_export_traps.solutions import (
    engine_sees,
    engine_sees_logical,
    nhwc_as_nchw,
    nhwc_as_nchw_copying,
    nhwc_as_nchw_wrong_order,
    reads_correctly,
    reads_correctly_strict,
)


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
