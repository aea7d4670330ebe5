"""Chapter 08's timing-based verdict, re-measured: benchmarks/reproduce.py calls
`measure_numbers()` then `measure_verdicts()` once per fresh run and compares the runs.

It climbs the same gated ladder as the notebook (labkit.chapters.ch08_inference_ladder.experiment)
and judges C24 from it, with the deciding numbers in the verdict's evidence: the top gated
rung's images/s, its speed-ups over both float32 baselines with their interleaved spreads,
the batch of the top rung and of the baselines, and the top rung at the baselines' batch.

The ladder is climbed once per run, in `measure_numbers` (the harness calls it first): it
records the steps kept and each step's gains, and `measure_verdicts` judges C24 from that
same climb. `summarise_numbers` then says whether the runs kept the same steps and reached
the same top rung within TOP_SPREAD: C24 agreeing 3 of 3 says nothing about the middle of the
ladder, where one run kept cudnn.benchmark on a 1.0006x gain and the others did not (review
2026-12-03d item 2), and the record said "all_agree": true beside keep sets that differed
(review 2026-12-03e item 5): benchmarks/reproduce.py's all_agree now includes this 'agree'.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Mapping

from labkit.chapters.ch08_inference_ladder import autotune_picks, experiment, keep, ladder
from labkit.claims import reproduced
from labkit.claims.core import Verdict
from labkit.claims.registry import get
from labkit.core import env

# the top rung's images/s may differ by at most this share over the runs (max / min - 1):
# issue 40's bar for the H200 (spread within 5%)
TOP_SPREAD = 0.05

# the climb measure_numbers made in this process, for measure_verdicts to judge (by quick)
_CLIMBED: dict[bool, experiment.Result] = {}


# A reproduce run's climb ends here (seconds from its start): a not-decidable step's retry
# (ladder.Ladder.retry) begins only where it and the batch step fit before it. The page's own end
# (experiment.CHAPTER_LIMIT_S, 150 s), so a reproduce run can retry wherever the page could: on the
# 2026-12-05 record (ladders of 118-124 s, folding done by 102-109 s) a 124 s end left no run room
# for the retry, and a run reproduces the page only if it may climb the same recipe. A run then
# lasts at most about 160 s with its start-up: benchmarks/rerecord_calls.sh B-repro runs
# reproduce 08 alone with a step limit of 540 s (review 2026-12-05p 08 item 1a).
LADDER_END_S = experiment.CHAPTER_LIMIT_S


def _climb(quick: bool) -> experiment.Result:
    return experiment.run(env.device(), quick=quick, beyond=False, regimes=False,
                          climb_end_s=LADDER_END_S)


def measure_numbers(quick: bool = False) -> dict:
    """Climb the ladder once; the steps kept and each step's gains, for summarise_numbers, and
    what Inductor's runtime autotuning timed and kept in this process (autotune_picks: whether
    fresh processes compile the same programs)."""
    with autotune_picks.recording() as autotuned:
        result = _climb(quick)
    _CLIMBED[quick] = result
    top, at_base = result.top, result.top_at_baseline_batch
    return {"kept": [r.name for r in result.rungs[1:] if r.kept and not r.error],
            "steps": {r.name: {"kept": bool(r.kept), "judged_by": r.judged_by, "gain": r.gain,
                               "gain_spread": list(r.gain_spread) if r.gain_spread else None,
                               "device_gain": r.device_gain, "idle_share": r.idle_share,
                               # the base's GPU idle in the step's own rounds: what a step that
                               # cuts host work only (CUDA Graphs) can win, 1 / (1 - it)
                               "base_idle": (r.here.get(r.after) or {}).get("idle_share"),
                               "unstable": r.unstable, "timings": len(r.timings),
                               "host_pace_us": [t.get("host_pace_us") for t in r.timings]}
                      for r in result.rungs[1:] if not r.error and r.gain is not None},
            # the top rung's device clock beside its wall figure (review 2026-12-05p 08 item 2)
            "top": {"name": top.name, "batch": top.settings.batch, "images_per_s": top.images_per_s,
                    "device_images_per_s": (top.settings.batch / top.device_s if top.device_s else None),
                    "idle_share": top.idle_share, "kernel_ms": dict(top.kernel_ms)},
            "at_baseline_batch": {"name": at_base.name, "images_per_s": at_base.images_per_s},
            "phases": {"ladder": result.seconds}, "inductor_autotune": autotuned}


def measure_verdicts(quick: bool = False) -> list[Verdict]:
    """C24's verdict from this process's climb (measure_numbers'), climbing now if none was made.

    quick: fewer rounds and a shorter sampling budget, and no interaction table (the verdict
    does not depend on it); the ladder itself is the same.
    """
    result = _CLIMBED.pop(quick, None) or _climb(quick)
    evidence = result.evidence()
    evidence["seconds"] = result.seconds
    return [get("C24").judge(evidence, form=result.plan.form)]


def summarise_numbers(runs: list[dict]) -> dict:
    """Whether every run kept the same steps and reached the same top rung within TOP_SPREAD
    (a 'NOT the same' line naming what differed when not), and each step's wall gain over the
    runs with how many runs kept it. 'agree' is all of these (benchmarks/reproduce.py's
    all_agree includes it); 'steps_agree' the keep sets alone."""
    if not runs:
        raise ValueError("no runs to summarise")
    # by step, not rung name: a step kept on its retry ('CUDA Graphs, retried') is the step kept
    # first time in another run, the same recipe (review 2026-12-05p2 08 item 1)
    sets = [tuple(run.get("kept") or ()) for run in runs]
    steps_agree = len({frozenset(ladder.step_name(n) for n in s) for s in sets}) == 1
    lines = ([f"  steps kept: the same in {len(runs)} of {len(runs)} ({len(sets[0])}: "
              f"{', '.join(sets[0])})"] if steps_agree else
             ["  steps kept: NOT the same over the runs: " + "; ".join(
                 f"run {i} kept {len(s)} ({', '.join(s)})" for i, s in enumerate(sets, start=1))])
    tops = [run.get("top") for run in runs]
    top_agree = True
    if all(tops):
        names = {(t["name"], t["batch"]) for t in tops}
        rates = [t["images_per_s"] for t in tops]
        spread = max(rates) / min(rates) - 1 if min(rates) > 0 else float("inf")
        top_agree = len(names) == 1 and spread <= TOP_SPREAD
        lines.append(f"  top rung: {' / '.join(sorted({t['name'] for t in tops}))}, "
                     f"{min(rates):,.0f} to {max(rates):,.0f} images/s (spread {100 * spread:.1f}%, "
                     f"limit {100 * TOP_SPREAD:.0f}%)" + ("" if top_agree else ": NOT the same"))
        device = device_line(tops)
        if device:
            lines.append(device)
    agree = steps_agree and top_agree
    names = list(dict.fromkeys(name for run in runs for name in run.get("steps") or {}))
    for name in names:
        seen = [run["steps"][name] for run in runs if name in (run.get("steps") or {})]
        gains = [s["gain"] for s in seen]
        kept = sum(1 for s in seen if s["kept"])
        undecided = sum(1 for s in seen if s.get("judged_by") == keep.NOT_DECIDABLE)
        lines.append(f"      step {name}: wall gain {min(gains):.3f}x to {max(gains):.3f}x, "
                     f"kept in {kept} of {len(seen)}"
                     + (f", not decidable (base moved) in {undecided}" if undecided else ""))
    picks = autotune_line(runs)
    if picks:
        lines.append(picks)
    return {"agree": agree, "steps_agree": steps_agree, "top_agree": top_agree, "lines": lines,
            "kept": [list(s) for s in sets]}


def autotune_line(runs: list[dict]) -> str:
    """Whether the runs' compiles kept the same configs where Inductor timed several (one line,
    '' where a run recorded none: a record before it, or a CPU). Shown, not judged: it tells
    whether a top rung's device time that varies between processes (`device_line`) may come
    from the programs each compile chose (autotune_picks)."""
    recorded = [run.get("inductor_autotune") for run in runs]
    if len(runs) < 2 or not all(recorded):
        return ""
    found = autotune_picks.across_runs(recorded)
    differ, close = found["picks_differ"], found["decided_within_noise"]
    return (f"  Inductor's runtime autotuning: {found['timed_in_every_run']} kernels timed in every run; "
            f"the config kept differs between runs for {len(differ)}"
            + (f" ({', '.join(differ[:4])}{', ...' if len(differ) > 4 else ''})" if differ else "")
            + f"; {len(close)} decided by under {100 * found['margin_close']:.0f}% in some run")


def device_line(tops: list[dict]) -> str:
    """Each run's top rung on both clocks: wall images/s, the images/s its device time alone
    allows, and its unprofiled GPU idle, with the spread of the device-bound figures; '' when no
    run recorded its device clock (a record before it, or a CPU). Why: the H200's 5.6% top-rung
    spread was mostly device time (device-bound 30,493-32,123 images/s, idle 1-2%), which a
    fix on the host side alone cannot close (review 2026-12-05p 08 item 2)."""
    device = [t.get("device_images_per_s") for t in tops]
    if not any(device):
        return ""
    each = "; ".join(
        f"run {i} {t['images_per_s']:,.0f} wall, "
        + (f"{t['device_images_per_s']:,.0f} device-bound" if t.get("device_images_per_s") else "no device clock")
        + (f", idle {100 * t['idle_share']:.1f}%" if t.get("idle_share") is not None else "")
        for i, t in enumerate(tops, start=1))
    found = [d for d in device if d]
    spread = max(found) / min(found) - 1
    return (f"  top rung's device clock: {each} (device-bound spread {100 * spread:.1f}%: "
            + ("the device's own time varied" if spread > TOP_SPREAD else "the device's time held")
            + ")")


def deciding_ratios(verdict: Verdict) -> dict[str, float]:
    """The speed-ups C24 decides on (at the baselines' batch), the top rung's beside them, and
    the top rung's images/s (the issue's bar: at least 30,000 on an H200 in every run)."""
    ev = verdict.evidence
    at = ev.get("at_baseline_batch") or {}
    found = {f"over strict fp32 at batch {ev.get('baseline_batch')} (decides)": at.get("speedup_over_strict"),
             f"over default fp32 at batch {ev.get('baseline_batch')} (decides)": at.get("speedup_over_defaults"),
             f"top rung over strict fp32 at batch {ev.get('top_batch')} (shown)": ev.get("speedup_over_strict"),
             f"top rung over default fp32 at batch {ev.get('top_batch')} (shown)": ev.get("speedup_over_defaults"),
             "top rung images/s (not a ratio)": ev.get("top_images_per_s")}
    # each step's wall gain and keep decision (1 kept, 0 not), so the runs show whether the
    # middle of the ladder agrees 3 of 3 (review 2026-12-03c item 2): a 'kept' whose min and
    # max differ across runs was kept in some runs only
    for r in ev.get("rungs") or []:
        if r.get("after") and not r.get("error") and r.get("gain") is not None:
            found[f"step {r['name']}: wall gain"] = r["gain"]
            found[f"step {r['name']}: kept (1) or not (0)"] = 1.0 if r.get("kept") else 0.0
            # every step's flag, kept or not (review 2026-12-03e item 4), and whether its base
            # moved in every timing so that it was not decidable (item 1)
            found[f"step {r['name']}: flagged unstable (1) or not (0)"] = 1.0 if r.get("unstable") else 0.0
            found[f"step {r['name']}: not decidable (1) or decided (0)"] = (
                1.0 if r.get("judged_by") == keep.NOT_DECIDABLE else 0.0)
    return {k: float(v) for k, v in found.items() if v is not None}


# a step's wall gain 'does not hold' over the fresh runs when its largest is more than this
# above its smallest (the keep rule's own instability limit, keep.UNSTABLE_IQR), or when a run
# flagged it unstable
HOLDS_WITHIN = keep.UNSTABLE_IQR
CHAPTER = "08_inference_ladder"


def this_machine() -> str:
    """This machine's name as benchmarks/reproduce.py names its records ('nvidia-h200')."""
    return env.device_key().lower().replace("_", "-")


