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
# # 01 Strides and views
#
# A tensor is a window on a flat block of memory (its *storage*). Four numbers place every
# element: the **shape**, the **strides** (how many elements to jump per step along each
# dimension), the **storage offset** and the **element size** in bytes:
#
# `address(i0, i1, ...) = base + itemsize * (offset + i0*stride0 + i1*stride1 + ...)`
#
# Operations that only change these numbers are **views**: they copy nothing. This chapter
# finds out which operations are views, and when `view` itself refuses.
#
# The first seed article, *"A 300% latency spike from broken shape alignment: stride,
# contiguous and memory layout"* (in Chinese), makes eight claims about this. For each one:
# you predict, the notebook shows the claim and the rule that decides it, measures, and
# `labkit.claims` computes the verdict from the measurement. Graded exercises let you write
# the arithmetic yourself.

# %%
import os  # in Google Colab only: fetch the course and install labkit (elsewhere this does nothing)

if "COLAB_RELEASE_TAG" in os.environ:
    status = os.system("git clone -q --depth 1 https://github.com/tensor-layout-lab/tensor-layout-lab /content/tensor-layout-lab; pip install -q /content/tensor-layout-lab")
    assert status == 0, "installing labkit failed: the lines above say why"

# %%
import torch

from labkit import session

chapter = session.open("01_strides_and_views")
# The chapter object is the door: the chapter's own cases and the course's instruments are
# chapter.lab.<name> (views, captures; layout, copies, widgets).
layout, copies, views = chapter.lab.layout, chapter.lab.copies, chapter.lab.views

# %% [markdown]
# ## Shape, stride, offset, itemsize
#
# A 3x4 matrix of float32 stored row by row: one step down a column skips a whole row (4
# elements), one step along a row skips 1.

# %% tags=["nbval-check-output"]
x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
print("shape", tuple(x.shape), "stride", x.stride(), "offset", x.storage_offset(),
      "itemsize", x.element_size(), "contiguous", x.is_contiguous())

# %% [markdown]
# The memory-address grid: click an element of the logical grid to see where it lives in
# the storage strip, and the address formula with its numbers filled in; click a storage
# cell to see which elements read it. Element (2, 1) is selected to start with. The picture
# below the grid draws the same tensor with the same element outlined. In both, each element
# is labelled with the storage cell it reads (x holds 0..11, so each value is its cell number).

# %%
grid = chapter.lab.widgets.AddressGrid(x, base=x.untyped_storage().data_ptr(), title="x = arange(12).reshape(3, 4)")
grid.selected = [2, 1]
grid

# %%
views.grid_and_strip(x, highlight=tuple(grid.selected))

# %% tags=["nbval-check-output"]
print(layout.address_formula(layout.of(x), tuple(grid.selected)))

# %% [markdown]
# ### Exercise 01.1: the strides of a contiguous tensor
#
# Write the function below, run the cell, then run the check: it compares your function
# with torch on a few hundred random shapes and shows the first one it gets wrong.

# %%
chapter.exercise("01.contiguous_strides")


# %%
def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
chapter.exercise("01.contiguous_strides").check(contiguous_strides)

# %% [markdown]
# ## C1: the transpose
#
# `x.t()` swaps the two dimensions of `x` (shape (3, 4), strides (4, 1)). Does it move any
# data, and what strides does the result report? Predict first.

# %% jupyter={"source_hidden": true}
quiz_c1 = chapter.lab.widgets.Quiz(
    "x is arange(12).reshape(3, 4), strides (4, 1). What are the strides of x.t()?",
    choices=["(4, 1)", "(1, 4)", "(3, 1)", "(1, 3)"],
    answer=lambda: str(x.t().stride()),
    explanation="t() swaps shape and strides together; no element moves: xt[1, 2] is x[2, 1], the "
                "same storage cell, reached with the swapped strides (the grid below shows it).",
)
quiz_c1

