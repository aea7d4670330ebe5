"""benchmarks/probe_profiler_tax.py (review 2026-12-05p 03-04 item 1d): the probe of whether
profiler sessions tax a process's later launches runs on a CPU: without CUDA it says so in one
line and exits 0; with --cpu its steps run (CPU-activity profiles) and it prints both readings
and their ratio. The GPU measurement itself is the next re-record's."""

import importlib.util
import json
import subprocess
import sys

import torch

from tests.paths import ROOT

SCRIPT = ROOT / "benchmarks" / "probe_profiler_tax.py"


def _module():
    spec = importlib.util.spec_from_file_location("probe_profiler_tax", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_cuda_it_says_so_in_one_line_and_exits_0():
    if torch.cuda.is_available():
        return  # a GPU machine measures; this test is of the CPU path
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == [
        "probe_profiler_tax: no CUDA device here; nothing measured (it probes GPU launches)."]


def test_its_steps_run_on_the_cpu_and_print_both_readings_and_their_ratio(tmp_path):
    probe = _module()
    probe.LAUNCHES, probe.ROUNDS = 200, 3  # a test of the steps, not a measurement
    assert probe.main(["--cpu", "--sessions", "2", "--out", str(tmp_path)]) == 0
    found = json.loads((tmp_path / "probe_profiler_tax.json").read_text())
    assert found["sessions"] == 2 and len(found["events_kept"]) == 2 and all(n > 0 for n in found["events_kept"])
    assert found["before"]["probe"] is None  # a CPU has no host-launch probe
    ratio = found["after"]["loop"]["median_us"] / found["before"]["loop"]["median_us"]
    assert abs(found["ratios"]["loop"] - ratio) < 1e-9
    assert found["lines"][0].startswith("x.add_(1) loop, wall per launch: before ")
    assert found["lines"][0].endswith(f"after 2 profiler sessions {found['after']['loop']['median_us']:.2f} us "
                                      f"({found['after']['loop']['low_us']:.2f}-{found['after']['loop']['high_us']:.2f}): "
                                      f"{ratio:.2f}x")
    assert found["lines"][-1].startswith("verdict: ")


def test_a_ratio_above_the_stated_margin_reads_as_a_tax():
    probe = _module()
    before = {"loop": {"median_us": 10.0, "low_us": 9.5, "high_us": 10.5}, "probe": None}
    after = {"loop": {"median_us": 15.0, "low_us": 14.0, "high_us": 16.0}, "probe": None}
    lines = probe.describe(before, after, 5)
    assert lines[0] == ("x.add_(1) loop, wall per launch: before 10.00 us (9.50-10.50), after 5 profiler sessions "
                        "15.00 us (14.00-16.00): 1.50x")
    assert lines[-1] == (f"verdict: taxed (loop) (a ratio above {probe.TAXED:.2f}x and above its control's "
                         "drift reads as a tax)")
    assert probe.describe(before, before, 5)[-1].startswith("verdict: no tax")
    # review 2026-12-05p2 00-04 item 3: a control that drifts as much as the sessions did is no tax
    drifted = {"loop": {"median_us": 15.5, "low_us": 15.0, "high_us": 16.0}, "probe": None}
    lines = probe.describe(before, after, 5, drifted)
    assert "control, loop: the before reading taken again, no session between: 1.55x" in lines
    assert lines[-1].startswith("verdict: no tax")
    assert probe.describe(before, after, 5, before)[-1].startswith("verdict: taxed (loop)")
