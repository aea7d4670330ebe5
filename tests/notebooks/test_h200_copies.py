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
NOT_YET_RERECORDED: set[str] = {
    "00_setup_check",  # review 03g item 5: Mistake 4's faults unrounded, why the defaults did not fault
    "02_contiguity_and_hidden_copies",  # review 03g item 7: the profiler's own rows out of the op table
    "04_fusion",  # review 03g item 8: the recorded chain read as 'times faster', C21b's 2^25
    "05_dataloader",  # review 03g items 1/2: the plateau's split refused, its arithmetic on the step inside the sweep
    "06_ddp_layout_drift",  # review 03g items 7/11: quiz names the run's 1x1 weight; report linked
    "07_export_traps",  # review 03g items 6/8: C15b's takeaway names its CPU analogue; 'not resolved'
    "09_audit_your_model",  # its float16 audit moved under an Optional heading (CPU page 1,567 words)
    "08_inference_ladder",  # CUDA Graphs before compile and folding (reproduce 18:45 UTC: 3 ladders)
    "03_memory_layouts",  # C7 judged at batch 128 stated in advance (reproduce 18:50 UTC judged two forms)
    "99_claims_ledger",  # reviews 03d 4/5, 03e: its own runs, run ids, recorded verdicts judged by today's rule
}


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
