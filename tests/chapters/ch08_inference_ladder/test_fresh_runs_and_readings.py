"""Review 2026-12-03h items 2, 5, 8 and 10 on chapter 08: a page's step gains beside the fresh
runs that did not hold them, a reading that names a kernel-count jump and an idle rise, the
recorded H200 interaction replayed on a page without a GPU, the quiz on the step the GPU does
not feel, and cell 27 on a GPU. Every record here is made in the test (the live
results/reproduce/ file is overwritten by the next reproduce run)."""

import json

import pytest

from labkit.chapters.ch08_inference_ladder import (
    experiment,
    explain,
    ladder,
    report,
    reproduce,
    tables,
)
from labkit.session import Recorded
from labkit.show.widgets.quiz import Key
from tests.chapters.ch08_inference_ladder.test_tables import _h200_like, rung

STEPS = {  # three fresh runs as benchmarks/reproduce.py 08 wrote them on 2026-12-03 22:09
    "TF32": [(2.132, 2.196, ""), (2.130, 2.195, ""), (2.132, 2.195, "")],
    "fp16 weights": [(1.456, 1.844, "IQR 10% > 10%"), (0.964, 1.841, "IQR 13% > 10%"),
                     (1.549, 1.843, "IQR 20% > 10%")],
    "CUDA Graphs": [(1.267, 0.996, ""), (2.463, 1.001, ""), (1.169, 0.999, "")],
    "torch.compile": [(1.697, 1.669, ""), (1.695, 1.650, ""), (1.658, 1.630, "")],
}


def _record(tmp_path, monkeypatch):
    numbers = [{"kept": list(STEPS), "steps": {
        name: {"kept": True, "gain": runs[i][0], "device_gain": runs[i][1], "unstable": runs[i][2]}
        for name, runs in STEPS.items()}} for i in range(3)]
    folder = tmp_path / "reproduce"
    folder.mkdir()
    (folder / "nvidia-h200-08_inference_ladder.json").write_text(json.dumps(
        {"claims": {}, "numbers": numbers, "recorded_at": "2026-12-03T22:09:27+00:00"}))
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path))
    return reproduce.fresh_runs("nvidia-h200")


def test_the_fresh_runs_name_the_step_gains_that_did_not_hold(tmp_path, monkeypatch):
    found = _record(tmp_path, monkeypatch)
    assert found["runs"] == 3 and found["steps"]["fp16 weights"]["wall"] == (0.964, 1.549)
    line = reproduce.not_held_line(found)
    assert line.startswith("Not held by 3 fresh runs on nvidia-h200 (reproduce.py, 2026-12-03 22:09 UTC; "
                           "held: within 10% of each other, no run's instability flag able to flip its keep "
                           "decision, this page's among them)")
    # 'not held' says what held means and that the steps were still kept (review 2026-12-04j item 7)
    assert "fp16 weights kept 3 of 3, gain not stable: 0.96-1.55x wall, 1.84x device, unstable 3 of 3" in line
    assert "CUDA Graphs kept 3 of 3, gain not stable: 1.17-2.46x wall, 1.00x device" in line
    assert "TF32" not in line and "torch.compile" not in line
    assert "torch.compile 1.66-1.70x wall" in reproduce.all_steps_line(found)   # the rest: folded
    assert reproduce.fresh_runs("nvidia-a100") is None     # no record: nothing said


def test_the_ladder_table_shows_them_beside_its_own_step_gains_unfolded(tmp_path, monkeypatch):
    found = _record(tmp_path, monkeypatch)
    run, _ = _h200_like()
    shown = report.table(run.rungs, run.strict, run.strict, fresh=found)
    core = shown._repr_html_().split("<details>")[0]
    assert "Not held by 3 fresh runs" in core and "CUDA Graphs kept 3 of 3, gain not stable: 1.17-2.46x wall" in core
    # every step's range, and the re-timing rules the page's "Reading it" held, are folded
    folded = shown._repr_html_().split("<details>", 1)[1]
    assert "Each step&#x27;s gain in 3 fresh runs" in folded and "re-timed (the two rungs alone" in folded
    # a run without a device clock looks up nothing by default (a CPU has no record)
    assert report.table(run.rungs, run.strict, run.strict).fresh == ""


