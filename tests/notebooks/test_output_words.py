"""Each chapter's core path shows a learner at most 1,500 words of output (issue 37).

The words are counted in the executed notebooks by scripts/chapter_minutes.py's
`output_words` (its docstrings say what a learner reads: streams, HTML stripped of tags, a
quiz's question; not pictures, not what a <details> folds, not optional sections). Chapters
that still print more wait in NOT_YET_RECUT as strict expected failures: the day one of them
gets under the limit its test fails until it leaves the list, so the list cannot go stale.
"""

import json

import pytest

from tests.paths import NOTEBOOKS, ROOT, load_script

minutes = load_script(ROOT / "scripts" / "chapter_minutes.py", "chapter_minutes")

CHAPTERS = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.py"))
# Over the limit when this test was written (core output words, 2026-12-03 executed notebooks):
# 00 1503, 01 2149, 02 5260, 03 2105, 04 2873, 05 2057, 06 3099, 07 3450, 08 1884, 09 3075,
# 99 3596. A chapter leaves the list when it is re-cut under the limit.
# 00 re-cut: 1326, 01: 1485 (third pass 1,214), 03: 1460, 09: 1092; 02 fourth pass: 1,488
# (evidence folded: C6's timing, C5b's table, C2's 2-D case); 04: 1,490 (C18's reason folded)
# 06 re-cut: 1480 (the ResNet-50 cost optional, (d)'s steps folded); 05: 1317
# 99 re-cut (the ledger one compact row per claim): 1393; 08 re-cut: 1426; 07 re-cut: 1463
NOT_YET_RECUT: set[str] = set()
# GPU pages over the limit on their latest H200 record, cut since on this CPU (labkit only: the
# cells, and so test_h200_copies, are unchanged), each waiting for its next re-record. Strict: a
# record under the limit fails here until its chapter leaves the list.
GPU_PAGE_OVER_ON_RECORD: dict[str, str] = {}


def assert_within_limit(words) -> None:
    assert words.core <= minutes.MAX_OUTPUT_WORDS, (
        f"{words.chapter}: {words.core} words of output on the core path (limit "
        f"{minutes.MAX_OUTPUT_WORDS}; {words.held} of them held by quizzes): print the trust "
        "rule once, fold evidence in a <details>, or move depth to an Optional section")


def _chapter(name: str):
    if name in NOT_YET_RECUT:
        return pytest.param(name, marks=pytest.mark.xfail(
            strict=True, raises=AssertionError,
            reason="not yet re-cut under 1,500 output words (issue 37)"))
    return name


@pytest.mark.parametrize("chapter", [_chapter(c) for c in CHAPTERS])
def test_core_output_is_at_most_1500_words(chapter):
    assert_within_limit(minutes.output_words(NOTEBOOKS / f"{chapter}.ipynb"))


def _gpu_copy(name: str):
    from tests.notebooks.test_h200_copies import NOT_YET_RERECORDED

    if name in NOT_YET_RERECORDED:  # executed on older sources: not the page a GPU learner gets now
        return pytest.param(name, marks=pytest.mark.skip(
            reason="its H200 copy predates its sources (test_h200_copies.NOT_YET_RERECORDED)"))
    if name in GPU_PAGE_OVER_ON_RECORD:
        return pytest.param(name, marks=pytest.mark.xfail(
            strict=True, raises=AssertionError, reason=GPU_PAGE_OVER_ON_RECORD[name]))
    return name


@pytest.mark.parametrize("chapter", [_gpu_copy(c) for c in CHAPTERS])
def test_the_gpu_page_is_at_most_1500_words_too(chapter):
    """A Colab learner reads the GPU branches: the H200 copy (results/h200_notebooks/) is held to
    the same limit as the CPU copy, once it holds the chapter's current sources. The last copies
    ran over it (08 2,755 words, 03 1,745, 02 1,580) while only the CPU page was counted."""
    assert_within_limit(minutes.output_words(ROOT / "results" / "h200_notebooks" / f"{chapter}.ipynb"))


def test_the_waiting_list_names_only_chapters_that_exist():
    assert NOT_YET_RECUT <= set(CHAPTERS), NOT_YET_RECUT - set(CHAPTERS)


