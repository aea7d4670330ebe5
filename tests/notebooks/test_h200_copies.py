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
    # 2026-12-04i review items 1-4, 6, 7: C7 judged by CUDA Graph replays (fp16 b64, b128), the seed's 1.20x, C22 CPU
    "03_memory_layouts",
    # 2026-12-04i 08-09-99 items 6, 11: the set-up reads sizes.cnn_image; AOTInductor opt-in said; clamped idle text
    "09_audit_your_model",
    # 2026-12-04i 08-09-99 item 8: the reproduce headline counts a record older than its verdict apart
    "99_claims_ledger",
    # 2026-12-04i review items 9, 10, 11, 13: the chain's heading and quiz wording, recompile prose, takeaway's gpu_name
    "04_fusion",
    # 2026-12-04i review items 2, 3, 8: C10's quiz text and form, the strided illustration's table cell
    "02_contiguity_and_hidden_copies",
    # 2026-12-04i review items 1, 8: Mistake 4 timed in child processes, interleaved, its rule priced; GB/s to 4 figures
    "00_setup_check",
    # 2026-12-04i review item 4: (e)/(c) step time under the trust rule, the permuting copy's bound beside it
    "06_ddp_layout_drift",
    # 2026-12-04i review items 5, 6, 9: fault control checked, eager's FLOPs/ceiling share and the +-2% band, trap 2's eager strides
    "07_export_traps",
    # 2026-12-04i review items 1, 2, 3, 7, 8, 10: two worker-sweep rounds on a GPU (the sweep's prose), bound and pin range
    "05_dataloader",
    # 2026-12-04i 08-09-99 items 4, 10: the gate cell shows its table with the keep rule folded; no compiled interaction base
    "08_inference_ladder",
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
