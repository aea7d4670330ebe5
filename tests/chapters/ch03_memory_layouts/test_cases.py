"""Chapter 03's cases and tables (labkit/chapters/ch03_memory_layouts/cases.py), which left the
notebook: settings per device, the quiz answers' probes, and tables that say what was measured."""

import json
from pathlib import Path

import pytest
import torch

from labkit import claims, session
from labkit.chapters.ch03_memory_layouts import cases
from labkit.chapters.ch03_memory_layouts import claims as claims_c7
from labkit.session import Recorded
from tests.paths import RESULTS


def recorded_c7a(page: dict) -> dict:
    """The reference's recorded C7a entry in a loaded results file (`verdict:C7a`), or, in a
    record from before C7 was split, the retired C7's, whose evidence C7a is judged from
    (`cases.C7A_KEYS`); {} where neither is recorded."""
    entries = page.get("chapters", {}).get("03_memory_layouts", {})
    return next((entries[f"verdict:{key}"] for key in cases.C7A_KEYS if f"verdict:{key}" in entries), {})


def test_channels_last_restrides_only_4d_parameters():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4))
    changed, count, all_4d = cases.restrided(model, cases.channels_last(model))
    assert changed == ["0.weight"] and count == 4 and all_4d
    assert model[0].weight.is_contiguous()  # the original is left alone


def test_propagation_table_counts_and_names_the_first_drop():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.AdaptiveAvgPool2d(1),
                                torch.nn.Flatten(), torch.nn.Linear(8, 2)).eval()
    records = cases.trace_layouts(cases.channels_last(model),
                                  torch.randn(1, 3, 8, 8).to(memory_format=torch.channels_last))
    shown = cases.propagation_table(records, last=2)
    assert sum(shown.column("calls")) == len(records)
    assert "the first that does not" in shown.notes[0]
    assert len(shown.notes) == 1  # the last modules' formats folded under it, one line each
    (summary, lines), = shown.folded
    assert summary.startswith("the last 2 modules") and len(lines.splitlines()) == 2 and "channel stride" in lines


def test_operation_table_reads_format_and_bytes():
    a = torch.randn(2, 8, 6, 6).to(memory_format=torch.channels_last)
    shown = cases.operation_table({"a * 2": lambda: a * 2, "a.contiguous()": lambda: a.contiguous()})
    assert shown.column("output") == ["channels_last", "contiguous"]
    assert shown.column("copied") == [0, a.numel() * 4]


def test_conv_case():
    dtype, conv, act = cases.conv_case(torch.device("cpu"), False, batch=2, image=32)
    assert dtype == torch.float32 and tuple(act.shape) == (2, 64, 8, 8) and conv.bias is None
    assert not hasattr(cases, "reshape_copies_from")  # the retired quiz's key (review 2026-12-04i item 5)


def test_plans_per_device():
    gpu, cpu = cases.c7_plan(True, 4), cases.c7_plan(False, 4)
    assert torch.float16 in gpu.dtypes and 64 in gpu.batches and gpu.rounds == 5
    assert cpu.dtypes == [torch.float32] and cpu.batches == [1, 4] and cpu.rounds == 3
    assert cases.probe_side(True) == 224 and cases.probe_side(False) == 64
    assert cases.math_of(torch.float16, True) == "float16" and cases.math_of(torch.float32, False) == "float32"


def test_conversion_kernels_and_the_note():
    """Review 2026-12-04l item 4: the note named only the NCHW-to-NHWC kernel; it names both
    directions (in and back out) and what the NHWC convolution ran."""
    ops = ["void cudnn::nchwToNhwcKernel<float>(...)", "sm90_xmma_fprop", "nhwcToNchwKernel"]
    assert cases.conversion_kernels(ops) == [ops[0], ops[2]]
    here = cases.conversion_note(ops, Recorded("03_memory_layouts", "verdict:C22", "nvidia-h200"), ["sm90_xmma"])
    assert here == ("On this GPU, cuDNN's kernel works in NHWC: the NCHW convolution's tensors were converted "
                    "in (1 nchwToNhwcKernel) and back out (1 nhwcToNchwKernel); the NHWC one's, neither.")
    assert "NHWC one" not in cases.conversion_note(ops, Recorded("03_memory_layouts", "verdict:C22", "x"))
    recorded = Recorded("03_memory_layouts", "verdict:C22", "nvidia-h200",
                        {"evidence": {"nchw_conversion_kernels": ops[:1], "conversion_kernels": []}}, "2026-12-01")
    there = cases.conversion_note(None, recorded)
    assert "recorded on nvidia-h200, 2026-12-01" in there and "converted in (1 nchwToNhwcKernel)" in there
    assert "back out" not in there and there.endswith("the NHWC one's, neither.")
    out_only = cases.conversion_note(["nhwcToNchwKernel", "nhwcToNchwKernel"], recorded, ["nhwcToNchwKernel"])
    assert "back out (2 nhwcToNchwKernel)" in out_only and "works in NHWC" not in out_only
    assert "the NHWC one ran 1 conversion kernel(s)" in out_only
    nothing = cases.conversion_note(None, Recorded("03_memory_layouts", "verdict:C22", "nvidia-h200"))
    assert "no layout-conversion kernel was profiled" in nothing


def _run(batch, nchw, nhwc, faults=None, **more):
    return {"dtype": "float32", "batch": batch, "nchw_img_s": nchw, "nhwc_img_s": nhwc, "math": "float32",
            "nchw_pct_of_matmul_ceiling": None, "nhwc_pct_of_matmul_ceiling": 40.0,
            "nchw_faults_per_call": faults, **more}


def test_sweep_table_shows_the_device_split_only_where_traced():
    plain = cases.sweep_table([_run(1, 10.0, 12.0)])
    assert plain.column("NHWC/NCHW") == [pytest.approx(1.2)] and "host-bound" not in plain.columns
    # review 2026-12-03e item 6: the per-round spread in the rates' direction, beside their ratio
    spread = cases.sweep_table([_run(1, 10.0, 12.0, nhwc_time_ratio_iqr=[0.8, 0.9])])
    assert spread.column("rounds") == ["1.11-1.25"] and plain.column("rounds") == [""]
    traced = cases.sweep_table([_run(64, 10.0, 12.0, nchw_busy_s=2.0, nhwc_busy_s=1.0, nchw_idle_share=0.5,
                                     nhwc_idle_share=0.6, host_bound=True), _run(16, 10.0, 11.0)])
    assert traced.column("bound by") == ["host", None] and cases.DEVICE_RATIO not in traced.columns
    assert cases.sweep_detail(traced_runs := [_run(64, 10.0, 12.0, nchw_busy_s=2.0, nhwc_busy_s=1.0,
                                                   nchw_idle_share=0.5, nhwc_idle_share=0.6)]).column(
        cases.DEVICE_RATIO) == [2.0] and cases.DEVICE_RATIO in cases.sweep_table(traced_runs).folded[0][1]
    # a traced (GPU) sweep shows what the verdict reads; the rest, with how 'bound by' is read, folded
    assert "GPU idle NCHW" not in traced.columns and "rounds" not in traced.columns
    (summary, rest), = traced.folded
    assert "how 'bound by' is read" in summary and "unprofiled clocks" in rest and "GPU idle NCHW" in rest
    full = cases.sweep_detail([_run(64, 10.0, 12.0, nchw_busy_s=2.0, nhwc_busy_s=1.0, nchw_idle_share=0.5,
                                    nhwc_idle_share=0.6, host_bound=True)])
    # the idle columns are the unprofiled loops' (review 2026-12-06 item 4): a record with no loop
    # timed shows none, never the profiled trace's 50% under the same heading
    assert full.column("GPU idle NCHW") == [None] and any("unprofiled clocks" in n for n in full.notes)
    assert not plain.folded  # a CPU's sweep (nothing traced) shows every column


def test_the_sweep_says_why_a_ratio_may_lie_outside_its_rounds():
    """Review 2026-12-03f item 12: this CPU's b2 read '1.15x | 1.01-1.14'; the GEMM table's
    note said why (a ratio of the medians against the per-round ratios' middle half), C7's
    table did not. The same line under both (a GPU's sweep keeps it with the folded rounds)."""
    plain = cases.sweep_table([_run(2, 21.0, 24.0, nhwc_time_ratio_iqr=[0.88, 0.99])])
    assert plain.column("NHWC/NCHW")[0] > float(plain.column("rounds")[0].split("-")[1])
    # review 2026-12-06z 03-04 item 5: named 'IQR', the one word each page gives the quartiles
    assert plain.notes == ["NHWC/NCHW: of the medians; rounds: per-round ratios' IQR."]
    traced = cases.sweep_table([_run(64, 10.0, 12.0, nchw_busy_s=2.0, nhwc_busy_s=1.0, nchw_idle_share=0.5,
                                     nhwc_idle_share=0.6, host_bound=True)])
    assert cases.rounds_note("NHWC/NCHW") in traced.folded[0][1]
    assert cases.rounds_note("vs one GEMM") == "vs one GEMM: of the medians; rounds: per-round ratios' IQR."


def test_the_ran_column_keeps_hopper_gemm_kernels():
    """Review 2026-12-03c item 7: on the H200 the GEMM paths' ran column was empty; Hopper's
    cuBLAS kernels are nvjet_* / sm90_xmma_* / cutlass*, and an elementwise or reduction
    kernel is left out."""
    names = ["nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_NNT", "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n",
             "void cutlass::Kernel2<cutlass_80_tensorop_f16_s16816gemm>(Params)",
             "void at::native::elementwise_kernel<128, 2>", "aten::bmm", "aten::copy_",
             "void at::native::reduce_kernel<512, 1>", "Memset (Device)", "aten::add"]
    kept = [n for n in names if cases.GEMM_OP.search(n)]
    assert kept[:3] == names[:3] and "Memset (Device)" not in kept and "aten::add" not in kept


def test_the_takeaway_marks_host_bound_runs_with_their_device_ratio():
    host = _run(16, 1953.0, 9403.0, dtype="float16", nchw_busy_s=2.13e-3, nhwc_busy_s=1.41e-3,
                host_bound=True, nchw_idle_share=0.74, nhwc_idle_share=0.8)
    host["dtype"] = "float16"
    line = cases.ratios_line([host, _run(128, 10.0, 12.0)])
    assert line == "float16 b16 4.81x (host-bound; device 1.51x), float32 b128 1.20x"


def test_the_takeaway_gives_a_gpu_sweep_by_regime_and_a_cpu_s_every_run():
    """A GPU's nine runs are in the sweep table just above; the takeaway leads with the judged
    run and the device-bound runs' span, and names the host-bound runs' wall span as the
    host's launches beside their device span (review 2026-12-03g item 4: it led with '4.80x
    (bfloat16 b16)', a host-bound run). A CPU's two runs are given each."""
    def gpu(dtype, batch, nchw, nhwc, busy, host_bound):
        return {**_run(batch, nchw, nhwc, nchw_busy_s=busy, nhwc_busy_s=1.0, nchw_idle_share=0.7,
                       nhwc_idle_share=0.8, host_bound=host_bound), "dtype": dtype}

    # the H200 sweep of 2026-12-03 (18:57 copy): img/s, device NCHW/NHWC, bound by
    runs = [gpu("float32", 16, 5263.0, 5914.0, 1.11, True), gpu("float32", 64, 6782.0, 8217.0, 1.21, False),
            gpu("float32", 128, 7265.0, 8990.0, 1.24, False), gpu("bfloat16", 16, 1864.0, 8944.0, 1.49, True),
            gpu("bfloat16", 64, 7263.0, 13587.0, 1.57, True), gpu("bfloat16", 128, 9605.0, 14830.0, 1.57, False),
            gpu("float16", 16, 3083.0, 9401.0, 1.52, True), gpu("float16", 64, 9171.0, 14473.0, 1.62, False),
            gpu("float16", 128, 10007.0, 15838.0, 1.61, False)]
    judged = [runs[-1]]
    line = cases.takeaway_ratios(runs, judged=judged)
    assert line == ("1.58x at float16 b128 (judged, the harness's clock; the seed: 1.20x); 1.21x (float32 b64) to 1.58x (float16 b128) "
                    "over 5 device-bound run(s); 4 host-bound run(s) 1.12x (float32 b16) to 4.80x (bfloat16 b16) "
                    "by the harness's clock (the host's launches), 1.11x to 1.57x by device time")
    assert line.index("4.80x") > line.index("device-bound")  # the host-bound top is not the lead
    device_bound = [gpu("float16", 128, 9898.0, 15745.0, 1.61, False)] * 5
    assert "host" not in cases.ratios_span(device_bound)  # no run host-bound: the wall span says it
    unread = [_run(b, 10.0, 11.0 + b) for b in range(5)]  # no device times: no regime, spanned apart
    assert cases.ratios_span(unread) == "1.10x (float32 b0) to 1.50x (float32 b4) over 5 run(s) with no regime read"
    two = [_run(1, 10.0, 11.2), _run(2, 10.0, 13.9)]
    assert cases.takeaway_ratios(two, judged=two) == cases.ratios_line(two) == "float32 b1 1.12x, float32 b2 1.39x"
    with pytest.raises(ValueError, match="at least one run"):
        cases.ratios_span([])


