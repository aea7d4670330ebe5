"""Review 2026-12-06z 00-02 item 7: 01's takeaways mention the optional tour and C8c only where
those sections ran, labelled (the check that no core cell reads an optional-only name is
tests/notebooks/test_optional_names.py, for every chapter)."""

from labkit.chapters.ch01_strides_and_views import views
from labkit.show.table import Table


def test_the_optional_lines_are_labelled_and_absent_without_their_sections():
    assert views.tour_aside(None) == ""
    tour = Table("", ["view", "copied", "shares storage"])
    tour.add("a", 0, True)
    tour.add("b", 0, True)
    assert views.tour_aside(tour) == " (the optional tour: 2 of 2 views share the storage, 0 bytes copied)"
