"""The speed table's call (review 2026-12-04l items 9 and 10): taken on the clock that sets a
loop's pace, held back only by the timings its ratio is built from, said in a sentence that
reads right; the trap tables' spread column named; takeaway 1 with AOTInductor; and
reproduce.py 07 recording the calls the page prints."""

from types import SimpleNamespace

import pytest

from labkit.audit import export_audit
from labkit.audit.export_audit import CORRECT, LAYOUTS, WRONG
from labkit.chapters.ch07_export_traps import export_traps, reproduce, tables
from labkit.claims import trust
from labkit.session import Recorded

ONNX = "ONNX Runtime CPU, numpy feed"
BINDING = "ONNX Runtime CPU, IOBinding of data_ptr"


class _Cmp:
    """What the tables read of a `bench.compare` result: variants with ratios, rounds and timings,
    a baseline, the harness's flags, and the rows `labkit.show.table.comparison` shows."""

    def __init__(self, variants, baseline="eager", flags=(), rounds=5):
        self.variants, self.baseline, self._flags, self.rounds = variants, baseline, list(flags), rounds

    def __getitem__(self, name):
        return self.variants[name]

    def flags(self, case=""):
        return self._flags

    @property
    def host_column(self):
        return any(v.timing.host_s is not None for v in self.variants.values())

    def table(self):
        return [{"variant": k, "median_s": v.timing.median_s, "ratio": v.ratio, "ratio_q25": v.ratio_q25,
                 "ratio_q75": v.ratio_q75, "within_noise": k != self.baseline and v.ratio_q25 <= 1 <= v.ratio_q75,
                 "gbps": None, "host_s": v.timing.host_s} for k, v in self.variants.items()]


def _v(ratio, q25, q75, median_s=1e-3, host_s=None):
    timing = SimpleNamespace(median_s=median_s, host_s=host_s, shared_gpu=False, warnings=[], label="",
                             launch_bound=bool(host_s) and host_s > median_s)
    return SimpleNamespace(ratio=ratio, ratio_q25=q25, ratio_q75=q75, timing=timing)


def _cpu_page():
    """The CPU page of d8b81e9: every round of ONNX Runtime's numpy feed below 0.6x eager's, yet
    held back by torch.export's and torch.jit.trace's noise (their timings are not in its ratio)."""
    flags = [{"timing": "eager", "why": "noisy", "spread": 0.095},
             {"timing": "torch.jit.trace", "why": "noisy", "spread": 0.872},
             {"timing": "torch.export", "why": "noisy", "spread": 1.16},
             {"timing": ONNX, "why": "noisy", "spread": 0.147}]
    return _Cmp({"eager": _v(1.0, 1.0, 1.0), "torch.jit.trace": _v(0.88, 0.86, 1.57),
                 "torch.export": _v(1.18, 1.07, 2.36), ONNX: _v(0.43, 0.353, 0.563),
                 BINDING: _v(0.43, 0.36, 0.53)}, flags=flags)


def test_a_ratio_is_held_back_only_by_the_timings_it_is_built_from():
    page = _cpu_page()
    assert trust.stated_variant(page, ONNX).startswith("no ratio to state")  # the old reading: any flag
    assert tables.stated_variant(page, ONNX) == "0.43x (IQR 0.35-0.56)"
    assert [f["timing"] for f in tables.own_flags(page, ONNX)] == ["eager", ONNX]
    own = _Cmp({"eager": _v(1.0, 1.0, 1.0), ONNX: _v(0.43, 0.353, 0.563)},
               flags=[{"timing": ONNX, "why": "noisy", "spread": 0.9}])
    assert tables.stated_variant(own, ONNX).startswith("no ratio to state")  # its own noise still holds it
    unnamed = _Cmp(own.variants, flags=[{"why": "noisy", "spread": 0.9}])  # naming no timing: kept
    assert tables.stated_variant(unnamed, ONNX).startswith("no ratio to state")


def test_the_cpu_pages_fastest_line_states_the_ratio_or_says_plainly_why_not():
    said = tables.speed_call(_cpu_page(), ["torch.jit.trace", "torch.export", ONNX])
    assert said.call == ONNX
    assert said.sentence == f"fastest path correct on all layouts: {ONNX}, 0.43x (IQR 0.35-0.56) of eager's time"
    held = _Cmp({"eager": _v(1.0, 1.0, 1.0), ONNX: _v(0.43, 0.353, 0.563)},
                flags=[{"timing": ONNX, "why": "noisy", "spread": 0.9}])
    said = tables.speed_call(held, [ONNX])
    assert said.call == f"{tables.NOT_RESOLVED} ({ONNX} held back)"
    assert said.sentence == (f"no path correct on all layouts is called fastest: {ONNX} ran 0.43x of eager's "
                             f"time (IQR 0.35-0.56), but the harness flagged {ONNX} (off by up to 90%), "
                             "enough to carry it across 1x")
    brief = tables.stated_brief(held, ONNX)
    assert brief.endswith(f"the harness flagged {ONNX} (off by up to 90%), enough to carry it across 1x")
    straddles = _Cmp({"eager": _v(1.0, 1.0, 1.0), ONNX: _v(0.90, 0.85, 1.05)})  # within noise: a tie
    said = tables.speed_call(straddles, [ONNX])
    assert said.call == tables.TIE_WITH_EAGER
    assert said.sentence == (f"no path correct on all layouts is called fastest: a tie with eager ({ONNX} "
                             "0.90x of eager's time, IQR 0.85-1.05: its rounds reach 1x)")


