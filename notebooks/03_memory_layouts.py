# ---
# jupyter:
#   jupytext:
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 03 Memory layouts: NCHW against NHWC (channels_last)
#
# An image batch is indexed `[N, C, H, W]` whatever its layout. `channels_last` keeps that
# logical order but stores the data N, H, W, C: the channels of one pixel sit next to each
# other. It is a stride pattern, not a new shape. This chapter follows the layout through a
# real ResNet-50 and measures what it is worth, testing three claims: C22 from "An industrial
# tensor pipeline optimisation handbook" (article B, §4.1), and C7b (must the input be converted
# too?) and C7a (is it faster?) from "A 300% latency spike from broken shape alignment" (article
# A, §2.4; C7 bundled the two). They are GPU claims (cuBLAS; an A100 in fp16), though C7a's table
# also has an ARM CPU row: on a CPU each gets a CPU form, labelled.

# %%
import os  # in Google Colab only: fetch the course and install labkit (elsewhere this does nothing)

if "COLAB_RELEASE_TAG" in os.environ:
    status = os.system("git clone -q --depth 1 https://github.com/tensor-layout-lab/tensor-layout-lab /content/tensor-layout-lab; pip install -q /content/tensor-layout-lab")
    assert status == 0, "installing labkit failed: the lines above say why"

# %%
import torch

from labkit import session

chapter = session.open("03_memory_layouts")
# The chapter object is the door: the chapter's own cases (labkit/chapters/ch03_memory_layouts/
# cases.py) and the course's instruments are chapter.lab.<name>.
cases, copies = chapter.lab.cases, chapter.lab.copies
pace_start = chapter.only_on("gpu", lambda: chapter.record("host_pace_start", cases.host_pace(chapter.device, "start")))

# %% [markdown]
# Every timing below is shown as a share of this machine's ceilings (measured once, then
# cached). A timing the harness flags is measured again; if it is still flagged, it holds a
# verdict back only when it could carry the deciding ratio across the threshold. That is the
# trust rule, printed here once; C7a's card links back to it.

# %%
chapter.rules()

# %%
ceiling = chapter.lab.ceilings.measure()
print(f"this machine's ceilings: copy {ceiling.copy_gbps:.1f} GB/s (read + write); matmul TFLOP/s: "
      + ", ".join(f"{math} {rate:.3g}" for math, rate in ceiling.matmul_tflops.items()))

# %% [markdown]
# ## Same shape, other strides
#
# A 1x3x2x2 "image" (3 channels, 2x2 pixels). In `channels_last` the channel stride is 1.

# %% tags=["nbval-check-output"]
img = torch.arange(12, dtype=torch.float32).reshape(1, 3, 2, 2)
img_cl = img.to(memory_format=torch.channels_last)
print("NCHW          shape", tuple(img.shape), "stride", img.stride())
print("channels_last shape", tuple(img_cl.shape), "stride", img_cl.stride())
print("storage order NCHW:         ", img.flatten().tolist())
print("storage order channels_last:", img_cl.permute(0, 2, 3, 1).flatten().tolist())

# %%
cases.grid_and_strip(img_cl, highlight=(0, 1, 0, 1))

# %%
chapter.lab.widgets.AddressGrid(img_cl, title="a 1x3x2x2 image in channels_last")

# %% [markdown]
# ## Converting a model
#
# `model.to(memory_format=torch.channels_last)` restrides every 4-D parameter (the
# convolution weights) and leaves the rest alone. The ResNet-50 here is `labkit.models.resnet`:
# the same network as torchvision's (same module names and 25,557,032 parameters; the
# tests load torchvision's weights into it where torchvision is installed), random weights.

# %% tags=["nbval-check-output"]
torch.manual_seed(0)
model = cases.resnet50().eval()
print("parameters:", cases.parameter_count(model))
model_cl = cases.channels_last(model)  # a copy: model.to(memory_format=torch.channels_last)
changed, parameters, all_4d = cases.restrided(model, model_cl)
print(f"{len(changed)} of {parameters} parameters restrided, all 4-D: {all_4d}")

# %% [markdown]
# ## Layout propagation through ResNet-50
#
# Forward hooks record what each module received and returned. Predict first: in a
# channels_last ResNet-50 fed a channels_last image, which module is the first whose output
# is no longer channels_last? (A 1x1 map, which either format describes, counts as
# channels_last.)

