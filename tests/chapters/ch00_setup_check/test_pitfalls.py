"""The hot/cold demo's size: inside the cache it is about, a whole number of pages; the
timeline quiz graded on the summary the chapter shows."""

from types import SimpleNamespace

import pytest

from labkit.chapters.ch00_setup_check import pitfalls


def test_cpu_demo_is_one_mib():
    assert pitfalls.hot_cold_source_bytes("cpu") == 2**20


def test_gpu_demo_is_a_quarter_of_the_l2(monkeypatch):
    from labkit.measure import conditions

    monkeypatch.setattr(conditions, "last_level_cache_bytes", lambda where: 50 * 2**20)
    size = pitfalls.hot_cold_source_bytes("cuda")
    assert size == 50 * 2**20 // 4 // 4096 * 4096 and size % 4096 == 0
    assert 2 * size <= 50 * 2**20 // 2  # source + destination: half the L2


def test_the_gemm_share_quiz_is_graded_on_the_timeline_shown():
    with pytest.raises(ValueError, match="run the training-step cell"):
        pitfalls.gemm_share_class(None)
    for share, k in ((0.1, 0), (0.5, 1), (0.9, 2), (0.0, 0)):
        summary = SimpleNamespace(kind_shares={"GEMM/conv": share} if share else {})
        assert pitfalls.gemm_share_class(summary) == pitfalls.GEMM_SHARE_CHOICES[k]
