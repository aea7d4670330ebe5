"""A chapter is a folder: both registries find a new one with no list edited."""

import sys
import textwrap
from pathlib import Path

import pytest

import labkit.chapters
from labkit import claims, exercises, session
from labkit.core import discovery

CLAIMS_PY = '''
from labkit.claims.core import CONFIRMED, REFUTED, SEED_STRIDES, Claim
from labkit.core import discovery

CHAPTER = discovery.chapter_key(__name__)


def check(evidence, thresholds):
    return (CONFIRMED, "it held", "") if evidence["held"] else (REFUTED, "it did not", "")


CLAIMS = [Claim("C98", CHAPTER, SEED_STRIDES, "nowhere", "A throw-away claim.",
                "it holds", "it does not", ("held",), check=check)]
'''
EXERCISES_PY = '''
from labkit.core import discovery
from labkit.exercises.grader import Exercise

EXERCISES = [Exercise(id=discovery.exercise_id(__name__, "double"), title="Double it", task="Return 2 * n.", hint="",
                      reference=lambda n: 2 * n, make_case=lambda rng: (rng.randint(0, 9),),
)]
'''


@pytest.fixture
def throwaway_chapter(tmp_path, monkeypatch):
    folder = tmp_path / "ch98_throwaway"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "claims.py").write_text(textwrap.dedent(CLAIMS_PY))
    (folder / "exercises.py").write_text(textwrap.dedent(EXERCISES_PY))
    monkeypatch.setattr(labkit.chapters, "__path__", [*labkit.chapters.__path__, str(tmp_path)])
    claims.REGISTRY.reload()
    exercises.REGISTRY.reload()
    yield "98_throwaway"
    for name in [m for m in sys.modules if m.startswith("labkit.chapters.ch98_throwaway")]:
        del sys.modules[name]
    monkeypatch.undo()
    claims.REGISTRY.reload()
    exercises.REGISTRY.reload()


def test_both_registries_find_a_new_chapter_folder(throwaway_chapter):
    assert throwaway_chapter in discovery.chapter_keys()
    assert [c.id for c in claims.for_chapter(throwaway_chapter)] == ["C98"]
    assert claims.get("C98").judge({"held": True}).outcome == claims.CONFIRMED
    assert [e.id for e in exercises.for_chapter(throwaway_chapter)] == ["98.double"]
    assert exercises.get("98.double").check(lambda n: 2 * n).passed


def test_the_throwaway_chapter_is_gone_afterwards():
    assert "C98" not in claims.REGISTRY and "98.double" not in exercises.REGISTRY


def test_every_chapter_key_names_its_notebook():
    from pathlib import Path

    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    for key in discovery.chapter_keys():
        assert (notebooks / f"{key}.py").is_file(), key


def test_a_session_knows_its_chapter():
    chapter = session.open("01_strides_and_views", announce=False)
    assert {c.id for c in chapter.claims()} >= {"C1", "C3"}
    assert chapter.exercises()[0].id.startswith("01.")
    verdict = chapter.judge("C1", {"shape": [4, 3], "stride": [1, 4], "is_contiguous": False})
    assert chapter.verdicts == [verdict]
    assert "C1" in chapter.table().structure()


def test_a_timing_verdict_taken_on_a_shared_gpu_depends_on_it():
    chapter = session.open("02_contiguity_and_hidden_copies", announce=False)
    evidence = dict(cases=[dict(case="3-D", implicit_copy_bytes=1 << 20, implicit_median_s=4.0,
                                explicit_median_s=1.0)])
    assert chapter.judge("C2", evidence).outcome == "confirmed"
    chapter.shared_gpu_seen = True
    shared = chapter.judge("C2", evidence)
    assert shared.outcome == "depends" and "shared" in shared.depends_on
    # a deterministic claim is not a timing: sharing cannot change it
    assert chapter.judge("C1", {"shape": [4, 3], "stride": [1, 4], "is_contiguous": False}).outcome


def test_only_the_top_floor_imports_the_chapters():
    """Discovery is the chapters' own: below them, nothing imports a chapter, and the floor
    that keeps the key (core.discovery) imports nothing by name."""
    import grimp

    graph = grimp.build_graph("labkit", exclude_type_checking_imports=False)
    chapters = {m for m in graph.modules if m.startswith("labkit.chapters")}
    outside = {(importer, imported) for imported in chapters
               for importer in graph.find_modules_that_directly_import(imported)
               if importer != "labkit" and not importer.startswith("labkit.chapters")}
    assert outside == set()
    source = Path(discovery.__file__).read_text()
    assert "importlib" not in source and "__import__" not in source


def test_without_the_chapters_installed_discovery_says_so(monkeypatch):
    monkeypatch.setattr(discovery, "_finder", None)
    with pytest.raises(RuntimeError, match="no chapters installed"):
        discovery.chapter_keys()


@pytest.mark.parametrize("part, text, error", [
    ("exercises.py", EXERCISES_PY.replace('discovery.exercise_id(__name__, "double")', '"97.double"'),
     exercises.ExerciseError),
    ("claims.py", CLAIMS_PY.replace("CHAPTER = discovery.chapter_key(__name__)", 'CHAPTER = "97_elsewhere"'),
     claims.ClaimError),
])
def test_a_hand_typed_chapter_that_is_not_the_folders_fails(throwaway_chapter, part, text, error):
    """The folder is the one chapter key: an id or chapter typed by hand that disagrees with
    it stops the registry, naming the helper that derives it."""
    folder = next(p for p in labkit.chapters.__path__ if Path(p, "ch98_throwaway").is_dir())
    Path(folder, "ch98_throwaway", part).write_text(textwrap.dedent(text))
    with pytest.raises(error, match="folder"):
        (exercises if part == "exercises.py" else claims).REGISTRY.reload()
        len((exercises if part == "exercises.py" else claims).REGISTRY)
