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
# # 05 DataLoader tuning
#
# A training step does two things in turn: it waits for the next batch, then it computes.
# When the waiting is not zero, a faster GPU buys nothing. This chapter measures, on the
# machine it runs on, how much of each step is waiting, which DataLoader knob moves it
# (`num_workers`, `batch_size`, `prefetch_factor`, `persistent_workers`, `pin_memory`,
# `non_blocking`), and where more workers stop helping (the *knee*), with the arithmetic
# that puts the knee there.
#
# Then the copy to the GPU: the second seed article, *"An industrial tensor pipeline
# optimisation handbook"* (in Chinese), says in its section 4.3 that
# `pin_memory_device='cuda:0'` opens a "zero-copy DMA path" (C13) and gives a table of
# host-to-device bandwidths (C23). Both are put to the test on a GPU; here you also see what
# `non_blocking=True` really does, what pinning costs, and a trap in the other direction.

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
from labkit.chapters.ch05_dataloader import claims as ch05_claims
from labkit.chapters.ch05_dataloader import (
    h2d_copies,
    loader_data,
    loader_plots,
    loader_sweep,
    shm,
    train_step,
)
from labkit.core import env, results
from labkit.measure import bench, timeline
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
# ## A dataset that costs something
#
# Random tensors cost nothing to load, so they would teach nothing here. `loader_data`
# draws a few dozen pictures at start-up, keeps them as **JPEG bytes**, and for every sample
# does what an ImageNet pipeline does: decode the JPEG, take a random resized crop, maybe
# flip, and normalise to float32. The class lives in a labkit module, not in this notebook,
# because DataLoader workers must be able to import it.

# %%
data = loader_data.SyntheticImages(length=4096, encoded_side=plan.encoded_side,
                                   output_side=plan.output_side)
print(f"{len(data.encoded)} JPEGs of {plan.encoded_side}x{plan.encoded_side} px, "
      f"{sum(map(len, data.encoded)) // len(data.encoded)} bytes each on average; "
      f"a sample is {data.sample_bytes} bytes of float32")
loader_plots.samples_figure(data)

# %% [markdown]
# What one sample costs on one core (the way a DataLoader worker runs it: one thread):

# %%
sample_cost = loader_data.per_sample_cost(data)
batch_load_s = plan.batch_size * sample_cost.median_s
print(f"one sample: {sample_cost.median_s * 1e3:.2f} ms (IQR {sample_cost.iqr_s * 1e3:.2f} ms, "
      f"{sample_cost.count} samples); one batch of {plan.batch_size}: {batch_load_s * 1e3:.0f} ms "
      "of one core")

# %% [markdown]
# ### Exercise 05.1: the bytes of a batch
#
# Workers hand batches to the main process through shared memory, so their size matters.
# Write the function, run the cell, then run the check.

# %%
exercises.get("05.batch_bytes")


# %%
def batch_bytes(batch_size: int, channels: int, side: int, dtype: str) -> int:
    raise NotImplementedError  # your code here


# %%
# NBVAL_CHECK_OUTPUT
exercises.get("05.batch_bytes").check(batch_bytes)

# %% [markdown]
# ## Shared memory first: will workers even run here?
#
# Each worker puts its finished batches in `/dev/shm`; containers often give it only 64 MB,
# and then workers fail ("unable to allocate shared memory ... No space left on device", or
# on some systems a bus error). So before any sweep: how much is free, and does the largest
# setting of this chapter fit? `shm.choose` keeps a setting that fits in half the free space
# and otherwise lowers `prefetch_factor`, then the worker count, and says so. Every loader
# below also has a `timeout`, so a stuck worker is an error, never a hang.

# %%
free = shm.free_bytes()
choice = shm.choose(max(plan.worker_counts), None, plan.batch_size * data.sample_bytes)
print(f"/dev/shm free: {'unknown (no /dev/shm here)' if free is None else f'{free / 2**20:.0f} MB'}")
print(choice.message)
worker_counts = tuple(w for w in plan.worker_counts if w <= choice.num_workers)
max_prefetch = 4  # the knob sweep below leaves out any setting that would not fit

# %% [markdown]
# ### Exercise 05.2: what a loader keeps in shared memory

# %%
exercises.get("05.in_flight_bytes")


