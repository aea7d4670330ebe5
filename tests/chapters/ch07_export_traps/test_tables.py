"""What left chapter 07's notebook: its tables, quiz answers and recorded payloads (tables.py)."""

import json
from types import SimpleNamespace

import pytest

from labkit.audit import export_audit
from labkit.audit.export_audit import CHANNELS_LAST, CORRECT, LAYOUTS, NCHW, REJECTED, WRONG
from labkit.chapters.ch07_export_traps import claims as ch07
from labkit.chapters.ch07_export_traps import export_traps, tables
from labkit.session import Recorded
from labkit.show.widgets import quiz
from tests.paths import ROOT


def _payload(binding_kind=WRONG):
    """An audit as recorded (Audit.as_dict): two paths, one silently wrong on two layouts."""
    def outcomes(*kinds, detail=""):
        return {lay: {"kind": k, "detail": detail if k != CORRECT else "", "max_error": None}
                for lay, k in zip(LAYOUTS, kinds, strict=True)}
    return {"device": "cuda:0", "example_shape": [64, 3, 64, 64], "exporter": "dynamo", "rows": [
        {"path": "torch.jit.trace", "records": "graph input type (64, 3, 64, 64)", "note": "", "build_s": 0.1,
         "outcomes": outcomes(CORRECT, CORRECT, CORRECT)},
        {"path": "ONNX Runtime CUDA, IOBinding of data_ptr", "records": "input 'x' FLOAT dims", "build_s": 0.2,
         "note": "fed as data pointer and shape only",
         "outcomes": outcomes(CORRECT, binding_kind, binding_kind, detail="max |error| 0.08")}]}


def test_the_layouts_table_is_the_three_layouts_of_one_example():
    shown = tables.layouts_table()
    assert shown.column("layout") == list(LAYOUTS)
    assert shown.column("shape, strides: format")[1].endswith("channels_last")
    assert str(shown) == str(tables.layouts_table())  # the same on every run: nbval checks it


def test_the_audit_table_shows_outcomes_and_folds_why():
    shown = tables.audit_table(_payload())
    assert shown.column(CHANNELS_LAST) == [CORRECT, WRONG]
    folded = shown.folded[0][1]
    assert "fed as data pointer and shape only" in folded and "max |error| 0.08" in folded
    assert "max |error|" not in " ".join(map(str, sum(shown.rows, [])))  # the detail is folded, not shown
    bare = tables.audit_table(_payload(), records=False)
    assert "what it records about its input" not in bare.columns
    assert "graph input type (64, 3, 64, 64)" in bare.folded[0][1]


def test_the_reference_audit_says_recorded_or_that_this_run_is_the_gpu():
    recorded = Recorded("07_export_traps", "audit", "nvidia-h200", _payload(), "2026-12-03")
    shown = tables.reference_audit(recorded)
    assert shown.recorded == "recorded on nvidia-h200, 2026-12-03"
    assert "(64, 3, 64, 64)" in shown.title
    nothing = tables.reference_audit(Recorded("07_export_traps", "audit", "nvidia-h200"))
    assert "nothing recorded" in nothing
    assert tables.reference_audit(_payload()) is None  # measured here: the audit above is the record
    assert tables.Stack(tables.reference_audit(_payload()), "the AOTInductor line").parts == ["the AOTInductor line"]


def _audit(kind_on_channels_last):
    row = SimpleNamespace(path="ONNX Runtime CPU, IOBinding of data_ptr",
                          outcomes={CHANNELS_LAST: export_audit.Outcome(kind_on_channels_last)})
    return SimpleNamespace(rows=[row])


def test_the_audit_quiz_is_answered_from_the_audit_and_only_after_it_ran():
    assert tables.first_silently_wrong(_audit(WRONG)) == tables.AUDIT_CHOICES["IOBinding"]
    assert tables.first_silently_wrong(_audit(CORRECT)) == "none of them"
    with pytest.raises(ValueError, match="run the audit cell"):
        tables.first_silently_wrong(None)


class _Cmp:
    """A comparison of one variant, 'NCHW declared, on', as the trust rule reads it."""

    def __init__(self, variant, flags):
        self.variants, self._flags = {"NCHW declared, on": variant}, flags

    def __getitem__(self, name):
        return self.variants[name]

    def flags(self, case=""):
        return self._flags


def _comparison(ratio, q25, q75, flags=()):
    variant = SimpleNamespace(ratio=ratio, ratio_q25=q25, ratio_q75=q75,
                              timing=SimpleNamespace(shared_gpu=False))
    return _Cmp(variant, list(flags))


@pytest.mark.parametrize(("ratio", "said"), [(0.5, "faster"), (1.0, "about the same"), (1.3, "slower")])
def test_the_layout_preference_quiz_reads_the_interleaved_ratio(ratio, said):
    ort = SimpleNamespace(comparison=_comparison(ratio, ratio - 0.01, ratio + 0.01))
    assert tables.layout_preference_effect(ort) == said


