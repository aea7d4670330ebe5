"""What left chapter 06's notebook: its run, quiz answers and tables (tables.py), on a made-up run."""

import json

import pytest
import torch

from labkit import claims
from labkit.chapters.ch06_ddp_layout_drift import claims as ch06
from labkit.chapters.ch06_ddp_layout_drift import ddp_worker, tables
from labkit.session import Recorded
from labkit.show.table import Table
from tests.paths import ROOT

ERROR = {"type": "TypeError", "message": "_ddp_reduce_hook() takes 1 positional argument but 3 were given"}


def _param(name, shape, warned, order_differs):
    return {"name": name, "shape": list(shape), "param_stride": [9, 1, 3, 1], "grad_stride": [9, 1, 3, 1],
            "bucket_stride": [9, 3, 1, 1] if warned else [9, 1, 3, 1], "warned": warned,
            "memory_order_differs": order_differs,
            "bucket_stride_source": "warning text" if warned else "DDP's rule"}


def _report(name, steps, wrong=None, error=None, checksum=1.0):
    observed = [] if error else [
        {"step": s, "traffic": {"into_bucket_bytes": 1024, "back_to_grad_bytes": 1024,
                                "permuting_bytes": 512 if name == "e_late_drift" else 0},
         "separate_grad_bytes": 1024, "wrong_grads": dict(wrong or {}) if s == 0 else {},
         "parameters": [_param("0.weight", (16, 3, 3, 3), True, True),
                        _param("6.weight", (32, 32, 1, 1), True, False),
                        _param("1.bias", (16,), False, False)]} for s in (0, 1)]
    return {"variant": {"name": name, "title": name}, "warnings_by_step": [] if error else list(steps),
            "observed": observed, "error": error, "params_identical": True, "max_abs_diff_across_ranks": 0.0,
            "timing": None if error else {"median_s": 0.010, "iqr_s": 0.001, "noisy": False},
            "peak_memory_bytes": None, "param_checksum": checksum, "amp_dtype": "bfloat16"}


def _run(a_steps=(3, 0, 0), a_wrong=None, hook_error=ERROR):
    wrong = a_wrong if a_wrong is not None else {"0.weight": "the right values, in the bucket view's memory "
                                                             "order, read with the param's strides"}
    reports = [_report("a_drift", a_steps, wrong, checksum=2.0), _report("b_seed_fix", (), error=hook_error),
               _report("b2_seed_hook_fitted", (3, 0, 0)), _report("b3_seed_hook_per_param", (3, 0, 0), wrong),
               _report("c_convert_first", (0, 0, 0)),
               _report("d_bucket_view", (1, 0, 0), {"3.weight": "all zeros"}), _report("e_late_drift", (1, 3, 3))]
    if hook_error is None:
        reports[1] = _report("b_seed_fix", (0, 0, 0))
    result = {"ranks": [reports, reports], "world_size": 2, "backend": "gloo", "device": "cpu",
              "config": {"batch": 8}, "torch": torch.__version__}
    return tables.Run(result, 1.0)


def test_the_parameters_table_marks_what_channels_last_changes():
    model = ddp_worker.small_cnn(16)
    shown = tables.parameters_table(model, ddp_worker.small_cnn(16).to(memory_format=torch.channels_last))
    assert shown.column("parameter") == ["0.weight", "3.weight", "6.weight"]  # the conv weights change
    assert "1.bias (16,): (1,)" in shown.folded[0][1]


def test_the_size_one_exemption_is_asked_of_torch():
    shown = tables.size_one_table([(32, 16, 1, 1), (16, 3, 3, 3)])
    assert shown.column("") == ["kept as it came", "restrided to the parameter"]
    assert shown.column("DDP warns") == [True, False]


@pytest.mark.parametrize(("steps", "said"), [((0, 0), "never"), ((3, 0, 0), "on step 0 only"),
                                             ((3, 1, 1), "on every step"), ((0, 2, 2), "from step 1 on")])
def test_the_steps_quiz_reads_variant_a(steps, said):
    assert tables.warned_steps(_run(a_steps=steps)) == said


def test_the_quizzes_need_the_run_first():
    for answer in (tables.warned_steps, tables.one_by_one_moves_bytes, tables.seed_hook_outcome,
                   tables.drifted_grads, tables.one_by_one_shape):
        with pytest.raises(ValueError, match="launches the DDP run"):
            answer(None)


def test_the_other_quizzes_read_the_run():
    run = _run()
    assert tables.one_by_one_moves_bytes(run) == tables.ORDER_CHOICES[1]  # the 1x1 moves no byte
    shape = tables.one_by_one_shape(run)  # the quiz names the run's own 1x1 weight
    assert len(shape) == 4 and shape[2:] == (1, 1)
    assert tables.seed_hook_outcome(run) == tables.HOOK_CHOICES[2]
    assert tables.seed_hook_outcome(_run(hook_error=None)) == tables.HOOK_CHOICES[0]
    assert tables.drifted_grads(run) == tables.GRAD_CHOICES[1]
    assert tables.drifted_grads(_run(a_wrong={})) == tables.GRAD_CHOICES[0]


