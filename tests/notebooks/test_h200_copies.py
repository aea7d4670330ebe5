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
    "00_setup_check",  # reviews 03d 6/13, 03e 7/10/12: A/B trust reading, a warmed first conv, ceilings kept
    "02_contiguity_and_hidden_copies",  # reviews 03d 5/7/8/10-12, 03e 4/5/8/9: quiz keys by the trust rule, C5b, C6's clock
    "03_memory_layouts",  # reviews 03d 1/4/8, 03e 2/6/11: C7's regime from a loop, the conv table shown, C22's ratio
    "04_fusion",  # reviews 03d 3/9/13, 03e 4/11/12: loop pace computed and said so, quiz keys, chain table
    "05_dataloader",  # issue 39, review 03e 1-3/6-8: the knob ladder and labels, the fresh-batch step, its time cuts
    "06_ddp_layout_drift",  # reviews 03d 3/8/9, 03e 11/12: interleaved step times, C14a over gloo, opt-in ResNet-50
    "07_export_traps",  # reviews 03d 4/5/7, 03e 9/10/12: AOTInductor opt-in, C15a both cases, C15b by IOBinding
    "09_audit_your_model",  # reviews 03d 3/7/9, 03e 3/6/7: 2% keep rule, 'slower', dtype/TF32 and model named
    "99_claims_ledger",  # reviews 03d 4/5, 03e: its own runs, run ids, recorded verdicts judged by today's rule
    "08_inference_ladder",  # reviews 03d 1/2/6/12, 03e 1-5/8: a moved base re-timed or not decidable, host pace
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
