"""Chapter 07's set-up, quiz answers and tables, built from what the chapter measured.

The notebook used to import six labkit modules, define its quiz answers inline, print its
results line by line (`print(f"{r['path']:<42}...")`) and write `if on_gpu: ... else: recorded`
by hand. What it showed lives here, as `labkit.show.table.Table`s: the notebook reaches it as
`chapter.lab.tables`, shows one call per result, and a value recorded on the reference GPU
arrives as the session's `Recorded`, so its table says 'recorded on nvidia-h200, <date>'.
Outcome details (the error a path raised, how wrong a wrong answer was) and the documentation
quoted for C15b/C15c are folded: a reader sees the outcomes and opens the evidence on request.
"""

from __future__ import annotations

import datetime
import functools
import html
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy
import torch
from torch import nn

from labkit.audit import export_audit
from labkit.audit.export_audit import (
    CHANNELS_LAST,
    CORRECT,
    LAYOUTS,
    NCHW,
    REJECTED,
    SKIPPED,
    TRANSPOSED,
    WRONG,
)
from labkit.chapters.ch07_export_traps import claims as ch07
from labkit.chapters.ch07_export_traps import export_traps
from labkit.claims import reproduced, trust
from labkit.core import env, results
from labkit.measure import ceiling_store, ceilings, conditions
from labkit.measure import timing as timing_math
from labkit.measure.timing import format_seconds
from labkit.session import Recorded
from labkit.show import table as tables
from labkit.show.table import Stack
from labkit.show.widgets.quiz import Key

__all__ = ["CHANNELS_LAST", "CORRECT", "LAYOUTS", "NCHW", "REJECTED", "TRANSPOSED", "WRONG", "export_audit",
           "stated_variant"]
_VETO = ", but the harness flagged"


def _other(flag: Mapping, others: Sequence[str]) -> bool:
    """Whether a flag names one of `others` (its label, or 'case: label')."""
    timing = str(flag.get("timing", ""))
    return any(timing == o or timing.endswith(f": {o}") for o in others)


def own_flags(comparison: object, name: str) -> list[dict]:
    """The comparison's flags that can move name's ratio: its own timing's and the baseline's
    (the two the ratio is built from), and any flag naming no variant. A flag on a third path
    cannot: on the CPU page torch.export's noise (off by 116%) held back ONNX Runtime's 0.43x
    against eager, every round of which lay below 0.6x (review 2026-12-04l item 10)."""
    variants = list(getattr(comparison, "variants", {}))
    keep = (name, getattr(comparison, "baseline", None))
    others = [v for v in variants if v not in keep]
    found = comparison.flags() if hasattr(comparison, "flags") else []  # type: ignore[attr-defined]
    return [f for f in found if not (isinstance(f, Mapping) and _other(f, others))]


def stated_variant(comparison: object, name: str, threshold: float = 1.0) -> str:
    """A variant's ratio as a sentence may state it (`trust.stated_ratio`: its spread, the trust
    rule, a shared GPU), held back only by the flags of the timings it is built from
    (`own_flags`), not by every flag the comparison raised (`trust.stated_variant` passes them all)."""
    variant = comparison[name]  # type: ignore[index]
    shared = any(getattr(v.timing, "shared_gpu", False)
                 for v in getattr(comparison, "variants", {}).values())
    # the quartiles of the rounds' ratios, named as such: Trap 3's range is lowest to highest
    # round (review 2026-12-05q browser 05-07 item 5: 'rounds' meant two things on one page)
    return trust.stated_ratio(variant.ratio, [variant.ratio_q25, variant.ratio_q75],
                              flags=own_flags(comparison, name), threshold=threshold,
                              shared_gpu=shared, what=name, spread_name="IQR")


def vetoing(comparison: object, name: str, threshold: float = 1.0) -> list[str]:
    """The flagged timings that hold name's ratio back, each as 'torch.export (off by up to
    116%)': those whose uncertainty could carry the ratio's whole rounds across `threshold`."""
    variant = comparison[name]  # type: ignore[index]
    decision = trust.Decision(name, variant.ratio, [variant.ratio_q25, variant.ratio_q75], threshold)
    said = []
    for flag in trust.read_flags(own_flags(comparison, name)):
        if trust.judge([flag], [decision]).veto:
            said.append(f"{flag.timing} (off by up to {100 * flag.uncertainty:.0f}%)")
    return said


def stated_brief(comparison: object, name: str) -> str:
    """`stated_variant` without the trust rule's whole sentence: '0.73x (IQR 0.54-0.84)' when
    the ratio may be stated, else 'no ratio to state: 0.73x (IQR ...): the harness flagged
    eager (off by up to 30%), enough to carry it across 1x', naming the timings that hold it
    back (a table folds the whole sentence). The CPU page read '... noisy enough to carry it
    across 1x of eager's time' (review 2026-12-04l item 10)."""
    stated = stated_variant(comparison, name)
    if _VETO not in stated:
        return stated
    who = vetoing(comparison, name) or ["a timing"]
    return (stated.split(_VETO)[0] + f": the harness flagged {', '.join(who)}, enough to carry it "
            "across 1x")


def stated_short(comparison: object, name: str) -> str:
    """A ratio for a sentence of the takeaways: '0.52x (IQR 0.47-0.54)' where it may be
    stated, 'not resolved (IQR 0.83-1.33 straddles 1x)' where the rounds straddle 1 (a point
    ratio there, the median of the rounds' ratios, can sit far from the medians' own: 1.25x
    beside medians 1.04x apart on this CPU), else 'no stable ratio (IQR 0.61-0.74)'."""
    stated = stated_brief(comparison, name)
    variant = comparison[name]  # type: ignore[index]
    if stated.startswith("no "):
        stated = f"no stable ratio (IQR {variant.ratio_q25:.2f}-{variant.ratio_q75:.2f})"
    elif variant.ratio_q25 <= 1 <= variant.ratio_q75:  # no ratio to quote: the rounds straddle 1
        # 'not resolved', not 'no difference': rounds of 0.97-1.20 allow a 20% cost (review
        # 2026-12-03g item 8, as chapter 05 says it)
        stated = f"not resolved (IQR {variant.ratio_q25:.2f}-{variant.ratio_q75:.2f} straddles 1x)"
    return stated + host_pace(comparison, name)


def loop_pace(timing: object) -> tuple[float, str] | None:
    """A GPU call's pace in a Python loop of such calls, and the clock that sets it.

    The host launches a call while the GPU runs the ones before it, so a loop runs at the
    slower of the two: max(host launch, device time) per call ('host' or 'device' binds).
    None without a host figure (a CPU timing, or a path the harness could not launch-time)."""
    host, device = getattr(timing, "host_s", None), getattr(timing, "median_s", None)
    if not host or not device:
        return None
    return (host, "host") if host > device else (device, "device")


def loop_ratio(comparison: object, name: str) -> tuple[float, str, str] | None:
    """name's loop pace over the baseline's (`loop_pace`), with the clock binding each; None
    when either has no host figure or name is the baseline."""
    baseline = getattr(comparison, "baseline", None)
    if baseline is None or baseline == name:
        return None
    paces = [loop_pace(comparison[label].timing) for label in (name, baseline)]  # type: ignore[index]
    if paces[0] is None or paces[1] is None:
        return None
    return paces[0][0] / paces[1][0], paces[0][1], paces[1][1]


def host_pace(comparison: object, name: str) -> str:
    """Where either timing is launch-bound (the host takes longer to launch a call than the GPU
    to run it), what a loop of calls costs, said beside the device time's ratio: each call's
    pace is max(host launch, device time), named by the clock that binds it; '' otherwise."""
    timings = [comparison[label].timing for label in (name, getattr(comparison, "baseline", name))]  # type: ignore[index]
    if not any(getattr(t, "launch_bound", False) for t in timings):
        return ""
    loop = loop_ratio(comparison, name)
    if loop is None:
        return ""
    ratio, mine, theirs = loop
    return (f"; in a loop a call takes max(host launch, device time): {ratio:.2f}x ({name} {mine}-bound, "
            f"{comparison.baseline} {theirs}-bound; the ratio above is device time)")  # type: ignore[attr-defined]


def loop_note(comparison: object) -> str:
    """Every path's ratio in a loop (max(host launch, device time) per call, against the
    baseline's), flagging the paths whose loop pace the host sets; '' without host figures."""
    said = []
    for name in getattr(comparison, "variants", {}):
        loop = loop_ratio(comparison, name)
        if loop is not None:
            said.append(f"{name} {loop[0]:.2f}x" + (" (host-bound: its launch sets the pace)"
                                                    if loop[1] == "host" else ""))
    if not said:
        return ""
    return (f"in a loop of calls each takes max(host launch, device time), against "
            f"{comparison.baseline}'s: " + ", ".join(said))  # type: ignore[attr-defined]


# Outcome kinds stand out in HTML as the audit's own table colours them.
# A refusal is shown in the quiz's word, 'raises' (review 2026-12-05q browser 05-07 item 6: the
# audit said 'correct', Trap 1 'rejected', its quiz 'raises an error'); the records keep REJECTED.
SHOWN_KIND = {REJECTED: "raises"}
OUTCOME_MARKS = {CORRECT: "#1a7f37", SHOWN_KIND[REJECTED]: "#9a6700", WRONG: "#cf222e", SKIPPED: "#57606a"}


def shown_kind(kind: str) -> str:
    """An outcome kind as a table cell shows it."""
    return SHOWN_KIND.get(kind, kind)


# ---------------------------------------------------------------------------------------
# Set-up: the model, its example and where the exported files go


@dataclass
class Setup:
    """The chapter's model and example input, sized for where it runs, and a scratch folder
    for the exported files (gone with the kernel); the audit writes `onnx_path`, later
    sections reuse it."""

    model: nn.Module
    example: torch.Tensor
    scratch: tempfile.TemporaryDirectory = field(repr=False)

    @property
    def onnx_path(self) -> Path:
        return Path(self.scratch.name) / "model.onnx"

    def table(self) -> tables.Table:
        """The deployment stack found here, and the model frozen below."""
        parameters = sum(p.numel() for p in self.model.parameters())
        shown = tables.Table("", ["", "here"], [
            ["model", f"SmallCNN ({parameters:,} parameters)"],
            ["example input", f"{tuple(self.example.shape)} float32 on {self.example.device}"]])
        shown.fold("the deployment stack found here", export_traps.environment_line())
        return shown


def setup(device: torch.device, on_gpu: bool) -> Setup:
    """SmallCNN and its NCHW example: batch 64 of 64x64 images and 32 channels on a GPU, batch
    4 of 32x32 and 16 channels on a CPU (the audit builds six artifacts; a CPU run stays short)."""
    batch, image, channels = (64, 64, 32) if on_gpu else (4, 32, 16)
    model = export_audit.small_cnn(channels=channels, device=device)
    example = export_audit.example_input(batch, image, device=device)
    return Setup(model, example, tempfile.TemporaryDirectory(prefix="labkit-07-"))


