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
# # 06 DDP and layout drift
#
# DistributedDataParallel (DDP) keeps one model per process and, during `backward`, sums the
# gradients of all processes ("ranks") with all-reduce. It does not all-reduce each gradient on
# its own: it copies them into a few flat **buckets** and reduces those. Each gradient has a
# **bucket view**, a strided window into a bucket. This chapter is about what happens when a
# gradient's strides and its bucket view's strides disagree, which is what converting a model
# to `channels_last` after wrapping it does. It tests the seed's section 4.3 (`000_...txt`) as
# three claims on real processes: C14a (the ranks' views disagree), C14b (channels_last with AMP
# gives silently wrong numbers, as the seed says it, judged by converting both before and after
# wrapping) and C14c (the seed's backward hook fixes it). That a conversion *after* wrapping
# silently gives wrong gradients is this course's own finding, not the seed's claim.

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
import time

import torch

from labkit import claims, exercises, session
from labkit.chapters.ch06_ddp_layout_drift import claims as ch06
from labkit.chapters.ch06_ddp_layout_drift import ddp_launch, ddp_worker, layout_contract
from labkit.show import widgets

chapter = session.open("06_ddp_layout_drift")
on_gpu = chapter.on_gpu
world_size = ddp_launch.default_world_size()
backend = ddp_launch.backend_for(world_size)
print(f"torch {torch.__version__}; {ddp_launch.describe(world_size)}")

# %% [markdown]
# ## The claim
#
# The seed says that channels_last plus mixed precision makes DDP's all-reduce see tensors
# with differing strides and storage offsets, so the ranks' views of the data disagree
# (NCCL reading illegal memory, or numbers drifting silently), and it gives a fix: a full
# backward hook that makes every gradient contiguous. That is three statements, each with its
# own rule (the old single C14 bundled them and is retired):

# %%
claims.get("C14a")

# %%
claims.get("C14b")

# %%
claims.get("C14c")

# %% [markdown]
# The seed's fix, as it is written there (its comment translated):

# %%
print(ch06.SEED_FIX_CODE)

# %% [markdown]
# ## The gradient layout contract
#
# Two rules, both in PyTorch's source, decide whether DDP warns:
#
# - **the layout contract**: `AccumulateGrad` keeps the gradient a kernel returns as `.grad` when
#   its strides equal the parameter's *on every dim whose size is not 1*, and otherwise stores a
#   copy with the parameter's strides (`obeys_layout_contract` in
#   `torch/csrc/autograd/utils/grad_layout_contract.h`). The size-1 exemption matters below;
# - **the bucket view**: when DDP builds its buckets it gives each bucket view the strides of
#   its parameter *at that moment*. It builds them when it wraps the model, and once more at
#   the start of the second iteration (in the order gradients arrived).
#
# When they disagree, the reducer warns "Grad strides do not match bucket view strides" and
# copies the gradient into the bucket with a strided copy. The model used here is small: three
# convolutions (3x3, 3x3 and 1x1), BatchNorm and a linear head. Its parameters in both formats:

# %% tags=["nbval-check-output"]
model = ddp_worker.small_cnn(16)
model_cl = ddp_worker.small_cnn(16).to(memory_format=torch.channels_last)
print(f"{'parameter':<10}{'shape':<18}{'NCHW strides':<18}{'channels_last strides'}")
for (name, p), (_, q) in zip(model.named_parameters(), model_cl.named_parameters(), strict=True):
    print(f"{name:<10}{str(tuple(p.shape)):<18}{str(p.stride()):<18}{q.stride()}"
          + ("   <- changed" if p.stride() != q.stride() else ""))

# %% [markdown]
# (Chapter 03's exercise `03.channels_last_strides` derives the right-hand column.)
#
# ### The size-1 exemption, asked of torch
#
# A 1x1 convolution's weight `(K, C, 1, 1)` walks memory in the same order in NCHW and in
# channels_last; only the strides of its size-1 dims differ. cuDNN often returns such a
# weight's gradient in channels_last. Here a tiny autograd function hands a *contiguous*
# parameter a gradient with channels_last strides, and `AccumulateGrad` decides what to keep.
# Predict: which of the two is kept as it came?

