"""What each notebook costs on this machine: wall time and peak memory of its kernel.

Targets (CPU machine, Binder-sized): each notebook under 90 s and under 1.5 GB peak; the whole
`make test` under 15 minutes. Each notebook runs in a fresh kernel, as nbval and learners run it.
Set LABKIT_MEMORY_LIMIT_BYTES=2147483648 to rehearse Binder: chapters then size themselves
for a 2 GB container. The peak is the kernel's own high-water mark (VmHWM in /proc) plus the largest peak seen
among its child processes (DataLoader workers, DDP ranks) by polling.

    python benchmarks/suite_cost.py [notebooks/01_strides_and_views.py ...] [--json out.json]
"""

import argparse
import json
import pathlib
import platform
import sys
import threading
import time

import jupytext
import psutil
from nbclient import NotebookClient

from labkit.core import env

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIME_TARGET_S = 90
MEMORY_TARGET_GB = 1.5


def peak_rss_bytes(pid: int) -> int:
    """The process's peak resident set size as the kernel recorded it (VmHWM)."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


class ChildPeakWatcher(threading.Thread):
    """Polls the kernel's child processes and remembers the largest total RSS they reach."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.peak = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            total = 0
            for child in self.process.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self.stopped.wait(0.05)


def measure(source: pathlib.Path) -> dict:
    notebook = jupytext.read(source)
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(source.parent)}})
    errors = []
    with client.setup_kernel():
        pid = client.km.provisioner.pid
        watcher = ChildPeakWatcher(pid)
        watcher.start()
        started = time.perf_counter()
        for index, cell in enumerate(notebook.cells):
            try:
                client.execute_cell(cell, index)
            except Exception as error:  # report, keep measuring the rest of the suite
                errors.append(f"cell {index}: {type(error).__name__}")
                break
        seconds = time.perf_counter() - started
        kernel_peak = peak_rss_bytes(pid)
        watcher.stopped.set()
        watcher.join()
    peak_gb = (kernel_peak + watcher.peak) / 1e9
    return {
        "notebook": source.stem,
        "seconds": round(seconds, 1),
        "peak_gb": round(peak_gb, 3),
        "within_targets": seconds < TIME_TARGET_S and peak_gb < MEMORY_TARGET_GB and not errors,
        "errors": errors,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="*", type=pathlib.Path)
    parser.add_argument("--json", type=pathlib.Path, help="also write the rows to this file")
    args = parser.parse_args()
    sources = args.sources or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    print(f"machine: {platform.node()} ({psutil.cpu_count()} cores, "
          f"{psutil.virtual_memory().total / 1e9:.1f} GB, chapters size for "
          f"{env.memory_limit_bytes() / 2**30:.1f} GiB); targets: < {TIME_TARGET_S} s, "
          f"< {MEMORY_TARGET_GB} GB per notebook")
    print(f"{'notebook':40s} {'time (s)':>9s} {'peak (GB)':>10s}  verdict")
    rows = []
    for source in sources:
        row = measure(source)
        rows.append(row)
        verdict = "ok" if row["within_targets"] else "OVER TARGET " + " ".join(row["errors"])
        print(f"{row['notebook']:40s} {row['seconds']:9.1f} {row['peak_gb']:10.3f}  {verdict}", flush=True)
    print(f"{'total':40s} {sum(r['seconds'] for r in rows):9.1f}")
    if args.json:
        args.json.write_text(json.dumps({"machine": platform.node(), "rows": rows}, indent=2) + "\n")
    return 0 if all(row["within_targets"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
