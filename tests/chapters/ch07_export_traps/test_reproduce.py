"""Chapter 07's reproduce entry point: its decisions and its summary across runs (no timing
here; benchmarks/reproduce.py 07 --runs 1 --quick runs the measurements)."""

import pytest

from labkit.chapters.ch07_export_traps import reproduce


@pytest.mark.parametrize(("low", "high", "said"), [
    (0.4, 0.6, reproduce.FASTER), (1.1, 1.3, reproduce.SLOWER), (0.9, 1.1, reproduce.NO_DIFFERENCE),
    (None, None, reproduce.NO_DIFFERENCE),
    # Trap 2 on the H200 (13:10): rounds 1.010-1.013, every one above 1, yet 1% is not a finding
    (1.0100212, 1.0126708, reproduce.WITHIN_BAND), (0.985, 0.995, reproduce.WITHIN_BAND)])
def test_a_timing_decides_only_when_its_whole_range_is_on_one_side_of_1(low, high, said):
    assert reproduce.decision(low, high) == said


def _run(trap3="faster", quiz="faster", fastest="ONNX Runtime CPU, numpy feed"):
    reading = {"ratio": 0.5, "low": 0.45, "high": 0.55}
    return {"trap2_nchw_input": {**reading, "decision": "no measurable difference", "low": 0.9, "high": 1.1},
            "trap3_preference_on": {**reading, "decision": trap3, "quiz": quiz},
            "fastest_correct": {"CPU clock": fastest}}


def test_the_summary_says_which_statements_were_the_same_in_every_run():
    same = reproduce.summarise_numbers([_run(), _run()])
    assert same["agree"] and all("the same in 2 of 2" in line for line in same["lines"][:3])
    differ = reproduce.summarise_numbers([_run(), _run(trap3="no measurable difference", quiz="about the same")])
    assert not differ["agree"]
    assert "Trap 3: ONNX Runtime's layout preference on against off" not in differ["same"]
    assert "fastest correct path (CPU clock)" in differ["same"]
    missing = reproduce.summarise_numbers([{"fastest_correct": {}}])
    assert missing["decisions"]["Trap 3: ONNX Runtime's layout preference on against off"] == ["not measured"]
    assert not missing["agree"]
    with pytest.raises(ValueError, match="at least one run"):
        reproduce.summarise_numbers([])


def test_a_ratio_in_the_band_is_not_called_even_with_a_range_on_one_side():
    assert reproduce.decision(1.010, 1.013, 1.012) == reproduce.WITHIN_BAND
    assert reproduce.decision(1.01, 1.10, 1.05) == reproduce.SLOWER  # the ratio, not the range's middle
    assert reproduce.decision(0.61, 0.71, 0.70) == reproduce.FASTER
