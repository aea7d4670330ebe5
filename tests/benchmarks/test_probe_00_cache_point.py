"""benchmarks/probe_00_cache_point.py (review 2026-12-05p 00-02 item 3) on a machine without CUDA:
it says so in one line and exits 0 (the GPU measurement itself is the next re-record's)."""

import subprocess
import sys

import torch

from tests.paths import ROOT


def test_without_cuda_it_says_so_in_one_line_and_exits_0():
    if torch.cuda.is_available():
        return  # a GPU machine measures; this test is of the CPU path
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "probe_00_cache_point.py")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == ["cache-point probe: no CUDA on this machine, nothing measured"]
