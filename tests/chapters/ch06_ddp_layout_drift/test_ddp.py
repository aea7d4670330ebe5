"""The DDP worker and launcher: real gloo processes on 127.0.0.1 provoke the layout warning and
keep the ranks identical; a rank that raises, or a collective that hangs, ends the run with a
clear error and no process left behind; bad input is refused before anything starts."""

import os
import time

import pytest
import torch

from labkit.chapters.ch06_ddp_layout_drift import ddp_launch, ddp_worker

TINY = {"batch": 2, "image": 8, "width": 4, "observed_steps": 3, "timed_steps": 1}


def test_two_gloo_ranks_provoke_the_warning_and_stay_identical():
    # mixed precision off: float32 on any CPU, so the tight margin is held whether or not this
    # CPU has bf16 units (the course's has had them since 2026-12-05); the drift needs no AMP
    result = ddp_launch.launch({**TINY, "variants": ["a_drift", "c_convert_first"], "amp": "off"},
                               world_size=2, timeout_s=240)
    assert result["backend"] == "gloo" and result["world_size"] == 2 and len(result["ranks"]) == 2
    rows = {row["name"]: row for row in ddp_launch.variant_summary(result)}
    drift, first = rows["a_drift"], rows["c_convert_first"]
    assert drift["warnings_step0"] == 3  # the three conv weights, on step 0
    assert drift["warnings_after_step0"] == 0  # DDP rebuilt its buckets at the second iteration
    assert first["warnings_step0"] == 0 and first["wrong_grads"] == []
    assert drift["params_identical"] and first["params_identical"]
    assert drift["max_abs_diff_across_ranks"] == 0.0
    # the gradient check's margin reaches the row (review 2026-12-04l item 3): float32's on a CPU;
    # on a GPU machine the two gloo ranks share its GPU (TF32 convolutions: the reduced margin;
    # the H200, 2026-12-05, ran this test so)
    on_cpu = result["device"] == "cpu"
    assert first["grad_tolerance"] == (ddp_worker.GRAD_TOLERANCE_FLOAT32_CPU if on_cpu
                                       else ddp_worker.GRAD_TOLERANCE_REDUCED)
    assert first["largest_grad_error"] < first["grad_tolerance"] and drift["largest_grad_error"] > 0.5
    assert drift["permuting_bytes_step0"] > 0 and first["permuting_bytes_step0"] == 0
    params = {p["name"]: p for p in result["ranks"][0][0]["observed"][0]["parameters"]}
    one_by_one = params["6.weight"]
    assert one_by_one["warned"] and one_by_one["strides_differ"] and not one_by_one["memory_order_differs"]
    assert params["0.weight"]["bucket_stride"] == [27, 9, 3, 1]  # read from the warning's own text
    assert params["0.weight"]["bucket_stride_source"] == "warning text"
    assert result["launcher"]["children_peak_rss_bytes"] > 0


def test_the_variants_are_timed_interleaved_in_rounds_with_no_warning_counted_while_timed():
    result = ddp_launch.launch({**TINY, "timed_steps": 4, "timed_rounds": 2,
                                "variants": ["a_drift", "e_late_drift", "c_convert_first"]},
                               world_size=2, timeout_s=240)
    for report in result["ranks"][0]:
        assert len(report["round_medians_s"]) == 2 and all(m > 0 for m in report["round_medians_s"])
        assert report["timing"]["count"] == 4 and report["timing"]["interleaved_with"] == [
            "a_drift", "e_late_drift", "c_convert_first"]
        assert len(report["warnings_by_step"]) == 3  # the observed steps only: none is timed
        assert report["trained_steps"] >= 3 + 4  # the harness's untimed first calls come on top
    rows = {row["name"]: row for row in ddp_launch.variant_summary(result)}
    assert rows["e_late_drift"]["warnings_last_step"] > 0  # the drift persists on its last observed step
    assert len({row["trained_steps"] for row in rows.values()}) == 1  # the same calls in every variant
    # the permuting copies are counted as kernels (a small copy costs its launch, review 2026-12-04j item 7):
    # one per gradient whose memory order differs from its bucket view's, not one per warning
    late = next(r for r in result["ranks"][0] if r["variant"]["name"] == "e_late_drift")["observed"][-1]
    moved = sum(p["memory_order_differs"] for p in late["parameters"])
    assert rows["e_late_drift"]["permuting_copies"] == moved > 0
    assert moved < rows["e_late_drift"]["warnings_last_step"]  # the 1x1 kernel warns without moving a byte
    assert rows["c_convert_first"]["permuting_copies"] == 0