# %%
def in_flight_bytes(num_workers: int, prefetch_factor: int | None, batch_bytes: int) -> int:
    raise NotImplementedError  # your code here


# %%
# NBVAL_CHECK_OUTPUT
exercises.get("05.in_flight_bytes").check(in_flight_bytes)

# %% [markdown]
# ## The consumer, and how long one step computes
#
# On a CPU the consumer is a small CNN on one core (the other cores are left to the
# workers); on a GPU it is ResNet-50 in bfloat16 and channels_last, a tuned step that the
# loader has to keep up with. Its compute time alone, with the batch already in memory:

# %%
step = train_step.consumer(plan.model)
ready_batch = [t.to(step.device) for t in
               next(iter(torch.utils.data.DataLoader(data, batch_size=plan.batch_size)))]
compute_timing = bench.time(lambda: step(ready_batch), rep_ms=600, warmup_ms=200,
                            threads=1 if not on_gpu else None,
                            label=f"{plan.model} training step, batch {plan.batch_size}")
compute_s = compute_timing.median_s
print(compute_timing)
print(f"loading that batch takes {batch_load_s * 1e3:.0f} ms of one core: "
      f"{batch_load_s / compute_s:.1f}x the step's compute")

# %% [markdown]
# ## The sweep over workers
#
# Predict first: with the numbers above (load time per batch, compute time per step, and
# this machine's cores), how many workers does it take before more stop helping?

# %% jupyter={"source_hidden": true}
@functools.cache
def worker_sweep() -> loader_sweep.Sweep:
    bar = loader_plots.ProgressBar(len(worker_counts), "workers")
    return loader_sweep.sweep(data, loader_sweep.grid(worker_counts, plan.batch_size), step,
                              steps=plan.steps, warmup_steps=plan.warmup_steps,
                              on_progress=bar.update)


@functools.cache
def worker_knee() -> loader_sweep.Knee:
    return loader_sweep.knee_of(worker_sweep(), cores=plan.cores, batch_size=plan.batch_size,
                                sample_cost_s=sample_cost.median_s, compute_s=compute_s)


quiz_knee = widgets.Quiz(
    f"This machine has {plan.cores} cores. With how many workers is throughput within 10% of "
    f"the best of {list(worker_counts)}?",
    answer=lambda: worker_knee().workers, kind="number",
    explanation="Each worker produces one batch per (batch x sample cost) seconds on its own "
                "core; the step needs one per compute time; and the main process needs a core too.",
)
quiz_knee

# %%
sweep_workers = worker_sweep()
knee = worker_knee()
keep("sweep_workers", {"rows": sweep_workers.rows(), "plan": plan.as_dict(),
                       "sample_cost_s": sample_cost.median_s, "compute_s": compute_s})
keep("knee", knee.as_dict())
sweep_workers

# %%
loader_plots.sweep_figure(sweep_workers, f"{plan.model}, batch {plan.batch_size}: workers swept")

# %%
print(knee.explanation)
noisy = [r.setting.label for r in sweep_workers.runs if r.noisy]
if noisy:
    print(f"Noisy (step-time IQR over 10% of the median): {', '.join(noisy)}. Another program "
          "is using this machine's cores; rerun this cell on a quiet machine before trusting the knee.")

# %% [markdown]
# ### Exercise 05.3: the knee

# %%
exercises.get("05.knee")


# %%
def knee_of(throughputs: dict[int, float], tolerance: float) -> int:
    raise NotImplementedError  # your code here


# %%
# NBVAL_CHECK_OUTPUT
exercises.get("05.knee").check(knee_of)

# %% [markdown]
# ## The other knobs, at the knee
#
# With the worker count fixed at the knee: a smaller and a larger batch, one batch or four
# prefetched per worker, and on a GPU `pin_memory` and `non_blocking` (each alone and
# together) and a *device prefetcher* that copies the next batch on a second CUDA stream
# while this one computes.

