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
# Every chapter re-recorded on the H200 on 2026-12-05 17:38-18:05 (calls A, B-repro, E-08 and 05
# alone, on c131800; 01 is unchanged since its 2026-12-04 13:37 record); 00-04 again on 2026-12-06
# 02:58-03:05 (calls A34, then 00 and 01, then reproduce 02 and 02, on review 2026-12-06's fixes). Changed since:
NOT_YET_RERECORDED |= {"07_export_traps"}  # reproduce.py's across-run compare reads a call as the page does; tables' NOT_YET_RECORDED gone (the page does not import reproduce.py: its output is unchanged)
NOT_YET_RERECORDED |= {"08_inference_ladder"}  # keep.over_moved_base reads a step over its base's own step from the rung's images/s (review 2026-12-05t 08 item 1); timings carry iqr_share
NOT_YET_RERECORDED |= {"03_memory_layouts"}  # its 2026-12-06 03:01 page read 1,507 core words (limit 1,500): the takeaway's fp16 b64 clause (the host's variance between processes) moved into the eager sweep's fold (cases.seed_variance); claims._graph_beside skips a run without graph replays
NOT_YET_RERECORDED |= {"01_strides_and_views", "02_contiguity_and_hidden_copies"}  # review 2026-12-06b item 1: the markdown that answered quiz_c8a, quiz_c2 and quiz_c10 while they waited moved into their explanations
NOT_YET_RERECORDED |= {"04_fusion"}  # review 2026-12-06b item 2: the replay bound reads the timed loop the table decides on (at least ~62 us on the H200 record, not 70)
NOT_YET_RERECORDED |= {"09_audit_your_model"}  # review 2026-12-05t 09 item 8: the export note names the images it checks; the ViT quiz says its answer is this machine's
NOT_YET_RERECORDED |= {"00_setup_check"}  # review 2026-12-06b item 3: a cache-curve point of one copy a graph is timed as a plain copy (the markdown says so)
NOT_YET_RERECORDED |= {"06_ddp_layout_drift"}  # 2026-12-06 session y: its short card numbers end in the shared cut mark, now "... (more below)" (labkit.claims.tables.CUT_MARK)
NOT_YET_RERECORDED |= {"05_dataloader"}  # review 2026-12-06b item 10: its level-3 exercise is optional (exercises priced by level)


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
