"""Every registered exercise, one test: its right solution passes, each plausible wrong one
shows its first failing case, a stub says "not written yet", and a chapter's exercises rise
in level. The solutions are the chapter's (`tests/chapters/chNN_name/solutions.py`, with
RIGHT and WRONG keyed by exercise id); a new exercise without one fails here."""

import importlib

import pytest

from labkit import exercises
from labkit.core import discovery


def _solutions() -> tuple[dict, dict]:
    right, wrong = {}, {}
    for folder in discovery.chapter_packages():
        try:
            module = importlib.import_module(f"tests.chapters.{folder}.solutions")
        except ModuleNotFoundError:
            continue
        right.update(module.RIGHT)
        wrong.update(module.WRONG)
    return right, wrong


RIGHT, WRONG = _solutions()
IDS = sorted(exercises.REGISTRY)


def test_every_exercise_has_a_right_and_a_wrong_solution():
    assert IDS
    assert [i for i in IDS if i not in RIGHT] == []
    assert [i for i in IDS if not WRONG.get(i)] == []
    assert sorted(set(RIGHT) | set(WRONG)) == IDS  # no solution of an exercise that is gone


@pytest.mark.parametrize("exercise_id", IDS)
def test_the_right_solution_passes(exercise_id):
    report = exercises.get(exercise_id).check(RIGHT[exercise_id])
    assert report.passed, report.summary


@pytest.mark.parametrize("exercise_id, wrong", [(k, fn) for k in sorted(WRONG) for fn in WRONG[k]])
def test_a_wrong_solution_shows_its_first_failing_case(exercise_id, wrong):
    exercise = exercises.get(exercise_id)
    report = exercise.check(wrong)
    assert not report.passed, exercise_id
    if report.failure is not None:  # a wrong answer (not an exception) names its case
        assert not exercise.same(report.failure.expected, report.failure.got)
        assert f"case {report.failure.case_number}" in report.summary


@pytest.mark.parametrize("exercise_id", IDS)
def test_a_stub_is_reported_as_not_written_yet(exercise_id):
    def stub(*args):
        raise NotImplementedError

    report = exercises.get(exercise_id).check(stub)
    assert not report.passed and "not written yet" in report.summary


@pytest.mark.parametrize("chapter", discovery.chapter_keys())
def test_a_chapters_exercises_rise_in_level(chapter):
    levels = [e.level for e in exercises.for_chapter(chapter)]
    assert levels == sorted(levels) and (not levels or levels[0] == 1), levels
