"""How much of each chapter's code is plumbing a learner should not have to read (issue 37).

A chapter's code cells should show measurements and verdicts. Every non-blank line of a code
cell (comments included: a learner reads them too) is counted, and a line is *plumbing* when it
falls in one of these categories, each a thing the session (the notebook's one door) or a
self-rendering result object could do instead:

- ``colab``: the cell that installs labkit in Google Colab (any code cell naming
  ``google.colab`` or ``COLAB_RELEASE_TAG``): set-up for one host, read by everyone.
- ``imports``: every import statement after the notebook's first one (issue 37's door: a
  notebook imports one name and reaches the rest through the chapter object).
- ``setup``: lines that copy the session's fields back into globals (an assignment whose value
  is only ``chapter.<field>``s) and process configuration (``os.environ``, ``warnings.``,
  ``logging.`` statements): wiring, not the experiment.
- ``gpu_branch``: an ``if`` statement (with its ``else``) whose test asks where the notebook
  runs (``on_gpu``, ``has_triton``, ``has_cuda``, ``cuda.is_available``), and any other line
  holding a conditional expression that asks it: "measure here or show the recorded reference"
  written out by hand, which one session verb replaces.
- ``helpers``: functions and classes defined at a cell's top level: tools belong in labkit,
  where they are tested. Two kinds of function are the chapter, not tools, and are not
  counted: an exercise's stub (a body that raises ``NotImplementedError``: the learner's own
  work) and the code under study (annotated to return a ``Tensor``: the function the chapter
  compiles, traces or times, which the learner must read to follow the measurement).
- ``record``: statements calling ``.record(`` (saving a result for the recorded reference run):
  bookkeeping the session can do when it judges.
- ``print_format``: hand-formatted output: a ``print`` whose f-string sets a column width or
  alignment (``{x:<20}``, ``{x:8.1f}``), or joins (``.join(``), ``.format(``s or ``%``-formats;
  a ``print`` that spells out several fields of one object (``print(v.claim_id, v.label, "--",
  v.reason)``); a bare ``print()``; and a ``for`` loop whose body only prints (table rows).
  A result that renders itself (``print(sweep)``, a bare ``comparison``) is not counted.

Cells whose source is hidden (a quiz's answer code, folded in JupyterLab) are counted like the
others: issue 37 counts code cells, and a folded cell is one click from the learner. Their
lines, and the plumbing among them, are also given apart (``hidden_lines``,
``hidden_plumbing``), so a reader can see how much of a chapter's plumbing is folded already.

A line in two categories counts once, in the first of: colab, helpers, gpu_branch, record,
print_format, setup, imports. Everything else (a measurement, a judge call, a plain
``print(f"... {value:.2f} ...")`` of a number) is the chapter itself.

The JSON also carries issue 37's other two counters for each chapter, from
scripts/chapter_minutes.py: the words of output on the core path (limit 1,500) and the core
minutes (limit 40), so one file holds a chapter's before-and-after numbers; and the SHA-256 of
the sources it read, so a stale file can be told from a fresh one.

    python scripts/notebook_plumbing.py                 # the table, and results/notebook_plumbing.json
    python scripts/notebook_plumbing.py --out FILE.json # elsewhere
"""

from __future__ import annotations

import argparse
import ast
import datetime
import hashlib
import importlib.util
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "notebook_plumbing.json"
# Precedence: a line in two categories is counted in the first.
CATEGORIES = ("colab", "helpers", "gpu_branch", "record", "print_format", "setup", "imports")
MAX_SHARE = 0.10  # issue 37: plumbing at most 10% of code lines in every chapter
WHERE_IT_RUNS = re.compile(r"\bon_gpu\b|\bhas_triton\b|\bhas_cuda\b|\bcuda\.is_available\b")
_MAGIC = re.compile(r"^(\s*)[%!]")


