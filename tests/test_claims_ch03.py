"""Chapter 03's claim checks on constructed evidence, each outcome reached."""

import pytest

from tests.claim_helpers import assert_outcomes_follow_the_evidence

CASES = {
    "C7": {
        "confirmed": dict(channels_last_stride1=1, runs=[
            dict(dtype="float16", batch=64, nchw_img_s=1000.0, nhwc_img_s=1300.0)]),
        "depends": dict(channels_last_stride1=1, runs=[
            dict(dtype="float16", batch=64, nchw_img_s=1000.0, nhwc_img_s=1300.0),
            dict(dtype="float32", batch=1, nchw_img_s=100.0, nhwc_img_s=90.0)]),
        "refuted": dict(channels_last_stride1=1, runs=[
            dict(dtype="float32", batch=1, nchw_img_s=100.0, nhwc_img_s=90.0)]),
    },
    "C22": {
        "confirmed": dict(conv_conversion_bytes=0, conversion_kernels=["nhwcToNchwKernel"],
                          conv_output_format="contiguous", channel_matmul_nhwc_copy_bytes=0,
                          channel_matmul_nchw_copy_bytes=1 << 20),
        "refuted": dict(conv_conversion_bytes=0, conversion_kernels=[],
                        conv_output_format="channels_last", channel_matmul_nhwc_copy_bytes=0,
                        channel_matmul_nchw_copy_bytes=1 << 20),
    },
}


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_check_follows_the_evidence(claim_id):
    assert_outcomes_follow_the_evidence(claim_id, CASES[claim_id])
