"""The built-in networks run without a download; the spec loader explains what it cannot load;
the chapter's exercises accept their references and reject a wrong answer."""

import pytest
import torch

from labkit import exercises
from labkit.audit import ddp_contract, models, module_layouts


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


def test_the_exercises_accept_their_references_and_reject_a_wrong_answer():
    assert exercises.get("09.layout_verdict").check(module_layouts.layout_verdict).passed
    assert exercises.get("09.drift_status").check(ddp_contract.status).passed
    assert not exercises.get("09.drift_status").check(lambda shape: None).passed
    assert not exercises.get("09.layout_verdict").check(lambda a, b, n: "kept").passed
