"""Workshop minutes, estimated from each notebook (scripts/chapter_minutes.py): every chapter
fits 40 minutes of core time, and the estimate counts what it says it counts, the output a
learner reads included (issue 37). Chapters over 40 minutes wait in OVER_FORTY as strict
expected failures: one re-cut under 40 fails its test until it leaves the list."""

import json

import pytest

from tests.paths import ROOT, load_script

minutes = load_script(ROOT / "scripts" / "chapter_minutes.py", "chapter_minutes")

CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
# Over 40 minutes once output words counted (core minutes, 2026-12-03 executed notebooks):
# 01 46.1, 02 61.5, 04 45.5, 06 47.9, 07 52.1, 08 42.6. Under: 00 35.4, 03 38.4, 05 39.9,
# 09 35.8, 99 22.5. 02 re-cut to the session's door: 47.1 (output 2,458 words, 11.7 min).
# 01 re-cut: 43.0 (8 quizzes 12.0 and 2 exercises 10.0 of it). 04 re-cut: 39.7. 06 re-cut: 39.8.
# 08 re-cut: 35.2 (the speed-up exercise joined the optional ones; 1,426 output words).
# 07 re-cut: 34.6 (its given-away trace quiz gone; Trap 3 and the speed table optional; 1,463 words).
# 01 and 02 third pass (issue 38): 01 39.3 (C8c optional), 02 38.4 (C12, the recap table and
# C9's allocator optional; 1,663 output words).
OVER_FORTY: set[str] = set()


def _chapter(name):
    if name in OVER_FORTY:
        return pytest.param(name, marks=pytest.mark.xfail(
            strict=True, raises=AssertionError,
            reason="core over 40 minutes once its output is counted; not yet re-cut (issue 37)"))
    return name


def test_the_waiting_list_names_only_chapters_that_exist():
    assert OVER_FORTY <= set(CHAPTERS), OVER_FORTY - set(CHAPTERS)


@pytest.mark.parametrize("chapter", [_chapter(c) for c in CHAPTERS])
def test_chapter_core_fits_forty_minutes(chapter):
    recorded = json.loads(minutes.RUN_SECONDS.read_text())
    assert chapter in recorded, (f"no recorded run time for {chapter} in {minutes.RUN_SECONDS}: "
                                 "execute it and record its 'executed in' seconds")
    estimate = minutes.estimate(ROOT / "notebooks" / f"{chapter}.py")
    assert estimate.core <= minutes.MAX_MINUTES, (chapter, estimate)


def test_the_estimate_counts_reading_quizzes_exercises_and_optional_apart(tmp_path):
    words = " ".join(["word"] * 400)  # 2 minutes at 200 words a minute
    source = (
        "# %% [markdown]\n# ## Part\n#\n# " + words + "\n\n"
        "# %% jupyter={\"source_hidden\": true}\nquiz = widgets.Quiz(\"q?\", answer=1)\n\n"
        "# %%\nprint(1)\n\n"
        "# %%\nexercises.get(\"04.fit_launch_overhead\").check(fit)\n\n"
        "# %% [markdown]\n# ## Optional: more\n#\n# " + words + "\n\n"
        "# %%\nexercises.get(\"04.fused_chain\").check(chain)\n\n"
        "# %% [markdown]\n# ## Back to the core\n"
    )
    path = tmp_path / "99_probe.py"
    path.write_text(source)
    # 600 output words read (a quiz's own 50 left out: the quiz's minutes cover them), 400 optional
    words = minutes.OutputWords("99_probe", core=650, quiz=50, held=300, optional=400)
    got = minutes.estimate(path, run_seconds=120, words=words)
    assert got.quizzes == 1 and got.exercises == 1 and got.code_cells == 2
    assert got.output_words == 600 and got.output == pytest.approx(600 / minutes.OUTPUT_WPM)
    # each exercise priced by its level (review 2026-12-06b item 10): 04.fit_launch_overhead is
    # level 1, 04.fused_chain level 3
    level = minutes.EXERCISE_MINUTES_BY_LEVEL
    assert minutes.exercise_minutes(["04.fit_launch_overhead", "04.fused_chain"]) == level[1] + level[3]
    assert minutes.exercise_minutes(["99.not_registered"]) == minutes.EXERCISE_MINUTES
    expected_core = (2 + 4 / 200 + 3 + 2 * minutes.CODE_CELL_MINUTES + minutes.QUIZ_MINUTES
                     + level[1] + 2)
    assert got.core == pytest.approx(expected_core, abs=0.1)
    assert got.optional == pytest.approx(2 + 2 / 200 + 2 + minutes.CODE_CELL_MINUTES
                                         + level[3], abs=0.1)
    assert got.row().endswith("optional)")


def test_the_estimate_reads_the_output_of_the_executed_notebook_beside_the_source(tmp_path):
    """Without words given, the .ipynb beside the .py is counted: 400 words of printed output
    are two minutes more than the same chapter with nothing printed."""
    import jupytext
    import nbformat

    source = "# %% [markdown]\n# ## Part\n\n# %%\nprint(words)\n"
    path = tmp_path / "97_printed.py"
    path.write_text(source)
    notebook = jupytext.reads(source, fmt="py:percent")
    notebook.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="word " * 400)]
    jupytext.write(notebook, tmp_path / "97_printed.ipynb")
    printed = minutes.estimate(path, run_seconds=0)
    silent = minutes.estimate(path, run_seconds=0, words=minutes.OutputWords("97_printed", 0, 0, 0, 0))
    assert printed.output_words == 400
    assert printed.core - silent.core == pytest.approx(400 / minutes.OUTPUT_WPM)
    (tmp_path / "97_printed.ipynb").unlink()
    with pytest.raises(FileNotFoundError, match="97_printed.ipynb"):
        minutes.estimate(path, run_seconds=0)


def test_a_chapter_without_a_recorded_run_time_is_named(tmp_path):
    path = tmp_path / "98_unrecorded.py"
    path.write_text("# %% [markdown]\n# hello\n")
    with pytest.raises(KeyError, match="98_unrecorded"):
        minutes.estimate(path)
