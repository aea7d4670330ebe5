"""Check the audit command's budget on a CPU: ResNet-50 within 60 s and 1.5 GB (issue 29).

Runs `python -m labkit.audit labkit:resnet50 --device cpu --out DIR` (the CPU defaults: batch
2, 112x112, 3 interleaved rounds sharing 600 ms a variant, no export paths unless --exports
asks; since review 2026-12-05u 08-09-99 item 2, before it 64x64 and 2 rounds of 300 ms) in a
fresh process, and reads the child's wall time and peak resident memory (getrusage). Exits 1
when either budget is exceeded, and says by how much; the machine's load is printed beside it,
since a shared CPU stretches wall time. Each timed decision the command made is printed too
(`decisions`): a budget met by a command whose decision changes from run to run is no budget
met (review 2026-12-05u item 2).

    python benchmarks/audit_cpu_budget.py [extra arguments for the command]
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time

WALL_BUDGET_S = 60.0
MEMORY_BUDGET_BYTES = 1.5 * 2**30


def main(extra: list[str]) -> int:
    """Run the command once; 0 when it succeeded within both budgets."""
    with tempfile.TemporaryDirectory(prefix="labkit-audit-") as out:
        command = [sys.executable, "-m", "labkit.audit", "labkit:resnet50", "--device", "cpu",
                   "--out", out, *extra]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        wall = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak = usage.ru_maxrss * 1024  # Linux: KiB
        cpu = usage.ru_utime + usage.ru_stime
        wrote = sorted(os.listdir(out))
        stages = next((line for line in open(os.path.join(out, "report.md"))
                       if line.startswith("torch ")), "").strip() if "report.md" in wrote else ""
        said = decisions(open(os.path.join(out, "report.md")).read()) if "report.md" in wrote else []
    load = os.getloadavg()[0]
    print(f"exit {done.returncode}; wall {wall:.1f} s (budget {WALL_BUDGET_S:.0f}); peak RSS "
          f"{peak / 2**30:.2f} GiB (budget {MEMORY_BUDGET_BYTES / 2**30:.1f}); wrote {wrote}; "
          f"load average {load:.1f} on {os.cpu_count()} CPUs; CPU time {cpu:.1f} s\n{stages}"
          + "".join(f"\ndecision: {line}" for line in said))
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        return 1
    over = [f"wall {wall:.1f} s > {WALL_BUDGET_S:.0f} s"] if wall > WALL_BUDGET_S else []
    over += [f"memory {peak / 2**30:.2f} GiB > 1.5 GiB"] if peak > MEMORY_BUDGET_BYTES else []
    if over:
        print("over budget: " + "; ".join(over), file=sys.stderr)
        return 1
    return 0


def decisions(report_md: str) -> list[str]:
    """Each timed recommendation in a report.md as 'title: kept|no: its why's first clause' (the
    Markdown table's rows whose why names a per-round ratio)."""
    found = []
    for line in report_md.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and "per-round IQR" in cells[2]:
            found.append(f"{cells[0]}: {cells[1]}: {cells[2].split(' (per-round')[0]}")
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
