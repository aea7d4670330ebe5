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
# # 05 DataLoader tuning
#
# A training step does two things in turn: it waits for the next batch, then it computes.
# When the waiting is not zero, a faster GPU buys nothing. This chapter measures, on the
# machine it runs on, how much of each step is waiting, where more workers stop helping (the
# *knee*), what the throughput levels off at (the *plateau*) and whether the arithmetic
# predicts both, and what each other DataLoader knob does *at* the knee. Then two claims from the first seed article's section 4.2 (DataLoader
# pipeline tuning): **C25**, "without `pin_memory`, `non_blocking=True` silently degrades to
# a blocking copy", and **C26**, "return `tensor.contiguous(memory_format=torch.channels_last)`
# from `Dataset.__getitem__`".
#
# **Time: about 40 minutes** for the main part (`scripts/chapter_minutes.py` counts its
# reading, quizzes, three exercises and the run on a CPU; on a GPU the run takes a few
# minutes). The sections after *What to remember* are **optional depth** (start-up, what
# pinning costs, the seed's host-to-device claims C13 and C23, a device-to-host trap, the
# profiler's timeline): about 15 minutes more, for after the workshop.

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
import functools
import inspect
import warnings

import torch
from IPython.display import display

from labkit import claims, exercises, session
from labkit.chapters.ch05_dataloader import (
    channels_last_probe,
    h2d_copies,
    knee_experiment,
    loader_data,
    loader_plots,
    loader_sweep,
    shm,
)
from labkit.chapters.ch05_dataloader import claims as ch05_claims
from labkit.core import env, results
from labkit.measure import timeline
from labkit.show import widgets

# The profiler's C++ layer (kineto) prints start/stop lines to stderr; they say nothing here.
os.environ.setdefault("KINETO_LOG_LEVEL", "6")

chapter = session.open("05_dataloader")
on_gpu = chapter.on_gpu
plan = loader_sweep.plan()
print(f"torch {torch.__version__} on {env.device()} ({env.where()}), {plan.cores} CPU cores")
print("plan:", plan.as_dict())


def recorded(key: str) -> object:
    """What the reference GPU run recorded for this chapter under key (None if nothing yet)."""
    return chapter.recorded(key)


def keep(key: str, payload: object) -> object:
    """Save a measurement with this machine's results (the reference file on the GPU run)."""
    chapter.record(key, payload)
    return payload


# %% [markdown]
# ## A dataset that costs something, and a step that consumes it
#
# Random tensors cost nothing to load, so they would teach nothing here. `loader_data`
# draws a few dozen pictures at start-up, keeps them as **JPEG bytes**, and for every sample
# does what an ImageNet pipeline does: decode the JPEG, take a random resized crop, maybe
# flip, and normalise to float32 (the class lives in a labkit module, not in this notebook,
# because DataLoader workers must be able to import it). The consumer is a small CNN on one
# CPU core, or on a GPU ResNet-50 in bfloat16 and channels_last. `knee_experiment.prepare`
# builds both and measures the numbers the arithmetic below needs: what one sample costs on
# one core (as a worker runs it), and how long one step takes as the sweep runs it: a batch
# in ordinary (pageable) host memory in, the copy to the device inside the step. On a GPU it
# also times the step with its batch already on the device; the difference is that copy.

# %%
bench = knee_experiment.prepare()
data, step = bench.data, bench.step
sample_cost, compute_s, batch_load_s = bench.sample_cost, bench.step_s, bench.batch_load_s
print(f"{len(data.encoded)} JPEGs of {plan.encoded_side}x{plan.encoded_side} px; a sample is "
      f"{data.sample_bytes / 2**10:.0f} KiB of float32")
print(f"one sample: {sample_cost.median_s * 1e3:.2f} ms of one core (IQR "
      f"{sample_cost.iqr_s * 1e3:.2f} ms); one batch of {plan.batch_size}: {batch_load_s * 1e3:.0f} ms")
print(bench.step_as_swept)
if bench.step_as_swept is not bench.compute:
    print(bench.compute)
    print(f"the copy inside the step: {(bench.step_s - bench.compute.median_s) * 1e3:.1f} ms of "
          f"{bench.step_s * 1e3:.1f} ms")
print(f"loading a batch takes {batch_load_s / compute_s:.1f}x the step")
free = shm.free_bytes()
print(f"/dev/shm free: {'unknown' if free is None else f'{free / 2**20:.0f} MiB'}; the sweep "
      f"uses the worker counts that fit: {list(bench.worker_counts)}")
loader_plots.samples_figure(data)

# %% [markdown]
# ### Exercise 05.1: the bytes of a batch
#
# Workers hand batches to the main process through shared memory (`/dev/shm`; containers
# often give it only 64 MiB), so their size matters. Write the function, run the cell, then
# run the check.

# %%
exercises.get("05.batch_bytes")


# %%
def batch_bytes(batch_size: int, channels: int, side: int, dtype: str) -> int:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
exercises.get("05.batch_bytes").check(batch_bytes)

