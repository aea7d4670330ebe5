"""Build the course website: every chapter readable without a kernel, offline (`make site`).

    python scripts/build_site.py                 # writes site/ (open site/index.html)
    python scripts/build_site.py --out /tmp/s    # anywhere else

What it does, in order:
1. For each chapter (notebooks/NN_name.py), take the executed notebook of the reference GPU run
   where one is recorded (results/h200_notebooks/NN_name.ipynb), else the committed CPU run
   (notebooks/NN_name.ipynb). Nothing is executed.
2. Copy it into a staging folder, with a box at the top that says which machine ran it and
   when (the reference's fingerprint and recording time from results/<machine>.json; for a CPU
   run, the torch and device its first cell printed and the date the notebook was committed),
   how many minutes it takes and what to do first (site_src/chapters.toml), and how to run it
   (JupyterLab locally, Binder, Colab: the repository is read from the README's Binder badge).
   Widget state is dropped (its JavaScript would come from a CDN); each widget shows the static
   picture it saved beside its view (site_src/conf.py prefers it). A live-only widget with no
   picture (a progress bar) says nothing on a page and is left out.
3. Give each claim a label at the section that judges it (`chapter.judge("C7", ...)`), and
   link the ledger's claim ids (chapter 99) to those sections.
4. Write the index (the chapter map with minutes, machine and launch links) and run Sphinx with
   site_src/ as its configuration, warnings as errors, into the work folder; then copy the HTML
   into the output folder. myst-nb writes its own files beside the HTML folder, so the work
   folder (build/site by default, git-ignored) keeps them out of the repository.
"""

from __future__ import annotations

import argparse
import copy
import functools
import importlib.util
import json
import math
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import nbformat

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the `site` extra installs tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = "site_src"
# Reference runs whose executed notebooks the site prefers: (folder, results file).
REFERENCE_RUNS = [("results/h200_notebooks", "results/nvidia-h200.json")]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
COLAB_CELL = "# Installs labkit when (and only when) this notebook runs in Google Colab."
STATIC_PICTURES = ("image/svg+xml", "image/png", "text/html")
# What myst-nb can draw; it warns (an error here) on any other type in a bundle, even where
# the bundle also has one of these. Machine-readable data (application/json) is left out.
RENDERABLE = (WIDGET_VIEW, "application/javascript", "text/html", "image/svg+xml", "image/png",
              "image/gif", "image/jpeg", "text/markdown", "text/latex", "text/plain")
# The cell that judges a claim: `chapter.judge("C7", ...)`, or the older
# `claims.get("C7").judge(...)` that the recorded reference notebooks still show.
JUDGE = re.compile(r"""\.judge\(\s*["'](C\d+[a-z]?)["']|\bget\(\s*["'](C\d+[a-z]?)["']\s*\)\s*\.judge\(""")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$", re.M)
BINDER_BADGE = re.compile(r"https://mybinder\.org/v2/gh/([\w.-]+)/([\w.-]+)/([\w.-]+)")


class SiteError(RuntimeError):
    """The repository cannot make a site as it stands (a missing row, notebook or badge)."""


@dataclass(frozen=True)
class Chapter:
    """One chapter as the site shows it: which executed notebook, run where and when."""

    key: str
    title: str
    notebook: Path
    ran_on: str
    ran_when: str
    is_reference: bool
    minutes: int
    needs: tuple[str, ...]
    also: str
    changed_cells: int = 0  # cells of the current source that the shown run does not have


def changed_cells(root: Path, key: str, shown: nbformat.NotebookNode) -> int:
    """How many cells of the chapter's current source (notebooks/<key>.py) are not in the
    executed notebook shown, by their text: a reference run from an earlier revision of the
    chapter says so on its page instead of passing for the current one."""
    source = root / "notebooks" / f"{key}.py"
    if not source.exists():
        return 0
    import jupytext

    def texts(nb: nbformat.NotebookNode) -> list[str]:
        return ["".join(c.source).strip() for c in nb.cells]

    have = set(texts(shown))
    return sum(1 for text in texts(jupytext.read(source)) if text and text not in have)


