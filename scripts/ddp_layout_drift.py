"""Chapter 06's DDP run as a torchrun script: the same worker code the notebook launches, for
several GPUs or several machines.

    # one machine, one process per GPU (or 2 processes over gloo on a CPU):
    torchrun --standalone --nproc-per-node=gpu scripts/ddp_layout_drift.py --out ddp.json
    torchrun --standalone --nproc-per-node=2 scripts/ddp_layout_drift.py --out ddp.json   # CPU
    # two machines, 8 GPUs each (run on both, --node-rank 0 and 1):
    torchrun --nnodes=2 --nproc-per-node=8 --node-rank=0 --rdzv-backend=c10d \\
        --rdzv-endpoint=HOST0:29500 scripts/ddp_layout_drift.py --out ddp.json

Rank 0 writes every rank's reports to --out (JSON) and prints one line per variant and the
verdicts of C14a, C14b and C14c. NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and friends are set here before NCCL
starts, unless the environment already sets them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout without installing

from labkit.chapters.ch06_ddp_layout_drift import ddp_launch, ddp_worker  # noqa: E402


def default_config(on_gpu: bool) -> dict:
    """The notebook's sizes and precision: on GPUs a bigger batch and model in fp16 with GradScaler."""
    if on_gpu:
        return {"batch": 64, "image": 64, "width": 64, "timed_steps": 30, "amp": "fp16"}  # the seed's AMP
    return {"batch": 8, "image": 32, "width": 16, "timed_steps": 10}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file for rank 0's gathered results")
    parser.add_argument("--config", default="{}",
                        help="JSON object of labkit.chapters.ch06_ddp_layout_drift.ddp_worker.WorkerConfig fields, e.g. '{\"timed_steps\": 50}'")
    args = parser.parse_args(argv)
    if "RANK" not in os.environ:
        parser.error("run me under torchrun (it sets RANK, WORLD_SIZE, MASTER_ADDR ...); see --help")
    for key, value in ddp_launch.NO_MULTICAST_ENV.items():
        os.environ.setdefault(key, value)
    import torch

    config = ddp_worker.WorkerConfig.from_dict({**default_config(torch.cuda.is_available()),
                                                **json.loads(args.config)})
    result = ddp_worker.run_rank(config)
    if result is None:
        return 0
    Path(args.out).write_text(json.dumps(result, indent=1))
    for row in ddp_launch.variant_summary(result):
        timing = f"{row['median_step_s'] * 1e3:.2f} ms" if row["median_step_s"] else "-"
        print(f"{row['name']:<22} warnings step0={row['warnings_step0']} after={row['warnings_after_step0']} "
              f"identical={row['params_identical']} wrong_grads={row['wrong_grads'] or '-'} "
              f"step={timing} error={row['error'] or '-'}")
    from labkit import claims
    from labkit.chapters.ch06_ddp_layout_drift import claims as ch06

    evidence = ch06.evidence_from_run(result)
    form = f"torchrun: {result['backend']}, {result['world_size']} ranks"
    for claim in ch06.CLAIMS:
        verdict = claim.judge(evidence, form=form)
        print(f"{claim.id} {verdict.label}: {verdict.reason}")
    if evidence.get("seed_hook_fitted"):
        nearest = claims.get("C14c").judge(ch06.nearest_form_evidence(evidence), form=ch06.NEAREST_HOOK_FORM)
        print(f"C14c [{ch06.NEAREST_HOOK_FORM}] {nearest.label}: {nearest.reason}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
