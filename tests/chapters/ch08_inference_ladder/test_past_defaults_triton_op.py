"""The compiled Triton levers of past_defaults (issue 41): where they sit in the run's order,
what they are judged over, how --levers picks them (names with commas, bases added), their
skip reasons here, and the whole lever path (prepare, torch.compile, gate, time) on the CPU
with the op's CPU kernel standing in for Triton."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from labkit.chapters.ch08_inference_ladder import fused_epilogue as fe
from labkit.chapters.ch08_inference_ladder import past_defaults as pd

ROOT = Path(__file__).resolve().parents[3]


def test_the_compiled_triton_levers_follow_batch_1024_and_are_judged_over_their_controls():
    levers = pd.gpu_levers()
    names = [lv.name for lv in levers]
    at = names.index("batch 1024")
    # each followed by its prologue rung, judged over it (test_fused_prologue)
    assert names[at + 1:at + 5:2] == [pd.TRITON_COMPILED, pd.TRITON_COMPILED_1024]
    by = {lv.name: lv for lv in levers}
    top, big = by[pd.TRITON_COMPILED], by[pd.TRITON_COMPILED_1024]
    # the compiled top rung is the control: same compile mode and graph, only the 1x1 path differs
    assert top.base == pd.TOP_NAME and top.change == {} and top.model == "triton-op"
    assert big.base == "batch 1024" and big.change == by["batch 1024"].change == {"batch": 1024}
    for lever in (top, big):
        assert set(lever.needs) == {"cuda", "triton", "inductor"} and lever.honest
        assert lever.est_s >= 45          # a compile, the autotuning, the timing
        assert "eager" not in lever.why   # in the top rung's regime (past_view's OTHER_REGIME)
        assert len(lever.name) <= 34      # the table's rung column


def test_parse_names_takes_names_that_hold_commas():
    known = [lv.name for lv in pd.gpu_levers()]
    assert pd.parse_names("Triton fused epilogue, compiled,Triton compiled at batch 1024", known) == [
        pd.TRITON_COMPILED, pd.TRITON_COMPILED_1024]
    assert pd.parse_names(" freezing ,FP8 per-tensor, fast accumulation,FP8 per-tensor", known) == [
        "freezing", "FP8 per-tensor, fast accumulation", "FP8 per-tensor"]
    assert pd.parse_names("Triton fused epilogue,freezing", known) == ["Triton fused epilogue", "freezing"]
    with pytest.raises(pd.PastDefaultsError, match="unknown lever 'frozen'"):
        pd.parse_names("freezing,frozen", known)


def test_select_adds_the_bases_a_lever_is_judged_over_in_run_order():
    levers = pd.gpu_levers()
    chosen, added = pd.select(levers, f"{pd.TRITON_COMPILED_1024},{pd.TRITON_COMPILED}")
    assert [lv.name for lv in chosen] == ["batch 1024", pd.TRITON_COMPILED, pd.TRITON_COMPILED_1024]
    assert added == ["batch 1024"]
    chosen, added = pd.select(levers, "Triton fused epilogue")
    assert [lv.name for lv in chosen] == [pd.GEMM_CONTROL, "Triton fused epilogue"] and added == [pd.GEMM_CONTROL]
    chosen, added = pd.select(levers, "batch 1024,freezing at batch 1024")
    assert added == [] and len(chosen) == 2


def test_the_compiled_levers_are_skipped_here_with_the_reason():
    if not fe.triton_available():
        pytest.skip("this machine runs Triton: the levers are not skipped")
    for name in (pd.TRITON_COMPILED, pd.TRITON_COMPILED_1024):
        lever = next(lv for lv in pd.gpu_levers() if lv.name == name)
        why = pd.missing(lever, torch.device("cpu"))
        assert "Triton" in why and fe.triton_available() in why


@pytest.mark.parametrize("model", ["triton-op", "triton-op-prologue", "triton-op-prologue-wide"])
def test_the_compiled_op_rung_passes_the_gate_and_is_timed_on_the_cpu(model):
    """The levers' own path (transform, ladder.prepare's torch.compile, the gate, interleaved
    timing) with the op's CPU kernel: Inductor on this CPU, judged over the top rung; the
    prologue's op (fused_prologue) the same way."""
    runner = pd.Runner(torch.device("cpu"), 32, pd.CPU_TOP, rounds=2, rep_ms=20.0, profile_batches=0)
    lever = pd.Lever(f"{model}, compiled (CPU)", "the custom op inside torch.compile",
                     {"compile": "default"}, model=model, est_s=0)
    assert runner.measure_top().status == "measured"
    row = runner.measure(lever)
    assert row.status == "measured", row.note
    assert row.gate["passed"] and row.as_expected is True
    assert row.gate["rel_error"] < 1e-5            # float32: the GEMM path is exact to rounding
    assert row.compile_s > 0 and row.images_per_s > 0 and row.gain is not None
    assert row.note.startswith("autotuner:")       # no Triton here: nothing tuned, and it says so
    # against its base's logits (review 2026-12-05o3 item 3): the same arithmetic, so ~0; the
    # prologue rung says it in its note
    assert row.error_vs_base is not None and row.error_vs_base < 1e-5
    assert (f"against {pd.TOP_NAME}: relative error" in row.note) is model.startswith("triton-op-prologue")
    torch._dynamo.reset()