# %% tags=["nbval-check-output"]
for shape in [(32, 16, 1, 1), (16, 3, 3, 3)]:
    given = torch.empty(shape).to(memory_format=torch.channels_last).stride()
    kept = layout_contract.kept_grad_stride(shape, given)
    print(f"weight {shape}: param strides {torch.empty(shape).stride()}, kernel's gradient {given}, "
          f".grad kept {kept}: {'kept as it came' if kept == given else 'restrided to the parameter'}; "
          f"DDP warns: {layout_contract.ddp_warns(shape, given)}")

# %% [markdown]
# The 1x1 gradient is kept with channels_last strides (they differ from the parameter's only
# on size-1 dims), and DDP, whose check compares every stride with the bucket view's, warns
# about a model nobody converted. That is why a GPU run warns for 1x1 convolutions before any
# `channels_last` (pytorch/pytorch#47163, #70222), and why the warning is harmless there: the
# bytes are already in order. Exercise 2 below models it.

# %% [markdown]
# ## The run
#
# One run trains six variants of the same model, one after the other, in every process. The
# processes are fresh Python interpreters that import `labkit.chapters.ch06_ddp_layout_drift.ddp_worker` (read it: it is
# what runs in each rank), joined exactly as `torchrun` joins them. A rank that fails ends the
# run with its traceback; a collective that hangs is killed after a timeout, with a message.
#
# | variant | what it does |
# | --- | --- |
# | a | wrap, then `model.to(memory_format=torch.channels_last)`: the seed's drift |
# | b | (a) plus the seed's hook, exactly as written |
# | b2 | (a) plus the seed's hook, given the signature PyTorch calls it with |
# | c | convert first, then wrap |
# | d | (e) with `gradient_as_bucket_view=True` and `zero_grad(set_to_none=False)` |
# | e | wrap, train two steps, then convert: after DDP rebuilt its buckets |
#
# One rank is not DDP, so a run always has two or more. With two or more GPUs: one process per
# GPU over NCCL, the seed's setting. With one GPU: two processes share it over **gloo with CUDA
# tensors** (NCCL refuses two ranks on one GPU). On a CPU: two processes over gloo. The first
# line printed above says which this run is.
#
# Mixed precision: on a GPU the seed's own AMP, float16 autocast with a `GradScaler` (the
# worker unscales before it reads the gradients, and scales its reference the same way); on a
# CPU bf16 autocast only where it has bf16 units (AVX512-BF16 or AMX, read from
# `/proc/cpuinfo`), so that a CPU without them times the layout, not bf16 arithmetic it has no
# hardware for.

# %%
if on_gpu:
    run_config = {"batch": 64, "image": 64, "width": 64, "timed_steps": 30, "amp": "fp16"}
else:
    run_config = {"batch": 8, "image": 32, "width": 16, "timed_steps": 10}
started = time.perf_counter()
result = ddp_launch.launch(run_config, world_size, timeout_s=300)
rows = {row["name"]: row for row in ddp_launch.variant_summary(result)}
amp = result["ranks"][0][0]["amp_dtype"]
print(f"{result['world_size']} ranks over {result['backend']} on {result['device']}, "
      f"{len(rows)} variants, mixed precision: {amp}; took {time.perf_counter() - started:.0f} s")

# %% [markdown]
# ## Does the warning come back?
#
# In variant (a) the model goes to channels_last right after DDP wrapped it. Predict before
# you read the table.

# %% jupyter={"source_hidden": true}
quiz_steps = widgets.Quiz(
    "Converted to channels_last right after wrapping: on which training steps does DDP warn "
    "'Grad strides do not match bucket view strides'?",
    choices=["never", "on step 0 only", "on every step", "from step 1 on"],
    answer=lambda: ("never" if sum(a_steps) == 0 else "on step 0 only" if a_steps[0] and not sum(a_steps[1:])
                    else "on every step" if all(a_steps) else "from step 1 on"),
    explanation="DDP rebuilds its buckets once, at the start of the second iteration, from the "
                "parameters' strides at that moment.",
)
a_steps = result["ranks"][0][0]["warnings_by_step"]
quiz_steps

# %%
print(f"{'variant':<22}{'warnings per step (rank 0)'}")
for name, report in zip(rows, result["ranks"][0], strict=True):
    steps = report["warnings_by_step"]
    error = f"   stopped: {rows[name]['error']}" if rows[name]["error"] else ""
    print(f"{name:<22}{' '.join(str(n) for n in steps) or '-'}{error}")

