"""Chapter 00's tables: measured here or recorded, and each says which."""

from types import SimpleNamespace

import pytest
import torch

from labkit.chapters.ch00_setup_check import machine, pitfalls
from labkit.measure import conditions
from labkit.session import Recorded
from tests.paths import ROOT

NO_SYNC = {"n": 4096, "dtype": "bfloat16", "no_sync_s": 3e-5, "with_sync_s": 1.8e-4,
           "harness_median_s": 1.9e-4, "understatement": 6.2}


def test_a_recorded_value_says_so_and_a_measured_one_says_here():
    recorded = Recorded("00_setup_check", "no_sync", "nvidia-h200", NO_SYNC, "2026-12-03")
    assert machine.provenance(recorded) == "recorded on nvidia-h200, 2026-12-03"
    assert machine.provenance(NO_SYNC) == "measured here"
    assert "recorded on nvidia-h200, 2026-12-03" in str(machine.no_sync_table(recorded))
    assert "measured here" in str(machine.no_sync_table(NO_SYNC))
    missing = Recorded("00_setup_check", "no_sync", "nvidia-h200")
    assert "nothing to show" in machine.no_sync_table(missing)
    assert machine.first_call_table(None) is None
    assert "nothing recorded" in machine.first_call_table(missing)
    # review 2026-12-03d item 13: a sentence returned as a cell's result shows as text, unquoted
    said = machine.no_sync_table(missing)
    assert repr(said) == str(said) and not repr(said).startswith("'")


def test_first_calls_and_the_sweep_render_as_tables():
    rows = [{"label": "conv2d", "first_call_s": 2e-3, "steady_median_s": 2e-4, "first_over_steady": 10.0}]
    assert "10.0x" in str(machine.first_call_table(rows))
    # review 2026-12-03d item 13: no '66.61x' from one timed call: three figures at most
    rows66 = [{"label": "fill", "first_call_s": 0.41, "steady_median_s": 6.155e-3, "first_over_steady": 66.61}]
    assert "66.6x" in str(machine.first_call_table(rows66)) and "66.61" not in str(machine.first_call_table(rows66))
    sweep = {"matmul": {"float32": {"1024": 1.0, "2048": 2.0}}}
    recorded = Recorded("00_setup_check", "ceilings", "nvidia-h200", {"sweep": sweep}, "2026-12-03")
    shown = machine.sweep_table(recorded)
    assert shown.columns == ["math", "n = 1,024", "n = 2,048"]  # one row per math (00's GPU page words)
    assert shown.rows == [["float32", "1.0 (50%)", "2.0 (100%)"]] and "share of that math's best" in shown.title
    assert "the reference GPU (recorded on nvidia-h200" in shown.title
    assert "No matmul sweep" in machine.sweep_table(Recorded("00_setup_check", "ceilings", "nvidia-h200"))
    assert shown.notes == []  # no copy sweep recorded: no line
    # review 2026-12-06b item 11: the copy ceiling's sweep shown, each size's share of the best
    copies = {**sweep, "copy": {str(64 << 20): 4100.0, str(256 << 20): 4200.0, str(1 << 30): 4246.0}}
    with_copy = machine.sweep_table(SimpleNamespace(sweep=copies))  # this run's ceilings
    assert with_copy.notes == ["Copy, GB/s (share of the best): 64 MiB 4,100 (97%), 256 MiB 4,200 (99%), "
                               "1 GiB 4,246 (100%)."]
    # a recorded reference's (the CPU page's): the matmul rows only, for its 1,500 words
    assert machine.sweep_table(Recorded("00_setup_check", "ceilings", "nvidia-h200", {"sweep": copies}, "x")).notes == []
    assert machine.copy_sweep_line({"copy": {"1024": 1.0}}) == "" and machine.copy_sweep_line(None) == ""


def test_where_and_sharing_lines_follow_the_device():
    assert "with a GPU" in machine.where_it_runs(True, "local")
    assert "CPU only" in machine.where_it_runs(False, "binder")
    assert "No GPU here" in machine.sharing_line(False, [])
    assert "2 other process(es)" in machine.sharing_line(True, [1, 2])