def test_the_layout_preference_quiz_feedback_carries_its_computed_figures():
    """Review 2026-12-05q browser 05-07 item 7: the feedback said how the call is made, no number."""
    variant = SimpleNamespace(ratio=0.60, ratio_q25=0.55, ratio_q75=0.65, round_ratios=(0.5, 0.6, 0.95, 0.62),
                              timing=SimpleNamespace(shared_gpu=False))
    key = tables.layout_preference_key(SimpleNamespace(comparison=_Cmp(variant, [])))
    assert key.answer == "faster" and key.choices_right() == ("faster",)
    assert quiz.describe(key, "choice") == "faster (0.60x, 3 of 4 rounds faster)"


def test_trap_3_states_the_call_with_its_round_by_round_range_not_one_ratio():
    """Review 2026-12-04j item 6: the page's 0.68x lay outside every reproduce run; the call and
    the per-round range are what holds, so the note states those (and the ratio as moving)."""
    variant = SimpleNamespace(ratio=0.68, ratio_q25=0.54, ratio_q75=0.71,
                              round_ratios=(0.52, 0.54, 0.68, 0.70, 0.71, 0.93, 0.60))
    ort = SimpleNamespace(comparison=_Cmp(variant, []))
    said = tables.layout_preference_call(ort)
    assert "ran faster than with it off in 6 of 7 rounds, 0.52-0.93x, lowest to highest round" in said
    assert "not one run's ratio (0.68x here)" in said and "moves inside" not in said
    without_rounds = SimpleNamespace(comparison=_comparison(1.0, 0.97, 1.04))  # an older comparison
    assert "about the same as with it off in 2 of 2 rounds, 0.97-1.04x" in tables.layout_preference_call(
        without_rounds)
    assert tables.layout_preference_call(SimpleNamespace(comparison=None)) == ""


def test_trap_3_takes_several_calls_per_round_on_the_reference_host():
    """At the reference host's 15-30 ms per session call, the default sampling gives every
    round at least 3 calls of each session (200 ms over 5 rounds gave one)."""
    per_round_s = export_traps.ORT_REP_MS * 1e-3 / export_traps.ORT_ROUNDS
    assert int(per_round_s / 0.030) >= 3 and export_traps.ORT_ROUNDS >= 7


def test_a_flagged_ratio_is_stated_briefly_and_never_as_a_result():
    flag = {"timing": "NCHW declared, on", "why": "noisy", "spread": 0.9}
    noisy = _comparison(0.5, 0.45, 0.55, [flag])
    whole = tables.stated_variant(noisy, "NCHW declared, on")
    brief = tables.stated_brief(noisy, "NCHW declared, on")
    assert whole.startswith("no ratio to state") and brief.startswith("no ratio to state")
    assert len(brief) < len(whole) and "the harness flagged" in brief
    quiet = _comparison(0.5, 0.45, 0.55)
    assert tables.stated_brief(quiet, "NCHW declared, on") == tables.stated_variant(quiet, "NCHW declared, on")


def test_conv_strides_read_back_from_the_recorded_lines():
    here = export_traps.ConvStrides("cpu", [{"example": NCHW, "eager": (1, 2), "export": (1, 2)}])
    recorded = Recorded("07_export_traps", "conv_strides", "nvidia-h200", [
        "cuda:0, channels_last example: eager conv output strides (2048, 1, 128, 8), export recorded "
        "(2048, 256, 16, 1) (DIFFERENT: the graph assumes a layout eager did not produce)",
        "a line of another format"], "2026-12-03")
    shown = tables.conv_strides_table(here, recorded)
    assert shown.column("agree") == ["same", "DIFFERENT", ""]
    assert shown.column("device")[1] == "cuda:0 (recorded on nvidia-h200, 2026-12-03)"
    assert shown.column("example")[2] == "a line of another format"  # shown as it was, not dropped
    assert len(tables.conv_strides_table(here, "measured on this GPU").rows) == 1


def test_the_dropped_contiguous_table_names_what_each_tracer_kept():
    found = export_traps.dropped_contiguous(batch=2, image=8, paths=("trace", "export"))
    shown = tables.dropped_table(found)
    by_path = dict(zip(shown.column("path"), shown.column(CHANNELS_LAST), strict=True))
    # shown in the quiz's word (review 2026-12-05q browser 05-07 item 6)
    assert by_path["torch.export"] == tables.shown_kind(REJECTED) == "raises" and by_path["torch.jit.trace"] == CORRECT
    assert "contiguous" in shown.column("ops recorded")[0]  # the trace kept the call
    assert "conv2d -> relu -> view" in shown.column("ops recorded")[1]  # the NCHW export dropped it: in the table
    # review 2026-12-03h item 10: the channels_last export fed every layout, its own included
    own = shown.rows[shown.column("path").index("torch.export, channels_last example")]
    assert own[1].endswith("(contiguous() kept)") and "contiguous" in own[1].split(" (")[0]  # this CPU keeps it
    assert own[2:] == [found.own_layout[CHANNELS_LAST][lay].kind for lay in LAYOUTS] == [CORRECT] * 3
    assert any(line.startswith("torch.export with a channels_last example, fed NCHW: correct")
               for line in found.lines())  # recorded with the chapter's lines
    assert "view" in shown.folded[0][1]  # why export refused is one click away