def _h200():
    """The H200 page of 16:31: device time and host launch per call (every path but the trace
    launch-bound), device ratios within 2% but the trace's."""
    return _Cmp({"eager": _v(1.0, 1.0, 1.0, 448e-6, 690e-6), "torch.jit.trace": _v(1.23, 1.23, 1.23, 552e-6, 285e-6),
                 "torch.jit.script": _v(0.98, 0.98, 0.98, 440e-6, 489e-6),
                 "torch.export": _v(1.0, 1.0, 1.0, 447e-6, 825e-6)})


def _loop(script=0.71, trace=0.80):
    return _Cmp({"eager": _v(1.0, 1.0, 1.0, 700e-6), "torch.jit.trace": _v(trace, trace - 0.01, trace + 0.01, 560e-6),
                 "torch.jit.script": _v(script, script - 0.01, script + 0.01, 500e-6),
                 "torch.export": _v(1.20, 1.19, 1.21, 840e-6)})


def test_where_paths_are_launch_bound_the_loops_wall_time_decides_with_device_time_beside_it():
    correct = ["torch.jit.trace", "torch.jit.script", "torch.export"]
    on_device = tables.speed_call(_h200(), correct)
    assert on_device.call == tables.TIE_WITH_EAGER  # what the page called on device time
    assert on_device.sentence.startswith("no path correct on all layouts is called fastest: a tie with eager "
                                         "(torch.jit.script 0.98x of eager's device time, IQR 0.98-0.98: "
                                         "within +-2%)")
    said = tables.speed_call(_h200(), correct, _loop())
    assert said.call == f"torch.jit.script ({tables.LOOP_CLOCK})" and said.clock == tables.LOOP_CLOCK
    assert said.sentence.startswith("fastest path correct on all layouts: torch.jit.script, 0.71x (IQR "
                                    f"0.70-0.72) of eager's time in a loop. The clock: {tables.PACE_RULE}")
    # eager's loop ran 700 us a call against 448 us of device time: launch-bound by chapter 02's rule
    assert said.sentence.endswith("loop per call over device time: eager 1.56x, torch.jit.trace 1.01x, "
                                  "torch.jit.script 1.14x, torch.export 1.88x")
    close = tables.speed_call(_h200(), correct, _loop(script=0.99, trace=1.01))
    assert close.call == f"{tables.TIE_WITH_EAGER} ({tables.LOOP_CLOCK})"
    assert export_traps.launch_bound(_h200()) == ["eager", "torch.jit.script", "torch.export"]
    assert "launch-bound by the harness's probe: the host takes 690 us to launch a call the GPU runs in 448 us" \
        in tables.bound_note(_h200())  # no loop timed: the probe's figures
    assert tables.bound_note(_h200(), _loop()).startswith(
        "eager is launch-bound by the harness's probe; the loop below ran 1.56x eager's device time: "
        "launch-bound (chapter 02's rule)")
    assert tables.bound_note(_cpu_page()) == ""


def test_the_speed_table_prints_the_loop_and_the_call_taken_on_it():
    speed = export_audit.Speed({"CUDA events on cuda:0": _h200(), export_audit.CPU_CLOCK: _cpu_page()},
                               ["torch.jit.trace", "torch.jit.script", "torch.export", ONNX])
    audit = SimpleNamespace(rows=[])
    shown = tables.speed_table(speed, audit, loop=_loop())
    device, loop, cpu = shown.parts
    assert tables.RATIO_IQR in device.columns and "ratio spread" not in device.columns
    assert loop.title == "a loop of calls on cuda:0, wall clock per call"
    assert any(n.startswith("fastest path correct on all layouts: torch.jit.script") for n in loop.notes)
    assert not any("fastest" in n for n in device.notes) and any("launch-bound" in n for n in device.notes)
    assert any(n.startswith(f"fastest path correct on all layouts: {ONNX}") for n in cpu.notes)
    assert not any("in a loop a call takes max" in n for n in loop.notes + device.notes)  # measured, not computed
    without = tables.speed_table(speed, audit)  # no loop timed: the device call, the arithmetic note beside it
    assert len(without.parts) == 2 and any(n.startswith("in a loop of calls") for n in without.parts[0].notes)


def test_a_loop_of_calls_is_timed_only_where_a_gpu_path_is_launch_bound():
    model = export_audit.small_cnn(channels=4)
    example = export_audit.example_input(1, 8)
    artifact = SimpleNamespace(run=lambda x: model(x) * 1)
    audit = SimpleNamespace(row=lambda name: SimpleNamespace(artifact=artifact))
    cpu = export_audit.Speed({export_audit.CPU_CLOCK: _Cmp({"eager": _v(1, 1, 1), "torch.jit.trace": _v(1, 1, 1)})}, [])
    assert export_traps.timed_loop(cpu, audit, example, model) is None  # no GPU clock: no launch to bound it
    quiet = export_audit.Speed({"CUDA events on cuda:0": _Cmp({"eager": _v(1, 1, 1, 1e-3, 1e-5)})}, [])
    assert export_traps.timed_loop(quiet, audit, example, model) is None  # not launch-bound
    loop = export_traps.timed_loop(cpu, audit, example, model, rounds=2, rep_ms=5, force=True)
    assert list(loop.variants) == ["eager", "torch.jit.trace"] and loop.baseline == "eager" and loop.rounds == 2


