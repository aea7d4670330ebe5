"""Chapter 01's exercises beyond what every exercise is held to
(tests/exercises/test_every_exercise.py grades each with this chapter's solutions.py)."""

import torch


def test_random_cases_cover_both_answers_of_merged_stride():
    """The level-3 cases must include views that work and views that raise, in fair shares."""
    import random

    from labkit.chapters.ch01_strides_and_views import exercises as ch01

    rng = random.Random(0)
    answers = [ch01.reference_merged_stride(*ch01._merged_stride_case(rng)) for _ in range(400)]
    share_raising = sum(a is None for a in answers) / len(answers)
    assert 0.15 < share_raising < 0.6


def test_references_agree_with_torch_on_the_chapters_examples():
    from labkit.chapters.ch01_strides_and_views import exercises as ch01

    y = torch.randn(2, 3, 4).transpose(0, 1)
    assert ch01.reference_merged_stride(tuple(y.shape), y.stride(), 0) is None  # view(-1, 4) fails
    assert ch01.reference_merged_stride((3, 2, 4), (4, 12, 1), 1) is None
    m = torch.arange(24).view(2, 3, 4)[1:, 1:, 2:]
    assert ch01.reference_storage_index(tuple(m.shape), m.stride(), m.storage_offset(), (0, 1, 1)) \
        == int(m[0, 1, 1])
