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
# `labkit.measure.timeline.show`; `tests/browser/test_timeline_widget.py` builds the same synthetic
# trace and checks the page against `labkit.measure.timeline`.

# %%
import contextlib
import io

import torch

from labkit.measure import example_traces, timeline
from labkit.show import widgets

# %%
gpu = timeline.from_chrome(example_traces.training_trace(4, seed=3), source="synthetic")
widgets.Timeline(gpu, title="gpu")

# %%
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
with contextlib.redirect_stderr(io.StringIO()), torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
    for _ in range(3):
        model(torch.randn(32, 64)).sum().backward()
widgets.Timeline(timeline.from_profiler(prof), title="cpu")

# %%
many = timeline.from_chrome(example_traces.training_trace(150), source="thinned")
widgets.Timeline(many, title="thinned", max_bars=1000)
