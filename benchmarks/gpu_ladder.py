"""Chapter 08's gated ResNet-50 ladder on the GPU machine, outside the notebook, in one command:

    python benchmarks/gpu_ladder.py --out OUTDIR [--budget 380] [--max-autotune] [--record]

Climbs the same ladder as notebooks/08_inference_ladder.py (labkit.chapters.ch08_inference_ladder.
experiment): strict float32 eager at batch 64 to fp16 + channels_last + folding + torch.compile
+ CUDA graphs + batch 256, then Inductor freezing past it, then each of channels_last, fp16 and
folding alone in eager and compiled-and-graphed (TF32 on in both). Every rung is guarded: one
that fails (a compile error) is reported and skipped; rungs past --budget seconds are skipped
so the run stays within ~8 minutes including compiles. The Inductor cache is a fresh temporary
directory, so every compile time printed is a cold compile.

Prints a short table (rung, images/s, spread, device-busy share, error against float32, kept)
and where the run's seconds went (by section: climb, beyond, interaction; by phase: prepare
with its compile, profile, device-time batches, timing; and per rung: what to cut when the
chapter runs long) and writes OUTDIR/gpu_ladder.json; with --record also results/<this machine>.json under
08_inference_ladder (the keys the notebook reads: ladder, and C24's verdict).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory for gpu_ladder.json")
    parser.add_argument("--budget", type=float, default=380.0,
                        help="seconds after which remaining rungs are skipped (default 380: a rung begun before it may compile ~60 s past it)")
    parser.add_argument("--max-autotune", action="store_true",
                        help="also climb Inductor's max-autotune (minutes of compiling)")
    parser.add_argument("--no-regimes", action="store_true", help="skip the eager/compiled table")
    parser.add_argument("--record", action="store_true", help="also record under results/")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="inductor-cold-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache  # before torch is imported: every compile is cold
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(cache, "triton"))

    import torch

    from labkit.chapters.ch08_inference_ladder import experiment, report, roofline, tables
    from labkit.claims.registry import get
    from labkit.core import env, results
    from labkit.measure import ceilings

    record: dict = {"torch": torch.__version__, "inductor_cache": cache, "argv": sys.argv[1:]}
    started = time.perf_counter()
    device = env.device()
    record["device"] = torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu"
    print(f"torch {torch.__version__} on {record['device']}", flush=True)
    try:
        ceiling = ceilings.measure()
        record["ceilings"] = ceiling.as_dict()
    except Exception as error:  # noqa: BLE001 -- the ladder still runs without them
        ceiling = None
        record["ceilings_error"] = f"{type(error).__name__}: {error}"
    try:
        result = experiment.run(device, beyond=True, max_autotune=args.max_autotune,
                                regimes=not args.no_regimes,
                                budget_s=max(1.0, args.budget - (time.perf_counter() - started)),
                                progress=lambda name: print(f"  measuring: {name}", flush=True))
    except Exception as error:  # noqa: BLE001 -- write what is known and say why
        record["error"] = f"{type(error).__name__}: {error}"
        record["traceback"] = traceback.format_exc()[-4000:]
        (out / "gpu_ladder.json").write_text(json.dumps(record, indent=1, default=str))
        print(record["traceback"], file=sys.stderr)
        return 1
    record.update(results.to_jsonable(result.record()))
    print("\nthe gated ladder:\n" + report.short(result.rungs))
    if result.beyond:
        print("\npast stock PyTorch (from the top rung):\n" + report.short(result.beyond))
        for r in result.beyond:
            if not r.error:
                print(f"  {r.name}: {r.images_per_s:,.0f} images/s, compile {r.compile_s:.1f} s (cold)")
    for regime, gains in result.regime_gains().items():
        print(f"\n{regime} (TF32 on): " + ", ".join(f"{k} {v:.2f}x" for k, v in gains.items()))
    added = tables.adds_up(result, result.regime_gains())
    if added:
        print(added)
    verdict = get("C24").judge(result.evidence(), form=result.plan.form)
    record["C24"] = verdict.to_dict()
    print(f"\nC24: {verdict.label} -- {verdict.reason}")
    best = result.best
    record["best"] = best.as_dict()
    per_image = roofline.flops_per_image(result.plan.image)
    record["flops_per_image"] = per_image
    if ceiling is not None:
        record["standing"] = roofline.standing(best.images_per_s, best.settings.math,
                                               ceiling.matmul_tflops, per_image)
        for what, value in record["standing"]:
            print(f"  {what}: {value}")
    top = result.top.images_per_s
    print(f"\ntop kept rung {result.top.name}: {top:,.0f} images/s "
          f"({'meets' if top >= 30_000 else 'BELOW'} 30,000); best {best.name}: "
          f"{best.images_per_s:,.0f}; whole run {time.perf_counter() - started:.0f} s")
    print("where the climb's time went (s): by section "
          + ", ".join(f"{k} {v:.1f}" for k, v in result.section_s.items())
          + "; by phase over all rungs " + ", ".join(f"{k} {v:.1f}" for k, v in result.phases().items()))
    for r in result.rungs + result.beyond + [x for s in result.regimes.values() for x in s.values()]:
        if r.phase_s:
            print(f"  {r.name}: " + ", ".join(f"{k} {v:.1f}" for k, v in r.phase_s.items())
                  + f" (compile {r.compile_s:.1f})")
    record["seconds"] = time.perf_counter() - started
    (out / "gpu_ladder.json").write_text(json.dumps(results.to_jsonable(record), indent=1, default=str))
    if args.record:
        results.record("08_inference_ladder", "ladder", result.record())
        from labkit.claims import tables

        tables.save([verdict], "08_inference_ladder")
        print(f"recorded under {results.target_path()}")
    print(f"wrote {out / 'gpu_ladder.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
