"""Whether the reference GPU's verdict on a timing-based claim reproduced in fresh runs.

The ledger's reference column is one recording. A verdict that rests on a timing is trusted
when it reproduces: the same verdict in 3 of 3 fresh processes (the curriculum's rule;
`benchmarks/reproduce.py` runs them and writes results/reproduce/<machine>-<chapter>.json:
per claim each run's verdict and whether they agree, `all_agree`, `numbers_agree`). This
module reads that record beside the recorded verdict, so the ledger never shows a verdict as
plainly confirmed while its fresh runs said otherwise (review 2026-12-03g item 3: C7 shown
"confirmed" while its three runs judged three forms).

How a run is compared with the verdict: as `benchmarks/reproduce.py` compares runs with each
other (the outcome, what a 'depends' depends on, and the form judged), each run judged again
by today's rule from the evidence the record keeps, as the ledger judges the recorded verdict
itself (`tables.judged_today`), so both sides are read by one rule.

Which is older: records written since `recorded_at` was added carry it, and the fold says
whether it came before or after the verdict's own `recorded_at` in results/<machine>.json;
earlier records carry no date (a file's modification time is the checkout's, not the run's).
Either way the content decides whether the runs agree: a record whose evidence today's rule
cannot read was measured by an older chapter, so it predates the verdict; otherwise the runs
are compared as above. The dates then decide what the agreement is worth (review 2026-12-04i,
08-09-99 item 8: 05's reproduce, 2026-12-03 22:17, was counted as reproducing a verdict of
2026-12-04 03:40 recorded on later sources). A record older than its verdict by more than one
device call (SAME_CALL_S, the device's per-command limit) cannot come from the call that
recorded the verdict: its agreeing runs are marked EARLIER_SOURCES, "reproduced on earlier
sources", and not counted as a reproduction. A record timed minutes before the verdict
in the same device call, as 04's and 08's are so their pages can quote them, counts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from labkit.claims.core import ClaimError, Verdict
from labkit.claims.registry import REGISTRY
from labkit.core import discovery, results

REQUIRED_RUNS = 3  # the curriculum: the same verdict in 3 of 3 fresh runs
RECORD_FOLDER = "reproduce"  # under the repository's results/ folder

REPRODUCED, NOT_REPRODUCED, NO_RECORD, PREDATES, TOO_FEW, UNREADABLE = (
    "reproduced", "not reproduced", "no record", "predates", "too few runs", "unreadable")
EARLIER_SOURCES = "reproduced on earlier sources"  # agreeing runs, recorded before the verdict's call
# One device command runs at most 600 s (benchmarks/rerecord_calls.sh chains calls of under
# 600 s): a reproduce record older than its verdict by more than this came from an earlier call,
# so from sources the verdict's own run may have changed.
SAME_CALL_S = 600
# the verdicts, not every number a chapter printed beside them (review 2026-12-04m 08-09-99 item
# 13d: the C23/C25 rows already said so, the headline did not)
ALL_REPRODUCED = "Every timing-based reference verdict reproduced 3 of 3 (the verdict, not the chapter's numbers)."


class ReproduceRecordError(ClaimError):
    """A reproduce record that cannot be read: not JSON, or lacking what reproduce.py writes."""


@dataclass(frozen=True)
class Reproduction:
    """One reference verdict beside its reproduce record.

    status: one of REPRODUCED, NOT_REPRODUCED, NO_RECORD, PREDATES, TOO_FEW, UNREADABLE,
    EARLIER_SOURCES.
    text: the mark shown beside the verdict ('reproduced 3 of 3', 'NOT reproduced (runs: ...)').
    detail: which file and fields were read, and each run's verdict (folded in the ledger).
    record_at / verdict_at: the record's and the verdict's recorded_at ('' when not dated), so a
    headline can say which record is older than its verdict (`headline`).
    """

    claim_id: str
    status: str
    text: str
    detail: str
    runs: tuple[str, ...] = ()  # each run against the verdict: 'the same', or how it differs
    record_at: str = ""
    verdict_at: str = ""
    cut_short: str = ""  # '2 of 3 runs asked, cut short' where the record is incomplete, else ''

    @property
    def reproduced(self) -> bool:
        """Only a full reproduction lets the verdict stand as plainly shown."""
        return self.status == REPRODUCED

    @property
    def earlier(self) -> bool:
        """The runs agreed, on sources older than the verdict's (EARLIER_SOURCES): said in the
        headline, not listed among the verdicts whose runs did not reproduce."""
        return self.status == EARLIER_SOURCES

    @property
    def disagrees(self) -> bool:
        """The fresh runs gave another verdict than the one recorded."""
        return self.status == NOT_REPRODUCED


def record_path(machine: str, chapter: str) -> Path:
    """results/reproduce/<machine>-<chapter>.json, as `benchmarks/reproduce.py` names it."""
    return results.repository_results_dir() / RECORD_FOLDER / f"{machine}-{chapter}.json"


def load_record(path: Path) -> dict | None:
    """A reproduce record, or None if there is none; a damaged one raises ReproduceRecordError."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise ReproduceRecordError(f"{path} is not valid JSON ({exc}); run benchmarks/reproduce.py "
                                   "again or delete it") from exc
    if not isinstance(data, dict) or not isinstance(data.get("claims"), dict):
        raise ReproduceRecordError(f"{path} has no 'claims' table: not a benchmarks/reproduce.py record")
    return data


