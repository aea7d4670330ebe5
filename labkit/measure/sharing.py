"""Who else is using this GPU: the driver's process list, read while the harness times.

In a workshop several learners' kernels often share one GPU (or one MIG slice). A copy or a
matmul timed while another process runs kernels measures the share of the GPU it got, not
the GPU: bandwidth and SMs are split, and the split changes from call to call. A timing
cannot undo that, but it can say so. `others_on_gpu()` lists the other compute processes the
driver reports on the device being timed; `bench` puts the answer in `Timing.shared_gpu`
and a warning, and `any_shared` tells a chapter what to put in a claim's evidence. What a
verdict does with it is the claims' business, not the measuring layer's:
`labkit.claims.trust.shared_verdict` turns a confirmed or refuted verdict that rests on such
a timing into "depends (on a shared GPU)".

    from labkit.measure import sharing
    sharing.others_on_gpu()          # [] on a CPU, or when this process is alone on its GPU

The list comes from pynvml when it is installed (a library call, about a millisecond) and
otherwise from `nvidia-smi --query-compute-apps` (a subprocess, tens of milliseconds);
answers are kept for CACHE_S seconds so a sweep of many timings asks once. A container sees
the host's process ids in the driver's list, not its own: when the list has processes but
none of them is this process while this process holds a CUDA context, one of them is taken
to be this process and the rest are "others". On a MIG GPU the driver lists the processes
of every slice under the GPU's bus id; a process on another slice shares memory bandwidth
but not SMs, so it is still reported (the timing may move, if less). A GPU whose bus id torch
does not give counts every process the driver lists, on any GPU.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass

CACHE_S = 2.0                       # a sweep of timings asks the driver at most every 2 s
SMI_TIMEOUT_S = 5.0                 # nvidia-smi on a busy machine: never hang a timing on it


@dataclass(frozen=True)
class GpuProcess:
    """One compute process the driver lists on a GPU: its id (maybe the host's) and memory."""

    pid: int
    used_mib: float | None
    bus_id: str = ""


_cache: dict[str, tuple[float, tuple[GpuProcess, ...]]] = {}


def others_on_gpu(device: object = None) -> list[GpuProcess]:
    """Compute processes other than this one on the GPU `device` (default: the current one).

    Returns [] on a CPU, when CUDA is absent, or when the driver cannot be asked (no
    nvidia-smi, no pynvml): a missing answer is not evidence of sharing.
    """
    bus_id = _bus_id(device)
    if bus_id is None:
        return []
    now = time.monotonic()
    cached = _cache.get(bus_id)
    if cached is None or now - cached[0] > CACHE_S:
        cached = (now, tuple(_driver_processes(bus_id)))
        _cache[bus_id] = cached
    return exclude_self(list(cached[1]), os.getpid(), _holds_context())


def exclude_self(processes: list[GpuProcess], own_pid: int,
                 holds_context: bool) -> list[GpuProcess]:
    """The processes that are not this one, also where the driver shows host process ids.

    Why the second rule: in a container os.getpid() is not the id the driver reports, so
    this process would otherwise count itself as "another process".
    """
    others = [p for p in processes if p.pid != own_pid]
    if len(others) == len(processes) and holds_context and others:
        others = others[1:]
    return others


def note(others: list[GpuProcess]) -> str:
    """The sentence a Timing carries when it was taken on a shared GPU."""
    memory = [p.used_mib for p in others if p.used_mib is not None]
    held = f", holding {sum(memory):.0f} MiB" if memory else ""
    count = len(others)
    return (f"shared GPU: {count} other process{'es' if count != 1 else ''} used this GPU while it "
            f"was timed{held}; the number is this process's share of the GPU, not the GPU's, and "
            "can change from run to run (a workshop's other learners, or another MIG user).")


def any_shared(*results: object) -> bool:
    """Whether any of these timings was taken on a shared GPU: what a chapter puts in its
    evidence as "shared_gpu" for `labkit.claims.trust.shared_verdict`.

    Takes Timings, Comparisons (every variant counts: one shared variant moves the ratio)
    and saved dicts with a "shared_gpu" key, in any mix.
    """
    for result in results:
        if isinstance(result, Mapping):
            if result.get("shared_gpu"):
                return True
        elif hasattr(result, "variants"):
            if any(v.timing.shared_gpu for v in result.variants.values()):
                return True
        elif getattr(result, "shared_gpu", False):
            return True
    return False


def parse_smi(text: str) -> list[GpuProcess]:
    """Rows of `nvidia-smi --query-compute-apps=pid,used_memory,gpu_bus_id --format=csv,noheader`."""
    processes = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 2 or not fields[0].isdigit():
            continue
        memory = fields[1].split()[0] if fields[1] else ""
        used = float(memory) if memory.replace(".", "", 1).isdigit() else None
        bus = _normal_bus_id(fields[2]) if len(fields) > 2 else ""
        processes.append(GpuProcess(int(fields[0]), used, bus))
    return processes


def _driver_processes(bus_id: str) -> list[GpuProcess]:
    listed = _from_pynvml(bus_id)
    if listed is None:
        listed = _from_smi()
    return [p for p in listed if not p.bus_id or not bus_id or p.bus_id == bus_id]


def _from_pynvml(bus_id: str) -> list[GpuProcess] | None:
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        try:
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id.encode()) if bus_id else (
                pynvml.nvmlDeviceGetHandleByIndex(0))
            listed = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - any NVML failure: fall back to nvidia-smi
        return None
    return [GpuProcess(int(p.pid), p.usedGpuMemory / 2**20 if p.usedGpuMemory else None, bus_id)
            for p in listed]


def _from_smi() -> list[GpuProcess]:
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory,gpu_bus_id",
             "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=SMI_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return parse_smi(out.stdout) if out.returncode == 0 else []


def _bus_id(device: object) -> str | None:
    """The PCI bus id of a CUDA device ('' when torch does not say), None for a non-GPU."""
    import torch

    if device is not None and torch.device(device).type != "cuda":
        return None
    if not torch.cuda.is_available():
        return None
    index = torch.device(device).index if device is not None else None
    props = torch.cuda.get_device_properties(torch.cuda.current_device() if index is None else index)
    parts = [getattr(props, name, None) for name in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
    if any(p is None for p in parts):
        return ""
    return _normal_bus_id(f"{parts[0]:08X}:{parts[1]:02X}:{parts[2]:02X}.0")


def _normal_bus_id(text: str) -> str:
    """'00000000:1B:00.0' however the driver pads the domain (NVML: 8 digits, smi: 8 or 4)."""
    text = text.strip().upper()
    if text.count(":") == 2:
        domain, rest = text.split(":", 1)
        return f"{int(domain, 16):08X}:{rest}" if domain else text
    return text


def _holds_context() -> bool:
    import torch

    return torch.cuda.is_available() and torch.cuda.is_initialized()
