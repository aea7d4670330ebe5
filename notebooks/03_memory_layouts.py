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
# real ResNet-50 and measures what it is worth, testing two claims: C22 from "An industrial
# tensor pipeline optimisation handbook" (seed 004, §4.1) and C7 from "A 300% latency spike
# from broken shape alignment" (seed 000, §2.4). Both are GPU claims (cuBLAS; an A100 in
# fp16), though C7's table also has an ARM CPU row: on a CPU each gets a CPU form, labelled.

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

from labkit import claims, exercises, session
from labkit.chapters.ch03_memory_layouts import device_split, propagation
from labkit.core import env, results
from labkit.measure import bench, ceilings, copies
from labkit.models import resnet
from labkit.show import figures, widgets

# The profiler's C++ layer (kineto) prints start/stop lines to stderr; they say nothing here.
os.environ.setdefault("KINETO_LOG_LEVEL", "6")

chapter = session.open("03_memory_layouts")
device, sizes, on_gpu, threads = chapter.device, chapter.sizes, chapter.on_gpu, chapter.threads
ceiling = ceilings.measure()
print(f"torch {torch.__version__} on {device}; batch {sizes.cnn_batch}, image {sizes.cnn_image}")




ceiling

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
print("permute(0, 2, 3, 1) of channels_last is contiguous:", img_cl.permute(0, 2, 3, 1).is_contiguous())

# %%
figures.grid_and_strip(img_cl, highlight=(0, 1, 0, 1))

# %%
widgets.AddressGrid(img_cl, title="a 1x3x2x2 image in channels_last")

# %% [markdown]
# ## Converting a model
#
# `model.to(memory_format=torch.channels_last)` restrides every 4-D parameter (the
# convolution weights) and leaves the rest alone. The ResNet-50 here is `labkit.models.resnet`:
# the same network as torchvision's (same module names and 25,557,032 parameters; the
# tests load torchvision's weights into it where torchvision is installed), random weights.

# %% tags=["nbval-check-output"]
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

# %% jupyter={"source_hidden": true}
probe_image = 64 if not on_gpu else 224
probe = torch.randn(1, 3, probe_image, probe_image)
records = resnet.trace_layouts(model_cl, probe.to(memory_format=torch.channels_last))
first_change = propagation.first_not_channels_last(records)
quiz_propagation = widgets.Quiz(
    "Channels_last model, channels_last input: the first module whose output is not channels_last is ...",
    choices=list(propagation.QUIZ_CHOICES),
    answer=lambda: propagation.quiz_choice(first_change),
    explanation="A 1x1 map (avgpool's output) is channels_last and NCHW at once ('both': the two "
                "formats give the same strides), so it has not dropped channels_last. fc returns "
                "a 2-D tensor: no channel dim left to order.",
)
quiz_propagation

# %% tags=["nbval-check-output"]
summary: dict = {}
for r in records:
    summary[(r.kind, r.verdict)] = summary.get((r.kind, r.verdict), 0) + 1
print(f"{'module kind':<20}{'channels_last':<15}{'count':>6}")
for (kind, verdict), count in summary.items():
    print(f"{kind:<20}{verdict:<15}{count:>6}")
print("\nlast modules:")
for r in records[-4:]:
    print(f"  {r.name:<10} {r.kind:<18} {r.input_format:>13} -> {r.output_format:<13} channel stride {r.output_stride[1]}")
dropped = [r for r in records if r.output_format not in propagation.STILL_CHANNELS_LAST]
print(f"\n{len(records) - len(dropped)} of {len(records)} modules return channels_last (counting a 1x1 "
      f"map, where both formats agree); the first that does not: {first_change.name} "
      f"({first_change.kind}, output {first_change.output_format}).")

# %% [markdown]
# Mixed cases: a channels_last model fed an NCHW image, and the other way round.

