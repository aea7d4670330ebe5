"""benchmarks/rerecord_calls.sh, read before any device time is spent on it: every call it names
parses, and every step it hands to benchmarks/gpu_wave.sh names a chapter, a reproduce target or
a script that exists here. A typo in the plan would otherwise surface only on the H200, as a
failed step in the one session that has the seconds for it. gpu_wave.sh is replaced by a script
that prints the steps; nothing runs."""

import shlex
import subprocess
from pathlib import Path

import pytest

from tests.paths import ROOT

SCRIPT = ROOT / "benchmarks" / "rerecord_calls.sh"
CALLS = ("A", "B", "C", "E", "E-lean", "B-repro", "E-08", "L", "E2", "D1", "D2", "D3", "F")
EXAMPLE_LEVER = "Triton prologue at batch 1024"   # D2 takes D1's best gated rung by name


def steps(call: str, tmp_path: Path, *more: str) -> list[str]:
    """The commands one call hands to gpu_wave.sh, in order (gpu_wave.sh swapped for an echo)."""
    echo = tmp_path / "echo_wave.sh"
    echo.write_text('for c in "$@"; do printf "%s\\n" "$c"; done\n')
    text = SCRIPT.read_text().replace("bash benchmarks/gpu_wave.sh", f"bash {echo}")
    plan = tmp_path / "plan.sh"
    plan.write_text(text)
    extra = list(more) or ([EXAMPLE_LEVER] if call == "D2" else [])
    done = subprocess.run(["bash", str(plan), call, *extra], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line.strip()]


def test_the_script_parses():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, timeout=30).returncode == 0


def test_an_unknown_call_is_refused_with_its_usage(tmp_path):
    done = subprocess.run(["bash", str(SCRIPT), "Z"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "usage" in done.stderr


@pytest.mark.parametrize("call", CALLS)
def test_every_step_names_what_exists(call, tmp_path):
    commands = steps(call, tmp_path)
    assert commands, f"call {call} hands no step to gpu_wave.sh"
    for command in commands:
        words = shlex.split(command.replace("\\$", "$"), posix=True)
        for word in words:
            if word.startswith("notebooks/") and word.endswith("*.py"):
                assert sorted(ROOT.glob(word)), f"call {call}: {word} matches no chapter"
            elif word.startswith(("benchmarks/", "scripts/")) and word.endswith((".py", ".sh")):
                assert (ROOT / word).is_file(), f"call {call}: {word} does not exist"
        if "benchmarks/reproduce.py" in words:
            target = words[words.index("benchmarks/reproduce.py") + 1]
            if target != "08-past":
                assert sorted(ROOT.glob(f"notebooks/{target}*.py")), f"call {call}: reproduce {target}?"


def test_call_a_guards_chapter_02_by_the_chase_smoke_run(tmp_path):
    commands = steps("A", tmp_path)
    assert "benchmarks/smoke_chase.py" in commands[0]
    assert commands[0].startswith("timeout "), "a hung smoke run must fail within its own limit"
    chapter_02 = next(c for c in commands if "notebooks/02" in c)
    assert "LABKIT_SKIP_CHASE" in chapter_02


def test_call_e_runs_the_ledger_before_the_audit_evidence(tmp_path):
    commands = steps("E", tmp_path)
    ledger = next(i for i, c in enumerate(commands) if "notebooks/99" in c)
    audit = next(i for i, c in enumerate(commands) if "gpu_audit_evidence.sh" in c)
    assert ledger < audit
    assert not any("gpu_audit_evidence.sh" in c for c in steps("E-lean", tmp_path))


def test_the_past_defaults_calls_name_levers_the_script_knows(tmp_path):
    """D1's --levers and D2's example parse as gpu_past_defaults.py's lever names (a misspelt
    one would stop the call with a usage error on the GPU), and D2 without a lever says so."""
    from labkit.chapters.ch08_inference_ladder import past_defaults

    known = [lever.name for lever in past_defaults.gpu_levers()]
    for command in steps("D1", tmp_path) + steps("D2", tmp_path) + steps("D3", tmp_path):
        words = shlex.split(command.replace("\\$", "$"))
        if "--levers" in words:
            assert past_defaults.parse_names(words[words.index("--levers") + 1], known)
    assert EXAMPLE_LEVER in known
    done = subprocess.run(["bash", str(SCRIPT), "D2"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and "lever" in done.stderr


def test_call_e08_runs_the_ladders_page_before_the_audit_and_the_ledger_last(tmp_path):
    """The 2026-12-05 plan: 08's page before 09 (which reads 08's keep rule) and 99 last."""
    commands = steps("E-08", tmp_path)
    order = [next(i for i, c in enumerate(commands) if f"notebooks/{n}" in c) for n in ("08", "09", "99")]
    assert order == sorted(order) and order[-1] == len(commands) - 1


def test_call_b_repro_runs_the_probes_after_the_reproduce_each_under_its_own_timeout(tmp_path):
    commands = steps("B-repro", tmp_path)
    assert "benchmarks/reproduce.py 08" in commands[0]
    probes = [c for c in commands[1:] if "probe_" in c]
    assert len(probes) == 2 and all(c.startswith("timeout ") for c in probes)