def _short_depends(depends_on: str) -> str:
    text = depends_on.split(";")[0].strip()
    return text if len(text) <= 60 else text[:57] + "..."


def _runs(claim_id: str, data: dict, verdict: Verdict, record_id: str = "") -> tuple[list[dict], list[str]]:
    """Each run's verdict as today's rule judges its saved evidence ({'outcome', 'depends_on',
    'form'}), and notes on what could not be judged again (then the run is compared as saved).
    record_id: the id the record keeps the runs under, where the claim is judged from another
    claim's evidence (`Claim.evidence_from`); its runs are then read from their evidence only."""
    record_id = record_id or claim_id
    saved = data["claims"][record_id].get("verdicts")
    if not isinstance(saved, list) or not saved:
        raise ReproduceRecordError(f"the record's {record_id} has no list of run verdicts")
    evidence = data.get("evidence")
    claim, runs, notes = REGISTRY[claim_id], [], []
    for number, run in enumerate(saved, 1):
        if not isinstance(run, Mapping) or not {"outcome", "depends_on"} <= set(run):
            raise ReproduceRecordError(f"the record's {record_id} run {number} lacks its outcome")
        found = evidence[number - 1].get(record_id) if isinstance(evidence, list) and len(evidence) >= number \
            and isinstance(evidence[number - 1], Mapping) else None
        as_saved = {"outcome": run["outcome"], "depends_on": run["depends_on"], "form": run.get("form", "")}
        if found is None and record_id != claim_id:  # another claim's outcome says nothing of this one
            raise _Unjudgeable(f"run {number} kept no {record_id} evidence to judge {claim_id} from")
        if found is None:
            notes.append(f"run {number}: no evidence kept, compared as saved")
            runs.append(as_saved)
            continue
        try:
            today = claim.judge(found, machine=verdict.machine, form=as_saved["form"] or "not named")
        except Exception as exc:  # noqa: BLE001 -- evidence of another version: any failure means "cannot"
            raise _Unjudgeable(f"today's rule cannot read run {number}'s evidence ({exc})") from None
        if record_id == claim_id and (today.outcome, today.depends_on) != (as_saved["outcome"], as_saved["depends_on"]):
            notes.append(f"run {number} saved {as_saved['outcome']}, today's rule reads {today.outcome}")
        runs.append({"outcome": today.outcome, "depends_on": today.depends_on, "form": as_saved["form"]})
    return runs, notes


class _Unjudgeable(Exception):
    """A run's evidence that today's rule cannot read: the record is of an older chapter."""


