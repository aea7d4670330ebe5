"""Prove that the notebook tests can fail: a wrong expected output and a raising cell must both
make nbval fail, while a correct notebook passes and sanitised timings are ignored.

Every probe notebook goes through one nbval run (a subprocess, as `make test` runs nbval), and
each test reads its own probe's outcome from that run's JUnit report: one pytest start-up for
all the probes instead of one each, and still one kernel per probe."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass

import nbformat
import pytest

from tests.paths import ROOT

SANITIZE = str(ROOT / "tests" / "nbval_sanitize.cfg")
CHECKED = "# NBVAL_CHECK_OUTPUT\n"
STORED = {"12.5 ms": "9.0 ms", "0x7f3a9c001040": "0x55d0aa001000", "3.1 GB/s": "812.7 GB/s"}
SANITISED = {f"sanitised_{i}": (CHECKED + f"print('took {measured}')", f"took {STORED[measured]}\n")
             for i, measured in enumerate(STORED)}
PROBES: dict[str, tuple[str, str | None]] = {
    "correct": (CHECKED + "print((3, 4))", "(3, 4)\n"),
    "wrong": (CHECKED + "print((4, 1))", "(1, 4)\n"),
    "raises": ("raise RuntimeError('boom')", None),
    # Issue 26's red suite: a checked cell printed warnings per step (1 0 0 recorded, 0 0 0 on
    # the next machine). nbval must catch it (so such a count is printed unchecked or asserted).
    "count_changed": (CHECKED + "print('d_bucket_view', *[0, 0, 0])", "d_bucket_view 1 0 0\n"),
    **SANITISED,
}


def notebook_with(source: str, stored_output: str | None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source, execution_count=1)
    if stored_output is not None:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=stored_output)]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


@dataclass
class Outcome:
    """One probe's cell as nbval judged it: passed or not, and what it reported."""

    passed: bool
    text: str


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, Outcome]:
    folder = tmp_path_factory.mktemp("nbval_probes")
    for name, (source, stored) in PROBES.items():
        nbformat.write(notebook_with(source, stored), folder / f"probe_{name}.ipynb")
    (folder / "pytest.ini").write_text("[pytest]\n")
    report = folder / "junit.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
         "--nbval-sanitize-with", SANITIZE, f"--junitxml={report}", str(folder)],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )
    assert report.exists(), f"nbval wrote no report:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    found = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = (case.get("classname") or "").rsplit("probe_", 1)[-1].removesuffix(".ipynb")
        failed = [case.find(kind) for kind in ("failure", "error") if case.find(kind) is not None]
        found[name] = Outcome(not failed, "".join((f.get("message") or "") + (f.text or "") for f in failed))
    assert set(found) == set(PROBES), f"probes missing from the report: {set(PROBES) - set(found)}"
    return found


def test_correct_expected_output_passes(outcomes):
    assert outcomes["correct"].passed, outcomes["correct"].text


def test_wrong_expected_output_fails(outcomes):
    assert not outcomes["wrong"].passed, "nbval accepted a wrong stride in a checked cell"


def test_raising_cell_fails(outcomes):
    assert not outcomes["raises"].passed, "nbval accepted a notebook whose cell raises"
    assert "boom" in outcomes["raises"].text


@pytest.mark.parametrize("probe", sorted(SANITISED))
def test_sanitised_values_are_not_compared(outcomes, probe):
    assert outcomes[probe].passed, outcomes[probe].text


def test_a_count_that_changed_between_machines_fails(outcomes):
    assert not outcomes["count_changed"].passed, "nbval accepted a changed warning count"
