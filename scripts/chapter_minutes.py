"""Workshop minutes per chapter, estimated from the notebook itself.

The estimate, stated so it can be argued with:

- reading: the words of every markdown cell (and of the text a learner reads in a quiz's
  question) at READING_WPM words a minute;
- code: CODE_CELL_MINUTES for each code cell whose source is shown (read the code, read
  what it printed or drew); a quiz's hidden cell is counted as the quiz;
- quizzes: QUIZ_MINUTES for each `widgets.Quiz(` (read, think, predict, read the answer);
- exercises: for each exercise checked (`exercises.get("NN.x").check(`), the minutes of its
  level, EXERCISE_MINUTES_BY_LEVEL (level 1 4, level 2 7, level 3 12: a level-3 exercise takes
  a room 10-15 minutes, review 2026-12-06b item 10, where one price of 5 minutes counted it as
  a level-1's); EXERCISE_MINUTES where the registry does not know the exercise;
- run time: the chapter's recorded CPU run (results/chapter_run_seconds.json, written from
  `scripts/execute_notebook.py`'s "executed in" figure), in minutes.

- output: the words of output a learner reads in the executed notebook (the .ipynb beside
  the source; `output_words` says what counts) at OUTPUT_WPM words a minute, except a quiz's
  own words (QUIZ_MINUTES covers reading the quiz).

Both rates are 200 words a minute: Brysbaert's meta-analysis of 190 studies ("How many words
do we read per minute?", Journal of Memory and Language 109, 2019) puts adults' silent reading
of English non-fiction at 238 words a minute; this text is technical, dense with numbers, and
many learners read it in a second language, so the estimate rounds down to 200.

Sections whose heading says "Optional" are counted apart: a chapter's core must fit
MAX_MINUTES and its output MAX_OUTPUT_WORDS (issue 37); its optional depth is for those who
finish early.

    python scripts/chapter_minutes.py            # a Markdown table for the README's chapter map
    python scripts/chapter_minutes.py --words    # each chapter's output words and minutes, by part
"""

from __future__ import annotations

import argparse
import html.parser
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READING_WPM = 200
OUTPUT_WPM = 200
CODE_CELL_MINUTES = 0.25
QUIZ_MINUTES = 1.5
EXERCISE_MINUTES = 5.0  # an exercise the registry does not know (a test's notebook)
EXERCISE_MINUTES_BY_LEVEL = {1: 4.0, 2: 7.0, 3: 12.0}
MAX_MINUTES = 40
MAX_OUTPUT_WORDS = 1500
RUN_SECONDS = ROOT / "results" / "chapter_run_seconds.json"

_HEADING = re.compile(r"^(#{1,4})\s", re.MULTILINE)
# An exercise checked: `exercises.get("NN.x").check(` or, through the session, `chapter.exercise("NN.x").check(`.
_EXERCISE = re.compile(r"(?:exercises\.get|chapter\.exercise)\(\"([0-9]{2}\.[a-z_0-9]+)\"\)\.check\(")
_PICTURES = ("image/png", "image/svg+xml", "image/jpeg", "application/vnd.jupyter.widget-view+json")


@dataclass(frozen=True)
class OutputWords:
    """The words of output one executed chapter shows a learner, core and optional apart."""

    chapter: str
    core: int  # every word read in the core path's outputs, quizzes included
    quiz: int  # of those, the words of quiz widgets (question and choices)
    held: int  # of those, the words a quiz holds back until it is answered
    optional: int  # words in the outputs of optional sections

    @property
    def read_beside_quizzes(self) -> int:
        """Core words the minutes estimate adds (a quiz's own words are in QUIZ_MINUTES)."""
        return self.core - self.quiz


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
    output_words: int = 0  # core output words read, a quiz's own words left out
    exercise_time: float = 0.0  # minutes of the core's exercises, each by its level (`exercise_minutes`)

    @property
    def output(self) -> float:
        """Minutes spent reading the core path's output."""
        return self.output_words / OUTPUT_WPM

    @property
    def core(self) -> float:
        """Minutes of the chapter's core: reading, output, quizzes, exercises and run time."""
        return (self.reading + self.output + self.code_cells * CODE_CELL_MINUTES
                + self.quizzes * QUIZ_MINUTES + self.exercise_time + self.run)

    def row(self) -> str:
        """The README column's text: '35 min (+10 optional)'."""
        extra = f" (+{round(self.optional)} optional)" if self.optional >= 0.5 else ""
        return f"{round(self.core)} min{extra}"