def fresh_runs(machine: str) -> dict | None:
    """Each step's gains over the fresh runs `benchmarks/reproduce.py 08` recorded for machine
    (results/reproduce/<machine>-08_inference_ladder.json): {"runs", "recorded_at", "steps":
    {name: {"wall": (min, max), "device": (min, max) or None, "unstable": runs flagged, "kept":
    runs kept}}}; None when there is no record (or it keeps no steps). Why: a page shows one
    run, and on the H200 two step gains of that run (fp16 weights, CUDA Graphs) did not hold
    over three fresh runs (review 2026-12-03h item 5); the record says so beside them."""
    try:
        data = reproduced.load_record(reproduced.record_path(machine, CHAPTER))
    except reproduced.ReproduceRecordError:
        return None
    runs = [r for r in (data or {}).get("numbers") or [] if isinstance(r, dict) and r.get("steps")]
    if not runs:
        return None
    steps: dict[str, dict] = {}
    for name in dict.fromkeys(n for r in runs for n in r["steps"]):
        seen = [r["steps"][name] for r in runs if name in r["steps"] and r["steps"][name].get("gain")]
        if not seen:
            continue
        walls = [s["gain"] for s in seen]
        devices = [s["device_gain"] for s in seen if s.get("device_gain")]
        idles = [s["idle_share"] for s in seen if s.get("idle_share") is not None]
        base_idles = [s["base_idle"] for s in seen if s.get("base_idle") is not None]
        kept = sum(1 for s in seen if s.get("kept"))
        steps[name] = {"wall": (min(walls), max(walls)),
                       "device": (min(devices), max(devices)) if devices else None,
                       "idle": (min(idles), max(idles)) if idles else None,
                       "base_idle": (min(base_idles), max(base_idles)) if base_idles else None,
                       "unstable": sum(1 for s in seen if s.get("unstable")),
                       # the flags that could flip the keep decision (`could_flip`): the only
                       # ones that count against 'held' (review 2026-12-04m item 5)
                       "flips": sum(1 for s in seen if s.get("unstable")
                                    and could_flip(s, 0 < kept < len(seen))),
                       "kept": kept, "runs": len(seen)}
    # each run's largest step by its wall gain: a takeaway names a largest step only when every
    # run agrees with the page (review 2026-12-04l item 2: the page's CUDA Graphs, TF32 in both)
    largest = [max(gained, key=gained.get) for r in runs
               if (gained := {n: s["gain"] for n, s in r["steps"].items() if s.get("gain")})]
    # each run's wall gains by step, so a page can rank its steps as the runs did, leaving out
    # the steps PyTorch's defaults already take (review 2026-12-04m item 3)
    gains = [{n: s["gain"] for n, s in r["steps"].items() if s.get("gain")} for r in runs]
    # the host's pace in each timing of each step (the median of its probes, µs per launch)
    pace = [float(statistics.median(p)) for r in runs for s in r["steps"].values()
            for p in s.get("host_pace_us") or [] if p]
    # the steps each run kept, so a takeaway names a step as held only where every run kept it
    # (review 2026-12-05p 08 item 3: cudnn.benchmark, kept in 0 of 3, read 'held')
    kept_sets = [[ladder.step_name(n) for n, s in r["steps"].items() if s.get("kept")] for r in runs]
    # the runs (from 1) whose climb a since-replaced keep reading left a step not decidable in
    # (`earlier_rule`), where the record's runs and evidence line up one to one
    earlier = (earlier_rule(data) if len(runs) == len((data or {}).get("numbers") or [])
               == len((data or {}).get("evidence") or []) else {})
    return {"runs": len(runs), "recorded_at": str(data.get("recorded_at") or ""), "steps": steps,
            "machine": machine, "largest": largest, "gains": gains, "pace": pace,
            "kept_sets": kept_sets, "earlier": earlier} if steps else None


