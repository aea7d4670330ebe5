"""Opening a chapter is not editing it: with a kernel of another Python patch release than the
one that executed the chapters, every chapter opens in JupyterLab (and chapter 00 in
Notebook 7) unmarked, stays so past autosave's interval, closes without "Save your work?",
and leaves every file of the served copy byte-identical (`git status --porcelain` empty).

Why: JupyterLab and Notebook 7 write the kernel's `language_info` into a notebook as it opens.
The chapters were executed with Python 3.11.7; a learner on 3.11.2 found all eleven marked
changed before running a cell, and saving rewrote tracked files. The course's kernels leave the
patch release out (scripts/configure_jupyter.py) and the chapters are stored without it.

The other Python is a bare venv of the system's Python (same minor release, so it imports this
environment's packages through a .pth file), set up by the course's own configure_jupyter.py
and offered to the server as its `python3` kernel: nothing is downloaded. A copy of chapter 00
that still records the executing Python's version is opened too, and must be marked: the
check can see a chapter that opening changes. No cell runs; one page per front end.
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser.conftest import ROOT, SCREENSHOTS, jupyter_server
from tests.browser.helpers import Lab, shut_down_kernels, wait_for_front_kernel

CHAPTERS = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
AUTOSAVE_S = 4  # set for this server's page; JupyterLab's default is 120 s
CONTROL = "zz_recorded_version.ipynb"


def other_python() -> Path | None:
    """A system Python of this minor release but another patch release than this one."""
    mine = platform.python_version()
    minor = ".".join(mine.split(".")[:2])
    for candidate in (f"/usr/bin/python{minor}", "/usr/bin/python3", "/usr/local/bin/python3"):
        path = shutil.which(candidate)
        if not path:
            continue
        found = subprocess.run([path, "-c", "import platform; print(platform.python_version())"],
                               capture_output=True, text=True).stdout.strip()
        if found.startswith(minor + ".") and found != mine:
            return Path(path)
    return None


@pytest.fixture(scope="module")
def learner_kernels(tmp_path_factory, monkeypatch_module) -> Path:
    """A `python3` kernelspec running another Python; its environment set up by the course."""
    system = other_python()
    if system is None:
        pytest.skip(f"no system Python 3.{sys.version_info.minor} of another patch release "
                    f"than {platform.python_version()} to run the learner's kernel")
    base = tmp_path_factory.mktemp("learner")
    env = base / "env"
    subprocess.run([str(system), "-m", "venv", "--without-pip", str(env)], check=True)
    site = Path(subprocess.run([str(env / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "course.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_path('purelib')!r})\n")
    subprocess.run([str(env / "bin" / "python"), str(ROOT / "scripts" / "configure_jupyter.py")],
                   check=True, capture_output=True)
    spec = base / "share" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(env / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)", "language": "python"}))
    monkeypatch_module.setenv("JUPYTER_PATH", str(base / "share"))
    return env / "bin" / "python"


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def commit_copy(lab: Lab) -> Path:
    """The served copy of notebooks/ as a git repository, committed as served."""
    root = Path(lab.root)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    if not (root / ".git").exists():
        subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "as served"], check=True)
    return root


def porcelain(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                          capture_output=True, text=True, check=True).stdout


def add_control(root: Path, version: str) -> None:
    """Chapter 00's .ipynb as it was stored before: the executing Python's version recorded."""
    notebook = json.loads((root / "00_setup_check.ipynb").read_text())
    notebook["metadata"]["language_info"]["version"] = version
    (root / CONTROL).write_text(json.dumps(notebook, indent=1))


def set_autosave(lab: Lab) -> None:
    body = json.dumps({"raw": json.dumps({"autosave": True, "autosaveInterval": AUTOSAVE_S})})
    request = urllib.request.Request(
        f"{lab.url}lab/api/settings/@jupyterlab/docmanager-extension:plugin", data=body.encode(),
        method="PUT", headers={"Authorization": f"token {lab.token}",
                               "Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=30).close()


# What the page shows of the document in front: its model's dirty flag, its tab's unsaved
# marker (JupyterLab) and the kernel's language_info (to see that the kernel answered).
_STATE = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const tabs = [...document.querySelectorAll('.lm-TabBar-tab.jp-mod-dirty')].length;
  return {dirty: panel.context.model.dirty, markedTabs: tabs,
          language: panel.context.model.getMetadata('language_info') || null};
}"""