def test_the_seeds_hook_on_every_parameter_runs_and_the_drift_stays():
    """Review 2026-12-04k item 3: C14c's nearest form is the seed's body on each parameter's gradient
    (p.register_hook). It runs (counted) and, measured here, DDP still warns and hands back the same
    wrong gradients as (a): the gradients it copies keep their parameters' strides."""
    from labkit.chapters.ch06_ddp_layout_drift import claims as ch06

    result = ddp_launch.launch({**TINY, "variants": ["a_drift", "b_seed_fix", "b3_seed_hook_per_param", "c_convert_first",
                                                     "e_late_drift"]}, world_size=2, timeout_s=240)
    reports = {r["variant"]["name"]: r for r in result["ranks"][0]}
    hooked, drift = reports["b3_seed_hook_per_param"], reports["a_drift"]
    assert hooked["hook_calls"] > 0 and drift["hook_calls"] == 0
    assert hooked["warnings_by_step"] == drift["warnings_by_step"]
    ev = ch06.evidence_from_run(result)
    per_param = ev["seed_hook_per_param"]
    assert per_param["hook"] == "seed_per_parameter" and per_param["grad_strides_as_param"] is True
    assert per_param["wrong_grads"] == next(d for d in ev["drift_variants"] if d["name"] == "a_drift")["wrong_grads"]
    from labkit import claims

    verdict = claims.get("C14c").judge(ch06.nearest_form_evidence(ev), machine="test", form=ch06.NEAREST_HOOK_FORM)
    assert verdict.outcome == "refuted" and "b3_seed_hook_per_param" in verdict.reason


def test_wrapping_again_after_the_conversion_repairs_what_no_hook_can():
    """Review 2026-12-04m item 10: (g) converts right after wrapping, as (a), then wraps the module in
    a new DDP (the first dropped). Its buckets are built from the new strides: no warning, the
    gradients right, and the first reducer gone (its bucket traffic would double the count)."""
    result = ddp_launch.launch({**TINY, "variants": ["a_drift", "c_convert_first", "g_convert_then_rewrap"]},
                               world_size=2, timeout_s=240)
    rows = {row["name"]: row for row in ddp_launch.variant_summary(result)}
    g, a, c = rows["g_convert_then_rewrap"], rows["a_drift"], rows["c_convert_first"]
    assert a["wrong_grads"] and a["warnings_step0"] > 0  # the drift it repairs
    assert g["warnings_step0"] == g["warnings_after_step0"] == 0 and g["wrong_grads"] == []
    assert g["params_identical"] and g["into_bucket_bytes"] == c["into_bucket_bytes"]


def test_a_rank_that_raises_ends_the_run_with_its_error():
    started = time.monotonic()
    with pytest.raises(ddp_launch.DDPRunError, match="rank 1 of 2 failed") as caught:
        ddp_launch.launch({**TINY, "variants": ["c_convert_first"], "fail_on_rank": 1},
                          world_size=2, timeout_s=240)
    assert "injected failure in rank 1" in str(caught.value)
    assert not isinstance(caught.value, ddp_launch.DDPTimeout)
    assert time.monotonic() - started < 240


def test_a_hung_collective_times_out_with_a_message():
    """Rank 1 waits in a barrier rank 0 never joins: the collective timeout (gloo) or the
    wall-clock limit ends it, whichever comes first; either way a DDPRunError says so."""
    started = time.monotonic()
    with pytest.raises(ddp_launch.DDPRunError) as caught:
        ddp_launch.launch({**TINY, "variants": ["c_convert_first"], "hang_on_rank": 1,
                           "collective_timeout_s": 5}, world_size=2, timeout_s=120)
    text = str(caught.value)
    assert "failed" in text or "limit" in text
    assert time.monotonic() - started < 120


