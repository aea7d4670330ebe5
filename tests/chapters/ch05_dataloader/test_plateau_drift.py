"""Review 2026-12-04k items 1 and 2 (chapter 05's plateau): a step timed during a transient
predicts nothing (it is not 'not predicted'), it is timed again after a settle once, it runs
before the knee's profile; the bound's idle share is read from the unprofiled step."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from labkit.chapters.ch05_dataloader import (
    fresh_step,
    knee_experiment,
    lesson,
    loader_sweep,
    reproduce,
)
from labkit.measure.device_time import HOST_BOUND_IDLE_SHARE

ROOT = Path(__file__).resolve().parents[3]

# The H200 record of 2026-12-04 13:51 (results/nvidia-h200.json, 05's plateau): 44 of 50 steps
# beside the decoders at 58-71 ms, then six at 34.7-38.5 ms; alone 54-85 ms but for 40.8 and
# 41.2 ms near the end; one private batch again 32.1 ms earlier in the same run.
BESIDE_MS = [36.7, 62.0, 63.2, 64.0, 70.9, 64.1, 59.6, 60.6, 61.1, 64.7, 63.9, 63.1, 61.7, 61.2, 59.9,
             61.6, 60.5, 63.9, 59.7, 61.9, 58.9, 60.4, 61.1, 63.2, 59.8, 59.6, 59.3, 60.5, 61.2, 65.4,
             59.3, 58.7, 58.4, 64.3, 64.6, 61.4, 62.6, 60.3, 61.5, 60.0, 59.6, 66.4, 66.0, 65.1, 34.7,
             35.2, 37.9, 38.5, 37.9, 37.8]
ALONE_MS = [85.0, 63.4, 61.1, 61.7, 59.3, 60.1, 56.0, 67.7, 62.7, 59.3, 58.0, 58.2, 57.5, 57.9, 57.3,
            59.9, 59.9, 56.4, 56.9, 57.7, 57.2, 60.3, 54.7, 60.9, 58.5, 58.4, 61.0, 57.9, 59.6, 58.5,
            57.5, 58.4, 61.1, 60.6, 58.6, 59.5, 59.0, 64.3, 58.6, 62.8, 67.1, 65.8, 63.9, 64.9, 65.2,
            40.8, 41.2, 67.0, 101.8, 65.7]


def _h200(**changes) -> loader_sweep.Plateau:
    """The 13:51 record's plateau in its own numbers (the profile's 62% idle, 22.9 ms busy)."""
    values = dict(swept_step_s=0.0411, copy_alone_s=0.0064, on_gpu=True, private_step_s=0.0321,
                  wait_share=0.15, loaded_workers=8, loaded_step_s=0.0611, loaded_cpu_s=0.0484,
                  loaded_alone_s=0.0595, loaded_alone_cpu_s=0.0474, cores=16, loaded_rounds=5,
                  loaded_times_s=tuple(t / 1e3 for t in BESIDE_MS),
                  loaded_alone_times_s=tuple(t / 1e3 for t in ALONE_MS),
                  loaded_slowdown=0.92, loaded_slowdown_low=0.67, loaded_slowdown_high=1.27,
                  kernels_per_step=893.0, gpu_busy_step_s=0.0229)
    values.update(changes)
    return loader_sweep.Plateau(64, (8, 12), 1272.0, 0.0377, 0.0243, 0.0077, 0.62, **values)


def _steady(ms: float, n: int = 50) -> tuple[float, ...]:
    """n steps about `ms` (within 2%), no drift."""
    return tuple((ms + (i % 5 - 2) * ms * 0.005) / 1e3 for i in range(n))


def test_the_13_51_record_without_a_retimed_private_step_is_read_without_the_old_veto():
    """The recorded numbers: each arm's halves of rounds agree (the six fast steps sit in the
    last block); the step alone (59.5 ms) against the private step of prepare() (32.1 ms) is
    two conditions, not one timing twice (review 2026-12-04l item 1), so it no longer vetoes:
    the record, which re-timed no private step, predicts and misses, and the gap is printed."""
    plateau = _h200()
    assert plateau.drift is None and plateau.private_gap == pytest.approx(0.0595 / 0.0321)
    text = plateau.explanation()
    assert "Alone here: 1.85x the private step timed before any worker ran (32.1 ms): another condition" in text
    assert "A consistency check" in text and "This run misses" in text


def test_rounds_whose_halves_disagree_drift_and_say_why_in_numbers():
    """A transient over the first rounds: both arms at ~60 ms, then ~37 ms, the private step
    37 ms: an arm disagrees with itself, like with like."""
    beside = [60.0 + i % 3 for i in range(20)] + [37.0 + i % 3 for i in range(30)]
    alone = [59.0 + i % 3 for i in range(20)] + [36.5 + i % 3 for i in range(30)]
    plateau = _h200(loaded_times_s=tuple(t / 1e3 for t in beside), loaded_alone_times_s=tuple(t / 1e3 for t in alone),
                    loaded_step_s=0.038, loaded_alone_s=0.0375, private_step_s=0.037)
    assert plateau.drift == pytest.approx((0.0610, 0.0380))
    text = plateau.explanation()
    assert ("the step beside 8 decoding worker(s) drifted within its own rounds: 61.0 ms over its first 2 "
            "rounds, 38.0 ms over its last 2 (0.62x, past the 15% band): no prediction from it") in text.lower()
    assert "A consistency check" not in text and not plateau.predicted_this_run
    takeaway = lesson.plateau_takeaway(plateau)
    assert "no check this run (its step drifted, above)" in takeaway and "not predicted" not in takeaway
    # review 2026-12-04n item 5: the hand-over, timed in prepare() apart from the drifting step,
    # still shows; only the prediction from the step is withheld
    handed = dataclasses.replace(plateau, handover_s=0.0004, handover_restart_s=0.0002)
    text = handed.explanation()
    assert ". The hand-over of a queued batch, timed apart beside every worker decoding: 0.4 ms (0.2 as they restart)" in text
    assert "predicted (measured" not in text and "A consistency check" not in text


def test_steady_rounds_that_agree_with_the_private_step_predict_as_before():
    steady = _h200(loaded_times_s=_steady(33.0), loaded_alone_times_s=_steady(32.5),
                   loaded_step_s=0.0330, loaded_alone_s=0.0325)
    assert steady.drift is None
    assert "A consistency check (the wait is these runs' own): 64 / (33.0 + 7.7 ms) = 1572" in steady.explanation()
    assert "drifted" not in steady.explanation() and "two conditions" not in steady.explanation()


def test_a_steady_gap_to_the_private_step_is_a_finding_and_a_real_drift_of_it_vetoes():
    """Review 2026-12-04l item 1, the 16:01 H200 page: alone 44.3 ms, beside 46.8 ms, steady
    rounds, the private step of prepare() 35.5 ms (1.25x): the old guard vetoed a prediction
    that held (64 / (46.8 + 7.7) = 1,175 against 1,335, 1.14x). Like with like: the private
    step timed before the rounds (35.8 ms) and after them (36.2 ms) agree, so it predicts; where
    it took 58 ms after them the machine changed during the rounds, and the veto says so in
    numbers. prepare()'s private step is no part of the check."""
    page = _h200(loaded_times_s=_steady(46.8), loaded_alone_times_s=_steady(44.3), loaded_step_s=0.0468,
                 loaded_alone_s=0.0443, private_step_s=0.0355, private_again_s=0.0358, private_after_s=0.0362)
    page = dataclasses.replace(page, measured=1335.0, wait_s=0.0077)
    assert page.drift is None and page.agrees and page.predicted_this_run
    assert "1.25x the private step" in page.explanation() and "A consistency check (the wait is these runs' own): 64 / (46.8 + 7.7 ms) = 1174" in page.explanation()
    # review 2026-12-04m item 3: the private pair vetoes only where the direct check fails
    # too (the step beside, 46.8 ms, against the step inside the sweep: here 38.0 ms, 1.23x);
    # where that check holds (41.1 ms, 1.14x) the moved private step is a note, not a veto
    noted = dataclasses.replace(page, private_after_s=0.058)
    assert noted.direct_holds and noted.drift is None and noted.predicted_this_run
    assert ("(The private step moved, 35.8 then 58.0 ms, but the step beside agrees with the step "
            "inside the sweep, 46.8 against 41.1 ms: no veto.)" in noted.explanation())
    changed = dataclasses.replace(page, private_after_s=0.058, swept_step_s=0.0380)
    assert not changed.direct_holds and changed.private_note() == ""
    assert changed.drift == pytest.approx((0.0358, 0.058)) and not changed.predicted_this_run
    assert ("the private step took 35.8 ms before these rounds and 58.0 ms after (1.62x, past the 15% "
            "band): the machine changed during them") in changed.explanation().lower()
    assert dataclasses.replace(page, private_after_s=0.0358 * 1.14).drift is None  # inside the band
    # prepare()'s private step far off (the loaded CPU's 2.7x) vetoes nothing: another condition
    assert dataclasses.replace(page, private_step_s=0.0955).drift is None


