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


def test_a_grid_and_a_quiz_in_chapter_01_respond(lab, page):
    """In the chapter as learners run it, the address grid answers a click with the storage
    cell labkit.core.layout computes, and the first quiz grades an answer with the computed one."""
    from labkit.core import layout

    open_notebook(page, lab, "01_strides_and_views.py")
    run_all_cells(page)
    wait_for_idle(page, timeout_s=400)
    assert error_outputs(page) == []

    grid = page.locator('.lt-grid-widget[data-title="x = arange(12).reshape(3, 4)"]')
    grid.scroll_into_view_if_needed()
    grid.locator('rect.lt-el[data-pos="1,2"]').click()
    expected_cell = layout.element_offset(layout.check((3, 4), (4, 1), itemsize=4), (1, 2))
    grid.locator("[data-role=address-text][data-source=kernel]").wait_for(timeout=15_000)
    targets = grid.locator("rect.lt-cell.lt-target").evaluate_all("rs => rs.map(r => +r.dataset.cell)")
    assert targets == [expected_cell]
    assert grid.locator("[data-role=info]").get_attribute("data-storage-index") == str(expected_cell)
    assert "1×4 + 2×1" in grid.locator("[data-role=address-text]").inner_text()

    quiz = page.locator(".lt-quiz").first
    quiz.scroll_into_view_if_needed()
    quiz.locator('input[data-choice="(1, 4)"]').check()
    quiz.locator("button[data-role=submit]").click()
    result = quiz.locator("[data-role=result][data-correct]")
    result.wait_for(timeout=15_000)
    assert result.get_attribute("data-correct") == "true"
    assert "(1, 4)" in quiz.locator("[data-role=computed]").inner_text()
