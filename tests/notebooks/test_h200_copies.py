"""The reference GPU's executed copies (results/h200_notebooks/) were run on today's sources.

Learners without a GPU, the course site and the reviewers read those copies as "what the H200
showed"; a copy executed on older sources shows outputs of code that no longer exists. So each
copy must hold the same cells as its chapter's .py, cell for cell (code and markdown).
"""

import pytest

from tests.notebooks.test_notebook_pairs import SOURCES, cells_of
from tests.paths import ROOT

COPIES = ROOT / "results" / "h200_notebooks"

# Chapters whose H200 copy predates their current sources: each is re-recorded on the H200
# (scripts/execute_notebook.py --output-dir results/h200_notebooks) with its issue.
NOT_YET_RERECORDED: set[str] = {"06_ddp_layout_drift"}  # 06: takeaways (one wrong step vs wrong after; cost line), Exercise 2 optional (review 2026-12-04l items 6, 11)
NOT_YET_RERECORDED |= {"07_export_traps"}  # 07: speed call on a timed loop, takeaway 1 with AOTInductor (review 2026-12-04l items 9, 10)
NOT_YET_RERECORDED |= {"03_memory_layouts", "04_fusion"}  # 03: C22 note both ways, CPU-only cells quiet on a GPU; 04: §1 fold premise (review 2026-12-04l items 3, 4, 10)
NOT_YET_RERECORDED |= {"05_dataloader"}  # 05: knobs at a fixed worker count, tuned loader without "+ pin", six GPU rounds, budget never drops a row (review 2026-12-04l items 2, 5)
NOT_YET_RERECORDED |= {"02_contiguity_and_hidden_copies"}  # 02: C2 copy priced alone, C5b/C5c and the sweep in one measurement, C5c markdown (review 2026-12-04l items 4, 5, 6)
NOT_YET_RERECORDED |= {"08_inference_ladder"}  # 08: the host-bound border and the interaction's budget note in markdown (review 2026-12-04l items 3, 4)


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
