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
# Every claim the course tests, in one table: the claim in English, the verdict this machine
# reached and the verdict the reference GPU run recorded, each with the kind of form it
# judged. Nothing here is typed in: each cell of the table is read from what the chapters saved
# (`chapter.save()` at the end of each chapter) on this machine and in `results/`.
#
# A row that says *not run here yet* names, under *more*, the chapter that fills it: run that
# chapter (or `make notebooks`) and re-run this one; *needs a GPU* means it ran on this machine
# but the claim has no form a machine without a GPU can judge. *more* opens the rest of a row:
# the seed's own words and section, both verdicts with the form judged in full, the finding in
# one sentence, and, where the two machines disagree, what differs (the device, or the form
# of the claim that was judged).

# %%
import os  # in Google Colab only: fetch the course and install labkit (elsewhere this does nothing)

if "COLAB_RELEASE_TAG" in os.environ:
    status = os.system("git clone -q --depth 1 https://github.com/tensor-layout-lab/tensor-layout-lab /content/tensor-layout-lab; pip install -q /content/tensor-layout-lab")
    assert status == 0, "installing labkit failed: the lines above say why"

# %%
from labkit import claims

ledger = claims.ledger(notebooks=".")  # this notebook's folder holds the chapters' notebooks
ledger.machines()  # where each column of the ledger was measured

# %% tags=["nbval-check-output"]
chapters = list(dict.fromkeys(c.chapter for c in claims.REGISTRY.values()))  # in the course's order
per_chapter = []
for key in chapters:
    ids = [c.id for c in claims.REGISTRY.values() if c.chapter == key]
    per_chapter.append({"chapter": key, "claims": ", ".join(ids)})
ledger.show(per_chapter, f"The course tests {len(claims.REGISTRY)} claims")

# %% [markdown]
# ## The ledger
#
# Beside each verdict, in brackets, is the kind of form it judged: *seed form* (the claim in
# the seed's own setting), *analogue* (measured in what this machine can run instead: a CPU,
# another precision, another runtime), *read from documentation* (judged from what a vendor
# documents) or *not measured* (what it needs is not installed here). The kind is saved with
# each verdict by the check that judged it; *more* names the form in full.
#
# A verdict a timing decides is trusted only when it reproduces: the same verdict in 3 of 3
# fresh runs. Beside each such reference verdict the column says what the reference GPU's fresh
# runs gave (`benchmarks/reproduce.py`, saved in `results/reproduce/`): *reproduced 3 of 3*,
# *NOT reproduced* (then uncoloured, counted apart, and each run listed under *more*), *no
# reproduce record*, *the record predates the verdict*, or *reproduced on earlier sources*: the
# runs agree, but ran more than one device call (600 s) before the verdict, so on sources that
# may have changed since; the line below the table counts them apart.

# %%
ledger

# %% [markdown]
# Each run is judged again by today's rule from its saved evidence, like the verdict itself.
# Older records carry no date, so the ledger compares their content: the outcome, what it
# depends on, and the form judged.

# %%
unreproduced = [{"claim": i, "fresh runs on the reference GPU": m.text}
                for i, m in ledger.reproductions.items() if not m.reproduced and not m.earlier]
headline = claims.reproduced.headline(ledger.reproductions)  # a record older than its verdict: apart
ledger.show(unreproduced, headline) if unreproduced else headline

# %% [markdown]
# One row opened, from the same saved verdicts: both verdicts side by side with the numbers
# that decided them. C1 is the course's first claim; change the id to read another (C9 or C7a
# for a timing claim with its fresh runs on the reference GPU).

# %%
ledger.claim("C1")

# %% [markdown]
# ## How the claims fared
#
# Counted from the table above. The reference column is the one to quote about the seed's
# claims as stated: most of them are GPU claims.

# %%
fared = []
for kind in [*claims.FORM_KINDS, "no verdict"]:
    row = {"kind of form judged": kind}
    for column in ("reference GPU", "this machine"):
        counted = ledger.tally(column).get(kind, {})
        row[column] = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counted.items())) or "-"
    fared.append(row)
ledger.show(fared, "How the claims fared")

# %% [markdown]
# The kinds are counted apart because they say different things: a refuted *analogue* says
# less about the seed than a refuted *seed form*, and *read from documentation* and *not
# measured* rest on no measurement at all. Which claims those are, in each column, is read from
# the verdicts' own kind:

# %%
unmeasured = []
for column, verdicts in (("reference GPU", ledger.reference_verdicts), ("this machine", ledger.mine)):
    row = {"column": column}
    for kind in (claims.DOCUMENTATION_KIND, claims.NOT_MEASURED_KIND):
        row[kind] = ", ".join(sorted(i for i, v in verdicts.items() if v.kind == kind)) or "none"
    unmeasured.append(row)
ledger.show(unmeasured)

# %% [markdown]
# ## Which chapters ran here
#
# Every chapter of the course, from the notebooks beside this one (00 and 09 test no claim).
# Each chapter records that it ran and on which machine when it saves (`chapter.save()`, or
# for 00 its measurements), so a chapter whose claims all need a GPU still shows as run here. A verdict saved before a
# chapter's last run here, and not saved again by it, or judged under a rule that has changed
# since, is out of date: the ledger does not show it as current, and its row says so.

# %%
ledger.show(ledger.ran_here(), "Which chapters ran here")  # on the reference machine its recorded runs count

# %% [markdown]
# ## Where this machine and the reference disagree
#
# A disagreement is not an error: a claim about an A100 in fp16 judged on a laptop CPU is a
# different claim. What differs is folded under each table row's claim id.

# %%
differ = [row for row in ledger.rows() if "differ by" in row["depends on / why they differ"]]
disagree = ledger.show([{"claim": row["claim"], "this machine": row["this machine"].split(" [")[0],
                         "reference GPU": row["reference GPU"].split(" [")[0]} for row in differ],
                       "Where this machine and the reference disagree") if differ else None
for row in differ:
    disagree.fold(f"{row['claim']}: why", row["depends on / why they differ"])
disagree or print("No claim has verdicts on both machines that disagree.")  # the text, not its repr

# %% [markdown]
# ## A handout
#
# The same table as Markdown (for a README or an issue) and as one self-contained HTML page
# (no scripts, nothing fetched) that an instructor can hand out or print; both keep every
# column open.

# %%
markdown_path, html_path = ledger.export()  # into labkit's cache folder
print(f"written: {markdown_path}\n         {html_path}")

# %% [markdown]
# ## What to remember
#
# - A number from an article is a claim until it is measured on a named machine, in a named
#   precision and size: the table keeps both the verdict and the form it judged.
# - Verdicts that follow from tensor semantics (strides, errors, copies) agree on every
#   machine; verdicts that rest on timings can differ, and the row says why.
# - The reference column is a recording: re-make it on your own GPU with
#   `bash benchmarks/gpu_session.sh` (see the README) and this table compares against it.
