"""The ladder shown: one row per rung, what it measured against both baselines, whether it
was right, what bound it, and whether it was kept: the step's gain on both clocks (wall
and device time, each with its range) and the GPU's idle share from unprofiled timing,
the numbers the keep rule read.

A notebook shows the rows in CORE's columns, with the decision in a few words, the step's base
as timed in its rounds (what the step gain divides out of) and one line on the numerics gate's
closest call; every column, the keep rule's whole reason among them, is folded under it (issue 37: on the H200
the full table alone was about 600 of a chapter's 1,500 output words).

Drawing only: every number comes from the measured `ladder.Rung`s.
"""

from __future__ import annotations

import html
import math
from datetime import datetime, timezone

from labkit.chapters.ch08_inference_ladder import host_paced, keep, ladder, reproduce

COLUMNS = ("rung", "kept?", "images/s", "IQR", "over strict float32", "over PyTorch defaults",
           "step gain: wall", "step gain: device time", "its base in the step's rounds",
           "GPU idle (unprofiled)", "error vs float32", "share of the ceiling of its math", "compile",
           "batches to pay back")
# the columns shown unfolded: what a learner reads the climb from (the rest are in the fold)
# (over PyTorch defaults is folded: the verdict and the takeaways give it for the rungs judged)
CORE = ("rung", "kept?", "images/s", "over strict float32", "step gain: wall",
        "step gain: device time", "its base in the step's rounds", "GPU idle (unprofiled)")
# the core table's shorter header and cell for a core column (review 2026-12-03f item 1: the
# step gain divides out of its base as timed in the step's rounds, not of the row above's
# images/s, so the core shows that base: images/s only, and whether it was re-timed)
SHORT_HEADER = {"its base in the step's rounds": "step's base, images/s"}


def reading_rules() -> str:
    """How the table's steps were timed and decided when a base moved, and what its folded
    columns measure: the rules the page's "Reading it" paragraph held (about 230 words, review
    2026-12-03h item 10), folded under the table a learner reads them against."""
    times = {1: "once", 2: "twice"}.get(keep.RETIMES, f"{keep.RETIMES} times")
    return (
        "A row's images/s come from its own step's rounds, and the next step re-times it as its "
        "base: the step's base column shows those images/s, which the step gain is a ratio over. "
        "A step is flagged unstable by the rule folded under the gate. A step whose base moved "
        f"is re-timed (the two rungs alone, {times} at most, while the budget lasts). If the "
        "base moved every time, the step is decided only when the decision holds over either "
        "timing of its base, else it is not decidable and not kept; either way its gain is not "
        "explained: it would measure the host's pace, which a probe between rounds measures "
        "(microseconds per eager launch, below). The error column is the gate's relative error "
        "against strict float32 with the tolerance of the rung's math; the share of the ceiling "
        "is against this machine's matmul ceiling in that math.")


def _payback(rung: ladder.Rung, before: ladder.Rung | None) -> str:
    """How many batches the rung's compile time takes to pay back against the rung before it."""
    if not rung.compile_s or before is None or not rung.images_per_s or not before.images_per_s:
        return ""
    n = ladder.payback_batches(rung.compile_s, 1 / before.images_per_s, 1 / rung.images_per_s,
                               rung.settings.batch)
    return "never" if math.isinf(n) else f"{n:,.0f}"


def _gain(gain: float | None, spread: tuple[float, float] | None) -> str:
    if gain is None:
        return ""
    return f"{gain:.2f}x" + (f" ({spread[0]:.2f}-{spread[1]:.2f})" if spread else "")


def _kept(rung: ladder.Rung) -> str:
    if rung.error:
        return rung.why or "failed"
    return ("kept: " if rung.kept else "not kept: ") + (rung.why or "the start")


# core columns shown without their range (the folded table has it): the wall gain keeps its
# range, the one the keep rule reads first
_RANGED = (COLUMNS.index("over strict float32"), COLUMNS.index("step gain: device time"))


