"""Chapter 06's exercises: a right solution (plain Python, no torch) passes every random case,
and each typical wrong one is caught with a failing case that torch itself confirms."""

import random

import pytest

from labkit import exercises
from labkit.chapters.ch06_ddp_layout_drift import exercises as ch06


def channels_last_strides(shape):
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def copy_in_order(shape, src_stride, dst_stride):
    return all(a == b for n, a, b in zip(shape, src_stride, dst_stride, strict=True) if n != 1)


def _contiguous(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def drift_report(shapes):
    warned = permuting = 0
    for shape in shapes:
        before = _contiguous(shape)
        after = channels_last_strides(shape) if len(shape) == 4 else before
        if after != before:
            warned += 1
            permuting += not copy_in_order(shape, after, before)
    return warned, permuting


RIGHT = {
    "06.channels_last_strides": channels_last_strides,
    "06.copy_in_order": copy_in_order,
    "06.drift_report": drift_report,
}

WRONG = {
    "06.channels_last_strides": [
        lambda shape: (shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1),  # NCHW
        lambda shape: (shape[1] * shape[2] * shape[3], 1, shape[3], shape[1]),  # H and W swapped
    ],
    "06.copy_in_order": [
        lambda shape, a, b: tuple(a) == tuple(b),  # forgets size-1 dims
        lambda shape, a, b: True,  # "a copy is a copy"
    ],
    "06.drift_report": [
        lambda shapes: (sum(len(s) == 4 for s in shapes), sum(len(s) == 4 for s in shapes)),  # every 4-D warns
        lambda shapes: (sum(len(s) == 4 and s[2:] != (1, 1) for s in shapes),) * 2,  # 1x1 never warns
    ],
}


def test_chapter_06_has_three_exercises_of_rising_difficulty():
    found = exercises.for_chapter("06_ddp_layout_drift")
    assert [e.id for e in found] == list(RIGHT)
    assert [e.level for e in found] == [1, 2, 3]


@pytest.mark.parametrize("exercise_id", sorted(RIGHT))
def test_right_solution_passes(exercise_id):
    report = exercises.get(exercise_id).check(RIGHT[exercise_id])
    assert report.passed, report.summary
    assert report.cases_run > 100


@pytest.mark.parametrize("exercise_id, wrong", [(k, fn) for k, fns in WRONG.items() for fn in fns])
def test_wrong_solution_shows_its_first_failing_case(exercise_id, wrong):
    report = exercises.get(exercise_id).check(wrong)
    assert not report.passed and report.failure is not None, exercise_id
    assert report.failure.expected != report.failure.got
    assert f"case {report.failure.case_number}" in report.summary


def test_a_stub_is_reported_as_not_written_yet():
    def stub(shapes):
        raise NotImplementedError

    report = exercises.get("06.drift_report").check(stub)
    assert not report.passed and "not written yet" in report.summary and "Hint" in report.summary


def test_random_cases_cover_both_answers_of_copy_in_order():
    rng = random.Random(0)
    answers = [ch06.reference_copy_in_order(*ch06._copy_case(rng)) for _ in range(300)]
    share_in_order = sum(answers) / len(answers)
    assert 0.2 < share_in_order < 0.9


def test_references_agree_with_the_chapters_model():
    """The small CNN of chapter 06: two 3x3 weights permute, the 1x1 weight only restrides."""
    shapes = [(16, 3, 3, 3), (16,), (16,), (32, 16, 3, 3), (32,), (32,), (32, 32, 1, 1), (32,), (10, 32), (10,)]
    assert ch06.reference_drift_report(shapes) == (3, 2)
    assert ch06.reference_channels_last_strides((32, 32, 1, 1)) == (32, 1, 32, 32)
