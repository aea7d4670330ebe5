"""ch05's lesson.py, the notebook's run: GPU-only measurements are kept under the keys the
H200 record is read by, and without a GPU the recorded run is shown labelled recorded."""

import json
from dataclasses import dataclass, field, replace

import pytest

from labkit import session
from labkit.chapters.ch05_dataloader import h2d_copies, lesson
from labkit.core import results
from tests.paths import ROOT


@dataclass
class FakeGpuChapter:
    """A chapter that says it runs on a GPU and keeps what it records in a dict."""

    key: str = "05_dataloader"
    on_gpu: bool = True
    kept: dict = field(default_factory=dict)
    verdicts: list = field(default_factory=list)

    def record(self, name, payload):
        self.kept[name] = payload

    def recorded(self, name):
        return None

    def here_or_recorded(self, key, measure):
        value = measure()
        self.record(key, value)
        return value


@pytest.fixture
def cpu_lesson():
    chapter = session.open("05_dataloader", announce=False)
    chapter.on_gpu = False
    return lesson.Lesson(chapter)


def test_on_a_gpu_pinning_and_the_trap_are_kept_under_the_recorded_keys(monkeypatch):
    chapter = FakeGpuChapter()
    run = lesson.Lesson(chapter)
    cost = {"nbytes": 2**20, "first_pin_s": 0.01, "first_pin_cpu_s": 0.01, "cached_pin_s": 0.001,
            "cached_pin_gbps": 1.0, "host_reserved_bytes": None}
    monkeypatch.setattr(h2d_copies, "pinning_cost_fresh", lambda: type("C", (), {"as_dict": lambda s: cost})())
    monkeypatch.setattr(run, "_pin_thread", lambda: {"pin_thread_cpu_s": 0.002, "batches": 8,
                                                     "pin_thread_share_of_wall": 0.1})
    text = str(run.pinning_cost())
    assert set(chapter.kept) == {"pinning_cost_fresh", "pin_thread", lesson.CELL_SECONDS_KEY}
    assert set(chapter.kept[lesson.CELL_SECONDS_KEY]["seconds"]) == {"pinning_cost"}
    assert chapter.kept["pinning_cost_fresh"] == cost and "recorded" not in text
    trap = [{"destination": "pinned", "wrong_before_sync": 5, "elements": 5, "wrong_after_sync": 0}]
    monkeypatch.setattr(h2d_copies, "d2h_trap", lambda: [type("T", (), {"as_dict": lambda s: trap[0]})()])
    assert "5 of 5 values wrong" in str(run.d2h_trap()) and chapter.kept["d2h_trap"] == trap
    assert run.what_the_early_read_gives() == "old values: the copy has not happened yet"


PIN_COST = {"nbytes": 2**20, "first_pin_s": 0.3, "first_pin_cpu_s": 0.3, "cached_pin_s": 0.001,
            "cached_pin_gbps": 1.0, "host_reserved_bytes": None}


class StartedAhead:
    """A stand-in for h2d_copies.FreshPinProcess: counts its processes, measures once."""

    started: list = []

    def __init__(self):
        self.import_s, self.closed, self.asked = 3.5, False, 0
        StartedAhead.started.append(self)

    def close(self):
        self.closed = True

    def measure(self):
        self.asked += 1
        return type("C", (), {"as_dict": lambda s: dict(PIN_COST)})()


def test_on_a_gpu_prepare_starts_the_pinning_process_that_the_pinning_cell_asks(monkeypatch):
    """The fresh pinning process is started by prepare() (its imports overlap the sweeps),
    asked once by pinning_cost (then a new run of it starts its own), closed when prepare
    runs again; each timed method's seconds and the child's imports are recorded."""
    chapter = FakeGpuChapter()
    run = lesson.Lesson(chapter)
    StartedAhead.started = []
    monkeypatch.setattr(h2d_copies, "FreshPinProcess", StartedAhead)
    bench = type("B", (), {"data": None, "step": None})()
    monkeypatch.setattr(lesson.knee_experiment, "prepare", lambda: bench)
    monkeypatch.setattr(h2d_copies, "pinning_cost_fresh", lambda: pytest.fail("started afresh"))
    run.prepare()
    run.prepare()  # the cell again: the first process is ended, a second waits
    first, second = StartedAhead.started
    assert first.closed and not second.closed
    monkeypatch.setattr(run, "_pin_thread", lambda: {"pin_thread_cpu_s": None})
    run.pinning_cost()
    assert (first.asked, second.asked) == (0, 1) and chapter.kept["pinning_cost_fresh"]["first_pin_s"] == 0.3
    kept = chapter.kept[lesson.CELL_SECONDS_KEY]
    assert set(kept["seconds"]) == {"prepare", "pinning_cost", "fresh pinning process: imports, overlapped"}
    assert kept["seconds"]["fresh pinning process: imports, overlapped"] == 3.5
    assert kept["before_lesson_s"] is None or kept["before_lesson_s"] > 0
    started = []
    monkeypatch.setattr(h2d_copies, "pinning_cost_fresh",
                        lambda: started.append(1) or type("C", (), {"as_dict": lambda s: dict(PIN_COST)})())
    run.pinning_cost()  # asked again: no process waits now, one is started then
    assert started == [1]


