"""The set-up's installer (scripts/pip_install.py): uv where it can be had, with the wheel folders
pip is configured with; pip where uv cannot be installed or fails; a clear error for an unknown
installer. No package is installed here: the environments are stand-ins that record what they
were asked."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

SCRIPT = ROOT / "scripts" / "pip_install.py"


def run(*args, env=None):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **(env or {})})


def stand_in_environment(tmp_path: Path, pip_exit: int, uv_exit: int | None) -> Path:
    """bin/python that logs its arguments and answers `-m pip ...` with pip_exit; bin/uv, if
    uv_exit is not None, that logs and exits with uv_exit."""
    bin_dir = tmp_path / "env" / "bin"
    bin_dir.mkdir(parents=True)
    log = tmp_path / "calls.log"
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\necho "python $*" >> {log}\n'
                      f'[ "$1 $2 $3" = "-m pip config" ] && exit 1\nexit {pip_exit}\n')
    python.chmod(0o755)
    if uv_exit is not None:
        uv = bin_dir / "uv"
        uv.write_text(f'#!/bin/sh\necho "uv $*" >> {log}\nexit {uv_exit}\n')
        uv.chmod(0o755)
    return python


def calls(tmp_path: Path) -> list[str]:
    return (tmp_path / "calls.log").read_text().splitlines()


def test_uv_installs_with_pips_wheel_folders(tmp_path):
    python = stand_in_environment(tmp_path, pip_exit=0, uv_exit=0)
    done = run("--python", str(python), "-e", ".[lab]",
               env={"PIP_FIND_LINKS": "/opt/wheels /srv/more", "INSTALLER": ""})
    assert done.returncode == 0, done.stderr
    uv_calls = [c for c in calls(tmp_path) if c.startswith("uv ")]
    assert uv_calls == [f"uv pip install --python {python} --find-links /opt/wheels "
                        "--find-links /srv/more -e .[lab]"]


def test_pip_installs_when_uv_cannot_be_had(tmp_path):
    python = stand_in_environment(tmp_path, pip_exit=1, uv_exit=None)
    done = run("--python", str(python), "torch==2.13.0", env={"INSTALLER": ""})
    assert "uv could not be installed" in done.stdout
    assert calls(tmp_path)[-1] == "python -m pip install --disable-pip-version-check torch==2.13.0"
    assert done.returncode == 1  # pip's own exit code (the stand-in's pip fails too)


def test_pip_tries_again_when_uv_fails(tmp_path):
    python = stand_in_environment(tmp_path, pip_exit=0, uv_exit=2)
    done = run("--python", str(python), "torch==2.13.0", env={"INSTALLER": ""})
    assert "uv failed (exit 2): " in done.stdout and "pip installs the same" in done.stdout
    assert done.returncode == 0
    assert calls(tmp_path)[-1].startswith("python -m pip install")


def test_installer_pip_never_asks_for_uv(tmp_path):
    python = stand_in_environment(tmp_path, pip_exit=0, uv_exit=0)
    done = run("--python", str(python), "six", env={"INSTALLER": "pip"})
    assert done.returncode == 0
    assert calls(tmp_path) == ["python -m pip install --disable-pip-version-check six"]


def test_installer_uv_that_fails_is_not_hidden_by_pip(tmp_path):
    python = stand_in_environment(tmp_path, pip_exit=0, uv_exit=3)
    done = run("--python", str(python), "--installer", "uv", "six")
    assert done.returncode == 3 and "pip installs" not in done.stdout
    assert "uv failed (exit 3): " in done.stdout


@pytest.mark.parametrize("args, env, message", [
    (["--installer", "conda", "six"], {}, "must be one of auto, uv, pip, not 'conda'"),
    (["six"], {"INSTALLER": "poetry"}, "not 'poetry'"),
    ([], {}, "name what to install"),
])
def test_bad_input_is_a_one_line_error(args, env, message):
    done = run(*args, env=env)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_a_dry_run_installs_nothing(tmp_path):
    python = stand_in_environment(tmp_path, pip_exit=0, uv_exit=None)
    done = run("--python", str(python), "--dry-run", "six", env={"INSTALLER": ""})
    assert done.returncode == 0 and "pip install" in done.stdout
    assert not (tmp_path / "calls.log").exists()