# %% [markdown]
# The seed's claim, and what would confirm or refute it:

# %% tags=["nbval-check-output"]
chapter.claim("C1")

# %% tags=["nbval-check-output"]
with copies.detect() as log:
    xt = x.t()
print("x.t(): shape", tuple(xt.shape), "stride", xt.stride(), "contiguous", xt.is_contiguous())
c1_bytes = log.total_bytes  # the takeaways quote it (the detector's log is reused below)
print("shares storage with x:", copies.shares_storage(x, xt), "| bytes copied:", c1_bytes)
c1 = chapter.judge("C1", {"shape": list(xt.shape), "stride": list(xt.stride()),
                             "is_contiguous": xt.is_contiguous()})
print(c1)

# %% [markdown]
# Where does `xt[1, 2]` sit in the storage? The grid answers, beside `x`'s selection above.

# %%
views.grid_and_strip(xt, highlight=(1, 2))

# %% [markdown]
# ## C3: the address formula
#
# `v = m[1:, 1:, 2:]` slices a contiguous float32 `m = arange(24).view(2, 3, 4)`: `v` has
# strides (12, 4, 1) and storage offset 18. Where does one of its elements live?

# %% jupyter={"source_hidden": true}
m = torch.arange(24, dtype=torch.float32).view(2, 3, 4)
v = m[1:, 1:, 2:]
quiz_c3 = chapter.lab.widgets.Quiz(
    "v = m[1:, 1:, 2:] (float32, strides (12, 4, 1), storage offset 18). How many bytes after "
    "the start of the storage does v[0, 1, 1] live?",
    choices=["5", "20", "23", "92"],
    answer=lambda: str(v[0, 1, 1].data_ptr() - v.untyped_storage().data_ptr()),
    explanation="itemsize x (offset + 0*12 + 1*4 + 1*1) = 4 x 23 = 92 bytes: strides count "
                "elements, so bytes need the itemsize, and the count starts at the offset.",
)
quiz_c3

# %% [markdown]
# The seed's claim (it defines strides as element offsets, so the formula is judged in
# elements):

# %% tags=["nbval-check-output"]
chapter.claim("C3")

# %% [markdown]
# To test a formula about addresses we need addresses that do not come from the formula.
# Trick: fill a storage with its own index (`arange`), take views of it, and read the
# elements through torch's indexing: the value read *is* the storage index the element
# lives at. Then place every element with the seed's formula, counted in elements from the
# view's first element (`data_ptr()`), for views with offsets, steps, swaps, broadcasts and
# overlap, in four dtypes (`views.address_check`, in
# `labkit/chapters/ch01_strides_and_views/views.py`).

# %% tags=["nbval-check-output"]
rows = {str(dtype).replace("torch.", ""): views.address_check(dtype) for dtype in views.DTYPES}
views.address_table(rows)

# %% tags=["nbval-check-output"]
assert all(full == 0 for *_, full in rows.values()), "the full byte formula must place every element"
c3 = chapter.judge("C3", {
    "elements_checked": sum(r[0] for r in rows.values()),
    "element_formula_mismatches": sum(r[1] for r in rows.values()),
    "byte_formula_mismatches": sum(r[2] for r in rows.values()),
    "per_dtype": rows,
})
print(c3)

# %% [markdown]
# **A note on bytes.** The seed's `base + i*stride[0] + ...` is right in its own units:
# strides count elements. A byte address needs two more things, as the last column shows
# (right only for 1-byte int8): multiply by the itemsize, and when `base` is the start of the
# storage rather than the view's first element, add the storage offset:
# `storage base + itemsize * (offset + sum(i_k * stride_k))`. Every element above sits
# exactly there (the cell asserts it).

# %% [markdown]
# ### Optional exercise 01.2: which storage element an index reads
#
# The same formula as a function: given shape, strides, storage offset and an index
# (negative indices count from the end, as in Python), return the storage position.

