"""Chapter 05's exercises beyond what every exercise is held to
(tests/exercises/test_every_exercise.py grades each with this chapter's solutions.py)."""


def test_no_task_states_its_rule_and_references_ask_torch():
    import inspect

    from labkit.chapters.ch05_dataloader import exercises as ch05

    for exercise in ch05.EXERCISES:
        assert "torch" in inspect.getsource(exercise.reference)
        assert "labkit" not in inspect.getsource(exercise.reference)
    assert "C fastest" not in ch05.CHANNELS_LAST_STRIDE.task
