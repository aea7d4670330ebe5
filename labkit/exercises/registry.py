"""The registry: every chapter's exercises (`labkit/chapters/chNN_name/exercises.py`).

Chapters are discovered (`labkit.core.discovery`): a new chapter's `exercises.py` with an
`EXERCISES` list is found without editing anything here.
"""

from __future__ import annotations

from labkit.core import discovery
from labkit.exercises.grader import Exercise, ExerciseError


def _collect() -> dict[str, Exercise]:
    found: dict[str, Exercise] = {}
    for module in discovery.modules("exercises"):
        number = discovery.number(discovery.chapter_key(module.__name__))
        for exercise in module.EXERCISES:
            if exercise.id.split(".")[0] != number:  # the folder is the one key
                raise ExerciseError(f"exercise {exercise.id} is in chapter {number}'s folder: build its "
                                    f"id with discovery.exercise_id(__name__, name)")
            if exercise.id in found:
                raise ExerciseError(f"exercise {exercise.id} is defined twice")
            found[exercise.id] = exercise
    return found


REGISTRY: discovery.LazyRegistry[str, Exercise] = discovery.LazyRegistry(_collect)


def get(exercise_id: str) -> Exercise:
    """The exercise with this id ('01.contiguous_strides', ...)."""
    try:
        return REGISTRY[exercise_id]
    except (KeyError, TypeError):
        raise ExerciseError(f"no exercise {exercise_id!r}; known: {', '.join(REGISTRY)}") from None


def for_chapter(chapter: str) -> list[Exercise]:
    """A chapter's exercises, easiest first; chapter is its key ('01_strides_and_views')."""
    number = discovery.number(chapter)
    return sorted((e for e in REGISTRY.values() if e.id.split(".")[0] == number),
                  key=lambda e: e.level)
