"""labkit.core.layout checked against what torch itself does, over thousands of random layouts."""

import math
import random

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.core import layout
from tests.hypothesis_profiles import examples

FORMATS = {
    "contiguous_format": torch.contiguous_format,
    "channels_last": torch.channels_last,
    "channels_last_3d": torch.channels_last_3d,
}


@st.composite
def layouts(draw, max_ndim=5, max_size=5):
    """Random (shape, stride, offset): arbitrary strides, or dense ones in a random or
    channels_last order, sometimes spread out (gaps) or with junk strides on size-1 dims."""
    ndim = draw(st.sampled_from([n for n in (0, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5) if n <= max_ndim]))
    smallest = 0 if draw(st.integers(0, 9)) == 0 else 1  # empty tensors about 1 time in 10
    shape = draw(st.lists(st.integers(smallest, max_size), min_size=ndim, max_size=ndim))
    how = draw(st.sampled_from(["random", "dense", "dense", "channels_last"]))
    if how == "random":
        stride = draw(st.lists(st.integers(0, 30), min_size=ndim, max_size=ndim))
    else:
        if how == "channels_last" and ndim in (4, 5):
            order = [0, *range(2, ndim), 1]  # slowest to fastest: N, (D,) H, W, C
        else:
            order = draw(st.permutations(range(ndim)))
        spread = draw(st.sampled_from([1, 1, 1, 2, 3]))
        stride = [0] * ndim
        running = 1
        for d in reversed(order):
            stride[d] = running * spread
            running *= max(shape[d], 1)
        for d in range(ndim):
            if shape[d] == 1 and draw(st.booleans()):
                stride[d] = draw(st.integers(0, 50))
    offset = draw(st.integers(0, 10))
    return tuple(shape), tuple(stride), offset


def strided_on_arange(shape, stride, offset, dtype=torch.int64, extra=0):
    """A torch view with exactly this layout over a storage holding 0, 1, 2, ..."""
    lay = layout.check(shape, stride, offset)
    storage = torch.arange(max(lay.max_index + 1, offset) + extra).to(dtype)
    return torch.as_strided(storage, shape, stride, offset)


@pytest.mark.slow
@settings(max_examples=examples(1000), deadline=None)
@given(layouts())
def test_element_offsets_match_torch_as_strided(params):
    shape, stride, offset = params
    view = strided_on_arange(shape, stride, offset)
    got = layout.element_offsets(layout.check(shape, stride, offset))
    assert got.dtype == np.int64 and got.shape == tuple(shape)
    np.testing.assert_array_equal(got, view.numpy())


@pytest.mark.slow
@settings(max_examples=examples(1000), deadline=None)
@given(layouts(), st.sampled_from([torch.int8, torch.float16, torch.float32, torch.float64]),
       st.data())
def test_byte_addresses_match_data_ptr(params, dtype, data):
    shape, stride, offset = params
    view = strided_on_arange(shape, stride, offset, dtype)
    lay = layout.of(view)
    assert lay.itemsize == view.element_size()
    if view.numel() == 0:
        assert layout.addresses(view).size == 0
        return
    index = tuple(data.draw(st.integers(0, n - 1)) for n in shape)
    base = view.untyped_storage().data_ptr()
    expected = view[index].data_ptr() if shape else view.data_ptr()
    assert layout.byte_address(lay, index, base=base) == expected
    assert layout.addresses(view)[index] == expected
    assert layout.address_formula(lay, index, base=base).endswith(hex(expected))


@pytest.mark.slow
@settings(max_examples=examples(1000), deadline=None)
@given(layouts(), st.sampled_from(sorted(FORMATS)))
def test_is_contiguous_matches_torch_per_memory_format(params, fmt):
    shape, stride, offset = params
    view = strided_on_arange(shape, stride, offset)
    lay = layout.of(view)
    assert layout.is_contiguous(lay, fmt) == view.is_contiguous(memory_format=FORMATS[fmt])
    assert layout.is_contiguous(lay, FORMATS[fmt]) == view.is_contiguous(memory_format=FORMATS[fmt])


@st.composite
def new_shapes(draw, numel):
    """Mostly shapes with the right element count (factorisations), sometimes with -1 or wrong."""
    kind = draw(st.sampled_from(["factor", "factor", "factor", "infer", "random"]))
    if kind == "random" or numel == 0:
        return tuple(draw(st.lists(st.integers(-2, 6), max_size=5)))
    factors = [p for p in _prime_factors(numel)] + [1] * draw(st.integers(0, 2))
    rng = random.Random(draw(st.integers(0, 10**6)))
    rng.shuffle(factors)
    ndim = draw(st.integers(1, max(1, min(5, len(factors)))))
    dims = [1] * ndim
    for f in factors:
        dims[rng.randrange(ndim)] *= f
    if kind == "infer":
        dims[draw(st.integers(0, ndim - 1))] = -1
    return tuple(dims)


