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
# python -m labkit.audit mypkg.mymod:build_model --device cpu
# ```
#
# Three networks first (ResNet-50, a MobileNetV3 and a ViT, random weights, nothing
# downloaded; torchvision's where it imports, else labkit's built-ins), each after a
# prediction; then yours.
#
# What the chapter leaves to the command: AOTInductor's export path. Its C++ and Triton compile
# takes minutes per network even on the reference GPU (chapter 07 records its build time), so
# in a room the chapter checks the other export paths here, and on the first few images of the
# batch (what a path records, and whether it is right on a layout, does not depend on the
# batch). `python -m labkit.audit` runs AOTInductor on a GPU by default.

# %%
# Installs labkit when (and only when) this notebook runs in Google Colab.
import os
import subprocess
import sys

if "google.colab" in sys.modules:
    CHECKOUT = "/content/tensor-layout-lab"
    if not os.path.isdir(CHECKOUT):
        subprocess.run(["git", "clone", "--depth", "1",
                        "https://github.com/tensor-layout-lab/tensor-layout-lab", CHECKOUT], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", CHECKOUT], check=True)
    os.environ["LABKIT_RESULTS_DIR"] = CHECKOUT + "/results"  # the recorded reference GPU runs
    from google.colab import output  # Colab renders third-party widgets once this is on

    output.enable_custom_widget_manager()

# %%
import warnings

import torch
from IPython.display import HTML, display

from labkit import exercises, session
from labkit.audit import audit, models, report
from labkit.show import widgets

chapter = session.open("09_audit_your_model")
on_gpu = chapter.on_gpu
device = "cuda" if on_gpu else "cpu"
batch = chapter.sizes.cnn_batch
image = 224 if on_gpu else 64  # a CPU run stays small: three audits within about a minute
# Export paths: on a GPU all but AOTInductor (minutes of compile per network: the command runs
# it); on a CPU the in-process trace only (torch.export and ONNX cost tens of seconds each
# there; chapter 07 runs them). Checked on the batch's first EXPORT_BATCH images.
EXPORT_BATCH = 8
export_paths = tuple(p for p in audit.exports.PATHS if p != "aoti") if on_gpu else ("trace",)
networks = dict(models.chapter_networks())
print(f"networks: {networks}; batch {batch}, image {image}x{image}, on {device}")


def run_audit(name: str) -> audit.Report:
    """Audit one of the chapter's networks in channels_last, quietly."""
    model = models.load(networks[name], image=image)
    torch.manual_seed(0)
    example = torch.randn(batch, 3, image, image)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit.run(model, example, device=device, memory_format="channels_last",
                         name=networks[name], export_paths=export_paths,
                         export_batch=EXPORT_BATCH, recommend_rounds=5 if on_gpu else 3,
                         recommend_rep_ms=200.0 if on_gpu else 300.0)


def show(result: audit.Report, key: str) -> None:
    """The report's table, recorded under this chapter; on a CPU the reference GPU's beside it."""
    print(report.text(result))
    chapter.record(key, report.summary(result))
    if not on_gpu:
        recorded = chapter.recorded(key)
        print("\nReference GPU (recorded on nvidia-h200, labelled as recorded):")
        print(report.summary_text(recorded) if recorded else "  nothing recorded yet")


# %% [markdown]
# ## ResNet-50
#
# The whole network converted to channels_last, fed a channels_last batch. Chapter 03 traced
# the layout through it; now the audit also counts copies, reads the profile, checks DDP's
# contract and the export path, and times the fix. Predict first.

# %% jupyter={"source_hidden": true}
resnet_report = run_audit("ResNet-50")
quiz_resnet = widgets.Quiz(
    "ResNet-50 in channels_last: how many of its modules drop channels_last (a 4-D output "
    "that is no longer channels_last)?",
    choices=["none", "1 to 5", "more than 5"],
    answer=lambda: "none" if not resnet_report.drops else
    "1 to 5" if len(resnet_report.drops) <= 5 else "more than 5",
    explanation="A module that only flattens (avgpool to fc) leaves 4-D behind: that is not a drop.",
)
quiz_resnet

# %%
show(resnet_report, "audit_resnet50")

# %% [markdown]
# Every 3x3 (and the 7x7 stem) weight is listed as *drift-prone*: its channels_last strides
# differ from its contiguous ones in dimensions of size > 1, so converting the model after
# `DistributedDataParallel` was built breaks the bucket views (chapter 06). The 1x1 weights
# differ only in size-1 dimensions: they address the same elements either way.

# %% tags=["nbval-check-output"]
# Decided by parameter shapes alone: the same on every machine (and for torchvision's ResNet-50).
print("ResNet-50 parameters whose strides change with channels_last:")
print(f"  drift-prone if converted after DDP: {len(resnet_report.drift_prone)}")
print(f"  size-1 dims only (warn harmlessly): {len(resnet_report.harmless)}")
print(f"  first drift-prone: {resnet_report.drift_prone[0].name} {resnet_report.drift_prone[0].shape}")

# %% [markdown]
# ## MobileNetV3
#
# Depthwise convolutions, squeeze-excite gates on 1x1 maps, hardswish. Depthwise kernels do
# little arithmetic per byte, so the layout they read matters more, and which layout a
# library's depthwise kernel prefers differs by backend.

# %% jupyter={"source_hidden": true}
mobile_report = run_audit("MobileNetV3")
quiz_mobile = widgets.Quiz(
    "MobileNetV3 on this machine: does converting to channels_last make inference measurably "
    "faster (numerics checked, per-round ratio's IQR below 1)?",
    choices=["yes", "no"],
    answer=lambda: "yes" if mobile_report.recommendations[0].kept else "no",
    explanation="The audit keeps a recommendation only when the upper quartile of its "
                "interleaved rounds' ratios is below 1, on the clock the report names.",
)
quiz_mobile

# %%
show(mobile_report, "audit_mobilenetv3")

# %% [markdown]
# ## A Vision Transformer
#
# One strided convolution cuts the image into patches; then `flatten(2).transpose(1, 2)` turns
# the patch grid into a sequence and everything after is matrix multiplication on 3-D tensors.

# %% jupyter={"source_hidden": true}
vit_report = run_audit("ViT")
quiz_vit = widgets.Quiz(
    "The ViT in channels_last: does the audit find modules that copy data during one forward pass?",
    choices=["yes", "no"],
    answer=lambda: "yes" if vit_report.copies else "no",
    explanation="A copy is an op that moves existing values (clone, cat, contiguous, ...), "
                "charged to the innermost module running when it happened.",
)
quiz_vit

# %%
show(vit_report, "audit_vit")

# %% [markdown]
# The full reports (every module) are also written as Markdown and HTML. Here is the ViT's:

# %%
display(HTML(report.to_html(vit_report).split("<body>")[1].split("</body>")[0]))

# %% [markdown]
# ## Your model
#
# Replace `build_my_model` with your network (or import it) and `my_example` with an input it
# accepts, then run the cell. The placeholder is a small network with one hidden copy
# (`permute(0, 2, 3, 1).contiguous()`), audited on an NCHW input: find it in the report, and
# see whether the measured fix removes it.

# %%
def build_my_model() -> torch.nn.Module:
    class ToNHWC(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), ToNHWC(), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                               torch.nn.Linear(16, 10))


