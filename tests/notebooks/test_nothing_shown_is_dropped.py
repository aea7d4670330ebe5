"""No measurement a chapter computes to show is silently dropped by Jupyter (review 2026-12-03e).

A cell displays only the value of its LAST statement. `chapter.show(conv_cmp)` followed by a
`print(...)` builds the table and throws it away: the learner sees the line under it and not
the measurement the quiz is graded on (03's conv quiz and 01's C8b evidence did exactly this,
in the CPU and the H200 copies alike). Such a call must be the cell's last statement or go
through `display(...)`.

The check is static, over the notebooks' sources: every top-level expression statement that
is a call and is not the cell's last statement is resolved to the function it calls (a
`chapter.<method>` on labkit.session.Chapter, `<module>.<function>` for a module the
notebook imported by `from X import Y`, or a method of what such a call returns, as in
`chapter.show(...).note(...)`). If that function's return annotation is a type Jupyter
would display (a _repr_html_/_repr_mimebundle_/_ipython_display_ type, or str), the value
is dropped and the test fails, naming the cell. Calls kept for a side effect (record,
here_or_recorded, save) return no such type and pass.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import typing

import pytest

from labkit import session
from tests.paths import NOTEBOOKS

SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))


def _cells(source: str) -> list[str]:
    """The code cells of a percent-format notebook."""
    cells, current, in_code = [], [], False
    for line in source.splitlines():
        if line.startswith("# %%"):
            if in_code and current:
                cells.append("\n".join(current))
            current, in_code = [], "[markdown]" not in line
            continue
        if in_code:
            current.append(line)
    if in_code and current:
        cells.append("\n".join(current))
    return cells


def _imported_modules(tree: ast.Module) -> dict[str, object]:
    """name -> module for `from labkit... import name` where name is a module."""
    out: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("labkit"):
            for alias in node.names:
                try:
                    out[alias.asname or alias.name] = importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    continue
    return out


def _returned(function: object) -> object:
    """The return annotation of a function, evaluated where it can be (else as written)."""
    try:
        return typing.get_type_hints(function).get("return", inspect.Signature.empty)
    except Exception:  # an annotation this process cannot evaluate
        return inspect.signature(function).return_annotation


def _function(expr: ast.expr, modules: dict[str, object]) -> object | None:
    """What `chapter.x`, `module.x` or `<a call>.x` names, or None when it cannot be known."""
    if not isinstance(expr, ast.Attribute):
        return None
    if isinstance(expr.value, ast.Name):
        owner = session.Chapter if expr.value.id == "chapter" else modules.get(expr.value.id)
    elif isinstance(expr.value, ast.Call):
        owner = _type_of(expr.value, modules)  # a chain: chapter.show(...).note(...)
    else:
        owner = None
    return getattr(owner, expr.attr, None) if owner is not None else None


def _type_of(call: ast.Call, modules: dict[str, object]) -> type | None:
    """The type a call returns, by its function's annotation, or None when it cannot be known."""
    function = _function(call.func, modules)
    if function is None or not callable(function):
        return None
    returned = _returned(function)
    return returned if isinstance(returned, type) else None


def _displays(kind: type | None) -> bool:
    """Whether a value of this type shows something when it is a cell's last value."""
    if kind is None:
        return False
    return kind is str or any(hasattr(kind, name) for name in (
        "_repr_html_", "_repr_mimebundle_", "_ipython_display_", "_repr_png_", "_repr_markdown_"))


def dropped_values(path) -> list[str]:
    """'code cell N: <statement>' for each value a cell computes to show and never shows."""
    source = path.read_text()
    modules = _imported_modules(ast.parse(source))
    found = []
    for number, cell in enumerate(_cells(source), start=1):
        try:
            body = ast.parse(cell).body
        except SyntaxError:
            continue  # a cell with IPython syntax: nbval runs it
        for statement in body[:-1]:
            if (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
                    and _displays(_type_of(statement.value, modules))):
                found.append(f"code cell {number}: {ast.unparse(statement)[:90]}")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_no_cell_builds_a_display_and_drops_it(path):
    dropped = dropped_values(path)
    assert not dropped, (f"{path.name}: these values are computed and never shown (only a cell's "
                         f"last statement displays; wrap them in display(...)): {dropped}")


def test_the_check_finds_a_dropped_table(tmp_path):
    notebook = tmp_path / "00_example.py"
    notebook.write_text("# %%\nfrom labkit import session\nchapter = session.open('00_setup_check')\n"
                        "# %%\nchapter.show(rows)\nprint('under it')\n"
                        "# %%\nchapter.show(rows)\n"
                        "# %%\ndisplay(chapter.show(rows))\nprint('under it')\n"
                        "# %%\nchapter.show(rows).note('why')\nchapter.record('k', 1)\nprint(1)\n")
    assert dropped_values(notebook) == ["code cell 2: chapter.show(rows)",
                                        "code cell 5: chapter.show(rows).note('why')"]