# %% tags=["nbval-check-output"]
# The counts above depend on the machine (a GPU's cuDNN hands back some 1x1 gradients in
# channels_last, a CPU does not), so this checked cell prints only rules that hold everywhere.
a_by_step = result["ranks"][0][0]["warnings_by_step"]
e_by_step = next(r for r in result["ranks"][0] if r["variant"]["name"] == "e_late_drift")["warnings_by_step"]
print("(a) converted after wrapping warns on step 0:", a_by_step[0] > 0)
print("(a) warns less after DDP's bucket rebuild (step 1 on) than on step 0:", max(a_by_step[1:]) < a_by_step[0])
print("(e) converted after the rebuild still warns on its last step:", e_by_step[-1] > 0)

# %% [markdown]
# The warning is `TORCH_WARN_ONCE`: normally it prints once per process, whatever happens
# later. The worker sets `torch.set_warn_always(True)`, so every parameter that disagrees
# warns on every step, and the counts above mean something.
#
# ## The contract, parameter by parameter
#
# Variant (a), step 0: each parameter's strides, its gradient's, and its bucket view's (read
# from the warning's own text when it warned, otherwise DDP's rule). Predict first:

# %% jupyter={"source_hidden": true}
quiz_1x1 = widgets.Quiz(
    "The 1x1 convolution's weight (32, 32, 1, 1) changes strides under channels_last, so DDP "
    "warns about it. Does copying its gradient into the bucket move any byte out of order?",
    choices=["yes, it is a permuting copy like the 3x3 weights", "no, its bytes are already in order"],
    answer=lambda: ("yes, it is a permuting copy like the 3x3 weights" if one_by_one["memory_order_differs"]
                    else "no, its bytes are already in order"),
    explanation="A dim of size 1 is never stepped along: its stride says nothing about memory order.",
)
step0 = result["ranks"][0][0]["observed"][0]["parameters"]
one_by_one = next(p for p in step0 if p["shape"][2:] == [1, 1])
quiz_1x1

# %%
print(f"{'parameter':<10}{'param':<18}{'grad':<18}{'bucket view':<18}{'warned':<8}{'order differs':<14}bucket view from")
for p in step0:
    print(f"{p['name']:<10}{str(tuple(p['param_stride'])):<18}{str(tuple(p['grad_stride'])):<18}"
          f"{str(tuple(p['bucket_stride'])):<18}{'yes' if p['warned'] else '':<8}"
          f"{'yes' if p['memory_order_differs'] else '':<14}{p['bucket_stride_source']}")
warned = [p for p in step0 if p["warned"]]
free = [p["name"] for p in warned if not p["memory_order_differs"]]
print(f"\n{len(warned)} of {len(step0)} parameters warned; {len(free)} of them ({', '.join(free) or 'none'}) "
      "differ in strides only, not in memory order: their copy is a straight memcpy")

# %% [markdown]
# ## Exercise 1: a straight copy or a permuting one?

# %%
exercises.get("06.copy_in_order")


# %%
def copy_in_order(shape: tuple[int, ...], src_stride: tuple[int, ...], dst_stride: tuple[int, ...]) -> bool:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
exercises.get("06.copy_in_order").check(copy_in_order)

# %% [markdown]
# ## The seed's fix, applied as written
#
# Variant (b) registers the seed's hook on the DDP-wrapped model exactly as the seed does.
# Predict:

# %% jupyter={"source_hidden": true}
quiz_hook = widgets.Quiz(
    "Does the seed's hook, applied as written, remove the warning and keep training?",
    choices=["yes", "it runs, but the warning stays", "it raises an error in the first backward"],
    answer=lambda: ("it raises an error in the first backward" if rows["b_seed_fix"]["error"]
                    else "yes" if rows["b_seed_fix"]["warnings_step0"] == 0 else "it runs, but the warning stays"),
    explanation="register_full_backward_hook calls hook(module, grad_input, grad_output), and "
                "grad_input are the gradients of the module's inputs, not of its parameters.",
)
quiz_hook

# %%
for name in ("b_seed_fix", "b2_seed_hook_fitted", "a_drift"):
    row = rows[name]
    outcome = (f"raised {row['error']}" if row["error"] else
               f"ran {row['steps']} steps; warnings on step 0: {row['warnings_step0']}, after: {row['warnings_after_step0']}")
    print(f"{name:<22}{outcome}")