def _fp16_pair():
    """The H200's channels_last -> fp16 weights in eager mode, as its 21:52 record profiled it."""
    cl = rung("channels_last", 64, 64 / 8222, after="TF32")
    fp16 = rung("fp16 weights", 64, 64 / 12427, after="channels_last")
    cl.kernels_per_batch, fp16.kernels_per_batch = 182.0, 282.0
    cl.kernel_names = {"void cudnn::bn_fw_inf_1C11_kernel_NHWC<float, float, true, true>(float, float, cudnnTensor": 53.0,
                       "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launc": 49.0,
                       "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segme": 20.0}
    fp16.kernel_names = {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::Tenso": 53.0,
                         "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::batch": 53.0,
                         "void at::native::batch_norm_transform_input_channels_last_kernel<c10::Half, float, c10::Ha": 53.0,
                         "void at::native::vectorized_elementwise_kernel<8, at::native::(anonymous namespace)::launc": 49.0,
                         "nvjet_sm90_hsh_256x128_64x4_1x2_h_ssched_bz_coopA_TNT": 10.0}
    cl.idle_share = 0.04
    fp16.here = {"channels_last": {"images_per_s": 8221.0, "idle_share": 0.04}}
    fp16.idle_share = 0.21
    fp16.gain, fp16.gain_spread, fp16.device_gain, fp16.device_spread = 1.51, (1.47, 1.58), 1.85, (1.84, 1.85)
    return cl, fp16


def test_the_fp16_reading_names_its_kernel_jump_and_idle_rise():
    cl, fp16 = _fp16_pair()
    said = explain.reading(cl, fp16)
    assert "the wall followed part way (1.51x)" in said
    assert "kernels per batch 182 -> 282: each of the 53 bn_fw_inf_1C11_kernel_NHWC became 3 (" in said
    assert "batch_norm_transform_input_channels_last_kernel" in said and "direct_copy_kernel_cuda" in said
    assert "<launc" not in said     # ReLU in another vector width is not a kernel added
    assert "GPU idle rose 4% -> 21%: more host-bound" in said
    # a jump under 20% and an idle that held: the plain reading, as before
    fp16.kernels_per_batch, fp16.idle_share, fp16.gain = 200.0, 0.05, 1.80
    fp16.here["channels_last"]["idle_share"] = 0.04
    assert explain.reading(cl, fp16).startswith("both clocks gained; kernels -53 bn_fw_inf_1C11_kernel_NHWC")


def test_the_quiz_key_is_the_step_the_gpu_does_not_feel():
    run, _ = _h200_like()
    for r in run.rungs[1:]:
        r.device_gain = r.gain
    graphs = next(r for r in run.rungs if r.name == "CUDA Graphs")
    graphs.device_gain = 1.00
    assert tables.unfelt_key(run.rungs) == "CUDA Graphs"
    # read from a Recorded ladder the same way (a CPU page asks about the reference's)
    recorded = Recorded("08_inference_ladder", "ladder", "nvidia-h200", {"rungs": [r.as_dict() for r in run.rungs]})
    assert tables.unfelt_key(recorded) == "CUDA Graphs"
    # two such steps: both right
    fold = next(r for r in run.rungs if r.name == "Conv-BN folding")
    fold.device_gain = 1.01
    key = tables.unfelt_key(run.rungs)
    assert isinstance(key, Key) and key.answer == "CUDA Graphs" and set(key.accepted) == {"CUDA Graphs", "Conv-BN folding"}
    # no device clock (a CPU's ladder): no key to compute
    for r in run.rungs:
        r.device_gain = None
    with pytest.raises(ValueError, match="no device clock"):
        tables.unfelt_key(run.rungs)


