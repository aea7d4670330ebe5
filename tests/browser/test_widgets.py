"""The widgets in a real JupyterLab: what the page shows must equal what labkit.core.layout computes.

One notebook (tests/browser/widget_demo.py) is opened and run once per module; each test
works on its own widget, found by its title, and keeps a screenshot of it.
"""

from __future__ import annotations

import pathlib
import re

import jupytext
import nbformat
import numpy as np
import pytest
import torch

from labkit.core import layout
from tests.browser import launcher
from tests.browser.conftest import SCREENSHOTS
from tests.browser.helpers import (
    accept_kernel_dialog,
    error_outputs,
    open_notebook,
    run_all_cells,
    wait_for_idle,
)

DEMO = pathlib.Path(__file__).with_name("widget_demo.py")
# The tensors the demo notebook draws, by title (checked against the notebook's text below).
CASES = {
    "transpose": "torch.arange(12).reshape(3, 4).t()",
    "broadcast": "torch.arange(4).expand(3, 4)",
    "gaps": "torch.arange(40).reshape(5, 8)[1:4, 2::3]",
    "3d": "torch.arange(24).reshape(2, 3, 4).permute(0, 2, 1)",
    "channels_last": "torch.arange(24).reshape(1, 2, 3, 4).contiguous(memory_format=torch.channels_last)",
    "scalar": "torch.tensor(7)",
    "empty": "torch.zeros(0, 3)",
}


def case_layout(title: str) -> layout.Layout:
    return layout.of(eval(CASES[title], {"torch": torch}))


def wait_until(check, timeout_s: float = 15, what: str = "condition"):
    """The launcher's bounded wait, with this module's default of 15 s."""
    return launcher.wait_until(check, timeout_s, what, poll_s=0.1)


def drawn_offsets(grid) -> dict[tuple[int, ...], int]:
    """Storage cell the page drew for each logical element (from the rects' data attributes)."""
    pairs = grid.locator("rect.lt-el").evaluate_all(
        "rects => rects.map(r => [r.dataset.pos, +r.dataset.cell])")
    return {tuple(int(i) for i in pos.split(",") if i != ""): cell for pos, cell in pairs}


def expected_offsets(lay: layout.Layout) -> dict[tuple[int, ...], int]:
    offsets = layout.element_offsets(lay)
    return {tuple(int(i) for i in idx): int(offsets[idx]) for idx in np.ndindex(*lay.shape)}


def kernel_text(grid) -> str:
    """Wait for the formula that came back from the kernel for the current selection."""
    grid.locator("[data-role=address-text][data-source=kernel]").wait_for(timeout=15_000)
    return grid.locator("[data-role=address-text]").inner_text()


@pytest.fixture(scope="module")
def demo(lab, browser):
    """The demo notebook, run once in JupyterLab; its page is shared by this module's tests."""
    text = " ".join(DEMO.read_text().split())  # whitespace-normalised, line breaks included
    for title, expression in CASES.items():
        assert f'{expression}, title="{title}"' in text, f"demo notebook lost case {title}"
    nbformat.write(jupytext.read(DEMO), pathlib.Path(lab.root) / "widget_demo.ipynb")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.script_errors = []  # uncaught JavaScript errors, checked by the last test
    page.on("pageerror", lambda error: page.script_errors.append(str(error)))
    try:
        open_notebook(page, lab, "widget_demo.ipynb")
        accept_kernel_dialog(page)
        run_all_cells(page)
        wait_for_idle(page, timeout_s=180)
        page.locator(".lt-quiz").nth(4).wait_for(timeout=90_000)  # the last widget drawn
    except Exception:
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "widget_demo_failed.png"), full_page=True)
        raise
    assert error_outputs(page) == []
    yield page
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "widget_demo.png"), full_page=True)
    context.close()


def grid_titled(page, title: str):
    grid = page.locator(f'.lt-grid-widget[data-title="{title}"]')
    grid.wait_for(timeout=30_000)
    grid.scroll_into_view_if_needed()
    return grid


