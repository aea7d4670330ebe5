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
# # 99 The claims ledger
#
# Every claim the course tests, in one table: what the seed article says, the verdict this
# machine reached, the verdict the reference GPU run recorded, and what a verdict depends on.
# Nothing here is typed in: each cell of the table is read from what the chapters saved
# (`claims.save` at the end of each chapter) on this machine and in `results/`.
#
# A row that says *not run here yet* names the chapter that fills it: run that chapter (or
# `make notebooks`) and re-run this one; *ran here, needs a GPU* means it ran on this machine
# but the claim has no form a machine without a GPU can judge. The *finding* column is the
# verdict's finding in one sentence (for C14b: the wrong gradients). Where this machine and the reference disagree, the
# row says what differs: the device, or the form of the claim that was judged (the seed's own
# setting, or an analogue that this machine can run).

# %%
import os  # in Google Colab only: fetch the course and install labkit (elsewhere this does nothing)

if "COLAB_RELEASE_TAG" in os.environ:
    status = os.system("git clone -q --depth 1 https://github.com/tensor-layout-lab/tensor-layout-lab /content/tensor-layout-lab; pip install -q /content/tensor-layout-lab")
    assert status == 0, "installing labkit failed: the lines above say why"

# %%
from labkit import claims
from labkit.core import env, results
from labkit.show.table import Table, rows

ledger = claims.ledger(notebooks=".")  # this notebook's folder holds the chapters' notebooks
print(f"this machine: {env.device_key()}")
print(f"reference:    {results.describe_machine(ledger.reference)}")

# %% tags=["nbval-check-output"]
chapters = list(dict.fromkeys(c.chapter for c in claims.REGISTRY.values()))  # in the course's order
registry = rows([{"chapter": key, "claims": ", ".join(c.id for c in claims.REGISTRY.values() if c.chapter == key)}
                 for key in chapters], f"The course tests {len(claims.REGISTRY)} claims")
print(registry)

# %% [markdown]
# ## The ledger
#
# Hover over a seed statement to see the seed's own section title. Beside each verdict, in
# brackets, is the form it judged: `[the seed's form]` means
# the verdict judged the claim in the seed's own setting; anything else in brackets names the
# analogue that was judged instead.

# %%
ledger

# %% [markdown]
# ## How the claims fared
#
# Counted from the table above. The reference column is the one to quote about the seed's
# claims as stated: most of them are GPU claims.

# %%
tally = {column: ledger.tally(column) for column in ("reference GPU", "this machine")}
kinds = list(dict.fromkeys(kind for counted in tally.values() for kind in counted))
rows([{"kind": kind, **{column: ", ".join(f"{n} {word}" for word, n in sorted(counted.get(kind, {}).items()))
                        or "-" for column, counted in tally.items()}} for kind in kinds], "How the claims fared")

# %% [markdown]
# The three kinds are counted apart because they say different things: a verdict on the
# *seed form* judged the claim in the seed's own setting; an *analogue* judged what this
# machine can run (a CPU, another precision); *read from documentation* means part of the claim
# was judged from what a vendor documents, not measured (which claims, in each column, is
# printed below, read from the verdicts themselves).

# %%
rows([{"column": column, "read from documentation": ", ".join(sorted(
    i for i, v in verdicts.items() if claims.form_kind(v.form) == claims.FORM_KINDS[-1])) or "none"}
      for column, verdicts in (("reference GPU", ledger.reference_verdicts), ("this machine", ledger.mine))])

# %% [markdown]
# ## Which chapters ran here
#
# Each chapter records that it ran and on which machine when it saves (`chapter.save()`), so a
# chapter whose claims all need a GPU still shows as run here.

# %%
ran = claims.chapters_ran()
rows([{"chapter": key, "here": f"ran here on {ran[key]['machine']} ({ran[key]['where']})" if key in ran
       else "not run here yet"} for key in sorted(chapters)], "Which chapters ran here")

# %% [markdown]
# ## Where this machine and the reference disagree
#
# A disagreement is not an error: a claim about an A100 in fp16 judged on a laptop CPU is a
# different claim. Each line says what differs.

# %%
disagree = Table("Where this machine and the reference disagree", ["claim", "this machine", "reference GPU"])
for row in (r for r in ledger.rows() if "differ by" in r["depends on / why they differ"]):
    disagree.add(row["claim"], row["this machine"], row["reference GPU"])
    disagree.fold(f"{row['claim']}: why they differ", row["depends on / why they differ"])
disagree if disagree.rows else "No claim has verdicts on both machines that disagree."

# %% [markdown]
# ## A handout
#
# The same table as Markdown (for a README or an issue) and as one self-contained HTML page
# (no scripts, nothing fetched) that an instructor can hand out or print.

# %%
markdown_path, html_path = ledger.export(env.cache_dir() / "ledger")
print(f"written: {markdown_path}\n         {html_path}")
print(markdown_path.read_text().splitlines()[2])

# %% [markdown]
# ## What to remember
#
# - A number from an article is a claim until it is measured on a named machine, in a named
#   precision and size: the table keeps both the verdict and the form it judged.
# - Verdicts that follow from tensor semantics (strides, errors, copies) agree on every
#   machine; verdicts that rest on timings can differ, and the row says why.
# - The reference column is a recording: re-make it on your own GPU with
#   `bash benchmarks/gpu_session.sh` (see the README) and this table compares against it.
