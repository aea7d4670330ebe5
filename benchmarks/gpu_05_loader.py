"""Chapter 05 on the GPU machine, outside the notebook: each H2D probe and a short loader
sweep, every part in its own try, so one failure still leaves the others' numbers.

    python3 benchmarks/gpu_05_loader.py OUTDIR      # writes OUTDIR/gpu_05_loader.json

Also runs on a CPU (the GPU parts then record their NoGPU message). The notebook
(notebooks/05_dataloader.py) is what records the verdicts; this is the fallback and the
record of what each instrument returned, with tracebacks where one failed.
"""

import json
import os
import sys
import time
import traceback
import warnings

import torch

from labkit.chapters.ch05_dataloader import h2d_copies, loader_data, loader_sweep, shm, train_step
from labkit.core import results

record = {"torch": torch.__version__, "environment": h2d_copies.environment_note(),
          "shm_free_bytes": shm.free_bytes(), "cores": os.cpu_count(), "parts": {}}


def part(name, fn):
    started = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = fn()
        record["parts"][name] = {"ok": True, "value": results.to_jsonable(value),
                                 "warnings": sorted({str(w.message)[:200] for w in caught})}
    except Exception as error:
        record["parts"][name] = {"ok": False, "error": f"{type(error).__name__}: {error}",
                                 "traceback": traceback.format_exc()[-3000:]}
    record["parts"][name]["seconds"] = time.perf_counter() - started
    print(f"{name}: {'ok' if record['parts'][name]['ok'] else record['parts'][name]['error']} "
          f"({record['parts'][name]['seconds']:.1f} s)", flush=True)


part("pin_memory_device_probe", h2d_copies.pin_memory_device_probe)
part("bandwidth_curve", lambda: [vars(p) for p in h2d_copies.bandwidth_curve()])
part("call_return_times", lambda: [vars(r) | {"blocked_share": r.blocked_share}
                                   for r in h2d_copies.call_return_times()])
part("pinning_cost", lambda: h2d_copies.pinning_cost().as_dict())
part("d2h_trap", lambda: [t.as_dict() for t in h2d_copies.d2h_trap()])

plan = loader_sweep.plan()
data = loader_data.SyntheticImages(length=4096, encoded_side=plan.encoded_side,
                                   output_side=plan.output_side)
part("per_sample_cost_s", lambda: loader_data.per_sample_cost(data).median_s)


def short_sweep():
    step = train_step.consumer(plan.model)
    settings = loader_sweep.grid(plan.worker_counts, plan.batch_size)
    if torch.cuda.is_available():
        knee_guess = plan.worker_counts[len(plan.worker_counts) // 2]
        settings.append(loader_sweep.Setting(num_workers=knee_guess, batch_size=plan.batch_size,
                                             pin_memory=True, device_prefetch=True))
    sweep = loader_sweep.sweep(data, settings, step, steps=plan.steps,
                               warmup_steps=plan.warmup_steps,
                               on_progress=lambda d, t, label: print(f"  {d}/{t} {label}", flush=True))
    return sweep.rows()


part("sweep", short_sweep)

folder = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "/tmp/out")
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "gpu_05_loader.json"), "w") as f:
    json.dump(record, f, indent=1)
failed = [name for name, p in record["parts"].items() if not p["ok"]]
print("failed parts:", failed or "none")
