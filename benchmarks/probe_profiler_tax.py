"""Do profiler sessions earlier in a process tax its later kernel launches? (review 2026-12-05p 03-04 item 1d)

The H200 record of 2026-12-05 read every host-paced figure of chapters 03 and 04 1.4-2.2x
slower than the fresh processes of reproduce.py, while device figures held to about 1%. The
hypothesis (unverified): each torch.profiler session leaves per-process state behind (kineto
re-registering a CUPTI callback per session, pytorch/pytorch#192021), so a process that
profiled first (chapter 03's kernel counts, 04's `fold_kernels`) launches more slowly after.

This probe times the host's launch cost in one process before and after SESSIONS profiler
sessions opened the way the chapters open them (`kernel_records.profile_after_marks` around a
small forward), and prints both and their ratio. Two measures, each the median of ROUNDS rounds:

- loop: a plain loop of LAUNCHES `x.add_(1)` on a small tensor, wall time per launch (the
  host's pace: each launch costs microseconds, the kernel about one);
- probe: `clocks.host_launch` of one `x.add_(1)` behind a spin (the host's side of one call).

With --measure it also times chapter 04's sweep (`launch_overhead.measure`, eager per-launch
slope), a few seconds more. Under 30 s on a GPU; on a machine without CUDA it says so in one
line and exits 0 (--cpu runs the same steps on the CPU, with CPU-activity profiles: a test of
the script, not a measurement of the hypothesis).

    python3 benchmarks/probe_profiler_tax.py [--sessions 5] [--measure] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import torch

SESSIONS = 5  # the profiler sessions between the two readings (chapter 03 opens more)
LAUNCHES = 2000  # x.add_(1) launches per loop round
ROUNDS = 7  # rounds per reading; the median is reported
TAXED = 1.10  # after / before above this reads as a tax (a loop's round-to-round spread is a few %)


def launch_loop_us(x: torch.Tensor, launches: int = LAUNCHES, rounds: int = ROUNDS) -> dict:
    """Wall time per `x.add_(1)` launch in a back-to-back loop: median and range over rounds (us)."""
    sync = torch.cuda.synchronize if x.is_cuda else (lambda: None)
    for _ in range(100):  # warm: the kernel loaded, the allocator settled
        x.add_(1)
    sync()
    per = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(launches):
            x.add_(1)
        sync()
        per.append((time.perf_counter() - start) / launches * 1e6)
    return {"median_us": statistics.median(per), "low_us": min(per), "high_us": max(per)}


def host_probe_us(x: torch.Tensor, rounds: int = ROUNDS) -> dict | None:
    """`clocks.host_launch` of one `x.add_(1)` (the host's side, behind a spin): median of the
    probes' medians over rounds (us); None on a CPU or where the call waited for the GPU."""
    if not x.is_cuda:
        return None
    from labkit.measure import clocks

    values = []
    for _ in range(rounds):
        found = clocks.host_launch(lambda: x.add_(1), x.device, wall_per_call_s=50e-6)
        if found.synchronises:
            return None
        values.append(found.seconds * 1e6)
    return {"median_us": statistics.median(values), "low_us": min(values), "high_us": max(values)}


def sweep_us(device: torch.device) -> dict | None:
    """Chapter 04's launch sweep (`launch_overhead.measure`): each way's fitted slope (us per launch)."""
    from labkit.chapters.ch04_fusion import launch_overhead

    fits = launch_overhead.measure(device=device).as_dict()["fits"]
    return {way: round(float(fit["per_item_us"]), 3) for way, fit in fits.items()}


def profile_once(work: Callable[[], object], device: torch.device) -> int:
    """One profiler session as the chapters open one: on a GPU `kernel_records.profile_after_marks`
    (CUDA activity, head marks, then the work); on a CPU a CPU-activity profile. Returns the
    events it kept (0 where the profiler dropped them)."""
    if device.type == "cuda":
        from labkit.measure import kernel_records

        return len(kernel_records.profile_after_marks(work, device) or [])
    from torch.profiler import ProfilerActivity, profile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            work()
    return len(list(prof.events()))


def reading(x: torch.Tensor, measure: bool) -> dict:
    found = {"loop": launch_loop_us(x), "probe": host_probe_us(x)}
    if measure:
        found["sweep"] = sweep_us(x.device)
    return found


def ratios(before: dict, after: dict) -> dict:
    """after / before for each measure both readings hold (the medians; each sweep way's slope)."""
    out = {}
    for key in ("loop", "probe"):
        if before.get(key) and after.get(key):
            out[key] = after[key]["median_us"] / before[key]["median_us"]
    for way, slope in (before.get("sweep") or {}).items():
        if (after.get("sweep") or {}).get(way) and slope > 0:
            out[f"sweep: {way}"] = after["sweep"][way] / slope
    return out


def describe(before: dict, after: dict, sessions: int, control: dict | None = None) -> list[str]:
    """The lines printed: each measure before and after, its ratio, the A/A control's drift
    (`control`: the before reading taken again), and what the ratios say."""
    lines, found = [], ratios(before, after)
    for key, label in (("loop", "x.add_(1) loop, wall per launch"), ("probe", "host launch of one x.add_(1)")):
        if key in found:
            b, a = before[key], after[key]
            lines.append(f"{label}: before {b['median_us']:.2f} us ({b['low_us']:.2f}-{b['high_us']:.2f}), "
                         f"after {sessions} profiler sessions {a['median_us']:.2f} us "
                         f"({a['low_us']:.2f}-{a['high_us']:.2f}): {found[key]:.2f}x")
    for way, slope in (before.get("sweep") or {}).items():
        key = f"sweep: {way}"
        if key in found:
            lines.append(f"04's sweep, {way} slope: before {slope:.3f} us, after {after['sweep'][way]:.3f} us: "
                         f"{found[key]:.2f}x")
    # the A/A control (review 2026-12-05p2 00-04 item 3): the same reading twice with no session
    # between; a measure reads as taxed only above TAXED and above its own control's drift
    same = ratios(before, control) if control else {}
    for key, drift in same.items():
        lines.append(f"control, {key}: the before reading taken again, no session between: {drift:.2f}x")
    def bar(key: str) -> float:
        drift = same.get(key)
        return max(TAXED, drift, 1 / drift) if drift else TAXED
    taxed = [k for k, v in found.items() if v > bar(k)]
    lines.append(f"verdict: {'taxed (' + ', '.join(taxed) + ')' if taxed else 'no tax'} "
                 f"(a ratio above {TAXED:.2f}x and above its control's drift reads as a tax)"
                 if found else "verdict: nothing to compare")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--measure", action="store_true", help="also time chapter 04's launch sweep")
    parser.add_argument("--cpu", action="store_true", help="run the steps on the CPU (a test of the script)")
    parser.add_argument("--out", type=Path, help="write probe_profiler_tax.json here")
    args = parser.parse_args(argv)
    if not args.cpu and not torch.cuda.is_available():
        print("probe_profiler_tax: no CUDA device here; nothing measured (it probes GPU launches).")
        return 0
    started = time.perf_counter()
    device = torch.device("cpu" if args.cpu else "cuda")
    x = torch.zeros(256, device=device)
    net = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.BatchNorm2d(16),
                                                    torch.nn.ReLU()) for _ in range(8)]).to(device).eval()
    images = torch.randn(2, 16, 32, 32, device=device)

    def forward() -> None:
        with torch.no_grad():
            net(images)

    forward()
    # each reading printed as it is taken, so a run cut by its timeout still says what it measured
    before = reading(x, args.measure)
    print(f"before: {json.dumps(before)}", flush=True)
    control = reading(x, args.measure)
    print(f"before, again (the control): {json.dumps(control)}", flush=True)
    kept = [profile_once(forward, device) for _ in range(args.sessions)]
    after = reading(x, args.measure)
    print(f"after {args.sessions} sessions: {json.dumps(after)}", flush=True)
    lines = describe(before, after, args.sessions, control)
    for line in lines:
        print(line, flush=True)
    seconds = time.perf_counter() - started
    print(f"({args.sessions} sessions kept {kept} events; {device}; {seconds:.1f} s)")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "probe_profiler_tax.json").write_text(json.dumps({
            "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu", "torch": torch.__version__,
            "sessions": args.sessions, "events_kept": kept, "before": before, "control": control, "after": after,
            "ratios": ratios(before, after), "lines": lines, "seconds": seconds}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
