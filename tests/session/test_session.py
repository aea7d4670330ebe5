"""labkit.session: a chapter opens by its key, and measures with the one retry policy."""

import pytest
import torch

from labkit import claims, session


def test_a_chapter_key_is_checked_with_a_clear_message():
    with pytest.raises(ValueError, match="known: 00_setup_check"):
        session.open("5_dataloader", announce=False)
    with pytest.raises(ValueError, match="no chapter '42_nowhere'"):
        session.open("42_nowhere", announce=False)
    with pytest.raises(ValueError, match="05_dataloader"):
        claims.for_chapter("05")


def test_chapter_measured_returns_flags_with_their_case_and_size(monkeypatch):
    """Chapter.measured measures again once, then hands the flags (case-prefixed) to evidence."""
    from labkit import session
    from labkit.measure import bench
    from labkit.measure.timing import Comparison, Timing, VariantResult

    noisy = Timing(label="slow", device="cpu", mode="cold", times_s=(1.0,), median_s=1.0,
                   iqr_s=0.3, min_s=1.0, count=1)
    calls = []

    def fake_compare(variants, baseline, **options):
        calls.append(options)
        return Comparison(baseline, 1, {"slow": VariantResult(noisy, 1.0, 1.0, 1.0, (1.0,))}, ("slow",))

    monkeypatch.setattr(bench, "compare", fake_compare)
    monkeypatch.delenv("LABKIT_SIZES", raising=False)  # a learner's run, not the suite's profile
    chapter = session.open("02_contiguity_and_hidden_copies", announce=False)
    _, flags = chapter.measured({"slow": lambda: None}, baseline="slow", case="2-D", rounds=3)
    assert len(calls) == 2 and "case" not in calls[0]  # measured again once; case is not bench's
    assert flags == [{"timing": "2-D: slow", "why": "noisy: IQR 30% of the median", "spread": 0.3}]
    if not torch.cuda.is_available():  # the suite's ci profile measures once, flags kept
        monkeypatch.setenv("LABKIT_SIZES", "ci")
        calls.clear()
        _, flags = chapter.measured({"slow": lambda: None}, baseline="slow", case="2-D", rounds=3)
        assert len(calls) == 1 and flags[0]["timing"] == "2-D: slow"


def _results_dir(tmp_path, monkeypatch, payloads: dict) -> None:
    """A reference file holding `payloads` under chapter 02, read from a temporary results/."""
    import json

    data = {"machine": "nvidia-h200", "chapters": {"02_contiguity_and_hidden_copies": {
        key: {"payload": value, "recorded_at": "2026-11-30T10:00:00+00:00"}
        for key, value in payloads.items()}}}
    (tmp_path / "nvidia-h200.json").write_text(json.dumps(data))
    monkeypatch.setenv("LABKIT_RESULTS_DIR", str(tmp_path))


def test_here_or_recorded_measures_and_records_where_the_machine_can(tmp_path, monkeypatch):
    chapter = session.open("02_contiguity_and_hidden_copies", announce=False)
    kept = []
    monkeypatch.setattr(chapter, "record", lambda key, value: kept.append((key, value)))
    value = chapter.here_or_recorded("probe", lambda: {"n": 3}, can=True)
    assert value == {"n": 3} and kept == [("probe", {"n": 3})]
    calls = []
    value = chapter.here_or_recorded("probe", lambda: calls.append(1), can=lambda: False)
    assert calls == [] and isinstance(value, session.Recorded)  # never measured where it cannot
    with pytest.raises(TypeError, match="must be a function"):
        chapter.here_or_recorded("probe", {"n": 3}, can=True)


def test_a_recorded_result_says_where_and_when_and_a_missing_one_says_so(tmp_path, monkeypatch):
    from labkit.show import table

    shown = table.Table("no sync", ["what", "time"], [["stopwatch", 1e-5]], units={"time": "s"})
    _results_dir(tmp_path, monkeypatch, {"no_sync": {"no_sync_s": 1e-5}, "t": shown.to_dict()})
    chapter = session.open("02_contiguity_and_hidden_copies", announce=False)
    recorded = chapter.here_or_recorded("no_sync", lambda: 1 / 0, can=False)
    assert recorded and recorded["no_sync_s"] == 1e-5 and not recorded.measured_here
    assert recorded.label == "recorded on nvidia-h200, 2026-11-30"
    assert "recorded on nvidia-h200, 2026-11-30" in recorded._repr_html_()
    again = chapter.here_or_recorded("t", lambda: 1 / 0, can=False)
    assert again.table.rows == shown.rows and "(recorded on nvidia-h200" in str(again).splitlines()[0]
    missing = chapter.reference("never_recorded")
    assert not missing and missing.get("x") is None
    assert "nothing recorded on nvidia-h200 under 02_contiguity_and_hidden_copies/never_recorded" in str(missing)
    with pytest.raises(KeyError, match="nothing recorded"):
        missing["x"]


