# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
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
# **Part 2** measures the two ceilings and shows the three classic timing mistakes on real
# code, each against what the course's harness (`labkit.bench`) does instead.

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
import torch
from IPython.display import HTML, display

from labkit import bench, ceilings, env, pitfalls, results


def show_table(rows: dict, header: tuple = ("", "")) -> None:
    """Show a dict as a two-column HTML table."""
    body = "".join(f"<tr><td style='text-align:left'>{k}</td><td style='text-align:left'>{v}</td></tr>"
                   for k, v in rows.items())
    display(HTML(f"<table><tr><th>{header[0]}</th><th>{header[1]}</th></tr>{body}</table>"))


# %% [markdown]
# ## Part 1: where are we?
#
# `env.fingerprint()` describes the machine; the same description is stored with every
# result the course saves, so a number never travels without the machine that produced it.

# %%
fingerprint = env.fingerprint()
show_table(fingerprint, ("what", "this machine"))

# %%
# NBVAL_CHECK_OUTPUT
print("runs on:", env.where(), "| device:", env.device().type)
print("fingerprint fields:", sorted(fingerprint))

# %% [markdown]
# On a GPU the table adds its name, memory, SM count, L2 size and driver. Without one, every
# GPU-only measurement in the course is replaced by the *recorded* result of a reference GPU
# run, always labelled as recorded.
#
# ### The problem sizes for this machine
#
# The same notebooks run on a 2 GB Binder container and on an H200 with 141 GB, so sizes
# are never typed into a chapter: they come from `env.sizes()`.

# %%
sizes = env.sizes()
show_table({name: (f"{value:,} bytes ({value / 2**20:,.0f} MiB)" if name.endswith("bytes") else value)
            for name, value in sizes.as_dict().items()}, ("size", "value here"))

# %%
# NBVAL_CHECK_OUTPUT
print("size fields:", list(sizes.as_dict()))
print("sizes chosen for:", sizes.device)

# %% [markdown]
# ## Part 2: this machine's ceilings
#
# Two numbers bound almost everything in this course:
# - **copy bandwidth**: how many bytes per second a plain `dst.copy_(src)` moves, counting the
#   bytes read *and* the bytes written, on a buffer much larger than any cache;
# - **matmul rate**: floating-point operations per second of a large square matmul
#   (`2 n^3` per call), in float32 and, on a GPU, in bfloat16 and float16.
#
# Later chapters show each timing as a percentage of these: "80% of the copy ceiling" says
# there is little left to win; "3%" says something is wrong. The data is random (`torch.rand`,
# `torch.randn`), never zeros, and the values are cached per device; `refresh=True` measures
# them again now, in this run.

# %%
measured = ceilings.measure(refresh=True)
display(measured)

# %%
# NBVAL_CHECK_OUTPUT
print("matmul dtypes measured:", list(measured.matmul_tflops))
print("cached for device key:", measured.device_key == env.device_key())

# %%
assert measured.copy_gbps > 0 and all(rate > 0 for rate in measured.matmul_tflops.values())
results.record("00_setup_check", "ceilings", measured)
print(results.describe_machine())
display(results.against_reference("00_setup_check", "ceilings", {
    "copy_gbps": measured.copy_gbps,
    **{f"matmul_tflops.{k}": v for k, v in measured.matmul_tflops.items()},
    "device": measured.device,
}))

# %% [markdown]
# ## How `labkit.bench` times code
#
# `bench.time(fn)` warms the function up for a few milliseconds (throwing those calls away),
# then calls it many times and reports the **median** (robust to a few slow outliers), the
# **IQR** (its spread), the min and the number of runs, and warns when the spread exceeds 10%
# of the median. Here is one matmul timed, with every sample plotted:

# %%
n = sizes.matmul_n
a = torch.randn(n, n, device=env.device())
b = torch.randn(n, n, device=env.device())
matmul_timing = bench.time(lambda: a @ b, flops=2 * n**3, rep_ms=400, label=f"{n}x{n} float32 matmul")
display(matmul_timing)
figure = matmul_timing.plot()

# %% [markdown]
# ## Mistake 1: no synchronisation (GPU)
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
if env.has_cuda():
    no_sync = pitfalls.no_sync_vs_sync()
    results.record("00_setup_check", "no_sync", no_sync)
    label = "measured here"
else:
    no_sync = results.recorded("00_setup_check", "no_sync")
    label = "recorded on the reference GPU (this machine has none: the mistake is GPU-only)"
if no_sync is None:
    print("This machine has no GPU, and no reference GPU run has been recorded yet "
          "(results/nvidia-h200.json is missing), so there is nothing to show here.")
else:
    show_table({
        "matmul": f"{no_sync['n']}^3 {no_sync['dtype']}",
        "stopwatch, no synchronize": bench.timing_report.format_seconds(no_sync["no_sync_s"]),
        "stopwatch with synchronize": bench.timing_report.format_seconds(no_sync["with_sync_s"]),
        "labkit.bench median (CUDA events)": bench.timing_report.format_seconds(no_sync["harness_median_s"]),
        "no-sync understates the time by": f"{no_sync['understatement']:.0f}x",
    }, ("", label))

# %% [markdown]
# ## Mistake 2: no warm-up
#
# The first call of anything pays for work that later calls reuse: the first touch of fresh
# memory (the operating system maps each page on first write), building a kernel or a
# oneDNN primitive for a new shape, and on a GPU the CUDA context, cuBLAS handles and kernel
# loading. Timing one call, or averaging in the first, measures that set-up. Here, the first
# call against the steady state, on work this process has not done before (on the CPU on one
# thread, so that scheduling of other programs' threads does not blur the comparison):

