"""The copy detector on known cases, and reshape's copies against layout.can_view."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.core import layout
from labkit.measure import copies
from tests.hypothesis_profiles import examples

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_transpose_copies_nothing(device):
    x = torch.randn(64, 32, device=device)
    with copies.detect() as log:
        y = x.t()
    assert log.copies == [] and log.new_bytes == 0
    assert [e.op for e in log.views] == ["aten::t"]
    assert copies.shares_storage(x, y)


@pytest.mark.parametrize("device", DEVICES)
def test_contiguous_of_transpose_copies_once_with_its_bytes(device):
    x = torch.randn(128, 512, device=device)
    xt = x.t()
    with copies.detect() as log:
        y = xt.contiguous()
    assert len(log.copies) == 1, log.summary()
    event = log.copies[0]
    assert event.bytes == 128 * 512 * 4 == log.total_bytes
    assert event.in_shapes == ((512, 128),) and event.in_strides == ((1, 512),)
    assert event.out_shape == (512, 128) and event.out_stride == (128, 1)
    assert event.device == str(y.device) and event.new_memory
    assert not copies.shares_storage(x, y)


def test_contiguous_of_contiguous_records_nothing():
    x = torch.randn(8, 8)
    with copies.detect() as log:
        y = x.contiguous()
    assert y is x and log.events == []


def test_factories_are_allocations_not_copies():
    x = torch.randn(4, 4)
    with copies.detect() as log:
        torch.empty(3, 5)
        torch.randn(2, 2)
        torch.zeros_like(x)
        x + 1
    assert [e.kind for e in log.events] == ["alloc", "alloc", "alloc", "compute"]
    assert log.copies == [] and log.total_bytes == 0
    assert log.allocations[0].bytes == 60 and log.allocations[0].in_shapes == ()
    assert log.new_bytes == 60 + 16 + 64 + 64


def test_inplace_and_copy_into_existing_memory():
    x = torch.randn(3, 4)
    y = torch.empty(4, 3)
    with copies.detect() as log:
        x.add_(1)
        y.copy_(x.t())
        z = x.to(torch.float64)
    kinds = [(e.op, e.kind, e.new_memory) for e in log.events]
    assert ("aten::add_.Tensor", "inplace", False) in kinds
    assert ("aten::copy_", "copy", False) in kinds
    assert ("aten::_to_copy", "copy", True) in kinds
    assert log.total_bytes == 48 + z.numel() * 8


def test_x_t_matmul_w_what_actually_happens():
    """C2's mechanism, observed at the dispatcher: matmul of a transposed operand on CPU.

    What torch 2.13 does on CPU: matmul becomes one aten::mm that receives the transposed
    strides directly (BLAS reads it as 'transposed'); no aten-level copy is made. If a
    future torch inserts a copy, this test fails and the course text must change.
    """
    x = torch.randn(64, 32)
    w = torch.randn(64, 16)
    with copies.detect() as log:
        out = x.t().matmul(w)
    torch.testing.assert_close(out, x.t().contiguous() @ w)
    mm = [e for e in log.events if e.op.startswith("aten::mm")]
    assert len(mm) == 1 and mm[0].kind == "compute"
    assert mm[0].in_strides[0] == (1, 32)  # the transposed view went in as it is
    assert mm[0].bytes == 32 * 16 * 4
    assert log.copies == [], log.summary()
    # The 3-D form of C2: matmul broadcasts w and calls bmm on the transposed view as it is.
    x3 = torch.randn(8, 16, 32)
    with copies.detect() as log:
        out = x3.transpose(0, 1).matmul(w[:32])
    torch.testing.assert_close(out, x3.transpose(0, 1).contiguous() @ w[:32])
    bmm = [e for e in log.events if e.op.startswith("aten::bmm")]
    assert len(bmm) == 1 and bmm[0].in_strides[0] == (32, 512, 1)
    assert log.copies == [], log.summary()


@pytest.mark.parametrize("device", DEVICES)
def test_reshape_copies_exactly_when_view_fails_on_known_cases(device):
    x = torch.arange(24.0, device=device).reshape(2, 3, 4)
    cases = [
        (x, (6, 4), False), (x.transpose(1, 2), (6, 4), True), (x.transpose(1, 2), (2, 12), True),
        (x.permute(2, 0, 1), (4, 6), False), (x[:, 1:], (4, 4), True), (x[:, :, ::2], (12,), False),
        (x.transpose(0, 1), (3, 2, 4), False), (x.transpose(0, 1), (3, 8), True),
    ]
    for tensor, shape, copies_expected in cases:
        assert layout.can_view(tensor, shape).ok is not copies_expected
        with copies.detect() as log:
            tensor.reshape(shape)
        assert (len(log.copies) == 1) is copies_expected, (tensor.stride(), shape, log.summary())


@st.composite
def viewable_tensors(draw):
    ndim = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    base = torch.arange(int(torch.tensor(shape).prod())).reshape(shape)
    perm = draw(st.permutations(range(ndim)))
    tensor = base.permute(*perm)
    if draw(st.booleans()) and tensor.shape[0] > 1:
        tensor = tensor[::2]
    new_shape = draw(st.sampled_from([(-1,), (tensor.numel(),), tuple(tensor.shape[::-1]),
                                      (1, *tensor.shape), (tensor.shape[0], -1)]))
    return tensor, new_shape


@pytest.mark.slow
@settings(max_examples=examples(1000), deadline=None)
@given(viewable_tensors())
def test_reshape_copies_exactly_when_can_view_says_no(case):
    tensor, new_shape = case
    check = layout.can_view(layout.of(tensor), new_shape)
    with copies.detect() as log:
        result = tensor.reshape(new_shape)
    assert (len(log.copies) == 1) is (not check.ok), (tensor.stride(), new_shape, log.summary())
    assert copies.shares_storage(result, tensor) is check.ok
    if check.ok:
        assert result.stride() == check.stride


def test_log_has_text_and_html():
    x = torch.randn(3, 4)
    with copies.detect() as log:
        x.t().contiguous()
    text = log.summary()
    assert text.startswith("1 copies (48 B)") and "aten::clone" in text
    page = log._repr_html_()
    assert page.startswith("<table") and page.count("<tr>") == 3 and "aten::clone" in page


def test_exception_inside_block_leaves_torch_usable():
    x = torch.randn(3, 4)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        with copies.detect() as log:
            x.t().view(12)
    assert [e.op for e in log.events] == ["aten::t"]
    with copies.detect() as again:  # a fresh detector still works afterwards
        x.clone()
    assert len(again.copies) == 1


def test_shares_storage():
    x = torch.arange(12.0)
    assert copies.shares_storage(x, x[3:].view(3, 3))
    assert not copies.shares_storage(x, x.clone())
    with pytest.raises(TypeError, match="needs two tensors"):
        copies.shares_storage(x, [1, 2])


def test_bytes_copied_is_the_detectors_total():
    x = torch.randn(64, 32)
    assert copies.bytes_copied(lambda: x.t()) == 0
    assert copies.bytes_copied(lambda: x.t().contiguous()) == x.numel() * x.element_size()


def test_shares_storage_refuses_tensors_without_a_storage_layout():
    metas = torch.empty(3, device="meta"), torch.empty(3, device="meta")
    with pytest.raises(layout.LayoutError, match="dense \\(strided\\)"):
        copies.shares_storage(*metas)  # every meta tensor's data pointer is 0
    with pytest.raises(layout.LayoutError, match="dense \\(strided\\)"):
        copies.shares_storage(torch.eye(2).to_sparse(), torch.eye(2))