def test_the_run_tables_fold_what_a_reader_opens_on_request():
    run = _run()
    warnings = tables.warnings_table(run)
    # the seed's hook (b, b2) is quiz_hook's answer, further down: left out here, said so
    assert warnings.column("variant") == ["a_drift", "c_convert_first", "d_bucket_view", "e_late_drift"]
    assert "raised TypeError" not in str(warnings) and "b_seed_fix, b2_seed_hook_fitted" in warnings.notes[0]
    assert warnings.column("warnings per step")[0] == "3, 0 ×2"
    every = tables.warnings_table(run, leave_out=())
    assert every.column("stopped")[1] == "raised TypeError" and ERROR["message"] in every.folded[0][1]
    contract = tables.contract_table(run)
    assert "warned; 6.weight differs in strides only" in contract.notes[0] and "warning text" in contract.folded[-1][1]
    assert contract.column("parameter") == ["0.weight", "6.weight"]  # the bias's strides agree: folded
    assert "1.bias" in contract.folded[0][1]
    traffic = tables.traffic_table(run)
    assert "older record" in traffic.parts[0].notes[0]  # no rounds in the made-up run: no cost called
    assert [line.split(":")[0] for line in traffic.parts[0].folded[-1][1].splitlines()] == ["step 0", "step 1"]
    grads = tables.gradients_table(run)
    assert grads.column("gradients")[0].startswith("WRONG on steps [0]")
    assert not grads.notes  # (a) against (c)'s final parameters has no control: not shown
    found = tables.findings(run, {"all zeros": "zeros, without a warning"})
    assert "zeros, without a warning" in found.column("what the gradient held")
    assert "a_drift [0], b2_seed_hook_fitted [0]" not in found.column("variants (steps)")  # b2 is right here
    assert len(tables.findings(_run(a_wrong={}), {}).rows) == 1  # d's diagnosis, shown as it is


def test_the_gradient_check_prints_its_measured_error_beside_the_tolerance():
    """Review 2026-12-04l item 3: the worker computed largest_grad_error per observed step, but the
    row, the record and the page dropped it, so 'right' showed no margin. The largest finite error
    over every rank's observed steps is carried (a GradScaler step's inf is left out)."""
    run = _run()
    errors = {"a_drift": [1.38, 2e-7], "c_convert_first": [3.2e-7, float("inf")]}
    for rank, reports in enumerate(run.result["ranks"]):
        run.result["ranks"][rank] = reports = [dict(r, observed=[dict(o) for o in r["observed"]]) for r in reports]
        for report in reports:
            report["grad_tolerance"] = 1e-4
            for o, error in zip(report["observed"], errors.get(report["variant"]["name"], []), strict=False):
                o["largest_grad_error"] = error * (1 if rank == 0 else 0.5)
    rows = run.rows
    assert rows["a_drift"]["largest_grad_error"] == 1.38 and rows["c_convert_first"]["largest_grad_error"] == 3.2e-7
    assert rows["e_late_drift"]["largest_grad_error"] is None and rows["c_convert_first"]["grad_tolerance"] == 1e-4
    shown = tables.gradients_table(run)
    by_name = dict(zip(shown.column("variant"), shown.column("largest error (tolerance)"), strict=True))
    assert by_name["c_convert_first"] == "3.2e-07 (1e-04)" and by_name["a_drift"] == "1.4e+00 (1e-04)"
    assert by_name["b_seed_fix"] == "-" and by_name["e_late_drift"] == "-"  # raised; not recorded
    evidence = ch06.evidence_from_run(run.result)
    assert evidence["control"]["largest_grad_error"] == 3.2e-7 and evidence["control"]["grad_tolerance"] == 1e-4
    assert "(largest error 3.2e-07, tolerance 1e-04)" in claims.get("C14b").judge(evidence, machine="t").reason


def test_on_a_gpu_each_variants_peak_memory_is_folded_with_no_range():
    """Review 2026-12-04m item 9: the range's top was the first variant built (a_drift 524 MiB, the
    others 458-459 MiB) and (f) was left out; every variant is folded, the first one's start-up said
    as a hypothesis; a CPU run (no peaks) shows none."""
    run = _run()
    assert not any("peak" in summary for summary, _ in tables.traffic_table(run).parts[0].folded)
    for i, report in enumerate(run.result["ranks"][0]):  # both ranks hold these same reports
        report["peak_memory_bytes"] = 523 * 2**20 + i * 2**19  # 523 MiB, then half-MiB steps
    shown = tables.traffic_table(tables.Run(run.result, 1.0)).parts[0]
    assert "peak GPU memory" not in shown.columns and not any("peak" in note for note in shown.notes)
    summary, text = shown.folded[0]  # before (d) step by step
    lines = text.splitlines()
    assert summary == "peak GPU memory per variant" and lines[0] == "a_drift: 523 MiB"
    assert len(lines) == len(run.rows) + 1 and "a_drift, built first" in lines[-1] and "hypothesis" in lines[-1]


@pytest.mark.parametrize(("counts", "shown"), [([], "-"), ([3], "3"), ([3, 0, 0, 0], "3, 0 ×3"),
                                               ([1, 1, 3, 3, 3], "1 ×2, 3 ×3"), ([0, 1, 0], "0, 1, 0")])
def test_repeated_counts_are_written_once(counts, shown):
    assert tables.runs_of(counts) == shown


