"""The claims machinery: registry, verdicts that cannot be typed in, tables, saving, the ledger.
Each chapter's checks are tested both ways in tests/chapters/chNN_name/test_claims.py."""

import importlib
import os

import pytest

from labkit import claims
from labkit.chapters.ch02_contiguity_and_hidden_copies import claims as ch02
from tests.chapters.ch01_strides_and_views.test_claims import CASES as CH01
from tests.chapters.ch02_contiguity_and_hidden_copies.test_claims import CASES as CH02
from tests.chapters.ch03_memory_layouts.test_claims import CASES as CH03
from tests.claim_helpers import judge
from tests.paths import ROOT

CASES = {**CH01, **CH02, **CH03}

CHAPTER_IDS = {
    "01_strides_and_views": ["C1", "C3", "C4", "C8a", "C8b", "C8c", "C11a", "C11b"],
    "02_contiguity_and_hidden_copies": ["C2", "C5a", "C5b", "C5c", "C6", "C9", "C10", "C12"],
    "03_memory_layouts": ["C7a", "C7b", "C22"],
}


def test_every_tested_claim_is_tested_both_ways():
    """Each chapter's tests/chapters/chNN_name/test_claims.py holds evidence for each outcome."""
    covered = set()
    for path in sorted((ROOT / "tests" / "chapters").glob("ch*/test_claims.py")):
        module = importlib.import_module(f"tests.chapters.{path.parent.name}.test_claims")
        covered |= set(module.CASES)
    tested = {c.id for c in claims.REGISTRY.values() if c.tested}
    assert tested <= covered, f"claims with no both-ways test: {sorted(tested - covered)}"


def test_thresholds_decide_at_the_named_constant():
    just_over = ch02.COSTLY_RATIO * 1.01
    just_under = ch02.COSTLY_RATIO * 0.99
    make = lambda r: dict(cases=[dict(case="3-D", implicit_copy_bytes=1, implicit_median_s=r,  # noqa: E731
                                      explicit_median_s=1.0)])
    assert judge("C2", **make(just_over)).outcome == "confirmed"
    assert judge("C2", **make(just_under)).outcome == "refuted"


def test_band_says_noise_when_the_spread_straddles_the_threshold():
    """The rule every timing-based check shares (chapters test it on their own claims)."""
    assert claims.band(1.3, None, 1.2) == "above"
    assert claims.band(1.1, None, 1.2) == "below"
    assert claims.band(1.3, [1.1, 1.4], 1.2) == "noise"
    assert claims.band(1.3, [1.25, 1.4], 1.2) == "above"


def test_no_verdict_without_evidence():
    with pytest.raises(claims.ClaimError, match="needs the measured evidence"):
        claims.get("C1").judge({})
    with pytest.raises(claims.ClaimError, match="lacks"):
        claims.get("C1").judge({"stride": [1, 4]})
    with pytest.raises(claims.ClaimError, match="no element addresses"):
        judge("C3", elements_checked=0, element_formula_mismatches=0, byte_formula_mismatches=0)


def test_verdict_cannot_be_typed_in():
    with pytest.raises(claims.ClaimError, match="computed, never typed in"):
        claims.Verdict("C1", "confirmed", "because", {"stride": [1, 4]}, {})


def test_untested_claims_refuse_to_judge_and_are_listed():
    for claim in claims.REGISTRY.values():
        if claim.tested:
            continue
        with pytest.raises(claims.ClaimError, match="not tested yet"):
            claim.judge({"anything": 1})


def test_registry_ids_and_chapters():
    for chapter, ids in CHAPTER_IDS.items():
        assert [c.id for c in claims.for_chapter(chapter)] == ids
    with pytest.raises(claims.ClaimError, match="no claim 'C99'"):
        claims.get("C99")
    for claim in claims.REGISTRY.values():
        assert claim.seed.startswith("seeds/") and claim.section and claim.statement


SEEDS = ROOT.parent / "shared"


@pytest.mark.skipif(not (SEEDS / "seeds").is_dir(), reason="seed articles not beside the repo")
def test_each_claim_section_is_in_its_seed():
    for claim in claims.REGISTRY.values():
        text = (SEEDS / claim.seed).read_text()
        assert claim.section_zh, f"{claim.id} has no seed section title (section_zh)"
        heading = claim.section_zh.split(" (")[0]
        missing = [word for word in heading.split() if word not in text]
        assert not missing, (claim.id, heading, missing)


def test_table_structure_hides_timing_verdicts():
    verdicts = [judge("C1", **CASES["C1"]["confirmed"]), judge("C2", **CASES["C2"]["refuted"])]
    table = claims.VerdictTable(verdicts, pending=["C10"])
    text = table.structure()
    assert "C1: confirmed" in text
    assert "C2: measured (varies by machine)" in text
    assert "refuted" not in text
    assert "C10: no verdict here" in text
    html = table._repr_html_()
    assert all(column in html for column in claims.VERDICT_COLUMNS)


