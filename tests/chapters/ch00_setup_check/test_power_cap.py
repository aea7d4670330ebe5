"""The power-cap reading of chapter 00 on the recorded H200 probe and a ceilings sweep."""

from labkit.chapters.ch00_setup_check import power_cap
from tests.paths import RESULTS


def test_the_recorded_probe_shows_the_power_cap_on_random_data():
    path = RESULTS / "h200_probes" / "bf16_ceiling_probe.json"
    rows = {(r["data"], r["mode"]): r for r in power_cap.probe_rows(path)}
    randn = rows[("randn (normal)", "hot")]
    assert randn["power_capped"] and randn["clock_mhz"] < 1600 and randn["power_w"] > 650
    zeros = rows[("zeros", "hot")]  # zeros draw less power, clock higher, and flatter the rate
    assert zeros["clock_mhz"] > randn["clock_mhz"] and zeros["power_w"] < randn["power_w"]
    assert zeros["tflops"] > randn["tflops"]


def test_sweep_rows_give_each_point_its_share_of_the_best():
    rows = power_cap.sweep_rows({"matmul": {"bfloat16": {"4096": 764.0, "8192": 695.0, "2048": 652.0}}})
    assert [r[1] for r in rows] == [2048, 4096, 8192]
    assert rows[1][3] == 1.0 and round(rows[2][3], 2) == 0.91
    assert power_cap.sweep_rows(None) == []
