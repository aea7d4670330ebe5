"""Review 2026-12-04k (chapters 08-09-99) items 2, 3 and 8, on the H200 ladder of 2026-12-04
13:43 UTC and its fresh runs (13:41), frozen in data/h200_2026-12-04T1343.json: the page's text
says what its own numbers give."""

import json
from pathlib import Path

import pytest

from labkit.chapters.ch08_inference_ladder import experiment, explain, ladder, reproduce, tables
from labkit.claims import reproduced

DATA = json.loads((Path(__file__).parent / "data" / "h200_2026-12-04T1343.json").read_text())


@pytest.fixture
def run():
    return experiment.Result.from_record(DATA["ladder"])


def test_the_fp16_rungs_reading_names_why_batchnorm_left_cudnn_as_read_in_source(run):
    """Item 2: each of 53 cuDNN BatchNorm kernels became 3 native ones (182 -> 282 kernels) and
    the page never said why: model.to(float16) makes BN's weight half, and
    _select_batch_norm_backend keeps cuDNN for a half input only with a float32 weight."""
    by = {r.name: r for r in run.rungs}
    fp16 = by["fp16 weights"]
    figures, said = explain.parts(by[fp16.after], fp16)
    assert "each of the 53 bn_fw_inf_1C11_kernel_NHWC became 3" in said
    # the cause is folded with the figures since review 2026-12-04l (the takeaway gives the lesson)
    assert "read in PyTorch's source, not measured" in figures and "_select_batch_norm_backend" in figures
    # not on a step that kept float32 weights, nor under autocast
    tf32 = by["TF32"] if "TF32" in by else run.rungs[1]
    assert explain.half_batchnorm(run.rungs[0], tf32, "bn_fw_inf") == ""
    auto = ladder.Rung("amp", ladder.Settings(autocast="float16"), 1.0, 1.0, 0.0, 0.0, None)
    assert explain.half_batchnorm(run.rungs[0], auto, "bn_fw_inf") == ""


def test_the_interaction_derives_what_channels_last_is_worth_after_fp16(run):
    """Item 3: 'fp16 weights 1.84x after channels_last, 1.38x alone ... they do not' gave no
    reason; the page's own numbers give channels_last 1.22x in TF32, 1.22 x 1.84 / 1.38 after fp16."""
    shown = tables.regimes_table(run)
    # the clock it was derived on is named (review 2026-12-05t 08 item 7); folded since review
    # 2026-12-05u items 5 and 7 (the takeaway gives it on both clocks)
    derivation = ("So channels_last is worth 1.62x after fp16 weights, 1.22x before "
                  "(derived, device time: 1.22 x 1.84 / 1.38).")
    assert derivation not in " ".join(shown.notes)
    assert any(derivation in text for label, text in shown.folded if "derived worth" in label)
    said = tables.interaction_said(run, run.regime_gains())
    assert said.startswith("A step's worth depends on what came before it: channels_last 1.22x before "
                           "fp16 weights, 1.62x after (derived, device time")
    assert tables.interaction_said(run, run.regime_gains()) in tables.takeaways(run, None)
    assert tables.derived_worth(["a", "b"], {"a": 1.2, "b": 1.5}, {"b": 1.5}, {"b": "a"}, []) is None


def test_steps_whose_split_moved_but_whose_product_held_are_said_so(run, monkeypatch):
    """Item 8: 'torch.compile 1.73x above all 3 ... Conv-BN folding 1.05x below all 3' where the
    two multiply to 1.80x device time and the fresh runs to 1.74-1.78x."""
    monkeypatch.setattr(reproduced, "load_record", lambda path: DATA["reproduce"])
    found = reproduce.fresh_runs("nvidia-h200")
    rungs = [r for r in run.rungs if not r.error]
    line = reproduce.not_held_line(found, {r.name: r.gain for r in rungs}, None,
                                   {r.name: r.device_gain for r in rungs})
    assert ("the split moved between torch.compile (1.71x) and Conv-BN folding (1.05x), their product "
            "held: 1.80x device time, 1.74-1.78x in the runs") in line
    assert "torch.compile kept" not in line and "Conv-BN folding kept" not in line
    assert "fp16 weights kept 3 of 3, gain not stable" in line   # a lone step still said alone
