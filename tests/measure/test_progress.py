"""labkit.measure.progress: the phases a long job reports."""


def test_phases_keep_each_parts_seconds_even_when_it_raises():
    import logging

    import pytest

    from labkit.measure import progress

    phases = progress.Phases(logging.getLogger("test"))
    assert phases.timed("ok", lambda: 3) == 3
    with pytest.raises(ZeroDivisionError):
        phases.timed("fails", lambda: 1 / 0)
    assert set(phases.seconds) == {"ok", "fails"} and all(s >= 0 for s in phases.seconds.values())