def chapter_keys(root: Path) -> list[str]:
    """Every chapter's key, from the notebook sources (NN_name.py), in course order."""
    keys = sorted(p.stem for p in (root / "notebooks").glob("[0-9][0-9]_*.py"))
    if not keys:
        raise SiteError(f"no chapter sources (NN_name.py) in {root / 'notebooks'}")
    return keys


def launch_base(root: Path) -> tuple[str, str, str]:
    """(owner, repository, branch) from the README's Binder badge, so the site's launch links
    point where the README's do."""
    match = BINDER_BADGE.search((root / "README.md").read_text(encoding="utf-8"))
    if not match:
        raise SiteError("README.md has no Binder badge (https://mybinder.org/v2/gh/OWNER/REPO/BRANCH)")
    return match.group(1), match.group(2), match.group(3)


def launch_links(root: Path, key: str) -> dict[str, str]:
    """The Binder and Colab addresses of one chapter's notebook."""
    owner, repo, branch = launch_base(root)
    path = f"notebooks/{key}.ipynb"
    return {
        "Binder": f"https://mybinder.org/v2/gh/{owner}/{repo}/{branch}?urlpath=lab/tree/{path}",
        "Colab": f"https://colab.research.google.com/github/{owner}/{repo}/blob/{branch}/{path}",
    }


@functools.lru_cache(maxsize=1)
def _estimator() -> ModuleType:
    """scripts/chapter_minutes.py as a module (scripts/ is not a package), loaded once."""
    spec = importlib.util.spec_from_file_location("chapter_minutes", Path(__file__).with_name("chapter_minutes.py"))
    estimator = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("chapter_minutes", estimator)  # its dataclass looks its module up
    spec.loader.exec_module(estimator)
    return estimator


def estimated_minutes(root: Path, key: str) -> int | None:
    """The chapter's core workshop minutes from scripts/chapter_minutes.py (reading, quizzes,
    exercises, run time), rounded up; None when the chapter has no recorded run time."""
    run_seconds = root / "results" / "chapter_run_seconds.json"
    source = root / "notebooks" / f"{key}.py"
    if not run_seconds.exists() or not source.exists():
        return None
    recorded = json.loads(run_seconds.read_text(encoding="utf-8")).get(key)
    if not isinstance(recorded, int | float):
        return None
    return math.ceil(_estimator().estimate(source, run_seconds=float(recorded)).core)


def plan(root: Path) -> dict[str, dict]:
    """site_src/chapters.toml: minutes and prerequisites, checked against the chapters."""
    table = tomllib.loads((root / CONF_DIR / "chapters.toml").read_text(encoding="utf-8"))
    keys = chapter_keys(root)
    missing = [k for k in keys if k not in table]
    if missing:
        raise SiteError(f"{CONF_DIR}/chapters.toml has no row for {', '.join(missing)}: "
                        "add its minutes and prerequisites")
    for key, row in table.items():
        if key not in keys:
            raise SiteError(f"{CONF_DIR}/chapters.toml names {key!r}, which is not a chapter")
        estimate = estimated_minutes(root, key)
        if estimate is not None:  # computed from the notebook, never typed in
            row["minutes"] = estimate
        elif not isinstance(row.get("minutes"), int) or row["minutes"] <= 0:
            raise SiteError(f"{CONF_DIR}/chapters.toml: {key} has no recorded run time "
                            "(results/chapter_run_seconds.json) to estimate its minutes from: "
                            "record one, or give minutes = a positive integer")
        for need in row.get("needs", []):
            if need not in keys:
                raise SiteError(f"{CONF_DIR}/chapters.toml: {key} needs {need!r}, not a chapter")
    return table


def reference_run(root: Path, key: str) -> tuple[Path, str, str] | None:
    """(notebook, machine, when) of the reference GPU run of this chapter, if one is recorded."""
    for folder, results_file in REFERENCE_RUNS:
        notebook = root / folder / f"{key}.ipynb"
        if not notebook.exists():
            continue
        record = json.loads((root / results_file).read_text(encoding="utf-8"))
        return notebook, describe_fingerprint(record), recorded_when(record, key)
    return None


