"""The audit finds each known problem in a hand-built model, and nothing in a clean one."""

import copy

import pytest
import torch

from labkit.audit import (
    audit,
    ddp_contract,
    kernels,
    module_layouts,
    report,
)
from labkit.measure import example_traces, timeline
from tests.audit import handmade


def run(model, memory_format="channels_last", **kw):
    kw.setdefault("export_paths", ("trace",))
    kw.setdefault("recommend_rounds", 2)
    kw.setdefault("recommend_rep_ms", 20.0)
    return audit.run(model, handmade.example(), memory_format=memory_format, **kw)


@pytest.fixture(scope="module")
def clean_report():
    return run(handmade.clean())


def test_a_clean_model_has_no_finding(clean_report):
    assert clean_report.findings() == {k: [] for k in clean_report.findings()}
    assert clean_report.clean() and clean_report.copy_bytes == 0
    assert [r.verdict for r in clean_report.modules[1:3]] == ["kept", "kept"]
    # its 1x1 weight differs from contiguous only in size-1 dims: listed, harmless
    assert [p.name for p in clean_report.harmless] == ["0.weight"]


def test_the_layout_drop_is_found_where_it_happens():
    r = run(handmade.layout_drop())
    assert r.findings()["layout drops"] == ["1"]
    assert r.modules[2].kind == "SwapHW" and r.modules[2].output_format == "neither"
    assert r.findings()["hidden copies"] == []  # a transpose is a view: a drop without a copy


def test_the_hidden_copy_is_found_with_its_bytes_and_moved_by_channels_last():
    x = handmade.example()
    r = run(handmade.hidden_copy(), memory_format="contiguous")
    assert r.findings()["hidden copies"] == ["1"]
    row = r.modules[2]
    assert row.kind == "Reorder" and row.copy_bytes == 2 * 8 * 8 * 8 * 4 and row.copy_ops
    moved = [m for m in r.recommendations if m.title.startswith("move the permute")]
    assert moved and moved[0].copy_bytes == (row.copy_bytes, 0) and "1: 4 KiB" in moved[0].details[0]
    first = r.recommendations[0]  # the same variant: its timing decides, none printed as moved's own
    assert moved[0].ratio is None and moved[0].timing_of == first.title and moved[0].kept == first.kept
    assert first.ratio is not None and first.ratio_q25 <= first.ratio_q75
    assert run(handmade.hidden_copy()).findings()["hidden copies"] == []  # channels_last: none
    assert x.shape == (2, 3, 8, 8)


def test_the_drift_prone_parameter_is_named():
    r = run(handmade.drift_prone())
    assert r.findings()["drift-prone parameters"] == ["0.weight"]
    p = r.drift_prone[0]
    assert p.contiguous_stride == (27, 9, 3, 1) and p.channels_last_stride == (27, 1, 9, 3)
    ddp = [m for m in r.recommendations if "DDP" in m.title][0]
    assert ddp.kept and ddp.ratio is None  # a correctness fix, not timed


def test_parameters_without_format_dependence_are_not_listed():
    assert ddp_contract.audit(torch.nn.Linear(3, 4)) == []


def test_the_layout_verdicts():
    v = module_layouts.layout_verdict
    assert v("channels_last", "channels_last", 4) == "kept"
    assert v("channels_last", "contiguous", 4) == "dropped"
    assert v("channels_last", "contiguous", 2) == "left 4-D"
    assert v("contiguous", "channels_last", 4) == "converted"
    assert v("both", "contiguous", 4) == "ambiguous"


def test_copies_are_charged_to_the_innermost_module_only():
    rows = module_layouts.trace(torch.nn.Sequential(handmade.Reorder()), handmade.example())
    by_name = {r.name: r.copy_bytes for r in rows}
    assert by_name == {"(model)": 0, "0": 2 * 3 * 8 * 8 * 4}


def test_export_rows_answer_on_the_audited_layout(clean_report):
    row, *skipped = clean_report.exports
    assert [s.on_this_layout for s in skipped] == ["skipped"] * 5 and "--exports" in skipped[0].detail
    assert row.path == "torch.jit.trace" and row.on_this_layout == "correct"
    assert set(row.others) == {"NCHW", "transposed view"}