my_example = torch.randn(batch, 3, 32, 32)
my_format = "contiguous"  # or "channels_last"
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    my_report = audit.run(build_my_model(), my_example, device=device, memory_format=my_format,
                          name="my model", export_paths=("trace",), recommend_rounds=3,
                          recommend_rep_ms=200.0)
print(report.text(my_report))

# %% [markdown]
# ## Exercises
#
# The two readings the report's tables rest on, each graded against torch itself. Replace
# each `raise NotImplementedError` and run the check.

# %%
exercises.get("09.layout_of")

# %%
def layout(t: torch.Tensor) -> str:
    raise NotImplementedError


exercises.get("09.layout_of").check(layout)

# %%
exercises.get("09.drift_status")

# %%
def status(shape: tuple) -> str | None:
    raise NotImplementedError


exercises.get("09.drift_status").check(status)

# %% [markdown]
# ## What to remember

# %%
def kept_line(r: audit.Report) -> str:
    first = r.recommendations[0]
    if not first.timed:
        return f"{r.model}: {first.title} was not timed ({first.why})."
    return (f"{r.model}: channels_last took {first.ratio:.2f}x the NCHW time "
            f"(per-round IQR {first.ratio_q25:.2f}-{first.ratio_q75:.2f}, {first.clock}): "
            + ("kept." if first.kept else "not kept."))


reports = [resnet_report, mobile_report, vit_report]
takeaways = [
    "One fix, three answers: " + " ".join(kept_line(r) for r in reports)
    + " A layout is chosen per network and machine, by measuring.",
    f"Layout drops found: ResNet-50 {len(resnet_report.drops)}, MobileNetV3 "
    f"{len(mobile_report.drops)}, ViT {len(vit_report.drops)}; bytes copied in one forward: "
    f"{resnet_report.copy_bytes}, {mobile_report.copy_bytes} and {vit_report.copy_bytes} B. "
    "The copy detector and forward hooks say which module, where a total hides it.",
    f"DDP: {len(resnet_report.drift_prone)} of ResNet-50's weights change strides where it "
    f"matters and {len(resnet_report.harmless)} only in size-1 dims: convert before wrapping.",
    f"Your model: {sum(len(v) for v in my_report.findings().values())} findings "
    f"({', '.join(k for k, v in my_report.findings().items() if v) or 'none'}); "
    + "; ".join(f"{r.title}: {'kept' if r.kept else 'not kept'}" for r in my_report.recommendations)
    + ".",
]
for line in takeaways:
    print("-", line)
chapter.save()
