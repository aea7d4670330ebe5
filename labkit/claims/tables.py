"""Verdicts shown and kept: a chapter's verdict table, the ledger, saving, the reference.

A table puts this machine's verdict (with the form of the claim it judged) beside the
reference GPU's recorded verdict. Sections show in English; the seed's Chinese title is a
tooltip, since many fonts draw CJK as boxes.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from labkit.claims import articles, reproduced
from labkit.claims.core import (  # noqa: F401 -- the kinds are re-exported from here
    ANALOGUE_KIND,
    CONFIRMED,
    DEPENDS,
    DOCUMENTATION_KIND,
    FORM_KINDS,
    NOT_MEASURED_KIND,
    REFUTED,
    SEED_FORM,
    SEED_KIND,
    Claim,
    Verdict,
    form_kind,
)
from labkit.claims.registry import REGISTRY, all_claims, get
from labkit.core import env, results
from labkit.show import table as tables

VERDICT_COLUMNS = ("claim", "source", "statement", "this machine", "form judged", "reason",
                   "recorded reference")
_COLOURS = {CONFIRMED: "#1a7f37", REFUTED: "#cf222e", DEPENDS: "#9a6700"}

# A table fits its output area (JupyterLab's is about 1,000 px wide at a 1,440 px window):
# long text wraps, even inside a long word, and what still cannot fit scrolls inside its own
# box instead of being cut off at the notebook's edge.
WRAP = ";white-space:normal;overflow-wrap:anywhere;vertical-align:top"
TABLE_STYLE = "border-collapse:collapse;width:100%;max-width:100%;table-layout:auto"


def fitted(table: str) -> str:
    """A table in a box as wide as its output area that scrolls sideways if it must."""
    return f"<div class='lt-table' style='max-width:100%;overflow-x:auto'>{table}</div>"


def _source(claim: Claim) -> str:
    """'A §2.1 How strides work': which article (by the README's letter) and which section."""
    return articles.short_source(claim)


def _cell(text: str, tooltip: str = "", settled: bool = True) -> str:
    """A table cell, its outcome coloured; settled=False (a reference verdict its fresh runs
    did not reproduce) leaves it uncoloured, so it never reads as a plain outcome."""
    colour = next((c for o, c in _COLOURS.items() if text.startswith(o)), None) if settled else None
    style = (f"text-align:left;color:{colour};font-weight:bold" if colour else "text-align:left") + WRAP
    title = f" title='{html.escape(tooltip, quote=True)}'" if tooltip else ""
    return f"<td style='{style}'{title}>{html.escape(text)}</td>"


@dataclass(repr=False)
class VerdictTable:
    """A chapter's verdicts, with the reference GPU's recorded verdicts beside them.

    _repr_html_ for people; structure() is deterministic text for nbval (ids and columns,
    and only the verdicts of claims marked deterministic).
    """

    verdicts: list[Verdict]
    recorded: dict[str, Verdict] = field(default_factory=dict)
    reference: str = ""
    pending: list[str] = field(default_factory=list)  # claim ids with no verdict on this machine
    recording_reference: bool = False  # this run itself writes the reference results
    summary: bool = False  # a chapter's closing table: outcomes only, the numbers folded

    def _ids(self) -> list[str]:
        return [v.claim_id for v in self.verdicts] + self.pending

    def rows(self) -> list[dict]:
        """One dict per claim with the columns of VERDICT_COLUMNS."""
        out = []
        by_id = {v.claim_id: v for v in self.verdicts}
        for claim_id in self._ids():
            claim, verdict, ref = get(claim_id), by_id.get(claim_id), self.recorded.get(claim_id)
            out.append({
                "claim": claim_id, "source": _source(claim), "statement": claim.statement,
                "this machine": verdict.label if verdict else "needs a GPU: not measured here",
                "form judged": verdict.form if verdict else "",
                "reason": verdict.reason if verdict else (ref.reason if ref else ""),
                "recorded reference": self._reference_text(ref),
            })
        return out

    def _reference_text(self, ref: Verdict | None) -> str:
        if self.recording_reference:
            return "this run"  # the column is the recorded reference: on the reference machine, this run
        if ref is None:
            return f"nothing recorded yet for {self.reference or 'the reference'}"
        form = "" if ref.form == SEED_FORM else f", {ref.form}"
        return f"{ref.label} (recorded, {machine_shown(ref.machine)}{form})"

    def structure(self) -> str:
        """Column names and claim ids, with verdicts only where they cannot vary by machine."""
        lines = ["columns: " + " | ".join(VERDICT_COLUMNS)]
        by_id = {v.claim_id: v for v in self.verdicts}
        for claim_id in self._ids():
            verdict = by_id.get(claim_id)
            if verdict is None:
                shown = "no verdict here (needs a GPU)"
            elif get(claim_id).deterministic:
                shown = verdict.label
            elif verdict.kind == DOCUMENTATION_KIND or (  # say so: documentation is not a measurement
                    verdict.kind == ANALOGUE_KIND and "documentation" in verdict.form.lower()):
                shown = "read from documentation, in whole or part (varies by machine)"
            elif verdict.kind == NOT_MEASURED_KIND:
                shown = "not measured here (varies by machine)"
            else:
                shown = "measured (varies by machine)"
            lines.append(f"{claim_id}: {shown}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return "\n".join(f"{r['claim']:<5} {r['this machine']:<40} {r['recorded reference']}"
                         for r in self.rows())

    def __repr__(self) -> str:
        """Plain text where HTML does not render: the deterministic structure."""
        return self.structure()

    def card(self) -> tables.Table:
        """The verdicts as one `labkit.show.table.Table`: per claim its outcome (what a
        'depends' depends on, in a word or two), the form judged, the numbers that decided it
        (its reason, without the trust rule's notes) and the reference's recorded outcome, the
        reference machine named once in its column's heading; the statement, source, whole
        reason and evidence are folded, one click away. A summary (a chapter's closing table)
        shows outcomes only, the forms folded with the rest (each card above showed its own)."""
        machines = {ref.machine for ref in self.recorded.values()}
        one_machine = next(iter(machines)) if len(machines) == 1 and not self.recording_reference else ""
        reference = (f"reference (recorded, {machine_shown(one_machine)})" if one_machine
                     else "recorded reference")
        columns = ["claim", "this machine"] + ([] if self.summary else ["form judged", "deciding numbers"])
        shown = tables.Table("", [*columns, reference], marks=_COLOURS)
        by_id = {v.claim_id: v for v in self.verdicts}
        folded = []
        for row in self.rows():
            verdict, ref = by_id.get(row["claim"]), self.recorded.get(row["claim"])
            detail = [] if self.summary else [
                row["form judged"],
                deciding(row["reason"]) if verdict else f"(reference) {deciding(row['reason'])}"]
            here = short_label(verdict) if verdict else row["this machine"]
            shown.add(row["claim"], here, *detail, self._reference_cell(row, verdict, ref, one_machine))
            folded.append(_evidence_text(row, verdict, ref))
        shown.fold("statement, source, " + ("form, " if self.summary else "") + "reason, evidence",
                   "\n\n".join(folded))
        return shown

    def _reference_cell(self, row: dict, verdict: Verdict | None, ref: Verdict | None,
                        named: str = "") -> str:
        """'the same' when the reference reached this machine's outcome; its machine only when
        the column's heading does not name it already."""
        if ref is None or self.recording_reference:
            return row["recorded reference"]
        same = verdict is not None and verdict.label == ref.label
        text = "the same" if same else short_label(ref)
        return text if named == ref.machine else f"{text} (recorded, {machine_shown(ref.machine)})"

    def _repr_html_(self) -> str:
        return self.card()._repr_html_()


def short_label(verdict: Verdict) -> str:
    """'refuted', or 'depends (on noise)': what a 'depends' depends on up to its first colon
    (the whole of it, with the reason, stays in the folded evidence)."""
    if not verdict.depends_on:
        return verdict.outcome
    return f"{verdict.outcome} (on {verdict.depends_on.split(':')[0].strip()})"


NUMBERS_CHARACTERS = 200  # a card's visible reason; the whole reason is folded under it (220 until
# 2026-12-06: 02's H100 page read 1,514 core words, its eight cards ~3 words each over)
_TRUST_NOTES = ("; flagged, but too small", "; the harness flagged")
CUT_MARK = "... (more below)"  # the end of a cut reason; the whole reason is the card's fold


def deciding(reason: str) -> str:
    """The part of a verdict's reason that states the deciding numbers: without the notes
    the trust rule appends (the folded reason keeps them), at most NUMBERS_CHARACTERS."""
    cut = min([reason.find(n) for n in _TRUST_NOTES if n in reason] or [len(reason)])
    head = reason[:cut].strip()
    if cut < len(reason):
        head += " (flags folded below)"
    if len(head) <= NUMBERS_CHARACTERS:
        return head
    # cut at a word boundary, never inside a number ('1.8' of '1.80x')
    return head[:NUMBERS_CHARACTERS - len(CUT_MARK)].rsplit(" ", 1)[0].rstrip(",;:") + CUT_MARK


def _evidence_text(row: dict, verdict: Verdict | None, ref: Verdict | None) -> str:
    # a claim not judged on this machine has no form of its own: said, not left empty (review
    # 2026-12-03e item 8: chapter 08's CPU fold read "form judged: "); the reference's is below
    form = row["form judged"] or "none on this machine (not judged here)"
    lines = [f"{row['claim']}: {row['statement']}", f"source: {row['source']}",
             f"form judged: {form}", f"this machine: {row['this machine']}"]
    # a claim not judged here has no reason of its own: the recorded reference's is printed once,
    # labelled, below (review 2026-12-06z 03-04 item 7: 04's CPU fold printed the H200's C18
    # reason under "this machine", then again as the reference's)
    lines.append(f"reason: {row['reason']}" if verdict is not None else "reason: not judged here")
    if verdict is not None:
        lines.append(_evidence_shown(verdict))
        if verdict.thresholds:
            lines.append(f"thresholds: {dict(verdict.thresholds)}")
    if ref is not None:
        lines.append(f"recorded reference ({machine_shown(ref.machine)}, {ref.form}): {ref.label}: {ref.reason}")
    return "\n".join(lines)


# Over this many characters a verdict's evidence is named by its keys, not printed: 08's C24 held
# every rung's kernel tables, 65 KB of a fold no learner reads (review 2026-12-05t 08 item 6);
# every other verdict's is under 13,000 characters and is printed whole, as before.
EVIDENCE_SHOWN_CHARS = 20_000


def _evidence_shown(verdict: Verdict) -> str:
    """'evidence: {...}' whole, or, past EVIDENCE_SHOWN_CHARS, without its largest entries (named,
    and where the whole is kept) until the rest fits."""
    evidence = results.to_jsonable(verdict.evidence)
    text = json.dumps(evidence, indent=1, ensure_ascii=False)
    if len(text) <= EVIDENCE_SHOWN_CHARS or not isinstance(evidence, dict):
        return "evidence: " + text
    kept, left_out = dict(evidence), []
    while kept and len(json.dumps(kept, indent=1, ensure_ascii=False)) > EVIDENCE_SHOWN_CHARS:
        largest = max(kept, key=lambda k: len(json.dumps(kept[k], ensure_ascii=False)))
        left_out.append(f"{largest} ({len(json.dumps(kept.pop(largest), ensure_ascii=False)):,} characters)")
    return ("evidence: " + json.dumps(kept, indent=1, ensure_ascii=False)
            + f"\nnot shown here: {', '.join(left_out)}; the whole is kept with the chapter's results "
              f"(labkit.core.results, key 'verdict:{verdict.claim_id}')")


def table(verdicts: Iterable[Verdict], pending: Iterable[str] = (),
          reference: str = results.DEFAULT_REFERENCE, summary: bool = False) -> VerdictTable:
    """The verdict table of these verdicts, beside the reference machine's recorded ones.

    pending: ids of claims that got no verdict on this machine (GPU-only forms); their
    recorded verdicts are still shown. summary: outcomes only (a chapter's closing table).
    """
    verdicts = list(verdicts)
    ids = [v.claim_id for v in verdicts] + list(pending)
    recording = os.environ.get(results.REFERENCE_ENV, "").strip() == reference
    return VerdictTable(verdicts, {} if recording else recorded_verdicts(ids, reference),
                        reference, list(pending), recording, summary)


# "seed says" quotes the seed's own words (Claim.seed_text, Chinese), with the English gist
# (Claim.statement) under it: the column shows what the seed says, not the course's rewording.
LEDGER_COLUMNS = ("claim", "chapter", "seed says", "this machine", "reference GPU", "finding",
                  "depends on / why they differ")
# The kinds of form a verdict judged (FORM_KINDS, `Verdict.kind`: seed form, analogue, read
# from documentation, not measured) live in labkit.claims.core with the verdict; the tallies
# count them apart: a refuted analogue says less about the seed than a refuted seed form.


def finding(verdict: Verdict | None) -> str:
    """The verdict's finding in one sentence: its reason up to the first full stop outside
    brackets (`first_sentence`; the checks open their reasons with it), at most 240 characters.
    Where a bracket held a full stop (a quoted error), that bracket is the part written '(...)'
    when the sentence is too long, so the clause after it stays."""
    if verdict is None:
        return ""
    reason = verdict.reason
    first = first_sentence(reason).strip().rstrip(".")
    naive = reason.split(". ")[0]
    if len(first) > 240 and len(naive) < len(first):
        first = _bracket_written_short(first, len(naive))
    return first if len(first) <= 240 else first[:237] + "..."


def first_sentence(text: str) -> str:
    """`text` up to its first '. ' outside brackets: a quoted error inside parentheses keeps its
    own full stops. Review 2026-12-05t 99 item 5: C8a's row read 'the seed's example holds
    (view(-1, 4) raised RuntimeError: ... subspaces' and lost its ', but the rule does not:
    view(3, 2, 2, 2) ... succeeded', the half that made it 'refuted'."""
    depth = 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char == "." and depth == 0 and text[i + 1:i + 2] == " ":
            return text[:i]
    return text


def _bracket_written_short(text: str, inside: int) -> str:
    """`text` with the top-level (...) span that holds position `inside` written '(...)'."""
    depth, start = 0, 0
    for i, char in enumerate(text):
        if char == "(":
            start, depth = (i, 1) if depth == 0 else (start, depth + 1)
        elif char == ")" and depth:
            depth -= 1
            if depth == 0 and start <= inside <= i:
                return text[:start] + "(...)" + text[i + 1:]
    return text


def chapter_notebook(chapter: str, notebooks: Path | None) -> str:
    """The chapter's notebook source ('03_memory_layouts.py') in the folder `notebooks`, or ''
    if it is not there (or no folder was given). labkit never guesses where the repository's
    notebooks are: the caller (the ledger notebook, a script) says."""
    if notebooks is None:
        return ""
    return f"{chapter}.py" if (Path(notebooks) / f"{chapter}.py").is_file() else ""


def _compact_outcome(row: dict, column: str, kind_key: str) -> str:
    """'refuted (analogue)': a ledger cell's outcome, what a 'depends' depends on up to its
    first colon, and the kind of form judged; a cell with no verdict in a few words."""
    text = row[column]
    if text.split(" ")[0] not in _COLOURS:
        if text.startswith("ran here"):
            return "needs a GPU"
        if text.startswith("out of date"):
            return "out of date: re-run"
        return "not run here yet" if text.startswith("not run here") else text
    outcome = text.split(" [")[0].replace(_unsettled(None, True), "")  # the mark says it below
    if outcome.startswith(DEPENDS) and ":" in outcome:
        outcome = outcome.split(":")[0] + ")"
    mark = row.get("reproduced", "") if column == "reference GPU" else ""
    return f"{outcome} ({row[kind_key]})" + (f"; {_short_mark(mark)}" if mark else "")


def _short_mark(mark: str) -> str:
    """A reproduction mark in a few words for the compact table (the whole of it is folded)."""
    if mark.startswith("NOT reproduced"):
        return "NOT reproduced in fresh runs"
    return mark.split(" (")[0] + (" (the verdict, not the chapter's numbers)" if "numbers did not" in mark else "")


def machine_shown(machine: str) -> str:
    """A verdict's machine as the pages spell the reference elsewhere: 'NVIDIA_H200' (the
    device key a verdict stores) shown as 'nvidia-h200', the key of results/nvidia-h200.json and
    of every 'recorded on nvidia-h200, <date>' label, so one page never names one GPU two ways
    (review 2026-12-04m 03-04 item 10)."""
    return machine.lower().replace("_", "-")


def _why_they_differ(mine: Verdict, theirs: Verdict) -> str:
    """Name what differs between two machines' verdicts on one claim: device, form, torch."""
    reasons = []
    if mine.machine != theirs.machine:
        reasons.append(f"device: {machine_shown(mine.machine)} against {machine_shown(theirs.machine)}")
    if mine.form != theirs.form:
        reasons.append(f"form judged: '{mine.form}' against '{theirs.form}'")
    return "; ".join(reasons) or "same device and form: a timing near its threshold (rerun)"


@dataclass(repr=False)
class Ledger:
    """Every claim of the curriculum with its saved verdicts: this machine's and the reference's.

    Built from what the chapters saved (`claims.save`), never typed in. A claim with no
    verdict here says which chapter fills it; where the two machines disagree, the row
    names what differs (the device, the form of the claim judged).
    """

    mine: dict[str, Verdict]
    reference_verdicts: dict[str, Verdict]
    reference: str
    ran: dict[str, dict] = field(default_factory=dict)  # chapter key -> {"machine", "where"} (here)
    notebooks: Path | None = None  # the chapter notebooks' folder, for links; None: no links
    stale: dict[str, str] = field(default_factory=dict)  # claim id -> why this machine's is out of date
    reference_stale: dict[str, str] = field(default_factory=dict)  # the same for the reference
    reference_here: bool = False  # this machine is the reference machine (`is_reference_here`)
    # claim id -> its reference verdict beside the reproduce record (timing-based claims only)
    reproductions: dict[str, reproduced.Reproduction] = field(default_factory=dict)
    recorded_here: dict[str, str] = field(default_factory=dict)  # chapter key -> machine, any record

    def rows(self) -> list[dict]:
        """One dict per registered claim, in curriculum order, with LEDGER_COLUMNS, 'section' and
        'in English' (the claim's English gist of what 'seed says' quotes)."""
        out = []
        for claim in all_claims():
            notebook = chapter_notebook(claim.chapter, self.notebooks)
            mine, theirs = self.mine.get(claim.id), self.reference_verdicts.get(claim.id)
            if not claim.tested:
                here = there = "not yet tested"
            else:
                ran = self.ran.get(claim.chapter)
                chapter_ran = ran is not None or any(REGISTRY[i].chapter == claim.chapter
                                                     for i in self.mine if i in REGISTRY)
                where = f" ({ran['machine']})" if ran and ran.get("machine") else ""
                rerun = notebook or "chapter " + claim.chapter
                old, old_there = self.stale.get(claim.id, ""), self.reference_stale.get(claim.id, "")
                here = (f"{mine.label} [{mine.form}]" if mine else
                        f"out of date ({old}): re-run {rerun}" if "earlier rule" in old else
                        f"ran here{where}, needs a GPU: no verdict on this machine" if chapter_ran else
                        f"not run here yet: run {rerun}")
                mark = self.reproductions.get(claim.id) if theirs else None
                there = (f"{theirs.label}{_unsettled(mark)} [{theirs.form}]" + _mark_after(mark) if theirs else
                         f"out of date ({old_there}): record {rerun} again" if old_there else
                         "nothing recorded yet")
            notes = []
            if claim.tested and not mine and old and "earlier rule" not in old:
                notes.append(f"an older verdict here ({old}) is not shown")
            for verdict in (mine, theirs):
                if verdict and verdict.depends_on and verdict.depends_on not in notes:
                    notes.append(verdict.depends_on)
            if mine and theirs and mine.outcome != theirs.outcome:
                notes.append("differ by " + _why_they_differ(mine, theirs))
            out.append({"claim": claim.id, "chapter": claim.chapter[:2], "notebook": notebook,
                        "section": articles.short_source(claim),
                        "section_zh": claim.section_zh, "seed says": claim.seed_text,
                        "in English": claim.statement,
                        "this machine": here, "reference GPU": there,
                        "form here": mine.kind if mine else "",
                        "form on the reference": theirs.kind if theirs else "",
                        "finding": finding(mine) or (f"(reference) {finding(theirs)}" if theirs else ""),
                        "reproduced": mark.text if claim.tested and mark else "",
                        "reproduced detail": mark.detail if claim.tested and mark else "",
                        "reference settled": not (claim.tested and mark and mark.disagrees),
                        "depends on / why they differ": "; ".join(notes)})
        return out

    def chapters(self) -> list[str]:
        """Every chapter of the course, in order: the notebooks in the ledger's folder
        (NN_name.py, the ledger's own left out), so a chapter that tests no claim shows too
        (00 and 09: review 2026-12-03h, chapters 08-09-99, item 10); without a folder, the
        chapters the registry's claims name."""
        if self.notebooks is None:
            return sorted(dict.fromkeys(c.chapter for c in all_claims()))
        return sorted(p.stem for p in Path(self.notebooks).glob("[0-9][0-9]_*.py")
                      if p.stem != LEDGER_NOTEBOOK)

    def ran_here(self) -> list[dict]:
        """One row per chapter (`chapters`): the machine it ran on here (its 'ran' entry, or
        the results file's machine for a chapter that records results without one, as 00
        does: `recorded_here`), or 'not run here yet'."""
        def machine(key: str) -> str:
            if key in self.ran:
                return self.ran[key].get("machine") or "this machine"
            return self.recorded_here.get(key, "not run here yet")

        return [{"chapter": key[:2], "here": machine(key)} for key in self.chapters()]

    def structure(self) -> str:
        """Deterministic text for nbval: columns, then each claim id with its chapter."""
        return "\n".join(["columns: " + " | ".join(LEDGER_COLUMNS)]
                         + [f"{c.id}: chapter {c.chapter[:2]}, {'tested' if c.tested else 'not yet tested'}"
                            for c in all_claims()])

    def __repr__(self) -> str:
        return self.structure()

    def counts(self, which: str = "reference GPU") -> dict[str, int]:
        """How many claims each outcome has in one column ('this machine' or 'reference GPU')."""
        tally: dict[str, int] = {}
        for row in self.rows():
            word = row[which].split(" ")[0] if row[which].split(" ")[0] in _COLOURS else "no verdict"
            if which == "reference GPU" and not row["reference settled"]:
                word += NOT_REPRODUCED_TAG
            tally[word] = tally.get(word, 0) + 1
        return tally

    def tally(self, which: str = "reference GPU") -> dict[str, dict[str, int]]:
        """Outcomes in one column counted apart by the kind of form judged (FORM_KINDS):
        {'seed form': {'refuted': 3, ...}, 'analogue': {...}, 'read from documentation': {...}}.
        Claims with no verdict in that column are counted under 'no verdict'."""
        kind_key = "form here" if which == "this machine" else "form on the reference"
        out: dict[str, dict[str, int]] = {}
        for row in self.rows():
            word = row[which].split(" ")[0]
            if word not in _COLOURS:
                out.setdefault("no verdict", {})
                out["no verdict"]["claims"] = out["no verdict"].get("claims", 0) + 1
                continue
            bucket = out.setdefault(row[kind_key], {})
            if which == "reference GPU" and not row["reference settled"]:
                word += NOT_REPRODUCED_TAG
            bucket[word] = bucket.get(word, 0) + 1
        order = [*FORM_KINDS, "no verdict"]
        return {kind: out[kind] for kind in order if kind in out}

    def to_markdown(self, link_base: str = "") -> str:
        """The ledger as a Markdown table (for a README, an issue, a handout); chapter links
        are `link_base` + the notebook's name."""
        def clean(text: str) -> str:
            return text.replace("|", "\\|").replace("\n", " ")

        lines = [f"Claims ledger (reference: {self.reference})", "",
                 "| " + " | ".join(LEDGER_COLUMNS) + " |", "|" + " --- |" * len(LEDGER_COLUMNS)]
        for row in self.rows():
            chapter = (f"[{row['chapter']}]({link_base}{row['notebook']})" if row["notebook"]
                       else row["chapter"])
            cells = [row["claim"], chapter,
                     f"{row['seed says']} (in English: {row['in English']}) ({row['section']})",
                     row["this machine"], row["reference GPU"], row["finding"],
                     row["depends on / why they differ"]]
            lines.append("| " + " | ".join(clean(c) for c in cells) + " |")
        return "\n".join(lines) + "\n"

    def _table_html(self, link_base: str = "") -> str:
        """The table; chapter links are `link_base` + the notebook's name (relative to the
        notebooks folder by default, where the ledger chapter itself is shown)."""
        head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in LEDGER_COLUMNS)
        body = ""
        for row in self.rows():
            chapter = (f"<a href='{html.escape(link_base + row['notebook'])}'>{row['chapter']}</a>"
                       if row["notebook"] else row["chapter"])
            says = (f"<td style='text-align:left{WRAP}' title='{html.escape(row['section_zh'], quote=True)}'>"
                    f"<span lang='zh'>{html.escape(row['seed says'])}</span><br><small>in English: "
                    f"{html.escape(row['in English'])}<br>{html.escape(row['section'])}</small></td>")
            body += (f"<tr><td>{html.escape(row['claim'])}</td><td>{chapter}</td>{says}"
                     + _cell(row["this machine"]) + _cell(row["reference GPU"], settled=row["reference settled"])
                     + _cell(row["finding"])
                     + _cell(row["depends on / why they differ"]) + "</tr>")
        return fitted(f"<table style='{TABLE_STYLE}'><caption>reference: "
                      f"{html.escape(self.reference)}</caption><tr>{head}</tr>{body}</table>")

    def _repr_html_(self) -> str:
        return self.compact_html()

    def machines(self) -> tables.Table:
        """Which machine each column was read from: this one, and the reference run."""
        here = env.device_key() + (f" (the reference machine: its column reads results/{self.reference}.json"
                                   " too, each chapter's last run)" if self.reference_here else "")
        return tables.Table("", ["column", "machine"], [
            ["this machine", here],
            ["reference GPU", results.describe_machine(self.reference)]])

    def show(self, records: Iterable[dict], title: str = "") -> tables.Table:
        """Readings about the ledger (dicts with the same keys) as one `labkit.show.table`
        table, as a chapter's `chapter.show` does: the ledger notebook's only door besides
        the ledger itself."""
        return tables.rows(records, title)

    def claim(self, claim_id: str) -> tables.Table:
        """One claim's row opened: each machine's verdict with the form it judged in full and
        the numbers that decided it (as a verdict card shows them), side by side, and what a
        verdict depends on; the seed's own words and both whole reasons are folded. A claim
        the registry does not know is named, with the ones it does."""
        if claim_id not in REGISTRY:
            raise KeyError(f"no claim {claim_id!r} in the ledger; known: {', '.join(REGISTRY)}")
        row = next(r for r in self.rows() if r["claim"] == claim_id)
        shown = tables.Table(f"{claim_id} ({row['section']}): {row['in English']}",
                             ["column", "verdict [form judged]", "deciding numbers"], marks=_COLOURS)
        reasons = [f"the seed's own words: {row['seed says']}"]
        for column, verdicts in (("this machine", self.mine), ("reference GPU", self.reference_verdicts)):
            verdict = verdicts.get(claim_id)
            shown.add(column, row[column], deciding(verdict.reason) if verdict else "-")
            reasons.append(f"{column}: {verdict.reason if verdict else 'no verdict'}")
        if row["depends on / why they differ"]:
            shown.note(f"depends on / why they differ: {row['depends on / why they differ']}")
        if row["reproduced detail"]:
            reasons.append(f"reproduced on the reference: {row['reproduced detail']}")
        return shown.fold("the seed's words, whole reasons", "\n\n".join(reasons))

    def compact_html(self, link_base: str = "") -> str:
        """The ledger as a learner reads it in the notebook: one compact row per claim (its id,
        chapter, English gist, and each machine's outcome with the kind of form it judged:
        one of FORM_KINDS); the seed's own words, the section,
        the forms in full, the finding and why the machines differ are folded in each row,
        one click away. The handouts (`to_markdown`, `to_html`) keep every column open."""
        head = "".join(f"<th style='text-align:left'>{c}</th>"
                       for c in ("claim", "chapter", "the claim in English", "this machine", "reference GPU"))
        body = ""
        for row in self.rows():
            chapter = (f"<a href='{html.escape(link_base + row['notebook'])}'>{row['chapter']}</a>"
                       if row["notebook"] else row["chapter"])
            folded = [f"<span lang='zh' title='{html.escape(row['section_zh'], quote=True)}'>"
                      f"{html.escape(row['seed says'])}</span>", html.escape(row["section"]),
                      f"this machine: {html.escape(row['this machine'])}",
                      f"reference GPU: {html.escape(row['reference GPU'])}"]
            folded += [f"{name}: {html.escape(row[key])}" for name, key in
                       (("finding", "finding"), ("depends on / why they differ", "depends on / why they differ"),
                        ("reproduced on the reference", "reproduced detail"))
                       if row[key]]
            gist = (f"<td style='text-align:left{WRAP}'>{html.escape(row['in English'])}<details>"
                    f"<summary>more</summary><small>{'<br>'.join(folded)}</small></details></td>")
            body += (f"<tr><td>{html.escape(row['claim'])}</td><td>{chapter}</td>{gist}"
                     + _cell(_compact_outcome(row, "this machine", "form here"))
                     + _cell(_compact_outcome(row, "reference GPU", "form on the reference"),
                             settled=row["reference settled"]) + "</tr>")
        return fitted(f"<table style='{TABLE_STYLE}'><caption>reference: "
                      f"{html.escape(self.reference)}</caption><tr>{head}</tr>{body}</table>")

    def to_html(self, title: str = "Tensor Layout Lab: claims ledger", link_base: str = "") -> str:
        """A self-contained HTML page (no scripts, no outside files) an instructor can hand out;
        chapter links are `link_base` + the notebook's name."""
        style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
                 "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}"
                 "caption{text-align:left;font-weight:bold;margin-bottom:.5em}")
        return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
                f"</title><style>{style}</style></head><body><h1>{html.escape(title)}</h1>"
                f"{self._table_html(link_base)}</body></html>\n")

    def export(self, folder: str | Path | None = None) -> tuple[Path, Path]:
        """Write ledger.md and ledger.html into folder (default: labkit's cache folder's
        `ledger/`); returns their paths.

        Their chapter links lead from folder to the ledger's `notebooks` folder (a handout is
        written to a cache folder, where no chapter is), as a relative path.
        """
        folder = env.cache_dir() / "ledger" if folder is None else Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        markdown, page = folder / "ledger.md", folder / "ledger.html"
        base = ("" if self.notebooks is None else
                Path(os.path.relpath(Path(self.notebooks).resolve(), folder.resolve())).as_posix() + "/")
        markdown.write_text(self.to_markdown(base))
        page.write_text(self.to_html(link_base=base))
        return markdown, page


