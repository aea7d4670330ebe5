"""Chapter 08's optional "Past the defaults" section, rendered from a recorded run (issue 41).

`benchmarks/gpu_past_defaults.py` climbs past the top rung on a GPU (about 8 minutes on an
H200: max-autotune alone autotunes for minutes) and writes past_defaults.json. The chapter
does not re-run that climb: it shows the reference machine's file
(results/h200_past_defaults/past_defaults.json), labelled recorded, on every machine; a
learner who runs the script on their own GPU passes their file's path instead.

What is shown, each number read from the file (nothing typed in):

- one row per rung: the gate's verdict with its relative error against strict float32 (and
  the tolerance of the rung's math); images/s and its gain over the rung it changes (median
  of interleaved rounds, with the IQR) only when the gate passed, so a refused rung is shown
  as refused and never as a speed; the cold compile and the batches it takes to pay back;
  device time per batch; keep or not, re-decided from the row's gain by today's rule
  (past_defaults.keep: the ladder's keep.gained), and said when the record decided otherwise;
  a record gated on fewer images than today's gate says so beside a refusal's count;
- the best gated rung's device time by kernel class and its idle share;
- the gap from that rung to MLPerf's published H200 figure, split into precision and
  efficiency (`roofline.gap_split`: measured numbers and published peaks, labelled).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from labkit.chapters.ch08_inference_ladder import attribution, keep, ladder, past_defaults, roofline
from labkit.core import results
from labkit.measure import timeline_stats
from labkit.show import table as tables

RECORDED = Path("h200_past_defaults") / "past_defaults.json"   # under the repository's results/
HOW_TO_CLIMB = ("python3 benchmarks/gpu_past_defaults.py --out past  (a GPU; the recorded run's "
                "time is printed under its table), then lab.past_view.section('past/past_defaults.json')")
# Levers with a control of their own: the rung that differs from the lever by the lever alone.
# Every lever is timed against the top rung; its gain over its own control is the ratio of the
# two gains (both over the same top rung, from separate comparisons), and says what the lever
# itself is worth where the top-rung gain mixes in another change (a regime, a batch).
OWN_CONTROL = {"Triton fused epilogue": "GEMM path in torch (control)",
               "freezing at batch 1024": "batch 1024",
               "freezing + conv_1x1_as_mm": "freezing",
               "Triton compiled at batch 1024": "batch 1024",
               "Triton prologue, compiled": "Triton fused epilogue, compiled",
               "Triton prologue at batch 1024": "Triton compiled at batch 1024"}
# a lever run outside the top rung's regime (compiled + the ladder's CUDA graph) says so in its why
OTHER_REGIME = "eager + CUDA graph"
# attribution's kernel classes, in the order shown, with their short names for a column head
CLASSES = {"GEMM/conv": "GEMM", "elementwise": "elementwise", "reductions/norms": "reductions",
           "copies/layout": "copies", "other": "other"}
MARKS = {"refused": "#b00020", "kept": "#1b7f3b"}


class PastViewError(ValueError):
    """A file that is not a gpu_past_defaults.py record."""


def recorded_path() -> Path:
    """Where the reference machine's record lives (results/ of the course's checkout)."""
    return results.repository_results_dir() / RECORDED


def recorded_with_later() -> dict | None:
    """The reference's record with its later calls' rows (`with_later_calls`), read once for
    the three readings below; None without one, or where it cannot be read."""
    try:
        data = load()
    except PastViewError:
        return None
    return None if data is None else with_later_calls(data, recorded_path())


def recorded_best_kept() -> str | None:
    """The name of the reference record's best kept rung (`best_kept`, its later calls
    included), without the later-call mark: the lever benchmarks/reproduce.py 08-past judges
    when its call names none (review 2026-12-05u item 1). None without a record or a kept rung."""
    data = recorded_with_later()
    top = None if data is None else best_kept(data["rows"])
    return None if top is None else _plain(top)


def load(path: str | Path | None = None) -> dict | None:
    """A past_defaults.json (the reference's by default); None when that file does not exist.

    Raises PastViewError, naming the file, when it is not JSON or has no rows.
    """
    file = Path(path) if path is not None else recorded_path()
    if not file.is_file():
        return None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except ValueError as error:
        raise PastViewError(f"{file} is not JSON: {error}") from error
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise PastViewError(f"{file} has no 'rows' list: not written by benchmarks/gpu_past_defaults.py")
    return data


def label(data: Mapping, path: str | Path | None = None) -> str:
    """'recorded on NVIDIA H200, torch 2.11 (file)': where the numbers were measured."""
    where = str(data.get("device") or "an unnamed device")
    when = f", {data['recorded_at'][:10]}" if data.get("recorded_at") else ""
    source = Path(path).name if path is not None else "results/" + RECORDED.as_posix()
    return f"recorded on {where}, torch {data.get('torch', '?')}{when} ({source})"


def _num(value: object, fmt: str) -> str:
    if value is None or value == "never":
        return "never" if value == "never" else "-"
    if isinstance(value, float) and math.isinf(value):
        return "never"
    return format(value, fmt)


def _gate(row: Mapping, gate_images: int | None = None, low_precision: str = "") -> str:
    """The gate's verdict; a refusal on top-1 names its count of clear images, and a record
    gated on fewer images than today's gate (gate_images: the record's, None before it was
    written) says so: 15 clear images of 16 decided "80% < 90%" before the GPU gate took 64."""
    gate = row.get("gate")
    if not gate:
        return "-"
    verdict = "passed" if gate.get("passed") else "refused"
    shown = f"{verdict}: {gate['rel_error']:.1e} (tol {gate['tolerance']:.2g} {gate['math']})"
    if not gate.get("passed") and gate.get("why"):
        # the test that failed, which need not be the error shown (a top-1 count, say)
        clear = (f" of {gate['clear_images']} clear images"
                 if gate.get("clear_images") and "top-1" in gate["why"] else "")
        if clear and (gate_images or 0) < ladder.GPU_GATE_IMAGES:
            clear += (f" (an earlier gate: {gate_images or ladder.GATE_IMAGES} images; today's "
                      f"takes {ladder.GPU_GATE_IMAGES})")
        shown += f"; failed: {gate['why']}{clear}"
    elif gate.get("passed") and low_precision and gate.get("math") == low_precision and \
            (gate_images or 0) < ladder.GPU_GATE_IMAGES:
        # a low-precision rung passed on the earlier, smaller gate: said as the refusals say it
        # (review 2026-12-04i item 11: FP8 per-channel 'passed: 5.9e-02' on 16 images)
        shown += (f"; on an earlier gate: {gate_images or ladder.GATE_IMAGES} images"
                  + (f", {gate['clear_images']} clear" if gate.get("clear_images") else "")
                  + f" (today's takes {ladder.GPU_GATE_IMAGES})")
    return shown


def _speed(row: Mapping) -> tuple[str, str]:
    """(images/s, gain over its base) as shown: numbers only for a gated, timed rung."""
    status = row.get("status")
    if status != "measured" or not row.get("images_per_s"):
        why = {"refused": "refused by the gate: not timed",
               "gated only": "gated only: not timed (emulated)"}.get(status, f"{status}")
        return why, "-"
    gain = row.get("gain")
    shown = (f"{gain[0]:.3f}x [{gain[1]:.3f}-{gain[2]:.3f}] over {row.get('base', '?')}"
             if gain else "-")
    return f"{row['images_per_s']:,.0f}", shown


def _keep(row: Mapping, rows: Sequence[Mapping] = ()) -> str:
    """Kept or not by today's rule, from the row's own gain; a record that decided otherwise
    (review 2026-12-03e item 2: freezing kept on 1.010x, under the 2% minimum) says so.

    A lever with a control of its own (OWN_CONTROL) among `rows` is kept only when it also
    gains over that control (review 2026-12-04m 08-09-99 item 7: 'freezing at batch 1024' was
    kept on 1.078x over the top rung, where batch 1024 alone gave 1.077x: the batch, not the
    freezing, made the gain). Its interval over the control is the conservative quotient of
    the two intervals (its low over the control's high, its high over the control's low)."""
    if row.get("status") == "refused":
        return "refused"
    if row.get("status") != "measured" or not row.get("gain"):
        return "-"
    today = past_defaults.keep(True, "", tuple(row["gain"]))
    said = "kept" if today.kept else "not kept"
    control = _control_row(row, rows)
    if today.kept and control is not None:
        (got, low, high), (base, base_low, base_high) = row["gain"], control["gain"]
        over = past_defaults.keep(True, "", (got / base, min(low / base_high, got / base),
                                             max(high / base_low, got / base)))
        if not over.kept:
            said = f"not kept ({got / base:.2f}x over {control['name']}, its own control)"
    if row.get("kept") is not None and bool(row["kept"]) != said.startswith("kept"):
        said += f" (the record: {'kept' if row['kept'] else 'not kept'}, an earlier rule)"
    return said


def _call(row: Mapping) -> str:
    """Which call measured a row: a later call's file and time, or the record's own call."""
    return f"call {row['call']}" if row.get("call") else "the record's call"


def _unkept_base(row: Mapping, rows: Sequence[Mapping]) -> str:
    """For a later call's rung timed over a base other than the top rung: ' (call ...: its base not kept
    there, 1.005x)' where that base, in the same call, is not kept by today's rule (review
    2026-12-05u item 10: 'Triton prologue, compiled *' read 1.062x over a fused rung that its
    own call did not keep); '' otherwise."""
    base = str(row.get("base") or "")
    if not row.get("call") or not base or base == "top rung" or row.get("status") != "measured":
        return ""   # (the record's own call shows its bases in rows of their own, beside it)
    under = next((r for r in rows if _plain(r) == base and r.get("call") == row.get("call")
                  and r.get("status") == "measured" and r.get("gain")), None)
    if under is None or _kept_today(under, rows):
        return ""
    return f" ({_call(row)}: its base not kept there, {under['gain'][0]:.3f}x)"


def _control_row(row: Mapping, rows: Sequence[Mapping]) -> Mapping | None:
    """The measured control row of a lever in OWN_CONTROL, unless the record timed the lever
    over it already (its base is the control: its gain is the gain over the control)."""
    name = OWN_CONTROL.get(str(row.get("name")))
    if name is None or row.get("base") == name:
        return None
    return next((r for r in rows if r.get("name") == name and r.get("status") == "measured"
                 and r.get("gain")), None)


def _present(data: Mapping) -> list[str]:
    """The kernel classes any row of the record has, in CLASSES' order (unknown ones last)."""
    seen = {k for r in data["rows"] for k in (r.get("kinds") or {})}
    return [k for k in CLASSES if k in seen] + sorted(seen - set(CLASSES))


