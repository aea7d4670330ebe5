"""A quiz holds its own section, with one banner per cell, in a real kernel under Run All:
``holds=N`` ends the hold after N cells (chapter 00's quiz holds its measurement, not the
chapter's "What to remember"), a chapter's conclusions (`takeaways = [...]`) end any hold,
and a cell with several held outputs shows the banner once."""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbclient
import pytest
import traitlets

from labkit.show.widgets import Quiz, holdback

SOURCE = '''# %%
from labkit.show import widgets
from IPython.display import HTML, display
q = widgets.Quiz("hot over cold?", choices=["1x", "10x"], answer="10x", holds=1)
q
# %%
print("hot 10x cold")
display(HTML("<b>the table</b>"))
print("more text")
# %%
print("What to remember: shown at once")
# %%
q2 = widgets.Quiz("and now?", choices=["a", "b"], answer="a")
q2
# %%
print("held by q2")
# %%
takeaways: list[str] = ["the chapter's conclusions"]
print(takeaways[0])
# %%
print("after the conclusions")
'''


@pytest.fixture(scope="module")
def ran():
    nb = jupytext.reads(SOURCE, fmt="py:percent")
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbclient.NotebookClient(nb, timeout=120).execute()
    return [cell.get("outputs", []) for cell in nb.cells]


def test_the_quiz_holds_the_next_cell_only(ran):
    _, measured, remember = ran[:3]
    assert all(holdback.WIDGET_MIME in o["data"] for o in measured), "the measurement is held"
    assert remember == [{"output_type": "stream", "name": "stdout",
                         "text": "What to remember: shown at once\n"}]


def test_a_cell_shows_one_banner(ran):
    _, measured, _ = ran[:3]
    pages = [o["data"]["text/html"] for o in measured]
    assert len(pages) == 3, pages
    assert pages[0].startswith("<details class='lt-held'>") and holdback.NOTE in pages[0]
    for page in pages[1:]:
        assert page.startswith("<details class='lt-held lt-held-more'>")
        assert holdback.NOTE not in page
    assert "<b>the table</b>" in pages[1] and "more text" in measured[2]["data"]["text/plain"]


def test_the_conclusions_end_the_hold(ran):
    _, held, conclusions, after = ran[3:]
    assert holdback.WIDGET_MIME in held[0]["data"], "q2 holds what follows it"
    assert conclusions[0]["text"] == "the chapter's conclusions\n"
    assert after[0]["text"] == "after the conclusions\n"


@pytest.mark.parametrize("holds", [-1, True, 1.5, "1"])
def test_holds_must_be_a_count_of_cells(holds):
    with pytest.raises(traitlets.TraitError, match="holds must be a whole number"):
        Quiz("n?", answer=1.0, holds=holds)


CHAPTERS = sorted((Path(__file__).resolve().parents[3] / "notebooks").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("source", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapters_what_to_remember_cell_is_seen_as_its_conclusions(source):
    cells = jupytext.read(source).cells
    heading = [i for i, c in enumerate(cells)
               if c.cell_type == "markdown" and "## What to remember" in c.source]
    if not heading or "Quiz(" not in source.read_text():
        pytest.skip(f"{source.stem}: no quiz, or no 'What to remember' section: nothing held")
    first_code = next(c for c in cells[heading[0]:] if c.cell_type == "code")
    assert holdback.CONCLUSIONS.search(first_code.source), (
        f"{source.stem}: its 'What to remember' cell builds no `takeaways = [...]` and calls no "
        "`chapter.remember(...)`, so a quiz "
        "above it would hold the chapter's conclusions back")
