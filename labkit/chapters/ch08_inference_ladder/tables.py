"""Chapter 08's tables and takeaways, built from the ladder it climbed (issue 37).

The notebook printed these line by line (`print(f"{name:>18}: {gain:5.2f}x ...")`), branched
on `if ladder_run.regimes:` / `if on_gpu:` by hand and built its takeaways inline. The same
readings are here, as `labkit.show.table.Table`s a notebook shows with one call: the gate and
keep rule, the plan, where the time went, each step explained, the regimes, where the best
rung stands and the reference GPU's recorded ladder (labelled recorded). The levers past
stock PyTorch are shown from their recorded run by past_view. Nothing is measured here: every number is the run's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime, timezone

import numpy as np
import torch

from labkit.chapters.ch08_inference_ladder import (
    attribution,
    experiment,
    explain,
    keep,
    ladder,
    numerics,
    past_view,
    report,
    reproduce,
    roofline,
)
from labkit.core import results
from labkit.measure import timeline_stats
from labkit.session import Recorded
from labkit.show import table as tables
from labkit.show.widgets.quiz import Key

# The run's time budget on a GPU, on a CPU: no rung starts after it (a rung started before it
# may run one compile and one comparison past it, ~15 s on the H200), except the GPU climb's
# own rungs, which C24 is judged on (experiment.CLIMB_BUDGET_S). On the GPU it keeps the
# chapter within issue 40's 150 s there: the interaction table runs while time is left, and a
# rung it skips is shown as skipped.
GPU_CHAPTER_TARGET_S = experiment.CHAPTER_LIMIT_S   # issue 40
BUDGET_S = {True: 120, False: 75}


_PROGRESS: dict = {}   # the notebook cell's progress line: {"cell", "handle", "count"}


def say(name: str) -> None:
    """The climb's progress line: which rung is being measured now. In a notebook one line,
    updated in place (a line per rung was 18 lines, 65 words, of a GPU page's output:
    issue 37); elsewhere (a terminal) a printed line per rung."""
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is None or not hasattr(shell, "kernel"):
        print(f"  measuring: {name}", flush=True)
        return
    from IPython.display import Pretty, display

    cell = shell.execution_count
    if _PROGRESS.get("cell") != cell:   # a new run of the cell: a new line, not the last one's
        _PROGRESS.update(cell=cell, count=0, handle=display(Pretty(""), display_id=True))
    _PROGRESS["count"] += 1
    _PROGRESS["handle"].update(Pretty(f"rung {_PROGRESS['count']} started: {name}"))


def say_done(run: object) -> None:
    """The climb's last progress line, 'done: N rungs in X s', in place of 'rung N started: ...'
    (the H200 cell's only output read 'rung 14 started: eager: + Conv-BN folding', as if the
    climb had stopped there: review 2026-12-04k item 10b). N counts every rung measured: the
    climb's, those past it and the interaction's."""
    measured = {id(r) for r in [*run.rungs, *run.beyond, *run.regime_bases.values(),
                                *(r for steps in run.regimes.values() for r in steps.values())]}
    line = f"done: {len(measured)} rungs in {run.seconds:.0f} s"
    if _PROGRESS.get("handle") is None:
        print(line, flush=True)
        return
    from IPython.display import Pretty

    _PROGRESS["handle"].update(Pretty(line))
    _PROGRESS.update(cell=None, handle=None)


# The opening quiz's bands (a speed-up's), and the seed's 4.8x among their edges
TOTAL_CHOICES = ("under 2x", "2x to 4.8x", "4.8x to 7x", "over 7x")


def total_question(plan: object, on_gpu: bool) -> str:
    """The opening quiz's question. On a GPU it asks for the number C24 judges, the best gated
    rung at the baselines' batch over PyTorch's default float32 (the H200 quiz asked for the top
    rung at batch 256 over strict float32, a form the chapter says it does not judge: review
    2026-12-04k item 4); on a CPU, where C24 is not judged, the kept top rung over eager float32."""
    if on_gpu:
        return (f"C24's judged form: batch {plan.batch}, the best gated rung over PyTorch's "
                "default float32 eager (images/s):")
    return "Top rung against eager float32 (PyTorch's defaults here), in images per second on this machine:"


def _band(x: float) -> str:
    return (TOTAL_CHOICES[0] if x < 2 else TOTAL_CHOICES[1] if x < 4.8
            else TOTAL_CHOICES[2] if x < 7 else TOTAL_CHOICES[3])


def total_key(run: object, on_gpu: bool) -> Key | str:
    """The opening quiz's answer, computed from the ladder: the band of the speed-up the
    question asks for (`total_question`); where its interleaved spread crosses a band's edge, a
    Key accepting every band the spread reaches (review 2026-12-04m item 12: one band from the
    median, whatever the spread)."""
    rung, base = (run.top_at_baseline_batch, run.defaults) if on_gpu else (run.top, run.strict)
    x = rung.speedup_over(base)
    try:
        low, high = rung.speedup_spread(base)
    except (AttributeError, KeyError, TypeError, ValueError):
        return _band(x)
    bands = tuple(dict.fromkeys(_band(v) for v in (low, x, high)))
    if len(bands) == 1:
        return bands[0]
    return Key(_band(x), bands, f"The speed-up, {x:.2f}x, has an interleaved spread of "
               f"{low:.2f}-{high:.2f}x across a band's edge: each band it reaches is right.")


def budget_s(on_gpu: bool) -> float:
    """The climb's time budget: rungs past it are skipped and shown as skipped."""
    return BUDGET_S[bool(on_gpu)]


def end_s(on_gpu: bool) -> float | None:
    """On a GPU, the seconds into the run after which no interaction cell begins, so the chapter
    keeps to its limit however long the climb ran (experiment.INTERACTION_END_S); None on a CPU,
    which runs no interaction."""
    return experiment.INTERACTION_END_S if on_gpu else None


def ceiling_line(ceiling: object) -> str:
    """This machine's measured ceilings in one line (the ladder table's 'share of the ceiling'
    is against them), not the Ceilings record's whole repr."""
    rates = ", ".join(f"{math} {tflops:.3g}" for math, tflops in ceiling.matmul_tflops.items())
    return f"measured ceilings: matmul {rates} TFLOP/s; copy {ceiling.copy_gbps:,.0f} GB/s"


def gate_rules() -> tables.Table:
    """The numerics gate's tolerances and the keep rule's limits (the same on every machine)."""
    shown = tables.Table("The gate and the keep rule", ["math", "logits within", "centred logits within"],
                         [[m, f"{t:.2g}", f"{numerics.CENTRED_TOLERANCES[m]:.2g}"]
                          for m, t in numerics.TOLERANCES.items()])
    shown.note(f"and top-1 agreement at least {100 * numerics.MIN_TOP1:.0f}%; a step is "
               f"{keep.rule()}; host-bound: GPU idle over {100 * keep.IDLE_LIMIT:.0f}%")
    # the keep rule's mechanics, folded under the table they apply (review 2026-12-04i item 10:
    # about 380 words of markdown came before the climb's table, most of it rules a learner
    # cannot use until the table is there); the instability rule with them (the GPU page's
    # 1,500 words, 2026-12-04j)
    return shown.fold("how the gate and the keep rule work, what 'unstable' means",
                      KEEP_RULE_MECHANICS.format(gain=1 + keep.MIN_GAIN, idle=100 * keep.IDLE_LIMIT)
                      + f" A step is flagged {keep.unstable_rule()}.")


KEEP_RULE_MECHANICS = (
    "The gate: each rung's logits against strict-float32 eager's on the same images, copied into "
    "the rung's own input buffer after it was compiled or captured on other images (so a CUDA "
    "graph is gated on what it replays). Two relative L2 errors must stay under the tolerance of "
    "the precision the convolutions ran in: the logits', and the logits' centred per class over "
    "the images (the part that depends on the image); each tolerance is at least three times the "
    "largest error measured for its precision. The top-1 class must agree on the images whose "
    "float32 top-1 is clear of its runner-up (a near-tie flips on rounding alone). The reference "
    "model's BatchNorm statistics are first calibrated on the chapter's images, as a trained "
    "network's are; gate_audit holds known-wrong rungs (batch-mean logits, a stale input buffer, "
    "a dropped bias, a weight off by 10%) that the tests and benchmarks/gpu_gate.py show it "
    "refusing. The keep rule: each step is measured on two clocks, the wall gain (median of the "
    "interleaved rounds' ratios, with their IQR) and the device-time gain per image (kernel "
    "records of several batches, no host tracing). GPU idle is 1 - device time / unprofiled "
    "wall time per batch; over {idle:.0f}% the host binds the rung, and a step that halves the "
    "GPU's work may hardly move the wall clock. A device-bound "
    "rung is judged by wall time; on a host-bound rung either clock may carry the gain. Either way the range of the "
    "gain that keeps a step lies wholly above 1 and its median is at least {gain:.2f}x: a gain "
    "of 0.06% can have a range above 1 and still say nothing.")


def plan_table(plan: object) -> tables.Table:
    """The steps the ladder climbs on this machine, from its starting rung, each with why it is
    expected to help: a prediction the climb below tests (review 2026-12-04l 08-09-99 item 11d:
    'oneDNN's convolutions prefer NHWC' read as a fact beside a CPU step measured at 0.82x)."""
    shown = tables.Table(f"The plan here: from {plan.start.math} eager, batch {plan.start.batch}",
                         ["#", "step", "why (predicted)"],
                         [[n, s.name, s.why] for n, s in enumerate(plan.steps, start=1)])
    # held with the table under the quiz on the step the GPU does not feel, and folded: the
    # order's reason says what CUDA Graphs do (review 2026-12-05u item 11: it sat in the markdown
    # right under the quiz, answering it)
    return shown.fold("why this order", PLAN_ORDER)


# the GPU ladder's order, why: folded under the plan (`plan_table`)
PLAN_ORDER = ("On a GPU, CUDA Graphs come before torch.compile and Conv-BN folding: once one graph "
              "launch replaces each kernel's, the GPU and not Python sets the pace, so where Graphs "
              "are kept every later step is judged on the GPU's work (the H200's host ran at two "
              "speeds within one run, and steps timed while it set the pace flipped between runs). "
              "The fold's compile column (on a GPU) shows what each compiled rung cost to get ready, "
              "cold (the climb compiles into an empty Inductor cache). Where Graphs are not "
              "decidable (their base timed fast in its own step and slow in theirs), the rungs after "
              "them are built without graphs and can run host-bound; the climb then tries Graphs once "
              "more over the compiled, folded rung, by the same rule, before it raises the batch "
              "('..., retried').")
