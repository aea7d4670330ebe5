"""`make lab`'s torch choice, without the internet: no NVIDIA GPU -> PyTorch's CPU index when it
answers, the default index when it cannot be reached; a GPU -> the default (CUDA) build."""

import http.server
import subprocess
import sys
import threading

import pytest

from tests.paths import ROOT

SCRIPT = ROOT / "scripts" / "install_torch.py"


def choice(*args, env=None):
    done = subprocess.run([sys.executable, str(SCRIPT), "--dry-run", "--spec", "torch==2.13.0", *args],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def local_index():
    """A package index that answers (here: any path gets a 404, which counts as an answer)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/whl/cpu"
    server.shutdown()


def test_no_gpu_asks_the_cpu_index_when_it_answers(local_index):
    out = choice("--gpu", "no", "--cpu-index", local_index)
    assert "no NVIDIA GPU: PyTorch's CPU wheel index" in out
    assert f"--index-url {local_index} torch==2.13.0" in out


def test_no_gpu_falls_back_to_the_default_index_when_the_cpu_index_is_unreachable():
    out = choice("--gpu", "no", "--cpu-index", "http://127.0.0.1:1/whl/cpu")
    assert "cannot be reached: the default index" in out
    assert "--index-url" not in out


def test_a_gpu_keeps_the_default_index(local_index):
    out = choice("--gpu", "yes", "--cpu-index", local_index)
    assert "an NVIDIA GPU answered" in out and "--index-url" not in out


def test_an_index_named_by_hand_wins(local_index):
    import os

    out = choice("--gpu", "no", env={**os.environ, "TORCH_INDEX": "http://127.0.0.1:9/simple"})
    assert "--index-url http://127.0.0.1:9/simple torch==2.13.0" in out
