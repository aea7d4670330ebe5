# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Timeline demo (browser tests only)
# A made-up GPU training trace and a real profile of this CPU, each drawn by
# `labkit.timeline.show`; `tests/browser/test_timeline_widget.py` builds the same synthetic
# trace and checks the page against `labkit.timeline`.

# %%
import contextlib
import io

import torch

from labkit import timeline, timeline_examples

# %%
gpu = timeline.from_chrome(timeline_examples.training_trace(4, seed=3), source="synthetic")
timeline.show(gpu, title="gpu")

# %%
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
with contextlib.redirect_stderr(io.StringIO()), torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
    for _ in range(3):
        model(torch.randn(32, 64)).sum().backward()
timeline.show(timeline.from_profiler(prof), title="cpu")

# %%
many = timeline.from_chrome(timeline_examples.training_trace(150), source="thinned")
timeline.show(many, title="thinned", max_bars=1000)