def test_trap_3_names_its_spread_column_and_its_range_apart():
    rounds = (0.47, 0.54, 0.54, 0.55, 0.57, 0.60, 0.64)
    on = SimpleNamespace(**vars(_v(0.54, 0.54, 0.57)), round_ratios=rounds)
    ort = SimpleNamespace(comparison=_Cmp({"NCHW declared, off": _v(1.0, 1.0, 1.0), "NCHW declared, on": on},
                                          baseline="NCHW declared, off", rounds=7),
                          sessions=[], provider="GPU", preference_name="", flops=None)
    timed = tables.ort_table(ort).parts[1]
    assert timed.columns[3] == tables.RATIO_IQR
    assert "in 7 of 7 rounds, 0.47-0.64x, lowest to highest round (the table's column: their IQR)" \
        in timed.notes[0]


def _audit(with_aoti=False):
    rows = [export_audit.Row("torch.jit.trace", "r", {lay: export_audit.Outcome(CORRECT) for lay in LAYOUTS}),
            export_audit.Row(BINDING, "r", {lay: export_audit.Outcome(k) for lay, k in zip(
                LAYOUTS, (CORRECT, WRONG, WRONG), strict=True)})]
    if with_aoti:
        rows.append(export_audit.Row(tables.AOTI_PATH, "r", {lay: export_audit.Outcome(CORRECT) for lay in LAYOUTS}))
    for row in rows:
        row.artifact = SimpleNamespace(run=None)
    return export_audit.Audit(rows, "cpu", (4, 3, 32, 32), "dynamo")


def test_takeaway_1_counts_aoti_where_built_and_shows_its_recorded_run_where_not():
    aoti_rows = [{"path": tables.AOTI_PATH, "records": "compiled", "outcomes": {
        lay: {"kind": k} for lay, k in zip(LAYOUTS, (CORRECT, WRONG, WRONG), strict=True)}}]
    recorded = Recorded("07_export_traps", "aoti", "nvidia-h200",
                        {"rows": aoti_rows, "measured_at": "2026-12-03T10:00:00+00:00"}, "2026-12-04")
    said = tables.audit_takeaway(_audit(), recorded)
    assert said == ("Check an exported model on the layouts it will be fed: 1 of 2 paths built here gave eager's "
                    f"answer on all three; {BINDING} gave 2 silently wrong answers. AOTInductor (recorded on "
                    "nvidia-h200, 2026-12-03): silently wrong on 2 of 3.")
    assert "AOTInductor" not in tables.audit_takeaway(_audit(with_aoti=True), {"rows": []})  # counted: 2 of 3
    assert tables.audit_takeaway(_audit(with_aoti=True), {}).startswith(
        "Check an exported model on the layouts it will be fed: 2 of 3 paths")
    nothing = Recorded("07_export_traps", "aoti", "nvidia-h200")
    assert tables.audit_takeaway(_audit(), nothing).endswith("AOTInductor: not compiled here, and no run of it recorded.")


def test_reproduce_records_the_calls_the_page_prints(monkeypatch):
    """Review 2026-12-04l, 'reproduce 07': a run records the speed call on the loop where one was
    timed, sampled as the page samples it (export_audit.speed's defaults), Trap 2 held back as the
    page holds it back, and Trap 3's call as the page prints it (its quiz's answer)."""
    speed = export_audit.Speed({"CUDA events on cuda:0": _h200(), export_audit.CPU_CLOCK: _cpu_page()},
                               ["torch.jit.trace", "torch.jit.script", "torch.export", ONNX])
    trap2 = _Cmp({"channels_last input": _v(1.0, 1.0, 1.0), "NCHW input": _v(1.10, 1.03, 1.16)},  # rounds clear of the band
                  baseline="channels_last input", flags=[{"timing": "NCHW input", "why": "noisy", "spread": 0.5}])
    on = SimpleNamespace(**vars(_v(0.85, 0.80, 1.02)), round_ratios=(0.8, 0.85, 1.02))
    ort = SimpleNamespace(comparison=_Cmp({"NCHW declared, off": _v(1, 1, 1), "NCHW declared, on": on},
                                          baseline="NCHW declared, off"))
    asked = {}

    def timed(key, value):
        def measure(*args, **kwargs):
            asked[key] = kwargs
            return value
        return measure
    monkeypatch.setattr(reproduce.export_audit, "run", lambda *a, **k: SimpleNamespace(rows=[]))
    monkeypatch.setattr(reproduce.export_audit, "speed", timed("speed", speed))
    monkeypatch.setattr(reproduce.export_traps, "timed_loop", timed("loop", _loop()))
    monkeypatch.setattr(reproduce.export_traps, "channels_last_declared_nchw", lambda *a, **k: SimpleNamespace(eager=trap2))
    monkeypatch.setattr(reproduce.export_traps, "ort_layout_preference", lambda *a, **k: ort)
    numbers = reproduce.measure_numbers()
    assert asked == {"speed": {}, "loop": {}}  # the page's sampling: the functions' defaults
    page = tables.speed_table(speed, SimpleNamespace(rows=[]), loop=_loop())
    assert numbers["fastest_correct"] == {"CUDA events on cuda:0": f"torch.jit.script ({tables.LOOP_CLOCK})",
                                          export_audit.CPU_CLOCK: ONNX}
    for part, call in zip(page.parts[1:], numbers["fastest_correct"].values(), strict=True):
        assert any(n.startswith(f"fastest path correct on all layouts: {call.split(' (')[0]},") for n in part.notes)
    assert numbers["trap2_nchw_input"]["decision"] == "slower by the rounds, held back"
    assert tables.trap2_call(trap2).startswith(f"the call: {numbers['trap2_nchw_input']['decision']}:")
    trap3 = numbers["trap3_preference_on"]
    assert trap3["decision"] == tables.layout_preference_effect(ort) == "faster"  # the page's call
    assert trap3["range_call"] == "no measurable difference"  # the range straddles 1: kept, not judged
    assert f"ran {trap3['decision']} than with it off" in tables.layout_preference_call(ort)
    summary = reproduce.summarise_numbers([numbers, numbers])
    assert summary["agree"] and "Trap 3: the quiz's answer" not in summary["decisions"]


