"""`make lab`'s torch choice, without the internet: no NVIDIA GPU -> PyTorch's CPU index when it
answers, the default index when it cannot be reached; a GPU -> the default (CUDA) build."""

import http.server
import os
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


    out = choice("--gpu", "no", env={**os.environ, "TORCH_INDEX": "http://127.0.0.1:9/simple"})
    assert "--index-url http://127.0.0.1:9/simple torch==2.13.0" in out


def stand_in(tmp_path, dry_run_lines: str):
    """bin/python that knows no pip settings, and bin/uv whose dry run lists `dry_run_lines`."""
    bin_dir = tmp_path / "env" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text("#!/bin/sh\nexit 1\n")
    uv = bin_dir / "uv"
    uv.write_text(f"#!/bin/sh\ncat >&2 <<'END'\nResolved 3 packages\n{dry_run_lines}\nEND\n")
    for path in (python, uv):
        path.chmod(0o755)
    return python


@pytest.mark.parametrize("lines, says", [
    ("Would install 3 packages\n + nvidia-cublas==13.1.1.3\n + cuda-toolkit==13.0.3.0\n"
     " + torch==2.13.0", "gives torch's CUDA build (2 CUDA packages, about 4 GB more"),
    ("Would install 1 package\n + torch==2.13.0+cpu", "has torch's CPU build"),
    ("error: no route", "usually the CUDA build"),
])
def test_the_build_the_default_index_gives_is_said_before_the_download(tmp_path, lines, says):
    python = stand_in(tmp_path, lines)
    out = choice("--python", str(python), "--gpu", "no", "--cpu-index", "http://127.0.0.1:1/whl/cpu",
                 env={k: v for k, v in os.environ.items() if k != "INSTALLER"})
    said, command = out.index(says), out.index("uv pip install --python")
    assert said < command, out
    if "CUDA" in says:
        assert "TORCH_INDEX=" in out and "Ctrl-C" in out


def test_build_from_packages_reads_a_dry_run():
    import importlib.util

    spec = importlib.util.spec_from_file_location("install_torch", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build_from_packages([" + torch==2.13.0+cu130"]) == "cuda"
    assert module.build_from_packages([" + torch==2.13.0+cpu", " + sympy==1.14"]) == "cpu"
    assert module.build_from_packages([" + sympy==1.14"]) is None