# %% [markdown]
# What the seed's hook really does: `register_full_backward_hook` calls a hook with three
# arguments (the module, the gradients of its *inputs*, the gradients of its outputs), so the
# one-argument `_ddp_reduce_hook(grad)` raises a `TypeError` in the first `backward`, on every
# rank at once. Given the signature PyTorch expects (b2), it runs, but it only restrides the
# gradients flowing into the model's input (here none: the images do not require grad). It
# never touches a parameter's gradient, the only thing DDP puts in a bucket, so the warning is
# exactly as in (a). Nor would a hook that did reach a parameter's gradient help: by the layout
# contract above, AccumulateGrad gives the gradient its parameter's strides again (on every dim
# larger than 1), so the mismatch is between the parameter and its bucket view, and it goes
# away only when the two agree (convert before wrapping).
#
# ## What the drift costs
#
# Bytes are counted at torch's dispatcher in rank 0 (the reducer writes each gradient into its
# bucket with `mul.out(grad, 1/world, out=bucket_view)` and, unless the gradient *is* the
# bucket view, copies the reduced bucket back: "out of buckets", which also counts the copy
# from the old buckets into the new ones when DDP rebuilds them). "Steady" is the last observed
# step, after the rebuild and after (e)'s late conversion. Step times come from `labkit.measure.bench`, with the same
# number of calls in every rank (a collective needs all of them).

# %%
def size_text(n: int | None) -> str:
    return "-" if n is None else f"{n / 1024:.1f} KiB"


def time_text(row: dict) -> str:
    if row["median_step_s"] is None:
        return "-"
    flag = " (noisy)" if row["timing_noisy"] else ""
    return f"{row['median_step_s'] * 1e3:.2f} ms ± {row['iqr_step_s'] * 1e3:.2f}{flag}"


print(f"{'variant':<22}{'into buckets':>14}{'out of buckets':>15}{'permuting':>12}{'permuting @0':>14}"
      f"{'grad memory':>13}  {'step time (median ± IQR)'}"
      + ("   peak GPU memory" if on_gpu else ""))
for name, row in rows.items():
    peak = f"   {row['peak_memory_bytes'] / 2**20:.0f} MiB" if row["peak_memory_bytes"] else ""
    print(f"{name:<22}{size_text(row['into_bucket_bytes']):>14}{size_text(row['back_to_grad_bytes']):>15}"
          f"{size_text(row['permuting_bytes']):>12}{size_text(row['permuting_bytes_step0']):>14}"
          f"{size_text(row['separate_grad_bytes']):>13}  {time_text(row)}{peak}")

# %% [markdown]
# "grad memory" is gradient storage outside the buckets. With `gradient_as_bucket_view` (d) the
# gradients *are* the bucket views; step by step, before and after its late conversion:

# %%
reports = {report["variant"]["name"]: report for report in result["ranks"][0]}
for observed in reports["d_bucket_view"]["observed"]:
    traffic = observed["traffic"]
    print(f"d_bucket_view step {observed['step']}: into buckets {size_text(traffic['into_bucket_bytes'])}, "
          f"out of buckets {size_text(traffic['back_to_grad_bytes'])}, "
          f"grad memory outside the buckets {size_text(observed['separate_grad_bytes'])}")

# %% [markdown]
# What the persistent drift (e) costs in time against the same model converted first (c), from
# the medians and their spreads:

# %%
def step_cost(drifted: dict, matched: dict) -> str:
    if drifted["median_step_s"] is None or matched["median_step_s"] is None:
        return "not timed"
    ratio = drifted["median_step_s"] / matched["median_step_s"]
    spread = (drifted["iqr_step_s"] + matched["iqr_step_s"]) / matched["median_step_s"]
    verdict = ("within the spread: no cost this run can resolve" if abs(ratio - 1) <= spread
               else "slower" if ratio > 1 else "faster")
    noisy = " (the harness flags a timing as noisy)" if drifted["timing_noisy"] or matched["timing_noisy"] else ""
    return f"(e)/(c) step time {ratio:.2f}x, spread ±{spread:.2f}: {verdict}{noisy}"


print(step_cost(rows["e_late_drift"], rows["c_convert_first"]))
print(f"the permuting copy moves {size_text(rows['e_late_drift']['permuting_bytes'])} per step "
      f"of {size_text(rows['e_late_drift']['into_bucket_bytes'])} copied into the buckets")