def test_the_takeaway_gives_both_runs_where_the_kept_rerun_changed_no_faults():
    """Review 2026-12-03d item 8: 0 faults both ways, so the rerun is a second run: both shown,
    and the verdict's tag says noise where noise decided it."""
    from types import SimpleNamespace

    runs = [_run(1, 10.0, 11.2, faults=0.0), _run(2, 10.0, 13.9, faults=0.0)]
    again = [_run(1, 10.0, 10.0, faults=0.0), _run(2, 10.0, 11.5, faults=0.0)]
    assert cases.ratios_line(runs, again) == "float32 b1 1.12x, rerun 1.00x; float32 b2 1.39x, rerun 1.15x"
    # review 2026-12-04k item 10: 'b1 0.95x, then 0.88x' said neither what 'then' was nor 'slower'
    slower = [_run(1, 10.0, 9.5, faults=0.0, nhwc_time_ratio_iqr=[1.04, 1.06])]
    assert cases.ratios_line(slower, [_run(1, 10.0, 8.8, faults=0.0, nhwc_time_ratio_iqr=[1.1, 1.2])]) == (
        "float32 b1 0.95x (slower), rerun 0.88x (slower)")
    took = [_run(1, 10.0, 10.0, faults=0.0), _run(2, 10.0, 11.5, faults=0.0)]
    assert cases.ratios_line([_run(1, 10.0, 11.2, faults=300.0), _run(2, 10.0, 13.9, faults=300.0)],
                             took) == "float32 b1 1.12x, float32 b2 1.39x"  # the allocator's own rerun
    noisy = SimpleNamespace(claim_id="C7", outcome="depends", depends_on="noise: two runs disagree")
    assert cases.verdict_tag(noisy) == "C7: depends (on noise)"
    assert cases.verdict_tag(SimpleNamespace(claim_id="C7", outcome="refuted", depends_on="")) == "C7"
    # the takeaway's opening follows the verdict (review 2026-12-03f item 5: not 'depends on the machine')
    assert cases.speed_lead(noisy).startswith("Whether it is faster is not resolved here")
    assert cases.speed_lead(SimpleNamespace(outcome="confirmed", depends_on="")) == "channels_last was faster here"
    assert cases.speed_lead(SimpleNamespace(outcome="refuted", depends_on="")) == "channels_last was not faster here"
    assert cases.speed_lead(SimpleNamespace(outcome="depends", depends_on="the allocator")) == (
        "Whether it is faster depends (the allocator)")


def test_slower_is_said_only_where_the_whole_spread_lies_below_1():
    """Review 2026-12-04l item 6: the CPU takeaway read 'float32 b2 0.99x (slower)' beside
    rounds 0.98-1.02. '(slower)' only where every round's ratio is below 1 (as printed); a
    spread that holds 1 says so; no spread, no direction in words."""
    same = _run(2, 10.0, 9.9, faults=0.0, nhwc_time_ratio_iqr=[1 / 1.02, 1 / 0.98])  # speed rounds 0.98-1.02
    assert cases.direction_said(same) == "0.99x (the same within its spread)"
    below = _run(1, 10.0, 9.6, faults=0.0, nhwc_time_ratio_iqr=[1 / 0.96, 1 / 0.95])
    assert cases.direction_said(below) == "0.96x (slower)"
    assert cases.direction_said(_run(1, 10.0, 9.6, nhwc_time_ratio_iqr=[1.0, 1 / 0.95])) == (
        "0.96x (the same within its spread)")  # the top round at 1.00x
    assert cases.direction_said(_run(1, 10.0, 11.0, nhwc_time_ratio_iqr=[0.9, 0.95])) == "1.10x"
    assert cases.direction_said(_run(1, 10.0, 9.6)) == "0.96x"  # no spread read
    assert cases.ratios_line([below, same], [below, same]) == (
        "float32 b1 0.96x (slower), rerun 0.96x (slower); float32 b2 0.99x (the same within its spread), "
        "rerun 0.99x (the same within its spread)")


def _variant(label, median_s, ratio, rounds):
    """A CPU conv timing with its per-round ratios, as the conv quiz line reads it."""
    from labkit.measure.timing import Timing, VariantResult

    timing = Timing(label=label, device="cpu", mode="cold", times_s=(median_s,), median_s=median_s,
                    iqr_s=0.0, min_s=median_s, count=1, clock="cpu")
    return VariantResult(timing, ratio, min(rounds), max(rounds), rounds)


def _cpu_conv(nchw, nhwc, variants):
    """NCHW against NHWC over five interleaved rounds (the chapter's conv comparison)."""
    from labkit.measure.timing import Comparison

    return Comparison(nchw, 5, variants, (nchw, nhwc))


def test_the_conv_line_says_noise_where_the_key_and_the_medians_disagree():
    """Review 2026-12-04l item 6: the CPU line gave the key 0.983x (1 / 1.017) and the medians'
    1.16 / 1.13 ms 1.022x, two directions in one line: it says 'about 1x (noise)' first."""
    nchw, nhwc = cases.LAYOUTS
    cpu = _cpu_conv(nchw, nhwc, {nchw: _variant(nchw, 1.16e-3, 1.0, (1.0,) * 5),
                               nhwc: _variant(nhwc, 1.13e-3, 1.017, (0.99, 1.01, 1.017, 1.03, 1.06))})
    assert cases.conv_clocks_line(cpu) == (
        "Quiz answer: about 1x (noise): 0.98x (NCHW / NHWC CPU time, the median of 5 rounds' ratios; "
        "the medians' 1.16 / 1.13 ms give 1.03x, the other way).")


def test_kept_table_and_half_note():
    shown = cases.kept_table([_run(1, 10.0, 9.0, faults=300.0)], [_run(1, 10.0, 11.0, faults=2.0)])
    assert shown.column("NHWC/NCHW kept") == [pytest.approx(1.1)] and shown.column("faults per NCHW call") == [300.0]
    assert cases.kept_table([_run(1, 10.0, 9.0)], []) is None  # a GPU: the heading says it is a CPU's question
    assert cases.half_note(None).startswith("not measured on a GPU")


def test_the_c7_quiz_reads_the_chapter_s_own_comparison():
    """NCHW time / NHWC time from the careful interleaved table the chapter shows, not a new one."""
    from labkit.measure.timing import Comparison, Timing, VariantResult

    def variant(label, ratio):
        timing = Timing(label=label, device="cpu", mode="cold", times_s=(ratio,), median_s=ratio,
                        iqr_s=0.0, min_s=ratio, count=1, clock="cpu")
        return VariantResult(timing, ratio, ratio, ratio, (ratio,))

    nchw, nhwc = cases.LAYOUTS
    shown = Comparison(nchw, 5, {nchw: variant(nchw, 1.0), nhwc: variant(nhwc, 0.8)}, (nchw, nhwc))
    assert cases.conv_speedup(shown) == pytest.approx(1.25)
    key = cases.conv_quiz_key(shown)  # no spread, no flag: the span is the one value
    assert key.answer == pytest.approx(1.25) and key.span == pytest.approx((1.25, 1.25))
    with pytest.raises(ValueError, match="run the convolution's measurement cell"):
        cases.conv_quiz_key(None)
    with pytest.raises(ValueError, match="run the convolution's measurement cell"):
        cases.conv_speedup(None)
    # the medians give the same ratio: said once (review 2026-12-05w item 5), with no word of which
    # ratio it is (review 2026-12-06 item 11)
    assert cases.conv_clocks_line(shown) == "Quiz answer: 1.25x (NCHW / NHWC CPU time)."


def test_the_conv_line_says_which_ratio_the_quiz_key_is():
    """Review 2026-12-03g item 8: the CPU page showed NHWC 1.1 ms against NCHW 1.39 ms (1.26x)
    beside a key of 1.23x: the key is the median of the rounds' ratios, and the line says so,
    with both medians to 3 digits and their own ratio, so each number shown can be recomputed."""
    nchw, nhwc = cases.LAYOUTS
    cpu = _cpu_conv(nchw, nhwc, {nchw: _variant(nchw, 1.39e-3, 1.0, (1.0,) * 5),
                               nhwc: _variant(nhwc, 1.10e-3, 1 / 1.23, (0.7, 0.78, 1 / 1.23, 0.85, 0.9))})
    line = cases.conv_clocks_line(cpu)
    assert line == ("Quiz answer: 1.23x (NCHW / NHWC CPU time, the median of 5 rounds' ratios; the medians' "
                    "1.39 / 1.10 ms give 1.26x).")
    assert cases.conv_quiz_key(cpu).answer == pytest.approx(1.23)  # the key is the rounds' ratio named


def test_the_conv_line_prints_the_quiz_s_ratio_and_no_computed_loop_pace():
    """Review 2026-12-03d item 4: the H200's table shows NHWC 0.42x (the inverse of the quiz's
    quantity): the line gives the quiz's 2.37x on the GPU clock. Review 2026-12-04i item 7: the
    loop's pace beside it was computed (max of host launch and GPU time), not timed: dropped."""
    from labkit.measure.timing import Comparison, Timing, VariantResult

    def variant(label, median_s, host_s, ratio):
        timing = Timing(label=label, device="cuda", mode="cold", times_s=(median_s,), median_s=median_s,
                        iqr_s=0.0, min_s=median_s, count=1, clock="device", host_s=host_s)
        return VariantResult(timing, ratio, ratio, ratio, (ratio,))

    nchw, nhwc = cases.LAYOUTS
    h200 = Comparison(nchw, 5, {nchw: variant(nchw, 90.5e-6, 83.3e-6, 1.0),
                                nhwc: variant(nhwc, 38.2e-6, 82.6e-6, 38.2 / 90.5)}, (nchw, nhwc))
    line = cases.conv_clocks_line(h200)
    # review 2026-12-06 item 11: 'The quiz's ratio, NCHW / NHWC GPU time per call: 2.429x (the median
    # of 5 rounds' ratios, 1 / 0.412)' cut to the answer and its quantity; the medians agree
    assert line == "Quiz answer: 2.37x (NCHW / NHWC GPU time)."
    assert "Loop pace" not in line and "computed, not timed" not in line and "1.10x" not in line


def test_a_t4_leaves_bfloat16_out_and_calls_float32_float32(monkeypatch, capsys):
    """Compute capability 7.5 (Colab's T4): no bf16 tensor cores, no TF32; 9.0 (H200) as before."""
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (7, 5))
    t4 = cases.c7_plan(True, 4)
    assert t4.dtypes == [torch.float32, torch.float16] and "7.5 < 8.0" in t4.skipped[0]
    assert "bfloat16 not timed" in capsys.readouterr().out
    assert cases.math_of(torch.float32, True) == "float32"
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    h200 = cases.c7_plan(True, 4)
    assert h200.dtypes == [torch.float32, torch.bfloat16, torch.float16] and h200.skipped == ()
    assert capsys.readouterr().out == ""
    assert cases.math_of(torch.float32, True) == "tfloat32"


def test_nchw_needs_no_copy_for_the_channel_gemm_and_the_seeds_path_copies_once():
    """C22's argument (issue 38): NCHW's W^T @ x.view(N, C, H*W) is a batched GEMM on the tensor
    as it lies; only the seed's NHWC -> NCHW path copies, the activation once."""
    from labkit.measure import copies

    _, _, act = cases.conv_case(torch.device("cpu"), False, batch=2, image=32)
    act_cl = act.to(memory_format=torch.channels_last)
    paths = cases.channel_gemms(act, act_cl, torch.randn(act.shape[1], act.shape[1]))
    copied = {label: copies.bytes_copied(f) for label, f in paths.items()}
    assert copied == {cases.GEMM_PATHS["nhwc_direct"]: 0, cases.GEMM_PATHS["nchw_batched"]: 0,
                      cases.GEMM_PATHS["nhwc_to_nchw"]: act.numel() * act.element_size()}
    assert cases.same_product(paths, act.shape[1])
    wrong = dict(paths, extra=lambda: paths[cases.GEMM_PATHS["nchw_batched"]]() + 1)
    assert not cases.same_product(wrong, act.shape[1])


def test_the_device_split_times_a_plain_loop_of_each_layout_interleaved():
    """Review 2026-12-03d item 1: C7's regime reads a back-to-back loop's wall time, timed
    with no profiler, round by round beside the traced rounds (on a CPU no device figure)."""
    from labkit.chapters.ch03_memory_layouts import device_split

    called = []
    found = device_split.evidence(lambda: called.append("nchw"), lambda: called.append("nhwc"), rounds=3, calls=4)
    assert len(found["nchw_loop_rounds"]) == len(found["nhwc_loop_rounds"]) == 3
    assert found["nchw_loop_s"] == sorted(found["nchw_loop_rounds"])[1] and found["nchw_busy_s"] is None
    assert called.count("nchw") == called.count("nhwc")
    with pytest.raises(ValueError, match="calls must be a whole number"):
        device_split.loop_and_host_seconds(lambda: None, 0)
    row = _run(64, 10.0, 12.0, nchw_busy_s=2.0, nhwc_busy_s=1.0, nchw_idle_share=0.5, nhwc_idle_share=0.6,
               nchw_loop_s=2.1, nhwc_loop_s=1.5)
    assert cases.sweep_detail([row]).column("loop over kernels") == ["+5% / +50%"]


def _fixed_comparison(medians: dict[str, float], per_round: dict[str, tuple[float, float, float]],
                      baseline: str):
    """A Comparison whose pooled medians and per-round ratios disagree, as a noisy run's do."""
    from labkit.measure.timing import Comparison, Timing, VariantResult

    def variant(label: str) -> VariantResult:
        m = medians[label]
        timing = Timing(label=label, device="cpu", mode="hot", times_s=(m,), median_s=m, iqr_s=0.0,
                        min_s=m, count=1, clock="cpu")
        q25, mid, q75 = per_round[label]
        return VariantResult(timing, mid, q25, q75, (q25, mid, q75))

    return Comparison(baseline, 5, {label: variant(label) for label in medians}, tuple(medians))


