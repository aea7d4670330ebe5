"""labkit.core.env: where the course runs and the sizes it picks, including a Binder-sized machine."""

import pytest
import torch

from labkit.core import env

GiB = 2**30


def test_where_recognises_binder_and_colab(monkeypatch):
    for name in ("BINDER_SERVICE_HOST", "BINDER_REQUEST", "COLAB_RELEASE_TAG"):
        monkeypatch.delenv(name, raising=False)
    assert env.where() == "local"
    monkeypatch.setenv("BINDER_SERVICE_HOST", "10.0.0.1")
    assert env.where() == "binder"
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab")
    assert env.where() == "colab"


def test_memory_limit_can_be_lowered_to_rehearse_binder(monkeypatch):
    monkeypatch.setenv("LABKIT_MEMORY_LIMIT_BYTES", str(2 * GiB))
    assert env.memory_limit_bytes() <= 2 * GiB
    monkeypatch.setenv("LABKIT_MEMORY_LIMIT_BYTES", "not a number")
    assert env.memory_limit_bytes() > 0


def test_cpu_sizes_fit_inside_binder(monkeypatch):
    monkeypatch.setattr(env, "has_cuda", lambda: False)
    monkeypatch.setenv("LABKIT_MEMORY_LIMIT_BYTES", str(2 * GiB))
    sizes = env.sizes()
    assert sizes.device == "cpu"
    assert sizes.memory_budget_bytes <= GiB // 2
    # a copy benchmark holds a source and a destination
    assert 2 * sizes.copy_bytes <= sizes.memory_budget_bytes
    assert sizes.cache_sweep_max_bytes <= sizes.memory_budget_bytes


def test_sizes_grow_with_memory(monkeypatch):
    monkeypatch.setattr(env, "has_cuda", lambda: False)
    monkeypatch.setenv("LABKIT_MEMORY_LIMIT_BYTES", str(2 * GiB))
    small = env.sizes()
    monkeypatch.setenv("LABKIT_MEMORY_LIMIT_BYTES", str(64 * GiB))
    large = env.sizes()
    assert small.copy_bytes <= large.copy_bytes and small.memory_budget_bytes < large.memory_budget_bytes


def test_fingerprint_and_device_key():
    info = env.fingerprint()
    for key in ("where", "python", "torch", "cpu_model", "cpu_cores", "device"):
        assert key in info
    assert info["torch"] == torch.__version__
    assert env.device_key() and all(c.isalnum() or c == "_" for c in env.device_key())


def test_colab_widgets_are_turned_on_only_in_colab(monkeypatch):
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    assert env.enable_colab_widgets() is False
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab")
    # the variable without Colab's own package (a kernel outside Colab): nothing to turn on
    assert env.enable_colab_widgets() is False


def test_results_are_read_from_the_colab_clone_when_labkit_was_pip_installed(monkeypatch, tmp_path):
    from labkit.core import results

    clone = tmp_path / "tensor-layout-lab"
    (clone / "results").mkdir(parents=True)
    monkeypatch.delenv("LABKIT_RESULTS_DIR", raising=False)
    monkeypatch.setattr(results, "COLAB_CHECKOUT", clone)
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab")
    # run from the checkout, results/ is beside the package and wins
    assert results.repository_results_dir() == results.Path(results.__file__).resolve().parents[2] / "results"
    monkeypatch.setattr(results, "__file__", str(tmp_path / "site-packages" / "labkit" / "core" / "results.py"))
    assert results.repository_results_dir() == clone / "results"
    monkeypatch.delenv("COLAB_RELEASE_TAG")
    assert results.repository_results_dir() != clone / "results"


def _gpu(monkeypatch, capability):
    """Pretend a CUDA GPU of this compute capability is present (None: no GPU)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: capability is not None)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)


def test_gpu_lacks_names_the_capability_a_t4_misses(monkeypatch):
    _gpu(monkeypatch, (7, 5))
    for feature in ("tf32", "bf16"):
        assert "7.5 < 8.0" in env.gpu_lacks(feature)
    assert "7.5 < 8.9" in env.gpu_lacks("fp8")


def test_gpu_lacks_nothing_an_h200_has_and_fp8_from_ada(monkeypatch):
    _gpu(monkeypatch, (9, 0))
    assert [env.gpu_lacks(f) for f in ("tf32", "bf16", "fp8")] == ["", "", ""]
    _gpu(monkeypatch, (8, 0))
    assert env.gpu_lacks("tf32") == env.gpu_lacks("bf16") == ""
    assert "8.0 < 8.9" in env.gpu_lacks("fp8")


def test_gpu_lacks_without_a_gpu_or_with_an_unknown_feature(monkeypatch):
    _gpu(monkeypatch, None)
    assert "need a CUDA GPU" in env.gpu_lacks("tf32")
    with pytest.raises(ValueError, match="tf32, bf16, fp8"):
        env.gpu_lacks("int4")
