"""The widgets under any input: every trait validated when set, every text read strictly.

Issue 9's classes for the widgets: trait values that would break a later redraw, loose
text parsing (empty items, empty fields, bytes, 5,000-digit numbers), quiz answers compared
exactly, and the pure view-model (tested without traitlets) behind the static picture.
"""

import math
import re

import pytest
import torch
import traitlets
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.core import layout
from labkit.show import widgets
from labkit.show.widgets import parsing, static_svg, view_model
from tests.hypothesis_profiles import examples

anything = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
    st.text(max_size=5), st.binary(max_size=3), st.lists(st.integers(-3, 5), max_size=3),
    st.lists(st.booleans(), max_size=2), st.just([1.5]), st.just({"a": 1}))

TRAITS = ["shape", "stride", "offset", "itemsize", "storage_size", "base", "selected",
          "selected_cell", "title", "timing_hooks"]


def redraw_everything(grid):
    """What a front end does after any change: must never raise."""
    grid._refresh()
    grid.static_svg()
    repr(grid)
    grid._repr_mimebundle_()


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TRAITS), anything), min_size=1, max_size=6))
def test_any_trait_value_is_refused_or_leaves_a_drawable_widget(changes):
    grid = widgets.AddressGrid(torch.arange(12).reshape(3, 4))
    for name, value in changes:
        before = getattr(grid, name)
        try:
            setattr(grid, name, value)
        except traitlets.TraitError as err:
            assert str(err)
            assert getattr(grid, name) == before  # a refused value changes nothing
        redraw_everything(grid)


@pytest.mark.parametrize("name, value", [("base", True), ("selected_cell", True),
                                         ("selected", [True, 0]), ("selected", [0.5, 1]),
                                         ("base", 2**64), ("offset", False), ("itemsize", 2.5),
                                         ("timing_hooks", "yes"), ("base", -1)])
def test_the_issues_examples_are_refused(name, value):
    grid = widgets.AddressGrid(torch.arange(12).reshape(3, 4))
    with pytest.raises(traitlets.TraitError):
        setattr(grid, name, value)
    grid.select(1, 2)  # later selections still work
    assert grid.address_text


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(st.text(max_size=30), st.binary(max_size=10),
                 st.text(alphabet="0123456789, ()[]-+", max_size=40),
                 st.sampled_from(["1,,2", ",", "", " ", "1" * 5000, "9" * 25, "()", "(3,)",
                                  "٣, 4", "1_000", "3.0", "-0", "+2", "(3, 4]"])),
       st.sampled_from(["shape", "stride", "offset"]))
def test_explorer_text_is_applied_exactly_or_explained(text, field):
    explorer = widgets.StrideExplorer(storage_size=12)
    before = (explorer.shape, explorer.stride, explorer.offset)
    explorer.proposal = {"seq": 1, field: text}   # what the browser sends
    if explorer.error:
        assert (explorer.shape, explorer.stride, explorer.offset) == before
        return
    current = {"shape": explorer.shape, "stride": explorer.stride, "offset": explorer.offset}
    body = text.strip() if isinstance(text, str) else ""
    if field == "offset":
        assert re.fullmatch(r"[+-]?[0-9]+", body, re.ASCII)
        assert current["offset"] == int(body)
    else:
        assert tuple(current[field]) == parsing.parse_int_list(text, field)
        assert ",," not in body.replace(" ", "")


@pytest.mark.parametrize("text, says", [("1,,2", "empty"), ("", "empty"), (b"3, 4", "bytes"),
                                        ("1" * 5000, "too long"), ("9" * 25, "too large"),
                                        ("٣", "not a whole number"), ("3.0", "not a whole")])
def test_each_kind_of_bad_text_gets_its_own_message(text, says):
    explorer = widgets.StrideExplorer(storage_size=12)
    assert explorer.propose(shape=text) is False and says in explorer.error
    quiz = widgets.Quiz("Strides?", kind="sequence", answer=(4, 1))
    assert quiz.submit(text) is None and quiz.error


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.text(max_size=30), st.binary(max_size=8), st.integers(), st.none(),
                 st.sampled_from(["1" * 5000, "1e999", "nan", "inf", "1,5", " 2 "])))
def test_quiz_reads_any_submission_without_raising(text):
    for quiz in (widgets.Quiz("n?", answer=12.0, rel_tol=0.1),
                 widgets.Quiz("s?", kind="sequence", answer=(4, 1)),
                 widgets.Quiz("c?", choices=["a", "b"], answer="a")):
        quiz.submission = {"response": text}
        assert (quiz.correct is None) == bool(quiz.error)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.one_of(st.integers(-5, 5), st.floats(-5, 5, allow_nan=False)),
                min_size=1, max_size=3))
