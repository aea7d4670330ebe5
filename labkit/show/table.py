"""One table object for what a chapter measured: labelled values with units, shown and kept.

Before it, chapters formatted their own tables with `print(f"{name:<26}...")` (over 300 lines
across the notebooks), each in its own way, none recordable and none able to say that its
numbers came from another machine. A `Table` is rows of values under named columns, each
column with its unit; it renders as HTML in a notebook and as aligned text elsewhere, turns
into plain JSON (`to_dict`) for `labkit.core.results`, and comes back from it (`from_dict`)
labelled with where and when it was recorded, so a recorded table never reads as measured
here. The anchors are torch.utils.benchmark's `Compare` (rows of labelled measurements,
rendered once) and triton's `perf_report` (a sweep as a table of one value per point).

    from labkit.show import table
    t = table.Table("copies", ["operation", "copied", "new"], units={"copied": "B", "new": "B"})
    t.add("x.t()", 0, 0)
    table.comparison(cmp)                      # a bench.compare result as a Table
    table.sweep("n", [1024, 2048], {"TFLOP/s": [1.0, 2.0]})

Less to read: `folded` holds (summary, text) pairs shown in a <details> element, closed until
the reader opens it; the plain-text form leaves them out (it names how many there are), so
the evidence is one click away and never in the way of the numbers that decide.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from labkit.measure.timing import Comparison, format_seconds

KIND = "labkit.table"  # what to_dict writes under "kind", so a recorded payload is known again
STYLE = "border-collapse:collapse;max-width:100%"
CELL = "text-align:left;padding:2px 8px;vertical-align:top"
# A text cell breaks inside a word only where it holds a token too long to keep whole (a
# kernel's name, a path): 'anywhere' also lets a narrow column split short words ('corre/ct',
# 'C1/5a'; review 2026-12-05q browser 05-07 item 4), so other cells wrap at spaces only and a
# table too wide for its page scrolls (its wrapper's overflow-x) instead.
LONG_TOKEN = 24


def wrap_style(text: str) -> str:
    """The cell's overflow-wrap: 'anywhere' where a token of text is over LONG_TOKEN characters,
    else 'break-word' (a word is split only if it alone is wider than the page)."""
    long = any(len(token) > LONG_TOKEN for token in text.split())
    return ";overflow-wrap:" + ("anywhere" if long else "break-word")
NUMBER = "text-align:right;padding:2px 8px;vertical-align:top;font-variant-numeric:tabular-nums"


def folds_text(folds: Sequence[tuple[str, str]]) -> str:
    """Folded evidence in plain text: only what each fold is called ('(2 folded: a, b)')."""
    return f"({len(folds)} folded: {', '.join(s for s, _ in folds)})"


def folds_html(folds: Sequence[tuple[str, str]]) -> str:
    """Folded evidence in HTML: a closed <details> per (summary, text), read only when opened."""
    return "".join(f"<details><summary>{html.escape(s)}</summary>"
                   f"<pre style='white-space:pre-wrap'>{html.escape(t)}</pre></details>"
                   for s, t in folds)


class TableError(ValueError):
    """A table was given rows or columns it cannot show (a row of the wrong length, a bad unit)."""


def format_value(value: object, unit: str = "") -> str:
    """One value as a reader sees it, by its unit: seconds scaled (ms, us), ratios as '1.23x',
    bytes in B/KiB/MiB/GiB, other numbers to three significant figures (whole from 1,000 up);
    None as '-'."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if unit == "s":
        return format_seconds(float(value))
    if unit == "x":
        return f"{value:,.0f}x" if abs(value) >= 100 else f"{value:.2f}x"
    if unit == "%":
        return f"{value:.0f}%"
    if unit == "B":
        return _bytes(int(value))
    if isinstance(value, int):
        return f"{value:,}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3g}"


def _bytes(count: int) -> str:
    if abs(count) < 1024:
        return f"{count} B"
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if abs(count) >= 1 << shift:
            return f"{count / (1 << shift):.3g} {unit}"
    return f"{count} B"  # pragma: no cover -- the loop always returns


# Units whose value format_value writes with its own suffix: the header does not repeat them.
_SELF_LABELLED = ("s", "x", "%", "B")


