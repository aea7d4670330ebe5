"""The step as the sweep runs it (review 2026-12-03e item 1): on batches fresh from workers a
step's first read of the batch takes page faults that a private batch used again does not."""

import pytest
import torch

from labkit.chapters.ch05_dataloader import fresh_step, loader_data
from labkit.measure import conditions


def reads_every_page(batch) -> float:
    """A step that reads its whole batch and allocates nothing of its size."""
    return float(batch[0].sum())


@pytest.mark.skipif(conditions.minor_faults() is None, reason="no getrusage here")
def test_a_fresh_worker_batch_faults_where_a_private_one_does_not():
    """Measured here: a batch from a worker lives in a new shared-memory mapping, so reading it
    faults (the kernel maps up to 16 pages a fault: 'fault-around', so at least pages / 32 is
    asked, not pages); the same read of one private batch again faults (almost) never."""
    data = loader_data.SyntheticImages(length=32 * 12, encoded_side=64, output_side=128)
    fresh = fresh_step.on_fresh_batches(data, reads_every_page, workers=2, batch_size=32, steps=4)
    assert len(fresh.times_s) == len(fresh.faults) == 4 and fresh.batch_bytes == 32 * data.sample_bytes + 32 * 8
    assert fresh.pages == -(-fresh.batch_bytes // fresh_step.page_bytes())
    assert fresh.faults_per_step >= fresh.pages / 32, fresh
    batch = next(iter(torch.utils.data.DataLoader(data, batch_size=32)))
    private = fresh_step.on_one_batch(reads_every_page, batch, calls=3)
    assert len(private.times_s) == 3 and private.faults_per_step <= 2, private
    assert "page faults (a batch: " in str(fresh) and fresh.as_dict()["faults_per_step"] == fresh.faults_per_step


def test_bad_input_is_refused_with_a_reason():
    data = loader_data.SyntheticImages(length=8, encoded_side=32, output_side=32)
    with pytest.raises(ValueError, match="need 320"):
        fresh_step.on_fresh_batches(data, reads_every_page, workers=1, batch_size=32, steps=9)
    with pytest.raises(ValueError, match="steps >= 1"):
        fresh_step.on_fresh_batches(data, reads_every_page, workers=1, batch_size=4, steps=0)
    with pytest.raises(ValueError, match="calls"):
        fresh_step.on_one_batch(reads_every_page, [torch.zeros(2)], calls=0)
    with pytest.raises(ValueError, match="one fault count per step"):
        fresh_step.StepTimes("x", (0.1, 0.2), (3,), 10)


def test_the_fresh_steps_leave_the_main_process_its_core():
    assert fresh_step.workers_for(12, 16) == fresh_step.FRESH_WORKERS == 4
    assert fresh_step.workers_for(2, 2) == 1 and fresh_step.workers_for(0, 16) == 0
    assert fresh_step.workers_for(4, 1) == 0
    with pytest.raises(ValueError, match="cores >= 1"):
        fresh_step.workers_for(4, 0)


class _Burn(torch.utils.data.Dataset):
    """Samples that cost CPU to make (a decode's stand-in)."""

    def __len__(self) -> int:
        return 64

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        x = torch.zeros(1)
        for _ in range(2000):
            x = x + 1
        return x, i


def test_the_step_beside_decoders_is_timed_on_both_clocks_alone_and_beside():
    """Review 2026-12-03h item 1: the ready step timed alone and while workers decode without
    pause, on the wall clock and the main thread's CPU clock; the decoders are gone after."""
    import multiprocessing
    import time as _time

    def step(batch):
        end = _time.perf_counter() + 0.004
        while _time.perf_counter() < end:  # 4 ms on the CPU
            pass

    before = len(multiprocessing.active_children())
    loaded = fresh_step.ready_beside_decoders(_Burn(), step, batch=None, workers=1, batch_size=4, steps=3,
                                              alone_steps=3, rounds=1)
    assert loaded.workers == 1 and len(loaded.beside_s) == len(loaded.alone_s) == 3
    assert all(c <= w + 1e-3 for c, w in zip(loaded.beside_cpu_s, loaded.beside_s, strict=True))
    assert loaded.alone_median_s >= 0.004 and loaded.median_s >= 0.004
    assert loaded.slowdown == pytest.approx(loaded.median_s / loaded.alone_median_s)
    assert len(multiprocessing.active_children()) == before  # the decoders were stopped
    with pytest.raises(ValueError):
        fresh_step.ready_beside_decoders(_Burn(), step, None, workers=1, batch_size=4, steps=0)


def test_the_step_beside_decoders_runs_in_interleaved_rounds_with_an_interval():
    """Review 2026-12-04j item 1: alone and beside in rounds (decoders parked between blocks),
    each round's beside / alone, and their geometric mean's 95% interval; one round has none."""
    import multiprocessing
    import time as _time

    def step(batch):
        end = _time.perf_counter() + 0.002
        while _time.perf_counter() < end:
            pass

    before = len(multiprocessing.active_children())
    loaded = fresh_step.ready_beside_decoders(_Burn(), step, batch=None, workers=1, batch_size=4, steps=4,
                                              alone_steps=4, rounds=4)
    assert loaded.rounds == 4 and len(loaded.alone_s) == len(loaded.beside_s) == 16
    ratios = loaded.round_ratios()
    assert len(ratios) == 4 and all(r > 0 for r in ratios)
    mean, low, high = loaded.slowdown_interval()
    assert low <= mean <= high
    assert loaded.as_dict()["slowdown_interval"] == [mean, low, high] or loaded.as_dict()["slowdown_interval"] == (mean, low, high)
    assert len(multiprocessing.active_children()) == before
    one = fresh_step.LoadedStep(1, (0.01,), (0.01,), (0.02,), (0.01,))
    assert one.round_ratios() == [] and one.slowdown_interval() is None
    made = fresh_step.LoadedStep(1, (0.01, 0.01, 0.02, 0.02), (0.01,) * 4, (0.011, 0.011, 0.02, 0.02),
                                 (0.01,) * 4, rounds=2)
    assert made.round_ratios() == pytest.approx([1.1, 1.0])
