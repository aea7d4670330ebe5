"""Review 2026-12-04i items 2, 3 and 11 on "Past the defaults", read from the committed records
(results/h200_past_defaults/): the fused-epilogue rung's device time per class beside the top
rung's, both batch-1024 measurements with the rerun as the conservative one and its gain named
host idle (device gain 1.001), what bound the best rung, and the FP8 per-channel row's gate."""

import shutil
import types
from pathlib import Path

from labkit.chapters.ch08_inference_ladder import past_view
from tests.paths import ROOT

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
    """Each call that measured the fused rung is read over that call's own top rung, every call
    said (review 2026-12-05t 08 item 4: 'net 5% less device time' rested on one of two calls)."""
    said = _standing(_records_before_the_prologue_call(tmp_path))
    # the call of 2026-12-03 22:19 alone: its top rung 7.88 ms at 56/40 against 7.41 ms at 85/12
    assert "in 1 call: call past_defaults_triton_compiled.json, 2026-12-03 22:19" in said
    assert "top rung GEMM/conv 4.4, elementwise 3.2 of 7.88; fused GEMM/conv 6.3, elementwise 0.9 of 7.41" in said
    assert "net 6% less device time" in said
    assert "efficiency lost there" not in said
    # with the 2026-12-05 call both calls are read, each over its own top rung
    now = _standing()
    assert "in 2 calls: call past_defaults_prologue.json, 2026-12-05 02:08" in now
    assert "of 8.05; fused GEMM/conv 6.3, elementwise 0.9 of 7.35" in now and "net 9% less" in now
    assert "call past_defaults_triton_compiled.json, 2026-12-03 22:19" in now and "net 6% less" in now
    # the core page's pointer takes the lower of the two calls, and says so
    assert past_view.fused_calls(past_view.recorded_with_later()) == 2
    assert f"{100 * past_view.fused_net(past_view.recorded_with_later()):.0f}" == "6"


def test_a_lever_measured_in_two_calls_is_one_row_kept_in_1_of_2_calls_both_named():
    """Review 2026-12-05t 08 item 4: 'Triton fused epilogue, compiled *' showed as two rungs,
    kept 1.051x (2026-12-03 22:19) and not kept 1.005x [0.994-1.038] (2026-12-05 02:08)."""
    data = past_view.with_later_calls(past_view.load(), past_view.recorded_path())
    rows = past_view.rows_table(data).rows
    fused = [r for r in rows if r[0].startswith("Triton fused epilogue, compiled")]
    assert len(fused) == 1 and fused[0][4] == "kept in 1 of 2 calls"
    assert "1.005x [0.994-1.038] over top rung (call past_defaults_prologue.json, 2026-12-05 02:08)" in fused[0][3]
    assert "1.051x [1.046-1.062] over top rung (call past_defaults_triton_compiled.json, 2026-12-03 22:19)" in fused[0][3]
    costs = past_view.cost_table(data)
    assert sum(r[0].startswith("Triton fused epilogue, compiled") for r in costs.rows) == 1
    # the 1x1 shape-by-shape timings are a pointer, not a table of timings
    said = " ".join(costs.notes)
    assert "the record's 'shapes'" in said and "cudnn + separate" not in said and " ms," not in said
    # synthetic: a lever kept in both calls, and one not kept in either
    def row(name, gain, call):
        return {"name": f"{name} {past_view.LATER}", "status": "measured", "images_per_s": 1.0,
                "gain": gain, "call": call}
    synthetic = {"rows": [{"name": "top rung", "status": "measured", "images_per_s": 1.0},
                          row("a", [1.1, 1.05, 1.12], "x.json, 2027-01-01 00:00"),
                          row("a", [1.08, 1.04, 1.1], "y.json, 2027-01-02 00:00"),
                          row("b", [0.9, 0.88, 0.92], "x.json, 2027-01-01 00:00"),
                          row("b", [1.0, 0.99, 1.01], "y.json, 2027-01-02 00:00")]}
    keeps = {r[0]: r[4] for r in past_view.rows_table(synthetic).rows}
    assert keeps == {"top rung": "-", "a *": "kept in 2 of 2 calls", "b *": "kept in 0 of 2 calls"}


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
    # judged on each run's best kept rung (review 2026-12-05u item 1), not the lever the call named
    assert ("Reproduced? the best kept rung of each of 3 fresh processes: Triton prologue at batch "
            "1024, in 3 of 3 (benchmarks/reproduce.py 08-past, recorded 2026-12-05 03:03 UTC") in rows
    assert "34,499-34,670 images/s, gated in 3 of 3, spread 0.5% (at most 5%)" in rows
    assert "at least 35,000 images/s in 0 of 3: its speed reproduced, the goal NOT reached." in rows
    assert f"Triton prologue at batch 2048: {past_view.UNTIMED}" not in rows
    # a learner's own record beside no such check: nothing said, the lever untimed as before
    folder = _records_before_the_prologue_call(tmp_path)
    own = past_view.with_later_calls(past_view.load(folder / "past_defaults.json"), folder / "past_defaults.json")
    assert own["reproduced"] == [] and "Reproduced?" not in str(past_view.rows_table(own))
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


def test_every_levers_check_is_said_and_one_check_cannot_overwrite_another():
    """Session aa: reproduce.py 08-past wrote one file whatever the lever, so D3's check of the wide
    tuning overwrote the batch-2048 lever's, and the page called that lever 'not yet timed'. Each
    lever's record has its own file; the page says every check, oldest first."""
    import importlib.util

    data = past_view.with_later_calls(past_view.load(), past_view.recorded_path())
    levers = [c["lever"] for c in data["reproduced"]]
    assert levers == ["Triton prologue at batch 2048", "Triton prologue b1024, wide tuning"]
    rows = str(past_view.rows_table(data))
    assert rows.count("Reproduced? ") == 2
    assert "(the call itself judged Triton prologue b1024, wide tuning)" in rows
    assert "Triton prologue b1024, wide tuning: not kept in 3 of 3 (1.016x, 1.006x, 1.008x" in rows
    spec = importlib.util.spec_from_file_location("reproduce_script", ROOT / "benchmarks" / "reproduce.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.past_record_name("nvidia-h200", "Triton prologue b1024, wide tuning") == (
        "nvidia-h200-08_past_defaults-triton-prologue-b1024-wide-tuning.json")
    assert script.past_record_name("m", "Triton prologue at batch 2048") != script.past_record_name("m", "batch 1024")