# %% tags=["nbval-check-output"]
for title, net, x in [("channels_last model, NCHW input", model_cl, probe),
                      ("NCHW model, channels_last input", model, probe.to(memory_format=torch.channels_last))]:
    first = resnet.trace_layouts(net, x, include=lambda m: isinstance(m, torch.nn.Conv2d))[0]
    print(f"{title}: conv1 gets {first.input_format}, returns {first.output_format}")

# %% [markdown]
# Single operations on a channels_last activation `a` (and an NCHW `b` of the same shape):
# which keep the layout, which drop it?

# %% tags=["nbval-check-output"]
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
outcomes = {}
for name, op in operations.items():
    with copies.detect() as log:
        out = op()
    outcomes[name] = (resnet.memory_format_of(out), log.total_bytes)
lost = [k for k, (fmt, _) in outcomes.items() if fmt not in ("channels_last", "both")]
print(f"\nThese do not return channels_last: {', '.join(lost) or 'none'}.")
print("a.contiguous() copies", outcomes["a.contiguous()"][1], "bytes: it means contiguous_format, "
      "so on a channels_last tensor it is a full layout conversion, not a no-op.")
if outcomes["a + b (b NCHW)"][0] != outcomes["b + a"][0]:
    print(f"a + b gives {outcomes['a + b (b NCHW)'][0]}, b + a gives {outcomes['b + a'][0]}: with mixed "
          "layouts the output follows the first operand, so the order of a sum decides the layout.")

# %% [markdown]
# ## C22: must NHWC be converted before the GEMM?
#
# A convolution's channel mixing is a GEMM over a `[pixels, channels]` matrix. Feed a
# channels_last activation to a channels_last 3x3 convolution and predict first.

# %% jupyter={"source_hidden": true}
conv_dtype = torch.float16 if on_gpu else torch.float32
channels = 64
conv = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False).to(device, conv_dtype).eval()
conv_cl = copy.deepcopy(conv).to(memory_format=torch.channels_last)
side = sizes.cnn_image // 4
act = torch.randn(sizes.cnn_batch, channels, side, side, device=device, dtype=conv_dtype)
act_cl = act.to(memory_format=torch.channels_last)
def reshape_copies_from() -> str:
    """Which layouts' [pixels, channels] reshape copies, read off the copy detector."""
    flat = {name: copies.bytes_copied(lambda t=t: t.permute(0, 2, 3, 1).reshape(-1, channels))
            for name, t in (("NCHW", act), ("NHWC", act_cl))}
    copied = [name for name, nbytes in flat.items() if nbytes]
    return {("NCHW",): "from NCHW only", ("NHWC",): "from NHWC only",
            ("NCHW", "NHWC"): "from both"}.get(tuple(copied), "from neither")


quiz_c22 = widgets.Quiz(
    "The GEMM view of a batch of activations: x.permute(0, 2, 3, 1).reshape(-1, C) gives the "
    "[pixels, channels] matrix. For which input layout does that reshape have to copy?",
    choices=["from NCHW only", "from NHWC only", "from both", "from neither"],
    answer=reshape_copies_from,
)
quiz_c22

# %% [markdown]
# The claim, and the rule. What really runs is read two ways: the copy detector for
# aten-level copies, and the profiler for what the backend launched (on a GPU the CUDA
# kernels, where cuDNN's own layout-conversion kernels would show, e.g. `nchwToNhwcKernel`).

# %%
claims.get("C22")

# %%
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

# %% [markdown]
# The same GEMM written by hand: flatten the activation to `[pixels, channels]` with
# `permute(0, 2, 3, 1).reshape(-1, C)` and multiply by a `[C, C]` weight.

# %%
weight = torch.randn(channels, channels, device=device, dtype=conv_dtype)
with copies.detect() as nhwc_mm_log:
    act_cl.permute(0, 2, 3, 1).reshape(-1, channels) @ weight
with copies.detect() as nchw_mm_log:
    act.permute(0, 2, 3, 1).reshape(-1, channels) @ weight
