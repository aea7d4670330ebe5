"""A quiz graded on a noisy measurement accepts every answer its noise allows (`quiz.Key`):
each accepted choice is graded right and the learner reads why; a number key grades against
the span; a key naming a choice the quiz does not offer is refused, never graded silently."""

from __future__ import annotations

import pytest
import traitlets

from labkit.show.widgets.quiz import Key, Quiz

CHOICES = ["faster", "about the same", "slower"]


def test_every_choice_the_noise_allows_is_right_and_the_feedback_says_why():
    key = Key("faster", ("faster", "about the same"), why="within the noise: flagged 14%")
    for typed, right in (("faster", True), ("about the same", True), ("slower", False)):
        quiz = Quiz("Which?", choices=CHOICES, answer=lambda: key)
        assert quiz.submit(typed) is right, quiz.error
        assert "also right: about the same" in quiz.computed and "flagged 14%" in quiz.computed


def test_a_plain_answer_still_grades_one_choice():
    quiz = Quiz("Which?", choices=CHOICES, answer=lambda: "faster")
    assert quiz.submit("about the same") is False and quiz.computed == "faster"


def test_a_number_key_grades_against_its_span_with_the_tolerance():
    key = Key(1.2, span=(1.0, 1.4), why="its rounds give 1.00-1.40x")
    for typed, right in (("1.0", True), ("1.4x", True), ("1.5", True), ("0.8", False), ("2", False)):
        quiz = Quiz("Ratio?", answer=lambda: key, rel_tol=0.1, unit="x")
        assert quiz.submit(typed) is right, (typed, quiz.error)
    assert "anything from 1 to 1.4 x counts" in quiz.computed


def test_a_key_that_names_no_offered_choice_or_leaves_its_span_is_refused():
    with pytest.raises(traitlets.TraitError, match="not among the choices"):
        Quiz("Which?", choices=CHOICES, answer=Key("faster", ("much faster",)))
    quiz = Quiz("Which?", choices=CHOICES, answer=lambda: Key("quicker"))
    assert quiz.submit("faster") is None and "not among the choices" in quiz.error
    quiz = Quiz("Ratio?", answer=lambda: Key(2.0, span=(1.0, 1.5)), rel_tol=0.1)
    assert quiz.submit("2") is None and "outside its own span" in quiz.error
    with pytest.raises(traitlets.TraitError, match="takes no Key"):
        Quiz("Strides?", answer=Key((1, 4)), kind="sequence")
