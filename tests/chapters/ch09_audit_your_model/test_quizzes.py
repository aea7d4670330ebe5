"""Chapter 09's quizzes are predictions: their answers are neither above them nor shown under
them before they are answered (review 2026-12-03g item 9).

The same check as chapters 00-04's (tests/notebooks/test_quiz_answers_not_above.py, whose
readers this reuses) on the executed notebook, plus what a Run All page needs here: each
quiz's answer is printed in the cells right under it (the audit's table), so every output
below a quiz that carries its answer's key tokens, up to the next quiz, must be a held
placeholder (shown once the quiz is answered or skipped); and the hold stops there, so the
learner's own audit and the exercises are not held behind a quiz they do not answer.
"""

import json

import pytest

from tests.notebooks.test_quiz_answers_not_above import _normal, cell_text, giveaways, quizzes_in
from tests.paths import NOTEBOOKS

CHAPTER = "09_audit_your_model"
# quiz -> its answer's key tokens: the labels of the output that grades it (either machine's
# network names: the CPU runs labkit's built-ins where torchvision does not import)
KEYS = {
    # graded on the ResNet-50 audit's drops: its table's "layout drops" row
    "quiz_resnet": ["layout drops", "Audit of labkit:resnet50", "Audit of torchvision:resnet50"],
    # graded on MobileNetV3's channels_last decision on the clock its verdict used: its table
    "quiz_mobile": ["Audit of labkit:mobilenet_v3", "Audit of torchvision:mobilenet_v3_large"],
    # graded on the ViT's hidden copies: its table and its full report (every module)
    "quiz_vit": ["Audit of labkit:vit", "Audit of torchvision:vit_b_16", "the full report of labkit:vit",
                 "the full report of torchvision:vit_b_16"],
}
# cells whose outputs no quiz may hold: the learner's own audit and the exercises
NEVER_HELD = ("my_report = audits.run_yours", "chapter.exercise(")


def _cells() -> list[dict]:
    return json.loads((NOTEBOOKS / f"{CHAPTER}.ipynb").read_text(encoding="utf-8"))["cells"]


def _held(cell: dict) -> bool:
    outputs = cell.get("outputs", [])
    return bool(outputs) and all("lt-held" in "".join(o.get("data", {}).get("text/html", ""))
                                 for o in outputs)


def test_every_quiz_has_its_key_tokens():
    assert set(quizzes_in(_cells())) == set(KEYS)


def test_no_quiz_answer_is_shown_above_it():
    assert giveaways(_cells(), KEYS) == {}


@pytest.mark.parametrize("quiz", sorted(KEYS))
def test_the_outputs_that_answer_a_quiz_are_held_until_it_is_answered(quiz):
    cells = _cells()
    at = quizzes_in(cells)
    after = sorted(i for i in at.values() if i > at[quiz])
    end = after[0] if after else len(cells)
    answering = [i for i in range(at[quiz] + 1, end) if cells[i].get("cell_type") == "code"
                 and any(_normal(t) in _normal(cell_text(cells[i])) for t in KEYS[quiz])]
    assert answering, f"{quiz}: no output under it shows its answer (stale tokens?)"
    shown = [i for i in answering if not _held(cells[i])]
    assert not shown, f"{quiz}: cells {shown} show its answer before it is answered"


def test_the_learners_audit_and_the_exercises_are_not_held():
    cells = _cells()
    mine = [i for i, c in enumerate(cells) if c.get("cell_type") == "code"
            and any(marker in "".join(c.get("source", "")) for marker in NEVER_HELD)]
    assert len(mine) >= 3
    assert not [i for i in mine if _held(cells[i])]


def test_the_held_check_bites():
    held = {"cell_type": "code", "outputs": [{"output_type": "display_data", "data": {
        "text/html": "<details class='lt-held'><summary>Held back</summary>layout drops 0</details>"}}]}
    printed = {"cell_type": "code", "outputs": [{"output_type": "stream", "text": "layout drops 0"}]}
    assert _held(held) and not _held(printed) and not _held({"cell_type": "code", "outputs": []})
