"""Measured results saved as JSON: this machine's runs, and the reference runs in results/.

Chapters call one function to keep what they measured:

    from labkit.core import results
    results.record("02_contiguity", "C2", {"verdict": "refuted", "ratio": 1.04})

By default that writes this machine's file in the user cache dir (never the repository).
With LABKIT_RECORD_REFERENCE=<machine> set (e.g. nvidia-h200), the same call writes
results/<machine>.json in the repository instead: that is how reference runs are made.
A machine without a GPU reads the reference with `recorded(...)` and shows it labelled
"recorded"; `against_reference(...)` shows this machine beside the reference.

File layout: {"machine", "fingerprint" (GPU, driver, torch, ...), "updated_at",
"chapters": {chapter: {key: {"payload": ..., "recorded_at": ...}}}}.
"""

from __future__ import annotations

import dataclasses
import html
import json
import math
import os
import re
from datetime import datetime, timezone
from pathlib import Path

from labkit.core import env

REFERENCE_ENV = "LABKIT_RECORD_REFERENCE"
DEFAULT_REFERENCE = "nvidia-h200"


# Where each notebook's first cell clones the course in Google Colab, which installs labkit
# into site-packages (no results/ beside it): the recorded reference runs are read from here.
COLAB_CHECKOUT = Path("/content/tensor-layout-lab")


def repository_results_dir() -> Path:
    """The results/ folder of the repository ($LABKIT_RESULTS_DIR when set; in Colab, the
    course's clone when labkit was installed from it rather than run from the checkout)."""
    if os.environ.get("LABKIT_RESULTS_DIR"):
        return Path(os.environ["LABKIT_RESULTS_DIR"])
    beside = Path(__file__).resolve().parents[2] / "results"
    if not beside.is_dir() and env.where() == "colab" and (COLAB_CHECKOUT / "results").is_dir():
        return COLAB_CHECKOUT / "results"
    return beside


def local_path() -> Path:
    """This machine's own results file, in the user cache dir beside the ceilings."""
    return env.cache_dir() / f"results-{env.device_key()}.json"


def reference_path(machine: str) -> Path:
    """results/<machine>.json; machine names are lower-case words joined by '-'."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", machine or ""):
        raise ValueError(f"machine name {machine!r} must be lower-case letters, digits, '-', '_' "
                         "or '.', e.g. 'nvidia-h200'")
    return repository_results_dir() / f"{machine}.json"


def target_path() -> Path:
    """Where record() writes now: the reference file if asked for, else the local one."""
    machine = os.environ.get(REFERENCE_ENV, "").strip()
    return reference_path(machine) if machine else local_path()


def record(chapter: str, key: str, payload: object) -> Path:
    """Save one result (a verdict, a timing, a table) under chapter/key; returns the file.

    payload may hold dicts, lists, numbers, strings, numpy or torch scalars, and objects
    with as_dict() (a Timing, Ceilings) or dataclasses. A later record with the same
    chapter and key replaces the earlier one.
    """
    if not chapter or not key:
        raise ValueError("record needs a chapter (e.g. '00_setup_check') and a key (e.g. 'C2')")
    path = target_path()
    data = _read(path) or _new_file(path.stem if path != local_path() else env.device_key())
    data["fingerprint"] = to_jsonable(env.fingerprint())
    data["updated_at"] = _now()
    entry = {"payload": to_jsonable(payload), "recorded_at": _now()}
    data.setdefault("chapters", {}).setdefault(chapter, {})[key] = entry
    _write(path, data)
    return path


def load(machine: str | None = None) -> dict | None:
    """A whole results file: the reference of `machine`, or this machine's own (None)."""
    return _read(reference_path(machine) if machine else local_path())


def recorded(chapter: str, key: str, machine: str = DEFAULT_REFERENCE) -> object | None:
    """The payload a reference machine recorded under chapter/key, or None if absent."""
    data = load(machine) or {}
    entry = data.get("chapters", {}).get(chapter, {}).get(key)
    return None if entry is None else entry["payload"]


def mine(chapter: str, key: str) -> object | None:
    """The payload this machine recorded under chapter/key, or None."""
    data = load() or {}
    entry = data.get("chapters", {}).get(chapter, {}).get(key)
    return None if entry is None else entry["payload"]


def reference_machines() -> list[str]:
    """Names of the machines with a reference file in results/."""
    folder = repository_results_dir()
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def describe_machine(machine: str = DEFAULT_REFERENCE) -> str:
    """One line naming a reference machine: GPU, driver, torch, when recorded."""
    data = load(machine)
    if data is None:
        return f"no reference recorded for {machine} yet (results/{machine}.json is missing)"
    fp = data.get("fingerprint", {})
    device = fp.get("gpu_name") or fp.get("cpu_model", "?")
    return (f"{machine}: {device}, driver {fp.get('gpu_driver', 'n/a')}, torch {fp.get('torch', '?')}, "
            f"recorded {data.get('updated_at', '?')}")


class AgainstReference:
    """A table of this machine's values beside a reference machine's, for notebooks."""

    def __init__(self, rows: list[tuple[str, object, object]], machine: str) -> None:
        self.rows, self.machine = rows, machine

    def _repr_html_(self) -> str:
        body = "".join(f"<tr><td>{html.escape(k)}</td><td>{_cell(a)}</td><td>{_cell(b)}</td></tr>"
                       for k, a, b in self.rows)
        return (f"<table><tr><th>measure</th><th>this machine</th>"
                f"<th>{html.escape(self.machine)} (recorded)</th></tr>{body}</table>")

    def __str__(self) -> str:
        return "\n".join(f"{k}: {_cell(a)} | {_cell(b)} (recorded)" for k, a, b in self.rows)


def against_reference(chapter: str, key: str, this_machine: dict | None = None,
                      machine: str = DEFAULT_REFERENCE) -> AgainstReference:
    """This machine's numbers (given, else its own record) beside the reference's, per field.

    Nested dicts are flattened to 'a.b' names; a field missing on one side shows as '-'.
    """
    ours = _flatten(to_jsonable(this_machine if this_machine is not None else mine(chapter, key)))
    theirs = _flatten(recorded(chapter, key, machine))
    names = list(dict.fromkeys([*ours, *theirs]))
    return AgainstReference([(n, ours.get(n), theirs.get(n)) for n in names], machine)


def to_jsonable(value: object) -> object:
    """Turn a payload into plain JSON values (numbers, strings, lists, dicts)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if hasattr(value, "as_dict"):
        return to_jsonable(value.as_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars, torch tensors
        return to_jsonable(value.tolist())
    return str(value)


def _flatten(value: object, prefix: str = "") -> dict:
    if not isinstance(value, dict):
        return {} if value is None and not prefix else {prefix or "value": value}
    out: dict = {}
    for k, v in value.items():
        name = f"{prefix}.{k}" if prefix else str(k)
        out.update(_flatten(v, name) if isinstance(v, dict) else {name: v})
    return out


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return html.escape(f"{value:.4g}")
    return html.escape(str(value))


def _new_file(machine: str) -> dict:
    return {"machine": machine, "fingerprint": {}, "updated_at": _now(), "chapters": {}}


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix or delete it") from exc


def _write(path: Path, data: dict) -> None:
    """Write through a temporary file so a crash never leaves half a JSON file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, path)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
