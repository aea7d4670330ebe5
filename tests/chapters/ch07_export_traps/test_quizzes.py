"""No quiz answer in a quiz cell's own source (review 2026-12-04m item 7): chapter 07's cells 6 and
13 held their explanations ('IOBinding gets a data pointer ... reads channels_last memory as if it
were NCHW', '... the view ... refuses it'), which a learner reads before answering. The
explanations live in the chapter module (tables.EXPLAIN) and are shown only after an answer."""

import re

from labkit.chapters.ch07_export_traps import tables
from tests.paths import ROOT

NOTEBOOK = ROOT / "notebooks" / "07_export_traps.py"


def _quiz_cells() -> list[str]:
    cells = re.split(r"^# %%.*$", NOTEBOOK.read_text(), flags=re.MULTILINE)
    return [cell for cell in cells if "widgets.Quiz(" in cell]


def _shingles(text: str, n: int = 3) -> set[str]:
    words = re.findall(r"[a-z0-9_.()']+", text.lower())
    return {" ".join(words[i:i + n]) for i in range(len(words) - n + 1)}


def test_every_quiz_takes_its_explanation_from_the_module():
    cells = _quiz_cells()
    assert len(cells) == 3
    for cell in cells:
        assert re.search(r"explanation=tables\.EXPLAIN\[\"\w+\"\]", cell), cell
        assert not re.search(r"explanation=\s*[\"'(]", cell), cell  # no text typed into the cell


def test_no_quiz_cell_holds_its_explanations_words():
    for cell in _quiz_cells():
        key = re.search(r"explanation=tables\.EXPLAIN\[\"(\w+)\"\]", cell)[1]
        shared = _shingles(tables.EXPLAIN[key]) & _shingles(cell)
        assert not shared, (key, shared)
    assert set(tables.EXPLAIN) == {"audit", "dropped", "ort"}


def test_no_prose_between_the_audit_and_trap_1s_quiz_names_its_answer():
    """The audit's note said ATen operators 'follow whatever strides they are given (or refuse
    them, as trap 1 shows)' above the Trap 1 quiz, whose answer is that the export raises an error."""
    text = NOTEBOOK.read_text()
    between = text[text.index("quiz_audit = "):text.index("quiz_dropped = ")]
    prose = " ".join(line for line in between.splitlines() if line.startswith("#")).lower()
    assert not [word for word in ("refus", "raises", "error", "reject") if word in prose]
