"""Review 2026-12-04m chapter 06 item 11: the ledger's finding (a reason's first sentence, at most
240 characters) cut C14c's before the nearest form's verdict ('...its nearest working form, the body
on e...'). The two verdicts now lead the reason, so the ledger's row shows both."""

from labkit.claims.tables import finding
from tests.chapters.ch06_ddp_layout_drift.test_claims import MEASURED_HERE, judge


def test_the_ledgers_c14c_finding_holds_both_verdicts():
    verdict = judge("C14c", **MEASURED_HERE)
    shown = finding(verdict)
    assert shown.startswith("As written: TypeError in the first backward; "
                            "nearest form (b3_seed_hook_per_param): refuted, gradients still wrong for 0.weight")
    assert not shown.endswith("...") and verdict.outcome == "refuted"
    # the detail follows, as before: the error's message and the fitted form (b2)
    assert "takes 1 positional argument" in verdict.reason.split(". ", 1)[1]
    assert "fitted to PyTorch's signature (b2_seed_hook_fitted)" in verdict.reason