def test_save_and_read_back_as_recorded(tmp_path, monkeypatch, private_cache):
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("LABKIT_RECORD_REFERENCE", "nvidia-h200")
    verdict = judge("C4", **CASES["C4"]["confirmed"])
    claims.save([verdict], "01_strides_and_views")
    assert (tmp_path / "results" / "nvidia-h200.json").exists()
    back = claims.recorded("C4")
    assert back.recorded and back.outcome == "confirmed" and back.evidence == verdict.to_dict()["evidence"]
    assert claims.recorded("C1") is None
    shown = claims.recorded_evidence(["C4", "C1"])
    assert repr(shown).splitlines() == [
        "C4 on nvidia-h200 (recorded): confirmed -- permute(0,2,1) gives shape (2, 4, 3), strides (12, 1, 4)",
        "C1: nothing recorded yet for nvidia-h200"]
    assert "recorded evidence" in shown._repr_html_()
    monkeypatch.delenv("LABKIT_RECORD_REFERENCE")  # now a machine that reads the reference
    table = claims.table([judge("C4", **CASES["C4"]["refuted"])])
    assert "confirmed (recorded" in table.rows()[0]["recorded reference"]


def test_ledger_lists_every_claim(tmp_path, monkeypatch, private_cache):
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.delenv("LABKIT_RECORD_REFERENCE", raising=False)
    claims.save([judge("C1", **CASES["C1"]["refuted"])], "01_strides_and_views")
    rows = {r["claim"]: r for r in claims.ledger(notebooks=ROOT / "notebooks").rows()}
    assert set(rows) == set(claims.REGISTRY)
    assert rows["C1"]["this machine"] == "refuted [the seed's form]"
    assert rows["C1"]["reference GPU"] == "nothing recorded yet"
    assert rows["C2"]["this machine"].startswith("not run here yet: run 02_")
    assert rows["C1"]["notebook"] == "01_strides_and_views.py"
    assert "C1: chapter 01, tested" in claims.ledger().structure()
    # labkit never guesses where the notebooks are: without the folder, no row names one
    assert {r["notebook"] for r in claims.ledger().rows()} == {""}
    assert claims.ledger(notebooks=tmp_path).rows()[0]["notebook"] == ""


def test_ledger_says_why_machines_differ_and_exports(tmp_path, monkeypatch, private_cache):
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("LABKIT_RECORD_REFERENCE", "nvidia-h200")
    gpu = claims.get("C10").judge(CASES["C10"]["confirmed"], machine="NVIDIA_H200")
    claims.save([gpu], "02_contiguity_and_hidden_copies")
    monkeypatch.delenv("LABKIT_RECORD_REFERENCE")
    cpu = claims.get("C10").judge(CASES["C10"]["refuted"], machine="cpu-box",
                                  form="CPU analogue: float32")
    claims.save([cpu], "02_contiguity_and_hidden_copies")
    ledger = claims.ledger(notebooks=ROOT / "notebooks")
    row = {r["claim"]: r for r in ledger.rows()}["C10"]
    assert row["this machine"] == "refuted [CPU analogue: float32]"
    assert row["reference GPU"] == "confirmed [the seed's form]; no reproduce record"  # C10 is timing-based
    assert "device: cpu-box against nvidia-h200" in row["depends on / why they differ"]
    assert "form judged" in row["depends on / why they differ"]
    markdown, page = ledger.export(tmp_path / "handout")
    link = "02_contiguity_and_hidden_copies.py"  # from the handout's folder to the chapter itself
    base = os.path.relpath(ROOT / "notebooks", tmp_path / "handout")
    assert f"| C10 | [02]({base}/{link}) |" in markdown.read_text()
    assert (tmp_path / "handout" / base / link).is_file()
    text = page.read_text()
    assert f"href='{base}/{link}'" in text
    assert text.startswith("<!DOCTYPE html>") and "<script" not in text and "C10" in text
    assert ledger.counts("this machine")["refuted"] == 1


def test_reference_run_does_not_quote_itself(monkeypatch, tmp_path):
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("LABKIT_RECORD_REFERENCE", "nvidia-h200")
    row = claims.table([judge("C1", **CASES["C1"]["confirmed"])]).rows()[0]
    assert row["recorded reference"] == "this run"


NOTEBOOKS = ROOT / "notebooks"
CHAPTER_FILES = {"01_strides_and_views": "01_strides_and_views.py",
                 "02_contiguity_and_hidden_copies": "02_contiguity_and_hidden_copies.py",
                 "03_memory_layouts": "03_memory_layouts.py"}


@pytest.mark.parametrize("chapter", sorted(CHAPTER_FILES))
def test_each_chapter_judges_all_its_claims_and_saves_them(chapter):
    source = (NOTEBOOKS / CHAPTER_FILES[chapter]).read_text()
    assert f'chapter = session.open("{chapter}")' in source
    for claim_id in CHAPTER_IDS[chapter]:
        assert f'chapter.judge("{claim_id}", ' in source, (chapter, claim_id)
    assert "chapter.save()" in source


def test_a_card_shortens_only_a_long_fraction():
    from labkit.claims.core import _short

    assert _short(2.3306451612903225) == "2.331"  # C19's seed ratio
    assert (_short(2.0), _short(65536.0), _short(16777216.0), _short(0.05), _short(16)) == (
        "2.0", "65536.0", "16777216.0", "0.05", "16")
