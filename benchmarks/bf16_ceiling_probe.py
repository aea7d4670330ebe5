"""Why does the bf16 matmul ceiling land where it does? (GPU machine)

The harness measured ~673-686 TFLOP/s for an 8192^3 bf16 matmul on torch.randn data, in both
cold and hot mode, and triton's do_bench agreed; the machine notes report 770-800 "on random
data". Tensor-core power depends on the operands' bits, so the clock the chip can hold does
too: this script times the same matmul on normal (randn), uniform [0, 1) (rand) and zero data
back to back, and samples nvidia-smi's SM clock, power and throttle reasons while each runs.

    python benchmarks/bf16_ceiling_probe.py [output.json]
"""

import json
import subprocess
import sys
import threading

import torch

from labkit.measure import bench

N = 8192
FLOPS = 2 * N**3
QUERY = "clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active"


def sample_smi(stop: threading.Event, samples: list) -> None:
    while not stop.is_set():
        try:
            line = subprocess.run(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"],
                                  capture_output=True, text=True, timeout=5).stdout.strip()
            samples.append(line)
        except (OSError, subprocess.SubprocessError):
            return
        stop.wait(0.2)


def main() -> int:
    if not torch.cuda.is_available():
        print("needs a CUDA GPU")
        return 0
    makers = {
        "randn (normal)": lambda: torch.randn(N, N, device="cuda", dtype=torch.bfloat16),
        "rand (uniform 0..1)": lambda: torch.rand(N, N, device="cuda", dtype=torch.bfloat16),
        "zeros": lambda: torch.zeros(N, N, device="cuda", dtype=torch.bfloat16),
    }
    rows = []
    for name, make in makers.items():
        a, b = make(), make()
        out = torch.empty(N, N, device="cuda", dtype=torch.bfloat16)
        for mode in ("hot", "cold"):
            stop, samples = threading.Event(), []
            watcher = threading.Thread(target=sample_smi, args=(stop, samples), daemon=True)
            watcher.start()
            timing = bench.time(lambda a=a, b=b, out=out: torch.matmul(a, b, out=out), mode=mode,
                                warmup_ms=300, rep_ms=2000, flops=FLOPS, label=f"{name}, {mode}")
            stop.set()
            watcher.join()
            tflops = FLOPS / timing.median_s / 1e12
            rows.append({"data": name, "mode": mode, "median_us": timing.median_s * 1e6,
                         "tflops": tflops, "smi_samples": samples[-5:]})
            print(f"{name:22s} {mode:5s} {timing.median_s * 1e6:9.1f} us  {tflops:6.1f} TFLOP/s  "
                  f"smi (MHz, W, C, throttle): {samples[-3:]}", flush=True)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