def test_the_documentation_is_folded_with_its_sources_named():
    shown = tables.documented_table()
    assert len(shown.rows) == len(ch07.DOCUMENTED)
    assert all(text in shown.folded[0][1] for text in ch07.DOCUMENTED.values())


def test_the_recorded_payloads_keep_the_reference_runs_keys_and_shapes(monkeypatch):
    reference = json.loads((ROOT / "results" / "nvidia-h200.json").read_text())["chapters"]["07_export_traps"]
    fake = SimpleNamespace(as_dict=lambda: {"device": "cpu"}, lines=lambda: ["a line"])
    trt = tables.TensorRT({"cuda": False}, export_traps.TensorRTRun(False, "no CUDA GPU here"),
                          export_traps.OrtTensorRTRun(False, "no CUDA GPU here"))
    monkeypatch.setattr(tables, "speed_record", lambda speed, loop: {"calls": {"CPU clock": "eager"}})
    kept = tables.recorded_payloads(fake, fake, fake, fake, trt, declared=fake, speed=fake, device="cuda:0")
    # the speed call with its device (review 2026-12-04m item 1), recorded from the next re-record on
    assert kept["speed_call"] == {"calls": {"CPU clock": "eager"}, "device": "cuda:0"}
    assert "speed_call" not in tables.recorded_payloads(fake, fake, fake, fake, trt, declared=fake)
    # 'aoti' is recorded by aoti_result (AOTInductor's row, carried over with its date), not here
    # every payload the page records is in the reference run (speed_call and trap_calls since the
    # 2026-12-05 17:55 record, review 2026-12-04m item 1), and nothing else is
    assert set(kept) == {k for k in reference if k not in ("ran", "aoti") and not k.startswith("verdict:")}
    assert kept["declared_nchw"] == ["a line"]
    assert kept["trap_calls"] == {"device": "cuda:0", "trap2_nchw_input": tables.NO_DIFFERENCE}  # nothing timed
    for key, payload in kept.items():
        assert type(payload) is type(reference[key]["payload"]), key
    assert set(kept["tensorrt"]) == set(reference["tensorrt"]["payload"])
    assert "no CUDA GPU here" in str(trt)



def test_a_takeaway_states_an_unstable_ratio_as_its_rounds_only():
    outside = _comparison(0.63, 0.55, 0.57)  # the ratio outside its own rounds: not stable
    assert tables.stated_short(outside, "NCHW declared, on") == "no stable ratio (IQR 0.55-0.57)"
    quiet = _comparison(0.5, 0.45, 0.55)
    assert tables.stated_short(quiet, "NCHW declared, on") == tables.stated_variant(quiet, "NCHW declared, on")
    # the CPU's traced model: 1.25x, rounds 0.83-1.33 (pooled medians 1.04x apart): no ratio quoted
    straddles = _comparison(1.25, 0.83, 1.33)
    assert tables.stated_short(straddles, "NCHW declared, on") == "not resolved (IQR 0.83-1.33 straddles 1x)"


def test_the_reference_audit_shows_only_the_paths_whose_outcomes_differ_from_this_run():
    here = export_audit.Audit([export_audit.Row(
        "torch.jit.trace", "r", {lay: export_audit.Outcome(CORRECT) for lay in LAYOUTS})],
        "cpu", (4, 3, 32, 32), "dynamo")
    recorded = Recorded("07_export_traps", "audit", "nvidia-h200", _payload(), "2026-12-03")
    shown = tables.reference_audit(recorded, here=here)
    assert shown.column("path") == ["ONNX Runtime CUDA, IOBinding of data_ptr"]  # not built here
    assert shown.notes == ["the same outcomes as here: torch.jit.trace"]
    assert len(tables.reference_audit(recorded).rows) == 2  # without this run's audit: every path
    both = export_audit.Audit([*here.rows, export_audit.Row(
        "ONNX Runtime CUDA, IOBinding of data_ptr", "r",
        {lay: export_audit.Outcome(k) for lay, k in zip(LAYOUTS, (CORRECT, WRONG, WRONG), strict=True)})],
        "cpu", (4, 3, 32, 32), "dynamo")
    said = tables.reference_audit(recorded, here=both)
    assert isinstance(said, str) and said.endswith("the same outcomes on all 2 paths.")


def _timed(device_s, host_s, ratio=1.0):
    return SimpleNamespace(ratio=ratio, ratio_q25=ratio, ratio_q75=ratio, timing=SimpleNamespace(
        shared_gpu=False, median_s=device_s, host_s=host_s, launch_bound=bool(host_s) and host_s > device_s))


