"""Chapter 02's claim checks on constructed evidence, each outcome reached."""

import pytest

from tests.claim_helpers import assert_outcomes_follow_the_evidence

CASES = {
    "C2": {
        "confirmed": dict(cases=[dict(case="3-D", implicit_copy_bytes=1 << 20,
                                      implicit_median_s=4.0, explicit_median_s=1.0)]),
        "depends": dict(cases=[dict(case="3-D", implicit_copy_bytes=1 << 20,
                                    implicit_median_s=4.0, explicit_median_s=1.0),
                               dict(case="2-D", implicit_copy_bytes=0,
                                    implicit_median_s=1.0, explicit_median_s=1.1)]),
        "refuted": dict(cases=[dict(case="2-D", implicit_copy_bytes=0,
                                    implicit_median_s=1.0, explicit_median_s=1.1)]),
    },
    "C5": {
        "confirmed": dict(fresh_checked=10, fresh_misaligned=0, views_checked=5,
                          contiguous_views_misaligned=0, aligned_ns_per_element=1.0,
                          misaligned_ns_per_element=2.2),
        "depends": dict(fresh_checked=10, fresh_misaligned=0, views_checked=5,
                        contiguous_views_misaligned=3, aligned_ns_per_element=1.0,
                        misaligned_ns_per_element=2.2),
        "refuted": dict(fresh_checked=10, fresh_misaligned=0, views_checked=5,
                        contiguous_views_misaligned=3, aligned_ns_per_element=1.0,
                        misaligned_ns_per_element=1.02),
    },
    "C6": {
        "confirmed": dict(copy_bytes=2 << 20, shares_storage=False,
                          narrow_contiguous_median_s=1e-6, narrow_transposed_median_s=8e-6),
        "depends": dict(copy_bytes=2 << 20, shares_storage=False,
                        narrow_contiguous_median_s=1e-6, narrow_transposed_median_s=1.1e-6),
        "refuted": dict(copy_bytes=0, shares_storage=True,
                        narrow_contiguous_median_s=1e-6, narrow_transposed_median_s=1.1e-6),
    },
    "C9": {
        "confirmed": dict(transposed_copy_bytes=64 << 20, expected_bytes=64 << 20,
                          contiguous_returns_self=True, contiguous_copy_bytes=0,
                          transposed_gbps=2.0, plain_copy_gbps=10.0),
        "depends": dict(transposed_copy_bytes=64 << 20, expected_bytes=64 << 20,
                        contiguous_returns_self=True, contiguous_copy_bytes=0,
                        transposed_gbps=9.0, plain_copy_gbps=10.0),
        "refuted": dict(transposed_copy_bytes=64 << 20, expected_bytes=64 << 20,
                        contiguous_returns_self=False, contiguous_copy_bytes=64 << 20,
                        transposed_gbps=2.0, plain_copy_gbps=10.0),
    },
    "C10": {
        "confirmed": dict(kernel="triton", stride_aware_median_s=1.0, contiguous_path_median_s=2.0),
        "refuted": dict(kernel="triton", stride_aware_median_s=1.0, contiguous_path_median_s=1.05),
    },
    "C12": {
        "confirmed": dict(config_exists=True, graph_count=2, graph_break_count=1),
        "refuted": dict(config_exists=False, graph_count=1, graph_break_count=0),
    },
}


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_check_follows_the_evidence(claim_id):
    assert_outcomes_follow_the_evidence(claim_id, CASES[claim_id])
