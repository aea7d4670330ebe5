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


def allocator(default_faults, kept_faults, ratio, decides=True):
    return {"note": "glibc malloc", "default_faults_per_call": default_faults,
            "kept_faults_per_call": kept_faults, "default_over_kept": ratio, "allocator_decides": decides}


def test_mistake_4_blames_the_allocator_only_where_the_faults_follow_the_time():
    # the H200 host: the default run 1.56x slower yet faulting no more (0 against 0.69 per call)
    h200 = pitfalls.allocator_text(allocator(0, 0.688, 1.56))
    assert "changes the result" not in h200 and "not the allocator's" in h200
    cpu = pitfalls.allocator_text(allocator(16385, 3, 1.4))
    assert "slower one faulted more: here the allocator changes the result" in cpu
    assert "changes the result" in pitfalls.allocator_text(allocator(3, 16385, 0.7))
    assert "within the two timings' spread" in pitfalls.allocator_text(allocator(16385, 3, 1.4, decides=False))


def test_a_ratio_of_one_outside_the_noise_is_the_same_time_in_practice():
    row = {"ratio": 1.001, "ratio_q25": 0.999, "ratio_q75": 1.003, "within_noise": False}
    assert pitfalls.same_time_text(row).endswith("within 2%: the same time in practice")
    assert pitfalls.same_time_text({**row, "within_noise": True}) == "within the noise"
    assert pitfalls.same_time_text({**row, "ratio_q75": 1.05}) == "outside the noise"


def test_the_first_call_is_set_against_a_steady_state_on_its_own_clock():
    import torch

    work = torch.ones(1 << 16)
    row = pitfalls.first_call_vs_steady(lambda: work.sum(), "a sum", device="cpu", threads=1, wall_calls=5)
    assert row["steady_wall_s"] > 0
    assert row["first_over_steady_wall"] == pytest.approx(row["first_call_s"] / row["steady_wall_s"])
