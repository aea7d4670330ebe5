"""Review 2026-12-04m item 3 (chapter 05's plateau): the hand-over of a queued batch timed apart
from the sweep, the plateau predicted from two timings apart (the step beside the decoders +
the hand-over), and the private step before and after the rounds a note, not a veto, where
the direct check of the step holds."""

from __future__ import annotations

import dataclasses
import time

import pytest
import torch

from labkit.chapters.ch05_dataloader import fresh_step, knee_experiment, loader_sweep, reproduce


class SlowSamples(torch.utils.data.Dataset):
    """Samples that take `sample_s` each to make (a decode), then cost nothing to hand over."""

    def __init__(self, length: int, sample_s: float) -> None:
        self.length, self.sample_s = length, sample_s

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        time.sleep(self.sample_s)
        return torch.zeros(3, 8, 8), 0


def quick_step(batch, non_blocking: bool = False) -> float:
    return float(batch[0].shape[0])


def test_the_hand_over_is_timed_on_queued_batches_not_on_the_decode():
    """A batch takes 4 x 15 ms = 60 ms to decode and the step nothing, so the steps drain the
    queue; each round waits until every batch in flight (2 workers x prefetch 2) is queued, and
    each next() takes a small part of one decode. Without the wait the first next() waits for a
    decode: the wait is what makes it the hand-over alone (review 2026-12-04n items 2, 3: the
    two conditions labelled apart, at least HANDOVER_MIN beside every worker decoding)."""
    data = SlowSamples(4 * 40, 0.015)
    handed = fresh_step.on_fresh_batches(data, quick_step, workers=2, batch_size=4, steps=4,
                                         handover_after_s=knee_experiment.handover_settle_s(4, 0.015),
                                         decode_s=4 * 0.015)
    # each round: the first 2 next() calls as the workers restart (0, then 1 decoding), 2 beside both
    assert handed.handover_decoding == (0, 1, 2, 2) * 2 and handed.handover_workers == 2, handed
    assert handed.handover_dropped == 0 and len(handed.handover_waits_s) == 2
    assert handed.handover_median_s < 0.5 * 4 * 0.015, handed.handover_s
    assert handed.as_dict()["handover_median_s"] == handed.handover_median_s
    assert handed.as_dict()["handover_restart_median_s"] == handed.handover_restart_median_s
    rushed = fresh_step.on_fresh_batches(data, quick_step, workers=2, batch_size=4, steps=4,
                                         handover_after_s=0.0, wait_full=False)
    assert max(rushed.handover_s) > 0.5 * 4 * 0.015, rushed.handover_s  # waited for a decode
    plain = fresh_step.on_fresh_batches(data, quick_step, workers=2, batch_size=4, steps=4)
    assert plain.handover_s == () and plain.handover_median_s is None
    assert knee_experiment.handover_settle_s(64, 0.00324) == pytest.approx(fresh_step.HANDOVER_WAVES * 64 * 0.00324)


def test_one_worker_still_gives_the_minimum_of_timings_and_a_decode_is_dropped():
    """The 2-core CPU page's one worker: prefetch 2 queues two batches a round, one beside the
    decoding worker, so the rounds repeat until HANDOVER_MIN of those (the median of 2 was
    their mean: review 2026-12-04n item 3). Rushed (no wait), a next() that waits for a decode
    is dropped and counted, not timed as a hand-over."""
    data = SlowSamples(4 * 60, 0.01)
    one = fresh_step.on_fresh_batches(data, quick_step, workers=1, batch_size=4, steps=2,
                                      handover_after_s=0.12, decode_s=0.04)
    assert one.handover_decoding.count(1) == fresh_step.HANDOVER_MIN
    assert one.handover_decoding.count(0) == fresh_step.HANDOVER_MIN and one.handover_dropped == 0
    rushed = fresh_step.on_fresh_batches(data, quick_step, workers=1, batch_size=4, steps=2,
                                         handover_after_s=0.0, decode_s=0.04, wait_full=False)
    assert rushed.handover_dropped >= 1 and all(t <= 0.01 for t in rushed.handover_s), rushed


def test_the_median_used_is_the_one_beside_every_worker_decoding():
    times = fresh_step.StepTimes("t", (0.01,), (), 64, (0.0001, 0.0002, 0.003, 0.005),
                                 (0, 1, 2, 2), 2)
    assert times.handover_median_s == pytest.approx(0.004)
    assert times.handover_restart_median_s == pytest.approx(0.00015)
    old = fresh_step.StepTimes("t", (0.01,), (), 64, (0.0001, 0.0002, 0.003))  # a record from before
    assert old.handover_median_s == pytest.approx(0.0002) and old.handover_restart_median_s is None


