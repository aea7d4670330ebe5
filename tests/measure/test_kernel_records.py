"""Head marks of a profile (review 2026-12-05o 03-04 item 2), on fake profiler events.

A CUPTI that re-registers its timestamp callback per profiling session loses the first kernel
records of a later session (pytorch/pytorch#192021). Spins launched before the work take that
loss; the work's records are those after the last mark seen, and a profile with no mark left
says its counts are incomplete. The GPU path runs where CUDA is.
"""

from types import SimpleNamespace

import pytest
import torch

from labkit.measure import kernel_records

SPIN = "void at::cuda::(anonymous namespace)::spin_kernel(long)"
CUDA, CPU = torch.autograd.DeviceType.CUDA, torch.autograd.DeviceType.CPU


def _events(names, device=CUDA, start=0.0):
    return [SimpleNamespace(name=n, device_type=device, time_range=SimpleNamespace(start=start + i))
            for i, n in enumerate(names)]


def test_the_work_is_what_follows_the_last_head_mark_seen():
    work = ["nchwToNhwcKernel", "conv", "nhwcToNchwKernel"]
    whole = _events([SPIN] * 4 + work)
    assert [e.name for e in kernel_records.after_head_marks(whole, {SPIN})] == work
    # three of four marks lost at the head: the work is still whole
    lost = _events([SPIN] + work)
    assert [e.name for e in kernel_records.after_head_marks(lost, {SPIN})] == work
    # every mark lost (and the work's first kernel with them): incomplete, not a short count
    assert kernel_records.after_head_marks(_events(work[1:]), {SPIN}) is None
    assert kernel_records.after_head_marks([], {SPIN}) is None
    other = _events(["mark"] * 4 + work)
    assert kernel_records.after_head_marks(other, ()) is None  # a mark neither learned nor named: not trusted


def test_a_head_mark_is_known_by_the_spin_kernel_name_where_the_learned_names_differ():
    """The names learned from the trace export and those prof.events() gives might be spelled
    apart on some build: the spin kernel's own name still marks the head, so the first GPU run
    cannot read every profile as incomplete for a spelling."""
    work = ["conv", "add"]
    events = _events(["at::cuda::(anonymous namespace)::spin_kernel(long)"] * 2 + work)
    assert [e.name for e in kernel_records.after_head_marks(events, {SPIN})] == work
    assert [e.name for e in kernel_records.after_head_marks(events, ())] == work


def test_events_are_read_in_start_order_and_cpu_events_left_out():
    work = _events(["a", "b"], start=10.0)
    marks = _events([SPIN, SPIN], start=0.0)
    launches = _events(["cudaLaunchKernel"] * 3, device=CPU, start=20.0)
    found = kernel_records.after_head_marks(list(reversed(work)) + launches + marks, {SPIN})
    assert [e.name for e in found] == ["a", "b"]


def test_a_profile_of_no_work_after_its_marks_is_whole_and_empty():
    assert kernel_records.after_head_marks(_events([SPIN] * 3), {SPIN}) == []


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_gpu_profile_after_marks_holds_the_work():
    x = torch.ones(1 << 16, device="cuda")
    found = kernel_records.profile_after_marks(lambda: x.add_(1), x.device)
    assert found is not None and len(found) == 1 and "spin" not in found[0].name
    assert len(kernel_records.spin_record_names(str(x.device))) == 1