def _classes(row: Mapping, classes: list[str]) -> str:
    """The rung's time by kernel class as slash-separated percentages, in `classes`' order."""
    kinds = row.get("kinds") or {}
    if not kinds:
        return "-"
    return "/".join(f"{100 * kinds.get(k, 0.0):.0f}" for k in classes)


def _shown_rows(data: Mapping) -> list[Mapping]:
    """The rungs a table lists: every row but a skipped or failed one (said in a note)."""
    return [r for r in data["rows"] if r.get("status") not in ("skipped", "failed")]


def levers(rows: Sequence[Mapping]) -> list[list[Mapping]]:
    """The rows grouped by lever, in the order each lever first ran: a lever measured in several
    calls (its name the same but for the later-call mark) is one group, its calls in order."""
    grouped: dict[str, list[Mapping]] = {}
    for r in rows:
        grouped.setdefault(str(r.get("name", "")).removesuffix(f" {LATER}"), []).append(r)
    return list(grouped.values())


def rows_table(data: Mapping, shown_as: str = "", ladder_top: object | None = None,
               on_gpu: bool = True) -> tables.Table:
    """One row per rung of the record, in the order it ran: its gate, speed, gain and whether
    it is kept; what each costs and where its device time goes is `cost_table`'s (one table of
    ten columns scrolled sideways on a laptop). ladder_top (the chapter's own top rung, on_gpu
    or not) is compared with the record's under it (`top_note`)."""
    shown = tables.Table(
        f"Past the defaults: ResNet-50 at {data.get('image', '?')} px from the top rung "
        f"(batch {dict(data.get('top_settings') or {}).get('batch', '?')})",
        ["rung", "gate vs strict float32", "images/s", "gain over its base [IQR]", "keep"],
        recorded=shown_as, marks=MARKS)
    skipped = [f"{row['name']} ({row['status']}: {str(row.get('note', ''))[:140]})"
               for row in data["rows"] if row.get("status") in ("skipped", "failed")]
    for calls in levers(_shown_rows(data)):
        row = calls[0]
        if len(calls) == 1:
            speed, gain = _speed(row)
            shown.add(row["name"], _gate(row, data.get("gate_images"), str(data.get("fp8_gate_math") or "")),
                      speed, gain + _unkept_base(row, data["rows"]), _keep(row, data["rows"]))
            continue
        # one lever measured in several calls is one row (review 2026-12-05t 08 item 4: the
        # fused epilogue read kept 1.051x in one call and not kept 1.005x in another, two rows)
        speeds, gains, kept = [], [], 0
        for r in calls:
            speed, gain = _speed(r)
            speeds.append(speed)
            gains.append(f"{gain} ({_call(r)})")
            kept += _keep(r, data["rows"]).startswith("kept")
        shown.add(row["name"], _gate(row, data.get("gate_images"), str(data.get("fp8_gate_math") or "")),
                  " / ".join(speeds), "; ".join(gains), f"kept in {kept} of {len(calls)} calls")
    if data.get("later_calls"):
        shown.note(f"{LATER}: measured in a later call, over that call's own top rung: "
                   + "; ".join(data["later_calls"]))
    if skipped:  # said, not folded: a lever the budget skipped is not a lever measured
        shown.note(f"Not run or failed ({len(skipped)}): " + "; ".join(skipped))
    checks = data.get("reproduced") or []
    for check in checks:  # each lever's check, oldest first
        shown.note(reproduce_line(check))
    timed_elsewhere = sorted({step for check in checks for step in reproduce_steps(check)})
    for line in untimed_lines(data["rows"], timed_elsewhere):
        shown.note(line)
    note = top_note(data, ladder_top, on_gpu)
    if note:
        shown.note(note)
    controls = own_controls(data["rows"])
    if controls:
        shown.note("Over its own control (a ratio of two gains over the top rung): " + "; ".join(controls))
    if data.get("seconds"):
        shown.note(f"The recorded climb took {data['seconds']:.0f} s.")
    fp8 = next((r.get("note") for r in data["rows"] if "FP8" in r["name"] and r.get("note")
                and r.get("status") not in ("skipped", "failed")), None)
    if fp8:
        shown.note(f"FP8 rungs: {fp8}; gated at {data.get('fp8_gate_math', 'bfloat16')}'s tolerance.")
    return shown


