"""Chapter 05's entry point for the reproduce check (benchmarks/reproduce.py 05 --runs 3).

measure_verdicts() judges every claim this machine can judge, in a fresh measurement each
call: C26 everywhere (deterministic), C25, C13 and C23 only with a CUDA GPU. measure_knee()
is the chapter's central number, the knee of the worker sweep (throughput from total time),
with its arithmetic: the check is the same knee within one step of the sweep in every run.
"""

from __future__ import annotations

import warnings

import torch

from labkit import claims
from labkit.chapters.ch05_dataloader import channels_last_probe, h2d_copies, knee_experiment
from labkit.claims.core import Verdict

C25_BYTES = 256 * 2**20


def _gpu_verdicts(quick: bool) -> list[Verdict]:
    rows = [vars(r) for r in h2d_copies.call_return_times(C25_BYTES, repeats=3 if quick else 7)]
    out = [claims.get("C25").judge(h2d_copies.c25_evidence(rows, C25_BYTES), form=claims.SEED_FORM)]
    probe = h2d_copies.pin_memory_device_probe()
    out.append(claims.get("C13").judge(probe["pin_memory_device"], form=claims.SEED_FORM))
    shape = h2d_copies.SEED_BATCH_SHAPE
    pageable = torch.randn(shape)
    source = torch.utils.data.TensorDataset(pageable)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (pinned,) = next(iter(torch.utils.data.DataLoader(source, batch_size=shape[0], pin_memory=True)))
        (with_device,) = next(iter(torch.utils.data.DataLoader(
            source, batch_size=shape[0], pin_memory=True, pin_memory_device="cuda:0")))
    comparison = h2d_copies.compare_sources({"pageable": pageable, "pinned": pinned,
                                             "pin_memory_device": with_device})
    out.append(claims.get("C23").judge({
        "pageable_gbps": comparison["pageable"].timing.gbps,
        "pinned_gbps": comparison["pinned"].timing.gbps,
        "pin_memory_device_gbps": comparison["pin_memory_device"].timing.gbps,
        "pinned_speedup_iqr": h2d_copies.speedup_between(comparison, "pageable", "pinned"),
        "pin_memory_device_speedup_iqr": h2d_copies.speedup_between(comparison, "pinned",
                                                                    "pin_memory_device"),
        "transfer_bytes": torch.Size(shape).numel() * 4,
        "noisy": [label for label, v in comparison.variants.items() if v.timing.noisy]},
        form=claims.SEED_FORM))
    return out


def measure_verdicts(quick: bool = False) -> list[Verdict]:
    """Fresh verdicts for chapter 05's claims that this machine can judge."""
    verdicts = [claims.get("C26").judge(channels_last_probe.probe(), form=claims.SEED_FORM)]
    if torch.cuda.is_available():
        verdicts += _gpu_verdicts(quick)
    return verdicts


def measure_knee(quick: bool = False) -> dict:
    """A fresh knee: {'knee_workers', 'worker_counts', 'knee', 'rows', arithmetic, 'noise'}."""
    return knee_experiment.measure_knee(quick)