# %%
fresh = torch.empty(sizes.copy_bytes // 4, device=env.device())   # memory never touched yet
image = torch.randn(1, 3, 97, 89, device=env.device())             # a shape not used before
kernel = torch.randn(7, 3, 5, 5, device=env.device())
one_thread = 1 if env.device().type == "cpu" else None
first_calls = [
    pitfalls.first_call_vs_steady(lambda: fresh.fill_(1.0), f"fill a fresh {sizes.copy_bytes >> 20} MiB buffer",
                                  threads=one_thread),
    pitfalls.first_call_vs_steady(lambda: torch.nn.functional.conv2d(image, kernel), "conv2d on a new shape",
                                  threads=one_thread),
]
results.record("00_setup_check", "first_call_here", first_calls)
fmt = bench.timing_report.format_seconds
show_table({row["label"]: f"first call {fmt(row['first_call_s'])}, steady median "
            f"{fmt(row['steady_median_s'])} ({row['first_over_steady']:.1f}x)" for row in first_calls},
           ("work", "measured here"))
fresh = None  # give the buffer back

# %%
recorded_first = None if env.has_cuda() else results.recorded("00_setup_check", "first_call")
if recorded_first:
    show_table({row["label"]: f"first call {fmt(row['first_call_s'])}, steady median "
                f"{fmt(row['steady_median_s'])} ({row['first_over_steady']:.0f}x)" for row in recorded_first},
               ("work", "recorded on the reference GPU"))
elif not env.has_cuda():
    print("No reference GPU run recorded yet: the GPU's first-call costs are not shown.")

# %% [markdown]
# ## Mistake 3: timing the cache
#
# Run the same small copy again and again and its data stays in a cache, so the benchmark
# reports cache speed, not memory speed. Sweeping the working set (source + destination)
# from a few KiB up shows the cache levels as steps in bandwidth. At the far left each call
# moves so few bytes that the fixed cost of calling a torch op dominates: there the curve
# measures overhead, another way small benchmarks mislead.

# %%
curve = pitfalls.cache_curve(sizes.cache_sweep_max_bytes, device=str(env.device()))
levels = pitfalls.cache_levels(str(env.device()))
results.record("00_setup_check", "cache_curve_here", {"points": curve, "levels": levels})
figure = pitfalls.plot_cache_curve(curve, levels, f"copy bandwidth against working set ({env.device().type}, measured here)")

# %%
# NBVAL_CHECK_OUTPUT
print("points:", len(curve), "| fields:", sorted(curve[0]))
print("cache levels marked:", list(levels))

# %%
recorded_curve = None if env.has_cuda() else results.recorded("00_setup_check", "cache_curve")
if recorded_curve:
    figure = pitfalls.plot_cache_curve(recorded_curve["points"], recorded_curve["levels"],
                                       "copy bandwidth against working set (reference GPU, recorded)")
elif not env.has_cuda():
    print("No reference GPU run recorded yet: the GPU's cache curve is not shown.")

# %% [markdown]
# What the harness does instead: in its default **cold** mode it overwrites a buffer twice
# the size of the last-level cache before every call, so each call starts from memory as it
# would inside a real model. **hot** mode (back to back, cache kept) is for questions about
# a loop over the same data. The same 1 MiB copy in both modes (on the CPU on one core,
# whose cache sizes are marked on the curve above):

# %%
small_src = torch.rand(2**20 // 4, device=env.device())
small_dst = torch.empty_like(small_src)
hot = bench.time(lambda: small_dst.copy_(small_src), mode="hot", bytes_moved=2 * 2**20,
                 threads=one_thread, label="1 MiB copy, hot")
cold = bench.time(lambda: small_dst.copy_(small_src), mode="cold", bytes_moved=2 * 2**20,
                  threads=one_thread, label="1 MiB copy, cold")
display(hot, cold)
print(f"hot reports {hot.gbps / cold.gbps:.2f}x the bandwidth of cold for the same copy")
if hot.pct_of_copy_ceiling is not None and hot.pct_of_copy_ceiling > 100:
    print(f"hot claims {hot.pct_of_copy_ceiling:.0f}% of the memory-copy ceiling: more than memory can "
          "deliver, so what it measured is the cache")
results.record("00_setup_check", "cold_vs_hot_here", {"hot": hot, "cold": cold})

# %% [markdown]
# ## A/B comparisons
#
# Comparing two variants means timing them *interleaved* (ABAB...), so that a machine that
# speeds up or slows down during the run affects both alike; `bench.compare` does this and
# reports each ratio with its spread over the rounds. A spread that straddles 1.0 means the
# difference is within the noise.

# %%
comparison = bench.compare({
    "a @ b": lambda: a @ b,
    "a.t() @ b (transposed view)": lambda: a.t() @ b,
    "a.t().contiguous() @ b": lambda: a.t().contiguous() @ b,
}, rounds=5, rep_ms=150)
display(comparison)

# %%
# NBVAL_CHECK_OUTPUT
print("columns:", list(comparison.table()[0]))
print("rounds ran in order:", comparison.order[:6], "...")

# %% [markdown]
# **What to remember:** synchronise (or use CUDA events), warm up, know whether your data
# sits in a cache, look at the spread before the median, and compare variants interleaved.
# Every timing in this course goes through `labkit.bench`, which does all of this.
