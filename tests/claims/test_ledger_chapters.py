""""Which chapters ran here" lists the course's chapters from the notebooks, not from the claims
registry (review 2026-12-03h, chapters 08-09-99, item 10: 00 and 09 test no claim, so they never
showed), and a chapter that records results without a 'ran' entry (00) shows as run."""

from labkit import claims
from labkit.core import results
from tests.claims.test_ledger import _results_here
from tests.paths import ROOT


def test_the_chapters_come_from_the_notebooks_with_00_and_09(tmp_path, monkeypatch, private_cache):
    _results_here(tmp_path, monkeypatch)
    ledger = claims.ledger(notebooks=ROOT / "notebooks")
    chapters = ledger.chapters()
    assert chapters == sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py")
                              if not p.stem.startswith("99"))
    assert chapters[0].startswith("00_") and any(c.startswith("09_") for c in chapters)
    assert not {c.chapter for c in claims.REGISTRY.values()} >= set(chapters)  # more than the registry names
    assert {r["here"] for r in ledger.ran_here()} == {"not run here yet"}


def test_a_chapter_that_records_without_a_ran_entry_shows_as_run(tmp_path, monkeypatch, private_cache):
    _results_here(tmp_path, monkeypatch)
    results.record("00_setup_check", "ceilings", {"fp32": 1.0})  # 00 never calls chapter.save()
    results.record("09_audit_your_model", "ran", {"machine": "gpu-box", "where": "local"})
    rows = {r["chapter"]: r["here"] for r in claims.ledger(notebooks=ROOT / "notebooks").ran_here()}
    assert rows["00"] == results.load()["machine"] and rows["09"] == "gpu-box"
    assert rows["01"] == "not run here yet"