# %% [markdown]
# ### The cost with realistic gradients
#
# The model above has a few dozen KiB of gradients: on any machine its permuting copy hides in
# the step's noise. A ResNet-50 has about 94 MB of float32 gradients. On a GPU this chapter
# runs it too, (c) converted first against (e) drifted after the rebuild, and records the
# result; on a CPU (where a ResNet-50 DDP step would take this chapter past its time budget)
# it shows the reference GPU's recorded figure: that is where the cost shows.

# %%
RESNET_CONFIG = {"model": "resnet50", "variants": ["c_convert_first", "e_late_drift"], "batch": 32,
                 "image": 224, "observed_steps": 3, "timed_steps": 30}
if on_gpu:
    big = ddp_launch.launch(RESNET_CONFIG, world_size, timeout_s=540)
    big_rows = {row["name"]: row for row in ddp_launch.variant_summary(big)}
    big_cost = {"world_size": big["world_size"], "backend": big["backend"], "device": big["device"],
                "config": big["config"], "rows": big_rows,
                "verdict": step_cost(big_rows["e_late_drift"], big_rows["c_convert_first"])}
    chapter.record("ddp_resnet50_cost", big_cost)
else:
    big_cost = chapter.recorded("ddp_resnet50_cost")
    if big_cost is None:
        print("The reference GPU run has not recorded the ResNet-50 cost yet (it records it when "
              "this chapter runs on a GPU).")
if big_cost is not None:
    e_big, c_big = big_cost["rows"]["e_late_drift"], big_cost["rows"]["c_convert_first"]
    print(("Recorded on the reference GPU: " if not on_gpu else "")
          + f"ResNet-50, {big_cost['world_size']} ranks over {big_cost['backend']} on {big_cost['device']}, "
          f"batch {big_cost['config']['batch']} at {big_cost['config']['image']} px")
    print(f"  permuting copy per step: {size_text(e_big['permuting_bytes'])} of "
          f"{size_text(e_big['into_bucket_bytes'])} copied into the buckets")
    print(f"  step time (c) {time_text(c_big)}, (e) {time_text(e_big)}")
    print(f"  {big_cost['verdict']}")

# %%
chapter.record("ddp_variants", {"config": result["config"], "backend": result["backend"],
                                         "world_size": result["world_size"], "device": result["device"],
                                         "amp_dtype": amp, "variants": list(rows.values())})
if not on_gpu:
    recorded_rows = chapter.recorded("ddp_variants")
    if recorded_rows is None:
        print("The reference GPU run (NCCL) has recorded nothing for this chapter yet.")
    else:
        print(f"Recorded on the reference machine: {recorded_rows['world_size']} ranks over "
              f"{recorded_rows['backend']} on {recorded_rows['device']}, mixed precision {recorded_rows['amp_dtype']}")
        for row in recorded_rows["variants"]:
            print(f"  {row['name']:<22}warnings {row['warnings_step0']} at step 0, "
                  f"{row['warnings_after_step0']} after; identical: {row['params_identical']}; {time_text(row)}"
                  + (f"; raised {row['error']}" if row["error"] else ""))

# %% [markdown]
# ## The mechanism, in `reducer.cpp`
#
# Three steps of DDP's reducer (`torch/csrc/distributed/c10d/reducer.cpp`) decide what the
# optimizer gets; read them before the next prediction.
#
# 1. **Building the buckets** (`initialize_bucket_views`, at wrap time and at the rebuild in
#    the second iteration): each parameter's *in* view is cut from the flat bucket with the
#    parameter's strides at that moment, `bucket.as_strided(v.sizes(), v.strides(), offset)`.
# 2. **Into the bucket** (`mark_variable_ready_dense`): the gradient is written into its *in*
#    view, dividing while copying (`mul_out(bucket_view, grad, 1/world)`). If the strides
#    differ it warns "Grad strides do not match bucket view strides ... This is not an error"
#    and the copy is strided. So far every value lands in the right place.
# 3. **Back out, after the all-reduce** (`populate_bucket_views_out`, then
#    `copy_bucket_to_grad`): the *out* views are rebuilt, again with
#    `tensor.as_strided(v.sizes(), v.strides(), offset)`, from the parameter's **current**
#    strides, and each gradient is copied back through its *out* view.
#
# After a late `channels_last` conversion, step 2 wrote the reduced values in the build-time
# (NCHW) order, and step 3 reads the same bytes back through channels_last strides. Predict
# what that does to the gradients before the next table shows them.
#
# %% [markdown]
# ## Do the ranks still agree, and are the gradients right?
#
# Two different questions. After every variant each rank gathers every rank's parameters
# (`all_gather` of one flat tensor) and compares them bit for bit: if the drift made the
# ranks' views of the data disagree, as the seed says, this is where it would show. And on the
# observed steps every rank also computes what DDP's gradients must be: its own local
# gradient from a plain copy of the model on the same batch, summed over the ranks by an
# explicit `all_reduce` and divided by the world size. Predict first:

