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
# # 09 Audit your own model
#
# The course has built instruments one at a time: the copy detector (chapter 02), layout
# tracing through a network (03), the timeline and its kernel classes (04, 05), DDP's layout
# contract (06), the export audit (07) and interleaved, numerics-gated timing (08). This
# chapter points all of them at one network at once, with `labkit`'s audit:
#
# - per module: the layout it received and returned (contiguous, channels_last, neither),
#   whether it kept, dropped or converted channels_last, and the bytes it copied;
# - the copy and layout-conversion work the profiler saw, its share of the time, and on a GPU
#   whether the run is host-bound;
# - the parameters that would break DDP's layout contract if converted after wrapping, and
#   the size-1 cases that warn harmlessly;
# - each export path, correct or not on this input layout;
# - recommendations it has *measured*: applied, numerics checked, timed interleaved against
#   the original, kept only when they help.
#
# The same audit is a command for any model you can import:
#
# ```
# python -m labkit.audit torchvision:resnet50 --batch 64 --device cuda --format channels_last --out audit/
# python -m labkit.audit mypkg.mymod:build_model --device cpu --dtype bfloat16 --input batch.pt
# ```
#
# `--dtype` audits in float16 or bfloat16 (real inference rarely runs in float32); `--input`
# reads a batch you saved with `torch.save(batch, "batch.pt")` instead of a random one.
#
# Three networks first (ResNet-50, a MobileNetV3 and a ViT, random weights, nothing
# downloaded; torchvision's where it imports, else labkit's built-ins), each after a
# prediction, audited in float32 (each table's input row says so, and on a GPU whether float32
# ran in TF32); then ResNet-50 again in float16, the precision chapter 08 deploys; then yours.
#
# What the chapter leaves to the command: AOTInductor's export path. Its C++ and Triton build
# takes minutes even for chapter 07's small network (the set-up table below prints the seconds
# the reference GPU recorded for it), so in a room the chapter checks the other export paths here, and on the first few images of the
# batch (what a path records, and whether it is right on a layout, does not depend on the
# batch). AOTInductor stays opt-in: `python -m labkit.audit MODEL --exports aoti` runs it (on a
# GPU within a 100 s compile limit; `LABKIT_AOTI_TIMEOUT_S=600` allows more, and a CPU needs it).

# %%
import os  # in Google Colab only: fetch the course and install labkit (elsewhere this does nothing)

if "COLAB_RELEASE_TAG" in os.environ:
    status = os.system("git clone -q --depth 1 https://github.com/tensor-layout-lab/tensor-layout-lab /content/tensor-layout-lab; pip install -q /content/tensor-layout-lab")
    assert status == 0, "installing labkit failed: the lines above say why"

# %%
import torch

from labkit import session

chapter = session.open("09_audit_your_model")  # the door: chapter.lab.<name> is this chapter's modules
audits = chapter.lab.audits  # the chapter's set-up, audits and tables (ch09's audits.py)
where = audits.setup(chapter.on_gpu, chapter.sizes.cnn_batch, chapter.sizes.cnn_image)  # sizes, export paths
where.table()

# %% [markdown]
# ## ResNet-50
#
# The whole network converted to channels_last, fed a channels_last batch. Chapter 03 traced
# the layout through it; now the audit also counts copies, reads the profile, checks DDP's
# contract and the export path, and times the fix. Predict first.

# %% jupyter={"source_hidden": true}
resnet_report = audits.run(where, "ResNet-50")
quiz_resnet = chapter.lab.widgets.Quiz(
    "ResNet-50 in channels_last: how many of its modules drop channels_last (a 4-D output "
    "that is no longer channels_last)?",
    choices=["none", "1 to 5", "more than 5"],
    answer=lambda: "none" if not resnet_report.drops else
    "1 to 5" if len(resnet_report.drops) <= 5 else "more than 5",
    explanation="A module that only flattens (avgpool to fc) leaves 4-D behind: that is not a drop.",
    holds=1,  # the audit's table below answers it; the DDP and float16 tables do not
)
quiz_resnet

# %%
audits.show(chapter, resnet_report, "audit_resnet50")

# %% [markdown]
# Every 3x3 (and the 7x7 stem) weight is listed as *drift-prone*: its channels_last strides
# differ from its contiguous ones in dimensions of size > 1, so converting the model after
# `DistributedDataParallel` was built breaks the bucket views (chapter 06). The 1x1 weights
# differ only in size-1 dimensions: they address the same elements either way.

# %% tags=["nbval-check-output"]
# Decided by parameter shapes alone: the same on every machine (and for torchvision's ResNet-50).
print(audits.drift_table(resnet_report, "ResNet-50"))

