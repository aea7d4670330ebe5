"""The README must tell the truth: its two commands exist, its chapter map lists every notebook
with launch badges that point at files in the repository, and nothing turns authentication off."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


def test_two_commands_are_documented_and_exist():
    makefile = (ROOT / "Makefile").read_text()
    for target in ("lab", "test"):
        assert f"make {target}" in README
        assert re.search(rf"^{target}:", makefile, re.M), f"Makefile has no `{target}` target"
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_every_notebook_is_in_the_chapter_map_with_badges():
    for source in NOTEBOOKS:
        row = next((line for line in README.splitlines() if f"notebooks/{source.name})" in line), None)
        assert row, f"{source.name} is missing from the README's chapter map"
        assert "colab.research.google.com/github/" in row and f"notebooks/{source.stem}.ipynb" in row
        assert "mybinder.org" in row


def test_every_linked_notebook_exists():
    for link in re.findall(r"\]\((notebooks/[^)]+)\)", README):
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"
    for link in re.findall(r"blob/main/(notebooks/[^)\s]+)\)", README):
        assert (ROOT / link).exists(), f"a Colab badge points at {link}, which does not exist"


def test_nothing_disables_authentication_or_listens_everywhere():
    suspicious = re.compile(r"token\s*=\s*['\"]{2}|disable_check_xsrf|0\.0\.0\.0|password\s*=\s*['\"]{2}")
    paths = [ROOT / "Makefile", *ROOT.glob("binder/*"), *ROOT.glob("jupyter/*"), *ROOT.glob("scripts/*")]
    for path in (p for p in paths if p.is_file()):  # not scripts/__pycache__
        assert not suspicious.search(path.read_text()), f"{path.name} weakens JupyterLab's security"
