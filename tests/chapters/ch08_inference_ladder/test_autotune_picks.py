"""autotune_picks: what Inductor's runtime autotuning timed and kept, recorded without changing
it, and compared over fresh processes (why the compiled rungs' device time may vary between
processes while the eager ones' does not)."""

from __future__ import annotations

import types

import pytest

from labkit.chapters.ch08_inference_ladder import autotune_picks as ap
from labkit.chapters.ch08_inference_ladder import reproduce

th = pytest.importorskip("torch._inductor.runtime.triton_heuristics")


class _Launcher:
    """A launcher as Inductor's timings key it: hashable, with its config."""

    def __init__(self, config: str) -> None:
        self.config = config


def test_recording_keeps_each_timing_returns_inductors_own_result_and_restores(monkeypatch):
    slow, fast = _Launcher("XBLOCK: 512"), _Launcher("XBLOCK: 1024")
    timings = {slow: 0.050, fast: 0.048}
    monkeypatch.setattr(th.CachingAutotuner, "benchmark_all_configs", lambda self, *a, **k: timings)
    original = th.CachingAutotuner.benchmark_all_configs
    tuner = object.__new__(th.CachingAutotuner)
    tuner.fn = types.SimpleNamespace(__name__="triton_poi_fused_relu_0")
    tuner.filename = "/tmp/inductor-x/ab/cabc123.py"
    with ap.recording() as seen:
        assert tuner.benchmark_all_configs(1, 2) is timings        # Inductor's result, untouched
    assert th.CachingAutotuner.benchmark_all_configs is original      # restored
    assert seen == [{"kernel": "triton_poi_fused_relu_0", "source": "cabc123.py",
                     "ms": {"XBLOCK: 512": 0.050, "XBLOCK: 1024": 0.048}}]
    config, margin = ap.pick(seen[0])
    assert config == "XBLOCK: 1024" and margin == pytest.approx(0.050 / 0.048 - 1)
    tuner.benchmark_all_configs()
    assert len(seen) == 1                                             # nothing after the block


def test_a_failed_timing_still_raises_and_the_patch_is_undone(monkeypatch):
    def broken(self, *args, **kwargs):
        raise RuntimeError("a config that cannot launch")
    monkeypatch.setattr(th.CachingAutotuner, "benchmark_all_configs", broken)
    tuner = object.__new__(th.CachingAutotuner)
    with pytest.raises(RuntimeError, match="cannot launch"), ap.recording():
        tuner.benchmark_all_configs()
    assert th.CachingAutotuner.benchmark_all_configs is broken


def test_a_config_that_failed_is_kept_as_none_and_never_picked(monkeypatch):
    ok, failed = _Launcher("XBLOCK: 512"), _Launcher("XBLOCK: 1024")
    monkeypatch.setattr(th.CachingAutotuner, "benchmark_all_configs",
                        lambda self, *a, **k: {ok: 0.05, failed: float("inf")})
    tuner = object.__new__(th.CachingAutotuner)
    with ap.recording() as seen:
        tuner.benchmark_all_configs()
    assert seen[0]["ms"] == {"XBLOCK: 512": 0.05, "XBLOCK: 1024": None}   # JSON without Infinity
    assert seen[0]["kernel"] == "?" and seen[0]["source"] == ""          # no fn, no filename here
    assert ap.pick(seen[0]) == ("XBLOCK: 512", float("inf"))


def _run(*picks: tuple[str, dict]) -> list[dict]:
    return [{"kernel": name, "source": f"c{name}.py", "ms": ms} for name, ms in picks]


def test_across_runs_aligns_kernels_by_name_and_occurrence_and_names_the_ones_that_differ():
    a, b = "XBLOCK: 1024", "XBLOCK: 512"
    run1 = _run(("k_add", {a: 1.00, b: 1.01}), ("k_relu", {a: 2.0, b: 3.0}), ("k_add", {a: 1.0, b: 2.0}))
    run2 = _run(("k_add", {a: 1.02, b: 1.00}), ("k_relu", {a: 2.0, b: 3.0}), ("k_add", {a: 1.0, b: 2.0}))
    found = ap.across_runs([run1, run2])
    assert found["timed_in_every_run"] == 3
    assert found["picks_differ"] == ["k_add#0"]                 # the second k_add agrees
    assert found["decided_within_noise"] == ["k_add#0"]         # 1% and 2% margins
    # a run that compiled one rung more (another kernel first) still matches kernels by code
    other = [{"kernel": "k_graph", "source": "cgraph.py", "ms": {a: 1.0, b: 1.5}}, *run2]
    assert ap.across_runs([run1, other])["picks_differ"] == ["k_add#0"]
    # the same name with other code (another shape) is another kernel
    moved = [{**run2[0], "source": "cother.py"}, *run2[1:]]
    assert ap.across_runs([run1, moved])["timed_in_every_run"] == 2
    same = ap.across_runs([run1, run1])
    assert same["picks_differ"] == [] and same["timed_in_every_run"] == 3
    assert ap.pick({"kernel": "k", "ms": {a: 1.0}}) == (a, float("inf"))


def test_reproduces_summary_says_it_only_where_every_run_recorded_autotuning():
    a, b = "XBLOCK: 1024", "XBLOCK: 512"
    runs = [{"kept": ["TF32"], "steps": {}, "inductor_autotune": _run(("k", {a: 1.0, b: 1.01}))},
            {"kept": ["TF32"], "steps": {}, "inductor_autotune": _run(("k", {a: 1.01, b: 1.0}))}]
    line = reproduce.autotune_line(runs)
    assert line == ("  Inductor's runtime autotuning: 1 kernels timed in every run; the config kept "
                    "differs between runs for 1 (k#0); 1 decided by under 3% in some run")
    assert line in reproduce.summarise_numbers(runs)["lines"]
    assert reproduce.autotune_line([runs[0], {**runs[1], "inductor_autotune": []}]) == ""
    assert reproduce.autotune_line(runs[:1]) == ""
