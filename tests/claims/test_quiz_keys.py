"""Quiz keys by the trust rule (review 2026-12-03e item 4): where the spread straddles a choice's
edge, or a flagged timing could carry the ratio across it, both sides are right; where the
measurement decides, only its own choice is."""

from __future__ import annotations

import pytest

from labkit.claims import quiz_keys
from labkit.measure.timing import Comparison, Timing, VariantResult
from labkit.show.widgets.quiz import Key

CHOICES = ("view faster", "about the same", "baseline faster")
EDGES = (1 / 1.2, 1.2)


def pick(ratio: float) -> str:
    return CHOICES[1] if EDGES[0] <= ratio <= EDGES[1] else CHOICES[0 if ratio < 1 else 2]


def flag(timing: str, spread: float) -> dict:
    return {"timing": timing, "why": "noisy", "spread": spread}


def test_a_flag_that_could_reach_the_edge_makes_both_sides_right():
    """The review's case: 0.78x, both timings 13-14% noisy, edge at 0.833x (its rounds there,
    0.63-0.91, even straddle the edge; here they do not, and the flags alone reach it)."""
    key = quiz_keys.choice_key(0.78, [0.75, 0.80], [flag("view", 0.14), flag("base", 0.13)],
                               choices=CHOICES, edges=EDGES, pick=pick, timings=("view", "base"))
    assert isinstance(key, Key) and key.answer == CHOICES[0]
    assert key.choices_right() == CHOICES[:2] and "view (noisy" in key.why


def test_a_spread_straddling_an_edge_makes_both_sides_right_without_flags():
    key = quiz_keys.choice_key(1.15, [1.1, 1.3], [], choices=CHOICES, edges=EDGES, pick=pick)
    assert isinstance(key, Key) and key.choices_right() == (CHOICES[1], CHOICES[2])
    assert "straddle 1.2x" in key.why


def test_a_clear_measurement_keys_one_choice_and_small_or_foreign_flags_do_not_widen_it():
    assert quiz_keys.choice_key(0.3, [0.28, 0.32], [flag("view", 0.1)], choices=CHOICES, edges=EDGES,
                                pick=pick, timings=("view", "base")) == CHOICES[0]
    # a flag on a timing the ratio is not built from says nothing about it
    assert quiz_keys.choice_key(0.78, [0.75, 0.8], [flag("other", 0.5)], choices=CHOICES, edges=EDGES,
                                pick=pick, timings=("view", "base")) == CHOICES[0]


def test_the_edges_must_fit_the_choices():
    with pytest.raises(ValueError, match="one ascending edge"):
        quiz_keys.choice_key(1.0, None, [], choices=CHOICES, edges=(1.2,), pick=pick)
    with pytest.raises(ValueError, match="none of the choices"):
        quiz_keys.choice_key(1.0, None, [], choices=CHOICES, edges=EDGES, pick=lambda r: "?")


def test_a_number_key_spans_the_rounds_widened_by_the_flags():
    key = quiz_keys.number_key(1.2, [1.1, 1.3], [flag("a", 0.1)], timings=("a", "b"))
    assert key.answer == 1.2 and key.span == pytest.approx((1.0, 1.43))
    assert quiz_keys.number_key(1.2, [1.1, 1.3], [], timings=("a",)).span == (1.1, 1.3)


def _timing(label: str, medians: tuple[float, ...]) -> Timing:
    ordered = sorted(medians)
    iqr = ordered[-1] - ordered[0]
    mid = ordered[len(ordered) // 2]
    return Timing(label=label, device="cpu", mode="hot", times_s=tuple(medians), median_s=mid,
                  iqr_s=iqr, min_s=ordered[0], count=len(medians))


def test_a_comparison_key_reads_its_two_timings_flags_and_can_invert():
    base = _timing("base", (1.0, 1.0, 1.0))
    view = _timing("view", (0.6, 0.8, 0.95))  # IQR 44% of its median: noisy
    comparison = Comparison("base", 3, {
        "base": VariantResult(base, 1.0, 1.0, 1.0, (1.0,) * 3, (1.0,) * 3),
        "view": VariantResult(view, 0.8, 0.7, 0.88, (0.6, 0.8, 0.95), (0.6, 0.8, 0.95))}, ("base", "view"))
    key = quiz_keys.comparison_key(comparison, "view", choices=CHOICES, edges=EDGES, pick=pick)
    assert isinstance(key, Key) and key.choices_right() == CHOICES[:2]
    inverse = quiz_keys.comparison_key(comparison, "view", inverse=True)
    assert inverse.answer == pytest.approx(1.25) and inverse.span[0] < 1 / 0.88 < inverse.span[1]