def cost_table(data: Mapping, shown_as: str = "") -> tables.Table:
    """The same rungs, in the same order, by what they cost (the cold compile and the batches
    it takes to repay) and what bound them (device time per batch, GPU idle, device time by
    kernel class): the profile every explanation of a rung must follow from."""
    classes = _present(data)
    shown = tables.Table(
        "What each rung costs and where its time goes",
        ["rung", "compile s (cold)", "payback batches", "device ms/batch", "GPU idle",
         "time by class, %: " + "/".join(CLASSES.get(k, k) for k in classes)],
        recorded=shown_as, marks=MARKS)
    for calls in levers(_shown_rows(data)):
        cells = []
        for row in calls:
            device_s, idle = row.get("device_s"), row.get("idle_share")
            cells.append((_num(row.get("compile_s"), ".1f"), _num(row.get("payback_batches"), ",.0f"),
                          _num(None if device_s is None else 1e3 * device_s, ".2f"),
                          _num(None if idle is None else 100 * idle, ".0f") + ("%" if idle is not None else ""),
                          _classes(row, classes)))
        shown.add(calls[0]["name"], *(" / ".join(c[i] for c in cells) for i in range(5)))
    shown.note("time by class: device time on a GPU (kernel records), CPU op self time on a CPU; "
               "payback: batches until the cold compile is repaid by the time saved per batch"
               + ("; a lever measured in several calls: each call's figures, in the table above's order"
                  if any(len(c) > 1 for c in levers(_shown_rows(data))) else "") + ".")
    shapes = data.get("shapes") or {}
    if shapes.get("total_ms_per_batch"):
        # a pointer, not the timings (review 2026-12-05t 08 item 4): timed alone, outside the
        # network, they do not predict what the layers cost inside it
        shown.note(shapes_pointer(shapes["total_ms_per_batch"], data["rows"]))
    return shown


