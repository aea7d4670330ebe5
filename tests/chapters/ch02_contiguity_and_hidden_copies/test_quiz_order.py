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
        # both C10's and C2's quizzes come before either measurement: each answers the other
        "quiz_c2": ["matmul_cases(", "c2_comparisons", "transpose(0, 1).matmul", "transpose(0,1).matmul",
                    "c10_comparisons", "strided_gemm.paths(", ".matmul("],
        # nothing visible above C10's quiz may multiply a transposed view
        "quiz_c10": ["x.t().matmul(w)", "copies_inside(", ".matmul(", "c10_comparisons"],
        "quiz_c9": ["x.contiguous()", "x3.contiguous()", "x3_t.contiguous()", "copy_cmp"],
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
