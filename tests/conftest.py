"""Fixtures every test folder shares, the hypothesis profile (HYPOTHESIS_PROFILE: ci by
default, dev, nightly; see tests/hypothesis_profiles.py), the `slow` marker, and how the
suite is split between pytest-xdist workers (`make test` runs `-n 3 --dist loadgroup`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.core import discovery
from tests import hypothesis_profiles

hypothesis_profiles.load()

ROOT = Path(__file__).resolve().parents[1]
# Modules that share one expensive thing through a process-wide cache, so they must run in one
# worker: the website is built once per process (tests/site/building.py).
SHARED_GROUPS = {
    "tests/site/test_site.py": "site",
    "tests/browser/test_site_pages.py": "site",
}
# The groups that took longest in `make test` (benchmarks/suite_cost.py --suite's JUnit report,
# 2-core machine, 3 workers; 2026-12-02), handed out first, longest-processing-time first, so
# that the suite ends with short groups on every worker. Handed out by test count instead, the
# few-test subprocess groups (a reproduce run, `make lab`, the timeline) came last and ran on
# one or two workers for the last 35 s. Among the first, the groups that mostly wait (a kernel
# cull, a hub, a browser) alternate with chapters that keep a core busy: three waiting groups
# side by side at the start left the machine a quarter idle for a minute (/proc/stat sampled).
# The order decides only how long the suite takes, never what it checks; every other group
# follows, most tests first.
LONGEST_FIRST = (
    "tests/browser/test_course_config.py",          # 105 s (60 of them waiting for a cull)
    "notebooks/02_contiguity_and_hidden_copies.ipynb",  # 51
    "tests/browser/test_work_kept.py",              # 91
    "notebooks/07_export_traps.ipynb",              # 41
    "tests/browser/test_notebooks_in_lab.py",       # 76
    "tests/chapters/ch05_dataloader/test_loader_sweep.py",  # 35
    "tests/workshop/test_hub.py",                   # 39
    "notebooks/03_memory_layouts.ipynb",            # 28
    "tests/chapters/ch06_ddp_layout_drift/test_ddp.py",  # 40
    "notebooks/04_fusion.ipynb",                    # 25
    "tests/browser/test_widgets.py",                # 28
    "notebooks/05_dataloader.ipynb",                # 21
    "tests/browser/test_timeline_widget.py",        # 22
    "notebooks/08_inference_ladder.ipynb",          # 21
    "site",                                         # 20
    "notebooks/00_setup_check.ipynb",               # 20
    "tests/notebooks/test_static_pictures.py",      # 20
    "tests/benchmarks/test_reproduce.py",           # 19
    "notebooks/06_ddp_layout_drift.ipynb",          # 17
    "tests/show/test_figures.py",                   # 16
    "tests/chapters/ch07_export_traps/test_export_traps.py",  # 15
    "tests/chapters/ch05_dataloader/test_reproduce.py",  # 15
    "tests/chapters/ch06_ddp_layout_drift/test_repro_script.py",  # 14
    "tests/audit/test_export_audit.py",  # 13
    "tests/browser/test_make_lab.py",               # 12
    "tests/measure/test_bench.py",                  # 12
    "tests/notebooks/test_nbval_bites.py",          # 11
    "notebooks/09_audit_your_model.ipynb",          # 11
    "notebooks/01_strides_and_views.ipynb",         # 10
)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: the slowest property tests; `make test` runs them (ci profile: fewer "
                   "examples), `make test-fast` leaves them out")
    # tests/site/conftest.py registers it too, but tests/browser/test_site_pages.py uses it at
    # import, which can come first (pytest then warned "Unknown pytest.mark.site").
    config.addinivalue_line("markers", "site: builds the course website with Sphinx")
    for folder in discovery.chapter_packages():  # one marker per chapter folder: `-m ch04`
        config.addinivalue_line("markers", f"{chapter_marker(folder)}: chapter {folder[2:]}'s tests "
                                           f"(tests/chapters/{folder}/) and its notebook")


def chapter_marker(folder: str) -> str:
    """'ch04' for the folder 'ch04_fusion': the chapter's pytest marker, from its folder."""
    return folder[:4]


def chapter_folder_of(path: Path) -> str | None:
    """The chapter folder a test file belongs to by where it is: tests/chapters/chNN_name/...,
    or a chapter's notebook notebooks/NN_name.ipynb; None for everything else."""
    parts = path.parts
    if "chapters" in parts and parts.index("chapters") + 1 < len(parts) - 1:
        folder = parts[parts.index("chapters") + 1]
        return folder if discovery.FOLDER.fullmatch(folder) else None
    if path.parent.name == "notebooks" and path.suffix == ".ipynb":
        folder = "ch" + path.stem
        return folder if folder in discovery.chapter_packages() else None
    return None


def pytest_collection_modifyitems(config, items):
    """Mark each test with its chapter's marker (see chapter_folder_of), so `-m ch04` runs
    chapter 04's tests and notebook; nothing is listed by hand."""
    for item in items:
        folder = chapter_folder_of(Path(str(item.path)))
        if folder is not None:
            item.add_marker(getattr(pytest.mark, chapter_marker(folder)))


def group_of(nodeid: str) -> str:
    """The group a test runs in under `--dist loadgroup`: its file (a notebook for nbval), or
    a shared group of SHARED_GROUPS.

    Why by file: nbval runs a notebook's cells in order in one kernel, so a notebook's cells
    must stay in one worker; a module's module-scoped fixtures (a JupyterLab, a JupyterHub, a
    built model) are then built once, not once in every worker that got one of its tests.
    """
    path = nodeid.split("::", 1)[0]
    return SHARED_GROUPS.get(path, path)


def hand_out_order(group: tuple[str, dict]) -> tuple[int, int]:
    """Sort key of a (group, its tests) work unit: LONGEST_FIRST in its order, then the rest
    with the most tests first."""
    name, tests = group
    rank = LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)
    return rank, -len(tests)


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
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the work queue is complete by the first hand-out
                self.workqueue = type(self.workqueue)(sorted(self.workqueue.items(), key=hand_out_order))
                self.ordered = True
            super()._assign_work_unit(node)

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

