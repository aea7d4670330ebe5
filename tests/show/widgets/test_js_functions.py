"""No function in the widgets' JS is over 80 lines, and the counter that says so can fail.

A function that long mixes several drawings; cut it into parts named for what they draw
(issue 37). The counter (tests/show/widgets/js_functions.py) is checked here on made-up
sources first: a long function, braces in strings, templates and parameters, methods and
arrows, nesting, and sources it must refuse."""

from __future__ import annotations

import re

import pytest

from tests.paths import ROOT
from tests.show.widgets.js_functions import JsScanError, functions

WIDGET_JS = sorted((ROOT / "labkit" / "show" / "widgets").glob("*.js"))
MAX_LINES = 80


def long_function(name: str, lines: int) -> str:
    """A made-up function of exactly `lines` lines, braces included."""
    body = [f"  total += {k};" for k in range(lines - 3)]
    return "\n".join([f"function {name}() {{", "  let total = 0;", *body, "}"]) + "\n"


def lengths(source: str) -> dict[str, int]:
    return {f.name: f.lines for f in functions(source)}


def test_widget_js_files_are_found():
    names = {path.name for path in WIDGET_JS}
    assert {"dom.js", "grid.js", "quiz.js", "timeline.js"} <= names


@pytest.mark.parametrize("path", WIDGET_JS, ids=lambda p: p.name)
def test_no_function_is_over_80_lines(path):
    too_long = [f"{f.name} (lines {f.first_line}-{f.last_line}: {f.lines})"
                for f in functions(path.read_text()) if f.lines > MAX_LINES]
    assert not too_long, (f"{path.name}: functions over {MAX_LINES} lines: {too_long}; cut "
                          "them into parts named for what they draw")


@pytest.mark.parametrize("path", WIDGET_JS, ids=lambda p: p.name)
def test_every_declared_function_is_measured(path):
    """The counter misses no `function name(` of the real files (else it could pass them)."""
    source = path.read_text()
    declared = set(re.findall(r"^\s*(?:export\s+)?(?:async\s+)?function\s+(\w+)\s*\(", source,
                              re.M))
    assert declared, f"{path.name} declares no function"
    assert declared <= {f.name for f in functions(source)}


def test_the_check_bites_on_a_made_up_long_function():
    source = long_function("drawEverything", MAX_LINES + 1) + long_function("drawAxes", MAX_LINES)
    found = lengths(source)
    assert found == {"drawEverything": MAX_LINES + 1, "drawAxes": MAX_LINES}
    assert [f.name for f in functions(source) if f.lines > MAX_LINES] == ["drawEverything"]


def test_nested_functions_count_inside_the_one_that_holds_them():
    inner = long_function("inner", 50).replace("\n", "\n  ")
    source = f"function render({{ model, el }}) {{\n  {inner}\n  return inner;\n}}\n"
    found = lengths(source)
    assert found["inner"] == 50
    assert found["render"] == 54  # the closure's lines are the outer function's lines too


def test_braces_in_strings_templates_comments_and_parameters_are_not_counted():
    source = (
        "function a({ x, y } = {}) {\n"
        "  const s = '}}}';\n"
        '  const d = "{{";\n'
        "  const t = `${x}{ ${`${y}}`} }`;\n"
        "  // } a comment brace\n"
        "  /* { another\n  } */\n"
        "  return s + d + t;\n"
        "}\n"
        "function b() {\n  return 1;\n}\n"
    )
    assert lengths(source) == {"a": 9, "b": 3}


def test_methods_and_arrows_are_functions_and_blocks_are_not():
    source = (
        "const hooks = {\n"
        "  barCenter(index) {\n    if (index) {\n      return 1;\n    }\n    return 0;\n  },\n"
        "};\n"
        "const f = (event) => {\n  for (const k of [1]) {\n    g(k);\n  }\n};\n"
        "const short = (a) => a + 1;\n"
    )
    found = functions(source)
    assert [(f.name, f.lines) for f in found] == [("barCenter", 6), ("=>", 5)]


@pytest.mark.parametrize("source", [
    "function a() {\n  return 1;\n",  # never closed
    "function a() {\n  return 1;\n}}\n",  # closes nothing
    "function a() {\n  return [1);\n}\n",  # closes the wrong bracket
    "const s = 'not closed;\n",  # a string across a line
    "/* never closed\n",
])
def test_sources_it_cannot_measure_are_refused(source):
    with pytest.raises(JsScanError):
        functions(source)
