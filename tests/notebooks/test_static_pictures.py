"""Every widget in a saved chapter carries a static picture beside it, so GitHub, nbviewer,
an HTML export and any front end without the widget manager show a picture, not an empty box.

Checked on the executed notebooks as committed, and through nbconvert's HTML export."""

from __future__ import annotations

import nbformat
import pytest

from tests.paths import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WIDGET = "application/vnd.jupyter.widget-view+json"
QUIZ_STATIC = "lt-quiz-static"  # the class of a saved quiz's HTML (labkit.show.widgets.quiz)


def static_picture(data: dict) -> str | None:
    """The static form an output carries beside a widget view, if any."""
    if "image/svg+xml" in data or "image/png" in data:
        return "image"
    html = data.get("text/html", "")
    html = "".join(html) if isinstance(html, list) else html
    return "html" if ("<svg" in html or "<img" in html) else None


def widget_outputs(notebook: nbformat.NotebookNode) -> list[tuple[int, dict]]:
    return [(index, output.get("data", {})) for index, cell in enumerate(notebook.cells)
            if cell.cell_type == "code" for output in cell.get("outputs", [])
            if WIDGET in output.get("data", {})]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_widget_output_has_a_static_picture(path):
    notebook = nbformat.read(path, as_version=4)
    missing = [index for index, data in widget_outputs(notebook) if static_picture(data) is None]
    assert not missing, f"{path.name}: widget outputs without a static picture in cells {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_html_export_shows_the_pictures(path):
    from nbconvert import HTMLExporter

    notebook = nbformat.read(path, as_version=4)
    count = len(widget_outputs(notebook))
    body, _ = HTMLExporter().from_notebook_node(notebook)
    # A quiz's static form is HTML (its question, choices and how to make it live), which an
    # export prefers to the SVG beside it: it counts as the quiz's picture (issue 43).
    pictures = body.count("<svg") + body.count("<img") + body.count(QUIZ_STATIC)
    assert pictures >= count, f"{path.name}: {count} widgets but {pictures} pictures in the HTML"


def test_a_widget_without_a_picture_is_caught():
    """The check must fail on a bare widget view (else it proves nothing)."""
    assert static_picture({WIDGET: {"model_id": "x"}, "text/plain": "Quiz(...)"}) is None
    assert static_picture({WIDGET: {}, "image/svg+xml": "<svg/>"}) == "image"