def test_the_gemm_table_leads_with_the_median_of_the_round_ratios_inside_its_rounds():
    """Review 2026-12-06b item 7: the ratio of the medians (1.09x on the CPU) sat outside its own
    rounds' middle half (0.86-0.94): the ratio is the per-round ratios' median, the rounds their
    lowest-highest (C7's convention), and the note names each column's statistic (review
    2026-12-03e item 6: '327 us | 1.05x' against 338 us read as one statistic)."""
    from types import SimpleNamespace

    direct, batched, seeds = cases.GEMM_PATHS.values()
    copy = cases.COPY_ALONE
    found = _fixed_comparison({direct: 338e-6, batched: 327e-6, seeds: 500e-6, copy: 170e-6},
                              {direct: (1.0, 1.0, 1.0), batched: (1.0, 1.05, 1.12), seeds: (1.4, 1.5, 1.6),
                               copy: (0.5, 0.5, 0.5)},
                              direct)
    chapter = SimpleNamespace(measured=lambda *a, **k: (found, []))
    _, _, act = cases.conv_case(torch.device("cpu"), False, batch=1, image=8)
    act_cl = act.to(memory_format=torch.channels_last)
    shown, evidence, _ = cases.gemm_paths(chapter, act, act_cl, torch.randn(act.shape[1], act.shape[1]))
    assert shown.column("vs one GEMM")[1] == pytest.approx(1.05)
    assert shown.column("rounds")[1] == "1.00-1.12" and evidence["nchw_batched"]["ratio_spread"] == [1.0, 1.12]
    assert evidence["nchw_batched"]["ratio_spread_kind"] == "rounds"  # what the verdict names it
    for ratio, rounds in zip(shown.column("vs one GEMM"), shown.column("rounds"), strict=True):
        low, high = (float(v) for v in rounds.split("-"))
        assert low <= ratio <= high  # never outside its own rounds
    assert "the median of the per-round ratios; rounds: lowest-highest; CPU time: each path's median" in " ".join(shown.notes)
    # review 2026-12-05t 03-04 item 10: the time column names its clock
    assert shown.column("CPU time")[0] == pytest.approx(338e-6)
    assert cases.clock_name("device") == cases.clock_name("device (kernel records)") == "GPU time"


def test_the_ran_line_names_kernels_without_their_template_arguments():
    ops = ["Memset (Device)", "void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false, true>(x)",
           "aten::convolution"]
    assert cases.ran_line(ops) == "Memset (Device); nchwToNhwcKernel; aten::convolution"
    assert cases.ran_line(["x" * 100], width=8) == "x" * 8 and cases.ran_line([]) == ""


def test_the_gpu_rules_are_stated_once_on_the_card_not_in_a_cell():
    """Review 2026-12-03f item 15: the rules (some 120 words) sat in markdown on every CPU's
    page. Review 2026-12-04i item 2: the GPU page read 1,543 words and a rules table repeated
    the card: the card states the judged regime and the host-bound margin, no cell repeats it."""
    import jupytext

    from tests.paths import ROOT
    claim = claims.get("C7a")
    # the rule judged is on the card's face, the rest folded on it (review 2026-12-06aa 03-04 item
    # 1: the GPU page read 1,532 core words of a 1,500 limit, this card some 130 of them)
    assert "CUDA Graph" in claim.confirm_if and "the seed's 1.20x printed beside" in claim.confirm_if
    assert "15% slower than their kernels is host-bound" in claim.refute_if
    assert "if capture fails, fp16 b128 by an eager loop" in claim.refute_if
    cells = jupytext.read(ROOT / "notebooks" / "03_memory_layouts.py").cells
    assert not hasattr(cases, "host_bound_rules")
    assert not any("host_bound_rules" in c.source for c in cells)


H200_RECORD = Path(__file__).resolve().parents[3] / "results" / "nvidia-h200.json"


# The H200 C7 evidence these replays were written against (results/nvidia-h200.json as it was
# before the 14:07 re-record, which no longer mixes clocks and keeps no harness medians: the
# replays of the mixed-clock record then tested nothing, and failed on the missing keys).
H200_C7_PINNED = Path(__file__).resolve().parent / "data" / "h200_c7_2026-12-04T0651.json"


def _h200_c7_runs():
    """The pinned recorded H200 C7 evidence (H200_C7_PINNED): the judged runs, then the rest."""
    evidence = json.loads(H200_C7_PINNED.read_text())["evidence"]
    return evidence["runs"], evidence["other_runs"]


def test_no_displayed_ratio_mixes_the_two_layouts_clocks():
    """Review 2026-12-03h item 1: the harness read NCHW on the wall clock and NHWC on the device
    clock in every bf16/fp16 H200 run, and the sweep showed their ratio ('float16 b64 | 6,303 |
    14,356 | 2.28x'), neither clock; its loop read 1.10x. Replayed on the recorded evidence:
    every rate, ratio and rounds' spread shown comes from one clock, each layout's unprofiled
    loop, the device-busy ratio beside it; the takeaway's host-bound span is by the loop too."""
    judged, others = _h200_c7_runs()
    runs = judged + others
    mixed = [r for r in runs if r["nchw_clock"] != r["nhwc_clock"]]
    assert mixed, "the record no longer mixes clocks: this replay tests nothing"
    table = cases.sweep_detail(runs)
    assert "by a loop's wall time" in table.title
    for row, r in zip(table.rows, runs, strict=True):
        get = dict(zip(table.columns, row, strict=True))
        assert get["NCHW loop"] == pytest.approx(r["batch"] / r["nchw_loop_s"])
        assert get["NHWC loop"] == pytest.approx(r["batch"] / r["nhwc_loop_s"])
        assert get["NHWC/NCHW loop"] == pytest.approx(r["nchw_loop_s"] / r["nhwc_loop_s"])
        low, high = (float(v) for v in get["rounds"].split("-"))
        loops = [a / b for a, b in zip(r["nchw_loop_rounds"], r["nhwc_loop_rounds"], strict=True)]
        assert (low, high) == (round(min(loops), 2), round(max(loops), 2))
        assert get[cases.DEVICE_RATIO] == pytest.approx(r["nchw_busy_s"] / r["nhwc_busy_s"])
    # the mixed pairs' ratios (NCHW by wall over NHWC by device: the 2026-12-04 record's fp16 b128
    # read 1.59x beside its 1.16x loop) are shown nowhere: not in the sweep, takeaway or reason
    mixed_ratios = [f"{r['nchw_harness_s'] / r['nhwc_harness_s']:.2f}x" for r in mixed]
    loop_ratios = {f"{r['nchw_loop_s'] / r['nhwc_loop_s']:.2f}x" for r in runs}
    hidden = [m for m in mixed_ratios if m not in loop_ratios]
    assert hidden, "every mixed ratio equals some loop's: this replay tests nothing"
    shown = str(cases.sweep_table(runs))
    line = cases.takeaway_ratios(runs, judged=judged)
    verdict = claims.get("C7a").judge({"runs": judged, "other_runs": others})
    for text in (shown, line, verdict.reason):
        assert not [m for m in hidden if m in text], text
    # the record's judged runs are CUDA Graph replays, both by wall time; the line and the form say so
    own = {f"{j['nchw_graph_s'] / j['nhwc_graph_s']:.2f}x" for j in judged}  # 1.59x at both batches
    assert len(own) == 1 and [j["batch"] for j in judged] == [64, 128]
    assert line.startswith(f"{own.pop()} at float16 b64 and b128 (judged, CUDA Graph replay)")
    form = cases.c7_gpu_form(torch.device("cuda"), 224, judged)
    assert form.endswith("img/s by a CUDA Graph replay loop's wall time")


def test_a_run_with_mixed_clocks_and_no_loop_shows_a_stand_in_not_the_mixed_ratio():
    """An older record (no loop timed): each layout's stand-in pace, named so; never the
    harness's NCHW wall over NHWC device ratio."""
    old = _run(64, 6303.0, 14356.0, nchw_clock="wall", nhwc_clock="device", nchw_host_s=None,
               nhwc_host_s=8.9e-3, nchw_busy_s=6.58e-3, nhwc_busy_s=4.07e-3, nchw_idle_share=0.5,
               nhwc_idle_share=0.7, host_bound=True)
    table = cases.sweep_detail([old])
    assert table.column("NHWC/NCHW") == [pytest.approx((64 / 6303.0) / 8.9e-3)]
    assert "stand-in" in table.title and table.column("rounds") == [""]
    assert cases.c7_gpu_form(torch.device("cuda"), 224, [dict(old, judged_by_wall=True)]).endswith(
        "img/s by a stand-in for a loop's pace")


def test_c22_quiz_is_graded_on_the_conversion_kernels():
    """Review 2026-12-03h item 5: C22's quiz asked which layout the page's own reshape copies
    from; it asks which convolution launches a layout-conversion kernel, graded on the kernels
    profiled here on a GPU and on the recorded H200 kernels on a CPU (labelled so)."""
    nchw = ["void cudnn::engines_precompiled::nchwToNhwcKernel<__half>(...)", "sm90_xmma_fprop",
            "void cudnn::engines_precompiled::nhwcToNchwKernel<__half>(...)"]
    key = cases.conversion_quiz_key
    assert key(nchw, ["sm90_xmma_fprop"], True, Recorded("03", "verdict:C22", "x")) == "the NCHW convolution"
    assert key(["a"], ["b"], True, Recorded("03", "verdict:C22", "x")) == "neither"
    assert key(nchw, nchw, True, Recorded("03", "verdict:C22", "x")) == "both"
    with pytest.raises(ValueError, match="profiling cell below"):
        key(None, None, True, Recorded("03", "verdict:C22", "x"))
    recorded = Recorded("03_memory_layouts", "verdict:C22", "nvidia-h200", {"evidence": {
        "nchw_conversion_kernels": [], "conversion_kernels": ["nhwcToNchwKernel"]}}, "2026-12-03")
    assert key(None, None, False, recorded) == "the NHWC (channels_last) convolution"  # the record decides
    with pytest.raises(ValueError, match="no recorded C22 evidence"):
        key(None, None, False, Recorded("03_memory_layouts", "verdict:C22", "nvidia-h200"))
    assert "recorded on nvidia-h200, 2026-12-03" in cases.conversion_question(False, recorded)
    assert "on this GPU" in cases.conversion_question(True, recorded)
    assert set(cases.CONVERSION_CHOICES) >= {key(nchw, [], True, recorded), key(None, None, False, recorded)}


def test_the_recorded_h200_c22_kernels_grade_the_cpu_quiz():
    """On a CPU the quiz is graded on results/nvidia-h200.json's C22 kernels: cuDNN converts
    the NCHW convolution's input (nchwToNhwcKernel) and output; the NHWC one runs none."""
    if not H200_RECORD.exists():
        pytest.skip("no recorded H200 results")
    chapter = json.loads(H200_RECORD.read_text())["chapters"]["03_memory_layouts"]["verdict:C22"]
    recorded = Recorded("03_memory_layouts", "verdict:C22", "nvidia-h200", chapter["payload"])
    assert cases.conversion_quiz_key(None, None, False, recorded) == "the NCHW convolution"


def test_c22_quiz_answer_is_not_shown_above_it_on_the_cpu_page():
    """The new quiz's key tokens (the conversion kernels, the note that names them) appear
    below the quiz on the executed CPU page, none above it."""
    from tests.notebooks.test_quiz_answers_not_above import cell_text, giveaways, quizzes_in
    page = Path(__file__).resolve().parents[3] / "notebooks" / "03_memory_layouts.ipynb"
    cells = json.loads(page.read_text(encoding="utf-8"))["cells"]
    tokens = ["converted in (", "back out (", "nchwToNhwcKernel", "nhwcToNchwKernel"]
    assert not giveaways(cells, {"quiz_c22": tokens})
    below = " ".join(cell_text(c) for c in cells[quizzes_in(cells)["quiz_c22"] + 1:])
    assert "converted in (1 nchwToNhwcKernel) and back out (1 nhwcToNchwKernel)" in below


# ---------------------------------------------------------------- review 2026-12-04i


def _comparison(clocks):
    from labkit.measure.timing import Comparison, Timing, VariantResult

    def variant(label, median_s, clock):
        timing = Timing(label=label, device="cuda", mode="cold", times_s=(median_s,), median_s=median_s,
                        iqr_s=0.0, min_s=median_s, count=1, clock=clock, host_s=None)
        return VariantResult(timing, 1.0, 1.0, 1.0, (1.0,))

    nchw, nhwc = cases.LAYOUTS
    return Comparison(nchw, 5, {nchw: variant(nchw, 13.0e-3, clocks[0]), nhwc: variant(nhwc, 8.0e-3, clocks[1])},
                      (nchw, nhwc))


def _img_s_pairs_one_clock(run):
    """Every *_img_s pair of a run's evidence reads one clock: named by img_s_clock, or both
    layouts' harness clocks the same; a graph pair by wall time."""
    if "nchw_img_s" in run or "nhwc_img_s" in run:
        assert "nchw_img_s" in run and "nhwc_img_s" in run
        assert run.get("img_s_clock") or run["nchw_clock"] == run["nhwc_clock"]
    return True