# %% jupyter={"source_hidden": true}
probe_image = cases.probe_side(chapter.on_gpu)
probe = torch.randn(1, 3, probe_image, probe_image)
records = cases.trace_layouts(model_cl, probe.to(memory_format=torch.channels_last))
propagation = chapter.lab.propagation
first_change = propagation.first_not_channels_last(records)
quiz_propagation = chapter.lab.widgets.Quiz(
    "Channels_last model, channels_last input: the first module whose output is not channels_last is ...",
    choices=list(propagation.QUIZ_CHOICES),
    answer=lambda: propagation.quiz_choice(first_change),
    explanation="A 1x1 map (avgpool's output) is channels_last and NCHW at once ('both': the two "
                "formats give the same strides), so it has not dropped channels_last. fc returns "
                "a 2-D tensor: no channel dim left to order.",
    holds=3,  # the propagation table, the mixed cases and the single operations; not C7b's card
)
quiz_propagation

# %% tags=["nbval-check-output"]
dropped = [r for r in records if r.output_format not in propagation.STILL_CHANNELS_LAST]
cases.propagation_table(records)

# %% [markdown]
# Mixed cases: a channels_last model fed an NCHW image, and the other way round.

# %% tags=["nbval-check-output"]
first_convs = {title: cases.trace_layouts(net, x, include=lambda m: isinstance(m, torch.nn.Conv2d))[0]
               for title, net, x in [("channels_last model, NCHW input", model_cl, probe),
                                     ("NCHW model, channels_last input", model,
                                      probe.to(memory_format=torch.channels_last))]}
chapter.show([{"case": title, "conv1 gets": first.input_format, "conv1 returns": first.output_format}
              for title, first in first_convs.items()])

# %% [markdown]
# Single operations on a channels_last activation `a` (and an NCHW `b` of the same shape):
# which keep the layout, which drop it?

# %% tags=["nbval-check-output"]
F = torch.nn.functional
a = torch.randn(2, 8, 6, 6).to(memory_format=torch.channels_last)
b = torch.randn(2, 8, 6, 6)
operations = {
    "relu(a)": lambda: F.relu(a),
    "a * 2": lambda: a * 2,
    "a + b (b NCHW)": lambda: a + b,
    "b + a": lambda: b + a,
    "cat([a, a], dim=1)": lambda: torch.cat([a, a], dim=1),
    "cat([a, b], dim=1)": lambda: torch.cat([a, b], dim=1),
    "max_pool2d(a, 2)": lambda: F.max_pool2d(a, 2),
    "interpolate(a, x2)": lambda: F.interpolate(a, scale_factor=2),
    "pad(a, (1, 1, 1, 1))": lambda: F.pad(a, (1, 1, 1, 1)),
    "batch_norm(a)": lambda: F.batch_norm(a, torch.zeros(8), torch.ones(8)),
    "a.clone()": lambda: a.clone(),
    "a.contiguous()": lambda: a.contiguous(),
    "a.reshape(2, -1)": lambda: a.reshape(2, -1),
}
ops_table = cases.operation_table(operations)
outcomes = dict(zip(ops_table.column("operation"), zip(ops_table.column("output"), ops_table.column("copied"),
                                                       strict=True), strict=True))
try:
    a.view(2, -1)
except RuntimeError as err:
    ops_table.note(f"a.view(2, -1): RuntimeError: {str(err).split(' (')[0]}")
lost = [k for k, (fmt, _) in outcomes.items() if fmt not in ("channels_last", "both")]
ops_table.note(f"a.contiguous() copies {outcomes['a.contiguous()'][1]} bytes: it means contiguous_format, "
               "so on a channels_last tensor it is a full layout conversion, not a no-op.")
if outcomes["a + b (b NCHW)"][0] != outcomes["b + a"][0]:
    ops_table.note(f"a + b gives {outcomes['a + b (b NCHW)'][0]}, b + a {outcomes['b + a'][0]}: with "
                   "mixed layouts the output follows the first operand.")
ops_table

# %% [markdown]
# ### C7b: must the input be converted too?
#
# The seed converts its input beside the model (`x = x.to(memory_format=torch.channels_last)  #
# 输入需同步转换`, "the input must be converted too") and says the model requires stride[1] == 1.
# The mixed cases above show what conv1 gets and returns. Here the whole network: the
# channels_last model fed one batch as NCHW and the same values converted, outputs compared
# (on a GPU fp16 at the seed's batch 64; on a CPU this machine's float32 sizes).