def test_the_recorded_h200_plateau_is_read_by_today_s_rule(tmp_path):
    """Plateau.from_record keeps the 13:51 record readable: the CPU page's reference line no
    longer quotes 931 (1.37x) from the drifted step, and reproduce compares no plateau call."""
    record = json.loads((ROOT / "results" / "nvidia-h200.json").read_text())
    payload = record["chapters"]["05_dataloader"]["plateau"]["payload"]
    if [round(t * 1e3, 1) for t in payload.get("loaded_times_s") or []] != BESIDE_MS:
        pytest.skip("the live record moved on from 2026-12-04 13:51")
    line = lesson.recorded_plateau(payload)
    assert "drifted (32 ms, then 60 ms): no prediction from it" in line and "1.37x" not in line
    assert "GPU idle 39% of the unprofiled step (busy 22.9 of 37.7 ms; 62% under the profiler)" in line
    checked = reproduce.plateau_now({"plateau": payload})
    assert checked["agrees"] is None and checked["drift"]


def _loaded(beside_ms: list[float], alone_ms: list[float]) -> fresh_step.LoadedStep:
    return fresh_step.LoadedStep(8, tuple(t / 1e3 for t in alone_ms), tuple(t / 2e3 for t in alone_ms),
                                 tuple(t / 1e3 for t in beside_ms), tuple(t / 2e3 for t in beside_ms), 5)