def test_without_a_gpu_the_recorded_run_is_shown_labelled_recorded(cpu_lesson):
    if not results.recorded("05_dataloader", "d2h_trap"):
        pytest.skip("no reference run recorded for chapter 05")
    trap = str(cpu_lesson.d2h_trap())
    assert "pinned" in trap and f"(recorded on {results.DEFAULT_REFERENCE})" in trap
    pins = str(cpu_lesson.pinning_cost())
    assert pins.startswith("Pinning needs a CUDA GPU") and "recorded on" in pins
    knobs = cpu_lesson.recorded_gpu_knobs()
    recorded_rows = results.recorded("05_dataloader", "sweep_knobs")["rows"]
    assert knobs.recorded == f"recorded on {results.DEFAULT_REFERENCE}"
    assert [row[0] for row in knobs.rows] == [row["label"] for row in recorded_rows]
    # issue 39: every recorded call read against the baseline; the 13:47 page read its top row
    # against + pin, so it is called again from its rounds and the old reading shown, not called
    assert "knobs, called against the baseline" in knobs.title
    cells = {row[0]: row[-1] for row in knobs.rows}
    reference = json.loads((ROOT / "results" / f"{results.DEFAULT_REFERENCE}.json").read_text())
    recorded_at = reference["chapters"]["05_dataloader"]["sweep_knobs"]["recorded_at"]
    if recorded_at == "2026-12-04T13:53:11+00:00":  # the 13:47 page (read against + pin)
        assert cells["w8 b64 pin devprefetch uint8"] == ("1.32x [1.13, 1.55]: a gain; over + pin: 1.11x "
                                                         "[0.92, 1.34], shown, not called")
    overlap = cpu_lesson.recorded_overlap()
    assert overlap and all(line.startswith("recorded on") for line in overlap)


def test_the_dataloader_is_read_for_pin_memory_device(cpu_lesson):
    source = cpu_lesson.dataloader_source()
    assert any("pin_memory_device" in line for line in source[1:-1])
    assert source[-1].startswith("torch.cuda._pin_memory exists:")
    assert all(line.startswith("DataLoader warns: ") for line in cpu_lesson.dataloader_warnings())


def test_a_knob_row_reads_as_its_geometric_mean_interval_and_call():
    """Issue 39: a row is said as the geometric mean of its per-round ratios with its 95%
    interval in brackets; a row recorded under the older rule (no 'level') keeps its median
    and the rounds' range in parentheses; the recorded GPU table keeps 'a gain' and 'a loss'."""
    from labkit.chapters.ch05_dataloader import knee_experiment, lesson

    row = knee_experiment.call([1.2, 1.3, 1.4, 1.25, 1.35, 1.3])
    assert lesson.against_text(row) == (f"{row['ratio']:.2f}x [{row['ratio_low']:.2f}, "
                                        f"{row['ratio_high']:.2f}]: a gain")
    assert lesson.against_text(knee_experiment.call([0.9, 1.1, 1.0])).endswith(": not resolved")
    assert lesson.against_text(knee_experiment.call([0.99, 1.01, 1.0, 1.0])).endswith(": no difference")
    # a row recorded under the interval rule with the older label is called again by the band
    wide = {**knee_experiment.call([0.85, 2.0, 1.3]), "decision": "no clear difference"}
    assert lesson.against_text(wide).endswith(": not resolved")
    # an older every-round row that was neither gain nor loss reads as not resolved
    assert lesson.against_text({"decision": "no clear difference", "ratio": 1.05, "ratio_low": 0.96,
                                "ratio_high": 1.18, "stated": "x"}) == "1.05x (0.96-1.18): not resolved"
    old = {"decision": knee_experiment.GAIN, "ratio": 1.21, "ratio_low": 1.12, "ratio_high": 1.36,
           "stated": "1.21x (rounds 1.12-1.36)"}
    assert lesson.against_text(old) == "1.21x (1.12-1.36): a gain"
    # a table recorded under the oldest rule (no band) keeps its own words
    assert lesson.against_text({**old, "decision": "no measurable difference"}).endswith("straddles 1x")
    assert lesson.against_text({"decision": "baseline"}) == "the baseline"
    assert lesson.against_text({"decision": "gain", "stated": "older record"}) == "older record"
    assert lesson.against_text(knee_experiment.call([1.2])) == "1.20x (one round: no interval, no decision)"


