"""A chapter page cannot answer a quiz: what a quiz held back is shown as a reader expects
(scripts/build_site.py, open_held_outputs), without building the site: verdict tables open,
the rest of a cell behind one <details> that says what it holds, never "answer the quiz
above"; a quiz shows its picture, not its steps to make it live in Jupyter."""

from __future__ import annotations

import nbformat

from labkit.show.widgets import Quiz
from labkit.show.widgets.holdback import NOTE, Held
from tests.site.building import build_script

VIEW = "application/vnd.jupyter.widget-view+json"


def saved(widget) -> dict:
    """The widget's output as a saved notebook holds it."""
    bundle = widget._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    return nbformat.v4.new_output("display_data", data=dict(data))


def page_outputs(outputs: list) -> list:
    site = build_script()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=outputs)])
    site.drop_widget_views(notebook)
    site.open_held_outputs(notebook)
    return notebook.cells[0].outputs


def html(output) -> str:
    return output["data"]["text/html"]


def test_verdict_tables_open_and_the_rest_behind_one_details_per_cell():
    card = ("<table><tr><th style='text-align:left'>claim</th><td>C7</td></tr>"
            "<tr><th>verdict</th><td>refuted</td></tr></table>")
    first = Held("<pre>hot 10x cold</pre>", "hot 10x cold")
    second = Held("<b>the table</b>", "the table", note="")  # the same cell's: no banner
    shown = page_outputs([saved(first), saved(second), saved(Held(card, "C7 refuted"))])
    assert len(shown) == 2
    assert html(shown[0]).count("<details") == 1 and "hot 10x cold" in html(shown[0])
    assert "the table" in html(shown[0]) and "predict first" in html(shown[0])
    assert html(shown[1]) == card, "the verdict table is shown open"
    assert not any(NOTE in html(o) or "answer the quiz above" in html(o) for o in shown)


def test_a_quiz_on_a_page_shows_its_picture_not_steps_to_run_cells():
    quiz = Quiz("Hot over cold?", choices=["1x", "10x"], answer="10x")
    (shown,) = page_outputs([saved(quiz)])
    assert "text/html" not in shown["data"], "the steps to make it live in Jupyter"
    assert "Hot over cold?" in shown["data"]["image/svg+xml"]


def test_outputs_that_were_never_held_are_left_alone():
    plain = nbformat.v4.new_output("stream", name="stdout", text="measured\\n")
    figure = nbformat.v4.new_output("display_data", data={"text/html": "<p>a figure</p>"})
    assert page_outputs([plain, figure]) == [plain, figure]