def test_step_cost_reads_the_interleaved_rounds_with_an_interval_and_a_band():
    row = {"median_step_s": 0.010, "iqr_step_s": 0.0005, "timing_noisy": False,
           "round_medians_s": [0.010, 0.011, 0.009, 0.010, 0.010]}
    same = tables.step_cost(row, row)
    assert same.startswith("(e)/(c) step time 1.00x (95% interval 1.00-1.00x, 5 interleaved rounds)")
    assert same.endswith(": no cost this run can resolve")
    slower = {**row, "median_step_s": 0.012, "round_medians_s": [0.0120, 0.0133, 0.0107, 0.0121, 0.0119]}
    assert tables.step_cost(slower, row).endswith(": slower")
    assert tables.step_cost(row, slower).endswith(": faster")
    slight = {**row, "round_medians_s": [m * 1.01 for m in row["round_medians_s"]]}  # 1% in every round
    assert "too small to call" in tables.step_cost(slight, row)
    noisy = {**row, "round_medians_s": [0.012, 0.008, 0.013, 0.009, 0.011]}
    assert tables.step_cost(noisy, row).endswith("no cost this run can resolve")
    # an older record (timed one after the other, warnings inside): its ratio, and no cost called
    old = {k: v for k, v in row.items() if k != "round_medians_s"}
    said = tables.step_cost({**old, "median_step_s": 0.0124}, old)
    assert said.startswith("(e)/(c) step time 1.24x from an older record") and "not a measured cost" in said
    assert "slower" not in said
    assert tables.step_cost({**row, "median_step_s": None}, row) == "not timed"
    # the interval by hand: ratios 1.1, 1.2 (df 1, t 12.706)
    ratio, low, high, rounds = tables.ratio_interval([1.1, 1.2], [1.0, 1.0])
    import math
    half = 12.706 * abs(math.log(1.2) - math.log(1.1)) / math.sqrt(2) / math.sqrt(2)
    assert rounds == 2 and ratio == pytest.approx(math.sqrt(1.1 * 1.2))
    assert low == pytest.approx(ratio * math.exp(-half)) and high == pytest.approx(ratio * math.exp(half))
    assert tables.ratio_interval([1.0], [1.0]) is None and tables.ratio_interval([1.0, None], [1.0, 1.0]) is None


def test_the_run_records_the_reference_runs_keys_and_shapes():
    reference = json.loads((ROOT / "results" / "nvidia-h200.json").read_text())["chapters"]["06_ddp_layout_drift"]
    recorded = reference["ddp_variants"]["payload"]
    payload = _run().payload()
    assert set(payload) == set(recorded)
    # the interleaved timing (issue 39) adds its rounds and the steps trained to each row, and the
    # kernel count of the permuting copies (review 2026-12-04j item 7) is new since the 06:48 record
    # and the per-parameter hook's call count (review 2026-12-04k item 3) since the 13:37 record
    new = {"round_medians_s", "trained_steps", "permuting_copies", "hook_calls",
           "largest_grad_error", "grad_tolerance",  # the gradient check's margin, review 2026-12-04l item 3
           # the step time's clock and host/device split as bench read them, review 2026-12-04m item 2
           "step_clock", "step_clock_text", "host_s", "launch_bound"}
    assert set(payload["variants"][0]) - new == set(recorded["variants"][0]) - new


def test_recorded_tables_say_so_and_a_missing_record_says_what_is_missing():
    reference = json.loads((ROOT / "results" / "nvidia-h200.json").read_text())["chapters"]["06_ddp_layout_drift"]
    cost = Recorded("06_ddp_layout_drift", "ddp_resnet50_cost", "nvidia-h200",
                    reference["ddp_resnet50_cost"]["payload"], "2026-12-03")
    shown = tables.resnet50_table(cost)
    at = reference["ddp_resnet50_cost"]["recorded_at"]  # its time in UTC, not the session's date (2026-12-04m item 1)
    assert shown.recorded == f"recorded on nvidia-h200, {at[:10]} {at[11:16]} UTC" and "ResNet-50" in shown.title
    assert "not recorded" in tables.resnet50_table(Recorded("06_ddp_layout_drift", "x", "nvidia-h200"))
    variants = tables.reference_variants(Recorded("06_ddp_layout_drift", "ddp_variants", "nvidia-h200",
                                                  reference["ddp_variants"]["payload"], "2026-12-03"))
    assert variants.column("variant") == [v["name"] for v in reference["ddp_variants"]["payload"]["variants"]]
    assert tables.reference_variants(_run().payload()) is None  # measured here: the tables above are it


def test_the_nearest_form_is_shown_beside_the_card_with_its_reason_folded():
    evidence = ch06.evidence_from_run(_run().result)
    nearest = ch06.C14C.judge(ch06.nearest_form_evidence(evidence), form=ch06.NEAREST_HOOK_FORM)
    again = tables.verdicts("the card", nearest).parts[1]
    assert again.column("this machine") == [nearest.label]
    assert ch06.NEAREST_HOOK_FORM in again.folded[0][1] and nearest.reason in again.folded[0][1]


def test_the_resnet50_drift_cost_is_bounded_by_arithmetic_at_the_recorded_copy_rate():
    said = tables.copy_bound(45_306_624, 0.0826, 0.0097, {"gbps": 4243.9, "machine": "nvidia-h200"})
    assert "takes 21 us, 0.03% of the 82.6 ms step" in said and "cannot resolve it" in said
    assert tables.copy_bound(45_306_624, 0.0826, 0.0097, None) == ""  # no copy rate: no bound claimed
    assert tables.copy_bound(0, 0.0826, 0.0097, {"gbps": 4243.9, "machine": "m"}) == ""
    assert tables.recorded_copy_rate("a device chapter 00 never measured") is None


GAP = {"us": 9.3, "source": "chapter 04's timeline, nvidia-h200"}
RATE = {"gbps": 4224.0, "machine": "nvidia-h200"}


# chapter 02's strided_elementwise on the H200 (16:07 record): contiguous() of a transposed 8192^2 fp32
STRIDED = {"comparison": [
    {"variant": "stride-aware", "median_s": 0.0001366720050573349, "bytes_moved": 536870912},
    {"variant": "contiguous() then kernel", "median_s": 0.0005919359922409058, "bytes_moved": 1073741824}]}
