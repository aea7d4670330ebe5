"""Chapter 08's timing-based verdict, re-measured: benchmarks/reproduce.py calls
`measure_verdicts()` once per fresh run and compares the runs.

It climbs the same gated ladder as the notebook (labkit.chapters.ch08_inference_ladder.experiment)
and judges C24 from it, with the deciding numbers in the verdict's evidence: the top gated
rung's images/s, its speed-ups over both float32 baselines with their interleaved spreads,
the batch of the top rung and of the baselines, and the top rung at the baselines' batch.
"""

from __future__ import annotations

from labkit.chapters.ch08_inference_ladder import experiment
from labkit.claims.core import Verdict
from labkit.claims.registry import get
from labkit.core import env


def measure_verdicts(quick: bool = False) -> list[Verdict]:
    """Climb the gated ladder on this machine's device and return C24's verdict.

    quick: fewer rounds and a shorter sampling budget, and no interaction table (the verdict
    does not depend on it); the ladder itself is the same.
    """
    device = env.device()
    result = experiment.run(device, quick=quick, beyond=False, regimes=False)
    evidence = result.evidence()
    evidence["seconds"] = result.seconds
    return [get("C24").judge(evidence, form=result.plan.form)]
