"""The learner's side of chapter 01 in a real JupyterLab: a quiz's answer is not on screen
before the learner answers it, the address grid and a quiz answer from the kernel, and an
exercise graded wrong then right shows the first failing case, then success.

Chapter 01 runs once, through the UI (Run All), for this whole module: it is the one chapter
the browser suite executes in full (nbval executes every chapter). The tests run in file
order on that one page; the exercise, which rewrites a cell, comes last.
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import SCREENSHOTS
from tests.browser.helpers import (
    CURRENT,
    error_outputs,
    open_notebook,
    run_all_cells,
    wait_for_idle,
)


@pytest.fixture(scope="module")
def chapter_01(lab, browser):
    """Chapter 01 opened from its .py and run to the end once; its page is shared."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        open_notebook(page, lab, "01_strides_and_views.py")
        run_all_cells(page)
        wait_for_idle(page, timeout_s=400)
        assert error_outputs(page) == []
        yield page
    finally:
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "chapter_01.png"), full_page=True)
        context.close()


def section_text_up_to_quiz(page, quiz_words: str) -> tuple[str, list[str]]:
    """The text a learner sees from the section's heading down to the quiz, and its choices.

    Read from textContent (JupyterLab skips rendering cells far from the viewport, so their
    innerText is empty), leaving out the source of collapsed cells, which is not shown.
    """
    page.locator(f"{CURRENT} .lt-quiz", has_text=quiz_words).first.scroll_into_view_if_needed()
    return page.evaluate(
        """([selector, words]) => {
             const cells = [...document.querySelectorAll(selector + ' .jp-Cell')];
             const at = cells.findIndex(c => c.querySelector('.lt-quiz')
                                             && c.textContent.includes(words));
             if (at < 0) return ['', []];
             let start = at;
             while (start > 0 && !cells[start].querySelector('h2')) start -= 1;
             const shown = c => {
               if (c.querySelector('.jp-InputPlaceholder')) {  // collapsed: outputs only
                 const out = c.querySelector('.jp-Cell-outputWrapper');
                 return out ? out.textContent : '';
               }
               const md = c.querySelector('.jp-RenderedMarkdown');
               return md ? md.textContent : c.textContent;
             };
             const quiz = cells[at].querySelector('.lt-quiz');
             const choices = [...quiz.querySelectorAll('input[data-choice]')].map(i => i.dataset.choice);
             const text = cells.slice(start, at).map(shown).join('\\n')
                          + '\\n' + (quiz.querySelector('.lt-question')?.textContent || '');
             return [text, choices];
           }""", [CURRENT, quiz_words])


def test_quizzes_hide_their_answers(chapter_01):
    page = chapter_01
    for words, answer in [("x.t()?", "(1, 4)"), ("m.permute(0, 2, 1)?", "(12, 1, 4)")]:
        text, choices = section_text_up_to_quiz(page, words)
        assert text, f"no quiz asking {words!r} found"
        assert answer in choices, (answer, choices)
        assert answer not in text and answer.replace("(", "[").replace(")", "]") not in text, (
            f"the answer {answer} is on screen above its quiz:\n{text}")
        assert "quiz_" not in text and "answer=" not in text, "the quiz's source is visible"


def test_a_grid_and_a_quiz_respond(chapter_01):
    """The address grid answers a click with the storage cell labkit.core.layout computes,
    and the first quiz grades an answer with the computed one."""
    from labkit.core import layout

    page = chapter_01
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


def test_an_exercise_is_graded_wrong_then_right(chapter_01):
    exercise_graded_wrong_then_right(chapter_01)


def rerun_exercise(page, code: str) -> str:
    """Replace the learner's function with `code`, run it and the check; return the report."""
    page.evaluate("""(selector) => [...document.querySelectorAll(selector + ' .jp-CodeCell')]
                       .find(c => c.textContent.includes('def contiguous_strides'))
                       .scrollIntoView()""", CURRENT)
    cell = page.locator(f"{CURRENT} .jp-CodeCell", has_text="def contiguous_strides").first
    cell.scroll_into_view_if_needed()
    editor = cell.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(code)
    page.keyboard.press("Shift+Enter")  # runs the function's cell, moves to the check below
    page.keyboard.press("Shift+Enter")  # runs the check
    wait_for_idle(page, timeout_s=120)
    report = page.locator(f"{CURRENT} .lt-exercise-report").first
    report.scroll_into_view_if_needed()
    return f"{report.get_attribute('data-passed')}|{report.text_content()}"


def exercise_graded_wrong_then_right(page) -> None:
    first = page.locator(f"{CURRENT} .lt-exercise-report").first
    first.scroll_into_view_if_needed()
    assert "not written yet" in first.text_content()
    wrong = rerun_exercise(page, "def contiguous_strides(shape):\n    return tuple(1 for _ in shape)")
    assert wrong.startswith("false|") and "fails" in wrong and "torch says" in wrong, wrong
    right = rerun_exercise(
        page, "import math\ndef contiguous_strides(shape):\n    return tuple(math.prod("
              "max(s, 1) for s in shape[i + 1:]) for i in range(len(shape)))")
    assert right.startswith("true|") and "agree with torch" in right, right
