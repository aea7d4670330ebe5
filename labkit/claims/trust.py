"""The one trust rule: when a timing the harness flagged may hold a verdict back.

Every timing-based claim decides by comparing a measured ratio (with its spread over
interleaved rounds) against a named threshold (`band`). The harness also flags single
timings it does not trust as they stand: noisy (IQR over 10% of the median), above 105%
of this machine's ceiling, or, on the CPU, bound by call overhead (a one-element op's
cost is over 10% of the median), still so when measured again. A short GPU call whose host
launch outlasts its device time is not flagged: the harness reports its device time (kernel
records) with the host's launch beside it, two true figures of different things. Before this module, any such flag turned the whole
verdict into "depends on noise", even when the ratio sat far from its threshold
(torch.matmul at 0.31x the stride-aware GEMM against a 1.2x threshold; a copy penalty of
27x against 1.5x). That veto was printed nowhere and its reason text said something that
had not happened. Then the rule was opt-in: a check applied it only if it called it, and
four timing-based claims never did.

The rule now, one place, printed on every timing-based claim card (`TRUST_RULE`), applied
by `Claim.judge` itself (`apply`), never by a check:

- a timing-based claim declares its decisions (`Decision`: which ratio, its spread, which
  threshold) in a function beside its check; registration refuses one that declares none.
- a flag carries an uncertainty `s`: the flagged timing could be off by a factor (1 + s).
  Noisy: in an interleaved comparison the relative IQR of its per-round medians (what the
  ratio is built from; single samples scatter more than medians do), timed alone its
  IQR/median. Above a ceiling: its excess over 100% of that ceiling. Bound by call
  overhead (CPU): what the harness says it could be off by (overhead / the rest). A flag recorded without its size (older results)
  counts as s = 100% (off by a factor of two).
- a decision is the ratio, its spread and its threshold. Its margin is the factor by which
  the whole interval (ratio and spread) would have to move to reach the threshold.
- a flag vetoes a decision (the verdict is 'depends' on noise) only when s reaches that
  margin; the reason names the timing, why it was flagged, and both numbers. Otherwise
  the verdict stands and its reason says the flag could not carry it across.
- a flag applies to the decision whose name prefixes its timing ("1024 float16: ..."), or
  that lists its timing among the timings it is built from, or to every decision when it
  names none.
- a timing taken while other processes used the GPU (evidence "shared_gpu") holds back any
  confirmed or refuted verdict: its size cannot be known (`shared_verdict`).
- deterministic parts of a claim (bytes copied, an exception raised, a stride) decide
  before any timing is read: the declared decisions are empty where they decide.

Evidence carries its flags under one key, `FLAGS_KEY` ("flags"); results recorded before
read back from the older keys ("distrusted", "noisy", a timing's "<name>_noisy": True).
`stated_ratio` gates a sentence that states a ratio by the same rule.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

UNKNOWN_SPREAD = 1.0  # a flag recorded without its size: the timing could be off by 2x
DEPENDS = "depends"  # the outcome (labkit.claims.core imports this module, not the reverse)
FLAGS_KEY = "flags"  # the one evidence key for the harness's flags
LEGACY_FLAG_KEYS = ("distrusted", "noisy")  # where results recorded before it keep them
LEGACY_TIMING_NOISY = "_noisy"  # "<timing>_noisy": True, recorded without its size
SHARED_GPU = "a shared GPU"  # what a verdict depends on when its timings shared the GPU

FLAGGED = ("noise: a timing the harness flagged could carry the deciding ratio across the "
           "threshold; rerun on a quiet machine")

TRUST_RULE = (
    "a timing the harness flags (noisy: IQR over 10% of its median; above 105% of a "
    "ceiling; or, on the CPU, bound by call overhead; still so when measured again) holds this "
    "verdict back ('depends' on noise) only if it could carry the deciding ratio across the "
    "threshold: the flagged timing may be off by the spread of its per-round medians in an "
    "interleaved comparison (its IQR/median when timed alone), by its excess over the ceiling, "
    "or by the overhead's share (100% when not recorded), and the ratio's whole measured "
    "spread must be nearer the threshold than that. Timings taken while other processes used the GPU hold it back ('depends' on a "
    "shared GPU). Deterministic parts (bytes copied, an exception raised) decide on their own.")


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
    """A ratio that decides a verdict: its value, measured spread and threshold.

    timings (optional): the labels of the timings the ratio is built from, so a flag on one
    of them applies to this decision only (a noisy pageable copy says nothing about the
    pin_memory_device/pinned ratio)."""

    name: str
    value: float
    spread: Sequence[float] | None
    threshold: float
    timings: tuple[str, ...] = ()

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
        who = (self.name if self.name.endswith("ratio") else f"{self.name} ratio") if self.name else "the ratio"
        return f"{who} {self.value:.3g}x{spread} against {self.threshold:g}"


def names(flag: Flag, case: str) -> bool:
    """Whether a flag's timing belongs to a case: 'case: label' (today) or 'case label' (older)."""
    return bool(case) and (flag.timing == case or flag.timing.startswith(case + ":")
                           or flag.timing.startswith(case + " "))


