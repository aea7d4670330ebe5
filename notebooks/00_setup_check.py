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
# # 00 Setup check: your machine, its ceilings, how to read a benchmark
#
# Every chapter of this course measures something on *your* machine. Before it can, we need
# three things: to know what the machine is, to know how fast it can possibly go (its
# *ceilings*), and to know how to time code without fooling ourselves.
#
# **Part 1** reports where this notebook runs and the problem sizes the course will use here.
# **Part 2** measures the ceilings. **Part 3** shows four timing mistakes on real code, each
# against what the course's harness (`labkit.measure.bench`) does instead: no synchronisation, no
# warm-up, timing the cache, and timing the memory allocator without knowing it.
#
# **How to work through a chapter.** Run it top to bottom (Run > Run All Cells), then read from
# the top. Each question holds back what is below it, the claim's numbers and the measurement,
# until you answer it, so predict before you look: pick or type your answer and press *Check
# against the code*, or *Skip* to see it without predicting. Save with Ctrl+S: your answers
# and outputs are kept in the chapter's `.ipynb`, and a reopened chapter shows them.

# %%
import os  # in Google Colab only: fetch the course and install labkit (elsewhere this does nothing)

if "COLAB_RELEASE_TAG" in os.environ:
    status = os.system("git clone -q --depth 1 https://github.com/tensor-layout-lab/tensor-layout-lab /content/tensor-layout-lab; pip install -q /content/tensor-layout-lab")
    assert status == 0, "installing labkit failed: the lines above say why"

# %%
import torch

from labkit import session

chapter = session.open("00_setup_check")  # says where it runs; the chapter object is the door:
# chapter.lab.<name> is this chapter's modules (pitfalls, machine) and the course's instruments

# %% [markdown]
# ## Part 1: where are we?
#
# `env.fingerprint()` describes the machine; the same description is stored with every
# result the course saves, so a number never travels without the machine that produced it.

# %%
env, machine, pitfalls = chapter.lab.env, chapter.lab.machine, chapter.lab.pitfalls
machine.fingerprint_table(env.fingerprint())

# %%
# Unchecked by nbval: which machine this is (GPU or not, local or Binder) is not a fact of the course.
print(machine.where_it_runs(chapter.on_gpu, env.where()))

# %% [markdown]
# On a GPU the table adds its name, memory, SM count, L2 size and driver.
#
# ### The problem sizes for this machine
#
# The same notebooks run on anything from a 2 GB Binder container to a data-centre GPU, so
# sizes are never typed into a chapter: they come from `env.sizes()`.

# %%
machine.sizes_table(chapter.sizes.as_dict())

# %% [markdown]
# ## Part 2: this machine's ceilings
#
# Two numbers bound almost everything in this course:
# - **copy bandwidth**: how many bytes per second a plain `dst.copy_(src)` moves, counting the
#   bytes read *and* the bytes written, on a large buffer (the result's line says where it sits
#   against the caches this machine reports);
# - **matmul rate**: floating-point operations per second of a large square matmul
#   (`2 n^3` per call), in float32 and, on a GPU, also in TF32 (float32 data, tensor-core
#   math), bfloat16 and float16.
#
# Later chapters show each timing as a percentage of these: "80% of the copy ceiling" says
# there is little left to win; "3%" says something is wrong. The data is random (`torch.rand`,
# `torch.randn`), never zeros, and the values are cached per device; `refresh=True` measures
# them again now, in this run.

# %%
# Measured now (refresh=True), and kept under "ceilings" with this run's results.
# A refresh never lowers a ceiling this machine reached before: a loaded run reads low.
measured = chapter.here_or_recorded("ceilings", lambda: chapter.lab.ceilings.measure(refresh=True), can=True)
assert measured.copy_gbps > 0 and all(rate > 0 for rate in measured.matmul_tflops.values())
# the line names each ceiling kept from an earlier run with its own date (review 2026-12-06z 00-02 item 4)
machine.ceilings_line(measured, chapter.lab.conditions.reported_caches(chapter.device))  # every field: measured.as_dict()

# %% [markdown]
# The same ceilings as recorded on the course's reference GPU (an NVIDIA H200), for scale:

# %%
reference = chapter.reference("ceilings")
print(machine.reference_machine_line(reference))  # with its ceilings' own dates
machine.ceilings_table(measured, reference)