def test_the_hot_cold_quiz_asks_for_its_measurement_first():
    with pytest.raises(ValueError, match="run the hot/cold cell"):
        pitfalls.hot_cold_class(None, None)

    class Rate:
        def __init__(self, gbps: float, flagged: float = 0.0) -> None:
            self.gbps, self.flagged = gbps, flagged

        def flag(self) -> dict | None:
            return {"timing": "t", "why": "noisy", "spread": self.flagged} if self.flagged else None

    assert pitfalls.hot_cold_class(Rate(4.0), Rate(1.0)) == "more than 3x"
    assert pitfalls.hot_cold_class(Rate(1.1), Rate(1.0)) == "about the same (within 20%)"
    # a hot timing 25% noisy could carry 1.3x below the 1.2x edge: both choices are right
    key = pitfalls.hot_cold_class(Rate(1.3, 0.25), Rate(1.0))
    assert key.choices_right() == pitfalls.HOT_COLD_CHOICES[:2]
    assert pitfalls.hot_cold_class(Rate(2.0, 0.05), Rate(1.0)) == "1.2x to 3x"


def test_a_first_call_ratio_of_hundreds_is_a_whole_number_to_two_figures():
    assert machine.whole_ratio(35012.7) == 35000 and machine.whole_ratio(2.37) == 2.37
    assert machine.whole_ratio(122171.4) == 120000 and machine.whole_ratio(619.6) == 620
    assert machine.ratio_text(35012.7) == "35,000x" and machine.ratio_text(2.37) == "2.4x"


def test_a_first_call_ratio_divides_like_clocks_or_says_it_does_not():
    """The first call is wall time; a GPU row recorded with only the harness's median (CUDA
    events) mixes clocks, and the table says to read it as an order of magnitude."""
    gpu_old = {"label": "conv2d", "device": "cuda", "first_call_s": 0.317, "steady_median_s": 4.93e-6,
               "first_over_steady": 64265.0}
    assert machine.first_over_steady(gpu_old) == (4.93e-6, 64265.0, False)
    assert "order of magnitude" in str(machine.first_call_table([gpu_old]))
    assert "64,000x" in str(machine.first_call_table([gpu_old]))
    gpu_new = {**gpu_old, "steady_wall_s": 2e-5, "first_over_steady_wall": 15850.0}
    assert machine.first_over_steady(gpu_new) == (2e-5, 15850.0, True)
    assert "order of magnitude" not in str(machine.first_call_table([gpu_new]))
    cpu_old = {**gpu_old, "device": "cpu"}  # the harness's CPU median is wall time already
    assert machine.first_over_steady(cpu_old)[2]


def test_the_recorded_first_calls_say_which_record_and_date_and_what_renews_them():
    """Review 2026-12-04i item 8: the CPU page's recorded GPU first calls (harness_parity: fill 5.5x)
    and the GPU page's own fill row (1.8x) are different experiments. Review 2026-12-04m item 9: the
    rows are from harness_parity's record of 2026-12-03, which the chapter's GPU run does not renew:
    the note names the script, the machine and date read from the record, and what renews them."""
    rows = Recorded("00_setup_check", "first_call", "nvidia-h200", [
        {"label": "allocate and fill 1 GiB (first cudaMalloc)", "first_call_s": 1.28e-3,
         "steady_median_s": 2.32e-4, "first_over_steady": 5.5}], date="2026-12-03")
    note = machine.parity_first_calls_note(rows)
    shown = str(machine.first_call_table(rows, note=note))
    assert "recorded on nvidia-h200, 2026-12-03" in shown  # the table's column, from the record
    assert ("Recorded by benchmarks/harness_parity.py in a fresh process on 2026-12-03: its next GPU run renews "
            "them (this chapter's does not)") in shown
    assert "unlike Mistake 2's" in shown
    assert "harness_parity" not in str(machine.first_call_table(rows))
    assert machine.parity_first_calls_note(None).startswith("Recorded by benchmarks/harness_parity.py in a fresh "
                                                            "process: its next")


def test_the_sizes_table_shows_what_they_were_sized_for_and_folds_every_size():
    """00's GPU page read 1,606 words on the 2026-12-04 16:03 record (limit 1,500): the sizes'
    device and memory budget are shown, each size is one click away, not dropped."""
    sizes = {"device": "cuda", "copy_bytes": 2**30, "matmul_n": 8192, "memory_budget_bytes": 2**31}
    shown = machine.sizes_table(sizes)
    assert [row[0] for row in shown.rows] == ["sized for", "memory budget the sizes are chosen within"]
    (summary, text), = shown.folded
    assert summary == "every size chosen here" and "1,024 MiB" in text and "8192" in text