def ledger(reference: str = results.DEFAULT_REFERENCE, notebooks: str | Path | None = None) -> Ledger:
    """The claims ledger from saved results: this machine's verdicts beside the reference's.

    notebooks: the folder holding the chapter notebooks (the ledger notebook passes its own
    folder), so rows name and link each chapter's notebook; None leaves them out. On the
    reference machine itself (`is_reference_here`) its chapters save to results/<reference>.json,
    so this machine's column reads that file too, each chapter from whichever file ran it last.
    A verdict that is out of date (`current_verdicts`) is not shown as current in either column.
    """
    here = results.load() or {}
    if is_reference_here(reference):
        here = _newest_runs(here, results.load(reference) or {})
    mine, stale = current_verdicts(here)
    recorded_data = results.load(reference) or {}
    theirs, stale_there = current_verdicts(recorded_data, recorded=True)
    return Ledger(mine, theirs, reference, _ran(here), None if notebooks is None else Path(notebooks),
                  stale=stale, reference_stale=stale_there,
                  reference_here=is_reference_here(reference),
                  reproductions=reproduced.marks(theirs, _recorded_at(recorded_data), reference),
                  recorded_here=_recorded_here(here))


NOT_REPRODUCED_TAG = " (not reproduced)"  # a tally's outcome whose fresh runs disagreed


