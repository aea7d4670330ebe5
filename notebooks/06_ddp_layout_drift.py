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
# to `channels_last` after wrapping it does. It tests the seed's section 4.3 as three claims on
# real processes: C14a (the ranks' views disagree), C14b (channels_last with AMP gives silently
# wrong numbers, judged by converting both before and after wrapping) and C14c (the seed's
# backward hook fixes it). What a conversion after wrapping does is measured, not assumed.

# %%
import os  # in Google Colab only: fetch the course and install labkit (elsewhere this does nothing)

if "COLAB_RELEASE_TAG" in os.environ:
    status = os.system("git clone -q --depth 1 https://github.com/tensor-layout-lab/tensor-layout-lab /content/tensor-layout-lab; pip install -q /content/tensor-layout-lab")
    assert status == 0, "installing labkit failed: the lines above say why"

# %%
import torch

from labkit import session

chapter = session.open("06_ddp_layout_drift")  # the door: chapter.lab.<name> is this chapter's modules
tables = chapter.lab.tables  # the chapter's run, quiz answers and tables (ch06's tables.py)
world_size = chapter.lab.ddp_launch.default_world_size()
print(chapter.lab.ddp_launch.describe(world_size))

# %% [markdown]
# ## The claim
#
# The seed's section 4.3 makes three statements, each with its own rule (the old single C14
# bundled them and is retired). The first two are clauses of one sentence, shown once with the
# clause each card judges marked; the third is its fix, a full backward hook:

# %%
tables.claim_cards(chapter.claim, ["C14a", "C14b", "C14c"], chapter.lab.claims.SEED_SENTENCE_MARKED)

# %% [markdown]
# The seed's fix, as it is written there (its comment translated):

# %%
print(chapter.lab.claims.SEED_FIX_CODE)

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
# convolutions (3x3, 3x3 and 1x1), BatchNorm and a linear head, as wide as the run below makes
# it on this machine. Its parameters in both formats:

# %% tags=["nbval-check-output"]
width = tables.run_config(chapter.on_gpu)["width"]  # the run's model, not a smaller one
model = chapter.lab.ddp_worker.small_cnn(width)
model_cl = chapter.lab.ddp_worker.small_cnn(width).to(memory_format=torch.channels_last)
tables.parameters_table(model, model_cl)

# %% [markdown]
# (Chapter 03's exercise `03.channels_last_strides` derives the right-hand column.)
#
# ### The size-1 exemption, asked of torch
#
# A 1x1 convolution's weight `(K, C, 1, 1)` gets other strides under channels_last (the table
# above). cuDNN often returns such a weight's gradient in channels_last. Here a tiny autograd
# function hands a *contiguous*
# parameter a gradient with channels_last strides, and `AccumulateGrad` decides what to keep.
# The table shows which of the two it keeps as it came.

# %% tags=["nbval-check-output"]
tables.size_one_table([(32, 16, 1, 1), (16, 3, 3, 3)])  # layout_contract.kept_grad_stride asks AccumulateGrad

# %% [markdown]
# The 1x1 gradient is kept with channels_last strides, and DDP, whose check compares every
# stride with the bucket view's, warns
# about a model nobody converted. So a run whose kernels hand back such gradients warns for 1x1
# convolutions before any `channels_last` (seen on GPUs: pytorch/pytorch#47163, #70222; CPU
# kernels can do it too: this machine's run shows its own count, in the table below). Whether such a warning costs anything is a
# question below; Exercise 2 models it.