PERMUTED = tables.transposed_copy_rate(STRIDED, RATE["gbps"], "nvidia-h200")


def test_the_permute_slowdown_is_read_from_chapter_02s_transposed_copy_not_typed():
    """Review 2026-12-04l item 5: '4x that' was a literal; chapter 02 measured a permuting copy."""
    assert round(PERMUTED["gbps"]) == 1179 and round(PERMUTED["slowdown"], 2) == 3.58
    assert tables.transposed_copy_rate({"comparison": STRIDED["comparison"][:1]}, 4224.0, "m") is None
    assert tables.transposed_copy_rate(None, 4224.0, "m") is None
    recorded = json.loads((ROOT / "results" / "nvidia-h200.json").read_text())["chapters"]
    device = recorded["06_ddp_layout_drift"]["ddp_resnet50_cost"]["payload"]["device"]
    rate = tables.recorded_copy_rate(device)
    assert tables.permuted_copy_rate(device, rate) == tables.transposed_copy_rate(
        recorded[tables.STRIDED_CHAPTER][tables.STRIDED_KEY]["payload"], rate["gbps"], "nvidia-h200")
    assert tables.permuted_copy_rate(device, None) is None
    said = tables.copy_clause(301_824, 0.00681, 1.01, RATE, tables.Kernels(3), GAP, PERMUTED)
    assert "permuting copy: 0.5 us at a transposed copy's measured rate, 0.01% of (c)'s step" in said
    assert "0.5 us at 1,179 GB/s, chapter 02's transposed copy (nvidia-h200, 3.6x under chapter 00's)" in said
    assert "4x" not in said
    # no transposed copy recorded: the slowdown is an assumption, and says so
    assumed = tables.copy_clause(301_824, 0.00681, 1.01, RATE, tables.Kernels(3))
    assert "at an assumed 1/4 of the copy rate" in assumed and "(an assumption: no transposed copy" in assumed


def test_copy_bound_calls_the_bytes_time_at_the_copy_rate_the_least_not_an_upper_bound():
    """Review 2026-12-04l item 5: its docstring called the least possible time an upper bound."""
    doc = " ".join(tables.copy_bound.__doc__.split())
    assert "(an upper bound" not in doc and "take the least time a copy of them can" in doc
    big = tables.copy_bound(45_306_624, 0.0648, 0.0025, RATE, tables.Kernels(1), GAP, PERMUTED)
    assert "the 43.2 MiB permuting copy takes 77 us at a transposed copy's measured rate, 0.12% of" in big
    assert "costs at most" not in big and "bound it" not in big
    assert ": 21 us, 77 us at 1,179 GB/s, chapter 02's transposed copy" in big  # one precision in one line


def test_the_drift_adds_no_launch_and_a_small_copy_is_launch_sized():
    """Review 2026-12-04k (chapter 06 item 1): the control (c) copies as many gradients into its buckets,
    one kernel each, so the drift adds no launch; 2026-12-04j item 7 had bounded 295 KiB in three
    kernels by ~28 us of launches. Review 2026-12-04l item 5: a copy that small is launch-sized."""
    said = tables.copy_clause(301_824, 0.00681, 1.01, RATE, tables.Kernels(3), GAP, PERMUTED)
    assert "the same 3 copy kernels run in (c): the drift adds no launch, only a permuted order" in said
    assert "each copy is launch-sized: under the 9.3 us launch gap (chapter 04's timeline" in said
    assert "launch-sized" not in tables.copy_clause(301_824, 0.00681, 1.01, RATE, tables.Kernels(3), None, PERMUTED)
    big = tables.copy_bound(45_306_624, 0.0648, 0.0025, RATE, tables.Kernels(1), GAP, PERMUTED)
    assert "1 copy kernel runs in (c)" in big and "launch-sized" not in big
    # without a kernel count (a CPU run) the bytes alone, and the rate the share is taken at
    assert "0.01% of (c)'s step at a transposed copy's measured rate" in tables.copy_clause(
        301_824, 0.00681, 1.01, RATE, permuted=PERMUTED)


def test_an_older_record_counts_its_stride_warnings_as_an_upper_bound_on_the_kernels():
    counted = tables.permuting_kernels({"permuting_bytes": 10, "permuting_copies": 2, "warnings_last_step": 3})
    assert counted == tables.Kernels(2)
    older = tables.permuting_kernels({"permuting_bytes": 10, "warnings_last_step": 53})
    assert older.count == 53 and "stride warnings" in older.source
    assert "at most 53 copy kernels (the last step's stride warnings) run in (c)" in tables.no_added_launch(older)
    assert tables.permuting_kernels({"permuting_bytes": 0, "warnings_last_step": 0}) is None


def test_the_launch_gap_is_read_from_chapter_04s_record_not_typed():
    recorded = json.loads((ROOT / "results" / "nvidia-h200.json").read_text())
    eager = recorded["chapters"]["04_fusion"]["timeline_launch_gaps"]["payload"]["eager"]
    device = recorded["chapters"]["06_ddp_layout_drift"]["ddp_resnet50_cost"]["payload"]["device"]
    assert tables.recorded_launch_gap(device)["us"] == eager["launch_gap_median_us"]
    assert tables.recorded_launch_gap("cpu") is None  # another device: the reference's gap does not apply