def test_mistake_1_sets_the_harness_median_against_the_matmul_ceiling():
    """Review 2026-12-04m item 10: 183 us for 2*4096^3 bf16 is 751 TFLOP/s, 97% of 771; saying so tells
    the learner that the synchronised figure is the real one. A record without the share shows none."""
    shown = str(machine.no_sync_table({**NO_SYNC, "harness_tflops": 751.0, "harness_pct_of_matmul_ceiling": 97.4}))
    assert "751 TFLOP/s, 97% of the matmul ceiling" in shown
    assert "TFLOP/s" not in str(machine.no_sync_table(NO_SYNC))


def test_the_gpu_allocator_line_counts_in_good_grammar_and_names_the_new_segments():
    """Review 2026-12-05p 00-02 item 7: the H200 printed '1 new cudaMalloc segments', unnamed, under
    prose that promises none. One segment in the singular, and not one a call; the sizes and pools
    where recorded (from the next GPU run)."""
    old = {"cudamalloc_segments_during_timing": 1, "calls_timed": 178, "median_s": 73.5e-6}
    assert machine.gpu_allocator_line(old) == ("measured here: 1 new cudaMalloc segment during 178 timed calls "
                                               "(median 73.5 us): not one a call")
    named = machine.gpu_allocator_line(old | {"new_segments": [{"bytes": 2 << 20, "pool": "small"}]})
    assert "1 new cudaMalloc segment (2 MiB small pool) during 178" in named
    none = machine.gpu_allocator_line(old | {"cudamalloc_segments_during_timing": 0, "new_segments": []})
    assert none.endswith("0 new cudaMalloc segments during 178 timed calls (median 73.5 us)")


def test_the_reference_ceilings_carry_their_own_dates_not_the_files_last_write():
    """Review 2026-12-05p 00-02 item 7: the CPU page printed 'recorded 2026-12-05T04:12:12' (the
    results file's last write) above ceilings measured at 03:49:51, two kept from 2026-12-04 18:54."""
    ceilings = {"copy_gbps": 4245.0, "matmul_tflops": {"float32": 51.4}, "measured_at": "2026-12-05T03:49:51+00:00",
                "details": {"kept_higher": {
                    "copy_gbps": {"kept": 4245.0, "measured_at": "2026-12-04T18:54:43+00:00", "this_run": 4220.0},
                    "matmul_tflops.float32": {"kept": 51.4, "measured_at": "2026-12-04T18:54:43+00:00"}}}}
    assert machine.ceilings_dates(ceilings) == ("ceilings of 2026-12-05 03:49 UTC (copy, matmul float32: kept from "
                                                "2026-12-04 18:54)")
    assert machine.ceilings_dates({**ceilings, "details": {}}) == "ceilings of 2026-12-05 03:49 UTC"
    assert machine.ceilings_dates({"copy_gbps": 1.0}) == ""
    recorded = Recorded("00_setup_check", "ceilings", "nvidia-h200", ceilings, "2026-12-05")
    line = machine.reference_machine_line(recorded)
    assert "recorded" not in line and line.startswith("nvidia-h200: ")
    assert line.endswith("; ceilings of 2026-12-05 03:49 UTC (copy, matmul float32: kept from 2026-12-04 18:54)")
    assert "ceilings of" not in machine.reference_machine_line(None)


def test_a_run_that_records_the_reference_gives_no_older_dates(monkeypatch):
    """Where this run records the reference, its own ceilings are above: the file's older ones' dates
    would be another run's."""
    from labkit.core import results

    monkeypatch.setenv(results.REFERENCE_ENV, results.DEFAULT_REFERENCE)
    recorded = Recorded("00_setup_check", "ceilings", "nvidia-h200", {"measured_at": "2026-12-05T03:49:51"}, "x")
    assert "ceilings of" not in machine.reference_machine_line(recorded)