def describe_fingerprint(record: dict) -> str:
    """The reference machine in words, from its results file's fingerprint."""
    f = record.get("fingerprint", {})
    gpu = f.get("gpu_name", record.get("machine", "an unnamed machine"))
    parts = [f"{gpu}"]
    if f.get("gpu_memory_gib"):
        parts.append(f"{f['gpu_memory_gib']} GiB, {f.get('gpu_sm_count', '?')} SMs")
    if f.get("gpu_driver"):
        parts.append(f"driver {f['gpu_driver']}")
    if f.get("cuda_runtime"):
        parts.append(f"CUDA {f['cuda_runtime']}")
    if f.get("torch"):
        parts.append(f"torch {f['torch']}")
    if f.get("cpu_model"):
        parts.append(f"host {f['cpu_model']}, {f.get('cpu_cores', '?')} cores")
    return f"{parts[0]} ({'; '.join(parts[1:])})" if len(parts) > 1 else parts[0]


def recorded_when(record: dict, key: str) -> str:
    """When this chapter was recorded: its latest entry's time, else the file's updated_at."""
    entries = record.get("chapters", {}).get(key, {})
    stamps = [e["recorded_at"] for e in entries.values() if isinstance(e, dict) and "recorded_at" in e]
    stamp = max(stamps) if stamps else record.get("updated_at")
    return f"recorded {readable_time(stamp)}" if stamp else "recording time not stored"


def readable_time(stamp: str) -> str:
    """'2026-11-30T12:20:04+00:00' as '2026-11-30 12:20 UTC'."""
    match = re.match(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d)", stamp)
    if match and stamp.endswith(("+00:00", "Z")):
        return f"{match.group(1)} {match.group(2)} UTC"
    return stamp


def cpu_run(root: Path, notebook_path: Path, notebook: nbformat.NotebookNode) -> tuple[str, str]:
    """(machine, when) of a committed CPU run: what its first cells printed about torch and the
    device, and the date git last committed the notebook (the notebook keeps no timestamps)."""
    printed = ""
    for cell in notebook.cells[:8]:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                printed += output.get("text", "")
    said = [f"torch {m.group(1)} on {m.group(2)}"
            for m in [re.search(r"torch (\S+) on ([\w:]+)", printed)] if m]
    said += [m.group(1) for m in [re.search(r"this machine: (\S+)", printed)] if m]
    machine = ", ".join(said) or "a machine the notebook does not name"
    machine = f"a CPU-only machine ({machine})"
    try:
        date = subprocess.run(
            ["git", "log", "-1", "--format=%cs", "--", str(notebook_path.relative_to(root))],
            cwd=root, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, ValueError, subprocess.SubprocessError):
        date = ""
    when = (f"committed with the course on {date}" if date
            else "not yet committed (a working copy)")
    return machine, when