def test_the_lab_reaches_the_chapters_modules_and_the_instruments():
    from labkit.chapters.ch02_contiguity_and_hidden_copies import strided_gemm
    from labkit.measure import copies

    chapter = session.open("02_contiguity_and_hidden_copies", announce=False)
    assert chapter.lab.strided_gemm is strided_gemm and chapter.lab.copies is copies
    with pytest.raises(AttributeError, match="no module 'nowhere'"):
        _ = chapter.lab.nowhere
    other = session.open("00_setup_check", announce=False)
    with pytest.raises(AttributeError, match="chapter 00_setup_check has no module 'strided_gemm'"):
        _ = other.lab.strided_gemm  # one chapter never reaches another's modules


def test_rules_print_the_trust_rule_once_and_forms_follow_the_device():
    chapter = session.open("02_contiguity_and_hidden_copies", announce=False)
    assert claims.TRUST_RULE in str(chapter.rules())
    assert f"id='{session.RULES_ANCHOR}'" in chapter.rules()._repr_html_()
    assert "<details><summary>in full</summary>" in chapter.rules()._repr_html_()
    gpu = session.Chapter("02_contiguity_and_hidden_copies", torch.device("cuda"), chapter.sizes, True, 4)
    cpu = session.Chapter("02_contiguity_and_hidden_copies", torch.device("cpu"), chapter.sizes, False, 4)
    assert gpu.form("float32") == claims.SEED_FORM and gpu.form(there="GPU x") == "GPU x"
    assert cpu.form("float32").startswith("analogue: ") and cpu.form("float32").endswith(", 4 threads, float32")
    assert "GPU analogue" not in gpu.analogue and gpu.analogue.startswith("analogue: ")  # one style
    assert cpu.form() == cpu.analogue
    # review 2026-12-04m 03-04 item 10: one builder for every analogue, the seed's setting named
    assert cpu.form("float32", seed="a GPU") == f"analogue: {cpu.device_name} (the seed: a GPU); float32"
    assert gpu.form("float32", seed="a GPU") == claims.SEED_FORM  # the seed's own setting on a GPU
    assert gpu.analogue_form("A100", "fp16", device="NVIDIA H200") == "analogue: NVIDIA H200 (the seed: A100); fp16"
    assert session.analogue_form("NVIDIA H200", "A100") == "analogue: NVIDIA H200 (the seed: A100)"
    with pytest.raises(ValueError, match="names the device and the seed's setting"):
        session.analogue_form("", "A100")


def test_show_renders_comparisons_and_rows_and_refuses_the_rest(monkeypatch):
    chapter = session.open("02_contiguity_and_hidden_copies", announce=False)
    kept = []
    monkeypatch.setattr(chapter, "record", lambda key, value: kept.append(key))
    shown = chapter.show([{"op": "x.t()", "copied": 0}], units={"copied": "B"}, record="ops")
    assert shown.column("copied") == [0] and kept == ["ops"]
    with pytest.raises(TypeError, match="takes a comparison"):
        chapter.show(3)


def test_only_on_measures_where_the_question_means_something():
    sizes = session.open("02_contiguity_and_hidden_copies", announce=False).sizes
    cpu = session.Chapter("02_contiguity_and_hidden_copies", torch.device("cpu"), sizes, False, 4)
    gpu = session.Chapter("02_contiguity_and_hidden_copies", torch.device("cuda"), sizes, True, 4)
    assert cpu.only_on("cpu", lambda: 7) == 7 and cpu.only_on("gpu", lambda: 1 / 0) is None
    assert gpu.only_on("gpu", lambda: 7) == 7 and gpu.only_on("cpu", lambda: 1 / 0) is None
    with pytest.raises(ValueError, match="'cpu' or 'gpu'"):
        cpu.only_on("tpu", lambda: 7)


def test_takeaways_and_a_verdict_read_as_lines():
    chapter = session.open("02_contiguity_and_hidden_copies", announce=False)
    shown = chapter.remember(["one <b>", "two"])
    assert str(shown) == "- one <b>\n- two" and "<li>one &lt;b&gt;</li>" in shown._repr_html_()
    verdict = claims.get("C1").judge({"shape": [4, 3], "stride": [1, 4], "is_contiguous": False})
    assert str(verdict) == f"C1 {verdict.label} -- {verdict.reason}"
