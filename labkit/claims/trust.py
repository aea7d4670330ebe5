"""The one trust rule: when a timing the harness flagged may hold a verdict back.

Every timing-based claim decides by comparing a measured ratio (with its spread over
interleaved rounds) against a named threshold (`band`). The harness also flags single
timings it does not trust as they stand: noisy (IQR over 10% of the median) or above 105%
of this machine's ceiling, still so when measured again. Before this module, any such flag
turned the whole verdict into "depends on noise", even when the ratio sat far from its
threshold (torch.matmul at 0.31x the stride-aware GEMM against a 1.2x threshold; a copy
penalty of 27x against 1.5x). That veto was printed nowhere and its reason text said
something that had not happened.

The rule now, one place, printed on every timing-based claim card (`TRUST_RULE`):

- a flag carries an uncertainty `s`: the flagged timing could be off by a factor (1 + s).
  Noisy: in an interleaved comparison the relative IQR of its per-round medians (what the
  ratio is built from; single samples scatter more than medians do), timed alone its
  IQR/median. Above a ceiling: its excess over 100% of that ceiling. A flag
  recorded without its size (older results) counts as s = 100% (off by a factor of two).
- a decision is the ratio, its spread and its threshold. Its margin is the factor by which
  the whole interval (ratio and spread) would have to move to reach the threshold.
- a flag vetoes a decision (the verdict is 'depends' on noise) only when s reaches that
  margin; the reason names the timing, why it was flagged, and both numbers. Otherwise
  the verdict stands and its reason says the flag could not carry it across.
- a flag applies to the decision whose name prefixes its timing ("1024 float16: ..."), or to
  every decision when it names none.
- deterministic parts of a claim (bytes copied, an exception raised, a stride) decide
  before any timing is read; the checks call this rule only where a timing decides.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

UNKNOWN_SPREAD = 1.0  # a flag recorded without its size: the timing could be off by 2x
DEPENDS = "depends"  # the outcome (labkit.claims.core imports this module, not the reverse)

FLAGGED = ("noise: a timing the harness flagged could carry the deciding ratio across the "
           "threshold; rerun on a quiet machine")

TRUST_RULE = (
    "a timing the harness flags (noisy: IQR over 10% of its median; or above 105% of a "
    "ceiling; still so when measured again) holds this verdict back ('depends' on noise) only "
    "if it could carry the deciding ratio across the threshold: the flagged timing may be off "
    "by the spread of its per-round medians in an interleaved comparison (its IQR/median when "
    "timed alone), or by its excess over the ceiling (100% when not recorded), and the ratio's "
    "whole measured spread must be nearer the threshold than that. Deterministic parts (bytes "
    "copied, an exception raised) decide on their own.")


@dataclass(frozen=True)
class Flag:
    """One timing the harness flagged: its label, why, and its relative uncertainty (or None)."""

    timing: str
    why: str = "noisy or above a ceiling"
    spread: float | None = None

    @property
    def uncertainty(self) -> float:
        """The factor-minus-one by which this timing could be off (UNKNOWN_SPREAD if unknown)."""
        return UNKNOWN_SPREAD if self.spread is None else float(self.spread)

    def describe(self) -> str:
        size = ("size not recorded, taken as 100%" if self.spread is None
                else f"could be off by {100 * self.uncertainty:.0f}%")
        return f"{self.timing} ({self.why}; {size})"


def read_flags(entries: Iterable[object] | None) -> list[Flag]:
    """Flags from evidence: dicts {'timing', 'why', 'spread'} (today's) or plain labels (older)."""
    flags = []
    for entry in entries or ():
        if isinstance(entry, Flag):
            flags.append(entry)
        elif isinstance(entry, Mapping):
            spread = entry.get("spread")
            flags.append(Flag(str(entry.get("timing", "?")), str(entry.get("why") or Flag.why),
                              None if spread is None else abs(float(spread))))
        else:
            flags.append(Flag(str(entry)))
    return flags


@dataclass(frozen=True)
class Decision:
    """A ratio that decides a verdict: its value, measured spread and threshold."""

    name: str
    value: float
    spread: Sequence[float] | None
    threshold: float

    def values(self) -> list[float]:
        return [float(self.value)] + [float(v) for v in (self.spread or ())]

    def margin(self) -> float | None:
        """How far (a factor minus one) the interval must move to reach the threshold.

        None when the interval already straddles it (then `band` says 'noise' anyway)."""
        lo, hi, t = min(self.values()), max(self.values()), float(self.threshold)
        if t <= 0:
            return math.inf
        if lo > t:
            return lo / t - 1.0
        if hi <= t:
            return math.inf if hi <= 0 else t / hi - 1.0
        return None

    def describe(self) -> str:
        vals = self.values()
        spread = (f" (spread {min(vals):.3g}-{max(vals):.3g})" if len(vals) > 1 else "")
        who = f"{self.name} ratio" if self.name else "the ratio"
        return f"{who} {self.value:.3g}x{spread} against {self.threshold:g}"


def names(flag: Flag, case: str) -> bool:
    """Whether a flag's timing belongs to a case: 'case: label' (today) or 'case label' (older)."""
    return bool(case) and (flag.timing == case or flag.timing.startswith(case + ":")
                           or flag.timing.startswith(case + " "))


def applies(flag: Flag, decision: Decision, cases: Sequence[str]) -> bool:
    """A flag names its decision by a prefix ('1024 float16: ...'); one naming none applies to all."""
    if not any(names(flag, c) for c in cases):
        return True
    return names(flag, decision.name)


@dataclass(frozen=True)
class Trust:
    """What the rule found: the veto (if any) and a note on the flags that did not veto."""

    veto: str | None
    note: str

    def held_back(self) -> bool:
        return self.veto is not None


def judge(flags: Iterable[object] | None, decisions: Sequence[Decision],
          not_judged: Sequence[str] = ()) -> Trust:
    """Apply the trust rule: which flag (if any) could carry which decision across its threshold.

    not_judged: names of cases that were measured but decide nothing (shown only); their
    flags are left out."""
    cases = [d.name for d in decisions]
    ignored = [n for n in not_judged if n not in cases]
    found = [f for f in read_flags(flags) if not any(names(f, n) for n in ignored)]
    if not found or not decisions:
        return Trust(None, "")
    vetoes, harmless = [], []
    for flag in found:
        hits, margins = [], []
        for decision in decisions:
            if not applies(flag, decision, cases):
                continue
            margin = decision.margin()
            if margin is None:
                continue
            margins.append(margin)
            if flag.uncertainty >= margin:
                hits.append((decision, margin))
        if hits:
            decision, margin = min(hits, key=lambda h: h[1])
            vetoes.append(f"the harness flagged {flag.describe()}, and {decision.describe()} "
                          f"is only {100 * margin:.0f}% from that threshold")
        else:
            nearest = f", its ratio {100 * min(margins):.0f}% from the threshold" if margins else ""
            harmless.append(f"{flag.describe()}{nearest}")
    note = ("flagged, but too small to carry its ratio across the threshold: " + "; ".join(harmless)
            if harmless else "")
    if vetoes:
        return Trust("; ".join(vetoes) + ": no verdict from it", note)
    return Trust(None, note)


def verdict_or_veto(flags: Iterable[object] | None, decisions: Sequence[Decision],
                    text: str, not_judged: Sequence[str] = ()
                    ) -> tuple[tuple[str, str, str] | None, str]:
    """(a 'depends on noise' verdict if a flag vetoes, else None; the text with the rule's note)."""
    found = judge(flags, decisions, not_judged)
    if found.note:
        text = f"{text}; {found.note}"
    if found.veto:
        return (DEPENDS, f"{text}; {found.veto}", FLAGGED), text
    return None, text
