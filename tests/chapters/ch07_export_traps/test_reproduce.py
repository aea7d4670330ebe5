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


def test_a_fastest_call_taken_on_another_clock_is_the_same_call_across_runs():
    """The 2026-12-05 17:55 H200 runs recorded 'tie with eager (device time)' in run 1 (which
    timed a loop and kept device time) and 'tie with eager' in runs 2 and 3 (no loop): one call,
    which the page comparison already reads as one (`tables.call_kind`), while the across-run
    line said 'NOT the same'. A different call is still different."""
    runs = [_run(fastest=call) for call in ("tie with eager (device time)", "tie with eager", "tie with eager")]
    said = reproduce.summarise_numbers(runs, reference=None)
    assert "fastest correct path (CPU clock)" in said["same"] and said["agree"]
    line = next(x for x in said["lines"] if x.startswith("  fastest correct path"))
    assert line.endswith("tie with eager (device time), tie with eager, tie with eager -> the same in 3 of 3")
    other = reproduce.summarise_numbers([_run(fastest="tie with eager"), _run(fastest="torch.jit.script")],
                                        reference=None)
    assert "fastest correct path (CPU clock)" not in other["same"] and not other["agree"]


def test_a_ratio_in_the_band_is_not_called_even_with_a_range_on_one_side():
    assert reproduce.decision(1.010, 1.013, 1.012) == reproduce.WITHIN_BAND
    # review 2026-12-04n 05-07 item 1: the rounds decide, not the ratio alone: an IQR that
    # reaches into the band is at its edge, however far out the median lies
    assert reproduce.decision(1.01, 1.10, 1.05) == reproduce.AT_EDGE
    assert reproduce.decision(1.03, 1.10, 1.05) == reproduce.SLOWER
    assert reproduce.decision(0.61, 0.71, 0.70) == reproduce.FASTER


@pytest.mark.parametrize(("low", "high", "ratio", "said"), [
    # the review's case: printed '0.98x (rounds 0.98-0.98)', so inside the band, never 'faster'
    (0.979, 0.980, 0.9795, reproduce.WITHIN_BAND), (0.9795, 0.9805, 0.98, reproduce.WITHIN_BAND),
    # the H200's torch.jit.script on device time (19:20): 438 against 446 us, rounds 0.98-0.98
    (0.981, 0.983, 0.982, reproduce.WITHIN_BAND),
    # rounds printed 0.97-0.98: they cross the band's edge, neither a call nor a tie
    (0.973, 0.979, 0.976, reproduce.AT_EDGE), (1.018, 1.026, 1.022, reproduce.AT_EDGE),
    # the whole IQR printed below 0.98x: faster; above 1.02x: slower
    (0.970, 0.974, 0.972, reproduce.FASTER), (1.026, 1.03, 1.028, reproduce.SLOWER)])
def test_the_call_is_taken_on_the_rounds_as_printed_with_an_edge_between_a_call_and_a_tie(low, high, ratio, said):
    assert reproduce.decision(low, high, ratio) == said
