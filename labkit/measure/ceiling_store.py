"""The measured ceilings of a device as data: the `Ceilings` record and its cache file.

Split from `labkit.measure.ceilings` (which measures, with `labkit.measure.bench`) so that the harness can
read the cached ceilings to show shares without importing the module that times with it:
no import circle. The cache directory is `labkit.core.env.cache_dir()`.
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from labkit.core import env


@dataclass(frozen=True)
class Ceilings:
    """Measured ceilings of one device.

    copy_gbps counts bytes read plus bytes written (a copy of N bytes moves 2N), the
    convention of STREAM and of GPU vendors' bandwidth figures. matmul_tflops maps the
    math a matmul ran in ('float32', 'tfloat32', 'bfloat16', 'float16') to TFLOP/s of a
    square matmul of side matmul_n (2 n^3 flops per call); 'tfloat32' is float32 data with
    TF32 tensor-core math switched on (GPU only).

    Each ceiling is the best rate of a sweep of sizes: copy_bytes and matmul_best_n say where
    it was reached, sweep holds every point ({"copy": {bytes: GB/s}, "matmul": {math: {n:
    TFLOP/s}}}) and sm_clock_mhz the GPU's SM clock read after each matmul point (an H200
    at its power cap runs an 8192 matmul at about 1.5 GHz, and a 4096 one beats it). Files
    written before the sweep lack these fields and read with their defaults (no sweep).
    """

    device_key: str
    device: str
    copy_gbps: float
    copy_bytes: int
    matmul_tflops: dict[str, float]
    matmul_n: int
    threads: int | None = None
    torch_version: str = ""
    tf32_allowed: bool = False
    measured_at: str = ""
    seconds_to_measure: float = 0.0
    details: dict = field(default_factory=dict)
    matmul_best_n: dict[str, int] = field(default_factory=dict)
    sweep: dict = field(default_factory=dict)
    sm_clock_mhz: dict[str, int | None] = field(default_factory=dict)

    def as_dict(self) -> dict:
        """Plain values, as stored in the cache file and in results."""
        return asdict(self)

    def _repr_html_(self) -> str:
        rows = [("device", f"{self.device} ({self.device_key})"),
                ("copy bandwidth", f"{self.copy_gbps:.1f} GB/s (read + write, "
                                   f"{self.copy_bytes / 2**20:.0f} MiB buffer"
                                   + (f", best of {len(self.sweep['copy'])} sizes"
                                      if self.sweep.get("copy") else "") + ")")]
        rows += [(f"matmul {_math_name(dtype)}", f"{rate:.3g} TFLOP/s (n = "
                  f"{self.matmul_best_n.get(dtype, self.matmul_n)}"
                  + (f", best of {len(self.sweep['matmul'][dtype])} sizes"
                     if self.sweep.get("matmul", {}).get(dtype) else "")
                  + (f", SM clock {self.sm_clock_mhz[dtype]} MHz" if self.sm_clock_mhz.get(dtype) else "")
                  + ")")
                 for dtype, rate in self.matmul_tflops.items()]
        rows.append(("measured", f"{self.measured_at}, torch {self.torch_version}"
                     + (f", best of {self.threads} threads and 1" if self.threads and self.threads > 1 else "")))
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>" for k, v in rows)
        return f"<div><b>Ceilings of this machine</b><table>{body}</table></div>"


def _math_name(dtype: str) -> str:
    return "float32 in TF32 math" if dtype == "tfloat32" else dtype


def cache_path(device_key: str | None = None) -> Path:
    """The cache file of one device's ceilings."""
    return env.cache_dir() / f"ceilings-{device_key or env.device_key()}.json"


def cached(device_type: str | None = None) -> Ceilings | None:
    """The ceilings already measured for this machine's device, or None. Never measures.

    `labkit.measure.bench` calls this to show percentages; measuring implicitly would make an
    innocent timing take seconds (CPU) or a minute (GPU, four kinds of math). device_type
    'cpu' on a GPU machine returns None: only the course's device is measured.
    """
    if device_type is not None and device_type != env.device().type:
        return None
    try:
        data = json.loads(cache_path().read_text())
        known = {f.name for f in fields(Ceilings)}
        return Ceilings(**{k: v for k, v in data.items() if k in known})
    except (OSError, ValueError, TypeError, AttributeError):
        return None  # missing, unreadable, or written by another version: not measured


def save(result: Ceilings) -> Path:
    """Write the ceilings to their cache file atomically (a reader never sees half a file)."""
    path = cache_path(result.device_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result.as_dict(), indent=2))
    os.replace(tmp, path)
    return path
