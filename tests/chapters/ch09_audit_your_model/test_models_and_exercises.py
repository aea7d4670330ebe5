"""The built-in networks run without a download; the spec loader explains what it cannot load;
the chapter's exercises accept their references and reject a wrong answer."""

import pytest
import torch

from labkit import exercises
from labkit.audit import ddp_contract, models
from labkit.models.resnet import memory_format_of


@pytest.mark.parametrize("spec", ["labkit:mobilenet_v3", "labkit:vit"])
def test_the_small_built_ins_classify_a_batch(spec):
    model = models.load(spec, image=32).eval()
    with torch.no_grad():
        assert model(torch.randn(2, 3, 32, 32)).shape == (2, 1000)


def test_the_chapter_networks_are_three_and_name_torchvision_only_where_it_imports():
    specs = [spec for _, spec in models.chapter_networks()]
    assert len(specs) == 3
    assert all(s.startswith("torchvision:") for s in specs) == models.has_torchvision()


@pytest.mark.parametrize("spec, message", [
    ("nothing", "a model spec looks like"),
    ("no_such_package_here:build", "does not import"),
    ("math:pi", "no callable 'pi'"),
    ("collections:OrderedDict", "not a torch.nn.Module"),
])
def test_a_bad_spec_says_why(spec, message):
    with pytest.raises(models.ModelSpecError, match=message):
        models.load(spec)


def test_the_exercises_are_graded_by_torch_and_the_audit_agrees_with_it():
    # the audit's own readings pass the torch-graded exercises: the audit agrees with torch
    assert exercises.get("09.layout_of").check(memory_format_of).passed
    assert exercises.get("09.drift_status").check(ddp_contract.status).passed
    assert not exercises.get("09.drift_status").check(lambda shape: None).passed
    assert not exercises.get("09.layout_of").check(lambda t: "contiguous").passed


def test_the_exercise_references_come_from_torch_not_the_audit():
    import inspect

    from labkit.chapters.ch09_audit_your_model import exercises as ch09

    source = inspect.getsource(ch09)
    assert "labkit.audit" not in source and "module_layouts" not in source
    assert ch09.DRIFT_STATUS.reference((64, 64, 3, 3)) == "drift-prone"
    assert ch09.DRIFT_STATUS.reference((256, 64, 1, 1)) == "warns harmlessly (size-1 dims)"
    assert ch09.DRIFT_STATUS.reference((8, 1, 1, 1)) is None
    # the task says what to decide, not the size-1 rule that decides it
    assert "size > 1" not in ch09.DRIFT_STATUS.task