def _core(cell: str, bare: bool) -> str:
    """A cell as the core table shows it: '2.13x (2.13 to 2.13)' as '2.13x' where bare."""
    return cell.split(" (")[0] if bare else cell


def decided(rung: ladder.Rung) -> str:
    """The keep rule's outcome in a few words (its reason is in the folded table): kept, on
    which clock when not the wall, not kept, not decidable, refused or failed; flagged
    unstable when it was."""
    if rung.error:
        return (rung.why or "failed").split(":")[0]
    if not rung.after:
        return "the start"
    if rung.judged_by == keep.NOT_DECIDABLE:
        # why, in the cell itself, so it does not read as a gain the rule missed
        # (review 2026-12-03f item 2); the gains over each timing are in the folded reason
        n = len(rung.timings or []) or 1
        return f"not decidable: base moved {n}/{n}"
    if rung.judged_by == "numerics":
        return "refused by the gate"
    said = ("kept" + (" on device time" if rung.judged_by == "device time" else "")
            if rung.kept else "not kept")
    return said + (", unstable" if rung.unstable else "")


def in_rounds(rung: ladder.Rung, strict: ladder.Rung) -> str:
    """The step's base (and strict float32) as timed in the step's own rounds: the figures its
    gain and speed-ups are ratios of, which an earlier row's images/s need not match."""
    base = rung.here.get(rung.after)
    if not base:
        return ""
    idle = "" if base.get("idle_share") is None else f", idle {100 * base['idle_share']:.0f}%"
    # the gain is the median of per-round ratios; the medians' ratio beside it shows how far
    # drift between rounds moved the two apart
    own = base.get("step_images_per_s") or rung.images_per_s  # the deciding timing's, if re-timed
    medians = (f" (medians' ratio {own / base['images_per_s']:.2f}x)"
               if own and base.get("images_per_s") else "")
    text = f"{base['images_per_s']:,.0f} images/s{idle}{medians}"
    if len(rung.timings or []) > 1:
        text += " [re-timed; earlier: " + ", ".join(
            f"{t['base_images_per_s']:,.0f}" for t in rung.timings[:-1]) + "]"
    other = rung.here.get(strict.name)
    if other and strict.name != rung.after:
        text += f"; {strict.name} {other['images_per_s']:,.0f}"
    return text


def base_short(rung: ladder.Rung) -> str:
    """The core cell for the step's base: its images/s in the deciding timing (what the step
    gain is a ratio over); when re-timed, the rung's own images/s in that timing beside it,
    since the row's images/s are from its first timing and would not divide; '' with none."""
    base = rung.here.get(rung.after)
    if not base or rung.error:
        return ""
    text = f"{base['images_per_s']:,.0f}"
    if len(rung.timings or []) > 1:
        then = base.get("step_images_per_s") or rung.images_per_s
        text += f" (re-timed; rung {then:,.0f})"   # (fewer words: review 2026-12-05p 08, the GPU page)
    return text


def gate_line(rungs: list[ladder.Rung]) -> str:
    """One line on the numerics gate from the rungs' own gates: how many stayed inside, and
    the largest error of any gated rung against its tolerance (the logits' or, where larger
    against its own, the centred logits'); '' when no rung was gated (review item 9)."""
    worst = None  # (share of the tolerance, rung, error, tolerance, which)
    gated = [r for r in rungs if r.gate is not None and not r.error]
    for r in gated:
        g = r.gate
        pairs = [(g.rel_error, g.tolerance, "")]
        if g.centred_error is not None and g.centred_tolerance:
            pairs.append((g.centred_error, g.centred_tolerance, " (centred)"))
        for err, tol, which in pairs:
            if tol > 0 and (worst is None or err / tol > worst[0]):
                worst = (err / tol, r, err, tol, which)
    if worst is None:
        return ""
    inside = sum(r.gate.passed for r in gated)
    share, r, err, tol, which = worst
    return (f"Numerics gate: {inside} of {len(gated)} rungs inside; largest error against "
            f"its tolerance: {r.name}{which} {err:.1e} of {tol:.2g} ({100 * share:.0f}%).")