def could_flip(run_step: Mapping, split: bool = False) -> bool:
    """Whether one run's instability flag could flip that run's keep decision: the runs did not
    all decide the step alike (split), or the run's wall-gain range reaches a boundary of the
    keep rule (1, or 1 + keep.MIN_GAIN); a run without a range could. Why: cudnn.benchmark read
    'not held ... unstable 1 of 3' beside 0.999-1.000x wall, not kept in every run, its flagged
    run's range 0.9988-0.99995 wholly below 1 (review 2026-12-04m item 5)."""
    if split:
        return True
    spread = run_step.get("gain_spread")
    if not spread:
        return True
    low, high = spread
    return any(low <= edge <= high for edge in (1.0, 1.0 + keep.MIN_GAIN))


def inside(step: dict, gain: float | None) -> bool:
    """Whether a page's own gain lies inside the fresh runs' wall range, widened by the keep
    rule's smallest gain that counts (keep.MIN_GAIN, 2%) on each side: a gain the fresh runs
    did not give is not held by them, however close they were to each other (review 2026-12-04i
    item 1: the H200 page's CUDA Graphs 1.86x beside fresh runs at 1.18-1.29x)."""
    if gain is None:
        return True
    low, high = step["wall"]
    return low / (1 + keep.MIN_GAIN) <= gain <= high * (1 + keep.MIN_GAIN)


