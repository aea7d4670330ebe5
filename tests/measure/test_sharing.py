"""The GPU-sharing check: parsing the driver's list, leaving this process out. What a verdict
does with a shared GPU is the claims' rule: tests/claims/test_trust.py."""

import dataclasses
import os
import subprocess
import sys

import pytest
import torch

from labkit.measure import bench, sharing
from labkit.measure.sharing import GpuProcess

SMI = """12345, 1024, 00000000:1B:00.0
678, 2048, 00000000:1B:00.0
999, [N/A], 00000000:2C:00.0
"""


def test_parse_smi_reads_pid_memory_and_bus():
    rows = sharing.parse_smi(SMI)
    assert [r.pid for r in rows] == [12345, 678, 999]
    assert rows[0].used_mib == 1024.0 and rows[2].used_mib is None
    assert rows[1].bus_id == "00000000:1B:00.0"


def test_parse_smi_ignores_noise():
    assert sharing.parse_smi("No running processes found\n\n") == []


def test_this_process_is_not_another():
    me = os.getpid()
    rows = [GpuProcess(me, 100.0), GpuProcess(me + 1, 200.0)]
    assert sharing.exclude_self(rows, me, holds_context=True) == [GpuProcess(me + 1, 200.0)]


def test_container_ids_count_this_process_once():
    """The driver shows host ids: two listed, this process holds a context, so one other."""
    rows = [GpuProcess(1, 100.0), GpuProcess(2, 200.0)]
    assert len(sharing.exclude_self(rows, 4242, holds_context=True)) == 1
    assert len(sharing.exclude_self(rows, 4242, holds_context=False)) == 2


def test_alone_is_not_shared():
    assert sharing.exclude_self([GpuProcess(7, 1.0)], 7, holds_context=True) == []
    assert sharing.exclude_self([GpuProcess(7, 1.0)], 8, holds_context=True) == []


def test_note_counts_and_sums_memory():
    text = sharing.note([GpuProcess(1, 100.0), GpuProcess(2, 50.0)])
    assert "2 other processes" in text and "150 MiB" in text


def test_cpu_is_never_shared():
    assert sharing.others_on_gpu("cpu") == []
    if not torch.cuda.is_available():
        assert sharing.others_on_gpu() == []


def test_cpu_timing_says_not_shared():
    t = bench.time(lambda: torch.ones(64).sum(), rep_ms=5, warmup_ms=1, device="cpu")
    assert t.shared_gpu is False
    assert not any("shared GPU" in w for w in t.warnings)


def test_any_shared_reads_timings_comparisons_and_saved_dicts():
    alone = bench.time(lambda: torch.ones(64).sum(), rep_ms=5, warmup_ms=1, device="cpu")
    compared = bench.compare({"a": lambda: torch.ones(64).sum(), "b": lambda: torch.ones(64).sum()},
                             rounds=2, rep_ms=5, warmup_ms=1, device="cpu", progress=False)
    assert not sharing.any_shared(alone, compared, {"shared_gpu": False})
    shared = dataclasses.replace(alone, shared_gpu=True)
    assert sharing.any_shared(alone, shared)
    assert sharing.any_shared({"shared_gpu": True})
    variant = compared["b"]
    compared.variants["b"] = dataclasses.replace(variant, timing=shared)
    assert sharing.any_shared(compared)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_timing_beside_another_gpu_process_says_so():
    """Alone: no warning. With a second process holding the GPU: shared_gpu and the warning."""
    x = torch.randn(2**22, device="cuda")
    sharing._cache.clear()
    foreign = sharing.others_on_gpu("cuda")
    alone = bench.time(lambda: x.clone(), rep_ms=20)
    assert alone.shared_gpu == bool(foreign)
    other = subprocess.Popen([sys.executable, "-c", (
        "import torch, sys, time; x = torch.randn(2**22, device='cuda'); "
        "print('ready', flush=True); t = time.time()\n"
        "while time.time() - t < 60: x.mul_(1.0)")], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "ready"
        sharing._cache.clear()
        with pytest.warns(bench.TimingWarning, match="shared GPU"):
            shared = bench.time(lambda: x.clone(), rep_ms=20)
        assert shared.shared_gpu
    finally:
        other.kill()
        other.wait(10)
