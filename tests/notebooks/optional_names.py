"""Which names a chapter's core cells read that only its Optional sections define.

Review 2026-12-06z 00-02 item 7: the "What to remember" cells of 01 and 02 read `tour`,
`c8c` (01) and `c2_cases`, `chase_record` (02), defined only in Optional sections, so a room
that skips those sections, as the workshop tells it it may, got a NameError in the takeaways.

The check is static: each notebook source is split into cells (jupytext, as
`tests/notebooks/test_notebook_pairs.cells_of` does), each cell is marked core or optional by
the same rule that prices the core's minutes (`scripts/chapter_minutes.optional_flags`), and
every name a core cell reads is looked up among the names bound before it. A name bound only
by optional cells so far is a finding. Reading an optional result through
`globals().get("name")` is the allowed way (the string is not a name read), so a takeaway may
mention an optional result where it exists. Names bound in the core after the optional
binding count as core from there on; names inside a function or lambda body are not checked
beyond the function's own parameters (they run only when called).
"""

from __future__ import annotations

import ast
import builtins
import pathlib
from dataclasses import dataclass

import jupytext

from tests.paths import ROOT, load_script

_minutes = load_script(ROOT / "scripts" / "chapter_minutes.py", "chapter_minutes_for_optional_names")


@dataclass(frozen=True)
class Cell:
    index: int
    kind: str
    source: str
    optional: bool


def cells_of(source: str | pathlib.Path) -> list[Cell]:
    """The notebook's cells (from a path, or a jupytext percent source's text), each flagged."""
    notebook = jupytext.read(source) if isinstance(source, pathlib.Path) else jupytext.reads(source, fmt="py:percent")
    pairs = [(cell.cell_type, cell.source.strip()) for cell in notebook.cells]
    flags = _minutes.optional_flags(pairs)
    return [Cell(i, kind, text, flag) for i, ((kind, text), flag) in enumerate(zip(pairs, flags, strict=True))]


def _code(text: str) -> str:
    """The cell's Python: IPython magics and shell lines (`%`, `!`) dropped."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines())


def bound_and_read(text: str) -> tuple[set[str], set[str]]:
    """(names a cell binds at top level, names it reads before binding them itself).

    Comprehension and lambda/function bodies: their parameters and targets are local; a read
    of an outer name inside them still counts (a comprehension runs at once, and a lambda a
    takeaway builds usually does too).
    """
    tree = ast.parse(_code(text))
    bound: set[str] = set()
    local: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else read).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            local.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound | local, read - local


def optional_only_reads(cells: list[Cell]) -> list[tuple[int, str]]:
    """(cell index, name) for each name a core cell reads that only optional cells bound so far."""
    core_bound: set[str] = set(dir(builtins)) | {"get_ipython", "display"}
    optional_bound: set[str] = set()
    findings = []
    for cell in cells:
        if cell.kind != "code":
            continue
        bound, read = bound_and_read(cell.source)
        if cell.optional:
            optional_bound |= bound
            continue
        findings += [(cell.index, name) for name in sorted(read & (optional_bound - core_bound))
                     if name not in bound or _read_before_bound(cell.source, name)]
        core_bound |= bound
    return findings


def _read_before_bound(text: str, name: str) -> bool:
    """Whether the cell reads `name` on a line before the first line that binds it."""
    tree = ast.parse(_code(text))
    reads = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
             and isinstance(n.ctx, ast.Load)]
    binds = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
             and isinstance(n.ctx, ast.Store)]
    return bool(reads) and (not binds or min(reads) < min(binds))