# %% [markdown]
# ### Optional: ResNet-50 in float16
#
# On a GPU the float32 audit's timing is a TF32 timing where PyTorch's default left TF32 on
# (its input row says), not what a deployment runs. So on a GPU, ResNet-50 is audited again in
# float16 (the same checks and keep rule; export paths were checked above). It is chapter 08's
# fp16 weights rung (eager, channels_last, batch 64) as `model.to(float16)` leaves it, every
# BatchNorm half (08's rung keeps them float32, which the audit times below, with the kernels a
# batch each launches). The host's pace that minute decides whether the GPU idles past the 30%
# host-bound line. The kernels line prints the host's launches beside the device's time, and says
# "at the border, either clock" only where the unprofiled idle is within 5 points of 30%
# (chapter 08's rule):

# %%
audits.fp16_table(chapter, where)

# %% [markdown]
# ## MobileNetV3
#
# Depthwise convolutions, squeeze-excite gates on 1x1 maps, hardswish. Depthwise kernels do
# little arithmetic per byte, so the layout they read matters more, and which layout a
# library's depthwise kernel prefers differs by backend.

# %% jupyter={"source_hidden": true}
mobile_report = audits.run(where, "MobileNetV3")
quiz_mobile = chapter.lab.widgets.Quiz(
    "MobileNetV3 on this machine: does channels_last make each batch measurably faster on the "
    "clock the audit judges it by (numerics checked, at least 2% less time per batch, steady rounds)?",
    choices=["yes", "no"],
    answer=lambda: audits.quiz_answer(mobile_report),
    explanation="Graded on the verdict's clock: the batch's own time (the harness's clock) while "
                "the GPU is busy; the GPU's busy time when it idles past 30% (host-bound), where "
                "the host paces the batch and a fix that frees the GPU still counts. The table "
                "shows both clocks.",
    holds=1,  # the audit's table below
)
quiz_mobile

# %%
audits.show(chapter, mobile_report, "audit_mobilenetv3")

# %% [markdown]
# ## A Vision Transformer
#
# One strided convolution cuts the image into patches; then `flatten(2).transpose(1, 2)` turns
# the patch grid into a sequence and everything after is matrix multiplication on 3-D tensors.

# %% jupyter={"source_hidden": true}
vit_report = audits.run(where, "ViT")
quiz_vit = chapter.lab.widgets.Quiz(
    "The ViT in channels_last: does the audit find modules that copy data during one forward pass?",
    choices=["yes", "no"],
    answer=lambda: "yes" if vit_report.copies else "no",
    explanation="A hidden copy is an op that moves existing values (clone, contiguous, ...), "
                "charged to the innermost module running when it happened; joining tensors "
                "(cat, stack: the class token) makes new data on purpose and is not counted. The "
                "answer is this machine's: it depends on which ViT was loaded (the table at the top "
                "names it) and on the attention path PyTorch picks for it.",
    holds=2,  # the audit's table and its full report; not your model's audit or the exercises
)
quiz_vit

# %%
audits.show(chapter, vit_report, "audit_vit")

# %% [markdown]
# The full reports (every module) are also written as Markdown and HTML. Here is the ViT's,
# folded (open it to read every module's row):

# %%
audits.FullReport(vit_report)

# %% [markdown]
# ## Your model
#
# Replace `my_model` with your network (or import it) and `my_example` with an input it
# accepts, then run the cell. The placeholder is a small network with one hidden copy
# (`permute(0, 2, 3, 1).contiguous()`), audited on an NCHW input: find it in the report, and
# see whether the measured fix removes it.

# %%
def to_nhwc_and_back(x: torch.Tensor) -> torch.Tensor:
    return x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)


torch.manual_seed(0)
my_model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), audits.Apply(to_nhwc_and_back),
                               torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                               torch.nn.Linear(16, 10))
my_example = torch.randn(where.batch, 3, 32, 32)
my_format = "contiguous"  # or "channels_last"
my_report = audits.run_yours(where, my_model, my_example, memory_format=my_format)
audits.audit_table(my_report)

# %% [markdown]
# ## Exercises
#
# The two readings the report's tables rest on, each graded against torch itself. Replace
# each `raise NotImplementedError` and run the check.

# %%
chapter.exercise("09.layout_of")

# %%
def layout(t: torch.Tensor) -> str:
    raise NotImplementedError


chapter.exercise("09.layout_of").check(layout)

# %%
chapter.exercise("09.drift_status")

# %%
def status(shape: tuple) -> str | None:
    raise NotImplementedError


chapter.exercise("09.drift_status").check(status)

# %% [markdown]
# ## What to remember

# %%
chapter.save()
chapter.remember(audits.takeaways(resnet_report, mobile_report, vit_report, my_report, chapter))