print(f"[pixels, channels] @ weight from NHWC: {nhwc_mm_log.total_bytes} B copied; "
      f"from NCHW: {nchw_mm_log.total_bytes} B copied "
      f"(by {', '.join(sorted({e.op for e in nchw_mm_log.copies})) or 'nothing'})")
c22 = chapter.judge("C22", {
    "conv_conversion_bytes": conv_log.total_bytes,
    "conversion_kernels": [k for k in nhwc_ops if CONVERSION_KERNEL.search(k)],
    "nchw_conversion_kernels": [k for k in nchw_ops if CONVERSION_KERNEL.search(k)],
    "conv_output_format": resnet.memory_format_of(conv_out),
    "channel_matmul_nhwc_copy_bytes": nhwc_mm_log.total_bytes,
    "channel_matmul_nchw_copy_bytes": nchw_mm_log.total_bytes,
    "backend_ops": nhwc_ops, "device": str(device), "dtype": str(conv_dtype),
}, form=claims.SEED_FORM if on_gpu else
    f"analogue: CPU (the seed: a GPU with cuBLAS), float32, batch {sizes.cnn_batch}, {threads} threads")
claims.table([c22])

# %%
def to_nhwc_kernels(ops: list[str]) -> list[str]:
    """The backend's NCHW-to-NHWC conversion kernels among the ops that ran."""
    return [k for k in ops if re.search(r"(?i)nchw_?to_?nhwc|nchw2nhwc", k)]


if on_gpu:
    shown_ops, where_ops = nchw_ops, "this GPU"
else:
    recorded_c22 = chapter.recorded("verdict:C22")
    shown_ops = (recorded_c22 or {}).get("evidence", {}).get("nchw_conversion_kernels", [])
    where_ops = f"{results.DEFAULT_REFERENCE} (recorded)"
found = to_nhwc_kernels(shown_ops)
if found:
    print(f"On {where_ops}, the NCHW convolution ran {len(found)} NCHW-to-NHWC conversion "
          f"kernel(s), e.g. {found[0].split('<')[0].split('::')[-1]}: cuDNN converts NCHW input "
          "to NHWC internally, the opposite of the seed's 'NHWC must become NCHW'.")
else:
    print(f"On {where_ops}, no NCHW-to-NHWC conversion kernel was profiled.")
if not on_gpu:
    print("On this CPU, oneDNN's reorders happen inside its kernels, invisible to both checks "
          "here (ONEDNN_VERBOSE=1 prints them): the CPU form can only come out 'refuted'.")

# %% [markdown]
# The bytes copied from NCHW come from our own `permute(0, 2, 3, 1).reshape(-1, C)`, and from
# the batch dim. Flattening to `[pixels, channels]` folds N into the pixel dim: after the
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
# Nothing in BLAS asked for NCHW; it is the other way round: NHWC is the layout whose
# `[pixels, channels]` view is a matrix for any batch.

# %% [markdown]
# ## C7: is channels_last faster?
#
# First one convolution, then the whole network, each NCHW against NHWC with the same
# weights, timed interleaved, with PyTorch's defaults (on a GPU: cuDNN's heuristics pick
# the algorithm, `cudnn.benchmark` stays off). Predict first.

# %% jupyter={"source_hidden": true}
def conv_speedup() -> float:
    """A quick interleaved comparison, for the quiz's answer."""
    with torch.no_grad():
        quick = bench.compare({"NCHW": lambda: conv(act), "NHWC": lambda: conv_cl(act_cl)},
                              baseline="NHWC", rounds=3, rep_ms=100)
    return quick["NCHW"].ratio


quiz_c7 = widgets.Quiz(
    f"On this machine ({device.type}, {str(conv_dtype).replace('torch.', '')}), how much faster is the "
    "3x3 convolution in channels_last? (NCHW time / NHWC time)",
    answer=lambda: round(conv_speedup(), 2), rel_tol=0.2, unit="x",
)
quiz_c7

