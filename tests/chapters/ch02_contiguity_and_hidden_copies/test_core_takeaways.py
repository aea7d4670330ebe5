"""Review 2026-12-06z 00-02 item 7: 02's core cells (its "What to remember" above all) read no
name that only an Optional section defines (C2's cases, the chase), so a room that skips them
runs on; their results are added, labelled, only where those sections ran."""

import subprocess

import pytest

from tests.chapters.ch01_strides_and_views.optional_names import cells_of, optional_only_reads
from tests.paths import NOTEBOOKS, ROOT

SOURCE = NOTEBOOKS / "02_contiguity_and_hidden_copies.py"


@pytest.mark.parametrize("name", ["00_setup_check", "02_contiguity_and_hidden_copies"])
def test_core_cells_read_no_optional_only_name(name):
    assert optional_only_reads(cells_of(NOTEBOOKS / f"{name}.py")) == []


def test_the_old_02_takeaways_failed_this_check():
    old = subprocess.run(["git", "show", "9f2b15c:notebooks/02_contiguity_and_hidden_copies.py"], cwd=ROOT,
                         capture_output=True, text=True)
    if old.returncode:
        pytest.skip("the commit before the fix is not in this checkout")
    names = {name for _, name in optional_only_reads(cells_of(old.stdout))}
    assert {"c2_cases", "chase_record"} <= names