# %% [markdown]
# ### Why a ceiling is the best rate of a sweep: the power cap
#
# "A large square matmul" begs the question: how large? The ceilings above are the best
# rate over a sweep of sizes. On a big GPU the largest size is not the fastest: a long
# bf16 or fp16 matmul draws the card's whole power budget, and the GPU lowers its clock to
# stay inside it. Each point of the sweep, as a share of its math's best:

# %%
# This run's sweep on a GPU; on a CPU the reference GPU's, recorded.
machine.sweep_table(chapter.here_or_recorded("ceilings", lambda: measured))

# %% [markdown]
# What the GPU does meanwhile was measured once on the reference H200 by
# `benchmarks/bf16_ceiling_probe.py` (recorded, not measured in this run): nvidia-smi sampled
# the SM clock, the power draw and the throttle reason while a bf16 8192 matmul ran on three
# kinds of data.

# %%
machine.probe_table(chapter.lab.results.repository_results_dir() / "h200_probes" / "bf16_ceiling_probe.json")

# %% [markdown]
# So a share of a ceiling up to about 105% reads "at the ceiling"; a larger one names its
# candidates: a ceiling reached at another size or clock, data sitting in a cache, or a
# wrong byte or FLOP count.

# %% [markdown]
# ### Exercise 00.1: the bandwidth of a copy
#
# Write the function, run its cell, then run the check: it compares your function with the
# answer torch's own byte counts give, on a few hundred random cases, and shows the first
# one it gets wrong.

# %%
chapter.exercise("00.copy_gbps")


# %%
def copy_gbps(shape: tuple[int, ...], dtype: torch.dtype, seconds: float) -> float:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
chapter.exercise("00.copy_gbps").check(copy_gbps)

# %% [markdown]
# ## How `labkit.measure.bench` times code
#
# `bench.time(fn)` first calls the function for 25 ms and throws those calls away (the
# warm-up), then calls it for about 100 ms and reports the **median** (robust to a few slow
# outliers), the **IQR** (its spread), the min and the number of runs, and warns when the
# spread exceeds 10% of the median. Here is one matmul timed back to back (`mode="hot"`; the
# default, cold, flushes the caches before every call: the two are compared below), with every
# sample plotted:

# %%
bench = chapter.lab.bench
n = chapter.sizes.matmul_n
a = torch.randn(n, n, device=chapter.device)
b = torch.randn(n, n, device=chapter.device)
matmul_timing = bench.time(lambda: a @ b, flops=2 * n**3, rep_ms=400, mode="hot",
                           label=f"{n}x{n} float32 matmul")
machine.timing_table(matmul_timing)  # every field: matmul_timing (a labkit.measure.timing.Timing)

# %%
figure = chapter.lab.timing_plots.plot_timing(matmul_timing)

# %% [markdown]
# ### Exercise 00.2: the median and the IQR
#
# The two numbers `bench.time` leads with, computed by you from the samples (the reference
# is `torch.quantile`, which interpolates between samples the way the harness does).

# %%
chapter.exercise("00.median_and_iqr")


# %%
def median_and_iqr(samples: list[float]) -> tuple[float, float]:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
chapter.exercise("00.median_and_iqr").check(median_and_iqr)

# %% [markdown]
# ## Part 3: four timing mistakes
#
# ### Mistake 1: no synchronisation (GPU)
#
# On a GPU, `c = a @ b` only *queues* the kernel and returns. A stopwatch around it without
# `torch.cuda.synchronize()` measures how fast Python can queue work, not the work:
#
# ```python
# start = time.perf_counter()
# for _ in range(20):
#     a @ b                      # returns at once: the GPU is still busy
# no_sync = (time.perf_counter() - start) / 20
# ```
#
# The harness records CUDA events around each call and synchronises once at the end.

# %%
# Measured on a GPU; without one (the mistake is GPU-only), the reference GPU's run, recorded.
no_sync = chapter.here_or_recorded("no_sync", pitfalls.no_sync_vs_sync)
machine.no_sync_table(no_sync)

# %% [markdown]
# ### Mistake 2: no warm-up
#
# The first call of anything pays for work that later calls reuse: on a CPU the first touch
# of fresh memory (the operating system maps each page on first write), preparing an
# implementation for a shape not seen before, and on a GPU the CUDA context, cuBLAS handles
# and kernel loading. (A GPU buffer from `torch.empty` is mapped by `cudaMalloc` when it is
# allocated, so on a GPU the first fill pays for loading the fill kernel, not for pages.) Timing one call, or averaging in the first, measures that set-up. Here, the first
# call against the steady state, on work this process has not done before (on the CPU on one
# thread, so that scheduling of other programs' threads does not blur the comparison):