def _plateau(**changes) -> loader_sweep.Plateau:
    """The 19:13 H200 reproduce's run 1 in its own numbers: 1,215 samples/s at 8, 12 workers, the
    step beside 8 decoders 44.1 ms, inside the sweep 44.0 ms, the wait 8.5 ms (16%); the private
    step 46.1 ms before the rounds and 37.6 ms after."""
    values = dict(swept_step_s=0.0440, on_gpu=True, private_step_s=0.0348, wait_share=0.16, loaded_workers=8,
                  loaded_step_s=0.04413, loaded_cpu_s=0.0279, loaded_alone_s=0.0421, loaded_alone_cpu_s=0.0265,
                  cores=16, workers_needed=5.7, private_again_s=0.04613, private_after_s=0.03762)
    values.update(changes)
    return loader_sweep.Plateau(64, (8, 12), 1215.15, 0.03635, 0.0243, 0.0085, 0.60, **values)


def test_the_plateau_is_predicted_from_the_step_beside_and_the_hand_over():
    without = _plateau()
    assert without.predicted_handover is None and without.handover_text() == ""
    assert ". Not explained: the 8.5 ms wait a batch (16%), while 8 workers decode 1.4x" in without.explanation()
    page = _plateau(handover_s=0.0006)
    assert page.predicted_handover == pytest.approx(64 / (0.04413 + 0.0006))
    text = page.explanation()
    assert (". The hand-over of a queued batch, timed apart beside every worker decoding: 0.6 ms; "
            "64 / (44.1 + 0.6 ms) = 1431 "
            "predicted (measured 0.85x: outside the 15% band); 7.9 ms of the wait not explained, 8 workers decoding "
            "1.4x the step's batches") in text
    # the consistency check stays what it was, and stays the reproduce check's
    assert "A consistency check (the wait is these runs' own): 64 / (44.1 + 8.5 ms)" in text
    assert page.agrees and page.as_dict()["predicted_handover"] == pytest.approx(page.predicted_handover)
    assert loader_sweep.Plateau.from_record(page.as_dict()).handover_s == 0.0006


def test_a_moved_private_step_is_a_note_where_the_direct_check_holds():
    """Run 1 of the 19:13 H200 reproduce: vetoed ('the step drifted (46 ms, then 38 ms)') at
    1.00x while the step beside (44.1 ms) agreed with the step inside the sweep (44.0 ms)."""
    run1 = _plateau()
    assert run1.direct_holds and run1.drift is None and run1.predicted_this_run
    assert "46.1 then 37.6 ms, but the step beside agrees with the step inside the sweep" in run1.explanation()
    off = dataclasses.replace(run1, swept_step_s=0.0360)  # beside 1.23x inside: the direct check fails
    assert not off.direct_holds and off.drift == pytest.approx((0.04613, 0.03762))
    # the record as reproduce kept it (its recorded 'drift' is the private pair): re-judged, it holds
    record = {"plateau": {"measured": 1215.15, "predicted": 1216.05, "batch_size": 64, "wait_s": 0.0085,
                          "loaded_step_s": 0.04413, "swept_step_s": 0.0440, "loaded_workers": 8,
                          "loaded_alone_s": 0.0421, "private_again_s": 0.04613, "private_after_s": 0.03762,
                          "drift": [0.04613, 0.03762], "tolerance": 0.15}, "private_step_s": 0.0348}
    assert reproduce.plateau_now(record)["agrees"] is True
    record["plateau"]["swept_step_s"] = 0.0360
    assert reproduce.plateau_now(record)["agrees"] is None  # the direct check failed: still vetoed


def test_the_takeaway_and_the_recorded_line_give_the_prediction_from_the_hand_over(monkeypatch):
    from labkit.chapters.ch05_dataloader import lesson

    page = _plateau(handover_s=0.0006)
    line = lesson.plateau_takeaway(page)
    assert "is consistent with batch / (the step beside 8 decoding worker(s) + its runs' own wait)" in line
    assert ("; the step + the hand-over timed apart predict 1431 (0.85x: outside the 15% band),"
            in line and "not explained" not in line)
    # without the hand-over, the wait the workers' supply leaves is said not explained, as before
    assert "is not explained," in lesson.plateau_takeaway(_plateau())
    monkeypatch.setattr(lesson, "_ref", lambda: "nvidia-h200")
    recorded = lesson.recorded_plateau(page.as_dict())
    assert "the step + the hand-over (0.6 ms), timed apart, predict 1431 (0.85x: outside the 15% band)" in recorded
    assert "not explained" not in recorded and "not explained" in lesson.recorded_plateau(_plateau().as_dict())


