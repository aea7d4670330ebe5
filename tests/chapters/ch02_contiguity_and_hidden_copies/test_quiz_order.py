"""No cell above a quiz runs what the quiz asks about (chapter 02's copy table, chapter 03's
[pixels, channels] reshape): the answer is computed after the prediction, never shown before."""

import re

import jupytext
import pytest

from tests.paths import ROOT

# quiz variable -> code that would print its answer if it ran in a visible cell above it
GIVEAWAYS = {
    "02_contiguity_and_hidden_copies": {
        "quiz_c6": [".narrow("],
        # C2's quiz opens its optional section, after C10's measurement (the 2-D premise):
        # nothing above it may time or run the 3-D batch
        "quiz_c2": ["c2_comparisons", "transpose(0, 1).matmul", "transpose(0,1).matmul"],
        # nothing visible above C10's quiz may multiply a transposed view
        "quiz_c10": ["x.t().matmul(w)", "copies_inside(", ".matmul(", "c10_comparisons"],
        "quiz_c9": ["x.contiguous()", "x3.contiguous()", "x3_t.contiguous()", "copy_cmp"],
        # C5c's prediction (review 2026-12-04n item 6): nothing visible above it may time the patterns
        "quiz_c5c": ["stride_sweep(", "alignment_cmp", "c5b_measure", "chase.measure"],
    },
    "03_memory_layouts": {"quiz_c22": [".reshape(-1, channels)"]},
}


def _makes(quiz: str, source: str) -> bool:
    """`quiz = widgets.Quiz(`, or reached through the session: `quiz = chapter.lab.widgets.Quiz(`."""
    return re.search(rf"\b{quiz} = [\w.]*\bwidgets\.Quiz\(", source) is not None


def _visible_code_above(cells, quiz: str) -> str:
    at = next(k for k, c in enumerate(cells) if _makes(quiz, c.source))
    return "\n".join(c.source for c in cells[:at] if c.cell_type == "code"
                     and not c.metadata.get("jupyter", {}).get("source_hidden"))


@pytest.mark.parametrize("chapter", sorted(GIVEAWAYS))
def test_no_answer_above_its_quiz(chapter):
    cells = jupytext.read(ROOT / "notebooks" / f"{chapter}.py").cells
    for quiz, patterns in GIVEAWAYS[chapter].items():
        above = _visible_code_above(cells, quiz)
        shown = [p for p in patterns if p in above]
        assert not shown, f"{chapter}: {quiz}'s answer is computed above it by {shown}"


def test_the_c9_choices_do_not_state_the_answer():
    cells = jupytext.read(ROOT / "notebooks" / "02_contiguity_and_hidden_copies.py").cells
    quiz = next(c.source for c in cells if _makes("quiz_c9", c.source))
    assert "returns x itself" not in quiz


# quiz -> the variable its answer reads (made by the measurement that grades it)
GRADED_BY = {"quiz_c10": "c10_comparisons", "quiz_c2": "c2_comparisons", "quiz_c5c": "alignment_cmp"}


def headings_between(cells, quiz: str, graded_by: str) -> list[str]:
    """The markdown headings between a quiz and the first cell that makes the variable it is
    graded on: a section the learner may skip ('Optional: C2') must hold its own quiz."""
    at = next(k for k, c in enumerate(cells) if _makes(quiz, c.source))
    made = next(k for k, c in enumerate(cells) if c.cell_type == "code"
                and re.search(rf"^[\w, ]*\b{graded_by}\b[\w, ]*=", c.source, re.M))
    return [c.source.splitlines()[0] for c in cells[at + 1:made]
            if c.cell_type == "markdown" and c.source.startswith("#")]


def test_each_matmul_quiz_sits_in_the_section_that_grades_it():
    """Review 2026-12-03f item 3: C2's quiz stood beside C10's, graded only by cells under
    '### Optional: C2' (skipping them left it unanswerable, and it held C10's table)."""
    cells = jupytext.read(ROOT / "notebooks" / "02_contiguity_and_hidden_copies.py").cells
    for quiz, graded_by in GRADED_BY.items():
        between = [h for h in headings_between(cells, quiz, graded_by) if "Optional" in h]
        assert not between, f"{quiz} is graded below {between}, a section it is not in"


def test_the_section_check_bites_the_old_order():
    md = jupytext.reads("# %%\nquiz_c2 = widgets.Quiz('?')\n\n# %% [markdown]\n# ### Optional: C2\n\n"
                        "# %%\nc2_comparisons = {}\n", fmt="py:percent").cells
    assert headings_between(md, "quiz_c2", "c2_comparisons") == ["### Optional: C2"]
