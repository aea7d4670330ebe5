"""Chapter 01's cases and tables (labkit/chapters/ch01_strides_and_views/views.py), which left
the notebook: each table says what was measured, and each probe can fail."""

import pytest
import torch

from labkit.chapters.ch01_strides_and_views import views


def test_address_check_places_every_element_with_the_full_byte_formula():
    count, in_elements, in_bytes, full = views.address_check(torch.float32)
    assert count > 0 and in_elements == 0 and full == 0
    assert in_bytes > 0  # read as bytes, the seed's formula misses for a 4-byte dtype
    assert views.address_check(torch.int8)[2] == 0  # ... and is right for 1-byte int8


def test_address_table_rows_and_note():
    rows = {"int8": (10, 0, 0, 0), "float32": (10, 0, 7, 0)}
    shown = views.address_table(rows)
    assert shown.column("read as bytes") == [0, 7]
    assert "0" in shown.notes[0]


def test_views_of_refuses_a_short_storage():
    with pytest.raises(ValueError, match="at least 24"):
        views.views_of(torch.arange(10))


def test_tour_counts_copies_and_shared_storage():
    storage = torch.arange(24.0)
    shown = views.tour({"view": lambda s: s.view(4, 6), "clone": lambda s: s.view(4, 6).clone()}, storage)
    assert shown.column("shares storage") == [True, False]
    assert shown.column("copied") == [0, 96]
    assert shown.column("kind")[0] == "contiguous"


def test_view_attempts_agree_with_can_view():
    y = torch.randn(2, 3, 4).transpose(0, 1)
    shown = views.view_attempts(y, [(-1, 4), (3, 2, 2, 2)])
    assert shown.column("as predicted") == [True, True]
    assert shown.column("layout.can_view predicted") == ["failure", "ok"]
    assert views.try_view(y, (-1, 4))[:2] == (False, "RuntimeError")


def test_quiz_answers_are_computed():
    assert views.broadcast_result((2, 4), (3, 1)) == "an error"
    assert views.broadcast_result((1, 4), (3, 1)) == "(3, 4)"
    assert views.raised_by(lambda: torch.randn(2, 3).permute(0, 0)) == "RuntimeError"
    assert views.raised_by(lambda: None) == "nothing: it works"


def test_broadcast_cases_record_the_error_text():
    cases = views.broadcast_cases([((2, 4), (3, 1), "error", "")])
    assert cases[0]["observed"] == "error" and "must match" in cases[0]["message"]


@pytest.mark.parametrize(("worked", "answer"), [(0, "none"), (1, "some"), (2, "all of them")])
def test_captured_correctly(worked, answer):
    tools = {f"t{k}": {"available": True, "ok": k < worked, "matches_eager": k < worked} for k in range(2)}
    tools["absent"] = {"available": False, "ok": False, "matches_eager": False}
    assert views.captured_correctly(tools) == answer


def test_capture_table_folds_warnings():
    tools = {"a": {"ok": True, "matches_eager": True, "matches_eager_longer_input": False, "error": "",
                   "warnings": ["careful"]}}
    shown = views.capture_table(tools)
    assert shown.column("longer input") == [False]
    assert shown.folded and "a: careful" in shown.folded[0][1]