def test_the_hand_over_line_labels_both_conditions():
    """Review 2026-12-04n item 2: the prediction's hand-over is the one beside every worker
    decoding; the restart's median and the dropped calls are printed beside it."""
    page = _plateau(handover_s=0.0006, handover_restart_s=0.0002, handover_dropped=1)
    assert ("timed apart beside every worker decoding: 0.6 ms (0.2 as they restart; 1 dropped as a "
            "decode); 64 / (44.1 + 0.6 ms)") in page.handover_text()
    again = loader_sweep.Plateau.from_record(page.as_dict())
    assert again.handover_restart_s == 0.0002 and again.handover_dropped == 1


def test_a_round_seen_full_drops_no_hand_over_however_slow():
    """A queue seen full holds every batch the round times, so no next() there waits for a
    decode: none is dropped, even against a decode far shorter than any hand-over (the CPU
    page's loaded run dropped 15 of 16 queued hand-overs, a median of the fast ones)."""
    data = SlowSamples(4 * 60, 0.01)
    full = fresh_step.on_fresh_batches(data, quick_step, workers=1, batch_size=4, steps=2,
                                       handover_after_s=0.12, decode_s=1e-9)
    assert full.handover_dropped == 0 and len(full.handover_s) == 2 * fresh_step.HANDOVER_MIN


def test_the_hand_over_s_two_conditions_reach_the_reproduce_record(monkeypatch):
    """Review 2026-12-05o 05-07 item 6: measure_numbers kept handover_s but not the restart's
    median nor the dropped count, so summarise_numbers' '(... as they restart)' never printed
    for a real run. Through measure_numbers' own dict shape now."""
    page = _plateau(handover_s=0.0006, handover_restart_s=0.0002, handover_dropped=1)
    knee = {key: None for key in ("worker_counts", "measured_counts", "knee_workers", "arithmetic_workers",
                                  "agrees", "workers_needed", "sample_cost_s", "compute_s", "batch_load_s",
                                  "noise", "rounds", "budget_s", "budget_note", "phases", "plan")}
    knee.update(worker_counts=[0, 4, 8, 12], knee_workers=8, arithmetic_workers=8, agrees=True,
                workers_needed=5.7, sample_cost_s=0.0036, compute_s=0.036, batch_load_s=0.23,
                plan={"batch_size": 64, "device": "cuda"}, plateau=page.as_dict(),
                rows=[{"num_workers": 8, "samples_per_s": 1215.0, "wait_share": 0.16}],
                knee={"explanation": "the knee"})
    monkeypatch.setattr(reproduce, "measure_knee", lambda quick, knobs=False: knee)
    run = reproduce.measure_numbers(quick=True, knobs=False)
    assert run["plateau"]["handover_restart_s"] == 0.0002 and run["plateau"]["handover_dropped"] == 1
    assert run["sources"] == reproduce.sources_fingerprint()  # review 2026-12-05o item 5
    lines = reproduce.summarise_numbers([run], reference=None)["lines"]
    assert any("0.6 ms (0.2 as they restart; 1 dropped as a decode)" in line for line in lines), lines


