"""How long each function in a widget's JS file is: a small brace-matching scanner.

Why not a regex: a function's end is its matching brace, and braces also appear in strings,
template literals (``${...}`` nests code inside text), comments and destructured parameters
(``function render({ model, el })``). The scanner skips strings and comments, follows
template literals into their ``${...}`` parts, and treats a ``{`` as a function body when it
follows ``function name(...)``, a method ``name(...)`` (in an object literal) or ``=>``.
A function's length counts its first line to its closing brace, nested functions included
(a 300-line closure-heavy ``render`` is one long function, however it is cut inside).

Limits: regular-expression literals are read as code (one holding a quote or a brace would
confuse it; the widgets' regexes hold neither), and ``if (...) {``-style blocks are told
apart from methods by the keyword before the parenthesis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A word before "(...) {" that makes the brace a block, not a function body.
BLOCK_KEYWORDS = frozenset({"if", "for", "while", "switch", "catch", "with", "return", "typeof",
                            "await", "in", "of", "new", "delete", "void", "else", "do", "yield"})
WORD = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass(frozen=True)
class JsFunction:
    """One function found in a JS source: its name ("=>" for an arrow), first and last line."""

    name: str
    first_line: int
    last_line: int

    @property
    def lines(self) -> int:
        return self.last_line - self.first_line + 1


class JsScanError(ValueError):
    """The source's braces, brackets or quotes do not balance: the count would be wrong."""


def functions(source: str) -> list[JsFunction]:
    """Every function, method and arrow-with-a-body in `source`, in order of their end."""
    found: list[JsFunction] = []
    stack: list[tuple[str, str | None, int]] = []  # (opener, function name or None, line)
    line, i, n = 1, 0, len(source)
    last_word: str | None = None  # the identifier just before, if the last token was one
    pending: tuple[str, int] | None = None  # a function whose body brace may come next
    in_template = False
    while i < n:
        ch = source[i]
        if in_template:
            if ch == "\\":
                line += source[i:i + 2].count("\n")
                i += 2
                continue
            if ch == "`":
                in_template = False
            elif source.startswith("${", i):
                stack.append(("${", None, line))
                in_template = False
                i += 2
                continue
            line += ch == "\n"
            i += 1
            continue
        if ch == "\n" or ch in " \t\r":
            line += ch == "\n"
            i += 1
            continue
        if source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
            continue
        if source.startswith("/*", i):
            end = source.find("*/", i + 2)
            if end < 0:
                raise JsScanError(f"line {line}: a /* comment is never closed")
            line += source.count("\n", i, end)
            i = end + 2
            continue
        if ch in "'\"":
            j = i + 1
            while j < n and source[j] != ch:
                if source[j] == "\n":
                    raise JsScanError(f"line {line}: a {ch} string runs past the end of its line")
                j += 2 if source[j] == "\\" else 1
            i, last_word, pending = j + 1, None, None
            continue
        if ch == "`":
            in_template, last_word, pending = True, None, None
            i += 1
            continue
        word = WORD.match(source, i)
        if word:
            last_word, pending = word.group(), None
            i = word.end()
            continue
        if source.startswith("=>", i):
            pending, last_word = ("=>", line), None
            i += 2
            continue
        if ch == "(":
            name = last_word if last_word not in BLOCK_KEYWORDS else None
            stack.append(("(", name, line))
        elif ch == "{":
            name, first = pending if pending else (None, line)
            stack.append(("{", name, first))
        elif ch in ")}]":
            if not stack:
                raise JsScanError(f"line {line}: {ch!r} closes nothing")
            opener, name, first = stack.pop()
            if {")": "(", "]": "[", "}": "{"}[ch] != opener and not (ch == "}" and opener == "${"):
                raise JsScanError(f"line {line}: {ch!r} closes {opener!r} of line {first}")
            if opener == "${":
                in_template = True
            elif ch == "}" and name is not None:
                found.append(JsFunction(name, first, line))
            i += 1
            last_word = None
            pending = (name, first) if ch == ")" and name is not None else None
            continue
        elif ch == "[":
            stack.append(("[", None, line))
        last_word, pending = None, None
        i += 1
    if stack or in_template:
        raise JsScanError(f"unclosed {stack[-1][0] if stack else '`'!r} at the end of the source")
    return found