# %% jupyter={"source_hidden": true}
quiz_grads = widgets.Quiz(
    "Variant (a): DDP warned on step 0 and copied the gradients into their buckets with a "
    "strided copy. Is every gradient it hands to the optimizer on step 0 right?",
    choices=["yes: the warning is only about speed", "no: some gradients hold wrong values"],
    answer=lambda: ("no: some gradients hold wrong values" if rows["a_drift"]["wrong_grads"]
                    else "yes: the warning is only about speed"),
    explanation="The warning itself says 'This is not an error, but may impair performance.' "
                "Compare with the reference gradients below.",
)
quiz_grads

# %%
for name, row in rows.items():
    if row["error"]:
        print(f"{name:<22}stopped before any gradient: {row['error'].split(':')[0]}")
        continue
    grads = ("right on every observed step" if not row["wrong_grads"] else
             f"WRONG on steps {row['wrong_grad_steps']} for {', '.join(row['wrong_grads'])}: "
             + "; ".join(row["wrong_grad_diagnosis"]))
    print(f"{name:<22}ranks identical: {row['params_identical']!s:<6} gradients {grads}")
same = reports["a_drift"]["param_checksum"] == reports["c_convert_first"]["param_checksum"]
print(f"\nafter {rows['a_drift']['steps']} steps (a) and (c) end with {'the same' if same else 'different'} "
      "parameters, though they differ only in when the model was converted")

# %% [markdown]
# Every rank reduces the same buckets and gets the same sums, so whatever goes wrong in the
# reducer goes wrong the same way on every rank: comparing the ranks with each other cannot
# catch it, comparing each gradient with a reference can. What this run found:

# %%
explanations = {
    "all zeros": "the gradient left its bucket when the model was converted (gradient_as_bucket_view), "
                 "so DDP reduces a bucket slot nothing writes to and hands back zeros, without a warning",
    "the right values, in the bucket view's memory order, read with the param's strides":
        "the gradient holds the right numbers in the bucket view's memory order, read through the "
        "parameter's strides: the values sit in the wrong places",
    "other": "the gradient differs from the reference in a way the worker does not recognise",
}
for name, row in rows.items():
    for why in row["wrong_grad_diagnosis"]:
        print(f"{name}: on steps {row['wrong_grad_steps']}, {explanations.get(why, why)}")
if not any(row["wrong_grads"] for row in rows.values()):
    print("every gradient matched the reference: here the drift costs copies, not correctness")
print(f"(torch {result['torch']}; another release may behave differently, and the recorded reference "
      "run names its own)")

# %% [markdown]
# The same finding in 60 lines of plain PyTorch, no labkit, for a bug report:
# [`scripts/ddp_drift_repro.py`](../scripts/ddp_drift_repro.py) (2 CPU processes over gloo,
# `python scripts/ddp_drift_repro.py`; its expected output is in its docstring, and a test runs
# it on every CI run).

# %% [markdown]
# ## Exercise 2: the layout contract, and which gradients DDP warns about

# %%
exercises.get("06.drift_report")


# %%
def drift_report(shape: tuple[int, ...], grad_stride: tuple[int, ...]) -> tuple[tuple[int, ...], bool]:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
exercises.get("06.drift_report").check(drift_report)

# %% [markdown]
# ## The verdicts: C14a, C14b, C14c
#
# The seed's setting is NCCL across GPUs with AMP as fp16 autocast plus GradScaler. A run is
# labelled the seed's form only when it is exactly that (NCCL, float16 with GradScaler);
# anything else (gloo, one GPU, bf16, float32) is labelled an analogue and names what it ran.

# %%
amp_text = {"off": "float32 (no bf16 units here)", "bfloat16": "bf16 autocast, no GradScaler",
            "float16": "fp16 autocast with GradScaler"}.get(amp, amp)