# %%
copy_bytes = chapter.sizes.copy_bytes
fresh = torch.empty(copy_bytes // 4, device=chapter.device)   # never written yet (CPU: pages unmapped)
image = torch.randn(1, 3, 97, 89, device=chapter.device)      # a shape not used before
kernel = torch.randn(7, 3, 5, 5, device=chapter.device)
other_image = torch.randn(1, 3, 32, 32, device=chapter.device)  # warm=: loads cuDNN (CPU: oneDNN) first
one_thread = 1 if chapter.device.type == "cpu" else None
first_calls = chapter.here_or_recorded("first_call_here", lambda: [  # measured, and kept
    pitfalls.first_call_vs_steady(lambda: fresh.fill_(1.0), f"fill a fresh {copy_bytes >> 20} MiB buffer",
                                  threads=one_thread),
    pitfalls.first_call_vs_steady(lambda: torch.nn.functional.conv2d(image, kernel), "conv2d on a new shape",
                                  threads=one_thread, warm=lambda: torch.nn.functional.conv2d(other_image, kernel)),
], can=True)
fresh = None  # give the buffer back
machine.first_call_table(first_calls)

# %%
# Without a GPU, the reference GPU's first calls (its CUDA context among them), recorded.
parity_calls = chapter.only_on("cpu", lambda: chapter.reference("first_call"))
machine.first_call_table(parity_calls, note=machine.parity_first_calls_note(parity_calls))

# %% [markdown]
# ### Mistake 3: timing the cache
#
# Run the same small copy again and again and its data stays in a cache, so the benchmark
# reports cache speed, not memory speed. Predict first: how much faster does a small copy
# report, timed back to back (hot), than after a cache flush (cold)? Then a sweep of the
# working set from a few KiB up looks for the cache levels as steps in bandwidth. One small
# copy a call would time the call, not the cache, so each point repeats its work inside one
# call (on a CPU one sum reading the buffer up to thousands of times, on a GPU a CUDA Graph
# replaying up to 1,024 copies a launch, and from 256 MiB, where one copy hides the next launch,
# one plain copy a call); the grey line is each point's share of call cost,
# the text under the curve says which steps showed.

# %% jupyter={"source_hidden": true}
quiz_hot_cold = chapter.lab.widgets.Quiz(
    "The same small copy, timed back to back (hot) and after a cache flush (cold): how many "
    "times the cold bandwidth does hot report?",
    choices=["about the same (within 20%)", "1.2x to 3x", "more than 3x"],
    answer=lambda: pitfalls.hot_cold_class(globals().get("hot"), globals().get("cold")),
    # what answers it: the cache curve, the reference GPU's curve and the measurement (review
    # 2026-12-03e item 12: under the curve, its 1 MiB point and DRAM plateau gave it away)
    holds=3,
    explanation="Hot reads the data from the cache the previous call left it in; cold reads it "
                "from memory. How much that is worth depends on the cache and the memory of "
                "this machine, and on whether the copy is big enough to time at all.",
)
quiz_hot_cold

# %%
with pitfalls.timing_warnings() as flagged:  # points too fast to time: counted below
    curve = chapter.here_or_recorded("cache_curve_here", lambda: {  # measured, and kept
        "points": pitfalls.cache_curve(chapter.sizes.cache_sweep_max_bytes, device=str(chapter.device)),
        "levels": pitfalls.cache_levels(str(chapter.device)),
        "copy_ceiling_gbps": measured.copy_gbps if chapter.on_gpu else None}, can=True)  # a GPU's curve is copies
figure = pitfalls.plot_cache_curve(curve["points"], curve["levels"],
                                   f"bandwidth against working set ({chapter.device.type}, measured here)",
                                   curve.get("copy_ceiling_gbps"))
if flagged:
    print(f"The harness flagged {len(flagged)} of {len(curve['points'])} points as too fast to time reliably "
          "(under 20x the timer's resolution): read them as a fixed cost, not bandwidth.")
print(pitfalls.cache_curve_text(curve, pitfalls.cache_point_probe(torch.cuda.get_device_name() if chapter.on_gpu else "")))

# %%
# Without a GPU, the reference GPU's cache curve as this chapter measured it there, recorded.
figure = pitfalls.plot_recorded_curve(chapter.only_on("cpu", lambda: chapter.reference("cache_curve_here")))

# %% [markdown]
# What the harness does instead: in its default **cold** mode it overwrites a buffer twice
# the size of the last-level cache before every call, so each call starts from memory as it
# would inside a real model. **hot** mode (back to back, cache kept) is for questions about
# a loop over the same data. The same copy in both modes, sized to fit the cache (on the CPU
# 1 MiB on one core, against the copy ceiling the table names: one core's where this run measured
# it; on a GPU a quarter of its L2,
# by device time, the GPU's own time on the work, read from CUDA events or its kernel records,
# not the host's clock; and the hot copy also as a loop timed by wall clock: a copy this short can
# run faster than Python launches it, and then a loop of them runs at the launch's pace, which
# the course calls launch-bound).

# %%
small_bytes = pitfalls.hot_cold_source_bytes(str(chapter.device))
small_src = torch.rand(small_bytes // 4, device=chapter.device)
small_dst = torch.empty_like(small_src)
size_text = f"{small_bytes / 2**20:.3g} MiB"
with pitfalls.timing_warnings() as hot_cold_warnings:
    hot = bench.time(lambda: small_dst.copy_(small_src), mode="hot", bytes_moved=2 * small_bytes,
                     threads=one_thread, label=f"{size_text} copy, hot")
    cold = bench.time(lambda: small_dst.copy_(small_src), mode="cold", bytes_moved=2 * small_bytes,
                      threads=one_thread, label=f"{size_text} copy, cold")
hot_cold_too_fast = bool(hot_cold_warnings)
# on a GPU, the hot copy back to back as a Python loop runs it: perf_counter around many calls and
# one synchronize, no events per call (their own microseconds would read as launch-bound)
with pitfalls.timing_warnings():
    hot_loop = pitfalls.loop_per_call(lambda: small_dst.copy_(small_src), str(chapter.device),
                                      f"{size_text} copy, hot loop", bytes_moved=2 * small_bytes) if chapter.on_gpu else None
chapter.here_or_recorded("cold_vs_hot_here", lambda: {"hot": hot, "cold": cold, "source_bytes": small_bytes,
                                                      "too_fast": hot_cold_too_fast,
                                                      **({"hot_loop": hot_loop} if hot_loop else {})}, can=True)
# on a GPU: device time, the loop's pace under it; on the CPU: the share of the 1-thread ceiling;
# under it the ratio, what bound the hot copy, and a share over 100% named as the cache
hot_cold = pitfalls.hot_cold_table(hot, cold, size_text, hot_cold_too_fast, measured, hot_loop)
hot_cold

# %% [markdown]
# ### Mistake 4: timing the allocator (CPU)
#
# Every call of a model allocates its outputs afresh. On Linux, glibc's `malloc` hands large
# freed blocks back to the operating system (blocks above its mmap threshold are unmapped,
# and the top of the heap is trimmed), so the next call gets fresh pages, and the kernel
# traps on the first write to each page (usually 4 KiB) to map it: a *minor page fault*. A CPU timing
# then measures that as well as the work. The harness counts the page faults of the timed
# calls (`getrusage`) and warns when they explain a large share of the time;
# `keep_allocator_memory=True` times the same calls while malloc keeps freed memory
# (`mallopt` raises its mmap and trim thresholds), to see the work alone.
#
# Here a small CNN's forward pass (batch 8, 64x64 images, one thread) with glibc's defaults
# and with malloc keeping its memory. `pitfalls.allocator_effect` times each in its own child
# process, in interleaved rounds, so the two run alike (the kept one must: once malloc's
# thresholds are set by hand glibc cannot go back to its adaptive default). The allocator is
# blamed only when the extra page faults, priced at what one fault costs here, cover at least
# half the gap:

# %%
torch.manual_seed(0)
small_cnn = torch.nn.Sequential(
    torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
    torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10)).eval()
cnn_images = torch.randn(8, 3, 64, 64)
cnn_forward = pitfalls.inference(small_cnn, cnn_images)  # the forward pass without autograd
allocator = chapter.here_or_recorded("allocator_here", can=True, measure=lambda: pitfalls.allocator_effect(
    cnn_forward, "small CNN forward"))  # default first, then kept; measured, and kept
allocator_default, allocator_kept = allocator["default"], allocator["kept"]
allocator_table = chapter.show([{"timing": t.label, "median": t.median_s, "IQR": t.iqr_s,
                                  "page faults per call": t.minor_faults_per_call}
                                 for t in (allocator_default, allocator_kept)], units={"median": "s", "IQR": "s"})
allocator_table.note(pitfalls.allocator_text(allocator))  # a noisy timing vetoes only by the trust rule
allocator_table


# %% [markdown]
# On a GPU this mistake does not arise in the same way: PyTorch's CUDA caching allocator
# keeps freed GPU memory for the next allocation instead of returning it to the driver. The
# count of `cudaMalloc` segments before and after timing the same CNN on the GPU shows it:

# %%
# On a GPU, measured (the first call allocates what later calls reuse; then the CNN is timed);
# without one, the reference GPU's run, recorded.
gpu_allocator = chapter.here_or_recorded("gpu_allocator",
                                         lambda: pitfalls.gpu_allocator_segments(small_cnn, cnn_images))
print(machine.gpu_allocator_line(gpu_allocator))

# %% [markdown]
# ## A/B comparisons
#
# Comparing two variants means timing them *interleaved* (ABAB...), so that a machine that
# speeds up or slows down during the run affects both alike; `bench.compare` does this and
# reports each ratio with its spread over the rounds. A spread that straddles 1.0 means the
# difference is within the noise; so does one that a timing the harness flags as noisy could
# move across 1.0 (the trust rule every later chapter prints).

# %%
comparison = bench.compare({
    "a @ b": lambda: a @ b,
    "torch.mm(a, b) (the same product)": lambda: torch.mm(a, b),
    "(a * 2) @ b (one elementwise op more)": lambda: (a * 2) @ b,
}, rounds=5, rep_ms=150)
pitfalls.ab_table(comparison)

# %% [markdown]
# ## Part 4: the timeline -- when the machine works, waits and copies
#
# A total hides *when* things happen: a step can take 10 ms because the processor computed for
# 10 ms, or because it computed for 2 ms and waited for 8. `torch.profiler` records every
# operator (on a GPU also every kernel and every copy); `labkit.measure.timeline` reads that record into
# lanes, one per CPU thread and one per GPU stream, and computes a few figures from it. Later
# chapters use it for launch gaps (04), copies hidden behind compute (05) and where a ResNet-50
# batch spends its time (08).
#
# Predict first:

# %% jupyter={"source_hidden": true}
quiz_busy = chapter.lab.widgets.Quiz(
    "Three training steps of a small convolutional network on this machine, profiled: for what "
    "share of the profiled span is the processor doing the work busy (on a GPU the GPU, on a CPU "
    "the busiest thread)?",
    choices=list(pitfalls.BUSY_CHOICES),
    answer=lambda: pitfalls.busy_class(globals().get("step_summary")),
    holds=3,  # the steps' summary, the timeline and the shares; not the rest of the chapter
)
quiz_busy

# %%
step_model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(16 * 30 * 30, 10),
).to(chapter.device)
step_optimizer = torch.optim.SGD(step_model.parameters(), lr=0.01)
step_images = torch.randn(16, 3, 32, 32, device=chapter.device)