def test_interrupting_the_cell_kills_every_rank(monkeypatch):
    seen = []

    def interrupted(procs, workdir, timeout_s):
        seen.extend(procs)
        raise KeyboardInterrupt

    monkeypatch.setattr(ddp_launch, "_wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ddp_launch.launch({**TINY, "variants": ["c_convert_first"]}, world_size=2)
    assert len(seen) == 2 and all(p.poll() is not None for p in seen)


@pytest.mark.parametrize(("config", "world", "message"), [
    ({"variants": ["nope"]}, 2, "unknown variants"),
    ({"variants": []}, 2, "unknown variants"),
    ({"colour": "red"}, 2, "unknown config keys"),
    ({"amp": "fp8"}, 2, "amp must be"),
    ({"observed_steps": 1}, 2, "observed_steps"),
    ({"timed_rounds": 0}, 2, "timed_rounds"),
    ({}, 0, "world_size must be a positive integer"),
])
def test_bad_input_is_refused_before_anything_starts(config, world, message):
    with pytest.raises(ValueError, match=message):
        ddp_launch.launch(config, world_size=world)


def test_timeout_must_be_positive():
    with pytest.raises(ValueError, match="timeout_s"):
        ddp_launch.launch({}, world_size=2, timeout_s=0)


def test_rank_environment_is_torchruns_plus_no_multicast():
    env = ddp_launch.rank_environment(1, 4, 12345, threads=2)
    assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"], env["MASTER_PORT"]) == ("1", "4", "1", "12345")
    assert env["MASTER_ADDR"] == "127.0.0.1" and env["OMP_NUM_THREADS"] == "2"
    assert env["NCCL_NVLS_ENABLE"] == "0" and env["TORCH_SYMM_MEM_DISABLE_MULTICAST"] == "1"
    assert env["NVSHMEM_DISABLE_NVLS"] == "1"


def test_free_port_is_a_port():
    assert 0 < ddp_launch.free_port() < 65536


def test_worker_main_writes_the_traceback_of_a_failing_rank(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "0")

    def boom(config):
        raise RuntimeError("something went wrong in the rank")

    assert ddp_worker.main(["--out", str(tmp_path)], run=boom) == 1
    assert "something went wrong in the rank" in (tmp_path / "error-rank0.txt").read_text()


def test_worker_main_writes_rank_zeros_result(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "0")
    assert ddp_worker.main(["--out", str(tmp_path)], run=lambda config: {"ok": config.batch}) == 0
    assert (tmp_path / "result.json").read_text() == '{"ok": 8}'


def test_same_memory_order_ignores_size_one_dims():
    assert ddp_worker.same_memory_order([32, 32, 1, 1], [32, 1, 32, 32], [32, 1, 1, 1])
    assert not ddp_worker.same_memory_order([16, 3, 3, 3], [27, 1, 9, 3], [27, 9, 3, 1])


def test_in_memory_order_reads_storage_order():
    t = torch.arange(24.0).reshape(1, 2, 3, 4).to(memory_format=torch.channels_last)
    flat = torch.empty(0).set_(t.untyped_storage()).view(-1)[:24]
    assert torch.equal(ddp_worker.in_memory_order(t, list(t.stride())), flat)


def test_parse_warning_reads_sizes_and_both_strides():
    text = ("Grad strides do not match bucket view strides. ...\n"
            "grad.sizes() = [32, 32, 1, 1], strides() = [32, 1, 32, 32]\n"
            "bucket_view.sizes() = [32, 32, 1, 1], strides() = [32, 1, 1, 1] (Triggered internally)")
    assert ddp_worker.parse_warning(text) == {"sizes": [32, 32, 1, 1], "grad_stride": [32, 1, 32, 32],
                                              "bucket_stride": [32, 1, 1, 1]}
    assert ddp_worker.parse_warning("something else") is None


def test_the_seed_hook_is_the_seeds_code():
    grad = torch.randn(2, 3, 4, 4).to(memory_format=torch.channels_last)
    assert ddp_worker._ddp_reduce_hook(grad).is_contiguous()
    assert ddp_worker._ddp_reduce_hook(None) is None
    module = ddp_worker.small_cnn(4)
    module.register_full_backward_hook(ddp_worker._ddp_reduce_hook)
    with pytest.raises(TypeError, match="takes 1 positional argument but 3 were given"):
        module(torch.randn(1, 3, 8, 8, requires_grad=True)).sum().backward()


def test_default_world_size_on_this_machine_is_never_one_rank():
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    expected = gpus if gpus >= 2 else 2
    assert ddp_launch.default_world_size() == expected >= 2
    backend = ddp_launch.backend_for(expected)
    assert backend == ("nccl" if gpus >= 2 else "gloo")
    assert ("gloo" in ddp_launch.describe(expected)) == (backend == "gloo")


def test_one_gpu_or_none_runs_two_gloo_ranks(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert ddp_launch.default_world_size() == 2 and ddp_launch.backend_for(2) == "gloo"
    assert "gloo with CUDA tensors" in ddp_launch.describe(2)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    assert ddp_launch.default_world_size() == 4 and ddp_launch.backend_for(4) == "nccl"
    assert os.cpu_count()


def test_the_resnet50_model_is_a_config_choice_with_realistic_gradients():
    config = ddp_worker.WorkerConfig.from_dict({"model": "resnet50"})
    model = ddp_worker.MODELS[config.model](config.width)
    grad_bytes = sum(p.numel() * 4 for p in model.parameters())
    assert 90e6 < grad_bytes < 110e6  # about 94 MB of float32 gradients
    with pytest.raises(ValueError, match="model must be one of"):
        ddp_worker.WorkerConfig.from_dict({"model": "vgg"})


def test_the_seeds_amp_fp16_with_gradscaler_runs_and_is_checked_against_a_scaled_reference():
    result = ddp_launch.launch({**TINY, "amp": "fp16", "variants": ["a_drift", "c_convert_first"]},
                               world_size=2, timeout_s=240)
    rows = {row["name"]: row for row in ddp_launch.variant_summary(result)}
    assert result["ranks"][0][0]["amp_dtype"] == "float16"
    assert rows["c_convert_first"]["wrong_grads"] == [] and rows["a_drift"]["wrong_grads"]
    assert all(o["nonfinite_grads"] == [] for o in result["ranks"][0][1]["observed"])
    with pytest.raises(ValueError, match="'fp16'"):
        ddp_worker.WorkerConfig.from_dict({"amp": "half"})


def test_the_timing_only_variants_run_when_named_and_no_sync_times_a_step_without_its_all_reduce():
    """Review 2026-12-04l items 2 and 4 (the ResNet-50 cost, opt-in on a GPU): (c) against itself
    sizes what the timing resolves, and (c) inside no_sync() times its step without the all-reduce.
    Neither is in a run's default variants (the page's nine)."""
    assert set(ddp_worker.TIMING_ONLY).isdisjoint(ddp_worker.WorkerConfig().variants)
    assert ddp_worker.WorkerConfig().variants == ddp_worker.DEFAULT_VARIANTS and len(ddp_worker.DEFAULT_VARIANTS) == 9
    result = ddp_launch.launch({**TINY, "timed_steps": 2, "timed_rounds": 2,
                                "variants": ["c_convert_first", "c2_convert_first_again", "c_compute_only"]},
                               world_size=2, timeout_s=240)
    rows = {row["name"]: row for row in ddp_launch.variant_summary(result)}
    assert all(len(rows[n]["round_medians_s"]) == 2 for n in rows)  # timed in the same interleaved rounds
    assert rows["c2_convert_first_again"]["params_identical"] and rows["c_convert_first"]["params_identical"]
    # its observed steps reduced (gradients right); its timed steps did not: each rank's own batch moved
    # its parameters apart, which only a step without the all-reduce can do
    assert rows["c_compute_only"]["wrong_grads"] == [] and not rows["c_compute_only"]["params_identical"]
