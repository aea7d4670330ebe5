"""labkit.session: a chapter opens by its key, and measures with the one retry policy."""

import pytest
import torch

from labkit import claims, session


def test_a_chapter_key_is_checked_with_a_clear_message():
    with pytest.raises(ValueError, match="known: 00_setup_check"):
        session.open("5_dataloader", announce=False)
    with pytest.raises(ValueError, match="no chapter '42_nowhere'"):
        session.open("42_nowhere", announce=False)
    with pytest.raises(ValueError, match="05_dataloader"):
        claims.for_chapter("05")


def test_chapter_measured_returns_flags_with_their_case_and_size(monkeypatch):
    """Chapter.measured measures again once, then hands the flags (case-prefixed) to evidence."""
    from labkit import session
    from labkit.measure import bench
    from labkit.measure.timing import Comparison, Timing, VariantResult

    noisy = Timing(label="slow", device="cpu", mode="cold", times_s=(1.0,), median_s=1.0,
                   iqr_s=0.3, min_s=1.0, count=1)
    calls = []

    def fake_compare(variants, baseline, **options):
        calls.append(options)
        return Comparison(baseline, 1, {"slow": VariantResult(noisy, 1.0, 1.0, 1.0, (1.0,))}, ("slow",))

    monkeypatch.setattr(bench, "compare", fake_compare)
    monkeypatch.delenv("LABKIT_SIZES", raising=False)  # a learner's run, not the suite's profile
    chapter = session.open("02_contiguity_and_hidden_copies", announce=False)
    _, flags = chapter.measured({"slow": lambda: None}, baseline="slow", case="2-D", rounds=3)
    assert len(calls) == 2 and "case" not in calls[0]  # measured again once; case is not bench's
    assert flags == [{"timing": "2-D: slow", "why": "noisy: IQR 30% of the median", "spread": 0.3}]
    if not torch.cuda.is_available():  # the suite's ci profile measures once, flags kept
        monkeypatch.setenv("LABKIT_SIZES", "ci")
        calls.clear()
        _, flags = chapter.measured({"slow": lambda: None}, baseline="slow", case="2-D", rounds=3)
        assert len(calls) == 1 and flags[0]["timing"] == "2-D: slow"
