"""A quiz in a freshly opened chapter, before anything has run, in JupyterLab and Notebook 7:
the saved chapter shows the question with the steps that make it live (not plain text), the
steps name the Run menu's own item, and following them (Run All Above Selected Cell, then
Shift+Enter on the quiz) gives a quiz the learner answers. One quiz in each of chapters 00, 04
and 08, the first of each; in JupyterLab the answered quiz, drawn again in a new view, still
shows the learner's choice (what reopening a chapter with its saved widget state does).

Chapter 04's first quiz computes its answer from the cells above it, so it is graded at once;
chapters 00 and 08 compute theirs from a measurement further down, and the quiz answers the
prediction by saying which cell below to run first: either way the kernel received and handled the answer.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from labkit.show.widgets.quiz import RUN_ABOVE
from tests.browser.conftest import jupyter_server
from tests.browser.helpers import (
    Lab,
    open_notebook,
    shut_down_kernels,
    wait_for_front_kernel,
    wait_for_idle,
)

CHAPTERS = ["00_setup_check.py", "04_fusion.py", "08_inference_ladder.py"]
GRADED_AT_ONCE = {"04_fusion.py"}

# The index of the first cell whose saved output is a quiz, read from the document's model.
_FIRST_QUIZ = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.widgets;
  for (let i = 0; i < cells.length; i++) {
    if (cells[i].model.type !== 'code') continue;
    const outputs = cells[i].model.outputs.toJSON();
    if (outputs.some(o => o.data && String(o.data['text/plain'] || '').startsWith('Quiz:'))) return i;
  }
  return -1;
}"""

_SHOW = """async (index) => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  notebook.activeCellIndex = index;
  notebook.mode = 'command';
  await notebook.scrollToItem(index, 'center');
  notebook.node.focus();
}"""


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory) -> Iterator[Lab]:
    with jupyter_server(tmp_path_factory.mktemp("nb7-quiz"), "notebook") as server:
        yield server


def quiz_cell(page: Page, index: int):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)


def open_chapter(page: Page, server: Lab, app: str, chapter: str) -> str:
    """Open `chapter` fresh; the CSS selector of its notebook panel."""
    if app == "lab":
        open_notebook(page, server, chapter)
        return ".jp-NotebookPanel:not(.lm-mod-hidden)"
    page.goto(f"{server.url}notebooks/{chapter}?token={server.token}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.content", timeout=120_000)
    wait_for_front_kernel(page, 180)
    return ".jp-NotebookPanel"


def answer_first_quiz(page: Page, server: Lab, app: str, chapter: str) -> None:
    panel = open_chapter(page, server, app, chapter)
    index = page.evaluate(_FIRST_QUIZ)
    assert index >= 0, f"{chapter} has no saved quiz"
    page.evaluate(_SHOW, index)
    cell = page.locator(f"{panel} .jp-Notebook .jp-Cell").nth(index)
    static = cell.locator(".lt-quiz-static")
    static.wait_for(timeout=30_000)
    # before running: the saved quiz, with the steps that make it live; the step is the Run
    # menu's own item
    assert RUN_ABOVE in static.inner_text() and "Shift+Enter" in static.inner_text()
    assert page.evaluate("() => window.jupyterapp.commands.label('notebook:run-all-above')") == RUN_ABOVE
    assert cell.locator(".lt-quiz form").count() == 0, "a live quiz before anything ran?"
    # follow them, as the learner reads them: the Run menu, then Shift+Enter on the quiz
    page.get_by_role("menuitem", name="Run", exact=True).first.click()
    page.get_by_role("menuitem", name=RUN_ABOVE).first.click()
    page.wait_for_timeout(1000)
    wait_for_idle(page, timeout_s=420, panel=panel,
                  indicator=".jp-Notebook-ExecutionIndicator" if app == "lab" else None)
    page.evaluate(_SHOW, index)
    page.keyboard.press("Shift+Enter")
    live = cell.locator(".lt-quiz")
    live.locator("[data-role=submit]").wait_for(timeout=120_000)
    radio = live.locator("input[type=radio]").first
    if radio.count():
        radio.check()
    else:
        live.locator("input[data-role=answer]").fill("2")
    live.locator("[data-role=submit]").click()
    page.wait_for_function(
        """(el) => {
             const result = el.querySelector('[data-role=result]');
             const error = el.querySelector('[data-role=error]');
             return (result && result.dataset.correct !== undefined) || (error && error.textContent);
           }""", arg=live.element_handle(), timeout=120_000)
    graded = live.locator("[data-role=result][data-correct]").count() == 1
    error = live.locator("[data-role=error]").inner_text()
    if chapter in GRADED_AT_ONCE:
        assert graded, f"{chapter}: the quiz did not grade the answer: {error!r}"
    else:
        # the quiz's answer to a prediction made before its measurement: what to run next
        assert graded or ("run" in error and "below" in error), f"{chapter}: {error!r}"
    if app == "lab" and radio.count():
        chosen = radio.get_attribute("value")
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:create-output-view')")
        again = page.locator(".jp-LinkedOutputView .lt-quiz").last
        again.wait_for(timeout=30_000)
        checked = again.locator("input[type=radio]:checked")
        assert checked.count() == 1 and checked.get_attribute("value") == chosen, \
            "a redrawn quiz lost the learner's choice"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_quiz_is_answered_from_the_saved_chapter_in_jupyterlab(lab, page, chapter):
    try:
        answer_first_quiz(page, lab, "lab", chapter)
    finally:
        shut_down_kernels(lab)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_quiz_is_answered_from_the_saved_chapter_in_notebook7(notebook7, page, chapter):
    try:
        answer_first_quiz(page, notebook7, "notebook", chapter)
    finally:
        shut_down_kernels(notebook7)