def exercise_minutes(ids: Iterable[str]) -> float:
    """The minutes of these exercises, each by its level in labkit's registry
    (EXERCISE_MINUTES_BY_LEVEL), EXERCISE_MINUTES for one the registry does not know."""
    if str(ROOT) not in sys.path:  # run as a script from anywhere
        sys.path.insert(0, str(ROOT))
    # imported here, not at the top: counting words needs no labkit (labkit.exercises needs no torch)
    from labkit.exercises import ExerciseError, registry

    total = 0.0
    for exercise_id in ids:
        try:
            level = registry.get(exercise_id).level
        except ExerciseError:  # not registered (a test's notebook): the one price
            total += EXERCISE_MINUTES
            continue
        total += EXERCISE_MINUTES_BY_LEVEL.get(level, EXERCISE_MINUTES)
    return total


def _words(text: str) -> int:
    return len(re.findall(r"[A-Za-z0-9][\w'.-]*", text))


def optional_flags(cells: Iterable[tuple[str, str]]) -> list[bool]:
    """For each (cell type, source), whether it sits in an optional section.

    A section is optional when its heading (the first Markdown heading line of a markdown cell)
    says "optional"; it ends at the next heading of the same or a higher level. Chapters mark
    their after-the-workshop depth this way ("## Optional: ...", "# Optional depth").
    """
    flags = []
    optional_level = None  # heading depth of the Optional section we are in
    for kind, source in cells:
        heading = _HEADING.search(source) if kind == "markdown" else None
        if heading:
            level = len(heading.group(1))
            line = source[heading.start():].splitlines()[0]
            if optional_level is not None and level <= optional_level:
                optional_level = None
            if optional_level is None and "optional" in line.lower():
                optional_level = level
        flags.append(optional_level is not None)
    return flags


