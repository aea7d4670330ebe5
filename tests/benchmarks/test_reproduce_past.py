"""benchmarks/reproduce.py 08-past (issue 41's check: the best past-defaults rung 'reproduced
3 of 3 by benchmarks/reproduce.py with a spread of at most 5%'), judged on fake runs: gated,
at least 35,000 images/s in every run, a spread (max - min) / min of at most 5%, at least 3
runs; on a CPU it says it needs a CUDA GPU and runs nothing."""

import argparse
import json
import subprocess
import sys

import pytest

from tests.benchmarks.test_reproduce import load_tool
from tests.paths import ROOT

LEVER = "Triton compiled at batch 1024"


def fake_run(speed, lever=LEVER, passed=True, status="measured"):
    """One gpu_past_defaults.py record as the script writes it: the top rung, its base, the lever."""
    row = {"name": lever, "status": status, "gate": {"passed": passed, "why": "" if passed else "off"},
           "images_per_s": speed, "note": ""}
    return {"rows": [{"name": "top rung", "status": "measured", "gate": {"passed": True},
                      "images_per_s": 31_000.0},
                     {"name": "batch 1024", "status": "measured", "gate": {"passed": True},
                      "images_per_s": 33_000.0}, row], "exit": 0, "wall_s": 110.0}


def test_three_gated_runs_over_the_goal_within_five_percent_reproduce():
    tool = load_tool()
    judged = tool.judge_past(LEVER, [fake_run(35_500.0), fake_run(36_100.0), fake_run(35_200.0)])
    assert judged["reproduced"] and judged["held"] == 3 and judged["why_not"] == ""
    assert judged["spread"] == pytest.approx((36_100 - 35_200) / 35_200)
    assert tool.PAST_GOAL == 35_000 and tool.PAST_SPREAD == 0.05 and tool.PAST_MIN_RUNS == 3
    assert tool.past_lines(judged)[-1] == "  REPRODUCED"


@pytest.mark.parametrize("runs, why", [
    ([35_500.0, 34_990.0, 35_800.0], "held in 2 of 3"),                # one under the goal
    ([35_000.0, 37_000.0, 36_000.0], "spread 5.7% > 5%"),              # each over, spread too wide
    ([35_500.0, 35_600.0], "2 run(s); the check needs 3"),                       # too few runs
])
def test_a_run_under_the_goal_a_wide_spread_or_too_few_runs_do_not_reproduce(runs, why):
    tool = load_tool()
    judged = tool.judge_past(LEVER, [fake_run(s) for s in runs])
    assert not judged["reproduced"] and judged["why_not"] == why
    assert tool.past_lines(judged)[-1] == f"  NOT reproduced: {why}"


def test_a_refused_a_skipped_or_a_missing_row_does_not_hold():
    tool = load_tool()
    refused = fake_run(36_000.0, passed=False, status="refused")
    skipped = fake_run(None, status="skipped")
    other = fake_run(36_000.0, lever="batch 512")           # the lever's row absent
    judged = tool.judge_past(LEVER, [fake_run(36_000.0), refused, skipped, other])
    assert [e["status"] for e in judged["runs"]] == ["measured", "refused", "skipped", "missing"]
    assert [e["held"] for e in judged["runs"]] == [True, False, False, False]
    assert [e["gated"] for e in judged["runs"]] == [True, False, True, False]
    assert not judged["reproduced"] and judged["why_not"] == "held in 1 of 4"
    assert "run 2: refused, NOT gated" in "\n".join(tool.past_lines(judged))


def test_the_recorded_h200_runs_are_judged_as_they_read():
    """The compiled Triton lever at batch 256 (results/h200_past_defaults/, 2026-12-03): gated
    and measured, under 35,000 images/s, so it does not hold: the judging reads a real record."""
    tool = load_tool()
    record = json.loads((ROOT / "results" / "h200_past_defaults" / "past_defaults_triton_compiled.json").read_text())
    judged = tool.judge_past("Triton fused epilogue, compiled", [record])
    (run,) = judged["runs"]
    assert run["gated"] and run["status"] == "measured" and 0 < run["images_per_s"] < tool.PAST_GOAL
    assert not run["held"] and not judged["reproduced"]


def args(tmp_path, runs=3, levers=LEVER):
    return argparse.Namespace(levers=levers, runs=runs, budget=130.0, timeout=300.0, out=tmp_path)


def test_the_path_runs_fresh_processes_writes_each_and_exits_by_the_verdict(tmp_path):
    tool = load_tool()
    speeds = iter([35_500.0, 36_000.0, 35_800.0])
    calls = []

    def once(lever, budget, timeout):
        calls.append((lever, budget, timeout))
        return fake_run(next(speeds))

    assert tool.past_main(args(tmp_path), gpu=True, run_once_fn=once) == 0
    assert calls == [(LEVER, 130.0, 300.0)] * 3
    (path,) = tmp_path.glob("*-08_past_defaults-*.json")
    written = json.loads(path.read_text())
    assert written["chapter"] == "08-past" and written["complete"] and written["all_agree"]
    assert written["judged"]["reproduced"] and len(written["records"]) == 3
    slow = iter([35_500.0, 30_000.0, 35_800.0])
    assert tool.past_main(args(tmp_path), gpu=True, run_once_fn=lambda *a: fake_run(next(slow))) == 1
    # a name it does not know, or two levers: refused before anything runs
    assert tool.past_main(args(tmp_path, levers="no such lever"), gpu=True, run_once_fn=once) == 2
    assert tool.past_main(args(tmp_path, levers="batch 512,batch 1024"), gpu=True, run_once_fn=once) == 2
    assert len(calls) == 3


def test_on_a_cpu_it_says_it_needs_a_cuda_gpu_and_runs_nothing(tmp_path):
    tool = load_tool()
    assert tool.past_main(args(tmp_path), gpu=False, run_once_fn=lambda *a: pytest.fail("ran")) == 2
    assert not list(tmp_path.iterdir())
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "reproduce.py"), "08-past",
                           "--levers", LEVER, "--runs", "3", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "08-past needs a CUDA GPU" in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())


def test_without_levers_it_judges_the_reference_records_best_kept_rung(tmp_path, capsys):
    """Review 2026-12-05u item 1: the 2026-12-05 call typed 'Triton prologue at batch 2048', a
    rung its own keep rule refused in 3 of 3 runs; without --levers the path now judges the
    reference record's best kept rung, and writes that name into its record's argv."""
    tool = load_tool()
    calls = []

    def once(lever, budget, timeout):
        calls.append(lever)
        return fake_run(35_500.0, lever=lever)

    assert tool.past_main(args(tmp_path, levers=""), gpu=True, run_once_fn=once) == 0
    assert calls == ["Triton prologue at batch 1024"] * 3
    assert "judging the reference record's best kept rung, Triton prologue at batch 1024" in capsys.readouterr().out
    (path,) = tmp_path.glob("*-08_past_defaults-*.json")
    assert json.loads(path.read_text())["argv"][:2] == ["--levers", "Triton prologue at batch 1024"]