# %%
chapter.claim("C7b")

# %%
c7b_net, c7b_x = cases.input_case(model_cl, chapter.device, chapter.on_gpu, chapter.sizes.cnn_batch,
                                  chapter.sizes.cnn_image)
c7b = chapter.judge("C7b", cases.input_evidence(c7b_net, c7b_x, chapter.on_gpu),
                    form=chapter.form(cases.c7b_form(chapter.sizes.cnn_batch, chapter.sizes.cnn_image),
                                      seed=cases.C7B_SEED))
del c7b_net, c7b_x  # a GPU's fp16 copy of the network; a CPU's is model_cl itself
print(c7b)

# %% [markdown]
# ## C22: must NHWC be converted before the GEMM?
#
# A convolution's channel mixing is a GEMM over a `[pixels, channels]` matrix. The same 3x3
# convolution runs on an NCHW activation and on a channels_last one: predict first.

# %% jupyter={"source_hidden": true}
# fp16 on a GPU (the seed's setting), float32 on a CPU; the activation is the size of a
# ResNet's first stage, batch x 64 channels x (image / 4)^2.
conv_dtype, conv, act = cases.conv_case(chapter.device, chapter.on_gpu, chapter.sizes.cnn_batch,
                                        chapter.sizes.cnn_image)
channels = act.shape[1]
conv_cl, act_cl = cases.channels_last(conv), act.to(memory_format=torch.channels_last)
c22_reference = chapter.reference("verdict:C22")  # graded on it on a CPU, which profiles no such kernel
quiz_c22 = chapter.lab.widgets.Quiz(
    cases.conversion_question(chapter.on_gpu, c22_reference),
    choices=list(cases.CONVERSION_CHOICES),
    answer=lambda: cases.conversion_quiz_key(globals().get("nchw_ops"), globals().get("nhwc_ops"),
                                             chapter.on_gpu, c22_reference),
    explanation=cases.CONVERSION_EXPLANATION,  # review 2026-12-06z 03-04 item 9: was prose in the hold
)
quiz_c22

# %% [markdown]
# The claim, and the rule. What really runs is read two ways: the copy detector for
# aten-level copies, and the profiler for what the backend launched (on a GPU the CUDA
# kernels, where cuDNN's own layout-transform kernels would show).

# %%
chapter.claim("C22")

# %%
with torch.no_grad(), copies.detect() as conv_log:
    conv_out = conv_cl(act_cl)
nhwc_ops = cases.ops_run(lambda: conv_cl(act_cl), chapter.on_gpu)  # CUDA kernels, or aten ops on a CPU
nchw_ops = cases.ops_run(lambda: conv(act), chapter.on_gpu)
chapter.show([{"convolution": "NHWC (channels_last)", "aten copies": conv_log.total_bytes,
               "output": cases.memory_format_of(conv_out), "ran": cases.ran_line(nhwc_ops)},
              {"convolution": "NCHW", "aten copies": None, "output": "", "ran": cases.ran_line(nchw_ops)}],
             units={"aten copies": "B"})

# %% [markdown]
# The same GEMM written by hand: flatten the activation to `[pixels, channels]` with
# `permute(0, 2, 3, 1).reshape(-1, C)` and multiply by a `[C, C]` weight.

# %%
weight = torch.randn(channels, channels, device=chapter.device, dtype=conv_dtype)
with copies.detect() as nhwc_mm_log:
    act_cl.permute(0, 2, 3, 1).reshape(-1, channels) @ weight
with copies.detect() as nchw_mm_log:
    act.permute(0, 2, 3, 1).reshape(-1, channels) @ weight
print("permute(0, 2, 3, 1) is contiguous: of channels_last", act_cl.permute(0, 2, 3, 1).is_contiguous(),
      "; of NCHW", act.permute(0, 2, 3, 1).is_contiguous())
print(f"[pixels, channels] @ weight from NHWC: {nhwc_mm_log.total_bytes} B copied; "
      f"from NCHW: {nchw_mm_log.total_bytes} B copied "
      f"(by {', '.join(sorted({e.op for e in nchw_mm_log.copies})) or 'nothing'})")

# %% [markdown]
# The layout kernels each convolution ran, profiled on a GPU (on a CPU: the reference GPU's
# record, labelled as recorded):

