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
    # review 2026-12-03c item 5: the takeaway carries the cell's own conclusion, word for word
    for found in (allocator(0, 8, 1.17), allocator(16385, 3, 1.4), allocator(1, 2, 1.0, decides=False)):
        assert pitfalls.allocator_text(found).endswith(pitfalls.allocator_conclusion(found) + ".")
    assert pitfalls.allocator_conclusion(allocator(0, 8, 1.17)).endswith("so it is not the allocator's")


def test_the_ratio_note_says_the_ratio_is_the_median_of_per_round_ratios():
    """Review 2026-12-03c item 11: medians 15 ms and 15.9 ms (1.06x) beside a ratio of 0.98x."""
    from labkit.measure.timing import Comparison, Timing, VariantResult

    def variant(label, median, ratio):
        timing = Timing(label=label, device="cpu", mode="cold", times_s=(median,), median_s=median,
                        iqr_s=0.0, min_s=median, count=1)
        return VariantResult(timing, ratio, ratio, ratio, (ratio,))

    cmp = Comparison("a", 5, {"a": variant("a", 15e-3, 1.0), "b": variant("b", 15.9e-3, 0.98)}, ("a", "b"))
    note = pitfalls.ratio_note(cmp, "b")
    assert note.startswith("ratio: the median of the per-round ratios, not the ratio of the medians")
    assert "the medians give 1.06x, the rounds 0.98x" in note


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