def holds(step: dict, gain: float | None = None) -> bool:
    """Whether a step's wall gain held over the fresh runs (fresh_runs' entry): the runs agree
    among themselves (no run flagged unstable where the flag could flip its keep decision,
    `could_flip`; an entry without that count counts every flag; max / min within
    HOLDS_WITHIN) and, given the page's own gain for the step, it lies inside their range
    (`inside`)."""
    low, high = step["wall"]
    flagged = step.get("flips", step["unstable"])
    agree = not flagged and low > 0 and high / low - 1 <= HOLDS_WITHIN
    return agree and inside(step, gain)


def spread(low: float, high: float) -> str:
    """'0.96-1.55x', or '1.84x' when the two agree to two decimals."""
    return f"{low:.2f}x" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}x"


def _when(stamp: str) -> str:
    return stamp[:16].replace("T", " ")


def label(found: dict, page_at: str | None = None) -> str:
    """Where the fresh runs come from, as a page labels them: the record read is the one
    results/reproduce/ holds now (the current one), with its recorded_at; given the page's own
    run time (page_at, ISO), whether the fresh runs came before or after it (review 2026-12-04i
    item 1: the H200 page cited a record superseded by the time it was read)."""
    when = _when(found["recorded_at"])
    order = ""
    if when and page_at:
        page = _when(page_at)
        order = (f", before this page's run at {page[11:]}" if found["recorded_at"] < page_at
                 else f", after this page's run at {page[11:]}")
    return (f"{found['runs']} fresh runs on {found['machine']} (reproduce.py"
            + (f", {when} UTC" if when else "") + order + ")")


def _side(value: float | None, span: tuple[float, float] | None) -> str:
    """Where this page's gain lies against the fresh runs' range: 'below', 'above' (beyond
    keep.MIN_GAIN of it) or '' (within it, or unknown)."""
    if value is None or span is None:
        return ""
    return "below" if value < span[0] / (1 + keep.MIN_GAIN) else \
        "above" if value > span[1] * (1 + keep.MIN_GAIN) else ""