@dataclass
class Plumbing:
    """One chapter's code lines and the plumbing among them, by category."""

    chapter: str
    code_cells: int = 0
    lines: int = 0
    hidden_lines: int = 0
    hidden_plumbing: int = 0
    by_category: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))

    @property
    def plumbing(self) -> int:
        """Plumbing lines, each counted once."""
        return sum(self.by_category.values())

    @property
    def share(self) -> float:
        """Plumbing lines as a share of code lines (0 for a chapter without code)."""
        return self.plumbing / self.lines if self.lines else 0.0

    def as_dict(self) -> dict:
        """The JSON row: lines, plumbing, share (3 decimals) and the categories."""
        return {"code_cells": self.code_cells, "lines": self.lines, "plumbing": self.plumbing,
                "share": round(self.share, 3), "by_category": dict(self.by_category),
                "hidden_lines": self.hidden_lines, "hidden_plumbing": self.hidden_plumbing}


def _parse(source: str, where: str) -> ast.Module:
    """The cell's syntax tree; IPython magics (``%x``, ``!x``) become ``pass`` on their line."""
    python = "\n".join(_MAGIC.sub(r"\1pass #", line) if _MAGIC.match(line) else line
                       for line in source.splitlines())
    try:
        return ast.parse(python)
    except SyntaxError as error:
        raise ValueError(f"{where}: a code cell is not Python ({error.msg}, line {error.lineno}); "
                         "fix the cell or mark it as markdown") from error


def _span(node: ast.AST) -> range:
    """The 1-based line numbers a statement covers (decorators included)."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return range(first, (node.end_lineno or node.lineno) + 1)


def _is_print(node: ast.AST) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "print")


def _hand_formatted(call: ast.Call) -> bool:
    """A print call that lays out its text by hand (see the module docstring)."""
    if not call.args and not call.keywords:
        return True  # print(): a blank line between hand-made blocks
    for node in ast.walk(call):
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            spec = "".join(part.value for part in node.format_spec.values
                           if isinstance(part, ast.Constant))
            if re.match(r"[<>^=]|.?[<>^=]|[0-9]", spec):  # a width or an alignment: a column
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("join", "format", "ljust", "rjust", "center"):
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) \
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            return True
    owners = [arg.value.id for arg in call.args
              if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name)]
    return len(owners) >= 2 and len(set(owners)) == 1  # fields of one object, spelled out


def _only_prints(body: list[ast.stmt]) -> bool:
    return all(_is_print(s) or (isinstance(s, ast.For) and _only_prints(s.body)) for s in body)


def _is_the_chapter(node: ast.stmt) -> bool:
    """A function the learner reads as part of the chapter: an exercise's stub (its body raises
    NotImplementedError) or the code under study (annotated to return a Tensor)."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    if node.returns is not None and ast.unparse(node.returns).split(".")[-1] == "Tensor":
        return True
    return any(isinstance(s, ast.Raise) and "NotImplementedError" in ast.unparse(s) for s in node.body)


def _is_session_copy(node: ast.stmt) -> bool:
    """``device, sizes = chapter.device, chapter.sizes``: session fields copied into globals."""
    if not isinstance(node, ast.Assign):
        return False
    values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
    return all(isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name)
               and v.value.id == "chapter" for v in values)


def _is_configuration(node: ast.stmt) -> bool:
    text = ast.unparse(node)
    return bool(re.match(r"(os\.environ|warnings\.|logging\.)", text))


def _is_record(node: ast.stmt) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "record"
               for n in ast.walk(node))


def classify(source: str, *, first_import_seen: bool = False, where: str = "cell"
             ) -> tuple[dict[int, str], bool]:
    """Plumbing lines of one code cell: {1-based line: category}, and whether an import was seen.

    ``first_import_seen`` carries across a notebook's cells: its first import statement is the
    one a notebook may have; every later one is plumbing.
    """
    found: dict[int, str] = {}

    def mark(lines: range | list[int], category: str) -> None:
        for line in lines:
            if line not in found or CATEGORIES.index(category) < CATEGORIES.index(found[line]):
                found[line] = category

    if "google.colab" in source or "COLAB_RELEASE_TAG" in source:
        mark(range(1, len(source.splitlines()) + 1), "colab")
        return found, first_import_seen
    tree = _parse(source, where)
    for node in tree.body:  # the cell's top level
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) \
                and not _is_the_chapter(node):
            mark(_span(node), "helpers")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if first_import_seen:
                mark(_span(node), "imports")
            first_import_seen = True
        elif _is_session_copy(node) or _is_configuration(node):
            mark(_span(node), "setup")
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and WHERE_IT_RUNS.search(ast.unparse(node.test)):
            mark(_span(node), "gpu_branch")
        elif isinstance(node, ast.IfExp) and WHERE_IT_RUNS.search(ast.unparse(node.test)):
            mark(_span(node), "gpu_branch")
        elif isinstance(node, ast.stmt) and not isinstance(node, ast.If | ast.For | ast.While
                                                             | ast.With | ast.Try) \
                and _is_record(node):
            mark(_span(node), "record")
        elif _is_print(node) and _hand_formatted(node.value):
            mark(_span(node), "print_format")
        elif isinstance(node, ast.For) and _only_prints(node.body):
            mark(_span(node), "print_format")
    return found, first_import_seen


