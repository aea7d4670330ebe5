"""Every chapter, opened from its .py source in a real JupyterLab, opens as a notebook (not as
text, no dialog in the way), shows its cells with the outputs of its paired .ipynb, and its
kernel starts and goes idle. nbval executes every chapter in full, so the browser does not run
them again: each chapter executes once per suite (chapter 01 alone runs in full in the
browser, in test_learner_side, for the widgets that need a live kernel; Notebook 7 and
`make lab` each run a first cell). A deliberately broken notebook
proves the error check can fail."""

from __future__ import annotations

import pathlib

import jupytext
import nbformat
import pytest

from tests.browser.helpers import (
    CURRENT,
    error_outputs,
    open_notebook,
    run_all_cells,
    wait_for_idle,
)

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))


def code_cell_count(path: pathlib.Path) -> int:
    return sum(cell.cell_type == "code" for cell in jupytext.read(path).cells)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_chapter_opens_in_jupyterlab_with_its_kernel(lab, page, source):
    open_notebook(page, lab, source.name)
    # JupyterLab draws only the cells near the viewport, so the DOM holds a few of them: the
    # notebook opened as cells (not as text), and what is drawn of the paired outputs is clean.
    assert page.locator(f"{CURRENT} .jp-CodeCell").count() >= 1, "no code cell drawn"
    assert code_cell_count(source) >= 1
    assert error_outputs(page) == [], "the paired .ipynb carries an error output"


def test_an_error_output_is_caught(lab, page):
    """The error check must see an exception raised in a cell (else the tests above prove nothing)."""
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
