"""What a learner types, read strictly: one parser for integer lists, integers and numbers.

The stride explorer and the quiz both read text from the browser. Anything this module
cannot read exactly raises `InputError` with a message for the widget's error field (never
another exception, never a silently different value): empty items ("1,,2"), empty fields,
bytes, non-ASCII digits, and numbers too long to be real (Python refuses to convert more
than 4,300 digits; int64 holds 19).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

# A whole number as typed: an optional sign and ASCII digits (no '1_000', no '١٢').
_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)
# More digits than this cannot be a size, stride or offset (int64 has 19).
MAX_DIGITS = 20
# A learner's text longer than this is a paste accident, not an answer.
MAX_TEXT = 1000
# Integer lists are shapes and strides: at most this many entries.
MAX_ITEMS = 64


class InputError(ValueError):
    """Text a widget cannot read as asked; the message says what to type instead."""


def _text(value: object, what: str) -> str:
    if isinstance(value, bytes | bytearray):
        raise InputError(f"{what}: got bytes {bytes(value)[:20]!r}; type text such as 3, 4.")
    if not isinstance(value, str):
        raise InputError(f"{what}: expected text such as '3, 4', got {type(value).__name__}.")
    if len(value) > MAX_TEXT:
        raise InputError(f"{what}: {len(value)} characters is too long; type a few numbers.")
    return value


def parse_int(token: str, what: str) -> int:
    """One whole number, checked for length before Python converts it."""
    token = _text(token, what).strip()
    if not token:
        raise InputError(f"{what} is empty; type a whole number such as 0 or 2.")
    if not _INTEGER.fullmatch(token):
        shown = token if len(token) <= 20 else token[:17] + "..."
        raise InputError(f"{what}: {shown!r} is not a whole number; type digits such as 3.")
    if len(token.lstrip("+-")) > MAX_DIGITS:
        raise InputError(f"{what}: a number with {len(token.lstrip('+-'))} digits is too large "
                         "(sizes, strides and offsets fit in 19 digits).")
    return int(token)


def parse_int_list(text: object, what: str, *, allow_empty: bool = False) -> tuple[int, ...]:
    """Read '3, 4', '(3, 4)', '[3 4]' or '3 4' as whole numbers; InputError says why not.

    Commas or spaces separate items; one pair of brackets may surround them. An empty
    item between two commas ('1,,2') is an error, not skipped. An empty field is an error
    unless allow_empty, and '()' is the empty list (a 0-d tensor's shape).
    """
    if isinstance(text, Sequence) and not isinstance(text, str | bytes | bytearray):
        if len(text) > MAX_ITEMS:
            raise InputError(f"{what}: {len(text)} entries is too many (at most {MAX_ITEMS}).")
        values = []
        for k, item in enumerate(text):
            if isinstance(item, bool) or not isinstance(item, int):
                raise InputError(f"{what}[{k}] = {item!r} is not a whole number.")
            values.append(item)
        return tuple(values)
    body = _text(text, what).strip()
    if not body and not allow_empty:
        raise InputError(f"{what} is empty; type whole numbers such as 3, 4 (or () for none).")
    if body[:1] in "([" and body[-1:] in ")]":
        if (body[0], body[-1]) not in (("(", ")"), ("[", "]")):
            raise InputError(f"{what}: brackets {body[0]} and {body[-1]} do not match.")
        body = body[1:-1].strip()
        if not body:
            return ()
    if not body:
        return ()
    items = [item.strip() for item in body.split(",")]
    if items and items[-1] == "" and len(items) > 1:
        items.pop()  # a trailing comma, as in Python's (3,)
    tokens: list[str] = []
    for position, item in enumerate(items):
        if item == "":
            raise InputError(f"{what}: item {position + 1} is empty (two commas in a row?); "
                             "type whole numbers separated by commas, e.g. 3, 4.")
        tokens.extend(item.split())
    if len(tokens) > MAX_ITEMS:
        raise InputError(f"{what}: {len(tokens)} numbers is too many (at most {MAX_ITEMS}).")
    return tuple(parse_int(token, what) for token in tokens)


def parse_number(text: object, what: str = "answer") -> float:
    """Read one finite number ('12', '0.5', '1e3'); '2,5', 'inf', 'nan' and huge ones refused."""
    cleaned = _text(text, what).strip()
    if not cleaned:
        raise InputError(f"{what} is empty; type a number such as 12, 0.5 or 1e3.")
    if not _NUMBER.fullmatch(cleaned):
        shown = cleaned if len(cleaned) <= 20 else cleaned[:17] + "..."
        raise InputError(f"{shown!r} is not a number; type digits such as 12, 0.5 or 1e3.")
    value = float(cleaned)
    if not math.isfinite(value):
        raise InputError(f"{what}: {cleaned[:20]!r} is too large to be a number here.")
    return value
