"""Chapter 02's quizzes hold back what answers them and no more (the learner's read in the
browser, docs/reviews/2026-12-05q-browser-05-07.md item 3: a quiz held every output below it up
to the next quiz, exercises and other claims' cards included, under a banner saying each would
give its answer away).

Read on the executed CPU copy: a held output carries class 'lt-held'. Every output between a
quiz and the next that carries the quiz's key tokens
(tests/notebooks/test_quiz_answers_not_above.py) is held; C12's optional section, the reference
GPU's elementwise ratio, the table of which operations copy and C5b's card (the seed's claim)
are not.
"""

import json

import pytest

from labkit.show.widgets.holdback import CONCLUSIONS
from tests.notebooks.test_quiz_answers_not_above import KEYS, _normal, cell_text, quizzes_in
from tests.paths import NOTEBOOKS

CHAPTER = "02_contiguity_and_hidden_copies"
# cells (by a line of their source) a quiz holds: they answer it
HELD = [
    'c2 = chapter.judge("C2"',
    'penalty = copy_cmp[',
    'big = torch.randn(1024, 1024',
    'strided_kernels = chapter.lab.strided_kernels',
    'c5a = chapter.judge("C5a"',
    # the chapter's verdicts, C5c's among them, right after C5c's section (review 2026-12-05q3 item 4)
    'chapter.save()',
]
# cells no quiz holds: they answer none
FREE = [
    'chapter.claim("C12")',
    'c12 = chapter.judge("C12"',
    'recorded_ew = chapter.only_on',
    'chapter.lab.cases.copy_table({',
    'small_a, small_b = ',
    'chapter.claim("C5b")',
]


def _cells() -> list[dict]:
    return json.loads((NOTEBOOKS / f"{CHAPTER}.ipynb").read_text(encoding="utf-8"))["cells"]


def _held(cell: dict) -> bool:
    outputs = cell.get("outputs", [])
    return bool(outputs) and all("lt-held" in "".join(o.get("data", {}).get("text/html", ""))
                                 for o in outputs)


def _cell(cells: list[dict], marker: str) -> dict:
    """The one code cell whose source is `marker`, else the one that contains it."""
    code = [c for c in cells if c.get("cell_type") == "code"]
    found = [c for c in code if "".join(c.get("source", "")).strip() == marker] or [
        c for c in code if marker in "".join(c.get("source", ""))]
    assert len(found) == 1, f"{marker!r}: {len(found)} cells"
    return found[0]


@pytest.mark.parametrize("quiz", sorted(KEYS[CHAPTER]))
def test_what_answers_a_quiz_in_its_section_is_held(quiz):
    cells = _cells()
    at = quizzes_in(cells)
    # its section: up to the next quiz, or the conclusions (never held: holdback.CONCLUSIONS)
    after = sorted(i for i in at.values() if i > at[quiz]) + [
        i for i, c in enumerate(cells) if i > at[quiz] and c.get("cell_type") == "code"
        and CONCLUSIONS.search("".join(c.get("source", "")))]
    end = min(after, default=len(cells))
    shown = [i for i in range(at[quiz] + 1, end) if cells[i].get("cell_type") == "code"
             and any(_normal(t) in _normal(cell_text(cells[i])) for t in KEYS[CHAPTER][quiz])
             and not _held(cells[i])]
    assert not shown, f"{quiz}: cells {shown} show its answer before it is answered"


@pytest.mark.parametrize("marker", HELD)
def test_the_answering_outputs_are_held(marker):
    assert _held(_cell(_cells(), marker))


@pytest.mark.parametrize("marker", FREE)
def test_the_outputs_that_answer_no_quiz_are_not_held(marker):
    cell = _cell(_cells(), marker)
    assert cell.get("outputs") and not _held(cell)
