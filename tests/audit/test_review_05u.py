"""Review 2026-12-05u item 2: `python -m labkit.audit` on a CPU gave a different decision on
each run (2 rounds; one disturbed round read "KEPT 0.64x" where quiet runs read 1.2x slower).
A fix is timed in at least 3 rounds; noisy rounds are re-timed once and, still noisy, not
decidable, never kept; a 'no measured gain' names what stopped it; every timed decision names
its input; the CPU default audits the chapter's 112 px."""

from types import SimpleNamespace

import torch

from labkit.audit import cli, recommend


def test_noisy_or_too_few_rounds_are_not_decidable_never_kept():
    assert recommend.decide(0.64, 0.34, 0.94) == recommend.NOT_DECIDABLE      # run 2 of the review
    assert recommend.decide(0.80, 0.79, 0.81, rounds=2) == recommend.NOT_DECIDABLE
    assert recommend.decide(0.80, 0.79, 0.81, rounds=3) == recommend.KEPT
    assert recommend.decide(1.24, 1.21, 1.28, rounds=2) == recommend.SLOWER   # a loss is a loss
    # the batch's own time beside a deciding clock reads as before (not a keep decision)
    assert recommend.decide(0.63, 0.42, 0.63, loose=True) == recommend.KEPT
    assert "at least 3 interleaved rounds" in recommend.rule() and "still noisy when re-timed" in recommend.rule()
    assert "decide nothing" in recommend.rule()


def test_no_measured_gain_names_its_upper_quartile_or_its_median():
    assert recommend.not_faster_why(0.884, 1.02) == \
        "the median 0.884x, but the upper quartile 1.020x reaches 1: not steady"
    assert recommend.not_faster_why(0.99, 0.995) == "the median 0.990x saves under 2%"


def _comparison(ratio, q25, q75, rounds=3):
    timing = SimpleNamespace(median_s=0.01, iqr_s=0.001)
    v = SimpleNamespace(ratio=ratio, ratio_q25=q25, ratio_q75=q75, timing=timing)
    o = SimpleNamespace(ratio=1.0, ratio_q25=1.0, ratio_q75=1.0, timing=timing)
    return {"fix": v, "base": o, "rounds": rounds}


class _Result(dict):
    @property
    def rounds(self):
        return self["rounds"]


def _measured(monkeypatch, results):
    calls = []

    def compare(variants, rounds, **_):
        calls.append(rounds)
        return _Result(results[len(calls) - 1])
    monkeypatch.setattr(recommend.bench, "compare", compare)
    x = torch.ones(2, 3, 8, 6)
    timing, why = recommend.measured(("base", lambda: x), ("fix", lambda: x), x, x, x, 2, 10.0, None)
    return timing, why, calls


def test_noisy_rounds_are_retimed_once_and_still_noisy_are_not_decidable(monkeypatch):
    timing, why, calls = _measured(monkeypatch, [_comparison(0.64, 0.34, 0.94), _comparison(0.70, 0.40, 0.95)])
    assert calls == [3, 3]                       # asked for 2: timed in 3, twice
    assert timing["outcome"] == recommend.NOT_DECIDABLE
    assert why.startswith("not decidable (noisy rounds): 0.700x") and "re-timed once" in why
    assert why.endswith("decided for input (2, 3, 8, 6) (rerun on a quieter machine)")
    # quiet on its re-time: decided on it
    timing, why, calls = _measured(monkeypatch, [_comparison(0.64, 0.34, 0.94), _comparison(1.22, 1.21, 1.23)])
    assert len(calls) == 2 and timing["outcome"] == recommend.SLOWER
    # quiet the first time: one timing
    timing, why, calls = _measured(monkeypatch, [_comparison(0.97, 0.96, 1.01)])
    assert calls == [3] and timing["outcome"] == recommend.NOT_FASTER
    assert "(the median 0.970x, but the upper quartile 1.010x reaches 1: not steady)" in why


def test_the_cpu_default_is_three_rounds_at_the_chapters_112_px():
    assert cli.CPU_ROUNDS == recommend.MIN_ROUNDS == 3 and cli.CPU_IMAGE == 112
    assert "112 on a CPU" in cli.parser().format_help()


def test_the_reports_recommendations_heading_names_the_input_its_timed_decisions_belong_to():
    from labkit.audit import audit, report
    from tests.audit import handmade

    r = audit.run(handmade.drift_prone(), handmade.example(), export_paths=(), recommend_rounds=3,
                  recommend_rep_ms=20.0)
    assert f"; timed decisions for input {tuple(handmade.example().shape)})" in report.text(r, width=400)
    assert all("decided for input" in x.why for x in r.recommendations if x.timed)
    untimed = audit.run(handmade.drift_prone(), handmade.example(), export_paths=(), recommend_rounds=0)
    assert "timed decisions for input" not in report.text(untimed, width=400)


def test_a_lost_device_busy_reading_says_why_and_is_not_read_as_an_old_record():
    """The GPU-path review of 2026-12-05u, item 5: where kernel records were lost (CUPTI dropping
    head records), the audit said 'not timed in this record (recorded before the audit timed it)',
    which would be false of a new record; it keeps the reason and 09 prints it."""
    from labkit.audit import recommend
    from labkit.chapters.ch09_audit_your_model import audits

    assert "busy_unavailable" in recommend.Recommendation.__dataclass_fields__
    lost = {"clock": recommend.STREAM_CLOCK, "busy_ratio": None, "busy_unavailable": "records lost"}
    assert audits._busy(lost, expected=True) == "; device-busy time: not read (records lost)"
    old = {"clock": recommend.STREAM_CLOCK, "busy_ratio": None}
    assert "recorded before the audit timed it" in audits._busy(old, expected=True)


def test_an_empty_saved_input_gets_a_clear_error(tmp_path, capsys):
    """The diff re-read of 2026-12-05u: a (0, 3, 64, 64) --input ended in a traceback from the
    numerics check; it is a bad input, said in one line (exit status 2)."""
    import torch

    from labkit.audit import cli

    path = tmp_path / "empty.pt"
    torch.save(torch.randn(0, 3, 64, 64), path)
    assert cli.main(["labkit:resnet50", "--device", "cpu", "--input", str(path), "--rounds", "0"]) == cli.EXIT_BAD_INPUT
    assert "the tensor is empty" in capsys.readouterr().err
