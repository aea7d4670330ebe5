"""Chapter 05's exercises: a right solution passes, a plausible wrong one fails with its case."""

import pytest

from labkit import exercises

SIZES = {"uint8": 1, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


def batch_bytes(batch_size, channels, side, dtype):
    return batch_size * channels * side * side * SIZES[dtype]


def batch_bytes_forgets_itemsize(batch_size, channels, side, dtype):
    return batch_size * channels * side * side


def in_flight_bytes(num_workers, prefetch_factor, batch_bytes):
    if num_workers == 0:
        return 0
    return (num_workers * (prefetch_factor or 2) + 1) * batch_bytes


def in_flight_forgets_the_batch_in_use(num_workers, prefetch_factor, batch_bytes):
    return num_workers * (prefetch_factor or 2) * batch_bytes


def knee(throughputs, tolerance):
    best = max(throughputs.values())
    return min(w for w, t in throughputs.items() if t >= (1 - tolerance) * best)


def knee_takes_the_best(throughputs, tolerance):
    return max(throughputs, key=throughputs.get)


def knee_assumes_sorted(throughputs, tolerance):
    best = max(throughputs.values())
    for w, t in throughputs.items():
        if t >= (1 - tolerance) * best:
            return w
    return None


@pytest.mark.parametrize("exercise_id, right, wrongs", [
    ("05.batch_bytes", batch_bytes, [batch_bytes_forgets_itemsize]),
    ("05.in_flight_bytes", in_flight_bytes, [in_flight_forgets_the_batch_in_use]),
    ("05.knee", knee, [knee_takes_the_best, knee_assumes_sorted]),
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


def test_stub_is_not_written_yet():
    def stub(*args):
        raise NotImplementedError
    report = exercises.get("05.knee").check(stub)
    assert not report.passed and "not written yet" in report.note