# %%
at_knee = max(knee.workers, 1 if max(worker_counts) >= 1 else 0)
base = loader_sweep.Setting(num_workers=at_knee, batch_size=plan.batch_size)
knob_settings = [base,
                 loader_sweep.Setting(num_workers=at_knee, batch_size=plan.batch_size // 2),
                 loader_sweep.Setting(num_workers=at_knee, batch_size=plan.batch_size * 2)]
if at_knee:
    knob_settings += [loader_sweep.Setting(num_workers=at_knee, batch_size=plan.batch_size,
                                           prefetch_factor=p) for p in sorted({1, max_prefetch})]
if on_gpu:
    knob_settings += [
        loader_sweep.Setting(num_workers=at_knee, batch_size=plan.batch_size, pin_memory=True),
        loader_sweep.Setting(num_workers=at_knee, batch_size=plan.batch_size, non_blocking=True),
        loader_sweep.Setting(num_workers=at_knee, batch_size=plan.batch_size, pin_memory=True,
                             non_blocking=True),
        loader_sweep.Setting(num_workers=at_knee, batch_size=plan.batch_size, pin_memory=True,
                             device_prefetch=True),
    ]
too_big = [s for s in knob_settings
           if shm.choose(s.num_workers, s.prefetch_factor, s.batch_size * data.sample_bytes).changed]
if too_big:
    print("left out, their batches in flight would not fit in /dev/shm:",
          ", ".join(s.label for s in too_big))
knob_settings = [s for s in knob_settings if s not in too_big]
bar = loader_plots.ProgressBar(len(knob_settings), "knobs")
sweep_knobs = loader_sweep.sweep(data, knob_settings, step, steps=plan.steps,
                                 warmup_steps=plan.warmup_steps, on_progress=bar.update)
keep("sweep_knobs", {"rows": sweep_knobs.rows()})
sweep_knobs

# %%
loader_plots.sweep_figure(sweep_knobs, f"the other knobs, {at_knee} worker(s)")

# %% [markdown]
# Read the table as samples per second, not milliseconds per step: a batch twice as large
# takes about twice as long per step. Without a GPU, `pin_memory` and `non_blocking` have
# nothing to do (torch warns and ignores `pin_memory`), so they are not swept here; the
# reference GPU run measured them:

# %%
gpu_knobs = recorded("sweep_knobs")
if on_gpu:
    print("This run is on a GPU: the table above has the GPU knobs.")
elif gpu_knobs is None:
    print("nothing recorded yet for the reference GPU (results/nvidia-h200.json has no chapter 05)")
else:
    for row in gpu_knobs["rows"]:
        print(f"recorded on {results.DEFAULT_REFERENCE}: {row['label']:<24} "
              f"{row['samples_per_s']:7.0f} samples/s, waiting {100 * row['wait_share']:.0f}%")

# %% [markdown]
# ## Start-up: the first batch of every epoch
#
# Without `persistent_workers`, every epoch starts its workers afresh; with them, the
# workers stay alive between epochs. Predict: with `persistent_workers=True`, which first
# batches come faster?

# %% jupyter={"source_hidden": true}
start_workers = max(1, min(2, max(worker_counts)))
short = loader_data.SyntheticImages(length=3 * plan.batch_size, unique=8,
                                    encoded_side=plan.encoded_side, output_side=plan.output_side)


@functools.cache
def startups() -> tuple[loader_sweep.Startup, loader_sweep.Startup]:
    setting = loader_sweep.Setting(num_workers=start_workers, batch_size=plan.batch_size)
    return (loader_sweep.startup(short, setting, epochs=4),
            loader_sweep.startup(short, loader_sweep.with_persistence(setting, True), epochs=4))


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
keep("startup", {"fresh": fresh.as_dict(), "persistent": kept.as_dict(), "workers": start_workers})
for run in (fresh, kept):
    print(f"{run.setting.label:<16} first batch per epoch: "
          + ", ".join(f"{t * 1e3:.0f} ms" for t in run.first_batch_s))
loader_plots.startup_figure([fresh, kept])

# %% [markdown]
# Starting a worker here is a `fork` of this process (Linux's default), which is quick; with
# the `spawn` start method (macOS, Windows) each worker imports torch afresh, and the
# difference grows to seconds per epoch.

# %% [markdown]
# ## Host-to-device copies: C23
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
    "A 154 MB batch (256 ImageNet images in float32) is copied to the GPU from pinned memory. "
    "How much faster does adding pin_memory_device='cuda:0' to the DataLoader make that copy?",
    choices=["about 1.45x, as the seed says", "a little (1.1x to 1.3x)", "none: the same copy"],
    answer=pin_memory_device_gain,
)
quiz_c23