# %% [markdown]
# ## The sweep over workers, measured as throughput
#
# Throughput is **samples over wall time**, not batch size over the median step: a starved
# loader hands out its queued batches quickly and then waits long for the next, so most
# steps are quick and the median hides the waits. Each setting first warms up for one
# queue's worth of steps (workers x `prefetch_factor` batches), so the start-up burst is
# spent, then one window of at least one queue is timed. The sweep goes round three times,
# one window of every setting per round (a change in the machine's load then hits all
# settings alike), and a setting's spread is its slowest and fastest window. Each sweep has
# a time budget (`knee_experiment.WORKER_SWEEP_BUDGET_S`): on a machine slower than planned
# it leaves out the largest worker counts or the last round, and says so below.
#
# Predict first: with the numbers above (load time per batch, compute time per step, and
# this machine's cores), how many workers does it take before more stop helping?

# %% jupyter={"source_hidden": true}
@functools.cache
def found() -> knee_experiment.Found:
    bar = loader_plots.ProgressBar(len(bench.worker_counts), "workers")
    return knee_experiment.worker_sweep(bench, on_progress=bar.update)


quiz_knee = widgets.Quiz(
    f"This machine has {plan.cores} cores. With how many workers is throughput within 10% of "
    f"the best of {list(bench.worker_counts)}?",
    answer=lambda: found().knee.workers, kind="number",
    explanation="Each worker produces one batch per (batch x sample cost) seconds on its own "
                "core; the step needs one per compute time; and the main process needs a core too.",
)
quiz_knee

# %%
sweep_workers, knee = found().sweep, found().knee
keep("sweep_workers", {"rows": sweep_workers.rows(), "plan": plan.as_dict(),
                       "sample_cost_s": sample_cost.median_s, "compute_s": bench.compute.median_s,
                       "step_as_swept_s": bench.step_s,
                       "worker_counts": list(bench.worker_counts)})
keep("knee", knee.as_dict())
sweep_workers

# %%
loader_plots.sweep_figure(sweep_workers, f"{plan.model}, batch {plan.batch_size}: workers swept")

# %%
print(knee.explanation)
print(sweep_workers.noise_note() or "Every setting's windows agreed within 10% of its throughput.")
if sweep_workers.budget_note():
    print(sweep_workers.budget_note())

# %% [markdown]
# ## The plateau: what the throughput levels off at, and why
#
# The knee says where more workers stop helping, not what the best throughput is. Once the
# workers keep up, a step costs the step as the sweep runs it (the copy inside) plus whatever
# the main process still waits for each batch: taking a batch over from a worker is not free.
# So the arithmetic predicts the plateau as batch / (step + wait), and batch / step is its
# ceiling. What the step spends its time on is read from a timeline of a few steps at the
# knee, as swept (on a GPU, how much of the time the GPU idles).

# %%
at_knee_setting = loader_sweep.Setting(num_workers=knee.workers, batch_size=plan.batch_size)
knee_trace = timeline.from_profiler(loader_sweep.profile_steps(data, at_knee_setting, step, steps=3))
knee_idle = timeline.summary(knee_trace).figures()["gpu_idle_share"]
plateau = knee_experiment.plateau(bench, found(), gpu_idle_share=knee_idle)
keep("plateau", plateau.as_dict())
print(plateau.explanation())
old_plateau = recorded("plateau")
if old_plateau and not on_gpu:
    print(f"recorded on {results.DEFAULT_REFERENCE}: {old_plateau['explanation']}")

# %% [markdown]
# ## The other knobs, at the knee
#
# With the worker count fixed at the knee: half and twice the batch, one or four batches
# prefetched per worker, and **uint8 batches**: the workers stop at the decoded pixels and
# the step normalises on its own device (`train_step` does it when a batch arrives as uint8),
# so a quarter of the bytes cross shared memory and the worker skips the float arithmetic.
# On a GPU also `pin_memory`, `non_blocking` (each alone and together), a *device
# prefetcher* that copies the next batch on a second CUDA stream while this one computes,
# and the usual tuned combination. The first row is the baseline.
#
# The settings run in rounds, each round starting at another setting (rotated). A knob is
# read against the baseline *round by round* (both measured in that round, so a change in
# the machine's load cancels) and called a gain only when every round's ratio is above 1
# (the trust rule). A time budget cuts from the end of the list; what it left out is named.

# %%
wanted = knee_experiment.knob_settings(max(knee.workers, 1 if max(bench.worker_counts) else 0),
                                      plan.batch_size, on_gpu)
left_out = [s.label for s in wanted if not knee_experiment.fits(bench, s)]
if left_out:
    print("left out, their batches in flight would not fit in /dev/shm:", ", ".join(left_out))
bar = loader_plots.ProgressBar(len(wanted) - len(left_out), "knobs")
sweep_knobs = knee_experiment.knob_sweep(bench, knee.workers, on_progress=bar.update)
knob_rows = knee_experiment.knob_table(sweep_knobs)
keep("sweep_knobs", {"rows": sweep_knobs.rows(), "table": knob_rows})
sweep_knobs

