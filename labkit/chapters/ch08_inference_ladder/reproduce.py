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

from collections.abc import Callable, Mapping

from labkit.chapters.ch08_inference_ladder import experiment, keep
from labkit.claims import reproduced
from labkit.claims.core import Verdict
from labkit.claims.registry import get
from labkit.core import env

# the top rung's images/s may differ by at most this share over the runs (max / min - 1):
# issue 40's bar for the H200 (spread within 5%)
TOP_SPREAD = 0.05

# the climb measure_numbers made in this process, for measure_verdicts to judge (by quick)
_CLIMBED: dict[bool, experiment.Result] = {}


def _climb(quick: bool) -> experiment.Result:
    return experiment.run(env.device(), quick=quick, beyond=False, regimes=False)


def measure_numbers(quick: bool = False) -> dict:
    """Climb the ladder once; the steps kept and each step's gains, for summarise_numbers."""
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
            "top": {"name": top.name, "batch": top.settings.batch, "images_per_s": top.images_per_s},
            "at_baseline_batch": {"name": at_base.name, "images_per_s": at_base.images_per_s},
            "phases": {"ladder": result.seconds}}


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
    sets = [tuple(run.get("kept") or ()) for run in runs]
    steps_agree = len(set(sets)) == 1
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
    return {"agree": agree, "steps_agree": steps_agree, "top_agree": top_agree, "lines": lines,
            "kept": [list(s) for s in sets]}


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
    return {"runs": len(runs), "recorded_at": str(data.get("recorded_at") or ""), "steps": steps,
            "machine": machine, "largest": largest, "gains": gains} if steps else None


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

    def side(value: float | None, span: tuple[float, float] | None) -> str:
        if value is None or span is None:
            return ""
        return "below" if value < span[0] / (1 + keep.MIN_GAIN) else \
            "above" if value > span[1] * (1 + keep.MIN_GAIN) else ""

    def one(name: str) -> str:
        s = steps[name]
        page, runs = gains.get(name), s["runs"]
        wall = side(page, s["wall"])
        device = side(device_gains.get(name), s["device"])
        said = f"{name} kept {s['kept']} of {runs}, "
        if wall:
            said += (f"this page's {page:.2f}x {wall} all {runs}"
                     + (" on both clocks" if device == wall else "") + ": ")
        else:
            said += "gain not stable: "
        return (said + f"{spread(*s['wall'])} wall" + (f", {spread(*s['device'])} device" if s["device"] else "")
                + (f", unstable {s['unstable']} of {runs}" if s["unstable"] else ""))
    pairs = split_moved(steps, loose, gains, device_gains, side)
    paired = {n for pair, _ in pairs for n in pair}
    said = [one(n) for n in loose if n not in paired] + [text for _, text in pairs]
    head = label(found, page_at)
    if define:
        head = head[:-1] + f"; held: {HELD_MEANS})"
    return f"Not held by {head}: " + "; ".join(said) + "."


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
