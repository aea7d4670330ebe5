"""Chapter 07, export and TensorRT traps: C15.

The seed's sentence is a chain: tracing loses the tensor's contiguity, *so* TensorRT
misjudges its input and falls back to the CPU, *and* that costs +320% latency. Each link is
judged from what can be measured or read:

- what torch.jit.trace records (the input's strides in the graph type; an explicit
  `contiguous()` call kept or dropped) and whether the traced module matches eager on
  NCHW, channels_last and transposed inputs -- measured on any machine;
- whether a TensorRT engine has a CPU fallback at all, and where the parts Torch-TensorRT
  cannot convert run -- measured where Torch-TensorRT is installed (a GPU), otherwise read
  from the documentation below (cited), and the verdict says which.

Where the TensorRT latency ratio decides, `decisions_c15` declares it, so `Claim.judge`
applies the trust rule to it (flags of the TensorRT timings, named 'TensorRT: ...'); the
traced model's own ratio ('trace: ...') is shown, never judged.
"""

from __future__ import annotations

from collections.abc import Mapping

from labkit.claims.core import (
    CONFIRMED,
    DEPENDS,
    NOISE,
    REFUTED,
    SEED_STRIDES,
    Claim,
    ClaimError,
    band,
)
from labkit.claims.trust import Decision, Decisions
from labkit.core import discovery

CHAPTER = discovery.chapter_key(__name__)

TENSORRT_CASE = "TensorRT"  # flags of the TensorRT comparison: 'TensorRT: transposed input'
TRACE_CASE = "trace"  # flags of the traced model's comparison (shown, not judged)
SEED_LATENCY_RATIO = 4.2  # the seed's "+320%": 4.2x the latency
COSTLY_LATENCY_RATIO = 2.6  # "falls back with a large cost" if slower by at least half the seed's +320%

# What the documentation says, for runs where TensorRT is not installed (read, not measured).
DOCUMENTED = {
    "tensorrt_engine": "A TensorRT engine runs its layers on the GPU (or on a DLA with GPU fallback: "
                       "BuilderFlag kGPU_FALLBACK moves DLA layers to the GPU, never to the CPU). "
                       "Source: NVIDIA TensorRT docs, 'DLA Runtime Configuration: GPU Fallback Mode', "
                       "docs.nvidia.com/deeplearning/tensorrt/latest/inference-library/dla-runtime-configuration.html",
    "torch_tensorrt": "Torch-TensorRT partitions the graph: ops without a converter (or listed in "
                      "torch_executed_ops) run in PyTorch eager between TensorRT engines, on the tensors' "
                      "device. Source: Torch-TensorRT docs, 'Handling Unsupported Operators' and "
                      "'Partitioning Phase', docs.pytorch.org/TensorRT/user_guide/compilation/unsupported_ops.html",
    "torch_tensorrt_inputs": "Its runtime makes each input contiguous before binding it to the engine "
                             "(pytorch/TensorRT core/runtime/execute_engine.cpp: "
                             "inputs[i].view(shape).contiguous()).",
    "ort_tensorrt_provider": "ONNX Runtime's TensorRT provider sends the subgraphs TensorRT supports to it "
                             "and leaves the rest to the next providers in the list (CUDA, then CPU): a "
                             "CPU fallback there is ONNX Runtime's, not TensorRT's. Source: onnxruntime "
                             "docs, 'TensorRT Execution Provider'.",
}


def trace_lost_contiguity(ev: Mapping) -> tuple[bool, str]:
    """Whether tracing lost anything about contiguity, and the sentence that says what it kept."""
    records = bool(ev["trace_records_strides"])
    keeps = bool(ev["trace_keeps_contiguous"])
    outcomes = dict(ev["trace_outcomes"])
    wrong = sorted(k for k, v in outcomes.items() if v != "correct")
    text = (f"torch.jit.trace {'records' if records else 'does not record'} the example's strides in "
            f"its graph, {'keeps' if keeps else 'drops'} an explicit contiguous(), and on "
            f"{', '.join(outcomes)} inputs is "
            + ("correct on all" if not wrong else f"not correct on {', '.join(wrong)}"))
    return (not records) or (not keeps) or bool(wrong), text


