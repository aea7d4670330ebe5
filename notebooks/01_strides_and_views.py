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
# # 01 Strides and views
#
# A tensor is a window on a flat block of memory (its *storage*). Four numbers place every
# element: the **shape**, the **strides** (how many elements to jump per step along each
# dimension), the **storage offset** and the **element size** in bytes:
#
# `address(i0, i1, ...) = base + itemsize * (offset + i0*stride0 + i1*stride1 + ...)`
#
# Many operations (`t`, `permute`, slicing, `narrow`, `expand`, `as_strided`, `diagonal`)
# only change these numbers: they are **views** and copy nothing.
#
# The seed article (`seeds/000_...txt`, chapters 1 and 2) makes eight claims about this.
# Each one below is stated, you predict, the notebook measures, and `labkit.claims`
# computes the verdict from the measurement: C1, C3, C4, C8a, C8b, C8c, C11a, C11b.

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
import warnings

import torch

from labkit import claims, copies, env, figures, layout, widgets

verdicts = []  # each claim's verdict, computed below from what this run measures
print(f"torch {torch.__version__} on {env.device()} ({env.where()})")

# %% [markdown]
# ## Shape, stride, offset, itemsize
#
# A 3x4 matrix stored row by row: one step down a column skips a whole row (4 elements),
# one step along a row skips 1.

# %%
# NBVAL_CHECK_OUTPUT
x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
print("shape", tuple(x.shape), "stride", x.stride(), "offset", x.storage_offset(),
      "itemsize", x.element_size(), "contiguous", x.is_contiguous())

# %% [markdown]
# The memory-address grid: click an element (left) to see where it lives in storage
# (right) and the address formula with its numbers filled in. Click a storage cell to see
# which elements read it. The static picture below it shows the same where widgets do
# not render (GitHub, a PDF).

# %%
grid = widgets.AddressGrid(x, base=x.untyped_storage().data_ptr(), title="x = arange(12).reshape(3, 4)")
grid

# %%
figures.grid_and_strip(x, highlight=(1, 2))

# %%
# NBVAL_CHECK_OUTPUT
print(layout.address_formula(layout.of(x), (1, 2)))

# %% [markdown]
# ## C1: the transpose is a view with swapped strides
#
# **Claim (seed, chapter 1):** `x.t()` of a contiguous (3, 4) tensor has strides (1, 4) and
# is not contiguous. Predict first.

# %%
quiz_c1 = widgets.Quiz(
    "x is arange(12).reshape(3, 4), strides (4, 1). What are the strides of x.t()?",
    choices=["(4, 1)", "(1, 4)", "(3, 1)", "(1, 3)"],
    answer=lambda: str(x.t().stride()),
    explanation="t() swaps shape and strides; no element moves.",
)
quiz_c1

# %%
# NBVAL_CHECK_OUTPUT
xt = x.t()
with copies.detect() as log:
    xt = x.t()
print("x.t(): shape", tuple(xt.shape), "stride", xt.stride(), "contiguous", xt.is_contiguous())
print("shares storage with x:", copies.shares_storage(x, xt), "| bytes copied:", log.total_bytes)
c1 = claims.get("C1").judge({"shape": list(xt.shape), "stride": list(xt.stride()),
                             "is_contiguous": xt.is_contiguous()})
verdicts.append(c1)
print(c1.claim_id, c1.label, "--", c1.reason)

# %%
figures.grid_and_strip(xt, highlight=(2, 1))

# %% [markdown]
# ## C3: the address formula
#
# **Claim (seed §2.1):** element (i, j, k) is at `base + i*stride[0] + j*stride[1] + k*stride[2]`.
#
# To test a formula about addresses we need addresses that do not come from the formula.
# Trick: fill a storage with its own index (`arange`), take views of it, and read the
# elements through torch's indexing: the value read *is* the storage index the element
# lives at, so its byte address is `storage base + itemsize * value`. Then compare with the
# seed's formula read two ways: counting elements from `data_ptr()` (the view's first
# element), and literally as bytes.