def not_held_line(found: dict | None, gains: Mapping[str, float | None] | None = None,
                  page_at: str | None = None,
                  device_gains: Mapping[str, float | None] | None = None,
                  define: bool = True) -> str:
    """The steps whose gain the fresh runs did not hold, saying what held means and how often
    each was kept: a step whose runs disagreed ('fp16 weights kept 3 of 3, gain not stable:
    1.54-1.69x wall, unstable 1 of 3'), and, given the page's own gains (gains: {step: wall
    gain}; device_gains the same on device time), one whose gain on this page lies outside
    the runs' range ('torch.compile kept 3 of 3, this page's 1.59x below all 3 on both
    clocks: 1.63-1.69x wall, 1.59-1.66x device'); '' when every step held or there is no
    record. Why: 'not held' beside a gain the runs kept 3 of 3 read as a step that did not
    reproduce (review 2026-12-04j item 7). (Every step's range is all_steps_line's, folded.)
    define=False leaves what 'held' means (HELD_MEANS) to the caller's fold (the GPU page's
    words, review 2026-12-04l item 2)."""
    if not found:
        return ""
    steps, gains, device_gains = found["steps"], dict(gains or {}), dict(device_gains or {})
    loose = [n for n, s in steps.items() if not holds(s, gains.get(n))]
    if not loose:
        return ""

    def one(name: str) -> str:
        s = steps[name]
        page, runs = gains.get(name), s["runs"]
        wall = _side(page, s["wall"])
        device = _side(device_gains.get(name), s["device"])
        said = f"{name} kept {s['kept']} of {runs}, "
        if wall:
            said += (f"this page's {page:.2f}x {wall} all {runs}"
                     + (" on both clocks" if device == wall else "") + ": ")
        else:
            said += "gain not stable: "
        return (said + f"{spread(*s['wall'])} wall" + (f", {spread(*s['device'])} device" if s["device"] else "")
                + (f", unstable {s['unstable']} of {runs}" if s["unstable"] else ""))
    pairs = split_moved(steps, loose, gains, device_gains, _side)
    paired = {n for pair, _ in pairs for n in pair}
    alone = [n for n in loose if n not in paired]
    if len(alone) > COMPACT_OVER:
        # many steps loose (a noisy host): each named, with how often it was kept where not in
        # every run, its ranges and any split in the fold (all_steps_line), so the page stays
        # within its words (review 2026-12-05p 08: five such sentences and a split, about 100
        # words, on the 04:12 H200 page)
        said = ["the wall gains of " + ", ".join(
            n + ("" if steps[n]["kept"] == steps[n]["runs"] else f" (kept {steps[n]['kept']}/{steps[n]['runs']})")
            for n in alone) + (" and a split" if pairs else "") + RANGES_FOLDED]
    else:
        said = [one(n) for n in alone] + [text for _, text in pairs]
    head = label(found, page_at)
    if len(alone) > COMPACT_OVER and not define:
        # named only: where and when the runs were is the verdict's line and the fold's
        head = f"the {found['runs']} fresh runs"
    elif define:
        head = head[:-1] + f"; held: {HELD_MEANS})"
    return f"Not held by {head}: " + "; ".join(said) + "."


# more steps than this loose: named only, their ranges folded (not_held_line), and the line
# itself folded beside the ladder (report.table): the takeaways' one line on the host-paced
# steps and the verdict's fresh-runs line say it in the core (the GPU page's 1,500 words)
COMPACT_OVER = 3
RANGES_FOLDED = "; ranges folded"


def folded_split(found: dict | None, gains: Mapping[str, float | None] | None = None,
                 device_gains: Mapping[str, float | None] | None = None) -> str:
    """The split_moved sentences that not_held_line leaves to the fold when it names its loose
    steps only (more than COMPACT_OVER of them); '' otherwise."""
    if not found:
        return ""
    steps, gains, device_gains = found["steps"], dict(gains or {}), dict(device_gains or {})
    loose = [n for n, s in steps.items() if not holds(s, gains.get(n))]

    pairs = split_moved(steps, loose, gains, device_gains, _side)
    paired = {n for pair, _ in pairs for n in pair}
    if len([n for n in loose if n not in paired]) <= COMPACT_OVER or not pairs:
        return ""
    text = "; ".join(t for _, t in pairs)
    return text[0].upper() + text[1:] + "."

# what 'held' means, without the word itself: a caller puts it after 'held:' or 'Held means:'
# (review 2026-12-04m item 5: the fold read 'Not held: not held: within 10% ...')
HELD_MEANS = (f"within {100 * HOLDS_WITHIN:.0f}% of each other, no run's instability flag able "
              "to flip its keep decision, this page's among them")


