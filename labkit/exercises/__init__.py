"""Graded exercises: the learner writes a small function, labkit checks it against torch.

    from labkit import exercises
    ex = exercises.get("01.contiguous_strides")
    ex                      # the task, and a hint behind a fold
    def contiguous_strides(shape): ...
    ex.check(contiguous_strides)   # many random cases; the first failing one, or success
    ex.solution()                  # the reference solution, when you want it

Each exercise's reference is computed by torch itself wherever torch can answer (a
stride is what `torch.empty(shape).stride()` says), so the checker grades against the
real library, not against a second copy of the learner's arithmetic. `check` never
raises: a wrong answer, an exception in the learner's code or a stub that is not written
yet each come back as a report that says what happened and what to try.

Chapters keep their exercises in `labkit/chapters/chNN_name/exercises.py` (an `EXERCISES`
list); `grader` is the checker, `registry` finds them.
"""

from labkit.exercises.grader import (
    Exercise,
    ExerciseError,
    Failure,
    Report,
    Solution,
    same_value,
)
from labkit.exercises.registry import REGISTRY, for_chapter, get

__all__ = ["Exercise", "ExerciseError", "Failure", "Report", "Solution", "same_value",
           "REGISTRY", "for_chapter", "get"]
