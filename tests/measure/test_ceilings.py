"""Ceilings: measured with the harness, cached per device, re-measured only on request."""

import json
import math

import pytest
import torch

from labkit.core import env
from labkit.measure import bench, ceilings

SMALL = env.ProblemSizes(device="cpu", copy_bytes=4 * 2**20, matmul_n=128,
                         cache_sweep_max_bytes=8 * 2**20, cnn_batch=1, cnn_image=32,
                         memory_budget_bytes=2**30)


@pytest.fixture(autouse=True)
def small_and_private(monkeypatch, private_cache):
    monkeypatch.setattr(ceilings.env, "sizes", lambda: SMALL)
    monkeypatch.setattr(ceilings.env, "device", lambda: torch.device("cpu"))
    monkeypatch.setattr(ceilings, "REP_MS", 20.0)


pytestmark = pytest.mark.filterwarnings("ignore::labkit.measure.bench.TimingWarning")


def test_nothing_cached_means_none_and_no_measurement(monkeypatch):
    monkeypatch.setattr(ceilings, "_measure_now", lambda verbose: pytest.fail("measured"))
    assert ceilings.cached() is None


def test_measure_caches_per_device_and_refresh_remeasures(monkeypatch, tmp_path):
    first = ceilings.measure()
    assert first.device_key == env.device_key() and first.device == "cpu"
    assert math.isfinite(first.copy_gbps) and first.copy_gbps > 0
    assert set(first.matmul_tflops) == {"float32"} and first.matmul_tflops["float32"] > 0
    assert first.copy_bytes in (SMALL.copy_bytes, SMALL.copy_bytes // 2) and first.matmul_n == SMALL.matmul_n
    path = tmp_path / "cache" / f"ceilings-{env.device_key()}.json"
    assert json.loads(path.read_text())["copy_gbps"] == first.copy_gbps

    calls = []
    real = ceilings._measure_now
    monkeypatch.setattr(ceilings, "_measure_now", lambda verbose: calls.append(1) or real(verbose))
    assert ceilings.measure() == first and calls == []          # read from the cache
    ceilings.measure(refresh=True)
    assert calls == [1]                                          # measured again


def test_unreadable_cache_counts_as_not_measured(tmp_path):
    (tmp_path / "cache" / f"ceilings-{env.device_key()}.json").write_text("{not json")
    assert ceilings.cached() is None
    (tmp_path / "cache" / f"ceilings-{env.device_key()}.json").write_text('{"unknown_field": 1}')
    assert ceilings.cached() is None


def test_a_timing_is_shown_against_the_cached_ceiling(tmp_path):
    c = ceilings.Ceilings(device_key=env.device_key(), device="cpu", copy_gbps=10.0,
                          copy_bytes=1, matmul_tflops={"float32": 2.0}, matmul_n=1)
    ceilings.cache_path().write_text(json.dumps(c.as_dict()))
    t = bench._make_timing([1e-3] * 5, "x", torch.device("cpu"), "hot", 1,
                           bytes_moved=5 * 10**6, flops=10**9, flops_dtype="float32")
    assert t.gbps == pytest.approx(5.0) and t.pct_of_copy_ceiling == pytest.approx(50.0)
    assert t.tflops == pytest.approx(1.0) and t.pct_of_matmul_ceiling == pytest.approx(50.0)
    assert t.pct_of_ceiling == pytest.approx(50.0)
    assert "50% of this machine&#x27;s copy ceiling" in t._repr_html_()


def test_measurements_use_random_data(monkeypatch):
    made = []
    real_rand, real_randn = torch.rand, torch.randn
    monkeypatch.setattr(torch, "rand", lambda *a, **k: made.append("rand") or real_rand(*a, **k))
    monkeypatch.setattr(torch, "randn", lambda *a, **k: made.append("randn") or real_randn(*a, **k))
    ceilings.measure(refresh=True)
    assert "rand" in made and made.count("randn") >= 2


def test_html():
    page = ceilings.measure()._repr_html_()
    assert "copy bandwidth" in page and "matmul float32" in page


def test_a_timing_above_the_ceiling_says_why(tmp_path):
    """Over 100% of a ceiling is physically impossible from memory: the Timing must say so."""
    c = ceilings.Ceilings(device_key=env.device_key(), device="cpu", copy_gbps=10.0,
                          copy_bytes=1, matmul_tflops={"float32": 2.0}, matmul_n=1)
    ceilings.cache_path().write_text(json.dumps(c.as_dict()))
    over = bench._make_timing([1e-3] * 5, "x", torch.device("cpu"), "hot", 1,
                              bytes_moved=20 * 10**6, flops=None, flops_dtype="float32")
    assert over.pct_of_copy_ceiling == pytest.approx(200.0)
    note = next(n for n in over.warnings if "copy ceiling" in n)
    assert "depends on size and clock" in note and "cache" in note and "byte count" in note
    assert "busy" not in note  # a busy machine makes timings slower, never faster
    # ... but a ceiling cached while the machine was shared reads low (review 2026-12-03c item 13)
    assert "measured while other work shared the machine" in note and "refresh=True" in note
    assert over.above_ceiling
    at = bench._make_timing([1e-3] * 5, "x", torch.device("cpu"), "hot", 1,
                            bytes_moved=int(10.4 * 10**6), flops=None, flops_dtype="float32")
    assert at.pct_of_copy_ceiling == pytest.approx(104.0)  # up to 105%: at the ceiling
    assert not at.above_ceiling
    assert any("at the ceiling" in n for n in at.warnings)
    assert not any("depends on size" in n for n in at.warnings)


def test_every_gpu_math_name_can_be_measured_by_name():
    """'tfloat32' has no torch dtype: each name in GPU_MATMUL_DTYPES must still be measurable."""
    before = torch.get_float32_matmul_precision()
    for name in ceilings.GPU_MATMUL_DTYPES:
        if name in ("float16", "bfloat16"):
            continue  # slow on some CPUs; the same code path as float32
        assert ceilings.matmul_tflops(32, name, torch.device("cpu"), rep_ms=2, threads=1) > 0
    assert torch.get_float32_matmul_precision() == before  # the TF32 switch is restored


def test_each_ceiling_is_the_best_of_a_size_sweep(monkeypatch):
    """The ceiling is the best point of the sweep, and the record says where it was reached."""
    rates = {128: 1.0, 64: 3.0, 32: 2.0}  # made-up TFLOP/s by n: the middle size wins
    monkeypatch.setattr(ceilings, "CPU_MATMUL_SWEEP_N", (32, 64))
    monkeypatch.setattr(ceilings, "matmul_tflops", lambda n, *a, **k: rates[n])
    got = ceilings.measure(refresh=True)
    assert got.matmul_tflops["float32"] == 3.0 and got.matmul_best_n["float32"] == 64
    assert got.sweep["matmul"]["float32"] == {"32": 2.0, "64": 3.0, "128": 1.0}
    assert set(got.sweep["copy"]) == {str(b) for b in ceilings.copy_sweep(torch.device("cpu"),
                                                                          SMALL.copy_bytes)}
    assert got.copy_gbps == max(got.sweep["copy"].values())
    assert "(n = 64, best of 3 sizes)" in got._repr_html_()  # each size's rate: the sweep table


def test_the_sweeps_stay_under_the_course_sizes():
    gpu, cpu = torch.device("cuda"), torch.device("cpu")
    assert ceilings.copy_sweep(gpu, 1 << 30) == [64 << 20, 256 << 20, 1 << 30]
    assert ceilings.matmul_sweep(gpu, 8192) == [2048, 4096, 8192]
    assert ceilings.matmul_sweep(gpu, 4096) == [2048, 4096]
    assert ceilings.matmul_sweep(cpu, 1024) == [256, 512, 1024]
    assert ceilings.copy_sweep(cpu, 128 << 20) == [64 << 20, 128 << 20]


def test_a_cache_file_from_before_the_sweep_still_reads(tmp_path):
    old = {"device_key": env.device_key(), "device": "cpu", "copy_gbps": 10.0,
           "copy_bytes": 1 << 26, "matmul_tflops": {"float32": 2.0}, "matmul_n": 1024}
    ceilings.cache_path().write_text(json.dumps(old))
    got = ceilings.cached()
    assert got is not None and got.sweep == {} and got.matmul_best_n == {}
    assert "copy bandwidth" in got._repr_html_()


def test_a_t4_has_no_tf32_or_bfloat16_ceiling_and_an_h200_has_all_four(monkeypatch):
    """Compute capability 7.5 leaves TF32 and bfloat16 out, with the reason; 9.0 measures all."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (7, 5))
    names, skipped = ceilings.gpu_matmul_math()
    assert names == ("float32", "float16") and set(skipped) == {"tfloat32", "bfloat16"}
    assert all("7.5 < 8.0" in why for why in skipped.values())
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    assert ceilings.gpu_matmul_math() == (ceilings.GPU_MATMUL_DTYPES, {})


def _fixed(copy_gbps: float, tflops: float, when: str, fingerprint: dict | None = None,
           copy_sizes: tuple[int, ...] = (64 << 20, 128 << 20)) -> ceilings.Ceilings:
    return ceilings.Ceilings(device_key=env.device_key(), device="cpu", copy_gbps=copy_gbps,
                             copy_bytes=copy_sizes[0], matmul_tflops={"float32": tflops}, matmul_n=128,
                             measured_at=when, details={"fingerprint": fingerprint or {"cpu": "a"}},
                             matmul_best_n={"float32": 128},
                             sweep={"copy": {str(b): copy_gbps for b in copy_sizes},
                                    "matmul": {"float32": {"128": tflops}}})


def test_a_refresh_never_lowers_a_ceiling_of_the_same_machine(monkeypatch):
    """Review 2026-12-03e item 10: one host read 25.0 GB/s in three chapters and 45 GB/s an hour
    later; a loaded run reads low, and a refresh overwrote the cache with it. Now each ceiling
    is the higher of the cached and the new reading, and the record says which was kept."""
    runs = iter([_fixed(45.0, 1.0, "2026-12-03T13:00"), _fixed(25.0, 1.5, "2026-12-03T14:00"),
                 _fixed(20.0, 0.5, "2026-12-03T15:00")])
    monkeypatch.setattr(ceilings, "_measure_now", lambda verbose: next(runs))
    first = ceilings.measure(refresh=True)
    assert first.copy_gbps == 45.0 and "kept_higher" not in first.details
    second = ceilings.measure(refresh=True)  # a loaded run: copy lower, matmul higher
    assert second.copy_gbps == 45.0 and second.matmul_tflops["float32"] == 1.5
    assert second.details["kept_higher"] == {"copy_gbps": {"kept": 45.0, "measured_at": "2026-12-03T13:00",
                                                           "this_run": 25.0,
                                                           "sizes": [str(64 << 20), str(128 << 20)]}}
    assert ceilings.kept_note(second) == ("Kept from earlier runs, a ceiling being the best reading (a loaded "
                                          "run reads low): copy 45 (2026-12-03T13:00; this run 25).")
    assert ceilings.cached() == second  # what later chapters read
    third = ceilings.measure(refresh=True)  # a kept reading keeps its own date
    assert third.copy_gbps == 45.0 and third.details["kept_higher"]["copy_gbps"]["measured_at"] == "2026-12-03T13:00"
    assert third.matmul_tflops["float32"] == 1.5
    assert third.details["kept_higher"]["matmul_tflops.float32"]["measured_at"] == "2026-12-03T14:00"
    # two kept: the reason said once, at the end (a GPU can keep five; 00's page has 1,500 words)
    assert ceilings.kept_note(third) == (
        "Kept from earlier runs, a ceiling being the best reading (a loaded run reads low): copy 45 "
        "(2026-12-03T13:00; this run 20); matmul float32 1.5 (2026-12-03T14:00; this run 0.5).")
    assert ceilings.kept_note(first) == ""


def test_another_machine_or_keep_higher_false_measures_afresh(monkeypatch):
    old = _fixed(45.0, 2.0, "then")
    assert ceilings.higher_of(_fixed(25.0, 1.0, "now", {"cpu": "b"}), old).copy_gbps == 25.0
    # the same machine, but swept at the test suite's small sizes (a cache's speed): not kept
    small = _fixed(46.0, 2.0, "then", copy_sizes=(4 << 20, 8 << 20))
    kept = ceilings.higher_of(_fixed(25.0, 1.0, "now"), small)
    assert kept.copy_gbps == 25.0 and kept.matmul_tflops["float32"] == 2.0
    # a reading an older record kept without its sizes is not carried on (this machine's cache
    # held 46 GB/s from an 8 MiB sweep, kept once beside a 64/128 MiB sweep before sizes were saved)
    unsized = ceilings.higher_of(_fixed(18.5, 1.0, "later"), ceilings.Ceilings(**{
        **old.as_dict(), "details": {**old.details, "kept_higher": {"copy_gbps": {
            "kept": 45.0, "measured_at": "then", "this_run": 18.0}}}}))
    assert unsized.copy_gbps == 18.5
    assert ceilings.higher_of(_fixed(25.0, 1.0, "now"), None).copy_gbps == 25.0
    monkeypatch.setattr(ceilings, "_measure_now", lambda verbose: _fixed(45.0, 2.0, "then"))
    ceilings.measure(refresh=True)
    monkeypatch.setattr(ceilings, "_measure_now", lambda verbose: _fixed(25.0, 1.0, "now"))
    assert ceilings.measure(refresh=True, keep_higher=False).copy_gbps == 25.0
    with pytest.raises(TypeError, match="keep_higher"):
        ceilings.measure(keep_higher="yes")


def test_a_refresh_at_the_test_suites_sizes_is_not_saved_over_the_courses(monkeypatch):
    """`make test` runs chapter 00 at LABKIT_SIZES=ci: an 8 MiB copy, a cache's speed (46 GB/s on
    this CPU against 25 GB/s at 64/128 MiB). It must not become the ceiling later chapters read."""
    course = _fixed(25.0, 1.0, "course")
    monkeypatch.setattr(ceilings, "_measure_now", lambda verbose: course)
    ceilings.measure(refresh=True)
    small = _fixed(46.0, 1.2, "ci", copy_sizes=(8 << 20,))
    monkeypatch.setattr(ceilings, "_measure_now", lambda verbose: small)
    assert ceilings.measure(refresh=True) == small  # what that run measured, returned
    assert ceilings.cached() == course  # not saved
    assert ceilings.measure(refresh=True, keep_higher=False) == small and ceilings.cached() == small
    monkeypatch.setattr(ceilings, "_measure_now", lambda verbose: course)
    assert ceilings.measure(refresh=True).copy_gbps == 25.0  # larger sizes replace a small sweep
