"""LABKIT_SIZES=ci, the test suite's CPU size profile: smaller than the default on every size
that costs time, never applied to a GPU, and a misspelt profile is an error, not the default."""

import pytest

from labkit.core import env


@pytest.fixture
def cpu(monkeypatch):
    monkeypatch.setattr(env, "has_cuda", lambda: False)
    return monkeypatch


def test_unset_and_empty_mean_the_default_sizes(cpu):
    cpu.delenv(env.SIZES_ENV, raising=False)
    default = env.sizes()
    cpu.setenv(env.SIZES_ENV, "")
    assert env.size_profile() == "default" and env.sizes() == default


def test_the_ci_profile_shrinks_what_costs_time_and_still_fits(cpu):
    cpu.delenv(env.SIZES_ENV, raising=False)
    default = env.sizes()
    cpu.setenv(env.SIZES_ENV, "ci")
    ci = env.sizes()
    assert ci.device == "cpu"
    assert ci.cnn_image < default.cnn_image and ci.matmul_n < default.matmul_n
    assert ci.copy_bytes <= default.copy_bytes and ci.cnn_batch <= default.cnn_batch
    assert 2 * ci.copy_bytes <= ci.memory_budget_bytes == default.memory_budget_bytes
    assert ci.cache_sweep_max_bytes <= ci.memory_budget_bytes


def test_a_misspelt_profile_is_refused_by_name(cpu):
    cpu.setenv(env.SIZES_ENV, "tiny")
    with pytest.raises(ValueError, match=r"LABKIT_SIZES='tiny' is not a size profile.*'ci'"):
        env.sizes()


def test_a_gpu_refuses_the_ci_profile_and_keeps_its_sizes(monkeypatch):
    monkeypatch.setattr(env, "has_cuda", lambda: True)
    monkeypatch.setenv(env.SIZES_ENV, "ci")
    with pytest.raises(ValueError, match="a GPU keeps its sizes"):
        env.sizes()


def test_the_ci_profile_samples_each_timing_for_a_quarter_of_the_time(monkeypatch):
    from labkit.core import env

    monkeypatch.setenv(env.SIZES_ENV, "ci")
    monkeypatch.setattr(env, "has_cuda", lambda: False)
    assert env.timing_scale() == env.CI_TIMING_SCALE
    monkeypatch.setattr(env, "has_cuda", lambda: True)
    assert env.timing_scale() == 1.0  # a GPU's runs are references: never scaled
    monkeypatch.delenv(env.SIZES_ENV)
    monkeypatch.setattr(env, "has_cuda", lambda: False)
    assert env.timing_scale() == 1.0