def test_the_parts_line_keeps_each_median_and_spread_and_names_the_warnings():
    from labkit.measure import bench

    measured = bench.time(lambda: sum(range(100)), rep_ms=5, warmup_ms=1, label="a sum")
    timing = type(measured)(**{**measured.__dict__, "warnings": ()})  # whatever this CPU said
    noisy = type(timing)(**{**timing.__dict__, "warnings": ("noisy: IQR is 20% of the median", "page faults: many")})
    line = lesson.parts_line({"the step on the device": (noisy, "lesson.bench.compute"),
                              "the copy alone": (timing, "lesson.bench.copy_alone"),
                              "never timed": (None, "lesson.bench.nothing")})
    assert line.startswith(f"the step on the device {noisy.median_s * 1e3:.1f} ms (IQR {noisy.iqr_s * 1e3:.1f}), "
                           f"the copy alone {timing.median_s * 1e3:.1f} ms")
    assert line.endswith("; harness warnings: noisy, page faults (print(lesson.bench.compute))")
    assert "never timed" not in line and "IQR is 20%" not in line
    assert "harness warnings" not in lesson.parts_line({"alone": (timing, "x")})


def test_on_a_cpu_the_seconds_are_kept_but_not_recorded(monkeypatch):
    chapter = FakeGpuChapter(on_gpu=False)
    run = lesson.Lesson(chapter)
    bench = type("B", (), {"data": None, "step": None})()
    monkeypatch.setattr(lesson.knee_experiment, "prepare", lambda: bench)
    monkeypatch.setattr(h2d_copies, "FreshPinProcess", lambda: pytest.fail("a CPU has nothing to pin"))
    run.prepare()
    assert set(run.seconds) == {"prepare"} and lesson.CELL_SECONDS_KEY not in chapter.kept


def test_on_a_gpu_the_knob_ladder_and_the_copy_read_from_the_rows_the_h200_records(monkeypatch):
    """The GPU-only texts of the knob cell and the overlap, fed rows shaped as knob_table makes
    them on a GPU (the ladder: every row called against the baseline, + devprefetch + uint8's
    increment over + pin beside its call, issue 39) and the H200's numbers (a 38.5 MB batch copied pageable in 6.4 ms; the tuned overlap idle
    75%): no GPU is needed to build these sentences, only the rows one records."""
    from types import SimpleNamespace

    from labkit.chapters.ch05_dataloader import knee_experiment, loader_sweep

    run = lesson.Lesson(FakeGpuChapter())
    run.plan = loader_sweep.plan(cores=16, gpu=True)  # the H200's: ResNet-50, batch 64

    def row(label, against=None, ratios=(), step=()):
        out = {"label": label, "samples_per_s": 1300.0, "samples_per_s_low": 1200.0,
               "samples_per_s_high": 1400.0, "wait_share": 0.1}
        if step:
            out["increment"] = knee_experiment.shown_only({**knee_experiment.call(step), "over": "w8 b64 pin"})
        return {**out, "decision": "baseline"} if against is None else {
            **out, "against": against, **knee_experiment.call(ratios)}

    pin, top = [1.1, 1.12, 1.09, 1.11, 1.1, 1.13], [1.3, 1.2, 1.25, 1.31, 1.28, 1.22]
    run.knob_rows = [row("w8 b64"), row("w8 b64 (A/A)", "w8 b64", [1.0, 1.01, 0.99, 1.0, 1.02, 0.98]),
                     row("w8 b64 pin", "w8 b64", pin),
                     row("w8 b64 pin devprefetch uint8", "w8 b64", [a * b for a, b in zip(pin, top, strict=True)], top)]
    said = run._knob_takeaway(None)
    assert "+ pin 1.11x [1.09, 1.12]: a gain;" in said and "A/A" not in said
    # the top row's call is against the baseline; its increment over + pin is shown, not called
    assert ("+ pin devprefetch uint8 1.40x [1.35, 1.44]: a gain (over + pin: 1.26x [1.21, 1.31], "
            "shown, not called)") in said
    side = 3 * 224 * 224
    run.bench = SimpleNamespace(data=SimpleNamespace(sample_bytes=4 * side),
                                data_uint8=SimpleNamespace(sample_bytes=side),
                                copy_alone=SimpleNamespace(bytes_moved=64 * 4 * side, median_s=0.0064))
    text = run.batch_bytes_text()
    assert text.startswith("a batch is 38.5 MB in float32, 9.6 MB in uint8 (0.25x, from the shapes)")
    # no GPU row pays a pageable uint8 copy: the text prices none, and says what was timed
    assert "only the pageable float32 copy was timed" in text and "uint8 row copies pinned" in text
    assert "1.6 ms" not in text and "ms in uint8" not in text
    run.on_gpu = False  # a CPU: the bytes through shared memory, and no copy to a device
    assert run.batch_bytes_text() == ("a batch is 38.5 MB in float32, 9.6 MB in uint8 (0.25x, from the "
                                      "shapes): what crosses shared memory.")
    run.on_gpu = True
    # the knob cell: the rule folded under the table (the markdown says it in words), the
    # bytes as a note; and the recorded-GPU cell prints nothing on a GPU (the table is its own)
    base = SimpleNamespace(setting=SimpleNamespace(num_workers=8, batch_size=64), samples_per_s=1300.0)
    run.sweep_knobs = SimpleNamespace(rounds=6, runs=[base], budget_note=lambda: "")
    run.knee = SimpleNamespace(workers=8, arithmetic_workers=8)
    run.sweep_workers = SimpleNamespace(where=lambda **_: [base])
    run._wanted = [SimpleNamespace(label=r["label"]) for r in run.knob_rows]
    monkeypatch.setattr(lesson.loader_plots, "sweep_figure", lambda *a: "a figure")
    shown = run.knob_text()
    assert len(shown) == 2 and shown[1] == "a figure"
    (table,) = [shown[0]]
    assert table.folded == [("the rule, in full", knee_experiment.knob_rule(6))]
    assert run.batch_bytes_text() in table.notes
    assert "The rule:" not in "".join(table.notes) and str(run.recorded_gpu_knobs()) == ""
    tuned = {"waiting_share": 0.0015, "gpu_idle_share": 0.75, "h2d_overlap_share": 0.068}
    assert lesson.gpu_overlap_text(tuned).startswith(", GPU idle 75%, H2D copy beside kernels 7% (host-bound")
    assert "host-bound" not in lesson.gpu_overlap_text({**tuned, "waiting_share": 0.81})
    assert lesson.gpu_overlap_text({**tuned, "gpu_idle_share": None}) == ""
    # with the trace's span recorded, the share says what it is a share of (review 03g item 9)
    said = lesson.gpu_overlap_text({**tuned, "window_us": 36_000.0, "steps": 3})
    assert said.startswith(", GPU idle 75% of the 3 profiled steps' 36.0 ms (busy 9.0 ms), H2D copy beside kernels 7%")
    # review 2026-12-04m item 9: beside the profiler's share, the unprofiled step's (the knob
    # table's windows: 64 / 1,355 samples/s = 47.2 ms), GPU busy 3.0 ms a step of it
    unprofiled = lesson.gpu_overlap_text({**tuned, "window_us": 36_000.0, "steps": 3, "unprofiled_step_s": 64 / 1355})
    assert unprofiled.endswith("; unprofiled, a batch took 47.2 ms in the knob table's windows (wait included): "
                               "GPU busy 3.0 ms of it, idle 94%")
    assert "unprofiled" not in said