def test_the_profiler_sees_copy_kernels_on_a_gpu_trace_and_does_not_judge_idle_from_it():
    trace = timeline.from_chrome(example_traces.training_trace(3))
    k = kernels.from_trace(trace, timeline.summary(trace))
    assert k.device == "gpu" and any("direct_copy" in n for n in k.names)
    assert 0 < k.copy_share < 1 and abs(sum(r.share for r in k.rows) - k.copy_share) < 1e-9
    # a traced pass alone decides nothing: its idle is kept as the profiled one
    assert k.host_bound is None and k.gpu_idle_share is None and k.profiled_idle_share is not None
    assert "not measured" in k.bound_text()


# ------------------------------------------------------------------ review 2026-12-03h items 3, 7
# The audit's host-bound flag used one profiled pass with the host traced: the H200's ResNet-50
# (TF32, batch 64) read 4.5% idle at 18:44 and 44% at 22:09, while chapter 08 times the same
# network, math and batch at 9.46 ms wall, 9.11 ms device, 4% idle unprofiled. The synthetic
# records below are a run of that shape: a host-traced profile whose launches were slowed
# (60 us each) leaves the GPU idle most of its span, while the unprofiled wall and the kernel
# records say the GPU was busy 96% of each batch.

def _slowed_trace() -> timeline.Trace:
    return timeline.from_chrome(example_traces.training_trace(3, launch_us=60.0))


def test_a_device_bound_run_that_a_host_traced_profile_calls_host_bound():
    trace = _slowed_trace()
    summary = timeline.summary(trace)
    assert summary.gpu_idle_share > kernels.HOST_BOUND_IDLE_SHARE  # the profile alone: host-bound
    k = kernels.from_trace(trace, summary, wall_s=9.46e-3, device_s=9.11e-3)
    assert k.host_bound is False and k.gpu_idle_share == pytest.approx(1 - 9.11 / 9.46)
    assert k.profiled_idle_share == pytest.approx(summary.gpu_idle_share)
    said = k.bound_text()
    assert "GPU idle 4% (unprofiled: device 9.11 ms of 9.46 ms per batch): device-bound" in said
    assert f"the profiled pass read {100 * summary.gpu_idle_share:.0f}%" in said


def test_a_host_bound_run_is_still_called_host_bound_by_the_unprofiled_rule():
    trace = _slowed_trace()
    k = kernels.from_trace(trace, timeline.summary(trace), wall_s=10e-3, device_s=3e-3)
    assert k.host_bound is True and k.gpu_idle_share == pytest.approx(0.7)
    assert kernels.bound(6.9e-3, 10e-3)[1] is True and kernels.bound(7.1e-3, 10e-3)[1] is False
    assert kernels.bound(None, 10e-3) == (None, None)


def test_the_audit_reads_idle_from_unprofiled_figures(monkeypatch):
    """`unprofiled` takes the medians of the kernel records' per-batch device time and of the
    unprofiled rounds' wall per batch (synthetic figures stand in for the GPU's)."""
    from labkit.measure import device_time

    monkeypatch.setattr(device_time, "batch_device_seconds", lambda run, dev, n: [9.0e-3, 9.1e-3, 9.2e-3])
    monkeypatch.setattr(device_time, "unprofiled_wall_seconds",
                        lambda run, dev, n, rounds: [9.5e-3, 9.4e-3, 30e-3])
    device_s, wall_s = kernels.unprofiled(handmade.clean(), handmade.example())
    assert device_s == pytest.approx(9.1e-3) and wall_s == pytest.approx(9.5e-3)
    monkeypatch.setattr(device_time, "batch_device_seconds", lambda run, dev, n: [])
    assert kernels.unprofiled(handmade.clean(), handmade.example())[0] is None


def test_a_recorded_summary_says_which_idle_it_holds(clean_report):
    old = {"device": "gpu", "gpu_idle_share": 0.44, "host_bound": True}
    assert "(profiled pass, host traced): host-bound" in kernels.bound_text(old)
    new = {**old, "idle_rule": kernels.IDLE_RULE, "gpu_idle_share": 0.04, "host_bound": False,
           "profiled_idle_share": 0.34, "wall_ms": 9.46, "device_ms": 9.11}
    assert kernels.bound_text(new).startswith("GPU idle 4% (unprofiled")
    cpu = report.summary(clean_report)["kernels"]
    assert cpu["idle_rule"] is None and kernels.bound_text(cpu) == ""