def _run_label(run: dict, verdict: Verdict, other_forms: list[str]) -> str:
    """'the same', or how a run differs: its outcome, what it depends on, another form (named
    'form A', 'form B' in `other_forms`' order when the runs judged more than one)."""
    if (run["outcome"], run["depends_on"], run["form"]) == (verdict.outcome, verdict.depends_on, verdict.form):
        return SAME
    label = run["outcome"]
    if run["depends_on"] and run["depends_on"] != verdict.depends_on:
        label += f" (on {_short_depends(run['depends_on'])})"
    if run["form"] != verdict.form:
        label += (" on another form" if len(other_forms) == 1 else
                  f" on form {chr(ord('A') + other_forms.index(run['form']))}")
    return label


def _depends_named(verdict: Verdict, runs: list[dict]) -> str:
    """What the runs depend on, in full, where it is not what the verdict depends on."""
    other = list(dict.fromkeys(r["depends_on"] for r in runs if r["depends_on"] and r["depends_on"] != verdict.depends_on))
    if not other:
        return ""
    return (f"; the verdict depends on '{verdict.depends_on or '-'}'"
            + "".join(f"; a run on '{text}'" for text in other))


def _forms_named(verdict: Verdict, other_forms: list[str]) -> str:
    if not other_forms:
        return ""
    named = [f"form {chr(ord('A') + n)}" if len(other_forms) > 1 else "another form" for n in range(len(other_forms))]
    return (f"; the verdict judged '{verdict.form}'"
            + "".join(f"; {name}: '{form}'" for name, form in zip(named, other_forms, strict=True)))


SAME = "the same"        # a run's label where it gave the verdict's outcome, depends and form
AS_VERDICT = "as the verdict"   # how such runs are said in a line (review 2026-12-05u item 3)


def listed(labels: tuple[str, ...] | list[str]) -> str:
    """Runs' labels in a line, runs in a row with one label said together: 'run 1: a; runs 2-3:
    as the verdict', or 'x in all 3' when every run said the same. Review 2026-12-05u item 3:
    'depends (on noise), the same, the same' read as three noise runs."""
    said = [AS_VERDICT if label == SAME else label for label in labels]
    if len(said) > 1 and len(set(said)) == 1:
        return f"{said[0]} in all {len(said)}"
    groups: list[list[int]] = []
    for number, label in enumerate(said, 1):
        if groups and said[groups[-1][-1] - 1] == label:
            groups[-1].append(number)
        else:
            groups.append([number])
    return "; ".join((f"run {g[0]}" if len(g) == 1 else f"runs {g[0]}-{g[-1]}") + f": {said[g[0] - 1]}"
                     for g in groups)


def earlier_rule(claim_id: str, data: Mapping) -> dict[int, str]:
    """Per run (from 1), what its chapter says of a rule since replaced that decided part of the
    run's evidence, where the chapter's reproduce module has `earlier_rule(data, claim_id) ->
    {run: [step, ...]}` and `earlier_rule_said(steps) -> str` (chapter 08: its ladder's keep
    decisions). Today's rule re-judges a claim's threshold from a run's evidence, not the
    decisions the chapter made inside it (review 2026-12-05u item 3). {} where none, or where the
    chapter cannot say."""
    claim = REGISTRY.get(claim_id)
    if claim is None:
        return {}
    module = discovery.module(claim.chapter, "reproduce")
    if module is None or not hasattr(module, "earlier_rule"):
        return {}
    try:  # a record of another version: its evidence may lack what the chapter reads
        found = module.earlier_rule(data, claim_id)
        return {int(n): str(module.earlier_rule_said(list(steps))) for n, steps in found.items() if steps}
    except (KeyError, TypeError, ValueError):
        return {}


def _time(text: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text))
    except ValueError:
        return None


