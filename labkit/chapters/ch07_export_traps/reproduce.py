"""Chapter 07's entry point for the reproduce check (benchmarks/reproduce.py 07 --runs 3).

Chapter 07 has one timing-based verdict, C15d (the transposed input's latency through a
TensorRT engine against the contiguous input's): `measure_verdicts` measures it as the
notebook does (the traced model fed both inputs, interleaved through `Chapter.measured`;
Torch-TensorRT where it is installed) and judges it; without TensorRT it is 'depends' every
time, with the traced model's own ratio shown beside it. C15a-c decide by strides, errors and
documentation, not by timings, so they are not repeated.

The chapter also states timings that are not verdicts, and a learner reads them as findings,
so `measure_numbers` re-measures each and says what it decided, the same way in every run or
not (`summarise_numbers`):

- Trap 3: ONNX Runtime's layout preference on against off, called as the page calls it (the
  quiz's 'faster / about the same / slower', a 10% band: `tables.layout_preference_effect`);
  whether the per-round range excludes 1 is kept beside it (`range_call`), not judged;
- the traced model, transposed against contiguous input (C15d's shown ratio);
- Trap 2: the channels_last model fed an NCHW input against a channels_last one, called as the
  page prints it (`tables.trap2_decision`: the rounds against 1x, a +-2% band, held back where
  a flagged timing could carry it across 1x);
- the speed table's fastest path correct on every layout, per clock, as the page calls it
  (`tables.speed_call`: named only where it beats eager and the runner-up by `tables.ratio_call`,
  the rounds' IQR as printed clear of the +-2% band, 'at the band's edge' where they cross it,
  else a tie, and where the trust rule lets
  its ratio be stated; on the GPU, where the launch probe outlasts a device time, each path set against
  eager in a loop's wall time, timed as the page times it (`export_traps.timed_loop`), where
  either runs launch-bound in it by chapter 02's rule, else on device time; AOTInductor left
  out: its compile would take most of a run; the chapter times it once), with the timings it
  is taken on (`tables.speed_record`), and each clock's call compared with the recorded
  page's (`page_calls`, `reference_agreement`: 'NOT reproduced' where a run called otherwise;
  review 2026-12-04m item 1), Trap 2's and Trap 3's calls too (the page's record 'trap_calls',
  else its H200 copy). Each measurement is sampled as the page samples it.

A range decision is 'faster' or 'slower' only when the whole per-round IQR, as printed (two
decimals), lies more than 2% from 1x (review 2026-12-04n 05-07 item 1: not the median alone); a
range on one side inside the band is 'within +-2% (too small to call)' (Trap 2's 1.01x on the
H200); one that crosses the band's edge 'at the band's edge (not called)'; else 'no
measurable difference'. About 40 s a run on an
H200 host (no AOTInductor), so three runs take about 2 minutes; quick: fewer rounds.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence

import torch

from labkit import claims, session
from labkit.audit import export_audit
from labkit.chapters.ch07_export_traps import claims as ch07
from labkit.chapters.ch07_export_traps import export_traps, tables
from labkit.core import results
from labkit.measure import progress

KEY = "07_export_traps"
# the rule lives in tables (the page prints Trap 2's call by it too: review 2026-12-04k item 10)
FASTER, SLOWER, NO_DIFFERENCE = tables.FASTER, tables.SLOWER, tables.NO_DIFFERENCE
NO_CALL_BAND, WITHIN_BAND, AT_EDGE = tables.NO_CALL_BAND, tables.WITHIN_BAND, tables.AT_EDGE
_log = logging.getLogger(__name__)
_PHASES = progress.Phases(_log)  # the parts of the last measure_verdicts() call
_timed = _PHASES.timed


def last_phases() -> dict[str, float]:
    """Seconds of each part of the last measure_verdicts() call in this process."""
    return dict(_PHASES.seconds)


def decision(low: float | None, high: float | None, ratio: float | None = None) -> str:
    """The call a reproduce run keeps: `tables.ratio_call`, the rule the page prints too."""
    return tables.ratio_call(low, high, ratio)


def _reading(comparison: object, name: str) -> dict:
    """One variant of a comparison as a reproduce run keeps it: ratio, per-round range, decision."""
    variant = comparison[name]  # type: ignore[index]
    return {"ratio": variant.ratio, "low": variant.ratio_q25, "high": variant.ratio_q75,
            "decision": decision(variant.ratio_q25, variant.ratio_q75, variant.ratio)}


def _setup(quick: bool) -> tuple[session.Chapter, tables.Setup]:
    chapter = session.open(KEY, announce=False)
    frozen = tables.setup(chapter.device, chapter.on_gpu)
    if quick:  # a smoke test: the CPU's small model wherever it runs
        frozen = tables.setup(chapter.device, False)
    return chapter, frozen


def measure_verdicts(quick: bool = False) -> list[claims.Verdict]:
    """C15d measured and judged as the notebook judges it on this machine."""
    _PHASES.seconds.clear()
    chapter, frozen = _setup(quick)
    model, example = frozen.model.eval(), frozen.example
    inputs = export_audit.layouts(example)
    with torch.no_grad(), export_audit._quiet():
        traced = torch.jit.trace(model, example)
        trace_cmp, trace_flags = _timed("the traced model, transposed against contiguous", lambda: chapter.measured(
            {"contiguous input": lambda: traced(inputs[tables.NCHW]),
             "transposed input": lambda: traced(inputs[tables.TRANSPOSED])},
            baseline="contiguous input", case=ch07.TRACE_CASE, rounds=2 if quick else 5,
            rep_ms=20 if quick else 200))
    trt_run = _timed("Torch-TensorRT", lambda: export_traps.run_torch_tensorrt(model, example))
    ratio, spread = tables.ratio_and_spread(trt_run.comparison, "transposed input")
    evidence = {
        "tensorrt_ran": trt_run.ran, "tensorrt_skipped_because": trt_run.skipped_because,
        "tensorrt_transposed_ratio": ratio, "tensorrt_transposed_ratio_iqr": spread,
        "trace_transposed_ratio": trace_cmp["transposed input"].ratio,
        "trace_transposed_ratio_iqr": [trace_cmp["transposed input"].ratio_q25,
                                       trace_cmp["transposed input"].ratio_q75],
        "flags": trace_flags + (trt_run.comparison.flags(ch07.TENSORRT_CASE) if trt_run.comparison else []),
        "device": str(chapter.device), "torch": torch.__version__,
    }
    return [claims.get("C15d").judge(evidence, form=ch07.form_of("C15d", evidence))]


def deciding_ratios(verdict: claims.Verdict) -> dict[str, float]:
    """C15d's ratio through TensorRT where one was timed, and the traced model's (shown)."""
    ev = verdict.evidence
    out = {}
    if ev.get("tensorrt_transposed_ratio") is not None:
        out["TensorRT transposed / contiguous"] = float(ev["tensorrt_transposed_ratio"])
    if ev.get("trace_transposed_ratio") is not None:
        out["traced model transposed / contiguous (shown)"] = float(ev["trace_transposed_ratio"])
    return out


def measure_numbers(quick: bool = False) -> dict:
    """The chapter's timing statements that are not verdicts, each with its decision, and the
    seconds of each phase."""
    phases = progress.Phases(_log)

    chapter, frozen = _setup(quick)
    model, example, onnx_path = frozen.model.eval(), frozen.example, frozen.onnx_path
    rep_ms = 20.0 if quick else 200.0  # Trap 2's sampling on the page (channels_last_declared_nchw's)
    paths = tuple(p for p in export_audit.PATHS if p != "aoti")
    audit = phases.timed("audit (no AOTInductor)", lambda: export_audit.run(model, example, paths=paths,
                                                                     workdir=onnx_path.parent))
    out: dict = {"device": str(chapter.device)}
    # the page's sampling (export_audit.speed's defaults; review 2026-12-04l: this took 200 ms, the page 300)
    sampled = {"rounds": 2, "rep_ms": rep_ms} if quick else {}
    speed = phases.timed("speed table", lambda: export_audit.speed(audit, example, model, **sampled))
    looped = {"rounds": 2, "rep_ms": rep_ms} if quick else {}
    loop = phases.timed("speed table: a loop of calls", lambda: export_traps.timed_loop(
        speed, audit, example, model, **looped))  # None unless a GPU path is launch-bound, as on the page
    out["fastest_correct"] = fastest_calls(speed, loop)
    # the timings the call is taken on: each path's device time and probe, the loop's per call and
    # over device time (review 2026-12-04m item 1: the record kept only the call)
    out["speed"] = tables.speed_record(speed, loop)
    declared = phases.timed("trap 2: NCHW input to the channels_last model", lambda: export_traps.channels_last_declared_nchw(
        model, example, rep_ms=rep_ms, onnx_path=onnx_path))
    trap2_loop = getattr(declared, "loop", None)  # timed where the probe outlasts a device time
    out["trap2_nchw_input"] = {**_reading(declared.eager, "NCHW input"),
                               "decision": tables.trap2_decision(declared.eager, loop=trap2_loop)}  # the page's call
    if trap2_loop is not None:
        out["trap2_nchw_input"]["loop"] = {**_reading(trap2_loop, "NCHW input"), "over_device": tables.loop_over_device(
            declared.eager, trap2_loop)}
    ort_rep_ms = rep_ms if quick else export_traps.ORT_REP_MS
    ort = phases.timed("trap 3: ONNX Runtime's layout preference", lambda: export_traps.ort_layout_preference(
        model, example, rep_ms=ort_rep_ms, onnx_path=onnx_path))
    if ort.comparison is not None and "NCHW declared, on" in ort.comparison.variants:
        # with its sampling, so the page can tell a record taken as it is from an older one
        # (tables.trap3_reproduced; review 2026-12-04k item 3)
        reading = _reading(ort.comparison, "NCHW declared, on")
        out["trap3_preference_on"] = {**reading, "range_call": reading["decision"],
                                      "decision": tables.layout_preference_effect(ort),  # the page's call
                                      "quiz": tables.layout_preference_effect(ort),
                                      "sampling": {"rep_ms": ort_rep_ms, "rounds": export_traps.ORT_ROUNDS}}
    out["phases"] = phases.seconds
    return out


def fastest_calls(speed: export_audit.Speed, loop: object | None) -> dict[str, str]:
    """The speed table's call per clock, as the page prints it (`tables.speed_call`, the loop's
    wall time deciding on the GPU clock where it was timed)."""
    return {clock: tables.speed_call(comparison, speed.correct_on_all,
                                     loop if clock != export_audit.CPU_CLOCK else None).call
            for clock, comparison in speed.comparisons.items()}


STATEMENTS = {"trap2_nchw_input": "Trap 2: the channels_last model fed NCHW against channels_last",
              "trap3_preference_on": "Trap 3: ONNX Runtime's layout preference on against off"}
RECORDED = "recorded"  # summarise_numbers' default: read the recorded page's calls from results/
SPEED_CELL = "tables.speed_table("  # the page's speed cell, in its H200 copy
_CALL_LINE = re.compile(r"^(?:fastest path correct on all layouts: (?P<named>.+?), (?:\d|no )"
                        r"|no path correct on all layouts is fastest by more than \d+%: (?P<band>.+?) \("
                        r"|no path correct on all layouts is called fastest: (?:a (?P<eager_tie>tie with eager)|(?P<tie>[^()]+? tie)) \("
                        r"|no path correct on all layouts is called fastest: (?P<edge>at the band's edge with eager) \("
                        r"|no path correct on all layouts is called fastest: (?P<held>.+?) ran )")


def _call_of_line(line: str) -> str | None:
    """A page's speed-call sentence as the call reproduce records (`tables.call_kind`'s form: a
    tie as a tie, however the page worded it)."""
    found = _CALL_LINE.match(line)
    if found is None:
        return None
    if found["held"]:
        return f"{tables.NOT_RESOLVED} ({found['held']} held back)"
    return tables.call_kind(found["named"] or found["band"] or found["eager_tie"] or found["tie"] or found["edge"])


def calls_in_copy(text: str) -> dict[str, str]:
    """The speed calls a page printed, per clock, read off its speed cell's text output: each
    call line belongs to the clock of the 'timed with <clock>' table above it (a loop's table
    keeps its device table's clock)."""
    calls, clock = {}, None
    for line in text.splitlines():
        if line.startswith("timed with "):
            clock = line.removeprefix("timed with ").strip()
        call = _call_of_line(line.strip())
        if call is not None and clock is not None:
            calls[clock] = call
    return calls


_TRAP2_LINE = re.compile(r"the call: (.+?)(?: \(the rounds against 1x|: a flagged timing)")
_TRAP3_LINE = re.compile(r"the NCHW-declared model ran (faster|slower|about the same) ")


def _cell_text(cell: Mapping) -> str:
    return "".join("".join(o.get("text") or (o.get("data") or {}).get("text/plain") or "")
                   for o in cell.get("outputs", []))


def statements_in_copy(cells: Sequence[Mapping]) -> dict[str, str]:
    """Trap 2's and Trap 3's calls as a page's copy printed them (its declared_table and ort_table
    cells), keyed as the runs record them."""
    found = {}
    for cell in cells:
        source = "".join(cell.get("source", "")) if cell.get("cell_type") == "code" else ""
        for marker, key, pattern in (("tables.declared_table(", "trap2_nchw_input", _TRAP2_LINE),
                                     ("tables.ort_table(", "trap3_preference_on", _TRAP3_LINE)):
            if marker in source and (hit := pattern.search(_cell_text(cell))):
                found[key] = hit[1]
    return found


def page_calls(machine: str = results.DEFAULT_REFERENCE) -> dict | None:
    """The recorded reference page's calls, as the runs' are compared with them (review
    2026-12-04m item 1: 05's 'reference' check, for 07): {'calls': {clock: call kind},
    'statements': {Trap 2's and 3's key: call}, 'device', 'source'}. From the page's record (keys
    'speed_call' and 'trap_calls', recorded from the next re-record on), else read off the page's
    H200 copy (results/h200_notebooks/07_export_traps.ipynb, the page as it printed it); None where
    neither is present."""
    payload = results.recorded(KEY, "speed_call", machine)
    if isinstance(payload, Mapping) and payload.get("calls"):
        traps = results.recorded(KEY, "trap_calls", machine)
        statements = {k: str(v) for k, v in (traps or {}).items() if k in STATEMENTS} \
            if isinstance(traps, Mapping) else {}
        return {"calls": {c: tables.call_kind(str(v)) for c, v in payload["calls"].items()},
                "statements": statements, "device": payload.get("device"),
                "source": f"{machine}'s recorded page"}
    copy = results.repository_results_dir() / "h200_notebooks" / f"{KEY}.ipynb"
    if machine != results.DEFAULT_REFERENCE or not copy.is_file():
        return None
    try:
        cells = json.loads(copy.read_text()).get("cells", [])
    except ValueError:
        return None
    for cell in cells:
        if cell.get("cell_type") == "code" and SPEED_CELL in "".join(cell.get("source", "")):
            text = _cell_text(cell)
            calls = calls_in_copy(text)
            devices = re.findall(r"CUDA events on (\S+)", text)
            return {"calls": calls, "statements": statements_in_copy(cells),
                    "device": devices[0] if devices else None,
                    "source": f"{machine}'s page (its H200 copy)"} if calls else None
    return None


def reference_agreement(runs: Sequence[dict], reference: Mapping) -> dict:
    """Each clock's call the page made against every run's (`tables.call_kind`: the call, not the
    clock it was taken on): {clock: (the page's call, in how many runs)}; Trap 2's and Trap 3's
    calls likewise ('statements', {key: (the page's call, in how many runs)}); and 'differ', the
    clocks and statements where not every run called what the page called. Only runs on the page's
    device are compared ('runs'); a CPU run is not the H200 page's."""
    same_device = [r for r in runs if reference.get("device") and r.get("device") == reference["device"]]
    found = {}
    for clock, call in (reference.get("calls") or {}).items():
        call = tables.call_kind(str(call))  # a tie as a tie, however it was worded
        seen = [tables.call_kind(str((r.get("fastest_correct") or {}).get(clock, "not measured")))
                for r in same_device]
        found[clock] = (call, sum(1 for c in seen if c == call))
    statements = {}
    for key, call in (reference.get("statements") or {}).items():
        seen = [str((r.get(key) or {}).get("decision", "not measured")) for r in same_device]
        statements[key] = (str(call), seen.count(str(call)))
    differ = [name for name, (_, n) in (found | statements).items() if n < len(same_device)]
    return {"calls": found, "statements": statements, "differ": differ, "runs": len(same_device)}


def _loop_line(run: Mapping) -> str:
    """One run's loop of calls per path: its ratio to eager and its per call over device time."""
    loop = (run.get("speed") or {}).get("loop") or {}
    return ", ".join(f"{name} {row['ratio']:.2f}x (loop over device {row['over_device']:.2f}x)"
                     for name, row in loop.items() if row.get("over_device") is not None)


def summarise_numbers(runs: Sequence[dict], reference: Mapping | str | None = RECORDED) -> dict:
    """Across runs: each timing statement's decision as the page calls it (Trap 3's is its
    quiz's answer) and the fastest correct path per clock, in every run, and whether each was
    the same in all; then each of those calls against the recorded page's own (`page_calls`,
    `reference_agreement`: 'NOT reproduced' where a run called otherwise). 'agree' is both."""
    if not runs:
        raise ValueError("summarise_numbers needs the numbers of at least one run")
    seen: dict[str, list[str]] = {}
    for key, label in STATEMENTS.items():
        seen[label] = [r[key]["decision"] if key in r else "not measured" for r in runs]
    clocks = list(dict.fromkeys(c for r in runs for c in r["fastest_correct"]))
    for clock in clocks:
        seen[f"fastest correct path ({clock})"] = [r["fastest_correct"].get(clock, "not measured") for r in runs]
    # a fastest-path call is compared as the page is (`tables.call_kind`): the clock named beside
    # it is not a different call (2026-12-05 17:55 H200: run 1 timed a loop, kept device time and
    # recorded 'tie with eager (device time)'; runs 2 and 3 timed no loop: 'tie with eager')
    compared = {label: [tables.call_kind(v) if label.startswith("fastest") else v for v in values]
                for label, values in seen.items()}
    same = [label for label, values in compared.items() if len(set(values)) == 1 and values[0] != "not measured"]
    lines = [f"  {label}: {', '.join(values)} -> "
             + (f"the same in {len(values)} of {len(values)}" if label in same else "NOT the same")
             for label, values in seen.items()]
    for i, r in enumerate(runs, start=1):
        ratios = ", ".join(f"{key} {r[key]['ratio']:.2f}x ({r[key]['low']:.2f}-{r[key]['high']:.2f})"
                           for key in STATEMENTS if key in r)
        lines.append(f"    run {i}: {ratios}")
        if _loop_line(r):
            lines.append(f"      loop of calls: {_loop_line(r)}")
    if reference == RECORDED:
        reference = page_calls()
    out = {"decisions": seen, "same": same, "lines": lines}
    reference_agree = True
    if isinstance(reference, Mapping):
        against = reference_agreement(runs, reference)
        if against["runs"]:
            out["reference"] = against
            reference_agree = not against["differ"]
            said = {f"fastest correct path ({clock})": v for clock, v in against["calls"].items()}
            said |= {STATEMENTS[key]: v for key, v in against["statements"].items()}
            for label, (call, n) in said.items():
                lines.append(f"  {label}: {reference.get('source', 'the page')}'s call "
                             f"({call}) in {n} of {against['runs']}"
                             + ("" if n == against["runs"] else ": NOT reproduced"))
    out["reference_agree"] = reference_agree
    out["agree"] = len(same) == len(seen) and reference_agree
    lines.append("  chapter 07's numbers: each call the same in every run"
                 + (" and as the recorded page called it" if "reference" in out else "")
                 + f" -> {'reproduced' if out['agree'] else 'NOT reproduced'}")
    return out
