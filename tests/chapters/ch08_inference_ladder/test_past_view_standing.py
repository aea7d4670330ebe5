"""Review 2026-12-04i items 2, 3 and 11 on "Past the defaults", read from the committed records
(results/h200_past_defaults/): the fused-epilogue rung's device time per class beside the top
rung's, both batch-1024 measurements with the rerun as the conservative one and its gain named
host idle (device gain 1.001), what bound the best rung, and the FP8 per-channel row's gate."""

from labkit.chapters.ch08_inference_ladder import past_view


def _standing() -> str:
    data = past_view.with_later_calls(past_view.load(), past_view.recorded_path())
    return str(past_view.standing(data, again=past_view.reruns(past_view.recorded_path())))


def test_the_fused_rung_shows_its_time_per_class_beside_the_top_rungs():
    said = _standing()
    # 7.77 ms at 57/40 against 7.41 ms at 85/12: elementwise 3.1 -> 0.9 ms, GEMM/conv 4.4 -> 6.3 ms
    assert "top rung GEMM/conv 4.4, elementwise 3.1 of 7.77" in said
    assert "Triton fused epilogue, compiled * GEMM/conv 6.3, elementwise 0.9 of 7.41" in said
    assert "removed 2.2 ms of elementwise tails; its GEMM/conv time rose 1.9 ms" in said
    assert "net 5% less device time" in said and "different calls" in said
    assert "efficiency lost there" not in said


def test_both_batch_1024_measurements_are_shown_the_rerun_as_the_conservative_one():
    said = _standing()
    assert "batch 1024: 33,254 images/s; measured again: 31,783 (the gap below uses 31,783)" in said
    assert "1.043x over its call's top rung, against 33,254 and 1.077x here; the conservative figure is this one" in said
    assert "moved 1.001x, so the gain is host idle removed, not GPU work" in said
    # the gap is split over the conservative figure: 31,783 images/s is 260 TFLOP/s, not 272
    assert "the best rung runs 260 TFLOP/s" in said


def test_what_bound_the_best_rung_is_said_in_one_line():
    said = _standing()
    assert ("What bound batch 1024: the device (GPU idle 1%, the host-bound line 30%); its device "
            "time: GEMM/conv 57%, elementwise 40%.") in said


def test_the_fp8_per_channel_row_names_the_gate_that_passed_it():
    rows = str(past_view.rows_table(past_view.load())).splitlines()
    row = next(line for line in rows if line.startswith("FP8 per-channel weights"))
    assert "passed: 5.9e-02 (tol 0.12 bfloat16); on an earlier gate: 16 images" in row
    top = next(line for line in rows if line.startswith("top rung "))
    assert "earlier gate" not in top   # an fp16 rung far inside its tolerance says nothing more
