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


def test_a_full_stop_inside_a_quoted_error_does_not_end_the_finding():
    """Review 2026-12-05t 99 item 5: C8a's reason quotes torch's error, whose own full stops
    ended the finding inside the bracket: the row read 'refuted | the seed's example holds
    (view(-1, 4) raised RuntimeError: ... subspaces' and lost the clause that refutes it."""
    from types import SimpleNamespace

    from labkit.claims.tables import first_sentence

    reason = ("the seed's example holds (view(-1, 4) raised RuntimeError: view size is not compatible "
              "with input tensor's size and stride (at least one dimension spans across two contiguous "
              "subspaces). Use .reshape(...) instead.), but the rule does not: view(3, 2, 2, 2) of the "
              "same non-contiguous tensor succeeded. view needs the dims it merges to be stride-compatible")
    assert first_sentence(reason).endswith("of the same non-contiguous tensor succeeded")
    shown = finding(SimpleNamespace(reason=reason))
    assert shown == ("the seed's example holds (...), but the rule does not: view(3, 2, 2, 2) of the "
                     "same non-contiguous tensor succeeded")
    # a reason whose first full stop is outside any bracket reads as before
    plain = SimpleNamespace(reason="1.59x by CUDA Graph replay (replay +0%). The rest follows.")
    assert finding(plain) == "1.59x by CUDA Graph replay (replay +0%)"


def test_a_huge_evidence_is_folded_without_its_largest_entries_named():
    """Review 2026-12-05t 08 item 6: C24's fold printed 65 KB of evidence (every rung's kernel
    tables). Past EVIDENCE_SHOWN_CHARS the largest entries are left out, named, and the rest
    (the deciding rung, the flags) shown; a small evidence is printed whole, as before."""
    from types import SimpleNamespace

    from labkit.claims import tables

    big = SimpleNamespace(claim_id="C24", evidence={"at_baseline_batch": {"name": "Conv-BN folding"},
                                                     "flags": [], "rungs": ["x" * 100] * 400})
    shown = tables._evidence_shown(big)
    assert '"at_baseline_batch"' in shown and '"flags"' in shown and '"rungs"' not in shown.split("not shown")[0]
    assert shown.endswith("key 'verdict:C24')") and "not shown here: rungs (" in shown
    assert len(shown) < tables.EVIDENCE_SHOWN_CHARS
    small = SimpleNamespace(claim_id="C7", evidence={"runs": [1, 2]})
    assert tables._evidence_shown(small).startswith("evidence: {") and "not shown" not in tables._evidence_shown(small)
