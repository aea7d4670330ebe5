"""Whether Triton's interpreter can run the course's kernels here, asked once per test process.

Triton 3.6's interpreter converts a runtime int to an index with int() on a one-element NumPy
array, which NumPy 2.4 refuses ("only 0-dimensional arrays can be converted to Python
scalars"; triton-lang/triton#9171, fixed upstream by #9172, after 3.6.0). Every kernel of the
course loops over a runtime int (the chase's steps, the GEMM's K tiles), so under that pair
the interpreter checks cannot run at all; found on the H100 machine and here, 2026-12-05. A
bare loop kernel, run under the interpreter in a subprocess, tells that apart from a kernel
that went wrong: the tests skip with the reason only where the bare loop fails that way.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap

LOOP_PROBE = textwrap.dedent("""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def count(out, n):
        total = 0
        for _ in range(n):
            total += 1
        tl.store(out, total)

    out = torch.zeros(1, dtype=torch.int32)
    count[(1,)](out, 3)
    print(int(out[0]))
""")
NUMPY_24_TEXT = "only 0-dimensional arrays"


@functools.cache
def cannot_loop() -> str:
    """'' where the interpreter runs a loop over a runtime int (or triton is absent: the tests
    say so themselves), else the reason to skip. Any other failure of the probe is no reason:
    the test then runs and shows it."""
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run([sys.executable, "-c", LOOP_PROBE], env=env, capture_output=True,
                          text=True, timeout=120)
    if done.returncode != 0 and NUMPY_24_TEXT in done.stderr:
        return ("this Triton's interpreter cannot loop over a runtime int under this NumPy "
                "(triton-lang/triton#9171: Triton 3.6 with NumPy 2.4; fixed after 3.6.0)")
    return ""