def shapes_pointer(totals: Mapping[str, float], rows: list) -> str:
    """One line pointing at the record's 1x1 shape-by-shape timings, not showing them."""
    top = next((r for r in rows if r.get("name") == "top rung" and r.get("device_s")), None)
    why = ("; timed alone they add up past the top rung's whole device time, so they do not "
           "predict the network's cost" if top is not None and max(totals.values()) > 1e3 * top["device_s"]
           else "")
    return f"The 1x1 convolutions timed shape by shape outside the network: the record's 'shapes'{why}."


# A lever the script builds and the CPU tests check (its GEMM against torch's, and the gate) that
# no GPU record has timed yet: said, not left out (review 2026-12-04n item 4: the INT8 lever had
# no row on any page and no scheduled GPU call)
UNTIMED = "built and checked on the CPU against PyTorch; not yet timed on a GPU"
UNTIMED_MODELS = ("int8", "triton-op-prologue", "triton-op-prologue-wide")


def untimed(rows: Sequence[Mapping], timed_elsewhere: Sequence[str] = ()) -> list[str]:
    """The GPU levers of UNTIMED_MODELS that no row of the record reached on a GPU (measured,
    refused or gated; a later call's row, marked LATER, counts) nor a reproduce check timed
    (`timed_elsewhere`), in the script's order."""
    reached = {str(r.get("name", "")).removesuffix(f" {LATER}") for r in rows
               if r.get("status") in ("measured", "refused", "gated only")} | set(timed_elsewhere)
    return [lv.name for lv in past_defaults.gpu_levers()
            if lv.model in UNTIMED_MODELS and lv.name not in reached]


def untimed_lines(rows: Sequence[Mapping], timed_elsewhere: Sequence[str] = ()) -> list[str]:
    """A line for each `untimed` lever: UNTIMED where no GPU row names it; where a row says the
    GPU call skipped it or it failed (listed under 'Not run or failed'), that instead (review
    2026-12-05o 08-09-99 item 6b: a failed INT8 row read as failed and as not yet timed)."""
    tried = {str(r.get("name", "")).removesuffix(f" {LATER}"): r["status"] for r in rows
             if r.get("status") in ("skipped", "failed")}
    said = {"failed": "tried on a GPU: failed (see above)",
            "skipped": "on the GPU call: skipped (see above)"}
    shorts = {lv.name: lv.short for lv in past_defaults.gpu_levers() if lv.short}
    return [f"{lever}{f' ({shorts[lever]})' if lever in shorts else ''}: "
            f"{said[tried[lever]] if lever in tried else UNTIMED}."
            for lever in untimed(rows, timed_elsewhere)]


# benchmarks/reproduce.py 08-past's records in results/reproduce/, one a lever (session aa: the
# name had no lever, and D3's check overwrote the batch-2048 lever's, then read "not yet timed")
REPRODUCED = "*-08_past_defaults*.json"


def reproduce_checks(main: Path) -> list[dict]:
    """Issue 41's checks beside the reference record, oldest first: each reproduce.py 08-past
    record's judged runs of one lever (results/reproduce/<machine>-08_past_defaults-<lever>.json);
    [] where there is none or `main` is not the reference's record (a learner's own file has no
    such check). Each run's whole climb comes with it ('climbs': its measured rows), so a line
    can judge each run's best kept rung and count each step's keeps (review 2026-12-05u item 1)."""
    if main != recorded_path():
        return []
    checks = []
    for found in sorted((main.parent.parent / "reproduce").glob(REPRODUCED)):
        record = json.loads(found.read_text(encoding="utf-8"))
        climbs = [[r for r in (run or {}).get("rows") or [] if isinstance(r, Mapping)]
                  for run in record.get("records") or []]
        checks.append({**record.get("judged", {}), "file": f"results/reproduce/{found.name}",
                       "recorded_at": str(record.get("recorded_at", ""))[:16].replace("T", " "),
                       "shared_triton_cache": bool(record.get("shared_triton_cache")), "climbs": climbs})
    return sorted(checks, key=lambda c: c["recorded_at"])


def _plain(row: Mapping) -> str:
    return str(row.get("name", "")).removesuffix(f" {LATER}")


def _kept_today(row: Mapping, rows: Sequence[Mapping]) -> bool:
    return _keep(row, rows).startswith("kept")


def _chain_kept(row: Mapping, rows: Sequence[Mapping], depth: int = 0) -> bool:
    """Kept by today's rule (`_keep`), and so is every step under it down to its call's top
    rung: the base it was timed over, looked up in its own call (a later call's rows carry
    'call'). A rung whose base is missing or not kept is not a kept climb."""
    if depth > len(rows) or not _kept_today(row, rows):
        return False
    base = str(row.get("base") or "")
    if base == "top rung":
        return True
    under = next((r for r in rows if _plain(r) == base and r.get("call") == row.get("call")
                  and r.get("status") == "measured"), None)
    return under is not None and _chain_kept(under, rows, depth + 1)


def best_kept(rows: Sequence[Mapping]) -> Mapping | None:
    """The fastest rung the gate passed whose step, and every step under it, today's rule keeps
    (`_chain_kept`); None where no step was kept. Review 2026-12-05u item 1: the check judged
    batch 2048, a rung its own keep rule refused in 3 of 3 runs."""
    kept = [r for r in rows if r.get("status") == "measured" and r.get("images_per_s")
            and (r.get("gate") or {}).get("passed") and _chain_kept(r, rows)]
    return max(kept, key=lambda r: r["images_per_s"]) if kept else None


