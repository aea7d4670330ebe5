"""Review 2026-12-06z 00-02 item 7: 01's core cells (its "What to remember" above all) read no
name that only an Optional section defines, so a room that skips the tour or C8c runs on."""

import subprocess

import pytest

from labkit.chapters.ch01_strides_and_views import views
from labkit.show.table import Table
from tests.chapters.ch01_strides_and_views.optional_names import cells_of, optional_only_reads
from tests.paths import NOTEBOOKS, ROOT

SOURCE = NOTEBOOKS / "01_strides_and_views.py"


def test_the_checker_finds_a_core_cell_reading_an_optional_name():
    text = ("# %% [markdown]\n# ## Core\n\n# %%\na = 1\n\n# %% [markdown]\n# ## Optional: depth\n\n"
            "# %%\nb = a + 1\nc = 3\n\n# %% [markdown]\n# ## What to remember\n\n"
            "# %%\nprint(a, b, globals().get('c'))\nc = 4\nprint(c)\n")
    assert optional_only_reads(cells_of(text)) == [(5, "b")]


def test_01_core_cells_read_no_optional_only_name():
    assert optional_only_reads(cells_of(SOURCE)) == []


def test_the_old_01_takeaways_failed_this_check():
    """The check bites: 01 as committed before this fix read the tour's and C8c's names."""
    old = subprocess.run(["git", "show", "9f2b15c:notebooks/01_strides_and_views.py"], cwd=ROOT,
                         capture_output=True, text=True)
    if old.returncode:
        pytest.skip("the commit before the fix is not in this checkout")
    names = {name for _, name in optional_only_reads(cells_of(old.stdout))}
    assert {"tour", "tour_bytes", "c8c", "error_type"} <= names


def test_the_optional_lines_are_labelled_and_absent_without_their_sections():
    assert views.tour_aside(None) == ""
    tour = Table("", ["view", "copied", "shares storage"])
    tour.add("a", 0, True)
    tour.add("b", 0, True)
    assert views.tour_aside(tour) == " (the optional tour: 2 of 2 views share the storage, 0 bytes copied)"
