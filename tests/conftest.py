"""Fixtures every test folder shares."""

import pytest


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A cache folder of the test's own: ceilings and results measured here stay out of the
    user's cache, and a test never reads what another test or a notebook left there."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("LABKIT_CACHE_DIR", str(cache))
    monkeypatch.delenv("LABKIT_RECORD_REFERENCE", raising=False)
    return cache
