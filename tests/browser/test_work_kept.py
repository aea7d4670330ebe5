"""A learner's side of the course in a real JupyterLab configured as `make lab` configures it
(this worktree's jupyter/*.json, as scripts/configure_jupyter.py installs them).

Chapter 01 runs once, through the UI (Run All), for the tests of this module that read it:
it is the one chapter the browser suite executes in full (nbval executes every chapter). They
run in file order on that one page, each a step a learner takes:

- before any answer, no quiz's answer is on screen above it, and nothing below the C1 quiz
  shows the strides it asks for (the claim card's "has strides (1, 4)", the measurement's
  "stride (1, 4)");
- the address grid answers a click with the storage cell labkit.core.layout computes;
- answering the C1 quiz grades it with the computed answer and shows what it held back;
  the other quizzes skipped, every table of the chapter fits its output area;
- an exercise is graded wrong, then right, with the first failing case;
- the chapter saved, closed and reopened shows its outputs and the learner's answer.

And: an untouched chapter opens clean and closes without a Save/Discard dialog; every table
of the ledger fits.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import ROOT, SCREENSHOTS, jupyter_server
from tests.browser.helpers import (
    CURRENT,
    Lab,
    error_outputs,
    open_in_loaded_page,
    open_notebook,
    run_all_cells,
    wait_for_front_kernel,
    wait_for_idle,
)

CHAPTER = "01_strides_and_views.py"


@contextlib.contextmanager
def course_configured(base: Path) -> Iterator[None]:
    """This worktree's Jupyter settings, found before the environment's own (JUPYTER_CONFIG_PATH
    comes first), with JupyterLab's overrides.json read from a settings folder of ours."""
    config, settings = base / "config", base / "lab-settings"
    config.mkdir()
    settings.mkdir()
    server = json.loads((ROOT / "jupyter" / "jupyter_server_config.json").read_text())
    server["LabApp"] = {"app_settings_dir": str(settings), "expose_app_in_browser": True}
    (config / "jupyter_server_config.json").write_text(json.dumps(server))
    (settings / "overrides.json").write_text((ROOT / "jupyter" / "overrides.json").read_text())
    before = os.environ.get("JUPYTER_CONFIG_PATH")
    os.environ["JUPYTER_CONFIG_PATH"] = str(config)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("JUPYTER_CONFIG_PATH")
        else:
            os.environ["JUPYTER_CONFIG_PATH"] = before


