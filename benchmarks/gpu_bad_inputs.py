"""The harness's bad-input paths on a real GPU (the unit tests can only simulate them on a CPU).

1. A function that runs out of GPU memory: a clear OutOfMemoryDuringTiming, the cached memory
   released, and the next timing works.
2. A CPU tensor timed on the GPU: a clear error naming the device.
3. A function that raises: the learner's own exception, unchanged.
4. mode="graph" on code that cannot be captured: a clear error that says what to use instead.
5. Bad arguments on a GPU machine (issue 9): an unknown device index, a NaN budget, a lazy result.
6. TF32 as a ceiling (issue 8): ceilings measured in float32 and TF32, then a float32 matmul
   timed with TF32 off, on, and a float32 convolution, each against the ceiling of the math it
   ran in; no share above 100% without a note saying why.

    python benchmarks/gpu_bad_inputs.py [output.json]
"""

import json
import sys
import traceback
from pathlib import Path

import torch

from labkit.measure import bench, ceilings


def outcome(action) -> dict:
    try:
        value = action()
    except Exception as error:  # the point is to record what the learner would see
        return {"raised": type(error).__name__, "message": str(error)[:600],
                "last_frame": traceback.extract_tb(error.__traceback__)[-1].name}
    return {"returned": repr(value)[:200]}


def tf32_shares() -> dict:
    """Float32 work against the ceiling of the math it ran in, with the TF32 switches as set."""
    found = ceilings.measure(refresh=True)
    rows: dict = {"ceilings_tflops": found.matmul_tflops}
    n = 8192
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    image = torch.randn(64, 256, 56, 56, device="cuda")
    weight = torch.randn(256, 256, 3, 3, device="cuda")
    conv_flops = 2 * 64 * 256 * 56 * 56 * 256 * 9
    previous = torch.get_float32_matmul_precision()
    for precision in ("highest", "high"):
        torch.set_float32_matmul_precision(precision)
        for name, fn, flops in (("matmul", lambda: a @ b, 2 * n**3),
                                ("conv3x3", lambda: torch.nn.functional.conv2d(image, weight, padding=1),
                                 conv_flops)):
            t = bench.time(fn, flops=flops, mode="hot", label=f"{name}, precision {precision}")
            rows[t.label] = {"tflops": t.tflops, "math": t.math, "pct": t.pct_of_matmul_ceiling,
                             "pct_of_tf32": t.pct_of_tf32_ceiling, "notes": list(t.warnings)}
    torch.set_float32_matmul_precision(previous)
    return rows


def main() -> int:
    if not torch.cuda.is_available():
        print("needs a CUDA GPU")
        return 0
    report = {}
    baseline = torch.cuda.memory_reserved()
    free_bytes, _ = torch.cuda.mem_get_info()

    def too_big():
        return torch.empty(int(free_bytes * 2), dtype=torch.uint8, device="cuda")

    def grow_then_fail():
        keep = torch.empty(8 * 2**30, dtype=torch.uint8, device="cuda")  # 8 GiB cached by torch
        return keep, too_big()

    report["out_of_memory"] = outcome(lambda: bench.time(grow_then_fail, label="allocate twice the free memory"))
    report["reserved_before_mib"] = baseline / 2**20
    report["reserved_after_mib"] = torch.cuda.memory_reserved() / 2**20
    x = torch.randn(4096, 4096, device="cuda")
    report["timing_after_oom"] = outcome(lambda: f"{bench.time(lambda: x @ x).median_s * 1e6:.1f} us")

    cpu_tensor = torch.randn(1024)
    report["cpu_tensor_on_gpu"] = outcome(lambda: bench.time(lambda t: t * 2, cpu_tensor, device="cuda"))

    def learner_bug():
        return x.view(3, -1, 7)  # 4096*4096 is not a multiple of 21: torch raises

    report["function_raises"] = outcome(lambda: bench.time(learner_bug))
    report["graph_of_syncing_code"] = outcome(lambda: bench.time(lambda: x.sum().item(), mode="graph"))
    report["device_out_of_range"] = outcome(lambda: bench.time(lambda: x @ x, device="cuda:99"))
    report["nan_budget"] = outcome(lambda: bench.time(lambda: x @ x, rep_ms=float("nan")))
    report["lazy_result"] = outcome(lambda: bench.time(lambda: iter([x @ x])))
    report["tf32"] = tf32_shares()
    for name, row in report.items():
        print(f"{name}: {row}")
    if len(sys.argv) > 1:
        target = Path(sys.argv[1])
        if target.is_dir():  # the form gpu_session.sh uses for every probe
            target = target / "gpu_bad_inputs.json"
        target.write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
