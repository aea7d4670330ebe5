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
# predicts both, and what each other DataLoader knob does at a worker count fixed first. Then two claims from the first seed article's section 4.2 (DataLoader
# pipeline tuning): **C25**, "without `pin_memory`, `non_blocking=True` is automatically degraded
# to a blocking copy" (the claim card's words), and **C26**, "return `tensor.contiguous(memory_format=torch.channels_last)`
# from `Dataset.__getitem__`".
#
# **Time: under 40 minutes** for the main part (`scripts/chapter_minutes.py` counts its
# reading, quizzes, two exercises (a third, harder, is optional) and the run on a CPU, and the optional part's minutes
# apart). The sections after *What to remember* are **optional depth** (start-up, what
# pinning costs, the seed's host-to-device claims C13 and C23, a device-to-host trap, the
# profiler's timeline), for after the workshop.

# %%
import os  # in Google Colab only: fetch the course and install labkit (elsewhere this does nothing)

if "COLAB_RELEASE_TAG" in os.environ:
    status = os.system("git clone -q --depth 1 https://github.com/tensor-layout-lab/tensor-layout-lab /content/tensor-layout-lab; pip install -q /content/tensor-layout-lab")
    assert status == 0, "installing labkit failed: the lines above say why"

# %%
from labkit import session

chapter = session.open("05_dataloader")  # the door: chapter.lab.<name> is this chapter's modules
lesson = chapter.lab.lesson.Lesson(chapter)  # the chapter's run, quiz answers and readings (ch05's lesson.py)
print(lesson.plan_text())

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
# one core (as a worker runs it), and how long one step takes as the sweep runs it: on
# batches fresh from workers, each in a new shared-memory segment whose pages the step's
# first read touches (on a GPU its page faults are shown), the copy to the device inside.
# Beside it, the same step on one private batch used again (its pages already touched); on a
# GPU also the step with its batch already on the device, and the copy alone (their spread
# here; the plateau below reads them as parts of the step).

# %%
bench = lesson.prepare()  # knee_experiment.prepare: the dataset, the step, one sample's and one step's cost
lesson.describe(bench)  # and a few of its samples, drawn

# %% [markdown]
# ### Exercise 05.1: the bytes of a batch
#
# Workers hand batches to the main process through shared memory (`/dev/shm`; containers
# often give it only 64 MiB), so their size matters. Write the function, run the cell, then
# run the check.

# %%
chapter.exercise("05.batch_bytes")


# %%
def batch_bytes(batch_size: int, channels: int, side: int, dtype: str) -> int:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
chapter.exercise("05.batch_bytes").check(batch_bytes)

# %% [markdown]
# ## The sweep over workers, measured as throughput
#
# Throughput is **samples over wall time**, not batch size over the median step: a starved
# loader hands out its queued batches quickly and then waits long for the next, so most
# steps are quick and the median hides the waits. Each setting first warms up for one batch
# per worker (at start-up every worker decodes its first batch at once; after that wave each
# hands over one batch per decode, as for the rest of the run), then one window of at least
# one queue (workers x `prefetch_factor` batches) is timed. The sweep goes round three times
# (twice on a GPU, where a round costs seconds), one window of every setting per round (a
# change in the machine's load then hits all settings alike), and a setting's spread is its
# slowest and fastest window. *Waiting*,
# wherever this chapter prints it, is the timed steps' wait over their wait + step. Each sweep has
# a time budget (`knee_experiment.WORKER_SWEEP_BUDGET_S`): on a machine slower than planned
# it leaves out the largest worker counts or the last round, and says so below.
#
# Predict first: with the numbers above (load time per batch, compute time per step, and
# this machine's cores), how many workers does it take before more stop helping?

# %% jupyter={"source_hidden": true}
quiz_knee = chapter.lab.widgets.Quiz(
    f"This machine has {lesson.plan.cores} cores. With how many workers is throughput within 10% of "
    f"the best of {list(lesson.bench.worker_counts)}?",
    answer=lambda: lesson.knee_key(), kind="number",  # runs the sweep when answered
    explanation=chapter.lab.lesson.EXPLAIN["knee"],  # shown after an answer
    holds=5,  # the sweep, the plateau, the knob tables (they name the knee) and the cores line (its worker count points to it); not C26 or the exercises
)
quiz_knee

