"""Chapter 04's torch.compile readers (fusion.py): graphs, breaks, recompiles, kernels."""

import pytest
import torch

from labkit.chapters.ch04_fusion import fusion


def _seed_function(x, y):
    return x + y if x.sum() > 0 else x * y


def test_explain_counts_the_break_at_a_data_dependent_branch():
    report = fusion.explain(_seed_function, torch.randn(4), torch.randn(4))
    assert report.graph_break_count >= 1 and report.graph_count >= 2
    assert report.break_reasons


def test_explain_keeps_torch_cond_in_one_graph():
    def with_cond(x, y):
        return torch.cond(x.sum() > 0, lambda a, b: a + b, lambda a, b: a * b, (x, y))

    report = fusion.explain(with_cond, torch.randn(4), torch.randn(4))
    assert (report.graph_count, report.graph_break_count) == (1, 0)
    assert "cond" in report.graph_code[0]


def test_recompile_sweep_stops_compiling_at_the_limit():
    limit_name = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") \
        else "cache_size_limit"
    old = fusion.recompile_limit()
    setattr(torch._dynamo.config, limit_name, 3)
    try:
        assert fusion.recompile_limit() == 3
        inputs = [(torch.randn(n),) for n in range(2, 8)]
        compiled, steps = fusion.recompile_sweep(lambda x: (x * 2).relu(), inputs, dynamic=False)
        assert [s.new_graph for s in steps] == [True] * 3 + [False] * 3
        torch.testing.assert_close(compiled(inputs[-1][0]), (inputs[-1][0] * 2).relu())
        _, dynamic_steps = fusion.recompile_sweep(lambda x: (x * 2).relu(), inputs, dynamic=None)
        assert dynamic_steps[-1].compiles_so_far <= 2  # one static graph, then one generic one
    finally:
        setattr(torch._dynamo.config, limit_name, old)
        torch._dynamo.reset()


# The shapes of Inductor's output code: a Triton kernel (GPU) and a C++ kernel (CPU, torch 2.13).
TRIPLE = "'" * 3
TRITON_OUTPUT = (
    f"triton_poi_fused_add_mul_silu_0 = async_compile.triton('triton_poi_fused_add_mul_silu_0', {TRIPLE}\n"
    "import triton\n@triton.jit\ndef triton_poi_fused_add_mul_silu_0(in_ptr0, out_ptr0):\n"
    f"    pass\n{TRIPLE}, device_str='cuda')\n")
CPP_OUTPUT = (
    f"cpp_fused_add_mul_silu_0 = async_compile.cpp_pybinding(['const float*', 'float*'], r{TRIPLE}\n"
    '#include <torch/csrc/inductor/cpp_prefix.h>\nextern "C"  void  kernel(const float* in_ptr0)\n{}\n'
    f"{TRIPLE})\n\nasync_compile.wait(globals())\n")


def test_inductor_kernel_names_are_read_from_output_code():
    triton = fusion.inductor_kernels(TRITON_OUTPUT)
    assert list(triton) == ["triton_poi_fused_add_mul_silu_0"]
    assert "@triton.jit" in triton["triton_poi_fused_add_mul_silu_0"]
    cpp = fusion.inductor_kernels(CPP_OUTPUT)
    assert list(cpp) == ["cpp_fused_add_mul_silu_0"]
    assert cpp["cpp_fused_add_mul_silu_0"].startswith("#include")
    assert fusion.inductor_kernels(TRITON_OUTPUT + CPP_OUTPUT).keys() == {*triton, *cpp}
    assert fusion.excerpt("a\n\nb\nc\nd", lines=2) == "a\nb\n    ... (2 more lines)"


def test_calls_to_pay_back():
    assert fusion.calls_to_pay_back(10.0, 2e-3, 1e-3) == pytest.approx(10_000)
    assert fusion.calls_to_pay_back(10.0, 1e-3, 2e-3) == float("inf")
    with pytest.raises(ValueError):
        fusion.calls_to_pay_back(1.0, 0.0, 1e-3)


def test_recompile_sweep_shows_the_default_even_after_a_process_turned_automatic_dynamic_off():
    """Chapter 08's ladder once set automatic_dynamic_shapes = False process-wide (it now patches it
    only while a rung compiles); a later sweep in the same process (one pytest worker) compiled
    every shape. Whatever a process set, the sweep runs at the default."""
    old = torch._dynamo.config.automatic_dynamic_shapes
    torch._dynamo.config.automatic_dynamic_shapes = False
    try:
        inputs = [(torch.randn(n),) for n in range(2, 8)]
        _, steps = fusion.recompile_sweep(lambda x: (x * 2).relu(), inputs, dynamic=None)
        assert steps[-1].compiles_so_far <= 2
        assert torch._dynamo.config.automatic_dynamic_shapes is False  # restored as it was
    finally:
        torch._dynamo.config.automatic_dynamic_shapes = old
        torch._dynamo.reset()
