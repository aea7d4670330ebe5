"""Chapter 02's exercises: a right solution passes, a plausible wrong one shows its first failing case."""

import math

import torch

from labkit import exercises


def contiguous_bytes(shape, stride, itemsize):
    expected = 1
    for size, step in zip(reversed(shape), reversed(stride), strict=True):
        if size != 1 and step != expected:
            return 0 if 0 in shape else math.prod(shape) * itemsize
        expected *= size
    return 0


def forgets_size_one_dims(shape, stride, itemsize):
    expected = 1
    for size, step in zip(reversed(shape), reversed(stride), strict=True):
        if step != expected:
            return math.prod(shape) * itemsize
        expected *= size
    return 0


def is_contiguous_in(shape, stride, memory_format):
    if 0 in shape:
        return True
    order = (3, 2, 1, 0) if memory_format == "contiguous_format" else (1, 3, 2, 0)
    expected = 1
    for dim in order:
        if shape[dim] != 1 and stride[dim] != expected:
            return False
        expected *= shape[dim]
    return True


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
