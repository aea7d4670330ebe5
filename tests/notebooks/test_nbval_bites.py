"""Prove that the notebook tests can fail: a wrong expected output and a raising cell must both
make nbval fail, while a correct notebook passes and sanitised timings are ignored."""

import subprocess
import sys

import nbformat
import pytest

from tests.paths import ROOT

SANITIZE = str(ROOT / "tests" / "nbval_sanitize.cfg")


def notebook_with(source: str, stored_output: str | None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source, execution_count=1)
    if stored_output is not None:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=stored_output)]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


def run_nbval(tmp_path, notebook) -> subprocess.CompletedProcess:
    path = tmp_path / "probe.ipynb"
    nbformat.write(notebook, path)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
         "--nbval-sanitize-with", SANITIZE, str(path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=180,
    )


CHECKED = "# NBVAL_CHECK_OUTPUT\n"


def test_correct_expected_output_passes(tmp_path):
    result = run_nbval(tmp_path, notebook_with(CHECKED + "print((3, 4))", "(3, 4)\n"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_wrong_expected_output_fails(tmp_path):
    result = run_nbval(tmp_path, notebook_with(CHECKED + "print((4, 1))", "(1, 4)\n"))
    assert result.returncode != 0, "nbval accepted a wrong stride in a checked cell"
    assert "1 failed" in result.stdout


def test_raising_cell_fails(tmp_path):
    result = run_nbval(tmp_path, notebook_with("raise RuntimeError('boom')", None))
    assert result.returncode != 0, "nbval accepted a notebook whose cell raises"
    assert "boom" in result.stdout


@pytest.mark.parametrize("measured", ["12.5 ms", "0x7f3a9c001040", "3.1 GB/s"])
def test_sanitised_values_are_not_compared(tmp_path, measured):
    stored = {"12.5 ms": "9.0 ms", "0x7f3a9c001040": "0x55d0aa001000", "3.1 GB/s": "812.7 GB/s"}
    source = CHECKED + f"print('took {measured}')"
    result = run_nbval(tmp_path, notebook_with(source, f"took {stored[measured]}\n"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_count_that_changed_between_machines_fails():
    """Issue 26's red suite: a checked cell printed warnings per step (1 0 0 recorded, 0 0 0 on
    the next machine). nbval must catch it (so such a count is printed unchecked or asserted)."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        source = CHECKED + "print('d_bucket_view', *[0, 0, 0])"
        result = run_nbval(Path(folder), notebook_with(source, "d_bucket_view 1 0 0\n"))
    assert result.returncode != 0 and "1 failed" in result.stdout, result.stdout
