"""What sharing a GPU does to a timing, and whether the timing says so (run on the GPU machine).

Times a copy (a 256 MiB float32 tensor cloned: GB/s) and a matmul (8192 x 8192 bfloat16:
TFLOP/s) with labkit.measure.bench, first alone, then while 1 and 2 other processes time the
same two operations in a loop on the same GPU (as other learners' kernels in a workshop
would). For each case it records the medians, the spreads, the rates, the slowdown against
alone, and what the harness reported: Timing.shared_gpu, its warning, and the other processes
labkit.measure.sharing saw in the driver's list.

    python benchmarks/gpu_sharing.py [--others 0 1 2] [--json results/gpu_sharing/<device>.json]

Exit status 1 when the harness got it wrong: a shared-GPU warning with no other process of
ours running (and none foreign in the driver's list), or no warning while others ran.
Exit status 2 on a machine without a CUDA GPU (nothing to measure).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import select
import subprocess
import sys
import tempfile
import time
import warnings

import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from labkit.core import env  # noqa: E402
from labkit.measure import bench, sharing  # noqa: E402

COPY_ELEMENTS = 64 * 2**20          # 256 MiB of float32
MATMUL_N = 8192
READY_TIMEOUT_S = 120


def operations() -> dict:
    """The two timed operations with the amounts their rates need."""
    x = torch.randn(COPY_ELEMENTS, device="cuda")
    a = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(MATMUL_N, MATMUL_N, device="cuda", dtype=torch.bfloat16)
    return {
        "copy": dict(fn=lambda: x.clone(), bytes_moved=2 * x.numel() * x.element_size()),
        "matmul": dict(fn=lambda: a @ b, flops=2 * MATMUL_N**3, flops_dtype="bfloat16"),
    }


def time_all(ops: dict) -> dict:
    out = {}
    for name, spec in ops.items():
        spec = dict(spec)
        fn = spec.pop("fn")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            timing = bench.time(fn, label=name, rep_ms=500, **spec)
        sharing._cache.clear()  # the next timing asks the driver afresh
        out[name] = {
            "median_s": timing.median_s, "iqr_s": timing.iqr_s, "count": timing.count,
            "gbps": timing.gbps, "tflops": timing.tflops, "shared_gpu": timing.shared_gpu,
            "notes": list(timing.warnings),
            "warned": any("shared GPU" in str(w.message) for w in caught),
            "others_seen": [vars(p) for p in sharing.others_on_gpu("cuda")],
        }
    return out


def worker(stop_file: str) -> None:
    """Another learner: time the same operations in a loop until the stop file appears."""
    ops = operations()
    medians = {name: [] for name in ops}
    ready = False
    while not os.path.exists(stop_file):
        for name, spec in ops.items():
            spec = dict(spec)
            fn = spec.pop("fn")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                medians[name].append(bench.time(fn, label=name, **spec).median_s)
        if not ready:
            print("ready", flush=True)
            ready = True
    print(json.dumps({n: sorted(v)[len(v) // 2] for n, v in medians.items() if v}), flush=True)


def start_workers(count: int, stop_file: str) -> list[subprocess.Popen]:
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", stop_file],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT) for _ in range(count)]
    deadline = time.monotonic() + READY_TIMEOUT_S
    for proc in procs:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or proc.poll() is not None:
                for p in procs:
                    p.kill()
                raise TimeoutError(f"gave up after {READY_TIMEOUT_S} s waiting for a timing "
                                   f"worker to be ready (exit {proc.poll()})")
            if select.select([proc.stdout], [], [], min(left, 1.0))[0]:
                if proc.stdout.readline().strip() == "ready":
                    break
    return procs


def stop_workers(procs: list[subprocess.Popen], stop_file: str) -> list[dict]:
    pathlib.Path(stop_file).touch()
    reports = []
    for proc in procs:
        try:
            out, _ = proc.communicate(timeout=60)
            lines = [ln for ln in out.splitlines() if ln.startswith("{")]
            reports.append(json.loads(lines[-1]) if lines else {})
        except subprocess.TimeoutExpired:
            proc.kill()
            reports.append({})
    os.unlink(stop_file)
    return reports


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--others", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--json", type=pathlib.Path, default=None)
    parser.add_argument("--worker", metavar="STOP_FILE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return 0
    if not torch.cuda.is_available():
        print("no CUDA GPU here: nothing to measure (run this on the GPU machine)")
        return 2
    if any(k < 0 for k in args.others):
        parser.error("--others takes counts >= 0")
    ops = operations()
    time_all(ops)  # warm-up: the CUDA context, cuBLAS and the flush buffer
    foreign = [vars(p) for p in sharing.others_on_gpu("cuda")]
    cases = {}
    for count in args.others:
        stop_file = os.path.join(tempfile.mkdtemp(prefix="gpu-sharing-"), "stop")
        procs = start_workers(count, stop_file)
        try:
            measured = time_all(ops)
        finally:
            worker_medians = stop_workers(procs, stop_file)
        cases[str(count)] = {"timings": measured, "worker_medians_s": worker_medians}
    alone = cases.get("0", {}).get("timings")
    verdict_ok = True
    for count, case in cases.items():
        for name, t in case["timings"].items():
            if alone:
                t["slowdown_vs_alone"] = t["median_s"] / alone[name]["median_s"]
            expected = int(count) > 0 or bool(foreign)
            t["warning_as_expected"] = t["shared_gpu"] == expected and t["warned"] == expected
            verdict_ok &= t["warning_as_expected"]
    record = {"device": torch.cuda.get_device_name(), "device_key": env.device_key(),
              "driver": env.gpu_driver_version(), "torch": torch.__version__,
              "foreign_processes_at_start": foreign, "cases": cases,
              "harness_right": verdict_ok,
              "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    target = args.json or ROOT / "results" / "gpu_sharing" / f"{env.device_key()}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(record, indent=2) + "\n")
    for count, case in cases.items():
        for name, t in case["timings"].items():
            rate = f"{t['gbps']:.0f} GB/s" if t["gbps"] else f"{t['tflops']:.0f} TFLOP/s"
            slow = f", {t['slowdown_vs_alone']:.2f}x alone" if "slowdown_vs_alone" in t else ""
            print(f"{count} others: {name:6s} {t['median_s'] * 1e3:.3f} ms ({rate}{slow}); "
                  f"shared_gpu={t['shared_gpu']} warned={t['warned']}")
    print(f"harness right about sharing: {verdict_ok}; written to {target}")
    return 0 if verdict_ok else 1


if __name__ == "__main__":
    sys.exit(main())