# %%
print(cases.conversion_note(chapter.only_on("gpu", lambda: nchw_ops), c22_reference,
                            chapter.only_on("gpu", lambda: nhwc_ops)))

# %% [markdown]
# Where the bytes copied from NCHW above come from: our own `permute(0, 2, 3, 1).reshape(-1, C)`,
# and from the batch dim. Flattening to `[pixels, channels]` folds N into the pixel dim: after the
# permute, N's stride is C*H*W while H*W pixels of one image span only H*W, so N and the
# pixels cannot merge into one stride and `reshape` copies. For one image (N = 1) the same
# view *is* a matrix, with strides (1, H*W), and nothing is copied:

# %%
one_image = act[:1].permute(0, 2, 3, 1).reshape(-1, channels)
print(f"N = 1: [pixels, channels] view with strides {one_image.stride()}, shares storage: "
      f"{copies.shares_storage(one_image, act)}")
many = act.permute(0, 2, 3, 1)
print(f"N = {act.shape[0]}: after permute, strides (N, H, W, C) = {many.stride()}; N's stride "
      f"{many.stride()[0]} != H*W = {many.shape[1] * many.shape[2]}, so N cannot fold into pixels")

# %% [markdown]
# But NCHW does not need that matrix. Per image, `x.view(N, C, H*W)[n]` is a `[C, H*W]`
# matrix, and `W^T @ x.view(N, C, H*W)` multiplies all N of them in one strided-batched GEMM
# (aten's `bmm`), on the tensor as it lies (the `copied` column below measures what each path
# copies); the two layouts give the GEMM different shapes: one tall
# `[N*H*W, C] @ [C, C]` from NHWC, N short-and-wide ones from NCHW.
# The seed's table (card above) times NHWC straight into cuBLAS against NHWC converted to NCHW
# first. Below, its two paths and NCHW's own, timed interleaved at this chapter's shape; the
# bandwidth share is the bytes each path must move (activation in, result out, weight, and the
# seed's copy) over its time, against this machine's copy ceiling.

# %%
gemm_table, gemm_evidence, gemm_flagged = cases.gemm_paths(chapter, act, act_cl, weight)
c22 = chapter.judge("C22", {
    "conv_conversion_bytes": conv_log.total_bytes,
    "conversion_kernels": cases.conversion_kernels(nhwc_ops),
    "nchw_conversion_kernels": cases.conversion_kernels(nchw_ops),
    "conv_output_format": cases.memory_format_of(conv_out),
    "channel_matmul_nhwc_copy_bytes": nhwc_mm_log.total_bytes,
    "channel_matmul_nchw_copy_bytes": nchw_mm_log.total_bytes,
    "channel_matmul_nchw_batched_copy_bytes": gemm_evidence["nchw_batched"]["copied_bytes"],
    "gemm_paths": gemm_evidence, "gemm_flags": gemm_flagged, "gemm_shape": list(act.shape),
    "backend_ops": nhwc_ops, "device": str(chapter.device), "dtype": str(conv_dtype),
    "kernels_complete": cases.complete(nhwc_ops) and cases.complete(nchw_ops),
}, form=chapter.form(f"float32, batch {chapter.sizes.cnn_batch}", seed="a GPU with cuBLAS"))
gemm_table

# %%
chapter.table([c22])

# %% [markdown]
# ## C7a: is channels_last faster?
#
# First one convolution, then the whole network, each NCHW against NHWC with the same
# weights, timed interleaved, with PyTorch's defaults (on a GPU: cuDNN's heuristics pick
# the algorithm, `cudnn.benchmark` stays off). Predict first.

# %% jupyter={"source_hidden": true}
quiz_c7 = chapter.lab.widgets.Quiz(
    f"On this machine ({chapter.device.type}, {str(conv_dtype).replace('torch.', '')}), how many times "
    "faster is one 3x3 convolution in channels_last? (NCHW / NHWC "
    f"{'GPU' if chapter.on_gpu else 'CPU'} time; one convolution, not the network C7a judges)",
    answer=lambda: cases.conv_quiz_key(globals().get("conv_cmp")), rel_tol=0.2, unit="x",
    holds=7,  # C7a's card, timings and verdict, and the verdicts table; not the exercises
)
quiz_c7

