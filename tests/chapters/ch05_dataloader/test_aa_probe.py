"""The A/A control probed (issue 39, the 2026-12-04 19:13 H200 reproduce's run 3: two identical
loaders read 1.10x [1.02, 1.18]): identical loaders built as the knob table builds its rows,
a loader effect told apart from the rounds' noise, and the A/A across reproduce runs."""

from __future__ import annotations

from dataclasses import replace
from unittest import mock

import numpy as np
import pytest

from labkit.chapters.ch05_dataloader import knee_experiment, loader_sweep, reproduce

# The 19:13 H200 reproduce's A/A per-round ratios, run by run (knob_round_ratios)
H200_AA_ROUNDS = ([0.8985, 0.9227, 1.0450, 0.8402, 1.2354, 0.8191],
                  [1.1139, 0.8242, 1.1759, 1.0485, 1.0021, 0.9288],
                  [1.0294, 1.1026, 1.0163, 1.0878, 1.2048, 1.1561])


def test_identical_settings_are_the_table_s_first_two_rows_and_further_copies():
    rows = knee_experiment.identical_settings(8, 64, copies=4)
    table = knee_experiment.knob_settings(8, 64, on_gpu=False)
    assert rows[:2] == table[:2]  # the baseline and its A/A, exactly as the table builds them
    assert [r.label for r in rows] == ["w8 b64", "w8 b64 (A/A)", "w8 b64 (A/A 2)", "w8 b64 (A/A 3)"]
    # only the first copy is the table's control row (control_reach reads that one)
    assert [r.label.endswith(knee_experiment.A_A) for r in rows] == [False, True, False, False]
    # a copy changes nothing a loader is built from
    assert all(knee_experiment._changes(r, rows[0]) == set() for r in rows)
    small = knee_experiment.identical_settings(2, 16, copies=4)
    base = loader_sweep.make_loader(range(256), small[0])
    for r in small[1:]:
        other = loader_sweep.make_loader(range(256), r)
        assert (other.batch_size, other.num_workers, other.pin_memory, other.prefetch_factor,
                other.persistent_workers) == (base.batch_size, base.num_workers, base.pin_memory,
                                              base.prefetch_factor, base.persistent_workers)
    with pytest.raises(ValueError, match="replica"):
        loader_sweep.Setting(num_workers=1, replica=2)  # a copy's number needs control=True
    with pytest.raises(ValueError, match="at least 2"):
        knee_experiment.identical_settings(8, 64, copies=1)


def test_knob_sweep_times_given_settings_on_the_table_s_path():
    """The probe's loaders go through knob_sweep itself: the same windows, warm-up, balanced
    rounds and datasets as the table's rows."""
    bench = mock.Mock(worker_counts=(0, 1, 2), plan=mock.Mock(batch_size=16, steps=3, warmup_steps=2))
    bench.step.device.type = "cpu"
    rows = knee_experiment.identical_settings(2, 16, copies=3)
    with mock.patch.object(knee_experiment, "fits", return_value=True), \
            mock.patch.object(loader_sweep, "sweep") as sweep:
        knee_experiment.knob_sweep(bench, 2, settings=rows, budget_s=None)
    args, kwargs = sweep.call_args
    assert args[1] == rows and args[0] is bench.data and kwargs["uint8_dataset"] is bench.data_uint8
    assert kwargs["balanced"] and kwargs["whole_rounds"] and kwargs["windows"] == knee_experiment.KNOB_ROUNDS


def _sweep(rates: np.ndarray, labels: list[str]) -> loader_sweep.Sweep:
    """A sweep of identical loaders whose round r, loader j ran at rates[r, j] samples/s
    (one-step windows of a batch of 16), in the balanced order."""
    rounds, count = rates.shape
    settings = knee_experiment.identical_settings(1, 16, copies=count)
    runs = [loader_sweep.Run(s, (0.0,) * rounds, tuple(16 / rates[:, j]), 0.1, 1, (),
                             tuple(16 / rates[:, j]), 1, 1) for j, s in enumerate(settings)]
    orders = [[settings[i].label for i in loader_sweep.round_order(r, count, balanced=True)]
              for r in range(rounds)]
    return loader_sweep.Sweep(runs, rounds=rounds, rounds_asked=rounds, orders=orders)


def test_loader_effect_finds_a_planted_loader_difference_and_not_noise():
    rng = np.random.default_rng(1)
    drift = np.exp(rng.normal(0, 0.2, (8, 1)))  # the rounds' drift hits every loader alike
    noise = np.exp(rng.normal(0, 0.05, (8, 4)))
    same = 1000 * drift * noise
    quiet = knee_experiment.loader_effect(_sweep(same, []))
    assert quiet["loader_chance"] > 0.05 and "no difference" in knee_experiment.loader_effect_lines(quiet)[0]
    planted = same * np.array([1.0, 1.10, 1.0, 1.0])  # one copy 10% faster in every round
    found = knee_experiment.loader_effect(_sweep(planted, []))
    assert found["loader_chance"] < 0.01
    assert found["loader_means"]["w1 b16 (A/A)"] / quiet["loader_means"]["w1 b16 (A/A)"] == pytest.approx(1.10)
    assert set(found["by_position"]) == {0, 1, 2, 3} and "(start of the sweep)" in found["after"]
    assert "the loaders differ beyond the rounds' noise" in knee_experiment.loader_effect_lines(found)[0]


def test_the_h200_a_a_across_runs_is_no_more_than_its_rounds_predict():
    """Run 3's 1.10x [1.02, 1.18] beside runs 1 and 2 (0.95x, 1.01x): the three runs' means
    spread no more than six rounds of this noise predict (F about 2.1, a chance about 0.16),
    and run 3's interval was narrow because its own rounds spread less (sd 0.07 against
    0.15 and 0.13)."""
    effect = knee_experiment.runs_effect(H200_AA_ROUNDS)
    assert effect["f"] == pytest.approx(2.11, abs=0.02)
    assert 0.1 < effect["chance"] < 0.25
    assert [round(m, 2) for m in effect["means"]] == [0.95, 1.01, 1.10]
    assert "no run-level effect shown" in knee_experiment.runs_effect_text(effect)
    planted = [[r * 1.3 for r in H200_AA_ROUNDS[2]], *H200_AA_ROUNDS[:2]]
    assert "a run-level effect" in knee_experiment.runs_effect_text(knee_experiment.runs_effect(planted))
    assert knee_experiment.runs_effect(H200_AA_ROUNDS[:1]) is None


def test_reproduce_summary_says_the_a_a_across_runs():
    runs = [{"knob_round_ratios": {"w8 b64 (A/A)": list(r), "w8 b64 tuned": [1.4] * 6}} for r in H200_AA_ROUNDS]
    effect = reproduce.aa_runs_effect(runs)
    assert effect is not None and effect["f"] == pytest.approx(2.11, abs=0.02)
    assert reproduce.aa_runs_effect(runs[:1]) is None
    assert reproduce.aa_runs_effect([{}, {}]) is None


def test_a_control_copy_numbered_changes_only_the_label():
    base = loader_sweep.Setting(num_workers=2, batch_size=16)
    copy = replace(base, control=True, replica=3)
    assert copy.label == "w2 b16 (A/A 3)"
    assert {k: v for k, v in copy.as_dict().items() if k not in ("control", "replica")} == \
        {k: v for k, v in base.as_dict().items() if k not in ("control", "replica")}