def test_device_time_over_wall_is_said_to_come_from_separate_runs():
    """Review 2026-12-04i 08-09-99 item 11: the H200's ViT read "GPU idle 0% (unprofiled: device
    55.51 ms of 54.97 ms per batch)": the two figures come from separate runs (kernel records,
    unprofiled rounds), so device time can exceed the wall; the idle is clamped at 0 and the
    text says why instead of printing a share of more than the whole."""
    over = {"device": "gpu", "idle_rule": kernels.IDLE_RULE, "gpu_idle_share": 0.0, "host_bound": False,
            "profiled_idle_share": 0.01, "wall_ms": 54.97, "device_ms": 55.51}
    said = kernels.bound_text(over)
    assert said.startswith("GPU idle 0% (unprofiled: device 55.51 ms, wall 54.97 ms per batch, "
                           "from separate runs: clamped at 0%): device-bound")
    assert "ms of 54.97 ms" not in said
    under = {**over, "gpu_idle_share": 1 - 9.11 / 9.46, "wall_ms": 9.46, "device_ms": 9.11}
    assert "(unprofiled: device 9.11 ms of 9.46 ms per batch): device-bound" in kernels.bound_text(under)
    trace = _slowed_trace()
    k = kernels.from_trace(trace, timeline.summary(trace), wall_s=54.97e-3, device_s=55.51e-3)
    assert k.gpu_idle_share == 0.0 and "separate runs" in k.bound_text()


def test_a_cpu_run_reports_cpu_ops_and_no_host_bound_flag(clean_report):
    assert clean_report.kernels.device == "cpu" and clean_report.kernels.host_bound is None


@pytest.mark.parametrize("bad, message", [
    (dict(example=torch.randn(3, 8)), "image batch"),
    (dict(memory_format="nhwc"), "memory format 'nhwc'"),
    (dict(device="cuda:7" if torch.cuda.is_available() else "cuda"), "absent"),
    (dict(device="banana"), "unknown device"),
    (dict(example=torch.randn(2, 5, 8, 8)), "rejects an input of shape"),
    (dict(export_batch=0), "export_batch must be"),
])
def test_bad_input_gets_a_clear_message(bad, message):
    kw = {"example": handmade.example(), **bad}
    with pytest.raises(audit.AuditError, match=message):
        audit.run(handmade.clean(), kw.pop("example"), **kw)


def test_the_report_forms_agree(clean_report):
    text, md, page = report.text(clean_report), report.markdown(clean_report), report.to_html(clean_report)
    for form in (text, md, page):
        assert "torch.jit.trace" in form and "convert to channels_last" in form
    assert md.count("\n| ") > 5 and page.startswith("<!doctype html>")
    assert "none" in report.structure(clean_report)
    assert report.as_dict(clean_report)["memory_format"] == "channels_last"


def test_exports_on_the_first_images_give_the_same_outcomes_and_say_so():
    """The chapter checks export paths on a few images of the batch: the outcomes per layout
    are those of the whole batch, and the report's notes say how many images were used."""
    model = handmade.layout_drop()
    example = handmade.example(batch=4)
    kw = dict(export_paths=("trace", "export"), recommend_rounds=0)
    whole = audit.run(model, example, **kw)
    first = audit.run(model, example, export_batch=2, **kw)
    outcome = lambda r: [(e.path, e.on_this_layout, e.others) for e in r.exports]  # noqa: E731
    assert outcome(first) == outcome(whole)
    assert any("first 2 of the 4 images" in n for n in first.notes)
    assert not any("first" in n for n in whole.notes)