def test_no_img_s_pair_mixes_clocks():
    """Item 6: the judged H200 run stored nchw_img_s by wall time beside nhwc_img_s by device
    time (1.59x beside a 1.16x verdict). A pair of mixed clocks is not stored as img/s: the
    harness medians keep their clock in their name's company, and a GPU run's pair is its loops'."""
    mixed = cases.resnet_run(_comparison(("wall", "device")), torch.float16, 128, 224)
    assert "nchw_img_s" not in mixed and "nhwc_img_s" not in mixed and _img_s_pairs_one_clock(mixed)
    assert (mixed["nchw_clock"], mixed["nhwc_clock"]) == ("wall", "device")
    same = cases.resnet_run(_comparison(("cpu", "cpu")), torch.float32, 2, 112)
    assert same["nhwc_img_s"] / same["nchw_img_s"] == pytest.approx(13 / 8) and same["img_s_clock"] == "cpu"
    looped = {**mixed, **cases.loop_rates(128, {"nchw_loop_s": 13.5e-3, "nhwc_loop_s": 11.6e-3})}
    assert looped["nhwc_img_s"] / looped["nchw_img_s"] == pytest.approx(13.5 / 11.6)
    assert looped["img_s_clock"] == claims_c7.LOOP_CLOCK and _img_s_pairs_one_clock(looped)
    # a run with no img/s pair still reads its loops, its stand-in pace, and its ceiling share
    assert claims_c7.rate_ratio(looped) == pytest.approx(13.5 / 11.6)
    older = dict(mixed, nchw_harness_s=13e-3, nhwc_harness_s=8e-3)  # an older record kept the mixed pair
    assert claims_c7.rates(dict(older, nchw_busy_s=12e-3, nhwc_busy_s=7e-3, nhwc_host_s=9e-3))[2] == claims_c7.STAND_IN
    with pytest.raises(AssertionError):
        _img_s_pairs_one_clock({"nchw_img_s": 1.0, "nhwc_img_s": 2.0, "nchw_clock": "wall", "nhwc_clock": "device"})


def test_graph_evidence_is_one_clock_and_its_spread_is_the_speedups():
    """Item 1: the judged replays' evidence from bench's rows, both by wall time (else refused)."""
    nchw, nhwc = cases.LAYOUTS
    rows = [{"variant": nchw, "median_s": 6.8e-3, "ratio": 1.0, "ratio_q25": 1.0, "ratio_q75": 1.0, "clock": "wall"},
            {"variant": nhwc, "median_s": 4.25e-3, "ratio": 0.625, "ratio_q25": 0.62, "ratio_q75": 0.64,
             "clock": "wall"}]
    flag = {"timing": "graphed float16 b64: NCHW", "why": "noisy", "spread": 0.1}
    found = cases.graph_evidence(rows, [flag])
    assert found["nchw_graph_s"] / found["nhwc_graph_s"] == pytest.approx(1.6)
    assert found["graph_speedup_spread"] == [pytest.approx(1 / 0.64), pytest.approx(1 / 0.62)]
    assert found["graph_clock"] == "wall" and found["graph_flags"] == [flag]
    with pytest.raises(ValueError, match="wall clock"):
        cases.graph_evidence([rows[0], dict(rows[1], clock="device")])


def test_graph_replays_on_a_machine_without_cuda_fall_back_with_the_reason():
    """Capture that fails (here: no CUDA at all) gives graph_error, never an exception: C7 then
    judges by the eager rule and says so."""
    if torch.cuda.is_available():
        pytest.skip("this machine can capture")
    net = torch.nn.Conv2d(3, 4, 3).eval()
    found = cases.graph_replays(net, cases.channels_last(net), torch.randn(1, 3, 8, 8))
    assert set(found) == {"graph_error"} and found["graph_error"]


def test_graph_replays_time_both_captures_hot_by_wall_clock_interleaved(monkeypatch):
    """Item 1's wiring, with the capture and the harness stood in for (no GPU here): both
    layouts captured, timed in bench's hot mode on the wall clock on the input's device,
    interleaved in rounds, the flags named by the graph case so only its decision reads them."""
    captured, asked = [], {}
    monkeypatch.setattr(cases, "captured", lambda forward: captured.append(forward) or forward)
    nchw, nhwc = cases.LAYOUTS

    class Stub:
        def table(self):
            return [{"variant": nchw, "median_s": 6.8e-3, "ratio_q25": 1.0, "ratio_q75": 1.0, "clock": "wall"},
                    {"variant": nhwc, "median_s": 4.25e-3, "ratio_q25": 0.62, "ratio_q75": 0.64, "clock": "wall"}]

        def flags(self, case=""):
            return [{"timing": f"{case}: {nhwc}", "why": "noisy", "spread": 0.02}]

    def compare(variants, **kw):
        asked.update(kw, labels=list(variants))
        [f() for f in variants.values()]
        return Stub()

    monkeypatch.setattr(cases.bench, "compare", compare)
    net = torch.nn.Conv2d(3, 4, 3).eval().half()
    found = cases.graph_replays(net, cases.channels_last(net), torch.randn(64, 3, 8, 8).half())
    assert len(captured) == 2 and asked["labels"] == list(cases.LAYOUTS)
    assert (asked["mode"], asked["clock"], asked["device"], asked["rounds"]) == ("hot", "wall", torch.device("cpu"), 5)
    assert found["nchw_graph_s"] / found["nhwc_graph_s"] == pytest.approx(1.6)
    assert found["graph_flags"][0]["timing"] == f"graphed float16 b64: {nhwc}"
    # a harness that read another clock is not the judged quantity: the eager rule, said why
    monkeypatch.setattr(Stub, "table", lambda self: [{"variant": nchw, "median_s": 1.0, "clock": "device"},
                                                     {"variant": nhwc, "median_s": 1.0, "clock": "device"}])
    failed = cases.graph_replays(net, cases.channels_last(net), torch.randn(64, 3, 8, 8).half())
    assert set(failed) == {"graph_error"} and "wall clock" in failed["graph_error"]


def test_no_pair_in_a_runs_evidence_mixes_clocks():
    """Review 2026-12-04j item 7: the judged H200 run kept nchw_harness_s 7.08 ms by wall time
    beside nhwc_harness_s 4.49 ms by device time, their ceiling shares and a round-ratio spread
    across the two clocks. A run's evidence keeps no such pair; the ceiling share is still read,
    on the clock shown, from the batch's time at the ceiling (no clock)."""
    nchw, nhwc = cases.LAYOUTS
    found = _comparison(("wall", "device"))
    for label in (nchw, nhwc):  # 13 ms at 10% of the ceiling: 1.3 ms at the ceiling
        object.__setattr__(found[label].timing, "pct_of_matmul_ceiling", 10.0 if label == nchw else 16.25)
    mixed = cases.resnet_run(found, torch.float16, 64, 224)
    assert cases.mixed_clock_pairs(mixed) == []
    assert mixed["matmul_ceiling_s"] == pytest.approx(1.3e-3)
    looped = {**mixed, **cases.loop_rates(64, {"nchw_loop_s": 13.0e-3, "nhwc_loop_s": 8.0e-3})}
    assert cases.mixed_clock_pairs(looped) == [] and cases._share(looped, "nhwc", 8000.0) == pytest.approx(16.25)
    same = cases.resnet_run(_comparison(("cpu", "cpu")), torch.float32, 2, 112)
    assert same["nchw_harness_s"] == 13.0e-3 and same["nhwc_time_ratio_iqr"] == [1.0, 1.0]
    # the check bites the 2026-12-04 record's judged run (and a hand-built mixed pair)
    judged, _ = _h200_c7_runs()
    assert set(cases.mixed_clock_pairs(judged[0])) >= {"harness_s", "nhwc_time_ratio_iqr"}
    assert cases.mixed_clock_pairs({"nchw_clock": "wall", "nhwc_clock": "device",
                                    "nchw_harness_s": 1.0, "nhwc_harness_s": 2.0}) == ["harness_s"]


def test_the_seeds_path_is_split_into_its_copy_and_its_gemm():
    """Review 2026-12-04j item 2: the seed's path read 6.50x on the H200 beside 'the seed's:
    0.70x', and the page never said it was ATen's untiled permute copy at 14% of the copy
    ceiling. Its copy is timed alone, and the note gives the path with the copy at the ceiling."""
    evidence = {"nhwc_direct": {"median_s": 16e-6, "ratio": 1.0, "pct_of_copy_ceiling": 76.0},
                "nchw_batched": {"median_s": 16e-6, "ratio": 1.0, "pct_of_copy_ceiling": 76.0},
                "nhwc_to_nchw": {"median_s": 104e-6, "ratio": 6.5, "pct_of_copy_ceiling": 23.0},
                "nhwc_to_nchw_copy": {"median_s": 88e-6, "ratio": 5.5, "pct_of_copy_ceiling": 14.0,
                                      "ran": ["void at::native::elementwise_kernel"]}}
    line = cases.split_note(evidence)
    assert line == ("Its GEMM is the batched row; its copy is ATen's untiled permute copy: at the ceiling "
                    "(12.3 us) the path would take about 1.8x, not 6.50x.")
    assert "untiled" not in cases.split_note({**evidence, "nhwc_to_nchw_copy": {
        **evidence["nhwc_to_nchw_copy"], "ran": ["aten::copy_"]}})
    assert cases.split_note({k: v for k, v in evidence.items() if k != "nhwc_to_nchw_copy"}) == ""
    verdict = claims.get("C22").judge({"conv_conversion_bytes": 0, "conversion_kernels": [],
                                       "conv_output_format": "channels_last", "channel_matmul_nhwc_copy_bytes": 0,
                                       "channel_matmul_nchw_copy_bytes": 0, "device": "cuda:0",
                                       "gemm_paths": evidence})
    assert "6.50x the direct time, its copy alone at 14% of the ceiling" in verdict.reason


def _graphed_h200_run(**extra):
    judged, others = _h200_c7_runs()
    return [dict(judged[0], **extra), *judged[1:], *others]


# the H100 page's NHWC b64 profile (review 2026-12-06 item 5), seconds as recorded
H100_NHWC_B64 = {"nhwc_kernel_s": 4.8238e-3, "matmul_ceiling_s": 0.69172e-3,
                 "nhwc_kernel_split": {"GEMM/conv": 1.5036e-3, "conversion": 0.0, "elementwise": 1.4142e-3,
                                       "other": 1.9060e-3},
                 "nhwc_other_kernels": {"batch_norm_transform_input_channels_last_kernel": 1.4149e-3,
                                        "": 0.2224e-3, "unrolled_elementwise_kernel": 0.1305e-3}}


def test_the_judged_table_says_what_holds_nhwc_at_its_share_of_the_ceiling():
    """Review 2026-12-06 item 5: 'NHWC of ceiling 14%' with nothing saying what holds it there,
    though the profile did: GEMM/conv 1.50 of 4.82 ms, at 46% of the fp16 ceiling (the counted
    FLOPs over their time), and BatchNorm and elementwise passes, no matmul FLOPs, 2.8 ms. One
    line under the judged table, computed from the run; none where the record lacks the split."""
    runs = _graphed_h200_run(**H100_NHWC_B64)
    b64 = runs[0]
    shown = cases.judged_table(runs)
    get = dict(zip(shown.columns, shown.rows[0], strict=True))
    line = cases.ceiling_line(b64)
    gemm = H100_NHWC_B64["nhwc_kernel_split"]["GEMM/conv"]
    assert line == (f"NHWC b64 at {get['NHWC of ceiling']:.0f}%: of 4.82 ms of kernels, GEMM/conv 1.50 ms "
                    f"({100 * H100_NHWC_B64['matmul_ceiling_s'] / gemm:.0f}% of the ceiling); BatchNorm 1.41 "
                    "and elementwise 1.41 ms, no matmul FLOPs.")
    # folded since review 2026-12-06aa 03-04 item 1 (the GPU page's 1,500 words), with the profile
    (summary, folded), = shown.folded
    assert "(46% of the ceiling)" in line and folded.splitlines()[-1] == line and not shown.notes
    assert summary.startswith("the profile: ")
    # nothing where the evidence is missing: no split, no FLOPs, an older record (the pinned one)
    assert cases.ceiling_line({k: v for k, v in b64.items() if k != "nhwc_kernel_split"}) == ""
    flopless = {k: v for k, v in b64.items() if "ceiling" not in k}
    assert cases.ceiling_line(flopless) == ""
    assert cases.ceiling_line(_h200_c7_runs()[0][0]) == "" and not any(
        "NHWC b64 at" in text for _, text in cases.judged_table(_graphed_h200_run()).folded)
    # no BatchNorm among the longest 'other' kernels: the elementwise time alone
    plain = dict(b64, nhwc_other_kernels={"max_pool_forward_nhwc": 1e-4})
    assert cases.ceiling_line(plain).endswith("; elementwise 1.41 ms, no matmul FLOPs.")
    # the committed H200 record, as a CPU page would read it: the line from its own fields
    page = json.loads((RESULTS / "nvidia-h200.json").read_text())
    recorded = recorded_c7a(page)["payload"]["evidence"]["runs"][0]
    there = cases.ceiling_line(recorded)
    if recorded.get("nhwc_kernel_split") and recorded.get("nhwc_kernel_s"):
        assert there.startswith("NHWC b64 at ") and f"of {1e3 * recorded['nhwc_kernel_s']:.2f} ms of kernels" in there
    else:
        assert there == ""


