"""Every chapter's core cells read no name that only an Optional section defines (review
2026-12-06z 00-02 item 7, then the session-z code review, which ran the check on every chapter:
03's C7 verdict read `kept_runs` and `half_note`, 04's takeaways `stale`, each from an optional
section): a room that skips optional sections must not meet a NameError."""

import subprocess

import pytest

from tests.notebooks.optional_names import cells_of, optional_only_reads
from tests.paths import NOTEBOOKS, ROOT

CHAPTERS = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.py"))
# Known failures, each for its chapter's next pass (a strict xfail): none since session aa.
KNOWN: dict[str, str] = {}  # 07's C15 evidence read the optional ONNX Runtime sections until session aa
BEFORE_THE_FIX = "9f2b15c"  # the commit whose 01 and 02 takeaways read optional-only names


@pytest.mark.parametrize("chapter", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=KNOWN[c])) if c in KNOWN
    else c for c in CHAPTERS])
def test_no_core_cell_reads_a_name_only_an_optional_section_defines(chapter):
    found = optional_only_reads(cells_of(NOTEBOOKS / f"{chapter}.py"))
    assert not found, f"{chapter}: core cells read optional-only names (cell, name): {found}"


def test_the_checker_finds_a_core_cell_reading_an_optional_name():
    text = ("# %% [markdown]\n# ## Core\n\n# %%\na = 1\n\n# %% [markdown]\n# ## Optional: depth\n\n"
            "# %%\nb = a + 1\nc = 3\n\n# %% [markdown]\n# ## What to remember\n\n"
            "# %%\nprint(a, b, globals().get('c'))\nc = 4\nprint(c)\n")
    assert optional_only_reads(cells_of(text)) == [(5, "b")]


@pytest.mark.parametrize("chapter, names", [
    ("01_strides_and_views", {"tour", "tour_bytes", "c8c", "error_type"}),
    ("02_contiguity_and_hidden_copies", {"c2_cases", "chase_record"}),
])
def test_the_check_bites_the_sources_before_the_fix(chapter, names):
    """The check finds what the takeaways of 01 and 02 read before the fix (the tour and C8c; C2's
    cases and the chase)."""
    old = subprocess.run(["git", "show", f"{BEFORE_THE_FIX}:notebooks/{chapter}.py"], cwd=ROOT,
                         capture_output=True, text=True)
    if old.returncode:
        pytest.skip("the commit before the fix is not in this checkout")
    assert names <= {name for _, name in optional_only_reads(cells_of(old.stdout))}
