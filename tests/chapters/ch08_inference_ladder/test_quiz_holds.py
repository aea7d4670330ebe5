"""Chapter 08's quizzes hold back what answers them and no more (the learner's read in the
browser, docs/reviews/2026-12-05q-browser-05-07.md item 3: a quiz held every output below it up
to the next quiz, exercises and other claims' cards included, under a banner saying each would
give its answer away).

Read on the executed CPU copy: a held output carries class 'lt-held'. Every output between a
quiz and the next that carries the quiz's key tokens
(tests/notebooks/test_quiz_answers_not_above.py) is held; C24's card, the gate's rules and the
exercises are not.
"""

import json

import pytest

from labkit.show.widgets.holdback import CONCLUSIONS
from tests.notebooks.test_quiz_answers_not_above import KEYS, _normal, cell_text, quizzes_in
from tests.paths import NOTEBOOKS

CHAPTER = "08_inference_ladder"
# cells (by a line of their source) a quiz holds: they answer it
HELD = [
    'lab.report.table(rungs',
    'lab.tables.reference_ladder(chapter)',
    'lab.tables.explanations(rungs)',
    'c24 = lab.tables.judge_c24',
]
# cells no quiz holds: they answer none
FREE = [
    'chapter.claim("C24")',
    'lab.tables.gate_rules()',
    'chapter.exercise("08.relative_error")',
    'def relative_error',
    'chapter.exercise("08.first_broken_rung")',
    'chapter.exercise("08.graph_replay")',
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