@pytest.fixture(scope="module")
def course_lab(tmp_path_factory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("course-lab")
    with course_configured(base), jupyter_server(base, "lab") as server:
        yield server


def is_dirty(page) -> bool:
    """JupyterLab marks a document with unsaved changes on its tab (and on the panel)."""
    return page.evaluate("""() => !!document.querySelector(
        '.lm-TabBar-tab.lm-mod-current.jp-mod-dirty, .jp-NotebookPanel:not(.lm-mod-hidden).jp-mod-dirty')""")


def notebook_metadata(page) -> str:
    """The front notebook's kernelspec and language_info as the page holds them: what a kernel
    that marks a chapter changed would have written there (shown when that test fails)."""
    return page.evaluate("""() => {
        const panel = window.jupyterapp.shell.currentWidget;
        if (!panel || !panel.model) return 'no notebook in front';
        return JSON.stringify({kernelspec: panel.model.getMetadata('kernelspec'),
                               language_info: panel.model.getMetadata('language_info')});
      }""")


def close_current(page) -> str:
    """Close the front tab; the text of a dialog that asks something, else ''."""
    page.keyboard.press("Alt+w")
    dialog = page.locator(".jp-Dialog")
    try:
        dialog.wait_for(timeout=3_000)
    except Exception:  # noqa: BLE001 - no dialog: the tab closed
        return ""
    text = dialog.inner_text()
    page.get_by_role("button", name="Discard").click()
    return text


def outputs_showing(page, quiz_words: str, wanted: tuple[str, ...], timeout_s: float = 60.0) -> str:
    """The section's outputs once they show every wanted text, or as they are at the time limit.

    A reopened chapter draws the quiz first and reveals the outputs it held back a moment
    later (and JupyterLab renders cells lazily), so this reads again until they are there."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            shown = section_outputs(page, quiz_words)
        except AssertionError:  # the cells below the quiz not drawn yet (JupyterLab's windowing)
            if time.monotonic() > deadline:
                raise
            page.locator(f"{CURRENT} .lt-quiz", has_text=quiz_words).first.scroll_into_view_if_needed()
            page.mouse.wheel(0, 400)
            page.wait_for_timeout(500)
            continue
        if all(w in shown for w in wanted) or time.monotonic() > deadline:
            return shown
        page.wait_for_timeout(500)


def section_outputs(page, quiz_words: str) -> str:
    """What a learner sees in the outputs of the cells below the quiz, up to the next heading.

    Each cell is scrolled into view first (JupyterLab does not render cells far from the
    viewport), and innerText is read: text that is not rendered (a closed <details>, a
    placeholder's content not yet on the page) does not count as shown.
    """
    count = page.evaluate("""([selector, words]) => {
        const cells = [...document.querySelectorAll(selector + ' .jp-Cell')];
        const at = cells.findIndex(c => c.querySelector('.lt-quiz') && c.textContent.includes(words));
        let end = at + 1;
        while (end < cells.length && !cells[end].querySelector('h2')) end += 1;
        window.__section = cells.slice(at + 1, end);
        return at < 0 ? -1 : end - at - 1;
      }""", [CURRENT, quiz_words])
    assert count > 0, f"no quiz asking {quiz_words!r}, or nothing below it"
    shown = []
    for i in range(count):
        # Read after two animation frames: the browser lays out a cell that content-visibility
        # skipped in the frame after it comes into view, so its innerText is there by then.
        shown.append(page.evaluate("""async (i) => {
            window.__section[i].scrollIntoView();
            await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
            const out = window.__section[i].querySelector('.jp-Cell-outputWrapper');
            return out ? out.innerText : '';
          }""", i))
    return "\n".join(shown)


def answer_quiz(page, quiz_words: str, choice: str) -> None:
    quiz = page.locator(f"{CURRENT} .lt-quiz", has_text=quiz_words).first
    quiz.scroll_into_view_if_needed()
    quiz.locator(f"input[data-choice='{choice}']").check()
    quiz.locator("button[data-role=submit]").click()
    quiz.locator("[data-role=result][data-correct]").wait_for(timeout=60_000)


def tables_too_wide(page) -> list[str]:
    """Each rendered table wider than the output area it sits in: 'width > area (its start)'."""
    count = page.evaluate(f"""() => (window.__tables = [...document.querySelectorAll(
        '{CURRENT} .jp-OutputArea-output table')]).length""")
    wide = []
    for i in range(count):
        wide += page.evaluate("""(i) => {
            const table = window.__tables[i];
            table.scrollIntoView();
            const area = table.closest('.jp-OutputArea-output').getBoundingClientRect();
            const box = table.getBoundingClientRect();
            return box.width > 0 && box.right > area.right + 1
              ? [`${Math.round(box.width)} px table in a ${Math.round(area.width)} px area: `
                 + table.textContent.slice(0, 80)] : [];
          }""", i)
    return wide


def test_an_untouched_chapter_opens_clean_and_closes_without_a_dialog(course_lab, page):
    open_notebook(page, course_lab, "00_setup_check.py")
    # What could mark it changed arrives after the kernel is idle: the kernel's info, which
    # JupyterLab writes into the notebook's kernelspec and language_info. Waited for as a
    # condition (the kernel connected and idle, so its info reply is in), not as a pause.
    wait_for_front_kernel(page, timeout_s=60)
    page.wait_for_function("""() => window.jupyterapp.shell.currentWidget.model
                                 .getMetadata('language_info') !== undefined""", timeout=60_000)
    assert not is_dirty(page), f"an untouched chapter is marked as changed: {notebook_metadata(page)}"
    assert close_current(page) == "", "closing an untouched chapter asked a question"


@pytest.fixture(scope="module")
def chapter_01(course_lab, browser):
    """Chapter 01 opened from its .py and run to the end once (Run All); its page is shared by
    the tests below, in file order."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    try:
        open_notebook(page, course_lab, CHAPTER)
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


def test_run_all_holds_the_c1_answer_back(chapter_01):
    before = section_outputs(chapter_01, "x.t()?")
    assert "(1, 4)" not in before, f"the C1 quiz's answer is shown under it:\n{before}"
    assert "Held back until you answer the quiz above" in before


def test_the_grid_answers_a_click_with_layouts_storage_cell(chapter_01):
    from labkit.core import layout

    grid = chapter_01.locator('.lt-grid-widget[data-title="x = arange(12).reshape(3, 4)"]')
    grid.scroll_into_view_if_needed()
    grid.locator('rect.lt-el[data-pos="1,2"]').click()
    expected_cell = layout.element_offset(layout.check((3, 4), (4, 1), itemsize=4), (1, 2))
    grid.locator("[data-role=address-text][data-source=kernel]").wait_for(timeout=15_000)
    targets = grid.locator("rect.lt-cell.lt-target").evaluate_all("rs => rs.map(r => +r.dataset.cell)")
    assert targets == [expected_cell]
    assert grid.locator("[data-role=info]").get_attribute("data-storage-index") == str(expected_cell)
    assert "1×4 + 2×1" in grid.locator("[data-role=address-text]").inner_text()


def test_answering_the_c1_quiz_grades_it_and_shows_what_it_held_back(chapter_01):
    page = chapter_01
    quiz = page.locator(f"{CURRENT} .lt-quiz", has_text="x.t()?").first
    answer_quiz(page, "x.t()?", "(1, 4)")
    assert quiz.locator("[data-role=result]").get_attribute("data-correct") == "true"
    assert "(1, 4)" in quiz.locator("[data-role=computed]").inner_text()
    after = outputs_showing(page, "x.t()?", ("has strides (1, 4)", "stride (1, 4)"))
    assert "has strides (1, 4)" in after and "stride (1, 4)" in after, after


def test_every_table_of_the_chapter_fits_once_its_quizzes_are_skipped(chapter_01):
    page = chapter_01
    skips = page.locator(f"{CURRENT} .lt-quiz button[data-role=skip]")
    for i in range(skips.count()):  # the rest skipped: every table of the chapter is shown
        if not page.locator(f"{CURRENT} .lt-quiz").nth(i).locator("[data-correct]").count():
            skips.nth(i).scroll_into_view_if_needed()
            skips.nth(i).click()
    page.wait_for_function(f"""() => !document.querySelector(
        '{CURRENT} .lt-held[data-revealed=false]')""", timeout=60_000)
    assert tables_too_wide(page) == []


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


def test_an_exercise_is_graded_wrong_then_right(chapter_01):
    page = chapter_01
    first = page.locator(f"{CURRENT} .lt-exercise-report").first
    first.scroll_into_view_if_needed()
    assert "not written yet" in first.text_content()
    wrong = rerun_exercise(page, "def contiguous_strides(shape):\n    return tuple(1 for _ in shape)")
    assert wrong.startswith("false|") and "fails" in wrong and "torch says" in wrong, wrong
    right = rerun_exercise(
        page, "import math\ndef contiguous_strides(shape):\n    return tuple(math.prod("
              "max(s, 1) for s in shape[i + 1:]) for i in range(len(shape)))")
    assert right.startswith("true|") and "agree with torch" in right, right


def test_saved_work_survives_a_reopen(chapter_01, course_lab):
    page = chapter_01
    # Save as a learner does; first leave the quiz (its buttons keep JupyterLab's shortcuts out)
    page.locator(f"{CURRENT} .jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    page.wait_for_function("""() => !document.querySelector(
        '.lm-TabBar-tab.lm-mod-current.jp-mod-dirty')""", timeout=30_000)
    saved = json.dumps(json.loads((Path(course_lab.root) / CHAPTER.replace(".py", ".ipynb")).read_text()))
    assert "you predicted (1, 4)" in saved, "the learner's answer is not in the .ipynb"
    assert "math.prod(" in saved, "the learner's exercise code is not in the .ipynb"
    assert close_current(page) == ""

    open_notebook(page, course_lab, CHAPTER)
    # A condition, not a pause: the reopened quiz drawn with the answer it was saved with (three
    # seconds were once too few, with four test workers on two cores).
    page.wait_for_function("""([selector, words]) => [...document.querySelectorAll(selector + ' .lt-quiz')]
                               .some(q => q.textContent.includes(words) && q.textContent.includes('you predicted'))""",
                           arg=[CURRENT, "x.t()?"], timeout=60_000)
    reopened = outputs_showing(page, "x.t()?", ("has strides (1, 4)", "stride (1, 4)"))
    assert "has strides (1, 4)" in reopened and "stride (1, 4)" in reopened, reopened
    quiz = page.locator(f"{CURRENT} .lt-quiz", has_text="x.t()?").first
    assert "you predicted (1, 4)" in quiz.inner_text()


def test_every_table_of_the_ledger_fits_its_output_area(course_lab, chapter_01):
    """In the page chapter 01 ran in, opened as the file browser opens a file."""
    page = chapter_01
    open_in_loaded_page(page, "99_claims_ledger.py")
    run_all_cells(page)
    wait_for_idle(page, timeout_s=300)
    assert error_outputs(page) == []
    assert page.locator(f"{CURRENT} .jp-OutputArea-output table").count() > 0
    assert tables_too_wide(page) == []