# %%
lesson.worker_sweep()  # the sweep's table and plot, then the knee; kept under sweep_workers and knee

# %% [markdown]
# ## The plateau: what the throughput levels off at, and why
#
# The knee says where more workers stop helping, not what the best throughput is. Once the
# workers keep up, a step costs the step itself plus whatever the main process still waits
# for each batch: taking a batch over from a worker is not free. So batch / (step + wait)
# should give the plateau. But which step? Beside busy workers the main thread may share a
# core with them. So the step is timed here, apart from the sweep, on one batch, in five
# interleaved rounds: a block alone and a block while the plateau's workers decode without
# pause (what they decode is dropped), each step on two clocks, wall time and the main
# thread's CPU time (`time.thread_time()`): wall time the CPU clock does not count is time
# off its core (on a GPU also waiting for it). Each round also runs one window of the
# plateau's loader, back to back with the block beside the decoders, and batch / (that step +
# the window's own wait) is read against that window, round by round: a drift of the machine
# that slows both cancels. Its 95% interval over the rounds makes the call (holds, misses or
# not resolved). The wait is the loader's own, so this is a consistency check; the
# prediction uses the *hand-over* instead, timed apart in
# `prepare`: `next()` on batches already queued, once the workers have filled their queue. On
# a CPU the cores' arithmetic is set beside it: cores x batch / (decode + step) caps the
# throughput. A shared core is named only when the rounds' interval clears the band.

# %%
lesson.plateau_text()  # kept under plateau

# %% [markdown]
# ## The other knobs, at a worker count fixed first
#
# The knobs run at the arithmetic's worker count (batch x sample cost / step, from the timings
# above), fixed before any knob runs, not at the measured knee: the knee moves between runs
# within one step of the sweep, and every run must measure the same settings. **uint8
# batches**: the workers stop at the decoded pixels and the step normalises on its own device
# (`train_step` does it when a batch arrives as uint8), so the worker skips the float
# arithmetic and a quarter of the bytes cross shared memory (the table's note gives them). On
# a CPU also one or four batches prefetched per worker and half and twice the batch. On a GPU
# the seed's advice together, the *tuned loader*: `pin_memory`, a *device prefetcher* (copies
# the next batch on a second CUDA stream while this one computes) and uint8. Pinning alone is
# not a row there: its gain sits at the table's resolution, so its call could not reproduce;
# C23 and C25 below time the pinned copy itself. Every row is called against the baseline.
# The first row is the baseline; the second is the baseline again (A/A): what the rule calls
# when nothing changed.
#
# The settings run in rounds (ten on a CPU, six on a GPU), in pairs: one order, then the same
# order reversed. A knob is read against the baseline *round by round* (both measured in that
# round, so a change in the machine's load cancels). Its ratio is the geometric mean of the rounds, with a 95% interval
# from their spread: a gain only when the whole interval lies above 1x (and the mean clears a
# 5% band), *no difference* only inside 0.95-1.05x, else *not resolved*. A knob that does
# nothing is called a gain or a loss about 5% of the time (the rule is folded under the
# table). What the A/A shows (its distance from 1 times its half-width) is the table's
# *resolution*: a call's mean must clear it. The A/A row is the control: if it is itself
# called, no knob call of that run stands (its own rule is folded under the table).

# %%
lesson.knob_sweep()  # each knob against the baseline, round by round, and the plot; kept under sweep_knobs

# %% [markdown]
# Without a GPU, pinned memory and the device prefetcher have nothing to do, so they are not
# swept here; the reference GPU run measured its GPU rows (a row recorded before throughput
# was taken from windows is rebuilt from its waiting share and compute,
# `loader_sweep.row_samples_per_s`):

# %%
lesson.recorded_gpu_knobs()

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
lesson.cores_text()

# %% [markdown]
# ## C26: channels_last from `__getitem__`?
#
# The seed (section 4.2) advises, for a CNN, to return
# `tensor.contiguous(memory_format=torch.channels_last)` from `Dataset.__getitem__`. The rule
# first, then a real DataLoader over a Dataset that follows the advice:

# %% tags=["nbval-check-output"]
chapter.claim("C26")