def step_counts(climbs: Sequence[Sequence[Mapping]]) -> list[str]:
    """Each step of the runs' climbs (but the top rung), in the order it first ran: how many
    runs kept it by today's rule, with its gain over its base in each run."""
    names: list[str] = []
    for rows in climbs:
        names += [_plain(r) for r in rows if _plain(r) != "top rung" and _plain(r) not in names]
    said = []
    for name in names:
        gains, kept, base = [], 0, ""
        for rows in climbs:
            row = next((r for r in rows if _plain(r) == name), None)
            if row is None or row.get("status") != "measured" or not row.get("gain"):
                gains.append(str((row or {}).get("status") or "missing"))
                continue
            gains.append(f"{row['gain'][0]:.3f}x")
            kept += _kept_today(row, rows)
            base = str(row.get("base") or base)
        count = (f"not kept in {len(climbs)} of {len(climbs)}" if kept == 0
                 else f"kept in {kept} of {len(climbs)}")
        said.append(f"{name}: {count} ({', '.join(gains)} over {base or 'its base'})")
    return said


def judge_runs(runs: Sequence[Mapping], goal: float, most: float, min_runs: int) -> dict:
    """Issue 41's check over one rung's fresh runs, each {'images_per_s', 'gated'}: the spread of
    its images/s, (max - min) / min, where every run measured it; how many runs the gate passed
    and reached `goal`; 'speed_held' (every run gated and measured, spread at most `most`) and
    'reproduced' (that, at least `min_runs` runs, and the goal reached in each). One rule for the
    page's line (`reproduce_line`) and benchmarks/reproduce.py 08-past (`judge_past`)."""
    speeds = [float(r["images_per_s"]) for r in runs if r.get("images_per_s")]
    spread = (max(speeds) - min(speeds)) / min(speeds) if runs and len(speeds) == len(runs) else None
    gated = sum(bool(r.get("gated")) for r in runs)
    reached = sum(s >= goal for s in speeds)
    held = sum(bool(r.get("gated")) and bool(r.get("images_per_s")) and float(r["images_per_s"]) >= goal
               for r in runs)
    spread_ok = spread is not None and spread <= most
    speed_held = bool(runs) and gated == len(runs) and spread_ok
    enough = len(runs) >= min_runs
    return {"speeds": speeds, "spread": spread, "spread_ok": spread_ok, "gated": gated, "reached": reached,
            "held": held, "speed_held": speed_held, "enough": enough,
            "reproduced": speed_held and enough and held == len(runs)}


def reproduce_line(check: Mapping) -> str:
    """The check in one line, from its runs: speeds, gate, spread, the goal held in how many.
    Its speed and the goal are said apart (review 2026-12-05t 08 item 4: a rung gated 3 of 3
    within a 1.0% spread read 'NOT reproduced' for missing the goal alone).

    Where the check carries each run's climb ('climbs'), the rung judged is each run's best
    kept rung (`best_kept`), not the lever the call named, and each step's keeps over the runs
    follow (review 2026-12-05u item 1: the line certified batch 2048, a rung not kept in any
    run); a check without climbs judges its lever, as before."""
    climbs = [c for c in check.get("climbs") or [] if c]
    if climbs:
        bests = [best_kept(rows) for rows in climbs]
        names = [_plain(b) if b else "none" for b in bests]
        judged = max(dict.fromkeys(names), key=names.count)  # a tie: the first run's, every time
        runs = [{"images_per_s": b.get("images_per_s"), "gated": bool((b.get("gate") or {}).get("passed"))}
                if b is not None and _plain(b) == judged else {} for b in bests]
        what = f"the best kept rung of each of {len(climbs)} fresh processes: {judged}, in {names.count(judged)} of {len(climbs)}"
    else:
        runs = list(check.get("runs") or [])
        what = f"{check.get('lever')!s} in {len(runs)} fresh processes"
    goal, most = float(check.get("goal_images_per_s") or 0), float(check.get("max_spread") or 0)
    judged_runs = judge_runs(runs, goal, most, int(check.get("min_runs") or 0))
    speeds, gated = judged_runs["speeds"], judged_runs["gated"]
    span = f"{min(speeds):,.0f}-{max(speeds):,.0f} images/s" if speeds else "no speed"
    # a check without climbs (an older record) keeps the verdict its call wrote
    spread = (judged_runs["spread"] or 0.0) if climbs else float(check.get("spread") or 0)
    reached = judged_runs["reached"] if climbs else int(check.get("held", 0))
    enough = judged_runs["enough"]
    held = (judged_runs["speed_held"] if climbs else
            bool(runs) and gated == len(runs) and len(speeds) == len(runs) and spread <= most)
    reproduced = judged_runs["reproduced"] if climbs else bool(check.get("reproduced"))
    verdict = ("reproduced" if reproduced else
               "its speed reproduced, the goal NOT reached" if held and enough else "NOT reproduced")
    shared = ", sharing one Triton kernel cache" if check.get("shared_triton_cache") else ""
    line = (f"Reproduced? {what}{shared} (benchmarks/reproduce.py 08-past, recorded "
            f"{check.get('recorded_at')} UTC, {check.get('file')}): {span}, gated in {gated} of "
            f"{len(runs)}, spread {100 * spread:.1f}% (at most {100 * most:.0f}%); at least "
            f"{goal:,.0f} images/s in {reached} of {len(runs)}: {verdict}.")
    if climbs:
        line += (" Each step over its base by today's keep rule"
                 + (f" (the call itself judged {check.get('lever')})" if check.get("lever") else "")
                 + ": " + "; ".join(step_counts(climbs)) + ".")
    return line


