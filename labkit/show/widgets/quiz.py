"""Predict, then measure: a question, the learner's answer, then the answer the code computes.

The answer is computed in the kernel by the notebook's own code (a callable run when the
learner submits, or a value computed before), never typed in as a verdict. Three kinds:

- ``choice``: multiple choice; the computed answer, as text (``str(value)``), must be one of
  the choices.
- ``number``: a number, right within ``rel_tol`` / ``abs_tol`` (as ``math.isclose``); the
  learner may type the quiz's unit after it, and a ratio (unit ``x``) as ``1.2x`` or ``120%``.
- ``sequence``: whole numbers such as a shape or strides, e.g. ``1, 4``; right when equal.

A measured answer the measurement cannot pin to one choice (its noise, by the trust rule,
could carry it across a choice's edge) is given as a `Key`: the choice the measured value
falls in, every choice its noise allows, and why; each of those is graded right, and the
learner reads why. A number answer's `Key` gives the span of values its noise allows instead.
`labkit.claims.quiz_keys` builds keys from a comparison by the trust rule.

Until it is answered or skipped, a quiz holds back what the cells below it show
(`labkit.show.widgets.holdback`), so Run All does not print the answer under the question:
up to the next quiz, or the next ``holds`` cells.

If the answer callable raises, the widget shows the error message (the kernel carries on).
``Quiz.submit(text)`` is what the browser calls; tests and scripts can call it directly.

Answers are compared exactly as what they are: a sequence answer must hold whole numbers
(``(1.5, 4)`` is refused, never rounded to ``(1, 4)``), a number answer must be a finite
real number (not a bool), and tolerances are finite numbers >= 0. An answer given as an
iterator (it would be used up by the first look) or choices given as one string are
refused when the quiz is made. What the learner types is read by `labkit.show.widgets.parsing`.

DOM hooks, inside ``.lt-quiz``: ``input[type=radio][data-choice=TEXT]`` or
``input[data-role=answer]``, ``button[data-role=submit]``, ``button[data-role=skip]``, ``[data-role=result]`` with
``data-correct="true|false"``, ``[data-role=computed]`` and ``[data-role=error]``.
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import traitlets

from labkit.show.widgets import holdback, parsing, static_svg
from labkit.show.widgets.base import Widget

KINDS = ("choice", "number", "sequence")
# What a saved notebook shows in place of a quiz before its cell has run (JupyterLab and
# Notebook 7 draw no widget from an untrusted, unexecuted notebook): the two steps that make
# it live, named as the Run menu of both front ends names them.
RUN_ABOVE = "Run All Above Selected Cell"
STATIC_HOW = ("To answer: click this quiz, choose <b>Run ▸ " + RUN_ABOVE + "</b> (the cells "
              "above set up what the quiz needs), then press <b>Shift+Enter</b> to run this "
              "quiz's own cell. The quiz then appears here, ready for your prediction.")


class QuizError(ValueError):
    """A response or answer the quiz cannot grade; the message says what to do."""


class NotYetMeasured(ValueError):
    """Raised by a quiz's answer function whose measurement a cell below makes, before that
    cell has run; its message says which cell. The quiz then says 'not graded yet', not that
    the code failed (a learner who answers before running on is doing what the quiz asks)."""


# Units that make the answer a ratio: '1.2x', '1.2 x', '1.2×' and '120%' all mean 1.2 times.
RATIO_UNITS = ("x", "×")


def parse_number(text: str, unit: str = "") -> float:
    """Read the learner's number ('12', '0.5', '1e3'; '2,5', 'inf' and 'nan' are refused),
    with the quiz's unit after it if they type it ('3 shapes'); where the quiz asks a ratio
    (unit 'x'), '1.2x', '1.2 x', '1.2×' and '120%' are 1.2. Any other suffix is refused with
    a message that says what to type (never read as a different number)."""
    cleaned = text.strip() if isinstance(text, str) else text
    scale = 1.0
    if isinstance(cleaned, str) and unit.strip():
        unit = unit.strip()
        ratio = unit.lower() in RATIO_UNITS
        suffixes = RATIO_UNITS if ratio else (unit,)
        lowered = cleaned.lower()
        for suffix in suffixes:
            if lowered.endswith(suffix.lower()) and len(cleaned) > len(suffix):
                cleaned = cleaned[:-len(suffix)].rstrip()
                break
        else:
            if ratio and cleaned.endswith("%") and len(cleaned) > 1:
                cleaned, scale = cleaned[:-1].rstrip(), 0.01
    try:
        return parsing.parse_number(cleaned, "your prediction") * scale
    except parsing.InputError as err:
        if unit.strip():
            example = "1.2, 1.2x or 120%" if unit.strip().lower() in RATIO_UNITS else (
                f"12 or 12 {unit.strip()}")
            shown = text.strip() if isinstance(text, str) else text
            shown = shown if not isinstance(shown, str) or len(shown) <= 20 else shown[:17] + "..."
            raise QuizError(f"{shown!r} is not a number in {unit.strip()}; type e.g. {example}.") from None
        raise QuizError(str(err)) from None


def parse_sequence(text: str) -> tuple[int, ...]:
    """Read whole numbers separated by commas or spaces, with optional brackets: '(1, 4)'."""
    try:
        values = parsing.parse_int_list(text, "your prediction")
    except parsing.InputError as err:
        raise QuizError(f"{err} Type whole numbers, e.g. 1, 4.") from None
    if not values:
        raise QuizError("type at least one whole number, e.g. 1, 4.")
    return values


def whole_numbers(value: object) -> tuple[int, ...]:
    """A computed sequence answer as whole numbers, exactly; QuizError if any is not whole.

    Accepts ints, integral floats such as 4.0 and integer tensors' items; 1.5 is refused
    (rounding it would mark a wrong prediction right), as are bools and strings.
    """
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | Iterator) and not hasattr(
            value, "tolist"):
        raise QuizError(f"the computed answer {value!r} is not a list of whole numbers.")
    items = value.tolist() if hasattr(value, "tolist") else list(value)  # type: ignore[union-attr]
    if not isinstance(items, list):
        items = [items]
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, numbers.Real):
            raise QuizError(f"the computed answer {value!r} holds {item!r}, not a whole number.")
        if isinstance(item, numbers.Integral):
            out.append(int(item))
        elif math.isfinite(item) and float(item).is_integer():
            out.append(int(item))
        else:
            raise QuizError(f"the computed answer {value!r} holds {item!r}, which is not a whole "
                            "number; a sequence quiz compares whole numbers exactly.")
    return tuple(out)


def finite_number(value: object) -> float:
    """A computed number answer as a float; QuizError for bools, text, NaN and infinities."""
    if isinstance(value, bool) or isinstance(value, str | bytes):
        raise QuizError(f"the computed answer {value!r} is not a number.")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, RuntimeError):
        raise QuizError(f"the computed answer {value!r} is not a number.") from None
    if not math.isfinite(number):
        raise QuizError(f"the computed answer is {number}, which cannot be compared with a "
                        "prediction.")
    return number


@dataclass(frozen=True)
class Key:
    """A measured answer that its noise does not pin to one choice or one number.

    answer: what the measured value itself gives (a choice's text, or a number); accepted:
    for a choice quiz, every choice the noise allows (the answer among them); span: for a
    number quiz, the lowest and highest value the noise allows (the answer inside it); why:
    one sentence the learner reads after grading, saying why more than one answer is right.
    A quiz graded on a noisy measurement must not mark right only the side the noise landed
    on (review 2026-12-03e item 4: a 0.78x whose flagged timings could move it 14% was keyed
    'faster' against an 'about the same' choice 0.83x away)."""

    answer: object
    accepted: tuple[str, ...] = ()
    span: tuple[float, float] | None = None
    why: str = ""

    def choices_right(self) -> tuple[str, ...]:
        """The choices graded right: every choice the noise allows (in their order), the answer
        among them."""
        accepted = tuple(dict.fromkeys(self.accepted))
        return accepted if str(self.answer) in accepted else (str(self.answer), *accepted)


def _check_key(key: Key, kind: str, choices: Sequence[str]) -> None:
    """A key that names a choice the quiz does not offer, or a span that leaves out its own
    answer, is a bug in the code that computed it: QuizError, never a silent grade."""
    if kind == "choice":
        missing = [c for c in key.choices_right() if c not in choices]
        if missing:
            raise QuizError(f"the computed key names {missing}, which are not among the choices "
                            f"{list(choices)}, so the prediction cannot be graded.")
    elif kind == "number":
        number = finite_number(key.answer)
        if key.span is not None:
            low, high = (finite_number(v) for v in key.span)
            if not low <= number <= high:
                raise QuizError(f"the computed answer {number:.4g} lies outside its own span "
                                f"{low:.4g}-{high:.4g}.")
    else:
        raise QuizError("a sequence quiz compares whole numbers exactly: it takes no Key.")


def describe(value: object, kind: str, unit: str = "") -> str:
    """The computed answer as the learner will read it (a `Key`: with what else counts, and why)."""
    if isinstance(value, Key):
        text = describe(value.answer, kind, unit)
        if kind == "choice" and len(value.choices_right()) > 1:
            others = [c for c in value.choices_right() if c != str(value.answer)]
            text += f"; also right: {' / '.join(others)}"
        elif kind == "number" and value.span is not None:
            low, high = value.span
            text += f"; anything from {low:.3g} to {high:.3g}{(' ' + unit) if unit else ''} counts"
        return text + (f" ({value.why})" if value.why else "")
    if kind == "number":
        text = f"{finite_number(value):.4g}"
    elif kind == "sequence":
        text = "(" + ", ".join(str(v) for v in whole_numbers(value)) + ")"
    else:
        text = str(value)
    return f"{text} {unit}".strip()


def _check_tolerance(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(
            value) or value < 0:
        raise traitlets.TraitError(f"{name} must be a finite number >= 0, got {value!r}.")
    return float(value)


class Quiz(Widget):
    """Ask, let the learner predict, then compute the answer in the kernel and compare.

    ``Quiz("Strides of x.t()?", choices=["(4, 1)", "(1, 4)"], answer=lambda: str(x.t().stride()))``
    ``Quiz("Speed-up of .contiguous() first?", answer=measure_ratio, rel_tol=0.25, unit="x")``
    """

    js_parts = ("quiz.js",)

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
    received = traitlets.Int(0, help="the last submission's seq the kernel took up, sent before "
                                     "it computes the answer (which may take seconds)").tag(sync=True)
    answer_wait_ms = traitlets.Int(
        10_000, help="how long the browser waits for the kernel to take a submission up before "
                     "saying it has not (busy, or restarted since the quiz was drawn)").tag(sync=True)
    skipped = traitlets.Bool(False, help="the learner chose to see the answer unpredicted").tag(
        sync=True)

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
        holds: int | None = None,
    ) -> None:
        if not isinstance(question, str) or not question.strip():
            raise traitlets.TraitError("question must be non-empty text.")
        if answer is None:
            raise traitlets.TraitError(
                "give the answer: a value computed in the notebook, or a function that "
                "computes it when the learner submits (answer=lambda: ...).")
        if isinstance(answer, Iterator):
            raise traitlets.TraitError(
                f"answer is an iterator ({type(answer).__name__}): it would be used up the first "
                "time it is read. Give a tuple or list, or answer=lambda: ... that computes it.")
        if choices is not None and (isinstance(choices, str | bytes) or not isinstance(
                choices, Sequence)):
            raise traitlets.TraitError(
                f"choices must be a list of texts such as ['(4, 1)', '(1, 4)'], got {choices!r}"
                " (one string would make each character a choice).")
        choices = [str(c) for c in choices] if choices is not None else []
        if len(set(choices)) != len(choices):
            raise traitlets.TraitError(f"choices must differ from each other, got {choices}.")
        if kind is None:
            kind = "choice" if choices else (
                "sequence" if isinstance(answer, tuple | list) else "number")
        if kind not in KINDS:
            raise traitlets.TraitError(f"kind must be one of {KINDS}, got {kind!r}.")
        if kind == "choice" and len(choices) < 2:
            raise traitlets.TraitError("a multiple-choice quiz needs at least two choices.")
        if kind != "choice" and choices:
            raise traitlets.TraitError(f"choices are only for kind='choice', not {kind!r}.")
        if holds is not None and (isinstance(holds, bool) or not isinstance(holds, int)
                                  or holds < 0):
            raise traitlets.TraitError(f"holds must be a whole number of cells >= 0 (or None: up "
                                       f"to the next quiz), got {holds!r}.")
        rel_tol = _check_tolerance(rel_tol, "rel_tol")
        abs_tol = _check_tolerance(abs_tol, "abs_tol")
        if not callable(answer):
            try:  # a value known now is checked now, not when the learner submits
                if isinstance(answer, Key):
                    _check_key(answer, kind, choices)
                elif kind == "sequence":
                    whole_numbers(answer)
                elif kind == "number":
                    finite_number(answer)
                elif str(answer) not in choices:
                    raise QuizError(f"the answer {answer!r} is none of the choices {choices}.")
            except QuizError as err:
                raise traitlets.TraitError(str(err)) from None
        super().__init__(question=question, choices=choices, kind=kind, unit=unit,
                         explanation=explanation)
        self._answer = answer
        self.holds = holds  # how many cells after it the quiz holds back (holdback.py)
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

    def static_svg(self) -> str:
        """The picture a saved notebook shows where the widget cannot run (never the answer)."""
        how = repr(self).rsplit(" [", 1)[-1].rstrip("]")
        return static_svg.quiz_svg(self.question, how + " (run the notebook to answer)",
                                   list(self.choices))

    def static_html(self) -> str:
        """What a saved chapter shows before the quiz's cell runs: the question, how to answer
        and the steps that make the quiz live (never the answer). HTML that JupyterLab and
        Notebook 7 draw from an untrusted notebook (sanitised: no script, no form)."""
        if self.kind == "choice":
            how = "<ul>" + "".join(f"<li>{html.escape(c)}</li>" for c in self.choices) + "</ul>"
        elif self.kind == "sequence":
            how = "<p>Your prediction: whole numbers, e.g. 1, 4.</p>"
        else:
            how = "<p>Your prediction: a number" + (
                f" ({html.escape(self.unit)})" if self.unit else "") + ".</p>"
        return (f"<div class='lt-quiz-static'><p><b>Quiz:</b> {html.escape(self.question)}</p>"
                f"{how}<p><i>{STATIC_HOW}</i></p></div>")

    def _on_shown(self) -> None:
        """Displayed: from here on the quiz holds back what the cells below it show."""
        holdback.quiz_shown(self)

    @property
    def settled(self) -> bool:
        """Answered (graded at least once) or skipped: what it held back may be shown."""
        return self.attempts > 0 or self.skipped

    def skip(self) -> None:
        """Show what the quiz holds back without predicting (the learner's choice)."""
        with self.hold_sync():
            self.handled += 1
            self.skipped = True
        holdback.settled(self)

    def submit(self, response: str) -> bool | None:
        """Grade `response`: True/False, or None with `error` set when it cannot be graded."""
        with self.hold_sync():
            self.handled += 1  # tells the browser this submission is answered, even if unchanged
            if isinstance(response, bytes | bytearray):
                self.error = "the answer arrived as bytes; type it as text."
                return None
            self.response = str(response)[:parsing.MAX_TEXT + 1]
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
        holdback.settled(self)
        return self.correct

    def _parse(self, text: str) -> object:
        if self.kind == "choice":
            if text not in self.choices:
                raise QuizError("pick one of the choices first.")
            return text
        if not text.strip():
            raise QuizError("type your prediction first.")
        return parse_number(text, self.unit) if self.kind == "number" else parse_sequence(text)

    def _actual(self) -> object:
        """The answer, computed now by the notebook's code if it is a callable (once)."""
        if self._known:
            return self._known[0]
        value = self._answer
        if callable(value):
            try:
                value = value()
            except NameError as err:  # computed by a cell below that has not run yet
                raise QuizError(
                    f"the answer needs {err.name or 'a value'}, which is not defined yet (a cell "
                    "below this quiz makes it): run on (Shift+Enter), then submit again; your "
                    "prediction stays here.") from None
            except NotYetMeasured as err:  # measured by a cell below: not graded yet
                raise QuizError(f"not graded yet: {err}; your prediction stays here.") from None
            except Exception as err:  # the learner's code: report it, keep the kernel alive
                raise QuizError(
                    f"the code that computes the answer raised {type(err).__name__}: {err}"
                ) from None
        if isinstance(value, Iterator):  # a generator computed now: read it once, keep the values
            value = tuple(value)
        self._known.append(value)
        return value

    def _grade(self, predicted: object, actual: object) -> bool:
        if isinstance(actual, Key):
            try:
                _check_key(actual, self.kind, self.choices)
            except QuizError:
                self._known.clear()
                raise
            if self.kind == "choice":
                return predicted in actual.choices_right()
            if actual.span is not None:  # right within tolerance of the nearest allowed value
                low, high = (float(v) for v in actual.span)
                nearest = min(max(float(predicted), low), high)  # type: ignore[arg-type]
                return math.isclose(predicted, nearest, rel_tol=self.rel_tol,  # type: ignore[arg-type]
                                    abs_tol=self.abs_tol)
            actual = actual.answer
        if self.kind == "choice":
            if str(actual) not in self.choices:
                self._known.clear()
                raise QuizError(f"the code computed {actual!r}, which is none of the choices "
                                f"{self.choices}, so the prediction cannot be graded.")
            return str(actual) == predicted
        if self.kind == "number":
            number = finite_number(actual)
            return math.isclose(predicted, number, rel_tol=self.rel_tol,  # type: ignore[arg-type]
                                abs_tol=self.abs_tol)
        return whole_numbers(actual) == predicted

    @traitlets.observe("submission")
    def _on_submission(self, change: traitlets.Bunch) -> None:
        sent = change["new"]
        if sent:  # said at once, before any answer is computed: this kernel is alive and has it
            seq = sent.get("seq")
            self.received = seq if isinstance(seq, int) and not isinstance(seq, bool) else self.received + 1
        if sent and sent.get("skip"):
            self.skip()
        elif sent:
            response = sent.get("response", "")
            self.submit(response if isinstance(response, str) else str(response))
