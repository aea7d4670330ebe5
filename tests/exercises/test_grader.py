"""The exercise checker: a right solution passes, a wrong one shows its first failing case,
a stub says 'not written yet', and nothing the learner passes makes check() raise."""

import pytest
import torch

from labkit import exercises


def right(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def forgets_empty_dims(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


EX = exercises.get("01.contiguous_strides")


def test_right_solution_passes_every_case():
    report = EX.check(right)
    assert report.passed and report.cases_run > 100
    assert "agree with torch" in report.summary


def test_wrong_solution_reports_its_first_failing_case():
    report = EX.check(forgets_empty_dims)
    assert not report.passed and report.failure is not None
    (shape,) = report.failure.arguments
    assert report.failure.expected == torch.empty(shape).stride()
    assert report.failure.got != report.failure.expected
    assert f"case {report.failure.case_number}" in report.summary


@pytest.mark.parametrize("fn, says", [
    (lambda shape: (_ for _ in ()).throw(NotImplementedError), "not written yet"),
    (lambda shape: 1 / 0, "ZeroDivisionError"),
    (42, "needs your function itself"),
    (lambda shape: list(right(shape)), "Well done"),  # a list of the right ints is right too
    (lambda shape: "x" * 10_000, "chars)"),  # a huge wrong value is cut short
])
def test_check_never_raises(fn, says):
    assert says in EX.check(fn).summary


def test_bool_is_not_an_int_answer():
    assert not exercises.same_value(1, True)
    assert exercises.same_value(torch.tensor([1.0]), torch.tensor([1.0]))
    assert not exercises.same_value(torch.tensor([1.0]), torch.tensor([1]))


def test_solution_and_lookup():
    assert "torch.empty(shape).stride()" in repr(EX.solution())
    with pytest.raises(exercises.ExerciseError, match="no exercise"):
        exercises.get("01.nope")
    assert EX in exercises.for_chapter("01_strides_and_views")


# Exercises whose reference gives the right value the slow way: their check also measures how
# the learner's code gets there (04.fused_chain: no full-size intermediate), so torch's
# unfused reference is refused on purpose (tests/chapters/ch04_fusion/test_exercises.py).
GRADED_ON_MORE_THAN_THE_VALUE = {"04.fused_chain"}


@pytest.mark.parametrize("exercise_id", sorted(exercises.REGISTRY))
def test_every_registered_exercise_grades_its_reference_right_and_a_stub_not_written(exercise_id):
    """Over the whole registry: the reference passes its own random cases, a stub that
    returns nothing is reported as 'not written yet' (never an exception), and the task and
    hint do not hand over the reference's source."""
    exercise = exercises.get(exercise_id)
    if exercise_id not in GRADED_ON_MORE_THAN_THE_VALUE:
        assert exercise.check(exercise.reference, seed=1).passed, exercise_id
    stub = exercise.check(lambda *args: None)
    assert not stub.passed and stub.summary
    assert exercise.solution().source.strip() not in exercise.task