def reproduce_steps(check: Mapping | None) -> list[str]:
    """The levers a reproduce check timed: the one it named and every step of its runs' climbs."""
    if not check:
        return []
    return [str(check.get("lever"))] + sorted({_plain(r) for rows in check.get("climbs") or []
                                              for r in rows if r.get("status") == "measured"})


def own_controls(rows: list) -> list[str]:
    """Each lever with a control of its own (OWN_CONTROL): its gain over that control beside its
    gain over the top rung, and its regime when it is not the top rung's."""
    by_name = {r["name"]: r for r in rows if r.get("status") == "measured" and r.get("gain")}
    # (a control that is itself a lever's base has a gain over the top rung too: it is a lever)
    said = []
    for lever, control in OWN_CONTROL.items():
        if lever not in by_name or control not in by_name:
            continue
        got, base = by_name[lever]["gain"][0], by_name[control]["gain"][0]
        regime = (f" ({OTHER_REGIME}, as its control: not the top rung's compiled regime)"
                  if OTHER_REGIME in str(by_name[lever].get("why", "")) else "")
        if by_name[lever].get("base") == control:   # a record that timed it over its control
            said.append(f"{lever}{regime}: {got:.3f}x over {control}, timed interleaved with it")
            continue
        said.append(f"{lever}{regime}: {got / base:.2f}x over {control} "
                    f"({got:.3f}x / {base:.3f}x over the top rung)")
    return said


def _shapes_note(totals: Mapping[str, float], rows: list) -> str:
    """The 1x1 layers timed shape by shape, and whether those isolated timings can be read
    against the network's: not when they add up to more than the whole top rung's device time."""
    said = ("The 1x1 convolutions timed shape by shape outside the network (device time, each "
            "shape weighted by its count in ResNet-50, per batch): "
            + ", ".join(f"{path} {ms:.2f} ms" for path, ms in totals.items()))
    top = next((r for r in rows if r.get("name") == "top rung" and r.get("device_s")), None)
    if top is not None and max(totals.values()) > 1e3 * top["device_s"]:
        said += (f". The slowest adds up to more than the top rung's whole device time "
                 f"({1e3 * top['device_s']:.2f} ms per batch): timed alone, these layers do not "
                 "predict what they cost inside the compiled network")
    if any("separate" in path for path in totals):
        said += ("; a 'separate' path runs each tail as its own eager kernel, where the compiled "
                 "network runs one fused tail, so it is no fair control for the fused path")
    return said + "."


def best(data: Mapping) -> dict | None:
    """The fastest rung the gate passed and the rounds timed (refused rungs never rank)."""
    timed = [r for r in data["rows"] if r.get("status") == "measured" and r.get("images_per_s")
             and (r.get("gate") or {}).get("passed")]
    return max(timed, key=lambda r: r["images_per_s"]) if timed else None


RERUNS = "*_rerun_*.json"   # a rung measured again in a later call, beside the record (h200_past_defaults/)
FUSED = "Triton fused epilogue, compiled"   # the rung whose epilogues took the elementwise tails


def reruns(main: Path) -> list[tuple[str, dict]]:
    """(file name, row) for each measured row of the rerun files beside the record."""
    found = []
    for extra in sorted(main.parent.glob(RERUNS)):
        try:
            later = load(extra)
        except PastViewError:
            continue
        found += [(extra.name, {**r, "top": next((t for t in later["rows"] if t.get("name") == "top rung"), {})})
                  for r in (later or {}).get("rows", []) if r.get("status") == "measured" and r.get("gain")]
    return found


def _base_idle(row: Mapping, top: Mapping) -> float | None:
    """The base's (the top rung's) GPU idle in the row's own rounds: 1 - its device time per
    batch over its wall time per batch there (base_images_per_s)."""
    rate, device_s, batch = (row.get("base_images_per_s"), top.get("device_s"),
                             dict(top.get("settings") or {}).get("batch"))
    if not rate or not device_s or not batch:
        return None
    return 1 - device_s * rate / batch


def measured_again(top: Mapping, again: list[tuple[str, dict]]) -> list[str]:
    """The best rung beside each later measurement of it, the lower one named the conservative
    figure, and what its gain was made of: its device-time gain per image (the GPU's work) and
    its base's idle in its rounds against its own (the host's). Review 2026-12-04i item 3: the
    page kept batch 1024's 33,254 images/s (1.077x) and never showed its rerun, 31,783 (1.043x,
    device gain 1.001): the gain is host idle removed, not GPU work."""
    said = []
    for name, row in again:
        if row.get("name") != top.get("name"):
            continue
        first, second = top["images_per_s"], row["images_per_s"]
        low = "this one" if second <= first else "the first"
        dev = row.get("device_gain")
        line = (f"{top['name']} measured again ({name}): {second:,.0f} images/s, "
                f"{row['gain'][0]:.3f}x over its call's top rung, against {first:,.0f} and "
                f"{top['gain'][0]:.3f}x here; the conservative figure is {low}")
        if dev:
            base_idle = _base_idle(row, row.get("top") or {})
            work = "not GPU work" if abs(dev[0] - 1) < 0.02 else "partly GPU work"
            line += (f". Its device time per image moved {dev[0]:.3f}x, so the gain is host idle "
                     f"removed, {work}" + ("" if base_idle is None or row.get("idle_share") is None else
                                           f" (GPU idle {100 * base_idle:.0f}% in its base's rounds, "
                                           f"{100 * row['idle_share']:.0f}% at {top['name']})"))
        said.append(line + ".")
    return said


def _ms_by_class(row: Mapping) -> dict[str, float]:
    return {k: 1e3 * row["device_s"] * v for k, v in (row.get("kinds") or {}).items()} if row.get("device_s") else {}