def _unsettled(mark: reproduced.Reproduction | None, always: bool = False) -> str:
    """' (NOT reproduced)': said right after the outcome (its first word stays the outcome, for
    the tallies), so no cut of the cell drops it."""
    return " (NOT reproduced)" if always or (mark is not None and mark.disagrees) else ""


def _mark_after(mark: reproduced.Reproduction | None) -> str:
    """The reproduction mark after the form: '; reproduced 3 of 3', or the runs that disagreed."""
    if mark is None:
        return ""
    return f"; in fresh runs: {reproduced.listed(mark.runs)}" if mark.disagrees else f"; {mark.text}"


def _recorded_at(data: dict) -> dict[str, str]:
    """When each verdict in a loaded results file was saved: {claim id: recorded_at}."""
    return {key[len(VERDICT_KEY_PREFIX):]: entry.get("recorded_at", "")
            for entries in data.get("chapters", {}).values() for key, entry in entries.items()
            if key.startswith(VERDICT_KEY_PREFIX) and isinstance(entry, dict)}


def is_reference_here(reference: str = results.DEFAULT_REFERENCE) -> bool:
    """Whether this machine is the reference machine: LABKIT_RECORD_REFERENCE names it (this
    session records there), or a chapter in results/<reference>.json says it ran on a device
    with this machine's key (env.device_key(), e.g. 'NVIDIA_H200')."""
    if os.environ.get(results.REFERENCE_ENV, "").strip() == reference:
        return True
    data = results.load(reference) or {}
    key = env.device_key()
    return any(entries.get(RAN_KEY, {}).get("payload", {}).get("machine") == key
               for entries in data.get("chapters", {}).values())