# %%
for row in knob_rows:
    against = ("the baseline" if row["decision"] == "baseline" else row["stated"]
               + (f": a {row['decision']}" if row["decision"] in ("gain", "loss") else ""))
    print(f"{row['label']:<30} {row['samples_per_s']:6.0f} samples/s "
          f"({row['samples_per_s_low']:.0f} to {row['samples_per_s_high']:.0f}), "
          f"waiting {100 * row['wait_share']:.0f}%; {against}")
measured_labels = {row["label"] for row in knob_rows}
never = [s.label for s in wanted if s.label not in measured_labels]
print("every knob asked for was measured" if not never else
      f"not measured: {', '.join(never)} (their batches in flight would not fit in /dev/shm, or "
      "the time budget cut them: see the lines above and below)")
if sweep_knobs.budget_note():
    print(sweep_knobs.budget_note())
loader_plots.sweep_figure(sweep_knobs, f"the other knobs, {sweep_knobs.runs[0].setting.num_workers} worker(s)")

# %% [markdown]
# Without a GPU, `pin_memory` and `non_blocking` have nothing to do, so they are not swept
# here; the reference GPU run measured them (a row recorded before throughput was taken
# from windows is rebuilt from its waiting share and compute, `loader_sweep.row_samples_per_s`):

# %%
gpu_knobs = recorded("sweep_knobs")
if on_gpu:
    print("This run is on a GPU: the table above has the GPU knobs.")
elif gpu_knobs is None:
    print("nothing recorded yet for the reference GPU")
else:
    decided = {r["label"]: r for r in gpu_knobs.get("table", []) if "stated" in r}
    print(f"recorded on {results.DEFAULT_REFERENCE} (samples/s from total time):")
    for row in gpu_knobs["rows"]:
        per_round = decided.get(row["label"])
        print(f"  {row['label']:<30} {loader_sweep.row_samples_per_s(row):7.0f} samples/s, "
              f"waiting {100 * row['wait_share']:.0f}%"
              + (f"; {per_round['stated']}" if per_round else ""))
    if not decided:
        print("(recorded before knobs were read round by round against the baseline: no ratios)")

# %% [markdown]
# ## When the arithmetic asks for more cores than there are
#
# The arithmetic above says how many workers keep the step fed. When that is more than the
# machine's cores, no DataLoader knob closes the gap: the decoding itself has to move or get
# cheaper. The usual next steps, named here and not built: decode the JPEGs on the GPU
# (`torchvision.io.decode_jpeg(..., device="cuda")` takes a batch of encoded images and
# returns tensors on the GPU), or hand the whole input pipeline to **NVIDIA DALI**, which
# decodes and augments on the GPU. Shipping uint8 (above) is the cheap first step.

# %%
spare = max(plan.cores - 1, 1)
needed = knee.workers_needed
print(f"this machine: the arithmetic asks for {needed:.1f} workers, {spare} core(s) are spare: "
      + ("the cores suffice; tune the loader." if needed <= spare else
         f"{needed / spare:.1f}x more than there are: the decode has to move (GPU decoding, DALI) "
         "or get cheaper (uint8, smaller crops)."))
old_knee = recorded("knee")
if old_knee and not on_gpu:
    print(f"recorded on {results.DEFAULT_REFERENCE}: the arithmetic asked for "
          f"{old_knee['workers_needed']:.1f} workers of {old_knee['cores'] - 1} spare cores")

# %% [markdown]
# ## C26: channels_last from `__getitem__`?
#
# The seed (section 4.2) advises, for a CNN, to return
# `tensor.contiguous(memory_format=torch.channels_last)` from `Dataset.__getitem__`. The rule
# first, then a real DataLoader over a Dataset that follows the advice:

# %% tags=["nbval-check-output"]
claims.get("C26")

# %%
c26_evidence = channels_last_probe.probe()
print(f"a Dataset that follows the advice: "
      f"{c26_evidence['error_type'] + ': ' + c26_evidence['error_message'] if c26_evidence['getitem_raises'] else 'ran'}")
print(f"the plain batch {c26_evidence['plain_batch_shape']} has strides "
      f"{tuple(c26_evidence['plain_batch_stride'])}; after .contiguous(memory_format=channels_last) "
      f"on the batch: {tuple(c26_evidence['batch_converted_stride'])}")
print(f"returning [1, C, H, W] samples instead: the default collate stacks them into "
      f"{c26_evidence['unsqueezed_batch_shape']} (channels_last: "
      f"{c26_evidence['unsqueezed_batch_channels_last']})")
c26 = chapter.judge("C26", c26_evidence, form=claims.SEED_FORM)
print(c26.claim_id, c26.label, "--", c26.reason)

# %% [markdown]
# channels_last is a layout of four dimensions; a sample has three. It belongs on the 4-D
# batch after collation, in the training step (as `train_step` does, after the copy to the
# device) or in a custom `collate_fn`. Two exercises on the strides involved:

# %%
exercises.get("05.collated_stride")


# %%
def collated_stride(batch_size: int, sample_shape: tuple[int, ...]) -> tuple[int, ...]:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
exercises.get("05.collated_stride").check(collated_stride)

# %%
exercises.get("05.channels_last_stride")


# %%
def channels_last_stride(shape: tuple[int, ...]) -> tuple[int, ...] | None:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
exercises.get("05.channels_last_stride").check(channels_last_stride)

# %% [markdown]
# ## C25: `non_blocking=True` without pinned memory
#
# In a training loop the CPU runs ahead: it queues the next step's kernels while the GPU
# still works on this one. A copy that makes the CPU wait for the queued work throws that
# lead away. So the copy is measured where the harm would be: a kernel of about 50 ms is
# queued first, then `x.to('cuda', non_blocking=True)` is issued, from pageable and from
# pinned memory, at sizes from 64 KiB to 256 MiB, and the clock says when the call gives the
# CPU back. Every warning torch gives during the calls is recorded. The rule first:

# %% tags=["nbval-check-output"]
claims.get("C25")

# %% [markdown]
# Predict: a kernel of about 50 ms is queued on the GPU. Then `x.to('cuda', non_blocking=True)`
# is called with `x` in ordinary (pageable) host memory, 256 MiB. When does the call return?

# %% jupyter={"source_hidden": true}
@functools.cache
def busy_returns() -> dict:
    rows, said = h2d_copies.busy_stream_returns()
    return {"rows": [r.as_dict() for r in rows], "warnings": said}


def when_pageable_returns() -> str:
    found = busy_returns() if on_gpu else recorded("busy_stream")
    if not found:
        return "nothing recorded yet"
    largest = max(r["nbytes"] for r in found["rows"])
    row = next(r for r in found["rows"] if r["memory"] == "pageable" and r["nbytes"] == largest)
    return ("after the queued kernel and the copy: the CPU waits" if row["waited_for_kernel"]
            else "at once: the CPU goes on while the kernel runs")


quiz_nb = widgets.Quiz(
    "A 50 ms kernel is queued; then x.to('cuda', non_blocking=True) with x pageable (256 MiB). "
    "When does the call return?",
    choices=["at once: the CPU goes on while the kernel runs",
             "after the queued kernel and the copy: the CPU waits"],
    answer=when_pageable_returns,
)
quiz_nb

# %% [markdown]
# What CUDA documents (read from its "API synchronization behavior" page, not measured):
# for the *Async* copies, a transfer "between device memory and pageable host memory" "might
# be synchronous with respect to host", and where pageable memory must first be staged to
# pinned memory the driver may synchronise with the stream; from pinned memory the call
# returns at once. "Might" and "may" are why it is measured:

# %%
busy = (keep("busy_stream", busy_returns()) if on_gpu else recorded("busy_stream"))
if busy:
    label = "" if on_gpu else f" (recorded on {results.DEFAULT_REFERENCE})"
    for r in busy["rows"]:
        print(f"{r['memory']:<9} {r['nbytes'] / 2**20:8.2f} MiB: call returned after "
              f"{r['call_return_s'] * 1e3:7.2f} ms, kernel ({r['kernel_s'] * 1e3:.0f} ms) and copy done "
              f"after {r['done_s'] * 1e3:7.2f} ms: {100 * r['returned_share']:.0f}% of the queued work "
              f"waited out{label}")
    print("torch warned: " + "; ".join(busy["warnings"]) if busy["warnings"] else
          f"torch gave no warning during these calls (warnings recorded){label}")
else:
    print("No GPU here and nothing recorded behind a queued kernel yet for the reference GPU.")
if on_gpu:
    c25 = chapter.judge("C25", h2d_copies.c25_busy_evidence(busy["rows"], busy["warnings"]),
                        form=claims.SEED_FORM)
    claims.save([c25], chapter.key)
    print(c25.claim_id, c25.label, "--", c25.reason)
else:
    old_c25 = claims.recorded("C25")
    idle_form = old_c25 is not None and not old_c25.evidence.get("busy_stream")
    print("C25 needs a CUDA GPU (it times host-to-device copies); its recorded verdict"
          + (", measured on an idle stream (nothing queued before the copy), before the "
             "busy-stream measurement above existed:" if idle_form else ":"))
    display(claims.recorded_evidence(["C25"]))

# %% [markdown]
# ## Verdicts of this chapter
#
# C26 is judged here, on any machine (it is about tensor semantics). C25, C13 and C23 are
# claims about a CUDA GPU: on a GPU they are judged in this run, in the seed's own setting;
# without one, the reference GPU's recorded verdicts are shown beside, labelled recorded.

# %%
chapter.save()
display(chapter.table())

# %% [markdown]
# ## What to remember
#
# Each line below is built from what this run measured.