# %%
def views_of(storage: torch.Tensor) -> dict:
    """Views with offsets, steps, swaps, broadcasts and overlap, all on one storage."""
    m = storage[:24].view(2, 3, 4)
    return {
        "contiguous [2,3,4]": m,
        "permute(0,2,1)": m.permute(0, 2, 1),
        "transpose(0,1)": m.transpose(0, 1),
        "slice m[1:, 1:, 2:]": m[1:, 1:, 2:],
        "step m[:, ::2, ::3]": m[:, ::2, ::3],
        "narrow(2, 1, 2)": m.narrow(2, 1, 2),
        "expand (stride 0)": storage[:4].view(1, 4).expand(3, 4),
        "unfold windows": storage[:10].unfold(0, 3, 2),
        "diagonal": storage[:16].view(4, 4).diagonal(),
    }


def address_check(dtype: torch.dtype) -> tuple[int, int, int, int]:
    """(elements, mismatches counting elements, mismatches read as bytes, mismatches of the full formula)."""
    storage = torch.arange(64).to(dtype)
    base = storage.untyped_storage().data_ptr()
    itemsize = storage.element_size()
    counts = [0, 0, 0, 0]
    for view in views_of(storage).values():
        stored_at = view.to(torch.int64)  # the storage index each element really reads
        real = base + itemsize * stored_at
        strides_sum = torch.zeros_like(stored_at)
        for dim, stride in enumerate(view.stride()):
            shape = [1] * view.dim()
            shape[dim] = view.shape[dim]
            strides_sum = strides_sum + torch.arange(view.shape[dim]).view(shape) * stride
        start = view.data_ptr()
        counts[0] += view.numel()
        counts[1] += int((real != start + itemsize * strides_sum).sum())  # seed, in elements
        counts[2] += int((real != start + strides_sum).sum())  # seed, read as bytes
        counts[3] += int((real != base + itemsize * (view.storage_offset() + strides_sum)).sum())
    return tuple(counts)


rows = {str(dtype): address_check(dtype) for dtype in (torch.int8, torch.int16, torch.float32, torch.float64)}

# %%
# NBVAL_CHECK_OUTPUT
print(f"{'dtype':<15}{'elements':>9}{'seed, elements':>16}{'seed, bytes':>13}{'full formula':>14}")
for name, (n, in_elements, in_bytes, full) in rows.items():
    print(f"{name:<15}{n:>9}{in_elements:>16}{in_bytes:>13}{full:>14}")
assert all(full == 0 for *_, full in rows.values()), "the full formula must place every element"
c3 = claims.get("C3").judge({
    "elements_checked": sum(r[0] for r in rows.values()),
    "element_formula_mismatches": sum(r[1] for r in rows.values()),
    "byte_formula_mismatches": sum(r[2] for r in rows.values()),
    "per_dtype": rows,
})
verdicts.append(c3)
print(c3.claim_id, c3.label, "--", c3.reason)

# %% [markdown]
# Read as bytes, the seed's formula is right only for 1-byte elements (int8): strides count
# elements, so the byte address needs `* itemsize`; and when `base` is the start of the
# storage rather than of the view, `+ storage_offset` too. The course's formula above has both.

# %% [markdown]
# ## C4: permute
#
# **Claim (seed §2.1, table):** `permute(0, 2, 1)` of a contiguous [2, 3, 4] tensor has
# shape [2, 4, 3] and strides [12, 1, 4].

# %%
quiz_c4 = widgets.Quiz(
    "m = arange(24).reshape(2, 3, 4) has strides (12, 4, 1). Strides of m.permute(0, 2, 1)?",
    choices=["(12, 4, 1)", "(12, 1, 4)", "(1, 4, 12)", "(4, 12, 1)"],
    answer=lambda: str(torch.arange(24).reshape(2, 3, 4).permute(0, 2, 1).stride()),
    explanation="permute reorders shape and strides together.",
)
quiz_c4

