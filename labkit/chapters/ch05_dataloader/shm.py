"""Shared memory for DataLoader workers: how much there is, what a setting needs, what fits.

A DataLoader worker hands each batch to the main process through shared memory: the batch
is collated straight into a segment under /dev/shm, and only its handle crosses the pipe.
Containers often give /dev/shm 64 MiB (Docker's default), and then a worker fails as soon as
the batches in flight no longer fit. In this torch that is a clean RuntimeError "unable to
allocate shared memory(shm) ... No space left on device"; older versions and some kernels
die with a bus error instead (SIGBUS, when the segment is touched rather than reserved).

What is in flight: each worker keeps `prefetch_factor` batches queued, and the main process
holds the batch it is using, so about (num_workers * prefetch_factor + 1) batches at once.
Measured here under a 16 MiB /dev/shm with 3.6 MiB batches: 2 workers x prefetch 1 (about 11 MiB)
ran; 2 x 2 (about 18 MiB) failed.

What does not help: `torch.multiprocessing.set_sharing_strategy('file_system')`. It changes
how the segment is passed (a file name instead of a file descriptor: the cure for "too many
open files"), not where it lives: its segments sit in /dev/shm too, and the same loader fails
the same way (see tests/test_loader_sweep.py, which runs both under a 16 MiB /dev/shm).
What helps: fewer batches in flight (prefetch_factor 1, fewer workers), smaller batches in
flight (uint8 images, normalised on the device: 4x fewer bytes), or no workers at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

SHM_PATH = "/dev/shm"
SHM_ENV = "LABKIT_SHM_BYTES"  # pretend /dev/shm has this many free bytes (to rehearse)
SAFETY = 0.5  # plan to use at most half of what is free: other processes share it too
DEFAULT_TIMEOUT_S = 120.0  # a worker silent this long is declared stuck: an error, not a hang


def free_bytes(path: str = SHM_PATH) -> int | None:
    """Free bytes in the shared-memory area (LABKIT_SHM_BYTES overrides), None if unknown.

    None on systems without /dev/shm (macOS, Windows): there torch shares memory by other
    means and this module makes no promise.
    """
    override = os.environ.get(SHM_ENV, "").strip()
    if override:
        if not override.isdigit():
            raise ValueError(f"{SHM_ENV} must be a number of bytes, got {override!r}")
        return int(override)
    try:
        stats = os.statvfs(path)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def in_flight_bytes(num_workers: int, prefetch_factor: int | None, batch_bytes: int) -> int:
    """Shared memory a loader holds at once: (workers x prefetch + 1) batches, none without workers."""
    if num_workers < 0 or batch_bytes < 0:
        raise ValueError(f"num_workers and batch_bytes must be >= 0, got {num_workers}, {batch_bytes}")
    if num_workers == 0:
        return 0
    prefetch = 2 if prefetch_factor is None else prefetch_factor
    return (num_workers * prefetch + 1) * batch_bytes


@dataclass(frozen=True)
class ShmChoice:
    """The setting that fits, and the sentence that says why it was chosen."""

    num_workers: int
    prefetch_factor: int | None
    free_bytes: int | None
    needed_bytes: int
    changed: bool
    message: str

    def __str__(self) -> str:
        return self.message


def choose(num_workers: int, prefetch_factor: int | None, batch_bytes: int,
           free: int | None = None) -> ShmChoice:
    """The asked-for setting if its batches in flight fit in half the free /dev/shm; else
    prefetch_factor 1, then fewer workers, down to 0 (no shared memory at all).

    It never switches the sharing strategy: 'file_system' keeps its segments in /dev/shm
    too, so it would not fit where 'file_descriptor' does not.
    """
    free = free_bytes() if free is None else free
    asked = in_flight_bytes(num_workers, prefetch_factor, batch_bytes)
    if free is None or num_workers == 0 or asked <= SAFETY * free:
        where = "no /dev/shm here" if free is None else f"{_mb(free)} free in /dev/shm"
        return ShmChoice(num_workers, prefetch_factor, free, asked, False,
                         f"{num_workers} worker(s) keep {_mb(asked)} in flight; {where}: fits")
    for workers in range(num_workers, 0, -1):
        need = in_flight_bytes(workers, 1, batch_bytes)
        if need <= SAFETY * free:
            return ShmChoice(workers, 1, free, need, True, (
                f"/dev/shm has only {_mb(free)} free; {num_workers} worker(s) x prefetch "
                f"{prefetch_factor or 2} would keep {_mb(asked)} of batches in it. Using {workers} "
                f"worker(s) x prefetch 1 ({_mb(need)}). More room: a larger /dev/shm "
                "(docker run --shm-size=1g), uint8 batches, or smaller batches."))
    return ShmChoice(0, None, free, 0, True, (
        f"/dev/shm has only {_mb(free)} free; even one worker would keep {_mb(2 * batch_bytes)} "
        "of batches in it. Loading in the main process (num_workers=0) instead, which uses no "
        "shared memory. More room: docker run --shm-size=1g, uint8 or smaller batches."))


def explain_worker_failure(error: BaseException) -> str:
    """A sentence for the learner when a DataLoader worker died or stalled; '' if not that."""
    text = str(error)
    if "shared memory" in text or "No space left on device" in text or "Bus error" in text:
        free = free_bytes()
        return ("a DataLoader worker could not put a batch in shared memory (/dev/shm has "
                f"{_mb(free) if free is not None else 'an unknown amount'} free). Use "
                "labkit.chapters.ch05_dataloader.shm.choose(...) for a setting that fits, or fewer workers / prefetch_factor=1.")
    if "DataLoader worker" in text and ("killed" in text or "exited unexpectedly" in text):
        return ("a DataLoader worker process died (killed by the system: out of memory, or a bus "
                "error from a full /dev/shm). Try fewer workers, smaller batches, prefetch_factor=1.")
    if "timed out" in text and "DataLoader" in text:
        return ("no batch arrived within the DataLoader timeout: a worker is stuck or far too "
                "slow. The loader was stopped instead of hanging; try fewer workers or a cheaper dataset.")
    return ""


def _mb(value: int | None) -> str:
    return "?" if value is None else f"{value / 2**20:.1f} MiB"
