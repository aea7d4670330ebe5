"""A short GPU call's device time from the profiler's kernel records, one figure per call.

CUDA events bracket more than a short call's kernels: an event pair around one kernel also
holds the few microseconds the GPU takes to start that kernel after the event (on an H200:
a 1M-element fp16 add ran 1.8 us by its kernel record and 2.2 us per call in a CUDA-graph
replay, but 6.7 us between two events). For a call of a few microseconds that is most of the
figure, so the harness reads such calls from the records CUPTI keeps of every kernel, copy and
memset (torch.profiler, as `labkit.measure.device_time` and the timeline do).

To tell the calls apart in one profile, the harness launches a spin kernel
(`torch.cuda._sleep`, a name no user code launches) before every timed call; in cold mode the
flush comes before the spin. So the GPU's records read: [flush] spin call... [flush] spin
call... A call's device time is the union of its records' intervals (its busy time, as the
profiler counts it), between its spin and the next flush (or spin).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import lru_cache

import numpy as np
import torch

SPIN_MARK_CYCLES = 1_000   # the spin that separates two calls when no longer hold is needed
# Spins launched at the head of a profile before the work it counts (`profile_after_marks`): a
# CUPTI that lost a session's first kernel records (pytorch/pytorch#192021: one more per profiling
# session opened in the process, after the GPU idled) loses marks, not the work, while fewer than
# HEAD_MARKS are lost. The review asked for 8; a chapter's process opens a profiling session per
# kernel-record timing, dozens of them, so 32 (about 0.2 ms of launches and spins per profile).
HEAD_MARKS = 32
# torch.cuda._sleep's kernel (aten/src/ATen/cuda/Sleep.cu: at::cuda::(anonymous)::spin_kernel): a
# head mark is known by it too, should the names learned from the trace export (`spin_record_names`)
# be spelled otherwise in `prof.events()`, which `after_head_marks` reads (never seen: a guard for
# the first GPU run of this code, where every profile would otherwise read INCOMPLETE)
SPIN_KERNEL = "spin_kernel"
INCOMPLETE = "counts incomplete (profiler dropped records)"
# Below this (by CUDA events) a call is read from kernel records: events add ~3-5 us to a
# call (a few % at 100 us, most of it at 5 us); above it the records' cost is not worth it.
RECORDS_BELOW_S = 100e-6


class RecordsUnavailable(RuntimeError):
    """The profile could not be read into one figure per call; the harness uses its events."""


def profiler_active() -> bool:
    """Whether a torch profiler is already recording (a second one cannot start)."""
    try:
        return bool(torch.autograd.profiler._is_profiler_enabled)
    except AttributeError:
        return False


def _gpu_records(prof: object) -> list[tuple[str, float, float]]:
    """(name, start_us, end_us) of every GPU record in a finished profile, in start order."""
    from labkit.measure import timeline

    trace = timeline.from_profiler(prof)
    gpu = np.flatnonzero(trace.kind < len(timeline.GPU_KINDS))
    rows = [(trace.names[trace.name_id[i]], float(trace.start_us[i]),
             float(trace.start_us[i] + trace.duration_us[i])) for i in gpu]
    rows.sort(key=lambda r: r[1])
    return rows


_spin_names: dict[str, tuple[str, ...]] = {}


def spin_record_names(device: str) -> tuple[str, ...]:
    """The GPU record names a spin kernel leaves (learned once per device, from HEAD_MARKS spins in
    one profile, so a profile that lost its first records still shows one; () where none showed,
    not kept, so the next call learns again)."""
    if device in _spin_names:
        return _spin_names[device]
    from torch.profiler import ProfilerActivity, profile

    where = torch.device(device)
    torch.cuda.synchronize(where)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        with torch.cuda.device(where):
            mark_head()
        torch.cuda.synchronize(where)
    names = tuple(dict.fromkeys(name for name, _, _ in _gpu_records(prof)))
    if names:
        _spin_names[device] = names
    return names


def mark_head(marks: int = HEAD_MARKS) -> None:
    """Launch `marks` spin kernels (SPIN_MARK_CYCLES each) on the current stream: the head marks of
    a profile, before the work it counts (`after_head_marks`)."""
    for _ in range(marks):
        torch.cuda._sleep(SPIN_MARK_CYCLES)


def after_head_marks(events: Iterable[object], spin_names: Collection[str]) -> list | None:
    """The CUDA events of a finished profile (`prof.events()`: objects with name, device_type and
    time_range.start) that started after its last head mark (a spin, by `spin_names`), in start
    order: the work, whole, since a profile loses records only at its head (pytorch/pytorch#192021).
    None where no mark is seen: every mark was lost, and the work's first records may be too.

    Review 2026-12-05o 03-04 item 2: two profiles of one forward that both lost the same count
    agreed, and were shown as stable; 03's profiles had no guard, and a lost head record there is
    the finding itself (C22's first kernel, 'nchwToNhwcKernel in')."""
    cuda = sorted((e for e in events if e.device_type == torch.autograd.DeviceType.CUDA),  # type: ignore[attr-defined]
                  key=lambda e: e.time_range.start)  # type: ignore[attr-defined]
    marks = [i for i, e in enumerate(cuda)  # type: ignore[attr-defined]
             if e.name in spin_names or SPIN_KERNEL in e.name]  # type: ignore[attr-defined]
    if not marks:
        return None
    return cuda[marks[-1] + 1:]


def profile_after_marks(run: Callable[[], object], device: torch.device | str,
                        marks: int = HEAD_MARKS) -> list | None:
    """Profile `run()` on the GPU (CUDA activity only) behind `marks` head marks (`mark_head`) and
    return its CUDA events (`after_head_marks`), or None where the profiler dropped them all
    (say INCOMPLETE then). One call per profile for chapters 03 and 04; the profiler's note that
    it 'clears events at the end of each cycle' is silenced (one profile is one cycle)."""
    from torch.profiler import ProfilerActivity, profile

    where = torch.device(device)
    spin_names = spin_record_names(str(where))
    torch.cuda.synchronize(where)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Profiler clears events.*")
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            with torch.cuda.device(where):  # the marks on the stream the work is measured on
                mark_head(marks)
            run()
            torch.cuda.synchronize(where)
        events = list(prof.events())
    return after_head_marks(events, spin_names)


def _union_us(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, -np.inf
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def per_call_seconds(run_block: Callable[[], None], count: int, device: torch.device,
                     flush_records: int) -> list[float]:
    """Profile `run_block` (which runs `count` calls, each behind a spin) and return each
    call's device-busy seconds from the GPU records.

    flush_records: how many GPU records each cold-mode flush leaves before its call's spin
    (0 in hot mode). Raises RecordsUnavailable when the records do not split into `count`
    calls (a spin missing, a profiler that recorded no GPU work).
    """
    from torch.profiler import ProfilerActivity, profile

    if profiler_active():
        raise RecordsUnavailable("a profiler is already recording")
    spin_names = set(spin_record_names(str(device)))
    if len(spin_names) != 1:
        raise RecordsUnavailable(f"the spin kernel left {len(spin_names)} record names")
    torch.cuda.synchronize(device)
    with warnings.catch_warnings():  # the profiler's notes on its own cycles are not the user's
        warnings.simplefilter("ignore", UserWarning)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            run_block()
            torch.cuda.synchronize(device)
        rows = _gpu_records(prof)
    spins = [i for i, (name, _, _) in enumerate(rows) if name in spin_names]
    if len(spins) != count:
        raise RecordsUnavailable(f"{len(spins)} spin records for {count} calls")
    seconds = []
    for k, first in enumerate(spins):
        last = spins[k + 1] - flush_records if k + 1 < len(spins) else len(rows)
        own = [(start, stop) for _, start, stop in rows[first + 1:last]]
        if not own:
            raise RecordsUnavailable("a call left no GPU record")
        seconds.append(_union_us(own) * 1e-6)
    return seconds


@lru_cache(maxsize=8)
def flush_record_count(device: str) -> int:
    """How many GPU records one cold-mode flush of the harness leaves (learned once)."""
    from torch.profiler import ProfilerActivity, profile

    from labkit.measure import conditions

    where = torch.device(device)
    flush = conditions.flush_buffer(where)
    torch.cuda.synchronize(where)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        flush.zero_()
        torch.cuda.synchronize(where)
    return len(_gpu_records(prof))


def resolution_s(durations: Sequence[float], fallback_s: float) -> float:
    """The step of the GPU timer the kernel records were read from, measured on the records.

    CUDA events resolve about 0.5 us; a kernel record's start and end come from the GPU's own
    timer, whose step (32 ns on an H200) shows as the smallest gap between two distinct
    durations. With fewer than two distinct durations the step cannot be seen, and the
    fallback (the events' resolution) is kept.
    """
    distinct = sorted({round(d, 12) for d in durations})
    gaps = [b - a for a, b in zip(distinct[:-1], distinct[1:], strict=True) if b - a > 1e-12]
    return min(gaps) if gaps else fallback_s