# %% [markdown]
# ## The run
#
# One run trains nine variants of the same model, one after the other, in every process. The
# processes are fresh Python interpreters that import `labkit.chapters.ch06_ddp_layout_drift.ddp_worker` (read it: it is
# what runs in each rank), joined exactly as `torchrun` joins them. A rank that fails ends the
# run with its traceback; a collective that hangs is killed after a timeout, with a message.
#
# | variant | what it does |
# | --- | --- |
# | a | wrap, then `model.to(memory_format=torch.channels_last)`: the seed's drift |
# | b | (a) plus the seed's hook, exactly as written |
# | b2 | (a) plus the seed's hook, fitted (below) |
# | b3 | (a) plus the seed's hook body on every parameter's gradient (`p.register_hook`) |
# | c | convert first, then wrap |
# | d | (e) with `gradient_as_bucket_view=True` and `zero_grad(set_to_none=False)` |
# | e | wrap, train two steps, then convert: after DDP rebuilt its buckets |
# | f | (a) with mixed precision off: does the seed's "with AMP" matter? |
# | g | (a), then the converted model wrapped again in a new DDP |
#
# One rank is not DDP, so a run always has two or more. With two or more GPUs: one process per
# GPU over NCCL, the seed's setting. With one GPU: two processes share it over **gloo with CUDA
# tensors** (NCCL refuses two ranks on one GPU). On a CPU: two processes over gloo. The
# set-up cell's second line says which this run is.
#
# Mixed precision: on a GPU the seed's own AMP, float16 autocast with a `GradScaler` (the
# worker unscales before it reads the gradients, and scales its reference the same way); on a
# CPU bf16 autocast only where it has bf16 units (AVX512-BF16 or AMX, read from
# `/proc/cpuinfo`), so that a CPU without them times the layout, not bf16 arithmetic it has no
# hardware for.

# %%
ddp_run = tables.run(chapter.on_gpu, world_size)  # tables.run_config: the sizes for a GPU or a CPU
result, rows = ddp_run.result, ddp_run.rows
ddp_run

# %% [markdown]
# ## Does the warning come back?
#
# In variant (a) the model goes to channels_last right after DDP wrapped it. Predict before
# you read the table.

# %% jupyter={"source_hidden": true}
quiz_steps = chapter.lab.widgets.Quiz(
    "Converted to channels_last right after wrapping: on which training steps does DDP warn "
    "'Grad strides do not match bucket view strides'?",
    choices=list(tables.STEP_CHOICES),
    answer=lambda: tables.warned_steps(ddp_run),
    explanation="DDP rebuilds its buckets once, at the start of the second iteration, from the "
                "parameters' strides at that moment.",
)
quiz_steps

# %%
tables.warnings_table(ddp_run)

# %% tags=["nbval-check-output"]
# The counts above depend on the machine (which kernels hand back 1x1 gradients in
# channels_last: a warning before any conversion), so this checked cell prints only rules
# that hold everywhere.
a_by_step = result["ranks"][0][0]["warnings_by_step"]
e_by_step = next(r for r in result["ranks"][0] if r["variant"]["name"] == "e_late_drift")["warnings_by_step"]
print("(a) warns on step 0:", a_by_step[0] > 0)
print("(a) warns less after the rebuild:", max(a_by_step[1:]) < a_by_step[0])
print("(e) warns on its last step:", e_by_step[-1] > 0)

# %% [markdown]
# The warning is `TORCH_WARN_ONCE`: normally it prints once per process, whatever happens
# later. The worker sets `torch.set_warn_always(True)` on the observed steps, so every
# parameter that disagrees warns on every one of them, and the counts above mean something.
# The timed steps run with it off and record nothing: formatting and recording dozens of
# warnings a step would be timed too.
#
# ## The contract, parameter by parameter
#
# Variant (a), step 0: each parameter's strides, its gradient's, and its bucket view's (read
# from the warning's own text when it warned, otherwise DDP's rule). Predict first:

# %% jupyter={"source_hidden": true}
quiz_1x1 = chapter.lab.widgets.Quiz(
    f"The run's 1x1 convolution weight {tables.one_by_one_shape(ddp_run)} changes strides under "
    "channels_last, so DDP warns. Does copying its gradient into the bucket move bytes out of order?",
    choices=list(tables.ORDER_CHOICES),
    answer=lambda: tables.one_by_one_moves_bytes(ddp_run),
    explanation="A dim of size 1 is never stepped along: its stride says nothing about memory order.",
    holds=1,  # the contract table; not Exercise 1
)
quiz_1x1