def _h200_1920():
    """The 19:20 H200 page (results/h200_notebooks/07, cell 11): device time and probe, and its loop."""
    device = _Cmp({"eager": _v(1.0, 1.0, 1.0, 446e-6, 602e-6), "torch.jit.trace": _v(1.24, 1.23, 1.24, 552e-6, 193e-6),
                   "torch.jit.script": _v(0.98, 0.98, 0.98, 438e-6, 299e-6),
                   "torch.export": _v(1.0, 1.0, 1.0, 445e-6, 767e-6)})
    loop = _Cmp({"eager": _v(1.0, 1.0, 1.0, 516e-6, 589e-6), "torch.jit.trace": _v(1.06, 1.06, 1.06, 548e-6, 308e-6),
                 "torch.jit.script": _v(0.84, 0.84, 0.84, 437e-6, 404e-6),
                 "torch.export": _v(1.36, 1.36, 1.47, 723e-6, 742e-6)})
    return device, loop


CORRECT_ON_ALL = ["torch.jit.trace", "torch.jit.script", "torch.export"]


def test_the_call_reads_each_pair_on_the_clock_chapter_02s_rule_picks():
    """Review 2026-12-04m item 1: the 19:20 page called torch.jit.script 0.84x on its loop, where
    eager's loop ran 1.16x its device time (near launch-bound, not launch-bound, by chapter 02's
    rule), while 3 fresh runs called within 2%: by one rule on the same two timings the page
    reads that pair on device time, and says what the loop alone would call."""
    device, loop = _h200_1920()
    assert {k: round(v, 2) for k, v in tables.loop_over_device(device, loop).items()} == {
        "eager": 1.16, "torch.jit.trace": 0.99, "torch.jit.script": 1.0, "torch.export": 1.62}
    paced = tables.Paced(device, loop)
    assert paced.clocks == {"eager": tables.DEVICE_CLOCK, "torch.jit.trace": tables.DEVICE_CLOCK,
                            "torch.jit.script": tables.DEVICE_CLOCK, "torch.export": tables.LOOP_CLOCK}
    said = tables.speed_call(device, CORRECT_ON_ALL, loop)
    assert said.call == f"{tables.TIE_WITH_EAGER} ({tables.DEVICE_CLOCK})"
    assert tables.call_kind(said.call) == tables.call_kind(f"within 2% of eager ({tables.LOOP_CLOCK})")  # the old word
    assert "the loop alone would call: torch.jit.script (torch.jit.script 0.84x (IQR 0.84-0.84))" in said.sentence
    assert [tables.pace_label(r) for r in (1.04, 1.16, 1.62)] == ["at the GPU's pace", "near launch-bound", "launch-bound"]


def test_the_pace_rule_is_chapter_02s():
    from labkit.chapters.ch02_contiguity_and_hidden_copies import claims as ch02

    assert (tables.LAUNCH_BOUND_RATIO, tables.AT_DEVICE_PACE) == (ch02.LAUNCH_BOUND_RATIO, ch02.AT_DEVICE_PACE)
    assert [tables.pace_label(r) for r in (1.0, 1.2, 1.6)] == [ch02.pace_label(r) for r in (1.0, 1.2, 1.6)]


def test_the_launch_never_reads_over_the_loop_and_the_loops_column_is_wall_time():
    """Review 2026-12-04m item 5: the page printed eager's launch at 602 us beside a loop of 516 us
    a call, and headed the loop's wall-clock column 'device time'."""
    device, loop = _h200_1920()
    speed = export_audit.Speed({"CUDA events on cuda:0": device}, CORRECT_ON_ALL)
    shown = tables.speed_table(speed, SimpleNamespace(rows=[]), loop=loop, record=False)
    timed, looped = shown.parts
    assert tables.HOST_AT_MOST in timed.columns and "host launch" not in timed.columns
    at = timed.columns.index(tables.HOST_AT_MOST)
    launches = {row[0]: row[at] for row in timed.rows}
    assert launches == {"eager": 516e-6, "torch.jit.trace": 193e-6, "torch.jit.script": 299e-6, "torch.export": 723e-6}
    walls = {row[0]: row[1] for row in looped.rows}
    assert all(launches[name] <= walls[name] for name in launches)
    assert looped.columns[1] == tables.WALL_PER_CALL and "device time" not in looped.columns
    assert "host launch" not in looped.columns and looped.units[tables.WALL_PER_CALL] == "s"
    bound = next(n for n in timed.notes if "launch-bound by the harness's probe" in n)
    assert bound.startswith("eager is launch-bound by the harness's probe; the loop below ran 1.16x eager's "
                            "device time: near launch-bound (chapter 02's rule)")
    assert "602" not in " ".join(timed.notes + looped.notes)


