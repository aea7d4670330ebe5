"""A real JupyterLab on a free loopback port, with a clean configuration, and a headless
Chromium page driven by Playwright. Every browser test builds on these fixtures."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.helpers import CHROMIUM, CHROMIUM_ARGS, Lab

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require_chromium() -> None:
    if os.path.exists(CHROMIUM):
        return
    if os.environ.get("LABKIT_SKIP_BROWSER") == "1":
        pytest.skip("LABKIT_SKIP_BROWSER=1 and no /usr/bin/chromium")
    pytest.fail(f"{CHROMIUM} is missing: `make test` installs it as root (apt-get install chromium)")


@contextlib.contextmanager
def jupyter_server(base: Path, app: str = "lab") -> Iterator[Lab]:
    """`jupyter lab` (or `jupyter notebook`, Notebook 7) on a copy of notebooks/ under base,
    with a clean configuration, a free loopback port and its own token; stopped afterwards.

    A copy, so autosave can never touch the repository; a clean HOME and config dirs, so
    no earlier layout, news pop-up or setting leaks in.
    """
    require_chromium()
    root = base / "notebooks"
    shutil.copytree(ROOT / "notebooks", root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy(ROOT / "jupytext.toml", base / "jupytext.toml")
    home = base / "home"
    home.mkdir()
    token = secrets.token_hex(16)
    port = free_port()
    env = os.environ | {
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "user-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "IPYTHONDIR": str(home / "ipython"),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    }
    command = [
        sys.executable, "-m", "jupyter", app, "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = open(base / "jupyter.log", "w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(f"{url}api/status?token={token}", timeout=2)
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"jupyter {app} did not start: {(base / 'jupyter.log').read_text()[-3000:]}")
            time.sleep(0.5)
    try:
        yield Lab(url=url, token=token, root=str(root))
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="session")
def lab(tmp_path_factory) -> Iterator[Lab]:
    """JupyterLab on a copy of notebooks/, shared by the browser tests of a session."""
    with jupyter_server(tmp_path_factory.mktemp("lab"), "lab") as server:
        yield server


@pytest.fixture(scope="session")
def browser():
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, request):
    """A fresh page (its own context); a screenshot is kept after each test."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    SCREENSHOTS.mkdir(exist_ok=True)
    name = request.node.name.replace("/", "_").replace("[", "-").replace("]", "")
    try:
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    finally:
        context.close()