# %%
tables.contract_table(ddp_run)

# %% [markdown]
# ## Exercise 1: a straight copy or a permuting one?

# %%
chapter.exercise("06.copy_in_order")


# %%
def copy_in_order(shape: tuple[int, ...], src_stride: tuple[int, ...], dst_stride: tuple[int, ...]) -> bool:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
chapter.exercise("06.copy_in_order").check(copy_in_order)

# %% [markdown]
# ## The seed's fix, applied as written
#
# Variant (b) registers the seed's hook on the DDP-wrapped model exactly as the seed does.
# Predict:

# %% jupyter={"source_hidden": true}
quiz_hook = chapter.lab.widgets.Quiz(
    "Does the seed's hook, applied as written, remove the warning and keep training?",
    choices=list(tables.HOOK_CHOICES),
    answer=lambda: tables.seed_hook_outcome(ddp_run),
    explanation="register_full_backward_hook calls hook(module, grad_input, grad_output), and "
                "grad_input are the gradients of the module's inputs, not of its parameters.",
)
quiz_hook

# %%
tables.hook_table(ddp_run)

# %% [markdown]
# What the seed's hook really does: `register_full_backward_hook` calls a hook with three
# arguments (the module, the gradients of its *inputs*, the gradients of its outputs), so the
# one-argument `_ddp_reduce_hook(grad)` raises a `TypeError` in the first `backward`, on every
# rank at once. Given the signature PyTorch expects (b2), it runs, but it only restrides the
# gradients flowing into the model's input (here none: the images do not require grad). It
# never touches a parameter's gradient, the only thing DDP puts in a bucket, so the warning is
# exactly as in (a). (b3) runs the seed's body on every parameter's gradient
# (`p.register_hook`), the nearest form of its intent. The layout contract predicts no change:
# AccumulateGrad gives what the hook returns its parameter's strides again (on dims larger than
# 1), so the gradient still disagrees with its bucket view. The gradients table below tests it.
#
# ## What the drift costs
#
# Bytes are counted at torch's dispatcher in rank 0 (the reducer writes each gradient into its
# bucket with `mul.out(grad, 1/world, out=bucket_view)` and, unless the gradient *is* the
# bucket view, copies the reduced bucket back: "out of buckets", which also counts the copy
# from the old buckets into the new ones when DDP rebuilds them). "Steady" is the last observed
# step, after the rebuild and after (e)'s late conversion. Step times come from `labkit.measure.bench`, with the same
# number of calls in every rank (a collective needs all of them), every variant timed in
# interleaved rounds (the order rotating each round) with no warning recorded while timed.
# "grad memory" is gradient
# storage outside the buckets. With `gradient_as_bucket_view` (d) the gradients *are* the
# bucket views: the fold under the table follows it step by step, before and after its late
# conversion. The notes under the first say what the persistent drift (e) costs in time
# against the same model converted first (c): the ratio taken inside each round, with its
# 95% interval over the rounds, not called where a noisy timing could carry it across 1x (the
# trust rule), beside what the permuting copy can cost by arithmetic: its bytes at the rate of
# chapter 02's transposed copy (where this device has none recorded, an assumed quarter of
# chapter 00's copy rate, said as such). Not its launches: (c) copies as many gradients into its
# buckets, one kernel each, so the drift adds no launch, only a permuted read.

# %%
tables.traffic_table(ddp_run)  # then (d) step by step, and (e) against (c): tables.step_cost

# %% [markdown]
# ### Optional: the cost with realistic gradients
#
# The model above has kilobytes of gradients (the table says how many): its permuting copy
# hides in the step's noise. A ResNet-50 copies about 90 MiB of float32 gradients into its buckets. On a GPU, when
# you ask (`LABKIT_DDP_RESNET50=1` in the kernel's environment), this cell runs (c) converted
# first against (e) drifted after the rebuild, timed interleaved as above, with (c) against itself
# (what the timing resolves) and (c) inside `no_sync()` (its step without the all-reduce), and
# records it.
# Otherwise it shows the reference GPU's record and what running it here would take (steps,
# and the wall time it took there); the notes say what that record can and cannot tell.

