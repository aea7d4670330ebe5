"""Chapter 04's verdict-deciding measurements (C18, C19), runnable outside the notebook.

`benchmarks/reproduce.py 04_fusion --runs 3` calls `measure_verdicts` in fresh processes and
compares the verdicts. It calls what the notebook calls, with the notebook's sizes: C18's
launch sweep and profiled replay (`launch_overhead.measure`, `cases.launch_traces`,
`cases.gap_figures`, `cases.c18_case`, `cases.judge_c18`) and C19's Triton add sweep
(`fused_kernels.add_sweep`, `cases.judge_c19`). Both claims are about a GPU (kernel launches,
a Triton kernel): without one, or without Triton for C19, there is nothing to measure and the
list is empty (the notebook, too, shows only the reference GPU's recorded verdicts then).
quick=True shrinks the sweeps for a smoke test.
"""

from __future__ import annotations

import logging

import torch

from labkit import claims, session
from labkit.chapters.ch04_fusion import cases, fused_kernels, launch_overhead
from labkit.chapters.ch04_fusion import claims as ch04_claims
from labkit.core import env
from labkit.measure import ceilings

KEY = "04_fusion"
CLAIM_IDS = ("C18", "C19")
log = logging.getLogger(__name__)


def measure_verdicts(quick: bool = False) -> list[claims.Verdict]:
    """C18 and C19 measured and judged here on a GPU, as the notebook does; [] without one."""
    chapter = session.open(KEY, announce=False)
    if not chapter.on_gpu:
        log.info("04_fusion: C18 and C19 need a GPU (kernel launches, a Triton kernel): nothing measured here")
        return []
    device = chapter.device
    name = env.fingerprint().get("gpu_name", str(device))
    verdicts = [_c18(chapter, device, name, quick)]
    if fused_kernels.triton_available():
        verdicts.append(_c19(chapter, device, name, quick))
    else:
        log.info("04_fusion: no Triton here: C19 not measured")
    return [v for v in verdicts if v is not None]


def deciding_ratios(verdict: claims.Verdict) -> dict[str, float]:
    """C18: the graph replay's launch gap (us; its threshold 0.5), eager's gap and the seed's
    contrast (eager gap / graph gap; its threshold 10), as the verdict judged them, with eager's
    cost per launch beside them; C19: Triton's speed over PyTorch's at the largest size."""
    ev = verdict.evidence
    if verdict.claim_id == "C18":
        ratio, _, eager_gap, how = ch04_claims.seed_contrast(ev)
        found = {"eager per launch (us)": float(ev["eager_per_launch_us"]),
                 ("eager gap, slope minus kernel (us)" if how.startswith("the fitted")
                  else "eager gap, timeline (us)"): eager_gap,
                 "eager gap / graph gap": ratio}
        if ev.get("graph_launch_gap_us") is not None:
            found["graph launch gap (us)"] = float(ev["graph_launch_gap_us"])
        if ev.get("graph_kernel_us") is not None:
            found["slope minus kernel (us)"] = float(ev["graph_per_node_us"]) - float(ev["graph_kernel_us"])
        return found
    if verdict.claim_id == "C19":
        return {"Triton / PyTorch": float(ev["triton_gbps"]) / float(ev["torch_gbps"])}
    return {}


def _c18(chapter: session.Chapter, device: torch.device, name: str, quick: bool) -> claims.Verdict | None:
    sweep = (launch_overhead.measure(counts=(1, 16, 64), device=device, rep_ms=10.0) if quick
             else launch_overhead.measure(device=device))
    gaps = cases.gap_figures(cases.launch_traces(device))
    evidence, _ = cases.c18_case(True, {**sweep.as_dict(), "measured": cases.SWEEP_FIRST}, gaps, None, None, name)
    return cases.judge_c18(chapter, evidence)


def _c19(chapter: session.Chapter, device: torch.device, name: str, quick: bool) -> claims.Verdict | None:
    counts = fused_kernels.aligned_sizes(chapter.sizes.copy_bytes // 2 // 3)
    sweep = {"dtype": "float16", "rows": fused_kernels.add_sweep(counts[-2:] if quick else counts)}
    return cases.judge_c19(chapter, sweep, ceilings.measure().copy_gbps,
                           fused_kernels.implied_bandwidth_gbps(28.9, torch.float16), name)