# %%
c26_evidence = chapter.lab.channels_last_probe.probe()  # a real DataLoader over such a Dataset
print(lesson.c26_text(c26_evidence))
c26 = chapter.judge("C26", c26_evidence, form=chapter.seed_form)  # shown in the verdicts' table below

# %% [markdown]
# channels_last is a layout of four dimensions; a sample has three. It belongs on the 4-D
# batch after collation, in the training step (as `train_step` does, after the copy to the
# device) or in a custom `collate_fn`. An exercise on the strides involved:

# %%
chapter.exercise("05.collated_stride")


# %%
def collated_stride(batch_size: int, sample_shape: tuple[int, ...]) -> tuple[int, ...]:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
chapter.exercise("05.collated_stride").check(collated_stride)

# %% [markdown]
# ### Optional: a harder one (level 3, 10-15 minutes), the batch's strides in channels_last

# %%
chapter.exercise("05.channels_last_stride")


# %%
def channels_last_stride(shape: tuple[int, ...]) -> tuple[int, ...] | None:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
chapter.exercise("05.channels_last_stride").check(channels_last_stride)

# %% [markdown]
# ## C25: `non_blocking=True` without pinned memory
#
# In a training loop the CPU runs ahead: it queues the next step's kernels while the GPU
# still works on this one. A copy that makes the CPU wait for the queued work throws that
# lead away. So the copy is measured where the harm would be: a kernel of about 50 ms is
# queued first, then `x.to('cuda', non_blocking=True)` is issued, from pageable and from
# pinned memory, at sizes from 64 KiB to 256 MiB, and the clock says when the call gives the
# CPU back. C25 is judged at the seed's setting, a DataLoader batch (38.5 MB); how the other
# sizes behave is the course's own finding. Torch's warnings are recorded. The rule first:

# %% tags=["nbval-check-output"]
chapter.claim("C25")

# %% [markdown]
# Predict: a kernel of about 50 ms is queued on the GPU. Then `x.to('cuda', non_blocking=True)`
# is called with `x` a DataLoader batch (38.5 MB) in ordinary (pageable) host memory. When does
# the call return?

# %% jupyter={"source_hidden": true}
quiz_nb = chapter.lab.widgets.Quiz(
    "A 50 ms kernel is queued; then x.to('cuda', non_blocking=True) with x a pageable batch (38.5 MB). "
    "When does the call return?",
    choices=["at once: the CPU goes on while the kernel runs",
             "after the queued kernel and the copy: the CPU waits"],
    answer=lesson.when_pageable_returns,
)
quiz_nb

# %% [markdown]
# What CUDA documents (read from its "API synchronization behavior" page, not measured):
# for the *Async* copies, a transfer "between device memory and pageable host memory" "might
# be synchronous with respect to host", and where pageable memory must first be staged to
# pinned memory the driver may synchronise with the stream; from pinned memory the call
# returns at once. "Might" and "may" are why it is measured:

# %%
busy = chapter.here_or_recorded("busy_stream", lesson.busy_returns)  # measured on a GPU; else the recorded run
lesson.c25(busy)  # each copy's return against the queued work; C25 judged on a GPU, else recorded

# %% [markdown]
# ## Verdicts of this chapter
#
# C26 is judged here, on any machine (it is about tensor semantics). C25, C13 and C23 are
# claims about a CUDA GPU: on a GPU C25 is judged above and listed here, C23 and C13 in the
# optional depth below (the last cell saves them). Without one, this table holds C26 alone,
# and the reference GPU's recorded verdicts are in their own sections.

# %%
chapter.save()
chapter.table()

# %% [markdown]
# ## What to remember
#
# Each line below is built from what this run measured.

# %%
chapter.remember(lesson.takeaways())

# %% [markdown]
# ---
# # Optional depth
#
# The rest of the chapter is for after the workshop: each section stands alone.

# %% [markdown]
# ## Optional: start-up, the first batch of every epoch
#
# `persistent_workers` decides what becomes of the workers when an epoch ends. To see the
# start-up itself, the dataset here costs
# nothing to load (`loader_data.Trivial`: zeros), so what remains of a first batch is the
# workers' start. Predict: with `persistent_workers=True`, which first batches come faster?

