"""The harness's bad-input paths on a real GPU (the unit tests can only simulate them on a CPU).

1. A function that runs out of GPU memory: a clear OutOfMemoryDuringTiming, the cached memory
   released, and the next timing works.
2. A CPU tensor timed on the GPU: a clear error naming the device.
3. A function that raises: the learner's own exception, unchanged.
4. mode="graph" on code that cannot be captured: a clear error that says what to use instead.

    python benchmarks/gpu_bad_inputs.py [output.json]
"""

import json
import sys
import traceback

import torch

from labkit import bench


def outcome(action) -> dict:
    try:
        value = action()
    except Exception as error:  # the point is to record what the learner would see
        return {"raised": type(error).__name__, "message": str(error)[:600],
                "last_frame": traceback.extract_tb(error.__traceback__)[-1].name}
    return {"returned": repr(value)[:200]}


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
    for name, row in report.items():
        print(f"{name}: {row}")
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