def test_a_loop_runs_at_the_slower_of_host_launch_and_device_time():
    # the H200 speed table of 13:10 (review 2026-12-03d item 4): device / host launch per call
    cmp = _Launch({"eager": _timed(442e-6, 452e-6), "torch.jit.trace": _timed(384e-6, 279e-6, 0.87),
                   "torch.export": _timed(442e-6, 794e-6, 1.0), "AOTInductor": _timed(291e-6, None, 0.66)},
                  "eager")
    assert tables.loop_pace(cmp["torch.jit.trace"].timing) == (384e-6, "device")  # device-bound
    trace, export = tables.loop_ratio(cmp, "torch.jit.trace"), tables.loop_ratio(cmp, "torch.export")
    assert round(trace[0], 2) == 0.85 and trace[1:] == ("device", "host")  # not 279/452 = 0.62
    assert round(export[0], 2) == 1.76 and export[1] == "host"  # 1.00x on device time, slower in a loop
    assert tables.loop_ratio(cmp, "AOTInductor") is None and tables.loop_ratio(cmp, "eager") is None
    said = tables.host_pace(cmp, "torch.jit.trace")
    assert said.startswith("; in a loop a call takes max(host launch, device time): 0.85x")
    assert "torch.jit.trace device-bound, eager host-bound" in said
    note = tables.loop_note(cmp)
    assert "torch.jit.trace 0.85x," in note and "torch.export 1.76x (host-bound" in note
    assert "AOTInductor" not in note
    quiet = _Launch({"a": _timed(1e-3, 1e-6), "b": _timed(1e-3, 1e-6)}, "a")
    assert tables.host_pace(quiet, "b") == ""  # neither launch-bound: the device ratio is the loop's
    assert tables.host_pace(_comparison(0.5, 0.45, 0.55), "NCHW declared, on") == ""  # no host figures


class _Launch:
    def __init__(self, variants, baseline):
        self.variants, self.baseline = variants, baseline

    def __getitem__(self, name):
        return self.variants[name]


def _with_aoti(payload):
    row = {"path": "AOTInductor", "records": "compiled for (64, 3, 64, 64)", "note": "seconds: ...", "build_s": 128.1,
           "outcomes": {lay: {"kind": k, "detail": "", "max_error": None}
                        for lay, k in zip(LAYOUTS, (CORRECT, WRONG, WRONG), strict=True)}}
    return {**payload, "rows": [*payload["rows"], row]}


class _Chapter:
    """What aoti_result needs of a session's chapter: where it runs, its records, the reference's."""

    def __init__(self, on_gpu, reference):
        self.on_gpu, self.references, self.recorded = on_gpu, reference, {}

    def record(self, key, payload):
        self.recorded[key] = payload

    def reference(self, key):
        value, date = self.references.get(key, (None, ""))
        return Recorded("07_export_traps", key, "nvidia-h200", value, date)


def test_aoti_compiles_only_when_the_reader_asks(monkeypatch):
    monkeypatch.delenv(tables.AOTI_OPT_IN, raising=False)
    assert tables.aoti_budget_s() == 0.0
    monkeypatch.setenv(tables.AOTI_OPT_IN, "300")
    assert tables.aoti_budget_s() == 300.0
    monkeypatch.setenv(tables.AOTI_OPT_IN, "-1")
    assert tables.aoti_budget_s() == 0.0
    monkeypatch.setenv(tables.AOTI_OPT_IN, "five minutes")
    with pytest.raises(ValueError, match="must be a number of seconds"):
        tables.aoti_budget_s()
    assert "aoti" not in tables.FAST_PATHS and len(tables.FAST_PATHS) == len(export_audit.PATHS) - 1


def test_aoti_not_compiled_here_shows_its_recorded_run_with_the_day_it_was_measured():
    here = export_audit.Audit([export_audit.Row(
        "torch.jit.trace", "r", {lay: export_audit.Outcome(CORRECT) for lay in LAYOUTS})], "cuda:0",
        (64, 3, 64, 64), "dynamo")
    # the first GPU run after the change: no 'aoti' record yet, the earlier audit compiled it
    gpu = _Chapter(True, {"audit": (_with_aoti(_payload()), "2026-12-03")})
    shown = tables.aoti_result(here, gpu)
    assert isinstance(shown, Recorded) and [r["path"] for r in shown.value["rows"]] == ["AOTInductor"]
    assert gpu.recorded["aoti"]["measured_at"] == "2026-12-03"  # carried over, its own date kept
    table = tables.aoti_table(shown)
    assert table.recorded == "recorded on nvidia-h200, measured 2026-12-03"
    assert table.column(CHANNELS_LAST) == [WRONG]
    assert "compiled for" in table.folded[0][1]  # what it records: folded
    # later runs read the 'aoti' record; a CPU run records nothing
    cpu = _Chapter(False, {"aoti": (gpu.recorded["aoti"], "2026-12-04"), "audit": (_payload(), "2026-12-04")})
    again = tables.aoti_result(here, cpu)
    assert again.value["measured_at"] == "2026-12-03" and cpu.recorded == {}
    assert tables.aoti_table(again).recorded.endswith("measured 2026-12-03")
    nothing = tables.aoti_result(here, _Chapter(False, {"audit": (_payload(), "2026-12-04")}))
    assert "nothing recorded yet" in tables.aoti_table(nothing)
    # the reference audit leaves AOTInductor to its own table when it was not compiled here
    recorded = Recorded("07_export_traps", "audit", "nvidia-h200", _with_aoti(_payload()), "2026-12-03")
    assert "AOTInductor" not in tables.reference_audit(recorded, here=here).column("path")


