"""Review 2026-12-04n item 4 (chapter 05's A/A control): the control is judged by its own
rule, its interval widened to CONTROL_LEVEL (Bonferroni over a re-record's CONTROL_RUNS A/As),
so a sound control fails one of the four at most ~5% of the time, where the knobs' 95% call
failed one of them up to 1 - 0.95^4 = 19%; the rule is printed; a control that fails its own
rule still voids the run's knob calls."""

from __future__ import annotations

import numpy as np
import pytest

from labkit.chapters.ch05_dataloader import knee_experiment, lesson, reproduce
from labkit.measure.intervals import t_quantile


def _row(label, ratio, low, high, decision, rounds=6):
    return {"label": label, "ratio": ratio, "ratio_low": low, "ratio_high": high, "decision": decision,
            "against": "w8 b64", "rounds": rounds, "level": 0.95, "margin": knee_experiment.KNOB_MARGIN}


def test_t_quantile_at_matches_the_tables():
    for df in (1, 2, 5, 9, 29):
        assert knee_experiment.t_quantile_at(df, 0.95) == pytest.approx(t_quantile(df), abs=2e-3)
    # df 1 is Cauchy: tan(pi (q - 1/2)) at q = 1 - 0.0125 / 2
    assert knee_experiment.t_quantile_at(1, 0.9875) == pytest.approx(np.tan(np.pi * (0.99375 - 0.5)), rel=1e-3)
    assert knee_experiment.CONTROL_LEVEL == pytest.approx(0.9875)


def test_run_3_s_a_a_holds_by_the_control_s_rule_and_a_large_one_still_fails():
    """The 19:13 H200 reproduce's run 3: the A/A 1.10x [1.02, 1.18] over 6 rounds, a gain at 95%;
    widened to 98.75% its low end is below 1x: the control holds, the knob calls stand, and the
    A/A's reach (x1.18) still bounds them. An A/A of 1.40x [1.25, 1.57] fails at 98.75% too."""
    held = [{"label": "w8 b64", "decision": "baseline"},
            _row("w8 b64 (A/A)", 1.10, 1.02, 1.18, knee_experiment.GAIN),
            _row("w8 b64 small", 1.15, 1.08, 1.22, knee_experiment.GAIN),
            _row("w8 b64 tuned", 1.51, 1.40, 1.62, knee_experiment.GAIN)]
    low, high = knee_experiment.control_interval(held[1])
    assert low < 1 < high and knee_experiment.control_decision(held[1]) == knee_experiment.NOT_RESOLVED
    calls = {r["label"]: r["decision"] for r in knee_experiment.controlled(held)}
    assert calls["w8 b64 (A/A)"] == knee_experiment.NOT_RESOLVED
    assert calls["w8 b64 small"] == knee_experiment.NOT_RESOLVED and calls["w8 b64 tuned"] == knee_experiment.GAIN
    aa = knee_experiment.controlled(held)[1]
    assert aa["called_at_95"] == knee_experiment.GAIN and "at the control's 98.75%" in aa["stated"]
    assert not lesson.control_failed(held)
    assert "a gain at 95% (a sound control: 1 run in 20), held at its 98.75% [0.99," in lesson.against_text(held[1])
    failed = [held[0], _row("w8 b64 (A/A)", 1.40, 1.25, 1.57, knee_experiment.GAIN), held[3]]
    assert knee_experiment.control_decision(failed[1]) == knee_experiment.GAIN and lesson.control_failed(failed)
    # no rounds recorded: the interval cannot be widened, so the 95% call stands (never looser)
    bare = {k: v for k, v in held[1].items() if k != "rounds"}
    assert knee_experiment.control_decision(bare) == knee_experiment.GAIN


def test_a_sound_control_fails_a_re_record_about_one_time_in_twenty():
    """Simulated: 6 rounds, per-round log sd 0.15, 4 A/As a re-record. The knobs' 95% call fails
    one of them about 1 - 0.95^4 of the time; the control's rule at most ~5%."""
    rng = np.random.default_rng(0)
    sweeps, rounds = 20000, 6
    logs = rng.normal(0.0, 0.15, size=(sweeps, rounds))
    mean, sd = logs.mean(axis=1), logs.std(axis=1, ddof=1) / np.sqrt(rounds)
    band = np.log1p(knee_experiment.KNOB_MARGIN)

    def called(level):
        half = knee_experiment.t_quantile_at(rounds - 1, level) * sd
        return ((mean - half > 0) & (mean > band)) | ((mean + half < 0) & (mean < -band))

    def any_of_four(calls):
        return float(calls.reshape(-1, knee_experiment.CONTROL_RUNS).any(axis=1).mean())

    assert 0.10 < any_of_four(called(0.95)) < 0.22  # the old rule: a sound control fails ~1 in 6
    assert any_of_four(called(knee_experiment.CONTROL_LEVEL)) < 0.055


def test_the_rule_is_printed_where_the_knob_rule_is_and_reproduce_reads_it():
    rule = knee_experiment.knob_rule(6)
    assert knee_experiment.control_rule() in rule
    assert "98.75% interval" in rule and "at most 5% of the time" in rule
    run = {"knob_ratios_are": reproduce.INTERVAL, "knob_rounds": 6,
           "knob_decisions": {"w8 b64 (A/A)": "gain", "w8 b64 tuned": "gain"},
           "knob_ratios": {"w8 b64 (A/A)": [1.10, 1.02, 1.18], "w8 b64 tuned": [1.51, 1.40, 1.62]},
           "knob_against": {"w8 b64 (A/A)": "w8 b64", "w8 b64 tuned": "w8 b64"}}
    assert reproduce.run_decisions(run) == {"w8 b64 (A/A)": "not resolved", "w8 b64 tuned": "gain"}
    line = reproduce.knob_line(run)
    assert "not resolved by the control's 98.75% interval (gain at 95%: about 1 run in 20)" in line
    assert "control failed" not in line
