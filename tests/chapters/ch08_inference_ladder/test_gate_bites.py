"""The numerics gate bites on the chapter's own ResNet-50 at the chapter's CPU size: every
known-wrong rung (batch-mean logits, a stale input buffer, a zeroed BatchNorm bias, a dropped
folded bias, a convolution's weight x1.1) is refused, every honest rung (float32 reorders,
emulated TF32, fp16 and bf16) passes, and a rung is gated on fresh images copied into its own
input buffer. The model is built and every rung gated once per module (about 20 s here)."""

import pytest
import torch

from labkit.chapters.ch08_inference_ladder import experiment, gate_audit, ladder, numerics
from labkit.core import env

PLAN = experiment.plan(on_gpu=False)  # the chapter's CPU size: the same under LABKIT_SIZES=ci


@pytest.fixture(scope="module")
def reference():
    return ladder.reference_logits(torch.device("cpu"), PLAN.image)


@pytest.fixture(scope="module")
def rows(reference):
    cases = gate_audit.cpu_honest() + gate_audit.mutations()
    return {r.name: r for r in gate_audit.audit(cases, torch.device("cpu"), PLAN.image, PLAN.batch,
                                               reference=reference)}


def test_the_chapter_size_is_what_the_notebook_climbs():
    assert env.size_profile() in env.SIZE_PROFILES
    assert (PLAN.image, PLAN.batch) == (32, 4) and PLAN.start.batch == PLAN.batch


def test_the_reference_depends_on_its_input(reference):
    # spread over images against over classes: 0.09 before calibration (every image the same
    # top-1 class), 0.76 after
    assert reference.shape == (ladder.GATE_IMAGES, 1000) and torch.isfinite(reference).all()
    assert numerics.input_spread(reference) > 0.5
    assert reference.argmax(1).unique().numel() >= ladder.GATE_IMAGES // 2
    assert int(numerics.clear_rows(reference).sum()) >= numerics.MIN_CLEAR  # top-1 is judged


def test_every_case_ran(rows):
    assert len(rows) == len(gate_audit.cpu_honest()) + len(gate_audit.mutations())
    assert all(r.gate is not None for r in rows.values()), {n: r.error for n, r in rows.items() if r.error}


@pytest.mark.parametrize("name", [c.name for c in gate_audit.mutations()])
def test_every_wrong_rung_is_refused_under_float32_tf32_and_fp16(rows, name):
    row = rows[name]
    assert not row.honest and not row.passed and row.as_expected, row.as_dict()
    for math_ in gate_audit.STRICT_MATHS:
        assert row.refused_under(math_), (math_, row.under[math_].as_dict())


def test_bf16_still_refuses_what_ignores_the_input_and_a_dropped_folded_bias(rows):
    for name in ("batch-mean logits", "stale input buffer",
                 f"folded bias dropped ({gate_audit.MUTATED_CONV})"):
        assert rows[name].refused_under("bfloat16"), rows[name].under["bfloat16"].as_dict()
    # a rung that ignores its input is off by the whole input-dependent part
    assert rows["stale input buffer"].gate.centred_error > 0.5
    assert rows["batch-mean logits"].gate.centred_error > 0.5


@pytest.mark.parametrize("name", [c.name for c in gate_audit.cpu_honest()])
def test_every_honest_rung_passes_with_the_stated_headroom(rows, name):
    gate = rows[name].gate
    assert rows[name].honest and gate.passed, gate.as_dict()
    # the tolerance is HEADROOM x the recorded error; today's error keeps (most of) that room
    assert gate.rel_error * numerics.HEADROOM <= 1.5 * gate.tolerance, gate.as_dict()
    assert gate.centred_error * numerics.HEADROOM <= 1.5 * gate.centred_tolerance, gate.as_dict()


