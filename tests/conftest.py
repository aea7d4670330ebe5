"""Fixtures every test folder shares, the hypothesis profile (HYPOTHESIS_PROFILE: ci by
default, dev, nightly; see tests/hypothesis_profiles.py), the `slow` marker, and how the
suite is split between pytest-xdist workers (`make test` runs `-n 3 --dist loadgroup`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import hypothesis_profiles

hypothesis_profiles.load()

ROOT = Path(__file__).resolve().parents[1]
# Modules that share one expensive thing through a process-wide cache, so they must run in one
# worker: the website is built once per process (tests/site/building.py).
SHARED_GROUPS = {
    "tests/site/test_site.py": "site",
    "tests/browser/test_site_pages.py": "site",
}


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: the slowest property tests; `make test` runs them (ci profile: fewer "
                   "examples), `make test-fast` leaves them out")


def group_of(nodeid: str) -> str:
    """The group a test runs in under `--dist loadgroup`: its file (a notebook for nbval), or
    a shared group of SHARED_GROUPS.

    Why by file: nbval runs a notebook's cells in order in one kernel, so a notebook's cells
    must stay in one worker; a module's module-scoped fixtures (a JupyterLab, a JupyterHub, a
    built model) are then built once, not once in every worker that got one of its tests.
    """
    path = nodeid.split("::", 1)[0]
    return SHARED_GROUPS.get(path, path)


def distributed(config: pytest.Config) -> bool:
    """Whether this run is `--dist loadgroup` (on the controller), or collects for it (a
    worker: xdist sets the worker's own `dist` to "no" and `option.loadgroup` to True)."""
    return bool(getattr(config.option, "loadgroup", False)) or \
        getattr(config.option, "dist", "no") == "loadgroup"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup`, grouped by group_of. xdist's own loadgroup reads `xdist_group`
    marks through a node-id field that pytest 9.2 no longer has (the marks are silently
    ignored, and a notebook's cells would be spread over workers), so the grouping is ours."""
    if not distributed(config):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return ByGroup(config, log)


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A cache folder of the test's own: ceilings and results measured here stay out of the
    user's cache, and a test never reads what another test or a notebook left there."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("LABKIT_CACHE_DIR", str(cache))
    monkeypatch.delenv("LABKIT_RECORD_REFERENCE", raising=False)
    return cache