def test_the_resnet50_record_says_it_cannot_split_compute_from_the_all_reduce():
    value = {"world_size": 2, "backend": "gloo", "device": "cpu", "config": {"batch": 32, "image": 224}}
    shown = tables.resnet50_table({**value, "rows": _resnet_rows([0.067, 0.066, 0.068])})
    assert any(n.startswith("the record does not split the 67.0 ms step into compute and gloo's all-reduce")
               for n in shown.notes)


def test_the_resnet50_cost_runs_only_when_asked_and_says_what_it_would_take(monkeypatch):
    monkeypatch.delenv(tables.RESNET50_OPT_IN, raising=False)
    assert not tables.resnet50_asked()
    monkeypatch.setenv(tables.RESNET50_OPT_IN, "1")
    assert tables.resnet50_asked()
    monkeypatch.setenv(tables.RESNET50_OPT_IN, "yes")
    with pytest.raises(ValueError, match="must be 1"):
        tables.resnet50_asked()
    config = {"variants": ["c_convert_first", "e_late_drift"], "observed_steps": 3, "timed_steps": 30}
    assert tables.resnet50_steps(config) == 66
    old = Recorded("06_ddp_layout_drift", "ddp_resnet50_cost", "nvidia-h200", {"rows": {}}, "2026-12-03")
    said = tables.resnet50_cost_line(config, 2, old, on_gpu=True)
    assert "2 ranks x 66 ResNet-50 steps asked" in said and "wall time was not recorded" in said
    assert f"set {tables.RESNET50_OPT_IN}=1" in said
    timed = Recorded("06_ddp_layout_drift", "ddp_resnet50_cost", "nvidia-h200", {"seconds": 17.4}, "2026-12-04")
    assert "a record of another schedule took 17 s on nvidia-h200; it needs a GPU" in tables.resnet50_cost_line(
        config, 2, timed, on_gpu=False)


def _resnet_rows(rounds):
    row = {"permuting_bytes": 0, "into_bucket_bytes": 94_000_000, "median_step_s": 0.067, "iqr_step_s": 0.004,
           "timing_noisy": False, "round_medians_s": rounds}
    return {"c_convert_first": row, "e_late_drift": {**row, "permuting_bytes": 45_306_624, "median_step_s": 0.083}}


def test_a_record_timed_one_after_the_other_shows_no_step_time_pair_and_one_unit_for_bytes():
    value = {"world_size": 2, "backend": "gloo", "device": "cpu", "config": {"batch": 32, "image": 224}}
    old = tables.resnet50_table({**value, "rows": _resnet_rows(None)}, "not run here: why")
    assert "step time" not in old.column("") and "one after the other" in old.notes[0]
    assert old.notes[-1] == "not run here: why"
    assert old.rows[0][2] == "43.2 MiB"
    rounds = tables.resnet50_table({**value, "rows": _resnet_rows([0.067, 0.066, 0.068])})
    assert "step time" in rounds.column("") and "interleaved" in rounds.notes[0]
    said = tables.copy_bound(45_306_624, 0.0826, 0.0097, {"gbps": 4243.9, "machine": "nvidia-h200"})
    assert "the 43.2 MiB permuting copy" in said and "KiB" not in said


MISPLACED = {"0.weight": "the right values, in the bucket view's memory order, read with the param's strides"}


def _ways_run(d_steps=(0, 0, 0), c_wrong=None, amp="off", f_wrong=True):
    """(a) and (e) misplaced, (d) zeros on step 0 with d_steps' warnings, (c) right unless c_wrong."""
    reports = [_report("a_drift", (3, 0, 0), MISPLACED), _report("b_seed_fix", (), error=ERROR),
               _report("c_convert_first", (0, 0, 0), c_wrong), _report("d_bucket_view", d_steps, {"3.weight": "all zeros"}),
               _report("e_late_drift", (2, 0, 0), MISPLACED), _report("f_drift_no_amp", (3, 0, 0), MISPLACED if f_wrong else None)]
    for report in reports:
        report["amp_dtype"] = amp
    return tables.Run({"ranks": [reports, reports], "world_size": 2, "backend": "gloo", "device": "cpu",
                       "config": {}, "torch": torch.__version__}, 1.0)


def test_what_works_is_read_off_the_gradient_check_not_typed():
    """Review 2026-12-03h item 4: (d) gave zeros with 0 warnings and was listed under 'What works'."""
    assert tables.works_and_not(_ways_run()) == (
        "What works: (c).", "What does not: (d) zeros, silently; (a)/(e) values misplaced.")
    warned = tables.works_and_not(_ways_run(d_steps=(1, 0, 0)))[1]  # a warning on its wrong step: not silent
    assert warned == "What does not: (a)/(e) values misplaced; (d) zeros."
    nothing = tables.works_and_not(_ways_run(c_wrong=MISPLACED))
    assert nothing[0] == "What works: none of them." and "(c) values misplaced, silently" in nothing[1]


def test_the_amp_wording_follows_the_runs_mixed_precision():
    """Review 2026-12-03h item 10: 'wrong with AMP off too' on a run whose AMP was off."""
    assert tables.amp_wording(_ways_run(amp="off")) == "; all in float32, no AMP"
    # (f) named for the AMP-off result, not (e), which never ran without AMP (review 2026-12-04m item 6)
    assert tables.amp_wording(_ways_run(amp="float16")) == "; (f), (a) without AMP, had wrong gradients too"
    assert tables.amp_wording(_ways_run(amp="float16", f_wrong=False)) == "; (f), (a) without AMP, had right gradients"