def title_of(notebook: nbformat.NotebookNode, key: str) -> str:
    """The chapter's title: the first level-1 heading of its notebook."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#\s+(.+?)\s*$", cell.source, re.M)
            if match:
                return match.group(1)
    raise SiteError(f"chapter {key} has no '# Title' heading")


def chapters(root: Path) -> list[Chapter]:
    """Every chapter with the notebook the site shows and what the page says about it."""
    table = plan(root)
    found = []
    for key in chapter_keys(root):
        reference = reference_run(root, key)
        if reference:
            path, ran_on, ran_when = reference
        else:
            path = root / "notebooks" / f"{key}.ipynb"
            if not path.exists():
                raise SiteError(f"{path} is missing: execute the chapter (make notebooks) first")
            ran_on, ran_when = cpu_run(root, path, nbformat.read(path, as_version=4))
        notebook = nbformat.read(path, as_version=4)
        row = table[key]
        found.append(Chapter(key=key, title=title_of(notebook, key), notebook=path,
                             ran_on=ran_on, ran_when=ran_when, is_reference=reference is not None,
                             minutes=row["minutes"], needs=tuple(row.get("needs", [])),
                             also=row.get("also", ""),
                             changed_cells=changed_cells(root, key, notebook) if reference else 0))
    return found


def claim_label(claim_id: str) -> str:
    return f"claim-{claim_id.lower()}"


def label_claims(notebook: nbformat.NotebookNode) -> list[str]:
    """Put a label `claim-cN` on the heading of the section whose code judges claim CN; return
    the claims labelled. A claim judged twice keeps the first section."""
    labelled: list[str] = []
    last_heading: tuple[int, int] | None = None  # (cell index, offset of the heading line)
    labels_at: dict[tuple[int, int], list[str]] = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            for match in HEADING.finditer(cell.source):
                last_heading = (index, match.start())
        elif cell.cell_type == "code" and last_heading is not None:
            for claim_id in (a or b for a, b in JUDGE.findall(cell.source)):
                if claim_id not in labelled:
                    labelled.append(claim_id)
                    labels_at.setdefault(last_heading, []).append(claim_id)
    # Insert from the end of each cell backwards so earlier offsets stay valid.
    for (index, offset), ids in sorted(labels_at.items(), reverse=True):
        source = notebook.cells[index].source
        targets = "".join(f"({claim_label(c)})=\n" for c in ids)
        notebook.cells[index].source = source[:offset] + targets + source[offset:]
    return labelled


def drop_widget_views(notebook: nbformat.NotebookNode) -> None:
    """Drop the saved widget state, outputs that are a widget view with no static picture, and
    data a page cannot draw.

    The state would make myst-nb load the widget manager from a CDN; a view whose only
    fallback is its repr text (`IntProgress(value=0, ...)`) tells a reader nothing.
    """
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.outputs:
            if "data" in output:
                output["data"] = {m: v for m, v in output["data"].items() if m in RENDERABLE}
        cell.outputs = [
            o for o in cell.outputs
            if not (WIDGET_VIEW in o.get("data", {})
                    and not any(m in o["data"] for m in STATIC_PICTURES))
        ]


# A held output's saved HTML (labkit/show/widgets/holdback.py): a <details> whose summary says
# "Held back until you answer the quiz above". A page cannot answer a quiz.
HELD = re.compile(r"^<details class='lt-held[^']*'><summary>.*?</summary>(.*)</details>\s*$", re.S)
# A claim card (labkit's verdict table): what a reader of the page came for.
VERDICT_TABLE = re.compile(r"^\s*<table><tr><th[^>]*>claim</th>")
QUIZ_STATIC = re.compile(r"<div class='lt-quiz-static'>.*</div>", re.S)
SITE_HELD_SUMMARY = "What the code computed: predict first, then open it"


def html_of(output: dict) -> str:
    """An output's HTML, as one string ('' where it has none)."""
    text = output.get("data", {}).get("text/html", "")
    return "".join(text) if isinstance(text, list) else text


def open_held_outputs(notebook: nbformat.NotebookNode) -> None:
    """Held-back outputs as a page reader expects: a quiz cannot be answered on a page, so no
    "answer the quiz above". A claim's verdict table is shown open; the rest of a cell's held
    outputs go behind one <details> per cell (a run of them, in order), with a summary that
    says what is inside. A quiz shows its static picture, as every widget does on the site,
    not its note on how to make it live in Jupyter."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = site_outputs(cell.outputs)


def site_outputs(cell_outputs: list) -> list:
    """One cell's outputs for a page (open_held_outputs)."""
    outputs: list = []
    run: list[str] = []
    for output in [*cell_outputs, None]:  # None: the end, which closes the last run
        held = HELD.match(html_of(output)) if output is not None else None
        if held is not None and not VERDICT_TABLE.match(held.group(1)):
            run.append(held.group(1))
            continue
        if run:
            outputs.append(nbformat.v4.new_output("display_data", data={
                "text/html": f"<details class='lt-held'><summary>{SITE_HELD_SUMMARY}</summary>"
                             f"{''.join(run)}</details>"}))
            run = []
        if output is None:
            break
        if held is not None:  # a verdict table: open
            outputs.append(nbformat.v4.new_output("display_data",
                                                  data={"text/html": held.group(1)}))
            continue
        if QUIZ_STATIC.search(html_of(output)):  # its steps to make it live in Jupyter:
            del output["data"]["text/html"]          # the page shows its picture instead
        outputs.append(output)
    return outputs


