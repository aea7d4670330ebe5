"""Chapter 08's numerics gate on the GPU machine, shown to bite, in one command (~2-3 minutes):

    python3 benchmarks/gpu_gate.py --out OUTDIR [--no-compile] [--budget 300]

At the chapter's GPU sizes (ResNet-50, 224 px, batch 64) on the calibrated reference model
(labkit.chapters.ch08_inference_ladder.numerics), every rung goes through ladder.prepare,
the path the climb takes, and is gated against strict float32 eager on the gate's images
copied into the rung's own input buffer:

- honest rungs (gate_audit.gpu_honest, gpu_compiled): TF32, channels_last, folding, fp16
  weights and autocast, bf16 weights, strict float32 as a CUDA graph, the fp16 +
  channels_last + folding rung eager, as a CUDA graph, and compiled (Inductor default) +
  CUDA graph, last (one cold compile); each must pass under its own math;
- wrong rungs (gate_audit.gpu_mutations): batch-mean logits, a stale input buffer (a call
  caching its first output, eager and on a real CUDA graph), one BatchNorm's bias zeroed,
  one folded convolution's bias dropped, one convolution's weight x1.1, and the last two on
  the fp16 top rung; each must be refused under the float32, TF32 and float16 tolerances.

Also records how much the logits depend on the image before calibration (the old model:
made-up BatchNorm statistics, white-noise images) and after. Writes OUTDIR/gpu_gate.json
with every rung's errors and verdicts, prints a table and the H200 line to add to
numerics.MEASURED (the honest rungs' largest errors per math); exits 1 if any rung was not
as expected (an honest rung refused, a wrong one passed). --device cpu --image 32 --batch 4
runs the CPU's cases instead (a smoke test of the script).
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


def spread_before_calibration(device: object, image: int) -> dict:
    """The old reference: seeded ResNet-50, made-up BatchNorm statistics, white-noise images."""
    import torch

    from labkit.chapters.ch08_inference_ladder import ladder, numerics

    model = ladder.seeded_model().to(device)
    images = torch.randn(ladder.GATE_IMAGES, 3, image, image,
                         generator=torch.Generator().manual_seed(numerics.GATE_SEED)).to(device)
    with ladder.switches(ladder.STRICT_FP32), torch.no_grad():
        logits = model(images).float().cpu()
    return describe(logits)


def describe(logits: object) -> dict:
    """Spread over images and over classes, their ratio, and distinct top-1 classes."""
    from labkit.chapters.ch08_inference_ladder import numerics

    return {"over_images": float(logits.std(dim=0).mean()), "over_classes": float(logits.std(dim=1).mean()),
            "input_spread": numerics.input_spread(logits),
            "distinct_top1": int(logits.argmax(1).unique().numel()), "images": int(logits.shape[0])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory for gpu_gate.json")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile rungs")
    parser.add_argument("--budget", type=float, default=300.0,
                        help="seconds after which remaining cases are skipped (default 300)")
    parser.add_argument("--device", default=None, help="default: cuda if there is one")
    parser.add_argument("--image", type=int, default=None, help="default: the chapter's size")
    parser.add_argument("--batch", type=int, default=None, help="default: the chapter's batch")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="inductor-gate-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache  # before torch is imported
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(cache, "triton"))

    import torch

    from labkit.chapters.ch08_inference_ladder import experiment, gate_audit, ladder, numerics

    started = time.perf_counter()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    on_gpu = device.type == "cuda"
    plan = experiment.plan(on_gpu)
    image, batch = args.image or plan.image, args.batch or plan.batch
    name = torch.cuda.get_device_name(device) if on_gpu else "cpu"
    print(f"torch {torch.__version__} on {name}: ResNet-50 at {image} px, batch {batch}", flush=True)
    record: dict = {"torch": torch.__version__, "device": name, "image": image, "batch": batch,
                    "argv": sys.argv[1:], "tolerances": numerics.TOLERANCES,
                    "centred_tolerances": numerics.CENTRED_TOLERANCES, "headroom": numerics.HEADROOM,
                    "measured_before": numerics.MEASURED, "rows": []}
    path = out / "gpu_gate.json"
    exit_code = 0
    try:
        record["before_calibration"] = spread_before_calibration(device, image)
        reference = ladder.reference_logits(device, image)
        record["after_calibration"] = describe(reference)
        print(f"logits' spread over images / over classes: before calibration "
              f"{record['before_calibration']['over_images']:.3g} / "
              f"{record['before_calibration']['over_classes']:.3g} "
              f"({record['before_calibration']['distinct_top1']} distinct top-1), after "
              f"{record['after_calibration']['over_images']:.3g} / "
              f"{record['after_calibration']['over_classes']:.3g} "
              f"({record['after_calibration']['distinct_top1']} distinct top-1)", flush=True)
        if on_gpu:
            cases = (gate_audit.gpu_honest() + gate_audit.gpu_mutations()
                     + ([] if args.no_compile else gate_audit.gpu_compiled("default")))
        else:
            cases = gate_audit.cpu_honest() + gate_audit.mutations()
        rows = []
        for case in cases:
            elapsed = time.perf_counter() - started
            if elapsed > args.budget:
                record["rows"].append({"name": case.name, "honest": case.honest,
                                       "error": "skipped: out of the run's time budget"})
                continue
            t0 = time.perf_counter()
            row = gate_audit.audit([case], device, image, batch, reference=reference)[0]
            rows.append(row)
            entry = row.as_dict() | {"seconds": time.perf_counter() - t0}
            record["rows"].append(entry)
            g = row.gate
            verdict = ("FAILED TO RUN: " + row.error) if g is None else (
                f"{g.math:<9} full {g.rel_error:.2e} (tol {g.tolerance:.2g}) centred "
                f"{g.centred_error:.2e} (tol {g.centred_tolerance:.2g}) "
                f"{'passed' if g.passed else 'refused'}; refused under "
                f"{[m for m in numerics.TOLERANCES if row.refused_under(m)]}")
            print(f"{'ok ' if row.as_expected else 'BAD'} {'honest' if row.honest else 'wrong '} "
                  f"{row.name:<58} {verdict} [{entry['seconds']:.0f} s]", flush=True)
            path.write_text(json.dumps(record, indent=1, default=str))
        worst: dict = {}
        for row in rows:
            if row.honest and row.gate is not None:
                full, cen = worst.get(row.gate.math, (0.0, 0.0))
                worst[row.gate.math] = (max(full, row.gate.rel_error), max(cen, row.gate.centred_error or 0.0))
        record["honest_max_error"] = worst
        record["all_as_expected"] = all(r.as_expected for r in rows) and len(rows) == len(cases)
        print(f"\nfor numerics.MEASURED: \"{name} {image} px\": "
              + ", ".join(f"{m}: ({f:.1e}, {c:.1e})" for m, (f, c) in worst.items()))
        print("every rung as expected" if record["all_as_expected"] else
              "NOT every rung as expected (or some skipped): see the rows marked BAD")
        exit_code = 0 if record["all_as_expected"] else 1
    except Exception:  # noqa: BLE001 -- whatever happened is written down
        record["failure"] = traceback.format_exc()
        print(record["failure"], file=sys.stderr)
        exit_code = 2
    record["seconds"] = time.perf_counter() - started
    path.write_text(json.dumps(record, indent=1, default=str))
    print(f"wrote {path} ({record['seconds']:.0f} s)")
    return exit_code


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main())
