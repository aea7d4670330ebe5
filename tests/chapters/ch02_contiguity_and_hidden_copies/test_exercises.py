"""Chapter 02's exercises beyond what every exercise is held to
(tests/exercises/test_every_exercise.py grades each with this chapter's solutions.py)."""


import torch

from labkit import exercises
from tests.chapters.ch02_contiguity_and_hidden_copies.solutions import (
    contiguous_bytes,
    forgets_size_one_dims,
    is_contiguous_in,
)


def test_contiguous_bytes():
    ex = exercises.get("02.contiguous_bytes")
    assert ex.check(contiguous_bytes).passed
    wrong = ex.check(forgets_size_one_dims)
    assert not wrong.passed and wrong.failure.expected == 0
    assert wrong.failure.arguments == ((2, 1, 3), (3, 99, 1), 2)


def test_is_contiguous_in():
    ex = exercises.get("02.is_contiguous_in")
    assert ex.check(is_contiguous_in).passed
    row_major_only = ex.check(lambda shape, stride, fmt: is_contiguous_in(shape, stride, "contiguous_format"))
    assert not row_major_only.passed and "channels_last" in str(row_major_only.failure.arguments)


def test_references_ask_torch():
    assert exercises.get("02.contiguous_bytes").reference((4, 3), (1, 4), 4) == 48
    x = torch.empty(2, 3, 4, 5).to(memory_format=torch.channels_last)
    assert exercises.get("02.is_contiguous_in").reference(tuple(x.shape), x.stride(), "channels_last")
    assert [e.level for e in exercises.for_chapter("02_contiguity_and_hidden_copies")] == [1, 2]
