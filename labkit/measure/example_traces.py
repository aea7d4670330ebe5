"""Made-up Kineto traces of a GPU training loop, for tests, benchmarks and demos without a GPU.

``training_trace(steps)`` writes what torch.profiler exports for a loop that, each step,
copies a batch host-to-device on a side stream (pinned memory, ``non_blocking=True``) while
the previous batch's kernels run, then launches a forward and backward pass: a CPU thread with
``aten::`` ops and ``cudaLaunchKernel`` calls, kernels on stream 7, copies on stream 20, flow
ids (``correlation``, ``External id``) as Kineto writes them. Deterministic for a given seed,
so tests can compare figures; the numbers are plausible, not measured.
"""

from __future__ import annotations

import numpy as np

# (CPU op, kernel name, kernel duration in µs): one forward/backward step of a small CNN.
_STEP = (
    ("aten::conv2d", "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw", 42.0),
    ("aten::batch_norm", "cudnn::bn_fw_tr_1C11_kernel_NCHW", 11.0),
    ("aten::relu_", "void at::native::vectorized_elementwise_kernel<4, at::native::relu>", 6.0),
    ("aten::conv2d", "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw", 55.0),
    ("aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor>", 7.0),
    ("aten::contiguous", "void at::native::elementwise_kernel<128, 4, direct_copy_kernel_cuda>", 9.0),
    ("aten::linear", "nvjet_tst_128x64_64x8_1x2_h_bz_TNT", 18.0),
    ("aten::sum", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>", 5.0),
    ("autograd::engine::evaluate_function: ConvolutionBackward0",
     "sm90_xmma_dgrad_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw", 60.0),
    ("autograd::engine::evaluate_function: ConvolutionBackward0",
     "sm90_xmma_wgrad_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw", 48.0),
    ("aten::threshold_backward",
     "void at::native::vectorized_elementwise_kernel<4, at::native::threshold_backward>", 6.0),
    ("Optimizer.step#SGD.step", "void at::native::multi_tensor_apply_kernel<SGD>", 14.0),
)


def training_trace(steps: int = 4, *, seed: int = 0, copy_us: float = 120.0,
                   launch_us: float = 6.0, cpu_gap_us: float = 4.0, decimals: int = 3) -> dict:
    """A Kineto trace (the dict ``json.load`` gives) of `steps` training steps.

    Each step: one H2D copy of ``copy_us`` on stream 20 that overlaps the previous step's
    kernels, then one CPU op per kernel of _STEP on the main thread, each launching its kernel
    on stream 7 through ``cudaLaunchKernel`` (``launch_us`` long), and a
    ``cudaStreamSynchronize`` at the end of the step. Times are rounded to ``decimals``
    digits after the microsecond (3: nanoseconds, as Kineto writes them; 0: whole µs, as
    Holistic Trace Analysis rounds them).
    """
    if steps < 1:
        raise ValueError(f"steps = {steps}; make at least one step.")
    rng = np.random.default_rng(seed)
    pid, tid, device = 4242, 4242, 0
    events: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
         "args": {"name": "thread 4242 (python)"}},
        {"ph": "M", "name": "process_name", "pid": device, "tid": 0, "args": {"name": "CUDA GPU 0"}},
    ]
    clock = 1000.0  # CPU time
    gpu_free = {7: 0.0, 20: 0.0}
    correlation = 1
    external = 1

    def _round(value: float, digits: int = 3) -> float:
        return round(value, min(digits, decimals))

    def jitter(value: float) -> float:
        return _round(float(value * rng.uniform(0.85, 1.15)), 3)

    for step in range(steps):
        step_start = clock
        step_events: list[dict] = []
        # The batch copy: cudaMemcpyAsync on the CPU, the copy itself on stream 20.
        duration = jitter(launch_us)
        step_events.append({"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": pid,
                            "tid": tid, "ts": _round(clock, 3), "dur": _round(duration + 2.0, 3),
                            "args": {"External id": external}})
        step_events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync",
                            "pid": pid, "tid": tid, "ts": _round(clock + 1.0, 3), "dur": duration,
                            "args": {"correlation": correlation, "External id": external}})
        copy_start = max(clock + 3.0, gpu_free[20])
        copy_len = jitter(copy_us)
        step_events.append({"ph": "X", "cat": "gpu_memcpy",
                            "name": "Memcpy HtoD (Pinned -> Device)", "pid": device, "tid": 20,
                            "ts": _round(copy_start, 3), "dur": copy_len,
                            "args": {"device": device, "stream": 20, "correlation": correlation,
                                     "External id": external, "bytes": 12_582_912}})
        gpu_free[20] = copy_start + copy_len
        correlation += 1
        external += 1
        clock += duration + 2.0 + jitter(cpu_gap_us)
        for op, kernel, kernel_us in _STEP:
            launch = jitter(launch_us)
            op_len = launch + 6.0
            step_events.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": pid, "tid": tid,
                                "ts": _round(clock, 3), "dur": _round(op_len, 3),
                                "args": {"External id": external}})
            step_events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                                "pid": pid, "tid": tid, "ts": _round(clock + 3.0, 3), "dur": launch,
                                "args": {"correlation": correlation, "External id": external}})
            begin = max(clock + 3.0 + launch * 0.6, gpu_free[7])
            length = jitter(kernel_us)
            step_events.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": device,
                                "tid": 7, "ts": _round(begin, 3), "dur": length,
                                "args": {"device": device, "stream": 7, "correlation": correlation,
                                         "External id": external}})
            gpu_free[7] = begin + length
            correlation += 1
            external += 1
            clock += op_len + jitter(cpu_gap_us)
        # The step ends when the CPU waits for the GPU.
        wait = max(gpu_free[7] - clock, 1.0)
        step_events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize",
                            "pid": pid, "tid": tid, "ts": _round(clock, 3), "dur": _round(wait, 3),
                            "args": {"correlation": correlation}})
        correlation += 1
        clock += wait + jitter(cpu_gap_us)
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                       "pid": pid, "tid": tid, "ts": _round(step_start - 0.5, 3),
                       "dur": _round(clock - step_start, 3), "args": {"External id": external}})
        external += 1
        events.extend(step_events)
    return {"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": events,
            "traceName": f"labkit synthetic training trace ({steps} steps, seed {seed})"}


def events_per_step() -> int:
    """How many timeline events one step of training_trace makes (for sizing benchmarks)."""
    return 3 + 3 * len(_STEP) + 1 + 1