class _ReadText(html.parser.HTMLParser):
    """The text of an HTML output a learner reads.

    Left out: pictures and code that is not text (``svg``, ``style``, ``script``), and what a
    ``<details>`` folds: only its ``<summary>`` line shows until the learner opens it (a hint,
    a reference solution, folded evidence); one saved ``open`` is read whole. A quiz's held
    output (``details.lt-held``) is the exception: answering the quiz opens it in place, so its body is read and its summary (the
    "held back" note, gone once answered) is not; its words are also counted as ``held``.
    """

    _SKIPPED = {"svg", "style", "script"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        # The open elements that decide what shows: ("svg" | "style" | "script" | "summary" |
        # "held" | "folded" | "open", the last three a details), innermost last; a summary is
        # kept only as a details' child.
        self.stack: list[str] = []
        self.read: list[str] = []
        self.held: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIPPED:
            self.stack.append(tag)
        elif tag == "details":
            named = dict(attrs)
            classes = (named.get("class") or "").split()
            # An open details shows its body, like any element; marked as a summary-less fold
            # that hides nothing (its own summary then shows too).
            self.stack.append("held" if "lt-held" in classes else "open" if "open" in named
                              else "folded")
        elif tag == "summary" and self.stack and self.stack[-1] in ("held", "folded", "open"):
            self.stack.append("summary")
        self.read.append(" ")  # an element's edge separates words (table cells, list items)

    def handle_endtag(self, tag: str) -> None:
        kind = {"details": ("held", "folded", "open"), "summary": ("summary",)}.get(tag, (tag,))
        if self.stack and self.stack[-1] in kind:
            self.stack.pop()
        self.read.append(" ")

    def _shown(self) -> tuple[bool, bool]:
        """(whether the text here shows, whether a quiz holds it)."""
        held = False
        for depth, kind in enumerate(self.stack):
            in_summary = depth + 1 < len(self.stack) and self.stack[depth + 1] == "summary"
            if kind in self._SKIPPED or (kind == "folded" and not in_summary) \
                    or (kind == "held" and in_summary):
                return False, False
            held = held or kind == "held"
        return True, held

    def handle_data(self, data: str) -> None:
        shown, held = self._shown()
        if shown:
            self.read.append(data)
            if held:
                self.held.append(data)


def html_words(markup: str) -> tuple[int, int]:
    """(words read, of them held by a quiz) of one HTML output (see `_ReadText`)."""
    reader = _ReadText()
    reader.feed(markup)
    reader.close()
    return _words(" ".join(reader.read)), _words(" ".join(reader.held))


def output_text_words(output: dict) -> tuple[int, int, int]:
    """(words read, of them a quiz's, of them held) of one saved cell output.

    A stream (stdout, stderr) and an error are read as text. A rich output is read as what the
    front end shows: its HTML when it has some, except a quiz, whose live widget shows its
    question and choices (its ``text/plain``; the HTML fallback adds instructions for a page
    without a kernel); a picture (an image, or a widget with no HTML: a grid, a timeline)
    has no words to read; otherwise its Markdown or plain text.
    """
    kind = output.get("output_type")
    if kind == "stream":
        return _words(_text(output.get("text", ""))), 0, 0
    if kind == "error":
        return _words(f"{output.get('ename', '')}: {output.get('evalue', '')}"), 0, 0
    data = output.get("data", {})
    markup = _text(data.get("text/html", ""))
    if "lt-quiz-static" in markup:
        words = _words(_text(data.get("text/plain", "")))
        return words, words, 0
    if markup:
        read, held = html_words(markup)
        return read, 0, held
    if any(mime in data for mime in _PICTURES):
        return 0, 0, 0
    return _words(_text(data.get("text/markdown", data.get("text/plain", "")))), 0, 0


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


def output_words(notebook: Path) -> OutputWords:
    """Count the output words of one executed notebook (.ipynb), core and optional apart."""
    notebook = Path(notebook)
    if not notebook.is_file():
        raise FileNotFoundError(f"no executed notebook at {notebook}; run it with "
                                "scripts/execute_notebook.py so its outputs can be counted")
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{notebook} is not a notebook (.ipynb JSON with cells): {error}") from error
    flags = optional_flags((c.get("cell_type", ""), _text(c.get("source", ""))) for c in cells)
    core = quiz = held = optional = 0
    for cell, is_optional in zip(cells, flags, strict=True):
        for output in cell.get("outputs", []):
            read, of_quiz, of_held = output_text_words(output)
            if is_optional:
                optional += read
            else:
                core, quiz, held = core + read, quiz + of_quiz, held + of_held
    return OutputWords(notebook.stem, core, quiz, held, optional)


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


def estimate(path: Path, run_seconds: float | None = None,
             words: OutputWords | None = None) -> Minutes:
    """The estimate for one notebook (.py source); run_seconds from the recorded file, output
    words from the executed .ipynb beside the source unless given."""
    path = Path(path)
    if run_seconds is None:
        recorded = json.loads(RUN_SECONDS.read_text()) if RUN_SECONDS.exists() else {}
        if not isinstance(recorded.get(path.stem), int | float):
            raise KeyError(f"no recorded run time for {path.stem} in {RUN_SECONDS}; execute it "
                           "with scripts/execute_notebook.py and add its 'executed in' seconds")
        run_seconds = float(recorded[path.stem])
    if words is None:
        words = output_words(path.with_suffix(".ipynb"))
    reading = optional = 0.0
    code_cells, quizzes, exercise_ids = 0, 0, set()
    cells = _cells(path)
    for (kind, source, hidden), is_optional in zip(
            cells, optional_flags((kind, source) for kind, source, _ in cells), strict=True):
        read, shown, quiz, ids = _cell_minutes(kind, source, hidden)
        if is_optional:
            optional += (read + shown * CODE_CELL_MINUTES + quiz * QUIZ_MINUTES
                         + exercise_minutes(ids))
            continue
        reading += read
        code_cells += shown
        quizzes += quiz
        exercise_ids |= ids
    optional += words.optional / OUTPUT_WPM
    return Minutes(path.stem, reading, code_cells, quizzes, len(exercise_ids), run_seconds / 60,
                   optional, words.read_beside_quizzes, exercise_minutes(sorted(exercise_ids)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Workshop minutes per chapter (see the docstring).")
    parser.add_argument("--words", action="store_true",
                        help="each chapter's output words and minutes by part, not the README column")
    args = parser.parse_args(argv)
    if args.words:
        print(f"| # | output words (core; limit {MAX_OUTPUT_WORDS}) | of them held by a quiz | "
              f"quiz words | optional output words | reading | output | code cells | quizzes "
              f"| exercises | run | core minutes (limit {MAX_MINUTES}) |\n" + "| --- " * 12 + "|")
    else:
        print("| # | minutes (core, +optional) |\n| --- | --- |")
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")):
        try:
            words = output_words(path.with_suffix(".ipynb"))
            m = estimate(path, words=words)
        except (KeyError, FileNotFoundError) as missing:
            print(f"| {path.stem[:2]} | not estimated: {missing} |")
            continue
        if args.words:
            print(f"| {path.stem[:2]} | {words.core} | {words.held} | {words.quiz} | "
                  f"{words.optional} | {m.reading:.1f} | {m.output:.1f} | "
                  f"{m.code_cells * CODE_CELL_MINUTES:.1f} | {m.quizzes * QUIZ_MINUTES:.1f} | "
                  f"{m.exercise_time:.1f} | {m.run:.1f} | {m.core:.1f} |")
        else:
            print(f"| {path.stem[:2]} | {m.row()} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
