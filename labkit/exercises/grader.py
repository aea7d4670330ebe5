"""The grader: an `Exercise` checks a learner's function against torch on many random cases.

Split from the registry (`labkit.exercises.registry`) so that a chapter's exercises module
imports only this one, and the package is never met half-built.
"""

from __future__ import annotations

import html
import inspect
import random
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

SHOWN_CHARS = 300  # how much of a value a report shows before it cuts


class ExerciseError(ValueError):
    """An exercise was asked for that does not exist, or was defined wrongly."""


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + f"... ({len(text)} chars)"


def same_value(expected: object, got: object) -> bool:
    """Exact equality, with tuples and lists of the same items counted the same.

    Tensors compare with torch.equal after checking shape and dtype; floats exactly
    (an exercise that wants a tolerance passes its own `same`).
    """
    import torch

    if isinstance(expected, torch.Tensor) or isinstance(got, torch.Tensor):
        return (isinstance(expected, torch.Tensor) and isinstance(got, torch.Tensor)
                and expected.shape == got.shape and expected.dtype == got.dtype
                and bool(torch.equal(expected, got)))
    if isinstance(expected, (tuple, list)) and isinstance(got, (tuple, list)):
        return len(expected) == len(got) and all(same_value(a, b) for a, b in
                                                 zip(expected, got, strict=True))
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(got, bool) and isinstance(expected, bool) and expected == got
    return type(expected) is type(got) and expected == got or (
        isinstance(expected, int) and isinstance(got, int) and expected == got)


@dataclass(frozen=True)
class Failure:
    """The first case a learner's function got wrong."""

    case_number: int
    arguments: tuple
    expected: object
    got: object = None
    raised: str = ""  # 'TypeError: ...' when the learner's code raised


@dataclass(frozen=True)
class Report:
    """What `Exercise.check` found: passed, not written yet, or the first failing case."""

    exercise_id: str
    cases_run: int
    passed: bool
    failure: Failure | None = None
    note: str = ""  # 'not written yet', or why the check could not run
    hint: str = ""  # shown folded (HTML <details>), never spelled out in the summary

    @property
    def summary(self) -> str:
        """One line: what happened."""
        if self.passed:
            return f"{self.exercise_id}: all {self.cases_run} random cases agree with torch. Well done."
        if self.note:
            return f"{self.exercise_id}: {self.note}"
        f = self.failure
        assert f is not None
        got = f"raised {f.raised}" if f.raised else f"returned {_shown(f.got)}"
        return (f"{self.exercise_id}: case {f.case_number} of {self.cases_run} fails: "
                f"arguments {_shown(f.arguments)}, torch says {_shown(f.expected)}, your function {got}")

    def __repr__(self) -> str:
        """The summary; where a hint waits, where to find it (the HTML folds it under the line)."""
        waiting = self.hint and not self.passed
        return self.summary + (" Hint: print the exercise's .hint when you want it." if waiting else "")

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else ("#9a6700" if self.note else "#cf222e")
        mark = "passed" if self.passed else ("not yet" if self.note else "first failing case")
        folded = (f"<details><summary>hint</summary>{html.escape(self.hint)}</details>"
                  if self.hint and not self.passed else "")
        return (f"<div class='lt-exercise-report' data-passed='{str(self.passed).lower()}'>"
                f"<b style='color:{colour}'>{html.escape(mark)}</b> "
                f"<span>{html.escape(self.summary)}</span>{folded}</div>")


@dataclass(frozen=True)
class Exercise:
    """One graded exercise.

    make_case(rng) returns the arguments of one random case (a tuple); reference(*args)
    is the answer torch gives. edge_cases run first, so the cases people get wrong
    (empty dims, size 1, ...) are always tried.
    """

    id: str
    title: str
    task: str
    reference: Callable[..., object]
    make_case: Callable[[random.Random], tuple]
    hint: str
    edge_cases: Sequence[tuple] = ()
    cases: int = 200
    same: Callable[[object, object], bool] = same_value
    level: int = 1  # 1, 2, 3: rising difficulty within a chapter
    notes: str = field(default="", repr=False)

    def check(self, fn: object, seed: int = 0) -> Report:
        """Run fn on the edge cases and `cases` random cases; report the first disagreement."""
        if not callable(fn):
            return Report(self.id, 0, False, note=f"check() needs your function itself, got "
                          f"{type(fn).__name__}: pass the name without calling it, e.g. check(my_fn)")
        rng = random.Random(seed)
        all_cases = [tuple(c) for c in self.edge_cases] + [tuple(self.make_case(rng))
                                                           for _ in range(self.cases)]
        for number, args in enumerate(all_cases, start=1):
            expected = self.reference(*args)
            try:
                got = fn(*args)
            except NotImplementedError:
                return Report(self.id, number, False, note="not written yet: replace "
                              "`raise NotImplementedError` with your code, then check again.",
                              hint=self.hint)
            except Exception as error:  # the learner's bug is reported, never raised
                return Report(self.id, len(all_cases), False,
                              Failure(number, args, expected, raised=f"{type(error).__name__}: {error}"))
            if not self.same(expected, got):
                return Report(self.id, len(all_cases), False, Failure(number, args, expected, got))
        return Report(self.id, len(all_cases), True)

    def solution(self) -> Solution:
        """The reference solution's source, to read once you have tried."""
        try:
            source = textwrap.dedent(inspect.getsource(self.reference))
        except (OSError, TypeError):
            source = f"{self.reference!r} (source not available)"
        return Solution(self.id, source)

    def _repr_html_(self) -> str:
        return (f"<div class='lt-exercise' data-exercise='{html.escape(self.id)}'>"
                f"<b>Exercise {html.escape(self.id)} (level {self.level}): {html.escape(self.title)}</b>"
                f"<p>{html.escape(self.task)}</p>"
                f"<details><summary>hint</summary>{html.escape(self.hint)}</details></div>")

    def __repr__(self) -> str:
        return f"Exercise {self.id} (level {self.level}): {self.title}\n{self.task}"


@dataclass(frozen=True)
class Solution:
    """A reference solution, folded away so it is read only on purpose."""

    exercise_id: str
    source: str

    def __repr__(self) -> str:
        return self.source

    def _repr_html_(self) -> str:
        return (f"<details><summary>reference solution for {html.escape(self.exercise_id)}</summary>"
                f"<pre>{html.escape(self.source)}</pre></details>")
