"""Chapter 05's exercises solved: a right solution of each (RIGHT) and the plausible
wrong ones (WRONG) that tests/exercises/test_every_exercise.py grades, with helpers the
chapter's own tests share."""



SIZES = {"uint8": 1, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


def batch_bytes(batch_size, channels, side, dtype):
    return batch_size * channels * side * side * SIZES[dtype]


def batch_bytes_forgets_itemsize(batch_size, channels, side, dtype):
    return batch_size * channels * side * side


def collated_stride(batch_size, sample_shape):
    strides, step = [], 1
    for size in reversed(sample_shape):
        strides.insert(0, step)
        step *= size
    return (step, *strides)


def collated_stride_of_the_sample_only(batch_size, sample_shape):
    return collated_stride(batch_size, sample_shape)[1:]


def channels_last_stride(shape):
    if len(shape) != 4:
        return None
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def channels_last_on_any_rank(shape):
    c, h, w = shape[-3:]
    return (h * w * c, 1, w * c, c)[-len(shape):] if len(shape) == 4 else (1, w * c, c)


def channels_last_swaps_h_and_w(shape):
    if len(shape) != 4:
        return None
    n, c, h, w = shape
    return (h * w * c, 1, c, h * c)


RIGHT = {"05.batch_bytes": batch_bytes, "05.collated_stride": collated_stride,
         "05.channels_last_stride": channels_last_stride}
WRONG = {"05.batch_bytes": [batch_bytes_forgets_itemsize],
         "05.collated_stride": [collated_stride_of_the_sample_only],
         "05.channels_last_stride": [channels_last_on_any_rank, channels_last_swaps_h_and_w]}
