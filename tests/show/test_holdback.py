"""A quiz holds back what the cells below it show until it is answered or skipped, in a real
kernel under Run All (nbclient: every cell runs before anyone answers)."""

from __future__ import annotations

import json

import jupytext
import nbclient
import pytest

from labkit.show.widgets import holdback

WIDGET = holdback.WIDGET_MIME

SOURCE = '''# %%
from labkit.show import widgets
q1 = widgets.Quiz("strides of x.t()?", choices=["(4, 1)", "(1, 4)"], answer="(1, 4)")
q1
# %%
print("stride (1, 4)")
print("second line")
# %%
from IPython.display import HTML
HTML("<b>has strides (1, 4)</b>")
# %%
q2 = widgets.Quiz("next?", choices=["a", "b"], answer="a")
q2
# %%
"after q2: a"
# %%
raise RuntimeError("an error is never held")
'''


def outputs_of(nb) -> list[list[dict]]:
    return [cell.get("outputs", []) for cell in nb.cells]


@pytest.fixture(scope="module")
def run_all(tmp_path_factory):
    """The notebook above under Run All, then `probe` cells run in the same kernel."""
    nb = jupytext.reads(SOURCE, fmt="py:percent")
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    client = nbclient.NotebookClient(nb, timeout=120, allow_errors=True)
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)

        def probe(code: str, stream: str = "stdout") -> str:
            cell = jupytext.reads("# %%\n" + code, fmt="py:percent").cells[0]
            nb.cells.append(cell)
            client.execute_cell(cell, len(nb.cells) - 1)
            return "".join(o.get("text", "") for o in cell.outputs
                           if o["output_type"] == "stream" and o["name"] == stream)

        yield nb, probe


def state(probe, quiz: str) -> list[bool]:
    """Which of the quiz's placeholders show their output (read on stderr, never held)."""
    return json.loads(probe(f"import json, sys; print(json.dumps([h.revealed for h in "
                            f"{quiz}._hold.items]), file=sys.stderr)", "stderr"))


def test_run_all_holds_what_is_below_an_unanswered_quiz(run_all):
    nb, probe = run_all
    quiz, printed, card, quiz2, after, error = outputs_of(nb)[:6]
    assert WIDGET in quiz[0]["data"] and "Quiz:" in quiz[0]["data"]["text/plain"]
    for outputs, words in [(printed, "stride (1, 4)\nsecond line"), (card, "has strides (1, 4)")]:
        assert len(outputs) == 1, outputs
        data = outputs[0]["data"]
        assert WIDGET in data, "the output is shown, not held"
        assert data["text/html"].startswith("<details class='lt-held'><summary><svg"), data["text/html"]
        assert words in data["text/plain"] or words in data["text/html"]
    assert WIDGET in quiz2[0]["data"], "a quiz is never held by the quiz above it"
    assert "after q2" in after[0]["data"]["text/html"], "what follows q2 is held by q2"
    assert error[0]["output_type"] == "error", "an error is shown at once"
    assert state(probe, "q1") == [False, False]


def test_answering_reveals_in_place_and_later_cells_show_at_once(run_all):
    _, probe = run_all
    probe("_ = q1.submit('(4, 1)')")  # a wrong answer is still an answer
    assert state(probe, "q1") == [True, True]
    assert state(probe, "q2") == [False], "q2's hold is its own"
    probe("q2.skip()")
    assert state(probe, "q2") == [True]
    assert probe("print('shown at once')") == "shown at once\n"


def test_an_ungradable_submission_reveals_nothing(run_all):
    _, probe = run_all
    probe("q3 = widgets.Quiz('n?', answer=3.0)\nq3")
    probe("print('held by q3')")
    probe("_ = q3.submit('not a number')")
    assert state(probe, "q3") == [False]


def test_outside_a_kernel_nothing_is_held():
    from labkit.show.widgets import Quiz
    quiz = Quiz("n?", answer=2.0)
    quiz._repr_mimebundle_()
    assert getattr(quiz, "_hold", None) is None
