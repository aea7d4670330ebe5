"""Predict, then measure: a question, the learner's answer, then the answer the code computes.

The answer is computed in the kernel by the notebook's own code (a callable run when the
learner submits, or a value computed before), never typed in as a verdict. Three kinds:

- ``choice``: multiple choice; the computed answer, as text (``str(value)``), must be one of
  the choices.
- ``number``: a number, right within ``rel_tol`` / ``abs_tol`` (as ``math.isclose``).
- ``sequence``: whole numbers such as a shape or strides, e.g. ``1, 4``; right when equal.

If the answer callable raises, the widget shows the error message (the kernel carries on).
``Quiz.submit(text)`` is what the browser calls; tests and scripts can call it directly.

DOM hooks, inside ``.lt-quiz``: ``input[type=radio][data-choice=TEXT]`` or
``input[data-role=answer]``, ``button[data-role=submit]``, ``[data-role=result]`` with
``data-correct="true|false"``, ``[data-role=computed]`` and ``[data-role=error]``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import anywidget
import traitlets

from labkit.widgets.address_grid import HERE

KINDS = ("choice", "number", "sequence")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")


class QuizError(ValueError):
    """A response or answer the quiz cannot grade; the message says what to do."""


def parse_number(text: str) -> float:
    """Read the learner's number ('12', '0.5', '1e3', '2,5' is refused as ambiguous)."""
    cleaned = text.strip().replace("_", "")
    if not _NUMBER.fullmatch(cleaned):
        raise QuizError(f"{text!r} is not a number; type digits such as 12, 0.5 or 1e3.")
    return float(cleaned)


def parse_sequence(text: str) -> tuple[int, ...]:
    """Read whole numbers separated by commas or spaces, with optional brackets: '(1, 4)'."""
    tokens = [t for t in re.split(r"[\s,]+", text.strip().strip("()[]")) if t]
    if not tokens or not all(_INTEGER.fullmatch(t) for t in tokens):
        raise QuizError(f"{text!r} is not a list of whole numbers; type e.g. 1, 4.")
    return tuple(int(t) for t in tokens)


def describe(value: object, kind: str, unit: str = "") -> str:
    """The computed answer as the learner will read it."""
    if kind == "number":
        text = f"{float(value):.4g}"  # type: ignore[arg-type]
    elif kind == "sequence":
        text = "(" + ", ".join(str(int(v)) for v in value) + ")"  # type: ignore[union-attr]
    else:
        text = str(value)
    return f"{text} {unit}".strip()


