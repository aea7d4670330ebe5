"""Review 2026-12-04i items 2, 3 and 11 on "Past the defaults", read from the committed records
(results/h200_past_defaults/): the fused-epilogue rung's device time per class beside the top
rung's, both batch-1024 measurements with the rerun as the conservative one and its gain named
host idle (device gain 1.001), what bound the best rung, and the FP8 per-channel row's gate."""

import shutil
import types
from pathlib import Path

from labkit.chapters.ch08_inference_ladder import past_view

# the call of 2026-12-05 (issue 41's D1), whose prologue rung became the best gated rung
PROLOGUE_CALL = "past_defaults_prologue.json"


def _standing(folder: Path | None = None) -> str:
    main = past_view.recorded_path() if folder is None else folder / past_view.recorded_path().name
    data = past_view.with_later_calls(past_view.load(main), main)
    return str(past_view.standing(data, again=past_view.reruns(main)))


def _records_before_the_prologue_call(tmp_path: Path) -> Path:
    """The committed records as they stood before the 2026-12-05 call: batch 1024 the best rung."""
    source = past_view.recorded_path().parent
    for path in source.iterdir():
        if path.is_file() and path.name != PROLOGUE_CALL and not path.name.startswith(
                PROLOGUE_CALL.removesuffix(".json")):
            shutil.copy(path, tmp_path / path.name)
    return tmp_path


def test_the_fused_rung_shows_its_time_per_class_beside_the_top_rungs(tmp_path):
    said = _standing(_records_before_the_prologue_call(tmp_path))
    # 7.77 ms at 57/40 against 7.41 ms at 85/12: elementwise 3.1 -> 0.9 ms, GEMM/conv 4.4 -> 6.3 ms
    assert "top rung GEMM/conv 4.4, elementwise 3.1 of 7.77" in said
    assert "Triton fused epilogue, compiled * GEMM/conv 6.3, elementwise 0.9 of 7.41" in said
    assert "removed 2.2 ms of elementwise tails; its GEMM/conv time rose 1.9 ms" in said
    assert "net 5% less device time" in said and "different calls" in said
    assert "efficiency lost there" not in said
    # with the 2026-12-05 call the fused rung read is that call's (7.35 ms at 85/12)
    now = _standing()
    assert "Triton fused epilogue, compiled * GEMM/conv 6.3, elementwise 0.9 of 7.35" in now
    assert "removed 2.3 ms of elementwise tails; its GEMM/conv time rose 1.9 ms" in now


def test_both_batch_1024_measurements_are_shown_the_rerun_as_the_conservative_one(tmp_path):
    """Where batch 1024 is the best rung (the records before 2026-12-05's prologue call)."""
    said = _standing(_records_before_the_prologue_call(tmp_path))
    assert "batch 1024: 33,254 images/s; measured again: 31,783 (the gap below uses 31,783)" in said
    assert "1.043x over its call's top rung, against 33,254 and 1.077x here; the conservative figure is this one" in said
    assert "moved 1.001x, so the gain is host idle removed, not GPU work" in said
    # the gap is split over the conservative figure: 31,783 images/s is 260 TFLOP/s, not 272
    assert "the best rung runs 260 TFLOP/s" in said


def test_what_bound_the_best_rung_is_said_in_one_line(tmp_path):
    said = _standing(_records_before_the_prologue_call(tmp_path))
    assert ("What bound batch 1024: the device (GPU idle 1%, the host-bound line 30%); its device "
            "time: GEMM/conv 57%, elementwise 40%.") in said
    # the committed records now: the prologue rung of 2026-12-05, marked as a later call's
    now = _standing()
    assert "Triton prologue at batch 1024 *: 34,634 images/s" in now
    assert ("What bound Triton prologue at batch 1024 *: the device (GPU idle 3%, the host-bound line "
            "30%); its device time: GEMM/conv 90%, elementwise 7%.") in now
    assert "the best rung runs 283 TFLOP/s" in now


def test_the_fp8_per_channel_row_names_the_gate_that_passed_it():
    rows = str(past_view.rows_table(past_view.load())).splitlines()
    row = next(line for line in rows if line.startswith("FP8 per-channel weights"))
    assert "passed: 5.9e-02 (tol 0.12 bfloat16); on an earlier gate: 16 images" in row
    top = next(line for line in rows if line.startswith("top rung "))
    assert "earlier gate" not in top   # an fp16 rung far inside its tolerance says nothing more