def split_moved(steps: Mapping[str, dict], loose: list[str], gains: Mapping[str, float | None],
                device_gains: Mapping[str, float | None],
                side: Callable[[float | None, tuple[float, float] | None], str]
                ) -> list[tuple[tuple[str, str], str]]:
    """Adjacent steps (in the page's climb order) that missed the fresh runs on opposite sides
    while their product stayed within the runs' products (lows times lows to highs times highs,
    keep.MIN_GAIN either side), on device time where both have it, else the wall: the work moved
    between them and the climb held. [((a, b), 'the split moved between a and b, their product
    held: ...')]. Why: the H200 page read 'torch.compile 1.73x above all 3 ... Conv-BN folding
    1.05x below all 3' where the two multiply to 1.80x device time and the fresh runs to
    1.75-1.78x (review 2026-12-04k item 8)."""
    order = [n for n in gains if n in steps]
    found = []
    for a, b in zip(order, order[1:], strict=False):
        if a not in loose or b not in loose or any(a in p or b in p for p, _ in found):
            continue
        clock = "device" if all(device_gains.get(n) is not None and steps[n]["device"] for n in (a, b)) else "wall"
        page = {n: (device_gains if clock == "device" else gains).get(n) for n in (a, b)}
        if any(v is None for v in page.values()) or not all(steps[n][clock] for n in (a, b)):
            continue
        sides = {side(page[n], steps[n][clock]) for n in (a, b)}
        if sides != {"above", "below"}:
            continue
        low = steps[a][clock][0] * steps[b][clock][0] / (1 + keep.MIN_GAIN)
        high = steps[a][clock][1] * steps[b][clock][1] * (1 + keep.MIN_GAIN)
        product = page[a] * page[b]
        if low <= product <= high:
            runs = steps[a][clock][0] * steps[b][clock][0], steps[a][clock][1] * steps[b][clock][1]
            found.append(((a, b), f"the split moved between {a} ({page[a]:.2f}x) and {b} ({page[b]:.2f}x), "
                                  f"their product held: {product:.2f}x {'device time' if clock == 'device' else 'wall'}, "
                                  f"{spread(*runs)} in the runs"))
    return found


HOST_ONLY_STEP = "CUDA Graphs"  # the step that cuts the host's work only (device gain ~1.00x)


def host_only_line(found: dict | None, gain: float | None, base_idle: float | None,
                   base: str, name: str = HOST_ONLY_STEP) -> str:
    """What the numbers show for a step that removes host work only: its wall gain is about
    1 / (1 - its base's GPU idle), since it can win back at most the time the GPU waited. This
    page's (gain, base_idle: the base's unprofiled idle in the step's rounds) beside the fresh
    runs' (their base's idle in the step's rounds where the record keeps it, else the base
    step's own idle in its rounds, said so). '' when neither side has the figures. Why: the H200
    page's CUDA Graphs 1.86x rode on one process's host pace (its base idled 48%); the fresh
    runs' base idled 20-25% and gave 1.18-1.29x (review 2026-12-04i item 1)."""
    parts = []
    if gain is not None and base_idle is not None and base_idle < 1:
        parts.append(f"{100 * base_idle:.0f}% here, {1 / (1 - base_idle):.2f}x (measured {gain:.2f}x)")
    step = (found or {}).get("steps", {}).get(name)
    if step:
        idle, whose = step.get("base_idle"), ""
        if idle is None:   # a record before base_idle: the base step's idle in its own rounds
            idle, whose = (found["steps"].get(base) or {}).get("idle"), f" (measured in the {base} step)"
        if idle is not None and idle[1] < 1:
            parts.append(f"{100 * idle[0]:.0f}-{100 * idle[1]:.0f}% in the fresh runs{whose}, "
                         f"{spread(1 / (1 - idle[0]), 1 / (1 - idle[1]))} (measured {spread(*step['wall'])})")
    if not parts:
        return ""
    return (f"{name} only removes host work, so its wall gain is about 1/(1 - its base's GPU idle): "
            + "; ".join(parts) + ".")


def all_steps_line(found: dict | None) -> str:
    """Every step's wall (and device-time) range over the fresh runs, for a fold."""
    if not found:
        return ""
    return f"Each step's gain in {label(found)}: " + "; ".join(
        f"{n} {spread(*s['wall'])} wall" + (f", {spread(*s['device'])} device" if s["device"] else "")
        for n, s in found["steps"].items()) + "."


# ------------------------------------------------------------------ C24 beside its fresh runs
def _label(verdict: Mapping) -> str:
    """'refuted', 'depends (the baseline)': a recorded verdict's outcome and what it depends on,
    in a few words."""
    depends = str(verdict.get("depends_on") or "").split(":")[0].split(";")[0].strip()
    return str(verdict.get("outcome")) + (f" ({depends})" if depends else "")


