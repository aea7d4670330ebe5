"""The one Jupyter-server launcher: the browser tests and the latency benchmarks
(benchmarks/widget_latency.py, benchmarks/timeline_latency.py) all start JupyterLab or
Notebook 7 through `jupyter_server`, so a fix to start-up or shutdown reaches all of them.

No pytest here: a benchmark is a plain script. A server that does not come up raises
ServerDidNotStart with the end of its log; a wait that runs out names what it waited for.
"""

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic",
]
START_TIMEOUT_S = 90
STOP_TIMEOUT_S = 20
T = TypeVar("T")


@dataclass
class Lab:
    """A running JupyterLab: its base URL (ending in '/'), token and root folder."""

    url: str
    token: str
    root: str


class ServerDidNotStart(RuntimeError):
    """The server exited, or did not answer /api/status in time; the message ends with its log."""


class WaitTimedOut(AssertionError):
    """A bounded wait ran out; the message says what it waited for and for how long."""


def wait_until(check: Callable[[], T], timeout_s: float, what: str, poll_s: float = 0.2) -> T:
    """Poll `check` until it returns something truthy and return that; after timeout_s raise
    WaitTimedOut naming `what`. For conditions outside the page (a REST answer, a process);
    a condition inside the page is waited for with page.wait_for_function instead."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise WaitTimedOut(f"waited {timeout_s:.0f} s for {what}")
        time.sleep(poll_s)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clean_environment(home: Path) -> dict[str, str]:
    """The environment of a server with no earlier layout, news pop-up or setting of the
    user's: its own HOME and config dirs, and labkit imported from this checkout."""
    python_path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return os.environ | {
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "user-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "IPYTHONDIR": str(home / "ipython"),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "PYTHONPATH": python_path,
    }


def stop(process: subprocess.Popen, timeout_s: float = STOP_TIMEOUT_S) -> None:
    """Terminate the server and its kernels (its process group); kill what outlives timeout_s."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, 15)
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        process.wait(timeout=timeout_s)


@contextlib.contextmanager
def jupyter_server(base: Path, app: str = "lab", notebooks: Path | None = ROOT / "notebooks",
                   start_timeout_s: float = START_TIMEOUT_S) -> Iterator[Lab]:
    """`jupyter lab` (or `jupyter notebook`: Notebook 7) on base/notebooks, a copy of
    `notebooks` (an empty folder when None), with a clean configuration, a free loopback port
    and its own token; stopped, with its kernels, afterwards.

    A copy, so autosave can never touch the repository. The server runs in a session of its
    own, so stopping it also stops the kernels it started (a kernel left behind holds memory
    and a core for the rest of the suite).
    """
    root = base / "notebooks"
    if notebooks is None:
        root.mkdir(parents=True)
    else:
        shutil.copytree(notebooks, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    if (ROOT / "jupytext.toml").exists():
        shutil.copy(ROOT / "jupytext.toml", base / "jupytext.toml")
    home = base / "home"
    home.mkdir()
    token = secrets.token_hex(16)
    port = free_port()
    command = [
        sys.executable, "-m", "jupyter", app, "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
    ]
    # window.jupyterapp: a test can open documents in a page loaded once, and see a kernel's
    # connection, which Notebook 7 shows nowhere in its page
    command.append("--LabApp.expose_app_in_browser=True" if app == "lab"
                   else "--JupyterNotebookApp.expose_app_in_browser=True")
    if os.geteuid() == 0:
        command.append("--allow-root")
    log_path = base / "jupyter.log"
    url = f"http://127.0.0.1:{port}/"
    with open(log_path, "w") as log:
        server = subprocess.Popen(command, env=clean_environment(home), stdout=log,
                                  stderr=subprocess.STDOUT, cwd=root, start_new_session=True)
        try:
            def answers() -> bool:
                if server.poll() is not None:
                    raise ServerDidNotStart(f"jupyter {app} exited with {server.returncode}:\n"
                                            + log_path.read_text()[-3000:])
                try:
                    urllib.request.urlopen(f"{url}api/status?token={token}", timeout=2).close()
                    return True
                except OSError:
                    return False

            try:
                wait_until(answers, start_timeout_s, f"jupyter {app} to answer {url}api/status",
                           poll_s=0.5)
            except WaitTimedOut as late:
                raise ServerDidNotStart(f"{late}:\n{log_path.read_text()[-3000:]}") from None
            yield Lab(url=url, token=token, root=str(root))
        finally:
            stop(server)