# %% [markdown]
# The claim and its rule. On a GPU the verdict judges the seed's own setting (fp16, batch
# 64) and shows the other dtypes and batch sizes beside it; on a CPU, float32 at the sizes
# this machine runs, the CPU form of the seed's ARM row. FLOPs are counted by PyTorch's
# `FlopCounterMode` on this very model, so each rate is a share of the matmul ceiling of
# the math it ran in: float32 convolutions on a GPU run in TF32 by default
# (`torch.backends.cudnn.allow_tf32`), so they are shown against the TF32 ceiling.
#
# On a GPU each run is also traced: how long the device was busy per call, and what share of
# the wall time it sat idle waiting for the host to launch the next kernel. Where it idles
# more than the card's threshold the run is *host-bound*: the wall clock then times Python and
# the launches, not the layout, and the verdict reads the device-busy ratio (both are printed).

# %%
claims.get("C7")


# %%
def counted_flops(net: torch.nn.Module, x: torch.Tensor) -> int:
    """FLOPs of one forward pass, counted by PyTorch (2 per multiply-add)."""
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        net(x)
    return counter.get_total_flops()


def math_of(dtype: torch.dtype) -> str:
    """The math a convolution in this dtype runs in here: TF32 for float32 on a GPU when
    cuDNN allows it (the default), else the dtype itself."""
    if on_gpu and dtype == torch.float32 and torch.backends.cudnn.allow_tf32:
        return "tfloat32"
    return str(dtype).replace("torch.", "")


def nchw_vs_nhwc(net: torch.nn.Module, net_cl: torch.nn.Module, x: torch.Tensor, rep_ms: float,
                 rounds: int = 5, **options) -> tuple:
    """Time the two layouts of the same network interleaved; (Comparison, flagged timings)."""
    x_cl = x.to(memory_format=torch.channels_last)
    with torch.no_grad():
        return chapter.measured({"NCHW": lambda: net(x), "NHWC (channels_last)": lambda: net_cl(x_cl)},
                        baseline="NCHW", rounds=rounds, rep_ms=rep_ms,
                        flops=counted_flops(net, x), flops_dtype=math_of(x.dtype), **options)


conv_cmp, _ = nchw_vs_nhwc(conv, conv_cl, act, rep_ms=200)
conv_cmp

# %%
dtypes = [torch.float32, torch.bfloat16, torch.float16] if on_gpu else [torch.float32]
batches = [16, 64, 128] if on_gpu else [1, sizes.cnn_batch]
image = sizes.cnn_image
runs, comparisons, c7_flagged, nets = [], {}, [], {}


def resnet_run(cmp, dtype: torch.dtype, batch: int) -> dict:
    """One run's evidence: images per second in each layout, the spread, shares of the ceiling."""
    nchw, nhwc = cmp["NCHW"], cmp["NHWC (channels_last)"]
    return {"dtype": str(dtype).replace("torch.", ""), "batch": batch, "image": image,
            "nchw_img_s": batch / nchw.timing.median_s, "nhwc_img_s": batch / nhwc.timing.median_s,
            "nhwc_time_ratio_iqr": [nhwc.ratio_q25, nhwc.ratio_q75], "math": nchw.timing.math,
            "nchw_pct_of_matmul_ceiling": nchw.timing.pct_of_matmul_ceiling,
            "nhwc_pct_of_matmul_ceiling": nhwc.timing.pct_of_matmul_ceiling,
            "nchw_faults_per_call": nchw.timing.minor_faults_per_call,
            "nhwc_faults_per_call": nhwc.timing.minor_faults_per_call}