def test_sequence_answers_are_compared_exactly(answer):
    whole = all(float(v).is_integer() for v in answer)
    typed = ", ".join(str(int(v)) for v in answer)
    if not whole:
        with pytest.raises(traitlets.TraitError, match="not a whole number"):
            widgets.Quiz("s?", kind="sequence", answer=tuple(answer))
        late = widgets.Quiz("s?", kind="sequence", answer=lambda: tuple(answer))
        assert late.submit(typed) is None and "whole number" in late.error
        return
    quiz = widgets.Quiz("s?", kind="sequence", answer=tuple(answer))
    assert quiz.submit(typed) is True


@pytest.mark.parametrize("kwargs, says", [
    ({"answer": iter([1, 4]), "kind": "sequence"}, "iterator"),
    ({"choices": "abc", "answer": "a"}, "one string"),
    ({"choices": ["a", "a"], "answer": "a"}, "differ"),
    ({"answer": 3, "rel_tol": math.nan}, "rel_tol"),
    ({"answer": 3, "abs_tol": math.inf}, "abs_tol"),
    ({"answer": 3, "rel_tol": True}, "rel_tol"),
    ({"answer": True}, "not a number"),
    ({"answer": math.nan}, "cannot be compared"),
    ({"answer": (1.5, 4)}, "not a whole number"),
    ({"answer": "c", "choices": ["a", "b"]}, "none of the choices"),
    ({"answer": 3, "kind": "essay"}, "kind"),
])
def test_quiz_refuses_answers_it_could_not_grade_when_it_is_made(kwargs, says):
    with pytest.raises(traitlets.TraitError, match=says):
        widgets.Quiz("Q?", **kwargs)


def test_a_generator_computed_by_the_answer_is_read_once_and_kept():
    quiz = widgets.Quiz("s?", kind="sequence", answer=lambda: (n for n in (4, 1)))
    assert quiz.submit("4, 1") is True and quiz.submit("4, 1") is True


# ---- the view-model and the static picture ------------------------------------------------

def test_view_model_colours_one_per_cell_and_repeats_only_for_shared_cells():
    lay = layout.of(torch.arange(4).expand(3, 4))
    view = view_model.grid_view(lay, 4, [], None, "")
    hues = [view_model.cell_hue(c, view["cell_low"], view["cell_high"])
            for c in view["element_offsets"]]
    assert len(set(hues)) == 4  # four cells, four colours; the broadcast rows repeat them
    big = layout.check((64, 64), (64, 1))
    big_view = view_model.grid_view(big, 4096, [], None, "")
    assert len({view_model.cell_hue(c, big_view["cell_low"], big_view["cell_high"])
                for c in big_view["element_offsets"]}) == 4096


def test_static_picture_numbers_the_tensor_as_the_grid_does():
    t = torch.arange(12).reshape(3, 4).t()
    grid = widgets.AddressGrid(t)
    svg = grid.static_svg()
    labels = re.findall(r">([^<>]+)</text>", svg)
    for k, cell in enumerate(grid._view["element_offsets"]):
        assert view_model.cell_label(grid._view, cell) == str(t.flatten()[k].item())
    assert all(str(v) in labels for v in range(12))
    assert svg == widgets.AddressGrid(t).static_svg()  # deterministic
    sizes = [int(s) for s in re.findall(r"font-size='(\d+)'", svg)]
    assert min(sizes) >= 9 and sizes.count(9) < len(sizes) // 2


@pytest.mark.parametrize("make", [
    lambda: widgets.AddressGrid(torch.zeros(100, 100)),
    lambda: widgets.AddressGrid(torch.tensor(7)),
    lambda: widgets.AddressGrid(torch.zeros(0, 3)),
    lambda: widgets.AddressGrid(torch.arange(24).reshape(2, 3, 4).permute(0, 2, 1)),
    lambda: widgets.StrideExplorer(storage_size=12),
    lambda: widgets.Quiz("Q?", choices=["(4, 1)", "(1, 4)"], answer="(1, 4)"),
])
def test_every_widget_carries_a_static_picture(make):
    widget = make()
    bundle = widget._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["image/svg+xml"].startswith("<svg") and data["text/plain"] == repr(widget)


def test_quiz_picture_never_gives_the_answer():
    quiz = widgets.Quiz("Bytes?", answer=48, unit="B")
    assert "48" not in quiz.static_svg()


def test_selection_texts_are_a_pure_function():
    lay = layout.check((3, 4), (4, 1))
    texts = view_model.selection_texts(lay, [1, 2], -1, None)
    assert texts["storage_index"] == 6 and texts["text_for"] == "element:1,2"
    assert texts["address_text"] == layout.address_formula(lay, (1, 2))
    cell = view_model.selection_texts(lay, [], 5, 4096)
    assert cell["text_for"] == "cell:5" and "0x1014" in cell["cell_text"]
    with pytest.raises(layout.LayoutError):
        view_model.check_selection(lay, [True, 0])
    assert static_svg.grid_svg(view_model.grid_view(lay, 12, [], None, "x")).startswith("<svg")
