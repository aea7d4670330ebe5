# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
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
# real ResNet-50 and measures what it is worth, testing two claims: C7 (seed
# `000_...txt` §2.4) and C22 (seed `004_...txt` §4.1).

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
import copy
import re

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from labkit import bench, ceilings, claims, copies, env, figures, resnet, widgets

# The profiler's C++ layer (kineto) prints start/stop lines to stderr; they say nothing here.
os.environ.setdefault("KINETO_LOG_LEVEL", "6")

device = env.device()
sizes = env.sizes()
on_gpu = env.has_cuda()
verdicts = []
ceiling = ceilings.measure()
print(f"torch {torch.__version__} on {device}; batch {sizes.cnn_batch}, image {sizes.cnn_image}")
ceiling

# %% [markdown]
# ## Same shape, other strides
#
# A 1x3x2x2 "image" (3 channels, 2x2 pixels). In `channels_last` the channel stride is 1.

# %%
# NBVAL_CHECK_OUTPUT
img = torch.arange(12, dtype=torch.float32).reshape(1, 3, 2, 2)
img_cl = img.to(memory_format=torch.channels_last)
print("NCHW          shape", tuple(img.shape), "stride", img.stride())
print("channels_last shape", tuple(img_cl.shape), "stride", img_cl.stride())
print("storage order NCHW:         ", img.flatten().tolist())
print("storage order channels_last:", img_cl.permute(0, 2, 3, 1).flatten().tolist())
print("permute(0, 2, 3, 1) of channels_last is contiguous:", img_cl.permute(0, 2, 3, 1).is_contiguous())

# %%
figures.grid_and_strip(img_cl, highlight=(0, 1, 0, 1))

# %%
widgets.AddressGrid(img_cl, title="a 1x3x2x2 image in channels_last")

# %% [markdown]
# ## Converting a model
#
# `model.to(memory_format=torch.channels_last)` restrides every 4-D parameter (the
# convolution weights) and leaves the rest alone. The ResNet-50 here is `labkit.resnet`:
# the same network as torchvision's (same module names and 25,557,032 parameters; the
# tests load torchvision's weights into it where torchvision is installed), random weights.

# %%
# NBVAL_CHECK_OUTPUT
torch.manual_seed(0)
model = resnet.resnet50().eval()
print("parameters:", resnet.parameter_count(model))
model_cl = copy.deepcopy(model).to(memory_format=torch.channels_last)
changed = [name for (name, p), (_, q) in zip(model.named_parameters(), model_cl.named_parameters(), strict=True)
           if p.stride() != q.stride()]
print(f"{len(changed)} of {len(list(model.parameters()))} parameters restrided, all 4-D:",
      all(dict(model_cl.named_parameters())[n].dim() == 4 for n in changed))

# %% [markdown]
# ## Layout propagation through ResNet-50
#
# Forward hooks record what each module received and returned. Predict first: in a
# channels_last ResNet-50 fed a channels_last image, which module is the first whose output
# is no longer (only) channels_last?

# %%
probe_image = 64 if not on_gpu else 224
probe = torch.randn(1, 3, probe_image, probe_image)
records = resnet.trace_layouts(model_cl, probe.to(memory_format=torch.channels_last))
first_change = next(r for r in records if r.verdict != "kept")
quiz_propagation = widgets.Quiz(
    "Channels_last model, channels_last input: the first module whose output is not channels_last is ...",
    choices=["conv1 (the stem)", "a residual add (Bottleneck output)", "avgpool", "fc"],
    answer=lambda: {"conv1": "conv1 (the stem)", "avgpool": "avgpool", "fc": "fc"}.get(
        first_change.name, "a residual add (Bottleneck output)"),
    explanation="'both' means a 1x1 map: the two formats give the same strides.",
)
quiz_propagation

# %%
# NBVAL_CHECK_OUTPUT
summary: dict = {}
for r in records:
    summary[(r.kind, r.verdict)] = summary.get((r.kind, r.verdict), 0) + 1
print(f"{'module kind':<20}{'channels_last':<15}{'count':>6}")
for (kind, verdict), count in summary.items():
    print(f"{kind:<20}{verdict:<15}{count:>6}")
