"""Re-measure a chapter's verdict-deciding measurements N times, each in a fresh process.

    PYTHONPATH=. python benchmarks/reproduce.py 02_contiguity_and_hidden_copies --runs 3
    PYTHONPATH=. python benchmarks/reproduce.py 03 --runs 2 --quick --out /tmp/reproduce

A timing-based verdict is trusted when every run gives the same one (3 of 3): the same
outcome, what it depends on, and the form judged (a run that judged another batch or clock
is not the same verdict). Each run is a
new Python process (`--child`), so nothing warmed up, cached or allocated by one run helps
the next; the processes run one after another, never side by side. Per claim it prints the
verdict of each run and the spread (min to max over runs) of each deciding ratio, and writes
the lot as JSON to OUT/<machine>-<chapter>.json (default OUT: results/reproduce).

A chapter takes part by having `labkit/chapters/chNN_name/reproduce.py` with
`measure_verdicts(quick: bool = False) -> list[Verdict]` (the same measurements the notebook
uses for its timing-based claims, sized by env.sizes()) and, optionally,
`deciding_ratios(verdict) -> dict[str, float]`. Discovered like claims: no list to edit.

Issue 41's best past-defaults rung has a path of its own (`08-past`; a CUDA GPU only):

    PYTHONPATH=. python benchmarks/reproduce.py 08-past --levers 'Triton compiled at batch 1024' --runs 3

(without --levers: the reference record's best kept rung, `past_view.recorded_best_kept`) runs
benchmarks/gpu_past_defaults.py for that lever (its base and the top rung, no shape timing)
in N fresh processes, one after another, and judges the lever's row in each: gated (the numerics
gate passed), measured at PAST_GOAL images/s or more, and the spread of its images/s over the runs
((max - min) / min) at most PAST_SPREAD. Reproduced when every run holds and the spread does,
in at least PAST_MIN_RUNS runs; written to OUT/<machine>-08_past_defaults-<lever>.json, one file a lever.

Optionally also `measure_numbers(quick) -> dict` (plain values a run records beside its
verdicts, e.g. chapter 05's knee; a 'phases' key of {name: seconds} is printed) and
`summarise_numbers(runs: list[dict]) -> {'agree': bool, 'lines': [str], ...}` (whether those
numbers reproduced), and `last_phases() -> {name: seconds}` for the parts of
measure_verdicts. A run prints the INFO lines of the `labkit.chapters` loggers as they come
(the child's stdout is passed through) and its phases when it ends,
and the JSON is rewritten after every run, so a run cut short still leaves the runs before it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from labkit.core import discovery, env  # noqa: E402


def reproducers() -> dict[str, ModuleType]:
    """Every chapter's reproduce module, by chapter key."""
    found = {}
    for module in discovery.modules("reproduce"):
        if not callable(getattr(module, "measure_verdicts", None)):
            raise TypeError(f"{module.__name__} has no measure_verdicts(quick=False) function")
        found[discovery.chapter_key(module.__name__)] = module
    return found


def resolve(chapter: str, known: dict[str, ModuleType]) -> str:
    """A chapter key from its key or its number ('02')."""
    if chapter in known:
        return chapter
    matches = [k for k in known if k.startswith(f"{chapter}_")]
    if len(matches) == 1:
        return matches[0]
    raise SystemExit(f"no reproducible chapter {chapter!r}; chapters with a reproduce.py: "
                     f"{', '.join(known) or 'none'}")


def machine_name() -> str:
    return env.device_key().lower().replace("_", "-")


