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
    # its GPU page of 2026-12-03 21:52 read 1,541 words (limit 1,500): Mistake 4's note and the
    # allocator, ceiling and power-cap texts cut since (about 1,470 on the recorded numbers)
    "00_setup_check",
    # C22's quiz asks which convolution launches a conversion kernel; C7's sweep reads one clock
    # (review 2026-12-03h items 1, 5, 8): its cells changed since the 21:52 record
    "03_memory_layouts",
    # review 2026-12-03h item 11 made exercise 01.2 optional (its heading): needs a device run
    "01_strides_and_views",
    # review 2026-12-03h items 2-4, 6, 7, 9, 11 changed its cells (C2's quiz asks what runs, C5b's GPU
    # form times no window, C10 times its loop, the allocator section dropped): needs a device run
    "02_contiguity_and_hidden_copies",
    # review 2026-12-03h items 4 and 11 changed its cells (reduce-overhead's loop timed, the folding
    # timing's batch, math and ceiling share): needs a device run
    "04_fusion",
    # review 2026-12-03h items 1 and 9 changed its cells (the plateau's markdown: the step timed beside
    # decoding workers; C25 quoted from its card): needs a device run
    "05_dataloader",
    # review 2026-12-03h items 4, 6, 10 changed its cells (the seed sentence shown once with each card's
    # clause, the run's model width in the parameters table, the takeaway read off the gradient check)
    "06_ddp_layout_drift",
    # review 2026-12-03h items 7, 10 changed its cells (eager timed again with the allocator kept when the
    # fault note applies, Trap 1's channels_last export fed its own layout, Trap 2 reads the record)
    "07_export_traps",
    # review 2026-12-03h items 2, 5, 8, 10 changed its cells (a quiz on the step the GPU does not feel
    # before the ladder table, "Reading it" folded, the interaction's text): needs a device run
    "08_inference_ladder",
    # its page of 2026-12-03 22:20 read the reproduce records from before they were dated (C7 "NOT
    # reproduced", C24 "all_agree false" against today's 3 of 3: tests/claims/test_ledger_copies.py);
    # its cells changed since (chapters listed from the notebooks, the "not measured" kind)
    "99_claims_ledger",
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