def compare(verdict: Verdict, data: dict | None, verdict_recorded_at: str = "",
            source: str = "the record") -> Reproduction:
    """The reproduction mark of one recorded verdict against its chapter's reproduce record
    (`load_record`'s dict, or None when there is none). verdict_recorded_at: the verdict's
    `recorded_at` in results/<machine>.json, compared with the record's when it has one."""
    claim_id = verdict.claim_id
    if data is None:
        return Reproduction(claim_id, NO_RECORD, "no reproduce record", f"no {source}")
    record_id = claim_id
    if claim_id not in data["claims"]:
        shared = REGISTRY[claim_id].evidence_from if claim_id in REGISTRY else ""
        if not shared or shared not in data["claims"]:
            return Reproduction(claim_id, NO_RECORD, "no reproduce record",
                                f"{source} judged no {claim_id} (it has {', '.join(data['claims']) or 'none'})")
        record_id = shared  # judged from that claim's runs' evidence (issue 38: C5c from C5b's)
        source += f" ({claim_id} judged from {shared}'s runs' evidence)"
    dated, theirs = _time(data.get("recorded_at")), _time(verdict_recorded_at)
    # An earlier record is still compared run by run (today's rule reading its evidence, below):
    # the device plan runs 04's and 08's reproduce just before the chapter in the same call, so
    # their pages quote it. Only one older than the verdict by more than a call (SAME_CALL_S)
    # ran on earlier sources: its agreement is marked so, not counted (review 2026-12-04i item 8).
    # the record's date in a few words, or "undated": every row of a chapter repeats it, so the
    # record's keys are not listed (review 2026-12-03h, chapters 08-09-99: each row listed them)
    used = (f"recorded {dated:%Y-%m-%d %H:%M} UTC" if dated else "undated")
    if dated and theirs:
        used += (f", {'before' if dated < theirs else 'after'} the verdict "
                 f"({theirs:%H:%M}" + ("" if theirs.date() == dated.date() else f" on {theirs:%Y-%m-%d}") + ")")
    earlier = bool(dated and theirs and (theirs - dated).total_seconds() > SAME_CALL_S)
    dates = {"record_at": str(data.get("recorded_at") or ""), "verdict_at": verdict_recorded_at}
    try:
        runs, notes = _runs(claim_id, data, verdict, record_id)
    except _Unjudgeable as exc:
        return Reproduction(claim_id, PREDATES, "the record predates the verdict (an older chapter's evidence)",
                            f"{source}, {used}: {exc}", **dates)
    other_forms = list(dict.fromkeys(run["form"] for run in runs if run["form"] != verdict.form))
    labels = [_run_label(run, verdict, other_forms) for run in runs]
    same = labels.count(SAME)
    # a run part of whose evidence a since-replaced chapter rule decided says so in its label
    superseded = earlier_rule(record_id, data)
    labels = [(AS_VERDICT if label == SAME else label) + f", its {superseded[n]}" if n in superseded else label
              for n, label in enumerate(labels, 1)]
    stands = ("" if not superseded else
              " (the claim's rule; the chapter's decisions inside that evidence stand as each run made them)")
    detail = (f"{source}, {used}; each run's outcome, what it depends on and form, judged again by "
              f"today's rule from its evidence{stands}, against the verdict's: " + "; ".join(
                  f"run {n}: {label}" for n, label in enumerate(labels, 1)) + "".join(f"; {n}" for n in notes)
              + _forms_named(verdict, other_forms) + _depends_named(verdict, runs))
    asked, complete = data.get("runs_asked", len(runs)), data.get("complete", True)
    # an incomplete record says so beside a NOT too (review 2026-12-04l 08-09-99 item 7: the
    # 16:15 08 record ran 2 of its 3 runs and 99 read "in all 2" with no word of the third)
    cut = "" if complete else f"{len(runs)} of {asked} runs asked, cut short"
    if same < len(runs):
        return Reproduction(claim_id, NOT_REPRODUCED,
                            f"NOT reproduced ({listed(labels)}{'; ' + cut if cut else ''})", detail,
                            tuple(labels), cut_short=cut, **dates)
    if data.get("quick") or len(runs) < REQUIRED_RUNS or not complete:
        why = ("a --quick smoke test" if data.get("quick") else
               f"{len(runs)} of {asked} runs asked, cut short" if not complete else f"{REQUIRED_RUNS} needed")
        return Reproduction(claim_id, TOO_FEW, f"{same} of {len(runs)} runs agree, too few ({why})", detail,
                            tuple(labels), cut_short=cut, **dates)
    text = f"reproduced {same} of {len(runs)}"
    status = REPRODUCED
    if earlier:  # agreeing runs of an earlier call: not a reproduction of this verdict
        text = "reproduced on earlier sources"  # the detail keeps the runs' count
        status = EARLIER_SOURCES
        detail += (f"; the record is older than the verdict by more than one device call ({SAME_CALL_S} s), "
                   "so its runs ran on earlier sources: not counted as reproducing this verdict")
    if data.get("numbers_agree") is False:
        text += " (the verdict; the chapter's numbers did not: all_agree false)"
    return Reproduction(claim_id, status, text, detail, tuple(labels), **dates)


