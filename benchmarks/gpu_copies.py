"""Record what the copy detector sees on CUDA (run on the GPU machine; also runs on CPU).

Which ops copy when a transposed tensor meets matmul (the top-level copy detector, and the
profiler's copy ops at every depth, which also sees a copy an op makes inside its kernel), and
whether `reshape` copies exactly when `view` would fail, on the device the course's GPU claims
are judged on. Writes copies_cuda.json
into the folder given as the first argument (default: $OUT or /tmp/out).
"""

import json
import os
import sys

import torch

from labkit.chapters.ch02_contiguity_and_hidden_copies import strided_gemm
from labkit.core import layout
from labkit.measure import copies

device = "cuda" if torch.cuda.is_available() else "cpu"
record = {"torch": torch.__version__,
          "device": torch.cuda.get_device_name() if device == "cuda" else "cpu"}


def observe(name, fn, repeat=2):
    for attempt in range(repeat):
        with copies.detect() as log:
            fn()
        if device == "cuda":
            torch.cuda.synchronize()
        record[f"{name}#{attempt}"] = log.summary()


x = torch.randn(128, 512, device=device)
observe("transpose", lambda: x.t())
observe("contiguous_of_transpose", lambda: x.t().contiguous())
for dtype in (torch.float32, torch.float16):
    a = torch.randn(1024, 512, device=device, dtype=dtype)
    w = torch.randn(1024, 256, device=device, dtype=dtype)
    observe(f"t_matmul_{dtype}", lambda a=a, w=w: a.t().matmul(w))
    a3 = torch.randn(64, 128, 256, device=device, dtype=dtype)
    w3 = torch.randn(256, 64, device=device, dtype=dtype)
    observe(f"transpose01_matmul_3d_{dtype}", lambda a3=a3, w3=w3: a3.transpose(0, 1).matmul(w3))
    square = torch.randn(1024, 1024, device=device, dtype=dtype)  # claim C10's 1024x1024 A.t() @ B
    record[f"c10_inside_t_matmul_1024_{dtype}"] = strided_gemm.copies_inside(
        lambda square=square: torch.matmul(square.t(), square))
    record[f"c10_inside_stepped_matmul_{dtype}"] = strided_gemm.copies_inside(
        lambda square=square: torch.matmul(square[::2, ::2], square[:512, :512]))

y = torch.arange(24.0, device=device).reshape(2, 3, 4)
mismatches = []
for tensor, shape in [(y, (6, 4)), (y.transpose(1, 2), (6, 4)), (y.permute(2, 0, 1), (4, 6)),
                      (y[:, 1:], (4, 4)), (y.transpose(0, 1), (3, 8))]:
    with copies.detect() as log:
        tensor.reshape(shape)
    if (len(log.copies) == 1) == layout.can_view(tensor, shape).ok:
        mismatches.append(str((tensor.stride(), shape)))
record["reshape_vs_can_view_mismatches"] = mismatches

folder = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "/tmp/out")
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "copies_cuda.json"), "w") as f:
    json.dump(record, f, indent=1)
print(json.dumps(record, indent=1))