def test_on_a_gpu_c25_is_judged_from_the_busy_table_and_its_reason_is_left_to_the_verdicts_table(monkeypatch):
    """The H200's busy-stream rows, judged by today's C25 check: the cell prints the table and
    the verdict's label; the reason (the table again, in words) is the verdicts' table's."""
    from labkit import claims

    rows = results.recorded("05_dataloader", "busy_stream", machine="nvidia-h200")  # the course's record
    chapter = FakeGpuChapter()
    chapter.judge = lambda cid, evidence, form: claims.get(cid).judge(evidence, machine="a test", form=form)
    saved = []
    monkeypatch.setattr(claims, "save", lambda verdicts, key: saved.extend(verdicts))
    text = "\n".join(str(line) for line in lesson.Lesson(chapter).c25(rows))
    verdict = saved[0]
    assert verdict.claim_id == "C25" and f"C25 {verdict.label}; its reason: in the verdicts' table below" in text
    assert verdict.reason not in text and "size (MiB)" in text and "    256.00 " in text


def test_prepare_keeps_the_profilers_cycle_note_off_the_page_and_lets_other_warnings_through(monkeypatch):
    """On the H200 torch's profiler note ('clears events at the end of each cycle', once a
    process) was 37 of the chapter's output words, printed under prepare's cell."""
    import warnings

    bench = type("B", (), {"data": None, "step": None})()

    def prepare():
        warnings.warn("Warning: Profiler clears events at the end of each cycle. Only events from "
                      "the current cycle will be reported.", UserWarning, stacklevel=1)
        warnings.warn("a warning the learner should read", UserWarning, stacklevel=1)
        return bench

    monkeypatch.setattr(lesson.knee_experiment, "prepare", prepare)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lesson.Lesson(FakeGpuChapter(on_gpu=False)).prepare()
    assert [str(w.message) for w in caught] == ["a warning the learner should read"]


# The H200 copy's plateau as recorded (results/nvidia-h200.json, 2026-12-03 18:49): no IQRs.
H200_PLATEAU = {"batch_size": 64, "counts": [8, 12], "measured": 1327.43, "step_s": 0.031032,
                "ready_step_s": 0.028606, "wait_s": 0.007565, "gpu_idle_share": 0.6232,
                "tolerance": 0.15, "swept_step_s": 0.040602, "copy_alone_s": 0.002809,
                "copy_bytes": 38535680, "on_gpu": True, "private_step_s": 0.023713,
                "step_faults": 593.5, "private_faults": 2.0, "swept_faults": 591.0,
                "launch_gap_us": 44.15, "wait_share": 0.156, "predicted": 1658.2, "agrees": False,
                "bound": "the host's side: ...; copy + first touch = 10.1 of 31.0 ms"}