# (the retry's note sat in the markdown above the quiz's held cells, hinting at its answer: the
# diff re-read of 2026-12-05u, item 11; it is folded with the order, held by the quiz)


MINOR = 0.05   # a kernel class under this share on every rung is folded, not a column


def attribution_table(rungs: list) -> tables.Table:
    """Per profiled rung: kernel classes' shares (one column each), device-busy time and
    kernels per batch; the idle the profile saw (host traced, secondary) and how it compares
    with the unprofiled idle are folded (issue 37: a line per rung said the same caveat nine
    times on the H200)."""
    profiled = [r for r in rungs if not r.error and r.kinds]
    gpu = any(r.device_s is not None for r in profiled)
    of = "GPU time" if gpu else "CPU op self time"
    classes: dict[str, float] = {}
    for r in profiled:
        for k, v in r.kinds.items():
            classes[k] = classes.get(k, 0.0) + v
    order = sorted(classes, key=lambda k: -classes[k])
    # a class under MINOR of every rung's time gets no column: its shares are folded
    minor = [k for k in order if all(r.kinds.get(k, 0.0) < MINOR for r in profiled)]
    order = [k for k in order if k not in minor]
    clocked = gpu and all(r.device_s is not None for r in profiled)
    shown = tables.Table(f"Where the time goes, rung by rung (% of {of})",
                         ["rung", *order] + (["device busy (ms/batch)", "kernels/batch"] if clocked else []))
    for r in profiled:
        shown.add(r.name, *[f"{100 * r.kinds.get(k, 0.0):.0f}" for k in order],
                  *([f"{1e3 * r.device_s:.2f}", "" if r.kernels_per_batch is None
                     else f"{r.kernels_per_batch:.0f}"] if clocked else []))
    if gpu and not clocked:   # a mix (a rung without a device clock): each line says its own
        shown = tables.Table("Where the time goes, rung by rung", ["rung", "profile"])
        for r in profiled:
            shown.add(r.name, attribution.line(attribution.Figures(
                r.device_s, r.profiled_idle, r.kinds,
                "GPU time" if r.device_s is not None else "CPU op self time", r.kernels_per_batch)))
    if minor:
        shown.fold(f"classes under {100 * MINOR:.0f}%", "\n".join(
            f"{r.name}: " + ", ".join(f"{k} {100 * r.kinds.get(k, 0.0):.1f}%" for k in minor)
            for r in profiled))
    idles = [f"{r.name} {100 * r.profiled_idle:.0f}%" for r in profiled if r.profiled_idle is not None]
    compared = profiled_against_unprofiled(profiled)
    if idles:
        shown.fold("profiled idle",
                   "; ".join(idles) + (f"\n{compared}" if compared else ""))
    return shown


def profiled_against_unprofiled(rungs: list) -> str:
    """How the profiled idle (host traced) compares with the unprofiled idle the keep rule
    reads, counted from the rungs (review 2026-12-03d item 12: the page said 'reads higher',
    and folding's was 7% profiled against 21% unprofiled); '' without a device clock."""
    pairs = [(r.name, r.profiled_idle, r.idle_share) for r in rungs
             if r.profiled_idle is not None and r.idle_share is not None]
    if not pairs:
        return ""
    higher = [p for p in pairs if p[1] > p[2] + 0.01]
    lower = [p for p in pairs if p[1] < p[2] - 0.01]

    def most(group: list, sign: int) -> str:
        name, prof, unprof = max(group, key=lambda p: sign * (p[1] - p[2]))
        return f" (most: {name}, {100 * prof:.0f}% profiled against {100 * unprof:.0f}%)"
    return (f"The profiled idle against the unprofiled (the table's): higher on {len(higher)} of "
            f"{len(pairs)} rungs" + (most(higher, 1) if higher else "")
            + f", lower on {len(lower)}" + (most(lower, -1) if lower else "")
            + ", within a point on the rest: the trace moves the host's pace, either way.")


def explanations(rungs: list) -> tables.Table:
    """Each step's reading of its figures (`explain.parts`; its decision is the ladder table's
    'kept?'); the figures the reading rests on (both clocks' gains, idle, kernels, launches, class shares)
    are folded under the table, one line per step (issue 37)."""
    shown = tables.Table("Each step, explained by its numbers", ["step", "reading"])
    by_name = {r.name: r for r in rungs}
    figures, moved = [], []
    for r in rungs[1:]:
        before = by_name.get(r.after)
        if r.error or before is None:
            shown.add(r.name, r.why)
            continue
        numbers, said = explain.parts(before, r)
        figures.append(f"{r.name}: {numbers}")
        # the decision is the ladder table's 'kept?' above: not said twice (issue 37)
        unread = numbers.endswith("its base moved.")
        moved += [r.name] if unread and not said else []
        shown.add(r.name, said or (explain.not_read(before, r) if unread else "-"))
    if moved and len(moved) == len(rungs) - 1:
        # every step unread (a CPU whose pace moved): why, once (review 2026-12-04k item 5)
        shown.note("No step is read here: each one's base ran at another speed when timed again, "
                   "so the difference between two profiles would be this machine's pace, not the "
                   "step's. The ladder's first line says how far repeats moved; the reference "
                   "GPU's steps are explained on its recorded ladder below.")
    if figures:
        shown.fold("each step's figures",
                   "\n".join(figures))
    return shown


def regimes_table(run: object, chapter: object = None) -> tables.Table:
    """channels_last, fp16 and folding alone on an eager base (and a compiled-and-graphed one
    where the run measured it: benchmarks/gpu_ladder.py; the chapter leaves it out). On a
    machine that measured none (a CPU), the reference GPU's recorded interaction, labelled
    recorded, where `chapter` is given and its record has one (review 2026-12-04n item 7: the
    CPU page's table was empty beside a recorded channels_last 1.20x and fp16 below its base)."""
    gains = run.regime_gains()
    if not gains and not getattr(run, "regimes_missing", {}) and chapter is not None \
            and not getattr(chapter, "on_gpu", False):
        recorded = chapter.reference("ladder")
        if isinstance(recorded, Recorded) and (recorded.get("regimes") or {}).get("eager"):
            shown = regimes_table(experiment.Result.from_record(recorded.value))
            # the TF32 in the heading is the recorded GPU's, said so on a CPU (review 2026-12-05t 08 item 12)
            shown.title = shown.title.replace(" (TF32 on)", " (on the recorded GPU, TF32 on)")
            shown.recorded = recorded.label
            shown.notes = [n.replace("(this run: ", "(the recorded run: ") for n in shown.notes]
            return shown.note("No GPU here: the interaction is measured on a GPU; above, the "
                              "reference GPU's, as recorded.")
    bases = list(getattr(run, "regime_bases", {}).values())
    tf32 = all(getattr(getattr(base, "settings", None), "tf32", "on") != "off" for base in bases)
    shown = tables.Table("Do the steps simply add up?" + ("" if not bases else
                         " (TF32 on)" if tf32 else " (float32: no TF32 on this GPU)"),
                         ["step", *[f"{regime} ({_base_rate(run.regime_bases[regime])})" for regime in gains]])
    missing = getattr(run, "regimes_missing", {})
    if not gains and not missing:
        # the recorded ladder below holds the climb's rungs only, not this table
        # no pointer to the recorded one: its record skipped a cell, so it compares nothing
        # (review 2026-12-04l item 3)
        shown.note("No GPU here: the interaction is measured on a GPU (the steps alone on a "
                   "TF32 base).")
        return _fold_compiled_layout(shown)
    steps = list(dict.fromkeys(name for regime in gains for name in run.regimes[regime]))
    idles = []   # each measured cell's unprofiled GPU idle, folded (issue 37)
    for name in steps:
        cells = []
        for regime, g in gains.items():
            r = run.regimes[regime].get(name)
            if r is not None and r.idle_share is not None and name in g:
                idles.append(f"{name}, {regime}: {100 * r.idle_share:.0f}%")
            undecided = r is not None and r.judged_by == keep.NOT_DECIDABLE
            cells.append(f"not decidable ({g[name]:.2f}x, its base moved)" if undecided and name in g else
                         _on_its_clock(r, g[name]) if name in g else
                         "-" if r is None else r.why.split(":")[0])  # 'skipped', 'failed'
        shown.add(name, *cells)
    if idles:
        shown.fold("idle per cell", "; ".join(idles))
    if not gains and missing:
        # every cell skipped (a retried step took the climb past the interaction's start): one row
        # says so, not a header over nothing (review 2026-12-05p2 08 item 3)
        shown.add("none of the three cells was measured")
    for regime, why in missing.items():
        shown.note(f"{regime}: not measured ({why})")
    added, climb = adds_up_parts(run, gains)
    if added:
        shown.note(added + ".")
        if climb:
            shown.fold("derived worth, composed gains" if " is worth " in climb else "composed gains", climb)
    else:
        unmeasured = [n for n in steps for regime in gains
                      if getattr(run.regimes[regime].get(n), "error", "") == "skipped"]
        if unmeasured:   # review 2026-12-04l item 3: the question answered nothing, unsaid
            on_gpu = any(getattr(b, "device_s", None) is not None for b in bases)
            took = getattr(run, "seconds", 0.0) or 0.0
            sections = getattr(run, "section_s", None) or {}
            climb, own = sections.get("climb"), getattr(run, "interaction_allowance_s", 0.0) or 0.0
            if getattr(run, "interaction_capped", False):
                # the climb ran long and the chapter's limit cut the interaction's own time
                # (review 2026-12-04n item 5): what cut it, said
                shown.note(f"Not compared: the climb took {climb or 0.0:.0f} s, so the steps alone had "
                           f"{own:.0f} s of their own {experiment.INTERACTION_S:.0f} before the "
                           f"chapter's {experiment.CHAPTER_LIMIT_S:.0f} s limit on the GPU (they took "
                           f"{sections.get('interaction', 0.0):.0f} s).")
            elif own > 0:
                # the interaction had time of its own (experiment.INTERACTION_S) and still ran out
                shown.note(f"Not compared: the steps alone ran out of their own {own:.0f} s "
                           f"(they took {sections.get('interaction', 0.0):.0f} s"
                           + (f", the climb {climb:.0f} s" if climb else "") + ").")
            else:
                # a record from before that time: how much of the budget the climb itself used
                # (review 2026-12-04m item 2: on the H200 the climb took 99-124 s of the 120)
                used = (f": the climb took {climb:.0f} s of it, leaving "
                        f"{max(BUDGET_S[on_gpu] - climb, 0):.0f} s for the steps alone" if climb else "")
                shown.note(f"Not compared: the {BUDGET_S[on_gpu]} s budget ran out{used}"
                           + (f" (this run: {took:.0f} s)." if took > 0 else "."))
            apart = alone_against_climb(run)
            if apart:
                shown.note(apart)
    if not any("compiled" in regime for regime in gains):
        # no compiled column (the chapter's run): the recorded one, with why, folded
        return _fold_compiled_layout(shown)
    return shown.fold("compiled base", layout_read())