# %% [markdown]
# The claim and its rule. The seed's quantity is images per second. On a GPU the verdict
# judges fp16 at the seed's batch 64 and at 128, each layout's forward captured once as a CUDA
# Graph and replayed in a loop, by wall time: a replay launches the whole network at once, so
# the device, not Python's launches, sets the pace. The eager loops are shown beside it: one
# taking over 15% longer than its kernels is host-bound, timing Python and the launches; the
# eager lesson is fp16 at batch 16, where the host's launches are longest against the kernels. On a
# CPU, float32 at the sizes this machine runs (the CPU form of the seed's ARM row): smaller
# than the seed's batch 64 at 224x224, they are shown and not judged. FLOPs are counted by PyTorch's
# `FlopCounterMode` on this very model, so each rate is a share of the matmul ceiling of
# the math it ran in: float32 convolutions on a GPU run in TF32 by default
# (`torch.backends.cudnn.allow_tf32`), so they are shown against the TF32 ceiling.

# %%
chapter.claim("C7a")

# %%
# One convolution first (`cases.nchw_vs_nhwc`: both layouts timed interleaved through
# chapter.measured, FLOPs counted by FlopCounterMode on this very network).
conv_cmp, _ = cases.nchw_vs_nhwc(chapter, conv, conv_cl, act, rep_ms=200)
cases.conv_table(chapter.show(conv_cmp), conv_cmp).note(cases.conv_clocks_line(conv_cmp))

# %%
plan = cases.c7_plan(chapter.on_gpu, chapter.sizes.cnn_batch)  # dtypes and batches timed here
image = chapter.sizes.cnn_image
runs, comparisons, c7_flagged, nets = [], {}, [], {}
for dtype in plan.dtypes:
    nets[dtype] = cases.layout_pair(model, chapter.device, dtype)
    for batch in plan.batches:
        x = torch.randn(batch, 3, image, image, device=chapter.device, dtype=dtype)
        cmp, flagged = cases.nchw_vs_nhwc(chapter, *nets[dtype], x, rep_ms=400, rounds=plan.rounds,
                                          case=f"{str(dtype).replace('torch.', '')} b{batch}")
        comparisons[(str(dtype), batch)] = cmp
        c7_flagged += flagged
        runs.append(cases.resnet_run(cmp, dtype, batch, image))
        # on a GPU, device-busy time beside wall time: is the run bound by the host's launches?
        # (and for fp16 at batch 64 and 128, each layout's CUDA Graph replay loop: C7a's judged runs)
        runs[-1].update(chapter.only_on("gpu", lambda pair=nets[dtype], x=x: cases.device_busy(*pair, x, runs[-1])) or {})
        c7_flagged += runs[-1].pop("graph_flags", [])
    chapter.only_on("gpu", lambda dtype=dtype: nets.pop(dtype))  # a GPU frees each dtype's pair; a CPU keeps float32's
chapter.only_on("gpu", lambda: cases.attach_fresh(runs))  # beside each run, reproduce.py's in fresh processes
cases.c7_tables(runs)  # on a GPU the judged CUDA Graph replays first, then the eager sweep

# %% [markdown]
# ### Optional, a CPU's two questions: half precision and the allocator
#
# On a GPU the cells of this section print nothing: its sweep above ran bfloat16 and float16,
# and PyTorch's CUDA allocator keeps freed memory for the next call.
#
# Half precision is the seed's ARM setting (its table: fp16, batch 64), yet C7a's CPU form runs
# float32. Is half precision an option on this CPU? One 3x3 convolution in each dtype, measured
# (whether bfloat16 or float16 is fast depends on the CPU's matrix units: AVX-512 BF16, AMX, or none).

# %%
half_note = chapter.only_on("cpu", lambda: cases.half_note(cases.half_precision(conv, channels)))
chapter.only_on("cpu", lambda: print("3x3 convolution time relative to float32 here:", half_note))

# %% [markdown]
# The allocator's part: on a CPU the ResNet timings above ran with glibc's default allocator.
# A forward pass allocates every activation afresh; when malloc hands large freed blocks back to the system,
# each call faults them in again. Does that decide the verdict? The same runs, with malloc
# keeping freed memory (these come last in the chapter: once malloc's thresholds are set by
# hand, glibc cannot go back to its adaptive default).

# %%
kept_runs = chapter.only_on("cpu", lambda: cases.kept_runs(chapter, nets[torch.float32], plan.batches,
                                                            image)) or []
cases.kept_table(runs, kept_runs)

