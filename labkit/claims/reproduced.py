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
Either way the content decides: a record whose evidence today's rule cannot read was measured
by an older chapter, so it predates the verdict; otherwise the runs are compared as above. (A
record timed minutes before the verdict in the same device call, as 04's is so its page can
quote it, is not older in any sense that matters.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from labkit.claims.core import ClaimError, Verdict
from labkit.claims.registry import REGISTRY
from labkit.core import results

REQUIRED_RUNS = 3  # the curriculum: the same verdict in 3 of 3 fresh runs
RECORD_FOLDER = "reproduce"  # under the repository's results/ folder

REPRODUCED, NOT_REPRODUCED, NO_RECORD, PREDATES, TOO_FEW, UNREADABLE = (
    "reproduced", "not reproduced", "no record", "predates", "too few runs", "unreadable")


class ReproduceRecordError(ClaimError):
    """A reproduce record that cannot be read: not JSON, or lacking what reproduce.py writes."""


@dataclass(frozen=True)
class Reproduction:
    """One reference verdict beside its reproduce record.

    status: one of REPRODUCED, NOT_REPRODUCED, NO_RECORD, PREDATES, TOO_FEW, UNREADABLE.
    text: the mark shown beside the verdict ('reproduced 3 of 3', 'NOT reproduced (runs: ...)').
    detail: which file and fields were read, and each run's verdict (folded in the ledger).
    """

    claim_id: str
    status: str
    text: str
    detail: str
    runs: tuple[str, ...] = ()  # each run against the verdict: 'the same', or how it differs

    @property
    def reproduced(self) -> bool:
        """Only a full reproduction lets the verdict stand as plainly shown."""
        return self.status == REPRODUCED

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


def _runs(claim_id: str, data: dict, verdict: Verdict) -> tuple[list[dict], list[str]]:
    """Each run's verdict as today's rule judges its saved evidence ({'outcome', 'depends_on',
    'form'}), and notes on what could not be judged again (then the run is compared as saved)."""
    saved = data["claims"][claim_id].get("verdicts")
    if not isinstance(saved, list) or not saved:
        raise ReproduceRecordError(f"the record's {claim_id} has no list of run verdicts")
    evidence = data.get("evidence")
    claim, runs, notes = REGISTRY[claim_id], [], []
    for number, run in enumerate(saved, 1):
        if not isinstance(run, Mapping) or not {"outcome", "depends_on"} <= set(run):
            raise ReproduceRecordError(f"the record's {claim_id} run {number} lacks its outcome")
        found = evidence[number - 1].get(claim_id) if isinstance(evidence, list) and len(evidence) >= number \
            and isinstance(evidence[number - 1], Mapping) else None
        as_saved = {"outcome": run["outcome"], "depends_on": run["depends_on"], "form": run.get("form", "")}
        if found is None:
            notes.append(f"run {number}: no evidence kept, compared as saved")
            runs.append(as_saved)
            continue
        try:
            today = claim.judge(found, machine=verdict.machine, form=as_saved["form"] or "not named")
        except Exception as exc:  # noqa: BLE001 -- evidence of another version: any failure means "cannot"
            raise _Unjudgeable(f"today's rule cannot read run {number}'s evidence ({exc})") from None
        if (today.outcome, today.depends_on) != (as_saved["outcome"], as_saved["depends_on"]):
            notes.append(f"run {number} saved {as_saved['outcome']}, today's rule reads {today.outcome}")
        runs.append({"outcome": today.outcome, "depends_on": today.depends_on, "form": as_saved["form"]})
    return runs, notes


class _Unjudgeable(Exception):
    """A run's evidence that today's rule cannot read: the record is of an older chapter."""


def _run_label(run: dict, verdict: Verdict, other_forms: list[str]) -> str:
    """'the same', or how a run differs: its outcome, what it depends on, another form (named
    'form A', 'form B' in `other_forms`' order when the runs judged more than one)."""
    if (run["outcome"], run["depends_on"], run["form"]) == (verdict.outcome, verdict.depends_on, verdict.form):
        return "the same"
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


def listed(labels: tuple[str, ...] | list[str]) -> str:
    """Runs' labels in a line: 'a, b, c', or 'x in all 3' when every run said the same."""
    if len(labels) > 1 and len(set(labels)) == 1:
        return f"{labels[0]} in all {len(labels)}"
    return ", ".join(labels)


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
    if claim_id not in data["claims"]:
        return Reproduction(claim_id, NO_RECORD, "no reproduce record",
                            f"{source} judged no {claim_id} (it has {', '.join(data['claims']) or 'none'})")
    dated, theirs = _time(data.get("recorded_at")), _time(verdict_recorded_at)
    # An earlier record is still compared: the course's device plan runs a chapter's reproduce
    # just before the chapter itself in the same call (04's page quotes it), so an hour's order
    # says nothing about the sources; today's rule reading its evidence does (below).
    # the record's date in a few words, or "undated": every row of a chapter repeats it, so the
    # record's keys are not listed (review 2026-12-03h, chapters 08-09-99: each row listed them)
    used = (f"recorded {dated:%Y-%m-%d %H:%M} UTC" if dated else "undated")
    if dated and theirs:
        used += f", {'before' if dated < theirs else 'after'} the verdict ({theirs:%H:%M})"
    try:
        runs, notes = _runs(claim_id, data, verdict)
    except _Unjudgeable as exc:
        return Reproduction(claim_id, PREDATES, "the record predates the verdict (an older chapter's evidence)",
                            f"{source}, {used}: {exc}")
    other_forms = list(dict.fromkeys(run["form"] for run in runs if run["form"] != verdict.form))
    labels = [_run_label(run, verdict, other_forms) for run in runs]
    same = labels.count("the same")
    detail = (f"{source}, {used}; each run's outcome, what it depends on and form, judged again by "
              f"today's rule from its evidence, against the verdict's: " + "; ".join(
                  f"run {n}: {label}" for n, label in enumerate(labels, 1)) + "".join(f"; {n}" for n in notes)
              + _forms_named(verdict, other_forms) + _depends_named(verdict, runs))
    if same < len(runs):
        return Reproduction(claim_id, NOT_REPRODUCED, f"NOT reproduced (runs: {listed(labels)})", detail,
                            tuple(labels))
    asked, complete = data.get("runs_asked", len(runs)), data.get("complete", True)
    if data.get("quick") or len(runs) < REQUIRED_RUNS or not complete:
        why = ("a --quick smoke test" if data.get("quick") else
               f"{len(runs)} of {asked} runs asked, cut short" if not complete else f"{REQUIRED_RUNS} needed")
        return Reproduction(claim_id, TOO_FEW, f"{same} of {len(runs)} runs agree, too few ({why})", detail,
                            tuple(labels))
    text = f"reproduced {same} of {len(runs)}"
    if data.get("numbers_agree") is False:
        text += " (the verdict; the chapter's numbers did not: all_agree false)"
    return Reproduction(claim_id, REPRODUCED, text, detail, tuple(labels))


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
            out[claim_id] = compare(verdict, data, recorded_at.get(claim_id, ""), source)
        except ReproduceRecordError as exc:
            out[claim_id] = Reproduction(claim_id, UNREADABLE, "reproduce record unreadable", str(exc))
    return out