def seed_example_text(ev: Mapping) -> str:
    """What the seed's own example input did, when the run fed it (optional evidence)."""
    seed = ev.get("seed_example_as_written")
    if not seed:
        return ""
    shape = tuple(seed["shape"])
    return (f"; the seed's own example {seed['expression']} is a {shape} tensor: as written it "
            + (f"cannot feed the model (raised {seed['error']})" if seed["outcome"] == "raised"
               else f"ran, giving {tuple(seed['output_shape'])}"))


def check_c15(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    if not ev["trace_outcomes"]:
        raise ClaimError("C15: no traced module was fed any input layout")
    lost, text = trace_lost_contiguity(ev)
    text += seed_example_text(ev)
    if not ev["tensorrt_ran"]:
        read = ("; the TensorRT half was read from documentation, not measured (TensorRT is not "
                "installed here): it describes no CPU fallback (DLA layers fall back to the GPU; "
                "Torch-TensorRT runs unconverted ops in PyTorch on the same device)")
        if not lost:
            return REFUTED, text + ": nothing about contiguity was lost" + read, ""
        return DEPENDS, text + read, "a TensorRT run: tracing lost contiguity here, the fallback is unmeasured"
    devices = list(ev["tensorrt_fallback_devices"])
    on_cpu = any(str(d).startswith("cpu") for d in devices)
    ratio = ev.get("tensorrt_transposed_ratio")
    text += (f"; Torch-TensorRT ran, its PyTorch-run parts ran on {', '.join(devices) or 'no device (none)'}")
    if ratio is None:
        text += "; no latency measured (the engine was not correct on both layouts)"
        return REFUTED, text, ""
    where = band(float(ratio), ev.get("tensorrt_transposed_ratio_iqr"), th["costly_latency_ratio"])
    text += f", transposed/contiguous input latency {float(ratio):.2f}x"
    if lost and on_cpu and where == "above":
        return CONFIRMED, text, ""
    if lost and on_cpu and where == "noise":
        return DEPENDS, text, NOISE
    return REFUTED, text, ""


def decisions_c15(ev: Mapping, th: Mapping) -> Decisions:
    """The TensorRT transposed/contiguous latency, where it decides: tracing lost contiguity
    and the fallback ran on the CPU. Otherwise what was read or recorded decides alone."""
    ratio = ev.get("tensorrt_transposed_ratio")
    if not ev["tensorrt_ran"] or ratio is None or not ev["trace_outcomes"]:
        return Decisions(not_judged=(TRACE_CASE,))
    lost, _ = trace_lost_contiguity(ev)
    on_cpu = any(str(d).startswith("cpu") for d in ev["tensorrt_fallback_devices"])
    if not (lost and on_cpu):
        return Decisions(not_judged=(TRACE_CASE,))
    return Decisions((Decision(TENSORRT_CASE, float(ratio), ev.get("tensorrt_transposed_ratio_iqr"),
                               th["costly_latency_ratio"]),), (TRACE_CASE,))


C15 = Claim(
    "C15", CHAPTER, SEED_STRIDES, "4.4 Traps of deploying JIT scripts",
    "Tracing loses contiguity, so TensorRT falls back to the CPU with +320% latency "
    "(trace + .contiguous(): +0.3%; use torch.jit.script to keep the runtime contiguity).",
    "torch.jit.trace loses contiguity (no strides recorded, an explicit contiguous() dropped, or a "
    "wrong answer on some input layout) AND a measured TensorRT run puts the fallback on the CPU "
    f"with transposed/contiguous latency > {COSTLY_LATENCY_RATIO}x",
    "tracing keeps the strides and the contiguous() call and matches eager on every layout; or a "
    "measured TensorRT run falls back on the GPU or costs little; 'depends' when tracing loses "
    "contiguity but no TensorRT run could measure the rest",
    ("trace_records_strides", "trace_keeps_contiguous", "trace_outcomes", "tensorrt_ran",
     "tensorrt_fallback_devices", "tensorrt_transposed_ratio"),
    thresholds={"costly_latency_ratio": COSTLY_LATENCY_RATIO, "seed_latency_ratio": SEED_LATENCY_RATIO},
    check=check_c15, timing_based=True, decisions=decisions_c15, section_zh="4.4 JIT脚本化部署陷阱",
    seed_setting="a traced model deployed with TensorRT on a GPU")

CLAIMS = [C15]
