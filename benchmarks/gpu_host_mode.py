"""Is the host's pace on a host-bound rung set per process or per round? An A/A run of chapter
08's fp16-weights rung (review 2026-12-03e item 1).

    python3 benchmarks/gpu_host_mode.py --out DIR [--processes 3] [--rounds 20]
    python3 benchmarks/gpu_host_mode.py --out /tmp/hm --device cpu --image 32 --batch 4   (a smoke run)

On the H200 the eager fp16 rung (TF32 on, channels_last, batch 64) ran at 12,985 images/s in its
own step and 6,636 as the next step's base: about 17.5 against 34 us per kernel launch, while
its device time held. Each of --processes fresh processes (one after another, never side by
side) prepares that rung twice through the ladder's own `prepare`, as A and A', and times them
interleaved for --rounds rounds with `ladder.host_pace_us` probed after every round (the probe
the ladder now runs), then writes DIR/host_mode.json: per process, each round's images/s of A
and A', their ratio, and the host pace.

How to read it: if every round of a process sits in one mode (images/s and host pace) while
processes differ, the mode is per process, and a step's base re-timed in the same process is
a fair base; if the mode switches between rounds of one process, it is per round, and the
ladder's re-time of a moved base is the right remedy. The A/A ratio's spread is the noise a step
on this rung carries whatever it changes. Printed: one line per process (images/s range, A/A
ratio range, host pace range) and the verdict line 'modes: per process / per round / one mode'.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# two modes are told apart when a process's median host pace differs from another's, or a
# round's from its process's median, by more than this share (the H200's modes: 17.5 and 34 us)
MODE_GAP = 0.25


def child(args: argparse.Namespace) -> dict:
    """One process: A and A' prepared, timed interleaved, the host pace after every round."""
    import torch

    from labkit.chapters.ch08_inference_ladder import ladder
    from labkit.measure import bench

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    on_gpu = device.type == "cuda"
    settings = ladder.Settings(tf32="on" if on_gpu else "off", channels_last=True,
                               dtype="float16" if on_gpu else "float32", batch=args.batch)
    lad = ladder.Ladder(device, args.image, rep_ms=args.rep_ms, rounds=args.rounds, profile_batches=0,
                        device_batches=0)
    lives = {name: lad.prepare(name, settings, profiled=False) for name in ("A", "A'")}
    for name, live in lives.items():
        if isinstance(live, ladder.Rung):
            raise SystemExit(f"{name} could not be prepared: {live.error}")
    pace: list[float] = []
    result = bench.compare({n: lad._timed(live) for n, live in lives.items()}, baseline="A",
                           rounds=args.rounds, mode="hot", warmup_ms=50, rep_ms=args.rep_ms,
                           device="cpu", progress=False,
                           after_round=lambda: pace.append(ladder.host_pace_us(device)))
    calls = ladder.live_calls(device)
    per_round = {n: [args.batch * calls / s for s in result[n].round_medians_s] for n in lives}
    return {"device": torch.cuda.get_device_name() if on_gpu else "cpu", "torch": torch.__version__,
            "settings": settings.__dict__, "images_per_s": per_round,
            "aa_ratio": [b / a for a, b in zip(per_round["A"], per_round["A'"], strict=True)],
            "host_pace_us": pace}


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def modes(processes: list[dict]) -> str:
    """'per round' when some round's host pace is more than MODE_GAP off its process's median;
    else 'per process' when the processes' medians differ by more than MODE_GAP; else 'one mode'."""
    medians = [_median(p["host_pace_us"]) for p in processes]
    if any(abs(x / m - 1) > MODE_GAP for p, m in zip(processes, medians, strict=True)
           for x in p["host_pace_us"]):
        return "per round"
    if max(medians) / min(medians) - 1 > MODE_GAP:
        return "per process"
    return "one mode"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="directory for host_mode.json")
    parser.add_argument("--processes", type=int, default=3, help="fresh processes, one after another")
    parser.add_argument("--rounds", type=int, default=20, help="interleaved rounds per process")
    parser.add_argument("--device", default=None, help="default: cuda if there is one")
    parser.add_argument("--image", type=int, default=224)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rep-ms", type=float, default=400.0, help="sampling ms per rung (the ladder's)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.processes < 1 or args.rounds < 2:
        parser.error("--processes must be at least 1 and --rounds at least 2")
    if args.child is not None:
        args.child.write_text(json.dumps(child(args)))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    processes = []
    for i in range(args.processes):
        path = args.out / f"process{i + 1}.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--out", str(args.out),
                   "--child", str(path), "--rounds", str(args.rounds), "--image", str(args.image),
                   "--batch", str(args.batch), "--rep-ms", str(args.rep_ms)]
        if args.device:
            command += ["--device", args.device]
        started = time.perf_counter()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"process {i + 1} failed (exit {done.returncode})")
        record = json.loads(path.read_text())
        record["wall_s"] = time.perf_counter() - started
        processes.append(record)
        a, ratio, pace = record["images_per_s"]["A"], record["aa_ratio"], record["host_pace_us"]
        print(f"process {i + 1}: A {min(a):,.0f}-{max(a):,.0f} images/s, A/A {min(ratio):.3f}-"
              f"{max(ratio):.3f}, host pace {min(pace):.1f}-{max(pace):.1f} us per launch "
              f"(median {_median(pace):.1f}), {record['wall_s']:.0f} s", flush=True)
    said = modes(processes)
    print(f"modes: {said} (a round or process {100 * MODE_GAP:.0f}% off in host pace counts as another mode)")
    (args.out / "host_mode.json").write_text(json.dumps(
        {"processes": processes, "modes": said, "mode_gap": MODE_GAP, "argv": sys.argv[1:]}, indent=1))
    print(f"wrote {args.out / 'host_mode.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