# %%
# NBVAL_CHECK_OUTPUT
m = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
p = m.permute(0, 2, 1)
print("m:", tuple(m.shape), m.stride(), "-> permute(0,2,1):", tuple(p.shape), p.stride(),
      "| contiguous:", p.is_contiguous(), "| kind:", layout.classify(p).kind)
c4 = claims.get("C4").judge({"shape": list(p.shape), "stride": list(p.stride())})
verdicts.append(c4)
print(c4.claim_id, c4.label, "--", c4.reason)

# %%
figures.grid_and_strip(p)

# %% [markdown]
# ## A tour of views
#
# Each row is a view of the same 24-element storage: no bytes copied (the copy detector
# watches every aten op), same storage. Look at the kind: stride 0 (`expand`) is a
# broadcast, `unfold` with step < size makes windows that overlap, steps leave gaps.

# %%
# NBVAL_CHECK_OUTPUT
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
print(f"{'view':<30}{'shape':<12}{'stride':<12}{'offset':>6}{'copied B':>9}  kind")
for name, make in tour.items():
    with copies.detect() as log:
        v = make(base_storage)
    assert copies.shares_storage(v, base_storage)
    print(f"{name:<30}{str(tuple(v.shape)):<12}{str(v.stride()):<12}{v.storage_offset():>6}"
          f"{log.total_bytes:>9}  {layout.classify(v).kind}")

# %% [markdown]
# The stride explorer: set shape, strides and offset yourself (or pick a preset) on a
# small storage. Overlapping windows, gaps and out-of-bounds views are named and refused
# with a message, never a crash.

# %%
explorer = widgets.StrideExplorer(storage_size=24)
explorer

# %% [markdown]
# ## C8a: when `view` fails, and when it does not
#
# **Claim (seed §2.5):** `view()` needs the tensor to be physically contiguous: on the
# transposed `x.transpose(0, 1)` of a `randn(2, 3, 4)`, `view(-1, 4)` fails. The seed also
# gives that view's strides as (16, 48, 4).

# %%
quiz_c8a = widgets.Quiz(
    "y = randn(2, 3, 4).transpose(0, 1) is not contiguous. Does y.view(3, 2, 2, 2) work?",
    choices=["yes", "no, it raises"],
    answer=lambda: "yes" if layout.can_view(torch.randn(2, 3, 4).transpose(0, 1), (3, 2, 2, 2)).ok
    else "no, it raises",
    explanation="view needs the dims it merges to be stride-compatible, not the whole tensor contiguous.",
)
quiz_c8a

# %%
# NBVAL_CHECK_OUTPUT
y = torch.randn(2, 3, 4).transpose(0, 1)
print("y: shape", tuple(y.shape), "strides", y.stride(), "(the seed says (16, 48, 4): that is bytes, x4)")


def try_view(t: torch.Tensor, shape: tuple) -> tuple[bool, str, str]:
    """Run t.view(shape) and report (succeeded, exception type, message)."""
    try:
        out = t.view(shape)
    except Exception as err:  # we want the real exception, whatever its type
        return False, type(err).__name__, str(err)
    return True, "", f"ok: shape {tuple(out.shape)}, strides {out.stride()}"


for shape in [(-1, 4), (3, 2, 2, 2), (3, 8)]:
    ok, kind, message = try_view(y, shape)
    predicted = layout.can_view(y, shape)
    print(f"view{shape}: {'works' if ok else kind + ': ' + message}"
          f"  | layout.can_view predicted {'ok' if predicted.ok else 'failure'}")
    assert ok == predicted.ok

with copies.detect() as log:
    r = y.reshape(-1, 4)
