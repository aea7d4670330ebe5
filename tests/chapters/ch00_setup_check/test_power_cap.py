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


def test_the_probe_table_says_the_flag_does_not_separate_the_cases(tmp_path):
    """Review 2026-12-03g item 8: every sample carried the 0x4 flag, at 384 W on zeros as at
    695 W, so 'power cap active: yes' on zeros read as a finding. The table gives the flag's
    share of samples and says where it separates nothing; where it does, the note reads it."""
    import json

    from labkit.chapters.ch00_setup_check import machine

    path = RESULTS / "h200_probes" / "bf16_ceiling_probe.json"
    rows = power_cap.probe_rows(path)
    assert all(r["capped_samples"] == r["samples"] == 5 for r in rows) and not power_cap.flag_separates(rows)
    shown = machine.probe_table(path)
    assert "power cap flag (samples)" not in shown.columns  # a column that separates nothing is left out
    assert len(shown.notes) == 1 and shown.notes[0].endswith(
        "the power cap flag was set in every sample, 384 W and 695 W alike: it separates nothing.")
    runs = json.loads(path.read_text())
    for run in runs:
        if run["data"] == "zeros":
            run["smi_samples"] = [s.replace("0x0000000000000004", "0x0000000000000000") for s in run["smi_samples"]]
    (tmp_path / "probe.json").write_text(json.dumps(runs))
    separated = machine.probe_table(tmp_path / "probe.json")
    assert power_cap.flag_separates(power_cap.probe_rows(tmp_path / "probe.json"))
    assert separated.column("power cap flag (samples)")[0] == "5 of 5"
    assert len(separated.notes) == 1 and "power cap flag in 5 of 5 samples" in separated.notes[0]