# %%
w0 = sweep_workers.where(num_workers=0)[0]
best = max(sweep_workers.runs, key=lambda r: r.samples_per_s)
# uint8 alone: the row whose only change from the baseline is uint8 (the pinned, prefetched
# uint8 row is another knob's gain too), or none when the time budget left it out.
uint8_row = next((r for r in knob_rows if r["label"] == f"{knob_rows[0]['label']} uint8"), None)
takeaways = [
    f"Measure the wait, and throughput as samples over wall time: with no workers a step waited "
    f"{100 * w0.wait_share:.0f}% of the time; {best.setting.label} waited {100 * best.wait_share:.0f}% "
    f"and ran {best.samples_per_s / w0.samples_per_s:.1f}x the samples per second.",
    f"The knee sits at {knee.workers} worker(s) here; the arithmetic (a batch costs "
    f"{batch_load_s * 1e3:.0f} ms of one core, a step as swept takes {compute_s * 1e3:.0f} ms) asks "
    f"for {knee.workers_needed:.1f} of {plan.cores - 1} spare cores, and "
    + ("this grid cannot test whether the two agree" if knee.agrees is None else
       f"the two {'agree' if knee.agrees else 'disagree'}")
    + (" (the sweep was noisy: see its note)." if sweep_workers.noise_note() else "."),
    f"The plateau measured {plateau.measured:.0f} samples/s; the arithmetic, batch / (step as "
    f"swept + per-batch wait) = {plan.batch_size} / ({plateau.step_s * 1e3:.1f} + "
    f"{plateau.wait_s * 1e3:.1f} ms), predicts {plateau.predicted:.0f}: "
    + ("it holds" if plateau.agrees else "it misses")
    + f" (within {plateau.tolerance:.0%}: {'yes' if plateau.agrees else 'no'}). What bounds it: "
    f"{plateau.bound}.",
    ("Knobs are read at the knee, round by round against the baseline: uint8 batches alone "
     f"(normalised on the device) ran {uint8_row['stated']}"
     + (f": a {uint8_row['decision']}." if uint8_row["decision"] in ("gain", "loss") else ".")
     if uint8_row is not None else
     "Knobs are read at the knee: uint8 batches alone were not measured here (left out: see "
     "the knob table), so this run says nothing about them."),
    f"channels_last is a 4-D layout: from __getitem__ it raises ({c26_evidence['error_message']}); "
    "put it on the collated batch or in the step (C26).",
]
c25_seen = next((v for v in chapter.verdicts if v.claim_id == "C25"), None) or claims.recorded("C25")
if c25_seen is not None:
    if c25_seen.recorded:  # the recorded evidence, judged by today's check (it says what it lacks)
        c25_seen = claims.get("C25").judge(c25_seen.evidence, machine=c25_seen.machine,
                                           form=c25_seen.form)
    takeaways.append(f"non_blocking from pageable memory (C25, {c25_seen.outcome}"
                     f"{'' if on_gpu else ', recorded'}): {c25_seen.reason}.")
print("\n".join(f"{k}. {line}" for k, line in enumerate(takeaways, start=1)))

# %% [markdown]
# ---
# # Optional depth
#
# The rest of the chapter is for after the workshop: each section stands alone.

# %% [markdown]
# ## Optional: start-up, the first batch of every epoch
#
# Without `persistent_workers`, every epoch starts its workers afresh; with them, the
# workers stay alive between epochs. To see the start-up itself, the dataset here costs
# nothing to load (`loader_data.Trivial`: zeros), so what remains of a first batch is the
# workers' start. Predict: with `persistent_workers=True`, which first batches come faster?

# %% jupyter={"source_hidden": true}
start_workers = max(1, min(2, max(bench.worker_counts)))
trivial = loader_data.Trivial(length=64)


@functools.cache
def startups() -> tuple[loader_sweep.Startup, loader_sweep.Startup]:
    setting = loader_sweep.Setting(num_workers=start_workers, batch_size=16)
    return (loader_sweep.startup(trivial, setting, epochs=4),
            loader_sweep.startup(trivial, loader_sweep.with_persistence(setting, True), epochs=4))


def which_first_batches_are_faster() -> str:
    fresh, kept = startups()
    first_same = kept.first_batch_s[0] > 0.7 * fresh.first_batch_s[0]
    later_faster = max(kept.first_batch_s[1:]) < 0.8 * min(fresh.first_batch_s[1:])
    if later_faster and first_same:
        return "every epoch after the first"
    if later_faster:
        return "every epoch, the first included"
    return "none: no measurable difference"


quiz_startup = widgets.Quiz(
    "With persistent_workers=True, which epochs get their first batch faster?",
    choices=["every epoch, the first included", "every epoch after the first",
             "none: no measurable difference"],
    answer=which_first_batches_are_faster,
    explanation="The first epoch must start its workers either way; only later epochs can reuse them.",
)
quiz_startup

# %%
fresh, kept = startups()
keep("startup", {"fresh": fresh.as_dict(), "persistent": kept.as_dict(), "workers": start_workers,
                 "dataset": "trivial"})
for run in (fresh, kept):
    print(f"{run.setting.label:<16} first batch per epoch: "
          + ", ".join(f"{t * 1e3:.0f} ms" for t in run.first_batch_s))
