"""Chapter 04's exercises: a right solution passes, a wrong one shows its first failing case."""

import numpy as np
import pytest
import torch

from labkit import exercises
from labkit.chapters.ch04_fusion import fused_kernels


def fit_right(counts, times):
    slope, intercept = np.polyfit(counts, times, 1)
    return intercept, slope


def fit_two_points(counts, times):  # the slope from the end points only
    slope = (times[-1] - times[0]) / (counts[-1] - counts[0])
    return times[0] - slope * counts[0], slope


def fold_right(weight, bias, mean, var, gamma, beta, eps):
    scale = gamma / torch.sqrt(var + eps)
    return weight * scale.reshape(-1, 1, 1, 1), (bias - mean) * scale + beta


def fold_without_eps(weight, bias, mean, var, gamma, beta, eps):
    scale = gamma / torch.sqrt(var)
    return weight * scale.reshape(-1, 1, 1, 1), (bias - mean) * scale + beta


def chain_eager(x, y, z):
    return torch.nn.functional.silu((x + y) * z)


def chain_blocked(x, y, z):
    return fused_kernels.chain_blocked(x, y, z, block=65536)


@pytest.mark.parametrize("exercise_id, right, wrong", [
    ("04.fit_launch_overhead", fit_right, fit_two_points),
    ("04.fold_batchnorm", fold_right, fold_without_eps),
    ("04.fused_chain", chain_blocked, chain_eager),
])
def test_right_passes_and_wrong_shows_a_case(exercise_id, right, wrong):
    exercise = exercises.get(exercise_id)
    assert exercise.check(right).passed, exercise.check(right).summary
    report = exercise.check(wrong)
    assert not report.passed and report.failure is not None
    assert f"case {report.failure.case_number}" in report.summary


def test_eager_chain_fails_on_memory_not_on_values():
    report = exercises.get("04.fused_chain").check(chain_eager)
    assert "x the output" in str(report.failure.got[1])


def test_stubs_and_bad_arguments_never_raise():
    def stub(*args):
        raise NotImplementedError

    for exercise in exercises.for_chapter("04_fusion"):
        assert "not written yet" in exercise.check(stub).summary
        assert "needs your function itself" in exercise.check(42).summary
    assert [e.id for e in exercises.for_chapter("04_fusion")] == [
        "04.fit_launch_overhead", "04.fold_batchnorm", "04.fused_chain"]
    assert "fuse_conv_bn_weights" in exercises.get("04.fold_batchnorm").solution().source


def test_not_written_yet_folds_the_hint_away():
    from labkit import exercises as registry

    exercise = registry.get("04.fused_chain")

    def stub(x, y, z):
        raise NotImplementedError

    report = exercise.check(stub)
    assert "not written yet" in report.summary and exercise.hint not in report.summary
    page = report._repr_html_()
    assert "<details><summary>hint</summary>" in page and "Slices are views" in page


def test_hints_do_not_spell_out_the_algorithm():
    from labkit import exercises as registry

    spelled = {"04.fused_chain": "torch.add(x[a:b]", "04.fit_launch_overhead": "cov(n, t)",
               "04.fold_batchnorm": "reshape it to [out, 1, 1, 1]"}
    for exercise_id, recipe in spelled.items():
        assert recipe not in registry.get(exercise_id).hint, exercise_id
