"""labkit's folders are its layers: the import contract holds, bites, and nothing imports in a circle."""

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def run_contract(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT), "--config", str(folder / "pyproject.toml")], cwd=folder,
                          env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)


def test_the_import_contract_holds():
    result = run_contract(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("importer, line, imported", [
    ("labkit/measure/bench.py", "from labkit.show import figures", "labkit.show.figures"),
    ("labkit/core/layout.py", "from labkit.measure import copies", "labkit.measure.copies"),
    ("labkit/chapters/ch03_memory_layouts/claims.py",
     "from labkit.chapters.ch02_contiguity_and_hidden_copies import strided_gemm",
     "labkit.chapters.ch02_contiguity_and_hidden_copies"),
])
def test_a_forbidden_import_fails_and_names_both_modules(tmp_path, importer, line, imported):
    shutil.copytree(ROOT / "labkit", tmp_path / "labkit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / importer
    target.write_text(target.read_text() + f"\n{line}  # forbidden\n")
    result = run_contract(tmp_path)
    assert result.returncode != 0
    module = importer.removesuffix(".py").replace("/", ".")
    assert module in result.stdout and imported in result.stdout, result.stdout


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every import circle between labkit's modules (a package importing its own submodule
    to re-export it, and that submodule importing the package, would show here too)."""
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    found, state, path = [], dict.fromkeys(modules, 0), []

    def visit(module: str) -> None:
        state[module], _ = 1, path.append(module)
        for nxt in edges[module]:
            if state.get(nxt) == 1:
                found.append(path[path.index(nxt):] + [nxt])
            elif state.get(nxt) == 0:
                visit(nxt)
        path.pop()
        state[module] = 2

    for module in modules:
        if state[module] == 0:
            visit(module)
    return found


def test_no_module_imports_in_a_circle():
    # Every import counts: one under `if TYPE_CHECKING:` never runs, but it still ties the
    # two modules together (neither can be read, moved or tested without the other).
    graph = grimp.build_graph("labkit", include_external_packages=False,
                              exclude_type_checking_imports=False)
    assert _cycles(graph) == []


def test_the_circle_finder_finds_a_circle_and_only_that():
    graph = grimp.ImportGraph()
    for importer, imported in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")]:
        graph.add_import(importer=importer, imported=imported)
    assert _cycles(graph) == [["p.a", "p.b", "p.c", "p.a"]]
    graph.remove_import(importer="p.c", imported="p.a")
    assert _cycles(graph) == []


def test_no_chapter_module_at_the_top_level():
    top = sorted(p.stem for p in (ROOT / "labkit").glob("*.py"))
    assert top == ["__init__", "session"], top
    folders = sorted(p.name for p in (ROOT / "labkit").iterdir()
                     if p.is_dir() and (p / "__init__.py").exists())
    assert folders == ["audit", "chapters", "claims", "core", "exercises", "measure", "models", "show"]
