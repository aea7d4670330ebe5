"""What a learner types into a number quiz: the unit the question uses is accepted after the
number, a ratio as '1.2x', '1.2 x', '1.2×' or '120%'; anything else is refused with a message
that says what to type, never read as another number."""

from __future__ import annotations

import pytest

from labkit.show.widgets.quiz import Quiz


@pytest.mark.parametrize("typed", ["1.2", "1.2x", "1.2 x", "1.2X", " 1.2× ", "120%", "120 %"])
def test_a_ratio_is_read_with_or_without_its_suffix(typed):
    quiz = Quiz("Speed-up?", answer=lambda: 1.2, rel_tol=0.01, unit="x")
    assert quiz.submit(typed) is True, quiz.error
    assert quiz.error == ""


def test_a_percentage_is_a_hundredth_of_the_ratio():
    quiz = Quiz("Speed-up?", answer=lambda: 1.2, rel_tol=0.01, unit="x")
    assert quiz.submit("1.2%") is False  # 0.012x, not 1.2x: graded, and wrong


@pytest.mark.parametrize("typed", ["1.2 ms", "x", "%", "1.2xx", "1.2x%", "twice", "1,2x"])
def test_other_suffixes_are_refused_with_what_to_type(typed):
    quiz = Quiz("Speed-up?", answer=lambda: 1.2, rel_tol=0.01, unit="x")
    assert quiz.submit(typed) is None
    assert "1.2x or 120%" in quiz.error and quiz.attempts == 0


def test_the_quiz_unit_may_follow_the_number():
    quiz = Quiz("How many shapes recompile?", answer=3, unit="shapes")
    assert quiz.submit("3 shapes") is True
    assert Quiz("n?", answer=3, unit="shapes").submit("3") is True
    refused = Quiz("n?", answer=3, unit="shapes")
    assert refused.submit("3%") is None and "in shapes" in refused.error


def test_without_a_unit_a_suffix_is_refused():
    quiz = Quiz("n?", answer=48)
    assert quiz.submit("48x") is None and "not a number" in quiz.error


def test_the_saved_quiz_says_how_to_make_it_live_and_never_the_answer():
    from labkit.show.widgets.quiz import RUN_ABOVE

    quiz = Quiz("Bytes <per> row?", choices=["48", "96"], answer="96")
    bundle = quiz._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    page = data["text/html"]
    assert RUN_ABOVE in page and "Shift+Enter" in page and "&lt;per&gt;" in page
    assert "<li>48</li><li>96</li>" in page and "<script" not in page
    number = Quiz("Speed-up?", answer=7.25, unit="x")
    assert "7.25" not in number.static_html() and "a number (x)" in number.static_html()


def test_an_answer_computed_further_down_says_to_run_on():
    quiz = Quiz("Speed-up?", answer=lambda: not_computed_yet, unit="x")  # noqa: F821
    assert quiz.submit("2x") is None
    assert "not_computed_yet" in quiz.error and "run on" in quiz.error
    assert quiz.response == "2x" and quiz.attempts == 0