# %%
chapter.exercise("01.storage_index")


# %%
def storage_index(shape: tuple[int, ...], stride: tuple[int, ...], offset: int,
                  index: tuple[int, ...]) -> int:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
chapter.exercise("01.storage_index").check(storage_index)

# %% [markdown]
# ## C4: permute
#
# `permute` reorders the dimensions of a tensor. Take the contiguous `m` of shape
# [2, 3, 4] (strides (12, 4, 1)) and swap its last two dimensions.

# %% jupyter={"source_hidden": true}
quiz_c4 = chapter.lab.widgets.Quiz(
    "m = arange(24).reshape(2, 3, 4) has strides (12, 4, 1). Strides of m.permute(0, 2, 1)?",
    choices=["(12, 4, 1)", "(12, 1, 4)", "(1, 4, 12)", "(4, 12, 1)"],
    answer=lambda: str(torch.arange(24).reshape(2, 3, 4).permute(0, 2, 1).stride()),
    explanation="permute reorders shape and strides together; no element moves.",
)
quiz_c4

# %% tags=["nbval-check-output"]
chapter.claim("C4")

# %% tags=["nbval-check-output"]
m = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
p = m.permute(0, 2, 1)
print("m:", tuple(m.shape), m.stride(), "-> permute(0,2,1):", tuple(p.shape), p.stride(),
      "| contiguous:", p.is_contiguous(), "| kind:", layout.classify(p).kind)
c4 = chapter.judge("C4", {"shape": list(p.shape), "stride": list(p.stride())})
print(c4)

# %%
views.grid_and_strip(p, highlight=(1, 3, 2))

# %% [markdown]
# ## Optional: the stride explorer
#
# Set shape, strides and offset yourself (or pick a preset) on a
# small storage. Overlapping windows, gaps and out-of-bounds views are named and refused
# with a message, never a crash.

# %%
explorer = chapter.lab.widgets.StrideExplorer(storage_size=24)
explorer

# %% [markdown]
# ## C8a: when `view` fails, and when it does not
#
# `y = randn(2, 3, 4).transpose(0, 1)` is not contiguous. `view` never copies: it only
# computes new strides, or refuses.

# %% jupyter={"source_hidden": true}
quiz_c8a = chapter.lab.widgets.Quiz(
    "y = randn(2, 3, 4).transpose(0, 1) is not contiguous. Does y.view(3, 2, 2, 2) work?",
    choices=["yes", "no, it raises"],
    answer=lambda: "yes" if layout.can_view(torch.randn(2, 3, 4).transpose(0, 1), (3, 2, 2, 2)).ok
    else "no, it raises",
    explanation="view needs the dims it merges to be stride-compatible, not the whole tensor "
                "contiguous: (3, 2, 2, 2) only splits the last dim, which works on a non-contiguous "
                "tensor too; one view of a non-contiguous tensor that works is enough to refute the "
                "seed's rule that view() needs contiguous memory, so C8a is judged refuted.",
)
quiz_c8a

# %% [markdown]
# The seed's claim; the seed also gives that view's strides as (16, 48, 4):

# %% tags=["nbval-check-output"]
chapter.claim("C8a")

# %% tags=["nbval-check-output"]
y = torch.randn(2, 3, 4).transpose(0, 1)
print(f"y: shape {tuple(y.shape)}, strides {y.stride()} in elements, "
      f"{tuple(s * y.element_size() for s in y.stride())} in bytes (the seed's (16, 48, 4))")
attempts = views.view_attempts(y, [(-1, 4), (3, 2, 2, 2), (3, 8)])
assert all(attempts.column("as predicted")), "layout.can_view must predict what torch does"
with copies.detect() as log:
    r = y.reshape(-1, 4)
reshape_bytes = log.total_bytes
attempts.note(f"reshape(-1, 4) instead: copies {reshape_bytes} B, shares storage: {copies.shares_storage(r, y)}")
attempts

