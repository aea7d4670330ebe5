"""Chapter 00's tables of this machine and of the reference run, built from what was measured.

Chapter 00 used to define its own `show_table` helper and format each table by hand in the
notebook, with a branch per table for "measured here or recorded on the reference GPU". The
tables live here as `labkit.show.table.Table`s, so the notebook shows one call per table; a
value read back from the reference run arrives as the session's `Recorded` (it carries
`label`: 'recorded on nvidia-h200, <date>'), and every table says which it shows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from labkit.chapters.ch00_setup_check import power_cap
from labkit.core import results
from labkit.measure import conditions
from labkit.session import Recorded
from labkit.show import ceilings_text
from labkit.show.ceilings_text import MATH_NAMES
from labkit.show.ceilings_text import minute as _minute
from labkit.show.ceilings_text import rate as _rate
from labkit.show.table import Table

FINGERPRINT_NAMES = {
    "where": "runs in", "python": "Python", "torch": "PyTorch", "cpu_model": "CPU",
    "cpu_cores": "CPU cores", "torch_threads": "threads torch uses",
    "host_memory_gib": "memory available (GiB)", "device": "device for tensors",
    "gpu_name": "GPU", "gpu_memory_gib": "GPU memory (GiB)",
    "gpu_sm_count": "streaming multiprocessors", "gpu_l2_mib": "GPU L2 cache (MiB)",
    "gpu_capability": "compute capability", "gpu_driver": "driver", "cuda_runtime": "CUDA runtime",
}
SIZE_NAMES = {
    "device": ("sized for", ""), "copy_bytes": ("largest buffer of the copy ceiling's sweep", "bytes"),
    "matmul_n": ("side n of the matmul ceiling (n x n)", ""),
    "cache_sweep_max_bytes": ("largest working set in the cache sweep", "bytes"),
    "cnn_batch": ("CNN batch size (chapter 03)", ""), "cnn_image": ("CNN image side (chapter 03)", ""),
    "memory_budget_bytes": ("memory budget the sizes are chosen within", "bytes"),
}


class Said(str):
    """A sentence a table function returns instead of a table, shown as text when it is a
    cell's result, not as a quoted repr (review 2026-12-03d item 13: the H200 copy printed
    "'This run records the reference itself: ...'" in quotes)."""

    def __repr__(self) -> str:
        return str(self)


def provenance(value: object) -> str:
    """'measured here', or where a recorded value comes from (the session's `Recorded.label`)."""
    return value.label if isinstance(value, Recorded) else "measured here"


def fingerprint_table(fingerprint: Mapping[str, object]) -> Table:
    """The machine's description (env.fingerprint()), each field by its English name."""
    return Table("", ["", "this machine"],
                 [[FINGERPRINT_NAMES.get(k, k.replace("_", " ")), str(v)] for k, v in fingerprint.items()])


def where_it_runs(on_gpu: bool, where: str) -> str:
    """One sentence: where the notebook runs, and what that means for the GPU measurements."""
    if on_gpu:
        return f"This notebook runs {where} with a GPU: the course measures on it."
    return (f"This notebook runs {where} on the CPU only: GPU-only measurements are shown from "
            "the reference GPU run, labelled recorded.")


SHOWN_SIZES = ("device", "memory_budget_bytes")  # the rest folded: 00's GPU page is held to 1,500 words


def sizes_table(sizes: Mapping[str, object]) -> Table:
    """The problem sizes chosen for this machine, byte sizes in MiB: what they were sized for and
    within which memory shown, every size folded under them."""
    rows = []
    for key, value in sizes.items():
        name, unit = SIZE_NAMES.get(key, (key, ""))
        rows.append((key, [name, f"{value / 2**20:,.0f} MiB" if unit == "bytes" else str(value)]))
    shown = [row for key, row in rows if key in SHOWN_SIZES] or [row for _, row in rows]
    table = Table("", ["size", "value here"], shown)
    if len(shown) < len(rows):
        table.fold("every size chosen here", str(Table("", ["size", "value here"], [row for _, row in rows])))
    return table


def ceilings_line(measured: object, caches: Mapping[str, int] | None = None, from_cache: bool = False) -> Said:
    """This machine's ceilings in one line, with when each was measured (`show.ceilings_text`,
    which chapter 02 prints too: review 2026-12-06z 00-02 item 4). With `caches` (the sizes this
    machine reports past L1, `conditions.reported_caches`), where the copy's buffers sit against
    them (`copy_buffer_text`)."""
    where = copy_buffer_text(getattr(measured, "copy_bytes", 0), caches) if caches is not None else ""
    return Said(ceilings_text.ceilings_line(measured, from_cache=from_cache) + (f" {where}" if where else ""))


def copy_buffer_text(copy_bytes: int | None, caches: Mapping[str, int]) -> str:
    """Where the copy ceiling's buffers (source and destination, `copy_bytes` each) sit against
    the caches this machine reports (review 2026-12-05u 00-04 item 2: the page said 'a buffer
    larger than the caches' on a CPU whose reported L3, 480 MiB, holds both 128 MiB buffers): beyond
    the largest, or inside it, said as reported and not verified. '' without a size or caches."""
    if not copy_bytes or not caches:
        return ""
    both = 2 * int(copy_bytes)  # source and destination
    ordered = sorted(caches.items(), key=lambda item: item[1])
    head = f"The copy's buffers, {_mib(copy_bytes)} each"
    holds = conditions.cache_place(both, dict(caches))
    if holds == conditions.BEYOND_CACHES:
        last, last_size = ordered[-1]
        return head + f", are beyond the reported {_mib(last_size)} {last}."
    below = [name for name, size in ordered if size < both]
    beyond = f"beyond {below[-1]}, " if below else ""
    # unverified: a VM's sysfs may report its host's cache (480 MiB of L3 on the course's 2-core CPU machine)
    return head + f": {beyond}inside the reported {_mib(caches[holds])} {holds} (unverified)."


def timing_table(timing: object) -> Table:
    """One `bench.time` result as a short table, median, IQR, runs and its share of the matmul
    ceiling, its warnings under it (review 2026-12-05p 00-02 item 6: the page printed the `Timing`
    repr, 18 samples and 30 fields; the plot below shows the samples)."""
    from labkit.measure.timing import format_seconds

    t = timing
    pct = getattr(t, "pct_of_matmul_ceiling", None)
    row = [t.label, format_seconds(t.median_s), format_seconds(t.iqr_s),  # type: ignore[attr-defined]
           format_seconds(t.min_s), t.count, f"{pct:.0f}%" if pct else "-"]  # type: ignore[attr-defined]
    shown = Table("", ["timing", "median", "IQR", "min", "runs", "of the matmul ceiling"], [row])
    for warning in getattr(t, "warnings", ()) or ():
        shown.note(warning)
    return shown


def ceilings_table(measured: object, reference: object) -> Table | Said:
    """This machine's ceilings beside the reference's recorded ones, with their ratio.

    reference: the session's `Recorded` of the reference's 'ceilings' (falsy when nothing is
    recorded). When this run records the reference itself, it says so instead."""
    if os.environ.get(results.REFERENCE_ENV, "").strip() == results.DEFAULT_REFERENCE:
        return Said("This run records the reference itself: its ceilings are the ones shown above.")
    if not reference:
        return Said("Nothing recorded yet for the reference GPU: only this machine's ceilings are shown above.")
    theirs = reference.value if hasattr(reference, "value") else reference
    rows = [("copy bandwidth (GB/s, read + write)", measured.copy_gbps, theirs["copy_gbps"])]
    for math in dict.fromkeys([*measured.matmul_tflops, *theirs["matmul_tflops"]]):
        rows.append((f"matmul {MATH_NAMES.get(math, math)} (TFLOP/s)",
                     measured.matmul_tflops.get(math), theirs["matmul_tflops"].get(math)))
    return Table("", ["ceiling", "this machine", f"reference GPU ({provenance(reference)})",
                      "reference / this machine"],
                 [[name, _rate(mine) if mine else "not measured here", _rate(ref),
                   times(ref / mine) if mine and ref else ""] for name, mine, ref in rows])


def times(ratio: float) -> str:
    """'1.41x' under 10x, '73x' above: the H100 smoke run of 2026-12-05 23:20 printed the
    reference H200's copy ceiling as '1x' this H100's (4,246 against 3,004 GB/s, 1.41x) where the
    ratio was rounded to a whole number for a CPU's 50-100x."""
    return f"{ratio:.2f}x" if ratio < 10 else f"{ratio:,.0f}x"


def ceilings_dates(ceilings: Mapping) -> str:
    """When the reference's ceilings were measured, each kept one with its own date (review
    2026-12-05p 00-02 item 7: the page printed the results file's last write, 04:12, for ceilings
    measured 03:49, two of them kept from the day before). '' where no date is recorded."""
    measured_at = ceilings.get("measured_at")
    if not measured_at:
        return ""
    kept = dict(dict(ceilings.get("details") or {}).get("kept_higher") or {})
    names = {"copy_gbps": "copy", **{f"matmul_tflops.{m}": f"matmul {n}" for m, n in MATH_NAMES.items()}}
    by_date: dict[str, list[str]] = {}
    for key, found in kept.items():
        if isinstance(found, Mapping) and found.get("measured_at"):
            by_date.setdefault(_minute(found["measured_at"]), []).append(names.get(key, key))
    older = "; ".join(f"{', '.join(what)}: kept from {when}" for when, what in sorted(by_date.items()))
    return f"ceilings of {_minute(measured_at)} UTC" + (f" ({older})" if older else "")


def reference_machine_line(reference: object, machine: str = results.DEFAULT_REFERENCE) -> str:
    """The reference machine in one line, GPU, driver and torch, and the dates of its ceilings
    (`ceilings_dates`, from `reference`, the session's `Recorded` of them), not the results file's
    last write, which is no measurement's date (review 2026-12-05p 00-02 item 7)."""
    data = results.load(machine)
    if data is None:
        return results.describe_machine(machine)  # says that nothing is recorded
    fp = data.get("fingerprint", {})
    theirs = getattr(reference, "value", reference)
    recording = os.environ.get(results.REFERENCE_ENV, "").strip() == machine  # its ceilings: this run's, above
    dates = ceilings_dates(theirs) if isinstance(theirs, Mapping) and not recording else ""
    return (f"{machine}: {fp.get('gpu_name') or fp.get('cpu_model', '?')}, driver {fp.get('gpu_driver', 'n/a')}, "
            f"torch {fp.get('torch', '?')}" + (f"; {dates}" if dates else ""))


def sweep_table(source: object) -> Table | Said:
    """Each point of a matmul sweep as a share of its math's best (`power_cap.sweep_rows`).

    source: this run's ceilings (a `Ceilings`, with its `sweep`) or the reference's recorded
    ones (the session's `Recorded`); the title says which. The share is of this sweep's own best,
    not of the ceiling the chapters divide by, which may be kept from an earlier run (review
    2026-12-04j item 10: the H200's fp16 100% is 708 of this sweep, the kept ceiling 751)."""
    sweep = source.sweep if hasattr(source, "sweep") else source.get("sweep") if source else None
    points = power_cap.sweep_rows(sweep)
    if not points:
        return Said("No matmul sweep to show here (a CPU ceilings file from before the sweep, or none recorded).")
    where = f"the reference GPU ({source.label})" if isinstance(source, Recorded) else "this run"
    sizes = sorted({n for _, n, _, _ in points})
    by_math: dict[str, dict[int, str]] = {}
    for m, n, rate, share in points:  # one row per math (the GPU page's 1,500 words: 12 rows were 4)
        by_math.setdefault(m, {})[n] = f"{rate:,.1f} ({100 * share:.0f}%)"
    shown = Table(f"sweep from {where}: TFLOP/s (share of that math's best in this sweep)",
                  ["math", *[f"n = {n:,}" for n in sizes]],
                  [[MATH_NAMES.get(m, m), *[cells.get(n, "") for n in sizes]] for m, cells in by_math.items()])
    # this run's copy sweep only: the CPU page, showing the reference GPU's recorded matmul sweep,
    # sits near its 1,500 words, and its own copy ceiling is the line above the table
    copy = "" if isinstance(source, Recorded) else copy_sweep_line(sweep)
    return shown.note(copy) if copy else shown


def copy_sweep_line(sweep: object) -> str:
    """'Copy, GB/s (share of the best): 64 MiB 4,101 (97%), 256 MiB ..., 1 GiB ...': the copy
    ceiling is the best of its sweep's sizes, and review 2026-12-06b item 11 found the page
    showed one size ('The copy's buffers, 1024 MiB each') with the sweep never shown. '' where
    the sweep records fewer than two copy sizes."""
    points = (sweep or {}).get("copy") if isinstance(sweep, Mapping) else None
    if not isinstance(points, Mapping) or len(points) < 2:
        return ""
    rates = sorted((int(k), float(v)) for k, v in points.items())
    best = max(v for _, v in rates)
    if best <= 0:
        return ""

    def size(nbytes: int) -> str:
        return f"{nbytes >> 30} GiB" if nbytes >= 1 << 30 and nbytes % (1 << 30) == 0 else f"{nbytes >> 20} MiB"
    return "Copy, GB/s (share of the best): " + ", ".join(
        f"{size(n)} {v:,.0f} ({100 * v / best:.0f}%)" for n, v in rates) + "."


def probe_table(path: Path) -> Table | Said:
    """The recorded power probe (clock, power, power cap per kind of data), with what it shows."""
    rows = power_cap.probe_rows(path) if Path(path).exists() else []
    if not rows:
        return Said("The recorded power probe is not in this checkout (results/h200_probes/).")
    separates = power_cap.flag_separates(rows)  # else the flag's column would say nothing: left out
    columns = (["data", "mode", "TFLOP/s", "SM clock (MHz, median)", "power (W, median)"]
               + (["power cap flag (samples)"] if separates else []))
    values = [[r["data"], r["mode"], round(r["tflops"]), round(r["clock_mhz"]), round(r["power_w"])]
              + ([f"{r['capped_samples']} of {r['samples']}"] if separates else []) for r in rows]
    # the hot runs shown, every run folded (00's GPU page is held to 1,500 words: review 2026-12-04l)
    hot = [v for v, r in zip(values, rows, strict=True) if r["mode"] == "hot"] or values
    shown = Table("recorded on the reference H200 by benchmarks/bf16_ceiling_probe.py (hot runs)",
                  columns, hot)
    if len(hot) < len(values):
        shown.fold("every run, hot and cold", str(Table("", columns, values)))
    rnd = next(r for r in rows if r["data"].startswith("randn"))
    zero = next((r for r in rows if r["data"] == "zeros"), None)
    watts = sorted(r["power_w"] for r in rows)
    flag = (f" (power cap flag in {rnd['capped_samples']} of {rnd['samples']} samples)" if separates else
            f"; the power cap flag was set in every sample, {watts[0]:,.0f} W and "
            f"{watts[-1]:,.0f} W alike: it separates nothing")
    return shown.note(
        f"On random data the GPU runs at {rnd['clock_mhz']:,.0f} MHz and {rnd['power_w']:,.0f} W"
        + (f"; on zeros it draws {zero['power_w']:,.0f} W, clocks {zero['clock_mhz']:,.0f} MHz and "
           f"reaches {zero['tflops'] / rnd['tflops']:.2f}x the rate: that is why ceilings are "
           "measured on random data, never zeros" if zero else "") + flag + ".")


def no_sync_table(no_sync: object) -> Table | Said:
    """Mistake 1 (GPU): a stopwatch without synchronize against one with it and the harness, and
    where recorded the harness's rate as a share of the matmul ceiling (review 2026-12-04m item
    10: it says the synchronised figure is the real one)."""
    if not no_sync:
        return Said("This machine has no GPU, and no reference GPU run has been recorded yet "
                    "(results/nvidia-h200.json lacks it), so there is nothing to show here.")
    rows = [
        ["matmul", f"{no_sync['n']}^3 {no_sync['dtype']}"],
        ["stopwatch, no synchronize", no_sync["no_sync_s"]],
        ["stopwatch with synchronize", no_sync["with_sync_s"]],
        ["labkit.measure.bench median (CUDA events)", no_sync["harness_median_s"]],
        ["no-sync understates the time by", f"{no_sync['understatement']:.0f}x"],
    ]
    tflops, pct = no_sync.get("harness_tflops"), no_sync.get("harness_pct_of_matmul_ceiling")
    if tflops and pct:
        rows.append(["the bench median's rate", f"{tflops:,.0f} TFLOP/s, {pct:.0f}% of the matmul ceiling"])
    return Table("", ["", provenance(no_sync)], rows, units={provenance(no_sync): "s"})


def whole_ratio(ratio: float) -> float | int:
    """A ratio of 100 or more as a whole number to two significant figures: a first call timed
    once against a steady median says "thousands of times", and 35,012 (or a decimal after it)
    claims a precision that one timed call lacks: 35,000."""
    if ratio < 100:
        return ratio
    return int(round(ratio, 2 - len(str(int(ratio)))))


def first_over_steady(row: Mapping) -> tuple[float, float, bool]:
    """A first-call row's steady time and ratio on the first call's clock (the wall clock),
    and whether they are: a row recorded before the steady state was timed by the wall clock
    has only the harness's median (device time on a GPU), and its ratio mixes the clocks."""
    if row.get("steady_wall_s"):
        return row["steady_wall_s"], row["first_over_steady_wall"], True
    return row["steady_median_s"], row["first_over_steady"], row.get("device", "cpu") == "cpu"


def ratio_text(ratio: float) -> str:
    """A ratio as text, whole from 100x up (`whole_ratio`): '35,000x', '66.6x', '2.4x'; a first
    call timed once claims no more (review 2026-12-03d item 13: '66.61x' in the table)."""
    shown = whole_ratio(ratio)
    return f"{shown:,}x" if isinstance(shown, int) else f"{shown:.1f}x"


def parity_first_calls_note(rows: object) -> str:
    """The note under the reference GPU's first calls on a CPU page (review 2026-12-04m item 9):
    the record they come from (the table's column names its machine and date, read from the
    record), that the chapter's own GPU run does not renew them and benchmarks/harness_parity.py
    does, and why they differ from the GPU page's Mistake 2 table. The rows teach what no CPU can
    show: the CUDA context and cuBLAS set-up, paid once per process, which only a fresh process's
    first calls time (the notebook's GPU run has its context by then)."""
    when = f" on {rows.date}" if isinstance(rows, Recorded) and rows.date else ""
    return (f"Recorded by benchmarks/harness_parity.py in a fresh process{when}: its next GPU run renews them "
            "(this chapter's does not). Its fill includes the first cudaMalloc, unlike Mistake 2's.")


def first_call_table(rows: object, where: str = "", note: str = "") -> Table | Said | None:
    """First call against the steady median, per kind of work (measured here or recorded);
    `note`, when given, under the table."""
    if rows is None:
        return None
    if not rows:
        return Said(provenance(rows))  # the session's Recorded says what is missing
    found = list(rows.value if hasattr(rows, "value") else rows)
    steady = [first_over_steady(r) for r in found]
    table = Table("", [f"work, {where or provenance(rows)}", "first call", "steady median", "first / steady"],
                  [[r["label"], r["first_call_s"], s[0], ratio_text(s[1])] for r, s in zip(found, steady, strict=True)],
                  units={"first call": "s", "steady median": "s"})
    if not all(same_clock for _, _, same_clock in steady):
        table.note("The steady medians here are GPU time (CUDA events), the first calls wall time: "
                   "read each ratio as an order of magnitude only.")
    if note:
        table.note(note)
    return table


def gpu_allocator_line(found: object) -> str:
    """The cudaMalloc segments a GPU's caching allocator made while the CNN was timed."""
    if not found:
        return "No GPU here and no reference GPU run recorded yet: nothing to show."
    from labkit.measure.timing import format_seconds

    n = int(found["cudamalloc_segments_during_timing"])
    # review 2026-12-05p 00-02 item 7: '1 new cudaMalloc segments', unnamed, beside prose that
    # promises none: the grammar, the segments' sizes and pools where recorded (since 2026-12-05),
    # and what the count shows
    sizes = found.get("new_segments") or []
    listed = ", ".join(f"{_mib(s['bytes'])} {s['pool']} pool" for s in sizes)
    named = f" ({listed})" if sizes else ""
    return (f"{provenance(found)}: {n} new cudaMalloc segment{'' if n == 1 else 's'}{named} during "
            f"{found['calls_timed']} timed calls (median {format_seconds(found['median_s'])})"
            + ("" if n == 0 else ": not one a call"))


def _mib(nbytes: int) -> str:
    return f"{nbytes / 2**20:g} MiB" if nbytes >= 2**20 else f"{nbytes // 2**10} KiB"


def sharing_line(on_gpu: bool, others: list) -> str:
    """Whether other processes use this GPU now (the driver's process list, read just now)."""
    if not on_gpu:
        return "No GPU here: nothing to share."
    if others:
        return f"{len(others)} other process(es) use this GPU now: timings taken now measure a share of it."
    return "No other process uses this GPU now (the driver's process list, read just now)."