def tag_cells(notebook: nbformat.NotebookNode) -> None:
    """Keep the notebook's own reading choices on the page: a cell it collapses (a quiz whose
    answer is computed in its code) shows its code only on a click; the Colab install cell,
    which does nothing outside Colab, is left out."""
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.setdefault("tags", [])
        if cell.metadata.get("jupyter", {}).get("source_hidden"):
            tags.append("hide-input")
        if cell.source.lstrip().startswith(COLAB_CELL):
            tags.append("remove-cell")


def link_chapters_in_outputs(notebook: nbformat.NotebookNode, keys: list[str],
                             claims_at: dict[str, str]) -> None:
    """HTML outputs link chapters by their source (`href='01_x.py'`); on the site that is the
    chapter's page. In the ledger, each claim id links to the section that judged it (or,
    where the page shown does not judge it, e.g. a claim split after the reference run, to the
    chapter named in the next column)."""
    names = "|".join(map(re.escape, keys))
    source_link = re.compile(r"""href=(['"])(""" + names + r""")\.(?:py|ipynb)\1""")
    claim_cell = re.compile(r"""<td>(C\d+[a-z]?)</td>(?=<td><a href=(['"])(\d\d_\w+)\.(?:py|ipynb)\2)""")

    def claim_link(match: re.Match) -> str:
        claim_id, chapter = match.group(1), match.group(3)
        if claim_id in claims_at:
            href = f"{claims_at[claim_id]}.html#{claim_label(claim_id)}"
        elif chapter in keys:
            href = f"{chapter}.html"
        else:
            return match.group(0)
        return f"<td><a href='{href}'>{claim_id}</a></td>"

    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text/html" not in data:
                continue
            text = data["text/html"]
            text = "".join(text) if isinstance(text, list) else text
            text = claim_cell.sub(claim_link, text)
            data["text/html"] = source_link.sub(
                lambda m: f"href={m.group(1)}{m.group(2)}.html{m.group(1)}", text)


def facts_cell(root: Path, chapter: Chapter, by_key: dict[str, Chapter]) -> nbformat.NotebookNode:
    """The box at the top of a chapter page: who ran it, when, how long, what first, run it."""
    which = "the reference GPU run" if chapter.is_reference else "the CPU run"
    lines = [
        "```{admonition} About this page",
        ":class: course-chapter-facts",
        "",
        f"**Executed on** {chapter.ran_on}, {chapter.ran_when}. These are the outputs of "
        f"{which}: nothing on this page was executed to build it."
        + (f" That run is of an earlier revision of the chapter: {chapter.changed_cells} cell(s) "
           "of the current notebook are not on this page (run it, or see the committed CPU "
           "run in `notebooks/`)." if chapter.changed_cells else ""),
        "",
        f"**Time:** about {chapter.minutes} minutes.",
        "",
        f"**Before this chapter:** {prerequisites(chapter, by_key)}",
        "",
        "**Run it:** in JupyterLab on your machine (`make lab`, then open "
        f"`notebooks/{chapter.key}.py`)"
        + "".join(f" · [on {name}]({url})" for name, url in launch_links(root, chapter.key).items()),
        "```",
    ]
    return nbformat.v4.new_markdown_cell("\n".join(lines))


def prerequisites(chapter: Chapter, by_key: dict[str, Chapter]) -> str:
    parts = [f"[{by_key[k].title}]({k}.ipynb)" for k in chapter.needs]
    if chapter.also:
        parts.append(chapter.also)
    return "; ".join(parts) if parts else "nothing."