def test_issue_41s_reproduce_check_is_said_from_its_record_and_its_lever_not_called_untimed(tmp_path):
    """The 2026-12-05 check (reproduce.py 08-past on the prologue at batch 2048) is printed
    under the table from results/reproduce/, and that lever is no longer 'not yet timed'."""
    rows = str(past_view.rows_table(past_view.with_later_calls(past_view.load(), past_view.recorded_path())))
    assert ("Reproduced? Triton prologue at batch 2048 in 3 fresh processes (benchmarks/reproduce.py "
            "08-past, recorded 2026-12-05 03:03 UTC") in rows
    assert "34,325-34,657 images/s, gated in 3 of 3, spread 1.0% (at most 5%)" in rows
    assert "at least 35,000 images/s in 0 of 3: its speed reproduced, the goal NOT reached." in rows
    assert f"Triton prologue at batch 2048: {past_view.UNTIMED}" not in rows
    # a learner's own record beside no such check: nothing said, the lever untimed as before
    folder = _records_before_the_prologue_call(tmp_path)
    own = past_view.with_later_calls(past_view.load(folder / "past_defaults.json"), folder / "past_defaults.json")
    assert own["reproduced"] is None and "Reproduced?" not in str(past_view.rows_table(own))
    check = {"lever": "x", "runs": [{"images_per_s": 36_000.0, "gated": True}] * 3, "reproduced": True,
             "spread": 0.0, "max_spread": 0.05, "goal_images_per_s": 35_000, "held": 3,
             "recorded_at": "2027-01-01 00:00", "file": "f.json"}
    assert past_view.reproduce_line(check).endswith("at least 35,000 images/s in 3 of 3: reproduced.")
    # a rung that missed the goal is not called unreproduced for its speed; one that was not
    # gated every time, or spread too wide, is
    short = {**check, "runs": [{"images_per_s": 34_000.0, "gated": True}] * 3, "reproduced": False, "held": 0}
    assert past_view.reproduce_line(short).endswith("in 0 of 3: its speed reproduced, the goal NOT reached.")
    assert past_view.reproduce_line({**short, "spread": 0.06}).endswith("in 0 of 3: NOT reproduced.")
    refused = {**short, "runs": [{"images_per_s": 34_000.0, "gated": True}] * 2 + [{"gated": False}]}
    assert past_view.reproduce_line(refused).endswith(": NOT reproduced.")


def test_the_records_top_rung_is_compared_with_the_ladders_own_where_one_ran_on_a_gpu():
    """Review 2026-12-05p 08 item 6c: the section said 'its top may differ' under a page whose
    ladder had kept no CUDA Graphs; given the ladder's top rung, it says what differs."""
    from labkit.chapters.ch08_inference_ladder import ladder

    data = past_view.load()
    record = dict(data["top_settings"])
    assert past_view.top_note(data).endswith("the ladder above keeps its own steps, so its top may differ.")
    same = types.SimpleNamespace(settings=ladder.Settings(**record), images_per_s=30_687.0)
    assert "the ladder above reached the same settings (30,687 images/s here" in past_view.top_note(data, same)
    other = types.SimpleNamespace(settings=ladder.Settings(**{**record, "cuda_graphs": False}),
                                  images_per_s=30_687.0)
    note = past_view.top_note(data, other)
    assert "the ladder above's top differs: cuda_graphs=False (record: True) (30,687 images/s here, " in note
    top = next(r for r in data["rows"] if r["name"] == "top rung")
    assert f"{top['images_per_s']:,.0f} in the record" in note
    assert past_view.top_note({"rows": []}) == ""
    cpu = types.SimpleNamespace(name="batch 16", settings=ladder.Settings(**{**record, "dtype": "float32"}),
                                images_per_s=302.0)
    assert past_view.top_note(data, cpu, on_gpu=False).endswith(
        "; the ladder above ran on this CPU (its top: batch 16, 302 images/s), not on the record's GPU.")
    assert note in str(past_view.rows_table(data, "", other))


def test_a_check_whose_runs_shared_a_triton_cache_says_so():
    check = {"lever": "x", "runs": [{"images_per_s": 36_000.0, "gated": True}] * 3, "reproduced": True,
             "spread": 0.0, "max_spread": 0.05, "goal_images_per_s": 35_000, "held": 3,
             "recorded_at": "2027-01-01 00:00", "file": "f.json"}
    assert "in 3 fresh processes (benchmarks" in past_view.reproduce_line(check)
    shared = past_view.reproduce_line({**check, "shared_triton_cache": True})
    assert "in 3 fresh processes, sharing one Triton kernel cache (benchmarks" in shared