def train_step() -> torch.Tensor:
    loss = step_model(step_images).square().mean()
    loss.backward()
    step_optimizer.step()
    step_optimizer.zero_grad()
    return loss


train_step()  # warm-up: the first call allocates memory and picks algorithms
# the profiler records the CPU, and the GPU where there is one; it waits for the GPU when it stops
with torch.profiler.profile(activities=torch.profiler.supported_activities()) as prof:
    for _ in range(3):
        train_step()
timeline = chapter.lab.timeline
step_trace = timeline.from_profiler(prof)
step_summary = timeline.summary(step_trace)
print(step_summary)

# %% [markdown]
# The same run as lanes. Each bar is an operator, the bars under it the operators it called.
# Scroll on the picture to zoom (or click it and press `+`, `-`, the arrows, `0`), drag to pan,
# hover a bar for its name and duration; on a GPU, click a kernel to see the operator that
# launched it.

# %%
chapter.lab.widgets.Timeline(step_trace, title="three training steps on this machine")

# %%
gemm_share = step_summary.kind_shares.get("GEMM/conv", 0.0)
busiest = max(t.busy_share or 0 for t in step_summary.tracks)
print(f"In this run, GEMM/conv took {100 * gemm_share:.0f}% of the {step_summary.kind_shares_of}; "
      + (f"the GPU was idle {100 * step_summary.gpu_idle_share:.0f}% of its span."
         if step_summary.gpu_idle_share is not None
         else f"the busiest thread was busy {100 * busiest:.0f}% of its span."))