def _fused_pairs(rows: list) -> list[tuple[Mapping, Mapping]]:
    """(its top rung, the fused-epilogue rung) for each call that measured the fused rung, each
    with a device time and the two classes: a later call's row over that call's own top rung
    (`call_top`), the record's over the record's."""
    main_top = next((r for r in rows if r.get("name") == "top rung" and r.get("device_s")), None)
    gemm, elem = timeline_stats.GEMM_CONV, attribution.ELEMENTWISE
    pairs = []
    for fused in (r for r in rows if str(r.get("name", "")).rstrip(f" {LATER}") == FUSED
                  and r.get("status") == "measured" and r.get("device_s")):
        top = fused.get("call_top") if (fused.get("call_top") or {}).get("device_s") else main_top
        if top is None:
            continue
        a, b = _ms_by_class(top), _ms_by_class(fused)
        if gemm in a and gemm in b and elem in a and elem in b:
            pairs.append((top, fused))
    return pairs


def fused_net(data: Mapping | None) -> float | None:
    """The share of its top rung's device time per batch the fused-epilogue rung saved, net
    (the elementwise tails removed less the GEMM time added), from a record: the lowest over the
    calls that measured it (review 2026-12-05t 08 item 4: the reading rested on one of two);
    None without both rungs. The core page's standing line points at this, not at the
    elementwise share alone (review 2026-12-04m item 7)."""
    pairs = _fused_pairs(list((data or {}).get("rows") or []))
    return min((1 - f["device_s"] / t["device_s"] for t, f in pairs), default=None)


def fused_calls(data: Mapping | None) -> int:
    """How many calls measured the fused-epilogue rung with a profile (fused_net's)."""
    return len(_fused_pairs(list((data or {}).get("rows") or [])))


def fused_vs_top(rows: list) -> str:
    """For each call that measured it, the fused-epilogue rung's device time per class in ms
    beside that call's top rung's: the epilogues removed the elementwise tails and the GEMMs
    took part of it back (review 2026-12-04i item 2); every call is said, none alone (review
    2026-12-05t 08 item 4)."""
    said = []
    gemm, elem = timeline_stats.GEMM_CONV, attribution.ELEMENTWISE
    for top, fused in _fused_pairs(rows):
        a, b = _ms_by_class(top), _ms_by_class(fused)
        total_a, total_b = 1e3 * top["device_s"], 1e3 * fused["device_s"]
        removed, rose = a[elem] - b[elem], b[gemm] - a[gemm]
        back = "all" if rose >= removed else "most" if rose > removed / 2 else "part"
        call = f"call {fused['call']}" if fused.get("call") else "the record's call"
        said.append(f"{call}: top rung {gemm} {a[gemm]:.1f}, {elem} {a[elem]:.1f} of {total_a:.2f}; "
                    f"fused {gemm} {b[gemm]:.1f}, {elem} {b[elem]:.1f} of {total_b:.2f}: "
                    f"{removed:.1f} ms of elementwise tails removed, {gemm} time up {rose:.1f} ms "
                    f"({back} of it back), net {100 * (1 - total_b / total_a):.0f}% less device time")
    if not said:
        return ""
    return (f"{FUSED}, device time per batch by class, ms, over its own call's top rung, in "
            f"{len(said)} call{'s' if len(said) > 1 else ''}: " + "; ".join(said) + ".")


def bound_line(top: Mapping) -> str:
    """What bound the best rung, from its own figures: the device when its GPU idle is under the
    host-bound line, with the GEMM/conv and elementwise shares of its device time."""
    idle, kinds = top.get("idle_share"), top.get("kinds") or {}
    if idle is None or not kinds:
        return ""
    bound = "the device" if idle < keep.IDLE_LIMIT else "the host"
    shares = ", ".join(f"{k} {100 * v:.0f}%" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])[:2])
    return (f"What bound {top['name']}: {bound} (GPU idle {100 * idle:.0f}%, the host-bound line "
            f"{100 * keep.IDLE_LIMIT:.0f}%); its device time: {shares}.")


def standing(data: Mapping, per_image: float | None = None, shown_as: str = "",
             again: list[tuple[str, dict]] | None = None) -> tables.Table:
    """The best gated rung: its device time by class and idle, what bound it, any later
    measurement of it (again: reruns'), the fused rung's time per class beside the top rung's,
    and the gap to MLPerf split (over the conservative figure where a rerun measured lower)."""
    top = best(data)
    shown = tables.Table("Where the best gated rung stands", ["reading", "value"], recorded=shown_as)
    if top is None:
        return shown.note("No rung was gated and timed in this record.")
    image = int(data.get("image") or 224)
    per_image = per_image or roofline.flops_per_image(image)
    # the record's goal_images_per_s (issue 41's target for the course's own work) is not
    # shown: a learner's page has no use for it (review 2026-12-03h item 8)
    later = [row for _, row in (again or []) if row.get("name") == top["name"]]
    conservative = min([top["images_per_s"], *(r["images_per_s"] for r in later)])
    # one best rung, with the rule that picked it (review 2026-12-04j item 3: a later call's
    # rung read 'best' over its own call's top rung beside this one)
    shown.add("best gated rung (the fastest rung the gate passed, by images/s in its own call)",
              f"{top['name']}: {top['images_per_s']:,.0f} images/s"
              + (f"; measured again: {', '.join(format(r['images_per_s'], ',.0f') for r in later)} "
                 f"(the gap below uses {conservative:,.0f})" if later else ""))
    if top.get("kinds"):
        clock = "device time" if top.get("device_s") is not None else "CPU op self time"
        shown.add(f"its {clock} by kernel class", ", ".join(
            f"{k} {100 * v:.0f}%" for k, v in top["kinds"].items()))
    if top.get("idle_share") is not None:
        shown.add("GPU idle (1 - device / wall time)", f"{100 * top['idle_share']:.0f}%")
    math_ = dict(top.get("settings") or {}).get("dtype", "float16")
    for line in measured_again(top, again or []):
        shown.note(line)
    for line in (bound_line(top), fused_vs_top(data["rows"])):
        if line:
            shown.note(line)
    split = roofline.gap_split(conservative, math_, per_image, str(data.get("device", "")),
                               dict(top.get("kinds") or {}).get(attribution.ELEMENTWISE))
    published = roofline.MLPERF_H200_RESNET50_OFFLINE
    shown.add(published["label"], f"~{published['samples_per_s_per_gpu']:,} samples/s per GPU "
              f"[{published['conditions']}]")
    if split is None:
        return shown.note("The gap's split uses the H200's published peaks: shown for an H200 record.")
    for line in split.lines(math_):
        shown.note(line)
    if "FP8" in top["name"]:
        shown.note("This rung ran its 1x1 GEMMs in FP8 and the rest in fp16: the split above takes "
                   "fp16's peak, so it overstates what precision has left to give.")
    return shown.note(f"{roofline.H200_DENSE_SPEC['label']} ({roofline.H200_DENSE_SPEC['source']}).")


