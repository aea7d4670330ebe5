"""Each reproduce mark an executed copy of chapter 99 shows is the mark the committed records
give today (results/nvidia-h200.json beside results/reproduce/).

Review 2026-12-03h (chapters 08-09-99) item 3/4: the H200 copy of 99 read the reproduce records
from before they were dated and showed "C7 NOT reproduced" and "all_agree false" for C24 while
the committed records said 3 of 3, and nothing caught it. A copy listed in the H200 copies'
NOT_YET_RERECORDED is expected to fail (strict), so this test bites once it is re-recorded.
"""

import html
import json
import re
from pathlib import Path

import pytest

from labkit.claims import reproduced, tables
from labkit.core import results
from tests.notebooks.test_h200_copies import COPIES, NOT_YET_RERECORDED
from tests.paths import ROOT

LEDGER = "99_claims_ledger"


def _expected(monkeypatch) -> dict[str, reproduced.Reproduction]:
    """The marks the ledger gives the committed reference verdicts from the committed records."""
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(ROOT / "results"))
    data = results.load(results.DEFAULT_REFERENCE) or {}
    theirs, _ = tables.current_verdicts(data, recorded=True)
    return reproduced.marks(theirs, tables._recorded_at(data), results.DEFAULT_REFERENCE)


def _outputs(copy: Path, source: str) -> str:
    """The text (HTML, else plain) of the output of the code cell whose source is `source`."""
    notebook = json.loads(copy.read_text())
    cell = next(c for c in notebook["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip() == source)
    texts = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        text = data.get("text/html") or data.get("text/plain") or output.get("text", "")
        texts.append("".join(text) if isinstance(text, list) else text)
    return "\n".join(texts)


def shown_marks(copy: Path) -> dict[str, str]:
    """{claim id: the reproduce mark its reference cell shows ('' when none)} from the ledger's
    compact table in an executed copy: the cell reads 'outcome (kind); mark', and an outcome may
    hold '; ' itself (C14b: 'depends (on when the layout changes (not AMP; not across ranks)')."""
    table = _outputs(copy, "ledger")
    marks = {}
    for row in table.split("<tr><td>")[1:]:
        claim = row.split("</td>")[0]
        reference = html.unescape(re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[-1])
        marks[claim] = reference.split("); ", 1)[1] if "); " in reference else ""
    return marks


def _reproduce_cell(copy: Path) -> str:
    """The output of 99's cell under the ledger that lists the verdicts not reproduced."""
    return _outputs(copy, next(line for line in (ROOT / "notebooks" / f"{LEDGER}.py").read_text().split("\n# %%")
                               if "unreproduced = " in line).split("\n", 1)[1].strip())


def shown_unreproduced(copy: Path) -> set[str]:
    """The claims the copy lists as not reproduced 3 of 3 (none when it says every one was)."""
    text = _reproduce_cell(copy)
    if "Every timing-based reference verdict reproduced 3 of 3" in text:
        return set()
    return set(re.findall(r"<td[^>]*>(C\d+[a-z]?)</td>", text))


# Claims whose ledger row the H200 copy of 99 shows under a rule changed since its record (its
# cells are unchanged, so test_h200_copies cannot list it): left out of the H200 copy's comparison,
# each required to differ there (so the list cannot go stale), and the copy's headline unchecked
# while any is listed. Emptied by the next re-record of 99.
CHANGED_SINCE_H200_RECORD: dict[str, str] = {
    # emptied by the re-record of 99 on 2026-12-06 07:05 (session z, the last step of the last call,
    # after every chapter's page and reproduce run, sources 0a3720e); since then:
}


def _changed(copy: Path) -> dict[str, str]:
    return CHANGED_SINCE_H200_RECORD if copy.parent == COPIES else {}


def _copy(name: str, path: Path, listed: bool):
    # not strict: a copy listed for a cell change its marks do not depend on (2026-12-04: 99 opens
    # C1's row, not C9's) may still show today's marks; once re-recorded the test bites again
    marks = [pytest.mark.xfail(strict=False, raises=AssertionError,
                               reason="H200 copy not yet re-recorded (NOT_YET_RERECORDED)")] if listed else []
    return pytest.param(path, id=name, marks=marks)


@pytest.mark.parametrize("copy", [
    _copy("cpu", ROOT / "notebooks" / f"{LEDGER}.ipynb", False),
    _copy("h200", COPIES / f"{LEDGER}.ipynb", LEDGER in NOT_YET_RERECORDED),
])
def test_each_reproduce_mark_in_an_executed_99_matches_the_committed_records(copy, monkeypatch):
    expected = _expected(monkeypatch)
    assert expected, "no timing-based reference verdict has a mark: the records were not read"
    shown = shown_marks(copy)
    assert set(expected) <= set(shown), f"{copy.name}: rows missing from the ledger table"
    wrong = {claim: (shown[claim], tables._short_mark(mark.text)) for claim, mark in expected.items()
             if shown[claim] != tables._short_mark(mark.text) and claim not in _changed(copy)}
    assert not wrong, f"{copy}: shown against today's records: {wrong}"
    unmarked = {claim: mark for claim, mark in shown.items() if mark and claim not in expected}
    assert not unmarked, f"{copy}: marks no record gives: {unmarked}"
    if _changed(copy):  # the headline and the list of the unreproduced include the changed rows
        return
    # listed: runs that did not reproduce; a record older than its verdict is said in the line
    # above, never counted in its 3 of 3 (review 2026-12-04i 08-09-99 item 8)
    assert shown_unreproduced(copy) == {i for i, m in expected.items() if not m.reproduced and not m.earlier}
    assert reproduced.headline(expected) in html.unescape(_reproduce_cell(copy))


def shown_folds(copy: Path) -> dict[str, dict[str, str]]:
    """{claim id: {label: text}} of each ledger row's folded lines ('reference GPU', 'finding',
    'reproduced on the reference', ...), unescaped, from an executed copy's compact table."""
    table = _outputs(copy, "ledger")
    rows = {}
    for row in table.split("<tr><td>")[1:]:
        claim = row.split("</td>")[0]
        small = row.split("<small>", 1)[1].split("</small>", 1)[0] if "<small>" in row else ""
        lines = [html.unescape(line) for line in small.split("<br>")]
        rows[claim] = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in lines if ": " in line}
    return rows


def _expected_rows(monkeypatch) -> dict[str, dict]:
    """The ledger's rows as the committed records give them (the reference's columns only are
    compared: this machine's differ by machine)."""
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(ROOT / "results"))
    return {row["claim"]: row for row in tables.ledger().rows()}