def _fakes(monkeypatch, timings: list[fresh_step.LoadedStep], calls: list[str]):
    """knee_experiment.plateau on fakes: the sweep's plateau as the H200's, each timing of the
    step from `timings` in turn; settle and the profile recorded in `calls`."""
    base = _h200(loaded_workers=None, loaded_step_s=None, loaded_cpu_s=None, loaded_alone_s=None,
                 loaded_alone_cpu_s=None, loaded_times_s=(), loaded_alone_times_s=(), loaded_rounds=None,
                 loaded_slowdown=None, loaded_slowdown_low=None, loaded_slowdown_high=None,
                 kernels_per_step=None, gpu_busy_step_s=None)
    base = dataclasses.replace(base, gpu_idle_share=None)
    monkeypatch.setattr(knee_experiment.loader_sweep, "plateau_of", lambda *a, **k: base)

    def timed(*args, **kwargs):
        calls.append("step")
        return timings.pop(0)

    monkeypatch.setattr(knee_experiment.fresh_step, "ready_beside_decoders", timed)
    monkeypatch.setattr(knee_experiment, "settle", lambda bench, seconds: calls.append("settle"))
    monkeypatch.setattr(knee_experiment, "knee_profile", lambda bench, found: (
        calls.append("profile"), {"gpu_idle_share": 0.62, "launch_gap_us": 47.0, "kernels_per_step": 893.0,
                                  "gpu_busy_step_s": 0.0229})[1])
    bench = SimpleNamespace(copy_alone=None, step_as_swept=None, private_step=None, step_s=0.0377,
                            compute=SimpleNamespace(median_s=0.0243, iqr_s=0.002),
                            step=SimpleNamespace(device=SimpleNamespace(type="cuda")),
                            plan=SimpleNamespace(cores=16, batch_size=64), ready=["a batch"], data=None,
                            batch_load_s=0.168)
    found = SimpleNamespace(sweep=None, knee=SimpleNamespace(workers_needed=4.5))
    return bench, found