kept_gain = min(fresh.first_batch_s[1:]) / max(max(kept.first_batch_s[1:]), 1e-9)
print(f"later epochs' first batch: {kept_gain:.1f}x faster with persistent workers "
      f"({which_first_batches_are_faster()})")
loader_plots.startup_figure([fresh, kept])

# %% [markdown]
# Starting a worker here is a `fork` of this process (Linux's default); with the `spawn`
# start method (macOS, Windows) each worker imports torch afresh and the start-up grows.
# With a real dataset the start-up is added to the first batch's decoding, and matters in
# proportion to how short an epoch is.

# %% [markdown]
# ## Optional: what pinning costs
#
# Pinned memory is not free: `pin_memory=True` copies every batch into page-locked memory
# (on a thread of the main process). The CUDA caching host allocator keeps every pinned
# block it made, rounded up to a power of two, and reuses it for any later request that
# fits; so only the first pin of a size class page-locks new memory. To see that cost the
# measurement runs in a fresh process, where nothing is cached yet. This needs a GPU.

# %%
if on_gpu:
    cost = keep("pinning_cost_fresh", h2d_copies.pinning_cost_fresh().as_dict())
    pin_loader = loader_sweep.make_loader(data, loader_sweep.Setting(
        num_workers=max(knee.workers, 1), batch_size=plan.batch_size, pin_memory=True))
    pin_thread = keep("pin_thread", h2d_copies.pin_thread_cpu_s(pin_loader, 8))
else:
    print("Pinning needs a CUDA GPU: this is what the reference GPU recorded.")
    cost, pin_thread = recorded("pinning_cost_fresh"), recorded("pin_thread")
if cost:
    tag = "" if on_gpu else f" (recorded on {results.DEFAULT_REFERENCE})"
    reserved = cost["host_reserved_bytes"]
    print(f"pinning {cost['nbytes'] / 2**20:.0f} MiB in a fresh process: {cost['first_pin_s'] * 1e3:.0f} ms "
          f"({cost['first_pin_cpu_s'] * 1e3:.0f} ms of CPU); again, from the cached block: "
          f"{cost['cached_pin_s'] * 1e3:.1f} ms ({cost['cached_pin_gbps']:.1f} GB/s){tag}")
    if reserved is not None:
        print(f"the pinned pool grew by {reserved / 2**20:.0f} MiB for {cost['nbytes'] / 2**20:.0f} MiB asked{tag}")
else:
    print("nothing recorded from a fresh process yet on the reference GPU")
if pin_thread and pin_thread.get("pin_thread_cpu_s") is not None:
    print(f"the DataLoader's pin thread: {pin_thread['pin_thread_cpu_s'] * 1e3:.0f} ms of CPU over "
          f"{pin_thread['batches']} batches ({100 * pin_thread['pin_thread_share_of_wall']:.0f}% "
          f"of the wall time){'' if on_gpu else f' (recorded on {results.DEFAULT_REFERENCE})'}")

# %% [markdown]
# ## Optional: host-to-device copies, C23
#
# The seed's table (section 4.3), for copies from host memory to the GPU:
# 4.2 GB/s from ordinary pageable memory, 12.8 GB/s with `pin_memory=True`, 18.6 GB/s with
# `pin_memory_device='cuda:0'` added. Predict the third row first.

# %% jupyter={"source_hidden": true}
def pin_memory_device_gain() -> str:
    """From this run's GPU measurement, else the reference run's recorded one."""
    if on_gpu:
        gbps = c23_evidence()
    else:
        verdict = claims.recorded("C23")
        if verdict is None:
            return "nothing recorded yet"
        gbps = verdict.evidence
    gain = gbps["pin_memory_device_gbps"] / gbps["pinned_gbps"]
    return ("about 1.45x, as the seed says" if gain > 1.3 else
            "a little (1.1x to 1.3x)" if gain > 1.1 else "none: the same copy")


quiz_c23 = widgets.Quiz(
    "A 154 MB (147 MiB) batch (256 ImageNet images in float32) is copied to the GPU from pinned memory. "
    "How much faster does adding pin_memory_device='cuda:0' to the DataLoader make that copy?",
    choices=["about 1.45x, as the seed says", "a little (1.1x to 1.3x)", "none: the same copy"],
    answer=pin_memory_device_gain,
)
quiz_c23

# %% tags=["nbval-check-output"]
claims.get("C23")

# %% [markdown]
# First, what this torch does with `pin_memory_device`, read from the DataLoader itself (this
# part needs no GPU): build a loader with it and keep the warnings it gives.

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    probe_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(4, 2)),
                                               batch_size=2, pin_memory=True,
                                               pin_memory_device="cuda:0")
    next(iter(probe_loader))
dataloader_warnings = sorted({str(w.message).splitlines()[0] for w in caught})
for text in dataloader_warnings:
    print("DataLoader warns:", text)

