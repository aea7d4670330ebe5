"""The compact ResNet-50 against torchvision's (where torchvision imports) and its layout tracer."""

import pytest
import torch

from labkit.models import resnet


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return resnet.resnet50().eval()


def test_parameter_count_is_resnet50s(model):
    assert resnet.parameter_count(model) == resnet.RESNET50_PARAMETERS == 25_557_032


def test_output_shape_and_stage_shapes(model):
    with torch.no_grad():
        out = model(torch.randn(1, 3, 64, 64))
    assert out.shape == (1, 1000)
    assert [len(getattr(model, f"layer{i}")) for i in range(1, 5)] == [3, 4, 6, 3]


def _torchvision_resnet50():
    try:
        from torchvision.models import resnet50
    except Exception as exc:  # the CPU wheel may fail with "operator torchvision::nms does not exist"
        pytest.skip(f"torchvision does not import here: {exc}")
    return resnet50(weights=None)


def test_matches_torchvision(model):
    reference = _torchvision_resnet50().eval()
    assert resnet.parameter_count(reference) == resnet.RESNET50_PARAMETERS
    ours = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    theirs = {k: tuple(v.shape) for k, v in reference.state_dict().items()}
    assert ours == theirs
    model_copy = resnet.resnet50().eval()
    model_copy.load_state_dict(reference.state_dict())
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(model_copy(x), reference(x))


def test_memory_format_names():
    x = torch.randn(2, 3, 4, 5)
    assert resnet.memory_format_of(x) == "contiguous"
    assert resnet.memory_format_of(x.to(memory_format=torch.channels_last)) == "channels_last"
    assert resnet.memory_format_of(torch.randn(2, 8, 1, 1)) == "both"
    assert resnet.memory_format_of(x.permute(0, 2, 1, 3)) == "neither"
    assert resnet.memory_format_of(torch.randn(3, 4).t()) == "neither"


def test_trace_layouts_follows_channels_last(model):
    cl_model = resnet.resnet50().eval().to(memory_format=torch.channels_last)
    x = torch.randn(1, 3, 64, 64).to(memory_format=torch.channels_last)
    records = resnet.trace_layouts(cl_model, x)
    convs = [r for r in records if r.kind == "Conv2d"]
    assert len(convs) == 53 and all(r.verdict == "kept" for r in convs)
    last = {r.name: r for r in records}
    assert last["avgpool"].output_format == "both" and last["fc"].output_format == "contiguous"
    nchw = resnet.trace_layouts(model, torch.randn(1, 3, 64, 64))
    assert all(r.verdict in ("unchanged", "ambiguous") for r in nchw)


def test_trace_layouts_rejects_non_tensor(model):
    with pytest.raises(TypeError, match="needs a tensor"):
        resnet.trace_layouts(model, [1, 2, 3])
