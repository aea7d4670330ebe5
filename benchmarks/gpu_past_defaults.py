"""Past the defaults on chapter 08's top rung (issue 41), every lever in one command (~8 min on an H200):

    python3 benchmarks/gpu_past_defaults.py --out DIR [--budget 400] [--levers a,b] [--no-max-autotune]

From the ladder's top rung (fp16, channels_last, folded, TF32, cudnn.benchmark, torch.compile
default + one CUDA graph, batch 256; labkit.chapters.ch08_inference_ladder.past_defaults):

1. the 1x1 convolutions' shapes at batch 256, 224 px, each timed by device time (kernel
   records) three ways: cuDNN conv + separate residual add and ReLU, the Triton GEMM with
   bias + residual + ReLU in its epilogue, and FP8 `_scaled_mm` + the same tails; with
   their errors against float32 (fused_epilogue.bench_shapes);
2. the top rung, gated and timed; then each lever: the top rung at batch 64, freezing,
   conv_1x1_as_mm, freezing + conv_1x1_as_mm (over freezing), batch 512 and 1024, the Triton
   fused epilogue as a custom op inside the top rung's torch.compile + CUDA graph (at batch
   256 and 1024, over the top rung and batch 1024), FP8 per-tensor and per-channel (and a
   wrong scale the gate must refuse), INT8 per-channel (torch._int_mm), the GEMM path in torch and the eager Triton fused
   epilogue (over that GEMM path), max-autotune without and with Inductor's CUDA graphs. Each
   one is gated before it is timed, interleaved with its base (the top rung, or the rung it
   differs from by that lever alone: its own control), kept by the ladder's rule (its gain's
   IQR above 1, its median at least 1.02x), with its cold compile, device time per batch,
   idle share and payback. A kept base is released after the last lever judged over it.

A lever that fails records its error and the run goes on; levers that would start past
--budget seconds are skipped as such (each max-autotune lever needs ~150 s left to start;
`--list` prints the levers, their order and these estimates). The Inductor cache is a fresh
temporary directory, so every compile is cold for Inductor; a Triton kernel whose source an
earlier rung of the same run already compiled is found in Triton's cache, and max-autotune
after max-autotune-no-cudagraphs finds the first one's autotuning results (its row says so).
To run only some levers (say the max-autotune pair in a call of their own):
    python3 benchmarks/gpu_past_defaults.py --out DIR --levers max-autotune-no-cudagraphs,max-autotune
A name may hold commas; each named lever's base (the rung it is judged over) is added, and the
top rung always runs. The compiled Triton pair (~3-4 min on an H200 with the shape timing):
    python3 benchmarks/gpu_past_defaults.py --out DIR --budget 300 \
        --levers "Triton fused epilogue, compiled,Triton compiled at batch 1024"
Issue 41's check (the best rung 3 of 3 at 35,000 images/s or more, spread at most 5%) runs
this script for one lever in fresh processes and judges them:
    python3 benchmarks/reproduce.py 08-past --levers 'Triton compiled at batch 1024' --runs 3
Writes DIR/past_defaults.json after every rung (a cut-off run keeps what it measured) and
DIR/past_defaults.txt at the end. Exit 0 when the run completed and every rung was as expected
(honest rungs passed the gate, the wrong one refused), 1 otherwise, 2 on a crash.

    --device cpu --image 32 --batch 4   the smoke path (under a minute on a 2-core CPU): the
                                        GEMM path and emulated FP8 gated; Inductor, Triton
                                        and _scaled_mm levers skipped with their reasons.
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
    parser.add_argument("--out", required=True, help="directory for past_defaults.json and .txt")
    parser.add_argument("--device", default=None, help="default: cuda if there is one")
    parser.add_argument("--image", type=int, default=None, help="default: 224 on a GPU, 32 on a CPU")
    parser.add_argument("--batch", type=int, default=None, help="the top rung's batch (256 / 4)")
    parser.add_argument("--budget", type=float, default=400.0,
                        help="seconds after which no lever starts (default 400)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (5 / 3)")
    parser.add_argument("--rep-ms", type=float, default=None, help="sampling ms per rung (300 / 40)")
    parser.add_argument("--levers", default="", help="comma-separated lever names to run (default all)")
    parser.add_argument("--no-max-autotune", action="store_true", help="skip the max-autotune levers")
    parser.add_argument("--no-shapes", action="store_true", help="skip the per-shape kernel timing")
    parser.add_argument("--list", action="store_true", help="print the levers in order and exit")
    args = parser.parse_args(argv)
    if args.list:
        from labkit.chapters.ch08_inference_ladder import past_defaults

        for lever in past_defaults.gpu_levers():
            print(f"{lever.name:<34} needs ~{lever.est_s:>4.0f} s left; base {lever.base!r}; "
                  f"{lever.why}")
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="inductor-past-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache  # before torch is imported: compiles are cold
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(cache, "triton"))

    import dataclasses

    import torch

    from labkit.chapters.ch08_inference_ladder import fused_epilogue, numerics, past_defaults

    started = time.perf_counter()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    on_gpu = device.type == "cuda"
    image = args.image or (224 if on_gpu else 32)
    top = past_defaults.TOP if on_gpu else past_defaults.CPU_TOP
    top = dataclasses.replace(top, batch=args.batch or top.batch)
    levers = past_defaults.gpu_levers() if on_gpu else past_defaults.cpu_levers()
    if args.levers:   # names may hold commas; each lever's base is added (it is judged over it)
        try:
            levers, bases = past_defaults.select(levers, args.levers)
        except past_defaults.PastDefaultsError as error:
            parser.error(str(error))
        if bases:
            print(f"--levers: added the bases they are judged over: {', '.join(bases)}", flush=True)
    if args.no_max_autotune:
        levers = [lv for lv in levers if "max-autotune" not in lv.name]
    name = torch.cuda.get_device_name(device) if on_gpu else "cpu"
    print(f"torch {torch.__version__} on {name}: ResNet-50 at {image} px, top rung batch {top.batch}",
          flush=True)
    from datetime import datetime, timezone

    record: dict = {"torch": torch.__version__, "device": name, "image": image, "argv": sys.argv[1:],
                    "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    "inductor_cache": cache, "top_settings": dataclasses.asdict(top),
                    "fp8_gate_math": past_defaults.FP8_GATE_MATH,
                    "tolerances": numerics.TOLERANCES, "centred_tolerances": numerics.CENTRED_TOLERANCES,
                    "goal_images_per_s": past_defaults.GOAL_IMAGES_PER_S, "rows": [], "shapes": None,
                    # the gate's image count and the keep rule this run used: past_view says when
                    # a record's differ from today's (review 2026-12-03e item 2)
                    "gate_images": past_defaults.ladder.gate_images(device),
                    "keep_rule": past_defaults.keep_rule.rule()}
    json_path, txt_path = out / "past_defaults.json", out / "past_defaults.txt"

    def save() -> None:
        record["seconds"] = time.perf_counter() - started
        json_path.write_text(json.dumps(record, indent=1, default=str))

    exit_code = 0
    try:
        if on_gpu and not args.no_shapes:
            print("timing the 1x1 shapes (cuDNN + separate, Triton fused, FP8)...", flush=True)
            try:
                record["shapes"] = fused_epilogue.bench_shapes(top.batch, image, device)
                for path, ms in record["shapes"]["total_ms_per_batch"].items():
                    print(f"  1x1 layers, {path}: {ms:.2f} ms per batch of {top.batch}", flush=True)
                for path, why in record["shapes"]["errors"].items():
                    print(f"  {path} failed: {why}", flush=True)
            except Exception as failure:  # noqa: BLE001 -- the rungs still run
                record["shapes"] = {"error": f"{type(failure).__name__}: {failure}"}
                print(f"  shape timing failed: {record['shapes']['error']}", flush=True)
            save()
        elif not on_gpu:
            record["shapes"] = {"skipped": "the shape timing reads GPU kernel records: GPU only"}
        budget = max(1.0, args.budget - (time.perf_counter() - started))
        runner = past_defaults.Runner(device, image, top,
                                      rounds=args.rounds or (5 if on_gpu else 3),
                                      rep_ms=args.rep_ms or (300.0 if on_gpu else 40.0),
                                      profile_batches=3 if on_gpu else 1,
                                      progress=lambda what: print(f"  measuring: {what}", flush=True))

        def on_row(row: object) -> None:
            record["rows"].append(row.as_dict())
            gain = f" gain {row.gain[0]:.3f}x [{row.gain[1]:.3f}-{row.gain[2]:.3f}]" if row.gain else ""
            speed = f" {row.images_per_s:,.0f} img/s" if row.images_per_s else ""
            err = f" err {row.gate['rel_error']:.1e}/{row.gate['tolerance']:.2g}" if row.gate else ""
            comp = f" compile {row.compile_s:.1f} s" if row.compile_s else ""
            print(f"  {row.name}: {row.status}{speed}{gain}{err}{comp}"
                  f"{' KEPT' if row.kept else ''}{(' -- ' + row.note[:160]) if row.note and row.status != 'measured' else ''}",
                  flush=True)
            save()

        rows = runner.run(levers, budget_s=budget, on_row=on_row)
        best = past_defaults.ranked(rows)
        record["ranked"] = [(r.name, r.images_per_s) for r in best]
        record["best"] = best[0].as_dict() if best else None
        record["kept"] = [r.name for r in rows if r.kept]
        record["not_as_expected"] = [r.name for r in rows if r.as_expected is False]
        text = [f"torch {torch.__version__} on {name}, {image} px; top rung {top}",
                "", past_defaults.table(rows), ""]
        if record["shapes"] and "total_ms_per_batch" in record["shapes"]:
            text.append("1x1 layers by device time per batch: " + ", ".join(
                f"{k} {v:.2f} ms" for k, v in record["shapes"]["total_ms_per_batch"].items()))
        if best and on_gpu:
            goal = past_defaults.GOAL_IMAGES_PER_S
            b = best[0]
            ceiling = (f", {b.pct_of_ceiling:.0f}% of this GPU's measured {b.settings['dtype']} matmul "
                       "ceiling" if b.pct_of_ceiling else "")
            text.append(f"best gated rung: {b.name}, {b.images_per_s:,.0f} images/s "
                        f"({'meets' if b.images_per_s >= goal else 'below'} {goal:,}); "
                        f"{b.tflops:.0f} TFLOP/s of ResNet-50's arithmetic{ceiling}")
            if b.kinds:
                text.append("  its device time by kernel class: " + ", ".join(
                    f"{k} {100 * v:.0f}%" for k, v in b.kinds.items()))
            if past_defaults.longest_kernels(b):
                text.append("  its longest kernels (device ms per batch): "
                            + past_defaults.longest_kernels(b))
        elif best:
            text.append(f"best gated rung here: {best[0].name}, {best[0].images_per_s:,.0f} images/s "
                        "(a CPU smoke run: the goal is the H200's)")
        text.append("kept (gain IQR above 1): " + (", ".join(record["kept"]) or "none"))
        if record["not_as_expected"]:
            text.append("NOT as expected (honest refused or wrong passed): "
                        + ", ".join(record["not_as_expected"]))
        txt_path.write_text("\n".join(text) + "\n")
        print("\n" + "\n".join(text), flush=True)
        exit_code = 1 if record["not_as_expected"] else 0
    except Exception:  # noqa: BLE001 -- whatever happened is written down
        record["failure"] = traceback.format_exc()
        print(record["failure"], file=sys.stderr)
        exit_code = 2
    save()
    print(f"wrote {json_path} ({record['seconds']:.0f} s)")
    return exit_code


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main())