@pytest.mark.parametrize("copy", [
    _copy("cpu", ROOT / "notebooks" / f"{LEDGER}.ipynb", False),
    _copy("h200", COPIES / f"{LEDGER}.ipynb", LEDGER in NOT_YET_RERECORDED),
])
def test_each_reference_verdict_in_an_executed_99_is_the_committed_one_with_its_times(copy, monkeypatch):
    """Review 2026-12-04k item 1: the H200 copy of 99 showed C23's finding '8.7 GB/s pageable,
    54.8 pinned (6.27x)' and C25 'judged ... from evidence recorded 2026-12-04 07:09 UTC', both
    'reproduce ... recorded 07:13 UTC', where results/nvidia-h200.json holds C23 at 13:53 (9.62x)
    and the reproduce record is 13:51: the marks matched, so the test above passed. Here each
    row's reference outcome (with its form and mark), its reproduce line (the record's time and
    the verdict's) and, where the row shows the reference's finding, that finding (with any
    're-judged from evidence recorded' time) must be the committed records'."""
    expected = _expected_rows(monkeypatch)
    data = results.load(results.DEFAULT_REFERENCE) or {}
    theirs, _ = tables.current_verdicts(data, recorded=True)
    assert theirs, "no reference verdict: the records were not read"
    shown = shown_folds(copy)
    on_reference = "this machine: " in _outputs(copy, "ledger") and all(
        shown[c].get("finding", "").startswith("(reference)") is False for c in theirs if c in shown)
    wrong = {}
    for claim, verdict in theirs.items():
        row, want = shown.get(claim, {}), expected[claim]
        if row.get("reference GPU") != want["reference GPU"]:
            wrong[claim] = ("outcome", row.get("reference GPU"), want["reference GPU"])
        elif row.get("reproduced on the reference", "") != want["reproduced detail"]:
            wrong[claim] = ("reproduce record", row.get("reproduced on the reference"), want["reproduced detail"])
        elif row.get("finding", "").startswith("(reference) ") or on_reference:
            finding = row.get("finding", "").removeprefix("(reference) ")
            if finding != tables.finding(verdict):
                wrong[claim] = ("finding", finding, tables.finding(verdict))
    changed = _changed(copy)
    assert set(changed) <= set(wrong), f"{copy}: listed as changed but shown as today's: {set(changed) - set(wrong)}"
    wrong = {claim: why for claim, why in wrong.items() if claim not in changed}
    assert not wrong, f"{copy}: reference verdicts shown against the committed records: {wrong}"
