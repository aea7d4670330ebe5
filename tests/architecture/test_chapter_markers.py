"""Each chapter has a pytest marker (`-m ch04`), given by where a test lives, never by hand."""

from labkit.core import discovery
from tests.conftest import ROOT, chapter_folder_of, chapter_marker


def test_a_test_or_notebook_belongs_to_the_chapter_of_its_folder():
    assert chapter_folder_of(ROOT / "tests/chapters/ch04_fusion/test_fusion.py") == "ch04_fusion"
    assert chapter_folder_of(ROOT / "notebooks/04_fusion.ipynb") == "ch04_fusion"
    assert chapter_folder_of(ROOT / "tests/claims/test_claims.py") is None
    assert chapter_folder_of(ROOT / "notebooks/99_claims_ledger.ipynb") is None
    assert chapter_marker("ch04_fusion") == "ch04"


def test_every_chapter_folder_has_its_marker_registered(pytestconfig):
    registered = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    assert {chapter_marker(f) for f in discovery.chapter_packages()} <= registered

