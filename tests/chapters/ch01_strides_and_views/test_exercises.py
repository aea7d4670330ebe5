"""Chapter 01's exercises: a right solution (plain Python, no torch) passes every random case,
and each typical wrong one is caught with a failing case that torch itself confirms."""

import pytest
import torch

from labkit import exercises


def contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def storage_index(shape, stride, offset, index):
    return offset + sum((i % n) * s for i, n, s in zip(index, shape, stride, strict=True))


def merged_stride(shape, stride, dim):
    if shape[dim + 1] == 1:
        return stride[dim]
    if shape[dim] == 1 or stride[dim] == stride[dim + 1] * shape[dim + 1]:
        return stride[dim + 1]
    return None


RIGHT = {
    "01.contiguous_strides": contiguous_strides,
    "01.storage_index": storage_index,
    "01.merged_stride": merged_stride,
}

WRONG = {
    "01.storage_index": [
        lambda shape, stride, offset, index: sum(i * s for i, s in zip(index, stride, strict=True)),
        lambda shape, stride, offset, index: offset + sum(  # forgets that -1 means size - 1
            i * s for i, s in zip(index, stride, strict=True)),
    ],
    "01.merged_stride": [
        lambda shape, stride, dim: stride[dim + 1] if stride[dim] == stride[dim + 1] * shape[dim + 1]
        else None,  # forgets size-1 dims
        lambda shape, stride, dim: stride[dim + 1],  # assumes view always works
        lambda shape, stride, dim: None if stride[dim] < stride[dim + 1] else stride[dim + 1],  # "contiguity"
    ],
}


def test_chapter_01_has_three_exercises_of_rising_difficulty():
    found = exercises.for_chapter("01_strides_and_views")
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
    def stub(shape, stride, dim):
        raise NotImplementedError

    report = exercises.get("01.merged_stride").check(stub)
    assert not report.passed and "not written yet" in report.summary and "Hint" in report.summary


def test_random_cases_cover_both_answers_of_merged_stride():
    """The level-3 cases must include views that work and views that raise, in fair shares."""
    import random

    from labkit.chapters.ch01_strides_and_views import exercises as ch01

    rng = random.Random(0)
    answers = [ch01.reference_merged_stride(*ch01._merged_stride_case(rng)) for _ in range(400)]
    share_raising = sum(a is None for a in answers) / len(answers)
    assert 0.15 < share_raising < 0.6


def test_references_agree_with_torch_on_the_chapters_examples():
    from labkit.chapters.ch01_strides_and_views import exercises as ch01

    y = torch.randn(2, 3, 4).transpose(0, 1)
    assert ch01.reference_merged_stride(tuple(y.shape), y.stride(), 0) is None  # view(-1, 4) fails
    assert ch01.reference_merged_stride((3, 2, 4), (4, 12, 1), 1) is None
    m = torch.arange(24).view(2, 3, 4)[1:, 1:, 2:]
    assert ch01.reference_storage_index(tuple(m.shape), m.stride(), m.storage_offset(), (0, 1, 1)) \
        == int(m[0, 1, 1])
