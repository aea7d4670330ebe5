"""A real JupyterHub on loopback for the workshop tests, started once per module.

Run as root (as CI runs), the hub is in system mode, the room's mode: every learner an OS
user named with a test prefix (`tllt<hex>-alice`), removed again when the module ends, pass or
fail. Run as an ordinary user, it is in the shared (rehearsal) mode. A `git daemon` on
loopback serves a small course repository, the one repository the hub lets links pull.

Skipped (with the reason) where the workshop is not installed: `make workshop` installs
jupyterhub (the `workshop` extra) and configurable-http-proxy (npm, into workshop/).
"""

import os
import pathlib
import secrets
import shutil
import socket
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workshop"))
PROXY = ROOT / "workshop" / "node_modules" / ".bin" / "configurable-http-proxy"
SYSTEM_MODE = os.geteuid() == 0


def _need_workshop() -> None:
    pytest.importorskip("jupyterhub", reason="the workshop extra is not installed (make workshop)")
    if not PROXY.exists():
        pytest.skip("configurable-http-proxy is not installed in workshop/ (make workshop)")
    if shutil.which("git") is None:
        pytest.skip("git is not installed (nbgitpuller needs it)")


@pytest.fixture(scope="module")
def course_repo(tmp_path_factory):
    """git://127.0.0.1:<port>/course.git: a one-chapter course served by `git daemon`."""
    _need_workshop()
    base = tmp_path_factory.mktemp("git")
    work = base / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    (work / "notebooks").mkdir()
    (work / "notebooks" / "00_setup_check.py").write_text("# %%\nprint('pulled')\n")
    subprocess.run(["git", "-C", str(work), "add", "."], check=True)
    subprocess.run(["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "course"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(base / "course.git")], check=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    daemon = subprocess.Popen(["git", "daemon", "--reuseaddr", "--export-all", "--listen=127.0.0.1",
                               f"--port={port}", f"--base-path={base}", str(base)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline or daemon.poll() is not None:
                pytest.fail(f"git daemon did not answer on 127.0.0.1:{port}")
            time.sleep(0.1)
        yield f"git://127.0.0.1:{port}/course.git"
    finally:
        daemon.terminate()
        daemon.wait(10)


@pytest.fixture(scope="module")
def hub(tmp_path_factory, course_repo):
    from hubclient import Hub, remove_os_users

    prefix = f"tllt{secrets.token_hex(2)}-"
    started = []
    try:
        with Hub.start(tmp_path_factory.mktemp("workshop") / "data", cull_kernel_s=6,
                       timeout_s=150, user_prefix=prefix,
                       extra_env={"WORKSHOP_PULL_REPOS": course_repo}) as running:
            started.append(running)
            yield running
    finally:
        if SYSTEM_MODE:
            remove_os_users(prefix)
            for running in started:     # this hub's learner settings (the environment is shared)
                shutil.rmtree(running.config_dir, ignore_errors=True)
