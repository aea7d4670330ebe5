"""What the test suite costs on this machine: each notebook (wall time and peak memory of its
kernel), or, with --suite, `make test` itself timed per part.

Targets (CPU machine, Binder-sized): each notebook under 90 s and under 1.5 GB peak; the whole
`make test` (--suite) under 8 minutes. Each notebook runs in a fresh kernel, as nbval and learners run it.
Set LABKIT_MEMORY_LIMIT_BYTES=2147483648 to rehearse Binder: chapters then size themselves
for a 2 GB container. The peak is the kernel's own high-water mark (VmHWM in /proc) plus the largest peak seen
among its child processes (DataLoader workers, DDP ranks) by polling.

    python benchmarks/suite_cost.py [notebooks/01_strides_and_views.py ...] [--json out.json]

--suite runs what `make test` runs and reports its own time per part, so a regression shows
where it came from: set-up (`make` of the test environment: minutes on a fresh clone, about
nothing when it exists), lint (`make lint`), and pytest (`make test-pytest`: pytest-xdist
workers, see the Makefile), each as wall time; their sum is what `make test` costs. Inside
pytest, the time its tests took is summed per part (units: tests/ but the browser; notebooks:
nbval, each chapter once; browser: tests/browser) from one JUnit report, with the slowest tests
of each: the workers run in parallel, so these sums add up to more than pytest's wall time.
Target: the whole under 8 minutes on the 2-core CI machine.

    python benchmarks/suite_cost.py --suite [--json out.json] [-- extra pytest arguments]
"""

import argparse
import json
import pathlib
import platform
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ElementTree

import jupytext
import psutil
from nbclient import NotebookClient

from labkit.core import env

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIME_TARGET_S = 90
MEMORY_TARGET_GB = 1.5
SUITE_TARGET_S = 8 * 60
STEPS = ("set-up", "lint", "pytest")  # wall times, one after the other: they add up
PARTS = ("units", "notebooks", "browser")  # test time inside pytest, summed over its workers


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


def part_of(testcase: ElementTree.Element) -> str:
    """Which part of the suite a JUnit test case belongs to, from its file or class path."""
    where = (testcase.get("file") or testcase.get("classname") or "").replace("\\", "/")
    if where.startswith("notebooks") or ".ipynb" in where:
        return "notebooks"
    if "tests/browser" in where or where.startswith("tests.browser"):
        return "browser"
    return "units"


def timed(command: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    code = subprocess.run(command, cwd=ROOT).returncode
    return time.perf_counter() - started, code


def suite(pytest_args: list[str], venv: pathlib.Path, setup: bool = True) -> dict:
    """Run `make test`'s steps once and time each (see the module docstring)."""
    seconds: dict[str, float] = dict.fromkeys(STEPS, 0.0)
    parts: dict[str, float] = dict.fromkeys(PARTS, 0.0)
    slowest: dict[str, list[tuple[float, str]]] = {part: [] for part in PARTS}
    make = ["make", "-s", f"VENV={venv}"]
    result = {"seconds": seconds, "parts": parts, "slowest": slowest, "failed": ""}
    if setup:
        seconds["set-up"], code = timed([*make, f"{venv}/.test-ready"])
        if code:
            return result | {"failed": "set-up"}
    seconds["lint"], lint_code = timed([*make, "lint"])
    with tempfile.TemporaryDirectory() as folder:
        report = pathlib.Path(folder) / "junit.xml"
        arguments = " ".join([f"--junitxml={report}", "-o", "junit_duration_report=total", *pytest_args])
        seconds["pytest"], test_code = timed([*make, "test-pytest", f"PYTEST_ARGS={arguments}"])
        cases = ElementTree.parse(report).getroot().iter("testcase") if report.exists() else []
        for case in cases:
            part, spent = part_of(case), float(case.get("time") or 0)
            parts[part] += spent
            slowest[part].append((spent, f"{case.get('classname')}::{case.get('name')}"))
    for part in slowest:
        slowest[part] = sorted(slowest[part], reverse=True)[:5]
    return result | {"failed": "lint" if lint_code else ("tests" if test_code else "")}


def main_suite(pytest_args: list[str], json_path: pathlib.Path | None, venv: pathlib.Path,
               setup: bool) -> int:
    print(f"machine: {platform.node()} ({psutil.cpu_count()} cores); target: the whole under "
          f"{SUITE_TARGET_S / 60:.0f} min")
    result = suite(pytest_args, venv, setup)
    total = sum(result["seconds"].values())
    print(f"{'step (wall)':<26}{'time (s)':>10}")
    for step in STEPS:
        print(f"{step:<26}{result['seconds'][step]:>10.1f}")
    print(f"{'total':<26}{total:>10.1f}  {'within' if total < SUITE_TARGET_S else 'OVER'} target"
          + (f"; FAILED at {result['failed']}" if result["failed"] else ""))
    print("inside pytest, test time summed over its workers:")
    for part in PARTS:
        print(f"  {part:<24}{result['parts'][part]:>10.1f}")
    for part, rows in result["slowest"].items():
        if rows:
            print(f"slowest in {part}: " + "; ".join(f"{name} {spent:.0f} s" for spent, name in rows))
    if json_path:
        json_path.write_text(json.dumps({"machine": platform.node(), **result, "total": total}, indent=2) + "\n")
    return 0 if total < SUITE_TARGET_S and not result["failed"] else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="*", type=pathlib.Path)
    parser.add_argument("--json", type=pathlib.Path, help="also write the rows to this file")
    parser.add_argument("--suite", action="store_true",
                        help="time `make test` per part instead of each notebook")
    parser.add_argument("--venv", type=pathlib.Path, default=ROOT / ".venv",
                        help="with --suite: the environment `make test` sets up and uses")
    parser.add_argument("--skip-setup", action="store_true",
                        help="with --suite: use --venv as it is (set-up then reads 0)")
    args, pytest_args = parser.parse_known_args()
    if args.suite:
        return main_suite([a for a in pytest_args if a != "--"] + [str(s) for s in args.sources],
                          args.json, args.venv.resolve(), not args.skip_setup)
    if pytest_args:
        parser.error(f"unrecognised arguments: {' '.join(pytest_args)}")
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