def _record(calls, device="cuda:0", clock="CUDA events on cuda:0"):
    return {"machine": "nvidia-h200", "recorded_at": "2026-12-04T19:20:38+00:00",
            "numbers": [{"device": device, "fastest_correct": {clock: c}} for c in calls]}


def test_the_page_says_what_fresh_processes_called_from_the_record_present():
    device, loop = _h200_1920()
    speed = export_audit.Speed({"CUDA events on cuda:0": device}, CORRECT_ON_ALL)
    within = f"{tables.TIE_WITH_EAGER} ({tables.LOOP_CLOCK})"
    record = _record([within, within, f"torch.jit.script ({tables.LOOP_CLOCK})"])
    shown = tables.speed_table(speed, SimpleNamespace(rows=[]), loop=loop, record=record)
    assert shown.parts[1].notes[-1].endswith(
        f"; fresh processes (nvidia-h200's reproduce, 2026-12-04 19:20 UTC): {within} in 2 of 3, "
        f"torch.jit.script ({tables.LOOP_CLOCK}) in 1 of 3")
    assert tables.reproduced_calls(_record([within], clock="CPU clock"), "CUDA events on cuda:0") == ""
    old = tables.reproduced_calls(_record(["within 2% of eager (time in a loop)"] * 3), "CUDA events on cuda:0")
    assert old.endswith(f": {tables.TIE_WITH_EAGER} ({tables.LOOP_CLOCK}) in 3 of 3")  # the 19:20 record, reworded


def test_reproduce_compares_each_runs_call_with_the_recorded_pages():
    """Review 2026-12-04m item 1: 3 of 3 runs called within 2% where the page called
    torch.jit.script, and the record said all_agree: the runs were compared only with each other."""
    def run(call):
        reading = {"ratio": 1.01, "low": 1.01, "high": 1.01, "decision": tables.WITHIN_BAND}
        return {"device": "cuda:0", "fastest_correct": {"CUDA events on cuda:0": call, "CPU clock": ONNX},
                "trap2_nchw_input": reading, "trap3_preference_on": {**reading, "decision": "faster"}}
    within = f"within 2% of eager ({tables.LOOP_CLOCK})"
    page = {"calls": {"CUDA events on cuda:0": "torch.jit.script", "CPU clock": ONNX}, "device": "cuda:0",
            "source": "the page"}
    differ = reproduce.summarise_numbers([run(within)] * 3, reference=page)
    assert not differ["agree"] and differ["reference"]["differ"] == ["CUDA events on cuda:0"]
    assert ("  fastest correct path (CUDA events on cuda:0): the page's call (torch.jit.script) in 0 of 3: "
            "NOT reproduced") in differ["lines"]
    assert f"  fastest correct path (CPU clock): the page's call ({ONNX}) in 3 of 3" in differ["lines"]
    assert differ["lines"][-1].endswith("-> NOT reproduced")
    same = reproduce.summarise_numbers([run(within)] * 3, reference={**page, "calls": {
        "CUDA events on cuda:0": "within 2% of eager"}})
    assert same["agree"] and same["lines"][-1].endswith("-> reproduced")
    cpu = reproduce.summarise_numbers([{**run(within), "device": "cpu"}], reference=page)
    assert "reference" not in cpu and cpu["agree"]  # a CPU run is not the H200 page's


def test_the_recorded_pages_calls_are_read_off_its_copy_where_no_record_holds_them():
    text = ("timed with CUDA events on cuda:0\nvariant ...\n\na loop of calls on cuda:0, wall clock per call\n"
            "fastest path correct on all layouts: torch.jit.script, 0.84x (IQR 0.84-0.84) of eager's time in a loop\n"
            f"timed with CPU clock\nfastest path correct on all layouts: {ONNX}, 0.22x (IQR 0.21-0.23) of eager's time\n")
    assert reproduce.calls_in_copy(text) == {"CUDA events on cuda:0": "torch.jit.script", "CPU clock": ONNX}
    band = "no path correct on all layouts is fastest by more than 2%: within 2% of eager (torch.jit.script 0.98x, device time)"
    held = f"no path correct on all layouts is called fastest: {ONNX} ran 0.43x of eager's time (IQR 0.35-0.56), but"
    tie = ("no path correct on all layouts is called fastest: torch.jit.trace and torch.jit.script tie "
           "(torch.jit.script 0.80x of eager's time, IQR 0.79-0.81: within noise of torch.jit.trace)")
    assert reproduce.calls_in_copy(f"timed with X\n{band}\ntimed with Y\n{held}\ntimed with Z\n{tie}\n") == {
        "X": tables.TIE_WITH_EAGER, "Y": f"{tables.NOT_RESOLVED} ({ONNX} held back)",
        "Z": "torch.jit.script and torch.jit.trace tie"}
    found = reproduce.page_calls()  # the committed H200 copy (19:20), while its record has no 'speed_call'
    if found is not None:
        assert set(found["calls"]) <= {"CUDA events on cuda:0", export_audit.CPU_CLOCK} and found["device"] == "cuda:0"


