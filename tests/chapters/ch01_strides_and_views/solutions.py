"""Chapter 01's exercises solved: a right solution of each (RIGHT) and the plausible
wrong ones (WRONG) that tests/exercises/test_every_exercise.py grades, with helpers the
chapter's own tests share."""



def contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def storage_index(shape, stride, offset, index):
    return offset + sum((i % n) * s for i, n, s in zip(index, shape, stride, strict=True))


def merged_stride(shape, stride, dim):
    if shape[dim + 1] == 1:
        return stride[dim]
    if shape[dim] == 1 or stride[dim] == stride[dim + 1] * shape[dim + 1]:
        return stride[dim + 1]
    return None


RIGHT = {
    "01.contiguous_strides": contiguous_strides,
    "01.storage_index": storage_index,
    "01.merged_stride": merged_stride,
}


def contiguous_strides_forgets_empty_dims(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


WRONG = {
    "01.contiguous_strides": [contiguous_strides_forgets_empty_dims],
    "01.storage_index": [
        lambda shape, stride, offset, index: sum(i * s for i, s in zip(index, stride, strict=True)),
        lambda shape, stride, offset, index: offset + sum(  # forgets that -1 means size - 1
            i * s for i, s in zip(index, stride, strict=True)),
    ],
    "01.merged_stride": [
        lambda shape, stride, dim: stride[dim + 1] if stride[dim] == stride[dim + 1] * shape[dim + 1]
        else None,  # forgets size-1 dims
        lambda shape, stride, dim: stride[dim + 1],  # assumes view always works
        lambda shape, stride, dim: None if stride[dim] < stride[dim + 1] else stride[dim + 1],  # "contiguity"
    ],
}