# %% tags=["nbval-check-output"]
failing = views.try_view(y, (-1, 4))
c8a = chapter.judge("C8a", {
    "raised": not failing[0], "error_type": failing[1], "error_message": failing[2],
    "noncontiguous_view_succeeded": views.try_view(y, (3, 2, 2, 2))[0],
    "seed_strides": [16, 48, 4], "real_strides": list(y.stride()),
})
print(c8a)

# %% [markdown]
# The seed's (16, 48, 4) are y's strides in bytes (x 4 for float32), not what `stride()`
# reports. `view(-1, 4)` would have to merge dims 0 and 1, whose strides (4, 12) are not
# compatible; what the other views did, and why, is in the table above and the quiz's
# explanation.

# %% [markdown]
# ### Optional exercise 01.3: can `view` merge two dims?
#
# The rule behind `layout.can_view`, for the simplest case: merging two neighbouring dims
# into one. Return the stride torch gives the merged dim, or `None` when `view` raises.

# %%
chapter.exercise("01.merged_stride")


# %%
def merged_stride(shape: tuple[int, ...], stride: tuple[int, ...], dim: int) -> int | None:
    raise NotImplementedError  # your code here


# %% tags=["nbval-check-output"]
chapter.exercise("01.merged_stride").check(merged_stride)

# %% [markdown]
# ## C8b: broadcasting
#
# Adding tensors of different shapes stretches size-1 dimensions to match. What happens
# when a dimension is neither 1 nor equal?

# %% jupyter={"source_hidden": true}
quiz_c8b = chapter.lab.widgets.Quiz(
    "What does torch.ones(2, 4) + torch.ones(3, 1) give?",
    choices=["(2, 4)", "(3, 4)", "(6, 4)", "an error"],
    answer=lambda: views.broadcast_result((2, 4), (3, 1)),
    explanation="Dims are compared from the right: 4 against 1 stretches, but 2 against 3 "
                "is neither equal nor 1.",
)
quiz_c8b

# %% tags=["nbval-check-output"]
chapter.claim("C8b")

# %% tags=["nbval-check-output"]
cases = views.broadcast_cases([((1, 4), (3, 1), [3, 4], ""),
                               ((2, 4), (3, 1), "error", "The size of tensor a (2) must match")])
a_view, b_view = torch.broadcast_tensors(torch.ones(1, 4), torch.ones(3, 1))
chapter.show([{"a + b": f"{tuple(c['a'])} + {tuple(c['b'])}", "seed says": str(c["seed_says"]),
               "observed": str(c["observed"]), "message": c["message"]} for c in cases]).note(
    f"torch.broadcast_tensors gives views in which the stretched dim has stride 0: "
    f"{a_view.stride()} and {b_view.stride()}")

# %%
c8b = chapter.judge("C8b", {"cases": cases})
print(c8b)

# %% [markdown]
# ## Optional: C8c, a repeated dimension in `permute`
#
# `permute(0, 0, 1)` names dimension 0 twice. torch refuses it; with which exception?

# %% jupyter={"source_hidden": true}
quiz_c8c = chapter.lab.widgets.Quiz(
    "What does torch.randn(2, 3, 4).permute(0, 0, 1) raise?",
    choices=["IndexError", "RuntimeError", "ValueError", "nothing: it works"],
    answer=lambda: views.raised_by(lambda: torch.randn(2, 3, 4).permute(0, 0, 1)),
)
quiz_c8c

# %% tags=["nbval-check-output"]
chapter.claim("C8c")

# %% tags=["nbval-check-output"]
try:
    torch.randn(2, 3, 4).permute(0, 0, 1)
    raised, error_type, error_message = False, "", ""
except Exception as err:  # the real exception, whatever its type
    raised, error_type, error_message = True, type(err).__name__, str(err)