def measure(path: Path) -> Plumbing:
    """Count one notebook's (jupytext .py source) code lines and plumbing lines."""
    import jupytext

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no notebook source at {path}")
    result = Plumbing(path.stem)
    first_import_seen = False
    for index, cell in enumerate(jupytext.read(path).cells):
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        result.code_cells += 1
        hidden = bool(cell.metadata.get("jupyter", {}).get("source_hidden"))
        lines = cell.source.splitlines()
        found, first_import_seen = classify(cell.source, first_import_seen=first_import_seen,
                                            where=f"{path.name}, cell {index}")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            result.lines += 1
            result.hidden_lines += hidden
            if number in found:
                result.by_category[found[number]] += 1
                result.hidden_plumbing += hidden
    return result


def table(rows: list[Plumbing]) -> str:
    """A Markdown table: per chapter, lines, plumbing, share and each category."""
    head = ["chapter", "code lines", "plumbing", "share", *CATEGORIES]
    out = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        out.append(f"| {r.chapter[:2]} | {r.lines} | {r.plumbing} | {r.share:.0%} | "
                   + " | ".join(str(r.by_category[c]) for c in CATEGORIES) + " |")
    lines, plumbing = sum(r.lines for r in rows), sum(r.plumbing for r in rows)
    totals = [str(sum(r.by_category[c] for r in rows)) for c in CATEGORIES]
    out.append(f"| all | {lines} | {plumbing} | {plumbing / max(lines, 1):.0%} | "
               + " | ".join(totals) + " |")
    return "\n".join(out)


def _minutes_module():
    """scripts/chapter_minutes.py as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("chapter_minutes", Path(__file__).with_name("chapter_minutes.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("chapter_minutes", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def other_counters(path: Path) -> dict:
    """The chapter's output words and minutes (scripts/chapter_minutes.py), and the SHA-256 of
    the sources read; a counter that cannot be had says why instead."""
    minutes = _minutes_module()
    row: dict = {"sha256": {p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:16]
                            for p in (path, path.with_suffix(".ipynb")) if p.is_file()}}
    try:
        words = minutes.output_words(path.with_suffix(".ipynb"))
        row["output_words"] = {"core": words.core, "held_by_quizzes": words.held,
                               "quiz": words.quiz, "optional": words.optional,
                               "limit": minutes.MAX_OUTPUT_WORDS}
        estimate = minutes.estimate(path, words=words)
        row["minutes"] = {"core": round(estimate.core, 1), "output": round(estimate.output, 1),
                          "optional": round(estimate.optional, 1), "limit": minutes.MAX_MINUTES}
    except (FileNotFoundError, KeyError, ValueError) as missing:
        row.setdefault("output_words", None)
        row["minutes"] = None
        row["not_counted"] = str(missing)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the JSON goes")
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="jupytext .py sources (default: every notebooks/NN_*.py)")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    rows = [measure(p) for p in paths]
    print(table(rows))
    over = [r.chapter for r in rows if r.share > MAX_SHARE]
    print(f"\nover {MAX_SHARE:.0%} plumbing: {', '.join(over) or 'none'}")
    payload = {
        "_about": "Issue 37's three counters per chapter: non-blank code-cell lines, plumbing "
                  "lines (its categories, each line counted once) and their share (limit max_share); "
                  "output words on the core path and core minutes (scripts/chapter_minutes.py); the "
                  "sources' SHA-256. Written by scripts/notebook_plumbing.py, whose docstring states "
                  "the rules.",
        "measured_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "max_share": MAX_SHARE,
        "chapters": {r.chapter: r.as_dict() | other_counters(p) for r, p in zip(rows, paths, strict=True)},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
