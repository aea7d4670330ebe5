"""The seed articles' claims, and verdicts computed from measured evidence.

    from labkit import claims
    claims.get("C1")                                   # the claim and its rule, before measuring
    verdict = claims.get("C1").judge({"shape": [4, 3], "stride": [1, 4], "is_contiguous": False})
    claims.table([verdict])                            # HTML in a notebook; .structure() for nbval

Where things live: `core` (what a Claim and a Verdict are), `trust` (the one rule for when a
flagged timing or a shared GPU holds a verdict back: `Claim.judge` applies it to the decisions
every timing-based claim declares; `trust.stated_ratio` gates a sentence that states a ratio
by it; evidence carries flags under `trust.FLAGS_KEY`), `chNN` (each chapter's claims:
statement, rule, thresholds and check on one screen), `registry` (all of them), `tables`
(verdict tables, the ledger, saving and the recorded reference).
"""

from labkit.claims.core import (
    ANALOGUE_KIND,
    CONFIRMED,
    DEPENDS,
    DOCUMENTATION_KIND,
    FORM_KINDS,
    NOISE,
    NOISE_FLAGGED,
    NOT_MEASURED_KIND,
    OUTCOMES,
    REFUTED,
    SEED_FORM,
    SEED_KIND,
    SEED_PIPELINE,
    SEED_STRIDES,
    Claim,
    ClaimError,
    Verdict,
    band,
    form_kind,
)
from labkit.claims.registry import REGISTRY, for_chapter, get
from labkit.claims.tables import (
    LEDGER_COLUMNS,
    VERDICT_COLUMNS,
    Ledger,
    RecordedEvidence,
    VerdictTable,
    chapters_ran,
    finding,
    ledger,
    recorded,
    recorded_evidence,
    recorded_verdicts,
    save,
    saved_verdicts,
    table,
)
from labkit.claims.trust import TRUST_RULE

__all__ = [
    "CONFIRMED", "DEPENDS", "NOISE", "NOISE_FLAGGED", "TRUST_RULE", "OUTCOMES", "REFUTED", "SEED_FORM", "SEED_PIPELINE",
    "SEED_STRIDES", "Claim", "ClaimError", "Verdict", "band", "REGISTRY", "for_chapter", "get",
    "LEDGER_COLUMNS", "VERDICT_COLUMNS", "Ledger", "RecordedEvidence", "VerdictTable", "ledger",
    "recorded", "recorded_evidence", "recorded_verdicts", "save", "saved_verdicts", "table",
    "FORM_KINDS", "chapters_ran", "finding", "form_kind",
    "SEED_KIND", "ANALOGUE_KIND", "DOCUMENTATION_KIND", "NOT_MEASURED_KIND",
]
