"""A chapter's saved form holds nothing that depends on the machine that executed it or on the
learner's tools, so opening and saving it unchanged leaves its files byte-identical.

The browser test (tests/browser/test_open_is_not_edit.py) opens every chapter with a kernel of
another Python; these are the quick checks of the files and of a save through the server's
own Jupytext contents manager, configured as the course configures it.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import jupytext
import pytest
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from execute_notebook import JUPYTEXT_FILTER, normalise_metadata  # noqa: E402 - a script

CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.stem)
def test_stored_without_python_or_jupytext_versions(source):
    header = source.read_text().split("\n# ---\n", 1)[0]
    assert "jupytext_version:" not in header
    assert f"notebook_metadata_filter: {JUPYTEXT_FILTER}" in header
    metadata = json.loads(source.with_suffix(".ipynb").read_text())["metadata"]
    assert "version" not in metadata["language_info"], "the executing Python's patch release"
    assert metadata["jupytext"]["notebook_metadata_filter"] == JUPYTEXT_FILTER


def test_normalise_metadata_drops_what_the_machine_wrote():
    notebook = {"metadata": {"language_info": {"name": "python", "version": "3.11.7"},
                             "jupytext": {"text_representation": {"jupytext_version": "1.19.6"}}}}
    normalise_metadata(notebook)
    assert notebook["metadata"] == {"language_info": {"name": "python"},
                                    "jupytext": {"notebook_metadata_filter": JUPYTEXT_FILTER}}


def test_a_save_through_the_course_contents_manager_changes_no_byte(tmp_path):
    """JupyterLab's save of an unchanged chapter, as the server does it: every .py is written
    again and must come out byte-identical (before, chapter 00's header gained Jupytext's
    version line), and every .ipynb with the metadata it had. (Its cells are the .py's: a
    chapter whose source changed since it was executed gets its new source in the .ipynb.)"""
    manager_class = jupytext.TextFileContentsManager
    config = Config(json.loads((ROOT / "jupyter" / "jupyter_server_config.json").read_text()))
    copy = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", copy,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    manager = manager_class(root_dir=str(copy), config=config)
    assert manager.formats == "ipynb,py:percent", "the course's pairing did not apply"
    for source in CHAPTERS:
        model = manager.get(source.name)
        manager.save({"type": "notebook", "format": "json", "content": model["content"]},
                     source.name)
    changed = [p.name for p in sorted(copy.glob("*.py"))
               if p.read_bytes() != (ROOT / "notebooks" / p.name).read_bytes()]
    changed += [p.name for p in sorted(copy.glob("*.ipynb"))
                if json.loads(p.read_text())["metadata"]
                != json.loads((ROOT / "notebooks" / p.name).read_text())["metadata"]]
    assert changed == []


def test_a_chapter_opens_when_its_ipynb_is_newer_than_its_source(tmp_path):
    """A fresh clone's checkout order can leave a .ipynb newer than its .py; where their
    sources differ (outputs not yet refreshed after a source change), Jupytext's default
    refused to open the chapter ("File Load Error"). The .py is the source: it opens."""
    import os

    config = Config(json.loads((ROOT / "jupyter" / "jupyter_server_config.json").read_text()))
    copy = tmp_path / "notebooks"
    copy.mkdir()
    source = copy / "zz.py"
    source.write_text("# %%\nprint('the source, changed since the run')\n")
    notebook = jupytext.reads("# %%\nprint('as executed')\n", fmt="py:percent")
    jupytext.write(notebook, copy / "zz.ipynb")
    os.utime(source, (1_000_000_000, 1_000_000_000))  # older than the .ipynb by years
    manager = jupytext.TextFileContentsManager(root_dir=str(copy), config=config)
    model = manager.get("zz.py")
    assert "changed since the run" in model["content"]["cells"][0]["source"]