@dataclass
class Table:
    """Rows of values under named columns, each column with an optional unit.

    title: one line above the table. columns: the column names; units: column -> unit
    ('s', 'x', '%', 'B', or any text such as 'GB/s', shown in the header). notes: lines shown
    under the table. folded: (summary, text) pairs in closed <details> elements (HTML) and
    only counted in text. recorded: empty when measured in this run, else where and when
    it was recorded ('recorded on nvidia-h200, 2026-11-30'), shown on the table. marks:
    text prefix -> colour, so cells that open with an outcome ('refuted') stand out in HTML.
    """

    title: str
    columns: Sequence[str]
    rows: list[list[object]] = field(default_factory=list)
    units: Mapping[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    folded: list[tuple[str, str]] = field(default_factory=list)
    recorded: str = ""
    marks: Mapping[str, str] = field(default_factory=dict)  # a cell's text prefix -> its colour

    def __post_init__(self) -> None:
        if isinstance(self.columns, str) or not self.columns:
            raise TableError(f"a table needs a list of column names, got {self.columns!r}")
        self.columns = [str(c) for c in self.columns]
        unknown = [u for u in self.units if u not in self.columns]
        if unknown:
            raise TableError(f"units given for columns {unknown} that the table does not have "
                             f"(its columns: {self.columns})")
        self.units = dict(self.units)
        rows, self.rows = self.rows, []
        for row in rows:
            self.add(*row)

    def add(self, *values: object) -> Table:
        """Append one row (one value per column); returns the table, so calls chain."""
        if len(values) != len(self.columns):
            raise TableError(f"a row of {self.title or 'this table'} has {len(values)} values for "
                             f"{len(self.columns)} columns ({', '.join(self.columns)}): {values!r}")
        self.rows.append(list(values))
        return self

    def note(self, text: str) -> Table:
        """Add a line under the table."""
        self.notes.append(str(text))
        return self

    def fold(self, summary: str, text: str) -> Table:
        """Add evidence a reader opens on request (a closed <details> in HTML)."""
        self.folded.append((str(summary), str(text)))
        return self

    def column(self, name: str) -> list[object]:
        """The values of one column, top to bottom."""
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; the columns are {list(self.columns)}")
        index = list(self.columns).index(name)
        return [row[index] for row in self.rows]

    def header(self, name: str) -> str:
        """A column's heading: its name, with its unit where the values do not carry it."""
        unit = self.units.get(name, "")
        return f"{name} ({unit})" if unit and unit not in _SELF_LABELLED else name

    def cells(self) -> list[list[str]]:
        """Every row's values formatted by their column's unit."""
        return [[format_value(v, self.units.get(c, "")) for c, v in zip(self.columns, row, strict=True)]
                for row in self.rows]

    def caption(self) -> str:
        """The title, with where the numbers were recorded when they were not measured here."""
        if self.recorded:
            return f"{self.title} ({self.recorded})" if self.title else self.recorded
        return self.title

    # ------------------------------------------------------------------ rendering

    def __str__(self) -> str:
        heads = [self.header(c) for c in self.columns]
        cells = self.cells()
        widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(heads)]
        lines = [self.caption()] if self.caption() else []
        lines.append("  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip())
        lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]
        lines += self.notes
        if self.folded:
            lines.append(folds_text(self.folded))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        numeric = [all(isinstance(v, (int, float)) and not isinstance(v, bool) or v is None
                       for v in self.column(c)) and any(v is not None for v in self.column(c))
                   for c in self.columns]
        head = "".join(f"<th style='{NUMBER if n else CELL + wrap_style(self.header(c))}'>"
                       f"{html.escape(self.header(c))}</th>"
                       for c, n in zip(self.columns, numeric, strict=True))
        body = "".join("<tr>" + "".join(f"<td style='{NUMBER if n else CELL + wrap_style(v)}{self._mark(v)}'>"
                                        f"{html.escape(v)}</td>"
                                        for v, n in zip(row, numeric, strict=True)) + "</tr>"
                       for row in self.cells())
        caption = self.caption()
        badge = (f"<caption style='text-align:left'><b>{html.escape(self.title)}</b>"
                 + (f" <span style='color:#6e7781'>({html.escape(self.recorded)})</span>"
                    if self.recorded else "") + "</caption>") if caption else ""
        notes = "".join(f"<div>{html.escape(n)}</div>" for n in self.notes)
        folded = folds_html(self.folded)
        return (f"<div class='lt-table' style='max-width:100%;overflow-x:auto'>"
                f"<table style='{STYLE}'>{badge}<tr>{head}</tr>{body}</table>{notes}{folded}</div>")

    def _mark(self, text: str) -> str:
        colour = next((c for prefix, c in self.marks.items() if text.startswith(prefix)), None)
        return f";color:{colour};font-weight:bold" if colour else ""

    # ------------------------------------------------------------------ kept and re-shown

    def to_dict(self) -> dict:
        """Plain JSON values (for `labkit.core.results.record`); `from_dict` reads it back."""
        return {"kind": KIND, "title": self.title, "columns": list(self.columns),
                "units": dict(self.units), "rows": [[_plain(v) for v in row] for row in self.rows],
                "notes": list(self.notes), "folded": [list(pair) for pair in self.folded]}

    def as_dict(self) -> dict:
        """What `labkit.core.results.to_jsonable` calls: the same as to_dict."""
        return self.to_dict()

    @classmethod
    def from_dict(cls, data: Mapping, recorded: str = "") -> Table:
        """A table read back from results; `recorded` says where and when it was measured."""
        if not is_table(data):
            raise TableError(f"not a recorded table (no kind {KIND!r}): {str(data)[:120]}")
        return cls(str(data.get("title", "")), list(data["columns"]),
                   [list(r) for r in data.get("rows", [])], dict(data.get("units", {})),
                   list(data.get("notes", [])), [(str(s), str(t)) for s, t in data.get("folded", [])],
                   recorded)


