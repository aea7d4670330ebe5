"""The ladder shown: one row per rung, what it measured against both baselines.

Drawing only: every number comes from the measured `ladder.Rung`s.
"""

from __future__ import annotations

import html
import math

from labkit.chapters.ch08_inference_ladder import ladder

COLUMNS = ("rung", "", "images/s", "IQR", "over strict float32", "over PyTorch defaults",
           "share of the ceiling of its math", "compile", "batches to pay back")


def _payback(rung: ladder.Rung, before: ladder.Rung | None) -> str:
    """How many batches the rung's compile time takes to pay back against the rung before it."""
    if not rung.compile_s or before is None:
        return ""
    n = ladder.payback_batches(rung.compile_s, 1 / before.images_per_s, 1 / rung.images_per_s,
                               rung.settings.batch)
    return "never" if math.isinf(n) else f"{n:,.0f}"


def row(rung: ladder.Rung, strict: ladder.Rung, defaults: ladder.Rung,
        before: ladder.Rung | None) -> list[str]:
    """One rung's cells, in COLUMNS order."""
    low, high = rung.speedup_spread(strict)
    pct = f"{rung.pct_of_ceiling:.0f}% of {rung.settings.math}" if rung.pct_of_ceiling else "n/a"
    return [rung.name, "kept" if rung.kept else "not kept: slower",
            f"{rung.images_per_s:,.0f}", f"{100 * rung.iqr_s / rung.median_s:.1f}%",
            f"{rung.speedup_over(strict):.2f}x ({low:.2f} to {high:.2f})",
            f"{rung.speedup_over(defaults):.2f}x", pct, f"{rung.compile_s:.1f} s",
            _payback(rung, before)]


class LadderTable:
    """The rungs as a table: HTML in a notebook, aligned text elsewhere."""

    def __init__(self, rungs: list[ladder.Rung], strict: ladder.Rung, defaults: ladder.Rung) -> None:
        by_name = {r.name: r for r in rungs}
        self.rows = [(r.kept, row(r, strict, defaults, by_name.get(r.after))) for r in rungs]

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
        body = "".join(f"<tr style='{'' if kept else 'color:#888'}'>"
                       + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"
                       for kept, cells in self.rows)
        return f"<table><tr>{head}</tr>{body}</table>"

    def __str__(self) -> str:
        return "\n".join(" | ".join(cells) for _, cells in self.rows)


def table(rungs: list[ladder.Rung], strict: ladder.Rung, defaults: ladder.Rung) -> LadderTable:
    """The ladder's table: images/s with spread, both speed-ups, compile cost and payback."""
    return LadderTable(rungs, strict, defaults)