# %%
resnet_config = {"model": "resnet50", "batch": 32, "image": 224, "observed_steps": 3, "timed_steps": 30,
                 "timed_rounds": 6,  # (c), (e), (c) again (A/A) and (c) without its all-reduce (no_sync)
                 "variants": ["c_convert_first", "e_late_drift", "c2_convert_first_again", "c_compute_only"]}
runs_here = chapter.on_gpu and tables.resnet50_asked()  # opt-in: LABKIT_DDP_RESNET50=1
big_cost = chapter.here_or_recorded("ddp_resnet50_cost", lambda: tables.resnet50_cost(resnet_config, world_size),
                                    can=runs_here)  # measured and recorded here, or the record, labelled
not_run = "" if runs_here else tables.resnet50_cost_line(resnet_config, world_size, big_cost, chapter.on_gpu)
reference_variants = chapter.here_or_recorded("ddp_variants", ddp_run.payload)
tables.Stack(tables.resnet50_table(big_cost, not_run, resnet_config["variants"]),
             tables.reference_variants(reference_variants))

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
quiz_grads = chapter.lab.widgets.Quiz(
    "Variant (a): DDP warned on step 0 and copied the gradients into their buckets with a "
    "strided copy. Is every gradient it hands the optimizer right?",
    choices=list(tables.GRAD_CHOICES),
    answer=lambda: tables.drifted_grads(ddp_run),
    explanation="The warning itself says 'This is not an error, but may impair performance.' "
                "Compare with the reference gradients below.",
    holds=3,  # the gradients table, the findings and the verdicts (Exercise 2 now follows them)
)
quiz_grads

# %%
tables.gradients_table(ddp_run)

# %% [markdown]
# Every rank reduces the same buckets and gets the same sums, so whatever goes wrong in the
# reducer goes wrong the same way on every rank: comparing the ranks with each other cannot
# catch it, comparing each gradient with a reference can. What this run found:

# %%
explanations = {  # the worker's diagnosis of a wrong gradient, in words
    "all zeros": "the gradient left its bucket at the conversion (gradient_as_bucket_view): DDP reduces "
                 "a slot nothing writes to and hands back zeros, silently",
    "the right values, in the bucket view's memory order, read with the param's strides":
        "the right numbers in the bucket view's memory order, read through the parameter's strides: "
        "values in the wrong places",
    "other": "the gradient differs from the reference in a way the worker does not recognise",
}
tables.findings(ddp_run, explanations)

# %% [markdown]
# ## The mechanism, in `reducer.cpp`
#
# Three steps of DDP's reducer (`torch/csrc/distributed/c10d/reducer.cpp`) decide what the
# optimizer gets, and explain the tables above.
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
# (NCHW) order, and step 3 reads the same bytes back through channels_last strides.
#
# So no gradient hook can repair a late conversion: AccumulateGrad gives whatever a hook
# returns its parameter's strides again (b3 above), and the bucket views keep the strides DDP
# built them with. Only new bucket views can: convert before wrapping (c), or wrap the
# converted model in a new DDP (g). The gradients table shows what each did here.

# %% [markdown]
# The same finding in 64 lines of plain PyTorch, no labkit, for a bug report:
# [`scripts/ddp_drift_repro.py`](../scripts/ddp_drift_repro.py) (2 CPU processes over gloo,
# `python scripts/ddp_drift_repro.py`; its expected output is in its docstring, and a test runs
# it on every CI run), and the report a PyTorch maintainer would read beside it:
# [`docs/ddp_layout_drift_issue.md`](../docs/ddp_layout_drift_issue.md).

# %% [markdown]
# ## The verdicts: C14a, C14b, C14c
#
# The seed's setting is NCCL across GPUs with AMP as fp16 autocast plus GradScaler. A run is
# labelled the seed's form only when it is exactly that (NCCL, float16 with GradScaler);
# anything else (gloo, one GPU, bf16, float32) is labelled an analogue and names what it ran
# (and the seed's AMP, where it ran another).