class Quiz(anywidget.AnyWidget):
    """Ask, let the learner predict, then compute the answer in the kernel and compare.

    ``Quiz("Strides of x.t()?", choices=["(4, 1)", "(1, 4)"], answer=lambda: str(x.t().stride()))``
    ``Quiz("Speed-up of .contiguous() first?", answer=measure_ratio, rel_tol=0.25, unit="x")``
    """

    _esm = HERE / "quiz.js"
    _css = HERE / "widgets.css"

    question = traitlets.Unicode("").tag(sync=True)
    choices = traitlets.List(traitlets.Unicode(), default_value=[]).tag(sync=True)
    kind = traitlets.Enum(KINDS, default_value="number").tag(sync=True)
    unit = traitlets.Unicode("").tag(sync=True)
    tolerance_text = traitlets.Unicode("").tag(sync=True)
    explanation = traitlets.Unicode("").tag(sync=True)

    submission = traitlets.Dict(help="what the browser sends: {'response', 'seq'}").tag(sync=True)
    response = traitlets.Unicode("").tag(sync=True)
    computed = traitlets.Unicode("").tag(sync=True)
    correct = traitlets.Bool(None, allow_none=True).tag(sync=True)
    feedback = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    attempts = traitlets.Int(0, help="graded submissions so far").tag(sync=True)
    handled = traitlets.Int(0, help="submissions handled, graded or not").tag(sync=True)

    def __init__(
        self,
        question: str,
        choices: Sequence[str] | None = None,
        answer: Callable[[], object] | object = None,
        *,
        kind: str | None = None,
        rel_tol: float = 0.0,
        abs_tol: float = 0.0,
        unit: str = "",
        explanation: str = "",
    ) -> None:
        if not isinstance(question, str) or not question.strip():
            raise traitlets.TraitError("question must be non-empty text.")
        if answer is None:
            raise traitlets.TraitError(
                "give the answer: a value computed in the notebook, or a function that "
                "computes it when the learner submits (answer=lambda: ...).")
        choices = [str(c) for c in choices] if choices is not None else []
        if kind is None:
            kind = "choice" if choices else (
                "sequence" if isinstance(answer, tuple | list) else "number")
        if kind == "choice" and len(choices) < 2:
            raise traitlets.TraitError("a multiple-choice quiz needs at least two choices.")
        if kind != "choice" and choices:
            raise traitlets.TraitError(f"choices are only for kind='choice', not {kind!r}.")
        if rel_tol < 0 or abs_tol < 0:
            raise traitlets.TraitError(f"tolerances must be >= 0, got {rel_tol}, {abs_tol}.")
        super().__init__(question=question, choices=choices, kind=kind, unit=unit,
                         explanation=explanation)
        self._answer = answer
        self._known: list[object] = []  # the computed answer once it has been computed
        self.rel_tol, self.abs_tol = rel_tol, abs_tol
        if kind == "number" and (rel_tol or abs_tol):
            parts = ([f"±{rel_tol:.0%}"] if rel_tol else []) + (
                [f"±{abs_tol:g}{(' ' + unit) if unit else ''}"] if abs_tol else [])
            self.tolerance_text = "counts as right within " + " or ".join(parts)

    def __repr__(self) -> str:
        """Deterministic text for places where widgets cannot render; never the answer."""
        if self.kind == "choice":
            how = "choices: " + " | ".join(self.choices)
        elif self.kind == "sequence":
            how = "answer: whole numbers, e.g. 1, 4"
        else:
            how = "answer: a number" + (f" ({self.unit})" if self.unit else "")
        return f"Quiz: {self.question} [{how}]"

    def submit(self, response: str) -> bool | None:
        """Grade `response`: True/False, or None with `error` set when it cannot be graded."""
        with self.hold_sync():
            self.handled += 1  # tells the browser this submission is answered, even if unchanged
            self.response = str(response)
            self.error, self.feedback, self.correct = "", "", None
            try:
                predicted = self._parse(self.response)
                actual = self._actual()
                self.correct = self._grade(predicted, actual)
                self.computed = describe(actual, self.kind, self.unit)
            except QuizError as err:
                self.error = str(err)
                return None
            self.attempts += 1
            verdict = "Right" if self.correct else "Not quite"
            self.feedback = (f"{verdict}: you predicted {self.response.strip()}, "
                             f"the code computed {self.computed}.")
            return self.correct

    def _parse(self, text: str) -> object:
        if self.kind == "choice":
            if text not in self.choices:
                raise QuizError("pick one of the choices first.")
            return text
        if not text.strip():
            raise QuizError("type your prediction first.")
        return parse_number(text) if self.kind == "number" else parse_sequence(text)

    def _actual(self) -> object:
        """The answer, computed now by the notebook's code if it is a callable (once)."""
        if self._known:
            return self._known[0]
        value = self._answer
        if callable(value):
            try:
                value = value()
            except Exception as err:  # the learner's code: report it, keep the kernel alive
                raise QuizError(
                    f"the code that computes the answer raised {type(err).__name__}: {err}"
                ) from None
        self._known.append(value)
        return value

    def _grade(self, predicted: object, actual: object) -> bool:
        if self.kind == "choice":
            if str(actual) not in self.choices:
                self._known.clear()
                raise QuizError(f"the code computed {actual!r}, which is none of the choices "
                                f"{self.choices}, so the prediction cannot be graded.")
            return str(actual) == predicted
        if self.kind == "number":
            try:
                number = float(actual)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise QuizError(f"the computed answer {actual!r} is not a number.") from None
            return math.isclose(predicted, number, rel_tol=self.rel_tol,  # type: ignore[arg-type]
                                abs_tol=self.abs_tol)
        try:
            values = tuple(int(v) for v in actual)  # type: ignore[union-attr]
        except (TypeError, ValueError):
            raise QuizError(f"the computed answer {actual!r} is not a list of integers.") from None
        return values == predicted

    @traitlets.observe("submission")
    def _on_submission(self, change: traitlets.Bunch) -> None:
        sent = change["new"]
        if sent:
            self.submit(str(sent.get("response", "")))
