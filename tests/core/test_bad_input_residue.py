"""What the fuzzer still let through (issue 26): each gets the documented LayoutError, or
labkit agrees with torch."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.core import layout
from tests.hypothesis_profiles import examples

LAY = layout.check((3, 4), (4, 1))
INT64_MAX = 2**63 - 1


@pytest.mark.parametrize("memory_format", [np.array(["channels_last"]), np.array([1, 2]),
                                           np.array("channels_last"), b"channels_last", None, 3])
def test_a_memory_format_that_is_not_a_name_is_a_layout_error(memory_format):
    with pytest.raises(layout.LayoutError, match="memory_format"):
        layout.is_contiguous(LAY, memory_format)


@pytest.mark.parametrize("index", [b"\x01\x02", b"\x01", bytearray(b"\x01\x02"), "12", np.array([[1, 2]]),
                                   np.array(1.5), np.array([1.0, 2.0])])
def test_bytes_strings_and_non_integer_arrays_are_not_indices(index):
    with pytest.raises(layout.LayoutError, match="index"):
        layout.element_offset(LAY, index)


def test_a_numpy_index_reads_like_the_same_numbers():
    assert layout.element_offset(LAY, np.array([1, 2])) == layout.element_offset(LAY, (1, 2)) == 6
    assert layout.element_offset(layout.check((5,), (3,)), np.array(2)) == 6  # a 0-d array


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=3).filter(lambda s: 0 in s), st.data())
def test_an_empty_tensor_at_the_int64_limits_agrees_with_torch(shape, data):
    """torch's as_strided builds an empty tensor with any int64 offset and strides; so does labkit."""
    edge = st.sampled_from([0, 1, 2**62 - 1, 2**62, 2**62 + 5, INT64_MAX])
    stride = data.draw(st.lists(edge, min_size=len(shape), max_size=len(shape)))
    offset = data.draw(edge)
    t = torch.empty(0).as_strided(shape, stride, offset)
    lay = layout.of(t)
    assert (lay.shape, lay.stride, lay.offset) == (tuple(shape), tuple(stride), offset)
    assert layout.is_contiguous(lay) == t.is_contiguous()
    layout.classify(lay)


def test_a_non_empty_layout_beyond_2_62_is_still_refused():
    with pytest.raises(layout.LayoutError, match="2\\*\\*62"):
        layout.check((1,), (1,), 2**62 + 5)
    with pytest.raises(layout.LayoutError, match="int64"):
        layout.check((0,), (1,), 2**63)