# %% jupyter={"source_hidden": true}
quiz_startup = chapter.lab.widgets.Quiz(
    "With persistent_workers=True, which epochs get their first batch faster?",
    choices=["every epoch, the first included", "every epoch after the first",
             "none: no measurable difference"],
    answer=lesson.which_first_batches_are_faster,
    explanation=chapter.lab.lesson.EXPLAIN["startup"],  # shown after an answer
    holds=1,  # the start-up timings; not what pinning costs
)
quiz_startup

# %%
lesson.startup()  # kept under startup

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
lesson.pinning_cost()  # on a GPU kept under pinning_cost_fresh and pin_thread

# %% [markdown]
# ## Optional: host-to-device copies, C23
#
# The seed's table (section 4.3), for copies from host memory to the GPU:
# 4.2 GB/s from ordinary pageable memory, 12.8 GB/s with `pin_memory=True`, 18.6 GB/s with
# `pin_memory_device='cuda:0'` added. Predict the third row first.

# %% jupyter={"source_hidden": true}
quiz_c23 = chapter.lab.widgets.Quiz(
    "A 154 MB (147 MiB) batch (256 ImageNet images in float32) is copied to the GPU from pinned memory. "
    "How much faster does adding pin_memory_device='cuda:0' to the DataLoader make that copy?",
    choices=["about 1.45x, as the seed says", "a little (1.1x to 1.3x)", "none: the same copy"],
    answer=lesson.pin_memory_device_gain,
)
quiz_c23

# %% tags=["nbval-check-output"]
chapter.claim("C23")

# %% [markdown]
# First, what this torch does with `pin_memory_device`, read from the DataLoader itself (this
# part needs no GPU): build a loader with it and keep the warnings it gives.

# %%
lesson.dataloader_warnings()

# %% [markdown]
# And from its source: every line of this torch's DataLoader that mentions `pin_memory_device`,
# and whether the `torch.cuda._pin_memory()` the seed says `pin_memory=True` calls exists.

# %%
lesson.dataloader_source()

# %% [markdown]
# Then, on a GPU: bandwidth against copy size from pageable and from pinned memory, and at
# the seed's size (154 MB) the three variants of the seed's table, timed interleaved. The
# third is a batch that a DataLoader with `pin_memory_device='cuda:0'` produced.

# %%
lesson.c23()  # on a GPU kept under h2d_curve and h2d_seed_size, C23 judged and saved

# %% [markdown]
# ## Optional: C13, a "zero-copy DMA path"?
#
# The seed says `pin_memory_device='cuda:0'` "binds the pinned memory to the GPU" through
# unified virtual addressing, so that the GPU reads the batch directly and the explicit
# `.to('cuda')` copy disappears. If that were so, a GPU operation would accept the batch as
# it comes out of the DataLoader, and moving it would run no host-to-device memcpy.

# %% tags=["nbval-check-output"]
chapter.claim("C13")

# %%
lesson.c13()  # on a GPU kept under pmd_probe, C13 judged and saved

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
quiz_trap = chapter.lab.widgets.Quiz(
    "Reading a pinned host tensor right after host.copy_(gpu_tensor, non_blocking=True) gives ...",
    choices=["the GPU's values", "old values: the copy has not happened yet", "an error"],
    answer=lesson.what_the_early_read_gives,
    holds=1,  # the trap's reads; not the overlap
)
quiz_trap

# %%
lesson.d2h_trap()  # on a GPU kept under d2h_trap

# %% [markdown]
# A device-to-host copy with `non_blocking=True` into pinned memory returns at once; the
# values arrive later. Synchronise (or wait on an event) before reading them. Into pageable
# memory torch cannot copy asynchronously, so it waits, and the values are right.

# %% [markdown]
# ## Optional: the overlap, seen
#
# The same steps under the profiler, drawn by `labkit.measure.timeline`: once with the starving
# loader (no workers) and once at the knob table's worker count (on a GPU also pinned, with the device
# prefetcher). The lanes show where the step waits; on a GPU the summary gives the GPU's idle
# share and the share of host-to-device copy time that ran beside kernels (a low share says
# only that the copies did not overlap kernels; where they ran on the host's path is not timed).

# %%
lesson.overlap()  # kept under overlap

# %%
lesson.timeline("starving")

# %%
lesson.timeline("tuned")

# %%
lesson.recorded_overlap()

# %%
chapter.save()  # the optional sections' measurements and verdicts too