def test_the_recorded_ladder_replays_the_corrected_interaction_and_the_fresh_runs(tmp_path, monkeypatch):
    found = _record(tmp_path, monkeypatch)
    run, _ = _h200_like()
    payload = {"rungs": [r.as_dict() for r in run.rungs], "defaults": run.strict.as_dict(),
               "regimes": {"eager": {n: r.as_dict() for n, r in run.regimes["eager"].items()}},
               "regime_bases": {"eager": run.regime_bases["eager"].as_dict()}}
    assert experiment.Result.from_record(payload).top.name == "Conv-BN folding"
    shown = tables.recorded_ladder(Recorded("08_inference_ladder", "ladder", "nvidia-h200", payload, "2026-12-03"),
                                   fresh=found)
    column = shown.column("wall gain in 3 fresh runs")
    assert column[run.rungs.index(next(r for r in run.rungs if r.name == "CUDA Graphs"))] == "1.17-2.46x (not held by the fresh runs)"
    notes = " ".join(shown.notes)
    assert "Not held by 3 fresh runs" in notes
    assert ("On the reference GPU (recorded), channels_last, fp16 weights, Conv-BN folding: alone on "
            "the eager base, the three multiply to 1.67x") in notes and "their own gains on the climb multiply to 1.95x" in notes


def test_cell_27_on_a_gpu_says_the_ladder_above_is_the_record(capsys):
    assert tables.recorded_ladder({"rungs": []}) is None
    assert "Recorded: the ladder above." in capsys.readouterr().out


def test_a_record_reads_back_as_the_rungs_it_was_made_of():
    r = rung("fp16 weights", 64, 0.005, after="channels_last")
    r.gain, r.gain_spread, r.here = 1.5, (1.4, 1.6), {"channels_last": {"images_per_s": 8000.0}}
    back = ladder.rung_from_dict(r.as_dict())
    assert back.gain_spread == (1.4, 1.6) and back.here == r.here and back.settings == r.settings


def test_the_quiz_asks_about_the_reference_where_there_is_no_gpu():
    from types import SimpleNamespace

    cpu = SimpleNamespace(on_gpu=False, reference=lambda key: f"the reference's {key}")
    assert tables.unfelt_ladder(cpu, ["rungs"]) == "the reference's ladder"
    assert tables.unfelt_ladder(SimpleNamespace(on_gpu=True), ["rungs"]) == ["rungs"]
    assert tables.unfelt_question(False).endswith("(on the reference H200)")
    assert "reference" not in tables.unfelt_question(True)


def test_a_one_clock_page_leads_with_how_far_repeats_moved():
    """Review 2026-12-04j item 8: the CPU page read 'base moved' row after row; it now leads
    with the band a rung timed again moved in, computed from the re-timings."""
    start = rung("PyTorch defaults", 4, 4 / 105)
    step = rung("batch 16", 16, 16 / 260, after="PyTorch defaults")
    step.gain, step.gain_spread = 2.34, (2.28, 2.59)
    step.here = {"PyTorch defaults": {"images_per_s": 132.0, "step_images_per_s": 314.0}}
    step.timings = [{"gain": [2.3], "base_images_per_s": 128.0}, {"gain": [2.34], "base_images_per_s": 132.0}]
    line = report.repeats_line([start, step])
    assert line.startswith("Repeats on this machine: a rung timed again read 1.21-1.26x its earlier timing")
    assert "(2 of 2 off by over 2%)" in line
    shown = report.table([start, step], start, start, fresh=None)
    assert shown._repr_html_().startswith("<p>Repeats on this machine")
    step.device_gain = 2.3    # a device clock: the line is not shown (the GPU page's words)
    assert report.table([start, step], start, start, fresh=None).repeats == ""


def test_compile_seconds_keep_two_figures_and_the_table_has_a_text_form():
    """Review 2026-12-04j item 10: CUDA Graphs' capture read '0.0 s' beside a payback of 52
    batches; and a viewer without HTML read '<LadderTable at 0x...>'."""
    assert report.seconds(0.0404) == "0.04 s" and report.seconds(13.87) == "14 s"
    assert report.seconds(4.16) == "4.2 s" and report.seconds(0.0) == "0.0 s"
    run, _ = _h200_like()
    shown = report.table(run.rungs, run.strict, run.strict, fresh=None)
    assert repr(shown) == str(shown) and "at 0x" not in repr(shown)
