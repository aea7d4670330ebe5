"""How `make test` splits the suite between pytest-xdist workers (tests/conftest.py): a file's
tests (a notebook's cells, which nbval runs in one kernel) stay in one worker, in order, and
the site's two modules share one build. The scheduler is checked on a real `-n 2` run, because
xdist's own `xdist_group` marks are silently ignored under pytest 9.2: without our scheduler a
notebook's cells were spread over workers."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import LONGEST_FIRST, SHARED_GROUPS, group_of, hand_out_order
from tests.paths import ROOT


def test_a_group_is_the_file_or_its_shared_group():
    assert group_of("notebooks/03_memory_layouts.ipynb::Cell 19") == "notebooks/03_memory_layouts.ipynb"
    assert group_of("tests/core/test_env.py::test_x[a::b]") == "tests/core/test_env.py"
    assert group_of("tests/site/test_site.py::test_y") == group_of("tests/browser/test_site_pages.py::t") == "site"
    assert set(SHARED_GROUPS.values()) == {"site"}


def test_the_longest_groups_are_handed_out_first_and_still_exist():
    for name in LONGEST_FIRST:  # a renamed file would silently lose its place
        assert (ROOT / name).exists() or name in SHARED_GROUPS.values(), name
    units = [("tests/core/test_env.py", dict.fromkeys("ab")), ("tests/x.py", dict.fromkeys("abc")),
             (LONGEST_FIRST[1], {}), (LONGEST_FIRST[0], {})]
    assert [n for n, _ in sorted(units, key=hand_out_order)] == [
        LONGEST_FIRST[0], LONGEST_FIRST[1], "tests/x.py", "tests/core/test_env.py"]


TEST_FILE = '''
import json, os, pathlib, time
import pytest

@pytest.mark.parametrize("n", range(6))
def test_step(n):
    time.sleep(0.05)
    with open(pathlib.Path(__file__).parent / "ran.jsonl", "a") as log:
        log.write(json.dumps([__name__, n, os.environ["PYTEST_XDIST_WORKER"]]) + "\\n")
'''


def test_two_workers_keep_each_file_in_one_worker_in_order(tmp_path):
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from tests.conftest import pytest_xdist_make_scheduler  # noqa: F401\n")
    for name in "abcd":
        (tmp_path / f"test_{name}.py").write_text(TEST_FILE)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "--dist", "loadgroup", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "ran.jsonl").read_text().splitlines()]
    assert len(rows) == 24
    for module in {m for m, _, _ in rows}:
        mine = [(n, worker) for m, n, worker in rows if m == module]
        assert len({worker for _, worker in mine}) == 1, f"{module} ran on several workers: {mine}"
        assert [n for n, _ in mine] == list(range(6)), f"{module} ran out of order: {mine}"
