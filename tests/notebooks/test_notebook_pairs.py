"""Each notebook's .py source and its committed .ipynb must say the same thing.

The .py is what reviewers edit; the .ipynb is what Colab, Binder, GitHub and nbval read. If
they drift, learners run code nobody reviewed, so the pair is checked cell by cell.
"""

import pathlib

import jupytext
import pytest

from tests.paths import ROOT

NOTEBOOKS = ROOT / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))


def cells_of(path: pathlib.Path) -> list[tuple[str, str]]:
    notebook = jupytext.read(path)
    return [(cell.cell_type, cell.source.strip()) for cell in notebook.cells]


def test_there_are_notebooks():
    assert SOURCES, f"no notebook sources found in {NOTEBOOKS}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_ipynb_matches_its_py_source(source):
    paired = source.with_suffix(".ipynb")
    assert paired.exists(), f"{paired.name} is missing: run `make notebooks`"
    assert cells_of(source) == cells_of(paired), (
        f"{source.name} and {paired.name} are out of sync: edit the .py, then run "
        f"`.venv/bin/python scripts/execute_notebook.py {source.relative_to(NOTEBOOKS.parent)}`"
    )


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_ipynb_carries_outputs_for_nbval(source):
    """A notebook saved without executing has no outputs, so nbval would compare nothing."""
    notebook = jupytext.read(source.with_suffix(".ipynb"))
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code_cells and all(cell.get("execution_count") for cell in code_cells), (
        f"{source.stem}.ipynb was not fully executed: run `make notebooks`"
    )
    checked = [cell for cell in code_cells if "NBVAL_CHECK_OUTPUT" in cell.source
               or "nbval-check-output" in cell.metadata.get("tags", [])]
    assert checked, f"{source.stem} has no nbval-check-output cell: nbval would compare nothing"
    assert all(cell.outputs for cell in checked), "a checked cell has no stored output to compare"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_source_names_its_kernel(source):
    """Without a kernelspec, JupyterLab opens a 'Select Kernel' dialog that blocks learners."""
    notebook = jupytext.read(source)
    assert notebook.metadata.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_first_code_cell_installs_labkit_only_in_colab(source):
    first = next(cell for cell in jupytext.read(source).cells if cell.cell_type == "code")
    assert 'if "COLAB_RELEASE_TAG" in os.environ:' in first.source
    assert "pip install" in first.source and "/content/tensor-layout-lab" in first.source
    assert sum(1 for line in first.source.splitlines() if line.strip()) <= 4, \
        "the Colab cell is plumbing every chapter pays for"