def row(rung: ladder.Rung, strict: ladder.Rung, defaults: ladder.Rung,
        before: ladder.Rung | None, steady: float | None = None) -> list[str]:
    """One rung's cells, in COLUMNS order."""
    if rung.error:
        return [rung.name, _kept(rung)] + [""] * (len(COLUMNS) - 2)
    low, high = rung.speedup_spread(strict)
    pct = f"{rung.pct_of_ceiling:.0f}% of {rung.settings.math}" if rung.pct_of_ceiling else "n/a"
    idle = "n/a" if rung.idle_share is None else f"{100 * rung.idle_share:.0f}%"
    err = "" if rung.gate is None else f"{rung.gate.rel_error:.1e} (≤ {rung.gate.tolerance:.2g})"
    over_strict = ("1.00x" if rung.name == strict.name
                   else f"{rung.speedup_over(strict):.2f}x ({low:.2f} to {high:.2f})")
    over_defaults = "1.00x" if rung.name == defaults.name else f"{rung.speedup_over(defaults):.2f}x"
    return [rung.name, _kept(rung), images_cell(rung, strict, steady),
            f"{100 * rung.iqr_s / rung.median_s:.1f}%", over_strict, over_defaults,
            _gain(rung.gain, rung.gain_spread), _gain(rung.device_gain, rung.device_spread),
            in_rounds(rung, strict), idle, err, pct,
            seconds(rung.compile_s), _payback(rung, before)]


def seconds(value: float | None) -> str:
    """A compile time to two significant figures ('0.041 s', '4.2 s', '14 s'), '0.0 s' for none:
    CUDA Graphs' capture read '0.0 s' beside a payback of 52 batches (review 2026-12-04j
    item 10), one figure rounded away and the other computed from it."""
    if not value:
        return "0.0 s"
    return f"{value:.0f} s" if value >= 100 else f"{float(f'{value:.2g}'):g} s"


def quoted_images_per_s(rung: ladder.Rung, start: ladder.Rung, steady: float | None = None) -> float:
    """The one images/s a rung is quoted by everywhere on the page (table, takeaways, standing):
    the figure its ratio over the start row divides. A step built on the start row and re-timed
    reads that ratio from its deciding re-time (the two rungs alone), so its images/s are that
    re-time's; the start row itself is quoted at its median over the run (`steady`, when given),
    which every 'over' ratio divides. Why: the CPU page's table read 'batch 16: 184 (first
    timed: 160), 2.00x' while its takeaway and standing quoted 160 beside 2.0x (160/98 is 1.63x),
    and the start row read 98 at 1.00x while its speed-ups divided by 90 (review 2026-12-04k
    item 5)."""
    if rung.name == start.name:
        return steady or rung.images_per_s
    then = (rung.here.get(rung.after) or {}).get("step_images_per_s")
    if rung.after != start.name or len(rung.timings or []) < 2 or not then:
        return rung.images_per_s
    return then


def images_cell(rung: ladder.Rung, start: ladder.Rung, steady: float | None = None) -> str:
    """A row's images/s, from the rounds its ratio over the start row comes from
    (`quoted_images_per_s`), with its first timing beside them where they differ: the CPU page
    printed folding's 88 images/s (first, slow rounds) beside 1.07x over a start of 98 (from the
    re-time), a slower rung read as faster (review 2026-12-04i item 5)."""
    first = f"{rung.images_per_s:,.0f}"
    quoted = f"{quoted_images_per_s(rung, start, steady):,.0f}"
    return first if quoted == first else f"{quoted} (first timed: {first})"


