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
# # Widget demo (browser tests only)
# Every widget in labkit.show.widgets once, each with a title the browser tests look for
# (`tests/browser/test_widgets.py` builds the same tensors and checks the page against
# `labkit.core.layout`).

# %%
import time

import torch
import traitlets

from labkit.show import widgets

# %%
widgets.AddressGrid(torch.arange(12).reshape(3, 4).t(), title="transpose")

# %%
widgets.AddressGrid(torch.arange(4).expand(3, 4), title="broadcast")

# %%
widgets.AddressGrid(torch.arange(40).reshape(5, 8)[1:4, 2::3], title="gaps")

# %%
widgets.AddressGrid(torch.arange(24).reshape(2, 3, 4).permute(0, 2, 1), title="3d")

# %%
widgets.AddressGrid(torch.zeros(100, 100), title="large")

# %%
widgets.AddressGrid(torch.arange(24).reshape(1, 2, 3, 4).contiguous(memory_format=torch.channels_last),
                    title="channels_last")

# %%
widgets.AddressGrid(torch.tensor(7), title="scalar")

# %%
widgets.AddressGrid(torch.zeros(0, 3), title="empty")

# %%
widgets.StrideExplorer(storage_size=12, title="explorer")

# %%
widgets.Quiz("Strides of torch.zeros(3, 4).t()?", choices=["(4, 1)", "(1, 4)", "(3, 1)"],
             answer=lambda: tuple(torch.zeros(3, 4).t().stride()))

# %%
widgets.Quiz("Bytes in a float32 tensor of shape (3, 4)?", answer=lambda: torch.zeros(3, 4).nbytes,
             unit="B")

# %%
widgets.Quiz("A quiz whose answer code raises", answer=lambda: torch.zeros(2)[5].item())

# %%
# its answer takes longer than the browser waits (answer_wait_ms), but the kernel takes the
# submission up at once: no note, the answer when it comes
slow_quiz = widgets.Quiz("A quiz whose answer comes late", answer=lambda: (time.sleep(3.0), 3)[1])
slow_quiz.answer_wait_ms = 1000
slow_quiz  # noqa: B018 -- displayed as the cell's value


# %%
class Unheard(widgets.Quiz):
    """A quiz no kernel takes submissions from: what a saved chapter's quiz is after its kernel
    restarted (or while the kernel is busy with a long cell)."""

    @traitlets.observe("submission")
    def _on_submission(self, change: traitlets.Bunch) -> None:
        pass


unheard = Unheard("A quiz whose kernel never answers", answer=3)
unheard.answer_wait_ms = 1000
unheard  # noqa: B018 -- displayed as the cell's value
