"""A GPU call fed host tensors it copies in (chapter 05's pageable batch into a step on the GPU)
is timed on the GPU; a pure host function asked onto the GPU is still refused."""

import pytest
import torch

from labkit.measure import conditions

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@gpu
def test_a_host_batch_copied_to_the_gpu_is_timed_there():
    host = torch.ones(1 << 16)
    assert conditions.resolve_device("cuda", lambda: host.to("cuda"), ()).type == "cuda"


@gpu
def test_a_host_only_function_asked_onto_the_gpu_is_refused():
    host = torch.ones(1 << 16)
    with pytest.raises(ValueError, match="uses tensors on cpu"):
        conditions.resolve_device("cuda", lambda: host * 2, ())


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU-only case")
def test_without_a_gpu_a_host_tensor_asked_onto_cuda_is_refused_with_a_message():
    host = torch.ones(1 << 16)
    with pytest.raises(ValueError):
        conditions.resolve_device("cuda", lambda: host.to("cuda"), ())