print(f"reshape(-1, 4) instead: copies {log.total_bytes} B, shares storage: {copies.shares_storage(r, y)}")
failing = try_view(y, (-1, 4))
c8a = claims.get("C8a").judge({
    "raised": not failing[0], "error_type": failing[1], "error_message": failing[2],
    "noncontiguous_view_succeeded": try_view(y, (3, 2, 2, 2))[0],
    "seed_strides": [16, 48, 4], "real_strides": list(y.stride()),
})
verdicts.append(c8a)
print(c8a.claim_id, c8a.label, "--", c8a.reason)

# %% [markdown]
# ## C8b: broadcasting
#
# **Claim (seed §2.5, table):** (1, 4) with (3, 1) broadcasts to (3, 4); (2, 4) with (3, 1)
# raises `RuntimeError: The size of tensor a (2) must match ...`. Broadcasting is itself a
# view: the size-1 dimension gets stride 0.

# %%
# NBVAL_CHECK_OUTPUT
cases = []
for a_shape, b_shape, seed_says in [((1, 4), (3, 1), [3, 4]), ((2, 4), (3, 1), "error")]:
    a, b = torch.ones(a_shape), torch.ones(b_shape)
    try:
        observed, message = list((a + b).shape), ""
    except RuntimeError as err:
        observed, message = "error", str(err)
    cases.append({"a": list(a_shape), "b": list(b_shape), "seed_says": seed_says,
                  "observed": observed, "message": message})
    print(f"{a_shape} + {b_shape}: {observed} {message}")
a_view, b_view = torch.broadcast_tensors(torch.ones(1, 4), torch.ones(3, 1))
print("the broadcast operands are views with stride 0:", a_view.stride(), b_view.stride())
c8b = claims.get("C8b").judge({"cases": cases})
verdicts.append(c8b)
print(c8b.claim_id, c8b.label, "--", c8b.reason)

# %% [markdown]
# ## C8c: a repeated dimension in `permute`
#
# **Claim (seed §2.5):** `permute(0, 0, 1)` raises `IndexError: repeated dim`.

# %%
def raised_by(fn) -> str:
    """The name of the exception fn() raises, or 'nothing: it works'."""
    try:
        fn()
    except Exception as err:
        return type(err).__name__
    return "nothing: it works"


quiz_c8c = widgets.Quiz(
    "What does torch.randn(2, 3, 4).permute(0, 0, 1) raise?",
    choices=["IndexError", "RuntimeError", "ValueError", "nothing: it works"],
    answer=lambda: raised_by(lambda: torch.randn(2, 3, 4).permute(0, 0, 1)),
)
quiz_c8c

# %%
# NBVAL_CHECK_OUTPUT
try:
    torch.randn(2, 3, 4).permute(0, 0, 1)
    raised, error_type, error_message = False, "", ""
except Exception as err:  # the real exception, whatever its type
    raised, error_type, error_message = True, type(err).__name__, str(err)
print(f"permute(0, 0, 1) -> {error_type}: {error_message}")
c8c = claims.get("C8c").judge({"raised": raised, "error_type": error_type,
                               "error_message": error_message, "torch": torch.__version__})
verdicts.append(c8c)
print(c8c.claim_id, c8c.label, "--", c8c.reason)

# %% [markdown]
# ## C11a: `as_strided` re-interprets without copying
#
# **Claim (seed §3.3):** `as_strided` re-interprets the storage with new sizes and strides,
# without a copy. Sliding windows of width 3 over 10 numbers: stride (1, 1).

# %%
signal = torch.arange(10, dtype=torch.float32)
quiz_c11a = widgets.Quiz(
    "w = signal.as_strided((8, 3), (1, 1)) has 24 elements, signal has 10. How many bytes does it copy?",
    choices=["0", "96 (24 x 4)", "40 (10 x 4)"],
    answer=lambda: {0: "0", 96: "96 (24 x 4)", 40: "40 (10 x 4)"}.get(
        copies.bytes_copied(lambda: signal.as_strided((8, 3), (1, 1))), "something else"),
)
quiz_c11a

