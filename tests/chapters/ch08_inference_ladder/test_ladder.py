"""The ladder's arithmetic (speed-ups across batch sizes, spreads, step gains, payback) on
constructed rungs, its refusals, one real CPU rung, and chapter 08's exercises both ways."""

import math

import pytest
import torch

from labkit import exercises
from labkit.chapters.ch08_inference_ladder import ladder


def rung(name, batch, median_s, iqr_s=0.0, after="", kept=True):
    return ladder.Rung(name, ladder.Settings(batch=batch), batch / median_s, median_s, iqr_s,
                       0.0, None, after=after, kept=kept)


def test_speedup_counts_images_not_calls():
    base, big = rung("base", 64, 0.1), rung("big", 256, 0.3)
    assert big.speedup_over(base) == pytest.approx(4 / 3)
    low, high = rung("a", 64, 0.1, 0.02).speedup_spread(rung("b", 64, 0.2, 0.02))
    assert low == pytest.approx(0.19 / 0.11) and high == pytest.approx(0.21 / 0.09)


def test_step_gains_follow_what_each_rung_was_built_on():
    rungs = [rung("start", 64, 0.4), rung("slower", 64, 0.5, after="start", kept=False),
             rung("faster", 64, 0.2, after="start")]
    gains = ladder.step_gains(rungs)
    assert gains == {"slower": pytest.approx(0.8), "faster": pytest.approx(2.0)}
    assert [r.name for r in ladder.kept(rungs)] == ["start", "faster"]


def test_payback():
    assert ladder.payback_batches(10.0, 2e-3, 1e-3, 100) == pytest.approx(100.0)
    assert math.isinf(ladder.payback_batches(10.0, 1e-3, 1e-3, 100))


@pytest.mark.parametrize("bad, says", [
    (dict(dtype="int8"), "dtype must be one of"),
    (dict(autocast="float64"), "autocast must be"),
    (dict(compile="fast"), "compile must be"),
    (dict(batch=0), "batch must be a positive int"),
])
def test_settings_refuse_what_they_cannot_run(bad, says):
    with pytest.raises(ladder.LadderError, match=says):
        ladder.Settings(**bad)


def test_gpu_only_switches_are_refused_on_a_cpu():
    with pytest.raises(ladder.LadderError, match="need a CUDA GPU"):
        ladder.prepare(ladder.Settings(cuda_graphs=True), torch.device("cpu"), 32)


def test_a_real_cpu_rung_with_folding_matches_the_unfolded_output():
    small = lambda: torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8),  # noqa: E731
                                        torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
    plain = ladder.prepare(ladder.Settings(batch=2), torch.device("cpu"), 16, small)
    folded = ladder.prepare(ladder.Settings(batch=2, fold_bn=True, channels_last=True),
                            torch.device("cpu"), 16, small)
    assert torch.allclose(plain.output, folded.output, rtol=1e-4, atol=1e-5)


def test_freezing_needs_compile_and_the_cpu_ladder_starts_from_all_cores():
    with pytest.raises(ladder.LadderError, match="freezing"):
        ladder.Settings(freezing=True)
    assert all("threads" not in step.change for step in ladder.cpu_steps(4))
    from labkit.chapters.ch08_inference_ladder import experiment

    assert experiment.plan(False).start.threads is None  # torch's default: every core


def right_speedup(base, rung_):
    return (rung_[0] / rung_[1]) / (base[0] / base[1])


def right_payback(compile_s, before, after, batch):
    saved = (before - after) * batch
    return float("inf") if saved <= 0 else compile_s / saved


def right_share(gains, step):
    return math.log(gains[step]) / math.log(math.prod(gains.values()))


@pytest.mark.parametrize("exercise_id, right, wrong", [
    ("08.speedup", right_speedup, lambda base, r: base[1] / r[1]),
    ("08.payback", right_payback, lambda c, b, a, n: c / ((b - a) * n)),
    ("08.share_of_climb", right_share, lambda g, s: (g[s] - 1) / (math.prod(g.values()) - 1)),
])
def test_exercises_grade_right_and_wrong(exercise_id, right, wrong):
    exercise = exercises.get(exercise_id)
    assert exercise.check(right).passed
    report = exercise.check(wrong)
    assert not report.passed and (report.failure is not None)


def test_the_ladder_table_shows_each_rung_against_both_baselines():
    from labkit.chapters.ch08_inference_ladder import report

    rungs = [rung("start", 64, 0.4), rung("slower", 64, 0.5, after="start", kept=False),
             rung("faster", 64, 0.2, 0.02, after="start")]
    rungs[1].why = "slower: 0.80x wall"
    shown = report.table(rungs, strict=rungs[0], defaults=rungs[1])
    cells = dict((r[1][0], r[1]) for r in shown.rows)
    assert cells["faster"][2] == "320" and cells["faster"][4].startswith("2.00x")
    assert cells["faster"][5] == "2.50x" and cells["slower"][1].startswith("not kept: slower")
    html = shown._repr_html_()
    assert html.count("<tr") == 4 and "color:#888" in html and "over PyTorch defaults" in html
    assert "slower" in report.short(rungs)


def right_relative_error(out, ref):
    return float(torch.linalg.vector_norm(out.double() - ref.double()) / torch.linalg.vector_norm(ref.double()))


def right_first_broken(ref, rungs):
    from labkit.chapters.ch08_inference_ladder import numerics

    for name, out, m in rungs:
        err = right_relative_error(out, ref)
        if not torch.isfinite(out).all() or err > numerics.TOLERANCES[m]:
            return name
    return None


def right_replayed(model, x, new_x):
    with torch.no_grad():
        if x.is_cuda:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                model(x)
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                out = model(x)
            x.copy_(new_x)
            g.replay()
            return out.clone()
        x.copy_(new_x)
        return model(x)


def stale_replay(model, x, new_x):  # forgets to copy the new input into the static buffer
    with torch.no_grad():
        return model(x)


@pytest.mark.parametrize("exercise_id, right, wrong", [
    ("08.relative_error", right_relative_error,
     lambda o, r: float(torch.linalg.vector_norm(o - r) / o.numel())),
    ("08.first_broken_rung", right_first_broken, lambda ref, rungs: rungs[0][0]),
    ("08.graph_replay", right_replayed, stale_replay),
])
def test_torch_graded_exercises_grade_right_and_wrong(exercise_id, right, wrong):
    exercise = exercises.get(exercise_id)
    assert exercise.check(right).passed
    assert not exercise.check(wrong).passed