def test_reproduce_records_the_timings_the_call_is_taken_on():
    device, loop = _h200_1920()
    speed = export_audit.Speed({"CUDA events on cuda:0": device, export_audit.CPU_CLOCK: _cpu_page()},
                               [*CORRECT_ON_ALL, ONNX])
    kept = tables.speed_record(speed, loop)
    assert kept["calls"] == {"CUDA events on cuda:0": f"{tables.TIE_WITH_EAGER} ({tables.DEVICE_CLOCK})",
                             export_audit.CPU_CLOCK: ONNX}
    assert kept["loop_clock"] == "CUDA events on cuda:0" and round(kept["loop"]["eager"]["over_device"], 2) == 1.16
    assert kept["timings"]["CUDA events on cuda:0"]["eager"]["host_probe_s"] == 602e-6
    assert kept["loop"]["torch.jit.script"]["ratio"] == 0.84 and kept["rule"] == tables.PACE_RULE


def test_trap_2_is_called_on_the_clock_the_speed_tables_rule_picks():
    """Review 2026-12-04m item 10: Trap 2's 'within +-2%' was taken on device time (440 against
    445 us) while the probe read both inputs launch-bound (584 and 648 us)."""
    device = _Cmp({"channels_last input": _v(1.0, 1.0, 1.0, 440e-6, 584e-6),
                   "NCHW input": _v(1.01, 1.01, 1.01, 445e-6, 648e-6)}, baseline="channels_last input")
    at_pace = _Cmp({"channels_last input": _v(1.0, 1.0, 1.0, 450e-6), "NCHW input": _v(1.12, 1.11, 1.13, 505e-6)},
                   baseline="channels_last input")
    assert tables.trap2_decision(device) == tables.trap2_decision(device, loop=at_pace) == tables.WITHIN_BAND
    bound = _Cmp({"channels_last input": _v(1.0, 1.0, 1.0, 700e-6), "NCHW input": _v(1.12, 1.11, 1.13, 785e-6)},
                 baseline="channels_last input")  # 1.59x and 1.76x their device time: launch-bound
    assert tables.trap2_decision(device, loop=bound) == tables.SLOWER
    said = tables.trap2_call(device, loop=bound)
    assert said == f"the call: slower (the rounds against 1x, +-2% band, {tables.LOOP_CLOCK})"
    assert tables.trap2_call(device, loop=at_pace).endswith(f"+-2% band, {tables.DEVICE_CLOCK})")
    declared = SimpleNamespace(lines=lambda: ["torch.export input: x", "torch.jit.trace input: y"],
                               export_input="x", trace_input="y", eager=device, loop=bound,
                               export_layout_sentence=lambda device: "a sentence")
    timed = tables.declared_table(declared, "cuda:0").parts[1]
    assert tables.HOST_AT_MOST in timed.columns and "host launch" not in timed.columns
    assert {row[0]: row[timed.columns.index(tables.HOST_AT_MOST)] for row in timed.rows} == {
        "channels_last input": 584e-6, "NCHW input": 648e-6}  # under the loop's 700 and 785 us
    assert timed.notes[-1].endswith(said)
    summary, text = timed.folded[-1]
    assert summary == "the loop of calls" and text.startswith(
        "a loop of calls, wall clock per call: channels_last input 700 us (1.59x its device time), "
        "NCHW input 785 us (1.76x its device time); the clock: each path is set against the channels_last input")


def test_trap_2_times_its_loop_where_asked():
    model = export_audit.small_cnn(channels=4)
    example = export_audit.example_input(1, 8)
    found = export_traps.channels_last_declared_nchw(model, example, rep_ms=5, force_loop=True)
    assert list(found.loop.variants) == ["channels_last input", "NCHW input"]
    assert export_traps.channels_last_declared_nchw(model, example, rep_ms=5).loop is None  # a CPU: no launch


def _rounds(ratio, rounds):
    variant = _v(ratio, min(rounds), max(rounds))
    return SimpleNamespace(**vars(variant), round_ratios=tuple(rounds))