def child(chapter: str, out: Path, quick: bool) -> None:
    """One run, in this (fresh) process: measure, judge, write the verdicts as JSON."""
    module = reproducers()[chapter]
    # the chapter's INFO lines (phases as they end) go to stdout, which the parent passes on:
    # a run cut short by a batch job's limit still shows how far it got
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("    [%(relativeCreated)7.0f ms] %(message)s"))
    chapter_log = logging.getLogger("labkit.chapters")
    chapter_log.addHandler(handler)
    chapter_log.setLevel(logging.INFO)
    started = time.perf_counter()
    record: dict = {}
    phases: dict[str, float] = {}
    if callable(getattr(module, "measure_numbers", None)):
        # first, in a process that has allocated nothing big yet (chapter 05's loader workers
        # are forked from it; its verdicts pin hundreds of MiB)
        record["numbers"] = module.measure_numbers(quick=quick)
        phases.update({f"numbers: {k}": v for k, v in record["numbers"].get("phases", {}).items()})
        phases["numbers (all)"] = time.perf_counter() - started
    verdicts_started = time.perf_counter()
    verdicts = module.measure_verdicts(quick=quick)
    phases.update({f"verdicts: {k}": v for k, v in getattr(module, "last_phases", dict)().items()})
    phases["verdicts (all)"] = time.perf_counter() - verdicts_started
    ratios = getattr(module, "deciding_ratios", lambda v: {})
    record["verdicts"] = [dict(v.to_dict(), deciding_ratios=ratios(v)) for v in verdicts]
    record["seconds"] = time.perf_counter() - started
    record["phases"] = phases
    out.write_text(json.dumps(record, default=str))


def run_once(chapter: str, quick: bool, timeout_s: float) -> dict:
    """One fresh process; its stdout goes straight to ours, its stderr is kept for errors.
    'wall_s' is the process's whole life, imports and start-up included."""
    with tempfile.TemporaryDirectory(prefix="labkit_reproduce_") as folder:
        out = Path(folder) / "run.json"
        command = [sys.executable, str(Path(__file__).resolve()), chapter, "--child", str(out)]
        if quick:
            command.append("--quick")
        environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        started = time.perf_counter()
        done = subprocess.run(command, stdout=None, stderr=subprocess.PIPE, text=True,
                              timeout=timeout_s, env=environment, cwd=ROOT)
        wall_s = time.perf_counter() - started
        if done.returncode != 0 or not out.exists():
            raise SystemExit(f"a run of {chapter} failed (exit {done.returncode}):\n"
                             f"{done.stderr[-4000:]}")
        record = json.loads(out.read_text())
        record["wall_s"] = wall_s
        record.setdefault("phases", {})["start-up (imports, before measuring)"] = max(
            wall_s - record["seconds"], 0.0)
        return record


def phase_lines(run: dict, number: int) -> list[str]:
    """A run's phases, one line each, and its wall time."""
    lines = [f"  run {number}: {run.get('wall_s', run['seconds']):.1f} s in all; phases:"]
    lines += [f"    {seconds:7.1f} s  {name}" for name, seconds in run.get("phases", {}).items()]
    return lines


def summarise(runs: list[dict]) -> dict[str, dict]:
    """Per claim: each run's verdict, whether they agree, and each ratio's spread over runs."""
    claims: dict[str, dict] = {}
    for run in runs:
        for v in run["verdicts"]:
            entry = claims.setdefault(v["claim_id"], {"verdicts": [], "ratios": {}})
            entry["verdicts"].append({"outcome": v["outcome"], "depends_on": v["depends_on"],
                                      "form": v["form"], "reason": v.get("reason", "")})
            for name, value in (v.get("deciding_ratios") or {}).items():
                entry["ratios"].setdefault(name, []).append(float(value))
    for entry in claims.values():
        # the form judged too: a run that judged another batch or clock is not the same verdict
        labels = {(x["outcome"], x["depends_on"], x.get("form")) for x in entry["verdicts"]}
        entry["agree"] = len(labels) == 1
        entry["spread"] = {name: {"min": min(vals), "max": max(vals), "runs": vals}
                           for name, vals in entry["ratios"].items()}
        del entry["ratios"]
    return claims


def _short(depends_on: str) -> str:
    """What a 'depends' depends on, short enough to list: up to its first ';'."""
    text = depends_on.split(";")[0]
    return text if len(text) <= 70 else text[:67] + "..."


def report(chapter: str, summary: dict[str, dict], runs: int) -> list[str]:
    lines = [f"{chapter}: {runs} run(s), each in a fresh process, on {machine_name()}"]
    for claim_id, entry in summary.items():
        outcomes = ", ".join(x["outcome"] + (f" ({_short(x['depends_on'])})" if x["depends_on"] else "")
                             for x in entry["verdicts"])
        first = entry["verdicts"][0]
        same = sum(1 for x in entry["verdicts"]
                   if (x["outcome"], x["depends_on"], x.get("form"))
                   == (first["outcome"], first["depends_on"], first.get("form")))
        forms = len({x.get("form") for x in entry["verdicts"]})
        lines.append(f"  {claim_id}: {outcomes}  -> {'the same' if entry['agree'] else 'DIFFERENT'}"
                     f" in {same} of {len(entry['verdicts'])}"
                     + (f" ({forms} forms judged)" if forms > 1 else ""))
        for name, s in entry["spread"].items():
            lines.append(f"      {name}: deciding ratio {s['min']:.3g} to {s['max']:.3g}")
    return lines