def _built_from(flag: Flag, decision: Decision) -> bool:
    return flag.timing in decision.timings


def applies(flag: Flag, decision: Decision, cases: Sequence[str],
            decisions: Sequence[Decision] = ()) -> bool:
    """A flag names its decision by a prefix ('1024 float16: ...') or as one of the timings it
    is built from (`Decision.timings`); one naming none applies to all."""
    if any(_built_from(flag, d) for d in decisions):
        return _built_from(flag, decision) or names(flag, decision.name)
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
            if not applies(flag, decision, cases, decisions):
                continue
            margin = decision.margin()
            if margin is None:
                continue
            margins.append((margin, decision))
            if flag.uncertainty >= margin:
                hits.append((decision, margin))
        if hits:
            decision, margin = min(hits, key=lambda h: h[1])
            # the ratio, its spread and its threshold (review 2026-12-03c item 9), not a distance
            vetoes.append(f"the harness flagged {flag.describe()}, which could carry "
                          f"{decision.describe()} across it")
        else:  # the nearest decision as its ratio and threshold (a '1442%' distance read badly)
            nearest = (f", {min(margins, key=lambda m: m[0])[1].describe()}" if margins else "")
            harmless.append(f"{flag.describe()}{nearest}")
    note = ("flagged, but too small to carry its ratio across the threshold: " + "; ".join(harmless)
            if harmless else "")
    if vetoes:
        return Trust("; ".join(vetoes) + ": no verdict from it", note)
    return Trust(None, note)


# ---------------------------------------------------------------- declared decisions


@dataclass(frozen=True)
class Decisions:
    """What a timing-based claim's declared decisions found in one evidence.

    decisions: the ratios that decide it here (none where a deterministic part decided);
    not_judged: names of cases measured but only shown, whose flags are left out."""

    decisions: tuple[Decision, ...] = ()
    not_judged: tuple[str, ...] = ()


DecisionsFn = Callable[[Mapping, Mapping], "Sequence[Decision] | Decisions"]


def declared(found: object) -> Decisions:
    """A decisions function's answer as `Decisions` (it may return a plain list of Decision)."""
    if isinstance(found, Decisions):
        items, not_judged = found.decisions, found.not_judged
    elif isinstance(found, Sequence) and not isinstance(found, str):
        items, not_judged = tuple(found), ()
    else:
        raise TypeError(f"a claim's decisions function returns Decision objects or Decisions, "
                        f"got {found!r}")
    bad = [d for d in items if not isinstance(d, Decision)]
    if bad:
        raise TypeError(f"a claim's decisions function returned {bad!r}, not Decision objects")
    return Decisions(tuple(items), tuple(not_judged))


def flags_in(evidence: Mapping) -> list[Flag]:
    """The harness's flags in a claim's evidence: under FLAGS_KEY, or where results recorded
    before it kept them ('distrusted', a list under 'noisy', '<timing>_noisy': True)."""
    if FLAGS_KEY in evidence:
        return read_flags(evidence[FLAGS_KEY])
    found: list[Flag] = []
    for key in LEGACY_FLAG_KEYS:
        entries = evidence.get(key)
        if isinstance(entries, (list, tuple)):
            found += read_flags(entries)
    for key, value in evidence.items():
        if isinstance(key, str) and key.endswith(LEGACY_TIMING_NOISY) and value is True:
            found.append(Flag(key[: -len(LEGACY_TIMING_NOISY)], "noisy (recorded without its size)"))
    return found


def shared_verdict(result: tuple[str, str, str], evidence: Mapping) -> tuple[str, str, str]:
    """A check's (outcome, reason, depends_on), made 'depends' when a shared GPU decided it.

    evidence["shared_gpu"] true (a chapter sets it from its timings' `shared_gpu`) means the
    ratio the check read may be the other processes' doing, by an amount no timing can show;
    a confirmed or refuted outcome then becomes 'depends' on SHARED_GPU, keeping the reason.
    Deterministic checks (strides, errors) never set the key and are left alone.
    """
    outcome, reason, depends_on = result
    if not evidence.get("shared_gpu") or outcome == DEPENDS:
        return result
    return (DEPENDS, f"{reason} (timed while other processes used the GPU: rerun alone to decide)",
            SHARED_GPU)


