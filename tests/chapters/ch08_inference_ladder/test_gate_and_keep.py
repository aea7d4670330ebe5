"""The numerics gate refuses a rung that changes the output; the keep rule judges a step on
the clock that bound the rung (a host-bound step with a device-time gain is not dropped)."""

import pytest
import torch

from labkit.chapters.ch08_inference_ladder import keep, ladder, numerics


def logits(seed=0, n=16, classes=100):
    return torch.randn(n, classes, generator=torch.Generator().manual_seed(seed)) * 3


def test_rounding_passes_and_a_wrong_output_is_refused():
    ref = logits()
    rounded = ref.to(torch.bfloat16).float()
    assert numerics.check(rounded, ref, "bfloat16").passed
    wrong = ref * 1.3 + 0.5  # a mis-scaled weight and a dropped bias, in miniature
    gate = numerics.check(wrong, ref, "bfloat16")
    assert not gate.passed and "logits off by" in gate.why
    assert not numerics.check(rounded, ref, "float32").passed  # float32 allows no bf16 rounding


def test_overflow_and_top1_flips_are_refused():
    ref = logits()
    overflowed = ref.clone()
    overflowed[0, 0] = float("inf")
    assert numerics.check(overflowed, ref, "float16").why.startswith("non-finite")
    shuffled = ref[:, torch.randperm(ref.shape[1], generator=torch.Generator().manual_seed(3))]
    assert not numerics.check(shuffled, ref, "float16").passed


def test_near_ties_are_not_counted_for_top1():
    ref = torch.zeros(8, 10)
    ref[:, 0] = 1.0
    ref[:, 1] = 1.0 - 1e-6  # every image a near-tie
    gate = numerics.check(ref.clone(), ref, "float32")
    assert gate.top1_agreement is None and gate.clear_images == 0 and gate.passed


def test_bad_inputs_say_what_is_wrong():
    with pytest.raises(numerics.NumericsError, match="no tolerance"):
        numerics.check(logits(), logits(), "int8")
    with pytest.raises(numerics.NumericsError, match="cannot be compared"):
        numerics.check(logits(n=4), logits(n=8), "float32")


def test_fixed_images_are_the_same_every_time_and_tile_any_batch():
    a, b = numerics.fixed_images(4, 8), numerics.fixed_images(4, 8)
    assert torch.equal(a, b)
    tiled = numerics.tiled(a, 10)
    assert tiled.shape[0] == 10 and torch.equal(tiled[4:8], a) and torch.equal(tiled[8:], a[:2])


def test_a_host_bound_step_with_a_device_time_gain_is_kept():
    # fp16 on an eager, host-bound rung: wall a little slower, GPU time 1.84x less per image
    d = keep.decide(True, "", 0.93, (0.90, 0.97), device_gain=1.84, device_spread=(1.80, 1.88),
                    idle_before=0.40, idle_after=0.66)
    assert d.kept and d.judged_by == "device time" and "host-bound" in d.why and "trade" in d.why
    # the same numbers on a device-bound rung: the wall clock decides, and it says slower
    d = keep.decide(True, "", 0.93, (0.90, 0.97), device_gain=1.84, device_spread=(1.80, 1.88),
                    idle_before=0.05, idle_after=0.05)
    assert not d.kept and d.judged_by == "wall" and d.why.startswith("slower")


def test_a_gain_whose_range_contains_one_is_not_kept():
    # device-bound, median above 1 but the rounds' range reaches below it: no measured gain
    d = keep.decide(True, "", 1.03, (0.98, 1.07), device_gain=1.01, device_spread=(0.99, 1.03),
                    idle_before=0.1, idle_after=0.1)
    assert not d.kept and "contains 1" in d.why
    # the same range wholly above 1 is kept
    assert keep.decide(True, "", 1.05, (1.02, 1.07), idle_before=0.1, idle_after=0.1).kept
    # host-bound, neither clock's range above 1
    d = keep.decide(True, "", 1.0, (0.97, 1.03), device_gain=1.0, device_spread=(0.98, 1.02),
                    idle_before=0.5, idle_after=0.5)
    assert not d.kept and "no measured gain on either clock" in d.why