print("\nlast modules:")
for r in records[-4:]:
    print(f"  {r.name:<10} {r.kind:<18} {r.input_format:>13} -> {r.output_format:<13} stride {r.output_stride}")

# %% [markdown]
# Mixed cases: a channels_last model fed an NCHW image, and the other way round.

# %%
# NBVAL_CHECK_OUTPUT
for title, net, x in [("channels_last model, NCHW input", model_cl, probe),
                      ("NCHW model, channels_last input", model, probe.to(memory_format=torch.channels_last))]:
    first = resnet.trace_layouts(net, x, include=lambda m: isinstance(m, torch.nn.Conv2d))[0]
    print(f"{title}: conv1 gets {first.input_format}, returns {first.output_format}")

# %% [markdown]
# Single operations on a channels_last activation `a` (and an NCHW `b` of the same shape):
# which keep the layout, which drop it?

# %%
# NBVAL_CHECK_OUTPUT
a = torch.randn(2, 8, 6, 6).to(memory_format=torch.channels_last)
b = torch.randn(2, 8, 6, 6)
operations = {
    "relu(a)": lambda: F.relu(a),
    "a * 2": lambda: a * 2,
    "a + a": lambda: a + a,
    "a + b (b NCHW)": lambda: a + b,
    "b + a": lambda: b + a,
    "cat([a, a], dim=1)": lambda: torch.cat([a, a], dim=1),
    "cat([a, b], dim=1)": lambda: torch.cat([a, b], dim=1),
    "max_pool2d(a, 2)": lambda: F.max_pool2d(a, 2),
    "avg_pool2d(a, 2)": lambda: F.avg_pool2d(a, 2),
    "interpolate(a, x2)": lambda: F.interpolate(a, scale_factor=2),
    "pad(a, (1, 1, 1, 1))": lambda: F.pad(a, (1, 1, 1, 1)),
    "batch_norm(a)": lambda: F.batch_norm(a, torch.zeros(8), torch.ones(8)),
    "a.clone()": lambda: a.clone(),
    "a.contiguous()": lambda: a.contiguous(),
    "a.reshape(2, -1)": lambda: a.reshape(2, -1),
    "a.permute(0, 2, 3, 1)": lambda: a.permute(0, 2, 3, 1),
}
print(f"{'operation':<24}{'output':<15}{'copied B':>9}")
for name, op in operations.items():
    with copies.detect() as log:
        out = op()
    print(f"{name:<24}{resnet.memory_format_of(out):<15}{log.total_bytes:>9}")
try:
    a.view(2, -1)
except RuntimeError as err:
    print("a.view(2, -1): RuntimeError:", str(err).split(" (")[0])

# %% [markdown]
# ## C22: "cuBLAS requires NCHW input, so NHWC must be converted"
#
# **Claim (seed `004` §4.1):** cuBLAS needs NCHW (channel-first) input, so an NHWC tensor
# must be converted to NCHW before the GEMM. Check what really runs: the copy detector
# for aten-level copies, and the profiler for what the backend launched (on a GPU: the CUDA
# kernels, where cuDNN's own layout-conversion kernels would show, e.g. `nchwToNhwcKernel`).
#
# A convolution's channel mixing is a GEMM over `[pixels, channels]`. In NHWC that matrix
# is already contiguous; in NCHW it is not.

# %%
conv_dtype = torch.float16 if on_gpu else torch.float32
channels = 64
conv = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False).to(device, conv_dtype).eval()
conv_cl = copy.deepcopy(conv).to(memory_format=torch.channels_last)
side = sizes.cnn_image // 4
act = torch.randn(sizes.cnn_batch, channels, side, side, device=device, dtype=conv_dtype)
act_cl = act.to(memory_format=torch.channels_last)
CONVERSION_KERNEL = re.compile(r"(?i)nchw_?to_?nhwc|nhwc_?to_?nchw|nchw2nhwc|nhwc2nchw")