def test_a_within_noise_result_is_a_tie_by_the_rule_trap_2_and_reproduce_use():
    """Review 2026-12-04m item 1: the page names a fastest path by `ratio_call` (every round on one
    side of 1x, more than 2% from it), the rule reproduce.py 07 and Trap 2 apply; a best path
    within +-2% or whose rounds reach 1x, or one no faster than its runner-up round by round, is a
    tie, and a tie reads as a tie however a page or a record worded it."""
    noisy = _Cmp({"eager": _v(1.0, 1.0, 1.0), "a": _v(0.93, 0.90, 1.01)})
    assert tables.fastest_call(noisy, ["a"]) == ("a", tables.TIE_WITH_EAGER)
    assert tables.speed_call(noisy, ["a"]).sentence.endswith("IQR 0.90-1.01: its rounds reach 1x)")
    # two paths faster than eager: named only where it beats the runner-up in the same rounds
    a = _rounds(0.80, (0.78, 0.80, 0.82, 0.80, 0.79))
    close = _Cmp({"eager": _v(1.0, 1.0, 1.0), "a": a, "b": _rounds(0.81, (0.81, 0.79, 0.83, 0.80, 0.80))})
    assert tables.fastest_call(close, ["a", "b"]) == ("a", "a and b tie")
    assert tables.speed_call(close, ["a", "b"]).sentence.endswith(": within noise of b)")  # quotients straddle 1x
    apart = _Cmp({"eager": _v(1.0, 1.0, 1.0), "a": a, "b": _rounds(0.90, (0.88, 0.91, 0.90, 0.89, 0.92))})
    assert tables.fastest_call(apart, ["a", "b"]) == ("a", "a")
    crossing = _Cmp({"eager": _v(1.0, 1.0, 1.0), "a": a, "b": _rounds(0.86, (0.74, 0.86, 0.95, 0.78, 0.90))})
    assert tables.fastest_call(crossing, ["a", "b"]) == ("a", "a and b tie")  # b's rounds cross a's
    # one rule for the page and a run: the same call from the same timings, a tie compared as a tie
    speed = export_audit.Speed({"CUDA events on cuda:0": noisy}, ["a"])
    assert reproduce.fastest_calls(speed, None) == tables.speed_record(speed, None)["calls"] == {
        "CUDA events on cuda:0": tables.TIE_WITH_EAGER}
    page = {"calls": {"CUDA events on cuda:0": tables.TIE_WITH_EAGER}, "device": "cuda:0", "source": "the page"}
    runs = [{"device": "cuda:0", "fastest_correct": {"CUDA events on cuda:0": call}}
            for call in (f"within 2% of eager ({tables.LOOP_CLOCK})", f"{tables.TIE_WITH_EAGER} ({tables.DEVICE_CLOCK})")]
    assert reproduce.reference_agreement(runs, page)["differ"] == []
    assert tables.call_kind("b and a within 2% of each other") == tables.call_kind("a and b tie") == "a and b tie"
    # a page's copy reads back as the call the page made (`page_calls` where no record holds it)
    device, loop = _h200_1920()
    for said in (tables.speed_call(noisy, ["a"]), tables.speed_call(close, ["a", "b"]),
                 tables.speed_call(apart, ["a", "b"]), tables.speed_call(device, CORRECT_ON_ALL, loop)):
        assert reproduce._call_of_line(said.sentence) == tables.call_kind(said.call), said.sentence


def test_reproduce_compares_trap_2_and_3_with_the_page_too():
    """Review 2026-12-04m item 1 ('compares each call with the page'): the page records Trap 2's
    and Trap 3's calls as the runs record them, and a run that calls otherwise is NOT reproduced;
    where the page left no record, they are read off its H200 copy."""
    trap2 = _Cmp({"channels_last input": _v(1.0, 1.0, 1.0), "NCHW input": _v(1.01, 1.01, 1.01)},
                 baseline="channels_last input")
    on = SimpleNamespace(**vars(_v(0.57, 0.53, 0.61)), round_ratios=(0.53, 0.57, 0.61))
    ort = SimpleNamespace(comparison=_Cmp({"NCHW declared, off": _v(1, 1, 1), "NCHW declared, on": on},
                                          baseline="NCHW declared, off"))
    kept = tables.trap_calls(SimpleNamespace(eager=trap2, loop=None), ort, "cuda:0")
    assert kept == {"device": "cuda:0", "trap2_nchw_input": tables.WITHIN_BAND, "trap3_preference_on": "faster"}
    page = {"calls": {}, "statements": {k: v for k, v in kept.items() if k != "device"}, "device": "cuda:0"}
    run = {"device": "cuda:0", "fastest_correct": {}, "trap2_nchw_input": {"decision": tables.WITHIN_BAND},
           "trap3_preference_on": {"decision": "faster"}}
    assert reproduce.reference_agreement([run] * 3, page)["differ"] == []
    other = {**run, "trap2_nchw_input": {"decision": tables.SLOWER}}
    against = reproduce.reference_agreement([run, other, run], page)
    assert against["differ"] == ["trap2_nchw_input"] and against["statements"]["trap2_nchw_input"] == (
        tables.WITHIN_BAND, 2)
    cells = [{"cell_type": "code", "source": "tables.declared_table(declared, ...)", "outputs": [{"text": (
        "ratio: median of the rounds' ratios; the call: within +-2% (too small to call) (the rounds against "
        "1x, +-2% band)\n")}]},
        {"cell_type": "code", "source": "tables.ort_table(ort_layout)", "outputs": [{"text": (
            "the call: with its layout preference on, the NCHW-declared model ran faster than with it off in 7 "
            "of 7 rounds\n")}]}]
    assert reproduce.statements_in_copy(cells) == {"trap2_nchw_input": tables.WITHIN_BAND,
                                                   "trap3_preference_on": "faster"}


