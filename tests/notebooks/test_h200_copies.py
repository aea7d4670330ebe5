"""The reference GPU's executed copies (results/h200_notebooks/) were run on today's sources.

Learners without a GPU, the course site and the reviewers read those copies as "what the H200
showed"; a copy executed on older sources shows outputs of code that no longer exists. So each
copy must hold the same cells as its chapter's .py, cell for cell (code and markdown), and its
chapter's labkit package must be as it was at the commit the copy ran on (SOURCES.json, written
by scripts/merge_reference.py): review 2026-12-04l (03-04 item 10, 04k item 7) found the cells
compared and the code not, so a copy whose printing changed in labkit passed as current.
"""

import json
import shutil
import subprocess

import pytest

from tests.notebooks.test_notebook_pairs import SOURCES, cells_of
from tests.paths import ROOT

COPIES = ROOT / "results" / "h200_notebooks"
SOURCES_FILE = COPIES / "SOURCES.json"

# Chapters whose H200 copy predates their current sources: each is re-recorded on the H200
# (scripts/execute_notebook.py --output-dir results/h200_notebooks) with its issue.
NOT_YET_RERECORDED: set[str] = set()  # filled below, chapter by chapter
# Every chapter re-recorded on the H200 on 2026-12-06 (session z on 0a3720e; then, on b5f96c8, session
# aa's calls A (00-04, reproduce 02-04), C (reproduce 05, 05) and 06 with 99). Changed since:
NOT_YET_RERECORDED |= {"05_dataloader"}  # session aa: the plateau's check in 8 rounds, not 5 (fresh_step.LOADED_ROUNDS)
NOT_YET_RERECORDED |= {"07_export_traps"}  # session aa: C15's evidence and the takeaways read no optional-only name
NOT_YET_RERECORDED |= {"02_contiguity_and_hidden_copies", "03_memory_layouts"}  # session aa: their fresh H200 pages read 1,515 and 1,532 core words; 02's cached ceilings in a date span, its allocator takeaway; 03's fresh-processes note folded, C7 split into C7a and C7b
NOT_YET_RERECORDED |= {"00_setup_check", "06_ddp_layout_drift"}  # session aa: five takeaways, not six (Mistakes 3 and 4 in one line; 06's warnings and size-1 strides in one)
NOT_YET_RERECORDED |= {"99_claims_ledger"}  # session aa: C7 split into C7a and C7b (its markdown names C7a)
NOT_YET_RERECORDED |= {"09_audit_your_model"}  # session aa: the CPU page folds the reference's two clocks (audits.show); its GPU branch unchanged, re-recorded to hold the package the copy ran on
NOT_YET_RERECORDED |= {"08_inference_ladder"}  # session aa: past_view says every lever's 08-past check (one file a lever; D3's had overwritten the batch-2048 one); the copy of 0a3720e shows the checks of its day


def _chapter(source):
    if source.stem in NOT_YET_RERECORDED:
        return pytest.param(source, id=source.stem, marks=pytest.mark.xfail(
            strict=True, raises=AssertionError, reason="H200 copy not yet re-recorded"))
    return pytest.param(source, id=source.stem)


@pytest.mark.parametrize("source", [_chapter(s) for s in SOURCES])
def test_the_h200_copy_holds_the_chapters_current_cells(source):
    copy = COPIES / f"{source.stem}.ipynb"
    assert copy.exists(), f"no H200 copy of {source.stem} in {COPIES}"
    ours, theirs = cells_of(source), cells_of(copy)
    differ = [i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b]
    assert ours == theirs, (
        f"results/h200_notebooks/{copy.name} was executed on other sources ({len(theirs)} cells "
        f"against {len(ours)}; first differing cell {differ[0] if differ else min(len(ours), len(theirs))}): "
        "re-record it on the H200")
    changed = changed_since_record(source.stem)
    if changed is None:  # a shallow clone or no git: the cells matched, the code cannot be checked
        pytest.skip(f"no git history holding {source.stem}'s recorded commit: its code is not checked")
    assert not changed, (f"results/h200_notebooks/{copy.name} ran on {recorded_commit(source.stem)[:7]}; since then "
                         f"{', '.join(changed)} changed: re-record it on the H200 (or list it in NOT_YET_RERECORDED)")


def recorded_commit(chapter: str) -> str:
    """The commit the chapter's H200 copy ran on ('' where SOURCES.json has none)."""
    return json.loads(SOURCES_FILE.read_text()).get(chapter, "") if SOURCES_FILE.exists() else ""


def chapter_paths(chapter: str) -> list[str]:
    """What prints a chapter's page: its notebook source and its labkit package (99 has none)."""
    package = ROOT / "labkit" / "chapters" / f"ch{chapter}"
    return [f"notebooks/{chapter}.py"] + ([str(package.relative_to(ROOT))] if package.is_dir() else [])


def changed_since_record(chapter: str) -> list[str] | None:
    """The chapter's files that differ between the copy's recorded commit and the working tree,
    or None where git, the commit or the record is missing (a shallow clone: not checked)."""
    commit = recorded_commit(chapter)
    if not commit or shutil.which("git") is None or subprocess.run(
            ["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True).returncode:
        return None
    found = subprocess.run(["git", "diff", "--name-only", commit, "--", *chapter_paths(chapter)],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return sorted(found)


def test_every_copy_names_the_commit_it_ran_on():
    recorded = json.loads(SOURCES_FILE.read_text())
    assert {s.stem for s in SOURCES} <= set(recorded), "SOURCES.json lacks a chapter's commit"
    assert chapter_paths("05_dataloader") == ["notebooks/05_dataloader.py", "labkit/chapters/ch05_dataloader"]
    assert chapter_paths("99_claims_ledger") == ["notebooks/99_claims_ledger.py"]
