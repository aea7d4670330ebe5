"""A quiz holds its own section, with one banner per cell, in a real kernel under Run All:
``holds=N`` ends the hold after N cells (chapter 00's quiz holds its measurement, not the
chapter's "What to remember"), and a cell with several held outputs shows the banner once."""

from __future__ import annotations

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
'''


@pytest.fixture(scope="module")
def ran():
    nb = jupytext.reads(SOURCE, fmt="py:percent")
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbclient.NotebookClient(nb, timeout=120).execute()
    return [cell.get("outputs", []) for cell in nb.cells]


def test_the_quiz_holds_the_next_cell_only(ran):
    _, measured, remember = ran
    assert all(holdback.WIDGET_MIME in o["data"] for o in measured), "the measurement is held"
    assert remember == [{"output_type": "stream", "name": "stdout",
                         "text": "What to remember: shown at once\n"}]


def test_a_cell_shows_one_banner(ran):
    _, measured, _ = ran
    pages = [o["data"]["text/html"] for o in measured]
    assert len(pages) == 3, pages
    assert pages[0].startswith("<details class='lt-held'>") and holdback.NOTE in pages[0]
    for page in pages[1:]:
        assert page.startswith("<details class='lt-held lt-held-more'>")
        assert holdback.NOTE not in page
    assert "<b>the table</b>" in pages[1] and "more text" in measured[2]["data"]["text/plain"]


@pytest.mark.parametrize("holds", [-1, True, 1.5, "1"])
def test_holds_must_be_a_count_of_cells(holds):
    with pytest.raises(traitlets.TraitError, match="holds must be a whole number"):
        Quiz("n?", answer=1.0, holds=holds)
