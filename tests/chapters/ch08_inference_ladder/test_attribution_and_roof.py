"""Inductor's kernels are attributed to their classes; the roof comes from FlopCounterMode and
the measured matmul rate; the published point is labelled as published."""

import pytest

from labkit.chapters.ch08_inference_ladder import attribution, roofline
from labkit.measure import timeline_stats


@pytest.mark.parametrize("name, cls", [
    ("triton_poi_fused_add_relu_3", timeline_stats.ELEMENTWISE),
    ("triton_red_fused_mean_7", attribution.REDUCTIONS),
    ("triton_per_fused_mean_relu_12", attribution.REDUCTIONS),
    ("triton_tem_fused_convolution_1", timeline_stats.GEMM_CONV),
    ("sm90_xmma_fprop_implicit_gemm_f16f16", timeline_stats.GEMM_CONV),
    ("cudnn::bn_fw_inf_1C11_kernel_NCHW", attribution.REDUCTIONS),
])
def test_kernel_classes(name, cls):
    assert attribution.kernel_class(name, "kernel") == cls


def test_resnet50_flops_and_the_roof():
    per_image = roofline.flops_per_image(224)
    assert per_image == pytest.approx(8.18e9, rel=0.01)
    roof = roofline.roof({"float16": 655.0}, "float16", per_image)
    assert roof.images_per_s == pytest.approx(655e12 / per_image)
    assert roofline.roof({"float16": 655.0}, "tf32", per_image) is None
    rows = roofline.standing(30_000, "float16", {"float16": 655.0}, per_image)
    assert len(rows) == 3 and rows[-1][0].startswith("published:") and "source:" in rows[-1][1]
    assert "37%" in rows[1][1]


def test_the_gap_to_mlperf_splits_into_precision_and_efficiency():
    per_image = 8.2e9
    split = roofline.gap_split(31_000, "float16", per_image, "NVIDIA H200", elementwise_share=0.43)
    assert split.precision * split.efficiency == pytest.approx(split.gap)
    assert split.precision == pytest.approx(1979 / 989)
    assert split.top_tflops == pytest.approx(31_000 * 8.2e9 / 1e12)
    assert split.published_share_of_peak == pytest.approx(95_000 * 8.2e9 / 1e12 / 1979)
    assert any(line.startswith("43% of the best rung") and "elementwise" in line
               for line in split.lines("float16"))
    # the published peaks are the H200's: no split elsewhere, nor for a math with no peak here
    assert roofline.gap_split(31_000, "float16", per_image, "NVIDIA A100") is None
    assert roofline.gap_split(31_000, "tf32", per_image, "NVIDIA H200") is None


def test_the_memory_roof_counts_the_conv_outputs_bytes():
    """Review 2026-12-03c item 5: ResNet-50's convolutions write 11.1 M elements per 224-px
    image; written and read once in float16 that is 44 MB, 95k images/s at 4,222 GB/s."""
    import pytest

    from labkit.chapters.ch08_inference_ladder import roofline

    elements = roofline.conv_output_elements(224)
    assert 11.0e6 < elements < 11.2e6
    what, value = roofline.memory_roof(31767, "float16", 4222, elements)
    assert "44.5 MB/image in float16" in what and value.startswith("94,970 images/s")
    assert value.endswith("(top rung: 33%)")
    with pytest.raises(ValueError, match="positive"):
        roofline.memory_roof(1.0, "float16", 0.0, elements)


def test_host_launch_calls_are_counted_per_batch_from_the_runtime_events():
    """Review item 6: eager launches each kernel from the host; a graph replays them from one call."""
    from labkit.chapters.ch08_inference_ladder import attribution
    from labkit.measure import timeline

    tracks = [timeline.Track(0, "cpu", "cpu", "p", "t"), timeline.Track(1, "stream 7", "gpu", "p", "s")]
    names = ["cudaLaunchKernel", "cudaLaunchKernelExC_v11060", "cudaGraphLaunch", "gemm", "aten::add"]
    runtime, kernel, cpu_op = (timeline.KINDS.index(k) for k in ("runtime", "kernel", "cpu_op"))
    events = [(0, runtime, 0, 0), (1, runtime, 0, 1), (2, runtime, 0, 2), (3, runtime, 0, 0),
              (4, kernel, 1, 3), (5, kernel, 1, 3), (6, cpu_op, 0, 4)]
    trace = timeline.build(tracks, names, [e[0] * 10.0 for e in events], [1.0] * len(events),
                           [e[1] for e in events], [e[2] for e in events], [e[3] for e in events])
    assert attribution.host_launches(trace, 2) == {"kernel launches": 1.5, "graph launches": 0.5}


def test_kernels_are_counted_per_batch_by_class_and_by_name():
    """Review 2026-12-03d item 12: what a rise in the kernel count is made of is recorded."""
    from labkit.chapters.ch08_inference_ladder import attribution
    from labkit.measure import timeline

    tracks = [timeline.Track(0, "cpu", "cpu", "p", "t"), timeline.Track(1, "stream 7", "gpu", "p", "s")]
    names = ["cudaLaunchKernel", "sm90_xmma_fprop_implicit_gemm", "triton_poi_fused_add_relu_0",
             "at::native::elementwise_kernel<copy>"]
    runtime, kernel = timeline.KINDS.index("runtime"), timeline.KINDS.index("kernel")
    events = [(0, runtime, 0, 0), (1, kernel, 1, 1), (2, kernel, 1, 2), (3, kernel, 1, 3),
              (4, kernel, 1, 3), (5, kernel, 1, 1), (6, kernel, 1, 3)]
    trace = timeline.build(tracks, names, [e[0] * 10.0 for e in events], [1.0] * len(events),
                           [e[1] for e in events], [e[2] for e in events], [e[3] for e in events])
    figures = attribution.of_trace(trace, 2)
    assert figures.kernels_per_batch == 3.0
    assert sum(figures.kernel_counts.values()) == 3.0
    assert figures.kernel_counts[attribution.ELEMENTWISE] == 2.0  # the fused tail and the copy kernels
    assert figures.kernel_names["at::native::elementwise_kernel<copy>"] == 1.5
    assert figures.kernel_names["sm90_xmma_fprop_implicit_gemm"] == 1.0
