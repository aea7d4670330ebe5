"""Review 2026-12-05t 08-09-99 items 3 and 9, on summaries shaped like the H200's recorded
float16 audit (results/nvidia-h200.json, 09_audit_your_model/audit_resnet50_fp16)."""

import copy
import json

from labkit.audit import recommend
from labkit.chapters.ch09_audit_your_model import audits
from tests.paths import ROOT

# The record these tests were written on (results/nvidia-h200.json as of 0a3720e, 2026-12-05
# 17:55): its float16 audit ran device-bound and judged by the stream's clock. The 2026-12-06
# re-record ran host-bound and judged by device-busy time, so the fixture keeps the earlier shape.
EARLIER = ROOT / "tests" / "chapters" / "ch09_audit_your_model" / "h200_audits_2026-12-05.json"


def _recorded() -> dict:
    return copy.deepcopy(json.loads(EARLIER.read_text())["audit_resnet50_fp16"]["payload"])


def test_the_stream_clock_is_named_as_such_and_device_busy_time_is_shown_beside_it():
    """Item 9: 'the harness's device clock (CUDA events)' timed the stream, idle gaps included."""
    old = _recorded()
    shown = audits.readings(old)
    row = shown["convert to channels_last before the first conv"]
    assert "device clock" not in row and recommend.STREAM_CLOCK in row
    assert "device-busy time: not timed in this record" in row
    fresh = copy.deepcopy(old)
    for r in fresh["recommendations"][:2]:
        r.update(clock=recommend.STREAM_CLOCK, busy_ratio=1.15, busy_q25=1.14, busy_q75=1.16)
    row = audits.readings(fresh)["keep BatchNorm float32 (53 of them half)"]
    assert "device-busy time (kernel records) 1.15x, IQR 1.14-1.16: slower" in row
    # a float32 GPU audit times no device-busy clock beside the stream's, and says nothing of it
    f32 = {**copy.deepcopy(old), "dtype": "float32"}
    assert "device-busy" not in audits.readings(f32)["convert to channels_last before the first conv"]


def test_the_batchnorm_fix_is_said_as_a_trade_with_the_side_chapter_08_took():
    """Item 3: 08 keeps BatchNorm float32 (fewer launches), 09's audit rejects it (slower)."""
    old = _recorded()
    said = audits.batchnorm_sides(old)
    assert "106 fewer kernels a batch (282 -> 176: the host's side) for 1.12x the stream's time" in said
    assert "Chapter 08's fp16 rung sets them float32 without timing that choice" in said
    assert "does not keep them" in said
    # review 2026-12-05u item 4: the bound is this audit's, the line beside it; no typed rationale
    assert "idled the GPU 17% in this audit (device-bound: under the 30% host-bound line)" in said
    assert "near the" not in said and "host-bound past" not in said
    busy = copy.deepcopy(old)
    busy["kernels"]["gpu_idle_share"] = 0.41
    assert "idled the GPU 41% in this audit (host-bound: over the 30% line)" in audits.batchnorm_sides(busy)
    kept = copy.deepcopy(old)
    bn = kept["recommendations"][1]
    bn.update(kept=True, busy_ratio=0.97, busy_q25=0.96, busy_q75=0.98)
    said = audits.batchnorm_sides(kept)
    assert "0.97x the device-busy time" in said and "keeps them too" in said
    bn["launches"] = None
    assert audits.batchnorm_sides(kept) == ""
