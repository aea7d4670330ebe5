"""Host-to-device copies. Without a GPU every measurement refuses clearly; the GPU cases
(marked gpu) check what the chapter shows: pinned beats pageable on large copies, a
non_blocking copy from pageable memory still blocks, the D2H trap reads stale values."""

import pytest
import torch

from labkit.chapters.ch05_dataloader import h2d_copies

gpu = pytest.mark.gpu
needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_host_tensor_is_random_bytes():
    t = h2d_copies.host_tensor(4096, pinned=False)
    assert t.dtype == torch.uint8 and t.numel() == 4096 and int(t.max()) > 0
    with pytest.raises(ValueError, match="nbytes"):
        h2d_copies.host_tensor(0, pinned=False)


def test_host_tensor_writes_every_page_with_the_random_tile_past_a_tile_s_end():
    """A size that is not a whole number of tiles: every 4 KiB page holds random (varied)
    bytes, the tail included, and each tile repeats the first (the fill is a copy of it)."""
    tile = h2d_copies.FILL_TILE_BYTES
    t = h2d_copies.host_tensor(3 * tile + 4100, pinned=False)
    assert t.numel() == 3 * tile + 4100
    pages = t[: t.numel() // 4096 * 4096].view(-1, 4096)
    assert bool((pages.amax(dim=1) > pages.amin(dim=1)).all()), "a page is not random bytes"
    assert torch.equal(t[2 * tile:3 * tile], t[:tile]) and torch.equal(t[3 * tile:], t[:4100])
    assert len(torch.unique(t[:tile])) > 200  # all byte values, about evenly


_FAKE_PIN_CHILD = (
    "import json, sys\n"
    "print('IMPORTED', 0.25, flush=True)\n"
    "line = sys.stdin.readline()\n"
    "if line.strip():\n"
    "    n = int(line)\n"
    "    print('RESULT', json.dumps({'nbytes': n, 'first_pin_s': 0.1, 'first_pin_cpu_s': 0.1,"
    " 'cached_pin_s': 0.01, 'cached_pin_gbps': 1.0, 'host_reserved_bytes': 2 * n,"
    " 'rss_growth_bytes': n}), flush=True)\n")


def test_a_fresh_pin_process_waits_for_its_size_then_measures_once(monkeypatch):
    """The protocol, with a stand-in child (the real one needs a GPU): it reports its
    imports, waits, measures the size it is sent, and refuses a second measurement."""
    monkeypatch.setattr(h2d_copies, "require_gpu", lambda what: torch.device("cpu"))
    monkeypatch.setattr(h2d_copies, "FRESH_PIN_SCRIPT", _FAKE_PIN_CHILD)
    ahead = h2d_copies.FreshPinProcess(timeout_s=60)
    with pytest.raises(ValueError, match="whole number of bytes"):
        ahead.measure(0)
    cost = ahead.measure(1024)
    assert cost.nbytes == 1024 and cost.host_reserved_bytes == 2048 and ahead.import_s == 0.25
    with pytest.raises(RuntimeError, match="already measured"):
        ahead.measure(1024)
    idle = h2d_copies.FreshPinProcess(timeout_s=60)
    idle.close()  # never asked: ended, not left waiting
    assert idle._process.returncode is not None


def test_a_fresh_pin_process_that_fails_says_why(monkeypatch):
    monkeypatch.setattr(h2d_copies, "require_gpu", lambda what: torch.device("cpu"))
    monkeypatch.setattr(h2d_copies, "FRESH_PIN_SCRIPT", "import sys; sys.exit('no GPU in here')")
    with pytest.raises(RuntimeError, match="no GPU in here"):
        h2d_copies.FreshPinProcess(timeout_s=60).measure(1024)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal without a GPU")
@pytest.mark.parametrize("call", [
    lambda: h2d_copies.bandwidth_curve((1024,)),
    lambda: h2d_copies.call_return_times(1024),
    lambda: h2d_copies.busy_stream_returns((1024,), repeats=1),
    lambda: h2d_copies.pinning_cost(1024),
    lambda: h2d_copies.pinning_cost_fresh(1024),
    lambda: h2d_copies.d2h_trap(1024),
    lambda: h2d_copies.pin_memory_device_probe((2, 3, 8, 8)),
])
def test_without_a_gpu_each_measurement_says_what_is_shown_instead(call):
    with pytest.raises(h2d_copies.NoGPU, match="recorded reference"):
        call()


def test_environment_note_names_torch():
    assert torch.__version__ in h2d_copies.environment_note()


@gpu
@needs_gpu
def test_pinned_is_faster_than_pageable_for_large_copies():
    points = h2d_copies.bandwidth_curve((64 * 2**20,))
    by = {p.memory: p for p in points}
    assert by["pinned"].gbps > by["pageable"].gbps


@gpu
@needs_gpu
def test_non_blocking_from_pageable_still_blocks():
    rows = {(r.memory, r.non_blocking): r for r in h2d_copies.call_return_times(64 * 2**20, 3)}
    assert rows[("pageable", True)].blocked_share > 0.5
    assert rows[("pinned", True)].blocked_share < 0.5


CLOCKS_APART_S = 50e-6  # the kernel's head start before the host's clock starts, at most


@gpu
@needs_gpu
def test_behind_a_queued_kernel_a_pinned_call_returns_at_once_and_warnings_are_recorded():
    rows, said = h2d_copies.busy_stream_returns((64 * 2**10, 64 * 2**20), kernel_s=0.02, repeats=2)
    assert {(r.memory, r.nbytes) for r in rows} == {(m, n) for m in ("pageable", "pinned")
                                                     for n in (64 * 2**10, 64 * 2**20)}
    for r in rows:
        # the calibrated kernel ran, and the copy finished after it: done_s starts on the host's
        # clock once the kernel is queued, when it may have run some microseconds already, and
        # kernel_s is its own events' span, so "after" holds to that head start (the H200,
        # 2026-12-05: 19,956 us done, 19,960 us kernel)
        assert 0.01 < r.kernel_s < 0.04 and r.done_s >= r.kernel_s - CLOCKS_APART_S
        if r.memory == "pinned":
            assert r.returned_share < 0.2 and not r.waited_for_kernel
    assert isinstance(said, list)


@gpu
@needs_gpu
def test_d2h_trap_reads_stale_values_only_before_the_sync():
    pinned, pageable = h2d_copies.d2h_trap(1 << 22)
    assert pinned.wrong_before_sync > 0 and pinned.wrong_after_sync == 0
    assert pageable.wrong_before_sync == 0 and pageable.wrong_after_sync == 0


@gpu
@needs_gpu
def test_pin_memory_device_batch_is_a_pinned_host_tensor():
    probe = h2d_copies.pin_memory_device_probe((4, 3, 32, 32))
    for label in ("pin_memory", "pin_memory_device"):
        assert probe[label]["batch_pinned"] and probe[label]["moved_equal"]
        assert probe[label]["h2d_memcpy_events"] >= 1


@gpu
@needs_gpu
def test_pinning_cost_is_measured():
    cost = h2d_copies.pinning_cost(48 * 2**20)
    assert cost.first_pin_s > 0 and cost.cached_pin_gbps > 0


@gpu
@needs_gpu
def test_pinning_in_a_fresh_process_grows_the_pool_by_a_rounded_block():
    cost = h2d_copies.pinning_cost_fresh(48 * 2**20)
    assert cost.first_pin_s > cost.cached_pin_s  # page-locking new memory costs more than a copy
    if cost.host_reserved_bytes is not None:
        assert cost.host_reserved_bytes >= 48 * 2**20  # rounded up (to 64 MiB), never down