print(f"permute(0, 0, 1) -> {error_type}: {error_message}")
c8c = chapter.judge("C8c", {"raised": raised, "error_type": error_type,
                               "error_message": error_message, "torch": torch.__version__})
print(c8c)

# %% [markdown]
# ## C11a: `as_strided`
#
# `as_strided` builds a tensor from any sizes and strides you give it. Sliding windows of
# width 3 over 10 numbers need 24 elements.

# %% jupyter={"source_hidden": true}
quiz_c11a = chapter.lab.widgets.Quiz(
    "signal = arange(10.0) (float32). w = signal.as_strided((8, 3), (1, 1)) has 24 elements. "
    "How many bytes does making w copy?",
    choices=["0", "96 (24 x 4)", "40 (10 x 4)"],
    answer=lambda: {0: "0", 96: "96 (24 x 4)", 40: "40 (10 x 4)"}.get(copies.bytes_copied(
        lambda: torch.arange(10.0).as_strided((8, 3), (1, 1))), "something else"),
    explanation="as_strided makes a new header over the same storage: torch refuses a view that "
                "runs past the storage's end, but allows overlap, as here: a write through one window "
                "changes the others.",
)
quiz_c11a

# %% tags=["nbval-check-output"]
chapter.claim("C11a")

# %% tags=["nbval-check-output"]
signal = torch.arange(10, dtype=torch.float32)
with copies.detect() as log:
    windows = signal.as_strided((8, 3), (1, 1))
print(windows[:3].tolist(), "...", "| kind:", layout.classify(windows).kind)
print("shares storage:", copies.shares_storage(windows, signal), "| bytes copied:", log.total_bytes)
signal[4] = -1.0  # one write shows up in three windows: they are the same memory
print("after signal[4] = -1:", windows[2:5].tolist())
c11a = chapter.judge("C11a", {"shares_storage": copies.shares_storage(windows, signal),
                                 "copy_bytes": log.total_bytes})
print(c11a)

# %% [markdown]
# ## Optional: a tour of views
#
# Each row is a view of the same 24-element storage: the copy detector (which watches every
# aten op) records the bytes each one copies, and each must share the storage. The *kind*
# column names the pattern: stride 0 (`expand`) is a broadcast, `unfold` with step < size
# makes windows that overlap, steps leave gaps.

# %% tags=["nbval-check-output"]
base_storage = torch.arange(24, dtype=torch.float32)
tour = {
    "view(2, 3, 4)": lambda s: s.view(2, 3, 4),
    "view(4, 6).t()": lambda s: s.view(4, 6).t(),
    "view(2,3,4).permute(2,0,1)": lambda s: s.view(2, 3, 4).permute(2, 0, 1),
    "view(4, 6).narrow(1, 2, 3)": lambda s: s.view(4, 6).narrow(1, 2, 3),
    "view(4, 6)[::2, 1::2]": lambda s: s.view(4, 6)[::2, 1::2],
    "[:6].view(1, 6).expand(4, 6)": lambda s: s[:6].view(1, 6).expand(4, 6),
    "unfold(0, 4, 2)": lambda s: s.unfold(0, 4, 2),
    "as_strided((5, 4), (4, 1))": lambda s: s.as_strided((5, 4), (4, 1)),
    "view(4, 6).diagonal()": lambda s: s.view(4, 6).diagonal(),
}
tour_table = views.tour(tour, base_storage)
tour_bytes, tour_shared = sum(tour_table.column("copied")), sum(tour_table.column("shares storage"))
tour_table.note(f"{tour_shared} of {len(tour)} share the storage; {tour_bytes} bytes copied in all")

# %% [markdown]
# ### Optional: a view that runs past the end
#
# Asked for windows that run past the end, torch answers in storage sizes;
# `layout.safe_as_strided` refuses the same view and says which index runs off and what to
# change:

# %% tags=["nbval-check-output"]
try:
    signal.as_strided((8, 4), (1, 1))
