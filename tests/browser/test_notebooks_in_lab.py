"""Every chapter, opened from its .py source in a real JupyterLab, runs to the end through the
UI with no error output. A deliberately broken notebook proves the check can fail."""

from __future__ import annotations

import pathlib

import jupytext
import nbformat
import pytest

from tests.browser.helpers import (
    error_outputs,
    executed_cell_count,
    open_notebook,
    run_all_cells,
    wait_for_idle,
)

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))


def code_cell_count(path: pathlib.Path) -> int:
    return sum(cell.cell_type == "code" for cell in jupytext.read(path).cells)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_runs_in_jupyterlab(lab, page, source):
    open_notebook(page, lab, source.name)
    run_all_cells(page)
    wait_for_idle(page, timeout_s=400)
    assert error_outputs(page) == []
    assert executed_cell_count(page) == code_cell_count(source)


def test_an_error_output_is_caught(lab, page):
    """The error check must see an exception raised in a cell (else the test above proves nothing)."""
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("raise ValueError('stride runs off the storage')"),
    ])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, pathlib.Path(lab.root) / "zz_raises.ipynb")
    open_notebook(page, lab, "zz_raises.ipynb")
    run_all_cells(page)
    wait_for_idle(page, timeout_s=120)
    errors = error_outputs(page)
    assert len(errors) == 1 and "stride runs off the storage" in errors[0]