# %%
# NBVAL_CHECK_OUTPUT
with copies.detect() as log:
    windows = signal.as_strided((8, 3), (1, 1))
print(windows[:3].tolist(), "...", "| kind:", layout.classify(windows).kind)
print("shares storage:", copies.shares_storage(windows, signal), "| bytes copied:", log.total_bytes)
signal[4] = -1.0  # one write shows up in three windows: they are the same memory
print("after signal[4] = -1:", windows[2:5].tolist())
c11a = claims.get("C11a").judge({"shares_storage": copies.shares_storage(windows, signal),
                                 "copy_bytes": log.total_bytes})
verdicts.append(c11a)
print(c11a.claim_id, c11a.label, "--", c11a.reason)

# %% [markdown]
# Raw `as_strided` trusts its arguments. `layout.safe_as_strided` checks the view stays
# inside the storage first, and says what to change:

# %%
# NBVAL_CHECK_OUTPUT
try:
    layout.safe_as_strided(signal, (8, 4), (1, 1))
except layout.LayoutError as err:
    print("LayoutError:", err)

# %% [markdown]
# ## C11b: "`as_strided` cannot be traced by the JIT"
#
# **Claim (seed §3.3, checklist):** `as_strided` is not traceable, so keep it out of JIT
# scripts. We try all three of PyTorch's capture tools on a function that uses it:
# `torch.jit.trace`, `torch.jit.script` and `torch.compile` (`fullgraph=True`, so any
# graph break is an error). Each result is compared with eager, on the input it was
# captured with and on a longer one.

# %%
def window_sums(x: torch.Tensor) -> torch.Tensor:
    return torch.as_strided(x, (x.shape[0] - 2, 3), (1, 1)).sum(dim=1)


first_input = torch.arange(10.0, device=env.device())
longer_input = torch.arange(20.0, device=env.device())
# On a GPU Inductor generates Triton code; on a CPU it would compile C++ for ~20 s, so the
# CPU run captures with Dynamo + AOTAutograd and runs the captured graph ("aot_eager").
compile_backend = "inductor" if env.has_cuda() else "aot_eager"


def try_capture(name: str, capture) -> dict:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            captured = capture()
            same = torch.equal(captured(first_input), window_sums(first_input))
            same_longer = torch.equal(captured(longer_input), window_sums(longer_input))
            result = {"ok": True, "matches_eager": same, "matches_eager_longer_input": same_longer,
                      "error": ""}
        except Exception as err:  # any failure to capture is the evidence we want
            result = {"ok": False, "matches_eager": False, "matches_eager_longer_input": False,
                      "error": f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"}
    result["warnings"] = sorted({str(w.message).splitlines()[0][:120] for w in caught})
    return result


torch._dynamo.reset()
tools = {
    "torch.jit.trace": try_capture("trace", lambda: torch.jit.trace(window_sums, (first_input,))),
    "torch.jit.script": try_capture("script", lambda: torch.jit.script(window_sums)),
    f"torch.compile({compile_backend})": try_capture(
        "compile", lambda: torch.compile(window_sums, fullgraph=True, backend=compile_backend)),
}
for name, result in tools.items():
    print(f"{name:<28} ok={result['ok']}, matches eager={result['matches_eager']}, "
          f"longer input={result['matches_eager_longer_input']} {result['error']}")
    for text in result["warnings"]:
        print(f"{'':<28} warning: {text}")
c11b = claims.get("C11b").judge({"tools": tools, "torch": torch.__version__})
verdicts.append(c11b)
print(c11b.claim_id, c11b.label, "--", c11b.reason)

# %% [markdown]
# ## Verdicts of this chapter
#
# Computed above from this run's measurements, beside the verdicts recorded on the
# reference GPU (an H200) where one was recorded.

# %%
claims.save(verdicts, "01_strides_and_views")
claims.table(verdicts)

# %%
# NBVAL_CHECK_OUTPUT
print(claims.table(verdicts).structure())