form = (claims.SEED_FORM if result["backend"] == "nccl" and amp == "float16"
        else f"analogue: {result['backend']}, {result['world_size']} processes on {result['device']}, "
             f"{amp_text} (the seed: NCCL, fp16 autocast with GradScaler)")
evidence = ch06.evidence_from_run(result)
for claim in ch06.CLAIMS:
    verdict = chapter.judge(claim.id, evidence, form=form)
    print(verdict.claim_id, verdict.label, "--", verdict.reason.split(". ")[0])
nearest = claims.get("C14c").judge(ch06.nearest_form_evidence(evidence), form=ch06.NEAREST_HOOK_FORM)
print(f"\nC14c judged again on the {ch06.NEAREST_HOOK_FORM}:\n  {nearest.label} -- {nearest.reason}")

# %% [markdown]
# The hook as written never runs, so C14c as written is refuted by its own `TypeError`; the
# verdict on its nearest working form, labelled, says whether the idea would have helped.
# The reference GPU run's verdicts, labelled as recorded:

# %%
gpu_form = (claims.recorded_evidence([c.id for c in ch06.CLAIMS]) if not on_gpu
            else "This run is on GPUs: the verdicts above are the GPU's (form as labelled).")
gpu_form

# %%
chapter.save()
chapter.table()

# %% tags=["nbval-check-output"]
print(claims.table(chapter.verdicts).structure())

# %% [markdown]
# ## On several machines: the same run with torchrun
#
# `scripts/ddp_layout_drift.py` runs these variants under `torchrun`, so the same worker code
# spans several GPUs or several machines (one process per GPU; NCCL's NVLink multicast off):
#
# ```bash
# # one machine, every GPU (or 2 CPU processes over gloo):
# torchrun --standalone --nproc-per-node=gpu scripts/ddp_layout_drift.py --out ddp.json
# # two machines with 8 GPUs each, run on both (node-rank 0 and 1):
# torchrun --nnodes=2 --nproc-per-node=8 --node-rank=0 --rdzv-backend=c10d \
#     --rdzv-endpoint=HOST0:29500 scripts/ddp_layout_drift.py --out ddp.json
# ```

# %% [markdown]
# ## What to remember
#
# Each line below is built from what this run measured.

# %%
a, e, c, d = rows["a_drift"], rows["e_late_drift"], rows["c_convert_first"], rows["d_bucket_view"]
takeaways = [
    f"Converting after wrapping warned {a['warnings_step0']} times on step 0 and {a['warnings_after_step0']} "
    f"times in the {a['steps'] - 1} steps after: DDP rebuilds its buckets from the strides it finds at the "
    f"second iteration. Converting after that rebuild (e) warned {e['warnings_last_step']} times on its last step.",
    f"Strides that differ are not always bytes that move: {len(free)} of the {len(warned)} warned "
    "parameters (1x1 kernels) differ only on size-1 dims, and their copy is a plain memcpy.",
    f"The seed's hook as written {'raised ' + rows['b_seed_fix']['error'] if rows['b_seed_fix']['error'] else 'ran'}; "
    f"with the signature PyTorch expects it gave {rows['b2_seed_hook_fitted']['warnings_step0']} warnings on "
    f"step 0 against {a['warnings_step0']} without it: it sees input gradients, never the parameters' gradients.",
    f"Parameters were bit-identical on all {result['world_size']} ranks in "
    f"{sum(r['params_identical'] for r in rows.values())} of {len(rows)} variants, and the gradients were "
    f"{'wrong' if a['wrong_grads'] else 'right'} on the drifted steps of (a) and "
    f"{'wrong' if e['wrong_grads'] else 'right'} in (e): check gradients against a reference, not ranks against each other.",
    f"What works: convert before wrapping (c): {c['warnings_step0'] + c['warnings_after_step0']} warnings, "
    f"{size_text(c['permuting_bytes'])} of permuting copies, gradients {'right' if not c['wrong_grads'] else 'wrong'}. "
    f"gradient_as_bucket_view (d) cuts the copies into the buckets to {size_text(d['into_bucket_bytes'])}, but "
    f"with a late conversion its gradients were {'; '.join(d['wrong_grad_diagnosis']) or 'right'}, with no warning.",
]
print("\n".join(f"{k}. {line}" for k, line in enumerate(takeaways, start=1)))
