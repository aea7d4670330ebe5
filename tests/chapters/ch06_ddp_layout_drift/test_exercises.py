"""Chapter 06's exercises: a right solution (plain Python, no torch) passes every random case,
and each typical wrong one is caught with a failing case that torch itself confirms."""

import random

import pytest

from labkit import exercises
from labkit.chapters.ch06_ddp_layout_drift import exercises as ch06


def copy_in_order(shape, src_stride, dst_stride):
    return all(a == b for n, a, b in zip(shape, src_stride, dst_stride, strict=True) if n != 1)


def _contiguous(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def drift_report(shape, grad_stride):
    param = _contiguous(shape)
    obeys = all(g == p for n, g, p in zip(shape, grad_stride, param, strict=True) if n != 1)
    kept = tuple(grad_stride) if obeys else param
    return kept, kept != param


RIGHT = {
    "06.copy_in_order": copy_in_order,
    "06.drift_report": drift_report,
}

WRONG = {
    "06.copy_in_order": [
        lambda shape, a, b: tuple(a) == tuple(b),  # forgets size-1 dims
        lambda shape, a, b: True,  # "a copy is a copy"
    ],
    "06.drift_report": [
        lambda shape, g: (_contiguous(shape), False),  # "AccumulateGrad always restrides"
        lambda shape, g: (tuple(g), tuple(g) != _contiguous(shape)),  # "it always keeps the kernel's"
        # "size-1 dims do not count for DDP either"
        lambda shape, g: (drift_report(shape, g)[0], not copy_in_order(shape, drift_report(shape, g)[0],
                                                                        _contiguous(shape))),
    ],
}


def test_chapter_06_has_two_exercises_of_rising_difficulty_and_none_repeats_chapter_03():
    found = exercises.for_chapter("06_ddp_layout_drift")
    assert [e.id for e in found] == list(RIGHT)
    assert [e.level for e in found] == [1, 2]
    assert "06.channels_last_strides" not in exercises.REGISTRY


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
    def stub(shape, grad_stride):
        raise NotImplementedError

    report = exercises.get("06.drift_report").check(stub)
    assert not report.passed and "not written yet" in report.summary and "Hint" in report.summary


def test_random_cases_cover_both_answers_of_copy_in_order():
    rng = random.Random(0)
    answers = [ch06.reference_copy_in_order(*ch06._copy_case(rng)) for _ in range(300)]
    share_in_order = sum(answers) / len(answers)
    assert 0.2 < share_in_order < 0.9


def test_the_reference_keeps_a_1x1_channels_last_gradient_and_ddp_warns():
    """The size-1 exemption, through torch's own AccumulateGrad: kept, and warned about."""
    assert ch06.reference_drift_report((32, 16, 1, 1), (16, 1, 16, 16)) == ((16, 1, 16, 16), True)
    assert ch06.reference_drift_report((16, 3, 3, 3), (27, 1, 9, 3)) == ((27, 9, 3, 1), False)


def test_random_cases_cover_every_answer_of_drift_report():
    rng = random.Random(0)
    answers = {ch06.reference_drift_report(*ch06._grad_case(rng))[1] for _ in range(200)}
    assert answers == {True, False}
