"""Chapter 04's GPU paths after its re-cut through the session's door (issue 37), in one short
job: every function the notebook now calls from `labkit/chapters/ch04_fusion/cases.py` where it
runs only on a GPU (Inductor's kernels, compile payback, the recompile sweep with Inductor, the
launch sweep and timeline into C18's evidence and verdict, reduce-overhead, the Triton add sweep
into C19's verdict, the fused chain, folding and stale weights with TF32, GradScaler on cuda).
The CPU run of the notebook cannot reach these lines; this job does, without re-recording
anything (nothing is written to results/). Each part in its own try, so one failure still
leaves the others' numbers; on a CPU the GPU-only parts record their errors.

    PYTHONPATH=. python3 benchmarks/gpu_04_recut.py --out DIR     # writes DIR/gpu_04_recut.json

About 2 minutes on an H200 host. What to look for, printed as each part ends: every part 'ok';
C18's verdict and its launch gap near the recorded 0.26 us; C19's verdict with Triton/PyTorch
near 1.0x at the largest size; the misaligned row near 36% of Triton's aligned speed; the fused
chain near 2x eager; the tables printed as they will show in the notebook.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from job_parts import part  # benchmarks/job_parts.py, beside this script

from labkit import claims
from labkit.chapters.ch04_fusion import cases, fused_kernels, fusion, launch_overhead
from labkit.core import env, results
from labkit.measure import bench, ceilings


class Judge:
    """What cases.judge_c18 / judge_c19 need of a chapter: where it runs, and judge-and-keep."""

    def __init__(self, on_gpu: bool) -> None:
        self.on_gpu = on_gpu
        self.verdicts: list[claims.Verdict] = []

    def judge(self, claim_id: str, evidence: dict, form: str = claims.SEED_FORM) -> claims.Verdict:
        verdict = claims.get(claim_id).judge(evidence, form=form)
        self.verdicts.append(verdict)
        return verdict


def chain(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.silu((x + y) * z)


def folding_and_stale(device: torch.device, sizes: env.ProblemSizes) -> dict:
    batch, image = cases.fold_size(sizes, True)
    model, folded, fused = cases.resnet50_folded_two_ways(device)
    images = torch.randn(batch, 3, image, image, device=device)
    with cases.full_float32(), torch.no_grad():
        out = model(images)
        errors = {"folded by hand": cases.folding.max_error(folded(images), out),
                  "torch.fx fuse": cases.folding.max_error(fused(images), out)}
    shown = cases.folding_table({"original": model, "folded by hand": folded, "torch.fx fuse": fused},
                                cases.folding.against_pytorch(model), errors)
    block = cases.folding.randomize_batchnorm(cases.resnet.Bottleneck(64, 16, stride=2), seed=3).eval().to(device)
    x = torch.randn(4, 64, 16, 16, device=device)
    block_folded = cases.folding.fold_model(block)
    with cases.quiet_dynamo():
        compiled = torch.compile(block, backend=cases.compile_backend(True))
        with torch.no_grad():
            compiled(x)
        cases.one_training_step(block, x)
        with torch.no_grad():
            updated = block(x)
            stale = {"folded copy": cases.folding.max_error(block_folded(x), updated),
                     "torch.compile (backend=inductor)": cases.folding.max_error(compiled(x), updated)}
    return {"folding": str(shown), "stale": str(cases.stale_table(stale, *cases.follow_tolerance(True)))}


def launches(device: torch.device, judge: Judge) -> dict:
    sweep = launch_overhead.measure(device=device)
    traces = cases.launch_traces(device)
    gaps = cases.gap_figures(traces)
    evidence, where = cases.c18_case(True, sweep.as_dict(), gaps, None, None,
                                     env.fingerprint().get("gpu_name", str(device)))
    verdict = cases.judge_c18(judge, evidence)
    return {"sweep": str(cases.sweep_table(sweep, True)), "gaps": str(cases.gaps_table(gaps)),
            "c18": str(cases.c18_table(evidence, where, verdict)),
            "quiz": cases.graph_gap_class(evidence, True, None),
            "takeaway": cases.launch_line(True, evidence, sweep), "verdict": verdict.to_dict()}


def triton_adds(device: torch.device, sizes: env.ProblemSizes, judge: Judge) -> dict:
    counts = fused_kernels.aligned_sizes(sizes.copy_bytes // 2 // 3)
    sweep = {"dtype": "float16", "rows": fused_kernels.add_sweep(counts)}
    verdict = cases.judge_c19(judge, sweep, ceilings.measure().copy_gbps,
                              fused_kernels.implied_bandwidth_gbps(28.9, torch.float16),
                              env.fingerprint().get("gpu_name", str(device)))
    misaligned = {"dtype": "float16", "rows": fused_kernels.add_sweep([counts[-1], counts[-1] - 1])}
    return {"sweep": str(cases.add_table(sweep)), "misaligned": str(cases.add_table(misaligned)),
            "quiz": cases.triton_add_class(sweep, True, None),
            "verdict": verdict.to_dict() if verdict else None}


def fused_chain(device: torch.device, sizes: env.ProblemSizes) -> dict:
    x, y, z = cases.chain_operands(sizes, device)
    paths = fused_kernels.paths(x, y, z)
    slow, fast = list(paths)
    moved = cases.chain_bytes(x.numel(), slow, fast)
    cmp = bench.compare(paths, baseline=slow, rounds=5, rep_ms=400, bytes_moved=moved)
    gain, spread, stated = cases.stated_gain(cmp, fast)
    return {"table": str(cases.chain_table(cmp, moved, stated)), "gain": gain,
            "takeaway": cases.chain_line(moved, cmp, spread, stated)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for gpu_04_recut.json")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    device, sizes = env.device(), env.sizes()
    judge = Judge(on_gpu=device.type == "cuda")
    record: dict = {"device": str(device), "gpu": env.fingerprint().get("gpu_name"),
                    "torch": torch.__version__, "triton": fused_kernels.triton_available()}
    started = time.perf_counter()
    part(record, "folding_and_stale", lambda: folding_and_stale(device, sizes))
    part(record, "inductor_kernels", lambda: cases.inductor_excerpts(cases.inductor_kernels(chain, device)))
    part(record, "compile_payback", lambda: str(cases.payback_table(
        cases.compile_payback(chain, cases.payback_elements(sizes), device))))
    part(record, "recompile_sweep", lambda: str(cases.recompile_table(cases.recompile_sweep(
        chain, fusion.recompile_limit(), device, cases.compile_backend(True)))))
    part(record, "launches_c18", lambda: launches(device, judge))
    part(record, "reduce_overhead", lambda: str(cases.comparison_table(
        cases.reduce_overhead(device), "eager, compiled and reduce-overhead")))
    part(record, "triton_adds_c19", lambda: triton_adds(device, sizes, judge))
    part(record, "fused_chain", lambda: fused_chain(device, sizes))
    part(record, "gradscaler", lambda: {"overflow": cases.overflow_outcome(device),
                                        "defaults": cases.scaler_defaults(cases.make_scaler(True))})
    record["seconds"] = time.perf_counter() - started
    out = args.out / "gpu_04_recut.json"
    out.write_text(json.dumps(results.to_jsonable(record), indent=1, default=str))
    failed = [name for name, value in record.items() if isinstance(value, dict) and value.get("ok") is False]
    print(f"wrote {out} in {record['seconds']:.0f} s; failed parts: {failed or 'none'}")


if __name__ == "__main__":
    main()
