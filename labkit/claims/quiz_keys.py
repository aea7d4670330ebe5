"""Quiz keys by the trust rule: a quiz graded on a measurement accepts every answer its noise allows.

A verdict that a flagged timing could carry across its threshold is held back ('depends' on
noise, `labkit.claims.trust`). A quiz graded on the same kind of measurement used to key only
the side the noise happened to land on: chapter 02's C10 quiz was keyed "torch.matmul on the
view" from 0.78x (rounds 0.63-0.91) while both timings were flagged 13-14% noisy, so the
'about the same' edge at 0.83x was within reach, and a 5-call check gave the opposite order
(review 2026-12-03e item 4). Here each edge between two choices is a `trust.Decision`
(the ratio, its per-round spread, the edge as its threshold); where the spread straddles the
edge, or the rule says a flag could carry the ratio across it, both choices count as right,
and the key says why. A number quiz's key is the span the spread and the flags allow.

The widget (`labkit.show.widgets.quiz.Key`) grades; this module, above it in the layers, only
applies the claims' one rule, so a quiz and a verdict never disagree about what is noise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from labkit.claims import trust
from labkit.show.widgets.quiz import Key, NotYetMeasured  # noqa: F401 -- the chapters raise it


def _flags_of(flags: Iterable[object] | None, timings: Sequence[str]) -> list[trust.Flag]:
    """The flags on the timings the ratio is built from (all of them when none are named)."""
    found = trust.read_flags(flags)
    return [f for f in found if not timings or f.timing in timings]


def crossable(ratio: float, spread: Sequence[float] | None, flags: Iterable[object] | None,
              edge: float, timings: Sequence[str] = (), what: str = "") -> str:
    """Why the measurement cannot say on which side of `edge` the ratio lies, or '' if it can.

    The trust rule's own test: the per-round spread straddles the edge, or a flag on one of
    `timings` could carry the whole interval across it."""
    decision = trust.Decision(what, float(ratio), list(spread or ()), float(edge), tuple(timings))
    if decision.margin() is None:
        low, high = min(decision.values()), max(decision.values())
        return f"its rounds ({low:.2f}-{high:.2f}x) straddle {edge:.3g}x"
    found = trust.judge(_flags_of(flags, timings), [decision])
    if found.veto:
        return found.veto.removeprefix("the harness flagged ").removesuffix(": no verdict from it")
    return ""


def choice_key(ratio: float, spread: Sequence[float] | None, flags: Iterable[object] | None, *,
               choices: Sequence[str], edges: Sequence[float], pick: Callable[[float], str],
               timings: Sequence[str] = (), what: str = "") -> Key | str:
    """A choice quiz's key from a measured ratio: `pick(ratio)`, and the neighbouring choices
    the noise could carry it to, or the plain choice when the measurement decides it.

    choices are ordered from the lowest ratio to the highest, and edges[i] is the ratio that
    separates choices[i] from choices[i + 1] (ascending, one fewer than the choices); pick is
    the quiz's own classifier (which side an edge itself falls on)."""
    if len(edges) != len(choices) - 1 or list(edges) != sorted(edges):
        raise ValueError(f"give one ascending edge between each two choices: {len(choices)} "
                         f"choices, edges {list(edges)}")
    answer = pick(float(ratio))
    if answer not in choices:
        raise ValueError(f"pick gave {answer!r}, which is none of the choices {list(choices)}")
    index = list(choices).index(answer)
    low, high, reasons = index, index, []
    while low > 0 and (why := crossable(ratio, spread, flags, edges[low - 1], timings, what)):
        low, reasons = low - 1, [*reasons, why]
    while high < len(choices) - 1 and (why := crossable(ratio, spread, flags, edges[high], timings,
                                                        what)):
        high, reasons = high + 1, [*reasons, why]
    if low == high:
        return answer
    return Key(answer, tuple(choices[low:high + 1]),
               why="within the noise: " + "; ".join(dict.fromkeys(reasons)))


def number_key(value: float, spread: Sequence[float] | None, flags: Iterable[object] | None, *,
               timings: Sequence[str] = ()) -> Key:
    """A number quiz's key: the measured value and the span its per-round spread allows,
    widened by the largest uncertainty of a flag on its timings (a timing that could be off by
    a factor 1 + s moves the ratio by as much)."""
    values = [float(value), *(float(v) for v in spread or ())]
    low, high = min(values), max(values)
    found = _flags_of(flags, timings)
    widen = 1.0 + max((f.uncertainty for f in found), default=0.0)
    span = (low / widen, high * widen)
    why = (f"its rounds give {low:.2f}-{high:.2f}x" + (
        f", and a flagged timing could be off by {widen - 1:.0%}" if found else ""))
    return Key(float(value), span=span, why=why)


def comparison_key(comparison: object, variant: str, *, choices: Sequence[str] = (),
                   edges: Sequence[float] = (), pick: Callable[[float], str] | None = None,
                   inverse: bool = False) -> Key | str:
    """The key of a quiz graded on one variant of a `labkit.measure.timing.Comparison`: its
    ratio to the baseline (variant time / baseline time; `inverse`: baseline / variant), its
    per-round spread and the flags of those two timings. With choices, edges and pick: a
    choice key (`choice_key`); without: a number key (`number_key`)."""
    found = comparison[variant]  # type: ignore[index]
    ratio, spread = found.ratio, [found.ratio_q25, found.ratio_q75]
    if inverse:
        ratio, spread = 1.0 / ratio, [1.0 / v for v in spread]
    baseline = comparison.baseline  # type: ignore[attr-defined]
    timings = (variant, baseline)
    flags = [f for f in (comparison[label].flag() for label in timings)  # type: ignore[index]
             if f is not None]
    if pick is None:
        return number_key(ratio, spread, flags, timings=timings)
    return choice_key(ratio, spread, flags, choices=choices, edges=edges, pick=pick,
                      timings=timings, what=variant)
