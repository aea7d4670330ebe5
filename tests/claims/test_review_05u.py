"""Review 2026-12-05u item 3: C24's fresh runs in the ledger. Runs that gave the verdict read
'as the verdict', said together ('runs 2-3'), not 'the same, the same'; a run part of whose
evidence chapter 08's keep rule decided before its reading over a moved base changed (981ef6e)
says so, and the fold says today's rule re-judges the claim, not the ladder's decisions."""

import copy

from labkit.chapters.ch08_inference_ladder import keep
from labkit.chapters.ch08_inference_ladder import reproduce as ch08_reproduce
from labkit.claims import reproduced


def test_runs_are_said_together_and_as_the_verdict():
    assert reproduced.listed(("depends (on noise)", "the same", "the same")) == \
        "run 1: depends (on noise); runs 2-3: as the verdict"
    assert reproduced.listed(("the same", "refuted", "the same")) == \
        "run 1: as the verdict; run 2: refuted; run 3: as the verdict"
    assert reproduced.listed(("refuted",) * 3) == "refuted in all 3"


def _timing(moved=True, iqr=None):
    t = {"gain": (1.3, 1.29, 1.31), "base_images_per_s": 10_000.0, "base_moved": "base re-timed -20%" if moved else "",
         "images_per_s": 13_370.0}
    return t if iqr is None else {**t, "iqr_share": iqr}


def _record(*runs):
    """A reproduce record shaped like results/reproduce/nvidia-h200-08_inference_ladder.json."""
    return {"evidence": [{"C24": {"rungs": rungs}} for rungs in runs]}


def test_a_step_not_decidable_under_the_earlier_reading_is_found_per_run():
    graphs = {"name": "CUDA Graphs", "judged_by": keep.NOT_DECIDABLE, "timings": [_timing()] * 3}
    retried = {**graphs, "name": "CUDA Graphs, retried"}
    kept = {"name": "CUDA Graphs", "judged_by": "wall", "kept": True, "timings": [_timing()] * 2}
    today = {**graphs, "timings": [_timing(iqr=0.001)] * 3}         # today's reading: its IQRs kept
    held = {**graphs, "timings": [_timing(), _timing(moved=False)]}  # decided on a re-time that held
    assert keep.earlier_reading(graphs) and not keep.earlier_reading(today)
    assert not keep.earlier_reading(held) and not keep.earlier_reading({"name": "x"})
    data = _record([graphs, retried], [kept], [today], [])
    assert ch08_reproduce.earlier_rule(data) == {1: ["CUDA Graphs"]}
    assert ch08_reproduce.earlier_rule(data, "C23") == {}
    assert ch08_reproduce.earlier_rule({}) == {} and ch08_reproduce.earlier_rule(None) == {}
    # an old record without C24 evidence or rungs: nothing, no error
    assert ch08_reproduce.earlier_rule({"evidence": [{}, None, {"C24": {}}]}) == {}
    assert reproduced.earlier_rule("C24", data) == {1: ch08_reproduce.earlier_rule_said(["CUDA Graphs"])}
    assert reproduced.earlier_rule("C10", data) == {}     # chapter 02 has no such hook


# The 2026-12-05 17:52 record these tests were written on, kept where a replaced record goes
# (results/reproduce/superseded/, read by ch08's last_reproduced); the 2026-12-06 06:52 record
# that replaced it reproduced C24 3 of 3, with no run decided by the earlier keep rule.
SUPERSEDED_1752 = (reproduced.record_path("nvidia-h200", "08_inference_ladder").parent / "superseded"
                   / "nvidia-h200-08_inference_ladder-2026-12-05T17-52.json")


def test_the_committed_c24_record_marks_run_1_and_says_runs_2_3_as_the_verdict():
    from labkit.claims import tables
    from labkit.core import results

    data = reproduced.load_record(SUPERSEDED_1752)

    reference = results.load(results.DEFAULT_REFERENCE) or {}
    theirs, _ = tables.current_verdicts(reference, recorded=True)
    mark = reproduced.compare(theirs["C24"], data, tables._recorded_at(reference).get("C24", ""))
    assert mark.disagrees
    assert ("its CUDA Graphs not decidable under the keep rule before 2026-12-05 18:43 UTC (981ef6e), "
            "not yet re-run under today's; runs 2-3: as the verdict)") in mark.text
    assert "the same" not in mark.text and "run 2: the same; run 3: the same" in mark.detail
    assert "(the claim's rule; the chapter's decisions inside that evidence stand as each run made them)" in mark.detail
    # with today's IQRs in every timing, no run is marked and the fold says nothing more
    fresh = copy.deepcopy(data)
    for run in fresh["evidence"]:
        for rung in run["C24"]["rungs"]:
            for timing in rung.get("timings") or []:
                timing["iqr_share"] = 0.001
    again = reproduced.compare(theirs["C24"], fresh, tables._recorded_at(reference).get("C24", ""))
    assert "keep rule before" not in again.text and "the claim's rule" not in again.detail


def test_08s_reference_note_says_which_rule_left_graphs_undecided():
    import json

    old = ch08_reproduce.c24_runs(json.loads(SUPERSEDED_1752.read_text()))
    assert not old["agree"]
    assert "CUDA Graphs not decidable in 1 of 3 (under the keep rule before 981ef6e)" in ch08_reproduce.why_differs(old)
    # today's record agrees: the note says so, with no why
    note = ch08_reproduce.reference_note("nvidia-h200")
    assert note.startswith("Recorded reference (nvidia-h200): reproduced by 3 fresh runs") and "why:" not in note