def c24_runs(data: Mapping | None) -> dict | None:
    """C24's fresh runs in a reproduce record: each run's verdict label, its deciding rung's
    images/s and unprofiled idle, its top rung's images/s, the deciding ratios' ranges, and
    whether the runs agree (the same verdict, and the numbers summary's 'agree' where it has
    one); None without C24's verdicts."""
    verdicts = (((data or {}).get("claims") or {}).get("C24") or {}).get("verdicts") or []
    if not verdicts:
        return None
    from labkit.chapters.ch08_inference_ladder import claims as ch08_claims
    evidence = [(e or {}).get("C24") or {} for e in (data.get("evidence") or [])]
    deciding = [float((e.get("at_baseline_batch") or {}).get("images_per_s") or 0) for e in evidence]
    idles = [ch08_claims.judged_idle(e) if e.get("speedup_over_strict") is not None else None
             for e in evidence]
    tops = [float(e.get("top_images_per_s") or 0) for e in evidence]
    spread = ((data.get("claims") or {}).get("C24") or {}).get("spread") or {}
    ratios = [spread.get(k) for k in spread if k.endswith("(decides)")]
    labels = [_label(v) for v in verdicts]
    summary = data.get("numbers_summary") or {}
    return {"labels": labels, "deciding": deciding, "idles": idles, "tops": tops,
            "ratios": [(r["min"], r["max"]) for r in ratios if r],
            "verdicts_agree": len(set(labels)) == 1,
            "agree": len(set(labels)) == 1 and summary.get("agree", True) is not False,
            "recorded_at": str(data.get("recorded_at") or ""),
            "kept": _runs_where(data, lambda s: bool(s.get("kept"))),
            "undecided": _runs_where(data, lambda s: s.get("judged_by") == keep.NOT_DECIDABLE),
            "earlier": earlier_rule(data)}


def earlier_rule(data: Mapping | None, claim_id: str = "C24") -> dict[int, list[str]]:
    """Per run (numbered from 1), the steps of its C24 evidence not decidable under the keep
    rule before keep.OVER_OWN_STEP_SINCE (`keep.earlier_reading`), by `ladder.step_name` (a retry
    is its step). Today's C24 rule re-judges a run's threshold from its evidence; the ladder's
    keep decisions inside it stand as the run made them, so a run whose climb a since-replaced
    reading decided says so (review 2026-12-05u item 3: run 1's 'depends (noise)' followed from a
    CUDA Graphs step that reading left not decidable). {} for another claim or a newer record.
    `labkit.claims.reproduced` asks each chapter's reproduce module for this, by name."""
    if claim_id != "C24":
        return {}
    found: dict[int, list[str]] = {}
    for number, run in enumerate((data or {}).get("evidence") or [], start=1):
        rungs = (((run or {}).get("C24") or {}).get("rungs") or []) if isinstance(run, Mapping) else []
        names = [ladder.step_name(str(r.get("name"))) for r in rungs if isinstance(r, Mapping)
                 and r.get("judged_by") == keep.NOT_DECIDABLE and keep.earlier_reading(r)]
        if names:
            found[number] = list(dict.fromkeys(names))
    return found


def earlier_rule_said(steps: list[str]) -> str:
    """'CUDA Graphs not decidable under the keep rule before 2026-12-05 18:43 UTC (981ef6e), not
    yet re-run under today's'."""
    return (f"{', '.join(steps)} not decidable under the keep rule before {keep.OVER_OWN_STEP_SINCE} "
            f"({keep.OVER_OWN_STEP_COMMIT}), not yet re-run under today's")


def _runs_where(data: Mapping, test: Callable[[Mapping], bool]) -> dict[str, int]:
    """Per step (by `ladder.step_name`: a retried step is the step), in how many of the record's
    runs any of its rungs passed `test`."""
    runs = [r.get("steps") or {} for r in data.get("numbers") or []]
    names = dict.fromkeys(ladder.step_name(n) for steps in runs for n in steps)
    return {name: sum(1 for steps in runs if any(test(s or {}) for n, s in steps.items()
                                                 if ladder.step_name(n) == name))
            for name in names}


def _c24_record(machine: str) -> dict | None:
    """C24's fresh runs (`c24_runs`) from the machine's reproduce record; None without one."""
    try:
        return c24_runs(reproduced.load_record(reproduced.record_path(machine, CHAPTER)))
    except reproduced.ReproduceRecordError:
        return None


def verdict_line(machine: str, page_at: str | None = None) -> str:
    """C24's fresh runs in one line, under a page's verdict: 'Not reproduced by 3 fresh runs
    (2026-12-05 04:09 UTC, before this page's run at 04:12): C24 refuted, depends (the baseline),
    depends (the baseline); deciding rung 13,651-27,769 images/s, host-bound in run 1 (idle 51%);
    top rung 30,043-31,721 images/s (spread 5.6% > 5%)', or 'Reproduced by 3 fresh runs (...): C24
    depends (the baseline) in 3 of 3'; '' without a record. Read from results/reproduce/, as the
    08-past line is (review 2026-12-05p 08 item 3: the page's 'depends' said nothing of three
    fresh runs 3 minutes earlier that disagreed)."""
    found = _c24_record(machine)
    if not found:
        return ""
    n = len(found["labels"])
    when = _when(found["recorded_at"])
    # the record's time beside the page's own, so the order shows (the page's words: no sentence)
    here = f"; this page {_when(page_at)[11:]}" if when and page_at else ""
    if here and when[:10] == _when(page_at)[:10]:
        when = when[11:]   # the same day as the page: its time says the order
    head = f"{n} fresh runs ({when} UTC{here})" if when else f"{n} fresh runs"
    if found["agree"]:
        return f"Reproduced by {head}: C24 {found['labels'][0]} in {n} of {n}."
    # each run's outcome with what it depends on, in a few words, and why the runs differ
    # (review 2026-12-05t 08 item 2: 'C24 depends, depends, depends' hid a 'depends (noise)'
    # beside two 'depends (the baseline)'; the CPU page's note said it, the GPU page did not)
    why = why_differs(found)
    said = f"Not reproduced by {head}: C24 {', '.join(found['labels'])}" + (f"; why: {why}" if why else "")
    rates = [d for d in found["deciding"] if d > 0]
    if rates:
        bound = [f"run {i}" for i, idle in enumerate(found["idles"], start=1)
                 if idle is not None and idle > keep.IDLE_LIMIT]
        worst = max((i for i in found["idles"] if i is not None), default=None)
        said += (f"; deciding rung {min(rates):,.0f}-{max(rates):,.0f} images/s"
                 + (f", host-bound in {', '.join(bound)} (idle {'up to ' if len(bound) > 1 else ''}"
                    f"{100 * worst:.0f}%)" if bound else ""))
    tops = [t for t in found["tops"] if t > 0]
    if tops:
        spread = max(tops) / min(tops) - 1
        said += (f"; top rung {min(tops):,.0f}-{max(tops):,.0f} ({100 * spread:.1f}%"
                 + (f" > {100 * TOP_SPREAD:.0f}%" if spread > TOP_SPREAD else "") + ")")
    return said + "."


