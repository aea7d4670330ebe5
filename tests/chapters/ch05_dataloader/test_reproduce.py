"""The reproduce entry point: verdicts from a fresh measurement, the knee as plain values."""

import torch

from labkit.chapters.ch05_dataloader import reproduce


def test_measure_verdicts_judges_c26_everywhere_and_the_gpu_claims_only_on_a_gpu():
    verdicts = reproduce.measure_verdicts(quick=True)
    ids = [v.claim_id for v in verdicts]
    assert ids[0] == "C26" and verdicts[0].outcome == "refuted"
    assert ("C25" in ids) == torch.cuda.is_available()
