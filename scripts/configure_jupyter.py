"""Install the course's JupyterLab settings into the current environment.

They make `.py` notebooks open as notebooks (the Jupytext Notebook viewer) and switch off the
news pop-up. Settings in `<prefix>/share/jupyter/lab/settings/overrides.json` apply to every
user of this environment and leave JupyterLab's authentication untouched.
"""

import json
import pathlib
import sys

source = pathlib.Path(__file__).resolve().parent.parent / "jupyter" / "overrides.json"
target = pathlib.Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
target.parent.mkdir(parents=True, exist_ok=True)
settings = json.loads(target.read_text()) if target.exists() else {}
settings.update(json.loads(source.read_text()))
target.write_text(json.dumps(settings, indent=2) + "\n")
print(f"JupyterLab settings written to {target}")
