"""Workshop minutes per chapter, estimated from the notebook itself.

The estimate, stated so it can be argued with:

- reading: the words of every markdown cell (and of the text a learner reads in a quiz's
  question) at READING_WPM words a minute;
- code: CODE_CELL_MINUTES for each code cell whose source is shown (read the code, read
  what it printed or drew); a quiz's hidden cell is counted as the quiz;
- quizzes: QUIZ_MINUTES for each `widgets.Quiz(` (read, think, predict, read the answer);
- exercises: EXERCISE_MINUTES for each exercise checked (`exercises.get("NN.x").check(`);
- run time: the chapter's recorded CPU run (results/chapter_run_seconds.json, written from
  `scripts/execute_notebook.py`'s "executed in" figure), in minutes.

Sections whose heading says "Optional" are counted apart: a chapter's core must fit
MAX_MINUTES; its optional depth is for those who finish early.

    python scripts/chapter_minutes.py            # a Markdown table for the README's chapter map
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READING_WPM = 200
CODE_CELL_MINUTES = 0.25
QUIZ_MINUTES = 1.5
EXERCISE_MINUTES = 5.0
MAX_MINUTES = 40
RUN_SECONDS = ROOT / "results" / "chapter_run_seconds.json"

_HEADING = re.compile(r"^#{2,4}\s", re.MULTILINE)
_EXERCISE = re.compile(r"exercises\.get\(\"([0-9]{2}\.[a-z_0-9]+)\"\)\.check\(")


@dataclass(frozen=True)
class Minutes:
    """One chapter's estimate, core and optional, with its parts."""

    chapter: str
    reading: float
    code_cells: int
    quizzes: int
    exercises: int
    run: float
    optional: float

    @property
    def core(self) -> float:
        """Minutes of the chapter's core: reading, quizzes, exercises and run time."""
        return (self.reading + self.code_cells * CODE_CELL_MINUTES + self.quizzes * QUIZ_MINUTES + self.exercises * EXERCISE_MINUTES
                + self.run)

    def row(self) -> str:
        """The README column's text: '35 min (+10 optional)'."""
        extra = f" (+{round(self.optional)} optional)" if self.optional >= 0.5 else ""
        return f"{round(self.core)} min{extra}"


def _words(text: str) -> int:
    return len(re.findall(r"[A-Za-z0-9][\w'.-]*", text))


def _cells(path: Path) -> list[tuple[str, str, bool]]:
    """(cell type, source, source hidden) of a jupytext percent-format notebook."""
    import jupytext

    return [(c.cell_type, c.source, bool(c.metadata.get("jupyter", {}).get("source_hidden")))
            for c in jupytext.read(path).cells]


def _cell_minutes(kind: str, source: str, hidden: bool) -> tuple[float, int, int, set[str]]:
    """(reading minutes, shown code cells, quizzes, exercise ids) of one cell."""
    if kind == "markdown":
        return _words(source) / READING_WPM, 0, 0, set()
    quizzes = source.count("widgets.Quiz(")
    shown = int(not hidden and not quizzes and bool(source.strip()))
    return 0.0, shown, quizzes, set(_EXERCISE.findall(source))


def estimate(path: Path, run_seconds: float | None = None) -> Minutes:
    """The estimate for one notebook (.py source); run_seconds from the recorded file."""
    path = Path(path)
    if run_seconds is None:
        recorded = json.loads(RUN_SECONDS.read_text()) if RUN_SECONDS.exists() else {}
        if not isinstance(recorded.get(path.stem), int | float):
            raise KeyError(f"no recorded run time for {path.stem} in {RUN_SECONDS}; execute it "
                           "with scripts/execute_notebook.py and add its 'executed in' seconds")
        run_seconds = float(recorded[path.stem])
    reading = optional = 0.0
    code_cells, quizzes, exercise_ids = 0, 0, set()
    optional_level = None  # heading depth of the Optional section we are in
    for kind, source, hidden in _cells(path):
        if kind == "markdown" and _HEADING.match(source):
            level = len(source) - len(source.lstrip("#"))
            if optional_level is not None and level <= optional_level:
                optional_level = None
            if optional_level is None and "optional" in source.splitlines()[0].lower():
                optional_level = level
        read, shown, quiz, ids = _cell_minutes(kind, source, hidden)
        if optional_level is not None:
            optional += (read + shown * CODE_CELL_MINUTES + quiz * QUIZ_MINUTES
                         + len(ids) * EXERCISE_MINUTES)
            continue
        reading += read
        code_cells += shown
        quizzes += quiz
        exercise_ids |= ids
    return Minutes(path.stem, reading, code_cells, quizzes, len(exercise_ids), run_seconds / 60,
                   optional)


def main() -> int:
    print("| # | minutes (core, +optional) |\n| --- | --- |")
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")):
        try:
            m = estimate(path)
        except KeyError:
            continue
        print(f"| {path.stem[:2]} | {m.row()} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
