"""Chapter 05's exercises: a right solution passes, a plausible wrong one fails with its case."""

import pytest

from labkit import exercises

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


@pytest.mark.parametrize("exercise_id, right, wrongs", [
    ("05.batch_bytes", batch_bytes, [batch_bytes_forgets_itemsize]),
    ("05.collated_stride", collated_stride, [collated_stride_of_the_sample_only]),
    ("05.channels_last_stride", channels_last_stride,
     [channels_last_on_any_rank, channels_last_swaps_h_and_w]),
])
def test_right_passes_and_wrong_fails(exercise_id, right, wrongs):
    exercise = exercises.get(exercise_id)
    assert exercise.check(right).passed
    for wrong in wrongs:
        report = exercise.check(wrong)
        assert not report.passed and report.failure is not None, wrong.__name__
        assert "fails" in report.summary


def test_chapter_05_has_three_exercises_rising_in_level():
    levels = [e.level for e in exercises.for_chapter("05_dataloader")]
    assert levels == [1, 2, 3]


def test_no_task_states_its_rule_and_references_ask_torch():
    import inspect

    from labkit.chapters.ch05_dataloader import exercises as ch05

    for exercise in ch05.EXERCISES:
        assert "torch" in inspect.getsource(exercise.reference)
        assert "labkit" not in inspect.getsource(exercise.reference)
    assert "C fastest" not in ch05.CHANNELS_LAST_STRIDE.task


def test_stub_is_not_written_yet():
    def stub(*args):
        raise NotImplementedError
    report = exercises.get("05.channels_last_stride").check(stub)
    assert not report.passed and "not written yet" in report.note