def test_a_host_side_gain_is_kept_on_the_wall_clock_and_its_device_cost_said():
    # Conv-BN folding on the H200: wall faster, device time 0.90x, host-bound
    d = keep.decide(True, "", 1.25, (1.22, 1.28), device_gain=0.90, device_spread=(0.89, 0.91),
                    idle_before=0.45, idle_after=0.37)
    assert d.kept and d.judged_by == "wall" and "0.90x device time" in d.why and "trade" in d.why


def test_a_step_slower_on_both_clocks_is_dropped_and_a_wrong_one_always():
    d = keep.decide(True, "", 0.8, (0.75, 0.85), device_gain=0.8, device_spread=(0.78, 0.82),
                    idle_before=0.6, idle_after=0.6)
    assert not d.kept
    d = keep.decide(False, "logits off", 3.0, (2.9, 3.1), device_gain=3.0, idle_before=0.0, idle_after=0.0)
    assert not d.kept and d.judged_by == "numerics"
    with pytest.raises(ValueError, match="low, high"):
        keep.decide(True, "", 1.0, (1.1, 0.9))


def tiny():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 10))


def wrong_fold(model):
    """A folding that forgets the folded bias: the kind of bug the gate is there for."""
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d) and m.bias is not None:
            with torch.no_grad():
                m.bias.zero_()
    return model


def test_a_climb_refuses_a_wrong_rung_and_goes_on_from_the_rung_before():
    lad = ladder.Ladder(torch.device("cpu"), 12, rep_ms=10, rounds=2, model_factory=tiny,
                        profile_batches=1)
    start = lad.baseline("defaults", ladder.Settings(batch=4))
    folded = ladder.Settings(batch=4, fold_bn=True)
    rung, current = lad.step(start, "wrong folding", folded, transform=wrong_fold)
    assert not rung.kept and rung.judged_by == "numerics" and current is start
    assert rung.images_per_s > 0 and rung.gate.rel_error > rung.gate.tolerance
    right, current = lad.step(start, "Conv-BN folding", folded)
    assert right.gate.passed and right.gate.rel_error < 1e-5
    assert set(right.over) == {"defaults"} and right.as_dict()["gate"]["passed"]


def test_a_failing_rung_is_reported_not_raised():
    lad = ladder.Ladder(torch.device("cpu"), 12, rep_ms=10, rounds=2, model_factory=tiny,
                        profile_batches=0)
    start = lad.baseline("defaults", ladder.Settings(batch=4))

    def broken(model):
        raise RuntimeError("compile exploded")
    rung, current = lad.step(start, "broken", ladder.Settings(batch=4), transform=broken)
    assert current is start and not rung.kept and "compile exploded" in rung.error


def test_a_gain_above_one_but_under_the_minimum_is_not_kept():
    # cudnn.benchmark on the H200, reproduce run 2: 1.0006x wall, range 1.0001-1.0010 above 1
    d = keep.decide(True, "", 1.0006, (1.0001, 1.0010), device_gain=1.0008,
                    device_spread=(1.0000, 1.0018), idle_before=0.04, idle_after=0.04)
    assert not d.kept and "no material gain" in d.why and "under 1.02x" in d.why
    # a median at the minimum is kept, one just under it is not; a host-bound step under it
    # on both clocks is not
    assert keep.decide(True, "", 1.02, (1.015, 1.03), idle_before=0.04, idle_after=0.04).kept
    assert not keep.decide(True, "", 1.019, (1.015, 1.03), idle_before=0.04, idle_after=0.04).kept
    d = keep.decide(True, "", 1.01, (1.005, 1.015), device_gain=1.015, device_spread=(1.01, 1.02),
                    idle_before=0.5, idle_after=0.5)
    assert not d.kept and "no material gain on either clock" in d.why
    assert "1.02x" in keep.rule()