def _newest_runs(local: dict, reference: dict) -> dict:
    """One results file's worth of chapters: each chapter from the file whose run of it is newer
    (its 'ran' entry), so a chapter run both ways on the reference machine shows its last run."""
    def ran_at(data: dict, chapter: str) -> str:
        return data.get("chapters", {}).get(chapter, {}).get(RAN_KEY, {}).get("recorded_at", "")

    chapters = {}
    for chapter in dict.fromkeys([*reference.get("chapters", {}), *local.get("chapters", {})]):
        newer = local if ran_at(local, chapter) > ran_at(reference, chapter) else reference
        chapters[chapter] = newer.get("chapters", {}).get(chapter) or local["chapters"][chapter]
    return {"chapters": chapters}


LEDGER_NOTEBOOK = "99_claims_ledger"  # the ledger's own notebook: not a chapter that runs
RAN_KEY = "ran"  # results key under which labkit.session's Chapter.save() records that it ran


def chapters_ran(machine: str | None = None) -> dict[str, dict]:
    """The chapters a results file says ran (key 'ran', written by Chapter.save()), with where."""
    return _ran(results.load(machine) or {})


def _ran(data: dict) -> dict[str, dict]:
    return {chapter: entries[RAN_KEY]["payload"] for chapter, entries in data.get("chapters", {}).items()
            if RAN_KEY in entries}


