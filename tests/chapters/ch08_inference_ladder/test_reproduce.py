"""The reproduce entry point climbs the gated ladder and returns C24 with its deciding numbers
(on a tiny network here, so the test runs in seconds on a CPU)."""

import functools

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
    assert verdicts[0].form.startswith("CPU analogue")
    assert all(r["gate"]["rel_error"] <= r["gate"]["tolerance"]
               for r in evidence["rungs"] if r["gate"] and r["gate"]["passed"])
    ratios = reproduce.deciding_ratios(verdicts[0])
    steps = [r for r in evidence["rungs"] if r["after"] and not r["error"]]
    for r in steps:   # each step's gain and decision, compared across the fresh runs
        assert ratios[f"step {r['name']}: wall gain"] == r["gain"]
        assert ratios[f"step {r['name']}: kept (1) or not (0)"] == (1.0 if r["kept"] else 0.0)
