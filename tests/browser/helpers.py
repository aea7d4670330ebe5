"""Driving JupyterLab in headless Chromium: open a notebook, run it, read its errors.

Shared by every browser test. Selectors are JupyterLab 4's own class names.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.launcher import CHROMIUM, CHROMIUM_ARGS, Lab, wait_until  # noqa: F401 - re-exported

# The notebook panel in front: JupyterLab keeps other documents' panels in the page, hidden.
CURRENT = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def open_notebook(page: Page, lab: Lab, relpath: str, timeout_s: float = 120) -> None:
    """Open a notebook (.ipynb, or a .py that the Jupytext viewer opens) and wait for its kernel.

    Each call uses a new, empty workspace: JupyterLab otherwise restores every document an
    earlier test opened, and their cells and outputs would mix with this notebook's.
    """
    workspace = f"test-{uuid.uuid4().hex[:12]}"
    page.goto(f"{lab.url}lab/workspaces/{workspace}/tree/{relpath}?reset&token={lab.token}")
    page.wait_for_selector(f"{CURRENT} .jp-Notebook .jp-Cell", timeout=timeout_s * 1000)
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        raise AssertionError(f"a dialog blocks the notebook: {dialog.inner_text()!r}")
    wait_for_idle(page, timeout_s)


def list_kernels(lab: Lab, timeout_s: float = 30) -> list[dict]:
    """The server's kernels, through its REST API. A kernel still starting makes the listing
    answer 500 for a moment (jupyter_server reads its last_activity before it is set; seen in
    CI), so it is asked again until timeout_s."""
    request = urllib.request.Request(f"{lab.url}api/kernels",
                                     headers={"Authorization": f"token {lab.token}"})

    def listing() -> list | None:
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as answer:
                return [json.loads(answer.read())]
        except urllib.error.HTTPError as error:
            if error.code != 500:
                raise
            return None

    return wait_until(listing, timeout_s, "the server to list its kernels")[0]


def shut_down_kernels(lab: Lab, timeout_s: float = 30) -> int:
    """Shut down every kernel of this server through its REST API; returns how many.

    A chapter opened and left holds its kernel (0.5 to 1 GB, torch imported) until culling
    reaches it a minute later; opening the chapters one after another on a 2-core machine
    then starts the next kernel beside five others, and it did not come up in time (seen in
    CI). A test that is done with its chapter gives the kernel back at once.
    """
    headers = {"Authorization": f"token {lab.token}"}
    kernels = list_kernels(lab, timeout_s)
    for kernel in kernels:
        urllib.request.urlopen(urllib.request.Request(
            f"{lab.url}api/kernels/{kernel['id']}", method="DELETE", headers=headers),
            timeout=timeout_s).close()
    return len(kernels)


def run_all_cells(page: Page, timeout_s: float = 120, attempts: int = 3) -> None:
    """Run every cell through the menu, as a learner would ('Run All Cells' has no shortcut).

    Returns once the run has visibly started: a prompt showed [*] after the click
    (_WATCH_PROMPTS). A count alone proves nothing, because a chapter's .py opens with the
    outputs and counts of its paired .ipynb (Jupytext pairs them), so a swallowed click would
    otherwise pass for a run (seen in CI: Run All did nothing, the saved widgets had no live
    model and drew nothing, and three tests then waited for widgets that never came).
    On a loaded machine the first cell can take seconds to queue, and waiting for "idle"
    before that would see the notebook idle because nothing has started yet. Under load the
    menu click is sometimes swallowed while the notebook is still settling, so a run that
    has not started after a while is asked for again, as a person would.
    """
    for _ in range(attempts):
        page.locator(f"{CURRENT} .jp-Notebook").first.click(position={"x": 5, "y": 5})
        page.evaluate(_WATCH_PROMPTS, CURRENT)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()
        try:
            page.wait_for_function("() => window.__labkitRan", polling=100,
                                   timeout=timeout_s * 1000 / attempts)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    raise AssertionError(f"'Run All Cells' started no cell after {attempts} attempts")


def kernel_status(page: Page) -> str:
    """The status JupyterLab's toolbar shows for the current notebook's kernel."""
    indicator = page.locator(f"{CURRENT} .jp-Notebook-ExecutionIndicator")
    if not indicator.count():
        return "unknown"
    return indicator.first.get_attribute("data-status") or "unknown"


# The status bar's kernel item ("Python 3 (ipykernel) | Idle") in JupyterLab: the one status
# that counts the kernel's connection. The toolbar's execution indicator says 'idle' before any
# kernel exists (seen at 3.8 s of a chapter's opening, the kernel connected at 5.6 s), and a
# Run All in that window queued every cell and then dropped them all unrun (seen in a loaded
# run: every prompt back to [ ], no output).
_KERNEL_READY = """() => {
  const item = [...document.querySelectorAll('#jp-main-statusbar .jp-StatusBar-TextItem')]
                 .map(e => e.textContent.trim()).find(t => / \\| [A-Za-z ]+$/.test(t));
  if (item === undefined) return true;  // no status bar (Notebook 7): the prompts decide
  return !item.startsWith('No Kernel') && / \\| Idle$/.test(item);
}"""

# True once no cell of the notebook in front is queued or running ([*]) and its kernel reports
# idle and connected, at three polls in a row (a cell can be queued a moment after the
# previous one ends).
_QUIET = """([panel, indicator]) => {
  const busy = [...document.querySelectorAll(panel + ' .jp-InputArea-prompt')]
                 .some(e => e.textContent.includes('*'));
  const status = indicator ? document.querySelector(panel + ' ' + indicator) : null;
  const ready = (""" + _KERNEL_READY + """)();
  const idle = !busy && ready && (indicator === null || (status && status.dataset.status === 'idle'));
  window.__labkitQuiet = idle ? (window.__labkitQuiet || 0) + 1 : 0;
  return window.__labkitQuiet >= 3;
}"""


def wait_for_idle(page: Page, timeout_s: float = 300, panel: str = CURRENT,
                  indicator: str | None = ".jp-Notebook-ExecutionIndicator") -> None:
    """Wait, in the page, until no cell is queued or running and the kernel reports idle.

    A condition polled by the browser, not a sleep: it returns as soon as the notebook is
    quiet. `indicator=None` waits on the prompts alone (Notebook 7 has no such indicator).
    """
    try:
        page.evaluate("() => { window.__labkitQuiet = 0; }")
        page.wait_for_function(_QUIET, arg=[panel, indicator], polling=250, timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        busy = page.evaluate("""(panel) => [...document.querySelectorAll(panel + ' .jp-InputArea-prompt')]
                                  .filter(e => e.textContent.includes('*')).length""", panel)
        raise AssertionError(f"waited {timeout_s:.0f} s for the notebook to go idle: {busy} cell(s) "
                             f"still queued or running, kernel {kernel_status(page)}") from None


def accept_kernel_dialog(page: Page, timeout_s: float = 5) -> None:
    """JupyterLab may ask which kernel to start although the notebook names one (the dialog
    appears a moment after the cells): take the default, as a learner would."""
    dialog = page.locator(".jp-Dialog")
    try:
        dialog.wait_for(timeout=timeout_s * 1000)
    except PlaywrightTimeout:  # no dialog: nothing to accept
        return
    button = dialog.get_by_role("button", name="Select", exact=True)
    if button.count():
        button.click()
        dialog.wait_for(state="detached", timeout=10_000)


def run_first_cell(page: Page, timeout_s: float = 120, panel: str = CURRENT, attempts: int = 3) -> None:
    """Run only the first code cell (Shift+Enter, as a learner starts a chapter) and wait until
    it ran: proof that the kernel runs the chapter's code, without re-running a chapter nbval
    executes anyway.

    The cell is made active by a click on its prompt, not on its editor, and the prompt
    waited for is that of whichever cell ran: in CI a page still laying itself out once took
    the click into the second cell, which ran while the first kept its empty prompt. A cell
    run before the kernel is connected is dropped without a [*] (Notebook 7 shows no kernel
    status to wait for), so a run that has not started after a while is asked for again, as
    a person would press Shift+Enter again.
    """
    wait_for_front_kernel(page, timeout_s)
    for _ in range(attempts):
        accept_kernel_dialog(page, timeout_s=1)
        _click_first_prompt(page, panel)
        page.evaluate(_WATCH_PROMPTS, panel)
        page.keyboard.press("Shift+Enter")
        try:
            page.wait_for_function("() => window.__labkitRan", polling=100,
                                   timeout=timeout_s * 1000 / attempts)
            break
        except PlaywrightTimeout:
            continue
    else:
        raise AssertionError(f"the first code cell did not start in {timeout_s:.0f} s "
                             f"({attempts} Shift+Enter)")
    try:
        page.wait_for_function(
            """(panel) => [...document.querySelectorAll(panel + ' .jp-CodeCell .jp-InputArea-prompt')]
                          .every(p => !p.textContent.includes('*'))""",
            arg=panel, polling=250, timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        raise AssertionError(f"waited {timeout_s:.0f} s for the first code cell to finish") from None


# True once the document in front (optionally: the one at `path`) has a kernel connected and
# idle, read from the app a server exposes to the page (tests/browser/launcher.py does).
_FRONT_KERNEL_READY = """(path) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session
                 && panel.sessionContext.session.kernel;
  return !!kernel && (!path || (panel.context && panel.context.path === path))
         && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""


