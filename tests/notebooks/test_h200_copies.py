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
    "01_strides_and_views",  # review 03e item 3: C8b's evidence table was built and dropped (not the cell's last value)
    "00_setup_check",  # review 03d items 6/13: the A/B table's ratio of medians and trust-rule reading, unquoted text
    "02_contiguity_and_hidden_copies",  # review 03d items 5/7/8/10-12: quizzes reordered; its copy also predates f80e1bc
    "03_memory_layouts",  # review 03d items 1/4: C7's regime from a loop against its kernels (+15%), conv quiz's clock
    "04_fusion",  # review 03d items 3/9/13: reduce-overhead's loop ratio, C19's small-add line, folding's wording
    "05_dataloader",  # issue 39: the knob rule (95% interval) and its prose changed; needs the H200 record
    "06_ddp_layout_drift",  # review 03d items 3/8/9: interleaved step times, the warnings table, C14a over gloo
    "07_export_traps",  # review 03d items 4/5/7: loop pace, AOTInductor opt-in (its recorded run shown), C15a form
    "09_audit_your_model",  # review 03d items 3/7/9: 2% keep rule, quiz graded on the batch's own time, cat text
    "99_claims_ledger",  # review 03d items 4/5: 'which chapters ran here' reads the ledger's own (reference) runs
    "08_inference_ladder",  # review 03d items 1/2/6/12: adds-up note, keep rule 2% minimum, idle labels, prose
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
