"""Execute notebook sources (.py, percent format) and write their paired .ipynb with outputs.

The .py is what a reviewer reads; the .ipynb beside it carries the outputs that Colab, Binder
and GitHub show and that nbval compares. Usage:

    python scripts/execute_notebook.py notebooks/01_strides_and_views.py [...]

The written notebook's metadata is normalised (`normalise_metadata`): no Python version in
`language_info` (the course's kernels report none, see scripts/configure_jupyter.py, so a
learner's Python, of whatever patch release, finds the chapter as it was saved and JupyterLab
does not mark it changed on opening) and Jupytext's version kept out of the `.py` header.
"""

import argparse
import datetime
import json
import pathlib
import sys
import time

import jupytext
from nbclient import NotebookClient

# Jupytext writes its own version into every .py header unless the notebook's metadata filter
# leaves it out: with it, a learner's Jupytext, of any version, saves the header unchanged.
JUPYTEXT_FILTER = "-jupytext.text_representation.jupytext_version"


def normalise_metadata(notebook: dict) -> dict:
    """Drop what depends on the machine that executed the notebook from its metadata, in place:
    `language_info.version` (the kernel's Python patch release) and Jupytext's version line."""
    metadata = notebook["metadata"]
    metadata.get("language_info", {}).pop("version", None)
    metadata.setdefault("jupytext", {})["notebook_metadata_filter"] = JUPYTEXT_FILTER
    metadata["jupytext"].pop("text_representation", None)
    return notebook


SLOWEST: dict[str, list[tuple[float, int, str]]] = {}  # per chapter: (seconds, cell, first line)


def _stamp(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def cell_seconds(notebook: dict) -> list[tuple[float, int, str]]:
    """Each code cell's run time (nbclient's execute_input to execute_reply), slowest first,
    with the cell's index and first line; the timestamps are removed from the cell so the saved
    notebook does not change with the machine (a chapter's time budget is read from these)."""
    out = []
    for index, cell in enumerate(notebook["cells"]):
        stamps = cell.get("metadata", {}).pop("execution", None)
        if cell["cell_type"] != "code" or not stamps:
            continue
        try:
            seconds = (_stamp(stamps["shell.execute_reply"]) - _stamp(stamps["iopub.execute_input"])).total_seconds()
        except (KeyError, ValueError):
            continue
        first = next((line for line in cell["source"].splitlines() if line.strip()), "")
        out.append((seconds, index, first[:70]))
    return sorted(out, reverse=True)


def execute(source: pathlib.Path, timeout: int, output_dir: pathlib.Path | None = None) -> float:
    """Run one notebook source top to bottom in a fresh kernel; return the seconds it took.

    The executed notebook is written beside its source, or into output_dir when given (the GPU
    reference run keeps its executed copies apart from the committed CPU ones).
    """
    notebook = jupytext.read(source)
    started = time.perf_counter()
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(source.parent)}},
        record_timing=True,  # per-cell seconds (cell_seconds), removed before saving
        # No widget state in the saved notebook: viewers without a live kernel (GitHub, nbviewer,
        # an HTML export, offline) then show the static picture each widget carries beside its
        # view, instead of widgets that need JavaScript from a CDN.
        store_widget_state=False,
    )
    client.execute()
    timings = cell_seconds(notebook)
    SLOWEST[source.stem] = timings
    normalise_metadata(notebook)
    (output_dir or source.parent).mkdir(parents=True, exist_ok=True)  # a fresh folder on the GPU machine
    target = (output_dir or source.parent) / source.with_suffix(".ipynb").name
    jupytext.write(notebook, target)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sources", nargs="+", type=pathlib.Path)
    parser.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell")
    parser.add_argument("--output-dir", type=pathlib.Path, help="write the .ipynb here instead")
    parser.add_argument("--cell-seconds", type=pathlib.Path,
                        help="write every code cell's seconds per chapter to this JSON file")
    args = parser.parse_args()
    for source in args.sources:
        if source.suffix != ".py":
            print(f"skipping {source}: pass the .py source, not the .ipynb", file=sys.stderr)
            continue
        seconds = execute(source, args.timeout, args.output_dir)
        slowest = ", ".join(f"cell {i} {t:.1f} s" for t, i, _ in SLOWEST[source.stem][:3])
        print(f"{source.stem}: executed in {seconds:.1f} s (slowest: {slowest})", flush=True)
        if args.cell_seconds:
            args.cell_seconds.parent.mkdir(parents=True, exist_ok=True)
            args.cell_seconds.write_text(json.dumps(
                {stem: [{"cell": i, "seconds": round(t, 2), "first_line": line} for t, i, line in rows]
                 for stem, rows in SLOWEST.items()}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