def test_the_plateau_takeaway_and_the_recorded_line_name_the_step_they_used_and_no_refused_split():
    """Review 2026-12-03g items 1 and 2: the takeaway and the CPU page's recorded line read the
    step inside the sweep (64 / (40.6 + 7.6 ms) = 1,329 against 1,327), set the step timed apart
    beside it (0.80x) without a cause, and reuse no split of the step (the record holds no IQRs,
    so a rest of -7.7 ms cannot be called noise)."""
    from labkit.chapters.ch05_dataloader import loader_sweep

    line = lesson.recorded_plateau(H200_PLATEAU)
    assert ("1327 samples/s at 8, 12 workers; 64 / (40.6 ms, the step inside the sweep, + 7.6 ms, its "
            "runs' own wait) = 1329 (1.00x, a consistency check); the step timed apart (31.0 ms) gives 1658 (0.80x); GPU idle 62%.") in line
    assert "host batch adds" not in line
    plateau = loader_sweep.Plateau.from_record(H200_PLATEAU)
    assert plateau.refused() and plateau.parts() == {}
    said = lesson.plateau_takeaway(plateau)
    assert said.startswith("The plateau: 1327 samples/s against 1329 from batch / (the step inside the "
                           "sweep, 40.6 ms, + wait), within 15%: a consistency check. What bounds it:")
    # the step timed apart is the plateau cell's (review 2026-12-04m: the takeaway's words)
    assert "first touch =" not in said and "outside" not in said and "timed apart" not in said
    assert "The step timed apart (31.0 ms) gives 1658 (0.80x)" in plateau.explanation()
    # an older record that lacks what the line needs keeps its own sentence
    assert lesson.recorded_plateau({"explanation": "old words"}).endswith("old words")


def test_the_cpu_page_reads_the_reference_s_plateau_bound_by_today_s_rule():
    """Review 2026-12-04i item 2: the H200's plateau of 2026-12-04 is bound by host-bound
    launches (its CPU time grew, not its time off the CPU), as the CPU page's reference line says."""
    import json
    from pathlib import Path

    kept = Path(__file__).resolve().parent / "h200_plateau_2026-12-04T0339.json"  # the live record moves
    line = lesson.recorded_plateau(json.loads(kept.read_text()))
    # review 2026-12-04j item 1: one block alone and one beside (no interval) names no bound
    # from the decoders; the profile's idle share names the host's side
    # review 2026-12-04m items 3 and 9: the wait is the runs' own; no idle share on another step
    assert line.endswith("= 1265 (0.97x, a consistency check); bound: the host's side.")
    assert "timed apart" not in line
    record = json.loads((Path(__file__).resolve().parents[3] / "results" / "nvidia-h200.json").read_text())
    live = lesson.recorded_plateau(record["chapters"]["05_dataloader"]["plateau"]["payload"])
    assert "shared with the decoders" not in live  # the 07:09 page's 1.28x from 3 + 6 steps


def _row(label, ratio, low, high, against=None):
    return {"label": label, "ratio": ratio, "ratio_low": low, "ratio_high": high, "level": 0.95,
            "decision": "not resolved", "against": against}


def test_a_failed_control_withholds_every_knob_call_and_the_plateau_takeaway_is_one_sentence():
    """Review 2026-12-03h items 3 and 8: the CPU page's A/A read '1.34x [1.01, 1.77]: a gain';
    then no knob call stands. The plateau's takeaway is one sentence, pin_memory's predicted
    gain beside the measured one (withheld when the control failed)."""
    from labkit.chapters.ch05_dataloader import loader_sweep

    base = {"label": "w8 b64", "decision": "baseline"}
    failed = [base, _row("w8 b64 (A/A)", 1.34, 1.01, 1.77), _row("w8 b64 pin", 1.13, 1.04, 1.24)]
    held = [base, _row("w8 b64 (A/A)", 1.01, 0.89, 1.15), _row("w8 b64 pin", 1.13, 1.04, 1.24)]
    assert lesson.control_failed(failed) and not lesson.control_failed(held)
    assert not lesson.control_failed([base])  # no control measured: nothing to fail
    plateau = loader_sweep.Plateau(64, (8,), 1418.0, 0.0272, 0.0184, 0.0068, 0.66, swept_step_s=0.0388,
                                   loaded_workers=8, loaded_step_s=0.0388, on_gpu=True, copy_alone_s=0.0058)
    said = lesson.plateau_takeaway(plateau, held[2], control_ok=True)
    assert said.count(". ") == 0 and said.endswith(".")  # one sentence
    # review 2026-12-04m item 4: pin_memory's arithmetic (recorded) is no takeaway: never tested
    assert plateau.pin_gain_range == pytest.approx((0.0456 / 0.0388, 0.0456 / 0.0330))
    assert "pin_memory" not in said and "predicted" not in said
    assert "pin_memory" not in lesson.plateau_takeaway(plateau, held[2], control_ok=False)
    # review 2026-12-04i item 3: no pin_memory prediction without a GPU
    on_cpu = replace(plateau, on_gpu=False)
    assert on_cpu.pin_gain_range is None and "pin_memory" not in lesson.plateau_takeaway(on_cpu, None)

    class Fake:
        knob_rows = failed
        on_gpu = True

    line = lesson.Lesson._knob_takeaway(Fake(), None)
    assert lesson.CONTROL_FAILED in line and "pin" not in line