def _recorded_here(data: dict) -> dict[str, str]:
    """{chapter: machine} for each chapter that recorded anything in a results file, 'ran' entry
    or not (00 records its measurements and never calls chapter.save()), on the file's machine
    (this machine's when the file does not name one)."""
    machine = data.get("machine") or env.device_key()
    return {chapter: machine for chapter, entries in data.get("chapters", {}).items() if entries}


VERDICT_KEY_PREFIX = "verdict:"  # results key of a claim's verdict: "verdict:C2"


RULE_KEY = "rule_fingerprint"  # saved beside a verdict: which rule judged it (`rule_fingerprint`)
RUN_KEY = "run"  # saved beside a verdict and in 'ran': which run of the chapter saved it
SAME_RUN_S = 60  # records without RUN_KEY (before it existed): verdicts, then 'ran', within seconds


def rule_fingerprint(claim: Claim) -> str:
    """A short hash of what decides a claim (its confirm_if, refute_if and thresholds): saved
    with each verdict, so a verdict judged under a rule that has changed since is known."""
    text = json.dumps([claim.confirm_if, claim.refute_if, dict(claim.thresholds)], sort_keys=True,
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def save(verdicts: Iterable[Verdict], chapter: str, run: str = "") -> None:
    """Save a chapter's verdicts with their evidence through labkit.core.results.

    They go to this machine's results file, or to results/<machine>.json when
    LABKIT_RECORD_REFERENCE=<machine> is set (how the reference GPU run is recorded). Each
    carries its claim's `rule_fingerprint`, so the ledger can tell a verdict of an older rule,
    and `run` (Chapter.run_id, also in the chapter's 'ran' entry) when given, so it can tell a
    verdict of the chapter's last run from one an earlier run left (`out_of_date`).
    """
    for verdict in verdicts:
        payload = verdict.to_dict()
        if verdict.claim_id in REGISTRY:
            payload[RULE_KEY] = rule_fingerprint(REGISTRY[verdict.claim_id])
        if run:
            payload[RUN_KEY] = run
        results.record(chapter, VERDICT_KEY_PREFIX + verdict.claim_id, payload)


def out_of_date(entry: dict, claim: Claim, chapter: str, ran_at: str = "", ran_run: str = "") -> str:
    """Why a saved verdict entry ({'payload', 'recorded_at'}) is not current as saved, or ''.

    Out of date: it carries a rule fingerprint other than the claim's rule today (the rule
    changed since it was judged: `current_verdicts` then judges its evidence again), or the
    chapter's last run did not save it again (`not_judged_by_last_run`).
    """
    if rule_changed(entry, claim):
        return f"saved {_when(entry)} under an earlier rule"
    return not_judged_by_last_run(entry, chapter, ran_at, ran_run)


def not_judged_by_last_run(entry: dict, chapter: str, ran_at: str = "", ran_run: str = "") -> str:
    """Why a saved verdict is not the chapter's last run's (`ran_at`, its 'ran' time, and
    `ran_run`, its run id), or '': that run did not save it again, so the chapter no longer
    judges the claim on this machine. Which run saved it is read from the run id both carry;
    a verdict saved after that run (a later run that stopped before its end) stays current.
    Records from before run ids fall back to time: saved more than SAME_RUN_S before 'ran'.
    """
    when = entry.get("recorded_at", "")
    try:
        gap = (datetime.fromisoformat(ran_at) - datetime.fromisoformat(when)).total_seconds()
    except (TypeError, ValueError):
        return ""
    run = entry.get("payload", {}).get(RUN_KEY, "")
    earlier_run = run != ran_run and gap > 0 if run and ran_run else gap > SAME_RUN_S
    if earlier_run:
        return (f"saved {_when(entry)}, before chapter {chapter[:2]}'s last run here "
                f"({ran_at[:16].replace('T', ' ')} UTC), which did not judge it")
    return ""


def _when(entry: dict) -> str:
    when = entry.get("recorded_at", "")
    return when[:16].replace("T", " ") + " UTC" if when else "at an unknown time"


def rule_changed(entry: dict, claim: Claim) -> bool:
    """Whether a saved verdict entry carries a rule fingerprint other than the claim's today."""
    saved = entry.get("payload", {}).get(RULE_KEY)
    return bool(saved) and saved != rule_fingerprint(claim)


def judged_today(verdict: Verdict, entry: dict) -> Verdict | None:
    """A saved verdict as today's rule judges its saved evidence, or None if it cannot.

    A rule can change after a machine recorded its evidence (C14a over gloo went from
    'refuted' to 'depends' when the rule learnt that gloo cannot test NCCL's half), and the
    reference GPU is not re-run for every such change. The evidence is what was measured;
    the rule is a function of it, so judging it again is not a new measurement. The saved
    verdict is kept as it is when today's rule gives the same outcome and the rule's
    fingerprint is unchanged; otherwise today's verdict is returned, its reason saying it was
    judged again from evidence recorded when, and what was recorded then. None when today's
    rule cannot read the evidence (a key it needs was not measured then).
    """
    claim = REGISTRY.get(verdict.claim_id)
    if claim is None or not claim.tested:
        return None
    try:
        today = claim.judge(dict(verdict.evidence), machine=verdict.machine, form=verdict.form,
                            kind=verdict.kind)
    except Exception:  # noqa: BLE001 -- evidence from another version: any failure means "cannot"
        return None
    same = (today.outcome, today.depends_on) == (verdict.outcome, verdict.depends_on)
    if same and not rule_changed(entry, claim):
        return verdict
    then = "" if same else f"; recorded then as {verdict.label}"
    return replace(today, recorded=verdict.recorded,
                   reason=f"(judged by today's rule from evidence recorded {_when(entry)}{then}) "
                          f"{today.reason}")


def current_verdicts(data: dict, recorded: bool = False,
                     only: Iterable[str] | None = None) -> tuple[dict[str, Verdict], dict[str, str]]:
    """The verdicts of one loaded results file that are current, and the out-of-date ones
    ({claim id: 'refuted, saved ... (why)'}) that must not be shown as current (`out_of_date`).
    Each current one is as today's rule judges its saved evidence (`judged_today`); one saved
    under an earlier rule that today's rule cannot judge is out of date.
    Verdicts under ids the registry no longer has are left out (see `saved_verdicts`); only:
    the claim ids wanted (the others are not judged again), None for all."""
    wanted = None if only is None else set(only)
    found: dict[str, Verdict] = {}
    stale: dict[str, str] = {}
    for chapter, entries in data.get("chapters", {}).items():
        ran = entries.get(RAN_KEY, {})
        ran_at, ran_run = ran.get("recorded_at", ""), ran.get("payload", {}).get(RUN_KEY, "")
        for key, entry in entries.items():
            claim_id = key[len(VERDICT_KEY_PREFIX):]
            if (not key.startswith(VERDICT_KEY_PREFIX) or claim_id not in REGISTRY
                    or (wanted is not None and claim_id not in wanted)):
                continue
            verdict = Verdict.from_dict(entry["payload"], recorded=recorded)
            claim = REGISTRY[claim_id]
            why = not_judged_by_last_run(entry, chapter, ran_at, ran_run)
            today = None if why else judged_today(verdict, entry)
            if today is None and not why and rule_changed(entry, claim):
                why = out_of_date(entry, claim, chapter, ran_at, ran_run)  # today's rule cannot read it
            if why:
                stale[verdict.claim_id] = f"{verdict.label}, {why}"
            else:
                found[verdict.claim_id] = verdict if today is None else today
    _judge_from_shared_evidence(data, recorded, wanted, found, stale)
    return found, stale


def _judge_from_shared_evidence(data: dict, recorded: bool, wanted: set[str] | None,
                                found: dict[str, Verdict], stale: dict[str, str]) -> None:
    """Claims judged from another claim's evidence (`Claim.evidence_from`: C5c reads C5b's 2x2)
    that the file holds no verdict of their own for: judged by today's rule from that claim's
    saved evidence, its reason saying so (issue 38: the reference recorded C5b before C5c was
    split off, and its evidence decides both). Out of date where the source verdict is; left
    out where today's rule cannot read it. Adds to `found` and `stale` in place."""
    for claim in REGISTRY.values():
        if (not claim.evidence_from or not claim.tested or claim.id in found or claim.id in stale
                or (wanted is not None and claim.id not in wanted)):
            continue
        for chapter, entries in data.get("chapters", {}).items():
            entry = entries.get(VERDICT_KEY_PREFIX + claim.evidence_from)
            if not isinstance(entry, dict) or "payload" not in entry:
                continue
            source = Verdict.from_dict(entry["payload"], recorded=recorded)
            try:
                today = claim.judge(dict(source.evidence), machine=source.machine, form=source.form,
                                    kind=source.kind)
            except Exception:  # noqa: BLE001 -- evidence from another version: any failure means "cannot"
                continue
            ran = entries.get(RAN_KEY, {})
            why = not_judged_by_last_run(entry, chapter, ran.get("recorded_at", ""),
                                         ran.get("payload", {}).get(RUN_KEY, ""))
            if why:
                stale[claim.id] = f"{today.label}, judged from {claim.evidence_from}'s evidence {why}"
            else:
                found[claim.id] = replace(today, recorded=recorded, reason=(
                    f"(judged by today's rule from {claim.evidence_from}'s evidence recorded {_when(entry)}) "
                    f"{today.reason}"))
            break


def saved_verdicts(machine: str | None = None) -> dict[str, Verdict]:
    """Every verdict saved in a results file: a reference machine's, or this machine's (None),
    current or not (`current_verdicts` keeps the current ones; scripts/rejudge_recorded.py
    judges all of them again).

    A verdict saved under an id the registry no longer has (a retired claim, split into
    lettered ids: C14 into C14a/b/c) is left out: results files outlive the claims they judged.
    """
    data = results.load(machine) or {}
    found: dict[str, Verdict] = {}
    for entries in data.get("chapters", {}).values():
        for key, entry in entries.items():
            if key.startswith(VERDICT_KEY_PREFIX) and key[len(VERDICT_KEY_PREFIX):] in REGISTRY:
                verdict = Verdict.from_dict(entry["payload"], recorded=machine is not None)
                found[verdict.claim_id] = verdict
    return found


def recorded_verdicts(claim_ids: Iterable[str],
                      reference: str = results.DEFAULT_REFERENCE) -> dict[str, Verdict]:
    """The reference machine's current recorded verdicts for these claims (missing and
    out-of-date ones left out: `out_of_date`)."""
    current, _ = current_verdicts(results.load(reference) or {}, recorded=True, only=claim_ids)
    return current


def recorded(claim_id: str, reference: str = results.DEFAULT_REFERENCE) -> Verdict | None:
    """One recorded reference verdict, or None when nothing is recorded yet."""
    return recorded_verdicts([claim_id], reference).get(claim_id)


@dataclass(repr=False)
class RecordedEvidence:
    """The reference machine's recorded verdicts with their evidence, labelled as recorded."""

    claim_ids: list[str]
    found: dict[str, Verdict]
    reference: str

    def lines(self) -> list[str]:
        """One line per claim: the recorded verdict and reason, or that nothing is recorded."""
        out = []
        for claim_id in self.claim_ids:
            verdict = self.found.get(claim_id)
            out.append(f"{claim_id} on {self.reference} (recorded): {verdict.label} -- {verdict.reason}"
                       if verdict else f"{claim_id}: nothing recorded yet for {self.reference}")
        return out

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def _repr_html_(self) -> str:
        parts = []
        for claim_id, line in zip(self.claim_ids, self.lines(), strict=True):
            verdict = self.found.get(claim_id)
            evidence = "" if verdict is None else (
                "<details><summary>recorded evidence</summary><pre>"
                + html.escape(json.dumps(results.to_jsonable(verdict.evidence), indent=1,
                                         ensure_ascii=False)) + "</pre></details>")
            parts.append(f"<div><b>{html.escape(line)}</b>{evidence}</div>")
        return "".join(parts)


def recorded_evidence(claim_ids: Iterable[str],
                      reference: str = results.DEFAULT_REFERENCE) -> RecordedEvidence:
    """What the reference GPU recorded for these claims, to show where this machine cannot run
    the claim's own (GPU) form."""
    ids = list(claim_ids)
    return RecordedEvidence(ids, recorded_verdicts(ids, reference), reference)