# %% [markdown]
# And from its source: every line of this torch's DataLoader that mentions `pin_memory_device`,
# and whether the `torch.cuda._pin_memory()` the seed says `pin_memory=True` calls exists.

# %%
source_lines = [line.strip() for line in inspect.getsource(torch.utils.data.dataloader).splitlines()
                if "pin_memory_device" in line and not line.strip().startswith("#")]
print(f"torch {torch.__version__}, torch/utils/data/dataloader.py:")
for line in source_lines:
    print("   ", line[:110])
print("torch.cuda._pin_memory exists:", hasattr(torch.cuda, "_pin_memory"),
      "| Tensor.pin_memory exists:", hasattr(torch.Tensor, "pin_memory"))

# %% [markdown]
# Then, on a GPU: bandwidth against copy size from pageable and from pinned memory, and at
# the seed's size (154 MB) the three variants of the seed's table, timed interleaved. The
# third is a batch that a DataLoader with `pin_memory_device='cuda:0'` produced.

# %%
seed_nbytes = torch.Size(h2d_copies.SEED_BATCH_SHAPE).numel() * 4


@functools.cache
def copy_curve() -> list[dict]:
    return keep("h2d_curve", [vars(p) for p in h2d_copies.bandwidth_curve()])


@functools.cache
def c23_evidence() -> dict:
    pageable = torch.randn(h2d_copies.SEED_BATCH_SHAPE)
    source = torch.utils.data.TensorDataset(pageable)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecation warning, shown above
        (pinned,) = next(iter(torch.utils.data.DataLoader(
            source, batch_size=h2d_copies.SEED_BATCH_SHAPE[0], pin_memory=True)))
        (with_device,) = next(iter(torch.utils.data.DataLoader(
            source, batch_size=h2d_copies.SEED_BATCH_SHAPE[0], pin_memory=True,
            pin_memory_device="cuda:0")))
    comparison, flags = chapter.retried(lambda: h2d_copies.compare_sources(
        {"pageable": pageable, "pinned": pinned, "pin_memory_device": with_device}))
    keep("h2d_seed_size", comparison.table())
    return {"pageable_gbps": comparison["pageable"].timing.gbps,
            "pinned_gbps": comparison["pinned"].timing.gbps,
            "pin_memory_device_gbps": comparison["pin_memory_device"].timing.gbps,
            "pinned_speedup_iqr": h2d_copies.speedup_between(comparison, "pageable", "pinned"),
            "pin_memory_device_speedup_iqr": h2d_copies.speedup_between(
                comparison, "pinned", "pin_memory_device"),
            "pin_memory_device_batch_pinned": bool(with_device.is_pinned()),
            "transfer_bytes": seed_nbytes, "dataloader_warnings": dataloader_warnings,
            "flags": flags,
            "device": h2d_copies.environment_note()}


seed_lines = {"seed pageable": ch05_claims.SEED_GBPS["pageable"],
              "seed pinned": ch05_claims.SEED_GBPS["pinned"]}
if on_gpu:
    display(loader_plots.bandwidth_figure(copy_curve(), seed_lines))
    ev23 = c23_evidence()  # measured again once if the harness flags a copy (chapter.retried)
    c23 = chapter.judge("C23", ev23, form=claims.SEED_FORM)
    claims.save([c23], chapter.key)  # saved at once: a later cell's failure cannot lose it
    print(c23.claim_id, c23.label, "--", c23.reason)
else:
    curve = recorded("h2d_curve")
    if curve:
        print(f"No GPU here: the curve recorded on {results.DEFAULT_REFERENCE}, labelled recorded.")
        display(loader_plots.bandwidth_figure(curve, seed_lines))
    display(claims.recorded_evidence(["C23"]))

# %% [markdown]
# ## Optional: C13, a "zero-copy DMA path"?
#
# The seed says `pin_memory_device='cuda:0'` "binds the pinned memory to the GPU" through
# unified virtual addressing, so that the GPU reads the batch directly and the explicit
# `.to('cuda')` copy disappears. If that were so, a GPU operation would accept the batch as
# it comes out of the DataLoader, and moving it would run no host-to-device memcpy.

# %% tags=["nbval-check-output"]
claims.get("C13")

# %%
if on_gpu:
    probe = keep("pmd_probe", h2d_copies.pin_memory_device_probe())
    for label in ("pin_memory", "pin_memory_device"):
        row = probe[label]
        print(f"{label:<18} batch on {row['batch_device']}, pinned {row['batch_pinned']}, "
              f"GPU op accepts it: {row['gpu_op_accepts_batch']}, H2D memcpys when moved: "
              f"{row['h2d_memcpy_events']} {row['h2d_memcpy_names']}")
    c13 = chapter.judge("C13", {**probe["pin_memory_device"], "torch": probe["torch"],
                                   "dataloader_source_lines": source_lines,
                                   "torch_cuda__pin_memory_exists": hasattr(torch.cuda, "_pin_memory")},
                                  form=claims.SEED_FORM)
    claims.save([c13], chapter.key)
    print(c13.claim_id, c13.label, "--", c13.reason)
