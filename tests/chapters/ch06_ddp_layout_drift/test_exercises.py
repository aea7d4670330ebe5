"""Chapter 06's exercises beyond what every exercise is held to
(tests/exercises/test_every_exercise.py grades each with this chapter's solutions.py)."""

import random

from labkit import exercises
from labkit.chapters.ch06_ddp_layout_drift import exercises as ch06
from tests.chapters.ch06_ddp_layout_drift.solutions import (
    RIGHT,
)


def test_chapter_06_has_two_exercises_of_rising_difficulty_and_none_repeats_chapter_03():
    found = exercises.for_chapter("06_ddp_layout_drift")
    assert [e.id for e in found] == list(RIGHT)
    assert [e.level for e in found] == [1, 2]
    assert "06.channels_last_strides" not in exercises.REGISTRY


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
