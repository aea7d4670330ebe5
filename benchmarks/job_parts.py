"""One part of a GPU job: run it, keep its value or its error, and go on.

The device scripts (gpu_04_recut.py, gpu_05_recut.py, gpu_05_issue39.py) each run many
independent parts in one call; a part that fails must not cost the others, and what it raised
must come back with the results. Imported by those scripts from their own folder (python puts
a script's folder first on sys.path).
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable

from labkit.core import results


def part(record: dict, name: str, fn: Callable[[], object],
         as_value: Callable[[object], object] = results.to_jsonable, echo: bool = True) -> object:
    """Run `fn`; record[name] gets its value (through `as_value`) or its error and traceback,
    and its seconds; one line is printed, and the value too when `echo`. Returns the value."""
    started = time.perf_counter()
    value = None
    try:
        value = fn()
        record[name] = {"ok": True, "value": as_value(value)}
    except Exception as error:  # noqa: BLE001 -- recorded with its traceback, the job goes on
        record[name] = {"ok": False, "error": f"{type(error).__name__}: {error}",
                        "traceback": traceback.format_exc()[-3000:]}
    record[name]["seconds"] = time.perf_counter() - started
    print(f"{name}: {'ok' if record[name]['ok'] else record[name]['error']} "
          f"({record[name]['seconds']:.1f} s)", flush=True)
    if echo and record[name]["ok"]:
        print(json.dumps(record[name]["value"], indent=1, default=str)[:3000], flush=True)
    return value