def ledger_index_cell(claims_at: dict[str, str], by_key: dict[str, Chapter]) -> nbformat.NotebookNode:
    """A list under the ledger of where each claim was measured (Sphinx checks every link)."""
    lines = ["## Where each claim was measured", ""]
    for claim_id, key in claims_at.items():
        lines.append(f"- {{ref}}`{claim_id} <{claim_label(claim_id)}>` in {by_key[key].title}")
    return nbformat.v4.new_markdown_cell("\n".join(lines))


REPOSITORY_LINK = re.compile(r"\]\(\.\./((?:scripts|labkit|benchmarks|tests|results|workshop|docs)/[^)\s]+)\)")


def link_repository_files(root: Path, notebook: nbformat.NotebookNode) -> None:
    """A chapter's link to a file of the repository (`../scripts/x.py`) points into the
    repository on its code host: the site ships chapters, not the repository's files."""
    owner, repo, branch = launch_base(root)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = REPOSITORY_LINK.sub(
                lambda m: f"](https://github.com/{owner}/{repo}/blob/{branch}/{m.group(1)})", cell.source)


def add_trust_rule(notebook: nbformat.NotebookNode) -> bool:
    """A page whose claim cards link to the trust rule (#trust-rule) but whose run never
    printed it (a chapter without `chapter.rules()`, such as 05) gets the rule as its last
    section, so the link lands; True when it was added."""
    from labkit.claims import core, trust

    anchor = core.RULES_ANCHOR
    outputs = [json.dumps(cell.get("outputs", [])) for cell in notebook.cells
               if cell.cell_type == "code"]
    linked = any(f"#{anchor}" in text for text in outputs)
    present = any(f"id='{anchor}'" in text or f'id=\\"{anchor}\\"' in text for text in outputs)
    if not linked or present:
        return False
    # A raw HTML anchor, not a MyST target: a target is a site-wide label, and two pages that
    # both need the section (05 and 08) would define it twice (Sphinx warns, the build fails).
    notebook.cells.append(nbformat.v4.new_markdown_cell(
        f"<div id='{anchor}'></div>\n\n## The trust rule\n\nThe claim cards above link here. "
        f"{trust.TRUST_RULE}"))
    return True


def stage_chapter(root: Path, chapter: Chapter, by_key: dict[str, Chapter],
                  claims_at: dict[str, str], staging: Path) -> None:
    notebook = copy.deepcopy(nbformat.read(chapter.notebook, as_version=4))
    drop_widget_views(notebook)
    open_held_outputs(notebook)
    tag_cells(notebook)
    label_claims(notebook)
    add_trust_rule(notebook)
    link_chapters_in_outputs(notebook, list(by_key), claims_at)
    link_repository_files(root, notebook)
    notebook.cells.insert(1, facts_cell(root, chapter, by_key))
    if chapter.key.startswith("99_"):
        after = next((i for i, c in enumerate(notebook.cells)
                      if c.cell_type == "code" and "<td>" in json.dumps(c.get("outputs", []))),
                     len(notebook.cells) - 1)
        notebook.cells.insert(after + 1, ledger_index_cell(claims_at, by_key))
    nbformat.write(notebook, staging / f"{chapter.key}.ipynb")


def index_page(root: Path, found: list[Chapter]) -> str:
    intro = (root / CONF_DIR / "index_intro.md").read_text(encoding="utf-8").rstrip()
    rows = ["| chapter | minutes | before it | executed on | run it |", "| --- | --- | --- | --- | --- |"]
    for c in found:
        before = ", ".join(k[:2] for k in c.needs) or "-"
        machine = "reference GPU" if c.is_reference else "CPU"
        links = " · ".join(f"[{name}]({url})" for name, url in launch_links(root, c.key).items())
        rows.append(f"| [{c.title}]({c.key}.ipynb) | {c.minutes} | {before} | {machine} | {links} |")
    total = sum(c.minutes for c in found)
    toctree = ["```{toctree}", ":hidden:", ":maxdepth: 1", ""] + [c.key for c in found] + ["```"]
    return "\n".join([
        intro, "", "## Chapters", "",
        f"{len(found)} chapters, about {total} minutes in all. *Executed on* says whose run each "
        "page shows: the reference GPU's where one is recorded, else the CPU run committed with "
        "the course. To run a chapter locally: `make lab` in a checkout.", "",
        *rows, "", *toctree, "",
    ])