def shot(locator, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    locator.screenshot(path=str(SCREENSHOTS / f"widget_{name}.png"))


@pytest.mark.parametrize("title", list(CASES))
def test_grid_draws_every_element_at_layouts_offset(demo, title):
    grid = grid_titled(demo, title)
    lay = case_layout(title)
    assert drawn_offsets(grid) == expected_offsets(lay)
    kind = grid.locator("[data-role=kind]")
    # a grid scrolled back into view may be drawn again (JupyterLab renders only the cells near
    # the viewport): its label is read once it is drawn, then must be the layout's kind
    wait_until(lambda: kind.inner_text(), what=f"the {title} grid's kind label")
    assert kind.inner_text() == layout.classify(lay).kind
    shot(grid, f"drawn_{title}")


@pytest.mark.parametrize("title", ["transpose", "gaps", "3d"])
def test_clicking_an_element_highlights_its_cell_and_shows_layouts_formula(demo, title):
    grid = grid_titled(demo, title)
    lay = case_layout(title)
    indices = list(np.ndindex(*lay.shape))
    for index in [indices[0], indices[len(indices) // 2], indices[-1]]:
        pos = ",".join(str(i) for i in index)
        grid.locator(f'rect.lt-el[data-pos="{pos}"]').click()
        assert kernel_text(grid) == layout.address_formula(lay, index)
        cell = layout.element_offset(lay, index)
        targets = grid.locator("rect.lt-cell.lt-target").evaluate_all(
            "rects => rects.map(r => +r.dataset.cell)")
        assert targets == [cell]
        info = grid.locator("[data-role=info]")
        assert info.get_attribute("data-storage-index") == str(cell)
        assert info.get_attribute("data-byte-address") == str(layout.byte_address(lay, index))
        assert info.get_attribute("data-selected") == pos
        selected = grid.locator("rect.lt-el.lt-selected").evaluate_all(
            "rects => rects.map(r => r.dataset.pos)")
        assert selected == [pos]
    shot(grid, f"grid_{title}")


def test_hover_preview_computed_in_the_page_agrees_with_layout(demo):
    grid = grid_titled(demo, "3d")
    lay = case_layout("3d")
    formula = grid.locator("[data-role=address-text]")
    for index in list(np.ndindex(*lay.shape))[::5]:
        grid.locator(f'rect.lt-el[data-pos="{",".join(map(str, index))}"]').hover()
        assert formula.get_attribute("data-source") == "preview"
        assert formula.inner_text() == layout.address_formula(lay, index)


def test_clicking_a_storage_cell_highlights_every_element_that_reads_it(demo):
    grid = grid_titled(demo, "broadcast")
    lay = case_layout("broadcast")
    offsets = layout.element_offsets(lay)
    for cell in range(lay.storage_size):
        grid.locator(f'rect.lt-cell[data-cell="{cell}"]').click()
        text = kernel_text(grid)
        expected = sorted(",".join(map(str, idx)) for idx in np.argwhere(offsets == cell))
        lit = grid.locator("rect.lt-el.lt-selected").evaluate_all(
            "rects => rects.map(r => r.dataset.pos)")
        assert sorted(lit) == expected
        assert text.startswith(f"storage cell {cell} ") and f"{len(expected)} elements" in text
    shared = grid.locator("rect.lt-cell.lt-shared").evaluate_all("rs => rs.map(r => +r.dataset.cell)")
    counts = np.bincount(offsets.ravel(), minlength=lay.storage_size)
    assert shared == [c for c in range(lay.storage_size) if counts[c] > 1]
    shot(grid, "grid_broadcast")


def test_unused_cells_and_the_offset_are_marked(demo):
    grid = grid_titled(demo, "gaps")
    lay = case_layout("gaps")
    used = set(layout.element_offsets(lay).ravel().tolist())
    unused = grid.locator("rect.lt-cell.lt-unused").evaluate_all("rs => rs.map(r => +r.dataset.cell)")
    assert unused == [c for c in range(lay.storage_size) if c not in used]
    before = grid.locator("rect.lt-cell.lt-before-offset").evaluate_all(
        "rs => rs.map(r => +r.dataset.cell)")
    assert before == list(range(lay.offset))
    assert "offset" in grid.get_attribute("data-flags").split()


def test_a_large_tensor_gets_a_summary_that_says_why(demo):
    grid = grid_titled(demo, "large")
    summary = grid.locator("[data-role=summary]")
    assert "10000 elements" in summary.inner_text() and "4096" in summary.inner_text()
    assert grid.locator("rect").count() == 0


def explorer_offsets(explorer) -> dict[tuple[int, ...], int]:
    return drawn_offsets(explorer.locator(".lt-grid-widget"))


def test_stride_explorer_redraws_and_reports_out_of_bounds(demo):
    explorer = demo.locator(".lt-explorer")
    explorer.scroll_into_view_if_needed()
    grid = explorer.locator(".lt-grid-widget")
    start = layout.check((3, 4), (4, 1), 0, 4, 12)
    assert explorer_offsets(explorer) == expected_offsets(start)
    renders = int(grid.get_attribute("data-render-count"))

    field = {name: explorer.locator(f"input[data-field={name}]") for name in ("shape", "stride", "offset")}
    field["shape"].fill("4, 3")
    field["stride"].fill("1, 4")
    field["stride"].press("Enter")
    transposed = layout.check((4, 3), (1, 4), 0, 4, 12)
    wait_until(lambda: explorer_offsets(explorer) == expected_offsets(transposed),
               what="the grid to redraw as shape (4, 3), stride (1, 4)")
    assert int(grid.get_attribute("data-render-count")) > renders
    assert explorer.locator("[data-role=error]").inner_text() == ""
    assert grid.locator("[data-role=kind]").inner_text() == layout.classify(transposed).kind

    field["stride"].fill("5, 4")
    field["stride"].press("Enter")
    with pytest.raises(layout.LayoutError) as refused:
        layout.check((4, 3), (5, 4), 0, 4, 12)
    error = explorer.locator("[data-role=error]")
    wait_until(lambda: error.inner_text(), what="the error text")
    assert error.inner_text() == str(refused.value)
    assert "storage holds only 12" in error.inner_text()
    assert field["stride"].get_attribute("aria-invalid") == "true"
    assert explorer_offsets(explorer) == expected_offsets(transposed)  # last valid layout kept
    stale = explorer.locator(".lt-explorer-grid")
    assert "lt-stale" in stale.get_attribute("class").split()  # ...but greyed out
    assert stale.get_attribute("aria-disabled") == "true"
    shot(explorer, "explorer_error")

    field["shape"].fill("1,,2")  # an empty item: a message, never an exception
    field["shape"].press("Enter")
    wait_until(lambda: "empty" in error.inner_text(), what="the empty-item message")

    explorer.locator("button[data-preset=sliding_window]").click()
    wait_until(lambda: field["stride"].input_value() == "2, 1", what="the preset's strides")
    assert field["shape"].input_value() == "5, 4" and error.inner_text() == ""
    assert "lt-stale" not in stale.get_attribute("class").split()
    window = layout.check((5, 4), (2, 1), 0, 4, 12)
    wait_until(lambda: explorer_offsets(explorer) == expected_offsets(window),
               what="the sliding-window grid")
    assert explorer.locator("button[data-preset=sliding_window]").get_attribute("aria-pressed") == "true"
    shot(explorer, "explorer_preset")


def test_quiz_answered_with_the_keyboard(demo):
    quiz = demo.locator(".lt-quiz").nth(0)
    quiz.scroll_into_view_if_needed()
    quiz.locator("input[type=radio]").first.focus()
    demo.keyboard.press("ArrowDown")  # moves to "(1, 4)" (and must not move JupyterLab's cell)
    assert quiz.locator('input[data-choice="(1, 4)"]').is_checked()
    demo.keyboard.press("Enter")
    result = quiz.locator("[data-role=result][data-correct]")
    result.wait_for(timeout=15_000)
    assert result.get_attribute("data-correct") == "true"
    expected = str(tuple(torch.zeros(3, 4).t().stride()))
    assert quiz.locator("[data-role=computed]").inner_text() == f"Computed by the code: {expected}"
    shot(quiz, "quiz_choice")


def test_numeric_quiz_wrong_prediction_and_bad_input(demo):
    quiz = demo.locator(".lt-quiz").nth(1)
    answer = quiz.locator("input[data-role=answer]")
    answer.fill("lots")
    answer.press("Enter")
    error = quiz.locator("[data-role=error]")
    wait_until(lambda: error.inner_text(), what="the quiz's input error")
    assert "not a number" in error.inner_text()
    answer.fill("12")
    answer.press("Enter")
    result = quiz.locator("[data-role=result][data-correct]")
    result.wait_for(timeout=15_000)
    assert result.get_attribute("data-correct") == "false"
    nbytes = torch.zeros(3, 4).nbytes
    assert f"the code computed {nbytes} B" in result.inner_text()
    assert error.inner_text() == ""
    shot(quiz, "quiz_number")


def test_quiz_shows_the_error_when_the_answer_code_raises(demo):
    quiz = demo.locator(".lt-quiz").nth(2)
    quiz.locator("input[data-role=answer]").fill("0")
    quiz.locator("button[data-role=submit]").click()
    error = quiz.locator("[data-role=error]")
    wait_until(lambda: error.inner_text(), what="the quiz's error text")
    assert re.fullmatch(r"the code that computes the answer raised IndexError: index 5 is out "
                        r"of bounds.*", error.inner_text())
    assert quiz.locator("[data-role=result]").get_attribute("data-correct") is None
    assert error_outputs(demo) == []  # shown in the widget, not as a traceback
    shot(quiz, "quiz_error")


def test_an_answer_the_kernel_computes_slowly_is_waited_for_without_a_note(demo):
    """The kernel takes a submission up at once (`received`), so an answer that takes longer
    than answer_wait_ms to compute (05's knee quiz runs a sweep: 17.7 s on the H200) gets no
    'no answer' note (review 2026-12-05q3 item 2)."""
    quiz = demo.locator(".lt-quiz").nth(3)
    quiz.locator("input[data-role=answer]").fill("3")
    quiz.locator("button[data-role=submit]").click()
    error = quiz.locator("[data-role=error]")
    demo.wait_for_timeout(2_000)   # past its 1 s wait, inside its 3 s answer
    assert error.inner_text() == ""
    assert quiz.locator("[data-role=result]").inner_text() == "Computing the answer in the kernel…"
    result = quiz.locator("[data-role=result][data-correct]")
    result.wait_for(timeout=15_000)
    assert result.get_attribute("data-correct") == "true" and error.inner_text() == ""


def test_a_submission_no_kernel_takes_up_says_so_and_what_to_do(demo):
    """A quiz whose kernel never takes its submission up (a saved chapter's quiz after a kernel
    restart sat at 'Computing the answer in the kernel...' for over 50 s: review 2026-12-05q
    browser 05-07 item 2) says so within answer_wait_ms, and how to get a live quiz."""
    quiz = demo.locator(".lt-quiz").nth(4)
    quiz.locator("input[data-role=answer]").fill("3")
    quiz.locator("button[data-role=submit]").click()
    error = quiz.locator("[data-role=error]")
    wait_until(lambda: error.inner_text(), what="the note that no answer came")
    assert error.inner_text().startswith("No answer from the kernel yet.")
    assert "run the quiz's cell again (Shift+Enter)" in error.inner_text()
    assert quiz.locator("[data-role=result]").inner_text() == "Computing the answer in the kernel…"
    shot(quiz, "quiz_no_kernel")


def test_no_javascript_errors_in_the_page(demo):
    """Every widget above (and the scalar, empty and channels_last grids) drew without a JS error."""
    for title in ("scalar", "empty", "channels_last"):
        grid_titled(demo, title)
    assert grid_titled(demo, "scalar").locator("rect.lt-el").count() == 1
    assert grid_titled(demo, "empty").locator("rect.lt-el").count() == 0
    assert demo.script_errors == []