def test_the_ceilings_show_as_one_line_not_the_dataclass_repr():
    """Review 2026-12-05p 00-02 item 6: the page printed `Ceilings(...)`, about 1,900 characters."""
    from labkit.measure.ceiling_store import Ceilings

    found = Ceilings(device_key="NVIDIA_H200", device="cuda:0", copy_gbps=4245.2, copy_bytes=2**30,
                     matmul_tflops={"float32": 51.4, "tfloat32": 393.5}, matmul_n=8192,
                     measured_at="2026-12-05T03:49:51+00:00")
    line = machine.ceilings_line(found)
    assert repr(line) == ("Ceilings of this machine (measured 2026-12-05 03:49 UTC): copy 4,245 GB/s (read + write); "
                          "matmul TFLOP/s: float32 51.4, TF32 (float32 data) 394.")


def test_the_ceilings_line_says_where_the_copy_s_buffers_sit_against_the_reported_caches():
    """Review 2026-12-05u 00-04 item 2: 'on a buffer larger than the caches' on a CPU whose reported
    L3 (480 MiB) holds both 128 MiB buffers; where they are inside it, the line says so."""
    from labkit.measure.ceiling_store import Ceilings

    mib = 2**20
    cpu = {"L2": 2 * mib, "L3": 480 * mib}
    assert machine.copy_buffer_text(128 * mib, cpu) == (
        "The copy's buffers, 128 MiB each: beyond L2, inside the reported 480 MiB L3 (unverified).")
    assert machine.copy_buffer_text(2**30, {"L2": 60 * mib}) == "The copy's buffers, 1024 MiB each, are beyond the reported 60 MiB L2."
    # both buffers count: 2 x 256 MiB is beyond the 480 MiB L3, 2 x 240 MiB inside it
    assert machine.copy_buffer_text(256 * mib, cpu).endswith(", are beyond the reported 480 MiB L3.")
    assert "inside the reported 480 MiB L3" in machine.copy_buffer_text(240 * mib, cpu)
    assert machine.copy_buffer_text(mib // 2, cpu) == "The copy's buffers, 512 KiB each: inside the reported 2 MiB L2 (unverified)."
    assert machine.copy_buffer_text(0, cpu) == "" and machine.copy_buffer_text(128 * mib, {}) == ""
    found = Ceilings(device_key="cpu", device="cpu", copy_gbps=36.8, copy_bytes=128 * mib,
                     matmul_tflops={"float32": 0.344}, matmul_n=1024, measured_at="2026-12-05T20:24:00+00:00")
    line = machine.ceilings_line(found, cpu)
    assert line.endswith("matmul TFLOP/s: float32 0.344. The copy's buffers, 128 MiB each: beyond L2, inside the reported "
                         "480 MiB L3 (unverified).")
    assert "buffers" not in machine.ceilings_line(found)  # no caches given: the line as before
    assert set(conditions.reported_caches(torch.device("cpu"))) <= {"L2", "L3", "L4"}
    source = (ROOT / "notebooks" / "00_setup_check.py").read_text(encoding="utf-8")
    assert "larger than the caches" not in source and "conditions.reported_caches(" in source


def test_a_timing_shows_as_a_short_table_with_its_warnings():
    """Review 2026-12-05p 00-02 item 6: the page printed `Timing(...)`, 18 samples and 30 fields."""
    from labkit.measure.timing import Timing

    t = Timing(label="8192x8192 float32 matmul", device="cuda:0", mode="cold", times_s=(0.0215, 0.0214, 0.0216),
               median_s=0.0215, iqr_s=2.6e-5, min_s=0.0214, count=3, pct_of_matmul_ceiling=99.4,
               warnings=("noisy: IQR is 31% of the median",))
    shown = machine.timing_table(t)
    assert shown.columns == ["timing", "median", "IQR", "min", "runs", "of the matmul ceiling"]
    assert shown.rows == [["8192x8192 float32 matmul", "21.5 ms", "26 us", "21.4 ms", 3, "99%"]]
    assert "noisy: IQR is 31% of the median" in str(shown) and "times_s" not in str(shown)


def test_the_reference_over_this_machine_ratio_keeps_two_decimals_under_10x():
    """The H100 smoke run of 2026-12-05 23:20 printed 4,246 against 3,004 GB/s as '1x'."""
    from labkit.chapters.ch00_setup_check import machine

    assert machine.times(4246 / 3004) == "1.41x"
    assert machine.times(0.97) == "0.97x"
    assert machine.times(4246 / 58.3) == "73x"


def test_a_ceiling_kept_from_an_earlier_run_is_dated_as_kept_not_as_measured_now():
    """Review 2026-12-06z 00-02 item 4: the H200 page (2026-12-06) printed 'Ceilings of this machine
    (measured 2026-12-06 06:40 UTC): copy 4,246 GB/s' where 4,246 was kept from 2026-12-05 17:39
    (this run read 4,223); chapter 02 printed the cached ceilings with no date. The kept readings of
    that record (results/nvidia-h200.json, 00_setup_check/ceilings)."""
    from labkit.chapters.ch02_contiguity_and_hidden_copies import cases
    from labkit.measure.ceiling_store import Ceilings

    kept = {"copy_gbps": {"kept": 4246.3, "measured_at": "2026-12-05T17:39:41+00:00", "this_run": 4223.1},
            "matmul_tflops.float32": {"kept": 51.41, "measured_at": "2026-12-05T17:39:41+00:00", "this_run": 51.24},
            "matmul_tflops.float16": {"kept": 742.3, "measured_at": "2026-12-05T17:39:41+00:00", "this_run": 737.2}}
    found = Ceilings(device_key="NVIDIA_H200", device="cuda:0", copy_gbps=4246.3, copy_bytes=2**30,
                     matmul_tflops={"float32": 51.41, "bfloat16": 782.0, "float16": 742.3}, matmul_n=8192,
                     measured_at="2026-12-06T06:40:55+00:00", details={"kept_higher": kept})
    line = machine.ceilings_line(found)
    assert "(measured 2026-12-06 06:40 UTC)" not in line
    assert line.startswith("Ceilings of this machine: copy 4,246 GB/s (read + write); matmul TFLOP/s: float32 51.4, "
                           "bfloat16 782, float16 742. Measured 2026-12-06 06:40 UTC, except copy, float32 and float16, "
                           "kept from 2026-12-05 17:39 UTC (this run 4,223, 51.2 and 737)")
    # chapter 02 reads them from the cache: said so, with the span of their dates, and only the
    # matmul ceilings its tables take shares of (C10's float32 and float16: session aa)
    cached = cases.ceilings_line(found, from_cache=True)
    # the three shown were all kept from 17:39: one date, not the refresh's span (code review aa item 4)
    assert cached == ("Ceilings of this machine (read from the cache, measured 2026-12-05 17:39 UTC): "
                      "copy 4,246 GB/s (read + write); matmul TFLOP/s: float32 51.4, float16 742.")
    mixed = Ceilings(**{**found.__dict__, "details": {"kept_higher": {k: v for k, v in kept.items() if k != "copy_gbps"}}})
    assert cases.ceilings_line(mixed, from_cache=True).startswith(
        "Ceilings of this machine (read from the cache, measured 2026-12-05 17:39 to 2026-12-06 06:40 UTC): copy")
    assert set(cases.C10_MATHS) == {str(dt).removeprefix("torch.") for _, dt in cases.gemm_plan(True)[0]}
    plain = Ceilings(device_key="cpu", device="cpu", copy_gbps=44.0, copy_bytes=2**27, matmul_tflops={"float32": 0.348},
                     matmul_n=1024, measured_at="2026-12-06T03:20:00+00:00")
    assert cases.ceilings_line(plain, from_cache=True).startswith(
        "Ceilings of this machine (read from the cache; measured 2026-12-06 03:20 UTC): copy 44 GB/s")
    source = (ROOT / "notebooks" / "02_contiguity_and_hidden_copies.py").read_text(encoding="utf-8")
    assert "chapter.lab.cases.ceilings_line(ceiling, from_cache=" in source


def test_the_ceilings_line_refuses_a_maths_filter_it_cannot_read():
    """Code review aa item 12: one string matched by substring, an unknown name printed an empty list."""
    from labkit.measure.ceiling_store import Ceilings
    from labkit.show import ceilings_text

    found = Ceilings(device_key="cpu", device="cpu", copy_gbps=44.0, copy_bytes=2**27,
                     matmul_tflops={"float32": 0.348}, matmul_n=1024, measured_at="2026-12-06T03:20:00+00:00")
    for bad in ("float32", ("float64",)):
        with pytest.raises(ValueError, match="maths: a sequence of"):
            ceilings_text.ceilings_line(found, maths=bad)
    assert ceilings_text.ceilings_line(found, maths=("float16",)).endswith("matmul TFLOP/s: none measured.")
