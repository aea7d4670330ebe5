"""Less to read (issue 37): a claim card links to the chapter's trust rule instead of repeating
it, and a verdict card shows its outcome and deciding numbers with the evidence folded."""

from __future__ import annotations

import re

from labkit import claims, session
from labkit.claims import tables
from tests.claims.test_claim_cards import visible

RULE_WORDS = len(claims.TRUST_RULE.split())


def words(markup: str) -> int:
    """Words a reader sees without opening a <details>: its summary counts, its body not."""
    closed = re.sub(r"(?is)<details>\s*<summary>(.*?)</summary>.*?</details>", r" \1 ", markup)
    return len(" ".join(visible(closed).text).split())


def test_a_timing_claim_card_links_to_the_rule_and_keeps_it_as_a_tooltip():
    claim = claims.get("C9")
    card = visible(claim._repr_html_())
    assert claims.TRUST_RULE not in " ".join(card.text)
    assert claims.TRUST_RULE in card.titles
    assert f"href='#{session.RULES_ANCHOR}'" in claim._repr_html_()
    assert f"id='{session.RULES_ANCHOR}'" in session.Rules()._repr_html_()
    assert claims.TRUST_RULE not in repr(claim) and "chapter.rules()" in repr(claim)
    assert "trust rule" not in claims.get("C5a")._repr_html_()  # deterministic: no rule to link


def test_a_verdict_card_shows_its_numbers_and_folds_its_evidence():
    verdict = claims.get("C5a").judge({"fresh_checked": 24, "fresh_misaligned": 0, "views_checked": 5,
                                       "contiguous_views_misaligned": 2,
                                       "view_offsets": {"x[1:]": 4, "x[3:]": 12}})
    card = claims.table([verdict])
    page = card._repr_html_()
    assert "<details><summary>statement, source, reason, evidence</summary>" in page
    assert verdict.label in page and tables.deciding(verdict.reason)[:40] in page
    shown = words(page)
    assert shown < len(re.sub(r"<[^>]+>", " ", page).split())  # the evidence is folded away
    assert all(column in page for column in claims.VERDICT_COLUMNS)
    summary = claims.table([verdict], summary=True).card()
    assert "deciding numbers" not in summary.columns and len(summary.folded) == 1


def test_deciding_numbers_leave_the_trust_notes_to_the_folded_reason():
    reason = ("transposed: 3.77x slower than a plain copy; flagged, but too small to carry its "
              "ratio across the threshold: plain copy (noisy; could be off by 12%)")
    assert tables.deciding(reason) == ("transposed: 3.77x slower than a plain copy "
                                       "(flags folded below)")
    long = "x " * 400
    assert tables.deciding(long).endswith("x... (more below)")  # cut at a word's end
    assert len(tables.deciding(long)) <= tables.NUMBERS_CHARACTERS
    numbers = "ratio 1.80x against 1.00x; " * 20
    assert not re.search(r"\d\.\.\.", tables.deciding(numbers))  # never inside a number
    assert RULE_WORDS > 100  # what each card no longer repeats


def test_a_claim_not_judged_here_prints_the_reference_reason_once_and_labelled():
    """Review 2026-12-06z 03-04 item 7: 04's CPU fold printed the H200's C18 reason under 'this
    machine' ('reason: graph replay: launch gap ...'), then again under the recorded reference."""
    shown = tables.table([], pending=["C18"])  # C18's recorded H200 verdict, read from results/
    ref = shown.recorded["C18"]
    folded = "\n".join(text for _, text in shown.card().folded)
    assert "this machine: needs a GPU: not measured here\nreason: not judged here" in folded
    assert folded.count(ref.reason) == 1
    assert "recorded reference (nvidia-h200" in folded
