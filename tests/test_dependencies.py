"""pyproject.toml, binder/requirements.txt and environment.yml must name the same dependencies.

Binder and conda users otherwise get a different course than `make lab` installs.
"""

import pathlib
import re

import pytest

tomllib = pytest.importorskip("tomllib")
from packaging.requirements import Requirement  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def as_table(lines: list[str]) -> dict[str, str]:
    """Map each requirement's normalised name to its version specifier."""
    table = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):  # pip options (--extra-index-url) and `-e .`
            continue
        requirement = Requirement(line)
        table[re.sub(r"[-_.]+", "-", requirement.name).lower()] = str(requirement.specifier)
    return table


def pyproject_table() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return as_table(project["dependencies"] + project["optional-dependencies"]["lab"])


def binder_table() -> dict[str, str]:
    return as_table((ROOT / "binder" / "requirements.txt").read_text().splitlines())


def environment_table() -> dict[str, str]:
    text = (ROOT / "environment.yml").read_text()
    pip_block = text.split("- pip:", 1)[1]
    return as_table([m.group(1) for m in re.finditer(r"^\s+-\s+(.+)$", pip_block, re.M)])


def test_binder_names_the_same_dependencies_as_pyproject():
    assert binder_table() == pyproject_table()


def test_environment_yml_names_the_same_dependencies_as_pyproject():
    assert environment_table() == pyproject_table()


def test_drift_is_detected():
    """The comparison itself must notice a changed pin (a test that cannot fail proves nothing)."""
    drifted = binder_table() | {"torch": ">=9.9"}
    assert drifted != pyproject_table()


def test_binder_uses_the_cpu_build_of_torch():
    assert "download.pytorch.org/whl/cpu" in (ROOT / "binder" / "requirements.txt").read_text()