# %%
ch06 = chapter.lab.claims
evidence = ch06.evidence_from_run(result)
amp_text = {"off": "float32 (no bf16 units here)", "bfloat16": "bf16 autocast",
            "float16": "fp16 + GradScaler"}.get(ddp_run.amp, ddp_run.amp)
form = (chapter.seed_form if result["backend"] == "nccl" and ddp_run.amp == "float16"
        else f"analogue: {result['backend']}, {result['world_size']} processes on {result['device']}, "
             f"{amp_text}{'' if ddp_run.amp == 'float16' else ' (the seed: fp16 + GradScaler)'}")
verdicts = [chapter.judge(claim.id, evidence, form=form) for claim in ch06.CLAIMS]
nearest = chapter.claim("C14c").judge(ch06.nearest_form_evidence(evidence), form=ch06.NEAREST_HOOK_FORM)
chapter.save()  # the verdicts, with their evidence, in this machine's results
tables.verdicts(chapter.table(verdicts), nearest)

# %% [markdown]
# The hook as written never runs, so C14c as written is refuted by its own `TypeError`. Its
# nearest working form is its body on every parameter's gradient (b3); the verdict on it,
# labelled, says whether the idea would have helped.
# The card's last column is the reference GPU run's verdict, labelled as recorded (its form,
# reason and evidence are folded under the card).

# %% [markdown]
# ## Optional, after the workshop: Exercise 2, the layout contract and which gradients DDP warns about

# %%
chapter.exercise("06.drift_report")


# %%
def drift_report(shape: tuple[int, ...], grad_stride: tuple[int, ...]) -> tuple[tuple[int, ...], bool]:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
chapter.exercise("06.drift_report").check(drift_report)

# %% [markdown]
# ## Optional: on several machines, the same run with torchrun
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
a, e, c = rows["a_drift"], rows["e_late_drift"], rows["c_convert_first"]
warned, free = tables.strides_only(ddp_run)
trained = [r for r in rows.values() if not r.get("error")]  # (b) raised before its first step
hook_error = rows["b_seed_fix"].get("error")
takeaways = [
    f"Converting after wrapping warned {tables.warned_steps(ddp_run)} (DDP rebuilds its buckets at the "
    f"second iteration); converting after that rebuild (e) warned {e['warnings_last_step']} times on its last step. "
    f"Differing strides are not always moved bytes: {len(free)} of {len(warned)} warned parameters "
    "differ only on size-1 dims.",
    f"The seed's hook as written {'raised ' + hook_error.split(':')[0] if hook_error else 'ran'}; fitted to "
    f"PyTorch's signature it left {rows['b2_seed_hook_fitted']['warnings_step0']} of {a['warnings_step0']} "
    f"warnings (it sees input gradients); on every parameter's gradient (b3) it ran "
    f"{rows['b3_seed_hook_per_param']['hook_calls']} times and the gradients were "
    f"{'wrong' if rows['b3_seed_hook_per_param']['wrong_grads'] else 'right'}.",
    f"The ranks stayed bit-identical in {sum(r['params_identical'] for r in trained)} of {len(trained)} "
    f"variants that trained, yet (a)'s gradients were wrong {tables.wrong_for_how_long(ddp_run, 'a_drift')}, "
    f"and (e)'s {tables.wrong_for_how_long(ddp_run, 'e_late_drift')}{tables.amp_wording(ddp_run)}: "
    "check gradients against a reference, not ranks against each other.",
    " ".join(tables.works_and_not(ddp_run)) + " (c), converted before wrapping: "  # from the gradient check
    f"{c['warnings_step0'] + c['warnings_after_step0']} warnings, {tables.bytes_text(c['permuting_bytes'])} permuted.",
    tables.cost_takeaway(ddp_run),
]
chapter.remember(takeaways)
