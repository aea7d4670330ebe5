"""What a claim and a verdict are, and the one rule every timing-based check shares.

A `Claim` is one statement from a seed article: an English gist of the seed's sentence, the
section it comes from (English, with the Chinese title kept for a tooltip), what would confirm
or refute it, its named thresholds and the check function that decides. A `Verdict` is only
ever made by `Claim.judge(evidence)`: the check reads numbers a chapter measured, so the same
code gives `confirmed` on one machine and `refuted` or `depends` on another. Nothing here
types a verdict in.

Each chapter's claims live together in `labkit/chapters/chNN_name/claims.py` (statement, rule,
thresholds and check on one screen); `labkit.claims.registry` discovers them.

A timing-based claim declares its decisions beside its check (`decisions`: which ratio, its
spread, which threshold), and `Claim.judge` applies the whole trust rule to them
(`labkit.claims.trust.apply`: flags, a shared GPU), so no check can skip it; a timing-based
claim without declared decisions is refused when it is made.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from labkit.claims import articles, trust
from labkit.claims.articles import SEED_PIPELINE, SEED_STRIDES  # noqa: F401 -- chapters import them from here
from labkit.claims.trust import FLAGGED, TRUST_RULE

CONFIRMED, REFUTED, DEPENDS = "confirmed", "refuted", "depends"
OUTCOMES = (CONFIRMED, REFUTED, DEPENDS)

# The seed articles' keys (SEED_STRIDES, SEED_PIPELINE) and titles live in labkit.claims.articles.

# A verdict says which form of its claim it judged: the seed's own setting, or an analogue.
SEED_FORM = "the seed's form"

# ...and which kind of form that was, as a field of its own (Verdict.kind), so the ledger's
# tallies count by what was done, not by a word somewhere in the form's text (review
# 2026-12-03h, chapters 05-07, item 5: C15b, an analogue measured on ONNX Runtime whose form
# also names TensorRT's binding "read from documentation", was tallied as documentation, and
# C15d, "not measured", as a measured analogue).
SEED_KIND, ANALOGUE_KIND, DOCUMENTATION_KIND, NOT_MEASURED_KIND = (
    "seed form", "analogue", "read from documentation", "not measured")
FORM_KINDS = (SEED_KIND, ANALOGUE_KIND, DOCUMENTATION_KIND, NOT_MEASURED_KIND)
# The explicit markers a form opens with when its claim was not measured here: the checks
# write forms that open "read from documentation, ..." or "not measured: ..." (chapter 07).
KIND_MARKERS = (("read from documentation", DOCUMENTATION_KIND), ("not measured", NOT_MEASURED_KIND))


def form_kind(form: str) -> str:
    """The kind of a form when its verdict names none (`Claim.judge` without kind=, and saved
    verdicts from before Verdict.kind): SEED_FORM is the seed's form; a form that opens with
    one of KIND_MARKERS is that kind; any other form was measured in a setting of its own (an
    analogue), whatever it says later ("analogue measured on ...; TensorRT's binding read from
    documentation" is a measured analogue: its opening says what was done)."""
    if form == SEED_FORM:
        return SEED_KIND
    opening = form.strip().lower()
    return next((kind for marker, kind in KIND_MARKERS if opening.startswith(marker)), ANALOGUE_KIND)

RULES_ANCHOR = "trust-rule"  # where a chapter prints the trust rule once (labkit.session.Rules)

NOISE = "noise: the spread of the measured ratio straddles the threshold; rerun on a quiet machine"
# What a verdict held back by a flagged timing depends on (see labkit.claims.trust).
NOISE_FLAGGED = FLAGGED


class ClaimError(ValueError):
    """A claim was asked for a verdict it cannot give (unknown id, missing evidence, untested)."""


def band(value: float, spread: Sequence[float] | None, threshold: float) -> str:
    """'above' or 'below' a threshold, or 'noise' when the measured spread straddles it.

    spread is the IQR of the per-round ratios from bench.compare (optional); the pooled
    ratio itself counts too, so a verdict never rests on a ratio the rounds do not support.
    """
    values = [value] + ([float(v) for v in spread] if spread else [])
    if min(values) > threshold:
        return "above"
    if max(values) <= threshold:
        return "below"
    return "noise"


class _JudgeToken:
    """Only `Claim.judge` and `Verdict.from_dict` hold this: a verdict can't be typed in."""


_TOKEN = _JudgeToken()

Check = Callable[[Mapping, Mapping], tuple[str, str, str]]  # -> (outcome, reason, depends_on)


@dataclass(frozen=True)
class Verdict:
    """The outcome of one claim's check on one machine's evidence.

    outcome is 'confirmed', 'refuted' or 'depends' (then depends_on says on what); reason
    is one sentence built from the numbers; evidence and thresholds are what decided it.
    form says which form of the claim was judged (the seed's own setting, or an analogue
    this machine can run); kind, one of FORM_KINDS, says what kind of form that was (measured
    in the seed's setting, measured as an analogue, read from documentation, not measured),
    given to `Claim.judge` by the check's caller or read from the form's opening marker
    (`form_kind`) when not. recorded=True marks a verdict read back from a saved run.
    """

    claim_id: str
    outcome: str
    reason: str
    evidence: Mapping
    thresholds: Mapping
    depends_on: str = ""
    machine: str = ""
    form: str = SEED_FORM
    recorded: bool = False
    issued_by: object = field(default=None, repr=False, compare=False)
    kind: str = ""

    def __post_init__(self) -> None:
        if self.issued_by is not _TOKEN:
            raise ClaimError("a Verdict is computed, never typed in: call "
                             f"claims.get({self.claim_id!r}).judge(evidence)")
        if not self.kind:
            object.__setattr__(self, "kind", form_kind(self.form))
        if self.kind not in FORM_KINDS:
            raise ClaimError(f"{self.claim_id}: kind must be one of {FORM_KINDS}, got {self.kind!r}")
        if (self.kind == SEED_KIND) != (self.form == SEED_FORM):
            raise ClaimError(f"{self.claim_id}: the kind {SEED_KIND!r} goes with the form {SEED_FORM!r} "
                             f"and only with it (form {self.form!r}, kind {self.kind!r})")
        if self.outcome not in OUTCOMES:
            raise ClaimError(f"outcome must be one of {OUTCOMES}, got {self.outcome!r}")
        if not self.evidence:
            raise ClaimError(f"{self.claim_id}: a verdict needs evidence, got none")
        if (self.outcome == DEPENDS) != bool(self.depends_on):
            raise ClaimError(f"{self.claim_id}: 'depends' and only 'depends' names what it depends on")

    def to_dict(self) -> dict:
        """Plain JSON values, as saved by `labkit.core.results`."""
        from labkit.core import results

        return {"claim_id": self.claim_id, "outcome": self.outcome, "reason": self.reason,
                "depends_on": self.depends_on, "machine": self.machine, "form": self.form,
                "kind": self.kind, "evidence": results.to_jsonable(self.evidence), "thresholds": dict(self.thresholds)}

    @classmethod
    def from_dict(cls, data: Mapping, recorded: bool = True) -> Verdict:
        """A verdict read back from saved results (marked recorded). One saved before
        Verdict.kind existed has its kind read from its form's opening (`form_kind`)."""
        try:
            return cls(claim_id=data["claim_id"], outcome=data["outcome"], reason=data["reason"],
                       evidence=data["evidence"], thresholds=data.get("thresholds", {}),
                       depends_on=data.get("depends_on", ""), machine=data.get("machine", ""),
                       form=data.get("form", SEED_FORM), recorded=recorded, issued_by=_TOKEN,
                       kind=data.get("kind") or "")
        except KeyError as missing:
            raise ClaimError(f"saved verdict lacks {missing}; the results file is damaged "
                             "or from another version") from None

    def __str__(self) -> str:
        """'C5a refuted -- <reason>': the verdict in one line, as a reader reads it."""
        return f"{self.claim_id} {self.label} -- {self.reason}"

    @property
    def label(self) -> str:
        """'refuted', or 'depends (on ...)'."""
        return f"{self.outcome} (on {self.depends_on})" if self.depends_on else self.outcome


@dataclass(frozen=True)
class Claim:
    """One statement from a seed article, and how a measurement decides it.

    section is the seed's section in English; section_zh the seed's own title (a tooltip).
    seed_setting is the setting the seed states (device, precision, size), so a verdict
    made elsewhere can say it judged an analogue. deterministic: the verdict follows from
    tensor semantics (strides, errors), not timings, so nbval may compare it. timing_based:
    a timing decides it (a ratio against a threshold), so the card links to the trust rule
    (`labkit.claims.trust.TRUST_RULE`) the verdict will follow. decisions (required when
    timing_based and tested): (evidence, thresholds) -> the `trust.Decision`s that decide it
    on this evidence (or `trust.Decisions`, with cases only shown); `judge` applies the rule
    to them after the check, which returns only its outcome and reason. seed_text: the
    seed's own words for this claim, quoted exactly from the article (Chinese); statement is
    their English gist, and the ledger's "seed says" column shows the quote. evidence_from:
    another claim's id whose evidence this claim is judged from (one measurement, two
    statements: C5c, the seed's cause, reads C5b's 2x2); where a results file holds no verdict
    of its own, the ledger judges it from that claim's saved evidence (`tables.current_verdicts`).
    """

    id: str
    chapter: str
    seed: str
    section: str
    statement: str
    confirm_if: str = ""
    refute_if: str = ""
    evidence_keys: tuple[str, ...] = ()
    thresholds: Mapping[str, float] = field(default_factory=dict)
    check: Check | None = None
    deterministic: bool = False
    section_zh: str = ""
    seed_setting: str = ""
    timing_based: bool = False
    decisions: trust.DecisionsFn | None = None
    seed_text: str = ""
    evidence_from: str = ""

    def __post_init__(self) -> None:
        if self.timing_based and self.deterministic:
            raise ClaimError(f"{self.id}: a claim is either deterministic or timing-based, not both")
        if self.timing_based and self.check is not None and self.decisions is None:
            raise ClaimError(f"{self.id}: a timing-based claim declares its decisions (which ratio, "
                             "its spread, which threshold: decisions=...), so the trust rule "
                             "applies to it; its check cannot apply the rule itself")
        if self.decisions is not None and not self.timing_based:
            raise ClaimError(f"{self.id}: only a timing-based claim declares decisions "
                             "(timing_based=True)")

    @property
    def tested(self) -> bool:
        """Whether a chapter tests this claim yet (it has a check function)."""
        return self.check is not None

    def judge(self, evidence: Mapping, machine: str = "", form: str = SEED_FORM,
              kind: str = "") -> Verdict:
        """Compute this claim's verdict from measured evidence, with its thresholds.

        form: which form of the claim the evidence tests: SEED_FORM when it was measured
        in the seed's own setting, else a short description ("analogue: AMD EPYC, 2 threads, float32").
        kind: which kind of form (FORM_KINDS: ANALOGUE_KIND, DOCUMENTATION_KIND, NOT_MEASURED_KIND),
        said by the caller that knows what ran; left empty, the form's opening says it (`form_kind`).
        """
        from labkit.core import env

        if self.check is None:
            raise ClaimError(f"{self.id} is not tested yet (chapter {self.chapter}); "
                             "it is listed in the ledger as 'not yet tested'")
        if not isinstance(evidence, Mapping) or not evidence:
            raise ClaimError(f"{self.id}: judge() needs the measured evidence as a dict "
                             f"with keys {list(self.evidence_keys)}, got {evidence!r}")
        missing = [k for k in self.evidence_keys if k not in evidence]
        if missing:
            raise ClaimError(f"{self.id}: evidence lacks {missing}; measure them and pass "
                             f"a dict with keys {list(self.evidence_keys)}")
        if not isinstance(form, str) or not form.strip():
            raise ClaimError(f"{self.id}: form must name the form judged, e.g. claims.SEED_FORM "
                             "or 'analogue: AMD EPYC, 2 threads, float32'")
        outcome, reason, depends_on = self.check(evidence, self.thresholds)
        if self.timing_based:  # the whole trust rule, whatever the check returned
            decided = trust.declared(self.decisions(evidence, self.thresholds))  # type: ignore[misc]
            outcome, reason, depends_on = trust.apply((outcome, reason, depends_on), evidence,
                                                      decided)
        return Verdict(self.id, outcome, reason, dict(evidence), dict(self.thresholds),
                       depends_on, machine or env.device_key(), form.strip(), issued_by=_TOKEN,
                       kind=kind)

    def _repr_html_(self) -> str:
        """The card, in two visible lines: the claim, and the rule that confirms it (with a
        link to the chapter's trust rule when a timing decides it). What refutes it or makes it
        depend, the seed's setting, the source (article and section) and the named thresholds
        are folded under it: the verdict card that follows shows the outcome and the numbers
        that decided it, so the card itself need not be read twice (issue 37: less to read)."""
        trust_link = (f" <small>(<a href='#{RULES_ANCHOR}' title='{html.escape(TRUST_RULE, quote=True)}'>"
                      "trust rule</a>)</small>" if self.timing_based else "")
        shown = (f"<b>{html.escape(self.id)}</b>: {html.escape(self.statement)}<br>"
                 f"<b>confirmed if</b> {html.escape(self.confirm_if or 'not stated')}{trust_link}")
        folded = [f"<b>refuted if</b> {html.escape(self.refute_if)}"] if self.refute_if else []
        folded.append(f"source: {articles.cite_html(self)}")
        if self.seed_setting:
            folded.append(f"the seed's setting: {html.escape(self.seed_setting)}")
        folded += [f"threshold {html.escape(k)}: {_short(v)}" for k, v in self.thresholds.items()]
        summary = "refuted if, source" if self.refute_if else "source"
        summary += ", thresholds" if self.thresholds else ""
        return (f"<div class='lt-claim'>{shown}<details><summary>{summary}</summary>"
                + "<br>".join(folded) + "</details></div>")

    def __repr__(self) -> str:
        rule = f"confirmed if {self.confirm_if}; refuted if {self.refute_if}"
        limits = ", ".join(f"{k}={_short(v)}" for k, v in self.thresholds.items())
        text = f"{self.id}: {self.statement}\n  {rule}" + (f"\n  thresholds: {limits}" if limits else "")
        return text + ("\n  trust rule: the chapter's (chapter.rules(); labkit.claims.TRUST_RULE)"
                       if self.timing_based else "")


def _short(value: object) -> str:
    """A threshold as a reader needs it: 4 significant figures for a float with a long fraction (a
    ratio computed from the seed's figures, 28.9 / 12.4, printed 2.3306451612903225 on C19's card);
    whole numbers (GradScaler's 65536.0, 2^24) and short ones as they are."""
    text = str(value)
    long_fraction = isinstance(value, float) and not value.is_integer() and len(text) > 8
    return f"{value:.4g}" if long_fraction else text
