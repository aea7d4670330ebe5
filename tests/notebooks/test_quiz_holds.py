"""Each quiz holds back what answers it and no more.

A quiz holds the outputs below it until it is answered, under a banner saying each would give
its answer away (labkit/show/widgets/holdback.py); held to the next quiz, it held exercises and
other claims' cards too, where the banner was untrue (the learner's read in the browser,
docs/reviews/2026-12-05q-browser-05-07.md item 3, and review 2026-12-05q3 items 3-4). Read on
each executed CPU copy (a held output carries class 'lt-held'): in a chapter with quiz key
tokens (tests/notebooks/test_quiz_answers_not_above.py), every output between a quiz and the next
that carries its tokens is held; the cells named in HELD are held and those in FREE are not (the
FREE checks fail on the copies made before each quiz took holds=N).
"""

from __future__ import annotations

import json

import pytest

from labkit.show.widgets.holdback import CONCLUSIONS
from tests.notebooks.test_quiz_answers_not_above import KEYS, _normal, cell_text, quizzes_in
from tests.paths import NOTEBOOKS

# per chapter, cells (by a line of their source) a quiz holds: they answer it
HELD: dict[str, list[str]] = {
    "02_contiguity_and_hidden_copies": [
        'c2 = chapter.judge("C2"',
        'penalty = copy_cmp[',
        'big = torch.randn(1024, 1024',
        'strided_kernels = chapter.lab.strided_kernels',
        'c5a = chapter.judge("C5a"',
        # the chapter's verdicts, C5c's among them, right after C5c's section (review 2026-12-05q3 item 4)
        'chapter.save()',
    ],
    "03_memory_layouts": [
        'chapter.claim("C7a")',
        'judged, shown = cases.c7_split',
        'pace_end = chapter.only_on',
    ],
    "04_fusion": [
        'chapter.claim("C20")',
        'c20 = chapter.judge("C20"',
        'sweep = chapter.lab.launch_overhead.measure',
        'traces = cases.launch_traces',
        'chain_bytes = cases.chain_bytes',
        '# Measured on a GPU (a real compile',
    ],
    "05_dataloader": [
        "lesson.worker_sweep()",
        "lesson.plateau_text()",
        "lesson.knob_sweep()",
        # the recorded GPU knob table names the H200's knee; the cores line's worker count points to it
        "lesson.recorded_gpu_knobs()",
        "lesson.cores_text()",
    ],
    "08_inference_ladder": [
        'lab.report.table(rungs',
        'lab.tables.reference_ladder(chapter)',
        'lab.tables.explanations(rungs)',
        'c24 = lab.tables.judge_c24',
    ],
}
# per chapter, cells no quiz holds: they answer none
FREE: dict[str, list[str]] = {
    "02_contiguity_and_hidden_copies": [
        'chapter.claim("C12")',
        'c12 = chapter.judge("C12"',
        'recorded_ew = chapter.only_on',
        'chapter.lab.cases.copy_table({',
        'small_a, small_b = ',
        'chapter.claim("C5b")',
    ],
    "03_memory_layouts": [
        'chapter.exercise("03.channels_last_strides")',
        'def channels_last_strides',
        'chapter.exercise("03.element_at")',
        'def element_at',
    ],
    "04_fusion": [
        'fuse_conv_bn_eval on modules in training mode',
        'block = cases.folding.randomize_batchnorm',
        'chapter.exercise("04.fold_batchnorm")',
        # exercise 04.1 sits after C18's verdict, outside its quiz's hold (holds=6)
        'chapter.exercise("04.fit_launch_overhead")',
        '(6 x Linear(512)',
        'chapter.exercise("04.fused_chain")',
    ],
    "05_dataloader": [
        'chapter.claim("C26")',
    ],
    "08_inference_ladder": [
        'chapter.claim("C24")',
        'lab.tables.gate_rules()',
        'chapter.exercise("08.relative_error")',
        'def relative_error',
        'chapter.exercise("08.first_broken_rung")',
        'chapter.exercise("08.graph_replay")',
    ],
}


def _cells(chapter: str) -> list[dict]:
    return json.loads((NOTEBOOKS / f"{chapter}.ipynb").read_text(encoding="utf-8"))["cells"]


def _held(cell: dict) -> bool:
    """Every output held, but a sweep's progress line ('knobs: 7 of 7 done'), which says how far a
    measurement got, never what it measured (shown at once, as widgets are)."""
    shown = [o for o in cell.get("outputs", [])
             if "lt-progress" not in "".join(o.get("data", {}).get("text/html", ""))]
    return bool(shown) and all("lt-held" in "".join(o.get("data", {}).get("text/html", ""))
                               for o in shown)


def _cell(cells: list[dict], marker: str) -> dict:
    """The one code cell whose source is `marker`, else the one that contains it."""
    code = [c for c in cells if c.get("cell_type") == "code"]
    found = [c for c in code if "".join(c.get("source", "")).strip() == marker] or [
        c for c in code if marker in "".join(c.get("source", ""))]
    assert len(found) == 1, f"{marker!r}: {len(found)} cells"
    return found[0]


@pytest.mark.parametrize("chapter, quiz", [(c, q) for c in HELD if c in KEYS for q in sorted(KEYS[c])])
def test_what_answers_a_quiz_in_its_section_is_held(chapter, quiz):
    cells = _cells(chapter)
    at = quizzes_in(cells)
    # its section: up to the next quiz, or the conclusions (never held: holdback.CONCLUSIONS)
    after = sorted(i for i in at.values() if i > at[quiz]) + [
        i for i, c in enumerate(cells) if i > at[quiz] and c.get("cell_type") == "code"
        and CONCLUSIONS.search("".join(c.get("source", "")))]
    end = min(after, default=len(cells))
    shown = [i for i in range(at[quiz] + 1, end) if cells[i].get("cell_type") == "code"
             and any(_normal(t) in _normal(cell_text(cells[i])) for t in KEYS[chapter][quiz])
             and not _held(cells[i])]
    assert not shown, f"{chapter} {quiz}: cells {shown} show its answer before it is answered"


@pytest.mark.parametrize("chapter, marker", [(c, m) for c, ms in HELD.items() for m in ms])
def test_the_answering_outputs_are_held(chapter, marker):
    assert _held(_cell(_cells(chapter), marker))


@pytest.mark.parametrize("chapter, marker", [(c, m) for c, ms in FREE.items() for m in ms])
def test_the_outputs_that_answer_no_quiz_are_not_held(chapter, marker):
    cell = _cell(_cells(chapter), marker)
    assert cell.get("outputs") and not _held(cell)