else:
    display(claims.recorded_evidence(["C13"]))

# %% [markdown]
# What the seed describes exists in CUDA (mapped pinned memory that a kernel reads over
# PCIe, `cudaHostAllocMapped`), but it is not what this parameter does: `pin_memory_device`
# only named the device whose pinned memory to use, and recent torch ignores it with the
# warning printed above. Pinned memory makes the copy a DMA transfer; it does not make it
# disappear.

# %% [markdown]
# ## Optional: the trap in the other direction
#
# Predict: `host` is a pinned CPU tensor filled with -1. Right after
# `host.copy_(gpu_tensor, non_blocking=True)`, before any synchronisation, what does reading
# `host` give?

# %% jupyter={"source_hidden": true}
@functools.cache
def trap() -> list[dict]:
    return [t.as_dict() for t in h2d_copies.d2h_trap()]


def what_the_early_read_gives() -> str:
    rows = trap() if on_gpu else recorded("d2h_trap")
    if not rows:
        return "nothing recorded yet"
    pinned = next(r for r in rows if r["destination"] == "pinned")
    return ("old values: the copy has not happened yet" if pinned["wrong_before_sync"] > 0
            else "the GPU's values")


quiz_trap = widgets.Quiz(
    "Reading a pinned host tensor right after host.copy_(gpu_tensor, non_blocking=True) gives ...",
    choices=["the GPU's values", "old values: the copy has not happened yet", "an error"],
    answer=what_the_early_read_gives,
)
quiz_trap

# %%
rows = keep("d2h_trap", trap()) if on_gpu else recorded("d2h_trap")
if rows:
    tag = "" if on_gpu else f" (recorded on {results.DEFAULT_REFERENCE})"
    for r in rows:
        print(f"{r['destination']:<9} destination: {r['wrong_before_sync']:>9} of {r['elements']} "
              f"values wrong before torch.cuda.synchronize(), {r['wrong_after_sync']} after{tag}")
else:
    print("No GPU here and nothing recorded yet for the reference GPU.")

# %% [markdown]
# A device-to-host copy with `non_blocking=True` into pinned memory returns at once; the
# values arrive later. Synchronise (or wait on an event) before reading them. Into pageable
# memory torch cannot copy asynchronously, so it waits, and the values are right.

# %% [markdown]
# ## Optional: the overlap, seen
#
# The same steps under the profiler, drawn by `labkit.measure.timeline`: once with the starving
# loader (no workers) and once at the knee (on a GPU also pinned, with the device
# prefetcher). The lanes show where the step waits; on a GPU the summary gives the share of
# host-to-device copy time hidden behind kernels and the GPU's idle share.

# %%
at_knee = sweep_knobs.runs[0].setting.num_workers
starving = loader_sweep.Setting(num_workers=0, batch_size=plan.batch_size)
tuned = loader_sweep.Setting(num_workers=at_knee, batch_size=plan.batch_size, pin_memory=on_gpu,
                             device_prefetch=on_gpu and at_knee > 0)
overlap = {}
traces = {}
for name, setting in (("starving", starving), ("tuned", tuned)):
    trace = timeline.from_profiler(loader_sweep.profile_steps(data, setting, step, steps=3))
    figures = timeline.summary(trace).figures()
    traces[name] = trace
    overlap[name] = {"setting": setting.label, **loader_sweep.waiting_in_trace(trace),
                     "gpu_idle_share": figures["gpu_idle_share"],
                     "h2d_overlap_share": figures["h2d_overlap_share"]}
keep("overlap", overlap)
for name, o in overlap.items():
    gpu_part = (f", GPU idle {100 * o['gpu_idle_share']:.0f}%, H2D copy hidden behind kernels "
                f"{100 * (o['h2d_overlap_share'] or 0):.0f}%" if o["gpu_idle_share"] is not None else "")
    print(f"{name:<9} ({o['setting']}): waiting for data {100 * o['waiting_share']:.0f}% of the "
          f"profiled steps{gpu_part}")
print("A tuned loader that still waits is starved: more workers, cheaper samples (uint8) or "
      "decoding elsewhere, as the arithmetic above says." if overlap["tuned"]["waiting_share"] > 0.25
      else "The tuned loader keeps the step fed: its waiting share is small.")

# %%
widgets.Timeline(traces["starving"])

# %%
widgets.Timeline(traces["tuned"])

# %%
if not on_gpu:
    gpu_overlap = recorded("overlap")
    if gpu_overlap:
        for name, o in gpu_overlap.items():
            print(f"recorded on {results.DEFAULT_REFERENCE}, {name} ({o['setting']}): waiting "
                  f"{100 * o['waiting_share']:.0f}%, GPU idle {100 * (o['gpu_idle_share'] or 0):.0f}%, "
                  f"H2D hidden {100 * (o['h2d_overlap_share'] or 0):.0f}%")
    else:
        print("nothing recorded yet for the reference GPU")

# %%
chapter.save()  # the optional sections' measurements and verdicts too