def test_the_fastest_call_needs_the_rounds_clear_of_the_band_with_an_edge_of_its_own():
    """Review 2026-12-04n 05-07 item 1: the H200's torch.jit.script at 0.982x of eager's device
    time (rounds 0.98-0.98) sat on the 2% edge, decided by the median alone (0.979 'faster',
    0.981 a tie). The call now takes the rounds' IQR as printed: 0.98-0.98 is a tie in every
    process whose rounds print 0.98 or above; rounds that cross 0.98x are 'at the band's edge',
    a call of its own kind, never the name."""
    device, _ = _h200_1920()
    for q25, q75, ratio in ((0.979, 0.980, 0.9795), (0.9795, 0.9805, 0.98), (0.981, 0.983, 0.982)):
        edge = _Cmp({**device.variants, "torch.jit.script": _v(ratio, q25, q75, 438e-6, 299e-6)})
        assert tables.fastest_call(edge, CORRECT_ON_ALL) == ("torch.jit.script", tables.TIE_WITH_EAGER)
    crossing = _Cmp({**device.variants, "torch.jit.script": _v(0.976, 0.973, 0.979, 436e-6, 299e-6)})
    assert tables.fastest_call(crossing, CORRECT_ON_ALL) == ("torch.jit.script", tables.EDGE_WITH_EAGER)
    said = tables.speed_call(crossing, CORRECT_ON_ALL)
    assert said.call == tables.EDGE_WITH_EAGER
    assert said.sentence.startswith("no path correct on all layouts is called fastest: at the band's edge with "
                                    "eager (torch.jit.script 0.98x of eager's device time, IQR 0.97-0.98: its "
                                    "rounds cross 0.98x, the band's edge)")
    assert reproduce._call_of_line(said.sentence) == tables.call_kind(said.call) == tables.EDGE_WITH_EAGER
    assert tables.call_kind(tables.EDGE_WITH_EAGER) not in (tables.TIE_WITH_EAGER, "torch.jit.script")
    clear = _Cmp({**device.variants, "torch.jit.script": _v(0.972, 0.970, 0.974, 434e-6, 299e-6)})
    assert tables.fastest_call(clear, CORRECT_ON_ALL) == ("torch.jit.script", "torch.jit.script")
    # eager best, the runner-up's rounds crossing 1.02x: the edge too, not 'eager'
    slower = _Cmp({"eager": _v(1.0, 1.0, 1.0), "a": _v(1.022, 1.018, 1.026)})
    assert tables.fastest_call(slower, ["a"]) == ("a", tables.EDGE_WITH_EAGER)
    # a run at the edge against a page's tie is NOT reproduced: the edge is its own kind
    page = {"calls": {"CUDA events on cuda:0": tables.TIE_WITH_EAGER}, "device": "cuda:0", "source": "the page"}
    runs = [{"device": "cuda:0", "fastest_correct": {"CUDA events on cuda:0": f"{tables.EDGE_WITH_EAGER} "
                                                                             f"({tables.DEVICE_CLOCK})"}}]
    assert reproduce.reference_agreement(runs, page)["differ"] == ["CUDA events on cuda:0"]


def test_the_band_is_printed_with_what_fresh_processes_moved_a_ratio_by():
    """Review 2026-12-04n 05-07 item 7: the band's width with its reason, from the reproduce
    record: how far one device-time ratio moved across its fresh runs, relative (max / min - 1).
    Review 2026-12-05o 05-07 item 7: the ratio the call is about, named, not the most any path
    moved (torch.jit.trace's 1.23x moving 1.1 points cast doubt on a tie at 0.98x)."""
    def run(trap2, script=None, trace=None):
        timed = {"eager": {"ratio": 1.0}}
        timed.update({"torch.jit.script": {"ratio": script}} if script else {})
        timed.update({"torch.jit.trace": {"ratio": trace}} if trace else {})
        speed = {"timings": {"CUDA events on cuda:0": timed}} if script or trace else {}
        return {"device": "cuda:0", "trap2_nchw_input": {"ratio": trap2}, "speed": speed}
    record = {"recorded_at": "2026-12-04T19:20:38+00:00", "numbers": [run(1.0094), run(1.0115), run(1.0134)]}
    spread, who = tables.process_spread(record)
    assert spread == pytest.approx(1.0134 / 1.0094 - 1) and who == "Trap 2's"
    assert tables.band_reason(record) == ("+-2% band: 5.0x the 0.4% Trap 2's ratio moved (max / min) between "
                                          "fresh processes (reproduce 19:20 UTC)")
    wide = {**record, "numbers": [run(1.01, 0.975), run(1.01, 0.987)]}  # the speed table's own ratio
    assert tables.process_spread(wide)[1] == "torch.jit.script's"
    assert tables.band_reason(wide).endswith(": under twice it, a call near its edge may not reproduce")
    # the tie's own path: torch.jit.script at 0.980-0.988x moved 0.8%; torch.jit.trace 1.23-1.25x
    # moved more in points, and is not what a tie of torch.jit.script is read against
    mixed = {**record, "numbers": [run(1.01, 0.980, 1.230), run(1.01, 0.988, 1.250)]}
    assert tables.process_spread(mixed)[1] == "torch.jit.trace's"  # the most of any path, absent `about`
    spread, who = tables.process_spread(mixed, "torch.jit.script's")
    assert who == "torch.jit.script's" and spread == pytest.approx(0.988 / 0.980 - 1)
    assert tables.band_reason(mixed, "torch.jit.script's") == (
        "+-2% band: 2.4x the 0.8% torch.jit.script's ratio moved (max / min) between fresh processes "
        "(reproduce 19:20 UTC)")
    assert tables.process_spread(mixed, "Trap 2's") == (0.0, "Trap 2's")
    assert tables.band_reason(record, "torch.jit.script's") == ""  # not timed in two runs: no reason
    assert tables.band_reason(None) == tables.band_reason({"numbers": [run(1.01)]}) == ""  # one run: no spread
    cpu = {"numbers": [{**run(1.01), "device": "cpu"}, {**run(1.05), "device": "cpu"}]}
    assert tables.process_spread(cpu) is None  # a CPU's ratios are not device time
    # the record in the repository, where one is present, gives a reason the band exceeds
    found = tables.process_spread(tables.reproduce_record())
    if found is not None:
        assert 0 < found[0] <= tables.NO_CALL_BAND
