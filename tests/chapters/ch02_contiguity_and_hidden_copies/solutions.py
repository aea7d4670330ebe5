"""Chapter 02's exercises solved: a right solution of each (RIGHT) and the plausible
wrong ones (WRONG) that tests/exercises/test_every_exercise.py grades, with helpers the
chapter's own tests share."""

import math


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


def row_major_only(shape, stride, memory_format):  # forgets channels_last's own order
    return is_contiguous_in(shape, stride, "contiguous_format")


RIGHT = {"02.contiguous_bytes": contiguous_bytes, "02.is_contiguous_in": is_contiguous_in}
WRONG = {"02.contiguous_bytes": [forgets_size_one_dims], "02.is_contiguous_in": [row_major_only]}
