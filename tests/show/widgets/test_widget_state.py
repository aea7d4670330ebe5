"""Widget state without a browser: validators, the selection's address text against
labkit.core.layout, the stride explorer's proposals and presets, and the quiz's grading."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
import torch
import traitlets

from labkit.core import layout
from labkit.show.widgets import AddressGrid, Quiz, StrideExplorer
from labkit.show.widgets.stride_explorer import presets
from tests.paths import ROOT

X = torch.arange(12).reshape(3, 4)
VIEWS = {
    "contiguous": X,
    "transpose": X.t(),
    "broadcast": torch.arange(4).expand(3, 4),
    "windows": torch.arange(20.0)[2:].unfold(0, 4, 2),
    "slice_with_offset": torch.arange(40).reshape(5, 8)[1:4, 2::3],
    "channels_last": torch.arange(24).reshape(1, 2, 3, 4).contiguous(
        memory_format=torch.channels_last),
    "3d_permuted": torch.arange(24).reshape(2, 3, 4).permute(0, 2, 1),
    "vector": torch.arange(10)[::3],
}


def all_indices(shape):
    return [tuple(int(i) for i in idx) for idx in np.ndindex(*shape)]


# --------------------------------------------------------------------------- AddressGrid
@pytest.mark.parametrize("name", VIEWS)
def test_grid_takes_its_layout_from_labkit_layout(name):
    t = VIEWS[name]
    grid = AddressGrid(t)
    lay = layout.of(t)
    assert (tuple(grid.shape), tuple(grid.stride), grid.offset, grid.itemsize) == (
        lay.shape, lay.stride, lay.offset, lay.itemsize)
    assert grid.storage_size == lay.storage_size
    assert grid.layout == lay
    assert grid._view["element_offsets"] == layout.element_offsets(lay).ravel().tolist()
    assert grid.kind == layout.classify(lay).kind


@pytest.mark.parametrize("name", VIEWS)
@pytest.mark.parametrize("base", [None, 0x7F00_1234_5000])
def test_selecting_an_element_shows_layouts_formula(name, base):
    t = VIEWS[name]
    grid = AddressGrid(t, base=base)
    lay = layout.of(t)
    for index in all_indices(lay.shape):
        grid.selected = list(index)
        assert grid.address_text == layout.address_formula(lay, index, base)
        assert grid.storage_index == layout.element_offset(lay, index)
        assert grid.byte_address == layout.byte_address(lay, index, base or 0)
        assert grid.text_for == "element:" + ",".join(map(str, index))


def test_select_helper_and_negative_indices():
    grid = AddressGrid(X.t())
    assert grid.select(1, 2) == layout.address_formula(layout.of(X.t()), (1, 2))
    grid.selected = [-1, -1]
    assert grid.selected == [3, 2]


def test_address_text_names_offset_strides_itemsize_and_byte_address():
    grid = AddressGrid(layout.check((3, 4), (1, 3), offset=2, itemsize=8, storage_size=14))
    grid.selected = [1, 2]
    # offset 2 + 1*1 + 2*3 = 9 -> 72 bytes
    assert grid.address_text == "base + 8 B × (offset 2 + 1×1 + 2×3) = base + 8 B × 9 = base + 72 B"


@pytest.mark.parametrize("name", ["broadcast", "windows", "transpose", "slice_with_offset"])
def test_selecting_a_storage_cell_lists_every_element_that_reads_it(name):
    t = VIEWS[name]
    grid = AddressGrid(t)
    offsets = layout.element_offsets(layout.of(t))
    for cell in range(grid.storage_size):
        grid.selected_cell = cell
        expected = [tuple(int(i) for i in idx) for idx in np.argwhere(offsets == cell)]
        assert grid.elements_at(cell) == expected
        assert grid.selected == []
        assert grid.text_for == f"cell:{cell}"
        if expected:
            assert f"{len(expected)} element" in grid.cell_text
        else:
            assert "unused" in grid.cell_text


def test_selecting_an_element_clears_the_cell_selection():
    grid = AddressGrid(X)
    grid.selected_cell = 3
    grid.selected = [0, 1]
    assert grid.selected_cell == -1 and grid.cell_text == ""


BAD_VALUES = [
    ("stride", [4, -1], "negative"),
    ("stride", [4], "2 dimensions but stride"),
    ("shape", [3, 2.5], "must be an integer"),
    ("shape", [3, -4], "negative"),
    ("offset", 100, "storage holds only 12"),
    ("offset", -1, "negative"),
    ("stride", [40, 1], "storage holds only 12"),
    ("itemsize", 0, "positive"),
    ("storage_size", 5, "storage holds only 5"),
    ("shape", [1, 1, 1, 1, 1], "up to 4"),
    ("selected", [3, 0], "out of range"),
    ("selected", [1], "1 entries"),
    ("selected_cell", 12, "outside the storage"),
    ("base", -8, "negative"),
]


@pytest.mark.parametrize(("name", "value", "message"), BAD_VALUES)
def test_validators_refuse_bad_values_with_a_clear_message(name, value, message):
    grid = AddressGrid(X)
    before = (grid.shape, grid.stride, grid.offset, grid.itemsize, grid.storage_size,
              grid._view)
    with pytest.raises(traitlets.TraitError, match=message):
        setattr(grid, name, value)
    assert (grid.shape, grid.stride, grid.offset, grid.itemsize, grid.storage_size,
            grid._view) == before
    assert grid.layout == layout.of(X)


def test_non_integer_strings_are_refused():
    grid = AddressGrid(X)
    with pytest.raises(traitlets.TraitError, match="integer"):
        grid.stride = ["4", "1"]


def test_several_traits_change_together_or_not_at_all():
    grid = AddressGrid(X)
    with grid.hold_trait_notifications():
        grid.shape = [12]
        grid.stride = [1]
    assert grid.kind == "contiguous" and grid._view["shape"] == [12]
    with pytest.raises(traitlets.TraitError, match="storage holds only 12"), \
            grid.hold_trait_notifications():
        grid.shape = [13]
        grid.stride = [1]
    assert grid.shape == [12] and grid.stride == [1]


def test_show_switches_dimensions_atomically():
    grid = AddressGrid(X)
    grid.selected = [2, 3]
    grid.show(torch.arange(5))
    assert grid.shape == [5] and grid.selected == [] and grid.address_text == ""
    grid.show(VIEWS["channels_last"])
    assert "channels_last" in grid._view["flags"]


def test_bad_objects_are_refused():
    with pytest.raises(TypeError, match="torch.Tensor or a labkit.core.layout.Layout"):
        AddressGrid([[1, 2], [3, 4]])
    with pytest.raises(TypeError, match="strided"):
        AddressGrid(torch.eye(3).to_sparse())


def test_storage_values_are_shown_for_small_tensors():
    grid = AddressGrid(torch.tensor([[1.5, 2.0], [3.25, 4.0]]).t())
    assert grid._view["storage_values"] == ["1.5", "2", "3.25", "4"]
    assert AddressGrid(layout.check((2, 2), (2, 1)))._view["storage_values"] == []


def test_beyond_4096_elements_a_summary_is_drawn_and_says_why():
    grid = AddressGrid(torch.zeros(100, 100))
    assert grid._view["drawn"] is False
    assert "10000 elements" in grid._view["reason"] and "4096" in grid._view["reason"]
    assert grid._view["element_offsets"] == []
    grid.selected = [99, 99]
    assert grid.address_text == layout.address_formula(layout.of(torch.zeros(100, 100)), (99, 99))
    assert AddressGrid(torch.zeros(64, 64))._view["drawn"] is True


def test_long_storage_draws_only_the_range_the_elements_use():
    t = torch.arange(10_000)[5000:5010]
    grid = AddressGrid(t)
    assert (grid._view["strip_start"], grid._view["strip_stop"]) == (5000, 5010)


def test_gaps_and_offsets_are_in_the_drawing_data():
    t = VIEWS["slice_with_offset"]
    grid = AddressGrid(t)
    assert grid.kind == "gaps"
    assert "offset" in grid._view["flags"]
    assert grid._view["offset"] == t.storage_offset()


def test_scalar_and_empty_tensors():
    scalar = AddressGrid(torch.tensor(7))
    assert scalar.address_text == layout.address_formula(layout.of(torch.tensor(7)), ())
    empty = AddressGrid(torch.zeros(0, 3))
    assert empty.kind == "empty" and empty.address_text == ""


def test_text_repr_is_deterministic_and_has_no_addresses():
    text = repr(AddressGrid(X.t(), base=0x7F0012345000))
    assert text == ("AddressGrid: shape (4, 3), stride (1, 4), offset 0, itemsize 8 B, "
                    "storage 12 elements -- permuted")
    assert "0x" not in text
    assert repr(AddressGrid(X.t())) == text


def test_js_and_css_ship_beside_the_modules():
    here = pathlib.Path(AddressGrid.__module__.replace(".", "/")).parent
    for name in ("address_grid.js", "stride_explorer.js", "quiz.js", "widgets.css"):
        assert (ROOT / here / name).is_file()
    grid = AddressGrid(X)
    assert "export default" in grid._esm and "mountGrid" in grid._esm
    assert "http" not in grid._esm.replace("http://www.w3.org/2000/svg", "")  # no CDN imports


# --------------------------------------------------------------------------- StrideExplorer
DOCUMENTED_PRESETS_12 = {
    "contiguous": ((3, 4), (4, 1), "contiguous"),
    "transpose": ((4, 3), (1, 4), "permuted"),
    "broadcast_row": ((3, 4), (0, 1), "broadcast"),
    "sliding_window": ((5, 4), (2, 1), "overlapping"),
    "diagonal": ((3,), (4,), "gaps"),
    "channels_last": ((1, 3, 2, 2), (12, 1, 6, 3), None),
}


@pytest.mark.parametrize("name", DOCUMENTED_PRESETS_12)
def test_presets_produce_the_documented_strides(name):
    shape, stride, kind = DOCUMENTED_PRESETS_12[name]
    explorer = StrideExplorer(storage_size=12)
    assert explorer.apply_preset(name) is True
    assert (tuple(explorer.shape), tuple(explorer.stride), explorer.offset) == (shape, stride, 0)
    assert explorer.preset == name and explorer.error == ""
    lay = explorer.layout
    if kind:
        assert layout.classify(lay).kind == kind
    else:
        assert layout.is_contiguous(lay, "channels_last")
        assert not layout.is_contiguous(lay)


def test_channels_last_preset_matches_torch():
    shape, stride, _ = DOCUMENTED_PRESETS_12["channels_last"]
    real = torch.empty(shape).contiguous(memory_format=torch.channels_last)
    assert tuple(real.stride()) == stride


@pytest.mark.parametrize("size", range(1, 65))
def test_every_preset_fits_its_storage(size):
    for preset in presets(size).values():
        layout.check(preset.shape, preset.stride, preset.offset, 4, size)
    assert "contiguous" in presets(size)


def test_explorer_starts_contiguous_over_arange_storage():
    explorer = StrideExplorer(storage_size=12)
    assert explorer.preset == "contiguous"
    assert explorer._view["storage_values"] == [str(i) for i in range(12)]
    assert [p["name"] for p in explorer.presets] == list(DOCUMENTED_PRESETS_12)


def test_valid_proposal_is_applied():
    explorer = StrideExplorer(storage_size=12)
    assert explorer.propose("(4, 3)", "[1 4]", "0") is True
    assert explorer.layout == layout.check((4, 3), (1, 4), 0, 4, 12)
    assert explorer._view["element_offsets"] == layout.element_offsets(explorer.layout).ravel().tolist()
    assert explorer.error == "" and explorer.preset == ""


@pytest.mark.parametrize(("shape", "stride", "offset", "message"), [
    ("3, 4", "4, 5", "0", "storage holds only 12"),
    ("3, 4", "4, 1", "1", "storage holds only 12"),
    ("3, x", "4, 1", "0", "'x' is not a whole number"),
    ("3, 4", "4, -1", "0", "negative"),
    ("3, 4", "4", "0", "2 dimensions but stride"),
    ("3, 4", "4, 1", "-2", "negative"),
    ("3, 4", "4, 1", "two", "not a whole number"),
    ("1, 1, 1, 1, 1", "1, 1, 1, 1, 1", "0", "up to 4"),
    ("3.5, 4", "4, 1", "0", "not a whole number"),
])
def test_invalid_proposal_sets_error_and_keeps_last_valid_layout(shape, stride, offset, message):
    explorer = StrideExplorer(storage_size=12)
    explorer.apply_preset("transpose")
    before = explorer.layout, dict(explorer._view)
    assert explorer.propose(shape, stride, offset) is False
    assert message in explorer.error
    assert (explorer.layout, explorer._view) == before
    assert explorer.propose("2, 2", "1, 2", "0") is True
    assert explorer.error == ""


def test_proposal_trait_is_what_the_browser_writes():
    explorer = StrideExplorer(storage_size=12)
    explorer.proposal = {"shape": "2, 3", "stride": "3, 1", "offset": "6", "seq": 1}
    assert explorer.layout == layout.check((2, 3), (3, 1), 6, 4, 12)
    explorer.proposal = {"shape": "2, 3", "stride": "3, 1", "offset": "7", "seq": 2}
    assert "storage holds only 12" in explorer.error and explorer.offset == 6
    explorer.proposal = {"preset": "diagonal", "seq": 3}
    assert explorer.shape == [3] and explorer.stride == [4] and explorer.error == ""
    explorer.proposal = {"preset": "spiral", "seq": 4}
    assert "no preset 'spiral'" in explorer.error and explorer.shape == [3]


def test_explorer_storage_size_is_fixed():
    explorer = StrideExplorer(storage_size=12)
    with pytest.raises(traitlets.TraitError, match="fixed at construction"):
        explorer.storage_size = 24
    for bad in (0, -3, 2.5, 5000, "12"):
        with pytest.raises(traitlets.TraitError, match="storage_size must be"):
            StrideExplorer(storage_size=bad)


def test_explorer_can_start_on_any_valid_layout_and_refuses_invalid_ones():
    explorer = StrideExplorer(storage_size=10, shape=(2, 2), stride=(1, 2), offset=3)
    assert explorer.layout == layout.check((2, 2), (1, 2), 3, 4, 10) and explorer.preset == ""
    with pytest.raises(traitlets.TraitError, match="storage holds only 10"):
        StrideExplorer(storage_size=10, shape=(4, 4), stride=(4, 1))
    assert repr(explorer).startswith("StrideExplorer over shape (2, 2), stride (1, 2), offset 3")


# --------------------------------------------------------------------------- Quiz
def test_choice_quiz_grades_against_the_computed_answer():
    calls = []

    def answer():
        calls.append(1)
        return tuple(X.t().stride())

    quiz = Quiz("Strides of x.t()?", choices=["(4, 1)", "(1, 4)"], answer=answer)
    assert quiz.kind == "choice"
    assert quiz.computed == "" and calls == []  # nothing computed before the learner answers
    assert quiz.submit("(4, 1)") is False
    assert quiz.computed == "(1, 4)" and "Not quite" in quiz.feedback
    assert quiz.submit("(1, 4)") is True and quiz.correct is True
    assert calls == [1]  # computed once, then the same answer is used
    assert quiz.attempts == 2


def test_choice_quiz_response_must_be_a_choice():
    quiz = Quiz("?", choices=["a", "b"], answer="a")
    assert quiz.submit("") is None and "pick one" in quiz.error and quiz.correct is None
    assert quiz.submit("c") is None
    assert quiz.submit("a") is True and quiz.error == ""


def test_choice_quiz_whose_answer_is_no_choice_says_so():
    quiz = Quiz("?", choices=["a", "b"], answer=lambda: "z")
    assert quiz.submit("a") is None
    assert "the code computed 'z', which is none of the choices" in quiz.error


@pytest.mark.parametrize(("response", "right"), [
    ("2", True), ("2.19", True), ("1.81", True), ("2.3", False), ("1.7", False), ("2e0", True),
])
def test_numeric_quiz_uses_relative_tolerance(response, right):
    quiz = Quiz("Speed-up?", answer=lambda: 2.0, rel_tol=0.1, unit="x")
    assert quiz.submit(response) is right
    assert quiz.computed == "2 x"
    assert "10%" in quiz.tolerance_text


def test_numeric_quiz_absolute_tolerance_and_exact_default():
    assert Quiz("n?", answer=48, abs_tol=2).submit("46.5") is True
    assert Quiz("n?", answer=48).submit("48") is True
    assert Quiz("n?", answer=48).submit("47.9") is False


@pytest.mark.parametrize("response", ["", "abc", "1,5", "12 MB", "--3"])
def test_numeric_quiz_refuses_non_numbers(response):
    quiz = Quiz("n?", answer=48)
    assert quiz.submit(response) is None
    assert quiz.error and quiz.correct is None and quiz.attempts == 0


def test_sequence_quiz():
    quiz = Quiz("Strides of x.permute(0, 2, 1)?",
                answer=lambda: torch.zeros(2, 3, 4).permute(0, 2, 1).stride())
    assert quiz.kind == "number"  # a callable's result is unknown before it runs...
    quiz = Quiz("Strides?", kind="sequence",
                answer=lambda: torch.zeros(2, 3, 4).permute(0, 2, 1).stride())
    assert quiz.submit("12, 1, 4") is True and quiz.computed == "(12, 1, 4)"
    assert quiz.submit("[12 4 1]") is False
    assert quiz.submit("12, x") is None and "whole numbers" in quiz.error
    assert Quiz("s?", answer=(1, 4)).kind == "sequence"  # ...a value's kind is inferred


def test_a_raising_answer_shows_its_error_and_the_kernel_carries_on():
    attempts = []

    def flaky():
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("CUDA is not available")
        return 3

    quiz = Quiz("n?", answer=flaky)
    assert quiz.submit("3") is None
    assert quiz.error == "the code that computes the answer raised RuntimeError: CUDA is not available"
    assert quiz.correct is None and quiz.computed == ""
    assert quiz.submit("3") is True and quiz.error == ""  # retried after a failure


def test_an_answer_measured_below_says_not_graded_yet_and_grades_once_it_is():
    """A quiz answered before the cell that measures its answer has run: the learner did what
    the quiz asks, so it reads 'not graded yet' and what to run, not that the code raised."""
    from labkit.show.widgets.quiz import NotYetMeasured

    measured: list[int] = []

    def answer() -> int:
        if not measured:
            raise NotYetMeasured("run the sweep cell below first, then submit again")
        return measured[0]

    quiz = Quiz("n?", answer=answer)
    assert quiz.submit("3") is None
    assert quiz.error == ("not graded yet: run the sweep cell below first, then submit again; "
                          "your prediction stays here.")
    assert "raised" not in quiz.error and quiz.correct is None
    measured.append(3)
    assert quiz.submit("3") is True and quiz.error == ""


def test_submission_trait_is_what_the_browser_writes():
    quiz = Quiz("n?", answer=lambda: 1 / 0)
    quiz.submission = {"response": "1", "seq": 1}
    assert "ZeroDivisionError" in quiz.error and quiz.handled == 1
    quiz.submission = {"response": "1", "seq": 2}
    assert quiz.handled == 2  # the same outcome again still tells the browser it is done


def test_quiz_construction_errors():
    with pytest.raises(traitlets.TraitError, match="give the answer"):
        Quiz("n?")
    with pytest.raises(traitlets.TraitError, match="at least two choices"):
        Quiz("n?", choices=["only"], answer="only")
    with pytest.raises(traitlets.TraitError, match="only for kind='choice'"):
        Quiz("n?", choices=["a", "b"], answer="a", kind="number")
    with pytest.raises(traitlets.TraitError, match="non-empty"):
        Quiz("  ", answer=1)
    with pytest.raises(traitlets.TraitError, match=">= 0"):
        Quiz("n?", answer=1, rel_tol=-0.1)


def test_quiz_repr_never_reveals_the_answer():
    quiz = Quiz("Strides of x.t()?", choices=["(4, 1)", "(1, 4)"], answer="(1, 4)")
    assert repr(quiz) == "Quiz: Strides of x.t()? [choices: (4, 1) | (1, 4)]"
    assert repr(Quiz("Bytes?", answer=48, unit="B")) == "Quiz: Bytes? [answer: a number (B)]"