# benchmarks/gpu_ladder.py's recorded runs with a compiled-and-graphed column (under results/)
COMPILED_LADDER_RUNS = "h200_ladder/run*.json"


def layout_read() -> str:
    """Why channels_last gains little once torch.compile runs the graph, read from Inductor's
    source in this torch (labelled so: not measured)."""
    import torch._inductor.config as inductor_config

    return ("Read from Inductor's source (torch 2.13), not measured: "
            f"torch._inductor.config.layout_optimization (here, torch {torch.__version__}: "
            f"{inductor_config.layout_optimization}); when on, GraphLowering.decide_layout_opt lays a compiled inference graph's "
            "convolutions out channels_last itself, unless it finds a grouped convolution or its "
            "FLOP-weighted estimate of each convolution's speed in that layout predicts a loss. "
            "So a compiled NCHW base already runs its convolutions in NHWC, and the step "
            "changes little more than where the input is converted.")


def recorded_compiled_layout(folder: object | None = None) -> str:
    """channels_last's gain on the compiled-and-graphed base beside the eager one, from the
    first of benchmarks/gpu_ladder.py's recorded runs that measured both ('' where none did);
    labelled recorded, with its file and torch. Why: the chapter leaves that base out for its
    time, and issue 40 asked why channels_last gives only ~1.03x under compile."""
    import json
    from pathlib import Path

    root = Path(folder) if folder is not None else results.repository_results_dir()
    for path in sorted(root.glob(COMPILED_LADDER_RUNS)):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        regimes, bases = record.get("regimes") or {}, record.get("regime_bases") or {}
        said = []
        for regime in ("compiled + CUDA graphs", "eager"):
            cell, base = (regimes.get(regime) or {}).get("channels_last"), bases.get(regime)
            if not cell or not base or cell.get("error") or base.get("name") not in (cell.get("over") or {}):
                break
            gain, low, high = cell["over"][base["name"]]
            said.append(f"{gain:.2f}x [{low:.2f}, {high:.2f}] on the {regime} base "
                        f"({base['images_per_s']:,.0f} images/s)")
        if len(said) == 2:
            return (f"channels_last {said[0]}, {said[1]} (recorded: results/{path.relative_to(root)}, "
                    f"benchmarks/gpu_ladder.py on an {record.get('device', 'unnamed GPU')}, torch "
                    f"{record.get('torch', '?')}).")
    return ""


def _fold_compiled_layout(shown: tables.Table) -> tables.Table:
    """The recorded compiled-base gain of channels_last and why it is small, folded under the
    interaction (no counted words: the GPU page's tables are at their share of 1,500)."""
    recorded = recorded_compiled_layout()
    return shown.fold("compiled base", (recorded + " " if recorded else "") + layout_read())


def alone_against_climb(run: object) -> str:
    """Each step measured alone whose gain, on the clock its cell is read on (`_on_its_clock`),
    lies apart from its own gain on the climb: 'Measured both ways: fp16 weights 1.38x device
    time alone, 1.84x on the climb after channels_last: a step's gain depends on what came
    before it.' '' where none lies apart. Why: with a cell cut by the budget the section said
    nothing, though fp16 alone on the NCHW base against fp16 after channels_last is an
    interaction its two cells show (review 2026-12-04m item 2)."""
    cells = (getattr(run, "regimes", {}) or {}).get("eager", {})
    base = (getattr(run, "regime_bases", {}) or {}).get("eager")
    climbed = {r.name: r for r in getattr(run, "rungs", []) if not r.error and r.gain is not None}
    said = []
    for s in ladder.REGIME_STEPS:
        cell, on_climb = cells.get(s.name), climbed.get(s.name)
        if cell is None or cell.error or on_climb is None or base is None:
            continue
        device = _on_its_clock(cell, 1.0) != "1.00x" and cell.device_spread and on_climb.device_spread
        if device:
            alone, climb = cell.device_gain, on_climb.device_gain
            spreads = (tuple(cell.device_spread), tuple(on_climb.device_spread))
        else:
            alone, climb = cell.speedup_over(base), on_climb.gain
            spreads = (tuple(cell.speedup_spread(base)), tuple(on_climb.gain_spread or (climb, climb)))
        if _apart(*spreads) and abs(climb / alone - 1) > keep.MIN_GAIN:
            said.append(f"{s.name} {alone:.2f}x{' device time' if device else ''} alone, {climb:.2f}x "
                        f"on the climb after {on_climb.after}")
    if not said:
        return ""
    return "Measured both ways: " + "; ".join(said) + ": a step's gain depends on what came before it."


def _on_its_clock(rung: object, wall: float) -> str:
    """An interaction cell's gain on the clock the keep rule reads there: device time where the
    host binds the cell (GPU idle over keep.IDLE_LIMIT, or judged so), with the wall beside it;
    else the wall. Why: the H200's cells read 1.08x and 0.97x wall at 31% and 35% idle, while
    the climb judged the same fp16 step on device time (review 2026-12-04l item 3)."""
    device, idle = getattr(rung, "device_gain", None), getattr(rung, "idle_share", None)
    host_bound = getattr(rung, "judged_by", "") == "device time" or (
        idle is not None and idle > keep.IDLE_LIMIT)
    if device is None or not host_bound:
        return f"{wall:.2f}x"
    return f"{device:.2f}x device ({wall:.2f}x wall)"


def _base_rate(base: object) -> str:
    """A regime's base as its column says it: its images/s, or 'base not timed' where no step
    of the regime ran (each failed): a base is timed only in its steps' rounds."""
    rate = getattr(base, "images_per_s", 0.0) or 0.0
    return f"base {rate:,.0f} images/s" if rate > 0 else "base not timed"


def _range_product(spreads: list[tuple[float, float]]) -> tuple[float, float]:
    """The lows multiplied and the highs multiplied: a bound on a product of gains, each from
    its own comparison (wider than any one of them, as it should be)."""
    return float(np.prod([lo for lo, _ in spreads])), float(np.prod([hi for _, hi in spreads]))


def adds_up(run: object, gains: Mapping[str, Mapping[str, float]]) -> str:
    """`adds_up_parts` as one text: the comparison, then the climb's own product."""
    said, climb = adds_up_parts(run, gains)
    return f"{said}. {climb}" if said else ""


