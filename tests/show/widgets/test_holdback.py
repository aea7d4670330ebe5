"""A quiz holds back what the cells below it show until it is answered or skipped, in a real
kernel under Run All (nbclient: every cell runs before anyone answers)."""

from __future__ import annotations

import json

import jupytext
import nbclient
import pytest
from jupyter_core.utils import run_sync

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

        def as_cell(code: str, cell_id: str) -> list[tuple[str, dict]]:
            """Run code as JupyterLab does, naming its cell (metadata cellId; nbclient sends
            none); the iopub messages it caused, up to idle."""
            kc = client.kc
            msg = kc.session.msg("execute_request", {
                "code": code, "silent": False, "store_history": True, "user_expressions": {},
                "allow_stdin": False, "stop_on_error": True}, metadata={"cellId": cell_id})
            kc.shell_channel.send(msg)
            seen = []
            while True:
                reply = run_sync(kc.get_iopub_msg)(timeout=60)
                if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
                    continue
                kind = reply["header"]["msg_type"]
                if kind == "status" and reply["content"]["execution_state"] == "idle":
                    return seen
                if (kind == "stream" and seen and seen[-1][0] == "stream"
                        and seen[-1][1]["name"] == reply["content"]["name"]):
                    # The kernel may flush one print in two messages (its text, then the
                    # newline); JupyterLab joins consecutive stream messages into one output.
                    last = seen[-1][1]
                    seen[-1] = ("stream", {**last, "text": last["text"] + reply["content"]["text"]})
                elif kind in ("stream", "display_data", "execute_result"):
                    seen.append((kind, reply["content"]))

        yield nb, probe, as_cell


def state(probe, quiz: str) -> list[bool]:
    """Which of the quiz's placeholders show their output (read on stderr, never held)."""
    return json.loads(probe(f"import json, sys; print(json.dumps([h.revealed for h in "
                            f"{quiz}._hold.items]), file=sys.stderr)", "stderr"))


def test_run_all_holds_what_is_below_an_unanswered_quiz(run_all):
    nb, probe, _ = run_all
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
    _, probe, _ = run_all
    probe("_ = q1.submit('(4, 1)')")  # a wrong answer is still an answer
    assert state(probe, "q1") == [True, True]
    assert state(probe, "q2") == [False], "q2's hold is its own"
    probe("q2.skip()")
    assert state(probe, "q2") == [True]
    assert probe("print('shown at once')") == "shown at once\n"


def test_an_ungradable_submission_reveals_nothing(run_all):
    _, probe, _ = run_all
    probe("q3 = widgets.Quiz('n?', answer=3.0)\nq3")
    probe("print('held by q3')")
    probe("_ = q3.submit('not a number')")
    assert state(probe, "q3") == [False]


def test_outside_a_kernel_nothing_is_held():
    from labkit.show.widgets import Quiz
    quiz = Quiz("n?", answer=2.0)
    quiz._repr_mimebundle_()
    assert getattr(quiz, "_hold", None) is None


def test_a_cell_above_the_quiz_run_again_shows_at_once(run_all):
    """After Run All a learner goes back to an earlier cell (an exercise): the last quiz,
    unanswered, does not hold it; a cell first run after that quiz it does hold."""
    _, _, as_cell = run_all
    as_cell("from labkit.show.widgets import holdback\n"
            "if holdback._STATE.pending: holdback._STATE.pending.quiz.skip()", "cell-settle")
    assert as_cell("print('an exercise, above')", "cell-above") == [
        ("stream", {"name": "stdout", "text": "an exercise, above\n"})]
    as_cell("q4 = widgets.Quiz('m?', answer=1.0)\nq4", "cell-quiz")
    again = as_cell("print('an exercise, above')", "cell-above")
    assert [kind for kind, _ in again] == ["stream"], again
    below = as_cell("print('below q4')", "cell-below")
    assert [kind for kind, _ in below] == ["display_data"], below
    assert "application/vnd.jupyter.widget-view+json" in below[0][1]["data"]