# ------------------------------------------------------------- 08-past (issue 41)
PAST = "08-past"
PAST_RECORD = "08_past_defaults"      # OUT/<machine>-08_past_defaults-<lever>.json


def past_record_name(machine: str, lever: str) -> str:
    """One file a lever (session aa: D3's check of one lever overwrote the batch-2048 lever's
    record, the only one, and chapter 08's page then called that lever 'not yet timed')."""
    slug = re.sub(r"[^a-z0-9]+", "-", lever.lower()).strip("-") or "lever"
    return f"{machine}-{PAST_RECORD}-{slug}.json"
PAST_GOAL = 35_000                    # issue 41: images/s of a gated rung on the H200
PAST_SPREAD = 0.05                    # issue 41: a spread of at most 5% over the runs
PAST_MIN_RUNS = 3                     # issue 41: 'reproduced 3 of 3'


def past_run_once(lever: str, budget_s: float, timeout_s: float) -> dict:
    """One fresh process of benchmarks/gpu_past_defaults.py for `lever` (its base and the top
    rung are added by the script; no per-shape timing): its past_defaults.json, with the
    process's exit status and whole wall time. A crash keeps what the record had."""
    with tempfile.TemporaryDirectory(prefix="labkit_past_") as folder:
        command = [sys.executable, str(ROOT / "benchmarks" / "gpu_past_defaults.py"), "--out", folder,
                   "--budget", f"{budget_s:g}", "--levers", lever, "--no-shapes"]
        environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        started = time.perf_counter()
        try:
            done = subprocess.run(command, stdout=None, stderr=subprocess.PIPE, text=True,
                                  timeout=timeout_s, env=environment, cwd=ROOT)
            code, errors = done.returncode, done.stderr[-4000:]
        except subprocess.TimeoutExpired:
            code, errors = None, f"timed out after {timeout_s:.0f} s"
        path = Path(folder) / "past_defaults.json"
        record = json.loads(path.read_text()) if path.exists() else {"rows": []}
        record["wall_s"], record["exit"] = time.perf_counter() - started, code
        if code != 0:
            record["stderr_tail"] = errors
        return record


def judge_past(lever: str, runs: list[dict], goal: float = PAST_GOAL, spread: float = PAST_SPREAD,
               min_runs: int = PAST_MIN_RUNS) -> dict:
    """Issue 41's check on the runs' records: per run, the lever's row gated (the gate passed)
    and measured at `goal` images/s or more; over the runs, the spread of its images/s,
    (max - min) / min, at most `spread`. Reproduced when every run holds, the spread holds and
    there are at least `min_runs` runs. A run without the row, refused, skipped or failed does
    not hold (its status says which)."""
    each = []
    for run in runs:
        row = next((r for r in run.get("rows") or [] if r.get("name") == lever), None)
        gated = bool(row and (row.get("gate") or {}).get("passed"))
        speed = row.get("images_per_s") if row and row.get("status") == "measured" else None
        each.append({"status": row.get("status") if row else "missing", "gated": gated,
                     "images_per_s": speed, "meets_goal": speed is not None and speed >= goal,
                     "note": (row.get("note") or "")[:200] if row else (run.get("failure") or "")[-200:],
                     "exit": run.get("exit"), "wall_s": run.get("wall_s")})
    # the page reads its line by the same rule (past_view.judge_runs)
    from labkit.chapters.ch08_inference_ladder import past_view

    for e in each:
        e["held"] = e["gated"] and e["meets_goal"]
    judged = past_view.judge_runs(each, goal, spread, min_runs)
    measured_spread, spread_ok, held = judged["spread"], judged["spread_ok"], judged["held"]
    reproduced = judged["reproduced"]
    why = ("" if reproduced else
           f"{len(each)} run(s); the check needs {min_runs}" if held == len(each) and spread_ok else
           f"held in {held} of {len(each)}" if held < len(each) else
           f"spread {100 * measured_spread:.1f}% > {100 * spread:.0f}%" if measured_spread is not None
           else "not every run measured it")
    return {"lever": lever, "goal_images_per_s": goal, "max_spread": spread, "min_runs": min_runs,
            "runs": each, "held": held, "spread": measured_spread, "spread_ok": spread_ok,
            "reproduced": reproduced, "why_not": why}