def test_the_hand_over_names_the_workers_it_was_timed_beside():
    """Review 2026-12-05o 05-07 item 3: prepare()'s loader has at most fresh_step.FRESH_WORKERS
    (4) where the H200's plateau ran 8; the page said 'beside every worker decoding'. The count
    is stored, printed beside the plateau's, and reaches reproduce's record and line."""
    page = _plateau(handover_s=0.0006, handover_workers=4)
    assert ("timed apart beside its 4 decoding worker(s) (the plateau's: 8): 0.6 ms; "
            "64 / (44.1 + 0.6 ms)") in page.handover_text()
    assert "beside its 8 decoding worker(s): 0.6 ms" in _plateau(handover_s=0.0006, handover_workers=8).handover_text()
    assert loader_sweep.Plateau.from_record(page.as_dict()).handover_workers == 4
    # prepare()'s fresh loader records the count it ran (the real path, on the CPU)
    data = SlowSamples(4 * 40, 0.005)
    handed = fresh_step.on_fresh_batches(data, quick_step, workers=2, batch_size=4, steps=2,
                                         handover_after_s=0.06, decode_s=0.02)
    assert handed.handover_workers == 2
    run = {"plateau": {**{k: page.as_dict()[k] for k in ("measured", "predicted", "batch_size", "wait_s",
                                                          "loaded_step_s", "loaded_workers", "tolerance",
                                                          "handover_s", "predicted_handover",
                                                          "handover_workers", "bound")}},
           "worker_counts": [0, 4, 8, 12], "knee_workers": 8, "arithmetic_workers": 8, "agrees": True,
           "batch_load_s": 0.23, "compute_s": 0.036, "workers_needed": 5.7, "samples_per_s": {"8": 1215.0}}
    lines = reproduce.summarise_numbers([run], reference=None)["lines"]
    assert any("the hand-over of a queued batch beside its 4 decoding worker(s) (the plateau's: 8) 0.6 ms"
               in line and "(0.85x of the measured: outside the 15% band)" in line for line in lines), lines


def test_where_the_decode_bounds_the_plateau_the_hand_over_predicts_nothing():
    """Review 2026-12-05o 05-07 item 4: the CPU page printed '16 / (8.7 + 1.5 ms) = 1565
    predicted (measured 0.82x)' with no band beside 'bound by the cores': the arithmetic asks
    for 1.3 workers and 1 decodes, so the workers do not out-supply the step and step +
    hand-over models a plateau this is not. There the timing shows, without the prediction, in
    the cell, the takeaway and the recorded line."""
    from labkit.chapters.ch05_dataloader import lesson

    cpu = loader_sweep.Plateau(16, (1, 2), 1283.0, 0.0087, 0.0080, 0.0038, 0.20, loaded_workers=1,
                               loaded_step_s=0.0087, loaded_cpu_s=0.0085, loaded_alone_s=0.0086,
                               loaded_alone_cpu_s=0.0084, cores=2, workers_needed=1.3, swept_step_s=0.0088,
                               handover_s=0.0015, handover_workers=1)
    assert not cpu.wait_unexplained and not cpu.handover_predicts and cpu.predicted_handover
    text = cpu.explanation()
    assert "beside its 1 decoding worker(s): 1.5 ms; no prediction from it: the decode bounds this plateau" in text
    assert "predicted (measured" not in text
    assert "hand-over timed apart predict" not in lesson.plateau_takeaway(cpu)
    assert "predict" not in lesson.recorded_plateau(cpu.as_dict()).split("consistency check")[1]


class FirstSlow(torch.utils.data.Dataset):
    """Sample 0 takes `slow_s`, the rest nothing: with two workers, worker 1's batches reach the
    queue before worker 0's first, so the main process stashes them out of order."""

    def __init__(self, length: int, slow_s: float) -> None:
        self.length, self.slow_s = length, slow_s

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        if index == 0:
            time.sleep(self.slow_s)
        return torch.zeros(3, 8, 8), index


def test_batches_stashed_out_of_order_are_taken_untimed_before_a_round():
    """Review 2026-12-05o 05-07 item 9: torch's _next_data stashes a batch that arrives before the
    one it waits for (in _task_info, out of _tasks_outstanding) and returns it later without
    unpickling: a round starting on one timed it as a near-zero restart hand-over and shifted
    the labels by one. fresh_step reads the stash from torch's own iterator and drains it."""
    data = FirstSlow(64, 0.3)
    loader = loader_sweep.make_loader(data, loader_sweep.Setting(num_workers=2, batch_size=1))
    iterator = iter(loader)
    try:
        first = next(iterator)  # waits for sample 0 while worker 1's batches arrive
        assert int(first[1]) == 0
        stashed = fresh_step._stashed(iterator)
        assert stashed >= 1, iterator._task_info  # worker 1's batch 1 at least, out of order
        assert fresh_step._drain_stashed(iterator, 10) >= stashed and fresh_step._stashed(iterator) == 0
    finally:
        loader_sweep.close(loader, iterator)
    assert fresh_step._stashed(object()) == 0 and fresh_step._drain_stashed(object(), 4) == 0
    handed = fresh_step.on_fresh_batches(SlowSamples(4 * 40, 0.005), quick_step, workers=2, batch_size=4,
                                         steps=2, handover_after_s=0.06, decode_s=0.02)
    assert handed.as_dict()["handover_drained"] == handed.handover_drained >= 0
