"""`make lab` as a new user starts it: JupyterLab answers on 127.0.0.1 only, refuses a request
without the token, and opens notebooks/00_setup_check.py as a notebook whose kernel runs it
(its first cell: nbval runs the whole chapter, once per suite)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.browser.conftest import free_port
from tests.browser.helpers import Lab, error_outputs, open_notebook, run_first_cell, wait_for_idle
from tests.browser.launcher import WaitTimedOut, wait_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def make_lab(tmp_path_factory):
    home = tmp_path_factory.mktemp("new-user-home")
    settings = home / "user-settings"
    # Autosave off: the test runs the real notebooks/ folder and must leave it untouched.
    docmanager = settings / "@jupyterlab" / "docmanager-extension"
    docmanager.mkdir(parents=True)
    (docmanager / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")} | {
        "HOME": str(home), "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    log_path = home / "make-lab.log"
    log = open(log_path, "w")
    process = subprocess.Popen(["make", "-s", "lab", f"PORT={port}"], cwd=ROOT, env=env,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def printed_token() -> str | None:
        match = re.search(rf"http://127\.0\.0\.1:{port}/lab[^?\s]*\?token=([0-9a-f]+)", log_path.read_text())
        if match is None and process.poll() is not None:
            pytest.fail(f"make lab exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
        return match.group(1) if match else None

    try:
        token = wait_until(printed_token, 120, "make lab to print a URL with a token", poll_s=0.5)
    except WaitTimedOut as late:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail(f"{late}:\n{log_path.read_text()[-3000:]}")
    yield Lab(url=f"http://127.0.0.1:{port}/", token=token, root=str(ROOT / "notebooks")), process
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
    log.close()


def listening_addresses(process: subprocess.Popen, port: int, timeout_s: float = 30.0) -> set[str]:
    """Every address anything on this machine listens on at `port` (the server `make lab`
    started answered there, so something does): read system-wide, not only from the make
    process's children, and read again for a while if a busy machine shows none yet."""
    deadline = time.monotonic() + timeout_s
    while True:
        addresses = {c.laddr.ip for c in psutil.net_connections(kind="inet")
                     if c.status == psutil.CONN_LISTEN and c.laddr.port == port}
        if addresses or time.monotonic() > deadline or process.poll() is not None:
            return addresses
        time.sleep(0.5)


def test_listens_on_loopback_only(make_lab):
    lab, process = make_lab
    port = int(lab.url.rsplit(":", 1)[1].strip("/"))
    assert listening_addresses(process, port) == {"127.0.0.1"}


def test_refuses_a_request_without_the_token(make_lab):
    lab, _ = make_lab
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{lab.url}api/contents", timeout=10)
    assert refused.value.code == 403
    with urllib.request.urlopen(f"{lab.url}api/contents?token={lab.token}", timeout=10) as answer:
        names = {item["name"] for item in json.load(answer)["content"]}
    assert "00_setup_check.py" in names


def test_setup_check_opens_as_a_notebook_and_runs(make_lab, page):
    lab, _ = make_lab
    open_notebook(page, lab, "00_setup_check.py")
    assert page.locator(".jp-NotebookPanel").count() == 1, "the .py opened in the text editor"
    run_first_cell(page)
    wait_for_idle(page, timeout_s=120)
    assert error_outputs(page) == []
