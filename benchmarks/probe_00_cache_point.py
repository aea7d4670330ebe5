"""Chapter 00's largest cache-curve point, timed other ways (review 2026-12-05p 00-02 item 3):

    python3 benchmarks/probe_00_cache_point.py          # ~5-10 s on a GPU, most of it importing torch

On the H200 (2026-12-05 03:50) the curve's 1 GiB point, a copy of all of a 512 MiB `src` into
all of a 512 MiB `dst` in a CUDA Graph, ran at 63% of a copy ceiling measured at that size in the
same run, while 256 and 512 MiB ran near the ceiling: 3.1x the time for 2x the bytes, its rounds
tight. The page now calls it an anomaly of that point, not memory's rate; its cause is not known.
This probe times the same bytes each way that could set it, and prints what it measured (nothing
is recorded, nothing decides a verdict):

- 'as the curve': `pitfalls._gpu_point` on buffers made as `pitfalls.cache_curve` makes them
  (`src` filled, `dst` from `torch.empty_like`, never written before), at the largest working
  set and at half of it, each twice (the second time `dst` has been written);
- 'no graph, hot' and 'no graph, cold': `dst.copy_(src)` one call at a time, by `bench.time`;
- 'graph, dst pre-filled': a fresh `dst` written with zeros before the graph is captured;
- 'graph, as the ceiling': fresh buffers made as `ceilings.copy_bandwidth_gbps` makes them
  (`torch.rand` source).

Without CUDA it says so and exits 0. Each timing runs for REP_MS; the whole probe well under 20 s
on a GPU (graph captures included).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REP_MS = 30.0
GiB = 2**30


def main(max_bytes: int = GiB) -> int:
    began = time.perf_counter()
    import torch

    if not torch.cuda.is_available():
        print("cache-point probe: no CUDA on this machine, nothing measured")
        return 0
    from labkit.chapters.ch00_setup_check import pitfalls
    from labkit.measure import bench

    where = torch.device("cuda")
    count = max_bytes // 4 // 2  # float32 elements of src (and of dst): the working set is both
    rows = []

    def said(how: str, size: int, t_s: float, gbps: float, iqr_s: float | None = None) -> None:
        iqr = f", IQR {1e6 * iqr_s:.2f} us" if iqr_s is not None else ""
        rows.append(f"{how:<34} {size >> 20:>5} MiB  {1e6 * t_s:>9.1f} us  {gbps:>7,.0f} GB/s{iqr}")
        print(rows[-1], flush=True)  # as it is taken: a run cut by its timeout still says what it measured

    src = torch.empty(count, device=where).fill_(1.5)
    dst = torch.empty_like(src)  # as the curve: never written before its first point
    print(f"cache-point probe on {torch.cuda.get_device_name(where)} (working set = src + dst; device time; "
          "median of each timing):", flush=True)
    # half size first: its 'first' row copies into a dst never written; the full size's 'first' row then
    # finds dst's first half written (review 2026-12-05p2 00-04 item 5: the label said otherwise)
    for attempt in ("first", "again"):
        for n in (count // 2, count):
            p = pitfalls._gpu_point(src[:n], dst[:n], None, REP_MS)
            said(f"as the curve ({attempt}{', graph' if p['graph'] else ', NO graph'})", p["working_set_bytes"],
                 p["median_s"], p["gbps"], p["iqr_s"])
    moved = 2 * count * 4
    for mode in ("hot", "cold"):
        t = bench.time(lambda: dst.copy_(src), mode=mode, warmup_ms=5, rep_ms=REP_MS, min_runs=3,
                       bytes_moved=moved, device=where, label=f"copy, no graph, {mode}")
        said(f"no graph, {mode}", moved, t.median_s, t.gbps, t.iqr_s)
    filled = torch.zeros_like(src)  # written before the graph is captured
    p = pitfalls._gpu_point(src, filled, None, REP_MS)
    said("graph, dst pre-filled", p["working_set_bytes"], p["median_s"], p["gbps"], p["iqr_s"])
    del filled
    fresh_src = torch.rand(count, device=where)
    fresh_dst = torch.empty_like(fresh_src)
    p = pitfalls._gpu_point(fresh_src, fresh_dst, None, REP_MS)
    said("graph, as the ceiling's buffers", p["working_set_bytes"], p["median_s"], p["gbps"], p["iqr_s"])
    print(f"probe took {time.perf_counter() - began:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else GiB))