def adds_up_parts(run: object, gains: Mapping[str, Mapping[str, float]]) -> tuple[str, str]:
    """(the comparison, how the climb's step gains compose): whether the three steps multiply,
    each product from the three steps' own gains (review 2026-12-03h item 2).

    Alone: each step's gain on the eager base, interleaved with that same base, multiplied. On
    the climb: the same three steps' own gains there, each over the rung it was built on in its
    step's rounds, multiplied. Not the climb's rows end to end: on a GPU the three are not
    adjacent (CUDA Graphs and torch.compile come between fp16 weights and Conv-BN folding), so
    the rows' ratio counts the steps between them too (the H200's 21:52 page read 4.08x against
    1.67x alone, of which CUDA Graphs and torch.compile were 2.07x). Where the two products'
    ranges (each the lows and the highs multiplied) do not overlap, the steps whose own ranges
    do not overlap are named, with what each was built on in the climb. 'not decidable' when a
    step is flagged unstable or its base moved, on the climb or alone, or a cell alone is noisy
    (IQR over keep.UNSTABLE_IQR of its median); ('', '') when a step was not measured (a skipped
    cell).

    The second part, folded on the page (issue 37): the climb's step gains along its chain,
    start to top rung, multiplied, against the top rung's speed-up over the start (both
    computed here), with any base the next step re-timed off its own step's images/s.
    """
    names = [s.name for s in ladder.REGIME_STEPS]
    alone = gains.get("eager") or {}
    climbed = {r.name: r for r in getattr(run, "rungs", []) if not r.error and r.gain is not None}
    if not all(n in alone for n in names) or not all(n in climbed for n in names):
        return "", ""
    worth = ""   # what a step is worth after another, derived: folded (the takeaway says it)
    regime = (getattr(run, "regimes", {}) or {}).get("eager", {})
    base = (getattr(run, "regime_bases", {}) or {}).get("eager")
    cells = {n: regime[n] for n in names if n in regime}
    alone_spreads = ({n: tuple(cells[n].speedup_spread(base)) for n in names}
                     if base is not None and len(cells) == len(names) else None)
    climb_spreads = {n: tuple(climbed[n].gain_spread or (climbed[n].gain, climbed[n].gain)) for n in names}
    p_alone = float(np.prod([alone[n] for n in names]))
    p_climb = float(np.prod([climbed[n].gain for n in names]))
    alone_range = _range_product(list(alone_spreads.values())) if alone_spreads else None
    climb_range = _range_product(list(climb_spreads.values()))
    said = (f"Do they add up? Alone on the eager base, the three multiply to {p_alone:.2f}x"
            + (f" ({alone_range[0]:.2f} to {alone_range[1]:.2f})" if alone_range else "")
            + f"; their own gains on the climb multiply to {p_climb:.2f}x "
            f"({climb_range[0]:.2f} to {climb_range[1]:.2f})")
    unsure = [n for n in names if climbed[n].unstable or climbed[n].judged_by == keep.NOT_DECIDABLE]
    noisy = [r.name for r in cells.values() if r.median_s > 0 and r.iqr_s / r.median_s > keep.UNSTABLE_IQR]
    moved_alone = [r.name for r in cells.values() if r.judged_by == keep.NOT_DECIDABLE]
    if unsure or noisy or moved_alone:
        why = "; ".join(
            ([f"{', '.join(unsure)} unstable on the climb"] if unsure else [])
            + ([f"{', '.join(noisy)} timed with an IQR over {100 * keep.UNSTABLE_IQR:.0f}%"] if noisy else [])
            + ([f"{', '.join(moved_alone)} on a base that moved"] if moved_alone else []))
        on_device, worth = _adds_up_on_device(names, cells, climbed)
        # the wall's products decide nothing here: only the device clock's are said
        said = (f"Not decided on the wall clock ({why}); {on_device}" if on_device
                else said + f". Not decidable: {why}")
    elif alone_range is None:
        said += f". {p_climb / p_alone:.2f}x apart (no range for the steps alone)"
    elif not _apart(alone_range, climb_range):
        said += ". The ranges overlap: here the steps multiply, within what was measured"
    else:
        apart = p_climb / p_alone
        differ = [n for n in names if _apart(alone_spreads[n], climb_spreads[n])
                  and abs(climbed[n].gain / alone[n] - 1) > keep.MIN_GAIN]
        # the lesson (a step's gain depends on what came before it) is the takeaway's
        # (regimes_said): here the numbers, each step with the rung it was built on
        worth = worth_said(derived_worth(names, {n: climbed[n].gain for n in names}, alone,
                                         {n: climbed[n].after for n in names}, differ), "wall time")
        said += (f". The ranges do not overlap ({apart:.2f}x apart): " + "; ".join(
                     f"{n} {climbed[n].gain:.2f}x on the climb (after {climbed[n].after}), "
                     f"{alone[n]:.2f}x alone" for n in differ))
    # a step the climb took on compiled code is judged alone on eager: its two gains measure
    # different things, so a gap there is where it sits, not steps interacting (review
    # 2026-12-04n item 8: folding, 0.90x device time in eager, 1.09x wall over torch.compile)
    compiled = [n for n in names if climbed[n].settings.compile]
    if compiled:
        said += (f"; {', '.join(compiled)} on the climb {'is' if len(compiled) == 1 else 'are'} "
                 "judged on compiled code, alone on eager: the two gains measure different things")
    # the derived worth is the takeaway's, on both clocks (interaction_said): here it is folded
    # with the composed gains, not said a second time beside a takeaway that names another clock
    # (review 2026-12-05u items 5 and 7: 1.32x wall here, 1.34x device there, read as a clash)
    return said, " ".join(x for x in ((worth[0].upper() + worth[1:] + ".") if worth else "",
                                      composed(run)) if x)


def _adds_up_on_device(names: list[str], alone: Mapping[str, ladder.Rung],
                       climbed: Mapping[str, ladder.Rung]) -> tuple[str, str]:
    """(the same comparison on device time, per image; the derived worth, `worth_said`), each ''
    where it has none (a step without a device gain: both):
    the device clock does not follow the host's pace, so where a wall gain is unstable (the
    H200's fp16 weights, IQR 27%) its device gain (1.84-1.85x in 3 of 3 fresh runs) still
    decides whether the steps multiply (review 2026-12-04i item 4: the section concluded
    nothing on either page)."""
    both = [alone.get(n) for n in names] + [climbed.get(n) for n in names]
    if any(r is None or r.device_gain is None for r in both):
        return "", ""
    a_spreads = [tuple(alone[n].device_spread or (alone[n].device_gain,) * 2) for n in names]
    c_spreads = [tuple(climbed[n].device_spread or (climbed[n].device_gain,) * 2) for n in names]
    p_alone = float(np.prod([alone[n].device_gain for n in names]))
    p_climb = float(np.prod([climbed[n].device_gain for n in names]))
    a_range, c_range = _range_product(a_spreads), _range_product(c_spreads)
    said = (f"on device time the three multiply to {p_alone:.2f}x alone ({a_range[0]:.2f}-{a_range[1]:.2f}), "
            f"{p_climb:.2f}x on the climb ({c_range[0]:.2f}-{c_range[1]:.2f})")
    if not _apart(a_range, c_range):
        return said + ": the ranges overlap, the steps multiply", ""
    # a step is named where its two ranges are apart by more than the keep rule's 2%: the
    # H200's channels_last read 1.22x and 1.21x, apart on device time's narrow ranges
    differ = [n for n, a, c in zip(names, a_spreads, c_spreads, strict=True)
              if _apart(a, c) and abs(climbed[n].device_gain / alone[n].device_gain - 1) > keep.MIN_GAIN]
    worth = worth_said(derived_worth(names, {n: climbed[n].device_gain for n in names},
                                     {n: alone[n].device_gain for n in names},
                                     {n: climbed[n].after for n in names}, differ), "device time")
    return (said + f": they do not ({p_climb / p_alone:.2f}x apart): " + "; ".join(
        f"{n} {climbed[n].device_gain:.2f}x after {climbed[n].after}, "
        f"{alone[n].device_gain:.2f}x alone" for n in differ)), worth


def derived_worth(names: list[str], climb: Mapping[str, float], alone: Mapping[str, float],
                  after: Mapping[str, str], differ: list[str]) -> tuple[str, str, float, float, float, float] | None:
    """What the interaction's own numbers say a step is worth once another is on: for a step n
    whose gain on the climb (built on step m) and alone differ, m's worth once n is on is
    m's climb gain x n's climb gain / n's gain alone (both orders reach the same rung: alone n
    then m, or m then n). Returns (m, n, m's gain before n, m's gain after n, n's gain after m,
    n's gain alone); None where
    no differing step was built on another of the three. Why: the H200 page said 'fp16 weights
    1.84x after channels_last, 1.38x alone ... they do not' and no reason, though its own numbers
    give it: channels_last 1.22x in TF32 and 1.22 x 1.84 / 1.38 = 1.63x in fp16 (review
    2026-12-04k item 3)."""
    for n in differ:
        m = after.get(n)
        if m in names and m != n and climb.get(m) and climb.get(n) and alone.get(n):
            return m, n, climb[m], climb[m] * climb[n] / alone[n], climb[n], alone[n]
    return None


def worth_said(worth: tuple[str, str, float, float, float, float] | None, clock: str = "") -> str:
    """`derived_worth` in words ('' for None): 'so channels_last is worth 1.62x after fp16
    weights, 1.22x before (derived, device time: 1.22 x 1.84 / 1.38)'; derived from timed gains,
    not timed, on the clock named (review 2026-12-05t 08 item 7: the fold's 1.32x on wall time
    and the takeaway's 1.34x on device time each read as the one figure)."""
    if worth is None:
        return ""
    m, n, before, once, n_after, n_alone = worth
    return (f"so {m} is worth {once:.2f}x after {n}, {before:.2f}x before "
            f"(derived{', ' + clock if clock else ''}: {before:.2f} x {n_after:.2f} / {n_alone:.2f})")


def _apart(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two ranges (low, high) do not overlap."""
    return a[1] < b[0] or b[1] < a[0]


def composed(run: object) -> str:
    """Whether the climb's step gains compose: the gains along its chain (each rung's 'after',
    back from the top kept rung to the start) multiplied, against the top rung's speed-up over
    the start (its rows, one yardstick); each gain is over its base as re-timed in its step's
    rounds, so a base re-timed off its own step's images/s is named. '' without a chain."""
    rungs = [r for r in getattr(run, "rungs", []) if not r.error]
    by_name = {r.name: r for r in rungs}
    strict = getattr(run, "strict", None)
    top = getattr(run, "top", None) or next((r for r in reversed(rungs) if r.kept), None)
    if strict is None or top is None or top is strict:
        return ""
    chain, r = [], top
    while r is not None and r.name != strict.name:
        if r.gain is None:
            return ""
        chain.append(r)
        r = by_name.get(r.after)
    if r is None or not chain:
        return ""
    product = float(np.prod([c.gain for c in chain]))
    end = top.speedup_over(strict)
    moved = []
    for c in reversed(chain):
        b = by_name.get(c.after)
        here = (c.here.get(c.after) or {}).get("images_per_s")
        if b is not None and here and b.images_per_s > 0 and abs(here / b.images_per_s - 1) > keep.BASE_MOVE:
            moved.append(f"{b.name} {b.images_per_s:,.0f} in its step, {here:,.0f} in {c.name}'s")
    return (f"The climb's {len(chain)} step gains, {chain[-1].name} to {top.name}, multiply to "
            f"{product:.2f}x; the rows give {end:.2f}x end to end ({top.name} over {strict.name}). "
            "Each gain is over its base as re-timed in its step's rounds"
            + (f": bases moved ({'; '.join(moved)})" if moved else ", and no base moved"))


def bound_line(best: object, per_image: float, ceiling_tflops: float | None) -> str:
    """What bound the best rung, from its own profile (review 2026-12-04l item 5): the clock
    (GPU idle over keep.IDLE_LIMIT: the host), then the GEMM/conv kernels' share of its device
    time and the rate they run the FLOPs at (FlopCounterMode counts only matmul and conv FLOPs,
    so all of them run in those kernels) against the measured ceiling of its math, and the
    elementwise share: 'bound: the device (GPU idle 0%); GEMM/conv 55% of its time at 457
    TFLOP/s (61% of the float16 ceiling); elementwise 43%: ...'. '' without a device clock,
    a profile or a ceiling (a CPU, an older record)."""
    device_s, kinds = getattr(best, "device_s", None), getattr(best, "kinds", None) or {}
    conv, idle = kinds.get(timeline_stats.GEMM_CONV), getattr(best, "idle_share", None)
    if not device_s or not conv or not ceiling_tflops or idle is None:
        return ""
    rate = per_image / (device_s * conv / best.settings.batch) / 1e12  # type: ignore[attr-defined]
    who = "the host" if idle > keep.IDLE_LIMIT else "the device"
    said = (f"bound: {who} (GPU idle {100 * idle:.0f}%); GEMM/conv {100 * conv:.0f}% of its time "
            f"at {rate:,.0f} TFLOP/s ({100 * rate / ceiling_tflops:.0f}% of the "
            f"{best.settings.math} ceiling)")  # type: ignore[attr-defined]
    elementwise = kinds.get(attribution.ELEMENTWISE)
    if elementwise:
        # what removing it bought, net, from the optional section's record (review 2026-12-04m
        # item 7: 'the optional section times removing it' beside its fused rung's net 5%)
        said += f"; elementwise {100 * elementwise:.0f}%" + fused_pointer()
    return said