def _prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@pytest.mark.slow
@settings(max_examples=examples(1000), deadline=None)
@given(layouts(), st.data())
def test_can_view_matches_tensor_view(params, data):
    shape, stride, offset = params
    view = strided_on_arange(shape, stride, offset)
    new_shape = data.draw(new_shapes(view.numel()))
    check = layout.can_view(layout.of(view), new_shape)
    try:
        result = view.view(new_shape)
    except RuntimeError as err:
        assert not check.ok, f"torch refused: {err}"
        assert check.reason and check.stride is None
        assert check.reason.split(" (")[0] in str(err) or check.reason in str(err)
        return
    assert check.ok, check.reason
    assert check.stride == result.stride()
    assert check.shape == tuple(result.shape)


@pytest.mark.slow
@settings(max_examples=examples(1000), deadline=None)
@given(layouts(), st.integers(0, 40))
def test_safe_as_strided_refuses_exactly_when_torch_bounds_fail(params, storage_elements):
    shape, stride, offset = params
    base = torch.zeros(storage_elements, dtype=torch.float32)
    try:
        expected = torch.as_strided(base, shape, stride, offset)
    except RuntimeError:
        with pytest.raises(layout.LayoutError, match="storage holds only"):
            layout.safe_as_strided(base, shape, stride, offset)
        return
    got = layout.safe_as_strided(base, shape, stride, offset)
    assert got.stride() == expected.stride() and got.shape == expected.shape
    assert got.storage_offset() == expected.storage_offset()


@pytest.mark.parametrize(
    "shape, stride, offset, itemsize, storage_size, message",
    [
        ((2, -1), (1, 1), 0, 4, None, "shape\\[1\\] = -1 is negative"),
        ((2, 2), (1, -3), 0, 4, None, "stride\\[1\\] = -3 is negative"),
        ((2,), (1,), -1, 4, None, "offset = -1 is negative"),
        ((2.0,), (1,), 0, 4, None, "must be an integer, got 2.0"),
        ((2,), (1.5,), 0, 4, None, "must be an integer, got 1.5"),
        ((True,), (1,), 0, 4, None, "got True \\(bool\\)"),
        (("3",), (1,), 0, 4, None, "got '3' \\(str\\)"),
        ("34", (1,), 0, 4, None, "must be a sequence"),
        (3, (1,), 0, 4, None, "must be a sequence"),
        ((2, 3), (1,), 0, 4, None, "2 dimensions but stride"),
        ((2,), (1,), 0, 0, None, "itemsize = 0"),
        ((2,), (1,), 0, 2.5, None, "itemsize must be an integer"),
        ((2**40, 2**40), (1, 1), 0, 4, None, "too large"),
        ((2, 2**62), (2**62, 1), 0, 4, None, "too large"),
        ((3, 4), (4, 1), 1, 4, 12, "reaches storage index 12"),
        ((3, 4), (4, 1), 0, 4, -1, "storage_size = -1 is negative"),
    ],
)
def test_bad_layouts_raise_layout_error(shape, stride, offset, itemsize, storage_size, message):
    with pytest.raises(layout.LayoutError, match=message):
        layout.check(shape, stride, offset, itemsize, storage_size)


def test_layout_error_is_a_value_error():
    assert issubclass(layout.LayoutError, ValueError)


def test_bad_indices_raise_layout_error():
    lay = layout.check((3, 4), (4, 1))
    with pytest.raises(layout.LayoutError, match="out of range for dimension 1 of size 4"):
        layout.element_offset(lay, (0, 4))
    with pytest.raises(layout.LayoutError, match="has 1 entries but the tensor has 2"):
        layout.element_offset(lay, 1)
    with pytest.raises(layout.LayoutError, match="must be an integer"):
        layout.byte_address(lay, (0, 1.0))
    assert layout.element_offset(lay, (-1, -1)) == 11  # negative indices count from the end


def test_bad_memory_format_and_inputs():
    lay = layout.check((2, 3), (3, 1))
    with pytest.raises(layout.LayoutError, match="memory_format 'nhwc'"):
        layout.is_contiguous(lay, "nhwc")
    with pytest.raises(layout.LayoutError, match="expected a torch.Tensor"):
        layout.of([1, 2, 3])
    with pytest.raises(layout.LayoutError, match="too many to list"):
        layout.element_offsets(layout.check((2**13, 2**13), (1, 1)))


