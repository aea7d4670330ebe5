"""The ledger's "seed says" column shows the seed's own words (issue 39): every claim quotes
its sentence from the seed (`Claim.seed_text`, exactly, as the article has it), the ledger row
shows that quote, and its English gist is not a rewording that adds a condition the seed
never states (C14b's "after DDP was built")."""

import re

import pytest

from labkit import claims
from labkit.chapters.ch02_contiguity_and_hidden_copies import claims as ch02
from tests.paths import ROOT

SEEDS = ROOT.parent / "shared" / "seeds"
GAP = " … "  # a quote of several passages joins them with this; each passage is quoted exactly


def _seed(claim: claims.Claim) -> str:
    path = SEEDS / claim.seed.removeprefix("seeds/")
    if not path.is_file():
        pytest.skip(f"the seed {claim.seed} is not in this checkout (the course does not ship it)")
    return path.read_text(encoding="utf-8")


def test_every_claim_quotes_the_seed():
    missing = [c.id for c in claims.REGISTRY.values() if not c.seed_text.strip()]
    assert not missing, f"claims without the seed's words (seed_text): {missing}"


@pytest.mark.parametrize("claim_id", list(claims.REGISTRY))
def test_each_quote_is_the_seeds_exact_words(claim_id):
    claim = claims.get(claim_id)
    text = _seed(claim)
    for passage in claim.seed_text.split(GAP):
        assert passage and passage in text, f"{claim_id}: not in {claim.seed}: {passage!r}"


@pytest.mark.parametrize("claim_id", list(claims.REGISTRY))
def test_the_ledgers_seed_says_is_the_quote(claim_id, tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path))
    row = {r["claim"]: r for r in claims.ledger().rows()}[claim_id]
    claim = claims.get(claim_id)
    assert row["seed says"] == claim.seed_text
    assert row["in English"] == claim.statement


def test_the_ledger_shows_the_quote_in_markdown_and_html(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path))
    ledger = claims.ledger()
    c14b = claims.get("C14b")
    assert c14b.seed_text.replace("\n", " ") in ledger.to_markdown()
    page = ledger.to_html()
    assert "静默数值偏差" in page and "in English: " in page


def test_c14bs_seed_says_no_longer_mentions_after_ddp_was_built(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path))
    row = {r["claim"]: r for r in claims.ledger().rows()}["C14b"]
    assert "after DDP was built" not in row["seed says"] + row["in English"]


def test_a_gist_with_a_number_has_it_in_the_quote_too():
    """A number in the English gist that the quote lacks is a rewording, not the seed's words
    (decimals as written, 84.2; a ratio the gist derives from the quote's numbers, 2.3x, is
    left out)."""
    wrong = []
    for claim in claims.REGISTRY.values():
        quote = claim.seed_text.replace(",", "")
        for number in re.findall(r"\d+\.\d+(?!\d|x)", claim.statement):
            if number not in quote:
                wrong.append((claim.id, number))
    assert not wrong, wrong


def test_c9s_form_says_the_dtlb_misses_are_not_measured():
    form = ch02.c9_form(on_gpu=False)
    # one style on both devices (review 2026-12-04m 00-02 item 10): 'not measured: ...' last
    assert form != claims.SEED_FORM and form.endswith("; not measured: the DTLB misses the seed counts")
    assert claims.form_kind(form) == "analogue"
    assert ch02.c9_form(on_gpu=True, analogue="analogue: NVIDIA H200 (the seed: a CPU)").endswith(
        "; not measured: the DTLB misses the seed counts")
    with pytest.raises(TypeError, match="on_gpu"):
        ch02.c9_form("cpu")  # type: ignore[arg-type]
