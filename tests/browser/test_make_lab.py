"""`make lab` as a new user starts it: JupyterLab answers on 127.0.0.1 only, refuses a request
without the token, and opens notebooks/00_setup_check.py as a notebook that runs to the end."""

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
from tests.browser.helpers import Lab, error_outputs, open_notebook, run_all_cells, wait_for_idle

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
    deadline = time.monotonic() + 120
    token = None
    while token is None:
        match = re.search(rf"http://127\.0\.0\.1:{port}/lab[^?\s]*\?token=([0-9a-f]+)", log_path.read_text())
        if match:
            token = match.group(1)
        elif process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"make lab did not print a URL with a token:\n{log_path.read_text()[-3000:]}")
        else:
            time.sleep(0.5)
    yield Lab(url=f"http://127.0.0.1:{port}/", token=token, root=str(ROOT / "notebooks")), process
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
    log.close()


def listening_addresses(process: subprocess.Popen, port: int) -> set[str]:
    addresses = set()
    for proc in [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]:
        for connection in proc.net_connections(kind="inet"):
            if connection.status == psutil.CONN_LISTEN and connection.laddr.port == port:
                addresses.add(connection.laddr.ip)
    return addresses


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
    run_all_cells(page)
    wait_for_idle(page, timeout_s=300)
    assert error_outputs(page) == []
