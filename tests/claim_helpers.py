"""Shared by the per-chapter claim tests: judge constructed evidence, check every outcome."""

from labkit import claims


def judge(claim_id, **evidence):
    return claims.get(claim_id).judge(evidence, machine="test")


def assert_outcomes_follow_the_evidence(claim_id, cases):
    """Each evidence dict gives the outcome it is keyed by; each check reaches both
    confirmed and refuted, and the verdict keeps its evidence and thresholds."""
    assert {"confirmed", "refuted"} <= set(cases), claim_id
    got = {expected: judge(claim_id, **ev).outcome for expected, ev in cases.items()}
    assert got == {expected: expected for expected in cases}
    verdict = judge(claim_id, **cases["refuted"])
    assert verdict.evidence == cases["refuted"]
    assert verdict.thresholds == dict(claims.get(claim_id).thresholds)
    assert verdict.reason and (verdict.outcome == "depends") == bool(verdict.depends_on)
