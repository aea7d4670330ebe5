"""Fixtures every test folder shares, the hypothesis profile (HYPOTHESIS_PROFILE: ci by
default, dev, nightly; see tests/hypothesis_profiles.py) and the `slow` marker."""

import pytest

from tests import hypothesis_profiles

hypothesis_profiles.load()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: the slowest property tests; `make test` runs them (ci profile: fewer "
                   "examples), `make test-fast` leaves them out")


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A cache folder of the test's own: ceilings and results measured here stay out of the
    user's cache, and a test never reads what another test or a notebook left there."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("LABKIT_CACHE_DIR", str(cache))
    monkeypatch.delenv("LABKIT_RECORD_REFERENCE", raising=False)
    return cache