def ops_run(fn) -> list[str]:
    """Names of what ran: CUDA kernels on a GPU, aten ops on a CPU (from the profiler)."""
    activity = torch.profiler.ProfilerActivity.CUDA if on_gpu else torch.profiler.ProfilerActivity.CPU
    with torch.no_grad(), torch.profiler.profile(activities=[activity]) as prof:
        fn()
        if on_gpu:
            torch.cuda.synchronize()
    wanted = torch.autograd.DeviceType.CUDA if on_gpu else torch.autograd.DeviceType.CPU
    return sorted({e.name for e in prof.events() if e.device_type == wanted})


with torch.no_grad(), copies.detect() as conv_log:
    conv_out = conv_cl(act_cl)
nhwc_ops = ops_run(lambda: conv_cl(act_cl))
nchw_ops = ops_run(lambda: conv(act))
print(f"NHWC conv: aten copies {conv_log.total_bytes} B, output {resnet.memory_format_of(conv_out)}")
print("  ran:", "; ".join(op[:80] for op in nhwc_ops))
print("NCHW conv ran:", "; ".join(op[:80] for op in nchw_ops))

# %%
weight = torch.randn(channels, channels, device=device, dtype=conv_dtype)
with copies.detect() as nhwc_mm_log:
    act_cl.permute(0, 2, 3, 1).reshape(-1, channels) @ weight
with copies.detect() as nchw_mm_log:
    act.permute(0, 2, 3, 1).reshape(-1, channels) @ weight
print(f"[pixels, channels] @ weight from NHWC: {nhwc_mm_log.total_bytes} B copied; "
      f"from NCHW: {nchw_mm_log.total_bytes} B copied")
c22 = claims.get("C22").judge({
    "conv_conversion_bytes": conv_log.total_bytes,
    "conversion_kernels": [k for k in nhwc_ops if CONVERSION_KERNEL.search(k)],
    "nchw_conversion_kernels": [k for k in nchw_ops if CONVERSION_KERNEL.search(k)],
    "conv_output_format": resnet.memory_format_of(conv_out),
    "channel_matmul_nhwc_copy_bytes": nhwc_mm_log.total_bytes,
    "channel_matmul_nchw_copy_bytes": nchw_mm_log.total_bytes,
    "backend_ops": nhwc_ops, "device": str(device), "dtype": str(conv_dtype),
})
verdicts.append(c22)
print(c22.claim_id, c22.label, "--", c22.reason)

# %% [markdown]
# ## C7: is channels_last faster?
#
# **Claim (seed §2.4):** channels_last raises ResNet-50 inference from 1820 to 2190 img/s
# (A100, fp16, batch 64, +20%), and it needs `stride[1] == 1`.
#
# First one convolution, then the whole network, each NCHW against NHWC with the same
# weights, timed interleaved, with PyTorch's defaults (on a GPU: cuDNN's heuristics pick
# the algorithm, `cudnn.benchmark` stays off). FLOPs are counted by PyTorch's
# `FlopCounterMode` on this very model, so each rate is also a share of this machine's
# matmul ceiling.

# %%
quiz_c7 = widgets.Quiz(
    f"On this machine ({device.type}, {str(conv_dtype).replace('torch.', '')}), how much faster is the "
    "3x3 convolution in channels_last? (NCHW time / NHWC time)",
    answer=lambda: round(conv_speedup(), 2), rel_tol=0.2, unit="x",
)


def conv_speedup() -> float:
    """A quick interleaved comparison, for the quiz's answer."""
    with torch.no_grad():
        quick = bench.compare({"NCHW": lambda: conv(act), "NHWC": lambda: conv_cl(act_cl)},
                              baseline="NHWC", rounds=3, rep_ms=100)
    return quick["NCHW"].ratio


quiz_c7


# %%
def counted_flops(net: torch.nn.Module, x: torch.Tensor) -> int:
    """FLOPs of one forward pass, counted by PyTorch (2 per multiply-add)."""
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        net(x)
    return counter.get_total_flops()