def test_the_fix_names_the_clock_it_was_judged_by(clean_report):
    first = clean_report.recommendations[0]
    assert first.timed and first.clock == "CPU clock" and "judged by CPU clock" in first.why
    assert report.summary(clean_report)["recommendations"][0]["clock"] == "CPU clock"


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_host_bound_run_judges_its_fix_by_device_time(dtype):
    """GPU only (skipped on a CPU). Many tiny convolutions at batch 1 leave the GPU idle most of
    the time: the audit's unprofiled idle calls the run host-bound, and the channels_last fix is
    judged by kernel records. In float16 too (issue 40 asks for a host-bound fp16 run; review
    2026-12-04i 08-09-99 item 7: the case was float32 only): the model and input are audited in
    float16 and the fix is still judged by the device's clock."""
    model = torch.nn.Sequential(*[torch.nn.Conv2d(8, 8, 1) for _ in range(40)])
    r = audit.run(torch.nn.Sequential(torch.nn.Conv2d(3, 8, 1), model), torch.randn(1, 3, 8, 8),
                  device="cuda", export_paths=("trace",), recommend_rounds=3, recommend_rep_ms=50.0,
                  dtype=dtype)
    assert r.dtype == dtype and report.summary(r)["dtype"] == dtype
    assert r.kernels.host_bound and r.kernels.device_s < r.kernels.wall_s
    first = r.recommendations[0]
    assert first.clock.startswith("device-busy time (kernel records)") and first.ratio_q25 <= first.ratio_q75
    # the recommendation itself (review 2026-12-04j item 5): decided by rule() from the ratios read
    # on the device's clock, whatever the host-paced wall says, its numerics within the dtype's
    # tolerance
    from labkit.audit import recommend

    assert first.title == "convert to channels_last before the first conv"
    assert first.outcome == recommend.decide(first.ratio, first.ratio_q25, first.ratio_q75), first.why
    assert first.kept is (first.outcome == recommend.KEPT) and first.outcome != recommend.NUMERICS_OFF
    # Which way NHWC goes against NCHW for 41 tiny convolutions at 8 channels is another cuDNN
    # choice: the GPU's answer, not this test's assumption (review 2026-12-04n 08-09-99 item 6).
    # The H200 kept it in float32 on 2026-12-04 03:43 and read it 1.112x slower on 2026-12-05
    # 18:05 (three other test workers on the same GPU); an H100 read 1.155x. So on every GPU
    # only the clock and the rule are held, above.
    # the host's side beside the device's (item 2): 41 eager launches and the host's pace
    assert r.kernels.launches and r.kernels.launches >= 41 and r.kernels.pace_us is not None
    assert "launches x" in r.kernels.bound_text()


def test_the_host_side_is_printed_beside_the_device_and_the_border_named():
    """Review 2026-12-04j item 2, then 2026-12-04m 08-09-99 item 4: the host's launches x us per
    launch beside the device's time, and 'at the border, either clock' by chapter 08's rule only
    (unprofiled idle within 5 points of the 30% line), never by launches x us near the device's
    time: the H200's float16 ResNet-50 read 'host-bound' at 52% idle and 'at the border' in the
    same line."""
    def line(idle: float, wall: float, device: float, launches: int = 282) -> str:
        return kernels.bound_text({"device": "gpu", "gpu_idle_share": idle, "host_bound": idle > 0.30,
                                   "idle_rule": kernels.IDLE_RULE, "profiled_idle_share": None,
                                   "wall_ms": wall, "device_ms": device, "launches": launches,
                                   "pace_us": [13.1, 16.3]})
    # the review's case: host-bound, far past the line, launches near the device's time
    host = line(0.515, 8.35, 4.05)
    assert host == ("GPU idle 52% (unprofiled: device 4.05 ms of 8.35 ms per batch): host-bound; "
                    "host ~ the wall: 282 launches x 13.1-16.3 us = 3.7-4.6 ms of it")
    assert "border" not in host
    # within 5 points of 30%, on either side: the border, whichever clock the line names
    assert line(0.33, 6.04, 4.05).endswith("host-bound; host ~ the wall: 282 launches x 13.1-16.3 us"
                                           " = 3.7-4.6 ms of it: at the border, either clock")
    near = line(0.27, 5.55, 4.05)
    assert "device-bound; host 282 launches" in near and near.endswith("at the border, either clock")
    # device-bound and far from the line: the figures alone
    far = line(0.05, 7.90, 7.51, launches=184)
    assert far.endswith("device-bound; host 184 launches x 13.1-16.3 us = 2.4-3.0 ms beside device 7.51 ms")
    assert kernels.border_text({"launches": None, "pace_us": None, "device_ms": 4.0}) == ""


def test_the_audit_draws_chapter_08s_border():
    """One rule in both chapters (review 2026-12-04m 08-09-99 item 4): the audit's line and
    threshold are chapter 08's, and both mark the same idle shares as at the border."""
    from labkit.chapters.ch08_inference_ladder import explain, keep
    from labkit.measure import device_time

    # one function, defined once in labkit.measure.device_time, called by both
    assert kernels.at_border is explain.at_border is device_time.at_border
    assert explain.BORDER_POINTS == device_time.BORDER_POINTS
    assert kernels.HOST_BOUND_IDLE_SHARE == keep.IDLE_LIMIT
    for idle, at in ((0.24, False), (0.25, True), (0.30, True), (0.35, True), (0.36, False), (0.52, False)):
        assert kernels.at_border(idle) is at, idle
        assert (abs(idle - keep.IDLE_LIMIT) <= explain.BORDER_POINTS) is at, idle
    assert not kernels.at_border(None)