# %%
# NBVAL_CHECK_OUTPUT
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
    comparison = h2d_copies.compare_sources({"pageable": pageable, "pinned": pinned,
                                             "pin_memory_device": with_device})
    keep("h2d_seed_size", comparison.table())
    return {"pageable_gbps": comparison["pageable"].timing.gbps,
            "pinned_gbps": comparison["pinned"].timing.gbps,
            "pin_memory_device_gbps": comparison["pin_memory_device"].timing.gbps,
            "pinned_speedup_iqr": h2d_copies.speedup_between(comparison, "pageable", "pinned"),
            "pin_memory_device_speedup_iqr": h2d_copies.speedup_between(
                comparison, "pinned", "pin_memory_device"),
            "pin_memory_device_batch_pinned": bool(with_device.is_pinned()),
            "transfer_bytes": seed_nbytes, "dataloader_warnings": dataloader_warnings,
            "noisy": [label for label, v in comparison.variants.items() if v.timing.noisy],
            "device": h2d_copies.environment_note()}


seed_lines = {"seed pageable": ch05_claims.SEED_GBPS["pageable"],
              "seed pinned": ch05_claims.SEED_GBPS["pinned"]}
if on_gpu:
    display(loader_plots.bandwidth_figure(copy_curve(), seed_lines))
    ev23 = c23_evidence()
    if ev23["noisy"]:  # a timing the harness flags as noisy is measured again, once
        c23_evidence.cache_clear()
        ev23 = c23_evidence()
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
# ## C13: a "zero-copy DMA path"?
#
# The seed says `pin_memory_device='cuda:0'` "binds the pinned memory to the GPU" through
# unified virtual addressing, so that the GPU reads the batch directly and the explicit
# `.to('cuda')` copy disappears. If that were so, a GPU operation would accept the batch as
# it comes out of the DataLoader, and moving it would run no host-to-device memcpy.

# %%
# NBVAL_CHECK_OUTPUT
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
# ## `non_blocking=True` from pageable memory
#
# Predict: `x` lives in ordinary (pageable) host memory. Does `x.to('cuda',
# non_blocking=True)` give the CPU back before the copy has finished?

# %% jupyter={"source_hidden": true}
@functools.cache
def call_returns() -> list[dict]:
    return [vars(r) | {"blocked_share": r.blocked_share} for r in h2d_copies.call_return_times()]


def pageable_returns_early() -> str:
    rows = call_returns() if on_gpu else recorded("call_return")
    if not rows:
        return "nothing recorded yet"
    row = next(r for r in rows if r["memory"] == "pageable" and r["non_blocking"])
    return "no: it returns when the copy is done" if row["blocked_share"] > 0.5 else "yes"


quiz_nb = widgets.Quiz(
    "Does x.to('cuda', non_blocking=True) return before the copy is done when x is pageable?",
    choices=["yes", "no: it returns when the copy is done"], answer=pageable_returns_early,
)
quiz_nb

# %%
rows = keep("call_return", call_returns()) if on_gpu else recorded("call_return")
if rows:
    label = "" if on_gpu else f" (recorded on {results.DEFAULT_REFERENCE})"
    for r in rows:
        print(f"{r['memory']:<9} non_blocking={str(r['non_blocking']):<5} call returned after "
              f"{r['call_return_s'] * 1e3:7.2f} ms, copy done after {r['copy_done_s'] * 1e3:7.2f} ms "
              f"({100 * r['blocked_share']:.0f}% of it spent blocked){label}")
else:
    print("No GPU here and nothing recorded yet for the reference GPU.")

# %% [markdown]
# From pageable memory the driver must first copy the data into a pinned staging buffer, on
# the CPU, so the call cannot return early: `non_blocking` is a request, not a promise.

# %% [markdown]
# ## What pinning costs
#
# Pinned memory is not free: pinning copies the batch into the pinned pool (in the
# DataLoader, on a thread of the main process), and the first time a size is seen the pool
# page-locks a new block, which is slow and rounds the size up.

# %%
if on_gpu:
    cost = keep("pinning_cost", h2d_copies.pinning_cost().as_dict())
    pin_loader = loader_sweep.make_loader(data, loader_sweep.Setting(
        num_workers=at_knee, batch_size=plan.batch_size, pin_memory=True))
    pin_thread = keep("pin_thread", h2d_copies.pin_thread_cpu_s(pin_loader, plan.steps))