def repeats_line(rungs: list[ladder.Rung]) -> str:
    """How far a rung timed again moved from its earlier timing over the climb (each step's
    base re-timed in the step's rounds against the base's own images/s, and a re-timed step's
    deciding timing against its first), as one line; '' with fewer than two repeats. Why: on a
    CPU the page read 'not decidable: base moved' and 'Not read: its base moved' row after row
    before saying how far repeats moved (review 2026-12-04j item 8); a page on such a machine
    leads with it, so a step gain inside that band is read as what it is."""
    by_name = {r.name: r for r in rungs}
    ratios = []
    for r in rungs:
        base, own = r.here.get(r.after) or {}, by_name.get(r.after)
        if base.get("images_per_s") and own is not None and own.images_per_s:
            ratios.append(base["images_per_s"] / own.images_per_s)
        if len(r.timings or []) > 1 and base.get("step_images_per_s") and r.images_per_s:
            ratios.append(base["step_images_per_s"] / r.images_per_s)
    if len(ratios) < 2:
        return ""
    moved = sum(1 for x in ratios if abs(x - 1) > keep.MIN_GAIN)
    # the band is drift between separate timings, which a step's interleaved rounds cancel: not
    # called the step's noise (review 2026-12-05u item 6: channels_last 1.08x, interleaved, read
    # as noise under a header that said so)
    return (f"Repeats on this machine: a rung timed again read {min(ratios):.2f}-{max(ratios):.2f}x "
            f"its earlier timing ({moved} of {len(ratios)} off by over {100 * keep.MIN_GAIN:.0f}%): "
            "drift between timings, which a step's interleaved rounds cancel.")