def top_note(data: Mapping, ladder_top: object | None = None, on_gpu: bool = True) -> str:
    """The record's top rung, and whether the chapter's own ladder reached the same settings:
    with ladder_top (a ladder.Rung) from a GPU, the settings that differ and both images/s;
    from a CPU (on_gpu False), that it ran on this CPU, not the record's GPU; without it, that
    the ladder keeps its own steps, so its top may differ. Why: on the H200 of 2026-12-05 the
    page's ladder kept no CUDA Graphs and the section still said 'may' (review 2026-12-05p 08
    item 6c), and the CPU page said 'may' of a float32 batch-16 top (review 2026-12-05q browser
    item 9). '' when the record names no top rung."""
    top = dict(data.get("top_settings") or {})
    if not top:
        return ""
    on = [k for k, v in top.items() if v not in (False, None, "off", "float32") and k != "batch"]
    said = "The record's top rung: " + ", ".join(f"{k}={top[k]}" for k in on) + f", batch {top.get('batch')}"
    settings = getattr(ladder_top, "settings", None)
    if settings is None:
        return said + "; the ladder above keeps its own steps, so its top may differ."
    if not on_gpu:
        return (said + f"; the ladder above ran on this CPU (its top: {getattr(ladder_top, 'name', '?')}, "
                f"{getattr(ladder_top, 'images_per_s', 0.0):,.0f} images/s), not on the record's GPU.")
    differ = [f"{k}={getattr(settings, k)} (record: {top[k]})" for k in top
              if hasattr(settings, k) and getattr(settings, k) != top[k]]
    record_top = next((r.get("images_per_s") for r in data.get("rows") or []
                       if r.get("name") == "top rung" and r.get("images_per_s")), None)
    speeds = (f"{getattr(ladder_top, 'images_per_s', 0.0):,.0f} images/s here"
              + (f", {record_top:,.0f} in the record" if record_top else ""))
    if not differ:
        return said + f"; the ladder above reached the same settings ({speeds})."
    return said + f"; the ladder above's top differs: {', '.join(differ)} ({speeds})."


def section(path: str | Path | None = None, ladder_top: object | None = None,
            on_gpu: bool = True) -> tables.Stack | str:
    """The whole optional section: the rungs, then where the best one stands; from the
    reference's record unless a path to a learner's own past_defaults.json is given. ladder_top:
    the chapter's own top rung (on_gpu: whether it ran on a GPU), compared with the record's
    (`top_note`)."""
    data = load(path)
    if data is None:
        where = path if path is not None else "results/" + RECORDED.as_posix()
        return (f"No record of the climb past the defaults at {where}: nothing was measured here. "
                f"To make one: {HOW_TO_CLIMB}.")
    main = Path(path) if path is not None else recorded_path()
    data = with_later_calls(data, main)
    shown_as = label(data, path)
    return tables.Stack(rows_table(data, shown_as, ladder_top, on_gpu), cost_table(data, shown_as),
                        standing(data, shown_as=shown_as, again=reruns(main)))


LATER = "*"   # marks a row measured in a later call of the script (its own file beside the first)


def with_later_calls(data: Mapping, main: Path) -> dict:
    """The record with the levers of later calls appended: each past_defaults_<what>.json beside
    it (a call run with --levers, say) adds its rows but its own top rung, marked LATER, each
    gain over that call's own top rung timed in the same rounds. Their files are named in
    'later_calls'; the reproduce checks of its levers in 'reproduced' (`reproduce_checks`)."""
    merged = {**data, "rows": list(data["rows"]), "later_calls": [], "reproduced": reproduce_checks(main)}
    for extra in sorted(main.parent.glob(f"{main.stem}_*.json")):
        later = load(extra)
        own_top = next((r for r in later["rows"] if r.get("name") == "top rung"), {})
        merged["later_calls"].append(f"{extra.name} (its top rung {own_top.get('images_per_s') or 0:,.0f} "
                                     "images/s)")
        call = f"{extra.name}, {str(later.get('recorded_at') or '?')[:16].replace('T', ' ')}"
        merged["rows"] += [{**r, "name": f"{r['name']} {LATER}", "call": call,
                            "call_top": {k: own_top.get(k) for k in ("device_s", "kinds", "name")}}
                           for r in later["rows"] if r.get("name") != "top rung"]
    return merged
