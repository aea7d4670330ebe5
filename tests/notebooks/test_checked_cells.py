"""A cell marked for nbval (tag `nbval-check-output`, or `# NBVAL_CHECK_OUTPUT`) prints only what holds on every machine and torch build.

nbval compares such a cell's output with the one committed from the CI machine, so a value that
depends on the machine (its GPU, thread count, clock, where it runs) makes the suite red on the
next machine. This test reads every checked cell's source and refuses the calls that return
such values; a machine-dependent value belongs in an unchecked cell or behind an assert. The
probes below prove the rule can fail, and test_nbval_bites proves nbval itself catches a
checked output that changes.
"""

from __future__ import annotations

import pathlib
import re

import jupytext
import pytest

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
# Every chapter: a new chapter is reviewed by this test from the day it exists.
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))

# Calls whose result is a property of the machine, not of the course's semantics.
MACHINE_DEPENDENT = {
    r"\bhas_cuda\(": "whether there is a GPU",
    r"\benv\.where\(": "where the notebook runs (local, Binder, Colab)",
    r"\bget_num_threads\(": "the thread count",
    r"\bcpu_count\(": "the core count",
    r"\bperf_counter(_ns)?\(|\btime\.time\(": "a clock reading",
    r"\bget_device_name\(|\bdevice_name\b": "the device's name",
    r"\bmemory_limit_bytes\(|\bvirtual_memory\(": "the memory size",
    r"\bscaler_device\(\)\}": "the device printed",
}


def checked_cells(path: pathlib.Path) -> list[tuple[int, str]]:
    return [(index, cell.source) for index, cell in enumerate(jupytext.read(path).cells)
            if cell.cell_type == "code" and ("NBVAL_CHECK_OUTPUT" in cell.source
                                             or "nbval-check-output" in cell.metadata.get("tags", []))]


def machine_dependent_calls(source: str) -> list[str]:
    code = "\n".join(line.split("#", 1)[0] for line in source.splitlines())
    return [why for pattern, why in MACHINE_DEPENDENT.items() if re.search(pattern, code)]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_checked_cells_print_no_machine_dependent_value(path):
    found = {index: why for index, source in checked_cells(path) if (why := machine_dependent_calls(source))}
    assert not found, f"{path.name}: checked cells use machine-dependent values: {found}"


def test_every_reviewed_chapter_still_checks_something():
    """Removing the marker everywhere would pass the test above and check nothing."""
    assert all(checked_cells(path) for path in SOURCES if path.name[:2] != "08")


@pytest.mark.parametrize("source", [
    "# NBVAL_CHECK_OUTPUT\nprint(torch.get_num_threads())",
    "# NBVAL_CHECK_OUTPUT\nif env.has_cuda():\n    print('gpu')",
    "# NBVAL_CHECK_OUTPUT\nprint(f\"GradScaler('{scaler_device()}')\")",
])
def test_the_rule_refuses_a_machine_dependent_print(source):
    assert machine_dependent_calls(source)


def test_a_comment_naming_a_call_is_not_a_call():
    assert machine_dependent_calls("# NBVAL_CHECK_OUTPUT\nprint(1)  # not get_num_threads()") == []
