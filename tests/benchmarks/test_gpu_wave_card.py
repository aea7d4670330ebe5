"""A wave meant for the H200's reference file stops on any other card, before a step runs.

A call for the nvidia-h200 kind may be served by an H100 (the device's README); its timings
written into results/nvidia-h200.json would pass for the reference GPU's. nvidia-smi is replaced
by a script that names the card.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.paths import ROOT


def _wave(tmp_path: Path, card: str, **env: str) -> tuple[subprocess.CompletedProcess, Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho '{card}'\n")
    smi.chmod(0o755)
    marker = tmp_path / "step_ran"
    done = subprocess.run(
        ["bash", "benchmarks/gpu_wave.sh", f"touch {marker}"], cwd=ROOT, capture_output=True,
        text=True, timeout=60,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OUT": str(tmp_path / "out"),
             "SKIP_INSTALL": "1", "LABKIT_CACHE_DIR": str(tmp_path / "cache"),
             "WAVE_STATE": str(tmp_path / "state"), **env})
    return done, marker


@pytest.mark.parametrize("card", ["NVIDIA H100 80GB HBM3", ""])
def test_other_card_stops_before_any_step(tmp_path: Path, card: str) -> None:
    done, marker = _wave(tmp_path, card)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "wrong card" in done.stdout and not marker.exists()
    # the tarball holds why, for scripts/take_wave.sh to print (review 2026-12-05r2 item 2)
    listed = subprocess.run(["tar", "tzf", str(tmp_path / "out" / "wave.tar.gz")], capture_output=True, text=True)
    assert "wave/steps.txt" in listed.stdout.split()


def test_a_grace_hopper_is_not_an_h200(tmp_path: Path) -> None:
    done, marker = _wave(tmp_path, "NVIDIA GH200 480GB")
    assert done.returncode == 3 and not marker.exists(), done.stdout + done.stderr


def test_h200_runs_its_steps(tmp_path: Path) -> None:
    done, marker = _wave(tmp_path, "NVIDIA H200")
    assert marker.exists(), done.stdout + done.stderr