# %% [markdown]
# On the reference H200 (*recorded*, not measured here): a training step whose batches
# (pinned memory, `non_blocking=True`) are copied on a second CUDA stream while the previous
# batch computes. The copies run under the kernels.

# %%
recorded_trace = chapter.lab.results.repository_results_dir() / "h200_probes" / "timeline_trace.json"
h200_trace = timeline.load(recorded_trace) if recorded_trace.exists() else None
print("H2D copy time hidden behind kernels on the H200 (recorded): "
      f"{100 * timeline.summary(h200_trace).h2d_overlap_share:.0f}%" if h200_trace else
      "Nothing recorded yet for the H200 timeline (results/h200_probes/timeline_trace.json).")

# %%
h200_trace and chapter.lab.widgets.Timeline(h200_trace, title="recorded on an NVIDIA H200")

# %% [markdown]
# **Sharing a GPU.** In a workshop, several learners' kernels may use the same GPU or MIG
# slice. A copy or matmul timed then measures the share of the GPU you got, not the GPU, and
# that share changes from run to run. The harness checks the driver's process list while it
# times: such a timing has shared_gpu=True and a 'shared GPU' warning. A verdict that rests on
# it reads 'depends (on a shared GPU)' rather than confirmed or refuted.

# %%
print(machine.sharing_line(chapter.on_gpu, chapter.lab.sharing.others_on_gpu()))