def why_differs(found: Mapping) -> str:
    """Why the fresh runs may read otherwise than the record: the steps not decidable in some
    runs, and the runs whose judged rung ran host-bound; '' when neither."""
    # a step not decidable in some runs and kept in others: the runs climbed other recipes
    earlier = {n for steps in (found.get("earlier") or {}).values() for n in steps}
    parts = [f"{n} not decidable in {k} of {len(found['labels'])}"
             + (f" (under the keep rule before {keep.OVER_OWN_STEP_COMMIT})" if n in earlier else "")
             for n, k in found["undecided"].items() if k and found["kept"].get(n)]
    bound = [i for i, idle in enumerate(found["idles"], start=1) if idle is not None and idle > keep.IDLE_LIMIT]
    if bound:
        idles = ", ".join(f"{100 * found['idles'][i - 1]:.0f}%" for i in bound)
        parts.append("the judged rung host-bound in run " + ", ".join(str(i) for i in bound)
                     + f" (idle {idles})")
    return "; ".join(parts)


def last_reproduced(machine: str) -> str:
    """The last superseded reproduce record of C24 whose runs agreed, kept as a file beside the
    record (results/reproduce/superseded/<machine>-08_inference_ladder-<when>.json, copied there
    when a record is replaced): 'the record of 2026-12-04 19:06 UTC (superseded/...-2026-12-04T19-06.json),
    depends (the baseline) 3 of 3 at 8.69-9.01x and 4.11-4.24x'; '' where none agreed. Read, never
    typed (review 2026-12-05p 08 item 4); a file, not git's history, so a shallow clone (Colab,
    Binder) shows it too."""
    path = reproduced.record_path(machine, CHAPTER)
    kept = []
    for old in sorted((path.parent / "superseded").glob(f"{path.stem}-*.json")):
        try:
            found = c24_runs(json.loads(old.read_text()))
        except (OSError, ValueError):
            continue
        if found and found["verdicts_agree"] and len(found["labels"]) >= reproduced.REQUIRED_RUNS:
            kept.append((str(found["recorded_at"]), old.name, found))
    if not kept:
        return ""
    _, name, found = max(kept, key=lambda k: k[0])
    n = len(found["labels"])
    ratios = " and ".join(spread(*r) for r in found["ratios"])
    return (f"{_when(found['recorded_at'])} UTC (reproduce/superseded/{name}), "
            f"{found['labels'][0]} {n} of {n}" + (f" at {ratios}" if ratios else ""))


def reference_note(machine: str, verdict_at: str = "") -> str:
    """Under the recorded reference verdict (a page without a GPU): whether the fresh runs
    reproduced it, why not, and the last record that did ('' without a record). Why: the CPU
    page showed a recorded 'depends (on noise)' that three fresh runs contradicted, and nothing
    on reproduction (review 2026-12-05p 08 item 4)."""
    found = _c24_record(machine)
    if not found:
        return ""
    n, when = len(found["labels"]), _when(found["recorded_at"])
    head = f"Recorded reference ({machine}" + (f", {_when(verdict_at)} UTC" if verdict_at else "") + ")"
    if verdict_at and when[:10] == _when(verdict_at)[:10]:
        when = when[11:]
    if found["agree"]:
        return f"{head}: reproduced by {n} fresh runs ({when} UTC), {found['labels'][0]} {n} of {n}."
    why = why_differs(found)
    last = last_reproduced(machine)
    return (f"{head}: NOT reproduced by {n} fresh runs ({when} UTC): {', '.join(found['labels'])}"
            + (f"; why: {why}" if why else "") + "."
            + (f" Last reproduced: {last}." if last else ""))