# %% [markdown]
# ### C7a's verdict

# %%
judged, shown = cases.c7_split(runs, chapter.on_gpu)  # a GPU: fp16 where the device bounds img/s
# the optional section's, where it ran (a room that skips it still judges C7a)
kept_runs, half_note = globals().get("kept_runs"), globals().get("half_note")
c7a = chapter.judge("C7a", {
    "runs": judged, "other_runs": shown,
    "kept": {"runs": kept_runs} if kept_runs else None, "flags": c7_flagged,
    "device": str(chapter.device), "half_precision_conv_on_cpu": chapter.only_on("cpu", lambda: half_note),
    "cudnn_allow_tf32": chapter.only_on("gpu", lambda: bool(torch.backends.cudnn.allow_tf32)),
    "conv_nhwc_time_ratio": conv_cmp["NHWC (channels_last)"].ratio,
}, form=chapter.form(cases.c7_cpu_form(plan.batches, image), there=cases.c7_gpu_form(chapter.device, image, judged),
                     seed=cases.C7_CPU_SEED))
chapter.table([c7a])

# %% [markdown]
# ## Verdicts of this chapter
#
# C7a and C7b are stated for an A100 in fp16 (C7a with an ARM CPU row) and C22 for cuBLAS: each verdict
# says which form it judged, and the reference GPU run's recorded verdict is beside it.

# %%
pace_end = chapter.only_on("gpu", lambda: chapter.record("host_pace_end", cases.host_pace(chapter.device, "end")))  # kept, not shown
chapter.save()
chapter.table()

# %% [markdown]
# ## Exercises
#
# Write each function, run its cell, and the checker compares it with torch on many random
# shapes and shows the first case it gets wrong. `.solution()` shows a reference.

# %%
chapter.exercise("03.channels_last_strides")


# %%
def channels_last_strides(shape: tuple) -> tuple:
    raise NotImplementedError  # your code here


chapter.exercise("03.channels_last_strides").check(channels_last_strides)

# %%
chapter.exercise("03.element_at")


# %%
def element_at(shape: tuple, position: int) -> tuple:
    raise NotImplementedError  # your code here


chapter.exercise("03.element_at").check(element_at)

# %% [markdown]
# ## What to remember
#
# Each line below is computed from this run's measurements.

# %%
ratios = cases.takeaway_ratios(runs, kept_runs, judged=judged)  # a CPU's few runs each; a GPU's by regime
takeaways = [
    f"channels_last is a stride pattern: same shape, strides {img_cl.stride()} for a 1x3x2x2 image.",
    f"It survives a whole ResNet-50: {len(records) - len(dropped)} of {len(records)} module calls keep it. "
    f"Of the single ops tried, {', '.join(lost) or 'none'} do not return it.",
    cases.c22_takeaway(c22, c22_reference),  # built from C22's verdict: a GPU's kernels, a CPU's blind spot
    f"{cases.speed_lead(c7a)}: NHWC/NCHW img/s {ratios} "
    f"({cases.verdict_tag(c7a)}){cases.recorded_c7(chapter.only_on('cpu', lambda: cases.c7a_reference(chapter)))}. "
    f"{cases.input_takeaway(c7b)}".strip(),  # C7b's clause: what an NCHW input costs, from its verdict
]
eager_lesson = cases.eager_takeaway(runs, judged)  # a GPU's: fp16 b16, the host-paced loop (C7a's sweep)
if eager_lesson:
    takeaways.append(eager_lesson)
if kept_runs:
    c7_same_allocator = chapter.lab.claims.allocator_took(runs, kept_runs) is False
    faults = runs[-1]["nchw_faults_per_call"] or 0
    takeaways.append(
        ("The allocator was part of these CPU timings" if faults >= 100 else
         "The allocator did not decide these CPU timings")
        + (f": {faults:,.0f} page faults per NCHW call with glibc's default malloc and with it keeping "
           "freed memory." if c7_same_allocator else
           f": {faults:,.0f} page faults per NCHW call with glibc's default malloc, "
           f"{kept_runs[-1]['nchw_faults_per_call'] or 0:,.0f} with it keeping freed memory; NHWC/NCHW then "
           + ", ".join(f"b{k['batch']} {k['nhwc_img_s'] / k['nchw_img_s']:.2f}x" for k in kept_runs) + "."))
chapter.remember(takeaways)