for dtype in dtypes:
    net = copy.deepcopy(model).to(device, dtype)
    nets[dtype] = (net, copy.deepcopy(net).to(memory_format=torch.channels_last))
    for batch in batches:
        x = torch.randn(batch, 3, image, image, device=device, dtype=dtype)
        cmp, flagged = nchw_vs_nhwc(*nets[dtype], x, rep_ms=400, rounds=5 if on_gpu else 3,
                                    case=f"{str(dtype).replace('torch.', '')} b{batch}")
        comparisons[(str(dtype), batch)] = cmp
        c7_flagged += flagged
        runs.append(resnet_run(cmp, dtype, batch))
        if on_gpu:  # device-busy time beside wall time: is the run bound by the host's launches?
            x_cl = x.to(memory_format=torch.channels_last)
            with torch.no_grad():
                runs[-1].update(device_split.evidence(lambda net=nets[dtype][0], x=x: net(x),
                                                      lambda net=nets[dtype][1], x=x_cl: net(x)))
    if on_gpu:
        del nets[dtype]
print(f"{'dtype':<10}{'batch':>6}{'NCHW img/s':>12}{'NHWC img/s':>12}{'NHWC/NCHW':>10}  math: % of its matmul ceiling (NCHW, NHWC)"
      + ("; GPU idle (NCHW, NHWC); NCHW/NHWC device-busy time" if on_gpu else ""))
for r in runs:
    pct = ", ".join("n/a" if p is None else f"{p:.0f}%" for p in
                    (r["nchw_pct_of_matmul_ceiling"], r["nhwc_pct_of_matmul_ceiling"]))
    busy = ""
    if r.get("nchw_busy_s"):
        busy = (f"; idle {100 * r['nchw_idle_share']:.0f}%, {100 * r['nhwc_idle_share']:.0f}%"
                f"{' (host-bound)' if r['host_bound'] else ''}; "
                f"device {r['nchw_busy_s'] / r['nhwc_busy_s']:.2f}x")
    print(f"{r['dtype']:<10}{r['batch']:>6}{r['nchw_img_s']:>12.1f}{r['nhwc_img_s']:>12.1f}"
          f"{r['nhwc_img_s'] / r['nchw_img_s']:>10.2f}  {r['math']}: {pct}{busy}")

# %%
comparisons[(str(dtypes[-1]), batches[-1])]

# %% [markdown]
# On a CPU, half precision is not the seed's question, but is it an option here? One 3x3
# convolution in each dtype, measured (whether bfloat16 or float16 is fast depends on the
# CPU's matrix units: AVX-512 BF16, AMX, or none).

# %%
half_note = "not measured on a GPU (the sweep above has bfloat16 and float16)"
if not on_gpu:
    small = torch.randn(2, channels, 28, 28)
    per_dtype = {str(dt).replace("torch.", ""): (copy.deepcopy(conv).to(dt), small.to(dt))
                 for dt in (torch.float32, torch.bfloat16, torch.float16)}
    with torch.no_grad():
        half_cmp = bench.compare({k: (lambda c=c, x=x: c(x)) for k, (c, x) in per_dtype.items()},
                                 baseline="float32", rounds=3, rep_ms=150)
    half_note = ", ".join(f"{k} {v.ratio:.1f}x" for k, v in half_cmp.variants.items())
    print("3x3 convolution time relative to float32 on this CPU:", half_note)

# %% [markdown]
# On a CPU the ResNet timings above ran with glibc's default allocator. A forward pass
# allocates every activation afresh; when malloc hands large freed blocks back to the system,
# each call faults them in again. Does that decide the verdict? The same runs, with malloc
# keeping freed memory (these come last in the chapter: once malloc's thresholds are set by
# hand, glibc cannot go back to its adaptive default).

# %%
kept_runs = []
if not on_gpu:
    for batch in batches:
        x = torch.randn(batch, 3, image, image)
        cmp, _ = nchw_vs_nhwc(*nets[torch.float32], x, rep_ms=300, rounds=3, keep_allocator_memory=True)
        kept_runs.append(resnet_run(cmp, torch.float32, batch))
    for default, kept in zip(runs, kept_runs, strict=True):
        print(f"batch {default['batch']}: NHWC/NCHW {default['nhwc_img_s'] / default['nchw_img_s']:.2f}x "
              f"(default malloc, {default['nchw_faults_per_call'] or 0:,.0f} page faults per NCHW call), "
              f"{kept['nhwc_img_s'] / kept['nchw_img_s']:.2f}x (malloc keeping freed memory, "
              f"{kept['nchw_faults_per_call'] or 0:,.0f})")