def test_the_sweep_s_idle_columns_are_the_unprofiled_loops():
    """Review 2026-12-06 item 4: the takeaway's 'GPU idle 62-72%' was 1 - kernels / loop,
    unprofiled, and the sweep's idle columns the profiled trace's (72% / 79%): a learner read 72
    as NCHW's in one place and NHWC's in the other. The columns are now the loops', the figure
    the takeaway quotes, and the note says so."""
    traced = _run(16, 10.0, 11.0, nchw_busy_s=2.244e-3, nhwc_busy_s=1.531e-3, nchw_loop_s=5.932e-3,
                  nhwc_loop_s=5.551e-3, nchw_idle_share=0.72, nhwc_idle_share=0.79, host_bound=True)
    full = cases.sweep_detail([traced])
    assert full.column("GPU idle NCHW") == [pytest.approx(100 * (1 - 2.244 / 5.932))]
    assert full.column("GPU idle NHWC") == [pytest.approx(100 * (1 - 1.531 / 5.551))]
    assert [f"{v:.0f}" for v in (*full.column("GPU idle NCHW"), *full.column("GPU idle NHWC"))] == ["62", "72"]
    assert any(n.startswith("GPU idle: 1 - kernels' time / loop's, unprofiled.") for n in full.notes)
    assert not any("under the profiler" in n for n in full.notes)
    assert cases.idle_clock(traced) == "unprofiled"
    assert cases.idle_clock({k: v for k, v in traced.items() if k != "nchw_loop_s"}) == "partly profiled"
    assert cases.idle_clock({k: v for k, v in traced.items() if not k.endswith("_loop_s")}) == "profiled"


def test_the_judged_graph_replays_are_shown_with_their_spread_ceiling_share_and_the_seeds_row():
    """Review 2026-12-04j item 1: C7 is judged on CUDA Graph replays, and the page showed only
    the eager sweep: the judged img/s, their spread and share of the fp16 ceiling appeared
    nowhere, the seed's 1,820 / 2,190 img/s had nothing to stand beside, and nothing said
    what makes NCHW slower. Replayed on the recorded H200 evidence."""
    runs = _graphed_h200_run(nchw_conversion_kernels={"nchwToNhwcKernel": 43, "nhwcToNchwKernel": 24},
                             nchw_conversion_s=1.1e-3, nchw_kernel_s=6.6e-3, nhwc_conversion_kernels={})
    shown = cases.judged_table(runs)
    b64 = runs[0]
    get = dict(zip(shown.columns, shown.rows[0], strict=True))
    assert get["NCHW"] == pytest.approx(64 / b64["nchw_graph_s"]) and get["NHWC"] == pytest.approx(64 / b64["nhwc_graph_s"])
    # review 2026-12-06z 03-04 item 5: the column holds quartiles (bench's ratio_q25/q75), named so
    assert get["rounds' IQR"] == "1.590-1.592" and get["over kernels"] == "+0% / +2%"
    assert "rounds, lowest-highest" not in shown.columns
    # the share on the replay's clock: the batch's time at the ceiling over the replay's time
    at_ceiling = b64["nchw_pct_of_matmul_ceiling"] / 100 * b64["nchw_harness_s"]
    assert get["NHWC of ceiling"] == pytest.approx(100 * at_ceiling / b64["nhwc_graph_s"])
    assert shown.rows[-1][:4] == ["the seed (A100, b64)", 1820, 2190, pytest.approx(2190 / 1820)]
    assert "float16 ceiling" in shown.title
    # the profile folded under the table, its conversion kernels counted in the fold's summary
    # (review 2026-12-06aa 03-04 item 1: the GPU page read 1,532 core words, these lines ~70)
    (profile, lines), = shown.folded
    assert profile == "NCHW's 67 conversion kernels, profiled" and not shown.notes
    assert lines == ("NCHW b64 forward, profiled: 67 conversion kernels (43 nchwToNhwcKernel, "
                     "24 nhwcToNchwKernel), 17% of its 6.60 ms kernel time; NHWC: 0.")
    both = cases.c7_tables(runs)
    assert str(both).startswith("C7a judged")
    # review 2026-12-04k (03's GPU page at 1,512 words): the eager sweep in one line, its table folded
    assert both.folded[0] == (profile, lines)
    (summary, folded), = both.folded[1:]
    # review 2026-12-06aa 03-04 item 1: the one line is the fold's summary (it was a note over it)
    assert summary.startswith(f"the eager sweep, {len(runs)} runs: layout effect ") and not both.notes
    assert "device-busy where host-bound (" in summary and folded.startswith("ResNet-50 (eager)")
    # review 2026-12-04n 03-04 item 1: the wall span (Python's launches) is in the fold, not the line
    assert "by wall time" not in summary and "host-bound loops time Python's launches." in folded
    # a CPU's runs have no replay: the sweep alone
    assert cases.judged_table([_run(1, 10.0, 12.0)]) is None
    assert str(cases.c7_tables([_run(1, 10.0, 12.0)])) == str(cases.sweep_table([_run(1, 10.0, 12.0)]))


def test_the_conversion_profile_counts_conversion_kernels_and_their_time():
    kernels = [("void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false>(x)", 2e-5),
               ("sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc", 1e-4),
               ("void cudnn::engines_precompiled::nhwcToNchwKernel<__half>(y)", 1e-5),
               ("void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false>(x)", 2e-5)]
    found = cases.conversion_summary(kernels)
    assert found["conversion_kernels"] == {"nchwToNhwcKernel": 2, "nhwcToNchwKernel": 1}
    assert found["conversion_s"] == pytest.approx(5e-5) and found["kernel_s"] == pytest.approx(1.5e-4)
    assert cases.conversion_summary(kernels[1:2])["conversion_kernels"] == {}
    assert cases.conversion_line({"dtype": "float16", "batch": 64}) == ""


def test_the_forward_kernel_time_is_split_by_kind_and_the_gap_named():
    """Review 2026-12-04l item 5: the H200's NCHW forward ran 2.55 ms more kernel time than
    NHWC's, of which the conversions were 41%, the rest unattributed. The same profile is
    split into GEMM / conversion / elementwise / other, and the line names the kind that
    explains most of the gap (a test that fails without the split: the line had no 'gap')."""
    # names from the H200 records (results/); BatchNorm and pooling count as 'other', as in the timeline's classes
    assert cases.kernel_kind("void cudnn::engines_precompiled::nhwcToNchwKernel<__half>(y)") == "conversion"
    assert cases.kernel_kind("sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc") == "GEMM/conv"
    assert cases.kernel_kind("nvjet_sm90_hsh_64x512_64x2_1x2_h_bz_coopB_NNT") == "GEMM/conv"
    assert cases.kernel_kind("void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add"
                             "<c10::Half>, std::array<char*, 3>>") == "elementwise"
    assert cases.kernel_kind("void cudnn::bn_fw_inf_1C11_kernel_NHWC<float, float, true, true>(float)") == "other"
    assert cases.kernel_kind("void at::native::max_pool_forward_nhwc<c10::Half>") == "other"
    assert cases.kernel_kind("Memset (Device)") == "other"
    assert cases.kernel_kind("void cudnn::engines_precompiled::convertTensor_kernel<float, float, float>") == (
        "conversion")  # not a convolution for its 'conv'
    assert cases.conversion_summary([("convertTensor_kernel<float>", 1e-5)])["conversion_kernels"] == {
        "convertTensor_kernel": 1}  # counted and named with the layout conversions, as its time is
    assert cases.conversion_kernels(["convertTensor_kernel<float>"]) == []  # C22's quiz: layout kernels only
    nchw = [("void cudnn::engines_precompiled::nchwToNhwcKernel<__half>(x)", 1.0e-3),
            ("sm90_xmma_fprop_implicit_gemm_f16", 4.0e-3), ("void at::native::elementwise_kernel<relu>", 1.2e-3),
            ("void at::native::max_pool_forward_nchw<c10::Half>", 0.4e-3)]
    nhwc = [("sm90_xmma_fprop_implicit_gemm_f16", 3.5e-3), ("void at::native::elementwise_kernel<relu>", 0.6e-3),
            ("void at::native::max_pool_forward_nhwc<c10::Half>", 0.5e-3)]
    a, b = cases.conversion_summary(nchw), cases.conversion_summary(nhwc)
    assert a["kernel_split"] == pytest.approx({"GEMM/conv": 4.0e-3, "conversion": 1.0e-3, "elementwise": 1.2e-3,
                                               "other": 0.4e-3})
    assert a["other_kernels"] == {"max_pool_forward_nchw": pytest.approx(0.4e-3)}
    run = {"batch": 64, "nchw_kernel_s": a["kernel_s"], "nchw_conversion_s": a["conversion_s"],
           "nchw_conversion_kernels": a["conversion_kernels"], "nhwc_conversion_kernels": {},
           "nchw_kernel_split": a["kernel_split"], "nhwc_kernel_split": b["kernel_split"]}
    assert cases.conversion_line(run) == (
        "NCHW b64 forward, profiled: 1 conversion kernels (1 nchwToNhwcKernel); NHWC: 0. Kernel time 6.60 ms "
        "(NCHW), 4.60 ms (NHWC); the gap by kind: conversion 1.00 ms (50%), elementwise 0.60 ms (30%), "
        "GEMM/conv 0.50 ms (25%), other -0.10 ms (-5%): conversion is the largest share.")
    assert cases.gap_split({**run, "nhwc_kernel_split": a["kernel_split"]}) == ""  # no gap
    assert cases.gap_split({k: v for k, v in run.items() if k != "nhwc_kernel_split"}) == ""


def test_the_c22_takeaway_is_built_from_the_verdict():
    """Review 2026-12-04j item 3: the CPU page said 'No conversion for the GEMM: ... copied 0
    bytes' under its own 'depends (not observable here)'. Review 2026-12-04l item 4: the GPU
    line led with cuDNN's NCHW-to-NHWC kernel and 'the seed has the direction backwards'; it
    leads with the cuBLAS table (either layout, 0 B, its times) and names both conversions."""
    from types import SimpleNamespace

    from labkit.session import Recorded
    paths = {"nhwc_direct": {"copied_bytes": 0, "median_s": 16.0e-6},
             "nchw_batched": {"copied_bytes": 0, "median_s": 16.1e-6}}
    gpu = {"conversion_kernels": [], "conv_conversion_bytes": 0, "device": "cuda:0", "gemm_paths": paths,
           "nchw_conversion_kernels": ["void cudnn::engines_precompiled::nchwToNhwcKernel<__half>(x)",
                                       "void cudnn::engines_precompiled::nhwcToNchwKernel<__half>(y)"]}
    recorded = Recorded("03_memory_layouts", "verdict:C22", "nvidia-h200", {"evidence": gpu}, "2026-12-04")
    refuted = cases.c22_takeaway(SimpleNamespace(evidence=gpu, outcome="refuted"), recorded)
    # review 2026-12-06z 03-04 item 9: the plain point, both kernels named as profiled (review
    # 2026-12-04l item 4: the back-out kernel is the seed's own direction, so both are named)
    assert refuted == ("The seed has it backwards: cuDNN converted NCHW (nchwToNhwcKernel in, nhwcToNchwKernel "
                       "out), not NHWC; cuBLAS took either layout, 0 B copied (16 us NHWC, 16.1 us NCHW) "
                       "(C22: refuted).")
    # an NHWC conversion profiled, or no NCHW one: no 'backwards'
    assert "backwards" not in cases.c22_takeaway(
        SimpleNamespace(evidence={**gpu, "nchw_conversion_kernels": []}, outcome="refuted"), recorded)
    assert cases.backwards_line({**gpu, "conversion_kernels": ["nhwcToNchwKernel"]}) == ""
    cpu = cases.c22_takeaway(SimpleNamespace(evidence={"conversion_kernels": [], "conv_conversion_bytes": 0},
                                             outcome="depends"), recorded)
    assert "not observable" in cpu and "No conversion" not in cpu and "not NHWC to NCHW" not in cpu
    assert ("; recorded on nvidia-h200, 2026-12-04: the seed has it backwards: cuDNN converted NCHW "
            "(nchwToNhwcKernel in, nhwcToNchwKernel out), not NHWC; cuBLAS took either layout, 0 B "
            "copied") in cpu and cpu.endswith("(16 us NHWC, 16.1 us NCHW) (C22: depends).")
    # review 2026-12-05p 03-04 item 3: the recorded GPU's kernels tagged with its own verdict, not this CPU's
    refuted_there = Recorded("03_memory_layouts", "verdict:C22", "nvidia-h200", {"evidence": gpu, "outcome": "refuted"},
                             "2026-12-05")
    assert cases.c22_takeaway(SimpleNamespace(evidence={"conversion_kernels": [], "conv_conversion_bytes": 0},
                                              outcome="depends"), refuted_there).endswith(
        "16.1 us NCHW) (C22: depends here, refuted there).")
    empty = Recorded("03_memory_layouts", "verdict:C22", "nvidia-h200")
    assert "recorded" not in cases.c22_takeaway(SimpleNamespace(evidence={}, outcome="depends"), empty)
    assert cases.c22_takeaway(SimpleNamespace(evidence={"conversion_kernels": ["nhwcToNchwKernel"]},
                                              outcome="confirmed"), recorded).startswith("NHWC was converted here")
    copied = {**paths, "nchw_batched": {"copied_bytes": 2048, "median_s": 30e-6}}
    assert cases.gemm_lead({"gemm_paths": copied, "device": "cpu"}).startswith(
        "The channel GEMM took either layout with bytes copied: 0 B and 2,048 B")
    assert cases.gemm_lead({"gemm_paths": {"nhwc_direct": paths["nhwc_direct"]}}) == ""