def nchw_vs_nhwc(net: torch.nn.Module, net_cl: torch.nn.Module, x: torch.Tensor, rep_ms: float):
    """Time the two layouts of the same network interleaved; returns the Comparison."""
    x_cl = x.to(memory_format=torch.channels_last)
    dtype_name = str(x.dtype).replace("torch.", "")
    with torch.no_grad():
        return bench.compare({"NCHW": lambda: net(x), "NHWC (channels_last)": lambda: net_cl(x_cl)},
                             baseline="NCHW", rounds=5, rep_ms=rep_ms,
                             flops=counted_flops(net, x), flops_dtype=dtype_name)


conv_cmp = nchw_vs_nhwc(conv, conv_cl, act, rep_ms=200)
conv_cmp

# %%
dtypes = [torch.float32, torch.bfloat16, torch.float16] if on_gpu else [torch.float32]
batches = [16, sizes.cnn_batch, 128] if on_gpu else [1, sizes.cnn_batch]
image = sizes.cnn_image
runs, comparisons = [], {}
for dtype in dtypes:
    net = copy.deepcopy(model).to(device, dtype)
    net_cl = copy.deepcopy(net).to(memory_format=torch.channels_last)
    for batch in batches:
        x = torch.randn(batch, 3, image, image, device=device, dtype=dtype)
        cmp = nchw_vs_nhwc(net, net_cl, x, rep_ms=400 if on_gpu else 500)
        comparisons[(str(dtype), batch)] = cmp
        nchw, nhwc = cmp["NCHW"], cmp["NHWC (channels_last)"]
        runs.append({
            "dtype": str(dtype).replace("torch.", ""), "batch": batch, "image": image,
            "nchw_img_s": batch / nchw.timing.median_s, "nhwc_img_s": batch / nhwc.timing.median_s,
            "nhwc_time_ratio_iqr": [nhwc.ratio_q25, nhwc.ratio_q75],
            "nchw_pct_of_matmul_ceiling": nchw.timing.pct_of_matmul_ceiling,
            "nhwc_pct_of_matmul_ceiling": nhwc.timing.pct_of_matmul_ceiling,
        })
    del net, net_cl
print(f"{'dtype':<10}{'batch':>6}{'NCHW img/s':>12}{'NHWC img/s':>12}{'NHWC/NCHW':>10}  % of matmul ceiling (NCHW, NHWC)")
for r in runs:
    pct = ", ".join("n/a" if p is None else f"{p:.0f}%" for p in
                    (r["nchw_pct_of_matmul_ceiling"], r["nhwc_pct_of_matmul_ceiling"]))
    print(f"{r['dtype']:<10}{r['batch']:>6}{r['nchw_img_s']:>12.1f}{r['nhwc_img_s']:>12.1f}"
          f"{r['nhwc_img_s'] / r['nchw_img_s']:>10.2f}  {pct}")

# %%
comparisons[(str(dtypes[-1]), batches[-1])]

# %%
if on_gpu:
    print("cuDNN may use TF32 for float32 convolutions:", torch.backends.cudnn.allow_tf32,
          "(then float32 can pass 100% of the float32 matmul ceiling, which is measured without TF32)")
c7 = claims.get("C7").judge({
    "channels_last_stride1": img_cl.stride()[1], "runs": runs, "device": str(device),
    "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32) if on_gpu else None,
    "conv_nhwc_time_ratio": conv_cmp["NHWC (channels_last)"].ratio,
})
verdicts.append(c7)
print(c7.claim_id, c7.label, "--", c7.reason)

# %% [markdown]
# The claim's own form is an fp16 GPU run. On a CPU the verdict above is for float32 only
# (half precision convolutions on CPUs without bf16 matrix units are slow emulations, not
# what the claim is about); the recorded reference GPU verdict is in the table below.

# %% [markdown]
# ## Verdicts of this chapter
#
# C7 is stated for an A100 in fp16 and C22 for cuBLAS/cuDNN: their own form needs a GPU.
# What the reference GPU run recorded for them, labelled as recorded:

# %%
gpu_forms = (claims.recorded_evidence(["C7", "C22"]) if not on_gpu
             else "This run is on a GPU: the verdicts above are the GPU forms.")
gpu_forms

# %%
claims.save(verdicts, "03_memory_layouts")
claims.table(verdicts)

# %%
# NBVAL_CHECK_OUTPUT
print(claims.table(verdicts).structure())
