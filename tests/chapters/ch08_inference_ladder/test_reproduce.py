"""The reproduce entry point climbs the gated ladder and returns C24 with its deciding numbers
(on a tiny network here, so the test runs in seconds on a CPU)."""

import functools

import pytest
import torch

from labkit.chapters.ch08_inference_ladder import experiment, reproduce


def tiny():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 10))


def test_measure_verdicts_returns_c24_from_the_gated_ladder(monkeypatch):
    monkeypatch.setattr(experiment, "run", functools.partial(experiment.run, model_factory=tiny))
    verdicts = reproduce.measure_verdicts(quick=True)
    assert [v.claim_id for v in verdicts] == ["C24"]
    evidence = verdicts[0].evidence
    assert evidence["top_gate_passed"] and evidence["baseline_batch"] == 4
    assert evidence["top_images_per_s"] > 0 and evidence["speedup_over_strict"] > 0
    assert verdicts[0].form.startswith("analogue: ") and "(the seed: A100)" in verdicts[0].form
    assert all(r["gate"]["rel_error"] <= r["gate"]["tolerance"]
               for r in evidence["rungs"] if r["gate"] and r["gate"]["passed"])
    ratios = reproduce.deciding_ratios(verdicts[0])
    steps = [r for r in evidence["rungs"] if r["after"] and not r["error"]]
    for r in steps:   # each step's gain and decision, compared across the fresh runs
        assert ratios[f"step {r['name']}: wall gain"] == r["gain"]
        assert ratios[f"step {r['name']}: kept (1) or not (0)"] == (1.0 if r["kept"] else 0.0)


def test_measure_numbers_climbs_once_and_measure_verdicts_judges_that_climb(monkeypatch):
    climbs, run = [], experiment.run

    def counted(*args, **kwargs):
        climbs.append(1)
        return run(*args, model_factory=tiny, **kwargs)
    monkeypatch.setattr(experiment, "run", counted)
    numbers = reproduce.measure_numbers(quick=True)
    verdicts = reproduce.measure_verdicts(quick=True)
    assert len(climbs) == 1   # the verdict is judged from the numbers' own climb
    rungs = verdicts[0].evidence["rungs"]
    assert numbers["kept"] == [r["name"] for r in rungs[1:] if r["kept"] and not r["error"]]
    assert set(numbers["steps"]) <= {r["name"] for r in rungs}
    reproduce.measure_verdicts(quick=True)   # nothing cached now: it climbs again
    assert len(climbs) == 2


def step(gain, kept):
    return {"kept": kept, "gain": gain}


def test_the_runs_must_keep_the_same_steps():
    same = [{"kept": ["TF32", "channels_last"],
             "steps": {"TF32": step(2.13, True), "cudnn.benchmark": step(1.0002, False),
                       "channels_last": step(1.21, True)}}] * 3
    said = reproduce.summarise_numbers(same)
    assert said["agree"] and "the same in 3 of 3 (2: TF32, channels_last)" in said["lines"][0]
    assert any("cudnn.benchmark: wall gain 1.00x to 1.00x, kept in 0 of 3" in line
               for line in said["lines"])
    # run 2 kept cudnn.benchmark (the H200's 1.0006x under the rule without a minimum gain)
    differ = [same[0], {"kept": ["TF32", "cudnn.benchmark", "channels_last"],
                        "steps": {"TF32": step(2.13, True), "cudnn.benchmark": step(1.0006, True),
                                  "channels_last": step(1.19, True)}}, same[0]]
    said = reproduce.summarise_numbers(differ)
    assert not said["agree"] and "NOT the same" in said["lines"][0]
    assert "run 2 kept 3 (TF32, cudnn.benchmark, channels_last)" in said["lines"][0]
    assert any("cudnn.benchmark: wall gain 1.00x to 1.00x, kept in 1 of 3" in line
               for line in said["lines"])
    with pytest.raises(ValueError, match="no runs"):
        reproduce.summarise_numbers([])