else:
    cost, pin_thread = recorded("pinning_cost"), recorded("pin_thread")
if cost:
    tag = "" if on_gpu else f" (recorded on {results.DEFAULT_REFERENCE})"
    reserved = cost["host_reserved_bytes"]
    print(f"pinning {cost['nbytes'] / 2**20:.0f} MiB the first time: {cost['first_pin_s'] * 1e3:.0f} ms "
          f"({cost['first_pin_cpu_s'] * 1e3:.0f} ms of CPU); from the cached pool: "
          f"{cost['cached_pin_s'] * 1e3:.1f} ms ({cost['cached_pin_gbps']:.1f} GB/s){tag}")
    if reserved is not None:
        print(f"the pinned pool grew by {reserved / 2**20:.0f} MiB for it{tag}")
    if pin_thread and pin_thread.get("pin_thread_cpu_s") is not None:
        print(f"the DataLoader's pin thread: {pin_thread['pin_thread_cpu_s'] * 1e3:.0f} ms of CPU over "
              f"{pin_thread['batches']} batches ({100 * pin_thread['pin_thread_share_of_wall']:.0f}% "
              f"of the wall time){tag}")
else:
    print("No GPU here and nothing recorded yet for the reference GPU.")

# %% [markdown]
# ## The trap in the other direction
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
# ## The overlap, seen
#
# The same steps under the profiler, drawn by `labkit.measure.timeline`: once with the starving
# loader (no workers) and once at the knee (on a GPU also pinned, with the device
# prefetcher). The lanes show where the step waits; on a GPU the summary gives the share of
# host-to-device copy time hidden behind kernels and the GPU's idle share.

# %%
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

# %% [markdown]
# ## Verdicts of this chapter
#
# C13 and C23 are claims about a CUDA GPU and have no CPU form: on a GPU they are judged
# above, in the seed's own setting; without one, here is what the reference GPU recorded,
# labelled as recorded.

# %%
chapter.save()
if chapter.verdicts:
    display(chapter.table())
else:
    display(claims.recorded_evidence(["C13", "C23"]))

# %% [markdown]
# ## What to remember
#
# Each line below is built from what this run measured (and, for the GPU lines on a CPU
# machine, from the recorded reference run).

# %%
w0 = sweep_workers.where(num_workers=0)[0]
best = max(sweep_workers.runs, key=lambda r: r.samples_per_s)
kept_gain = min(fresh.first_batch_s[1:]) / max(min(kept.first_batch_s[1:]), 1e-9)
takeaways = [
    f"Measure the wait, not the total: with no workers a step waited {100 * w0.wait_share:.0f}% "
    f"of the time; {best.setting.label} cut that to {100 * best.wait_share:.0f}% and ran "
    f"{best.samples_per_s / w0.samples_per_s:.1f}x the samples per second.",
    f"The knee sits at {knee.workers} worker(s) here; the arithmetic (a batch costs "
    f"{batch_load_s * 1e3:.0f} ms of one core, a step computes in {compute_s * 1e3:.0f} ms) asks "
    f"for {knee.workers_needed:.1f}, out of {plan.cores} cores of which the step itself takes one"
    + (" (the sweep was noisy: other programs shared the cores)." if noisy else "."),
    f"persistent_workers saves the worker start-up on every epoch but the first: later first "
    f"batches came {kept_gain:.1f}x faster here.",
    "Shared memory bounds the workers: about (workers x prefetch_factor + 1) batches sit in "
    f"/dev/shm at once; {choice.message.split(';')[0]}.",
]
recorded_c23 = next((v for v in chapter.verdicts if v.claim_id == "C23"), None) or claims.recorded("C23")
if recorded_c23 is not None:
    ev = recorded_c23.evidence
    takeaways.append(
        f"Pinned memory is what makes copies fast ({ev['pinned_gbps'] / ev['pageable_gbps']:.1f}x "
        f"pageable{'' if on_gpu else ', recorded'}); pin_memory_device added "
        f"{ev['pin_memory_device_gbps'] / ev['pinned_gbps']:.2f}x, and the batch still needs its copy.")
print("\n".join(f"{k}. {line}" for k, line in enumerate(takeaways, start=1)))
