"""Review 2026-12-05u 08-09-99 items 4 and 8 on chapter 09's page, from the H200's record
(results/nvidia-h200.json) and synthetic summaries shaped like it."""

import copy
import json
from pathlib import Path

from labkit.audit import recommend
from labkit.chapters.ch09_audit_your_model import audits
from labkit.core import results

# The record the clock tests were written on (results/nvidia-h200.json as of 0a3720e, 2026-12-05
# 17:55; test_review_05t.EARLIER): the 2026-12-06 re-record's float32 audit was not timed twice
EARLIER = Path(__file__).with_name("h200_audits_2026-12-05.json")


def _earlier(key: str) -> dict:
    return copy.deepcopy(json.loads(EARLIER.read_text())[key]["payload"])


def _recorded_fp16() -> dict:
    data = results.load("nvidia-h200") or {}
    return copy.deepcopy(data["chapters"]["09_audit_your_model"]["audit_resnet50_fp16"]["payload"])


def test_timed_twice_names_the_clock_as_the_table_does():
    """Item 8: 'the fix's 7.76 ms (the harness's device clock (CUDA events))' under a row that
    says 'the stream's time per batch (CUDA events: idle gaps included)'."""
    summary = _earlier("audit_resnet50")
    line = audits.timed_twice(summary, audits.ladder_rung(), recorded=True)
    assert recommend.EARLIER_STREAM_CLOCK not in line and "the fix's 7.76 ms (the stream's time)" in line


def test_a_gain_on_a_model_of_one_convolution_names_it():
    """Item 8: ViT's 'kept (0.97x)' on a CPU is its patch embedding's one convolution."""
    summary = _recorded_fp16()
    first = summary["recommendations"][0]
    first.update(convolutions=["conv_proj"], kept=True, ratio=0.97, ratio_q25=0.97, ratio_q75=0.98)
    assert "; its one convolution: conv_proj" in audits.readings(summary)[first["title"]]
    first.update(ratio=0.71, ratio_q25=0.70, ratio_q75=0.74)     # a gain past noise: not said
    assert "one convolution" not in audits.readings(summary)[first["title"]]
    first.update(ratio=0.97, kept=False)
    assert "one convolution" not in audits.readings(summary)[first["title"]]
    first.update(kept=True)
    del first["convolutions"]                       # a record made before the field: nothing said
    assert "one convolution" not in audits.readings(summary)[first["title"]]


def test_wall_rounds_within_one_percent_read_as_their_range_and_a_warming_one_is_listed():
    summary = _earlier("audit_resnet50")
    line = audits.timed_twice(summary, None, recorded=True)
    assert "; rounds 7.76-7.78 ms)" in line
    summary["kernels"]["wall_rounds_ms"] = [9.1, 7.8, 7.77]
    assert "; rounds 9.10, 7.80, 7.77 ms)" in audits.timed_twice(summary, None, recorded=True)