def test_the_recorded_h200_c22_note_names_both_conversions():
    """On the CPU page the note reads results/nvidia-h200.json: the 16:01 record's NCHW
    convolution ran nchwToNhwcKernel and nhwcToNchwKernel (review 2026-12-04l item 4)."""
    if not H200_RECORD.exists():
        pytest.skip("no recorded H200 results")
    chapter = json.loads(H200_RECORD.read_text())["chapters"]["03_memory_layouts"]["verdict:C22"]
    recorded = Recorded("03_memory_layouts", "verdict:C22", "nvidia-h200", chapter["payload"])
    note = cases.conversion_note(None, recorded)
    assert "converted in (1 nchwToNhwcKernel) and back out (1 nhwcToNchwKernel)" in note


def test_the_cpu_form_gives_the_seeds_arm_row_as_fp16_at_batch_64():
    """Review 2026-12-04j item 4: 'float32 (the seed's ARM row)' read as if that row were float32;
    the seed's table header covers it: ResNet-50, batch=64, FP16."""
    assert cases.c7_cpu_form([1, 2], 112) == "float32, batch 1, 2, 112x112"
    assert cases.C7_CPU_SEED == "its ARM row, fp16, batch 64 at 224x224"
    # review 2026-12-04m 03-04 item 10: one style, through the session's builder
    cpu = session.Chapter("03_memory_layouts", torch.device("cpu"), None, False, 2)  # type: ignore[arg-type]
    assert cpu.form(cases.c7_cpu_form([1, 2], 112), seed=cases.C7_CPU_SEED) == (
        f"analogue: {cpu.device_name} (the seed: its ARM row, fp16, batch 64 at 224x224); float32, batch 1, 2, 112x112")


def test_the_half_precision_note_says_why_the_cpu_form_runs_float32():
    """Review 2026-12-04j item 4: the page said half precision is not the seed's question on a
    CPU, while the seed's ARM row is fp16; where fp16 is slower here, the note says so."""
    from types import SimpleNamespace
    slow = SimpleNamespace(variants={"float32": SimpleNamespace(ratio=1.0), "bfloat16": SimpleNamespace(ratio=28.7),
                                     "float16": SimpleNamespace(ratio=20.6)})
    assert cases.half_note(slow).endswith("(the seed's ARM row is fp16; 20.6x slower here, so C7a's CPU form "
                                          "runs float32)")
    fast = SimpleNamespace(variants={"float32": SimpleNamespace(ratio=1.0), "float16": SimpleNamespace(ratio=0.6)})
    assert cases.half_note(fast) == "float32 1.0x, float16 0.6x"


def test_the_gpu_takeaway_leaves_the_eager_runs_names_to_the_sweep_above():
    """The eager clause of a graph-judged takeaway is the span and the host-bound count (the
    sweep above names each run; the page is limited to 1,500 words)."""
    judged, others = _h200_c7_runs()
    line = cases.takeaway_ratios(judged + others, judged=judged)
    # review 2026-12-04m item 2: each run by its card's clock, device-busy time where host-bound
    # (fp16 b64's eager loop read 0.96x by wall time, 1.62x by device-busy time)
    eager = [{k: v for k, v in r.items() if k != claims_c7.BY_GRAPH} for r in judged + others]
    read = sorted(claims_c7.deciding(r)[0] for r in eager)
    # review 2026-12-04n 03-04 item 1: the span is said once, under C7's judged table (each run by
    # its card's clock), not again in the takeaway (the GPU page's 1,500-word core)
    assert "eager loops" not in line and "(judged, CUDA Graph replay)" in line
    span = cases.c7_tables(judged + others).folded[-1][0]  # the eager sweep's fold, its summary
    assert f"layout effect {read[0]:.2f}x (" in span and f"to {read[-1]:.2f}x (" in span
    fp16_b64 = next(r for r in eager if (r["dtype"], r["batch"]) == ("float16", 64))
    assert claims_c7.regime(fp16_b64)[0] and f"{claims_c7.rate_ratio(fp16_b64):.2f}x" not in span


def test_a_disturbed_loop_is_marked_and_a_steady_excess_is_said_with_no_cause():
    """Review 2026-12-05o 03-04 item 3: one rule with chapter 04 (`clocks.disturbed_by`): a loop
    over 1.5x its pace whose rounds disagree (past 1.3x) is disturbed, marked in the sweep and its
    note; one over its pace with steady rounds is marked too. Review 2026-12-06 item 6: its note
    named a cause nothing measured ('per-call work the probe misses'); it says none was."""
    _, others = _h200_c7_runs()
    calm = next(r for r in others if not claims_c7.regime(r)[0] and r.get("nhwc_host_s"))
    loop = 3 * max(calm["nhwc_host_s"], calm["nhwc_busy_s"])
    shaken = dict(calm, nhwc_loop_s=loop, nhwc_loop_rounds=[loop, 0.5 * loop, loop])
    steady = dict(calm, nhwc_loop_s=loop, nhwc_loop_rounds=[loop] * 3)
    assert cases.disturbed(shaken) == ["NHWC"] and cases.over_pace(shaken) == []
    assert cases.disturbed(steady) == [] and cases.over_pace(steady) == ["NHWC"]
    assert cases.disturbed(calm) == [] and cases.over_pace(calm) == []
    assert "(loop disturbed)" in str(cases.sweep_detail([shaken]))
    assert "its rounds spread over 1.3x (timed twice)" in cases.loop_rule_note([shaken])
    assert "(loop over pace)" in str(cases.sweep_detail([steady]))
    assert "with steady rounds, cause not measured" in cases.loop_rule_note([steady])
    assert "probe misses" not in cases.loop_rule_note([steady])
    plain = str(cases.sweep_detail([calm]))
    assert "(loop disturbed)" not in plain and "(loop over pace)" not in plain


def test_the_disturbed_rule_fires_on_the_loop_that_motivated_it():
    """Review 2026-12-04n 03-04 item 3: against host launch + kernels the rule never fired on the
    18:55 record, not even on fp16 b64's NHWC loop (8.86 ms against 5.03 ms of host launch and
    4.07 ms of kernels: 0.97x the sum). A back-to-back loop costs about the larger of the two:
    1.76x here. Review 2026-12-05o item 3: what marks it disturbed is its rounds (9.15, 8.86 and
    4.73 ms, 1.93x); its float32 b64 neighbour (1.03x) and a run with no host launch read (the
    record's NCHW side) are not. Item 6: the NCHW half-precision loops, whose host launch the
    probe cannot read, are named as not checked."""
    fp16_b64 = {"dtype": "float16", "batch": 64,
                "nchw_loop_s": 8.471e-3, "nchw_host_s": None, "nchw_busy_s": 6.576e-3,
                "nchw_loop_rounds": [8.47e-3, 10.16e-3, 7.25e-3],
                "nhwc_loop_s": 8.862e-3, "nhwc_host_s": 5.030e-3, "nhwc_busy_s": 4.066e-3,
                "nhwc_loop_rounds": [9.15e-3, 8.86e-3, 4.73e-3]}
    fp32_b64 = {"dtype": "float32", "batch": 64,
                "nchw_loop_s": 9.442e-3, "nchw_host_s": 5.293e-3, "nchw_busy_s": 9.119e-3,
                "nhwc_loop_s": 7.787e-3, "nhwc_host_s": 4.770e-3, "nhwc_busy_s": 7.525e-3,
                "nchw_loop_rounds": [9.43e-3, 9.44e-3, 9.46e-3], "nhwc_loop_rounds": [7.77e-3, 7.79e-3, 7.79e-3]}
    assert cases.disturbed(fp16_b64) == ["NHWC"] and cases.disturbed(fp32_b64) == []
    assert round(cases.loop_over_pace(8.862e-3, 5.030e-3, 4.066e-3), 2) == 1.76
    assert cases.loop_over_pace(8.471e-3, None, 6.576e-3) is None
    assert cases.launch_unread([fp16_b64, fp32_b64, dict(fp16_b64, dtype="bfloat16")]) == ["NCHW float16/bfloat16"]
    assert cases.loop_rule_note([fp16_b64]).endswith(
        "; NCHW float16: the probe read no host launch (its 3 forwards, queued behind a spin that holds "
        "the GPU, may overfill its launch queue, or a call synchronises: a CUDA API trace would tell); "
        "the host time per forward is the timed loops'.")
    assert cases.loop_rule_note([fp32_b64]) == ""


# The 18:55 H200 record's C7 sweep (results/nvidia-h200.json, 2026-12-04), in ms: per layout
# (loop, host launch, kernels, the loop's rounds); NCHW half precision read no host launch.
SWEEP_1855 = (
    ("float16", 64, (8.471, None, 6.576, (8.471, 10.164, 7.25)), (8.862, 5.03, 4.066, (9.154, 8.862, 4.728))),
    ("float16", 128, (12.817, None, 12.433, (12.811, 12.817, 12.825)), (8.187, 4.861, 7.747, (8.181, 8.197, 8.187))),
    ("float32", 16, (4.741, 5.099, 2.765, (4.741, 4.647, 4.833)), (4.624, 4.552, 2.479, (4.624, 4.877, 4.499))),
    ("float32", 64, (9.442, 5.293, 9.119, (9.426, 9.442, 9.46)), (7.787, 4.77, 7.525, (7.774, 7.787, 7.789))),
    ("float32", 128, (17.732, 5.906, 17.451, (17.703, 17.732, 17.755)),
     (14.337, 5.917, 14.035, (14.345, 14.337, 14.33))),
    ("bfloat16", 16, (5.926, None, 2.186, (5.926, 6.096, 5.393)), (4.897, 4.757, 1.469, (5.855, 4.825, 4.897))),
    ("bfloat16", 64, (7.176, None, 6.807, (7.174, 7.176, 7.183)), (4.981, 4.785, 4.34, (5.579, 4.824, 4.981))),
    ("bfloat16", 128, (13.251, None, 12.944, (13.239, 13.257, 13.251)), (8.654, 4.883, 8.287, (8.654, 8.65, 8.658))),
    ("float16", 16, (6.245, None, 2.111, (6.245, 6.505, 5.422)), (5.059, 4.705, 1.392, (5.646, 5.059, 4.76))),
)


def test_on_the_recorded_sweep_the_rule_flags_only_the_fp16_b64_nhwc_loop():
    """Review 2026-12-05o 03-04 item 3: on the 18:55 record the one rule flags exactly fp16 b64's
    NHWC loop (rounds 9.15/4.73 = 1.93x) and calls no other loop over its pace; item 6: the NCHW
    fp16/bf16 loops are named as not checkable (no host launch read)."""
    def ms(v):
        return None if v is None else v * 1e-3

    runs = []
    for dtype, batch, *layouts in SWEEP_1855:
        run = {"dtype": dtype, "batch": batch}
        for k, (loop, host, busy, rounds) in zip(("nchw", "nhwc"), layouts, strict=True):
            run |= {f"{k}_loop_s": ms(loop), f"{k}_host_s": ms(host), f"{k}_busy_s": ms(busy),
                    f"{k}_loop_rounds": [ms(r) for r in rounds]}
        runs.append(run)
    assert [(r["dtype"], r["batch"], cases.disturbed(r)) for r in runs if cases.disturbed(r)] == [
        ("float16", 64, ["NHWC"])]
    assert not any(cases.over_pace(r) for r in runs)
    assert cases.launch_unread(runs) == ["NCHW float16/bfloat16"]


def test_a_disturbed_loop_is_timed_once_more(monkeypatch):
    """Review 2026-12-04m 03-04 item 2: as 04 does, a disturbed pair of loops is timed again."""
    calls = []
    slow = {"nchw_loop_s": 1.0, "nhwc_loop_s": 1.0, "nchw_busy_s": 0.1, "nhwc_busy_s": 0.1,
            "nchw_loop_rounds": [1.0, 0.5, 1.0], "nhwc_loop_rounds": [1.0, 1.0, 1.0]}  # NCHW's rounds disagree
    calm = dict(slow, nchw_loop_s=0.25, nhwc_loop_s=0.25, nchw_loop_rounds=[0.25] * 3)
    monkeypatch.setattr(cases.device_split, "evidence", lambda *a: calls.append(1) or (slow if len(calls) == 1 else calm))
    net = torch.nn.Identity()
    found = cases.device_busy(net, net, torch.zeros(1, 3, 2, 2), {"nchw_host_s": 0.2, "nhwc_host_s": 0.2})
    assert len(calls) == 2 and found["loop_retimed"] and found["nchw_loop_s"] == 0.25
    calls.clear()
    assert "loop_retimed" not in cases.device_busy(net, net, torch.zeros(1, 3, 2, 2),
                                                   {"nchw_host_s": 2.0, "nhwc_host_s": 2.0})
    # review 2026-12-05o 03-04 item 3: a loop over its pace with steady rounds is not retimed
    steady = dict(slow, nchw_loop_rounds=[1.0] * 3)
    calls.clear()
    monkeypatch.setattr(cases.device_split, "evidence", lambda *a: calls.append(1) or steady)
    assert "loop_retimed" not in cases.device_busy(net, net, torch.zeros(1, 3, 2, 2),
                                                   {"nchw_host_s": 0.2, "nhwc_host_s": 0.2})
    assert len(calls) == 1