def marks(verdicts: Mapping[str, Verdict], recorded_at: Mapping[str, str], machine: str) -> dict[str, Reproduction]:
    """The reproduction mark of every recorded timing-based verdict (Claim.timing_based), by
    claim id, each read from results/reproduce/<machine>-<chapter>.json. A damaged record is
    marked UNREADABLE with why, not raised: the ledger still shows every other row."""
    out: dict[str, Reproduction] = {}
    loaded: dict[str, dict | None | ReproduceRecordError] = {}
    for claim_id, verdict in verdicts.items():
        claim = REGISTRY.get(claim_id)
        if claim is None or not claim.timing_based:
            continue
        path = record_path(machine, claim.chapter)
        if claim.chapter not in loaded:
            try:
                loaded[claim.chapter] = load_record(path)
            except ReproduceRecordError as exc:
                loaded[claim.chapter] = exc
        data = loaded[claim.chapter]
        source = f"results/{RECORD_FOLDER}/{path.name}"
        try:
            if isinstance(data, ReproduceRecordError):
                raise data
            at = recorded_at.get(claim_id) or recorded_at.get(claim.evidence_from, "") if claim.evidence_from else \
                recorded_at.get(claim_id, "")
            out[claim_id] = compare(verdict, data, at, source)
        except ReproduceRecordError as exc:
            out[claim_id] = Reproduction(claim_id, UNREADABLE, "reproduce record unreadable", str(exc))
    return out


def _at(text: str) -> str:
    """'2026-12-03 22:17 UTC' from an ISO time, or the text as it is."""
    when = _time(text) if text else None
    return f"{when:%Y-%m-%d %H:%M} UTC" if when else (text or "undated")


def headline(marks: Mapping[str, Reproduction]) -> str:
    """The ledger's one line on its timing-based reference verdicts: ALL_REPRODUCED only when
    every one reproduced 3 of 3 on the verdict's own sources; otherwise how many did, and, per
    chapter, whose record is older than its verdict (counted apart, never in the 3 of 3) or
    whose runs did not reproduce (review 2026-12-04i, 08-09-99 item 8). Short: 99's page is
    held to 1,500 words."""
    if all(mark.reproduced for mark in marks.values()):
        return ALL_REPRODUCED
    plain = sum(mark.reproduced for mark in marks.values())
    parts = [f"{plain} of {len(marks)} timing-based reference verdicts reproduced {REQUIRED_RUNS} of {REQUIRED_RUNS}"]
    older: dict[str, list[Reproduction]] = {}
    for mark in marks.values():
        if mark.earlier:
            chapter = REGISTRY[mark.claim_id].chapter if mark.claim_id in REGISTRY else "?"
            older.setdefault(chapter, []).append(mark)
    for chapter, group in older.items():
        parts.append(f"{', '.join(m.claim_id for m in group)} ({chapter[:2]}) only on earlier sources: "
                     f"its record ({_at(group[0].record_at)}) is older than the verdict ({_at(group[0].verdict_at)})")
    rest = [m.claim_id + (f" ({m.cut_short})" if m.cut_short else "")
            for m in marks.values() if not m.reproduced and not m.earlier]
    if rest:
        parts.append(f"not reproduced {REQUIRED_RUNS} of {REQUIRED_RUNS}: {', '.join(rest)}")
    return "; ".join(parts) + "."