# %%
seed_setting = [r for r in runs if r["dtype"] == "float16" and r["batch"] == 64]
gpu_name = env.fingerprint().get("gpu_name", str(device)) if on_gpu else ""
c7_gpu_form = (claims.SEED_FORM if "A100" in gpu_name else
               f"analogue: {gpu_name} (the seed: A100), fp16, batch 64, {image}x{image}")
c7 = chapter.judge("C7", {
    "channels_last_stride1": img_cl.stride()[1], "runs": seed_setting or runs,
    "other_runs": [r for r in runs if r not in seed_setting] if seed_setting else [],
    "kept": {"runs": kept_runs} if kept_runs else None, "flags": c7_flagged,
    "device": str(device), "half_precision_conv_on_cpu": None if on_gpu else half_note,
    "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32) if on_gpu else None,
    "conv_nhwc_time_ratio": conv_cmp["NHWC (channels_last)"].ratio,
}, form=(c7_gpu_form if seed_setting else
          f"analogue: CPU (the seed's ARM row), float32, batch {', '.join(map(str, batches))}, "
          f"{image}x{image}, {threads} threads"))
claims.table([c7])

# %% [markdown]
# ## Verdicts of this chapter
#
# C7 is stated for an A100 in fp16 (with an ARM CPU row) and C22 for cuBLAS: each verdict
# says which form it judged, and the reference GPU run's recorded verdict is beside it.

# %%
chapter.save()
chapter.table()

# %% [markdown]
# ## Exercises
#
# Write each function, run its cell, and the checker compares it with torch on many random
# shapes and shows the first case it gets wrong. `.solution()` shows a reference.

# %%
exercises.get("03.channels_last_strides")


# %%
def channels_last_strides(shape: tuple) -> tuple:
    raise NotImplementedError  # your code here


exercises.get("03.channels_last_strides").check(channels_last_strides)

# %%
exercises.get("03.element_at")


# %%
def element_at(shape: tuple, position: int) -> tuple:
    raise NotImplementedError  # your code here


exercises.get("03.element_at").check(element_at)

# %% [markdown]
# ## What to remember
#
# Each line below is computed from this run's measurements.

# %%
ratios = ", ".join(f"{r['dtype']} b{r['batch']} {r['nhwc_img_s'] / r['nchw_img_s']:.2f}x" for r in runs)
takeaways = [
    f"channels_last is a stride pattern: same shape, strides {img_cl.stride()} for a 1x3x2x2 image.",
    f"It survives a whole ResNet-50: {len(records) - len(dropped)} of {len(records)} modules keep it. "
    f"Of the single ops tried, {', '.join(lost) or 'none'} do not return it.",
    f"No conversion for the GEMM: the channels_last convolution copied {c22.evidence['conv_conversion_bytes']} "
    f"bytes and returned {c22.evidence['conv_output_format']}; the only copy was our own NCHW reshape (C22).",
    f"Whether it is faster depends on the machine: NHWC/NCHW images per second here: {ratios} (C7).",
]
if kept_runs:
    faults = runs[-1]["nchw_faults_per_call"] or 0
    takeaways.append(
        ("The allocator was part of these CPU timings" if faults >= 100 else
         "The allocator did not decide these CPU timings")
        + f": {faults:,.0f} page faults per NCHW call with glibc's default malloc, "
        f"{kept_runs[-1]['nchw_faults_per_call'] or 0:,.0f} with it keeping freed memory; NHWC/NCHW then "
        + ", ".join(f"b{k['batch']} {k['nhwc_img_s'] / k['nchw_img_s']:.2f}x" for k in kept_runs) + ".")
for line in takeaways:
    print("-", line)