@pytest.mark.parametrize("name, kind, copy", [
    ("Memset (Device)", "memset", False),
    ("void scal_kernel<float, float, 1, true, 6, 5, 5, 3>(cublasTransposeParams<float>, float", "kernel", False),
    ("aten::transpose", "cpu_op", False),
    ("aten::permute", "cpu_op", False),
    ("void at::native::elementwise_kernel<128, 4, direct_copy_kernel_cuda>", "kernel", True),
    ("aten::copy_", "cpu_op", True),
])
def test_only_work_that_moves_values_counts_as_a_copy(name, kind, copy):
    assert kernels.is_copy(name, kind) is copy


def test_convert_before_ddp_is_said_only_where_a_parameter_would_move(clean_report):
    titles = lambda r: [m.title for m in r.recommendations]  # noqa: E731
    # the clean model's only 4-D weight is 1x1: its strides change in size-1 dims only
    assert not any("before wrapping in DDP" in t for t in titles(clean_report))
    drifting = run(handmade.drift_prone())
    assert any("before wrapping in DDP" in t for t in titles(drifting))


def test_a_host_side_under_a_millisecond_is_said_in_microseconds():
    """Review 2026-12-04k item 10d: the H200's small model read '8 launches x 11.0-14.0 us =
    0.1-0.1 ms beside device 0.04 ms'."""
    from labkit.audit import kernels

    said = kernels.border_text({"launches": 8, "pace_us": (11.0, 14.0), "device_ms": 0.04})
    assert said == "; host 8 launches x 11.0-14.0 us = 88-110 us beside device 40 us"


