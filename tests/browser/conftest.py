"""A real JupyterLab on a free loopback port, with a clean configuration, and a headless
Chromium page driven by Playwright. Every browser test builds on these fixtures."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import launcher
from tests.browser.launcher import CHROMIUM, CHROMIUM_ARGS, Lab, free_port  # noqa: F401 - re-exported

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


def require_chromium() -> None:
    if os.path.exists(CHROMIUM):
        return
    if os.environ.get("LABKIT_SKIP_BROWSER") == "1":
        pytest.skip("LABKIT_SKIP_BROWSER=1 and no /usr/bin/chromium")
    pytest.fail(f"{CHROMIUM} is missing: `make test` installs it as root (apt-get install chromium)")


@contextlib.contextmanager
def jupyter_server(base: Path, app: str = "lab") -> Iterator[Lab]:
    """The shared launcher (tests/browser/launcher.py) on a copy of notebooks/; a server that
    does not start fails the test with the end of its log."""
    require_chromium()
    try:
        with launcher.jupyter_server(base, app) as server:
            yield server
    except launcher.ServerDidNotStart as error:
        pytest.fail(str(error))


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