def test_aoti_compiled_here_is_recorded_on_a_gpu():
    built = export_audit.Audit([export_audit.Row(
        "AOTInductor", "compiled", {lay: export_audit.Outcome(CORRECT) for lay in LAYOUTS})], "cuda:0",
        (64, 3, 64, 64), "dynamo")
    gpu = _Chapter(True, {})
    shown = tables.aoti_result(built, gpu)
    assert gpu.recorded["aoti"] is shown and shown["rows"][0]["path"] == "AOTInductor"
    assert tables.aoti_table(shown).startswith("AOTInductor was compiled in this run")


def test_what_keeps_the_gpu_paths_from_running_is_named():
    """On a GPU with the CPU build of onnxruntime (the reference H200) the missing piece is
    onnxruntime-gpu, not a GPU; where the CUDA provider is listed nothing is missing."""
    status = {"cuda": True, "ort_cuda_provider_listed": False}
    assert tables.missing_cuda_provider(status).startswith("onnxruntime-gpu")
    assert tables.missing_cuda_provider({**status, "cuda": False}) == "a GPU and onnxruntime-gpu"
    assert tables.missing_cuda_provider({**status, "ort_cuda_provider_listed": True}) == ""
    shown = tables.placement_table({"CPUExecutionProvider": 7}, None, status)
    note = " ".join(shown.parts[0].notes)
    assert "not measured: it needs onnxruntime-gpu" in note and "needs a GPU" not in note


def test_the_seeds_kind_of_trace_and_the_pointer_binding_come_from_what_ran():
    from labkit.chapters.ch07_export_traps import export_traps as traps

    model, example = export_audit.small_cnn(channels=4), export_audit.example_input(2, 8)
    form = traps.trace_noncontiguous_example(model, example)
    assert form["stride"] == [192, 64, 1, 8] and not form["contiguous"]
    shown = tables.noncontiguous_trace_table(form)
    assert shown.rows[0][1:] == [form["outcomes"][lay] for lay in LAYOUTS]
    assert "(192, 64, 1, 8)" in shown.rows[0][0]
    audit = export_audit.run(model, example, paths=("trace", "onnx_pointer"))
    binding = tables.pointer_binding(audit)
    assert binding["path"].endswith("IOBinding of data_ptr")
    assert binding["outcomes"] == {lay: o.kind for lay, o in audit.row("ONNX Runtime").outcomes.items()}
    assert binding["outcomes"][NCHW] == CORRECT and binding["outcomes"][CHANNELS_LAST] == WRONG
    assert tables.pointer_binding(export_audit.run(model, example, paths=("trace",))) is None


def test_trap_2_names_a_layout_both_artifacts_declare_once():
    nchw = "(4, 3, 32, 32), strides (3072, 1024, 32, 1): contiguous NCHW"
    declared = export_traps.DeclaredNCHW(nchw, "(4, 16, 32, 32), strides (16384, 1, 512, 16): channels_last",
                                         nchw, True, 0)
    shown = tables.declared_table(declared, "cpu").parts[0]
    assert shown.column("artifact")[:2] == ["torch.export and torch.jit.trace input", "torch.export first conv output"]
    other = export_traps.DeclaredNCHW(nchw, "x: channels_last", "(4, 3, 32, 32): other", None, None)
    assert tables.declared_table(other, "cpu").parts[0].column("artifact") == [
        "torch.export input", "torch.export first conv output", "torch.jit.trace input"]


def test_trap_2_reads_the_reference_gpus_first_conv_off_its_record():
    """Review 2026-12-03h item 10: the prose typed the H200's strides; the note reads the record."""
    nchw = "(4, 3, 32, 32), strides (3072, 1024, 32, 1): contiguous NCHW"
    here = export_traps.DeclaredNCHW(nchw, "(4, 16, 32, 32), strides (16384, 1, 512, 16): channels_last", nchw, True, 0)
    theirs = "(64, 32, 64, 64), strides (131072, 4096, 64, 1): contiguous NCHW"
    recorded = Recorded("07_export_traps", "declared_nchw", "nvidia-h200",
                        [f"torch.export input: {nchw}", f"torch.export first conv output: {theirs}"], "2026-12-04")
    notes = tables.declared_table(here, "cpu", recorded).parts[0].notes
    assert notes[-1] == "recorded on nvidia-h200, 2026-12-04: export (131072, 4096, 64, 1): contiguous NCHW"
    missing = Recorded("07_export_traps", "declared_nchw", "nvidia-h200")
    assert len(tables.declared_table(here, "cpu", missing).parts[0].notes) == 1  # nothing typed in its place
    same = Recorded("07_export_traps", "declared_nchw", "nvidia-h200", here.lines(), "2026-12-04")
    assert len(tables.declared_table(here, "cpu", same).parts[0].notes) == 1  # the same: not repeated


