"""Judge a machine's recorded verdicts again, from their recorded evidence, with today's rule.

A recorded verdict is saved as it was judged (outcome, reason, evidence); the ledger and the
chapters show it as today's rule judges that evidence (labkit.claims.tables.judged_today,
labelled "judged by today's rule from evidence recorded ..."). When the rule that judges changes (the trust rule moved inside `Claim.judge`, so C15, C18, C19, C24 and C25 now
follow it, and every flag is read from one key), this says which recorded outcomes today's
`Claim.judge` would give otherwise, and the numbers that decide each: the declared decisions
(ratio, spread, threshold) and the flags the rule read. Nothing is written. Usage:

    python scripts/rejudge_recorded.py                 # results/nvidia-h200.json
    python scripts/rejudge_recorded.py --machine nvidia-h200 --all
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labkit import claims  # noqa: E402
from labkit.claims import trust  # noqa: E402
from labkit.core import results  # noqa: E402


@dataclass
class Rejudged:
    """One recorded verdict beside today's judgement of its evidence."""

    claim_id: str
    old: claims.Verdict
    new: claims.Verdict | None
    deciding: str
    error: str = ""

    @property
    def changed(self) -> bool:
        return self.new is None or (self.old.outcome, self.old.depends_on) != (
            self.new.outcome, self.new.depends_on)


def deciding_numbers(claim: claims.Claim, evidence: dict) -> str:
    """The declared decisions and the flags the rule reads, as one line ('' if not timing-based)."""
    if not claim.timing_based or claim.decisions is None:
        return ""
    decided = trust.declared(claim.decisions(evidence, claim.thresholds))
    parts = [d.describe() for d in decided.decisions] or ["no ratio decides (a deterministic part did)"]
    flags = trust.flags_in(evidence)
    parts.append("flags: " + ("; ".join(f.describe() for f in flags) if flags else "none"))
    if evidence.get("shared_gpu"):
        parts.append("timed on a shared GPU")
    return " | ".join(parts)


def rejudge(machine: str) -> list[Rejudged]:
    """Every recorded verdict of a registered, tested claim on `machine`, judged again."""
    found = []
    for claim_id, old in claims.saved_verdicts(machine).items():
        claim = claims.get(claim_id)
        if not claim.tested:
            continue
        evidence = dict(old.evidence)
        try:
            new = claim.judge(evidence, machine=old.machine or machine, form=old.form)
            found.append(Rejudged(claim_id, old, new, deciding_numbers(claim, evidence)))
        except (claims.ClaimError, KeyError, TypeError, ValueError) as error:
            found.append(Rejudged(claim_id, old, None, "", f"{type(error).__name__}: {error}"))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", default=results.DEFAULT_REFERENCE)
    parser.add_argument("--all", action="store_true", help="list unchanged verdicts too")
    args = parser.parse_args()
    found = rejudge(args.machine)
    if not found:
        print(f"nothing recorded for {args.machine}")
        return 1
    changed = [r for r in found if r.changed]
    print(f"{args.machine}: {len(found)} recorded verdicts judged again, {len(changed)} changed")
    for r in found if args.all else changed:
        new = r.new.label if r.new else f"cannot judge: {r.error}"
        print(f"\n{r.claim_id}: {r.old.label} -> {new}")
        if r.deciding:
            print(f"  deciding: {r.deciding}")
        print(f"  recorded reason: {r.old.reason}")
        if r.new is not None and r.new.reason != r.old.reason:
            print(f"  new reason: {r.new.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
