"""Chapter 07, export and TensorRT traps: C15a, C15b, C15c, C15d.

The seed's sentence (section 4.4) is a chain of four statements, each judged on its own:

- C15a: torch.jit.trace loses the input's contiguity (its "contiguous flag"). Measured on any
  machine, in both of the statement's cases: traced with the seed's kind of example (a
  non-contiguous view; the seed's own expression has W channels, so its nearest form
  x.transpose(2, 3)) and with a contiguous NCHW example ("even when the memory is
  contiguous"): what each trace records (the input's strides in the graph type; an explicit
  `contiguous()` call kept or dropped) and whether it matches eager on NCHW, channels_last and
  transposed inputs.
- C15b: TensorRT therefore misjudges the input as non-contiguous memory. An engine is bound by
  an address and a shape, no strides (read from the documentation, `DOCUMENTED`). Where
  Torch-TensorRT runs, its answers on the three layouts are measured; elsewhere the chapter's
  own engine bound the same way, ONNX Runtime's IOBinding, is (evidence 'pointer_binding'):
  it reads the contiguous input right and channels_last wrong, the reverse of the seed's trap,
  and the reason says so. The form says which part was measured and which read.
- C15c: it falls back to the CPU. Measured where Torch-TensorRT runs (the device its
  PyTorch-run parts ran on); otherwise refuted as stated, from documentation, not measured: the
  seed's trigger is the input's layout, and no documented path turns a layout into a CPU
  fallback (DLA layers fall back to the GPU; Torch-TensorRT runs what it cannot convert on the
  tensors' device and makes each input contiguous before binding it). The one documented CPU
  fallback, ONNX Runtime's provider list, is ONNX Runtime's and follows operator support: kept
  in the reason as context, not as the seed's trigger (review 2026-12-04j item 4).
- C15d: +320% latency. A timing: measured only through a TensorRT engine (transposed against
  contiguous input), declared in `decisions_c15d` so `Claim.judge` applies the trust rule
  (flags of the TensorRT timings, named 'TensorRT: ...'); the traced model's own ratio
  ('trace: ...') is shown, never judged. Without TensorRT it is not measured ('depends').

Not judged: the seed's next sentence, "TensorRT 无法启用高效卷积 kernel" (TensorRT cannot enable its
efficient convolution kernels), `NOT_JUDGED` (review 2026-12-04k item 10). It is the seed's cause
of C15d's +320%, not a further outcome; which kernel an engine chose is in TensorRT's own layer
report, and TensorRT cannot be installed on the course's machines (DESIGN's gotchas), while a
latency (C15d) names no kernel. C15d judges its consequence; the card says so, folded.

Recorded verdicts under the retired id C15 are left out of the ledger and the tables
(`labkit.claims.tables.saved_verdicts`).
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
    "tensorrt_input_binding": "An engine's input is bound by address (IExecutionContext::setTensorAddress) "
                              "with a shape (setInputShape), in the format fixed when the engine was built "
                              "(TensorFormat::kLINEAR unless the network's allowed formats say otherwise): no "
                              "strides and no contiguity flag reach the engine at run time. Source: NVIDIA "
                              "TensorRT docs, 'I/O Formats' and the IExecutionContext API reference.",
    "torch_tensorrt_inputs": "Its runtime makes each input contiguous before binding it to the engine "
                             "(pytorch/TensorRT core/runtime/execute_engine.cpp: "
                             "inputs[i].view(shape).contiguous()).",
    "ort_tensorrt_provider": "ONNX Runtime's TensorRT provider sends the subgraphs TensorRT supports to it "
                             "and leaves the rest to the next providers in the list (CUDA, then CPU): a "
                             "CPU fallback there is ONNX Runtime's, not TensorRT's. Source: onnxruntime "
                             "docs, 'TensorRT Execution Provider'.",
}


CONTIGUOUS_EXAMPLE = "a contiguous NCHW example"


def _form_finding(records: bool, keeps: bool, outcomes: Mapping[str, str]) -> tuple[bool, str]:
    """Whether one traced form lost anything about contiguity, and what it kept, in words."""
    wrong = sorted(k for k, v in outcomes.items() if v != "correct")
    text = (f"torch.jit.trace {'records' if records else 'does not record'} the example's strides, "
            f"{'keeps' if keeps else 'drops'} an explicit contiguous(), and is "
            + (f"correct on {', '.join(outcomes)} inputs" if not wrong else
               f"not correct on {', '.join(f'{k} ({outcomes[k]})' for k in wrong)}"))
    return (not records) or (not keeps) or bool(wrong), text


def trace_lost_contiguity(ev: Mapping) -> tuple[bool, str]:
    """Whether tracing with the contiguous NCHW example lost anything about contiguity, and the
    sentence that says what it kept."""
    lost, finding = _form_finding(bool(ev["trace_records_strides"]), bool(ev["trace_keeps_contiguous"]),
                                  dict(ev["trace_outcomes"]))
    return lost, f"traced with {CONTIGUOUS_EXAMPLE}, {finding}"


def _noncontiguous_example(form: Mapping) -> str:
    return f"{form['expression']} (strides {tuple(form['stride'])}: not contiguous, the seed's kind of example)"


def noncontiguous_lost(ev: Mapping) -> tuple[bool, str] | None:
    """The same for the trace made with the seed's kind of example, a non-contiguous view
    (`export_traps.trace_noncontiguous_example`); None where the run did not make it (an older record)."""
    form = ev.get("trace_noncontiguous_example")
    if not form:
        return None
    if not form["outcomes"]:
        raise ClaimError("C15a: the trace made with a non-contiguous example was fed no input layout")
    lost, finding = _form_finding(list(form["recorded_stride"]) == list(form["stride"]),
                                  bool(form["keeps_contiguous"]), dict(form["outcomes"]))
    return lost, f"traced with {_noncontiguous_example(form)}, {finding}"


def _both_forms(ev: Mapping) -> tuple[bool, str]:
    """Both traced forms in one sentence where they found the same, else one sentence each
    (the seed's kind of example first)."""
    contiguous = trace_lost_contiguity(ev)
    other = noncontiguous_lost(ev)
    if other is None:
        return contiguous
    same = other[1].split(", torch.jit.trace ", 1)[1] == contiguous[1].split(", torch.jit.trace ", 1)[1]
    if same:
        example = _noncontiguous_example(ev["trace_noncontiguous_example"])
        finding = contiguous[1].split(", torch.jit.trace ", 1)[1].replace("the example's", "each example's")
        return contiguous[0], f"traced with {example} and with {CONTIGUOUS_EXAMPLE}, torch.jit.trace {finding}"
    return other[0] or contiguous[0], f"{other[1]}; {contiguous[1]}"


def seed_example_text(ev: Mapping) -> str:
    """What the seed's own example input did, when the run fed it (optional evidence)."""
    seed = ev.get("seed_example_as_written")
    if not seed:
        return ""
    shape = tuple(seed["shape"])
    nearest = ev.get("trace_noncontiguous_example")
    judged = f"its nearest form, {nearest['expression']}, was judged" if nearest else "the nearest form was judged"
    if seed["outcome"] == "raised":
        return (f". The seed's own example {seed['expression']} is a {shape} tensor: as written it cannot "
                f"feed the model (raised {seed['error']}), so {judged}")
    return (f". The seed's own example {seed['expression']} is a {shape} tensor: as written it ran, "
            f"giving {tuple(seed['output_shape'])}")


def _forced_devices(ev: Mapping) -> str:
    return ", ".join(map(str, ev["tensorrt_fallback_devices"])) or "no device (none)"


# Why a "may" can be refuted, not only unobserved (review 2026-12-04j item 10): the trace has no
# contiguity flag of its own to ignore. It keeps the example's strides as a type and replays ATen
# operators, and each operator reads the strides of the tensor it is handed at run time; the
# layouts and examples fed check that on this model. Another model could still lose something
# (an explicit contiguous() dropped would confirm it), which is why the reason names its scope.
MAY_REFUTED = ("; a 'may' refuted, not merely unseen: the trace holds no contiguity flag to ignore (it keeps "
               "the example's strides as a type and replays ATen operators, which read the strides of the "
               "tensor they are handed), and the layouts fed check that on this model")


def check_c15a(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    """Both cases of the statement where the run traced both: with the seed's kind of example
    (a non-contiguous view) and with a contiguous one ('even when the memory is contiguous');
    either losing anything about contiguity confirms it."""
    if not ev["trace_outcomes"]:
        raise ClaimError("C15a: no traced module was fed any input layout")
    lost, text = _both_forms(ev)
    text = text[0].upper() + text[1:]
    if lost:
        return CONFIRMED, text + seed_example_text(ev), ""
    either = " in either form" if ev.get("trace_noncontiguous_example") else ""
    return REFUTED, text + f": nothing about contiguity was lost{either}" + MAY_REFUTED + seed_example_text(ev), ""


def pointer_engine(outcomes: Mapping[str, str]) -> tuple[str, str]:
    """An engine bound by address and shape, judged on the layouts it was fed: 'confirmed' only if
    it misread the contiguous input (the seed's trap); a non-contiguous input read as if it were
    contiguous is the reverse trap, said in the reason, and refutes the seed's direction."""
    if not outcomes:
        raise ClaimError("C15b: the engine was fed no input layout")
    wrong = [k for k, v in outcomes.items() if v != "correct"]
    by_kind: dict[str, list[str]] = {}
    for layout in wrong:
        by_kind.setdefault(outcomes[layout], []).append(layout)
    misread = "; ".join(f"{', '.join(layouts)} {kind}" for kind, layouts in by_kind.items())
    if CONTIGUOUS_LAYOUT in wrong:
        return CONFIRMED, f"it misread the contiguous {CONTIGUOUS_LAYOUT} input ({misread})"
    if not wrong:
        return REFUTED, f"it gave eager's answer on {', '.join(outcomes)} (each layout read right)"
    reverse = (": the trap runs the other way, a non-contiguous input read as if it were contiguous"
               if "silently wrong" in by_kind else "")
    return REFUTED, f"it read the contiguous {CONTIGUOUS_LAYOUT} input right and {misread}{reverse}"


def check_c15b(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    read = ("an engine is bound by an address and a shape, no strides (read from documentation, "
            "not measured)")
    if ev["tensorrt_ran"]:
        outcome, text = pointer_engine(dict(ev["tensorrt_outcomes"]))
        return outcome, f"Measured through Torch-TensorRT: {text}; {read}", ""
    skipped = f"TensorRT not run here ({ev.get('tensorrt_skipped_because') or 'not installed'})"
    binding = ev.get("pointer_binding")
    if binding:  # measured: an engine bound the way the documentation says a TensorRT engine is
        outcome, text = pointer_engine(dict(binding["outcomes"]))
        return outcome, (f"Measured on {binding['path']}, bound by address and shape as a TensorRT engine is: "
                         f"{text}. {skipped}: that its engine is bound so is read from documentation, not "
                         "measured, and Torch-TensorRT makes each input contiguous first (documentation)"), ""
    return REFUTED, (f"{skipped}: {read}, and Torch-TensorRT makes each input contiguous first: no contiguity "
                     "flag to misjudge"), ""


def check_c15c(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    if not ev["tensorrt_ran"]:
        return REFUTED, (
            "Refuted as stated (read from documentation, not measured; TensorRT not run here): the seed's "
            "trigger is the input's layout, and no documented path turns a layout into a CPU fallback: "
            "DLA layers fall back to the GPU, never the CPU; Torch-TensorRT runs what it cannot convert "
            "in PyTorch on the tensors' device, and makes each input contiguous before binding it. "
            "Context: ONNX Runtime's provider list (TensorRT, then CUDA, then CPU) does fall back to "
            "the CPU, for operators the providers before it do not take: ONNX Runtime's fallback, "
            "following operator support, not TensorRT's and not the input's layout"), ""
    devices = list(ev["tensorrt_fallback_devices"])
    text = f"Torch-TensorRT ran; the part forced to run in PyTorch ran on {_forced_devices(ev)}"
    if not devices:
        return DEPENDS, text, "a forced PyTorch-run part: none ran, so no fallback was seen"
    on_cpu = any(str(d).startswith("cpu") for d in devices)
    return (CONFIRMED if on_cpu else REFUTED), text, ""


def check_c15d(ev: Mapping, th: Mapping) -> tuple[str, str, str]:
    traced = ev.get("trace_transposed_ratio")
    shown = (f"; the traced model alone: {float(traced):.2f}x on the transposed view "
             "(shown, not judged)") if traced else ""
    if not ev["tensorrt_ran"]:
        return DEPENDS, "TensorRT not run here: no engine latency measured" + shown, (
            "a TensorRT run: the seed's +320% is its engine's latency")
    ratio = ev.get("tensorrt_transposed_ratio")
    if ratio is None:
        return DEPENDS, "Torch-TensorRT ran but was not correct on both layouts, so nothing was timed" + shown, (
            "an engine correct on both the contiguous and the transposed input")
    where = band(float(ratio), ev.get("tensorrt_transposed_ratio_iqr"), th["costly_latency_ratio"])
    text = (f"through Torch-TensorRT the transposed input took {float(ratio):.2f}x the contiguous "
            f"input's latency (the seed: {th['seed_latency_ratio']:.1f}x; costly above "
            f"{th['costly_latency_ratio']}x)") + shown
    if where == "above":
        return CONFIRMED, text, ""
    if where == "noise":
        return DEPENDS, text, NOISE
    return REFUTED, text, ""


def decisions_c15d(ev: Mapping, th: Mapping) -> Decisions:
    """The TensorRT transposed/contiguous latency, where one was measured; the traced model's
    own ratio is shown, never judged."""
    ratio = ev.get("tensorrt_transposed_ratio")
    if not ev["tensorrt_ran"] or ratio is None:
        return Decisions(not_judged=(TRACE_CASE,))
    return Decisions((Decision(TENSORRT_CASE, float(ratio), ev.get("tensorrt_transposed_ratio_iqr"),
                               th["costly_latency_ratio"]),), (TRACE_CASE,))


SECTION, SECTION_ZH = "4.4 Traps of deploying JIT scripts", "4.4 JIT脚本化部署陷阱"
SETTING = "a traced model deployed with TensorRT on a GPU"
TENSORRT_KEYS = ("tensorrt_ran",)
CONTIGUOUS_LAYOUT = "NCHW"  # export_audit.NCHW: the contiguous input

C15a = Claim(
    "C15a", CHAPTER, SEED_STRIDES, SECTION,
    "Without an explicit .contiguous(), torch.jit.trace may ignore the input's contiguous flag, even "
    "when the memory underneath is contiguous: the trace does not keep the original memory semantics.",
    "the trace records no strides, drops an explicit contiguous(), or gives a wrong answer on some "
    "input layout",
    "the trace records the example's strides, keeps contiguous(), and matches eager on NCHW, "
    "channels_last and transposed inputs",
    ("trace_records_strides", "trace_keeps_contiguous", "trace_outcomes"),
    check=check_c15a, deterministic=True, section_zh=SECTION_ZH, seed_setting=SETTING,
    seed_text="若输入张量未显式调用.contiguous()即使底层内存布局实际连续torch.jit.trace 也可能忽略其 contiguous 标记")

C15b = Claim(
    "C15b", CHAPTER, SEED_STRIDES, SECTION,
    "As a result, the TensorRT engine misjudges the input as non-contiguous memory.",
    "a measured engine bound by address and shape (Torch-TensorRT, else ONNX Runtime's IOBinding) "
    "misreads the contiguous NCHW input",
    "it reads that input right (reading a non-contiguous one as contiguous is the reverse trap); "
    "TensorRT's binding, no strides, is read from documentation where TensorRT does not run",
    TENSORRT_KEYS,
    check=check_c15b, section_zh=SECTION_ZH, seed_setting=SETTING,
    seed_text="导致 TensorRT 引擎误判为非连续内存")

C15c = Claim(
    "C15c", CHAPTER, SEED_STRIDES, SECTION,
    "This triggers a fallback path that drops inference to the CPU.",
    "a measured Torch-TensorRT run puts the part it cannot run in TensorRT on the CPU",
    "the part runs on the GPU (measured); without TensorRT, from documentation: no documented "
    "path turns an input's layout into a CPU fallback (the one documented CPU fallback, ONNX "
    "Runtime's provider list, follows operator support)",
    ("tensorrt_ran", "tensorrt_fallback_devices"),
    check=check_c15c, section_zh=SECTION_ZH, seed_setting=SETTING,
    seed_text="触发 fallback 路径降频至 CPU 推理")

C15d = Claim(
    "C15d", CHAPTER, SEED_STRIDES, SECTION + " (comparison table)",
    "Trace without contiguous(): dropped to the CPU, +320% inference latency "
    "(trace + .contiguous(): +0.3%).",
    f"through a TensorRT engine the transposed input takes over {COSTLY_LATENCY_RATIO}x the contiguous "
    "input's latency (half the seed's +320%), spread included",
    f"{COSTLY_LATENCY_RATIO}x or less, spread included; 'depends' where no engine was timed",
    ("tensorrt_ran", "tensorrt_transposed_ratio"),
    thresholds={"costly_latency_ratio": COSTLY_LATENCY_RATIO, "seed_latency_ratio": SEED_LATENCY_RATIO},
    check=check_c15d, timing_based=True, decisions=decisions_c15d, section_zh=SECTION_ZH,
    seed_setting=SETTING,
    seed_text="trace .contiguous()✅ 完全兼容0.3%trace 无 contiguous⚠️ 降频至 CPU320%")

CLAIMS = [C15a, C15b, C15c, C15d]

# The seed's sentence after its code that no C15 letter judges, and why (the module docstring).
NOT_JUDGED = {
    "seed_text": "TensorRT 无法启用高效卷积 kernel",
    "says": "TensorRT cannot enable its efficient convolution kernels",
    "why": ("the seed's cause of C15d's +320%, not a further outcome. Which convolution kernel an "
            "engine chose is in TensorRT's own layer report (each layer's tactic), and TensorRT cannot "
            "be installed on this course's machines; a latency names no kernel. C15d judges the "
            "consequence, the latency through an engine; on a machine with TensorRT, its layer report "
            "would be the evidence"),
}
C15_IDS = tuple(c.id for c in CLAIMS)


def form_of(claim_id: str, ev: Mapping) -> str:
    """The form each of C15a-d was judged in, from what ran: measured, or read from
    documentation (the ledger counts those apart), or not measured."""
    device, version = ev.get("device", "this machine"), ev.get("torch", "")
    if claim_id == "C15a":
        nearest = ev.get("trace_noncontiguous_example")
        if nearest:
            return (f"measured here: traced with {nearest['expression']} and with "
                    f"{CONTIGUOUS_EXAMPLE}, fed three layouts (torch {version}, {device})")
        return (f"nearest form, measured here: traced with {CONTIGUOUS_EXAMPLE}, fed three layouts "
                f"(torch {version}, {device})")
    if claim_id not in C15_IDS:
        raise ClaimError(f"{claim_id!r} is none of chapter 07's claims {C15_IDS}")
    if ev["tensorrt_ran"]:
        if claim_id == "C15b":
            return (f"engine answers measured through Torch-TensorRT on {device} (its input "
                    "binding as documented)")
        return f"measured through Torch-TensorRT on {device}"
    if claim_id == "C15d":
        return "not measured: TensorRT not installed"
    binding = ev.get("pointer_binding")
    if claim_id == "C15b" and binding:
        return (f"analogue measured on {binding_place(binding, str(device))}; TensorRT's binding read from "
                "documentation")
    return "read from documentation, not measured (TensorRT not installed)"


def binding_place(binding: Mapping, device: str) -> str:
    """Where the IOBinding analogue ran: the chapter's device, unless ONNX Runtime ran it on its
    CPU provider while the chapter ran on a GPU (a CPU build of onnxruntime, as on the reference
    H200: export_audit binds host memory then), which a GPU page must not call the GPU."""
    provider = str(binding.get("path", "")).split(",")[0].removeprefix("ONNX Runtime").strip()
    if provider == "CPU" and not device.startswith("cpu"):
        return f"ONNX Runtime's CPU provider (host memory; the chapter on {device})"
    return f"{device} (ONNX Runtime's IOBinding)"