def test_safe_as_strided_refuses_with_clear_message_and_never_reads():
    x = torch.arange(12.0)
    with pytest.raises(layout.LayoutError, match="reaches storage index 14.*holds only 12"):
        layout.safe_as_strided(x, (3, 4), (4, 2))
    with pytest.raises(layout.LayoutError, match="as_strided refused: stride\\[0\\] = -1"):
        layout.safe_as_strided(x, (3,), (-1,))
    with pytest.raises(layout.LayoutError, match="too large"):
        layout.safe_as_strided(x, (2**62, 4), (1, 1))
    # An offset view: the default storage offset is the tensor's own, as in Tensor.as_strided.
    tail = x[4:]
    window = layout.safe_as_strided(tail, (2, 3), (3, 1))
    assert window.storage_offset() == 4 and window[0, 0].item() == 4.0
    with pytest.raises(layout.LayoutError):
        layout.safe_as_strided(tail, (3, 3), (3, 1))
    # A view that fits: sliding windows (overlapping) over the storage are allowed.
    windows = layout.safe_as_strided(x, (10, 3), (1, 1), 0)
    assert layout.classify(windows).kind == "overlapping"


def test_address_formula_reads_well():
    lay = layout.check((3, 4), (4, 1))
    assert layout.address_formula(lay, (1, 2)) == (
        "base + 4 B × (offset 0 + 1×4 + 2×1) = base + 4 B × 6 = base + 24 B")
    assert layout.address_formula(lay, (1, 2), base=0x1000).endswith("= 0x1018")
    assert layout.byte_address(lay, (1, 2), base=100) == 124


@pytest.mark.parametrize(
    "make, kind, flags",
    [
        (lambda x: x, "contiguous", {"contiguous"}),
        (lambda x: x.t(), "permuted", {"permuted"}),
        (lambda x: x.permute(1, 0), "permuted", {"permuted"}),
        (lambda x: x[0].expand(3, 4), "broadcast", {"broadcast"}),
        (lambda x: x[:, ::2], "gaps", {"gaps"}),
        (lambda x: x[1:, 1:], "gaps", {"gaps", "offset"}),
        (lambda x: x.flatten().unfold(0, 4, 2), "overlapping", {"overlapping"}),
        (lambda x: x.diagonal(), "gaps", {"gaps"}),
        (lambda x: x[:0], "empty", {"empty"}),
        (lambda x: x[1, 2], "scalar", {"scalar"}),
        (lambda x: x[:, ::2].t(), "gaps", {"gaps", "permuted"}),
        (lambda x: torch.empty(2, 3, 4, 5).to(memory_format=torch.channels_last), "permuted",
         {"permuted", "channels_last"}),
    ],
)
def test_classify_known_views(make, kind, flags):
    x = torch.arange(12.0).reshape(3, 4)
    got = layout.classify(make(x))
    assert got.kind == kind, got
    assert flags <= got.flags, got
    assert got.explanation and "\n" not in got.explanation


def test_overlap_exact_when_small_and_sound_when_large():
    # Interleaved strides that do not overlap: the sound rule alone cannot prove it.
    lay = layout.check((2, 3), (3, 2))
    assert layout.overlaps(lay) is False
    assert layout.classify(lay).kind == "gaps"
    assert layout.overlaps(layout.check((2, 3), (1, 1))) is True
    big = layout.check((2048, 1024), (1024, 1))  # above ENUMERATE_LIMIT
    assert big.numel > layout.ENUMERATE_LIMIT
    assert layout.overlaps(big) is False and layout.classify(big).kind == "contiguous"
    assert layout.overlaps(layout.check((2048, 1024), (1, 1))) is True  # more elements than cells
    unknown = layout.check((1025, 1024, 2), (2048, 2, 3))
    assert layout.overlaps(unknown) is None
    assert "overlap_unknown" in layout.classify(unknown).flags


@pytest.mark.slow
@settings(max_examples=examples(1000), deadline=None)
@given(layouts(max_size=4))
def test_classification_agrees_with_enumeration(params):
    shape, stride, offset = params
    lay = layout.check(shape, stride, offset)
    flat = layout.element_offsets(lay).ravel()
    distinct = np.unique(flat).size
    kind = layout.classify(lay).kind
    if lay.ndim == 0:
        assert kind == "scalar"
    elif lay.numel == 0:
        assert kind == "empty"
    elif distinct < flat.size:
        assert kind in ("broadcast", "overlapping")
    else:
        span = int(flat.max() - flat.min() + 1)
        assert kind == ("gaps" if span > flat.size else
                        "contiguous" if layout.is_contiguous(lay) else "permuted")
    assert math.prod(shape) == lay.numel
