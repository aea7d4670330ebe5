"""Execute notebook sources (.py, percent format) and write their paired .ipynb with outputs.

The .py is what a reviewer reads; the .ipynb beside it carries the outputs that Colab, Binder
and GitHub show and that nbval compares. Usage:

    python scripts/execute_notebook.py notebooks/01_strides_and_views.py [...]
"""

import argparse
import pathlib
import sys
import time

import jupytext
from nbclient import NotebookClient


def execute(source: pathlib.Path, timeout: int) -> float:
    """Run one notebook source top to bottom in a fresh kernel; return the seconds it took."""
    notebook = jupytext.read(source)
    started = time.perf_counter()
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(source.parent)}},
        record_timing=False,
    )
    client.execute()
    jupytext.write(notebook, source.with_suffix(".ipynb"))
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sources", nargs="+", type=pathlib.Path)
    parser.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell")
    args = parser.parse_args()
    for source in args.sources:
        if source.suffix != ".py":
            print(f"skipping {source}: pass the .py source, not the .ipynb", file=sys.stderr)
            continue
        seconds = execute(source, args.timeout)
        print(f"{source.with_suffix('.ipynb')}: executed in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
