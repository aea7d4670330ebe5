"""A saved page's address grid outlines the element its text says is selected, and the
storage cell that element reads (as the live widget does), and shows the formula."""

from __future__ import annotations

import re

import torch

from labkit.show.widgets import AddressGrid
from labkit.show.widgets.static_svg import SELECTED

LABELLED = re.compile(r"<rect ([^>]*)/>(?:<text [^>]*>([^<]*)</text>)?")


def outlined(svg: str) -> list[str]:
    """The label drawn in each outlined rectangle."""
    return [label for attrs, label in LABELLED.findall(svg) if SELECTED in attrs]


def test_the_selected_element_and_its_storage_cell_are_outlined():
    x = torch.arange(12).reshape(3, 4)
    grid = AddressGrid(x.t())
    grid.selected = [1, 2]  # xt[1, 2] is x[2, 1]: storage cell 9
    svg = grid.static_svg()
    assert outlined(svg) == ["9", "9"], outlined(svg)
    assert grid.address_text and grid.address_text.split(" = ")[0][:20] in svg


def test_nothing_is_outlined_without_a_selection():
    grid = AddressGrid(torch.arange(12).reshape(3, 4))
    assert outlined(grid.static_svg()) == []