def test_the_seed_sentence_is_shown_once_with_each_cards_clause_marked():
    from labkit import claims

    shown = tables.claim_cards(claims.get, ["C14a", "C14b", "C14c"], ch06.SEED_SENTENCE_MARKED)
    text = str(shown)
    assert text.count("storage offsets") == 1 and text.startswith("The seed's sentence (section 4.3)")
    assert "[C14a: the ranks' data views disagree" in text and "[C14b: silent numerical deviation]" in text
    assert "C14a: judges the clause marked C14a in the sentence above" in text
    assert "C14b: judges the clause marked C14b in the sentence above" in text
    assert claims.get("C14c").statement in text  # not in the sentence: its own statement


def test_a_noisy_step_ratio_is_held_back_and_set_beside_what_the_copy_can_cost():
    # the CPU page's shape (review 2026-12-04i item 4): 1.26x with noisy timings and a 19.7 KiB copy
    matched_rounds = [0.0166, 0.0120, 0.0210, 0.0150, 0.0180]
    drifted_rounds = [m * f for m, f in zip(matched_rounds, [1.10, 1.35, 1.20, 1.45, 1.22], strict=True)]
    matched = {"median_step_s": 0.01658, "iqr_step_s": 0.00528, "timing_noisy": True,
               "round_medians_s": matched_rounds, "permuting_bytes": 0}
    drifted = {"median_step_s": 0.02047, "iqr_step_s": 0.00484, "timing_noisy": True,
               "round_medians_s": drifted_rounds, "permuting_bytes": 20_173}
    said = tables.step_cost(drifted, matched, {"gbps": 23.1, "machine": "here"})
    assert "slower" not in said and "not called: a noisy timing (round-to-round " in said
    # review 2026-12-04k item 4: each noise figure says which noise it is
    assert tables.noise_kind(drifted) == "round-to-round" and tables.noise_kind({"round_medians_s": [0.02]}) == (
        "step-to-step")
    bound = tables.copy_bound(60e6, 0.085, 0.019, {"gbps": 2000.0, "machine": "here"})
    assert "the step-to-step 22% IQR" in bound
    assert "the 19.7 KiB permuting copy: 1.7 us at 23 GB/s (chapter 00, here)" in said
    # this machine's own ceiling says whose it is (review 2026-12-05q browser 05-07 item 11)
    assert tables.rate_source({"gbps": 29.0, "machine": tables.OWN_RATE}) == "this machine"
    assert said.endswith("0.04% of (c)'s step at an assumed 1/4 of the copy rate: not the copy: noise or another cause")
    quiet = {**drifted, "timing_noisy": False}
    assert ": slower" in tables.step_cost(quiet, {**matched, "timing_noisy": False})  # no flag: the call stands
    # a copy big enough to explain the ratio is not dismissed
    big = tables.step_cost({**quiet, "permuting_bytes": 60e6}, {**matched, "timing_noisy": False},
                           {"gbps": 23.1, "machine": "here"})
    assert "not the copy" not in big
    assert tables.copy_clause(20_173, 0.0166, 1.26, None) == ""  # no rate: no bound claimed


def test_the_traffic_table_folds_the_copys_worked_bound_and_drops_not_the_copy_when_nothing_was_resolved():
    """Review 2026-12-04k (06's H200 page at 1,525 words): the note keeps the bound and which term
    sets it; the kernels x gap and bytes arithmetic is folded; 'not the copy: noise or another
    cause' is not said beside 'no cost this run can resolve' (nothing to attribute)."""
    rounds = [0.0072, 0.0075, 0.0070, 0.0081, 0.0068, 0.0074]
    matched = {"median_step_s": 0.00724, "iqr_step_s": 0.001, "timing_noisy": False,
               "round_medians_s": rounds, "permuting_bytes": 0}
    drifted = {**matched, "median_step_s": 0.00762, "permuting_bytes": 301_824, "permuting_copies": 2,
               "round_medians_s": [r * f for r, f in zip(rounds, [0.9, 1.2, 1.0, 1.15, 0.95, 1.02], strict=True)]}
    line, worked = tables.step_cost_parts(drifted, matched, RATE, GAP, PERMUTED)
    assert ": no cost this run can resolve; the 295 KiB permuting copy: 0.5 us at a transposed copy's" in line
    assert line.endswith("0.01% of (c)'s step") and "not the copy" not in line
    assert worked.startswith("the same 2 copy kernels run in (c): the drift adds no launch, only a permuted "
                             "order; bytes: 0.1 us")
    assert worked not in line
    whole = tables.step_cost(drifted, matched, RATE, GAP, PERMUTED)  # a line with no fold beside it keeps it inline
    assert f"0.01% of (c)'s step ({worked})" in whole
    called = {**drifted, "round_medians_s": [r * 1.3 for r in rounds]}  # a called difference keeps it
    assert tables.step_cost_parts(called, matched, RATE, GAP)[0].endswith(": not the copy: noise or another cause")


def _card(forms):
    card = Table("", ["claim", "this machine", "form judged", "deciding numbers", "recorded reference"])
    long = "word " * 60 + tables.FOLDED_REST
    for claim_id, form in zip(("C14a", "C14b"), forms, strict=True):
        card.add(claim_id, "refuted", form, long.replace("word ", "x" * 3 + " ", 1), "this run")
    return card.fold("statement, source, reason, evidence", "whole")


