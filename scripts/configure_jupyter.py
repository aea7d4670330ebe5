"""Install the course's Jupyter settings into the current environment.

- `overrides.json` (JupyterLab and Notebook 7 read it from `<prefix>/share/jupyter/lab/settings/`):
  `.py` chapters open as notebooks (the Jupytext Notebook viewer); closing a chapter shuts its
  kernel down, so a learner who opens chapter after chapter keeps one kernel's memory, not
  five (Binder gives 2 GB); widget state (a quiz's answer, what it held back and revealed) is
  saved with the notebook, so a reopened chapter shows the learner's answers; no news pop-up.
- `jupyter_server_config.json` (into `<prefix>/etc/jupyter/`): the file
  browser lists each chapter once, by its `.py` source; the executed `.ipynb` twin is hidden
  from the listing but still opens by its path (Colab and Binder links). Saving a chapter
  writes both the `.py` and the `.ipynb` with its outputs (Jupytext's `formats`: Jupytext
  looks for `jupytext.toml` only inside the server's root, and `make lab` serves notebooks/,
  below the repository's `jupytext.toml`; without this the `.ipynb` kept its clone-time outputs,
  and a chapter opened from the `.py` alone lacked `language_info`, which the kernel then set,
  so every chapter opened marked as changed). A kernel that no browser tab is
  connected to and that has been idle for a minute is shut down: the Jupytext viewer that
  opens `.py` chapters ignores JupyterLab's kernelShutdown setting, and Notebook 7 has none,
  so closing a chapter frees its memory this way (a running cell is never interrupted).
  The `.py` is the chapter's source: a `.ipynb` newer than it (a fresh clone's checkout
  order, outputs refreshed after a source change) never stops the chapter from opening
  (`outdated_text_notebook_margin`; Jupytext's default of 1 s showed "File Load Error" and no
  notebook). Jupytext's settings sit in its own section (`JupytextConfiguration`): under
  `ContentsManager` the server's first, plain contents manager logged "Config option `formats`
  not recognized" at every start.
- `ipython_kernel_config.json` (into `<prefix>/etc/ipython/`, where IPython looks for an
  environment's settings): the kernel leaves its Python patch release out of `language_info`.
  JupyterLab and Notebook 7 write the kernel's `language_info` into a notebook as it opens; a
  learner whose Python was 3.11.2 where the chapters were executed with 3.11.7 found every
  chapter marked changed before running a cell, asked "Save your work?" on each close, and a
  save rewrote tracked files. The chapters are stored without that version
  (scripts/execute_notebook.py), so what the kernel reports matches them on any Python.
All apply to every user of this environment and leave authentication untouched.
"""

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent.parent / "jupyter"


def merge_into(target: pathlib.Path, source: pathlib.Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    settings = json.loads(target.read_text()) if target.exists() else {}
    settings.update(json.loads(source.read_text()))
    target.write_text(json.dumps(settings, indent=2) + "\n")
    print(f"Jupyter settings written to {target}")


prefix = pathlib.Path(sys.prefix)
merge_into(prefix / "share" / "jupyter" / "lab" / "settings" / "overrides.json", HERE / "overrides.json")
merge_into(prefix / "etc" / "jupyter" / "jupyter_server_config.json", HERE / "jupyter_server_config.json")
merge_into(prefix / "etc" / "ipython" / "ipython_kernel_config.json", HERE / "ipython_kernel_config.json")