def test_the_cores_line_does_not_call_the_cores_sufficient_when_the_plateau_s_bound_names_them(monkeypatch):
    """Review 2026-12-03h item 3: 'What bounds it: the step itself' beside 'the decode has to
    move'; now the cores line reads the plateau's bound."""
    from types import SimpleNamespace

    from labkit.chapters.ch05_dataloader import loader_sweep

    monkeypatch.setattr(results, "recorded", lambda *a, **k: None)
    shared = loader_sweep.Plateau(16, (2,), 260.0, 0.046, 0.044, 0.0056, None, loaded_workers=2,
                                  loaded_step_s=0.070, loaded_cpu_s=0.012, loaded_alone_s=0.017,
                                  loaded_alone_cpu_s=0.009, batch_load_s=0.016, cores=2, loaded_rounds=5,
                                  loaded_slowdown=4.1, loaded_slowdown_low=3.5, loaded_slowdown_high=4.8)
    fake = SimpleNamespace(plan=SimpleNamespace(cores=2), knee=SimpleNamespace(workers_needed=0.3),
                           plateau=shared, on_gpu=False, chapter=SimpleNamespace(recorded=lambda key: None))
    line = str(lesson.Lesson.cores_text(fake))
    assert "bound by the main thread's core, shared with the decoders" in line and "suffice" not in line
    fake.plateau = replace(shared, loaded_step_s=0.018)  # beside the decoders as alone: not short
    assert "the cores suffice" in str(lesson.Lesson.cores_text(fake))


def test_the_cores_line_names_the_same_bound_as_the_plateau(monkeypatch):
    """Review 2026-12-04i items 2 and 3: the CPU page's arithmetic asked for 1.7 workers of 1
    spare core (the cores bound it, the decode); the H200's plateau is bound by host-bound
    launches, which more workers do not lift."""
    from types import SimpleNamespace

    from labkit.chapters.ch05_dataloader import loader_sweep

    monkeypatch.setattr(results, "recorded", lambda *a, **k: None)
    short = loader_sweep.Plateau(16, (1, 2), 863.0, 0.0083, 0.0084, 0.0065, None, loaded_workers=1,
                                 loaded_step_s=0.0084, loaded_cpu_s=0.0084, loaded_alone_s=0.0115,
                                 loaded_alone_cpu_s=0.0115, batch_load_s=0.0145, cores=2, workers_needed=1.7)
    fake = SimpleNamespace(plan=SimpleNamespace(cores=2), knee=SimpleNamespace(workers_needed=1.7),
                           plateau=short, on_gpu=False, chapter=SimpleNamespace(recorded=lambda key: None))
    line = str(lesson.Lesson.cores_text(fake))
    assert "1.7x more than there are: the cores bound it (the decode)" in line
    assert "The plateau, 863 samples/s, was not predicted this run (step + wait: 0.80x, the cores' 0.70x) " \
           "and is bound by the cores." == lesson.plateau_takeaway(short)
    host = loader_sweep.Plateau(64, (8, 12), 1223.0, 0.0375, 0.0292, 0.0085, 0.54, on_gpu=True,
                                loaded_workers=8, loaded_step_s=0.0421, loaded_cpu_s=0.0299,
                                loaded_alone_s=0.0285, loaded_alone_cpu_s=0.0179, cores=16, workers_needed=4.2)
    fake = SimpleNamespace(plan=SimpleNamespace(cores=16), knee=SimpleNamespace(workers_needed=4.2),
                           plateau=host, on_gpu=True, chapter=SimpleNamespace(recorded=lambda key: None))
    line = str(lesson.Lesson.cores_text(fake))
    # review 2026-12-04j item 1: no interval over rounds, so the bound is the profile's host side
    assert "the plateau is bound by the host's side (above), which more workers do not lift" in line
    assert "shared with the decoders" not in line
    fake.plateau = replace(host, loaded_rounds=5, loaded_slowdown=1.48, loaded_slowdown_low=1.30,
                           loaded_slowdown_high=1.66)
    line = str(lesson.Lesson.cores_text(fake))
    assert "the plateau is bound by host-bound launches (above), which more workers do not lift" in line