def fused_pointer() -> str:
    """What fusing the elementwise tails away bought, net, in the optional section's record
    (past_view.fused_net of the recorded run): ' (fusing it into GEMM epilogues saved 5% net: the
    optional section, recorded)'; '' without that record."""
    data = past_view.recorded_with_later()  # read once for both
    net, calls = (None, 0) if data is None else (past_view.fused_net(data), past_view.fused_calls(data))
    # the lowest over the calls that measured it, not one call's (review 2026-12-05t 08 item 4)
    over = f", the lower of {calls} calls" if calls > 1 else ""
    return ("" if net is None else f" (fusing it into GEMM epilogues saved {100 * net:.0f}% net{over}: "
            "the optional section, recorded)")


def standing_table(best: object, image: int, matmul_tflops: Mapping[str, float],
                   device_name: str, copy_gbps: float | None = None,
                   start: object | None = None) -> tables.Table:
    """The best gated rung beside its precision's compute roof, an estimated memory roof (from
    the conv outputs' bytes and the measured copy bandwidth, when given) and a published
    figure; on an H200 the gap to the published figure split into precision and efficiency.
    With the ladder's start row, the rung is read at the images/s the ladder table quotes it by
    (report.quoted_images_per_s: the CPU page's standing read 160 where its table read 184,
    review 2026-12-04k item 5)."""
    per_image = roofline.flops_per_image(image)
    if start is not None:
        best = dataclasses.replace(best, images_per_s=report.quoted_images_per_s(best, start))
    pairs = [list(pair) for pair in roofline.standing(best.images_per_s, best.settings.math,
                                                      matmul_tflops, per_image, with_source=False)]
    # the memory roof (an estimate) is folded: the compute roof and the published figure are
    # what the gap is read against (review 2026-12-04j: 08's GPU page over 1,500 words)
    memory = list(roofline.memory_roof(best.images_per_s, best.settings.math, copy_gbps,
                                       roofline.conv_output_elements(image))) if copy_gbps else None
    published = [p for p in pairs if str(p[0]).startswith("published")]
    mlperf = roofline.MLPERF_H200_RESNET50_OFFLINE
    for p in published:   # its conditions are folded with its source (issue 37)
        p[0] = mlperf["label"]
    if not device_name:  # a CPU at its own image size: an H200's 224-px INT8 figure is no yardstick
        pairs = [p for p in pairs if p not in published]
    shown = tables.Table(f"Where it stands: ResNet-50 at {image} px, {per_image / 1e9:.2f} GFLOP per "
                         "image (FlopCounterMode)", ["reading", "value"], pairs)
    if memory:
        shown.fold("memory roof", f"{memory[0]}: {memory[1]}")
    if not device_name:
        return shown.note(f"MLPerf's H200 figure (224 px, INT8) is not set beside this {image}-px "
                          "CPU rung.")
    shown.fold("MLPerf's conditions, source",
               f"{mlperf['conditions']}; source: {mlperf['source']}")
    bound = bound_line(best, per_image, matmul_tflops.get(best.settings.math))
    split = roofline.gap_split(best.images_per_s, best.settings.math, per_image, device_name,
                               None if bound else best.kinds.get(attribution.ELEMENTWISE))
    if split is not None and not bound:
        split = dataclasses.replace(split, pointer=fused_pointer())
    if bound:
        shown.note(f"- {bound}")
    if split is None:
        shown.note("(the gap's split uses the H200's published peaks: shown on an H200 run)")
    else:
        # the split and the elementwise share shown; each side's share of its peak folded
        *peaks, gap = split.lines(best.settings.math)[:3]
        shown.note(f"- {gap}")
        for line in split.lines(best.settings.math)[3:]:
            shown.note(f"- {line}")
        shown.fold("shares of peak", "\n".join(peaks))
    return shown.fold("what closes the gap", roofline.WHAT_CLOSES_THE_GAP)


def reference_ladder(chapter: object) -> tables.Table | None:
    """The reference GPU's recorded ladder right after the plan on a machine without a GPU (the
    chapter's lesson before this CPU's noise: review 2026-12-04m item 12); on a GPU one line,
    since this run's ladder is climbed below (and recorded by `record_ladder`)."""
    if chapter.on_gpu:
        print("This GPU's ladder is climbed below and recorded with the verdict.")
        return None
    return recorded_ladder(chapter.reference("ladder"))


def record_ladder(chapter: object, run: object) -> None:
    """This run's ladder recorded where it measures the reference (a GPU:
    chapter.here_or_recorded), nothing on a CPU, whose page showed the reference's above."""
    if chapter.on_gpu:
        chapter.here_or_recorded("ladder", run.record)


RECORDED_MACHINE = "the record's machine"


def recorded_ladder(recorded: Recorded | Mapping,
                    fresh: dict | None | str = RECORDED_MACHINE) -> tables.Table | None:
    """The reference GPU's recorded ladder (chapter key 'ladder'), labelled recorded; given
    what `chapter.here_or_recorded("ladder", ...)` returns. Beside each step's gain, its range
    over the reference's fresh runs (reproduce.fresh_runs), and under the table the recorded
    interaction's comparison (adds_up_parts on the record): the CPU page's view of both
    (review 2026-12-03h items 2 and 5). On a GPU (this run's ladder was just recorded, a
    plain mapping) it prints that the ladder above is this machine's record and shows nothing
    (review 2026-12-03h item 8: a quoted string, held back under the quiz, read as empty).
    fresh: reproduce.fresh_runs' steps, by default those of the record's machine."""
    if not isinstance(recorded, Recorded):
        print("Recorded: the ladder above.")
        return None
    rungs = recorded.get("rungs") or []
    if fresh == RECORDED_MACHINE:
        fresh = reproduce.fresh_runs(recorded.machine) if rungs else None
    has_base = any(r.get("here") for r in rungs)   # a record before the base's re-timing has none
    # the device-time gain beside the wall's (review 2026-12-04j item 8: the CUDA Graphs quiz
    # asks which step the GPU does not feel, and the CPU page's recorded ladder had no such column)
    devices = any(r.get("device_gain") is not None for r in rungs)
    shown = tables.Table("The reference GPU's ladder", ["rung", "images/s", "step gain: wall [IQR]"]
                         + (["step gain: device time"] if devices else [])
                         + ([f"wall gain in {fresh['runs']} fresh runs"] if fresh else [])
                         + (["its base in the step's rounds (images/s, GPU idle)"] if has_base else [])
                         + ["kept", "math", "error", "compile"], recorded=recorded.label)
    lacks = False
    by_name = {r.get("name"): r for r in rungs}
    for r in rungs:
        gate, spread = r.get("gate") or {}, r.get("gain_spread")
        gain = ("" if r.get("gain") is None else f"{r['gain']:.2f}x"
                + (f" [{spread[0]:.2f}, {spread[1]:.2f}]" if spread else ""))
        again = (fresh or {}).get("steps", {}).get(r.get("name"))
        # not held: the fresh runs disagree among themselves, or this page's gain lies outside
        # them (review 2026-12-04i item 1: Graphs 1.86x beside 1.18-1.29x was not marked)
        runs = "" if again is None else reproduce.spread(*again["wall"]) + (
            "" if reproduce.holds(again, r.get("gain")) else " (not held by the fresh runs)")
        base = (r.get("here") or {}).get(r.get("after") or "")
        if base:
            idle = "" if base.get("idle_share") is None else f", {100 * base['idle_share']:.0f}%"
            in_rounds = f"{base['images_per_s']:,.0f}{idle}"
        else:
            lacks = lacks or bool(r.get("after"))
            in_rounds = "not recorded" if r.get("after") else ""
        kept = _recorded_keep(r)
        flag = recorded_unstable(r, by_name.get(r.get("after") or ""))
        today = recorded_today(r, by_name.get(r.get("after") or ""))
        if today:
            kept = f"{kept} then; {today}" if today.startswith("today") else f"{kept} ({today})"
        elif flag:
            kept += f", unstable: {flag}"   # every step, kept or not (review 2026-12-03e item 4)
        device = "" if r.get("device_gain") is None else f"{r['device_gain']:.2f}x"
        shown.add(r["name"], f"{r['images_per_s']:,.0f}", gain, *([device] if devices else []),
                  *([runs] if fresh else []),
                  *([in_rounds] if has_base else []), kept, r["math"],
                  f"{gate['rel_error']:.1e}" if gate.get("rel_error") is not None else "-",
                  report.seconds(r["compile_s"]) if r.get("compile_s") else "-")  # "-": nothing compiled
    if lacks:
        shown.note("This record predates the base's re-timing: a step's gain and the images/s "
                   "of the row above it come from different runs.")
    if fresh:
        at = recorded_at(recorded)
        gains = {r.get("name"): r.get("gain") for r in rungs}
        shown.note(reproduce.not_held_line(fresh, gains, at,
                                           {r.get("name"): r.get("device_gain") for r in rungs})
                   or f"Every step's wall gain held over {reproduce.label(fresh, at)}.")
        host = next((r for r in rungs if r.get("name") == reproduce.HOST_ONLY_STEP), None)
        if host is not None:
            base = (host.get("here") or {}).get(host.get("after") or "") or {}
            line = reproduce.host_only_line(fresh, host.get("gain"), base.get("idle_share"),
                                            host.get("after") or "")
            if line:
                shown.note(line)
    added = _recorded_adds_up(recorded)
    if added:
        shown.note(f"Do the steps simply add up? On the reference GPU (recorded), "
                   f"{', '.join(s.name for s in ladder.REGIME_STEPS)}: {added}.")
    return shown