def test_script_runs_only_the_named_levers_with_their_bases(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks import gpu_past_defaults

    code = gpu_past_defaults.main(["--out", str(tmp_path), "--device", "cpu", "--image", "32",
                                   "--batch", "4", "--rounds", "2", "--rep-ms", "20",
                                   "--levers", pd.TRITON_COMPILED_1024])
    assert code == 0
    rows = json.loads((tmp_path / "past_defaults.json").read_text())["rows"]
    assert [r["name"] for r in rows] == ["top rung", "batch 1024", pd.TRITON_COMPILED_1024]
    assert all(r["status"] == "skipped" and r["note"] for r in rows[1:])
    with pytest.raises(SystemExit):
        gpu_past_defaults.main(["--out", str(tmp_path), "--device", "cpu", "--levers", "no such lever"])


# ------------------------------------------------------------------ issue 41: the wider tuning
def test_the_wider_tuning_lever_is_the_prologue_rung_at_1024_with_more_configs():
    levers = pd.gpu_levers()
    by = {lv.name: lv for lv in levers}
    wide, base = by[pd.PROLOGUE_WIDE_1024], by[pd.PROLOGUE_COMPILED_1024]
    # one change from its base: the config set, nothing else
    assert wide.base == pd.PROLOGUE_COMPILED_1024 and base.stays
    assert (wide.change, wide.needs, wide.inductor) == (base.change, base.needs, base.inductor)
    assert wide.model == base.model + "-wide" and wide.honest and len(wide.name) <= 34
    assert pd.config_set(wide) == "wide" and pd.config_set(base) == pd.config_set(None) == "standard"
    assert wide.est_s > base.est_s                 # 12 configs to time and compile, not 5
    n_wide, n_std = len(fe.TUNING_SETS["wide"]), len(fe.TUNING_SETS["standard"])
    assert f"from {n_wide} tile configs instead of {n_std}" in wide.why
    assert f"autotuned over {n_wide} tile configs, not {n_std}" in wide.short
    from labkit.chapters.ch08_inference_ladder import past_view

    # the section's not-yet-timed list says what the lever changes, its name alone does not
    assert (f"{pd.PROLOGUE_WIDE_1024} ({wide.short}): {past_view.UNTIMED}." in
            past_view.untimed_lines([{"name": "top rung", "status": "measured"}]))
    chosen, added = pd.select(levers, pd.PROLOGUE_WIDE_1024)
    assert [lv.name for lv in chosen] == ["batch 1024", pd.TRITON_COMPILED_1024,
                                          pd.PROLOGUE_COMPILED_1024, pd.PROLOGUE_WIDE_1024]
    assert added == ["batch 1024", pd.TRITON_COMPILED_1024, pd.PROLOGUE_COMPILED_1024]


def test_longest_kernels_names_the_profiled_kernels_longest_first_without_the_rest():
    row = pd.Row("r", "why", "measured", kernel_ms={"cudnn_conv_a": 3.5, "triton_gemm_b": 2.25,
                                                    "(other kernels)": 9.0})
    assert pd.longest_kernels(row) == "cudnn_conv_a 3.50 ms; triton_gemm_b 2.25 ms"
    assert pd.longest_kernels(row, count=1) == "cudnn_conv_a 3.50 ms"
    assert pd.longest_kernels(pd.Row("r", "why", "measured")) == ""
    assert "kernel_ms" in row.as_dict()
