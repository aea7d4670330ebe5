"""benchmarks/suite_cost.py --suite: it times `make test`'s own steps (set-up, lint, pytest) as
walls that add up to the whole, and sums test time per part from pytest's JUnit report, so a
regression shows which part it came from."""

from __future__ import annotations

import importlib.util
import pathlib
import xml.etree.ElementTree as ElementTree

import pytest

from tests.paths import ROOT


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("suite_cost_tool", ROOT / "benchmarks" / "suite_cost.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def case(**attributes) -> ElementTree.Element:
    return ElementTree.Element("testcase", attributes)


def test_each_test_lands_in_its_part(tool):
    assert tool.part_of(case(classname="notebooks.03_memory_layouts.ipynb", name="Cell 19")) == "notebooks"
    assert tool.part_of(case(file="tests/browser/test_widgets.py", classname="x")) == "browser"
    assert tool.part_of(case(classname="tests.browser.test_widgets", name="t")) == "browser"
    assert tool.part_of(case(classname="tests.core.test_env", name="t")) == "units"


JUNIT = """<testsuites><testsuite>
<testcase classname="tests.core.test_env" name="a" time="2.0"/>
<testcase classname="notebooks.00_setup_check.ipynb" name="Cell 1" time="5.0"/>
<testcase classname="tests.browser.test_widgets" name="b" time="7.5"/>
</testsuite></testsuites>"""


def test_the_steps_are_make_tests_own_and_the_parts_come_from_the_report(tool, monkeypatch):
    ran = []

    def timed(command):
        ran.append(command)
        target = command[3]
        if target == "test-pytest":  # PYTEST_ARGS=--junitxml=<report> ...: write what pytest would
            pathlib.Path(command[4].split()[0].split("=", 2)[2]).write_text(JUNIT)
        return {"lint": 1.0, "test-pytest": 30.0}.get(target, 60.0), 0

    monkeypatch.setattr(tool, "timed", timed)
    result = tool.suite(["--durations=5"], pathlib.Path("/venv"), setup=True)
    targets = [c[3] for c in ran]
    assert targets == ["/venv/.test-ready", "lint", "test-pytest"]
    assert all(c[:3] == ["make", "-s", "VENV=/venv"] for c in ran)
    assert "--durations=5" in ran[2][4]
    assert result["seconds"] == {"set-up": 60.0, "lint": 1.0, "pytest": 30.0}
    assert result["parts"] == {"units": 2.0, "notebooks": 5.0, "browser": 7.5}
    assert result["failed"] == ""
