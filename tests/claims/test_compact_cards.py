"""Less to read, nothing lost (issue 37): the cards and the ledger show what decides a verdict
and fold the rest, counted the way scripts/chapter_minutes.py counts a learner's reading.

A claim card shows the claim and the rule that confirms it; the rest of its rule, its source
and thresholds are folded. A verdict card names the reference machine once and says what a
'depends' depends on in a word or two, the whole of it kept in the fold. The ledger shows one
compact row per claim (outcome and kind of form for each machine) with the rest of the row
folded, and opens one row in full on request; its handout keeps every column open."""

from __future__ import annotations

import html

import pytest

from labkit import claims
from labkit.claims import tables
from labkit.core import results
from tests.chapters.ch06_ddp_layout_drift.test_claims import MEASURED_HERE
from tests.claims.test_claim_cards import visible
from tests.paths import ROOT, load_script

minutes = load_script(ROOT / "scripts" / "chapter_minutes.py", "chapter_minutes")


def read(markup: str) -> str:
    """The text a learner reads without opening a fold, as the minutes estimate counts it."""
    reader = minutes._ReadText()
    reader.feed(markup)
    reader.close()
    return " ".join(" ".join(reader.read).split())


def test_a_claim_card_shows_the_claim_and_its_rule_and_folds_the_rest():
    claim = claims.get("C9")
    page = claim._repr_html_()
    shown = read(page)
    assert claim.statement.split(" (")[0] in shown and "confirmed if" in shown
    assert "refuted if" not in shown.replace("refuted if, source", "")  # only the fold's summary names it
    everything = " ".join(visible(page).text)
    assert html.escape(claim.refute_if) in page  # folded, not dropped
    assert "threshold strided_penalty_ratio: 1.5" in everything
    assert minutes.html_words(page)[0] < len(everything.split())


def test_a_claim_with_nothing_to_refute_folds_only_its_source():
    bare = claims.Claim("X1", "00_setup_check", claims.SEED_STRIDES, "1", "a bare claim",
                        confirm_if="it holds")
    page = bare._repr_html_()
    assert "<summary>source</summary>" in page and "refuted if" not in page


def test_short_labels_keep_what_a_verdict_depends_on_in_a_word_or_two():
    verdict = claims.get("C14b").judge(MEASURED_HERE, machine="cpu-box")  # depends on when
    assert verdict.outcome == claims.DEPENDS and ":" in verdict.depends_on
    assert tables.short_label(verdict) == f"depends (on {verdict.depends_on.split(':')[0]})"
    card = claims.VerdictTable([verdict])._repr_html_()
    assert tables.short_label(verdict) in read(card)
    assert verdict.depends_on not in read(card)
    assert html.escape(verdict.depends_on) in card  # folded, not dropped
    refuted = claims.get("C14a").judge(dict(MEASURED_HERE, backend="nccl"), machine="cpu-box")  # gloo: depends
    assert tables.short_label(refuted) == refuted.outcome


def test_a_verdict_card_names_the_reference_machine_once(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path / "results"))
    here = claims.get("C14b").judge(MEASURED_HERE, machine="cpu-box", form="CPU analogue")
    there = claims.Verdict.from_dict({**here.to_dict(), "machine": "NVIDIA_H200"})
    card = claims.VerdictTable([here], {"C14b": there}, "nvidia-h200")
    shown = read(card._repr_html_())
    assert "reference (recorded, nvidia-h200)" in shown and "the same" in shown
    assert shown.count("nvidia-h200") == 1 and "NVIDIA_H200" not in shown
    assert "CPU analogue" in shown  # the form judged stays visible
    two = claims.VerdictTable([here], {"C14b": claims.Verdict.from_dict({**there.to_dict(), "machine": "other"})},
                              "nvidia-h200")
    assert "(recorded, other)" in read(two._repr_html_())


def _ledger_with_two_verdicts(tmp_path, monkeypatch) -> claims.Ledger:
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.delenv("LABKIT_RECORD_REFERENCE", raising=False)
    claims.save([claims.get("C14b").judge(MEASURED_HERE, machine="cpu-box", form="CPU analogue: gloo")],
                "06_ddp_layout_drift")
    results.record("05_dataloader", "ran", {"machine": "cpu-box", "where": "local"})
    return claims.ledger(notebooks=ROOT / "notebooks")


def test_the_ledger_shows_one_compact_row_per_claim_and_folds_the_rest(tmp_path, monkeypatch, private_cache):
    ledger = _ledger_with_two_verdicts(tmp_path, monkeypatch)
    page = ledger._repr_html_()
    assert page.count("<tr>") == len(claims.REGISTRY) + 1
    assert page.count("<summary>more</summary>") == len(claims.REGISTRY)
    shown = read(page)
    row = {r["claim"]: r for r in ledger.rows()}["C14b"]
    assert row["in English"] in " ".join(visible(page).text)
    assert row["finding"] not in shown and row["finding"][:40] in page  # folded, one click away
    assert "needs a GPU" in shown and "(analogue)" in shown
    assert minutes.html_words(page)[0] < minutes.html_words(ledger.to_html())[0]
    handout = ledger.to_html()
    assert row["finding"][:40] in read(handout)  # the handout keeps every column open


def test_one_row_opens_in_full_and_an_unknown_id_is_named(tmp_path, monkeypatch, private_cache):
    ledger = _ledger_with_two_verdicts(tmp_path, monkeypatch)
    row = ledger.claim("C14b")
    assert row.column("column") == ["this machine", "reference GPU"]
    assert row.column("verdict [form judged]")[0].endswith("[CPU analogue: gloo]")
    assert row.folded and "the seed's own words" in row.folded[0][1]
    with pytest.raises(KeyError, match="no claim 'C99'"):
        ledger.claim("C99")
    assert [r[0] for r in ledger.machines().rows] == ["this machine", "reference GPU"]
    assert ledger.show([{"a": 1}], "t").columns == ["a"]


def test_the_handout_goes_to_the_cache_folder_by_default(tmp_path, monkeypatch, private_cache):
    ledger = _ledger_with_two_verdicts(tmp_path, monkeypatch)
    markdown, page = ledger.export()
    assert markdown.parent.name == "ledger" and markdown.is_file() and page.is_file()
