"""The timeline's arithmetic on hand-built intervals, where each answer can be worked out on
paper, and against a brute-force reference (a microsecond grid) on random intervals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labkit.measure import timeline_stats as ts


# --------------------------------------------------------------------------- intervals
def test_merge_joins_overlapping_and_touching_intervals():
    starts, ends = ts.merge_intervals([5, 0, 2, 10, 12], [7, 3, 4, 12, 13])
    assert starts.tolist() == [0, 5, 10]
    assert ends.tolist() == [4, 7, 13]


def test_union_counts_overlap_once():
    # Two kernels on two streams: [0, 10) and [5, 20) cover 20 µs, not 25.
    assert ts.union_length([0, 5], [10, 20]) == 20
    assert ts.union_length([], []) == 0


def test_idle_gaps_are_the_holes_inside_the_span():
    assert ts.idle_gaps([0, 5, 30], [4, 10, 31]).tolist() == [1, 20]
    assert ts.idle_gaps([0], [4]).size == 0


def test_a_gap_of_less_than_a_nanosecond_is_no_gap():
    # Times in µs with ns resolution: float rounding must not make a gap of 1e-13 µs.
    assert ts.idle_gaps([0.0, 0.1 + 0.2], [0.3, 1.0]).size == 0


def test_bad_intervals_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="ends .* before it starts"):
        ts.merge_intervals([5], [4])
    with pytest.raises(ValueError, match="one start and one end"):
        ts.union_length([1, 2], [3])


def test_overlap_each_measures_each_interval_against_the_union_of_covers():
    # Copies [0,10) [20,30) [40,50); kernels [5,25) and [22,45) -> union [5,45).
    got = ts.overlap_each([0, 20, 40], [10, 30, 50], [5, 22], [25, 45])
    assert got.tolist() == [5, 10, 5]


def test_overlap_share_of_h2d_copies():
    # 30 µs of copies, 20 of them while a kernel runs.
    assert ts.overlap_share([0, 20, 40], [10, 30, 50], [5, 22], [25, 45]) == pytest.approx(20 / 30)
    assert ts.overlap_share([0], [10], [], []) == 0.0
    assert ts.overlap_share([], [], [0], [1]) is None  # no copies: no figure, not 0


def test_launch_gaps_are_taken_on_all_streams_together():
    # k0 [0,10), k1 [12,20), k2 [15,30) on another stream, k3 [35,40).
    gaps = ts.launch_gaps([0, 12, 15, 35], [10, 20, 30, 40])
    assert gaps.tolist() == [2, 0, 5]
    assert ts.launch_gaps([0], [1]).size == 0


def test_self_time_subtracts_direct_children_only():
    # 0 encloses 1 and 2; 2 encloses 3.
    durations = [100, 30, 50, 20]
    parents = [-1, 0, 0, 2]
    assert ts.self_times(durations, parents).tolist() == [20, 30, 30, 20]


def test_class_shares_cover_all_classes_and_sum_to_one():
    shares = ts.class_shares([3, 1], [ts.GEMM_CONV, ts.COPIES])
    assert shares == {ts.GEMM_CONV: 0.75, ts.ELEMENTWISE: 0.0, ts.COPIES: 0.25, ts.OTHER: 0.0}
    assert ts.class_shares([], []) == {}


@pytest.mark.parametrize(("name", "kind", "expected"), [
    ("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw", "kernel", ts.GEMM_CONV),
    ("nvjet_tst_128x64_64x8_1x2_h_bz_TNT", "kernel", ts.GEMM_CONV),
    ("ampere_sgemm_128x64_tn", "kernel", ts.GEMM_CONV),
    ("aten::addmm", "cpu_op", ts.GEMM_CONV),
    ("aten::mkldnn_convolution", "cpu_op", ts.GEMM_CONV),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor>", "kernel",
     ts.ELEMENTWISE),
    ("triton_poi_fused_add_relu_0", "kernel", ts.ELEMENTWISE),
    ("aten::relu_", "cpu_op", ts.ELEMENTWISE),
    ("void at::native::elementwise_kernel<128, 4, direct_copy_kernel_cuda>", "kernel", ts.COPIES),
    ("void cudnn::ops::nchwToNhwcKernel<float>", "kernel", ts.COPIES),
    ("aten::contiguous", "cpu_op", ts.COPIES),
    ("Memcpy HtoD (Pinned -> Device)", "memcpy_h2d", ts.COPIES),
    ("Memset (Device)", "memset", ts.COPIES),
    ("cudnn::bn_fw_tr_1C11_kernel_NCHW", "kernel", ts.OTHER),
    ("void at::native::reduce_kernel<512, 1>", "kernel", ts.OTHER),
    ("triton_red_fused_sum_0", "kernel", ts.OTHER),
    ("aten::empty", "cpu_op", ts.OTHER),
])
def test_kind_class_places_common_kernels_and_ops(name, kind, expected):
    assert ts.kind_class(name, kind) == expected


def test_format_us_picks_a_readable_unit():
    assert ts.format_us(12.345) == "12.3 µs"
    assert ts.format_us(1234.5) == "1.23 ms"
    assert ts.format_us(2.5e6) == "2.5 s"
    assert ts.format_us(None) == "n/a"


# --------------------------------------------------------------------------- the summary
KINDS = ("kernel", "memcpy_h2d", "memcpy_d2h", "memcpy_d2d", "memset", "cpu_op", "runtime",
         "sync")


def summarize(events, tracks):
    """events: (track, kind, name, start, duration, parent)."""
    names = sorted({e[2] for e in events})
    return ts.summarize(
        np.array([e[3] for e in events], dtype=float), np.array([e[4] for e in events], dtype=float),
        KINDS, np.array([KINDS.index(e[1]) for e in events]), np.array([e[0] for e in events]),
        tracks, names, np.array([names.index(e[2]) for e in events]),
        np.array([e[5] for e in events]))


def test_summary_of_a_hand_built_gpu_trace():
    tracks = [("main thread", "cpu"), ("GPU 0 stream 7", "gpu"), ("GPU 0 stream 20", "gpu")]
    events = [
        (0, "cpu_op", "aten::mm", 0, 10, -1),
        (0, "runtime", "cudaLaunchKernel", 2, 3, 0),
        (0, "sync", "cudaDeviceSynchronize", 12, 80, -1),
        (1, "kernel", "ampere_sgemm_128x64_tn", 10, 40, -1),     # [10, 50)
        (1, "kernel", "vectorized_elementwise_kernel", 60, 20, -1),  # [60, 80), gap 10
        (2, "memcpy_h2d", "Memcpy HtoD (Pinned -> Device)", 40, 30, -1),  # [40, 70)
    ]
    s = summarize(events, tracks)
    # GPU span [10, 80) = 70 µs, busy union [10, 80) minus nothing -> the copy fills the gap.
    assert s.device == "gpu"
    assert s.window_us == 70
    assert s.gpu_busy_share == pytest.approx(1.0)
    assert s.longest_idle_us == 0
    # Copy [40, 70): kernels cover [40, 50) and [60, 70) -> 20 of 30 µs.
    assert s.h2d_overlap_share == pytest.approx(20 / 30)
    assert s.h2d_copy_us == 30
    # One launch gap, 60 - 50.
    assert s.launch_gap_mean_us == 10 and s.launch_gap_median_us == 10
    # GPU time 40 + 20 + 30 = 90: GEMM 40, elementwise 20, copies 30.
    assert s.kind_shares[ts.GEMM_CONV] == pytest.approx(40 / 90)
    assert s.kind_shares[ts.ELEMENTWISE] == pytest.approx(20 / 90)
    assert s.kind_shares[ts.COPIES] == pytest.approx(30 / 90)
    assert s.kind_shares_of == "GPU time"
    # The CPU thread: the sync is waiting, not work -> busy [0, 10) of span [0, 10).
    main = s.tracks[0]
    assert (main.events, main.busy_us, main.span_us) == (2, 10, 10)
    stream7 = s.tracks[1]
    assert (stream7.busy_us, stream7.idle_us, stream7.longest_idle_us) == (60, 10, 10)
    assert "GPU busy" in s._repr_html_() and "GPU 0 stream 20" in str(s)


def test_summary_with_idle_gpu_and_no_copies():
    tracks = [("GPU 0 stream 7", "gpu")]
    events = [(0, "kernel", "k", 0, 10, -1), (0, "kernel", "k", 40, 10, -1),
              (0, "kernel", "k", 50, 10, -1)]
    s = summarize(events, tracks)
    assert s.gpu_busy_share == pytest.approx(30 / 60)
    assert s.gpu_idle_share == pytest.approx(30 / 60)
    assert s.longest_idle_us == 30
    assert s.launch_gap_mean_us == 15 and s.launch_gap_median_us == 15
    assert s.h2d_overlap_share is None
    assert any("No host-to-device copies" in n for n in s.notes)


def test_summary_of_a_cpu_only_trace_splits_self_time():
    tracks = [("main thread", "cpu"), ("worker", "cpu")]
    events = [
        (0, "cpu_op", "aten::linear", 0, 100, -1),
        (0, "cpu_op", "aten::addmm", 10, 80, 0),
        (0, "cpu_op", "aten::relu", 120, 20, -1),
        (1, "cpu_op", "aten::copy_", 0, 50, -1),
    ]
    s = summarize(events, tracks)
    assert s.device == "cpu"
    assert s.gpu_busy_share is None and s.h2d_overlap_share is None
    assert s.launch_gap_mean_us is None and s.longest_idle_us is None
    # Self times: linear 20 (GEMM), addmm 80 (GEMM), relu 20 (elementwise), copy 50.
    assert s.kind_shares_of == "CPU op self time"
    assert s.kind_shares[ts.GEMM_CONV] == pytest.approx(100 / 170)
    assert s.kind_shares[ts.ELEMENTWISE] == pytest.approx(20 / 170)
    assert s.kind_shares[ts.COPIES] == pytest.approx(50 / 170)
    assert [t.name for t in s.tracks] == ["main thread", "worker"]
    assert s.tracks[0].longest_idle_us == 20
    assert any("No GPU events" in n for n in s.notes)
    assert "n/a" not in dict(s.lines())["trace span"]


# --------------------------------------------------------------------------- against a grid
intervals = st.lists(
    st.tuples(st.integers(0, 200), st.integers(0, 40)), min_size=0, max_size=25)


def grid(pairs):
    """Which microseconds of [0, 240) the intervals cover: a brute-force reference."""
    covered = np.zeros(240, dtype=bool)
    for start, length in pairs:
        covered[start:start + length] = True
    return covered


@settings(max_examples=200, deadline=None)
@given(intervals)
def test_union_and_gaps_match_a_microsecond_grid(pairs):
    starts = [s for s, _ in pairs]
    ends = [s + n for s, n in pairs]
    covered = grid(pairs)
    assert ts.union_length(starts, ends) == covered.sum()
    nonempty = [(s, n) for s, n in pairs if n > 0]
    if nonempty:
        first = min(s for s, _ in nonempty)
        last = max(s + n for s, n in nonempty)
        holes = (~covered[first:last]).sum()
        gaps = ts.idle_gaps([s for s, _ in nonempty], [s + n for s, n in nonempty])
        assert gaps.sum() == holes


@settings(max_examples=200, deadline=None)
@given(intervals, intervals)
def test_overlap_matches_a_microsecond_grid(copies, kernels):
    covered = grid(kernels)
    expected = [covered[s:s + n].sum() for s, n in copies]
    got = ts.overlap_each([s for s, _ in copies], [s + n for s, n in copies],
                          [s for s, _ in kernels], [s + n for s, n in kernels])
    assert got.tolist() == pytest.approx(expected)


# --------------------------------------------------------------------------- real kernel names
# Names copied from the H200 traces and notebook outputs under results/ (timeline_trace*.json,
# nvidia-h200.json, h200_notebooks/*.ipynb), and read again from the trace files below.
REAL_NAMES = [
    # Inductor: fused pointwise kernels carry their origin ops' names, 'convolution' included
    ("triton_poi_fused_add_convolution_relu_11", ts.ELEMENTWISE),
    ("triton_poi_fused_convolution_relu_0", ts.ELEMENTWISE),
    ("triton_poi_fused_convolution_max_pool2d_with_indices_relu_1", ts.ELEMENTWISE),
    ("triton_poi_fused_add_mul_silu_0", ts.ELEMENTWISE),
    ("triton_per_fused_add_convolution_mean_relu_17", ts.OTHER),
    ("triton_red_fused_sum_0", ts.OTHER),
    ("triton_tem_fused_convolution_0", ts.GEMM_CONV),
    # cuDNN convolutions and its layout conversion
    ("sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize256x64x32_"
     "warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn", ts.GEMM_CONV),
    ("sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x32_"
     "warpgroupsize1x1x1_g1_execute_split_k_kernel__5x_cudnn", ts.GEMM_CONV),
    ("void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*)",
     ts.GEMM_CONV),
    ("void cask_plugin__5x_cudnn::xmma__5x_cudnn::init_device_workspace_kernel<xmma__5x_cudnn::"
     "implicit_gemm::wgrad_indexed::Warp_specialized_params>", ts.GEMM_CONV),
    ("void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false, true, "
     "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, "
     "__half const*, __half*)", ts.COPIES),
    ("void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, true, false, "
     "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<float>)", ts.COPIES),
    ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>"
     "(cudnnTensorStruct, float const*)", ts.OTHER),
    # cuBLAS / cuBLASLt / nvjet, CUTLASS
    ("nvjet_sm90_tst_128x256_64x4_1x2_h_ssched_bz_coopA_TNN", ts.GEMM_CONV),
    ("void sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>(float*, float const*)", ts.GEMM_CONV),
    ("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false>"
     "(cublasLt::cublasSplitKParams<float>)", ts.GEMM_CONV),
    ("void cublasLt::epilogue::impl::globalKernel<8, 32, float, float, float, true, true, 1>"
     "(int, int, long)", ts.GEMM_CONV),
    ("void scal_kernel<float, float, 1, true, 6, 5, 5, 3>(cublasTransposeParams<float>, "
     "float const*, float*, float const*)", ts.GEMM_CONV),
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>"
     "(cutlass_80_simt_sgemm_64x64_8x5_nn_align1::Params)", ts.GEMM_CONV),
    ("cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8", ts.GEMM_CONV),
    # ATen elementwise, reductions and copies
    ("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, "
     "float, at::native::(anonymous namespace)::threshold_kernel_impl<float>>>", ts.ELEMENTWISE),
    ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::"
     "CUDAFunctor_add<float> >(at::TensorIteratorBase&)>", ts.ELEMENTWISE),
    ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<2>>", ts.ELEMENTWISE),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float,"
     " float, float, float>, unsigned int, float, 4, 4> >", ts.OTHER),
    ("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::"
     "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::"
     "{lambda(float)#1}>", ts.COPIES),
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 4, true, false>", ts.OTHER),
    # oneDNN on the CPU
    ("aten::mkldnn_convolution", ts.GEMM_CONV),
    ("aten::copy_", ts.COPIES),
    ("aten::_to_copy", ts.COPIES),
]


@pytest.mark.parametrize(("name", "expected"), REAL_NAMES)
def test_kind_class_on_real_kernel_names(name, expected):
    assert ts.kind_class(name, "cpu_op" if name.startswith("aten::") else "kernel") == expected


def test_every_kernel_of_the_real_h200_traces_is_placed_by_its_family():
    """All kernels of the recorded H200 traces: none of a GEMM library's lands in elementwise,
    no Inductor pointwise kernel in GEMM/conv, every layout conversion in copies."""
    import json

    from tests.paths import ROOT
    seen = 0
    for path in sorted((ROOT / "results" / "h200_probes").glob("timeline_trace*.json")):
        events = json.loads(path.read_text())
        events = events["traceEvents"] if isinstance(events, dict) else events
        for e in events:
            if e.get("cat") != "kernel":
                continue
            seen += 1
            name, lowered = e["name"], e["name"].lower()
            got = ts.kind_class(name, "kernel")
            if "nchwtonhwc" in lowered or "nhwctonchw" in lowered or "direct_copy" in lowered:
                assert got == ts.COPIES, name
            elif lowered.startswith(("sm90_xmma", "sm80_xmma", "nvjet", "void cutlass", "void sgemm",
                                     "void cublaslt")):
                assert got == ts.GEMM_CONV, name
            elif "elementwise_kernel" in lowered:
                assert got == ts.ELEMENTWISE, name
    if seen == 0:
        pytest.skip("no recorded H200 trace")