except RuntimeError as err:
    print("torch:  RuntimeError:", err)
try:
    layout.safe_as_strided(signal, (8, 4), (1, 1))
except layout.LayoutError as err:
    print("labkit: LayoutError:", err)

# %% [markdown]
# ## C11b: "`as_strided` is not traceable"
#
# The seed's checklist says to keep `as_strided` out of JIT scripts because it cannot be
# traced. Each capture tool this torch has (`torch.jit.trace`, `torch.jit.script`,
# `torch.fx.symbolic_trace`, `torch.export.export` with a dynamic length, and
# `torch.compile(fullgraph=True)`: Inductor on a GPU, `aot_eager` on a CPU, since the claim
# is about capture, not code generation) is tried on a function that uses `as_strided`, and
# compared with eager on the input it saw and on a longer one.

# %%
def window_sums(x: torch.Tensor) -> torch.Tensor:
    return torch.as_strided(x, (x.shape[0] - 2, 3), (1, 1)).sum(dim=1)


# %% jupyter={"source_hidden": true}
quiz_c11b = chapter.lab.widgets.Quiz(
    "window_sums(x) sums sliding windows made with torch.as_strided. How many of the capture "
    "tools this torch has capture it and give the same result as running it eagerly?",
    choices=["none", "some", "all of them"],
    answer=lambda: chapter.lab.views.captured_correctly(
        chapter.lab.captures.capture_all(window_sums, chapter.device)),
)
quiz_c11b

# %% tags=["nbval-check-output"]
chapter.claim("C11b")

# %%
# Each tool's result, computed once (labkit/chapters/ch01_strides_and_views/captures.py).
tools = chapter.lab.captures.capture_all(window_sums, chapter.device)
views.capture_table(tools)

# %%
c11b = chapter.judge("C11b", {"tools": tools, "torch": torch.__version__})
print(c11b)

# %% [markdown]
# ## Verdicts of this chapter
#
# Computed above from this run's measurements, beside the verdicts recorded on the
# reference GPU (an H200) where one was recorded. Under the table, folded: each claim's
# statement, the whole reason and the evidence it rests on, as saved to this machine's
# results file (open it to read).

# %%
chapter.save()
chapter.table()

# %% [markdown]
# ## What to remember
#
# Each line below is built from what this run measured.

# %% tags=["nbval-check-output"]
# Core cells only (review 2026-12-06z 00-02 item 7: these lines read the optional tour and C8c,
# so a room that skipped them got a NameError); an optional section's result is added, labelled,
# only where that section ran.
tools_worked = [name for name, r in tools.items() if r["ok"] and r["matches_eager"]]
tools_tried = [name for name, r in tools.items() if r["available"]]
takeaways = [
    f"A view moves no data: x.t() copied {c1_bytes} bytes and only swapped the strides to {xt.stride()}"
    + views.tour_aside(globals().get("tour_table")) + ".",
    f"Strides count elements: the seed's formula placed {c3.evidence['elements_checked']} elements "
    f"with {c3.evidence['element_formula_mismatches']} misses; read as bytes it missed "
    f"{c3.evidence['byte_formula_mismatches']} (multiply by the itemsize, add the storage offset).",
    f"view needs stride-compatible dims, not a contiguous tensor: on y with strides {y.stride()}, "
    f"view(3, 2, 2, 2) worked and view(-1, 4) raised {failing[1]}; reshape(-1, 4) copied {reshape_bytes} bytes instead.",
    f"as_strided copied {c11a.evidence['copy_bytes']} bytes and overlap is allowed; {len(tools_worked)} of "
    f"{len(tools_tried)} capture tools here captured it correctly ({', '.join(tools_worked) or 'none'}).",
]
c8c_seen = globals().get("c8c")  # the optional C8c's verdict, where that section ran
if c8c_seen is not None:
    takeaways.append(views.c8c_takeaway(c8c_seen))
chapter.remember(takeaways)