class Stack:
    """Several tables (or lines) shown one under the other, so a cell shows one result."""

    def __init__(self, *parts: object) -> None:
        self.parts = [p for p in parts if p is not None]

    def __str__(self) -> str:
        return "\n\n".join(str(p) for p in self.parts)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        out = []
        for part in self.parts:
            shown = getattr(part, "_repr_html_", None)
            out.append(shown() if shown else f"<div>{html.escape(str(part))}</div>")
        return "".join(out)


def _plain(value: object) -> object:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    try:
        return float(value)  # numpy and torch scalars
    except (TypeError, ValueError):
        return str(value)


def is_table(payload: object) -> bool:
    """Whether a recorded payload is a table written by `Table.to_dict`."""
    return isinstance(payload, Mapping) and payload.get("kind") == KIND and "columns" in payload


# ---------------------------------------------------------------------- what renders through it


def comparison(result: Comparison, title: str = "") -> Table:
    """A `bench.compare` result as a Table: each variant's median, its ratio to the baseline
    with the ratio's spread over the interleaved rounds, GB/s and host launch where measured.
    The flags the harness raised are folded under the table."""
    rows = result.table()
    rates = any(r["gbps"] is not None for r in rows)
    host = result.host_column
    columns = ["variant", "device time" if host else "median", "ratio", "ratio spread"]
    columns += (["GB/s"] if rates else []) + (["host launch"] if host else [])
    units = {columns[1]: "s", "ratio": "x"} | ({"host launch": "s"} if host else {})
    out = Table(title or f"ratio to {result.baseline}, {result.rounds} interleaved rounds", columns,
                units=units)
    for r in rows:
        spread = f"{r['ratio_q25']:.2f}-{r['ratio_q75']:.2f}" + (" (within noise)" if r["within_noise"] else "")
        values = [r["variant"], r["median_s"], r["ratio"], spread]
        values += ([r["gbps"]] if rates else []) + ([r["host_s"]] if host else [])
        out.add(*values)
    flags = [f"flagged: {flag['timing']}: {flag['why']}" for flag in result.flags()]
    warnings = [f"warning: {v.timing.label}: {w}" for v in result.variants.values() for w in v.timing.warnings]
    if flags or warnings:
        out.fold(f"the harness's notes ({len(flags)} flagged, {len(warnings)} warnings)",
                 "\n".join(flags + warnings))
    return out


def sweep(parameter: str, points: Sequence[object], series: Mapping[str, Sequence[object]],
          title: str = "", units: Mapping[str, str] | None = None) -> Table:
    """A sweep (triton's perf_report shape): one row per point of `parameter`, one column per
    series. Every series needs one value per point."""
    bad = {name: len(values) for name, values in series.items() if len(values) != len(points)}
    if bad:
        raise TableError(f"a sweep over {len(points)} points of {parameter!r} got series of other "
                         f"lengths: {bad}")
    out = Table(title, [parameter, *series], units=dict(units or {}))
    for i, point in enumerate(points):
        out.add(point, *(values[i] for values in series.values()))
    return out


def rows(records: Iterable[Mapping[str, object]], title: str = "",
         units: Mapping[str, str] | None = None) -> Table:
    """A Table from dicts with the same keys (the first dict's keys are the columns)."""
    records = list(records)
    if not records:
        raise TableError(f"no rows for the table {title!r}: nothing was measured")
    columns = list(records[0])
    missing = [i for i, r in enumerate(records) if list(r) != columns]
    if missing:
        raise TableError(f"rows {missing} of {title!r} have other keys than the first: {columns}")
    return Table(title, columns, [list(r.values()) for r in records], units=dict(units or {}))