class LadderTable:
    """The rungs as a table: HTML in a notebook, aligned text elsewhere."""

    def __init__(self, rungs: list[ladder.Rung], strict: ladder.Rung, defaults: ladder.Rung,
                 fresh: dict | None = None) -> None:
        by_name = {r.name: r for r in rungs}
        self.start = strict.name   # the 'over' column is named after the start row (item 5)
        steady = steady_images_per_s(rungs, strict)   # the start row as its ratios read it (item 5)
        self.rows = [(r.kept, row(r, strict, defaults, by_name.get(r.after), steady)) for r in rungs]
        self.decided = [decided(r) for r in rungs]
        self.based = [base_short(r) for r in rungs]
        self.gate = gate_line(rungs)
        # one clock (a CPU): the page leads with how far repeats moved (review 2026-12-04j item 8)
        self.repeats = "" if any(r.device_gain is not None for r in rungs) else repeats_line(rungs)
        # what the host-only step's gain follows (its base's idle), folded: the takeaways give
        # this page's rule (review 2026-12-04j item 9), the fold the fresh runs' beside it
        host = next((r for r in rungs if r.name == reproduce.HOST_ONLY_STEP and not r.error), None)
        graphs = "" if host is None else reproduce.host_only_line(
            fresh, host.gain, (host.here.get(host.after) or {}).get("idle_share"), host.after)
        # the steps that cut the GPU's work while the host set the pace, one line (host_paced.host_paced):
        # folded here beside the fresh runs' ranges, not a takeaway (review 2026-12-05u item 5)
        paced = host_paced.host_paced(rungs, [r for r in rungs if r.judged_by == "device time" and r.kept],
                                       fresh) if any(r.device_gain is not None for r in rungs) else None
        self.note = " ".join(line for line in (host_pace(rungs), steady_line(rungs, strict),
                                               reproduce.all_steps_line(fresh), graphs, paced) if line)
        # the steps whose gain did not hold over this machine's fresh runs, shown beside the
        # table: a page is one run (review 2026-12-03h item 5)
        # (not held: the runs disagree, or this run's own gain lies outside them: review
        # 2026-12-04i item 1; what held means and how often each was kept: 2026-12-04j item 7)
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.fresh = reproduce.not_held_line(
            fresh, {r.name: r.gain for r in rungs if not r.error}, now,
            {r.name: r.device_gain for r in rungs if not r.error}, define=False)
        split = reproduce.folded_split(fresh, {r.name: r.gain for r in rungs if not r.error},
                                       {r.name: r.device_gain for r in rungs if not r.error})
        if split:   # the not-held line named its steps only: the split that held, folded
            self.note = f"{self.note} {split}".strip()
        if self.fresh:   # what 'held' means, folded with the keep rule's reasons
            self.note = f"{self.note} Held means: {reproduce.HELD_MEANS}.".strip()
        if reproduce.RANGES_FOLDED in self.fresh:
            # most steps loose (a noisy host): the whole line folded, the takeaways say it once
            self.note, self.fresh = f"{self.fresh} {self.note}", ""
        # the columns shown: not one that says nothing on any row (a CPU's device clock, idle,
        # compile and payback), nor a second baseline that is the first (a CPU's)
        self.shown = [i for i, name in enumerate(COLUMNS)
                      if not (name == "over PyTorch defaults" and defaults is strict)
                      and any(cells[i] not in ("", "n/a", "0.0 s") for _, cells in self.rows)]

    def header(self, i: int, short: bool) -> str:
        """Column i's header: 'over <start row>' for the speed-up over the start (on a CPU the
        start is PyTorch's defaults, not strict float32), the short form where short."""
        if COLUMNS[i] == "over strict float32":
            return f"over {self.start}"
        return SHORT_HEADER.get(COLUMNS[i], COLUMNS[i]) if short else COLUMNS[i]

    def _cell(self, cells: list[str], i: int, said: str, based: str, short: bool) -> str:
        """One cell as shown: the core's short forms where short, else the full cell."""
        if short and i == 1:
            return said
        if short and COLUMNS[i] == "its base in the step's rounds":
            return based
        return _core(cells[i], short and i in _RANGED)

    def _table(self, columns: list[int], short: bool) -> str:
        head = "".join(f"<th>{html.escape(self.header(i, short))}</th>" for i in columns)
        body = "".join(f"<tr style='{'' if kept else 'color:#888'}'>"
                       + "".join(f"<td>{html.escape(self._cell(cells, i, said, based, short))}</td>"
                                 for i in columns) + "</tr>"
                       for (kept, cells), said, based in zip(self.rows, self.decided, self.based, strict=True))
        return f"<table><tr>{head}</tr>{body}</table>"

    def _repr_html_(self) -> str:
        core = [i for i in self.shown if COLUMNS[i] in CORE]
        note = f"<p>{html.escape(self.note)}</p>" if self.note else ""
        gate = "".join(f"<p>{html.escape(line)}</p>" for line in (self.gate, self.fresh) if line)
        lead = f"<p>{html.escape(self.repeats)}</p>" if self.repeats else ""
        return (lead + self._table(core, short=True) + gate
                + "<details><summary>all columns, the keep rule's reasons, the host's pace</summary>"
                + self._table(self.shown, short=False) + note
                + f"<p>{html.escape(reading_rules())}</p></details>")

    def __repr__(self) -> str:
        # a viewer without HTML shows text/plain, which is repr(): the table, not
        # '<LadderTable at 0x...>' (review 2026-12-04j item 10)
        return str(self)

    def __str__(self) -> str:
        return "\n".join(([self.repeats] if self.repeats else [])
                         + [" | ".join(cells[i] for i in self.shown) for _, cells in self.rows]
                         + [line for line in (self.gate, self.fresh, self.note) if line])


def steady_images_per_s(rungs: list[ladder.Rung], strict: ladder.Rung) -> float | None:
    """The start's median over the run, as the 'over' column reads it
    (experiment.settle_baselines), where it differs from its first timing by more than 2%; None
    where it does not (or no rung was settled)."""
    settled = next((r for r in rungs if r.baseline_scale.get(strict.name)
                    and (r.here.get(strict.name) or {}).get("images_per_s")), None)
    if settled is None:
        return None
    # the median settle_baselines read, from the state it left: the baseline's images/s in the
    # settled rung's rounds over the scale it applied (not recomputed over another set of rungs)
    steady = settled.here[strict.name]["images_per_s"] / settled.baseline_scale[strict.name]
    if strict.images_per_s <= 0 or abs(steady / strict.images_per_s - 1) <= keep.MIN_GAIN:
        return None
    return steady