def test_the_profiled_and_unprofiled_passes_time_the_network_without_the_audits_hooks(monkeypatch):
    """Review 2026-12-04m 08-09-99 item 10 asked whether the kernels line's wall (9.86 ms on the
    H200, against 7.90 ms for chapter 08's same rung) was timed with the audit's forward hooks
    or copy detector attached: it is not. When the kernels pass (profile, then the unprofiled
    rounds) starts, no module of the audited model carries a hook and no dispatch mode is on."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    seen = {}
    real = kernels.profile

    def watched(model, x, *args, **kw):
        seen["hooks"] = sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())
        seen["mode"] = _get_current_dispatch_mode()
        return real(model, x, *args, **kw)

    monkeypatch.setattr(kernels, "profile", watched)
    run(handmade.hidden_copy(), recommend_rounds=0)
    assert seen == {"hooks": 0, "mode": None}


def test_each_wall_round_is_kept_in_order(monkeypatch):
    """Item 10: the rounds behind the wall's median are recorded in the order timed, so a record
    shows whether its first rounds ran slower (a GPU still coming up to speed)."""
    from labkit.measure import device_time

    monkeypatch.setattr(device_time, "batch_device_seconds", lambda run, dev, n: [7.5e-3] * n)
    monkeypatch.setattr(device_time, "unprofiled_wall_seconds",
                        lambda run, dev, n, rounds: [9.9e-3, 9.8e-3, 7.9e-3, 7.8e-3, 7.9e-3][:rounds])
    busy, walls = kernels.unprofiled_rounds(handmade.clean(), handmade.example())
    assert walls == [9.9e-3, 9.8e-3, 7.9e-3, 7.8e-3, 7.9e-3] and len(busy) == kernels.IDLE_BATCHES
    k = kernels.KernelReport("gpu", (), 0.0, "GPU time", 0.0, False, wall_s=7.9e-3, device_s=7.5e-3,
                             wall_rounds_s=tuple(walls))
    r = run(handmade.clean(), recommend_rounds=0)
    r.kernels = k
    assert report.summary(r)["kernels"]["wall_rounds_ms"] == pytest.approx([9.9, 9.8, 7.9, 7.8, 7.9])


# ------------------------------------------------------------------ review 2026-12-04n item 2
# A float16 audit made every BatchNorm half (model.to(float16)), which chapter 08's fp16 rung no
# longer runs (an extra ~100 kernels a batch on the H200's ResNet-50). Where a float16 audit finds
# half BatchNorms, it times keeping them float32 as it times channels_last, and keeps it by rule().

def test_a_float16_audit_times_batchnorm_kept_float32_by_the_keep_rule():
    from labkit.audit import recommend

    model = handmade.with_batchnorm()
    r = run(model, dtype="float16")
    bn = [m for m in r.recommendations if m.title.startswith("keep BatchNorm float32")]
    assert len(bn) == 1, [m.title for m in r.recommendations]
    fix = bn[0]
    # the title names the fix; the source is in the details (review 2026-12-05o 08-09-99 item 5)
    assert fix.title == "keep BatchNorm float32 (2 of them half)"
    assert "half BatchNorm: 1, 4;" in fix.details[0] and "output torch.float16" in fix.details[0]
    assert fix.details[0].endswith(f"as {recommend.BATCHNORM_SOURCE}")
    assert fix.launches is None and len(fix.details) == 1    # a CPU launches no kernels
    # timed like channels_last: interleaved rounds on the CPU's clock, numerics at float16's tolerance
    assert fix.timed and fix.clock == "CPU clock" and fix.ratio_q25 <= fix.ratio <= fix.ratio_q75
    assert fix.max_error is not None and fix.max_error <= recommend.REDUCED_TOLERANCE[torch.float16]
    # the decision is the keep rule's, whatever this CPU's rounds read
    assert fix.outcome == recommend.decide(fix.ratio, fix.ratio_q25, fix.ratio_q75)
    assert fix.kept is (fix.outcome == recommend.KEPT)
    # the channels_last fix still comes first (chapter 09's tables read recommendations[0])
    assert r.recommendations[0].title == "convert to channels_last before the first conv"
    summary = report.summary(r)
    assert any(s["title"] == fix.title for s in summary["recommendations"])
    assert fix.title in report.markdown(r)
    # the model passed in is untouched
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_batchnorm_float32_is_chapter_08s_and_only_for_half_batchnorms():
    from labkit.audit import recommend
    from labkit.chapters.ch08_inference_ladder import ladder

    half = handmade.with_batchnorm().half()
    assert recommend.half_batchnorms(half) == ["1", "4"]
    ours = recommend.batchnorm_to_float32(copy.deepcopy(half))
    theirs = ladder.batchnorm_float32(copy.deepcopy(half), "float16")
    dtypes = lambda m: [(n, t.dtype) for n, t in (*m.named_parameters(), *m.named_buffers())]  # noqa: E731
    assert dtypes(ours) == dtypes(theirs)
    assert recommend.half_batchnorms(ours) == [] and ours[1].weight.dtype == torch.float32
    assert ours[0].weight.dtype == torch.float16  # convolutions stay half
    x = handmade.example().half()
    with torch.no_grad():
        assert ours(x).dtype == torch.float16
    # float32 and bfloat16 audits make no such recommendation; no rounds: said in the notes
    assert recommend.half_batchnorms(handmade.with_batchnorm()) == []
    assert recommend.batchnorm_float32(handmade.with_batchnorm(), handmade.example()) is None
    plain = run(handmade.with_batchnorm())
    assert not any("BatchNorm" in m.title for m in plain.recommendations)
    quiet = run(handmade.with_batchnorm(), dtype="float16", recommend_rounds=0)
    assert not quiet.recommendations
    assert any(n.startswith("2 BatchNorm modules ran in float16") and "not timed" in n for n in quiet.notes)


BATCHNORM_LAYERS = 20


def assert_kept_by_device_time_with_fewer_launches(fix, layers: int = BATCHNORM_LAYERS) -> None:
    """What the GPU case below holds of its BatchNorm fix (review 2026-12-05o 08-09-99 item 1;
    issue 40: a host-bound fp16 run whose test checks the recommendation and the clock it was
    judged by). The model is built to need the fix: at batch 1 every kernel sits near the
    device's floor, and ATen's all-half BatchNorm runs three kernels a layer (the H200's fp16
    rung, 19:09: direct_copy, vectorized_elementwise, batch_norm_transform_input_channels_last)
    where cuDNN runs one with float32 weights (its channels_last rung: bn_fw_inf_1C11_kernel_NHWC).
    So: judged by device-busy time, kept by rule(), and about two kernels fewer a BatchNorm."""
    from labkit.audit import recommend

    assert fix.clock.startswith("device-busy time (kernel records)"), fix.clock
    assert fix.ratio_q25 <= fix.ratio <= fix.ratio_q75 and fix.wall_ratio is not None
    assert fix.max_error <= recommend.REDUCED_TOLERANCE[torch.float16], fix.why
    assert fix.outcome == recommend.decide(fix.ratio, fix.ratio_q25, fix.ratio_q75), fix.why
    assert fix.kept and fix.outcome == recommend.KEPT, fix.why
    assert fix.launches is not None, "the variant's kernels were not counted"
    original, variant = fix.launches
    assert round((original - variant) / layers) == 2, fix.launches
    assert recommend.launches_text(fix.launches) in fix.details[-1]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_host_bound_float16_audit_keeps_float32_batchnorm_by_device_time():
    """GPU only: 20 tiny convolutions each with a half BatchNorm at batch 1 (host-bound): the
    BatchNorm fix is judged by kernel records, its numerics within float16's tolerance, kept by
    rule() and two kernels a BatchNorm fewer (`assert_kept_by_device_time_with_fewer_launches`,
    whose checks a CPU test below holds on made-up fixes)."""
    model = handmade.with_batchnorm(layers=BATCHNORM_LAYERS)
    r = audit.run(model, torch.randn(1, 3, 8, 8), device="cuda", export_paths=("trace",),
                  recommend_rounds=3, recommend_rep_ms=50.0, dtype="float16")
    assert r.kernels.host_bound
    fix = next(m for m in r.recommendations if m.title.startswith("keep BatchNorm float32"))
    assert fix.title == f"keep BatchNorm float32 ({BATCHNORM_LAYERS} of them half)"
    # the audited model's launches, re-counted beside the variant's, agree with its first
    # profiled pass (the kernels line's) within 2: a profile losing head records would not
    assert abs(fix.launches[0] - r.kernels.launches) <= 2, (fix.launches, r.kernels.launches)
    assert_kept_by_device_time_with_fewer_launches(fix)


def test_the_gpu_batchnorm_checks_pass_a_kept_fix_and_catch_each_way_it_could_be_wrong(monkeypatch):
    """The GPU case above skips here, so its checks are held on fakes: the fix as a CPU float16
    audit makes it, with the variant's launches counted by a stand-in for the profiled pass
    (which must receive the float32-BatchNorm variant), then given the device's clock and a
    kept decision. It passes; not kept, judged on the wall clock, no launch count, or a drop
    of one kernel a BatchNorm each fail."""
    import dataclasses

    from labkit.audit import recommend

    seen = []

    def counted(model, x):
        seen.append(recommend.half_batchnorms(model))
        return 104 if seen[-1] else 64

    monkeypatch.setattr(kernels, "launches", counted)
    half = handmade.with_batchnorm().half()
    fix = recommend.batchnorm_float32(half, handmade.example().half(), rounds=2, rep_ms=20.0,
                                      launches=100)
    # both counted back to back, the model as audited first, then the variant (no half BatchNorm)
    assert len(seen) == 2 and seen[0] and seen[1] == [] and fix.launches == (104, 64)
    assert fix.details[-1] == "launches a batch 104 -> 64 (one profiled pass each)"
    whole = run(handmade.clean(), recommend_rounds=0)
    whole.recommendations = [fix]
    assert report.summary(whole)["recommendations"][0]["launches"] == [104, 64]
    on_device = dataclasses.replace(fix, clock="device-busy time (kernel records): the run is host-bound",
                                    ratio=0.65, ratio_q25=0.63, ratio_q75=0.67, wall_ratio=0.99,
                                    wall_q25=0.97, wall_q75=1.01, kept=True, outcome=recommend.KEPT)
    assert_kept_by_device_time_with_fewer_launches(on_device, layers=20)
    for wrong in (dataclasses.replace(on_device, ratio=0.99, ratio_q25=0.98, ratio_q75=1.01, kept=False,
                                      outcome=recommend.NOT_FASTER),
                  dataclasses.replace(on_device, clock="the harness's device clock (CUDA events)"),
                  dataclasses.replace(on_device, launches=None),
                  dataclasses.replace(on_device, launches=(104, 84))):
        with pytest.raises(AssertionError):
            assert_kept_by_device_time_with_fewer_launches(wrong, layers=20)


def test_the_launches_are_counted_only_on_a_gpu():
    assert kernels.launches(handmade.clean(), handmade.example()) is None