def test_the_knob_table_prints_its_resolution_from_the_a_a_interval():
    """Review 2026-12-04j item 2: effects within what the A/A shows cannot be called; the page
    says how far (0.99x [0.84, 1.17]), and says nothing without an A/A interval. Review
    2026-12-04m item 2: the half-width alone (+/-18% here) left out the A/A's own distance from
    1, and an H200 reproduce run's A/A read 1.10x [1.02, 1.18]: the resolution is its distance
    from 1 times its half-width (x1.19 here, x1.18 there)."""
    base = {"label": "w8 b64", "decision": "baseline"}
    rows = [base, _row("w8 b64 (A/A)", 0.99, 0.84, 1.17), _row("w8 b64 pin", 1.17, 1.05, 1.30)]
    assert lesson.resolution(rows) == pytest.approx((1 / 0.99) * (1.17 / 0.84) ** 0.5)
    assert lesson.resolution_text(rows) == (
        "Resolution: identical loaders (the A/A) differ by up to 19% here; a call must clear that.")
    assert lesson.resolution([base]) is None and lesson.resolution_text([base, rows[2]]) == ""
    run3 = [base, _row("w8 b64 (A/A)", 1.10, 1.02, 1.18)]
    assert lesson.resolution(run3) == pytest.approx(1.10 * (1.18 / 1.02) ** 0.5)


def test_c25_s_takeaway_reads_the_seed_s_batch_and_labels_the_size_threshold_as_the_course_s():
    """Review 2026-12-04j item 3: the H200's rows (up to 2 MiB at once, from 4 MiB waited) read at
    the seed's batch (38.5 MB: the 16 and 64 MiB rows): waited; the threshold is the course's."""
    def row(n, share):
        return {"memory": "pageable", "nbytes": n, "returned_share": share}

    rows = [row(n << 20, 0.003) for n in (1, 2)] + [row(n << 20, 0.99) for n in (4, 16, 64, 256)]
    said = lesson.c25_finding({"busy_stream": rows})
    # review 2026-12-04m item 6: without a row at the seed's batch the line names the rows it read
    assert said == ("at 16 and 64 MiB, around the seed's batch (38.5 MB), the call waited out the queued "
                    "kernel; up to 2 MiB it returned at once (the course's finding)")
    seed = lesson.c25_finding({"busy_stream": [*rows, row(38_535_168, 0.99)]})
    assert seed.startswith("at the seed's batch (38.5 MB) the call waited out the queued kernel")
    early = lesson.c25_finding({"busy_stream": [row(16 << 20, 0.003), row(64 << 20, 0.99)]})
    assert early.startswith("at 16 and 64 MiB, around the seed's batch (38.5 MB), the call did not wait out")
    assert "course" not in early
    assert lesson.c25_finding({}) == ""


def test_the_link_line_sets_the_pinned_ceiling_beside_the_pageable_rates():
    """Review 2026-12-04j item 5: the H200 printed ~14.5 GB/s for the batch's pageable copy and
    8.7 GB/s at 147 MiB with nothing between them; the line gives the pinned curve's top rate
    and the pageable rates at the batch and the curve's two largest sizes."""
    curve = [{"memory": m, "nbytes": n << 20, "gbps": g} for m, n, g in (
        ("pageable", 16, 15.1), ("pinned", 16, 51.4), ("pageable", 64, 15.8), ("pinned", 64, 54.2),
        ("pageable", 256, 9.4), ("pinned", 256, 55.2))]
    said = lesson.link_text(curve, 38_535_680, 0.0026558)
    assert said.startswith("The link: pinned copies reach 55.2 GB/s at 256 MiB, the ceiling measured here. "
                           "Pageable: 14.5 GB/s for the 38.5 MB batch (the plateau's copy), 15.8 at 64 MiB, "
                           "9.4 at 256 MiB")
    assert "for the" not in lesson.link_text(curve)  # no batch copy timed: the curve alone
    # review 2026-12-04m item 10: the seed's size, timed interleaved, beside the curve either side
    at_seed = lesson.link_text(curve, seed={"pageable_gbps": 6.3, "transfer_bytes": 147 << 20})
    assert at_seed.endswith("At the seed's 147 MiB, timed interleaved with the pinned copies, pageable ran "
                            "6.3 GB/s against the curve's 15.8 at 64 MiB and 9.4 at 256 MiB: two timings at "
                            "different moments, and the curve has no point at that size (what moved the rate "
                            "is not measured).")
    assert "seed's" not in lesson.link_text(curve, seed={"pageable_gbps": 6.3, "transfer_bytes": 1 << 40})
    assert lesson.link_text(curve[:1]) == ""


