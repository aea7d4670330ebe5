"""Chapter 01's claim checks on constructed evidence, each outcome reached."""

import pytest

from tests.claim_helpers import assert_outcomes_follow_the_evidence

CASES = {
    "C1": {
        "confirmed": dict(shape=[4, 3], stride=[1, 4], is_contiguous=False),
        "refuted": dict(shape=[4, 3], stride=[3, 1], is_contiguous=True),
    },
    "C3": {
        "confirmed": dict(elements_checked=100, element_formula_mismatches=0, byte_formula_mismatches=75),
        "refuted": dict(elements_checked=100, element_formula_mismatches=3, byte_formula_mismatches=75),
    },
    "C4": {
        "confirmed": dict(shape=[2, 4, 3], stride=[12, 1, 4]),
        "refuted": dict(shape=[2, 4, 3], stride=[12, 4, 1]),
    },
    "C8a": {
        "confirmed": dict(raised=True, error_type="RuntimeError", error_message="view size...",
                          noncontiguous_view_succeeded=False),
        "depends": dict(raised=True, error_type="RuntimeError", error_message="view size...",
                        noncontiguous_view_succeeded=True),
        "refuted": dict(raised=False, error_type="", error_message="", noncontiguous_view_succeeded=True),
    },
    "C8b": {
        "confirmed": dict(cases=[dict(a=[1, 4], b=[3, 1], seed_says=[3, 4], observed=[3, 4]),
                                 dict(a=[2, 4], b=[3, 1], seed_says="error", observed="error")]),
        "refuted": dict(cases=[dict(a=[1, 4], b=[3, 1], seed_says=[3, 4], observed=[3, 4]),
                               dict(a=[2, 4], b=[3, 1], seed_says="error", observed=[3, 4])]),
    },
    "C8c": {
        "confirmed": dict(raised=True, error_type="IndexError", error_message="repeated dim"),
        "refuted": dict(raised=True, error_type="RuntimeError",
                        error_message="permute(): duplicate dims are not allowed."),
    },
    "C11a": {
        "confirmed": dict(shares_storage=True, copy_bytes=0),
        "refuted": dict(shares_storage=False, copy_bytes=4096),
    },
    "C11b": {
        "confirmed": dict(tools={"torch.jit.trace": dict(ok=False, matches_eager=False),
                                 "torch.jit.script": dict(ok=False, matches_eager=False)}),
        "depends": dict(tools={"torch.jit.trace": dict(ok=True, matches_eager=True),
                               "torch.jit.script": dict(ok=False, matches_eager=False)}),
        "refuted": dict(tools={"torch.jit.trace": dict(ok=True, matches_eager=True),
                               "torch.jit.script": dict(ok=True, matches_eager=True)}),
    },
}


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_check_follows_the_evidence(claim_id):
    assert_outcomes_follow_the_evidence(claim_id, CASES[claim_id])