def apply(result: tuple[str, str, str], evidence: Mapping,
          decided: Decisions) -> tuple[str, str, str]:
    """The whole rule over a check's (outcome, reason, depends_on): what `Claim.judge` does for
    every timing-based claim, whatever its check returned.

    A flag that could carry a declared decision across its threshold makes it 'depends' on
    noise (FLAGGED); flags too small to do so are named in the reason; then a shared GPU
    holds back what is left confirmed or refuted."""
    outcome, reason, depends_on = result
    found = judge(flags_in(evidence), decided.decisions, decided.not_judged)
    if found.note:
        reason = f"{reason}; {found.note}"
    if found.veto:
        return DEPENDS, f"{reason}; {found.veto}", FLAGGED
    return shared_verdict((outcome, reason, depends_on), evidence)


# ---------------------------------------------------------------- stated ratios


def _spread_pair(spread: Sequence[float] | None) -> tuple[float, float] | None:
    values = [float(v) for v in spread or ()]
    return (min(values), max(values)) if values else None


def stated_ratio(ratio: float, spread: Sequence[float] | None = None, *,
                 flags: Iterable[object] | None = None, threshold: float = 1.0,
                 shared_gpu: bool = False, what: str = "", spread_name: str = "IQR") -> str:
    """A ratio as a sentence may state it, or what it is instead: noise.

    spread_name labels the spread as the caller took it: 'IQR' (the default: the per-round
    ratios' quartiles, a `Comparison` variant's ratio_q25 and ratio_q75, which every caller
    passes) or 'rounds' where a caller passes the lowest and highest round. A page using both
    must tell them apart (review 2026-12-05q browser 05-07 item 5); the default said 'rounds'
    of quartiles until review 2026-12-05r2 item 3.

    '1.77x (IQR 1.70-1.85)' when the ratio lies inside its own per-round spread, the
    spread stays on one side of `threshold` (default 1.0: faster or slower at all), no flag
    could carry it across (the trust rule, as a `Decision`) and the GPU was not shared.
    Otherwise a fragment that names the number as noise and why, so a takeaway never
    states as a result a ratio its own measurement does not support.
    """
    ratio = float(ratio)
    pair = _spread_pair(spread)
    shown = f"{ratio:.2f}x" + (f" ({spread_name} {pair[0]:.2f}-{pair[1]:.2f})" if pair else "")
    if not math.isfinite(ratio) or ratio <= 0:
        return f"no ratio ({ratio!r}: not measured)"
    if pair and not pair[0] <= ratio <= pair[1]:
        own = "rounds'" if spread_name == "rounds" else f"rounds' {spread_name}"
        return (f"no stable ratio: {ratio:.2f}x lies outside its own {own} {pair[0]:.2f}-"
                f"{pair[1]:.2f}x (noise: the rounds disagree; rerun on a quiet machine)")
    if pair and pair[0] <= threshold <= pair[1]:
        return f"{shown}: no measurable difference from {threshold:g}x (the rounds straddle it)"
    veto = judge(flags, [Decision(what, ratio, list(pair) if pair else None, threshold)]).veto
    if veto:
        return f"no ratio to state: {shown}, but {veto.removesuffix(': no verdict from it')} (noise)"
    if shared_gpu:
        return f"no ratio to state: {shown}, timed on a shared GPU (other processes used it)"
    return shown


_PLAIN_RATIO = re.compile(r"[0-9.]+x( \((IQR|rounds) [0-9.]+-[0-9.]+\))?")


def is_plain_ratio(stated: str) -> bool:
    """Whether `stated_ratio` stated a ratio a sentence may carry ('1.32x', '1.32x (IQR
    1.29-1.43)', or 'rounds' for a lowest-highest spread), not what the trust rule says instead
    ('no ratio to state: ...', '...: no measurable difference ...'). Chapters 03 and 04 each
    kept their own copy of this pattern, which had to learn every spread label twice."""
    return _PLAIN_RATIO.fullmatch(stated.strip()) is not None


def stated_variant(comparison: object, name: str, threshold: float = 1.0) -> str:
    """`stated_ratio` for one variant of a `labkit.measure.timing.Comparison`: its ratio to the
    baseline, its per-round spread, the comparison's flags and whether it shared the GPU."""
    variant = comparison[name]  # type: ignore[index]
    flags = comparison.flags() if hasattr(comparison, "flags") else []
    shared = any(getattr(v.timing, "shared_gpu", False)
                 for v in getattr(comparison, "variants", {}).values())
    return stated_ratio(variant.ratio, [variant.ratio_q25, variant.ratio_q75], flags=flags,
                        threshold=threshold, shared_gpu=shared, what=name)