def recorded_at(recorded: Recorded) -> str:
    """The full recorded_at (ISO) of a recorded entry, from its results file ('' when absent):
    Recorded keeps the date only, and a fresh record of the same day may come before or after."""
    entry = ((results.load(recorded.machine) or {}).get("chapters", {})
             .get(recorded.chapter, {}).get(recorded.key) or {})
    return str(entry.get("recorded_at") or "")


def _recorded_adds_up(recorded: Recorded) -> str:
    """adds_up_parts' comparison on the recorded run ('' when the record has no interaction,
    or is too old to be read back as a run)."""
    if not recorded.get("regimes"):
        return ""
    try:
        run = experiment.Result.from_record(recorded.value)
    except (KeyError, TypeError, ValueError):
        return ""
    said, _ = adds_up_parts(run, run.regime_gains())
    return (said.removeprefix("Do they add up? ").replace("Alone", "alone", 1)
            .replace("Undecided", "undecided", 1))


def _recorded_keep(r: Mapping) -> str:
    """A recorded row's decision; one kept on device time says so, with that clock's gain and
    the idle that made the rung host-bound (its wall gain, beside it, may be below 1)."""
    if r.get("judged_by") == keep.NOT_DECIDABLE:
        return "not decidable: its base moved"
    if not r["kept"]:
        return "not kept"
    if r.get("judged_by") != "device time" or r.get("device_gain") is None:
        return "kept"
    idle = "" if r.get("idle_share") is None else f", GPU idle {100 * r['idle_share']:.0f}%"
    return f"kept on device time {r['device_gain']:.2f}x (host-bound{idle})"


def recorded_unstable(r: Mapping, base: Mapping | None) -> str:
    """A recorded step's instability flag under the rule this page prints (`keep.unstable`),
    from the record's own numbers: its IQR, its base's from the base's step and the base as
    re-timed in this step's rounds. A record too old to hold those gives its own flag."""
    here = (r.get("here") or {}).get(r.get("after") or "") or {}
    try:
        return keep.unstable(r["iqr_s"] / r["median_s"], base["images_per_s"],
                             base["iqr_s"] / base["median_s"], here.get("images_per_s"))
    except (KeyError, TypeError, ZeroDivisionError, ValueError):
        return r.get("unstable") or ""


def recorded_today(r: Mapping, base: Mapping | None) -> str:
    """A recorded step whose base moved, made before the ladder re-timed such steps (no
    'timings' in the row), re-decided from its own numbers by today's rule
    (keep.over_moved_base, one timing): 'today: not decidable (base re-timed -49%)' or
    'today: kept (...)'; '' when the base held, the row has its timings, or a number is missing."""
    here = (r.get("here") or {}).get(r.get("after") or "") or {}
    try:
        if "timings" in r or not (r.get("gate") or {}).get("passed", True) or r.get("gain") is None:
            return ""
        own = base["images_per_s"]
        moved = keep.base_moved(own, base["iqr_s"] / base["median_s"], here.get("images_per_s"))
        if not moved:
            return ""
        spread = tuple(r["gain_spread"])
        d = keep.over_moved_base(own, base.get("idle_share"), [
            {"gain": (r["gain"], *spread), "base_images_per_s": here["images_per_s"],
             "base_idle": here.get("idle_share"), "idle": r.get("idle_share")}],
            r.get("device_gain"), tuple(r["device_spread"]) if r.get("device_spread") else None)
    except (KeyError, TypeError, ZeroDivisionError, ValueError):
        return ""
    said = "not decidable" if d.judged_by == keep.NOT_DECIDABLE else "kept" if d.kept else "not kept"
    moved = f"base re-timed {100 * (here['images_per_s'] / own - 1):+.0f}%"
    same = d.judged_by != keep.NOT_DECIDABLE and d.kept == bool(r.get("kept"))
    return f"{moved}, holds today" if same else f"today: {said} ({moved})"


def lacking_steps(plan: object) -> list[str]:
    """The GPU ladder's steps a machine's plan climbs without (by name): on a CPU, the seed's
    JIT compile, CUDA graphs and reduced precision among them."""
    have = {s.name for s in plan.steps}
    return [s.name for s in ladder.GPU_STEPS if s.name not in have and "batch" not in s.change]


def judge_c24(chapter: object, run: object) -> object | None:
    """C24's verdict from this run on a GPU; None on a CPU, whose ladder lacks the seed's steps
    (a refutation by a ladder without JIT compilation would judge another claim)."""
    if not chapter.on_gpu:
        return None
    return chapter.judge("C24", run.evidence(), form=run.plan.form)


def verdict_table(chapter: object, verdict: object | None, plan: object) -> object:
    """The verdict beside the recorded reference's; on a CPU 'not judged here', naming the steps
    its ladder lacks, beside the reference GPU's recorded verdict."""
    if verdict is not None:
        shown = chapter.table([verdict])
        # the fresh runs of this machine's reproduce record under the verdict (review
        # 2026-12-05p 08 item 3: the page's verdict said nothing of three that disagreed)
        line = reproduce.verdict_line(reproduce.this_machine(),
                                      datetime.now(timezone.utc).isoformat(timespec="seconds"))
        if not line:
            return shown
        _display(shown)
        print(line)
        return None
    # (the markdown above says these are the seed's steps: not said again, the page's words)
    print(f"C24 is not judged here: this CPU's ladder lacks {', '.join(lacking_steps(plan))}. "
          "Recorded on the GPU:")
    # whether the recorded reference reproduced, why not, and the last record that did
    # (review 2026-12-05p 08 item 4), read from results/
    note = reproduce.reference_note(results.DEFAULT_REFERENCE, _verdict_recorded_at())
    if note:
        print(note)
    return chapter.table(pending=["C24"])


def _verdict_recorded_at(machine: str = results.DEFAULT_REFERENCE) -> str:
    """When the reference machine recorded C24's verdict ('' where it did not)."""
    entry = (((results.load(machine) or {}).get("chapters") or {}).get(reproduce.CHAPTER) or {}).get("verdict:C24")
    return str((entry or {}).get("recorded_at") or "")


def _display(shown: object) -> None:
    """Show a table now (a notebook's display; elsewhere its text)."""
    try:
        from IPython.display import display
    except ImportError:
        print(shown)
        return
    display(shown)


def takeaways(run: object, verdict: object,
              fresh: dict | None | str = report.THIS_MACHINE) -> list[str]:
    """The chapter's conclusions, each from the ladder it climbed and C24's verdict; fresh: this
    machine's reproduce runs (reproduce.fresh_runs, read as `report.table` reads them), so the
    largest step is named as the ladder's only where they agree (`largest_step`)."""
    rungs, strict, defaults, top = run.rungs, run.strict, run.defaults, run.top
    if fresh == report.THIS_MACHINE:
        fresh = (reproduce.fresh_runs(reproduce.this_machine())
                 if any(r.device_gain is not None for r in rungs) else None)
    at_base, total = run.top_at_baseline_batch, top.speedup_over(strict)
    gains = ladder.step_gains(rungs)
    best_step = max(gains, key=gains.get) if gains else "none"
    regime_gains = run.regime_gains()
    refused = [r.name for r in rungs if r.gate is not None and not r.gate.passed]
    dropped = [r for r in rungs if not r.kept and not r.error and r.gate is not None and r.gate.passed]
    slower = [r for r in dropped if r.gain is not None and keep.below(r.gain_spread) and r.gain < 1 - keep.MIN_GAIN]
    named = top.name if top.name == f"batch {top.settings.batch}" else f"{top.name}, batch {top.settings.batch}"
    one_clock = not any(r.device_gain is not None for r in rungs)
    # the outcome and what it depends on in a few words: the verdict's row above has its reason,
    # and the headline its numbers (review 2026-12-04k item 4; the GPU page's words)
    # (the headline names C24's judged form; review 2026-12-04l item 2: each thing once)
    c24 = (f"C24: {_short_label(verdict.label)}." if verdict is not None else
           f"C24 is not judged here: this ladder lacks {', '.join(lacking_steps(run.plan))}.")
    # every number of the headline is a table row's own (review 2026-12-04k item 5): the images/s
    # its ratio over the start divides, beside that ratio
    steady = report.steady_images_per_s(rungs, strict)
    rate = report.quoted_images_per_s(top, strict, steady)
    said = [
        headline(top, at_base, strict, defaults, rate, named, total),
        # the gate's verdict is in the ladder's own line; a takeaway names only a refusal
        (f"The numerics gate refused {', '.join(refused)}." if refused else None),
        graphs_rule(rungs, fresh),
        # the device-time gains that held while the wall followed the host: folded under the
        # ladder with the fresh runs' other ranges (report.LadderTable; review 2026-12-05u item 5:
        # the GPU page at its word limit before the run)
        ("No device clock here: every step was judged on the wall clock." if one_clock else None),
        (largest_step(best_step, gains[best_step], fresh, rungs=rungs, defaults=defaults)
         # a step not kept is the ladder's grey row; a takeaway names only one that lost
         + (f"; not kept: {dropped_said(slower)}." if slower else ".")) if gains else "No step was measured.",
        (regimes_said(regime_gains) or interaction_said(run, regime_gains) if regime_gains else
         # on a CPU the interaction table's own note says why it is empty: not said twice
         None if one_clock else "The interaction of steps was not measured in this run (its table says why)."),
        # on a GPU the headline already gives C24's judged numbers, and the verdict's row its
        # outcome: not said a third time (review 2026-12-04m item 13c)
        None if verdict is not None else c24,
        # no 'Flagged unstable: ...' line: the ladder's 'kept?' column says it of each step
        # (review 2026-12-04l item 2: each thing once)
    ]
    return [line for line in said if line is not None]


def taken_by_defaults(rungs: list, defaults: object | None) -> dict[str, float]:
    """The steps PyTorch's defaults already take, with their rung's speed-up over the defaults
    baseline: a step built on the start (strict float32) whose rung runs within keep.MIN_GAIN of
    PyTorch's default float32 ({'TF32': 1.01}); {} where the two baselines are one (a CPU).
    Why: the takeaway named TF32 the largest step (2.14x), its gain over strict float32, while
    the table showed it 1.01x over PyTorch's defaults, which a learner on stock PyTorch already
    has (issue 40; review 2026-12-04m item 3)."""
    start = rungs[0] if rungs else None
    if defaults is None or start is None or defaults is start or getattr(defaults, "name", None) == start.name:
        return {}
    found = {}
    for r in rungs[1:]:
        if r.error or r.after != start.name or not r.images_per_s or not defaults.images_per_s:
            continue
        over = r.speedup_over(defaults)
        if abs(over - 1) <= keep.MIN_GAIN:
            found[r.name] = over
    return found