def test_the_verdict_card_says_one_form_once_and_cuts_its_numbers_shorter():
    """Review 2026-12-04k: C14a-c are judged on one run, so one form; the H200 card printed it
    three times. A card whose forms differ keeps its column."""
    one = tables.one_form(_card(["analogue: gloo", "analogue: gloo"]))
    assert "form judged" not in one.columns and one.notes[0] == "form judged, every claim: analogue: gloo"
    numbers = one.column("deciding numbers")
    assert all(n.endswith(tables.FOLDED_REST) and len(n) <= tables.SHORT_NUMBERS + len(tables.FOLDED_REST)
               for n in numbers)
    assert one.folded == [("statement, source, reason, evidence", "whole")]
    two = tables.one_form(_card(["analogue: gloo", "the seed's form"]))
    assert "form judged" in two.columns
    assert tables.shorter("short reason") == "short reason"


def test_the_per_parameter_hook_shows_its_calls_in_the_hook_table_only():
    """Review 2026-12-04k item 3: b3 (the seed's body on every parameter's gradient) is C14c's
    nearest form; its row says how often the hook ran, and the warnings and traffic tables leave it out."""
    run = _run()
    run.result["ranks"][0][3]["hook_calls"] = 42
    assert run.result["ranks"][0][3]["variant"]["name"] == "b3_seed_hook_per_param"
    hooks = tables.hook_table(run)
    assert hooks.column("variant") == ["b_seed_fix", "b2_seed_hook_fitted", "b3_seed_hook_per_param", "a_drift"]
    assert "hook calls: 42" in hooks.rows[2][1] and "hook calls" not in hooks.rows[1][1]
    assert "b3_seed_hook_per_param" not in tables.warnings_table(run).column("variant")
    assert "b3_seed_hook_per_param" not in tables.traffic_table(run).parts[0].column("variant")


def test_the_takeaway_tells_one_wrong_step_from_a_gradient_that_stays_wrong():
    """Review 2026-12-04l item 6: (a) wrong on step 0 only (DDP's rebuild repairs it), (e) wrong on
    every step after its conversion: 'wrong on (a)'s drifted steps' did not say which."""
    run = _run()
    assert tables.wrong_for_how_long(run, "a_drift") == "on step 0 only, repaired by DDP's rebuild at step 1"
    assert tables.wrong_for_how_long(run, "c_convert_first") == "on no step"
    for reports in run.result["ranks"]:
        e = next(r for r in reports if r["variant"]["name"] == "e_late_drift")
        e["warnings_by_step"] = [1, 1, 3, 3]
        e["observed"] = [dict(e["observed"][0], step=i, wrong_grads=MISPLACED if i >= 2 else {}) for i in range(4)]
    assert tables.wrong_for_how_long(run, "e_late_drift") == "on every step from step 2 on, 2 of 4 observed"
    e["observed"][3]["wrong_grads"] = {}
    assert tables.wrong_for_how_long(tables.Run(run.result, 1.0), "e_late_drift") == "on steps [2]"


def test_the_cost_takeaway_is_the_interleaved_ratio_and_what_it_can_say(monkeypatch):
    """Review 2026-12-04l item 6: one computed cost line (04k item 8); 2026-12-04m item 7: it keeps the
    permuting copy's arithmetic (the number that says the cost is small) and, where (e)'s gradients
    were wrong, says that the drift's harm is correctness."""
    monkeypatch.setattr(tables, "run_copy_rate", lambda device: {"gbps": 10.0, "machine": "chapter 00"})
    monkeypatch.setattr(tables, "permuted_copy_rate", lambda device, rate: None)
    monkeypatch.setattr(tables, "recorded_launch_gap", lambda device: None)
    run = _run()
    for reports in run.result["ranks"]:
        for r in reports:
            if r["variant"]["name"] in ("c_convert_first", "e_late_drift"):
                r["round_medians_s"] = [0.010, 0.011, 0.0105] if r["variant"]["name"] == "c_convert_first" else [
                    0.0101, 0.0109, 0.0106]
    said = tables.cost_takeaway(run)
    assert said.startswith("The persistent drift's cost: (e)/(c) step time 1.00x (95% interval")
    # 512 B read and written at 10 GB/s, 4x for the assumed permute: 0.4 us of a 10 ms step
    assert ": no cost this run can resolve; the 512 B permuting copy: 0.4 us at an assumed 1/4" in said
    assert said.endswith("0.00% of (c)'s step.")  # (e)'s gradients right here: no harm claimed
    for reports in run.result["ranks"]:
        e = next(r for r in reports if r["variant"]["name"] == "e_late_drift")
        e["observed"][1]["wrong_grads"] = {"0.weight": "other"}
    assert tables.cost_takeaway(run).endswith(f"of (c)'s step{tables.HARM_IS_CORRECTNESS}.")
    monkeypatch.setattr(tables, "run_copy_rate", lambda device: None)  # no rate: no bound claimed
    assert "permuting copy" not in tables.cost_takeaway(run)


def test_the_resnet50_table_sizes_its_resolution_with_an_a_a_pair_and_splits_the_step_with_no_sync():
    """Review 2026-12-04l items 2 and 4: the step named no bound, and the noisy control had no A/A."""
    value = {"world_size": 2, "backend": "gloo", "device": "cpu", "config": {"batch": 32, "image": 224}}
    rows = _resnet_rows([0.080, 0.085, 0.082])
    rows["c2_convert_first_again"] = {**rows["c_convert_first"], "round_medians_s": [0.081, 0.083, 0.084]}
    rows["c_compute_only"] = {**rows["c_convert_first"], "round_medians_s": [0.020, 0.022, 0.021]}
    notes = tables.resnet50_table({**value, "rows": rows}).notes
    a_a = next(n for n in notes if n.startswith("A/A"))
    assert a_a.startswith("A/A, (c) again against (c): 1.00x (95% interval") and "3 rounds" in a_a
    split = next(n for n in notes if n.startswith("the step without its all-reduce"))
    assert "25% of (c)'s 67.0 ms (95% interval" in split and split.endswith(
        "the rest is gloo's all-reduce of 89.6 MiB and its copies: gloo's all-reduce sets the step")
    older = tables.resnet50_table({**value, "rows": _resnet_rows([0.080, 0.085, 0.082])}).notes
    assert not any(n.startswith("A/A") for n in older)
    assert any(n.startswith("the record does not split") for n in older)
    half = tables.step_split(value, rows["c_convert_first"], {"round_medians_s": [0.030, 0.055, 0.041]})
    assert half.endswith("neither part is the larger beyond doubt")