def stage(root: Path, staging: Path) -> list[Chapter]:
    """Lay out the Sphinx sources: the index and one notebook per chapter."""
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    found = chapters(root)
    by_key = {c.key: c for c in found}
    claims_at: dict[str, str] = {}
    for c in found:
        for claim_id in label_claims(copy.deepcopy(nbformat.read(c.notebook, as_version=4))):
            claims_at.setdefault(claim_id, c.key)
    claims_at = dict(sorted(claims_at.items(), key=lambda kv: (kv[1], _claim_order(kv[0]))))
    for c in found:
        stage_chapter(root, c, by_key, claims_at, staging)
    (staging / "index.md").write_text(index_page(root, found), encoding="utf-8")
    return found


def _claim_order(claim_id: str) -> tuple[int, str]:
    match = re.fullmatch(r"C(\d+)([a-z]?)", claim_id)
    return (int(match.group(1)), match.group(2)) if match else (0, claim_id)


def build(root: Path = ROOT, out: Path | None = None, work: Path | None = None,
          quiet: bool = True) -> dict:
    """Build the site into `out`; return what was built (pages, bytes, seconds, warnings).

    Raises SiteError when Sphinx warns (a warning is an error here) or the repository lacks
    something the site needs.
    """
    from sphinx.cmd.build import build_main

    started = time.perf_counter()
    out = Path(out or root / "site")
    work = Path(work or root / "build" / "site")
    staging, html_dir, warnings_file = work / "src", work / "html", work / "warnings.txt"
    found = stage(root, staging)
    if html_dir.exists():
        shutil.rmtree(html_dir)
    args = ["-b", "html", "-E", "-W", "--keep-going", "-w", str(warnings_file),
            "-c", str(root / CONF_DIR), "-d", str(work / "doctrees"), str(staging), str(html_dir)]
    if quiet:
        args.insert(0, "-q")
    status = build_main(args)
    warnings = warnings_file.read_text(encoding="utf-8") if warnings_file.exists() else ""
    if status != 0 or warnings.strip():
        raise SiteError(f"Sphinx failed (exit {status}); warnings are errors here:\n{warnings}")
    if out.exists():
        if any(out.iterdir()) and not (out / "index.html").exists():
            raise SiteError(f"{out} exists and is not a site this script built: not replacing it")
        shutil.rmtree(out)
    # Source maps (3.4 MB of the theme's) serve only a browser's developer tools.
    shutil.copytree(html_dir, out, ignore=shutil.ignore_patterns(".buildinfo", "*.map"))
    files = [p for p in out.rglob("*") if p.is_file()]
    return {
        "out": str(out), "chapters": [c.key for c in found],
        "reference": [c.key for c in found if c.is_reference],
        "pages": sum(1 for p in files if p.suffix == ".html"),
        "bytes": sum(p.stat().st_size for p in files),
        "seconds": time.perf_counter() - started,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="where the site goes")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "site",
                        help="staging and Sphinx's own files (git-ignored by default)")
    parser.add_argument("--verbose", action="store_true", help="Sphinx's progress output")
    args = parser.parse_args()
    try:
        report = build(ROOT, args.out, args.work, quiet=not args.verbose)
    except SiteError as error:
        print(f"make site: {error}", file=sys.stderr)
        return 1
    print(f"site: {report['pages']} pages, {report['bytes'] / 2**20:.1f} MiB in {report['out']}, "
          f"built in {report['seconds']:.1f} s; reference GPU run shown for "
          f"{len(report['reference'])} of {len(report['chapters'])} chapters. "
          f"Open {Path(report['out']) / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