def test_tolerances_follow_the_measured_errors():
    for math_, sizes in numerics.MEASURED.items():
        worst = max(full for full, _ in sizes.values())
        assert numerics.HEADROOM * worst <= numerics.TOLERANCES[math_] <= max(
            numerics.FLOOR, 2 * numerics.HEADROOM * worst)
    assert numerics.TOLERANCES["float32"] < numerics.TOLERANCES["tf32"] < numerics.TOLERANCES["float16"]
    assert numerics.TOLERANCES["float16"] < numerics.TOLERANCES["bfloat16"]


# ---------------------------------------------------------------- the input buffer, in miniature
def small():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                               torch.nn.Flatten(), torch.nn.Linear(8, 5)).eval()


def test_the_gate_reads_fresh_images_through_the_static_buffer_and_refuses_a_stale_one():
    model = small()
    images = numerics.fixed_images(6, 8)
    with torch.no_grad():
        ref = model(images)
    x = numerics.tiled(numerics.fixed_images(4, 8, numerics.CAPTURE_SEED), 4)  # captured on other images
    before = x.clone()

    def honest():  # what a graph replay does: read whatever the buffer holds now
        with torch.no_grad():
            return model(x)
    stale = gate_audit.stale_input(honest)
    stale()  # the capture call, on the capture images

    out = numerics.through_input(x, honest, images)
    assert out.shape == ref.shape and torch.allclose(out, ref, atol=1e-6)
    assert numerics.check(out, ref, "float32").passed
    assert torch.equal(x, before)  # the buffer is given back as it was

    gate = numerics.check(numerics.through_input(x, stale, images), ref, "bfloat16")
    assert not gate.passed and gate.centred_error > 0.5


def test_a_rung_that_returns_no_logits_is_a_clear_error():
    x = torch.zeros(2, 3, 4, 4)
    with pytest.raises(numerics.NumericsError, match="must return"):
        numerics.through_input(x, lambda: None, numerics.fixed_images(2, 4))
    with pytest.raises(numerics.NumericsError, match="do not fit"):
        numerics.through_input(x, lambda: torch.zeros(2, 5), numerics.fixed_images(2, 8))


def test_the_gate_images_differ_from_the_capture_images_and_from_each_other():
    gate, capture = numerics.fixed_images(16, 32), numerics.fixed_images(16, 32, numerics.CAPTURE_SEED)
    assert not torch.equal(gate, capture) and torch.equal(gate, numerics.fixed_images(16, 32))
    means = gate.mean(dim=(2, 3))  # each image's own colour: white noise would give ~0 for all
    assert float(means.std()) > 0.2
    with pytest.raises(numerics.NumericsError, match="at least one image"):
        numerics.fixed_images(0, 32)


def test_calibration_normalises_every_batchnorm_on_its_images():
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)).eval()
    images = numerics.fixed_images(8, 8)
    numerics.calibrate_batchnorm(model, images)
    assert not model.training and model[1].momentum == 0.1
    with torch.no_grad():
        y = model[0](images)
    assert torch.allclose(model[1].running_mean, y.mean(dim=(0, 2, 3)), atol=1e-5)
    assert torch.allclose(model[1].running_var, y.var(dim=(0, 2, 3)), rtol=1e-4)


def test_a_gpu_gates_on_at_least_32_images_and_a_cpu_keeps_its_16():
    """Review 2026-12-03d item 11: top-1 over 15 clear images let 3 images decide a refusal.
    On a GPU the gate's images are the baselines' batch (one call per rung at batch 64)."""
    assert ladder.gate_images(torch.device("cuda")) >= 32
    assert ladder.gate_images(torch.device("cuda")) == ladder.GPU_GATE_IMAGES == 64
    assert ladder.gate_images(torch.device("cpu")) == ladder.GATE_IMAGES == 16
    # made once per process, and the same images fixed_images makes
    a = ladder._images(4, 8, numerics.GATE_SEED)
    assert a is ladder._images(4, 8, numerics.GATE_SEED) and torch.equal(a, numerics.fixed_images(4, 8))
