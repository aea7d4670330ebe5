"""Every chapter, opened from its .py source in a real JupyterLab, opens as a notebook (not as
text, no dialog in the way), shows its cells with the outputs of its paired .ipynb, and its
kernel starts and goes idle. nbval executes every chapter in full, so the browser does not run
them again: each chapter executes once per suite (chapter 01 alone runs in full in the
browser, in test_work_kept, for the widgets that need a live kernel; Notebook 7 and
`make lab` each run a first cell). A deliberately broken notebook
proves the error check can fail.

The chapters open one after another in one JupyterLab page, loaded once, through the command
the file browser runs on a double-click (helpers.open_in_loaded_page: `docmanager:open`, which
picks the default viewer the course configures for .py files); opening a chapter from its URL
is tested by every other module.
"""

from __future__ import annotations

import pathlib

import jupytext
import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.helpers import (
    CURRENT,
    error_outputs,
    open_in_loaded_page,
    open_notebook,
    run_all_cells,
    shut_down_kernels,
    wait_for_idle,
)

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))


def code_cell_count(path: pathlib.Path) -> int:
    return sum(cell.cell_type == "code" for cell in jupytext.read(path).cells)


def code_cell_drawn(page) -> bool:
    """Whether a code cell is drawn: JupyterLab draws the cells near the viewport, lazily, so
    a chapter that opens on a long introduction may draw its first code cell only once it is
    scrolled towards (a wait on a condition, then a scroll, then a wait again)."""
    selector = f"{CURRENT} .jp-CodeCell"
    for _ in range(3):
        try:
            page.wait_for_selector(selector, state="attached", timeout=20_000)
            return True
        except PlaywrightTimeout:
            page.locator(f"{CURRENT} .jp-Cell").first.hover(timeout=5_000)  # the notebook's area
            page.mouse.wheel(0, 1500)
    return page.locator(selector).count() >= 1


@pytest.fixture(scope="module")
def lab_page(lab, browser):
    """One JupyterLab page for the chapters of this module, opened on chapter 00."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        open_notebook(page, lab, SOURCES[0].name)
        yield page
    finally:
        context.close()


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_chapter_opens_in_jupyterlab_with_its_kernel(lab, lab_page, source):
    page = lab_page
    try:
        open_in_loaded_page(page, source.name)
        assert page.locator(f"{CURRENT} .jp-Notebook").count() == 1, "it did not open as a notebook"
        # JupyterLab draws only the cells near the viewport, so the DOM holds a few of them: the
        # notebook opened as cells (not as text), and what is drawn of the paired outputs is clean.
        assert code_cell_drawn(page), "no code cell drawn"
        assert code_cell_count(source) >= 1
        assert error_outputs(page) == [], "the paired .ipynb carries an error output"
    finally:
        shut_down_kernels(lab)  # one chapter's kernel at a time on a small machine


def test_an_error_output_is_caught(lab, lab_page):
    """The error check must see an exception raised in a cell (else the tests above prove nothing)."""
    page = lab_page
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("raise ValueError('stride runs off the storage')"),
    ])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, pathlib.Path(lab.root) / "zz_raises.ipynb")
    open_in_loaded_page(page, "zz_raises.ipynb")
    run_all_cells(page)
    wait_for_idle(page, timeout_s=120)
    errors = error_outputs(page)
    assert len(errors) == 1 and "stride runs off the storage" in errors[0]
