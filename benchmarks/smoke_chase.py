"""Chapter 02's Triton chase, compiled and checked in seconds, before a session's chapters run:

    python3 benchmarks/smoke_chase.py          # ~5-10 s on a GPU, most of it importing torch

On CUDA: every chain chapter 02's chase builds (`chase.gpu_chains`, at 64 steps and 2 window
laps instead of 4,096 and 17), each followed once by the Triton kernel, and its end index
compared with the one a Python loop reaches on the CPU (`chase.check_ends`, the check the
chapter runs before timing). Prints 'chase ok ...' and exits 0, or 'chase FAILED: ...' and
exits 1: a compile error, a wrong end index, or a CUDA fault (which in the chapter would be
sticky and stop its later cells). Where it fails, run chapter 02 with LABKIT_SKIP_CHASE=1
(`chase.SKIP_ENV`): the chase is optional and decides no verdict (review 2026-12-05o 00-02
item 2).

Without CUDA it says so and exits 0, unless TRITON_INTERPRET=1 is set: then Triton's
interpreter runs the same check on the CPU (no compile: a test of this script and of the
kernel's logic, not of the GPU's code).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    began = time.perf_counter()
    import torch

    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    if not torch.cuda.is_available() and not interpret:
        print("chase smoke: no CUDA on this machine, nothing checked (TRITON_INTERPRET=1 checks the "
              "kernel's logic on the CPU)")
        return 0
    device = "cuda" if torch.cuda.is_available() and not interpret else "cpu"
    try:
        from labkit.chapters.ch02_contiguity_and_hidden_copies import chase

        chains = chase.gpu_chains(device, steps=64, window_laps=2)
        out = torch.zeros(1, dtype=torch.int32, device=device)
        checked = chase.check_ends(chains, lambda b, s, n: int(chase.chase_triton(b, s, n, out)[0]))
        if device == "cuda":
            torch.cuda.synchronize()
    except Exception as err:  # noqa: BLE001 - any failure is the answer this script gives
        first = (str(err).strip().splitlines() or [""])[0][:300]
        print(f"chase FAILED on {device}: {type(err).__name__}: {first}")
        return 1
    where = torch.cuda.get_device_name() if device == "cuda" else "cpu, Triton's interpreter"
    print(f"chase ok: {checked} runs of {len(chains)} chains ended where a Python loop does "
          f"({where}, {time.perf_counter() - began:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
