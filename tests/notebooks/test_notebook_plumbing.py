"""scripts/notebook_plumbing.py counts the plumbing in notebook code cells (issue 37): each
category is found on small made-up cells, a plain measurement line is not, and every chapter
keeps plumbing to at most 10% of its code lines (chapters not yet re-cut wait in
NOT_YET_RECUT as strict expected failures, so the list cannot go stale)."""

import json

import pytest

from tests.paths import NOTEBOOKS, ROOT, load_script

plumbing = load_script(ROOT / "scripts" / "notebook_plumbing.py", "notebook_plumbing")

CHAPTERS = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.py"))
# Every chapter was over 10% when this test was written (results/notebook_plumbing.json:
# from 27% in chapter 02 to 56% in chapter 99).
# 00-09 re-cut, the Colab cell 4 lines (it was 13): 2% to 9% (08: the cold Inductor cache set
# by the climb itself, its record made by here_or_recorded); 99 re-cut: one import (claims),
# the ledger's readings through it; 4/40 lines (the Colab cell)
NOT_YET_RECUT: set[str] = set()


def _chapter(name):
    if name in NOT_YET_RECUT:
        return pytest.param(name, marks=pytest.mark.xfail(
            strict=True, raises=AssertionError, reason="not yet re-cut to the session's door (issue 37)"))
    return name


@pytest.mark.parametrize("chapter", [_chapter(c) for c in CHAPTERS])
def test_plumbing_is_at_most_a_tenth_of_the_code(chapter):
    got = plumbing.measure(NOTEBOOKS / f"{chapter}.py")
    assert got.share <= plumbing.MAX_SHARE, (chapter, got.as_dict())


def test_the_waiting_list_names_only_chapters_that_exist():
    assert NOT_YET_RECUT <= set(CHAPTERS), NOT_YET_RECUT - set(CHAPTERS)


def _lines(source, **kwargs):
    """{line text: category} of one made-up cell."""
    found, _ = plumbing.classify(source, **kwargs)
    return {line.strip(): found.get(number) for number, line in enumerate(source.splitlines(), 1)
            if line.strip()}


@pytest.mark.parametrize(("source", "category"), [
    ("import os\nif 'COLAB_RELEASE_TAG' in os.environ:\n    pass", "colab"),
    ("def helper(x: int) -> int:\n    return x + 1", "helpers"),
    ("class Row:\n    pass", "helpers"),
    ("if on_gpu:\n    t = measure()\nelse:\n    t = chapter.recorded('t')", "gpu_branch"),
    ("if not has_triton:\n    print('recorded')", "gpu_branch"),
    ("chapter.record('sweep', {\n    'rows': rows})", "record"),
    ("print(f\"{name:<20}{value:>9}\")", "print_format"),
    ("print('kernels:', ', '.join(names))", "print_format"),
    ("print(c20.claim_id, c20.label, '--', c20.reason)", "print_format"),
    ("print()", "print_format"),
    ("for name, t in rows:\n    print(name, t)", "print_format"),
    ("device, sizes = chapter.device, chapter.sizes", "setup"),
    ("os.environ.setdefault('KINETO_LOG_LEVEL', '6')", "setup"),
])
def test_each_category_is_found(source, category):
    assert set(_lines(source).values()) == {category}


def test_the_first_import_is_free_and_later_ones_are_plumbing():
    first = _lines("from labkit import session\nimport torch")
    assert first == {"from labkit import session": None, "import torch": "imports"}
    assert set(_lines("import math", first_import_seen=True).values()) == {"imports"}


@pytest.mark.parametrize("source", [
    "cmp = bench.compare({'a': f, 'b': g}, baseline='a')",
    "c20 = chapter.judge('C20', evidence)",
    "print(f\"folded: {gain:.2f}x the original's speed\")",
    "print(sweep)",
    "cmp",
    "quiz = widgets.Quiz('q?', answer=1)",
    "def contiguous_bytes(shape: tuple) -> int:\n    raise NotImplementedError  # your code here",
    "def chain(x: torch.Tensor) -> torch.Tensor:\n    return torch.relu(x + 1)",
    "if recorded is None:\n    print('nothing recorded yet')",
])
def test_a_measurement_a_verdict_or_the_code_under_study_is_not_plumbing(source):
    assert set(_lines(source).values()) == {None}


def test_a_line_in_two_categories_counts_once_in_the_first():
    source = "if on_gpu:\n    chapter.record('k', measure())\n    print(f'{x:>8}')"
    assert set(_lines(source).values()) == {"gpu_branch"}
    inline = _lines("chapter.record('a' if on_gpu else 'b',\n               payload)")
    assert inline == {"chapter.record('a' if on_gpu else 'b',": "gpu_branch", "payload)": "record"}


def test_a_notebook_is_counted_and_written(tmp_path):
    source = ("# %% [markdown]\n# # 98 Probe\n\n"
              "# %%\nfrom labkit import session\nimport torch\n\nchapter = session.open('98_probe')\n"
              "on_gpu = chapter.on_gpu\n\n"
              "# %%\nx = torch.ones(4)\nprint(f'{x.sum():>6}')\nx.stride()\n")
    path = tmp_path / "98_probe.py"
    path.write_text(source)
    got = plumbing.measure(path)
    assert (got.code_cells, got.lines, got.plumbing) == (2, 7, 3)  # import torch, on_gpu, print
    assert got.share == pytest.approx(3 / 7)
    out = tmp_path / "plumbing.json"
    assert plumbing.main(["--out", str(out), str(path)]) == 0
    row = json.loads(out.read_text())["chapters"]["98_probe"]
    assert row["by_category"]["imports"] == row["by_category"]["setup"] == 1
    assert row["share"] == round(3 / 7, 3)


def test_bad_input_is_named(tmp_path):
    path = tmp_path / "97_broken.py"
    path.write_text("# %%\nx = (1,\n")
    with pytest.raises(ValueError, match="97_broken.py, cell 0: a code cell is not Python"):
        plumbing.measure(path)
    with pytest.raises(FileNotFoundError, match="96_missing.py"):
        plumbing.measure(tmp_path / "96_missing.py")


def test_magics_do_not_stop_the_count():
    assert _lines("%timeit f()\nprint()") == {"%timeit f()": None, "print()": "print_format"}