def steady_line(rungs: list[ladder.Rung], strict: ladder.Rung) -> str:
    """Where the start's median over the run differs from its first timing by more than 2%, the
    sentence that says the 'over' column reads the median (experiment.settle_baselines), so a
    row's ratio is not read against the start row's images/s (review 2026-12-03g item 8)."""
    steady = steady_images_per_s(rungs, strict)
    if steady is None:
        return ""
    return (f"Speed-ups over {strict.name} read its median over the run, {steady:,.0f} images/s, "
            f"not its first timing ({strict.images_per_s:,.0f}).")


def host_pace(rungs: list[ladder.Rung]) -> str:
    """The host's pace over the climb's rounds in one line (us per eager launch, probed after
    every round: ladder.host_pace_us), and the step whose rounds ran slowest; '' when no round
    was probed (a record from before the probe)."""
    per_step = {}
    for r in rungs:
        probes = [p for t in (r.timings or [{"host_pace_us": r.host_pace_us}]) for p in t.get("host_pace_us") or []]
        if probes:
            per_step[r.name] = sorted(probes)[len(probes) // 2]
    if not per_step:
        return ""
    every = [p for r in rungs for t in (r.timings or [{"host_pace_us": r.host_pace_us}])
             for p in t.get("host_pace_us") or []]
    slowest = max(per_step, key=per_step.get)
    return (f"Host pace between rounds: {min(every):.1f}-{max(every):.1f} us per eager launch "
            f"(slowest: {slowest}'s rounds, median {per_step[slowest]:.1f}).")


THIS_MACHINE = "this machine"


def table(rungs: list[ladder.Rung], strict: ladder.Rung, defaults: ladder.Rung,
          fresh: dict | None | str = THIS_MACHINE) -> LadderTable:
    """The ladder's table: images/s with spread, both speed-ups, device busy, numerics, compile.

    fresh: the step gains of fresh runs to show beside this run's (reproduce.fresh_runs); by
    default this machine's record, read only where the rungs have a device clock (a GPU: the
    reference's records are GPU runs), so the page says which of its step gains did not hold.
    """
    if fresh == THIS_MACHINE:
        fresh = (reproduce.fresh_runs(reproduce.this_machine())
                 if any(r.device_gain is not None for r in rungs) else None)
    return LadderTable(rungs, strict, defaults, fresh)


def short(rungs: list[ladder.Rung]) -> str:
    """The integrator's table: rung, images/s, spread, unprofiled GPU idle share, error, kept."""
    lines = [f"{'rung':<24}{'images/s':>11}{'IQR':>7}{'idle':>7}{'err vs fp32':>13}  kept"]
    for r in rungs:
        if r.error:
            lines.append(f"{r.name:<24}{'':>38}  {r.why}")
            continue
        idle = "n/a" if r.idle_share is None else f"{100 * r.idle_share:.0f}%"
        err = f"{r.gate.rel_error:.1e}" if r.gate else ""
        base = r.here.get(r.after)
        here = "" if not base else f" [base in these rounds {base['images_per_s']:,.0f} images/s" + (
            "" if base.get("idle_share") is None else f", idle {100 * base['idle_share']:.0f}%") + "]"
        lines.append(f"{r.name:<24}{r.images_per_s:>11,.0f}{100 * r.iqr_s / r.median_s:>6.1f}%"
                     f"{idle:>7}{err:>13}  {'yes' if r.kept else 'no'}: {r.why}{here}")
    return "\n".join(lines)