def past_lines(judged: dict) -> list[str]:
    """What the 08-past path prints: each run, then the verdict."""
    lines = [f"{PAST} ({judged['lever']}): {len(judged['runs'])} run(s), each in a fresh process, "
             f"on {machine_name()}"]
    for i, e in enumerate(judged["runs"], start=1):
        speed = f"{e['images_per_s']:,.0f} images/s" if e["images_per_s"] else "no speed"
        lines.append(f"  run {i}: {e['status']}, {'gated' if e['gated'] else 'NOT gated'}, {speed}"
                     f" -> {'holds' if e['held'] else 'does not hold'}"
                     + (f" ({e['note']})" if e["note"] and not e["held"] else ""))
    spread = judged["spread"]
    lines.append(f"  at least {judged['goal_images_per_s']:,.0f} images/s and gated in "
                 f"{judged['held']} of {len(judged['runs'])}; spread "
                 + (f"{100 * spread:.1f}%" if spread is not None else "n/a")
                 + f" (at most {100 * judged['max_spread']:.0f}%)")
    lines.append("  REPRODUCED" if judged["reproduced"] else f"  NOT reproduced: {judged['why_not']}")
    return lines


def past_main(args: argparse.Namespace, gpu: bool | None = None,
              run_once_fn=past_run_once) -> int:
    """The 08-past path: N fresh processes, judged and written after each (a cut-short job
    keeps the runs before it). Exit 0 reproduced, 1 not, 2 when it cannot run here."""
    if gpu is None:
        import torch

        gpu = torch.cuda.is_available()
    if not gpu:
        print(f"{PAST} needs a CUDA GPU: it times benchmarks/gpu_past_defaults.py's GPU levers "
              "(issue 41's goal is the H200's); nothing was run.", file=sys.stderr)
        return 2
    from labkit.chapters.ch08_inference_ladder import past_defaults, past_view

    if not args.levers:
        # the reference record's best kept rung, not a name typed into the call (review
        # 2026-12-05u item 1: the call judged batch 2048, a rung its keep rule never kept)
        args.levers = past_view.recorded_best_kept() or ""
        if not args.levers:
            print(f"{PAST} needs --levers '<lever name>' (python3 benchmarks/gpu_past_defaults.py --list): "
                  "the reference record has no kept rung to default to", file=sys.stderr)
            return 2
        print(f"{PAST}: no --levers given; judging the reference record's best kept rung, {args.levers}",
              flush=True)

    try:
        names = past_defaults.parse_names(args.levers, [lv.name for lv in past_defaults.gpu_levers()])
    except past_defaults.PastDefaultsError as error:
        print(str(error), file=sys.stderr)
        return 2
    if len(names) != 1:
        print(f"{PAST} judges one lever; --levers named {names}", file=sys.stderr)
        return 2
    lever = names[0]
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / past_record_name(machine_name(), lever)
    runs: list[dict] = []
    for i in range(args.runs):
        print(f"run {i + 1} of {args.runs} ...", flush=True)
        runs.append(run_once_fn(lever, args.budget, args.timeout))
        judged = judge_past(lever, runs)
        write_past(path, args, runs, judged, complete=i + 1 == args.runs)
    lines = past_lines(judged)
    print("\n".join(lines))
    print(f"wrote {path}")
    return 0 if judged["reproduced"] else 1


