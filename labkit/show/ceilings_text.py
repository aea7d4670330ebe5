"""A machine's ceilings in one line, with when each was measured: chapter 00 prints it under its
own measurement, chapter 02 under the cached ceilings its shares are taken of. One format in the
display layer, so neither chapter imports the other (the import contract: chapters are
independent of each other).

Review 2026-12-05p 00-02 item 6: the page printed the `Ceilings` dataclass's repr, ~1,900
characters, every sweep point and the fingerprint in it (the sweep has its own table). Review
2026-12-06z 00-02 item 4: the H200 page said 'measured 2026-12-06 06:40' over a copy ceiling kept
from 2026-12-05 17:39 (a refresh keeps the higher reading), and chapter 02 printed the cached
ceilings with no date at all. Each ceiling kept from an earlier run is named with its own date and
this run's reading (`details["kept_higher"]`), and `from_cache` says the line was read from the
cache, not measured by the page that prints it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

MATH_NAMES = {"float32": "float32", "tfloat32": "TF32 (float32 data)", "bfloat16": "bfloat16",
              "float16": "float16"}


def rate(value: float | None) -> str:
    """A rate as the ceilings are said: '-' where none, thousands separated from 100 up, else 3
    significant figures."""
    return "-" if not value else (f"{value:,.0f}" if value >= 100 else f"{value:.3g}")


def minute(stamp: object) -> str:
    """An ISO time stamp to the minute, 'YYYY-MM-DD HH:MM'."""
    return str(stamp)[:16].replace("T", " ")


def joined(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def kept_by_date(measured: object) -> list[tuple[str, list[str], list[str]]]:
    """The ceilings a refresh kept from earlier runs (`ceilings.higher_of`), grouped by the date each
    was measured: (date, names, this run's readings), oldest first; [] where none was kept."""
    details = measured.get("details") if isinstance(measured, Mapping) else getattr(measured, "details", None)
    kept = dict(dict(details or {}).get("kept_higher") or {})
    names = {"copy_gbps": "copy", **{f"matmul_tflops.{m}": n for m, n in MATH_NAMES.items()}}
    by_date: dict[str, tuple[list[str], list[str]]] = {}
    for key, found in kept.items():
        if isinstance(found, Mapping) and found.get("measured_at"):
            group = by_date.setdefault(minute(found["measured_at"]), ([], []))
            group[0].append(names.get(key, key))
            group[1].append(rate(found.get("this_run")))
    return [(date, *by_date[date]) for date in sorted(by_date)]


def ceilings_line(measured: object, from_cache: bool = False, maths: Sequence[str] | None = None) -> str:
    """'Ceilings of this machine (measured ... UTC): copy ... GB/s (read + write); matmul TFLOP/s:
    ...', each ceiling kept from an earlier run named with its date (and, where measured by the
    page that prints it, this run's reading); from_cache: read from the cache, said so, its dates
    as the span they were measured over (chapter 00's page names each). maths: the matmul
    ceilings the reading page takes shares of (None: all), for a line that prints no others."""
    if isinstance(maths, str) or (maths is not None and not set(maths) <= set(MATH_NAMES)):
        raise ValueError(f"maths: a sequence of {', '.join(MATH_NAMES)} (not one string), got {maths!r}")
    shown = {math: value for math, value in measured.matmul_tflops.items()  # type: ignore[attr-defined]
             if maths is None or math in maths}
    rates = ", ".join(f"{MATH_NAMES.get(math, math)} {rate(value)}" for math, value in shown.items()) or "none measured"
    when = minute(getattr(measured, "measured_at", "")) or "time not recorded"
    kept = kept_by_date(measured)
    if from_cache and kept:  # the span the ceilings shown were measured over, in a few words (session
        # aa: chapter 02's H200 page read 1,515 core words, the dated list 33 of them); each shown
        # ceiling by its own date: kept ones by theirs, the rest by the refresh's (code review aa item 4)
        dated = {name: date for date, names, _ in kept for name in names}
        dates = sorted({dated.get(name, when) for name in ["copy", *(MATH_NAMES.get(m, m) for m in shown)]})
        span = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
        return (f"Ceilings of this machine (read from the cache, measured {span} UTC): "
                f"copy {rate(measured.copy_gbps)} GB/s (read + write); matmul TFLOP/s: {rates}.")  # type: ignore[attr-defined]
    read = "read from the cache; " if from_cache else ""
    head = (f"Ceilings of this machine ({read}measured {when} UTC)" if not kept else
            f"Ceilings of this machine ({read.removesuffix('; ')})" if from_cache else "Ceilings of this machine")
    # read from the cache (chapter 02): the dates alone, in fewer words (chapter 00 says why a ceiling is kept)
    tail = "" if not kept else (f" Measured {when} UTC, except " + "; ".join(
        f"{joined(names)}, kept from {date} UTC" + ("" if from_cache else f" (this run {joined(values)})")
        for date, names, values in kept)
        + ("." if from_cache else ": a ceiling is the best reading, and a loaded run reads low."))
    return (f"{head}: copy {rate(measured.copy_gbps)} GB/s "  # type: ignore[attr-defined]
            f"(read + write); matmul TFLOP/s: {rates}." + tail)
