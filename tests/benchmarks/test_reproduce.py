"""benchmarks/reproduce.py: chapters are discovered by their reproduce.py, runs are summarised
per claim (verdicts, agreement, spread of the deciding ratio), and a real quick run on this
CPU writes what it prints."""

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.paths import ROOT


def load_tool():
    spec = importlib.util.spec_from_file_location("reproduce_tool", ROOT / "benchmarks" / "reproduce.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_chapters_with_a_reproduce_module_are_found_by_key_or_number():
    tool = load_tool()
    known = tool.reproducers()
    assert {"02_contiguity_and_hidden_copies", "03_memory_layouts"} <= set(known)
    assert tool.resolve("03", known) == "03_memory_layouts"
    with pytest.raises(SystemExit, match="no reproducible chapter"):
        tool.resolve("01", known)


def verdict(claim_id, outcome, depends_on="", **ratios):
    return {"claim_id": claim_id, "outcome": outcome, "depends_on": depends_on, "form": "f",
            "deciding_ratios": ratios}


def test_runs_are_summarised_per_claim():
    tool = load_tool()
    runs = [{"verdicts": [verdict("C9", "confirmed", penalty=20.0), verdict("C2", "refuted", a=0.8)]},
            {"verdicts": [verdict("C9", "confirmed", penalty=26.9),
                          verdict("C2", "depends", "noise: x", a=1.4)]}]
    summary = tool.summarise(runs)
    assert summary["C9"]["agree"] and summary["C9"]["spread"]["penalty"]["min"] == 20.0
    assert summary["C9"]["spread"]["penalty"]["max"] == 26.9
    assert not summary["C2"]["agree"]
    lines = tool.report("02_x", summary, 2)
    assert any("C2: refuted, depends (noise: x)" in line and "DIFFERENT in 1 of 2" in line
               for line in lines)
    assert any("penalty: deciding ratio 20 to 26.9" in line for line in lines)


def test_a_quick_run_of_chapter_02_in_fresh_processes(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "reproduce.py"),
                           "02", "--runs", "2", "--quick", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    written = list(tmp_path.glob("*-02_contiguity_and_hidden_copies.json"))
    assert len(written) == 1
    data = json.loads(written[0].read_text())
    assert data["runs"] == 2 and set(data["claims"]) == {"C2", "C5b", "C5c", "C6", "C9", "C10"}
    for claim_id, entry in data["claims"].items():
        assert len(entry["verdicts"]) == 2, claim_id
        assert entry["spread"], claim_id
        assert f"{claim_id}: " in done.stdout
