"""The one trust rule (labkit.claims.trust): a flagged timing holds a verdict back only when
its uncertainty could carry the deciding ratio across the threshold."""

import math

import pytest

from labkit import claims
from labkit.claims import trust
from labkit.claims.trust import Decision, Flag


def test_margin_is_the_move_the_whole_interval_needs():
    assert Decision("x", 2.0, [1.8, 2.4], 1.5).margin() == pytest.approx(1.8 / 1.5 - 1)
    assert Decision("x", 0.31, [0.312, 0.313], 1.2).margin() == pytest.approx(1.2 / 0.313 - 1)
    assert Decision("x", 1.3, [1.1, 1.4], 1.2).margin() is None  # straddles: band says noise
    assert Decision("x", 0.0, None, 1.2).margin() == math.inf


def test_flags_read_todays_dicts_and_older_labels():
    new, old = trust.read_flags([{"timing": "a: b", "why": "noisy: IQR 14%", "spread": 0.14}, "c"])
    assert (new.timing, new.uncertainty) == ("a: b", 0.14)
    assert old.spread is None and old.uncertainty == trust.UNKNOWN_SPREAD


def test_each_outcome_of_the_rule_is_reachable():
    far = [Decision("1024 float16", 0.31, [0.3116, 0.3134], 1.2)]
    near = [Decision("4096 float16", 1.1, [1.08, 1.15], 1.2)]
    noisy = {"timing": "1024 float16: torch.matmul on the view", "why": "noisy", "spread": 0.14}
    assert trust.judge([], far).veto is None and trust.judge([], far).note == ""
    kept = trust.judge([noisy], far)
    assert kept.veto is None and "too small to carry" in kept.note and "14%" in kept.note
    # the nearest decision as its ratio and threshold, not a distance in percent (review 11)
    assert "1024 float16 ratio 0.31x" in kept.note and "against 1.2" in kept.note
    assert "from the threshold" not in kept.note
    held = trust.judge([dict(noisy, timing="4096 float16: x")], near)
    assert held.veto and "4096 float16: x" in held.veto and "which could carry" in held.veto and "% from" not in held.veto


def test_a_flag_applies_to_its_own_case_or_to_all_when_it_names_none():
    decisions = [Decision("a", 1.1, None, 1.2), Decision("b", 0.1, None, 1.2)]
    assert trust.judge([{"timing": "b: t", "spread": 0.5}], decisions).veto is None
    assert trust.judge([{"timing": "a: t", "spread": 0.5}], decisions).veto
    assert trust.judge([{"timing": "t", "spread": 0.5}], decisions).veto
    # a flag on a run that is shown but not judged is left out
    assert trust.judge([{"timing": "c: t", "spread": 0.5}], decisions, not_judged=["c"]).veto is None


def test_an_unrecorded_size_counts_as_a_factor_of_two():
    assert trust.judge(["t"], [Decision("", 26.9, [25.0, 28.0], 1.5)]).veto is None
    assert trust.judge(["t"], [Decision("", 2.5, None, 1.5)]).veto  # 67% < 100%


def test_the_rule_is_printed_on_every_timing_based_card_and_only_there():
    timing_based = [c for c in claims.REGISTRY.values() if c.timing_based]
    assert {"C2", "C5b", "C5c", "C6", "C9", "C10", "C7a", "C18", "C19", "C24"} <= {c.id for c in timing_based}
    for claim in timing_based:
        assert "trust rule" in claim._repr_html_() and "trust rule" in repr(claim)
        assert not claim.deterministic
    assert "trust rule" not in claims.get("C1")._repr_html_()
    assert "trust rule" not in repr(claims.get("C12"))


def test_a_claim_cannot_be_both_deterministic_and_timing_based():
    with pytest.raises(claims.ClaimError, match="deterministic or timing-based"):
        claims.Claim("X", "00", "s", "s", "s", deterministic=True, timing_based=True)


def test_flag_describes_its_size():
    assert "could be off by 14%" in Flag("t", "noisy", 0.14).describe()
    assert "taken as 100%" in Flag("t").describe()


def test_a_timing_flags_itself_with_its_size():
    """labkit.measure.timing's flag is what the rule reads: IQR/median, or the excess over 100%."""
    from labkit.measure.timing import Timing

    def timing(iqr, pct=None):
        return Timing(label="t", device="cpu", mode="cold", times_s=(1.0,), median_s=1.0, iqr_s=iqr,
                      min_s=1.0, count=1, pct_of_copy_ceiling=pct)
    assert timing(0.05).flag() is None and timing(0.05, 104.0).flag() is None  # at the ceiling
    assert timing(0.2).flag("1024")["spread"] == pytest.approx(0.2)
    assert timing(0.2).flag("1024")["timing"] == "1024: t"
    assert timing(0.05, 112.0).flag()["spread"] == pytest.approx(0.12)
    assert trust.read_flags([timing(0.2).flag()])[0].uncertainty == pytest.approx(0.2)


def test_the_rule_says_depends_in_the_claims_own_words():
    assert trust.DEPENDS == claims.DEPENDS
