"""Claims whose chapters are not written yet: listed so the ledger shows them as 'not yet
tested'. A chapter module (chNN.py) that defines the same id replaces the entry here."""

from __future__ import annotations

from labkit.claims.core import SEED_PIPELINE, SEED_STRIDES, Claim

CLAIMS = [
    Claim("C13", "05", SEED_PIPELINE, "4.3 Pre-allocated pinned memory and a zero-copy DMA path",
          "pin_memory_device='cuda:0' gives a zero-copy DMA path (no explicit host-to-device copy).",
          section_zh="4.3 Pinned memory预分配与零拷贝DMA通道绑定"),
    Claim("C23", "05", SEED_PIPELINE, "4.3 Pre-allocated pinned memory (performance comparison)",
          "Host-to-device bandwidth is 4.2 GB/s pageable, 12.8 pinned, 18.6 with pin_memory_device.",
          section_zh="4.3 Pinned memory预分配与零拷贝DMA通道绑定 (性能对比)"),
    Claim("C14", "06", SEED_STRIDES, "4.3 Layout drift in distributed training",
          "DDP + channels_last + AMP 'layout drift' breaks all-reduce alignment; a full backward "
          "hook calling grad.contiguous() fixes it.", section_zh="4.3 分布式训练中的layout漂移问题"),
    Claim("C15", "07", SEED_STRIDES, "4.4 Traps of deploying JIT scripts",
          "Tracing loses contiguity, so TensorRT falls back to the CPU with +320% latency.",
          section_zh="4.4 JIT脚本化部署陷阱"),
    Claim("C17", "04", SEED_PIPELINE, "2.1 How TorchScript and TorchDynamo differ in their IR",
          "Dynamo keeps Python control flow such as x.sum() > 0 in one graph.",
          section_zh="2.1 TorchScript与TorchDynamo的底层IR差异"),
    Claim("C18", "04", SEED_PIPELINE, "2.3 CUDA Graphs and removing launch latency",
          "CUDA Graph replay launches in under 0.5 us against 5 to 8 us eager.",
          section_zh="2.3 CUDA Graph集成与异步启动延迟消除"),
    Claim("C19", "04", SEED_PIPELINE, "2.4 Custom Triton kernels (performance comparison)",
          "A Triton add kernel reaches 28.9 TFLOPS against 12.4 for PyTorch.",
          section_zh="2.4 自定义Triton内核 (性能对比)"),
    Claim("C20", "04", SEED_PIPELINE, "3.2 Fusing ResNet-50's Conv-BN-ReLU by hand (folding rules)",
          "Conv-BN folding: w' = gamma/sigma * w, b' = gamma/sigma * b + beta - gamma*mu/sigma.",
          section_zh="3.2 手动融合ResNet50中Conv-BN-ReLU三元组 (参数折叠规则)"),
    Claim("C21", "04", SEED_PIPELINE, "3.3 Gradient scaling in mixed-precision fusion",
          "GradScaler starts at 65536, grows every 2000 steps, backs off by 0.5.",
          section_zh="3.3 混合精度融合中的梯度缩放"),
    Claim("C24", "08", SEED_PIPELINE, "Chapter 5: attributing the 4.8x end-to-end throughput gain",
          "Seven steps raise ResNet-50 inference throughput 4.8x.",
          section_zh="第五章 端到端吞吐提升4.8倍的归因分析 (标题: 7步实现ResNet50推理吞吐提升4.8倍)"),
]