def wait_for_front_kernel(page: Page, timeout_s: float = 120, path: str | None = None) -> None:
    """Where the server exposes its app to the page, wait until the document in front (at
    `path`, if given) has a kernel connected and idle: a cell run before that is dropped, and
    Notebook 7 then asks which kernel to start (seen in CI: that dialog took the click)."""
    if not page.evaluate("() => !!window.jupyterapp"):
        return  # another server (`make lab`): JupyterLab's status bar is waited for instead
    try:
        page.wait_for_function(_FRONT_KERNEL_READY, arg=path, polling=250, timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        raise AssertionError(f"waited {timeout_s:.0f} s for the kernel of {path or 'the notebook'} "
                             "to connect") from None


def open_in_loaded_page(page: Page, path: str, timeout_s: float = 120) -> None:
    """Close what a loaded JupyterLab page shows and open `path` as the file browser does on a
    double-click (`docmanager:open`, the default viewer for its type), then wait until it is
    in front with its kernel connected and idle. A page load costs Chromium about 6
    CPU-seconds, an open inside a loaded page about 2."""
    page.evaluate("""async (path) => {
        const app = window.jupyterapp;
        for (const widget of Array.from(app.shell.widgets('main'))) widget.dispose();
        await app.commands.execute('docmanager:open', {path});
      }""", path)
    wait_for_front_kernel(page, timeout_s, path)
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        raise AssertionError(f"a dialog blocks the notebook: {dialog.inner_text()!r}")


def _click_first_prompt(page: Page, panel: str) -> None:
    cell = page.locator(f"{panel} .jp-CodeCell").first
    for attempt in range(1, DETACHED_ATTEMPTS + 1):
        try:
            cell.scroll_into_view_if_needed(timeout=30_000)
            cell.locator(".jp-InputPrompt").click(timeout=30_000)
            return
        except PlaywrightError as error:
            # The windowed notebook redrew its cells under the action (CI, three workers on two
            # cores: Notebook 7 replaced the first cell's element mid-scroll); the locator finds
            # the new element on the next attempt. Anything else, or every attempt, fails.
            if "not attached" not in str(error) or attempt == DETACHED_ATTEMPTS:
                raise


DETACHED_ATTEMPTS = 3  # a cell redrawn under a click is found again this many times at most
# Sets window.__labkitRan once any prompt of the panel shows [*] (a cell queued or running), as
# the page changes, not as a poll samples it: a chapter's .py opens with its paired .ipynb's
# counts, and a fresh kernel's first cell gets [1] again, so a count alone cannot tell that a
# cell ran, and a short cell's [*] lasts less than a poll (seen: a 120 s wait for a cell that
# had run). MutationObserver reports each change after the task that made it, so [*] is seen
# before the kernel's reply turns it back into a count.
_WATCH_PROMPTS = """(panel) => {
  window.__labkitRan = false;
  if (window.__labkitWatch) window.__labkitWatch.disconnect();
  const root = document.querySelector(panel);
  const look = () => {
    if ([...root.querySelectorAll('.jp-InputArea-prompt')].some(p => p.textContent.includes('*')))
      window.__labkitRan = true;
  };
  window.__labkitWatch = new MutationObserver(look);
  window.__labkitWatch.observe(root, {subtree: true, childList: true, characterData: true});
}"""


def error_outputs(page: Page) -> list[str]:
    """The text of every error output (a raised exception) in the open notebook.

    JupyterLab renders an error as a stderr output, so an error is told from a warning by its
    traceback banner: the line of dashes and the exception's name that IPython prints.
    """
    return page.evaluate(
        """() => [...document.querySelectorAll(
                 '.jp-NotebookPanel:not(.lm-mod-hidden) '
                 + '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
                 .map(e => e.innerText)
                 .filter(t => /Traceback \\(most recent call last\\)|^\\w*(Error|Exception): /m.test(t))
                 .map(t => t.slice(0, 2000))"""
    )


def executed_cell_count(page: Page) -> int:
    """How many code cells ran: those whose prompt shows an execution count ([n]), plus those
    whose source is collapsed (a quiz keeps its answer out of sight that way; JupyterLab then
    shows no prompt) and that produced output."""
    return page.evaluate(
        """() => {
             const cells = [...document.querySelectorAll(
                 '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell')];
             return cells.filter(cell => {
               const prompt = cell.querySelector('.jp-InputArea-prompt');
               if (prompt && /\\[\\d+\\]/.test(prompt.textContent)) return true;
               const collapsed = cell.querySelector('.jp-InputPlaceholder') !== null;
               return collapsed && cell.querySelector('.jp-OutputArea-output') !== null;
             }).length;
           }"""
    )
