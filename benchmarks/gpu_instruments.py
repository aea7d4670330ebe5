"""The instruments on the GPU: short calls by device time, and the C19 sweep on that clock.

    PYTHONPATH=. python3 benchmarks/gpu_instruments.py OUT_DIR

1. tests/measure/test_clocks.py under pytest (its GPU tests: a launch-bound call reported by
   device time and checked against the profiler's kernel records; a synchronising call read
   on the wall clock).
2. Chapter 04's C19 sweep (Triton's fp16 add against PyTorch's at aligned sizes from 2^20 to
   2^28 elements, interleaved) by device time, with each add's host launch beside it. The
   target: Triton within 0.8-1.25x of PyTorch at every size (the recorded sweep on the old
   clock read 0.47-0.50x below 2^25, the launcher's ~15 us inside the window).

Writes OUT_DIR/gpu_instruments.json (only there: an instrument's record is not a chapter's, so
nothing goes into results/<machine>.json; review 2026-12-05t 03-04 item 8).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import torch


def main() -> int:
    out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
    out_dir.mkdir(parents=True, exist_ok=True)
    report: dict = {"device": torch.cuda.get_device_name() if torch.cuda.is_available() else None}
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                            "tests/measure/test_clocks.py"], capture_output=True, text=True)
    report["pytest_clocks"] = {"rc": tests.returncode, "tail": tests.stdout[-3000:] + tests.stderr[-2000:]}
    print(f"pytest tests/measure/test_clocks.py: rc={tests.returncode}\n{tests.stdout[-1500:]}",
          flush=True)

    from labkit.chapters.ch04_fusion import fused_kernels
    from labkit.core import results

    sizes = fused_kernels.aligned_sizes(2**28, smallest=2**20)
    rows = fused_kernels.add_sweep(sizes, rounds=5)
    report["c19_sweep"] = rows
    print(f"{'elements':>10} {'Triton us':>10} {'PyTorch us':>11} {'speed-up':>9} {'spread':>13} "
          f"{'host T/P us':>13} {'T GB/s':>8}", flush=True)
    inside = True
    for r in rows:
        lo, hi = r["speedup_iqr"]
        inside &= 0.8 <= r["speedup"] <= 1.25
        print(f"{r['elements']:>10} {r['triton_us']:>10.2f} {r['torch_us']:>11.2f} "
              f"{r['speedup']:>8.3f}x {lo:>6.3f}-{hi:<6.3f} "
              f"{r['triton_host_us']:>6.1f}/{r['torch_host_us']:<6.1f} {r['triton_gbps']:>8.0f}",
              flush=True)
    report["c19_within_0.8_1.25"] = inside
    print(f"Triton within 0.8-1.25x of PyTorch at every size by device time: {inside}")
    (out_dir / "gpu_instruments.json").write_text(json.dumps(results.to_jsonable(report), indent=1))
    return 0 if tests.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