def largest_step(name: str, gain: float, fresh: dict | None, rungs: list | None = None,
                 defaults: object | None = None) -> str:
    """The largest step, said as the ladder's only where every fresh run's largest was the same
    step (reproduce.fresh_runs' 'largest'); otherwise as this run's, with the step the runs
    found largest and its range: 'The largest step in this run was CUDA Graphs (2.23x); in 2
    fresh runs TF32 (2 of 2, 1.98-2.13x)'. Without fresh runs it is this run's. Why: the H200
    page named CUDA Graphs (2.23x) where both fresh runs had TF32 largest, CUDA Graphs at
    1.53-1.90x: its gain is 1/(1 - its base's idle), the host's pace that minute (review
    2026-12-04l item 2).

    Given the rungs and the defaults baseline, steps PyTorch's defaults already take
    (`taken_by_defaults`) are left out and said so, and with fresh runs the largest step is the
    largest whose wall gain held over them (`reproduce.holds`), a larger one that did not named
    beside it: 'The largest step past PyTorch's defaults that held over 3 fresh runs:
    torch.compile (1.67x; 1.62-1.70x); CUDA Graphs 2.11x here, 1.24-2.35x in the runs (not held).
    TF32's 2.14x is over strict float32; over PyTorch's defaults, which already take it, 1.01x'
    (review
    2026-12-04m item 3)."""
    taken = taken_by_defaults(rungs or [], defaults) if rungs else {}
    gains = ({r.name: r.gain for r in rungs[1:] if not r.error and r.gain is not None}
             if rungs else {name: gain})
    ranked = {n: g for n, g in gains.items() if n not in taken}
    if not taken or not ranked:
        return _largest_as_before(name, gain, fresh)
    by_name = {r.name: r for r in rungs}
    said_taken = "; ".join(f"{n}'s {gains[n]:.2f}x is over strict float32; over PyTorch's "
                           f"defaults, which already take it, {over:.2f}x" for n, over in taken.items())
    steps = (fresh or {}).get("steps") or {}
    if not steps:
        top = max(ranked, key=ranked.get)
        return (f"The largest step past PyTorch's defaults in this run was {top} "
                f"({ranked[top]:.2f}x). {said_taken[0].upper()}{said_taken[1:]}")
    runs = fresh["runs"]
    # held: its wall gain held over the fresh runs, and it was kept here and in every one of them
    # (review 2026-12-05p 08 item 3: cudnn.benchmark, kept in 0 of 3, its 1.02x range over 1,
    # read 'the largest step ... that held')
    always = [n for n in ranked if n in steps and getattr(by_name.get(n), "kept", False)
              and steps[n].get("kept") == steps[n].get("runs") == runs]
    held = {n: ranked[n] for n in always if reproduce.holds(steps[n], ranked[n])}
    top = max(ranked, key=ranked.get)
    if not held:
        device = {n: by_name[n].device_gain for n in always if by_name[n].device_gain is not None
                  and steps[n].get("device") and steps[n]["device"][0] > 1 + keep.MIN_GAIN
                  and steps[n]["device"][1] / steps[n]["device"][0] - 1 <= reproduce.HOLDS_WITHIN}
        best = max(device, key=device.get) if device else None
        return (f"No step past PyTorch's defaults held its wall gain here and in all {runs} fresh runs"
                + (f"; {best}'s device time did ({device[best]:.2f}x; "
                   f"{reproduce.spread(*steps[best]['device'])})" if best else "")
                # no largest step named, so none to tell apart from the defaults' own (the
                # GPU page's words: review 2026-12-05p 08)
                + ".")
    best = max(held, key=held.get)
    # each number labelled (review 2026-12-05u item 7: '(1.55x; 1.55x)' named neither)
    said = (f"The largest step past PyTorch's defaults that held over {runs} fresh runs: {best} "
            f"({held[best]:.2f}x here, {reproduce.spread(*steps[best]['wall'])} in the runs)")
    if top != best and by_name.get(top) is not None:
        wall = steps.get(top, {}).get("wall")
        said += (f"; {top} {ranked[top]:.2f}x here" + (f", {reproduce.spread(*wall)} in the runs" if wall else "")
                 + " (not held" + _without_earlier(top, fresh) + ")")
    return said + f". {said_taken[0].upper()}{said_taken[1:]}"


def _without_earlier(step: str, fresh: dict | None) -> str:
    """'; 1.82-1.86x without run 1, climbed under a replaced keep rule': a step's wall range over
    the fresh runs whose climb no since-replaced keep reading decided (reproduce.earlier_rule),
    where some run's was and the rest measured the step; '' otherwise. Why: torch.compile's
    1.36x came from run 1, whose CUDA Graphs step the reading before 981ef6e left not decidable,
    so its torch.compile ran ungraphed (review 2026-12-05u item 7)."""
    earlier = sorted((fresh or {}).get("earlier") or {})
    gains = (fresh or {}).get("gains") or []
    rest = [g[step] for n, g in enumerate(gains, 1) if n not in earlier and step in g]
    if not earlier or not rest:
        return ""
    runs = ", ".join(str(n) for n in earlier)
    return (f"; {reproduce.spread(min(rest), max(rest))} without run{'s' if len(earlier) > 1 else ''} "
            f"{runs}, climbed under a replaced keep rule")


def _largest_as_before(name: str, gain: float, fresh: dict | None) -> str:
    """largest_step where no step is left out: this run's, named the ladder's where every fresh
    run's largest agrees."""
    runs = (fresh or {}).get("largest") or []
    if runs and all(n == name for n in runs):
        return f"The largest single step was {name} ({gain:.2f}x; largest in all {len(runs)} fresh runs too)"
    said = f"The largest step in this run was {name} ({gain:.2f}x)"
    if not runs:
        return said
    other = max(set(runs), key=runs.count)
    wall = (fresh or {}).get("steps", {}).get(other, {}).get("wall")
    span = f", {reproduce.spread(*wall)}" if wall else ""
    return said + f"; in {len(runs)} fresh runs {other} ({runs.count(other)} of {len(runs)}{span})"


def _short_label(label: str) -> str:
    """A verdict's label cut at its reason: 'depends (on the baseline: past 4.8x only ...)' as
    'depends (on the baseline)'."""
    head = label.split(":")[0]
    return head + ")" if head.count("(") > head.count(")") else head


def headline(top: object, at_base: object, strict: object, defaults: object, rate: float,
             named: str, total: float) -> str:
    """The first takeaway. With two baselines (a GPU) it leads with the form C24 judges, the best
    rung at the baselines' batch over both, and gives the top rung at a larger batch after it as
    not a seed step: the H200 page led with '9.8x strict, 4.6x defaults' at batch 256 and never
    said the judged 4.1x (review 2026-12-04k item 4). With one (a CPU, where C24 is not judged)
    the kept top rung, at the images/s its ratio divides (item 5)."""
    if defaults is strict:
        return (f"The kept top rung ({named}): {rate:,.0f} images/s, {total:.2f}x eager float32; "
                f"{at_base.speedup_over(strict):.2f}x at the baselines' batch ({at_base.settings.batch}). "
                "Which baseline and batch a speed-up is quoted against changes the headline.")
    judged = (f"C24's judged form, batch {at_base.settings.batch} ({at_base.name}): "
              f"{at_base.speedup_over(strict):.1f}x strict float32 eager, "
              f"{at_base.speedup_over(defaults):.1f}x PyTorch's default float32")
    if at_base.idle_share is not None and at_base.idle_share > keep.IDLE_LIMIT:
        # a host-bound judged rung measures the host (review 2026-12-05p 08 item 3)
        judged += f" on a host-bound rung (idle {100 * at_base.idle_share:.0f}%)"
    if top is at_base:
        return judged + "."
    return (judged + f"; the top rung ({named}, not a seed step): {rate:,.0f} images/s, "
            f"{total:.1f}x and {top.speedup_over(defaults):.1f}x.")


def graphs_rule(rungs: list, fresh: dict | None = None) -> str | None:
    """The lesson of the step that removes host work only, from this ladder: its wall gain is
    about 1 / (1 - its base's GPU idle), since it can win back at most the time the GPU waited
    ('CUDA Graphs removes host work only (device time 1.00x): its gain is about 1/(1 - its
    base's GPU idle): 18% idle, 1.22x predicted, 1.19x measured.'). None without the step, a
    device clock or its base's idle. Why: the rule the page shows best replaces the gate's line
    among the takeaways (review 2026-12-04j item 9)."""
    host = next((r for r in rungs if r.name == reproduce.HOST_ONLY_STEP and not r.error
                 and r.gain is not None and r.device_gain is not None), None)
    idle = None if host is None else (host.here.get(host.after) or {}).get("idle_share")
    if idle is None or idle >= 1:
        return None
    said = (f"{host.name} removes host work only (device time {host.device_gain:.2f}x): its gain is "
            f"about 1/(1 - its base's GPU idle): {100 * idle:.0f}% idle, {1 / (1 - idle):.2f}x "
            f"predicted, {host.gain:.2f}x measured")

    # the rule, not this run's gain, is the lesson: the fresh runs' idle and gains beside it
    # (review 2026-12-04m item 1: 1.24x, 1.33x and 2.35x fresh against 2.11x here)
    step = ((fresh or {}).get("steps") or {}).get(host.name) or {}
    base = step.get("base_idle")
    paced = graphs_paced(host, next((r for r in rungs if r.name == host.after), None),
                         next((r for r in rungs if r.name == f"{host.name}{ladder.RETRIED}"), None))
    # where it was not kept, why (its own timings) takes the fresh runs' place: the ladder's fold
    # has theirs (report.table's host-only line)
    if base and base[1] < 1 and step.get("wall") and not paced:
        said += (f"; in {step['runs']} fresh runs {100 * base[0]:.0f}-{100 * base[1]:.0f}% idle, "
                 f"{reproduce.spread(1 / (1 - base[0]), 1 / (1 - base[1]))} predicted, "
                 f"{reproduce.spread(*step['wall'])} measured")
    return said + "." + (f" {paced}" if paced else "")