def test_a_cpu_copy_says_when_the_reference_could_not_run_the_cuda_paths_either():
    here = {"cuda": False, "ort_cuda_provider_listed": False}
    cpu_build = Recorded("07_export_traps", "tensorrt", "nvidia-h200",
                         {"status": {"cuda": True, "ort_cuda_provider_listed": False}}, "2026-12-03")
    said = " ".join(tables.placement_table({"CPUExecutionProvider": 7}, None, here, cpu_build).parts[0].notes)
    assert said.endswith("needs a GPU and onnxruntime-gpu; nor did it run on the reference (nvidia-h200: "
                         "no CUDA provider there)")
    gpu_build = Recorded("07_export_traps", "tensorrt", "nvidia-h200",
                         {"status": {"cuda": True, "ort_cuda_provider_listed": True}}, "2026-12-03")
    assert tables.not_on_the_reference(gpu_build, here) == ""
    assert tables.not_on_the_reference(Recorded("07_export_traps", "tensorrt", "nvidia-h200"), here) == ""
    assert tables.not_on_the_reference(cpu_build, {"cuda": True, "ort_cuda_provider_listed": False}) == ""


def _cpu_speed(faults_dominate):
    def variant(median, ratio):
        return SimpleNamespace(ratio=ratio, timing=SimpleNamespace(
            median_s=median, minor_faults_per_call=120_000.0, faults_dominate=faults_dominate, threads=1))
    variants = {"eager on the CPU": variant(0.0554, 1.0), "ONNX Runtime CPU, numpy feed": variant(0.0145, 0.26)}
    cmp = type("Cmp", (), {"variants": variants, "__getitem__": lambda self, k: self.variants[k]})()
    return export_audit.Speed({export_audit.CPU_CLOCK: cmp}, ["ONNX Runtime CPU, numpy feed"])


def test_eager_is_timed_again_with_the_allocator_kept_only_when_the_fault_note_applies():
    """Review 2026-12-03h item 7: the ORT headline was measured against an allocator-laden eager."""
    assert tables.eager_allocator_kept(_cpu_speed(False), None, None) is None  # the note did not apply
    model = export_audit.small_cnn(channels=4)
    example = export_audit.example_input(1, 8)
    kept = tables.eager_allocator_kept(_cpu_speed(False), model, example, force=True)  # a child process
    assert kept.allocator == "kept" and kept.median_s > 0 and kept.device == "cpu"
    note = tables.allocator_kept_note(_cpu_speed(True), SimpleNamespace(median_s=0.029, minor_faults_per_call=10.0))
    assert note.startswith("eager on the CPU again with malloc keeping freed memory (bench.allocator_kept()")
    assert "29 ms against 55.4 ms, 10 page faults per call against 120,000" in note
    assert "ONNX Runtime CPU, numpy feed against it: 0.50x (medians' quotient, not interleaved)" in note
    assert tables.allocator_kept_note(_cpu_speed(True), None) == ""


def test_the_allocator_control_that_did_not_take_states_no_fault_free_ratio():
    """Review 2026-12-04i item 5: on the H200 the child's faults were 122,895 per call, as eager's
    were, yet 0.28x read as the fault-free comparison. The recorded numbers:"""
    speed = _cpu_speed(True)
    speed.comparisons[export_audit.CPU_CLOCK]["eager on the CPU"].timing.minor_faults_per_call = 122_895.0
    note = tables.allocator_kept_note(speed, SimpleNamespace(median_s=0.0695, minor_faults_per_call=122_895.0))
    assert "122,895 page faults per call against 122,895" in note
    assert "the control did not take (faults unchanged), so no fault-free ratio" in note
    assert "against it" not in note and "x (medians' quotient" not in note
    assert tables.allocator_control_took(122_895.0, 122_895.0) is False
    assert tables.allocator_control_took(122_895.0, 12.0) is True
    assert tables.allocator_control_took(None, 12.0) is None
    unknown = tables.allocator_kept_note(speed, SimpleNamespace(median_s=0.0695, minor_faults_per_call=None))
    assert unknown.endswith("whether the control took is unknown") and "against it" not in unknown


def _ratios(**ratios):
    variants = {k: SimpleNamespace(ratio=r) for k, r in ratios.items()}
    return type("Cmp", (), {"variants": variants, "__getitem__": lambda self, k: self.variants[k]})()


def test_fastest_is_named_only_outside_a_two_percent_band():
    """Review 2026-12-04i item 6: torch.jit.script at 0.99x (7 us in 444) was called fastest."""
    h200 = _ratios(eager=1.0, **{"torch.jit.trace": 1.24, "torch.jit.script": 0.99, "torch.export": 1.0})
    correct = ["torch.jit.trace", "torch.jit.script", "torch.export"]
    assert tables.fastest_call(h200, correct) == ("torch.jit.script", tables.TIE_WITH_EAGER)
    cpu = _ratios(**{"eager": 1.0, "torch.jit.script": 0.76, "torch.jit.trace": 0.81, "ONNX Runtime CPU, numpy feed": 0.32,
                     "ONNX Runtime CPU, IOBinding of data_ptr": 0.31})
    assert tables.fastest_call(cpu, ["torch.jit.script", "torch.jit.trace", "ONNX Runtime CPU, numpy feed"]) == (
        "ONNX Runtime CPU, numpy feed", "ONNX Runtime CPU, numpy feed")  # the IOBinding path is wrong somewhere
    close = _ratios(eager=1.0, a=0.80, b=0.81)
    assert tables.fastest_call(close, ["a", "b"]) == ("a", "a and b tie")
    slower = _ratios(eager=1.0, a=1.01)
    assert tables.fastest_call(slower, ["a"]) == ("a", tables.TIE_WITH_EAGER)
    assert tables.fastest_call(_ratios(eager=1.0, a=1.10), ["a"]) == ("eager", "eager")


