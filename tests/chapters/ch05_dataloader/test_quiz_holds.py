"""Chapter 05's knee quiz holds back what answers it and no more (docs/reviews/
2026-12-05q-browser-05-07.md item 3: it held C26's card, two exercises and C25's card under a
banner saying each would give its answer away; review 2026-12-05q3 item 3: holds=3 left the
recorded GPU knob table, which names the H200's knee, and the cores line, whose worker count
points to it, unheld). Read on the executed CPU copy: a held output carries class 'lt-held'."""

import json

import pytest

from tests.paths import NOTEBOOKS

HELD = ["lesson.worker_sweep()", "lesson.plateau_text()", "lesson.knob_sweep()",
        "lesson.recorded_gpu_knobs()", "lesson.cores_text()"]
FREE = ['chapter.claim("C26")']


def _cell(marker: str) -> dict:
    cells = json.loads((NOTEBOOKS / "05_dataloader.ipynb").read_text(encoding="utf-8"))["cells"]
    found = [c for c in cells if c.get("cell_type") == "code" and marker in "".join(c.get("source", ""))]
    assert len(found) == 1, f"{marker!r}: {len(found)} cells"
    return found[0]


def _held(cell: dict) -> bool:
    """Every output held, but a sweep's progress line ('knobs: 7 of 7 done'), which says how far a
    measurement got, never what it measured (it is shown at once, as widgets are)."""
    shown = [o for o in cell.get("outputs", [])
             if "lt-progress" not in "".join(o.get("data", {}).get("text/html", ""))]
    return bool(shown) and all("lt-held" in "".join(o.get("data", {}).get("text/html", ""))
                               for o in shown)


@pytest.mark.parametrize("marker", HELD)
def test_what_answers_the_knee_quiz_is_held(marker):
    assert _held(_cell(marker))


@pytest.mark.parametrize("marker", FREE)
def test_what_answers_no_quiz_is_not_held(marker):
    assert not _held(_cell(marker))
