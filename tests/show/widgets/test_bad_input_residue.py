"""AddressGrid.elements_at refuses what is not a storage cell instead of answering [] (issue 26)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.core import layout
from labkit.show import widgets
from tests.hypothesis_profiles import examples


@pytest.mark.parametrize("cell", ["a", None, 2.5, True, False, np.bool_(True), b"\x01", [1], -1])
def test_elements_at_refuses_what_is_not_a_cell(cell):
    grid = widgets.AddressGrid(torch.arange(12).reshape(3, 4))
    with pytest.raises(layout.LayoutError, match="cell"):
        grid.elements_at(cell)


@settings(max_examples=examples(50), deadline=None)
@given(st.integers(0, 30))
def test_elements_at_a_whole_number_lists_the_elements_there(cell):
    t = torch.arange(12).reshape(3, 4).t()
    grid = widgets.AddressGrid(t)
    expected = [idx for idx in np.ndindex(*t.shape) if layout.element_offset(t, idx) == cell]
    assert grid.elements_at(cell) == expected
    assert grid.elements_at(np.int64(cell)) == expected
