"""labkit.core.layout under any input: agreement with torch, or a documented LayoutError/TypeError.

Issue 9's classes: view error texts (negative sizes, overflowing products on empty
tensors), numbers at the int64 limits, tensor kinds labkit does not draw, and pathological
sizes (a million dimensions), each with random and edge inputs.
"""

import time
import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.core import layout
from labkit.show import figures, widgets
from tests.hypothesis_profiles import examples

EDGE = [0, 1, 2, 3, 2**31, 2**61, 2**62 - 1, 2**62, 2**62 + 3, 2**63 - 1]
BEYOND = [2**63, 2**64, 10**30, -(2**63) - 1]

target_entries = st.one_of(st.integers(-3, 6), st.sampled_from(EDGE))


def torch_view(t, shape):
    try:
        return True, tuple(t.view(shape).stride())
    except RuntimeError as err:
        return False, str(err).splitlines()[0]


@st.composite
def small_tensors(draw):
    shape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=3))
    t = torch.empty(shape)
    if len(shape) >= 2 and draw(st.booleans()):
        t = t.transpose(0, 1)
    return t


@pytest.mark.slow
@settings(max_examples=examples(600), deadline=None)
@given(small_tensors(), st.lists(target_entries, min_size=0, max_size=4))
def test_can_view_gives_torchs_answer_and_text(t, target):
    ok, expected = torch_view(t, target)
    got = layout.can_view(t, target)
    assert got.ok == ok
    assert (got.stride if ok else got.reason) == expected


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=3).filter(lambda s: 0 in s),
       st.lists(st.sampled_from([0, 1, 2, 5, 2**32, 2**61, 2**62, 2**63 - 1, -1]),
                min_size=1, max_size=4))
def test_overflowing_products_on_empty_tensors_match_torch(shape, target):
    t = torch.empty(shape)
    ok, expected = torch_view(t, target)
    got = layout.can_view(t, target)
    assert (got.ok, got.stride if ok else got.reason) == (ok, expected)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(EDGE + BEYOND), min_size=0, max_size=3), st.data())
def test_every_number_at_the_int64_limits_is_accepted_or_refused_never_crashes(shape, data):
    ndim = len(shape)
    stride = data.draw(st.lists(st.sampled_from(EDGE + BEYOND), min_size=ndim, max_size=ndim))
    offset = data.draw(st.sampled_from(EDGE + BEYOND))
    itemsize = data.draw(st.sampled_from([1, 4, 16, 64, 65, 2**62, 2**63]))
    storage = data.draw(st.sampled_from([None, 0, 12, 2**62, 2**63, 2**64]))
    try:
        lay = layout.check(shape, stride, offset, itemsize, storage)
    except layout.LayoutError as err:
        assert str(err)  # a message that says what to fix
        return
    assert all(0 <= v < 2**63 for v in (*lay.shape, *lay.stride, lay.offset))
    assert lay.itemsize <= layout.MAX_ITEMSIZE
    assert lay.numel == 0 or lay.max_index <= layout.MAX_INDEX  # an empty tensor reaches nothing
    layout.classify(lay)          # no OverflowError, no numpy error
    layout.is_contiguous(lay)
    layout.overlaps(lay)
    if 0 < lay.numel <= 4096:
        layout.element_offsets(lay)
    elif lay.numel == 0:
        try:
            assert layout.element_offsets(lay).size == 0
        except layout.LayoutError as err:
            assert "numpy cannot hold" in str(err)
    if lay.numel:
        index = tuple(n - 1 for n in lay.shape)
        assert layout.byte_address(lay, index) == lay.itemsize * layout.element_offset(lay, index)


@pytest.mark.parametrize("field", ["shape", "stride", "offset", "itemsize", "storage_size"])
@pytest.mark.parametrize("value", [2**63, 2**64, 10**30])
def test_each_number_beyond_int64_names_itself(field, value):
    args = {"shape": (1,), "stride": (1,), "offset": 0, "itemsize": 4, "storage_size": None}
    args[field] = (value,) if field in ("shape", "stride") else value
    with pytest.raises(layout.LayoutError, match=field):
        layout.check(**args)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(EDGE + BEYOND), min_size=1, max_size=2), st.data())
def test_safe_as_strided_refuses_or_agrees_with_torch(size, data):
    stride = data.draw(st.lists(st.sampled_from(EDGE + BEYOND), min_size=len(size),
                                max_size=len(size)))
    offset = data.draw(st.sampled_from([0, 1, 2**62, 2**63]))
    base = torch.arange(16.0)
    try:
        view = layout.safe_as_strided(base, size, stride, offset)
    except layout.LayoutError as err:
        assert "as_strided refused" in str(err)
        return
    assert view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert layout.of(view).max_index < 16 or view.numel() == 0


def _odd_tensors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield "sparse COO", torch.eye(3).to_sparse()
        yield "sparse CSR", torch.eye(3).to_sparse_csr()
        yield "nested", torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
        yield "quantized", torch.quantize_per_tensor(torch.rand(4), 0.1, 0, torch.quint8)
        yield "meta", torch.empty(3, 4, device="meta")


ENTRY_POINTS = {
    "of": layout.of,
    "classify": layout.classify,
    "element_offsets": layout.element_offsets,
    "addresses": layout.addresses,
    "is_contiguous": layout.is_contiguous,
    "can_view": lambda t: layout.can_view(t, (-1,)),
    "element_offset": lambda t: layout.element_offset(t, (0,) * t.dim()),
    "safe_as_strided": lambda t: layout.safe_as_strided(t, (1,), (1,)),
    "figures.grid_and_strip": figures.grid_and_strip,
    "widgets.AddressGrid": widgets.AddressGrid,
}


@pytest.mark.parametrize("kind, tensor", list(_odd_tensors()))
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_tensor_kinds_labkit_does_not_draw_are_refused_saying_what_works(kind, tensor, entry):
    with pytest.raises((layout.LayoutError, TypeError)) as info:
        ENTRY_POINTS[entry](tensor)
    assert "dense (strided)" in str(info.value)


@pytest.mark.parametrize("entry", ["of", "classify", "element_offsets", "can_view"])
@pytest.mark.parametrize("thing", [3, "x", None, [1, 2], b"t"])
def test_things_that_are_not_tensors_are_a_type_error_and_a_layout_error(entry, thing):
    with pytest.raises(layout.NotALayoutError) as info:
        ENTRY_POINTS[entry](thing)
    assert isinstance(info.value, TypeError) and isinstance(info.value, layout.LayoutError)


def test_a_million_dimensions_are_refused_at_once():
    million = [1] * 1_000_000
    started = time.perf_counter()
    with pytest.raises(layout.LayoutError, match="up to 64 dimensions"):
        layout.check(million, million)
    with pytest.raises(layout.LayoutError, match="up to 64 dimensions"):
        layout.can_view(torch.ones(1), million)
    with pytest.raises(layout.LayoutError, match="up to 64 dimensions"):
        layout.element_offset(layout.check((1,), (1,)), million)
    assert time.perf_counter() - started < 1.0


def test_sixty_four_dimensions_still_work_like_torch():
    t = torch.ones([1] * 64)
    assert layout.can_view(t, [1] * 64).stride == t.view([1] * 64).stride()
    assert layout.element_offsets(t).shape == (1,) * 64