def layouts_table() -> tables.Table:
    """The same values three ways in memory (a 1x3x4x4 example): deterministic, for nbval."""
    return tables.Table("", ["layout", "shape, strides: format"],
                        [[name, export_audit.describe_layout(x.shape, x.stride())]
                         for name, x in export_audit.layouts(export_audit.example_input(1, 4)).items()])


# ---------------------------------------------------------------------------------------
# The quizzes' answers, computed after the learner predicts


AUDIT_CHOICES = {"torch.jit.trace": "torch.jit.trace", "torch.export": "torch.export",
                 "numpy feed": "ONNX Runtime fed a numpy array",
                 "IOBinding": "ONNX Runtime fed a data pointer (IOBinding)"}
KIND_CHOICES = {CORRECT: "gives eager's answer", REJECTED: "raises an error",
                WRONG: "gives a wrong answer silently"}
# Each quiz's explanation, shown after the learner answers; kept here, not in the quiz cell's
# source, which a learner sees before answering (review 2026-12-04m item 7: cell 6 named the
# IOBinding path, cell 13 said the view 'refuses' it). A test checks no quiz cell holds them.
EXPLAIN = {
    "audit": "ONNX Runtime's IOBinding gets a data pointer and the declared shape, never the strides, so it "
             "reads channels_last memory as if it were NCHW. The numpy feed copies a strided array to a "
             "dense one first.",
    "dropped": "The exported graph has no contiguous() (it was a no-op for the example), so the view meets "
               "the channels_last conv output and refuses it.",
    "ort": "Called on the median of the rounds' ratios, on against off: faster or slower past 10%, else "
           "about the same.",
}


def first_silently_wrong(audit: export_audit.Audit | None) -> str:
    """The first path among the audit quiz's choices that was silently wrong on channels_last."""
    if audit is None:
        raise ValueError("run the audit cell below the quiz first: the answer is read off it")
    for row in audit.rows:
        if row.outcomes[CHANNELS_LAST].kind == WRONG:
            for key, choice in AUDIT_CHOICES.items():
                if key in row.path:
                    return choice
    return "none of them"


def export_on_channels_last(dropped: export_traps.DroppedContiguous | None) -> str:
    """What torch.export's module (frozen with NCHW) did with a channels_last input, as a choice."""
    if dropped is None:
        raise ValueError("run the Trap 1 cell below the quiz first: the answer is read off it")
    return KIND_CHOICES[dropped.audit.row("torch.export").outcomes[CHANNELS_LAST].kind]


def layout_preference_effect(ort_layout: export_traps.OrtLayout | None) -> str:
    """'faster', 'slower' (by more than 10%) or 'about the same': ORT's layout preference on
    against off, NCHW-declared model, from the interleaved timing."""
    if ort_layout is None:
        raise ValueError("run the Trap 3 cell below the quiz first: the answer is read off it")
    on = ort_layout.comparison["NCHW declared, on"].ratio if ort_layout.comparison else 1.0
    return _effect(on)


def layout_preference_key(ort_layout: export_traps.OrtLayout | None) -> Key:
    """The Trap 3 quiz's answer with the figures it was called on, as its feedback reads them:
    'faster (0.60x, 7 of 7 rounds faster)' (review 2026-12-05q browser 05-07 item 7: the
    feedback said how the call is made, not what it came to)."""
    call = layout_preference_effect(ort_layout)
    rounds = _rounds_calling(ort_layout, call)
    if rounds is None:
        return Key(call, why="no interleaved timing: called at 1x")
    variant, per_round, agree = rounds
    return Key(call, why=f"{variant.ratio:.2f}x, {agree} of {len(per_round)} rounds {call}")


def _rounds_calling(ort_layout: export_traps.OrtLayout | None, call: str) -> tuple[object, list[float], int] | None:
    """The preference-on variant, its per-round ratios, and how many of them make `call`
    (None without an interleaved timing): what the quiz's key and the call line both count."""
    comparison = getattr(ort_layout, "comparison", None)
    if comparison is None or "NCHW declared, on" not in comparison.variants:
        return None
    variant = comparison["NCHW declared, on"]
    per_round = [float(r) for r in getattr(variant, "round_ratios", ()) or (variant.ratio_q25, variant.ratio_q75)]
    return variant, per_round, sum(_effect(r) == call for r in per_round)


def _effect(ratio: float) -> str:
    return "faster" if ratio < 0.9 else "slower" if ratio > 1.1 else "about the same"


def layout_preference_call(ort_layout: export_traps.OrtLayout | None) -> str:
    """Trap 3's call with its range, round by round: how many of the interleaved rounds say what
    the quiz's answer says, and the lowest to highest per-round ratio. One run's median moved
    0.50-0.68x between H200 runs while the call held 4 of 4 (review 2026-12-04j item 6): the
    call and the range are what a learner can copy, not one ratio. '' without a timing."""
    call = layout_preference_effect(ort_layout)
    rounds = _rounds_calling(ort_layout, call)
    if rounds is None:
        return ""
    variant, per_round, agree = rounds
    return (f"the call: with its layout preference on, the NCHW-declared model ran {call} {'as' if call == 'about the same' else 'than'} with it off "
            f"in {agree} of {len(per_round)} rounds, {min(per_round):.2f}-{max(per_round):.2f}x, lowest to "
            f"highest round (the table's column: their IQR); read the call and that range, not one "
            f"run's ratio ({variant.ratio:.2f}x here)"
            + trap3_reproduced(reproduce_record()))


TRAP3_SAMPLING = {"rep_ms": export_traps.ORT_REP_MS, "rounds": export_traps.ORT_ROUNDS}


def reproduce_record(machine: str = results.DEFAULT_REFERENCE) -> dict | None:
    """The reference machine's reproduce record of this chapter (results/reproduce/), or None."""
    return reproduced.load_record(reproduced.record_path(machine, "07_export_traps"))


def trap3_reproduced(record: Mapping | None) -> str:
    """What the reproduce record says of Trap 3's ratio across runs, read against this page's
    sampling (TRAP3_SAMPLING): its runs' range where it was taken the same way; else that it
    predates the sampling, so no record says how far one run's ratio moves (review 2026-12-04k
    item 3: the 07:14 record took 200 ms over 5 rounds; its 0.50-0.60x lay outside the page's
    0.71-0.82x, and the page still said its ratio 'moves inside it from run to run')."""
    runs = [r.get("trap3_preference_on") for r in (record or {}).get("numbers") or []]
    runs = [r for r in runs if isinstance(r, Mapping) and r.get("ratio")]
    if not runs:
        return "; no reproduce record of it yet"
    machine, when = record.get("machine", "the reference"), str(record.get("recorded_at", ""))[:16].replace("T", " ")  # type: ignore[union-attr]
    span = f"{min(r['ratio'] for r in runs):.2f}-{max(r['ratio'] for r in runs):.2f}x"
    sampling = [r.get("sampling") for r in runs]
    if all(s == TRAP3_SAMPLING for s in sampling):
        return f"; {machine}'s reproduce runs ({when} UTC, {len(runs)} runs, this sampling): {span}"
    # records before the sampling changed (07:51 UTC, 2026-12-04) did not record theirs
    how = "predates" if not any(sampling) else "was taken another way than"
    # what this record cannot say, not what no record says: the H200 page of 19:20 read 'no record
    # yet says' of the 07:14 record while the 19:20 record, written after it, said 0.57-0.58x
    # (review 2026-12-04m item 8)
    return (f"; {machine}'s reproduce record ({when} UTC, {len(runs)} runs: {span}) {how} this sampling "
            f"({TRAP3_SAMPLING['rep_ms']:.0f} ms over {TRAP3_SAMPLING['rounds']} rounds), so it cannot say "
            "how far this ratio moves between runs")



# ---------------------------------------------------------------------------------------
# The layout audit


def _outcome_rows(rows: Sequence[Mapping]) -> tuple[list[list[object]], list[str]]:
    """Table rows (path, records, one outcome kind per layout) and the folded details: each
    path's note (how it was fed, why it was not built) and each outcome's detail."""
    shown, details = [], []
    for r in rows:
        shown.append([r["path"], r["records"], *(shown_kind(r["outcomes"][lay]["kind"]) for lay in LAYOUTS)])
        details += [f"{r['path']}: {r['note']}"] if r.get("note") else []
        details += [f"{r['path']} on {lay}: {r['outcomes'][lay]['detail']}" for lay in LAYOUTS
                    if r["outcomes"][lay].get("detail")]
    return shown, details


def audit_table(audit: export_audit.Audit | Mapping, title: str = "", recorded: str = "",
                records: bool = True) -> tables.Table:
    """The audit as a Table: each path, what it records about its input (records=False leaves
    that column to the folded details), and its outcome on each layout, checked against eager;
    how each was fed, why a path refused or how wrong it was is folded. Takes an Audit or its
    recorded payload (`Audit.as_dict`)."""
    data = audit.as_dict() if isinstance(audit, export_audit.Audit) else audit
    rows, details = _outcome_rows(data["rows"])
    columns = ["path", "what it records about its input", *LAYOUTS]
    if not records:
        details = [f"{r[0]} records: {r[1]}" for r in rows] + details
        rows, columns = [[r[0], *r[2:]] for r in rows], [columns[0], *LAYOUTS]
    shown = tables.Table(title or f"example input {tuple(data['example_shape'])} on {data['device']}",
                         columns, rows, marks=OUTCOME_MARKS, recorded=recorded)
    shown.fold(f"how each path was fed, and why ({len(details)})",
               "\n".join([f"ONNX exporter: {data['exporter']}", *details]))
    return shown


# ---------------------------------------------------------------------------------------
# AOTInductor: compiled when the reader asks, otherwise its recorded run

AOTI_OPT_IN = "LABKIT_AOTI_TIMEOUT_S"  # seconds AOTInductor may compile here; unset: not compiled
AOTI_PATH = export_audit.PATH_NAMES["aoti"]
FAST_PATHS = tuple(p for p in export_audit.PATHS if p != "aoti")


def aoti_budget_s() -> float:
    """How long AOTInductor may compile in this chapter: 0 (not compiled; its recorded run is
    shown) unless the reader sets LABKIT_AOTI_TIMEOUT_S. On the H200 it took 128 s of the
    chapter's 152 s (export 3.9 s, compile 71.9 s in a child process, load 45.7 s), past the
    120 s a chapter may take there; on the course's 2-core CPU its compile alone is ~30 s."""
    raw = os.environ.get(AOTI_OPT_IN, "").strip()
    if not raw:
        return 0.0
    try:
        seconds = float(raw)
    except ValueError:
        raise ValueError(f"{AOTI_OPT_IN} must be a number of seconds (e.g. 300), got {raw!r}") from None
    return max(seconds, 0.0)


def run_audit(model: nn.Module, example: torch.Tensor, workdir: str | Path,
              aoti_s: float | None = None) -> export_audit.Audit:
    """The layout audit: the five paths that build in seconds, and AOTInductor only when it may
    compile (`aoti_budget_s`; its compile starts first and overlaps the others)."""
    budget = aoti_budget_s() if aoti_s is None else aoti_s
    paths = export_audit.PATHS if budget > 0 else FAST_PATHS
    return export_audit.run(model, example, paths=paths, aoti_timeout_s=budget, workdir=workdir)