DRIFT_BESIDE = [60.0 + i % 3 for i in range(20)] + [37.0 + i % 3 for i in range(30)]
DRIFT_ALONE = [59.0 + i % 3 for i in range(20)] + [36.5 + i % 3 for i in range(30)]


def test_a_drifted_step_is_timed_again_after_a_settle_and_kept_when_it_agrees(monkeypatch):
    calls: list[str] = []
    steady = _loaded([33.0] * 50, [32.5] * 50)
    bench, found = _fakes(monkeypatch, [_loaded(DRIFT_BESIDE, DRIFT_ALONE), steady], calls)
    plateau = knee_experiment.plateau(bench, found)
    assert calls == ["step", "settle", "step"]
    assert plateau.drift is None and plateau.loaded_step_s == pytest.approx(0.033)
    assert plateau.loaded_first_drift == pytest.approx((0.0610, 0.0380), abs=1e-4)
    assert "The first timing drifted, 61 ms then 38 ms" in plateau.explanation()
    assert "A consistency check" in plateau.explanation()


def test_a_step_that_still_drifts_after_the_settle_predicts_nothing(monkeypatch):
    calls: list[str] = []
    bench, found = _fakes(monkeypatch, [_loaded(DRIFT_BESIDE, DRIFT_ALONE), _loaded(DRIFT_BESIDE, DRIFT_ALONE)], calls)
    plateau = knee_experiment.plateau(bench, found)
    assert calls == ["step", "settle", "step"]  # once, not until it agrees
    assert ("drifted within its own rounds, timed again after a settle: 61.0 ms over its first 2 rounds"
            in plateau.explanation())


def test_a_steady_step_is_timed_once_and_before_the_knee_s_profile(monkeypatch):
    calls: list[str] = []
    bench, found = _fakes(monkeypatch, [_loaded([33.0] * 50, [32.5] * 50)], calls)
    plateau = knee_experiment.profiled_plateau(bench, found)
    assert calls == ["step", "profile"]  # the step no longer runs in the profile's wake
    assert plateau.gpu_busy_step_s == 0.0229 and plateau.loaded_first_drift is None


def test_the_bound_s_idle_share_is_the_unprofiled_step_s_with_the_profiler_s_beside_it():
    """Cell 13 printed 'the GPU idles 62% of the profiled steps (47 us between launches)': 893
    gaps of 47 us are 42 ms, more than the 37.7 ms step. GPU busy 22.9 of 37.7 ms is 39% idle."""
    # read against the plateau's own step inside the sweep, 41.1 ms (review 2026-12-06z 05-07
    # item 3; the 13:51 record's step apart was 37.7 ms: 39%)
    plateau = _h200()
    assert plateau.idle_share == pytest.approx(1 - 22.9 / 41.1)
    assert plateau.host_bound  # 44% > HOST_BOUND_IDLE_SHARE, chapter 08's 30%
    assert plateau.bound.startswith("the host's side: the GPU idles 44% of the plateau's unprofiled step (busy "
                                    "22.9 of 41.1 ms; 62% under the profiler); 893 kernels a step")
    assert "between launches" not in plateau.bound
    # busier than the threshold allows idle: the GPU's compute, whatever the profiler said
    busy = _h200(gpu_busy_step_s=0.0411 * (1 - HOST_BOUND_IDLE_SHARE) + 0.001)
    assert not busy.host_bound and busy.bound.startswith("the GPU's compute: it is busy 72% of the plateau's unprofiled step")
    # a record without the busy time keeps the profiled share, labelled as the profiled steps'
    old = _h200(gpu_busy_step_s=None)
    assert old.idle_share == 0.62 and "62% of the profiled steps" in old.bound