def test_a_wall_gain_names_the_clock_that_carried_it_not_a_threshold_label():
    # CUDA Graphs on the H200: 1.22x wall, 1.01x device time, idle 20% -> 3% (under 30%)
    d = keep.decide(True, "", 1.22, (1.11, 1.27), device_gain=1.01, device_spread=(1.00, 1.01),
                    idle_before=0.20, idle_after=0.03)
    assert d.kept and d.judged_by == "wall" and "device-bound" not in d.why
    assert "GPU idle 20% -> 3%" in d.why and "came off the host" in d.why
    # fp16 on a rung under the line: the device gained more than the wall
    d = keep.decide(True, "", 1.59, (1.40, 1.65), device_gain=1.85, device_spread=(1.84, 1.85),
                    idle_before=0.04, idle_after=0.17)
    assert d.kept and "held the rest back" in d.why
    # a CPU: no device clock, nothing said about one
    d = keep.decide(True, "", 1.5, (1.4, 1.6))
    assert d.kept and "device" not in d.why and "idle" not in d.why


def test_over_its_own_step_reads_the_rung_over_the_base_not_the_scaled_round_gains():
    """Review 2026-12-05t 08 item 1: the H200's CUDA Graphs step in fresh run 1 (17:52): the rung
    ran 13,365-13,397 images/s in every timing, its base (eager fp16, batch 64) 12,767 (IQR
    12,735-12,798) in its own step and 8,376-10,269 in Graphs' rounds, switching speed within
    them. Over its own step the old reading scaled the re-timed gain's quartiles by the base's
    medians (a fast-base round, 1.048x, times 0.80: 0.84) and called it not decidable; read as
    the rung over the base's own step, each with its IQR, it is 1.047x and kept. The folding case
    of 2026-12-03e (1.68x over a base re-timed 49% slow, 0.86x over its own step) stays not
    decidable, and a record without the IQRs is read as before."""
    base_own, base_iqr = 12_767.0, (12_798 - 12_735) / 12_767
    timings = [{"gain": (1.30, 1.048, 1.55), "base_images_per_s": 10_269.0, "images_per_s": 13_380.0,
                "iqr_share": 0.001, "base_idle": 0.33, "idle": 0.013},
               {"gain": (1.58, 1.53, 1.63), "base_images_per_s": 8_470.0, "images_per_s": 13_390.0,
                "iqr_share": 0.001, "base_idle": 0.38, "idle": 0.013}]
    graphs = keep.over_moved_base(base_own, 0.06, timings, 0.999, (0.998, 1.0), base_iqr)
    assert graphs.kept and graphs.judged_by != keep.NOT_DECIDABLE
    assert "same decision either way" in graphs.why
    gain, (low, high) = keep._over_own_step(timings[0], base_own, base_iqr)
    assert gain == pytest.approx(13_380 / 12_767) and 1.04 < low < gain < high < 1.06
    # the same timings without the IQRs (a record before them): the old reading, not decidable
    old = keep.over_moved_base(base_own, 0.06, [{k: v for k, v in t.items() if k != "iqr_share"}
                                                for t in timings], 0.999, (0.998, 1.0), base_iqr)
    assert old.judged_by == keep.NOT_DECIDABLE and not old.kept
    # the folding case: 1.68x over a base re-timed 49% slow, the rung 0.86x its base's own step
    folded = [{"gain": (1.68, 1.64, 1.72), "base_images_per_s": 0.51 * 20_000.0,
               "images_per_s": 0.86 * 20_000.0, "iqr_share": 0.01, "base_idle": 0.2, "idle": 0.1}]
    fold = keep.over_moved_base(20_000.0, 0.1, folded, 0.97, (0.96, 0.98), 0.01)
    assert fold.judged_by == keep.NOT_DECIDABLE and not fold.kept
    assert "0.86x over its own step's 20,000" in fold.why