_CLOSE = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.close();
  await new Promise(r => setTimeout(r, 1000));
  return document.querySelectorAll('.jp-Dialog').length;
}"""


def open_wait_close(page, path: str) -> dict:
    """Open `path` in the loaded JupyterLab page, wait for its kernel, then past autosave's
    interval; close it; what the page showed before closing, and how many dialogs after."""
    page.evaluate("""async (path) => {
        const app = window.jupyterapp;
        for (const widget of Array.from(app.shell.widgets('main'))) widget.dispose();
        await app.commands.execute('docmanager:open', {path});
      }""", path)
    try:
        wait_for_front_kernel(page, 180, path)
    except AssertionError:
        dialogs = page.locator(".jp-Dialog")
        shown = dialogs.first.inner_text() if dialogs.count() else "no dialog"
        page.screenshot(path=str(SCREENSHOTS / f"open_is_not_edit-{path}.png"))
        raise AssertionError(f"{path}: its kernel did not connect ({shown!r})") from None
    page.wait_for_timeout(300)
    early = page.evaluate(_STATE)  # autosave would save a marked chapter and clear its mark
    page.wait_for_timeout((AUTOSAVE_S + 3) * 1000)
    state = page.evaluate(_STATE)
    state["dirty"] = state["dirty"] or early["dirty"]
    state["markedTabs"] = max(state["markedTabs"], early["markedTabs"])
    state["dialogs"] = page.evaluate(_CLOSE)
    if state["dialogs"]:
        page.get_by_role("button", name="Discard").click()
    return state


def test_opening_every_chapter_under_another_python_changes_nothing(learner_kernels, browser):
    learner_version = subprocess.run([str(learner_kernels), "-c", "import sys; print(sys.version)"],
                                     capture_output=True, text=True).stdout
    assert not learner_version.startswith(platform.python_version() + " ")
    base = Path(str(learner_kernels)).parents[2] / "lab"
    with jupyter_server(base, "lab") as lab:
        # the course's settings raise no warning at start (`formats` once did, under
        # ContentsManager, read by the server's first, plain contents manager)
        assert "not recognized" not in (base / "jupyter.log").read_text()
        specs = json.load(urllib.request.urlopen(f"{lab.url}api/kernelspecs?token={lab.token}"))
        assert specs["kernelspecs"]["python3"]["spec"]["argv"][0] == str(learner_kernels)
        root = commit_copy(lab)
        set_autosave(lab)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        try:
            page.goto(f"{lab.url}lab?token={lab.token}")
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands"
                                   ".hasCommand('docmanager:open')", timeout=120_000)
            page.evaluate("() => window.jupyterapp.restored")
            marked = {}
            for chapter in CHAPTERS:
                state = open_wait_close(page, chapter)
                assert state["language"] is not None, f"{chapter}: no language_info at all"
                if state["dirty"] or state["markedTabs"] or state["dialogs"]:
                    marked[chapter] = state
                shut_down_kernels(lab)
            assert marked == {}, f"chapters marked changed by opening: {marked}"
            assert porcelain(root) == "", "opening the chapters changed tracked files"
            # The check can fail: a chapter that records the executing Python is marked, and
            # autosave rewrites it.
            add_control(root, platform.python_version())
            commit_copy(lab)
            control = open_wait_close(page, CONTROL)
            shut_down_kernels(lab)
            assert control["dirty"] and control["markedTabs"], control
            assert CONTROL in porcelain(root), "autosave did not save the marked control"
        finally:
            context.close()


def open_in_notebook7(context, nb7: Lab, path: str) -> tuple[object, dict]:
    """Open `path` in a Notebook 7 page, wait for its kernel and past autosave's interval;
    the page and what it showed (dirty read right after the kernel answered, and after)."""
    page = context.new_page()
    page.goto(f"{nb7.url}notebooks/{path}?token={nb7.token}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell"
                           " && window.jupyterapp.shell.currentWidget", timeout=120_000)
    wait_for_front_kernel(page, 120)
    page.wait_for_timeout(300)
    early = page.evaluate(_STATE)
    page.wait_for_timeout((AUTOSAVE_S + 3) * 1000)  # past autosave's interval
    state = page.evaluate(_STATE)
    state["dirty"] = state["dirty"] or early["dirty"]
    return page, state


def test_notebook7_opens_chapter_00_unmarked_under_another_python(learner_kernels, browser):
    with jupyter_server(Path(str(learner_kernels)).parents[2] / "nb7", "notebook") as nb7:
        root = commit_copy(nb7)
        set_autosave(nb7)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page, state = open_in_notebook7(context, nb7, CHAPTERS[0])
            assert state["language"] is not None and not state["dirty"], state
            asked = []  # Notebook 7 asks the browser to confirm leaving a changed notebook
            page.on("dialog", lambda dialog: (asked.append(dialog.type), dialog.dismiss()))
            page.close(run_before_unload=True)
            time.sleep(1)
            assert asked == [], f"closing chapter 00 asked: {asked}"
            shut_down_kernels(nb7)
            assert porcelain(root) == ""
            # the check can fail: the control, which records the executing Python, is marked
            add_control(root, platform.python_version())
            commit_copy(nb7)
            page, control = open_in_notebook7(context, nb7, CONTROL)
            shut_down_kernels(nb7)
            assert control["dirty"] or CONTROL in porcelain(root), control
        finally:
            context.close()
