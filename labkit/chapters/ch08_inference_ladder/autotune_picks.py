"""What torch.compile's runtime autotuning chose in one process, and whether fresh processes agree.

Why this exists: on the H200 (reproduce 08, 2026-12-05) the same rungs read the same device
time in three fresh processes when eager (within about 0.5%), but the compiled ones did not
(batch 256: 31.1, 32.1 and 32.6 us of device time per image, each process steady within about
0.3%), with the same kernel names. One cause that fits: in default mode Inductor times two or
more launch configs of each pointwise Triton kernel on its first call
(`torch._inductor.config.triton.autotune_pointwise`, on by default) and keeps the fastest; where
two configs time within the timing's noise, each process may keep another one, and each cold
compile (the ladder compiles into a fresh cache folder) decides again.

`recording()` keeps, for every kernel Inductor's autotuner timed in the block, the configs and
their milliseconds; `across_runs` says for how many kernels fresh processes kept different
configs and how close the timings that decided them were. It observes and changes nothing: the
timed call is Inductor's own, its result returned as it was. Where Inductor's autotuner is not
there (a CPU build compiles C++; another torch), nothing is recorded.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator, Sequence

MARGIN_CLOSE = 0.03   # a pick decided by under 3% between its two fastest configs: within noise


@contextlib.contextmanager
def recording() -> Iterator[list[dict]]:
    """Inside the block, each autotuning Inductor runs appends {"kernel", "source", "ms": {config:
    ms}}: source is the kernel file's name, which Inductor makes a hash of the kernel's code, so
    the same kernel is known in another process; a config that failed to run has ms None."""
    seen: list[dict] = []
    try:
        from torch._inductor.runtime import triton_heuristics
        autotuner = triton_heuristics.CachingAutotuner
        original = autotuner.benchmark_all_configs
    except (ImportError, AttributeError):
        yield seen
        return

    def benchmark_all_configs(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        timings = original(self, *args, **kwargs)
        try:
            seen.append({"kernel": getattr(getattr(self, "fn", None), "__name__", "?"),
                         "source": os.path.basename(str(getattr(self, "filename", None) or "")),
                         "ms": {str(getattr(launcher, "config", launcher)):
                                (float(ms) if math.isfinite(ms) else None)
                                for launcher, ms in timings.items()}})
        except Exception:  # noqa: BLE001 -- observing must never break Inductor's own call
            pass
        return timings

    autotuner.benchmark_all_configs = benchmark_all_configs
    try:
        yield seen
    finally:
        autotuner.benchmark_all_configs = original


def pick(entry: dict) -> tuple[str, float]:
    """The config the autotuner kept (the fastest) and its margin: the second fastest's ms over
    the fastest's, minus 1 (inf where only one config ran)."""
    ranked = sorted(((c, ms) for c, ms in entry["ms"].items() if ms is not None), key=lambda item: item[1])
    if not ranked:
        return "", float("inf")
    best, best_ms = ranked[0]
    if len(ranked) == 1 or best_ms <= 0:
        return best, float("inf")
    return best, ranked[1][1] / best_ms - 1


def _keyed(entries: Sequence[dict]) -> dict[tuple[str, str, int], dict]:
    """Entries by (kernel name, its code's hash, its occurrence among those): runs need not
    compile the same rungs (one may keep CUDA Graphs and another not), so a kernel is matched by
    its code, not by where it came in the run; the same code timed again counts on."""
    counts: dict[tuple[str, str], int] = {}
    keyed = {}
    for entry in entries:
        name = (entry.get("kernel", "?"), entry.get("source", ""))
        keyed[(*name, counts.get(name, 0))] = entry
        counts[name] = counts.get(name, 0) + 1
    return keyed


def across_runs(runs: Sequence[Sequence[dict]]) -> dict:
    """How the fresh processes' picks compare: kernels timed in every run, those whose kept
    config differs between runs, and those decided by under MARGIN_CLOSE in some run."""
    keyed = [_keyed(run) for run in runs]
    common = set.intersection(*(set(k) for k in keyed)) if keyed else set()
    differ, close = [], []
    for key in sorted(common):
        picks = [pick(k[key]) for k in keyed]
        if len({config for config, _ in picks}) > 1:
            differ.append(f"{key[0]}#{key[2]}")
        if min(margin for _, margin in picks) < MARGIN_CLOSE:
            close.append(f"{key[0]}#{key[2]}")
    return {"runs": len(runs), "timed_in_every_run": len(common), "picks_differ": differ,
            "decided_within_noise": close, "margin_close": MARGIN_CLOSE}