def test_the_conv_quiz_table_shows_each_layouts_share_of_the_ceiling():
    """Review 2026-12-04k item 5: the table that grades C7's quiz gave no share of a ceiling;
    each layout's share of the matmul ceiling of the math it ran is a column."""
    from labkit.measure.timing import Comparison, Timing, VariantResult
    from labkit.show.table import comparison as shown_comparison

    def variant(label, median, tflops, pct, ratio):
        timing = Timing(label=label, device="cuda", mode="cold", times_s=(median,), median_s=median, iqr_s=0.0,
                        min_s=median, count=1, flops=tflops * 1e12 * median, tflops=tflops,
                        pct_of_matmul_ceiling=pct, math="float16")
        return VariantResult(timing, ratio, ratio, ratio, (ratio,))

    nchw, nhwc = cases.LAYOUTS
    cmp = Comparison(nchw, 5, {nchw: variant(nchw, 89.5e-6, 165.0, 22.6, 1.0),
                               nhwc: variant(nhwc, 38.2e-6, 387.0, 52.9, 0.427)}, (nchw, nhwc))
    shown = cases.conv_table(shown_comparison(cmp, ""), cmp)
    assert shown.columns[-1] == "of float16 ceiling" and shown.column("of float16 ceiling") == [22.6, 52.9]
    # no ceiling known (or no FLOPs counted): no share column, the rest as below
    plain = Comparison(nchw, 5, {nchw: variant(nchw, 1.0, 1.0, None, 1.0), nhwc: variant(nhwc, 1.0, 1.0, None, 1.0)},
                       (nchw, nhwc))
    assert cases.conv_table(shown_comparison(plain, ""), plain).columns == [
        "variant", "median", cases.CONV_SPEEDUP, "IQR"]


def test_the_conv_table_reads_in_the_quizs_direction_and_heads_its_probe():
    """Review 2026-12-06z 03-04 item 12: the conv table read 'ratio 0.42x' (NHWC time / NCHW time)
    where its quiz and C7's table read NCHW / NHWC (2.36x, 1.59x): it shows NHWC's speed-up over
    NCHW, its spread inverted with it and named by its statistic (item 5: 'IQR', the quartiles).
    Item 3: its host launch is the probe's, headed 'probe, upper bound'. The H200 page's numbers:
    NHWC's time ratio 0.424 (rounds' quartiles 0.42-0.43)."""
    from labkit.measure.timing import Comparison, Timing, VariantResult
    from labkit.show.table import comparison as shown_comparison

    nchw, nhwc = cases.LAYOUTS

    def variant(label, median, ratio, q25, q75):
        timing = Timing(label=label, device="cuda", mode="cold", times_s=(median,), median_s=median, iqr_s=0.0,
                        min_s=median, count=1, host_s=median * 0.8)
        return VariantResult(timing, ratio, q25, q75, (ratio,))

    cmp = Comparison(nchw, 5, {nchw: variant(nchw, 90.3e-6, 1.0, 1.0, 1.0),
                               nhwc: variant(nhwc, 38.3e-6, 0.424, 0.420, 0.430)}, (nchw, nhwc))
    raw = shown_comparison(cmp, "")
    assert "host launch" in raw.columns  # the harness's probe column the chapter renames
    shown = cases.conv_table(raw, cmp)
    get = dict(zip(shown.columns, shown.rows[1], strict=True))
    assert get[cases.CONV_SPEEDUP] == pytest.approx(1 / 0.424) and get[cases.CONV_SPEEDUP] > 1
    assert get["IQR"] == f"{1 / 0.430:.2f}-{1 / 0.420:.2f}" == "2.33-2.38"
    assert cases.CONV_PROBE == "host launch (probe, upper bound)" and cases.CONV_PROBE in shown.columns
    assert "ratio" not in shown.columns and "host launch" not in shown.columns
    assert shown.title.startswith("speed-up over NCHW")
    # the table's value is the quiz's key, one direction on the page
    assert get[cases.CONV_SPEEDUP] == pytest.approx(cases.conv_speedup(cmp))


def test_the_probe_line_names_both_instruments_on_the_recorded_h200_sweep():
    """Review 2026-12-06z 03-04 item 3: the sweep's note said 'host launch not readable, the host
    blocked' while the takeaway quoted NCHW's host time per forward: two instruments, unnamed. On
    the recorded H200 evidence (results/nvidia-h200.json) the line says the probe read none, that
    the page's host time per forward is the timed loops', with the loops' own idle share (fp16/bf16
    b16: 55-56%); the queue stays a hypothesis for the probe alone (its forwards wait behind a spin
    that holds the GPU, `clocks._probe_once`), with the trace that would decide it."""
    record = json.loads((RESULTS / "nvidia-h200.json").read_text()) if (RESULTS / "nvidia-h200.json").exists() else {}
    found = recorded_c7a(record).get("payload")
    if not found:
        pytest.skip("no recorded H200 C7a (or C7) evidence")
    runs = [*found["evidence"]["other_runs"], *found["evidence"]["runs"]]
    line = cases.probe_unread_line(runs)
    assert cases.launch_unread(runs) and line.startswith(f"{', '.join(cases.launch_unread(runs))}: the probe read no")
    idle = sorted(round(100 * cases.unprofiled_idle(r, "nchw")) for r in runs
                  if r.get("nchw_host_s") is None and r.get("nchw_loop_s") and cases.unprofiled_idle(r, "nchw") > 0.3)
    assert idle and f"left the GPU idle ({idle[0]}-{idle[-1]}% where host-bound)" in line
    assert "behind a spin" in line and "CUDA API trace" in line and "not readable" not in line
    assert line.endswith("the host time per forward is theirs")
    # every run host-bound in the eager lesson has its loop's host time, the figure the takeaway quotes
    b16 = next(r for r in runs if r["dtype"] == "float16" and r["batch"] == cases.LESSON_BATCH)
    assert b16["nchw_host_s"] is None and cases.host_line(b16).startswith("per forward the host took")
    assert cases.probe_unread_line([dict(r, nchw_host_s=1e-3) for r in runs]) == ""


def test_the_gemm_note_says_the_outputs_agree_with_their_difference():
    """Review 2026-12-06z 03-04 item 12: 'The three paths give the same numbers.' sat under a
    timing table; it says the outputs agree, with their largest difference."""
    act = torch.randn(2, 8, 4, 4)
    weight = torch.randn(8, 8)
    paths = cases.channel_gemms(act, act.to(memory_format=torch.channels_last), weight)
    agree, error = cases.product_agreement(paths, 8)
    assert agree and 0 <= error < 1e-4
    said = cases.agreement_said(agree, error)
    assert said.startswith("The three paths' outputs agree (max difference") and "same numbers" not in said
    wrong = {**paths, "off": lambda: paths[next(iter(paths))]().reshape(2, 4, 4, 8).permute(0, 3, 1, 2)
             .reshape(2, 8, 16) + 1}
    assert cases.agreement_said(*cases.product_agreement(wrong, 8)).startswith("The three paths' outputs do NOT")


# The 18:57 H200 record's profiled fp16 b64 forward (results/nvidia-h200.json, C7's judged run).
H200_B64_PROFILE = {
    "batch": 64, "nchw_kernel_s": 0.006595949, "nchw_conversion_s": 0.001050837,
    "nchw_conversion_kernels": {"nchwToNhwcKernel": 43, "nhwcToNchwKernel": 26}, "nhwc_conversion_kernels": {},
    "nchw_kernel_split": {"GEMM/conv": 0.001764149, "conversion": 0.001050837, "elementwise": 0.001069271,
                          "other": 0.002711692},
    "nhwc_kernel_split": {"GEMM/conv": 0.001338294, "conversion": 0.0, "elementwise": 0.001072185,
                          "other": 0.00165905},
    "nchw_other_kernels": {"batch_norm_transform_input_kernel": 0.002257586, "": 0.00020995,
                           "unrolled_elementwise_kernel": 0.000115582},
    "nhwc_other_kernels": {"batch_norm_transform_input_channels_last_kernel": 0.001204624, "": 0.000213821,
                           "unrolled_elementwise_kernel": 0.00011782}}


def test_the_kernel_split_calls_a_tie_a_tie_and_names_other_by_its_kernels():
    """Review 2026-12-04m 03-04 item 3: 'other 1.05 ms (42%), conversion 1.05 ms (42%), ...,
    elementwise -0.00 ms (-0%): other is the largest share' named a winner of 1.0529 against
    1.0508 ms, printed a row of nothing, and called 'other' what its record names: ATen's
    BatchNorm kernel, 2.26 ms in NCHW against 1.20 ms in channels_last."""
    line = cases.gap_split(H200_B64_PROFILE)
    assert "BatchNorm 1.05 ms (42%), conversion 1.05 ms (42%), GEMM/conv 0.43 ms (17%)" in line
    assert line.endswith(": BatchNorm and conversion tie.")  # review 2026-12-04n item 1: fewer words
    assert "elementwise" not in line and "other" not in line  # -0.00 ms left out; 'other' named
    assert cases.other_family(H200_B64_PROFILE) == ("BatchNorm", pytest.approx(2.257586e-3),
                                                    pytest.approx(1.204624e-3))
    assert cases._family("void cudnn::bn_fw_inf_1C11_kernel_NHWC<float>") == "BatchNorm"
    assert cases._family("max_pool_forward_nchw") == "pooling"
    # apart by more than 5% of the gap: one kind leads, as before
    apart = dict(H200_B64_PROFILE, nchw_kernel_split=dict(H200_B64_PROFILE["nchw_kernel_split"], other=0.0030))
    assert cases.gap_split(apart).endswith(": BatchNorm is the largest share.")
    # no record of 'other's kernels: the kind keeps its name
    bare = {k: v for k, v in H200_B64_PROFILE.items() if not k.endswith("other_kernels")}
    assert ": other and conversion tie." in cases.gap_split(bare)
    # review 2026-12-06y item 14: a share under half a percent reads 'under 1%', never '-0%'
    small = dict(H200_B64_PROFILE, nchw_kernel_split=dict(H200_B64_PROFILE["nchw_kernel_split"],
                 elementwise=H200_B64_PROFILE["nhwc_kernel_split"]["elementwise"] - 0.01e-3))
    line = cases.gap_split(small)
    assert "elementwise -0.01 ms (under 1%)" in line and "-0%" not in line


def test_the_gpu_takeaway_says_what_the_nchw_forward_paid():
    """Review 2026-12-04m 03-04 item 3: half of why NHWC wins is a BatchNorm kernel 1.9x faster
    in channels_last; the takeaway names it beside the conversions, from the profile."""
    assert cases.slower_because(H200_B64_PROFILE) == (
        "NCHW paid 69 conversion kernels (1.05 ms) and a slower BatchNorm (2.26 against 1.20 ms)")
    assert cases.slower_because({"batch": 64}) == ""
    judged, others = _h200_c7_runs()
    line = cases.ratios_span(judged + others, [dict(judged[0], **H200_B64_PROFILE), *judged[1:]])
    # the takeaway names them without the times the note under C7's table prints, and the eager
    # lesson is a takeaway of its own (review 2026-12-05w item 6)
    assert line.endswith("(judged, CUDA Graph replay); NCHW paid 69 conversion kernels and a slower BatchNorm")
    assert cases.eager_takeaway(judged + others, judged).endswith(cases.eager_lesson(judged + others) + ".")


def test_a_graph_judged_takeaway_carries_the_eager_lesson_computed_from_the_run():
    """Review 2026-12-05p 03-04 item 6: the takeaway lost the eager lesson issue 38 asked for.
    Review 2026-12-05t 03-04 item 1: the lesson is fp16 b16's (host-bound by C7's rule, its trace
    and its pace), not b64's; on the pinned H200 record its wall ratio and device-busy ratio are
    computed from the run (tests/chapters/ch03_memory_layouts/test_eager_lesson.py tests the rest)."""
    judged, others = _h200_c7_runs()
    b16 = next(r for r in others if (r["dtype"], r["batch"]) == ("float16", 16))
    assert claims_c7.regime(b16)[0] is True
    wall = claims_c7.rate_ratio(b16)
    assert wall == pytest.approx(b16["nchw_loop_s"] / b16["nhwc_loop_s"])
    lesson = cases.eager_lesson(judged + others)
    assert "eager float16 b16, " in lesson and f"{wall:.2f}x by wall time, " in lesson
    assert cases.eager_lesson(judged + others) == cases.eager_lesson((judged + others)[::-1])
    assert cases.ratios_span(judged + others, judged).endswith("(judged, CUDA Graph replay)")
    assert cases.eager_takeaway(judged + others, judged) == "The eager loop, beside the graph replays: " + lesson + "."
    assert cases.eager_takeaway(judged + others) == ""  # no graph-judged runs: no lesson of its own
    assert cases.eager_lesson([_run(64, 10.0, 11.0)]) == "" and cases.eager_lesson([]) == ""