# %% [markdown]
# ## What to remember
#
# Each line is built from what this run measured (or, for the GPU-only mistake on a CPU
# machine, from the recorded reference run).

# %%
rows = {row["variant"]: row for row in comparison.table()}
same_product = rows["torch.mm(a, b) (the same product)"]
within = pitfalls.ab_reading(comparison, "torch.mm(a, b) (the same product)")
conv_first = first_calls[1]
conv_steady = machine.first_over_steady(conv_first)  # on the first call's clock where recorded so
fmt = chapter.lab.timing.format_seconds
takeaways = [
    # Mistakes 1 and 2 in one line, what the timer sees of a call (the curriculum's three to five;
    # the session-aa code review: joining 3 and 4 made one line of ~95 words on the GPU page)
    ((f"Synchronise: on the GPU a stopwatch without synchronize reported {fmt(no_sync['no_sync_s'])} "
      f"per matmul, {no_sync['understatement']:.0f}x less than the harness's "
      f"{fmt(no_sync['harness_median_s'])} ({machine.provenance(no_sync)}).") if no_sync else
     "Synchronise: on a GPU a stopwatch without synchronize times the launch, not the work "
     "(no GPU here and none recorded yet to show it).")
    + f" Warm up: the first conv2d on a new shape took {fmt(conv_first['first_call_s'])}, "
    f"{machine.ratio_text(conv_steady[1])} its steady median of {fmt(conv_steady[0])}"
    + (" (both wall-clock)." if conv_steady[2] else " (GPU time: read the ratio as an order of magnitude)."),
    pitfalls.hot_cold_takeaway(hot, cold, size_text, hot_cold_too_fast, hot_loop),  # the clock, the loop's reading
    pitfalls.allocator_takeaway(allocator, fmt),  # both fault counts, and why where the defaults did not fault
    f"See time, not only totals: in three profiled training steps GEMM/conv took "
    f"{100 * gemm_share:.0f}% of the {step_summary.kind_shares_of}"
    + (f", and the GPU was idle {100 * step_summary.gpu_idle_share:.0f}% of its span (the timeline above)."
       if step_summary.gpu_idle_share is not None else
       f", and the busiest thread was busy {100 * busiest:.0f}% of its span (the timeline above)."),
    f"Compare interleaved, read the spread: torch.mm(a, b), the same product as a @ b, took "
    f"{same_product['ratio']:.2f}x its time (rounds {same_product['ratio_q25']:.2f} to "
    f"{same_product['ratio_q75']:.2f}), {within}.",
]
chapter.remember(takeaways)