def test_the_plateau_takeaway_is_a_consistency_check_and_names_the_wait_it_leaves_unexplained():
    """Review 2026-12-04m items 3 and 4: the wait is the plateau runs' own, so batch / (step +
    wait) is a consistency check, and the wait itself (8 workers decoding 1.6x what the step
    takes) is not explained; pin_memory's untested arithmetic is no takeaway."""
    from labkit.chapters.ch05_dataloader import loader_sweep

    plateau = loader_sweep.Plateau(64, (8, 12), 1192.0, 0.0413, 0.028, 0.0083, 0.69, swept_step_s=0.0454,
                                   loaded_workers=8, loaded_step_s=0.0455, on_gpu=True, copy_alone_s=0.0040,
                                   wait_share=0.16, workers_needed=4.9)
    line = lesson.as_sentences(lesson.plateau_takeaway(plateau, None))
    assert line == ("The plateau, 1192 samples/s, is consistent with batch / (the step beside 8 decoding "
                    "worker(s) + its runs' own wait) = 1190 (1.00x); the 8.3 ms wait a batch (16%) is not "
                    "explained, and is bound by the host's side.")
    assert "8 workers decode 1.6x the batches the step takes" in plateau.explanation()
    assert "A consistency check (the wait is these runs' own)" in plateau.explanation()
    starved = replace(plateau, workers_needed=7.5)  # the workers barely keep up: the wait is theirs
    assert starved.wait_text() == "" and "not explained" not in lesson.plateau_takeaway(starved, None)


def test_an_increment_is_shown_beside_its_call_and_flagged_within_the_table_s_resolution():
    """Issue 39: a ladder step's increment over the step before is shown, never called; where
    its geometric mean lies inside the A/A's half-width (the 13:47 reproduce's run 2: 1.08x
    against +/-16%) the page says it is within the table's resolution."""
    from labkit.chapters.ch05_dataloader import knee_experiment

    base = {"label": "w8 b64", "decision": "baseline"}
    aa = {"label": "w8 b64 (A/A)", "against": "w8 b64", **knee_experiment.call([0.85, 1.15, 1.0, 0.9, 1.1, 1.0])}
    pin = {"label": "w8 b64 pin", "against": "w8 b64", **knee_experiment.call([1.2, 1.25, 1.15, 1.2])}

    def top(step):
        return {"label": "w8 b64 pin devprefetch uint8", "against": "w8 b64",
                **knee_experiment.call([1.3, 1.35, 1.4, 1.32]),
                "increment": knee_experiment.shown_only({**knee_experiment.call(step), "over": "w8 b64 pin"})}

    half = lesson.resolution([base, aa])
    near, far = top([1.0, 1.2, 0.95, 1.15]), top([1.2, 1.25, 1.22, 1.21])
    assert 1 < near["increment"]["ratio"] < half < far["increment"]["ratio"]
    said = lesson.call_cell(near, [base, aa, pin, near])
    assert said.startswith("1.34x [") and ": a gain; over + pin: " in said
    assert said.endswith(", shown, not called, within the table's resolution")
    assert lesson.call_cell(far, [base, aa, pin, far]).endswith(", shown, not called")
    assert lesson.increment_text(pin, [base, aa, pin]) == "" and lesson.call_cell(pin, [base, pin]) == lesson.against_text(pin)


def test_the_cpu_page_says_the_range_of_its_step_timings_and_folds_the_reproduce_upkeep():
    """Review 2026-12-05q browser 05-07 item 8: eight figures of one step (7.1-12.1 ms), fresh
    batches faster than the private one, and a 'Reproduce: ... re-read by a rule set' line of
    upkeep in the plateau's text. One computed line says the range and whether fresh batches
    were slower; the reproduce scope stays one click away, in a fold."""
    from types import SimpleNamespace

    run = lesson.Lesson(FakeGpuChapter(on_gpu=False))
    run.bench = SimpleNamespace(step_as_swept=SimpleNamespace(median_s=0.0084),
                                private_step=SimpleNamespace(median_s=0.0104))
    run.plateau = SimpleNamespace(loaded_alone_s=0.0092, loaded_step_s=0.0081, swept_step_s=0.0113,
                                  drift=(0.0071, 0.0084))
    run.sweep_workers = SimpleNamespace(rows=lambda: [{"compute_median_s": 0.0099}, {"compute_median_s": 0.0121}])
    assert run.step_spread() == (f"On this CPU's {run.plan.cores} cores this step measured 7.1-12.1 ms across the "
                                 "timings above; fresh batches were not slower here.")
    run.bench.step_as_swept.median_s = 0.0110
    assert run.step_spread().endswith("; fresh batches were slower here.")
    assert lesson.Lesson(FakeGpuChapter(on_gpu=True)).step_spread() == ""
    shown = lesson.FoldedLines(["the plateau"], [("the reference's reproduce runs", "Reproduce: 3 runs")])
    assert str(shown) == "the plateau\n(1 folded: the reference's reproduce runs)"
    assert "<details><summary>the reference&#x27;s reproduce runs</summary>" in shown._repr_html_()
