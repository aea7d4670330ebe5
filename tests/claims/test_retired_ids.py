"""Retired claim ids (a claim split into lettered ones: C5, C14, C15, C21) leave the recorded
reference, and a results file that still holds one (a machine's own file, an old checkout's
reference) loads everywhere without a crash: the ledger, a chapter's verdict table, recorded()."""

import json

import pytest

from labkit import claims
from labkit.core import results
from tests.chapters.ch06_ddp_layout_drift.test_claims import MEASURED_HERE
from tests.paths import ROOT

REFERENCE = ROOT / "results" / "nvidia-h200.json"
SPLIT = {"C5": ("C5a", "C5b", "C5c"), "C14": ("C14a", "C14b", "C14c"), "C15": ("C15a", "C15b", "C15c", "C15d"),
         "C21": ("C21a", "C21b"), "C7": ("C7a", "C7b")}
# A retired id the reference still holds because its chapter waits for its H200 re-record (strict:
# once the chapter leaves test_h200_copies.NOT_YET_RERECORDED, its old id must be gone)
AWAITING_RERECORD = {"C7": "03_memory_layouts"}  # split in session aa


def test_the_split_ids_are_registered_and_the_old_ones_are_not():
    for old, new in SPLIT.items():
        assert old not in claims.REGISTRY
        assert all(i in claims.REGISTRY for i in new), new


def test_the_recorded_reference_holds_no_retired_id():
    if not REFERENCE.exists():
        pytest.skip("no recorded reference")
    data = json.loads(REFERENCE.read_text())
    saved = [key.split(":", 1)[1] for entries in data["chapters"].values() for key in entries
             if key.startswith("verdict:")]
    assert saved, "the reference records no verdict at all"
    from tests.notebooks.test_h200_copies import NOT_YET_RERECORDED

    retired = sorted(set(saved) - set(claims.REGISTRY)
                     - {old for old, chapter in AWAITING_RERECORD.items() if chapter in NOT_YET_RERECORDED})
    assert not retired, f"verdicts under retired ids in {REFERENCE.name}: {retired}"


def test_old_ids_in_a_results_file_are_left_out_everywhere(tmp_path, monkeypatch, private_cache):
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv(results.REFERENCE_ENV, "old-box")  # record as an old reference would have
    payload = claims.get("C14a").judge(dict(MEASURED_HERE, backend="nccl"), machine="old-box").to_dict()
    for old, chapter in (("C15", "07_export_traps"), ("C21", "04_fusion"), ("C14", "06_ddp_layout_drift"),
                         ("C5", "02_contiguity_and_hidden_copies")):
        results.record(chapter, f"verdict:{old}", {**payload, "claim_id": old})
    results.record("06_ddp_layout_drift", "verdict:C14a", payload)
    monkeypatch.delenv(results.REFERENCE_ENV)
    recorded = claims.saved_verdicts("old-box")
    assert set(recorded) == {"C14a"}
    ledger = claims.ledger("old-box")
    rows = {r["claim"]: r for r in ledger.rows()}
    assert set(rows) == set(claims.REGISTRY) and rows["C15a"]["reference GPU"] == "nothing recorded yet"
    assert rows["C14a"]["reference GPU"].startswith("refuted")
    table = claims.table([], pending=["C15a", "C21a"], reference="old-box")
    assert [r["recorded reference"] for r in table.rows()] == ["nothing recorded yet for old-box"] * 2
    assert claims.recorded("C15a", "old-box") is None
