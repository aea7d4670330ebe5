"""The shared Jupyter launcher cleans up and cannot hang: a server that does not start is
reported with its log, a bounded wait names what it waited for, and leaving the context stops
the server and the kernels it started."""

from __future__ import annotations

import json
import urllib.request

import psutil
import pytest

from tests.browser import launcher


def test_a_wait_that_runs_out_names_what_it_waited_for():
    with pytest.raises(launcher.WaitTimedOut, match="waited 0 s for the moon"):
        launcher.wait_until(lambda: False, 0.2, "the moon", poll_s=0.05)
    assert launcher.wait_until(lambda: 7, 1, "a number") == 7


def test_a_server_that_cannot_start_is_reported_with_its_log(tmp_path):
    with pytest.raises(launcher.ServerDidNotStart, match="exited"):
        with launcher.jupyter_server(tmp_path, app="no-such-app", notebooks=None):
            pass


def test_leaving_the_context_stops_the_server_and_its_kernels(tmp_path):
    with launcher.jupyter_server(tmp_path, notebooks=None) as lab:
        request = urllib.request.Request(f"{lab.url}api/kernels?token={lab.token}", data=b"{}",
                                         method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as answer:
            assert json.load(answer)["id"]
        server = next(p for p in psutil.process_iter(["cmdline"])
                      if lab.token in " ".join(p.info["cmdline"] or []))
        family = [server, *launcher.wait_until(lambda: server.children(recursive=True), 60,
                                               "the kernel process to appear")]
    gone, alive = psutil.wait_procs(family, timeout=launcher.STOP_TIMEOUT_S)
    assert not alive, f"still running after the server stopped: {[p.pid for p in alive]}"