def test_eagers_flops_are_set_against_the_matmul_ceiling_cached_for_its_device(monkeypatch):
    model, example = export_audit.small_cnn(channels=4), export_audit.example_input(1, 8)
    flops = tables.model_flops(model, example)
    assert flops > 0
    timing = SimpleNamespace(median_s=1e-3, device="cpu")
    cmp = _ratios(eager=1.0)
    cmp.variants["eager"].timing = timing
    monkeypatch.setattr(tables.ceiling_store, "cached", lambda kind: SimpleNamespace(matmul_tflops={"float32": 0.1}))
    said = tables.ceiling_note(cmp, 5e7)  # 0.05 GFLOP in 1 ms: 0.05 TFLOP/s against a 0.1 TFLOP/s ceiling
    assert said == "eager: 50 MFLOP a call, 50 GFLOP/s, 50% of chapter 00's float32 matmul ceiling"
    monkeypatch.setattr(tables.ceiling_store, "cached", lambda kind: None)
    assert tables.ceiling_note(cmp, 5e7).endswith("(no cpu matmul ceiling measured here)")
    assert tables.ceiling_note(cmp, None) == ""


def test_trap_2_sets_eagers_first_conv_beside_what_export_recorded():
    """Review 2026-12-04i item 9: the H200's export recorded contiguous NCHW; eager's was never shown."""
    nchw = "(64, 3, 64, 64), strides (12288, 4096, 64, 1): contiguous NCHW"
    recorded = "(64, 32, 64, 64), strides (131072, 4096, 64, 1): contiguous NCHW"
    eager = "(64, 32, 64, 64), strides (131072, 1, 2048, 32): channels_last"
    gpu = export_traps.DeclaredNCHW(nchw, recorded, nchw, True, 0, eager_first_conv_output=eager)
    rows = dict(tables.declared_table(gpu, "cuda:0").parts[0].rows)
    assert rows["torch.export first conv output"] == (
        f"{recorded}; eager returned (131072, 1, 2048, 32): channels_last: DIFFERENT")
    assert export_traps.EAGER_FIRST_CONV not in rows
    agree = export_traps.DeclaredNCHW(nchw, eager, nchw, True, 0, eager_first_conv_output=eager)
    assert dict(tables.declared_table(agree, "cpu").parts[0].rows)["torch.export first conv output"].endswith(
        "; eager: the same")
    model = export_audit.small_cnn(channels=4).to(memory_format=__import__("torch").channels_last)
    out = export_traps.first_conv_output(model, export_audit.example_input(1, 8))
    assert out.shape[1] == 4


def _trap3_record(sampling=None, ratios=(0.50, 0.58, 0.60)):
    runs = [{"trap3_preference_on": {"ratio": r, **({"sampling": sampling} if sampling else {})}} for r in ratios]
    return {"machine": "nvidia-h200", "recorded_at": "2026-12-04T07:14:36+00:00", "numbers": runs}


def test_trap_3_says_when_the_reproduce_record_predates_its_sampling():
    """Review 2026-12-04k item 3: the 07:14 reproduce record (0.50-0.60x) predates the 800 ms /
    7 rounds sampling and lies outside the page's range; the page said the ratio 'moves inside it
    from run to run'. A record without its sampling predates it; one with it is read as runs."""
    old = tables.trap3_reproduced(_trap3_record())
    assert "reproduce record (2026-12-04 07:14 UTC, 3 runs: 0.50-0.60x) predates this sampling" in old
    assert f"({export_traps.ORT_REP_MS:.0f} ms over {export_traps.ORT_ROUNDS} rounds)" in old
    other = tables.trap3_reproduced(_trap3_record({"rep_ms": 20.0, "rounds": 7}))
    assert "was taken another way than this sampling" in other
    same = tables.trap3_reproduced(_trap3_record(dict(tables.TRAP3_SAMPLING), (0.74, 0.80)))
    assert same == "; nvidia-h200's reproduce runs (2026-12-04 07:14 UTC, 2 runs, this sampling): 0.74-0.80x"
    assert tables.trap3_reproduced(None) == "; no reproduce record of it yet"
    # what this record cannot say, not 'no record yet says': a later record may (review 2026-12-04m item 8)
    assert "so it cannot say how far this ratio moves between runs" in old and "no record yet" not in old
    # the record present is cited as it is, its time and range computed from its runs
    present = tables.reproduce_record()
    ratios = [r["trap3_preference_on"]["ratio"] for r in present["numbers"]]
    when = present["recorded_at"][:16].replace("T", " ")
    said = tables.trap3_reproduced(present)
    assert f"({when} UTC, {len(ratios)} runs" in said and f"{min(ratios):.2f}-{max(ratios):.2f}x" in said


