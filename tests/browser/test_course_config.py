"""The configuration `make lab` and Binder use, as a learner meets it: the file browser lists
each chapter once, closing a chapter shuts its kernel down (Binder's 2 GB hold one kernel at a
time, not five), and Notebook 7 opens a `.py` chapter as a notebook and runs its first cell
(nbval runs the whole chapter; running it again here would double its cost)."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.browser.conftest import ROOT, jupyter_server
from tests.browser.helpers import Lab, list_kernels, open_notebook, run_first_cell, wait_for_idle
from tests.browser.launcher import wait_until


def api(lab: Lab, path: str) -> object:
    with urllib.request.urlopen(f"{lab.url}api/{path}?token={lab.token}", timeout=10) as answer:
        return json.load(answer)


def test_file_browser_lists_each_chapter_once(lab):
    names = {item["name"] for item in api(lab, "contents")["content"]}
    chapters = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    assert set(chapters) <= names
    assert not [n for n in names if n.endswith(".ipynb")], "the .ipynb twins should not be listed"
    # Hidden from the listing only: a Colab or Binder link to the .ipynb still opens it.
    assert api(lab, f"contents/{chapters[0].replace('.py', '.ipynb')}")["type"] == "notebook"


def test_closing_a_chapter_shuts_its_kernel_down(lab, page):
    open_notebook(page, lab, "01_strides_and_views.py")
    wait_until(lambda: list_kernels(lab), 60,
               f"a kernel for the opened chapter (sessions: {api(lab, 'sessions')})", poll_s=0.5)
    wait_for_idle(page)
    wait_until(lambda: any(k.get("connections", 0) >= 1 for k in list_kernels(lab)), 30,
               "the open chapter's kernel to count the page's connection", poll_s=0.5)
    page.keyboard.press("Alt+w")  # JupyterLab's "Close Tab"
    discard = page.get_by_role("button", name="Discard")
    try:  # Jupytext may mark a freshly opened .py as changed: close without saving
        discard.click(timeout=5_000)
    except Exception:  # noqa: BLE001 - no dialog: nothing to dismiss
        pass
    # Closing the tab hangs up the kernel's connection, with the page still open...
    wait_until(lambda: all(k.get("connections") == 0 for k in list_kernels(lab)), 30,
               "the closed chapter's kernel to lose its connection", poll_s=0.5)
    # ...and the server culls a kernel idle and unconnected for 60 s. The page is left blank
    # while that minute passes: an open JupyterLab page keeps a core about 15% busy.
    page.goto("about:blank")
    wait_until(lambda: list_kernels(lab) == [], 100,
               "the closed chapter's kernel to shut down", poll_s=0.5)


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory):
    """Notebook 7 (`jupyter notebook`) on a copy of notebooks/, with a clean configuration."""
    with jupyter_server(tmp_path_factory.mktemp("nb7"), "notebook") as server:
        yield server


def test_notebook7_opens_a_py_chapter_as_a_notebook_and_runs_it(notebook7, page):
    page.goto(f"{notebook7.url}tree?token={notebook7.token}")
    entry = page.locator(".jp-DirListing-item", has_text="01_strides_and_views.py").first
    entry.wait_for(timeout=60_000)
    with page.context.expect_page(timeout=60_000) as opened:
        entry.dblclick()
    chapter = opened.value
    chapter.wait_for_load_state()
    assert "/notebooks/" in chapter.url, f"the .py opened as {chapter.url}, not as a notebook"
    chapter.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=120_000)
    run_first_cell(chapter, panel=".jp-NotebookPanel")
    wait_for_idle(chapter, timeout_s=120, panel=".jp-NotebookPanel", indicator=None)
    assert error_outputs_nb7(chapter) == []
    chapter.close()


def error_outputs_nb7(page) -> list[str]:
    return page.evaluate(
        """() => [...document.querySelectorAll(
                 '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
                 .map(e => e.innerText)
                 .filter(t => /Traceback \\(most recent call last\\)|^\\w*(Error|Exception): /m.test(t))
                 .map(t => t.slice(0, 2000))""")