def _aoti_rows(payload: Mapping) -> list[dict]:
    return [r for r in payload.get("rows", []) if r["path"] == AOTI_PATH and r.get("records") != "not built"]


def aoti_result(audit: export_audit.Audit, chapter: object) -> object:
    """AOTInductor's audit row: measured here (recorded under 'aoti' on a GPU), or the reference's
    recorded one. Call it before the audit is recorded: the reference GPU's earlier audit (which
    compiled it) is where an 'aoti' record comes from the first time, carried over with the date
    it was measured on (`measured_at`), never as a new measurement."""
    here = [r for r in audit.as_dict()["rows"] if r["path"] == AOTI_PATH]
    if here:
        payload = {**audit.as_dict(), "rows": here,
                   "measured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        if getattr(chapter, "on_gpu", False):
            chapter.record("aoti", payload)  # type: ignore[attr-defined]
        return payload
    recorded = chapter.reference("aoti")  # type: ignore[attr-defined]
    if recorded:
        return recorded
    earlier = chapter.reference("audit")  # type: ignore[attr-defined]
    rows = _aoti_rows(earlier.value) if earlier else []
    if not rows:
        return recorded  # nothing recorded: its label says so
    payload = {**dict(earlier.value), "rows": rows, "measured_at": earlier.date}  # type: ignore[arg-type]
    if getattr(chapter, "on_gpu", False):
        chapter.record("aoti", payload)  # type: ignore[attr-defined]  # carried over, its date kept
    return Recorded(earlier.chapter, "aoti", earlier.machine, payload, earlier.date)


def aoti_table(result: object) -> object:
    """AOTInductor's outcomes on the three layouts: compiled here, or as recorded (labelled, with
    the day it was measured; the chapter's prose says how to compile it here), or a line saying
    how to compile it here."""
    how = (f"set {AOTI_OPT_IN}=300 before starting the kernel to compile it here (minutes: on the H200 "
           "its compile and load took 128 s)")
    if isinstance(result, Recorded):
        if not result:
            return f"AOTInductor: nothing recorded yet; {how}."
        payload = dict(result.value)  # type: ignore[arg-type]
        label = f"recorded on {result.machine}, measured {str(payload.get('measured_at', result.date))[:10]}"
        shown = audit_table(payload, title=f"AOTInductor on {payload['device']}", recorded=label, records=False)
        return shown
    return "AOTInductor was compiled in this run: its row is in the audit above."


def audit_takeaway(audit: export_audit.Audit, aoti: object) -> str:
    """The takeaway of the layout audit: how many of the paths built here gave eager's answer on
    all three layouts, the silently wrong answers of the others, and AOTInductor's outcome where
    it was not compiled here: its recorded run, labelled recorded (it is the deploy path most like
    the seed's engine, and the takeaway's '4 of 5 paths built here' left it out: review
    2026-12-04l item 10). `aoti` is `aoti_result`'s answer."""
    built = [r for r in audit.rows if r.artifact is not None]
    right = [r.path for r in built if r.correct_on_all]
    wrong = [r.path for r in built for o in r.outcomes.values() if o.kind == WRONG]
    text = (f"Check an exported model on the layouts it will be fed: {len(right)} of {len(built)} paths built "
            f"here gave eager's answer on all three; "
            + (f"{', '.join(dict.fromkeys(wrong))} gave {len(wrong)} silently wrong answers."
               if wrong else "none was silently wrong."))
    if any(r.path == AOTI_PATH for r in built) or not isinstance(aoti, Recorded):
        return text  # compiled here: counted above
    rows = _aoti_rows(aoti.value) if aoti else []  # type: ignore[arg-type]
    if not rows:
        return text + " AOTInductor: not compiled here, and no run of it recorded."
    kinds = [o["kind"] for o in rows[0]["outcomes"].values()]
    measured = str(dict(aoti.value).get("measured_at", aoti.date))[:10]  # type: ignore[arg-type]
    said = (f"silently wrong on {kinds.count(WRONG)} of {len(kinds)}" if WRONG in kinds
            else f"correct on {kinds.count(CORRECT)} of {len(kinds)}")
    return text + f" AOTInductor (recorded on {aoti.machine}, {measured}): {said}."


def reference_audit(reference: object, here: export_audit.Audit | None = None) -> object:
    """The reference GPU's audit beside this machine's: its recorded table (labelled recorded),
    or, when this run is on the GPU (`here_or_recorded` measured it), None: the audit above is
    the one recorded (a sentence saying so was 16 words of the H200 page's 1,500). Given
    this run's audit (`here`), the table shows only the paths whose outcomes differ from this
    run's and names the others in a note; an AOTInductor row not compiled here is left to
    `aoti_table`, which says when it was measured."""
    if isinstance(reference, Recorded):
        if not reference:
            return reference.label
        payload = dict(reference.value)  # type: ignore[arg-type]
        same: list[str] = []
        if here is not None:
            ours = {r["path"]: r["outcomes"] for r in here.as_dict()["rows"]}
            rows = []
            for row in payload["rows"]:
                if row["path"] == AOTI_PATH and row["path"] not in ours:
                    continue  # not compiled here: aoti_table shows its recorded run
                kinds = {lay: o["kind"] for lay, o in row["outcomes"].items()}
                theirs = {lay: o["kind"] for lay, o in ours.get(row["path"], {}).items()}
                (same.append(row["path"]) if kinds == theirs else rows.append(row))
            payload["rows"] = rows
            if not rows:  # nothing differs: a sentence, not an empty table
                return f"GPU audit ({reference.label}): the same outcomes on all {len(same)} paths."
        shown = audit_table(payload, title=f"GPU reference audit, input "
                            f"{tuple(reference['example_shape'])}", recorded=reference.label, records=False)
        if same:
            shown.note("the same outcomes as here: " + ", ".join(same))
        return shown
    return None  # this run is the GPU's: the audit above is what it records (Stack leaves None out)


def _cpu_eager(speed: export_audit.Speed) -> tuple[str, object] | None:
    """The CPU clock's eager variant (its label and VariantResult), None without one."""
    comparison = speed.comparisons.get(export_audit.CPU_CLOCK)
    if comparison is None:
        return None
    label = next((k for k in comparison.variants if k.startswith("eager")), None)
    return (label, comparison[label]) if label else None


def eager_allocator_kept(speed: export_audit.Speed, model: nn.Module, example: torch.Tensor,
                         force: bool = False) -> object | None:
    """When the harness's page-fault note says eager's CPU timing partly measures the allocator
    (`Timing.faults_dominate`), time eager again as the note advises, inside bench.allocator_kept()
    in a child process (`export_traps.time_eager_allocator_kept`), so the ONNX Runtime ratios have a
    baseline without those faults; None when the note does not apply (force: time it anyway)."""
    found = _cpu_eager(speed)
    if found is None or not (force or found[1].timing.faults_dominate):
        return None
    return export_traps.time_eager_allocator_kept(model, example, threads=found[1].timing.threads)


def allocator_control_took(default_faults: float | None, kept_faults: float | None) -> bool | None:
    """Whether timing eager with malloc keeping freed memory removed the faults it was meant to
    remove, by the rule chapters 02 and 03 read their reruns by (`conditions.kept_took`: the
    child's faults per call at most half the default's). None when either count is missing. On
    the H200 both read 122,895 per call: the control did not take, so its time is no fault-free
    baseline (review 2026-12-04i item 5)."""
    return conditions.kept_took(default_faults, kept_faults)


def allocator_kept_note(speed: export_audit.Speed, kept: object) -> str:
    """Eager timed with malloc keeping freed memory, beside the default, and, only where the child's
    page faults dropped (`allocator_control_took`), the fastest correct CPU path against it
    (medians' quotient: the kept run is not interleaved with the others). Where they did not drop
    the note says the control did not take and states no ratio."""
    found = _cpu_eager(speed)
    if kept is None or found is None:
        return ""
    label, eager = found
    comparison = speed.comparisons[export_audit.CPU_CLOCK]
    best = speed.fastest_correct()[export_audit.CPU_CLOCK]
    faults, default = kept.minor_faults_per_call, eager.timing.minor_faults_per_call  # type: ignore[attr-defined]
    took = allocator_control_took(default, faults)
    text = (f"{label} again with malloc keeping freed memory (bench.allocator_kept(), a child process): "
            f"{format_seconds(kept.median_s)} against {format_seconds(eager.timing.median_s)}"  # type: ignore[attr-defined]
            + (f", {faults:,.0f} page faults per call against {default:,.0f}" if took is not None else ""))
    if took is False:
        return (text + ": the control did not take (faults unchanged), so no fault-free ratio (hypothesis: "
                f"blocks of {conditions.KEPT_MMAP_THRESHOLD / 2**20:.0f} MiB or more, malloc's largest mmap "
                "threshold, are still returned on free)")
    if took is None:
        return text + ": faults not counted, so whether the control took is unknown"
    if best != label:
        ratio = comparison[best].timing.median_s / kept.median_s  # type: ignore[attr-defined]
        text += f"; {best} against it: {ratio:.2f}x (medians' quotient, not interleaved)"
    return text


FASTEST_BAND = 0.02  # "fastest" only outside +-2%, the band trap 2 and chapter 06 use (review 2026-12-04i item 6)
TIE_WITH_EAGER = "tie with eager"  # the call where no path correct on all layouts beats eager by `ratio_call`
# the best path's rounds cross the band's edge against eager (`ratio_call`'s AT_EDGE): neither
# named nor a tie, a call of its own kind (review 2026-12-04n 05-07 item 1)
EDGE_WITH_EAGER = "at the band's edge with eager"
_TIE_OF = " tie"                   # '<a> and <b> tie': two paths neither of which beats the other


def _spread(variant: object) -> tuple[float, float, float]:
    """A variant's ratio and its rounds' IQR (the ratio itself where a record kept no rounds)."""
    ratio = float(variant.ratio)  # type: ignore[attr-defined]
    return ratio, float(getattr(variant, "ratio_q25", ratio)), float(getattr(variant, "ratio_q75", ratio))


def _against(comparison: object, name: str, other: str) -> str:
    """`ratio_call` of name's time against other's (other slower: FASTER). Against the baseline,
    on name's rounds; against another path timed in the same rounds (the same clock), on the rounds'
    quotients (the baseline cancels in each round); else, from the two ratios: FASTER only where the
    rounds' ranges do not overlap and the ratios lie more than 2% apart."""
    mine = comparison[name]  # type: ignore[index]
    if other == getattr(comparison, "baseline", None) or other.startswith("eager"):
        ratio, low, high = _spread(mine)
        return ratio_call(low, high, ratio)
    theirs = comparison[other]  # type: ignore[index]
    clocks = getattr(comparison, "clocks", {})
    a, b = getattr(mine, "round_ratios", None), getattr(theirs, "round_ratios", None)
    if a and b and len(a) == len(b) and clocks.get(name) == clocks.get(other):
        per_round = [x / y for x, y in zip(a, b, strict=True)]
        low, mid, high = (float(q) for q in numpy.percentile(per_round, [25, 50, 75]))
        return ratio_call(low, high, mid)
    (r1, _, high1), (r2, low2, _) = _spread(mine), _spread(theirs)
    apart = high1 < low2 and r1 < r2 * (1 - NO_CALL_BAND)
    return FASTER if apart else NO_DIFFERENCE


def fastest_call(comparison: object, correct_on_all: Sequence[str]) -> tuple[str, str]:
    """The fastest path correct on every layout (eager included) and what may be said of it, by
    the rule Trap 2 and reproduce.py 07 call a ratio by (`ratio_call`: the rounds' whole IQR, as
    printed, clear of the +-2% band): its name where it beats eager and the runner-up by that rule;
    EDGE_WITH_EAGER where its rounds cross the band's edge against eager (review 2026-12-04n
    05-07 item 1); else a tie, never a name (review 2026-12-04m item 1: the 19:20 H200 page named torch.jit.script
    on a 0.84x that 3 fresh runs read within 2%): TIE_WITH_EAGER where the best does not beat
    eager (within +-2%, or its rounds reach 1x), '<a> and <b> tie' where it does not beat the
    runner-up. Returns (the path the call is about, the call)."""
    eligible = {k: comparison[k].ratio for k in comparison.variants  # type: ignore[attr-defined,index]
                if k.startswith("eager") or k in correct_on_all}
    ranked = sorted(eligible, key=eligible.get)  # type: ignore[arg-type]
    best = ranked[0]
    eager = next(k for k in ranked if k.startswith("eager"))
    if len(ranked) == 1:
        return best, best
    if best == eager:  # no path below eager: eager is fastest only where the runner-up is slower
        said = _against(comparison, ranked[1], eager)
        return (best, best) if said == SLOWER else (ranked[1], EDGE_WITH_EAGER if said == AT_EDGE else TIE_WITH_EAGER)
    said = _against(comparison, best, eager)
    if said != FASTER:
        return best, EDGE_WITH_EAGER if said == AT_EDGE else TIE_WITH_EAGER
    if ranked[1] != eager and _against(comparison, best, ranked[1]) != FASTER:
        return best, f"{' and '.join(sorted((best, ranked[1])))}{_TIE_OF}"
    return best, best


def tie_reason(comparison: object, name: str, call: str) -> str:
    """Why a tie is one, in a few words: 'within +-2%' or 'its rounds reach 1x' (of eager's), or
    '... of each other' for two paths; for EDGE_WITH_EAGER, the edge its rounds cross."""
    if call == EDGE_WITH_EAGER:
        _, low, high = _spread(comparison[name])  # type: ignore[index]
        edge = 1 - NO_CALL_BAND if high < 1 else 1 + NO_CALL_BAND
        return f"its rounds cross {edge:.2f}x, the band's edge"
    if call == TIE_WITH_EAGER:
        ratio, low, high = _spread(comparison[name])  # type: ignore[index]
        return f"within +-{100 * NO_CALL_BAND:.0f}%" if ratio_call(low, high, ratio) == WITHIN_BAND \
            else "its rounds reach 1x"
    other = next((n for n in call.removesuffix(_TIE_OF).split(" and ") if n != name), name)
    said = _against(comparison, name, other) if other in getattr(comparison, "variants", {}) else ""
    return f"within +-{100 * NO_CALL_BAND:.0f}% of {other}" if said == WITHIN_BAND else f"within noise of {other}"


model_flops = export_traps.model_flops  # the notebook's name for it (tables.model_flops)


def _si(value: float, unit: str) -> str:
    """'41.3 MFLOP', '22.4 TFLOP/s': three figures in the prefix that reads best."""
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


CPU_CEILING_REP_MS = 150.0  # per point: 3 sizes x (all threads, 1) is about a second, once a process
# chapter 00's CPU sides and 1024: a 16-core host (the H200's) is not busy enough at 512
CPU_CEILING_SIDES = (*ceilings.CPU_MATMUL_SWEEP_N, 1024)


@functools.cache
def cpu_ceiling() -> tuple[float, str] | None:
    """The host CPU's float32 matmul ceiling (TFLOP/s) and what it is, for a machine whose
    course device is a GPU: chapter 00 measures only that device there, so the CPU-clock
    timings on the H200 page (eager on the CPU at 101 GFLOP/s, Trap 3's sessions) named no
    ceiling (review 2026-12-04k item 9). Timed here once a process, as chapter 00 times a CPU's
    (`labkit.measure.ceilings.matmul_tflops`, sides CPU_CEILING_SIDES, all threads and one,
    the best); None where the course device is the CPU (chapter 00's cache is the ceiling there)
    or the timing failed."""
    if env.device().type == "cpu":
        return None
    cpu = torch.device("cpu")
    threads = sorted({torch.get_num_threads(), 1}, reverse=True)
    try:
        best = max(ceilings.matmul_tflops(n, "float32", cpu, rep_ms=CPU_CEILING_REP_MS, threads=t)
                   for n in CPU_CEILING_SIDES for t in threads)
    except Exception:  # a failed timing names no ceiling rather than a wrong one
        return None
    sides = "-".join(map(str, (min(CPU_CEILING_SIDES), max(CPU_CEILING_SIDES))))
    return best, (f"this host's CPU float32 matmul ceiling, {best * 1e3:,.0f} GFLOP/s (timed just now: "
                  f"n {sides}, best of {threads[0]} threads and 1; chapter 00 measures only the GPU here)")


def cpu_rate_note(ort_layout: export_traps.OrtLayout) -> str:
    """Trap 3's CPU sessions against the CPU's matmul ceiling: each timed session's GFLOP/s
    (the model's FLOPs a call, `model_flops`) and the share of chapter 00's CPU ceiling or of
    `cpu_ceiling`; '' without FLOPs, a timing, a CPU provider or a ceiling."""
    comparison = ort_layout.comparison
    if not ort_layout.flops or comparison is None or ort_layout.provider != "CPU":
        return ""
    known = ceiling_store.cached("cpu")
    if known is not None and known.matmul_tflops.get("float32"):
        tflops, where = float(known.matmul_tflops["float32"]), "chapter 00's float32 matmul ceiling"
    elif cpu_ceiling() is not None:
        tflops, where = cpu_ceiling()  # type: ignore[misc]
    else:
        return ""
    rates = {name: ort_layout.flops / v.timing.median_s / 1e12 for name, v in comparison.variants.items()
             if getattr(v.timing, "median_s", None)}
    if not rates:
        return ""
    return (f"{_si(ort_layout.flops, 'FLOP')} a call: " + ", ".join(
        f"{name} {_si(r * 1e12, 'FLOP/s')} ({100 * r / tflops:.0f}%)" for name, r in rates.items())
        + f"; % of {where}")


def ceiling_note(comparison: object, flops: float | None) -> str:
    """Eager's FLOPs a call, its TFLOP/s and its share of chapter 00's matmul ceiling cached for the
    device it ran on (float32; the TF32 share beside it where cuDNN may run convolutions in TF32),
    so the table says how near the compute bound eager runs; '' without FLOPs or an eager timing."""
    name = next((k for k in getattr(comparison, "variants", {}) if k.startswith("eager")), None)
    if not flops or name is None:
        return ""
    timing = comparison[name].timing  # type: ignore[index]
    rate = flops / timing.median_s / 1e12
    said = f"{name}: {_si(flops, 'FLOP')} a call, {_si(rate * 1e12, 'FLOP/s')}"
    kind = torch.device(timing.device).type
    known = ceiling_store.cached(kind)
    if (known is None or not known.matmul_tflops) and kind == "cpu" and cpu_ceiling() is not None:
        tflops, where = cpu_ceiling()  # type: ignore[misc]
        return said + f", {100 * rate / tflops:.0f}% of {where}"
    if known is None or not known.matmul_tflops:
        return said + f" (no {kind} matmul ceiling measured here)"
    tf32 = conditions.tf32_state() if kind == "cuda" else (False, False)
    shares = timing_math.ceiling_shares(None, rate, "float32", None, known.matmul_tflops, *tf32, convolution=True)
    if shares.pct_of_matmul_ceiling is None:
        return said
    said += f", {shares.pct_of_matmul_ceiling:.0f}% of chapter 00's {shares.math} matmul ceiling"
    if shares.pct_of_tf32_ceiling is not None:
        said += f" ({shares.pct_of_tf32_ceiling:.0f}% of TF32's: cuDNN may run convolutions in TF32)"
    return said


LOOP_CLOCK = "time in a loop"  # the clock a call is taken on where a path is launch-bound
NOT_RESOLVED = "none resolved"      # the fastest path's ratio is held back: no path is called fastest


def comparison_table(comparison: object, title: str = "") -> tables.Table:
    """`tables.comparison` with its spread column named for what it is: the interquartile range
    of the per-round ratios. Trap 3 showed 'NCHW declared, on 0.54x 0.54-0.57' in an unlabelled
    column and '0.47-0.64x round by round' under it, two ranges for one ratio (review 2026-12-04l
    item 10); bench's own text form calls it 'IQR over rounds'."""
    shown = tables.comparison(comparison, title)  # type: ignore[arg-type]
    shown.columns = [RATIO_IQR if c == "ratio spread" else c for c in shown.columns]
    return shown


RATIO_IQR = "IQR over rounds"  # of the ratio: the column beside "ratio"


@dataclass(frozen=True)
class SpeedCall:
    """The speed table's call: the path named fastest (or why none is), on the clock that sets a
    loop's pace. `call` is what reproduce.py 07 records and compares across runs; `sentence`
    what the page prints; `clock` the clock the call was taken on."""

    name: str
    call: str
    sentence: str
    clock: str


def _held_back(comparison: object, name: str) -> str:
    """Why name's ratio may not be stated ('' where it may): the trust rule's flags, rounds that
    straddle 1x, a ratio outside its own rounds, a shared GPU."""
    stated = stated_variant(comparison, name)
    if not stated.startswith("no ") and ": " not in stated:
        return ""
    variant = comparison[name]  # type: ignore[index]
    if vetoing(comparison, name):
        return f"but the harness flagged {', '.join(vetoing(comparison, name))}, enough to carry it across 1x"
    if variant.ratio_q25 <= 1 <= variant.ratio_q75:
        return "its rounds straddle 1x"
    if not variant.ratio_q25 <= variant.ratio <= variant.ratio_q75:
        return "the ratio lies outside its own rounds (noise)"
    return "timed on a shared GPU"


DEVICE_CLOCK = "device time"  # the clock a pair is read on where neither runs launch-bound in its loop
# Chapter 02's rule for a timed loop (its claims.LAUNCH_BOUND_RATIO and AT_DEVICE_PACE; a test keeps
# them equal): a path is 'launch-bound' only where its loop of calls runs over 1.5x its device time,
# 'near launch-bound' over 1.05x, at the GPU's pace below. Four H200 runs of one chapter 02 case read
# its loop at 1.07-1.41x its device time: a loop's excess under 1.5x moves between processes. So
# did this chapter's: the 19:20 H200 page's eager loop ran 1.16x its device time and made
# torch.jit.script 0.84x of it, while 3 fresh reproduce runs read within 2% (review 2026-12-04m item 1).
LAUNCH_BOUND_RATIO = 1.5
AT_DEVICE_PACE = 1.05
PACE_RULE = ("each path is set against eager in the loop of calls where either runs launch-bound in it "
             f"(its loop over {LAUNCH_BOUND_RATIO:g}x its device time, chapter 02's rule), else on device time")


def loop_over_device(comparison: object, loop: object | None) -> dict[str, float]:
    """Each path's loop of calls per call (wall clock) over its device time per call; {} without a loop."""
    out = {}
    looped = getattr(loop, "variants", {}) if loop is not None else {}
    for name, variant in getattr(comparison, "variants", {}).items():
        if name in looped:
            device, wall = variant.timing.median_s, looped[name].timing.median_s
            if device and wall:
                out[name] = wall / device
    return out


def pace_label(loop_over_device_ratio: float) -> str:
    """Chapter 02's label of a loop's per-call time over the device time."""
    if loop_over_device_ratio > LAUNCH_BOUND_RATIO:
        return "launch-bound"
    return "near launch-bound" if loop_over_device_ratio > AT_DEVICE_PACE else "at the GPU's pace"


def pair_clock(paces: Mapping[str, float], name: str, baseline: str) -> str:
    """The clock name's ratio to the baseline is read on (PACE_RULE): the loop where either runs
    launch-bound in it, else device time."""
    worst = max(paces.get(name, 1.0), paces.get(baseline, 1.0))
    return LOOP_CLOCK if worst > LAUNCH_BOUND_RATIO else DEVICE_CLOCK


class Paced:
    """A GPU comparison whose every path is read against the baseline on the clock `pair_clock`
    picks: its loop's variant where that pair runs launch-bound in the loop, else its device
    time's. What `fastest_call` and the trust rule read (variants, baseline, flags: each path's
    own clock's, the baseline's from every clock in use)."""

    def __init__(self, device: object, loop: object) -> None:
        self.device, self.loop = device, loop
        self.baseline = device.baseline  # type: ignore[attr-defined]
        self.paces = loop_over_device(device, loop)
        self.clocks = {name: pair_clock(self.paces, name, self.baseline)
                       for name in device.variants}  # type: ignore[attr-defined]

    def _source(self, name: str) -> object:
        looped = getattr(self.loop, "variants", {})
        return self.loop if self.clocks.get(name) == LOOP_CLOCK and name in looped else self.device

    @property
    def variants(self) -> dict:
        return {name: self._source(name)[name] for name in self.clocks}  # type: ignore[index]

    def __getitem__(self, name: str) -> object:
        return self._source(name)[name]  # type: ignore[index]

    def flags(self, case: str = "") -> list[dict]:
        used = {clock for name, clock in self.clocks.items() if name != self.baseline}
        found = []
        for clock, source in ((DEVICE_CLOCK, self.device), (LOOP_CLOCK, self.loop)):
            if clock not in used or not hasattr(source, "flags"):
                continue
            for flag in source.flags(case):  # type: ignore[attr-defined]
                names = [n for n in self.clocks if isinstance(flag, Mapping) and _other(flag, [n])]
                if not names or any(n == self.baseline or self.clocks[n] == clock for n in names):
                    found.append(flag)
        return found


def call_kind(call: str) -> str:
    """A recorded call without the clock it was taken on ('torch.jit.script (time in a loop)':
    'torch.jit.script'): what a page and a reproduce run must share. A tie recorded before ties
    were named so ('within 2% of eager', '<a> and <b> within 2% of each other') reads as the tie
    it was (TIE_WITH_EAGER, '<a> and <b> tie', the names sorted)."""
    for clock in (LOOP_CLOCK, DEVICE_CLOCK, "time"):
        if call.endswith(f" ({clock})"):
            call = call[: -len(clock) - 3]
            break
    if call == f"within {100 * FASTEST_BAND:.0f}% of eager":
        return TIE_WITH_EAGER
    for ending in (f" within {100 * FASTEST_BAND:.0f}% of each other", _TIE_OF):
        if call.endswith(ending) and " and " in call:
            return " and ".join(sorted(call[: -len(ending)].split(" and ", 1))) + _TIE_OF
    return call


def speed_call(comparison: object, correct_on_all: Sequence[str], loop: object | None = None) -> SpeedCall:
    """The fastest path correct on every layout, called on the clock that sets the pace.

    Where `loop` was timed (`export_traps.timed_loop`: some path on the GPU clock is
    launch-bound by the harness's probe), each path is read against eager on the clock PACE_RULE
    picks (`Paced`): the loop's wall time where that pair runs launch-bound in the loop, else
    device time; the loop's own call is said beside it where it differs. Elsewhere on the
    comparison's own clock (device time, or the CPU's). A path is named fastest only where it
    beats eager and the runner-up by `ratio_call` (`fastest_call`: the rounds' IQR as printed
    clear of the +-2% band; where they cross its edge, EDGE_WITH_EAGER; otherwise a tie, within
    +-2% or within the rounds' noise) and where the trust rule lets its ratio be stated (`own_flags`):
    otherwise 'none resolved' and why. The page and reproduce.py 07 call it by this
    one function on the same two timings (review 2026-12-04m item 1: the 19:20 page called
    torch.jit.script 0.84x on its loop, where eager ran 1.16x its device time, and 3 fresh runs
    called within 2%)."""
    decided = comparison if loop is None else Paced(comparison, loop)
    name, call = fastest_call(decided, correct_on_all)
    if loop is None:
        clock = DEVICE_CLOCK if getattr(comparison, "host_column", False) else "time"
    else:
        clock = decided.clocks.get(name, DEVICE_CLOCK)  # type: ignore[attr-defined]
    variant = decided[name]  # type: ignore[index]
    why = _held_back(decided, name) if call == name else ""
    of = "time in a loop" if clock == LOOP_CLOCK else clock
    if why:
        call = f"{NOT_RESOLVED} ({name} held back)"
        sentence = (f"no path correct on all layouts is called fastest: {name} ran {variant.ratio:.2f}x of "
                    f"eager's {of} (IQR {variant.ratio_q25:.2f}-{variant.ratio_q75:.2f}), {why}")
    elif call == name:
        sentence = f"fastest path correct on all layouts: {name}, {stated_brief(decided, name)} of eager's {of}"
    else:  # a tie or the band's edge: by the rule, no path beats the other (review 2026-12-04m item 1)
        sentence = (f"no path correct on all layouts is called fastest: {'a ' if call == TIE_WITH_EAGER else ''}{call} ({name} "
                    f"{variant.ratio:.2f}x of eager's {of}, IQR {variant.ratio_q25:.2f}-{variant.ratio_q75:.2f}: "
                    f"{tie_reason(decided, name, call)})")
    if loop is not None:
        paces = decided.paces  # type: ignore[attr-defined]
        sentence += (f". The clock: {PACE_RULE}; loop per call over device time: "
                     + ", ".join(f"{n} {r:.2f}x" for n, r in paces.items()))
        alone, alone_call = fastest_call(loop, correct_on_all)
        if call_kind(alone_call) != call_kind(call) and alone in getattr(loop, "variants", {}):
            sentence += (f"; the loop alone would call: {alone_call} ({alone} {stated_brief(loop, alone)}), "
                         f"not taken: under {LAUNCH_BOUND_RATIO:g}x a loop's excess moves between processes")
        call += f" ({clock})"
    elif call == name or call.startswith(NOT_RESOLVED):
        sentence += host_pace(comparison, name)
    return SpeedCall(name, call, sentence, clock)


def launch_at_most(comparison: object, loop: object | None) -> dict[str, float]:
    """Each path's host launch as a page may show it beside a timed loop, as chapter 02 shows it
    (its `launch_shown`): the probe's figure capped at the loop's per-call time (a call cannot take
    longer to launch than a loop of them takes per call: the 19:20 H200 page printed eager's
    launch at 602 us beside a loop of 516 us a call, review 2026-12-04m item 5). Without a loop,
    the probe's figures as they are."""
    looped = getattr(loop, "variants", {}) if loop is not None else {}
    out = {}
    for name, variant in getattr(comparison, "variants", {}).items():
        host = getattr(variant.timing, "host_s", None)
        if host is None:
            continue
        out[name] = min(host, looped[name].timing.median_s) if name in looped else host
    return out


def bound_note(comparison: object, loop: object | None = None) -> str:
    """Which bound eager's call runs into, where the harness's probe says it is launch-bound: with
    a timed loop, what the loop measured ('the loop below ran 1.16x eager's device time: near
    launch-bound', chapter 02's rule), not the probe's figure, which can exceed the loop's
    per-call time (review 2026-12-04m item 5); without one, the probe's launch against the device
    time. What bounds the device time itself (far below the matmul ceiling on the H200) was not
    profiled, said as a hypothesis (review 2026-12-04l item 9). '' where eager is not launch-bound
    by the probe."""
    name = next((k for k in getattr(comparison, "variants", {}) if k.startswith("eager")), None)
    if name is None or not getattr(comparison[name].timing, "launch_bound", False):  # type: ignore[index]
        return ""
    timing = comparison[name].timing  # type: ignore[index]
    pace = loop_over_device(comparison, loop).get(name) if loop is not None else None
    if pace is not None:
        said = (f"{name} is launch-bound by the harness's probe; the loop below ran {pace:.2f}x {name}'s device "
                f"time: {pace_label(pace)} (chapter 02's rule). ")
    else:
        said = (f"{name} is launch-bound by the harness's probe: the host takes {format_seconds(timing.host_s)} to "
                f"launch a call the GPU runs in {format_seconds(timing.median_s)}. ")
    return said + ("Its device time is below the compute roof (the line above); what bounds it was not profiled "
                   "(hypothesis: cuDNN's kernels for a 3-channel first convolution reach neither roof)")


HOST_AT_MOST = "host launch, at most"  # the device table's launch column beside a timed loop
WALL_PER_CALL = "wall per call"        # the loop table's time column: wall clock, not device time


def _capped_host(table: tables.Table, comparison: object, loop: object) -> tables.Table:
    """The device-time table with its host-launch column capped at the loop's per-call time
    (`launch_at_most`) and named for it; as it is where the table has no such column."""
    if "host launch" not in table.columns:
        return table
    at = table.columns.index("host launch")
    capped = launch_at_most(comparison, loop)
    for row in table.rows:
        row[at] = capped.get(row[0], row[at])
    table.columns[at] = HOST_AT_MOST
    table.units = {(HOST_AT_MOST if k == "host launch" else k): u for k, u in table.units.items()}
    return table


def loop_table(loop: object, clock: str) -> tables.Table:
    """A loop of calls as a table: its time column is the wall clock per call, not device time,
    and the host-launch probe's column is left out (the loop's per-call time bounds the launch;
    the device table shows it capped): review 2026-12-04m item 5."""
    shown = comparison_table(loop, title=f"a loop of calls on {clock.removeprefix('CUDA events on ')}, "
                                         "wall clock per call")
    keep = [i for i, c in enumerate(shown.columns) if c != "host launch"]
    names = {"device time": WALL_PER_CALL, "median": WALL_PER_CALL}
    out = tables.Table(shown.title, [names.get(shown.columns[i], shown.columns[i]) for i in keep],
                       units={names.get(k, k): u for k, u in shown.units.items() if k != "host launch"})
    for row in shown.rows:
        out.add(*(row[i] for i in keep))
    out.notes, out.folded = list(shown.notes), list(shown.folded)
    return out


def worded(call: str) -> str:
    """A recorded call as this page words it (`call_kind`: a tie as a tie), its clock kept."""
    for clock in (LOOP_CLOCK, DEVICE_CLOCK, "time"):
        if call.endswith(f" ({clock})"):
            return f"{call_kind(call)} ({clock})"
    return call_kind(call)


def reproduced_calls(record: Mapping | None, clock: str) -> str:
    """What the reference's reproduce runs (fresh processes) called on `clock`, counted, from the
    record present ('; fresh processes (nvidia-h200's reproduce, 2026-12-04 19:20 UTC): within 2%
    of eager (time in a loop) in 3 of 3'): the page's call sits beside theirs (review 2026-12-04m
    item 1). '' without a record of that clock."""
    runs = [r for r in (record or {}).get("numbers") or [] if isinstance(r, Mapping)]
    calls = [worded(str((r.get("fastest_correct") or {}).get(clock))) for r in runs
             if (r.get("fastest_correct") or {}).get(clock)]
    if not calls:
        return ""
    when = str(record.get("recorded_at", ""))[:16].replace("T", " ")  # type: ignore[union-attr]
    counted = ", ".join(f"{c} in {calls.count(c)} of {len(calls)}" for c in dict.fromkeys(calls))
    return f"; fresh processes ({record.get('machine', 'the reference')}'s reproduce, {when} UTC): {counted}"  # type: ignore[union-attr]


def speed_record(speed: export_audit.Speed, loop: object | None) -> dict:
    """What the page records (key 'speed_call') and reproduce.py 07 records per run: the call per
    clock (`speed_call`) and the timings it is taken on (each path's time, ratio, rounds' IQR,
    the probe's launch; the loop's per call and over device time), so a page's call and a run's
    can be compared and re-derived (review 2026-12-04m item 1: the record kept only the call)."""
    def timings(comparison: object) -> dict:
        return {name: {"s": v.timing.median_s, "ratio": v.ratio, "iqr": [v.ratio_q25, v.ratio_q75],
                       "host_probe_s": getattr(v.timing, "host_s", None)}
                for name, v in getattr(comparison, "variants", {}).items()}
    out: dict = {"calls": {}, "timings": {}, "rule": PACE_RULE}
    for clock, comparison in speed.comparisons.items():
        paced = loop if clock != export_audit.CPU_CLOCK else None
        out["calls"][clock] = speed_call(comparison, speed.correct_on_all, paced).call
        out["timings"][clock] = timings(comparison)
        if paced is not None:
            paces = loop_over_device(comparison, paced)
            out["loop"] = {name: {**row, "over_device": paces.get(name)} for name, row in timings(paced).items()}
            out["loop_clock"] = clock
    return out


def speed_table(speed: export_audit.Speed, audit: export_audit.Audit, kept: object = None,
                flops: float | None = None, loop: object | None = None,
                record: Mapping | None | bool = None) -> Stack:
    """Each clock's comparison of the correct paths against eager, eager's FLOPs and share of the
    matmul ceiling (`ceiling_note`) and, where it is launch-bound, its bound (`bound_note`); the
    loop of calls timed where a GPU path is launch-bound (`export_traps.timed_loop`), its time
    column the wall clock per call (`loop_table`), the device table's launch capped at it
    (`launch_at_most`); the fastest path correct on every layout named only outside the +-2% band
    and where its ratio may be stated (`speed_call`; never a path wrong somewhere), beside what the
    reference's reproduce runs called on that clock (`reproduced_calls`; `record`: the reproduce
    record, read from results/ by default where a loop was timed, False: none); under the CPU
    clock's, eager timed again with malloc keeping freed memory when that was measured
    (`eager_allocator_kept`)."""
    shown = []
    for clock, comparison in speed.comparisons.items():
        paced = loop if clock != export_audit.CPU_CLOCK else None
        said = speed_call(comparison, speed.correct_on_all, paced)
        table = comparison_table(comparison, title=f"timed with {clock}")
        if paced is not None:
            table = _capped_host(table, comparison, paced)
        if ceiling_note(comparison, flops):
            table.note(ceiling_note(comparison, flops))
        if bound_note(comparison, paced):
            table.note(bound_note(comparison, paced))
        if clock == export_audit.CPU_CLOCK and allocator_kept_note(speed, kept):
            table.note(allocator_kept_note(speed, kept))
        table.note("median: pooled over every round; ratio: the median of the per-round ratios (each "
                   "round against eager's in that round), so the two need not divide exactly")
        shown.append(table)
        sentence = said.sentence
        decided: object = comparison
        if paced is not None:
            table = loop_table(paced, clock)
            decided = Paced(comparison, paced)
            found = reproduce_record() if record is None else record if isinstance(record, Mapping) else None
            sentence += reproduced_calls(found, clock)
            # why 2%: what fresh processes moved the called path's ratio by (review 2026-12-04n
            # 05-07 item 7; 2026-12-05o item 7: that path's, relative, not the most of any path)
            reason = band_reason(found, f"{said.name}'s")
            if reason:
                sentence += f"; {reason}"
        elif loop_note(comparison):
            table.note(loop_note(comparison))
        table.note(sentence)
        if said.name in getattr(decided, "variants", {}) and \
                stated_brief(decided, said.name) != stated_variant(decided, said.name):
            table.fold("why that ratio is not stated", stated_variant(decided, said.name))
        if paced is not None:
            shown.append(table)
    left_out = [r.path for r in audit.rows if r.artifact is not None and not r.correct_on_all
                and r.outcomes[NCHW].kind == CORRECT]
    if left_out:
        shown[-1].note("timed but not a candidate (wrong or refused on some layout): " + ", ".join(left_out))
    return Stack(*shown)


# ---------------------------------------------------------------------------------------
# Trap 1: the contiguous() that export drops


def dropped_table(dropped: export_traps.DroppedContiguous) -> tables.Table:
    """What each tracer recorded of the model's contiguous() call, and what each frozen path
    (frozen with an NCHW example) then did with the three layouts."""
    ops = {"torch.export": dropped.exported_ops[NCHW], "torch.jit.trace": dropped.traced_ops}
    data = dropped.audit.as_dict()
    rows, details = _outcome_rows(data["rows"])
    shown = tables.Table("frozen with an NCHW example", ["path", "ops recorded", *LAYOUTS],
                         marks=OUTCOME_MARKS)
    for row in rows:
        recorded = next((" -> ".join(v) for k, v in ops.items() if row[0].startswith(k)), "-")
        shown.add(row[0], recorded, *row[2:])
    for lay, outcomes in dropped.own_layout.items():  # the other exports, fed their own layout too
        shown.add(f"torch.export, {lay} example",
                  f"{' -> '.join(dropped.exported_ops[lay])} (contiguous() "
                  f"{'kept' if dropped.kept_by_export(lay) else 'dropped'})",
                  *(shown_kind(outcomes[name].kind) for name in LAYOUTS))
        details += [f"torch.export, {lay} example, on {name}: {o.detail}" for name, o in outcomes.items() if o.detail]
    shown.fold("every graph, and why a path refused", "\n".join(dropped.lines() + details))
    return shown


_STRIDES_LINE = re.compile(r"^(?P<device>[^,]+), (?P<example>.+?) example: eager conv output strides "
                           r"(?P<eager>\([^)]*\)), export recorded (?P<export>\([^)]*\))")


def _strides_rows(lines: Sequence[str], where: str) -> list[list[str]]:
    rows = []
    for line in lines:
        found = _STRIDES_LINE.match(line)
        if found is None:
            rows.append([where, line, "", "", ""])
            continue
        same = "same" if found["eager"] == found["export"] else "DIFFERENT"
        rows.append([f"{found['device']} ({where})", found["example"], found["eager"], found["export"], same])
    return rows


def conv_strides_table(conv_strides: export_traps.ConvStrides, reference: object) -> tables.Table:
    """Eager's first-convolution output strides beside what torch.export recorded, here and (read
    back from its recorded lines) on the reference GPU, each row saying which."""
    shown = tables.Table("the first convolution's output strides",
                         ["device", "example", "eager", "export recorded", "agree"],
                         _strides_rows(conv_strides.lines(), "here"),
                         marks={"DIFFERENT": OUTCOME_MARKS[WRONG]})
    if isinstance(reference, Recorded) and reference:
        ours = {(r[1], r[2], r[3]) for r in shown.rows}
        agreeing = []
        for row in _strides_rows(list(reference.value), reference.label):  # type: ignore[arg-type]
            (agreeing.append(row[1]) if (row[1], row[2], row[3]) in ours else shown.add(*row))
        if agreeing:
            shown.note(f"the reference's {', '.join(agreeing)} row: the same as here")
    if conv_strides.mismatched:
        shown.note(f"On {conv_strides.device} the exported graph assumes a layout eager did not produce "
                   f"for the {', '.join(conv_strides.mismatched)} example.")
    return shown


# ---------------------------------------------------------------------------------------
# Trap 2 and 3


FASTER, SLOWER, NO_DIFFERENCE = "faster", "slower", "no measurable difference"
# A ratio within this band of 1 is not called faster or slower, however tight its rounds: the
# power-capped H200 repeats within ~1% (harness parity), and fresh processes move a device-time
# ratio by less than half of it (`process_spread` prints by how much, from the reproduce record,
# for the path a call is about).
NO_CALL_BAND = 0.02
WITHIN_BAND = f"within +-{100 * NO_CALL_BAND:.0f}% (too small to call)"
# the rounds cross the band's edge: neither a call nor a tie (review 2026-12-04n 05-07 item 1: the
# H200's torch.jit.script at 0.982x, rounds 0.98-0.98, sat on a 2% edge decided by the median alone)
AT_EDGE = "at the band's edge (not called)"  # the +-2% band: the line that prints it names it


def _hundredths(value: float) -> int:
    """A ratio as the page prints it ('0.98x'), in hundredths: the call and the printed rounds
    cannot disagree (review 2026-12-04n 05-07 item 1: ratio_call(0.979, 0.980, 0.9795) said
    'faster' of a ratio printed 0.98x)."""
    return round(100 * float(f"{value:.2f}"))


def ratio_call(low: float | None, high: float | None, ratio: float | None = None) -> str:
    """A time ratio's call from its rounds' IQR (low-high) as printed (two decimals), never from
    the median alone: 'faster' where the whole IQR lies below the +-2% band (q75 under 0.98x),
    'slower' the mirror (q25 over 1.02x), 'within +-2% (too small to call)' where the whole IQR
    lies inside the band on one side of 1x, 'no measurable difference' where the rounds reach 1x
    (or there are none), else AT_EDGE: the rounds cross the band's edge, so no call and no tie
    (review 2026-12-04n 05-07 item 1). `ratio` is kept for the callers' form; the rounds decide.
    The reproduce check calls Trap 2 and 3 by it (`reproduce.decision`), the page prints Trap
    2's by it, and the speed table names a fastest path by it (`fastest_call`)."""
    if low is None or high is None:
        return NO_DIFFERENCE
    if low <= 1 <= high:
        return NO_DIFFERENCE
    band, q25, q75 = round(100 * NO_CALL_BAND), _hundredths(low), _hundredths(high)
    if q75 < 100 - band:
        return FASTER
    if q25 > 100 + band:
        return SLOWER
    if 100 - band <= q25 and q75 <= 100 + band:
        return WITHIN_BAND
    return AT_EDGE


def process_spread(record: Mapping | None, about: str | None = None) -> tuple[float, str] | None:
    """How far one device-time ratio moved between the fresh processes of a reproduce record,
    relative (max / min - 1 over its runs), and whose: `about`'s ('torch.jit.script's', "Trap
    2's", "C15d's traced model's": the path a call is about), or without it the most any ratio
    moved (each path's on the speed table's GPU clock, Trap 2's, C15d's traced model's). None
    without two runs on a GPU, or where `about` was not timed in two. What the +-2% band is set
    against (review 2026-12-04n 05-07 items 1 and 7; review 2026-12-05o 05-07 item 7: the most
    of any path, absolute, took torch.jit.trace's 1.23x into the reason for a tie at 0.98x)."""
    runs = [r for r in (record or {}).get("numbers") or [] if isinstance(r, Mapping)
            and str(r.get("device", "")).startswith("cuda")]
    seen: dict[str, list[float]] = {}
    for run in runs:
        speed = run.get("speed") or {}
        for clock, timed in (speed.get("timings") or {}).items():
            if clock == export_audit.CPU_CLOCK or not isinstance(timed, Mapping):
                continue
            for name, row in timed.items():
                if not name.startswith("eager") and isinstance(row, Mapping) and row.get("ratio"):
                    seen.setdefault(f"{name}'s", []).append(float(row["ratio"]))
        if (run.get("trap2_nchw_input") or {}).get("ratio"):
            seen.setdefault("Trap 2's", []).append(float(run["trap2_nchw_input"]["ratio"]))
    evidence = [e.get("C15d") or {} for e in (record or {}).get("evidence") or [] if isinstance(e, Mapping)]
    traced = [float(e["trace_transposed_ratio"]) for e in evidence
              if e.get("trace_transposed_ratio") and str(e.get("device", "")).startswith("cuda")]
    if traced:
        seen["C15d's traced model's"] = traced
    spreads = {who: max(v) / min(v) - 1 for who, v in seen.items() if len(v) >= 2}
    if about is not None:
        return (spreads[about], about) if about in spreads else None
    if not spreads:
        return None
    who = max(spreads, key=spreads.get)  # type: ignore[arg-type]
    return spreads[who], who


def band_reason(record: Mapping | None, about: str | None = None) -> str:
    """Why the band is 2%, from the reproduce record present: '+-2% band: 2.0x the 1.0%
    torch.jit.script's ratio moved (max / min) between fresh processes (reproduce 19:20 UTC)'
    (review 2026-12-04n 05-07 item 7: the page stated the band, not why), the spread of the
    ratio the call is about (`about`, process_spread); where the band is not twice that spread,
    it says a call near its edge may not reproduce. '' without such a record."""
    found = process_spread(record, about)
    if found is None:
        return ""
    spread, who = found
    when = str(record.get("recorded_at", ""))[11:16]  # type: ignore[union-attr]
    said = f"+-{100 * NO_CALL_BAND:.0f}% band: "
    said += (f"{NO_CALL_BAND / spread:.1f}x the " if spread else "over the ")
    said += f"{100 * spread:.1f}% {who} ratio moved (max / min) between fresh processes (reproduce {when} UTC)"
    return said + ("" if 2 * spread <= NO_CALL_BAND else ": under twice it, a call near its edge may not reproduce")


HELD_BACK = "held back"  # a call by the rounds that a flagged timing could carry across 1x


def _trap2_decided(comparison: object, loop: object | None) -> object:
    """What Trap 2's call reads: the device-time comparison, or, where a loop was timed, the pair
    on the clock PACE_RULE picks (`Paced`), the speed table's rule."""
    return comparison if loop is None else Paced(comparison, loop)


def trap2_decision(comparison: object | None, name: str = "NCHW input", loop: object | None = None) -> str:
    """Trap 2's call as the page prints it and reproduce.py 07 records it: `ratio_call` (the
    rounds' range against 1x, a +-2% band), and a 'faster' or 'slower' that a flagged timing
    could carry across 1x (the trust rule, `stated_variant`) as '<call> by the rounds, held
    back'; where a loop of the two calls was timed (`DeclaredNCHW.loop`), on the clock the
    speed table's rule picks (review 2026-12-04m item 10: 440 against 445 us of device time
    was called while the probe read both launch-bound). NO_DIFFERENCE without a timing."""
    if comparison is None or name not in getattr(comparison, "variants", {}):
        return NO_DIFFERENCE
    decided = _trap2_decided(comparison, loop)
    variant = decided[name]  # type: ignore[index]
    call = ratio_call(variant.ratio_q25, variant.ratio_q75, variant.ratio)
    if call in (FASTER, SLOWER) and _VETO in stated_variant(decided, name):
        return f"{call} by the rounds, {HELD_BACK}"
    return call


def trap2_call(comparison: object | None, name: str = "NCHW input", loop: object | None = None) -> str:
    """Trap 2's call on the page (`trap2_decision`, the rule the reproduce check records), with
    the clock it was taken on where a loop was timed. The CPU page printed 'NCHW input 1.10x
    (1.02-1.16)', flagged, with no call and no band (review 2026-12-04k item 10). '' without a
    timing."""
    if comparison is None or name not in getattr(comparison, "variants", {}):
        return ""
    call = trap2_decision(comparison, name, loop)
    if call.endswith(HELD_BACK):
        return f"the call: {call}: a flagged timing could carry it across 1x"
    said = f"the call: {call} (the rounds against 1x, +-{100 * NO_CALL_BAND:.0f}% band"
    if loop is None:
        return said + ")"
    # the clock in three words; the loop and the rule folded (`trap2_loop_fold`): the H200 page
    # had 25 core words left under its 1,500
    return said + f", {_trap2_decided(comparison, loop).clocks.get(name, DEVICE_CLOCK)})"  # type: ignore[attr-defined]


def trap2_loop_fold(comparison: object, loop: object) -> str:
    """Trap 2's loop of calls in one folded line: each input's wall time per call, over its
    device time, and the rule that picked the clock."""
    paces = loop_over_device(comparison, loop)
    return ("a loop of calls, wall clock per call: " + ", ".join(
        f"{name} {format_seconds(v.timing.median_s)} ({paces[name]:.2f}x its device time)"
        for name, v in getattr(loop, "variants", {}).items() if name in paces)
        + f"; the clock: {PACE_RULE.replace('eager', 'the channels_last input')}")


FIRST_CONV = "torch.export first conv output"  # the line of DeclaredNCHW.lines() that differs by device


def _strides_only(layout: str) -> str:
    """'(64, 32, 64, 64), strides (131072, ...): contiguous NCHW' without its shape (the row says it)."""
    return layout.split(", strides ", 1)[1] if ", strides " in layout else layout


def _beside_eager(export_layout: str, eager_layout: str | None) -> str:
    """Export's recorded first-convolution layout with what eager's convolution returned beside it:
    '; eager: the same' or eager's strides and 'DIFFERENT' (review 2026-12-04i item 9)."""
    if eager_layout is None:
        return export_layout
    if _strides_only(eager_layout) == _strides_only(export_layout):
        return f"{export_layout}; eager: the same"
    return f"{export_layout}; eager returned {_strides_only(eager_layout)}: DIFFERENT"


def declared_table(declared: export_traps.DeclaredNCHW, device: object, reference: object = None) -> Stack:
    """What the channels_last model's artifacts declare, frozen with an NCHW example, export's
    recorded first-convolution output set beside what eager's returned; the sentence that says what
    export's recorded layout means on this device, and what the reference GPU recorded for the
    first convolution's output when it recorded something else (read from its record, never typed
    into the prose: review 2026-12-03h item 10); the eager timing."""
    rows = [line.split(": ", 1) for line in declared.lines()]
    named = dict(row for row in rows if len(row) == 2)
    here, eager = named.get(FIRST_CONV), named.get(export_traps.EAGER_FIRST_CONV)
    rows = [[row[0], _beside_eager(row[1], eager)] if row[0] == FIRST_CONV else row
            for row in rows if row[0] != export_traps.EAGER_FIRST_CONV]
    there = there_eager = None
    if isinstance(reference, Recorded) and reference:
        recorded = dict(line.split(": ", 1) for line in reference.value if ": " in line)  # type: ignore[attr-defined]
        there, there_eager = recorded.get(FIRST_CONV), recorded.get(export_traps.EAGER_FIRST_CONV)
    if declared.export_input == declared.trace_input:  # one row for what both declare
        rows = [["torch.export and torch.jit.trace input", declared.export_input]] + [
            row for row in rows if row[0] not in ("torch.export input", "torch.jit.trace input")]
    shown = tables.Table("", ["artifact", "declares"], rows)  # the heading above names the model and example
    shown.note(declared.export_layout_sentence(device))
    if there and there != here:  # its strides only: the shape is the reference's example's
        shown.note(f"{reference.label}: export {_beside_eager(_strides_only(there), there_eager)}")  # type: ignore[union-attr]
    timed = None
    loop = getattr(declared, "loop", None)
    if declared.eager is not None:
        timed = comparison_table(declared.eager, "eager, channels_last model")
        if loop is not None:  # the launch capped at the loop's per call; the loop folded
            timed = _capped_host(timed, declared.eager, loop)
        said = trap2_call(declared.eager, loop=loop)
        timed.note("ratio: median of the rounds' ratios" + (f"; {said}" if said else ""))
        if loop is not None:
            timed.fold("the loop of calls", trap2_loop_fold(declared.eager, loop))
    return Stack(shown, timed)


def ort_table(ort_layout: export_traps.OrtLayout, status: Mapping | None = None,
              reference: object = None) -> Stack:
    """The four ONNX Runtime sessions: layout nodes in each optimised graph and the result
    against eager, and what kept the GPU's preference from running; then their interleaved
    timing on the provider's clock."""
    columns = ["declared input", "layout preference", *export_traps.LAYOUT_NODES, "all nodes", "result"]
    shown = tables.Table(f"provider: {ort_layout.provider}; preference: {ort_layout.preference_name}",
                         columns, marks=OUTCOME_MARKS)
    for s in ort_layout.sessions:
        shown.add(s.declared, s.preference, *(s.node_counts.get(op, 0) for op in export_traps.LAYOUT_NODES),
                  sum(s.node_counts.values()), shown_kind(s.outcome.kind))
    missing = missing_cuda_provider(status)
    if missing and ort_layout.provider == "CPU":
        shown.note(f"the CUDA provider's prefer_nhwc did not run: it needs {missing}"
                   + not_on_the_reference(reference, status))
    timed = comparison_table(ort_layout.comparison) if ort_layout.comparison is not None else None
    if timed is not None and layout_preference_call(ort_layout):
        timed.note(layout_preference_call(ort_layout))
    if timed is not None and cpu_rate_note(ort_layout):
        timed.note(cpu_rate_note(ort_layout))
    return Stack(shown, timed)


# ---------------------------------------------------------------------------------------
# TensorRT, documentation, ONNX Runtime's placement


@dataclass
class TensorRT:
    """What this machine has for TensorRT, and what each TensorRT path did (or why it was skipped)."""

    status: dict
    torch_tensorrt: export_traps.TensorRTRun
    ort_tensorrt: export_traps.OrtTensorRTRun

    def as_dict(self) -> dict:
        """The recorded payload (key 'tensorrt'): status and the two runs as text."""
        return {"status": self.status, "run": repr(self.torch_tensorrt), "ort_tensorrt": repr(self.ort_tensorrt)}

    def table(self) -> tables.Table:
        names = {"cuda": "CUDA GPU", "tensorrt": "tensorrt", "torch_tensorrt": "torch_tensorrt",
                 "ort_tensorrt_provider_listed": "ONNX Runtime lists a TensorRT provider",
                 "ort_cuda_provider_listed": "ONNX Runtime lists a CUDA provider"}
        said = [(name, repr(run)) for name, run in (("Torch-TensorRT", self.torch_tensorrt),
                                                      ("ONNX Runtime's TensorRT provider", self.ort_tensorrt))]
        shown = tables.Table("TensorRT here", ["", "found"],  # the heading above: detected, not assumed
                             [[name, text.removeprefix(f"{name} ")] for name, text in said])  # named once
        shown.fold("what was looked for", "\n".join(
            f"{names.get(k, k)}: {'not installed' if v is None else v}" for k, v in self.status.items()))
        return shown

    def __repr__(self) -> str:
        return str(self.table())

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


def tensorrt(model: nn.Module, example: torch.Tensor, onnx_path: str | Path) -> TensorRT:
    """Detect TensorRT, and run Torch-TensorRT and ONNX Runtime's TensorRT provider where they load."""
    return TensorRT(export_traps.tensorrt_status(), export_traps.run_torch_tensorrt(model, example),
                    export_traps.run_ort_tensorrt(model, example, onnx_path))


DOCUMENTED_NAMES = {"tensorrt_engine": "where an engine runs",
                    "torch_tensorrt": "where Torch-TensorRT runs the rest",
                    "tensorrt_input_binding": "what an engine is told of an input",
                    "torch_tensorrt_inputs": "what Torch-TensorRT does to an input",
                    "ort_tensorrt_provider": "where ONNX Runtime's TensorRT provider falls back"}


def documented_table() -> tables.Table:
    """The documentation C15b and C15c are judged from where no TensorRT runs: the questions
    visible, each answer and its source folded (read, cited, not measured)."""
    shown = tables.Table("read from documentation, not measured", ["question"],
                         [[DOCUMENTED_NAMES.get(key, key)] for key in ch07.DOCUMENTED])
    shown.fold("what the documentation says, and where", "\n\n".join(
        f"{DOCUMENTED_NAMES.get(k, k)}: {t}" for k, t in ch07.DOCUMENTED.items()))
    return shown


def missing_cuda_provider(status: Mapping | None = None) -> str:
    """What keeps ONNX Runtime's GPU paths (the CUDA provider's prefer_nhwc, the CPU-fallback
    cost) from running here: a GPU, or (on a GPU with the CPU build of onnxruntime, as on the
    reference H200) onnxruntime-gpu; '' where the CUDA provider is listed."""
    status = export_traps.tensorrt_status() if status is None else status
    if status["ort_cuda_provider_listed"]:
        return ""
    if status["cuda"]:
        return "onnxruntime-gpu (this onnxruntime is the CPU build: it has no CUDA provider)"
    return "a GPU and onnxruntime-gpu"


def not_on_the_reference(reference: object, status: Mapping | None = None) -> str:
    """On a machine without a GPU, whether the reference GPU's record (its 'tensorrt' payload)
    shows that it could not run ONNX Runtime's CUDA paths either (a GPU, no CUDA provider):
    then no copy of the chapter has measured them, and the note says so. '' otherwise."""
    status = export_traps.tensorrt_status() if status is None else status
    if status["cuda"] or not isinstance(reference, Recorded) or not reference:
        return ""
    theirs = dict(reference.value).get("status", {})  # type: ignore[arg-type]
    if theirs.get("cuda") and not theirs.get("ort_cuda_provider_listed"):
        return f"; nor did it run on the reference ({reference.machine}: no CUDA provider there)"
    return ""


def placement_table(placement: Mapping[str, int], fallback: object | None,
                    status: Mapping | None = None, reference: object = None) -> Stack:
    """Nodes per ONNX Runtime execution provider (from its own profile) and, with the CUDA
    provider, the whole model on the CPU provider against it; without it, what is missing
    (and, from the reference's record, whether it ran there)."""
    shown = tables.Table("where ONNX Runtime ran each node", ["execution provider", "nodes"],
                         [[k, v] for k, v in placement.items()])
    if fallback is None:
        shown.note(f"what a CPU fallback costs was not measured: it needs "
                   f"{missing_cuda_provider(status) or 'the CUDA provider to load'}"
                   + not_on_the_reference(reference, status))
        return Stack(shown)
    return Stack(shown, comparison_table(fallback, "the whole model on the CPU provider"))  # type: ignore[arg-type]


def noncontiguous_trace_table(form: Mapping) -> tables.Table:
    """The seed's kind of trace (`export_traps.trace_noncontiguous_example`): traced with a
    non-contiguous view, what the graph recorded and what the module did with the three layouts."""
    shown = tables.Table(f"traced with {form['expression']}, not contiguous",
                         ["graph records", *LAYOUTS], marks=OUTCOME_MARKS)
    shown.add(f"{tuple(form['recorded_stride'])}; contiguous() "
              f"{'kept' if form['keeps_contiguous'] else 'dropped'}", *(form["outcomes"][lay] for lay in LAYOUTS))
    return shown


def pointer_binding(audit: export_audit.Audit) -> dict | None:
    """C15b's measured analogue: the audit's ONNX Runtime path fed a bound data pointer and a
    shape, no strides (as a TensorRT engine is bound), with its outcome per layout; None where
    it was not built."""
    row = next((r for r in audit.rows if "IOBinding" in r.path and r.artifact is not None), None)
    if row is None:
        return None
    return {"path": row.path, "outcomes": {lay: o.kind for lay, o in row.outcomes.items()}}


@dataclass(frozen=True)
class Folded:
    """One line a learner opens on request: a <details> in HTML, 'summary: text' as text."""

    summary: str
    text: str

    def __str__(self) -> str:
        return f"{self.summary}: {self.text}"

    def _repr_html_(self) -> str:
        return (f"<details><summary>{html.escape(self.summary)}</summary>"
                f"<div>{html.escape(self.text)}</div></details>")


def not_judged() -> Folded:
    """The seed sentence no C15 letter judges, and why, folded under the cards (review
    2026-12-04k item 10: its 'TensorRT cannot enable efficient convolution kernels' was judged by
    none of C15a-d and the page did not say so)."""
    said = ch07.NOT_JUDGED
    return Folded(f"not judged: the seed's \"{said['seed_text']}\"",
                  f"\"{said['says']}\" is {said['why']}.")


def claim_cards(claim: Callable[[str], object]) -> Stack:
    """The four claims of the seed's sentence, each card with what decides it, and the seed's
    next sentence, judged by none of them, with why (`not_judged`)."""
    return Stack(*(claim(c.id) for c in ch07.CLAIMS), not_judged())


def ratio_and_spread(comparison: object | None, name: str) -> tuple[float | None, list[float] | None]:
    """A variant's ratio and its per-round spread [q25, q75], or (None, None) without a comparison."""
    if comparison is None:
        return None, None
    variant = comparison[name]  # type: ignore[index]
    return variant.ratio, [variant.ratio_q25, variant.ratio_q75]


def preference_on(ort_layout: export_traps.OrtLayout) -> export_traps.LayoutSession:
    """Trap 3's session that the takeaway quotes: the NCHW-declared model, preference on."""
    return next(s for s in ort_layout.sessions if s.declared == "NCHW" and s.preference == "on")


def recorded_payloads(audit: export_audit.Audit, dropped: export_traps.DroppedContiguous,
                      conv_strides: export_traps.ConvStrides, ort_layout: export_traps.OrtLayout | None,
                      trt: TensorRT, declared: export_traps.DeclaredNCHW | None = None,
                      speed: export_audit.Speed | None = None, loop: object | None = None,
                      device: object = None) -> dict[str, object]:
    """What the chapter keeps under each key (results/<machine>.json): the keys and payload
    shapes the reference run was recorded with, Trap 2's declared layouts ('declared_nchw',
    which the CPU page reads back for the reference GPU's first convolution) and the speed
    table's calls with the timings they are taken on ('speed_call', `speed_record`: what
    reproduce.py 07 compares its runs' calls with, review 2026-12-04m item 1). The optional
    sections' payloads (Trap 3's `ort_layout`, the speed table's) are written only where a room ran
    them; results are kept key by key, so an earlier run's stay in the file (nothing reads them but
    the reference's record, whose run has every section)."""
    kept = {"audit": audit.as_dict(), "dropped_contiguous": dropped.lines(),
            "conv_strides": conv_strides.lines(), "tensorrt": trt.as_dict()}
    if ort_layout is not None:
        kept["ort_layout"] = ort_layout.lines()
    if declared is not None:
        kept["declared_nchw"] = declared.lines()
    if speed is not None:
        kept["speed_call"] = {**speed_record(speed, loop), "device": None if device is None else str(device)}
    kept["trap_calls"] = trap_calls(declared, ort_layout, device)
    return kept


def trap_calls(declared: export_traps.DeclaredNCHW | None, ort_layout: export_traps.OrtLayout | None,
               device: object = None) -> dict:
    """Trap 2's and Trap 3's calls as the page prints them (`trap2_decision`, the quiz's
    `layout_preference_effect`), keyed as reproduce.py 07 records its runs' (review 2026-12-04m
    item 1: the runs were compared only with each other), and the device they ran on."""
    calls: dict = {"device": None if device is None else str(device)}
    if declared is not None:
        calls["trap2_nchw_input"] = trap2_decision(getattr(declared, "eager", None),
                                                   loop=getattr(declared, "loop", None))
    comparison = getattr(ort_layout, "comparison", None)
    if comparison is not None and "NCHW declared, on" in comparison.variants:
        calls["trap3_preference_on"] = layout_preference_effect(ort_layout)
    return calls