def test_cpu_clock_timings_name_a_ceiling_where_chapter_00_measured_only_the_gpu(monkeypatch):
    """Review 2026-12-04k item 9: on the H200 host chapter 00 caches no CPU ceiling, so 'eager on
    the CPU: 101 GFLOP/s' named none; the chapter times one there (cpu_ceiling) and says which."""
    timing = SimpleNamespace(median_s=1e-3, device="cpu")
    cmp = _ratios(eager=1.0)
    cmp.variants["eager"].timing = timing
    monkeypatch.setattr(tables.ceiling_store, "cached", lambda kind: None)
    monkeypatch.setattr(tables, "cpu_ceiling", lambda: (0.2, "this host's CPU float32 matmul ceiling, 200 GFLOP/s"))
    assert tables.ceiling_note(cmp, 5e7) == ("eager: 50 MFLOP a call, 50 GFLOP/s, 25% of this host's CPU "
                                             "float32 matmul ceiling, 200 GFLOP/s")
    on = SimpleNamespace(timing=SimpleNamespace(median_s=2e-3))
    ort = SimpleNamespace(flops=5e7, provider="CPU", comparison=SimpleNamespace(variants={"NCHW declared, on": on}))
    assert tables.cpu_rate_note(ort) == ("50 MFLOP a call: NCHW declared, on 25 GFLOP/s (12%); % of this "
                                         "host's CPU float32 matmul ceiling, 200 GFLOP/s")
    assert tables.cpu_rate_note(SimpleNamespace(**{**vars(ort), "provider": "CUDA"})) == ""
    monkeypatch.setattr(tables, "cpu_ceiling", lambda: None)
    assert tables.ceiling_note(cmp, 5e7).endswith("(no cpu matmul ceiling measured here)")
    assert tables.cpu_rate_note(ort) == ""


def test_cpu_ceiling_is_timed_only_where_the_course_device_is_not_the_cpu(monkeypatch):
    monkeypatch.setattr(tables.env, "device", lambda: __import__("torch").device("cpu"))
    tables.cpu_ceiling.cache_clear()
    assert tables.cpu_ceiling() is None  # chapter 00's cache is the CPU's ceiling here
    monkeypatch.setattr(tables.env, "device", lambda: __import__("torch").device("cuda"))
    monkeypatch.setattr(tables.ceilings, "matmul_tflops", lambda n, dtype, where, rep_ms, threads: n / 1e4)
    tables.cpu_ceiling.cache_clear()
    best, where = tables.cpu_ceiling()
    assert best == max(tables.CPU_CEILING_SIDES) / 1e4 and "timed just now: n 256-1024" in where
    tables.cpu_ceiling.cache_clear()


def test_the_seeds_sentence_no_c15_letter_judges_is_folded_under_the_cards_with_why():
    """Review 2026-12-04k item 10: "TensorRT 无法启用高效卷积 kernel" was judged by none of C15a-d."""
    seed = ROOT.parent / "shared" / ch07.C15a.seed
    if seed.exists():
        assert ch07.NOT_JUDGED["seed_text"] in seed.read_text()
    cards = tables.claim_cards(lambda claim_id: claim_id)
    folded = cards.parts[-1]
    assert cards.parts[:-1] == [c.id for c in ch07.CLAIMS]
    assert ch07.NOT_JUDGED["seed_text"] in folded.summary and "C15d judges the consequence" in folded.text
    assert "<details><summary>not judged" in folded._repr_html_()


def _trap2(ratio, q25, q75, flags=()):
    variant = SimpleNamespace(ratio=ratio, ratio_q25=q25, ratio_q75=q75, timing=SimpleNamespace(shared_gpu=False))
    cmp = _Cmp(variant, [{**f, "timing": "NCHW input"} for f in flags])
    cmp.variants = {"NCHW input": variant}
    return cmp


def test_trap_2_prints_its_call_by_the_reproduce_checks_rule():
    """Review 2026-12-04k item 10: 'NCHW input 1.10x (1.02-1.16)', flagged, had no call and no band
    on the CPU page while reproduce.py calls Trap 2 with +-2%. The page prints that call, held back
    where a flagged timing could carry it across 1x."""
    assert tables.trap2_call(_trap2(1.10, 1.03, 1.16)) == "the call: slower (the rounds against 1x, +-2% band)"
    # review 2026-12-04n 05-07 item 1: rounds printed 1.02-1.16 reach the band's edge: no call
    assert tables.trap2_call(_trap2(1.10, 1.02, 1.16)) == ("the call: at the band's edge (not called) "
                                                           "(the rounds against 1x, +-2% band)")
    assert tables.trap2_call(_trap2(1.012, 1.010, 1.013)).startswith("the call: within +-2% (too small to call)")
    assert tables.trap2_call(_trap2(1.0, 0.97, 1.04)).startswith("the call: no measurable difference")
    noisy = _trap2(1.10, 1.03, 1.16, [{"why": "noisy", "spread": 0.5}])
    assert tables.trap2_call(noisy) == ("the call: slower by the rounds, held back: a flagged timing could "
                                        "carry it across 1x")
    assert tables.trap2_call(None) == ""
    from labkit.chapters.ch07_export_traps import reproduce
    assert reproduce.decision(1.03, 1.16, 1.10) == tables.ratio_call(1.03, 1.16, 1.10) == reproduce.SLOWER
    assert reproduce.decision(1.02, 1.16, 1.10) == tables.ratio_call(1.02, 1.16, 1.10) == reproduce.AT_EDGE
