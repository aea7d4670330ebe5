"""Chapter 04's exercises beyond what every exercise is held to
(tests/exercises/test_every_exercise.py grades each with this chapter's solutions.py)."""


from labkit import exercises
from tests.chapters.ch04_fusion.solutions import (
    chain_eager,
)


def test_eager_chain_fails_on_memory_not_on_values():
    report = exercises.get("04.fused_chain").check(chain_eager)
    assert "x the output" in str(report.failure.got[1])


def test_stubs_and_bad_arguments_never_raise():
    def stub(*args):
        raise NotImplementedError

    for exercise in exercises.for_chapter("04_fusion"):
        assert "not written yet" in exercise.check(stub).summary
        assert "needs your function itself" in exercise.check(42).summary
    assert [e.id for e in exercises.for_chapter("04_fusion")] == [
        "04.fit_launch_overhead", "04.fold_batchnorm", "04.fused_chain"]
    assert "fuse_conv_bn_weights" in exercises.get("04.fold_batchnorm").solution().source


def test_not_written_yet_folds_the_hint_away():
    from labkit import exercises as registry

    exercise = registry.get("04.fused_chain")

    def stub(x, y, z):
        raise NotImplementedError

    report = exercise.check(stub)
    assert "not written yet" in report.summary and exercise.hint not in report.summary
    page = report._repr_html_()
    assert "<details><summary>hint</summary>" in page and "Slices are views" in page


def test_hints_do_not_spell_out_the_algorithm():
    from labkit import exercises as registry

    spelled = {"04.fused_chain": "torch.add(x[a:b]", "04.fit_launch_overhead": "cov(n, t)",
               "04.fold_batchnorm": "reshape it to [out, 1, 1, 1]"}
    for exercise_id, recipe in spelled.items():
        assert recipe not in registry.get(exercise_id).hint, exercise_id