def _notebook(tmp_path, cells, name="98_probe"):
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def _markdown(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(*outputs):
    return {"cell_type": "code", "metadata": {}, "source": "x", "outputs": list(outputs),
            "execution_count": 1}


def _stream(text, name="stdout"):
    return {"output_type": "stream", "name": name, "text": text}


def _html(markup, plain="ignored when there is HTML", **extra):
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/html": markup, "text/plain": plain, **extra}}


WORDY = " ".join(["word"] * 1600)


def test_the_counter_bites_a_made_up_chapter_over_the_limit(tmp_path):
    words = minutes.output_words(_notebook(tmp_path, [_markdown("## Core"), _code(_stream(WORDY))]))
    assert words.core == 1600
    with pytest.raises(AssertionError, match="1600 words"):
        assert_within_limit(words)


def test_the_same_words_in_an_optional_section_or_folded_are_not_core(tmp_path):
    cells = [_markdown("## Core"), _code(_html(f"<details><summary>evidence</summary><pre>{WORDY}</pre></details>")),
             _markdown("---\n# Optional depth"), _code(_stream(WORDY)),
             _markdown("## Optional: still optional (a deeper heading)"), _code(_stream("two words")),
             _markdown("# Back in the core"), _code(_stream("three more words"))]
    words = minutes.output_words(_notebook(tmp_path, cells))
    assert (words.core, words.optional) == (1 + 3, 1600 + 2)  # "evidence", then the last cell
    assert_within_limit(words)


def test_a_quiz_held_output_is_read_once_answered_but_not_its_note():
    mark = "<svg xmlns='http://www.w3.org/2000/svg'><circle r='5'/><text>a b</text></svg>"
    held = (f"<details class='lt-held'><summary>{mark} Held back until you answer</summary>"
            "<table><tr><td>copy</td><td>2.1 ms</td></tr></table>"
            "<details><summary>hint</summary>folded words stay folded</details></details>")
    assert minutes.html_words(held) == (4, 4)  # copy, 2.1, ms, hint


def test_a_details_saved_open_is_read_whole():
    assert minutes.html_words("<details open><summary>why</summary>three words here</details>") == (4, 0)


def test_what_each_kind_of_output_contributes():
    quiz = _html("<div class='lt-quiz-static'><p>Quiz: q?</p><p><i>To answer: run the cells "
                 "above first</i></p></div>", plain="Quiz: how many bytes? [choices: 0 | 4]",
                 **{"application/vnd.jupyter.widget-view+json": {"model_id": "m"}})
    picture = {"output_type": "display_data", "metadata": {},
               "data": {"image/png": "iVBOR", "text/plain": "<Figure size 600x300 with 1 Axes>"}}
    grid = {"output_type": "execute_result", "metadata": {}, "execution_count": 1,
            "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "g"},
                     "text/plain": "AddressGrid: shape (3, 4), stride (4, 1)"}}
    plain = {"output_type": "execute_result", "metadata": {}, "execution_count": 1,
             "data": {"text/plain": "tensor([1, 2, 3])"}}
    error = {"output_type": "error", "ename": "RuntimeError", "evalue": "view size is not compatible",
             "traceback": ["long", "traceback"]}
    assert minutes.output_text_words(quiz) == (7, 7, 0)  # the question and choices, as a quiz
    assert minutes.output_text_words(picture) == (0, 0, 0)
    assert minutes.output_text_words(grid) == (0, 0, 0)
    assert minutes.output_text_words(plain) == (4, 0, 0)
    assert minutes.output_text_words(_stream("a warning here", name="stderr")) == (3, 0, 0)
    assert minutes.output_text_words(error) == (6, 0, 0)
    assert minutes.output_text_words(_html("<b>1.2 GB/s</b><style>td{x:y}</style>")) == (3, 0, 0)  # 1.2, GB, s


def test_a_missing_or_broken_notebook_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="97_missing.ipynb"):
        minutes.output_words(tmp_path / "97_missing.ipynb")
    broken = tmp_path / "96_broken.ipynb"
    broken.write_text("not json")
    with pytest.raises(ValueError, match="96_broken.ipynb is not a notebook"):
        minutes.output_words(broken)
