"""Workshop minutes, estimated from each notebook (scripts/chapter_minutes.py): every chapter
fits 40 minutes of core time, and the estimate counts what it says it counts."""

import importlib.util
import json
import sys

import pytest

from tests.paths import ROOT

_spec = importlib.util.spec_from_file_location("chapter_minutes", ROOT / "scripts" / "chapter_minutes.py")
minutes = importlib.util.module_from_spec(_spec)
sys.modules["chapter_minutes"] = minutes  # dataclasses look their module up while building
_spec.loader.exec_module(minutes)

CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("chapter", CHAPTERS)
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
    got = minutes.estimate(path, run_seconds=120)
    assert got.quizzes == 1 and got.exercises == 1 and got.code_cells == 2
    expected_core = (2 + 4 / 200 + 2 * minutes.CODE_CELL_MINUTES + minutes.QUIZ_MINUTES
                     + minutes.EXERCISE_MINUTES + 2)
    assert got.core == pytest.approx(expected_core, abs=0.1)
    assert got.optional == pytest.approx(2 + 2 / 200 + minutes.CODE_CELL_MINUTES
                                         + minutes.EXERCISE_MINUTES, abs=0.1)
    assert got.row().endswith("optional)")


def test_a_chapter_without_a_recorded_run_time_is_named(tmp_path):
    path = tmp_path / "98_unrecorded.py"
    path.write_text("# %% [markdown]\n# hello\n")
    with pytest.raises(KeyError, match="98_unrecorded"):
        minutes.estimate(path)
