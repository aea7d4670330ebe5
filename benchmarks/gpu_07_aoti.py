"""Where chapter 07's time goes on a GPU, AOTInductor's compile above all (issue 39).

Since review 2026-12-03d item 5 the chapter no longer compiles AOTInductor unless the reader
sets LABKIT_AOTI_TIMEOUT_S (the 13:10 H200 run spent 128 s of its 152 s on it: export 3.9 s,
the child's compile 71.9 s, then 45.7 s in aoti_load_package); it shows the recorded run. This
job says whether that load time is the package's own (load_s below, cold) and what a cut of
the compile would buy, should the chapter compile it live again.

Chapter 07 ran 163 s on the H200 and its AOTInductor row alone took 132.7 s to build (the
recorded audit's build_s), with a 100 s limit on the child process's compile: so at least
~30 s of it was spent outside that child (the export, the save, the load). This job times
each stage apart, cold (a fresh inductor and Triton cache and a fresh temporary folder for
precompiled headers per variant), for two variants of the child's compile:

- 'no precompiled headers': what labkit.audit.export_audit now does (a header precompiled
  for one compile costs more than it saves; on the course's CPU 36.8 s -> 30.0 s);
- 'precompiled headers': torch's default, what the recorded 132.7 s ran with;
- 'no precompiled headers, wrapper at O0': the C++ wrapper (glue on a GPU) compiled at -O0,
  a candidate cut not yet taken (it may slow the wrapper's host launch).

Then the chapter's other steps once each (the audit without AOTInductor, the speed table,
the traps, ONNX Runtime's placement), so their sum can be set beside the chapter's run.

    PYTHONPATH=. python3 benchmarks/gpu_07_aoti.py --out DIR     # writes DIR/gpu_07_aoti.json

About 4-7 minutes on an H200 host (three cold compiles, the rest ~30 s). What to look for,
printed as each part ends: per variant 'export_s', 'compile_s' (the child's own figure),
'child_wall_s' (start to exit, torch's import included), 'cpp_builds' (the g++ calls and
their seconds, the largest first) and 'load_s'; which stage dominates is what to cut next.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import job_parts  # benchmarks/job_parts.py, beside this script

# The child: times each g++ call (CppBuilder.build) and the whole compile, prints JSON.
CHILD = r'''
import json, sys, time
import torch
from torch._inductor import cpp_builder
builds = []
original = cpp_builder.CppBuilder.build
def build(self, *args, **kwargs):
    start = time.perf_counter()
    try:
        return original(self, *args, **kwargs)
    finally:
        builds.append([round(time.perf_counter() - start, 2), str(getattr(self, "_name", ""))[-60:]])
cpp_builder.CppBuilder.build = build
headers = sys.argv[3] == "1"
if getattr(torch._inductor.config.aot_inductor, "precompile_headers", None) is not None:
    torch._inductor.config.aot_inductor.precompile_headers = headers
if sys.argv[4] and getattr(torch._inductor.config.aot_inductor, "compile_wrapper_opt_level", None):
    torch._inductor.config.aot_inductor.compile_wrapper_opt_level = sys.argv[4]
start = time.perf_counter()
program = torch.export.load(sys.argv[1])
loaded = time.perf_counter()
torch._inductor.aoti_compile_and_package(program, package_path=sys.argv[2])
done = time.perf_counter()
print("RESULT " + json.dumps({"load_program_s": loaded - start, "compile_s": done - loaded,
                              "cpp_builds": sorted(builds, reverse=True)[:12],
                              "cpp_builds_s": sum(b[0] for b in builds)}))
'''


def aoti_stages(headers: bool, wrapper_opt: str = "") -> dict:
    """One cold AOTInductor build of chapter 07's SmallCNN on the GPU, stage by stage
    (wrapper_opt: the C++ wrapper's optimisation level, e.g. 'O0'; '' leaves torch's default)."""
    import torch

    from labkit.chapters.ch07_export_traps import tables

    on_gpu = torch.cuda.is_available()  # on a CPU: the course's CPU sizes, a smoke test
    frozen = tables.setup(torch.device("cuda" if on_gpu else "cpu"), on_gpu)
    with tempfile.TemporaryDirectory(prefix="aoti-probe-") as scratch:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": f"{scratch}/inductor",
               "TRITON_CACHE_DIR": f"{scratch}/triton", "TMPDIR": scratch}
        begin = time.perf_counter()
        with torch.no_grad():
            program = torch.export.export(frozen.model.eval(), (frozen.example,))
        program_path, package_path = Path(scratch) / "program.pt2", Path(scratch) / "model.pt2"
        torch.export.save(program, str(program_path))
        export_s = time.perf_counter() - begin
        started = time.perf_counter()
        child = subprocess.run([sys.executable, "-c", CHILD, str(program_path), str(package_path),
                                "1" if headers else "0", wrapper_opt], capture_output=True, text=True, env=env,
                               timeout=400)
        child_wall_s = time.perf_counter() - started
        if child.returncode != 0:
            raise RuntimeError(child.stderr.strip().splitlines()[-1][:300])
        stages = json.loads(next(line[7:] for line in child.stdout.splitlines() if line.startswith("RESULT ")))
        begin = time.perf_counter()
        torch._inductor.aoti_load_package(str(package_path))
        load_s = time.perf_counter() - begin
    return {"precompiled_headers": headers, "wrapper_opt": wrapper_opt or "default",
            "export_s": export_s, "child_wall_s": child_wall_s,
            **stages, "load_s": load_s}


def chapter_steps() -> dict:
    """Chapter 07's other steps once each, in its order, with their seconds."""
    import torch

    from labkit.audit import export_audit
    from labkit.chapters.ch07_export_traps import export_traps, tables

    seconds: dict[str, float] = {}

    def timed(name: str, fn):  # noqa: ANN001, ANN202 -- a local stopwatch
        start = time.perf_counter()
        value = fn()
        seconds[name] = round(time.perf_counter() - start, 2)
        return value

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    frozen = timed("setup", lambda: tables.setup(device, device.type == "cuda"))
    model, example, onnx_path = frozen.model, frozen.example, frozen.onnx_path
    paths = tuple(p for p in export_audit.PATHS if p != "aoti")
    audit = timed("audit without AOTInductor", lambda: export_audit.run(
        model, example, paths=paths, workdir=onnx_path.parent))
    timed("speed", lambda: export_audit.speed(audit, example, model))
    timed("trap 1: dropped contiguous()", lambda: export_traps.dropped_contiguous(device=device))
    timed("trap 1: conv strides", lambda: export_traps.conv_output_strides(device=device))
    timed("trap 2: declared NCHW", lambda: export_traps.channels_last_declared_nchw(
        model, example, onnx_path=onnx_path))
    timed("trap 3: ONNX Runtime layouts", lambda: export_traps.ort_layout_preference(
        model, example, onnx_path=onnx_path))
    timed("TensorRT detection", lambda: tables.tensorrt(model, example, onnx_path))
    timed("ONNX Runtime placement", lambda: export_traps.ort_placement(model, example, onnx_path=onnx_path))
    timed("ONNX Runtime CPU fallback cost", lambda: export_traps.ort_cpu_fallback_cost(
        model, example, onnx_path=onnx_path))
    seconds["sum"] = round(sum(seconds.values()), 1)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/out")))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    record: dict = {}
    job_parts.part(record, "aoti, no precompiled headers", lambda: aoti_stages(False))
    job_parts.part(record, "aoti, precompiled headers", lambda: aoti_stages(True))
    job_parts.part(record, "aoti, no precompiled headers, wrapper at O0", lambda: aoti_stages(False, "O0"))
    job_parts.part(record, "chapter steps", chapter_steps)
    (args.out / "gpu_07_aoti.json").write_text(json.dumps(record, indent=1, default=str))
    return 0 if all(v.get("ok") for v in record.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