def test_the_takeaway_marks_noise_as_c7s_reason_does_and_gives_rounds_a_ratio_lies_outside():
    """Review 2026-12-04m 03-04 item 7: the CPU page's takeaway read 'float32 b1 1.00x (the
    same within its spread), ...; float32 b2 1.11x' beside b2's rounds 1.02-1.10, while C7's
    reason said 'float32 b2 within noise': the noise mark is the verdict's own (its band
    against 1.05), and a ratio of medians outside its rounds gives them."""
    b1 = _run(1, 16.6, 16.6, faults=0.0, nhwc_time_ratio_iqr=[1 / 1.02, 1.0])  # rounds 1.00-1.02
    b2 = _run(2, 21.3, 23.6, faults=0.0, nhwc_time_ratio_iqr=[1 / 1.10, 1 / 1.02])  # rounds 1.02-1.10
    verdict = claims.get("C7a").judge({"runs": [b1, b2]})
    assert "(float32 b2 within noise" in verdict.reason
    assert cases.direction_said(b2) == "1.11x (IQR 1.02-1.10, within noise of 1.05x)"
    # review 2026-12-05u 00-04 item 3: where the run kept its per-round ratios' median, the
    # takeaway states that, inside its IQR, not the ratio of medians outside it
    kept_median = {**b2, "nhwc_time_ratio_median": 1 / 1.06}
    assert cases.direction_said(kept_median) == "1.06x (rounds' median; IQR 1.02-1.10, within noise of 1.05x)"
    assert cases.direction_said(b1) == "1.00x (the same within its spread)"
    rerun_b1 = _run(1, 16.6, 16.8, faults=0.0, nhwc_time_ratio_iqr=[1 / 1.06, 1 / 0.99])  # straddles 1.05
    assert cases.direction_said(rerun_b1) == "1.01x (within noise of 1.05x)"
    assert cases.direction_said(_run(2, 10.0, 12.0, nhwc_time_ratio_iqr=[0.8, 0.85])) == "1.20x"  # faster
    # a GPU run's loops give their lowest-highest round, named 'rounds'; the harness's quartiles
    # above are named 'IQR' (review 2026-12-05r2 item 3)
    looped = _run(64, 10.0, 12.0, nchw_loop_s=1.0, nhwc_loop_s=0.9, nchw_loop_rounds=[1.0, 1.02, 1.05],
                  nhwc_loop_rounds=[1.0, 1.0, 1.0])
    assert cases.direction_said(looped).startswith("1.11x (rounds 1.00-1.05")


def test_gpu_profiles_are_read_after_their_head_marks_and_a_lost_one_says_so(monkeypatch):
    """Review 2026-12-05o 03-04 item 2: 03's profiles (C22's convolutions and GEMM paths,
    `conversion_profile`'s forwards) had no guard against a profile that lost its first kernel
    records, and C22's first kernel is the finding ('1 nchwToNhwcKernel in'). Each is read after
    its head marks (`kernel_records.profile_after_marks`); where none is left, the page says
    'counts incomplete (profiler dropped records)' and grades nothing on it."""
    from types import SimpleNamespace

    answers = []

    def fake(run, device):
        run()
        return answers.pop(0)
    monkeypatch.setattr(cases.kernel_records, "profile_after_marks", fake)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)

    def event(name, us=10.0):
        return SimpleNamespace(name=name, time_range=SimpleNamespace(elapsed_us=lambda: us))
    into = "void cudnn::engines_precompiled::nchwToNhwcKernel<__half>(...)"
    answers[:] = [[event(into), event("conv")], None]
    nchw, nhwc = cases.ops_run(lambda: None, True), cases.ops_run(lambda: None, True)
    assert cases.conversion_kernels(nchw) == [into] and nhwc == [cases.INCOMPLETE]
    assert cases.complete(nchw) and not cases.complete(nhwc)
    assert cases.ran_line(nhwc) == "counts incomplete (profiler dropped records)"
    recorded = Recorded("03_memory_layouts", "verdict:C22", "nvidia-h200")
    with pytest.raises(ValueError, match="not graded: kernel counts incomplete"):
        cases.conversion_quiz_key(nchw, nhwc, True, recorded)
    assert cases.conversion_quiz_key(nchw, ["conv"], True, recorded) == cases.CONVERSION_CHOICES[0]
    assert cases.conversion_note(nchw, recorded, nhwc) == (
        "On this GPU, the convolutions' kernel counts incomplete (profiler dropped records): no conversion read.")
    # the whole forward: NHWC's profile lost, so no split of the two is read
    answers[:] = [[event(into), event("conv")], None]
    found = cases.conversion_profile(torch.nn.Identity(), torch.nn.Identity(), torch.zeros(1, 3, 2, 2))
    assert found["nhwc_kernels_complete"] is False and "nchw_kernel_s" in found
    run = {"batch": 64, **found}
    assert cases.conversion_line(run) == "NCHW b64 forward, profiled: kernel counts incomplete (profiler dropped records)."


def test_the_cpu_c7_takeaway_quotes_the_recorded_gpu_judged_runs():
    """Review 2026-12-05p 03-04 item 3: the CPU's C7 line quoted no recorded H200 figure; it
    gives the recorded verdict's judged runs, from the record (never typed), tagged as there."""
    from labkit.session import Recorded
    payload = recorded_c7a(json.loads((Path(__file__).resolve().parents[3] / "results" / "nvidia-h200.json").read_text()))[
        "payload"]
    recorded = Recorded("03_memory_layouts", "verdict:C7a", "nvidia-h200", payload, "2026-12-05")
    runs = payload["evidence"]["runs"]
    ratio = {f"{float(r['nchw_graph_s']) / float(r['nhwc_graph_s']):.2f}" for r in runs}
    line = cases.recorded_c7(recorded)
    assert line.startswith("; recorded on nvidia-h200, 2026-12-05: ") and line.endswith(
        f"CUDA Graph replay ({payload['outcome']} there)")
    assert len(ratio) != 1 or f"{ratio.pop()}x at float16 b64 and b128" in line
    assert cases.recorded_c7(None) == ""
    assert cases.recorded_c7(Recorded("03_memory_layouts", "verdict:C7a", "nvidia-h200")) == ""


def test_the_eager_loops_are_read_beside_reproduces_fresh_processes():
    """Review 2026-12-05p 03-04 item 1: the H200 page read fp16 b128's eager loop 1.18x,
    host-bound, where reproduce's 3 fresh processes read 1.58x, device-bound, and the page did
    not say so. On the committed inputs (the page's runs, reproduce's record, whichever call
    wrote them): the fresh runs attach only on their GPU, the note names exactly the runs that
    read otherwise, and the C7 reason says it beside those; then one run made to read otherwise
    with its kernels the same, and with its kernels slower."""
    import copy

    from labkit.chapters.ch03_memory_layouts import claims as c7_claims
    root = Path(__file__).resolve().parents[3] / "results"
    record = json.loads((root / "reproduce" / cases.FRESH_RECORD).read_text())
    page = recorded_c7a(json.loads((root / "nvidia-h200.json").read_text()))
    evidence = page["payload"]["evidence"]
    runs = copy.deepcopy(evidence["runs"] + evidence["other_runs"])
    for r in runs:                      # the page's own attachment dropped: attached again here
        r.pop(c7_claims.FRESH, None)
    gpu = record["fingerprint"]["gpu_name"]
    assert cases.attach_fresh(runs, record, "another GPU") == 0 and cases.fresh_note(runs) == ""
    timed = {cases._name(r) for e in record["evidence"]
             for r in cases.c7a_evidence(e)["runs"] + cases.c7a_evidence(e)["other_runs"]}
    # reproduce times the two judged runs (and, from review 2026-12-05t 03-04 item 1, fp16 b16)
    assert cases.attach_fresh(runs, record, gpu) == len(timed & {cases._name(r) for r in runs}) >= 2
    note = cases.fresh_note(runs)
    judged = [r for r in runs if c7_claims.FRESH in r]
    moved = cases.seed_moved(runs)      # the seed's run whose range the sweep's fold states instead
    for r in judged:                    # named in the note and beside the verdict iff it differs
        differs = c7_claims.fresh_differs(r)
        # the eager lesson's b16 is the takeaway's (`eager_lesson`), never the note's; nor the seed's
        # run where it moved (the 2026-12-06 09:34 record: fp16 b64 1.38-1.56x, `seed_variance`)
        assert (f"{cases._name(r)}'s eager loop" in note) is (
            differs and r.get("batch") != cases.LESSON_BATCH and r is not moved)
        assert ("fresh processes)" in c7_claims._graph_beside(r)) is differs
        if differs and r.get("batch") != cases.LESSON_BATCH:
            assert note.startswith(f"Beside 3 fresh processes (reproduce.py, recorded "
                                   f"{r[c7_claims.FRESH]['recorded_at']} UTC): ")
    # one run made to read otherwise: its loop 1.5x theirs, its kernels theirs, its regime not theirs
    # (not the eager lesson's b16, which reproduce times too: the takeaway, not the note, gives it)
    run = copy.deepcopy(next(r for r in reversed(judged) if r.get("batch") != cases.LESSON_BATCH))
    host = bool(c7_claims.regime(run)[0])
    ratio = float(c7_claims.loop_ratio(run))
    run[c7_claims.FRESH] = {"loop_ratio": [1.5 * ratio, 1.6 * ratio], "runs": 3, "host_bound": 0 if host else 3,
                            "nhwc_loop_s": float(run["nhwc_loop_s"]) / 1.5, "nchw_loop_s": float(run["nchw_loop_s"]),
                            "nhwc_busy_s": float(run["nhwc_busy_s"]), "nchw_busy_s": float(run["nchw_busy_s"]),
                            "recorded_at": "2026-12-05 03:56"}
    assert c7_claims.fresh_differs(run)
    said = cases.fresh_note([run])
    assert said.startswith(f"Beside 3 fresh processes (reproduce.py, recorded 2026-12-05 03:56 UTC): {cases._name(run)}'s "
                           f"eager loop {ratio:.2f}x here ({'host' if host else 'device'}-bound), "
                           f"{1.5 * ratio:.2f}-{1.6 * ratio:.2f}x there ({'device' if host else 'host'}-bound)")
    assert said.endswith("; its NHWC loop 1.50x theirs, its kernels 1.00x: only its host-paced time moved, "
                         "its kernels the same (why is not measured).")
    assert c7_claims._graph_beside(run).endswith(f", {'device' if host else 'host'}-bound, in 3 fresh processes)")
    # slower kernels beside the slower loop: the host is not named as the cause
    busy = copy.deepcopy(run)
    busy["nhwc_busy_s"], busy["nchw_busy_s"] = 1.3 * busy["nhwc_busy_s"], 1.3 * busy["nchw_busy_s"]
    assert cases.fresh_note([busy]).endswith(", its kernels 1.30x: why is not measured.")
    # no record of this GPU: nothing attached, the reason unchanged
    assert cases.fresh_record("NVIDIA H200", {"fingerprint": {"gpu_name": "NVIDIA A100"}}) is None


def test_the_host_pace_is_kept_on_a_gpu_only():
    """Review 2026-12-05p 03-04 item 1c: the chapter records the host launch of one x.add_(1)
    at its start and end on a GPU (results/, not printed); a CPU records nothing."""
    assert cases.host_pace(torch.device("cpu"), "start") is None


def test_a_device_bound_loop_near_the_margin_is_named_near_host_bound():
    """Review 2026-12-05p 03-04 item 5: float32 b64's loop sat +14% over its kernels (under the
    15% margin) and was called device-bound, 'so wall time times the layout'; between +10% and
    +15% it is now 'near host-bound', from the run's own loops (the recorded H200 page's)."""
    from labkit.chapters.ch03_memory_layouts import claims as c7_claims
    evidence = recorded_c7a(json.loads((Path(__file__).resolve().parents[3] / "results" / "nvidia-h200.json").read_text()))[
        "payload"]["evidence"]
    for r in evidence["other_runs"]:
        if c7_claims.regime(r)[0] is not False:
            continue
        worst = max(float(r[f"{k}_loop_s"]) / float(r[f"{k}_busy_s"]) - 1 for k in ("nchw", "nhwc"))
        near = c7_claims.near_host_bound(r)
        assert bool(near) == (c7_claims.NEAR_MARGIN <= worst <= c7_claims.LOOP_MARGIN)
        assert not near or near.endswith(f"{100 * worst:+.0f}%")
    run = {"nchw_loop_s": 1.12, "nchw_busy_s": 1.0, "nhwc_loop_s": 1.02, "nhwc_busy_s": 1.0}
    assert c7_claims.near_host_bound(run) == "NCHW +12%"
    assert c7_claims.near_host_bound({**run, "nchw_loop_s": 1.05}) == ""
    assert c7_claims.near_host_bound({}) == ""


def test_c7as_evidence_is_read_under_its_own_id_else_under_the_retired_c7():
    """A reproduce record (or a reference verdict) written before C7 was split keeps C7a's runs
    under 'C7': the page's fresh-process reading and the CPU takeaway's recorded GPU figure read
    them there, and a record of today's C7a under its own id first."""
    old, new = {"runs": [{"batch": 64}]}, {"runs": [{"batch": 128}]}
    assert cases.C7A_KEYS == ("C7a", "C7")
    assert cases.c7a_evidence({"C7": old}) is old and cases.c7a_evidence({"C7a": new, "C7": old}) is new
    assert cases.c7a_evidence({"C22": old}) == {} and cases.c7a_evidence(None) == {}

    class Page:
        def __init__(self, recorded: dict) -> None:
            self.recorded = recorded

        def reference(self, key: str) -> Recorded:
            return Recorded("03_memory_layouts", key, "nvidia-h200", self.recorded.get(key), "2026-12-06")
    assert cases.c7a_reference(Page({"verdict:C7": old})).key == "verdict:C7"
    assert cases.c7a_reference(Page({"verdict:C7": old, "verdict:C7a": new})).value is new
    assert not cases.c7a_reference(Page({}))
