"""The knee quiz accepts every worker count the sweep's windows allow (review 2026-12-03f
item 13: this CPU's windows for 1 and 2 workers overlapped, yet only 2 was right)."""

import pytest

from labkit.chapters.ch05_dataloader import knee_experiment, loader_sweep
from labkit.show.widgets.quiz import Key


def _run(workers: int, windows_s: tuple[float, ...]) -> loader_sweep.Run:
    """A run of 64-sample batches, one step a window, the windows' seconds as given."""
    setting = loader_sweep.Setting(batch_size=64, num_workers=workers)
    return loader_sweep.Run(setting, windows_s, (0.0,) * len(windows_s), 0.0, 1,
                            window_s=windows_s, window_steps=1)


def _found(runs: list[loader_sweep.Run]) -> knee_experiment.Found:
    sweep = loader_sweep.Sweep(runs)
    return knee_experiment.Found(sweep, loader_sweep.knee_of(sweep))


def test_overlapping_windows_accept_both_counts():
    # this CPU's sweep: 0 workers far below, 1 worker 650-1031 samples/s, 2 workers 843-1260
    runs = [_run(0, (0.32, 0.30, 0.31)), _run(1, (64 / 650, 64 / 1031, 64 / 900)),
            _run(2, (64 / 843, 64 / 1260, 64 / 1200))]
    found = _found(runs)
    assert found.knee.workers == 2
    key = knee_experiment.knee_key(found)
    assert isinstance(key, Key) and key.answer == 2 and key.span == (1, 2)
    assert "1, 2 worker(s)" in key.why


def test_a_clear_sweep_keys_one_count():
    runs = [_run(0, (0.40, 0.41, 0.40)), _run(1, (0.20, 0.21, 0.20)), _run(2, (0.100, 0.101, 0.100)),
            _run(4, (0.099, 0.100, 0.099))]
    found = _found(runs)
    assert knee_experiment.knee_key(found) == found.knee.workers == 2


@pytest.mark.parametrize(("spreads", "allowed"), [
    ({0: (100.0, 110.0), 1: (180.0, 210.0), 2: (205.0, 215.0)}, [1, 2]),  # 1 may fall short of 2
    ({0: (100.0, 110.0), 1: (200.0, 210.0), 2: (205.0, 215.0)}, [1]),  # 1 is within 10% whatever 2 reads
    ({0: (100.0, 110.0), 1: (150.0, 160.0), 2: (205.0, 215.0)}, [2]),  # 1 never within 10%
    ({0: (190.0, 230.0), 1: (150.0, 160.0), 2: (205.0, 215.0)}, [0, 2]),  # 0 at 190 < 0.9 x 215
    ({0: (195.0, 230.0), 1: (150.0, 160.0), 2: (205.0, 215.0)}, [0]),  # 0 always within 10%
    ({0: (150.0, 200.0), 1: (185.0, 200.0), 2: (205.0, 215.0)}, [0, 1, 2]),
])
def test_candidates_follow_the_windows(spreads, allowed):
    assert knee_experiment.knee_candidates(spreads) == allowed


def test_candidates_refuse_bad_input():
    with pytest.raises(ValueError, match="each worker count"):
        knee_experiment.knee_candidates({})
    with pytest.raises(ValueError, match="tolerance"):
        knee_experiment.knee_candidates({0: (1.0, 2.0)}, tolerance=1.5)
