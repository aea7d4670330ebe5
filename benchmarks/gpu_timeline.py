"""Profile a small training step on the GPU and record its timeline (issue 11).

Two ways to feed the step, each profiled for a few steps with torch.profiler (CPU and CUDA):

- ``side_stream``: batches in pinned memory are copied with ``non_blocking=True`` on a second
  CUDA stream, one step ahead (the prefetcher pattern: the compute stream waits for the copy
  stream, the batch is ``record_stream``-ed), so the copy of batch k+1 can run while the
  kernels of batch k run;
- ``default_stream``: the same pinned, ``non_blocking`` copies issued on the compute stream,
  where CUDA runs them in order with the kernels: the CPU does not wait, but the GPU cannot
  overlap the copy with compute.

Writes to OUTDIR (default: $OUT or /tmp/out):

- ``timeline_trace.json``: the exported Kineto trace of the side-stream run (the file
  tests/test_timeline_h200.py checks: its H2D overlap share, recomputed from the raw JSON,
  must equal labkit's);
- ``timeline_trace_default_stream.json``: the same for the default-stream run;
- ``timeline_summary.json``: labkit's figures for both runs (timeline.summary(...).figures()),
  with the machine, torch version, batch and model sizes;
- ``timeline_side_stream.svg``, ``timeline_default_stream.svg``: the static pictures.

Runs on a CPU too (no copies, no streams: a check of the script itself).

    python3 benchmarks/gpu_timeline.py OUTDIR
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from pathlib import Path

import torch

from labkit.measure import timeline

ACTIVE_STEPS = 3


def make_model(device: torch.device) -> torch.nn.Module:
    """A small CNN whose step takes a few milliseconds on an H200: copies are visible beside it."""
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, padding=1, stride=2), torch.nn.BatchNorm2d(64),
        torch.nn.ReLU(), torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10),
    ).to(device)


def batches(count: int, batch: int, side: int, pin: bool) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """CPU batches as a DataLoader with pin_memory=True hands them over."""
    made = []
    for k in range(count):
        generator = torch.Generator().manual_seed(k)
        x = torch.randn(batch, 3, side, side, generator=generator)
        y = torch.randint(0, 10, (batch,), generator=generator)
        made.append((x.pin_memory(), y.pin_memory()) if pin else (x, y))
    return made


def profile_run(way: str, device: torch.device, data: list, model: torch.nn.Module,
                save_to: Path) -> timeline.Trace:
    """Train on `data` the given way under the profiler; return the trace of the active steps."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    on_gpu = device.type == "cuda"
    copy_stream = torch.cuda.Stream() if on_gpu and way == "side_stream" else None

    def to_device(pair: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        if copy_stream is None:
            return tuple(t.to(device, non_blocking=True) for t in pair)  # type: ignore[return-value]
        with torch.cuda.stream(copy_stream):
            return tuple(t.to(device, non_blocking=True) for t in pair)  # type: ignore[return-value]

    def train_step(x: torch.Tensor, y: torch.Tensor) -> None:
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    activities = [torch.profiler.ProfilerActivity.CPU]
    if on_gpu:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    schedule = torch.profiler.schedule(wait=1, warmup=2, active=ACTIVE_STEPS, repeat=1)
    steps = 1 + 2 + ACTIVE_STEPS
    with contextlib.redirect_stderr(io.StringIO()), torch.profiler.profile(
            activities=activities, schedule=schedule) as prof:
        upcoming = to_device(data[0])
        for k in range(steps):
            current = upcoming
            if copy_stream is not None:
                compute = torch.cuda.current_stream()
                compute.wait_stream(copy_stream)
                for t in current:
                    t.record_stream(compute)
            if k + 1 < len(data):
                upcoming = to_device(data[(k + 1) % len(data)])  # the next copy, issued early
            train_step(*current)
            prof.step()
        if on_gpu:
            torch.cuda.synchronize()
    return timeline.from_profiler(prof, save_to=save_to)


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "/tmp/out"))
    out.mkdir(parents=True, exist_ok=True)
    on_gpu = torch.cuda.is_available()
    device = torch.device("cuda" if on_gpu else "cpu")
    batch, side = (256, 96) if on_gpu else (8, 32)
    torch.manual_seed(0)
    data = batches(1 + 2 + ACTIVE_STEPS + 1, batch, side, pin=on_gpu)
    record: dict = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if on_gpu else "cpu",
        "batch": [batch, 3, side, side],
        "batch_mib": batch * 3 * side * side * 4 / 2**20,
        "active_steps": ACTIVE_STEPS,
        "pin_memory": on_gpu,
        "non_blocking": True,
        "runs": {},
    }
    files = {"side_stream": "timeline_trace.json",
             "default_stream": "timeline_trace_default_stream.json"}
    for way, name in files.items():
        model = make_model(device)
        # Warm up outside the profile: cuDNN picks its algorithms, the allocator fills.
        profile_run(way, device, data, model, out / f"warmup_{name}")
        (out / f"warmup_{name}").unlink()
        trace = profile_run(way, device, data, model, out / name)
        summary = timeline.summary(trace)
        record["runs"][way] = {"trace": name, **summary.figures()}
        (out / f"timeline_{way}.svg").write_text(
            timeline.to_svg(trace, title=f"{way}: {record['device']}"))
        print(f"--- {way} ({name}, {len(trace)} events)")
        print(summary)
    (out / "timeline_summary.json").write_text(json.dumps(record, indent=2) + "\n")
    for way, run in record["runs"].items():
        share = run["h2d_overlap_share"]
        print(f"{way}: H2D overlap share "
              f"{'n/a' if share is None else format(100 * share, '.1f') + '%'}, "
              f"GPU busy {run['gpu_busy_share']}, launch gap median {run['launch_gap_median_us']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
