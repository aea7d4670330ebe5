"""The kind of form a verdict judged is a field of the verdict (Verdict.kind), set when it is
judged, saved with it, and read from the form's opening marker for records saved before it
existed. Review 2026-12-03h (chapters 05-07) item 5: the ledger tallied C15b, an analogue
measured on ONNX Runtime whose form also says TensorRT's binding was read from documentation,
as documentation (the word appeared in its form), and C15d, not measured, as an analogue."""

import json

import pytest

from labkit import claims
from labkit.chapters.ch07_export_traps import claims as ch07
from labkit.core import results
from tests.claims.test_ledger import _results_here
from tests.paths import ROOT

ALL_CORRECT = {"NCHW": "correct", "channels_last": "correct", "transposed view": "correct"}
BINDING = {"path": "ONNX Runtime CPU, IOBinding of data_ptr",
           "outcomes": {**ALL_CORRECT, "channels_last": "silently wrong", "transposed view": "silently wrong"}}
# what chapter 07 measures on the reference H200: no TensorRT, the IOBinding analogue on ONNX
# Runtime's CPU provider while the chapter runs on cuda:0
H200_LIKE = dict(trace_records_strides=True, trace_keeps_contiguous=True, trace_outcomes=ALL_CORRECT,
                 tensorrt_ran=False, tensorrt_fallback_devices=[], tensorrt_transposed_ratio=None,
                 tensorrt_outcomes={}, trace_transposed_ratio=1.02, pointer_binding=BINDING,
                 device="cuda:0", torch="2.11.0")


def _judged(claim_id: str) -> claims.Verdict:
    return claims.get(claim_id).judge(H200_LIKE, machine="test", form=ch07.form_of(claim_id, H200_LIKE))


def _committed(claim_id: str) -> dict:
    """The reference H200's saved payload of a claim, as committed (results/nvidia-h200.json)."""
    data = json.loads((ROOT / "results" / "nvidia-h200.json").read_text())
    return next(entries[f"verdict:{claim_id}"]["payload"] for entries in data["chapters"].values()
                if f"verdict:{claim_id}" in entries)


def test_c15b_measured_on_an_analogue_is_an_analogue_though_its_form_names_documentation():
    verdict = _judged("C15b")
    assert "read from documentation" in verdict.form  # TensorRT's half: said in the form...
    assert verdict.kind == claims.ANALOGUE_KIND  # ...but what was done is a measured analogue
    assert verdict.to_dict()["kind"] == claims.ANALOGUE_KIND  # saved with it
    # the verdict table still says part of it was read, not measured
    assert "C15b: read from documentation, in whole or part" in claims.table([verdict]).structure()


def test_c15d_not_measured_is_not_counted_as_a_measured_analogue():
    verdict = _judged("C15d")
    assert verdict.form.startswith("not measured") and verdict.kind == claims.NOT_MEASURED_KIND
    assert "C15d: not measured here" in claims.table([verdict]).structure()
    assert _judged("C15c").kind == claims.DOCUMENTATION_KIND


@pytest.mark.parametrize(("claim_id", "kind"), [("C15b", claims.ANALOGUE_KIND), ("C15c", claims.DOCUMENTATION_KIND),
                                                ("C15d", claims.NOT_MEASURED_KIND)])
def test_records_saved_before_the_kind_existed_get_it_from_their_forms_opening(claim_id, kind):
    payload = dict(_committed(claim_id))
    payload.pop("kind", None)  # as saved before Verdict.kind (the 21:52 H200 record)
    assert claims.Verdict.from_dict(payload).kind == kind
    assert claims.Verdict.from_dict({**payload, "kind": kind}).kind == kind


def test_the_ledger_tallies_c15b_as_an_analogue_and_c15d_as_not_measured(tmp_path, monkeypatch, private_cache):
    _results_here(tmp_path, monkeypatch)
    claims.save([_judged(i) for i in ch07.C15_IDS], "07_export_traps")
    ledger = claims.ledger()
    rows = {r["claim"]: r for r in ledger.rows()}
    assert [rows[i]["form here"] for i in ch07.C15_IDS] == [
        claims.ANALOGUE_KIND, claims.ANALOGUE_KIND, claims.DOCUMENTATION_KIND, claims.NOT_MEASURED_KIND]
    tally = ledger.tally("this machine")
    assert sum(tally[claims.ANALOGUE_KIND].values()) == 2  # C15a and C15b
    assert sum(tally[claims.DOCUMENTATION_KIND].values()) == 1  # C15c
    assert sum(tally[claims.NOT_MEASURED_KIND].values()) == 1  # C15d
    saved = results.load()["chapters"]["07_export_traps"]["verdict:C15b"]["payload"]
    assert saved["kind"] == claims.ANALOGUE_KIND


def test_an_explicit_kind_wins_over_the_forms_wording_and_is_checked():
    evidence = dict(H200_LIKE)
    read = claims.get("C15b").judge(evidence, machine="t", form="TensorRT's binding, from its guide",
                                    kind=claims.DOCUMENTATION_KIND)
    assert read.kind == claims.DOCUMENTATION_KIND
    assert claims.Verdict.from_dict(read.to_dict()).kind == claims.DOCUMENTATION_KIND
    with pytest.raises(claims.ClaimError, match="kind must be one of"):
        claims.get("C15b").judge(evidence, machine="t", form="x", kind="guessed")
    with pytest.raises(claims.ClaimError, match="goes with the form"):
        claims.get("C15b").judge(evidence, machine="t", form="an analogue", kind=claims.SEED_KIND)