def test_a_reproduce_record_that_keeps_the_rounds_says_which_arm_drifted():
    """Session z: the H200 reproduce of 2026-12-06 vetoed two runs' plateau for a drift
    (26.5 then 32.7 ms) that its record could not place, because the reproduce record kept the
    drift but not the step's rounds. With the rounds kept, the summary names the arm, its
    halves and that the rounds were timed again after a settle."""
    beside = tuple(t / 1e3 for t in [27.0] * 25 + [33.0] * 25)
    plateau = _h200(loaded_times_s=beside, loaded_alone_times_s=_steady(30.0),
                    loaded_first_drift=(0.034, 0.040))
    record = dict(plateau.as_dict())
    assert record["drift"] is not None
    said = reproduce._plateau_band(record)
    assert said.startswith("the step beside 8 decoding worker(s) drifted within its own rounds, timed "
                           "again after a settle: 27.0 ms over its first 2 rounds, 33.0 ms over its last 2")
    # a record from before (the drift, no rounds): the numbers only, as before
    slim = {k: v for k, v in record.items() if k not in ("loaded_times_s", "loaded_alone_times_s")}
    assert reproduce._plateau_band(slim) == "the step drifted (27 ms, then 33 ms): no prediction"


def numbers_kept(plateau: dict, monkeypatch) -> dict:
    """The plateau keys reproduce.measure_numbers records of a run whose knee measured `plateau`
    (measure_knee stubbed with only the keys measure_numbers reads)."""
    knee = {k: None for k in ("worker_counts", "measured_counts", "knee_workers", "arithmetic_workers",
                              "agrees", "workers_needed", "sample_cost_s", "compute_s", "batch_load_s",
                              "noise", "rounds", "budget_s", "budget_note", "phases", "plan")}
    knee.update(plateau=plateau, rows=[], knee={"explanation": ""})
    monkeypatch.setattr(reproduce, "measure_knee", lambda *a, **k: knee)
    return reproduce.measure_numbers(quick=True, knobs=False)["plateau"]


def test_the_reproduce_record_keeps_the_step_rounds(monkeypatch):
    """What measure_numbers copies from a run's plateau includes the rounds the drift is read from."""
    plateau = _h200(loaded_first_drift=(0.034, 0.040)).as_dict()
    kept = numbers_kept(plateau, monkeypatch)
    for key in ("loaded_times_s", "loaded_alone_times_s", "loaded_rounds", "loaded_first_drift"):
        assert kept[key] == plateau[key], key


def test_the_gpu_idle_share_is_read_against_the_plateaus_own_step():
    """Review 2026-12-06z 05-07 item 3: the H200 page read 'the GPU's compute: busy 76% of the
    unprofiled step' from 1 - 22.7 / 30.0 ms, the step timed apart with 4 workers, while the
    plateau's own steps took 36.3 ms inside the sweep: 37% idle, the host's side."""
    plateau = dataclasses.replace(_h200(swept_step_s=0.0363, gpu_busy_step_s=0.0227), step_s=0.030)
    assert plateau.idle_step_s == 0.0363
    assert plateau.idle_share == pytest.approx(1 - 0.0227 / 0.0363)
    assert plateau.host_bound and plateau.bound.startswith("the host's side")
    assert "of the plateau's unprofiled step (busy 22.7 of 36.3 ms" in plateau.idle_text()
    # without the sweep's step, the step timed apart, as before
    apart = dataclasses.replace(_h200(swept_step_s=None, gpu_busy_step_s=0.0227), step_s=0.030)
    assert apart.idle_share == pytest.approx(1 - 0.0227 / 0.030)
    assert "of the unprofiled step (busy 22.7 of 30.0 ms" in apart.idle_text()


def test_short_cores_bound_the_plateau_before_its_wait_share_does():
    """Review 2026-12-06z 05-07 item 7: on the 2-core CPU page the bound flipped between 'the
    loader' (waiting 51%) and 'the cores' (45%) while the arithmetic asked for more workers than
    the one spare core in both runs: the cause is named first, the wait as its symptom."""
    short = _h200(on_gpu=False, cores=2, workers_needed=2.2, wait_share=0.51)
    assert short.cores_short
    assert short.bound.startswith("the cores (the decode): the arithmetic asks for 2.2 workers, 1 core(s) are spare")
    assert short.bound.endswith("; the step waits 51% of the time for data")
    assert _h200(on_gpu=False, cores=2, workers_needed=2.2, wait_share=0.45).bound.startswith("the cores (the decode)")
    # enough cores: a wait over half the time is the loader's, as before
    assert _h200(on_gpu=False, cores=16, workers_needed=2.2, wait_share=0.51).bound.startswith("the loader")