def graphs_paced(host: object, base: object | None, retried: object | None = None) -> str:
    """Where the host-only step was not kept, why, from its own timings: its gain over its base
    as timed in the base's own step and as re-timed in its rounds, each with the host's pace
    there, beside the graphed rung's images/s in every timing ('Not kept here (not decidable):
    over fp16 weights timed at 12,343 images/s (host 11 µs a launch) 1.07x, at 8,290-9,461 (17 µs
    a launch) 1.40-1.60x; the graphed rung 13,217-13,220 either way: its worth is the host's
    pace'); for a step refused otherwise its reason's opening;
    '' where it was kept. Why: the page printed the rule's '1.60x measured' and never said the
    step was not kept (review 2026-12-05p 08 item 5)."""
    if host.kept:
        return ""
    # its retry after the last rung at batch 64 (ladder.Ladder.retry), where it ran
    retry_said = "" if retried is None or retried.error or retried.gain is None else (
        f" Retried over {retried.after}: {retried.gain:.2f}x, "
        + ("kept." if retried.kept else f"not kept ({retried.why.split(';')[0]})."))
    if host.judged_by != keep.NOT_DECIDABLE or base is None or not base.images_per_s or not host.timings:
        return f"Not kept here: {host.why.split(';')[0]}.{retry_said}"
    mine = [t["images_per_s"] for t in host.timings]
    bases = [t["base_images_per_s"] for t in host.timings]
    gains = [t["gain"][0] for t in host.timings]
    own = float(np.median(mine)) / base.images_per_s

    def pace(probes: list, said: str = " a launch") -> str:
        return f" ({float(np.median(probes)):.0f} µs{said})" if probes else ""
    again = [p for t in host.timings for p in t.get("host_pace_us") or []]
    return (f"Not kept here (not decidable): over {base.name} timed at {base.images_per_s:,.0f} "
            f"images/s{pace(base.host_pace_us)} {own:.2f}x, at {min(bases):,.0f}-{max(bases):,.0f}"
            f"{pace(again, '')} {reproduce.spread(min(gains), max(gains))}; the graphed rung "
            f"{min(mine):,.0f}-{max(mine):,.0f} either way: its worth is the host's pace.{retry_said}")


def regimes_said(regime_gains: Mapping[str, Mapping[str, float]]) -> str | None:
    """The interaction's lesson in one line: the step whose gain differs most between the
    regimes, with its gains (the table above has every cell). None when no step was measured in
    both regimes: a lesson about two regimes with one measured says nothing (review 2026-12-03g
    item 7: the H200 page's compiled column was skipped for time); the table says why."""
    both = [n for n in next(iter(regime_gains.values()), {})
            if sum(n in g for g in regime_gains.values()) > 1]
    if not both:
        return None
    gains = {n: [g[n] for g in regime_gains.values() if n in g] for n in both}
    name = max(both, key=lambda n: max(gains[n]) / min(gains[n]))
    return (f"A step's gain depends on what came before it: {name} " + ", ".join(
        f"{g[name]:.2f}x {regime}" for regime, g in regime_gains.items() if name in g) + ".")


def interaction_said(run: object, regime_gains: Mapping[str, Mapping[str, float]]) -> str | None:
    """With one regime measured (the chapter's eager column), the takeaway the interaction's
    numbers give (`derived_worth`, device time where every cell has it, else wall): 'A step's
    worth depends on what came before it: channels_last 1.22x before fp16 weights, 1.63x once
    they are on (derived, device time).' None where the steps multiply or a step is missing.
    Why: the page's 'they do not' gave no lesson (review 2026-12-04k item 3)."""
    names = [s.name for s in ladder.REGIME_STEPS]
    cells = (getattr(run, "regimes", {}) or {}).get("eager", {})
    climbed = {r.name: r for r in getattr(run, "rungs", []) if not r.error and r.gain is not None}
    if not all(n in cells and n in climbed and not cells[n].error for n in names):
        return None
    device = all(r.device_gain is not None and r.device_spread for r in
                 [*(cells[n] for n in names), *(climbed[n] for n in names)])
    if device:
        climb = {n: climbed[n].device_gain for n in names}
        alone = {n: cells[n].device_gain for n in names}
        spreads = {n: (tuple(climbed[n].device_spread), tuple(cells[n].device_spread)) for n in names}
    else:
        climb = {n: climbed[n].gain for n in names}
        alone = dict(regime_gains.get("eager") or {})
        base = (getattr(run, "regime_bases", {}) or {}).get("eager")
        if base is None or not all(n in alone for n in names):
            return None
        spreads = {n: (tuple(climbed[n].gain_spread or (climb[n],) * 2),
                       tuple(cells[n].speedup_spread(base))) for n in names}
    differ = [n for n in names if _apart(*spreads[n])]
    worth = derived_worth(names, climb, alone, {n: climbed[n].after for n in names}, differ)
    if worth is None:
        return None
    m, n, before, once = worth[:4]
    # the fold under the interaction table derives the same worth on the wall: both clocks said
    # here, each named (review 2026-12-05u item 7: 1.34x device and 1.32x wall read as a clash)
    wall = _wall_worth(run, names, climbed, regime_gains, m, n) if device else None
    return (f"A step's worth depends on what came before it: {m} {before:.2f}x before {n}, "
            f"{once:.2f}x after (derived{', device time' if device else ''}"
            + (f"; wall time {wall:.2f}x" if wall is not None else "") + ").")


def _wall_worth(run: object, names: list[str], climbed: Mapping[str, object],
                regime_gains: Mapping[str, Mapping[str, float]], m: str, n: str) -> float | None:
    """m's worth after n on the wall clock (`derived_worth` from the climb's wall gains and the
    eager cells' wall gains, as the interaction's fold derives it); None where a gain is missing."""
    alone = dict(regime_gains.get("eager") or {})
    climb = {k: climbed[k].gain for k in names if getattr(climbed.get(k), "gain", None) is not None}
    worth = derived_worth(names, climb, alone, {k: climbed[k].after for k in names}, [n])
    return None if worth is None or worth[0] != m else worth[3]


def dropped_said(dropped: list) -> str:
    """The steps not kept, each under keep's own outcome: slower (a measured loss, with its
    gain: review 2026-12-03e item 3 found 0.87x and 0.81x called 'gained nothing measurable'),
    not decidable (its base moved), or no measured gain."""
    slower = [r for r in dropped if r.why.startswith("slower") or ": no gain, a loss" in r.why]
    undecided = [r for r in dropped if r.judged_by == keep.NOT_DECIDABLE]
    rest = [r for r in dropped if r not in slower and r not in undecided]
    parts = ([", ".join(f"{r.name} slower, {r.gain:.2f}x" for r in slower)] if slower else []) + (
        [", ".join(r.name for r in undecided) + " not decidable (its base moved)"] if undecided else []) + (
        [", ".join(r.name for r in rest) + " no measured gain"] if rest else [])
    return "; ".join(parts)


def device_name(on_gpu: bool) -> str:
    """The GPU's name for the gap's split ('' without one)."""
    return torch.cuda.get_device_name() if on_gpu else ""


# The quiz "which step does the GPU not feel?": the GPU ladder's steps that can gain on the wall
# clock once the precision is set (review 2026-12-03h item 10: the clearest lesson of the page,
# CUDA Graphs' device time 1.00x beside 282 -> 1 launch calls, had no quiz)
UNFELT_CHOICES = ("fp16 weights", "CUDA Graphs", "torch.compile", "Conv-BN folding")


def unfelt_question(on_gpu: bool) -> str:
    """The quiz's question: about this GPU's ladder, or the reference H200's on a machine
    without one (its ladder has no device clock to ask about)."""
    return ("Which step makes the wall clock faster but not the GPU's work per image?"
            + ("" if on_gpu else " (on the reference H200)"))


def unfelt_ladder(chapter: object, rungs: list) -> list | Recorded:
    """The ladder the quiz is keyed on: this run's rungs on a GPU, else the reference's
    recorded ladder (chapter.reference, labelled recorded; never re-recorded here)."""
    return rungs if chapter.on_gpu else chapter.reference("ladder")


def unfelt_key(ladder_rungs: object) -> Key | str:
    """The quiz's key, computed from a ladder (this GPU's rungs, or the reference's Recorded
    ladder where this machine has no GPU): among UNFELT_CHOICES, the step that gained on the wall
    clock while its device-time gain per image stayed within explain.MATERIAL of 1.00x; a Key
    when several did (each is right), the closest to 1.00x as its answer. Where none did, the
    step whose device-time gain is nearest 1.00x, with why. A ladder without a device clock
    (a CPU's) raises: the quiz is about a GPU's two clocks."""
    rows = ([r.as_dict() for r in ladder_rungs] if isinstance(ladder_rungs, list)
            else list(ladder_rungs.get("rungs") or []))
    by_name = {r.get("name"): r for r in rows if not r.get("error")}
    clocked = {n: r for n, r in by_name.items() if n in UNFELT_CHOICES and r.get("device_gain") is not None
               and r.get("gain") is not None}
    if not clocked:
        raise ValueError("this ladder has no device clock to read the steps by: no GPU ran it")
    nearest = sorted(clocked, key=lambda n: abs(clocked[n]["device_gain"] - 1))
    unfelt = [n for n in nearest if abs(clocked[n]["device_gain"] - 1) <= explain.MATERIAL
              and clocked[n]["gain"] > 1 + explain.MATERIAL]
    said = "; ".join(f"{n} {clocked[n]['gain']:.2f}x wall, {clocked[n]['device_gain']:.2f}x device time"
                     for n in (unfelt or nearest[:1]))
    if len(unfelt) > 1:
        return Key(unfelt[0], tuple(unfelt), f"Each gained on the wall with the GPU's work unchanged: {said}.")
    if not unfelt:
        return Key(nearest[0], (nearest[0],), f"No step gained on the wall with its device time "
                   f"within {100 * explain.MATERIAL:.0f}% of 1.00x here; nearest: {said}.")
    return unfelt[0]