def test_the_not_run_line_counts_the_steps_the_record_trained_not_those_asked():
    """Review 2026-12-04m item 3: the page said 132 steps a rank (4 x (3 + 30) asked) and 66 for the
    record, whose rows say 123 trained a variant (the harness's untimed calls included)."""
    config = {"variants": ["c_convert_first", "e_late_drift", "c2_convert_first_again", "c_compute_only"],
              "observed_steps": 3, "timed_steps": 30, "timed_rounds": 6}
    rows = {name: {"trained_steps": 123} for name in ("c_convert_first", "e_late_drift")}
    old = {"seconds": 46.0, "config": {**config, "variants": ["c_convert_first", "e_late_drift"]}, "rows": rows}
    said = tables.resnet50_cost_line(config, 2, Recorded("06_ddp_layout_drift", "k", "nvidia-h200", old, "d"), False)
    assert "2 ranks x 492 ResNet-50 training steps (4 variants x 123" in said
    assert "the record took 46 s on nvidia-h200 for its 246, so about 92 s" in said
    other = {**old, "config": {**old["config"], "timed_steps": 20}}  # another schedule: its count does not apply
    said = tables.resnet50_cost_line(config, 2, Recorded("06", "k", "m", other, "d"), False)
    assert "2 ranks x 132 ResNet-50 steps asked" in said and "another schedule took 46 s" in said


def test_a_records_label_gives_its_time_and_names_the_timing_variants_it_lacks(tmp_path, monkeypatch):
    """Review 2026-12-04m item 1: the ResNet-50 record (14:01) and the page's variants (19:18) carried
    one date-only label; the record was made before the cell's A/A and no_sync variants existed."""
    value = {"world_size": 2, "backend": "gloo", "device": "cpu", "rows": _resnet_rows([0.080, 0.085, 0.082]),
             "config": {"batch": 32, "image": 224, "variants": ["c_convert_first", "e_late_drift"]}}
    (tmp_path / "nvidia-h200.json").write_text(json.dumps({"chapters": {"06_ddp_layout_drift": {
        "ddp_resnet50_cost": {"payload": value, "recorded_at": "2026-12-04T14:01:13+00:00"}}}}))
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path))
    record = Recorded("06_ddp_layout_drift", "ddp_resnet50_cost", "nvidia-h200", value, "2026-12-04")
    assert tables.recorded_label(record) == "recorded on nvidia-h200, 2026-12-04 14:01 UTC"
    asked = ["c_convert_first", "e_late_drift", "c2_convert_first_again", "c_compute_only"]
    shown = tables.resnet50_table(record, "", asked)
    assert shown.recorded == "recorded on nvidia-h200, 2026-12-04 14:01 UTC"
    assert ("this record (2026-12-04 14:01 UTC) was made before this cell's A/A and no_sync variants: "
            "neither can print") in shown.notes
    whole = {**value, "config": {**value["config"], "variants": asked}}
    assert not any("made before" in n for n in tables.resnet50_table(
        Recorded("06_ddp_layout_drift", "ddp_resnet50_cost", "nvidia-h200", whole, "d"), "", asked).notes)
    missing = Recorded("06_ddp_layout_drift", "nothing_here", "nvidia-h200", value, "2026-12-04")
    assert tables.recorded_label(missing) == missing.label  # no recorded_at: the session's label


def test_the_step_times_clock_is_read_from_the_timing_not_typed():
    """Review 2026-12-04m item 2: 'Rank 0's wall clock' and 'the all-reduce and Python set the pace'
    were typed; the clock, the host's launch and a launch-bound flag now come from bench's Timing."""
    run = _run()
    shown = tables.traffic_table(run).parts[0]
    assert shown.columns[-1] == "step time (median ± IQR)"  # an older run: no clock said
    assert "not recorded" in dict(shown.folded)["the step time's clock"]
    for report in run.result["ranks"][0]:
        if report.get("timing"):
            report["timing"].update(clock="wall", clock_text="wall clock (host's pace)", host_s=None,
                                    launch_bound=False)
    shown = tables.traffic_table(tables.Run(run.result, 1.0)).parts[0]
    fold = dict(shown.folded)["the step time's clock"]
    assert shown.columns[-1] == "step time (median ± IQR, wall clock)"
    assert "read by labkit.measure.bench on: wall clock (host's pace)" in fold
    assert "no part is named as its bound" in fold and "Python set the pace" not in fold
    c = next(r for r in run.result["ranks"][0] if r["variant"]["name"] == "c_convert_first")
    c["timing"].update(clock="device", clock_text="device time (CUDA events)", host_s=0.012, launch_bound=True)
    rows = tables.Run(run.result, 1.0).rows
    assert tables.time_text(rows["c_convert_first"]).endswith("(launch-bound)")
    assert "Launch-bound (the host's launch longer" in tables.clock_fold(rows, "gloo")