def write_past(path: Path, args: argparse.Namespace, runs: list[dict], judged: dict,
               complete: bool) -> None:
    """The 08-past runs so far, judged, as JSON (rewritten after each run)."""
    path.write_text(json.dumps({
        "chapter": PAST, "machine": machine_name(), "runs": len(runs), "runs_asked": args.runs,
        "complete": complete, "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "argv": ["--levers", args.levers, "--runs", str(args.runs), "--budget", f"{args.budget:g}"],
        "fingerprint": env.fingerprint(), "judged": judged,
        # where the runs were handed one Triton kernel cache (rerecord_calls.sh D3), its folder:
        # the runs shared compiled kernels (each still compiled and autotuned its own rungs)
        "shared_triton_cache": os.environ.get("TRITON_CACHE_DIR"),
        "all_agree": judged["reproduced"],
        "records": runs,
    }, indent=1, default=str))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapter", help="chapter key or number, e.g. 02_contiguity_and_hidden_copies or 02")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes, one after another (default 3)")
    parser.add_argument("--quick", action="store_true", help="small sizes and rounds: a smoke test")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "reproduce",
                        help="folder for <machine>-<chapter>.json (default results/reproduce)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--levers", default="", help=f"{PAST} only: the one lever judged (default: the "
                        "reference record's best kept rung, results/h200_past_defaults/)")
    parser.add_argument("--budget", type=float, default=130.0,
                        help=f"{PAST} only: gpu_past_defaults.py's --budget per run (default 130)")
    args = parser.parse_args(argv)
    if args.chapter == PAST:
        if args.runs < 1:
            parser.error(f"--runs must be at least 1, got {args.runs}")
        return past_main(args)
    known = reproducers()
    chapter = resolve(args.chapter, known)
    if args.child is not None:
        child(chapter, args.child, args.quick)
        return 0
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    module = known[chapter]
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{machine_name()}-{chapter}.json"
    runs: list[dict] = []
    started = time.perf_counter()
    for i in range(args.runs):
        print(f"run {i + 1} of {args.runs} ...", flush=True)
        runs.append(run_once(chapter, args.quick, args.timeout))
        print("\n".join(phase_lines(runs[-1], i + 1)), flush=True)
        write(path, chapter, args, runs, module, complete=i + 1 == args.runs)
    lines = report(chapter, summarise(runs), args.runs)
    numbers = numbers_summary(module, runs)
    if numbers:
        lines += numbers["lines"]
        if not numbers.get("agree"):
            lines.append("  NOT reproduced: the verdicts may agree, the chapter's numbers did not "
                         "(all_agree: false)")
    each = ", ".join(f"{r['wall_s']:.1f}" for r in runs)
    lines.append(f"  wall time: {time.perf_counter() - started:.1f} s for {args.runs} run(s) "
                 f"({each} s each)")
    print("\n".join(lines))
    print(f"wrote {path}")
    return 0


def numbers_summary(module: ModuleType, runs: list[dict]) -> dict | None:
    """The chapter's own summary of its recorded numbers, where it has one."""
    summarise_numbers = getattr(module, "summarise_numbers", None)
    if not callable(summarise_numbers) or not all("numbers" in r for r in runs):
        return None
    return summarise_numbers([r["numbers"] for r in runs])


def write(path: Path, chapter: str, args: argparse.Namespace, runs: list[dict],
          module: ModuleType, complete: bool) -> None:
    """The runs so far as JSON (rewritten after each run: a cut-short job keeps what it had)."""
    summary = summarise(runs)
    numbers = numbers_summary(module, runs)
    path.write_text(json.dumps({
        "chapter": chapter, "machine": machine_name(), "runs": len(runs),
        # when this record was written (UTC): the ledger compares it with the reference verdict's
        # own recorded_at, to tell a record older than the verdict it is shown beside
        "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runs_asked": args.runs, "complete": complete, "quick": args.quick,
        "fingerprint": env.fingerprint(), "seconds": [r["seconds"] for r in runs],
        "wall_s": [r.get("wall_s") for r in runs], "phases": [r.get("phases", {}) for r in runs],
        # all_agree: every claim's verdict AND the chapter's own numbers where it summarises
        # them (chapter 08's keep sets and top rung; review 2026-12-03e item 5: the record said
        # true beside keep sets that differed); each part also on its own
        "claims": summary, "verdicts_agree": all(e["agree"] for e in summary.values()),
        "numbers_agree": None if numbers is None else bool(numbers.get("agree")),
        "all_agree": all(e["agree"] for e in summary.values()) and (numbers is None or bool(numbers.get("agree"))),
        "numbers": [r["numbers"] for r in runs if "numbers" in r],
        "numbers_summary": numbers,
        "evidence": [{v["claim_id"]: v.get("evidence") for v in r["verdicts"]} for r in runs],
    }, indent=1, default=str))


if __name__ == "__main__":
    sys.exit(main())
