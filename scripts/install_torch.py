"""Install torch the way this machine needs it: the CPU build where there is no NVIDIA GPU.

Why: a plain `pip install torch==X` resolves, on the public package index, to the CUDA build
(about 20 CUDA packages, several GB) even on a laptop without a GPU. PyTorch publishes CPU
builds on its own wheel index; on a machine without an NVIDIA GPU we ask that index first
and fall back to the default index when it cannot be reached (a mirror, a wheel cache, a
machine with no route to it). A GPU user keeps the default (CUDA) build, or sets TORCH_SPEC
or TORCH_INDEX. uv installs it where uv can be had, pip otherwise (scripts/pip_install.py).
The script says what it chose and how big the installed torch is.

When the CPU index cannot be reached on a machine without a GPU, the default index's torch is
on Linux the CUDA build: a learner saw `.venv` reach 5.3 GB where 1.7 GB was expected, under a
message that did not say so. Before downloading, the script asks uv what the default index
would install (a dry run: names and versions, nothing downloaded) and says which build is
coming: the CUDA build, about 4 GB more, with how to get the CPU build instead, or the CPU
build that a configured mirror or wheel folder holds.

    python scripts/install_torch.py --python .venv/bin/python --spec "torch==2.13.0"
    python scripts/install_torch.py ... --dry-run      # print the choice and the command only
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pip_install  # noqa: E402 - a script beside this one
from pip_install import install, install_command  # noqa: E402

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
REACH_TIMEOUT_S = 5.0
DRY_RUN_TIMEOUT_S = 120
# What the CUDA build adds, measured: `.venv` 5.3 GB with it, 1.7 GB with the CPU build (a fresh
# clone, issue 43); the nvidia-* and cuda-* packages are most of it.
CUDA_EXTRA = "about 4 GB more to download and on disk than the CPU build"


def has_nvidia_gpu() -> bool:
    """An NVIDIA driver that answers: nvidia-smi lists a GPU, or the kernel module is loaded."""
    if Path("/proc/driver/nvidia/gpus").is_dir() and any(Path("/proc/driver/nvidia/gpus").iterdir()):
        return True
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return listed.returncode == 0 and "GPU" in listed.stdout


def reachable(index_url: str, timeout_s: float = REACH_TIMEOUT_S) -> bool:
    """Whether the index answers at all within the timeout (any HTTP status counts)."""
    try:
        with urllib.request.urlopen(index_url.rstrip("/") + "/torch/", timeout=timeout_s):
            return True
    except urllib.error.HTTPError:
        return True  # it answered; pip will say what it lacks
    except (urllib.error.URLError, OSError, ValueError):
        return False


def choose(gpu: bool, cpu_index: str, explicit_index: str | None) -> tuple[list[str], str]:
    """The pip arguments that select the index, and a sentence saying why."""
    if explicit_index:
        return ["--index-url", explicit_index], f"TORCH_INDEX={explicit_index} (as asked)"
    if gpu:
        return [], "an NVIDIA GPU answered: the default index (its CUDA build of torch)"
    if reachable(cpu_index):
        return ["--index-url", cpu_index], f"no NVIDIA GPU: PyTorch's CPU wheel index ({cpu_index})"
    return [], f"no NVIDIA GPU, but {cpu_index} cannot be reached: the default index"


def build_from_packages(lines: list[str]) -> str | None:
    """'cuda' or 'cpu' from the packages a dry run would install ('+ torch==2.13.0+cpu',
    '+ nvidia-cublas==13.1'), None when torch is not among them."""
    names = [line.strip().lstrip("+").strip().lower() for line in lines
             if line.strip().startswith("+ ")]
    torch = [n for n in names if n.startswith("torch==")]
    if not torch:
        return None
    if any(n.startswith(("nvidia-", "cuda-")) for n in names) or "+cu" in torch[0]:
        return "cuda"
    return "cpu"


def default_build(python: str, spec: str, dry_run: bool = False) -> tuple[str | None, int]:
    """Which build of torch the default index would install, and how many CUDA packages come
    with it: uv's dry run with pip's settings (nothing is downloaded). (None, 0) where uv
    cannot say (not installed, no answer, INSTALLER=pip). A dry run of the set-up installs
    no uv for this."""
    if pip_install.chosen_installer() == "pip":
        return None, 0
    uv = pip_install.uv_beside(python) if dry_run else pip_install.ensure_uv(python)
    if uv is None or not uv.exists():
        return None, 0
    settings = pip_install.pip_settings(python)
    links = [a for link in settings.get("find-links", "").split() for a in ("--find-links", link)]
    try:
        done = subprocess.run([str(uv), "pip", "install", "--dry-run", "--python", python, *links,
                               spec], capture_output=True, text=True, timeout=DRY_RUN_TIMEOUT_S,
                              env=pip_install.uv_environment(settings))
    except (OSError, subprocess.TimeoutExpired):
        return None, 0
    lines = (done.stdout + done.stderr).splitlines()
    cuda = sum(line.strip().startswith(("+ nvidia-", "+ cuda-")) for line in lines)
    return (build_from_packages(lines) if done.returncode == 0 else None), cuda


def warning(build: str | None, cuda_packages: int, cpu_index: str) -> str:
    """What the learner is told before the default index's torch is downloaded."""
    avoid = (f"to get the CPU build instead, stop now (Ctrl-C) and give an index that has it: "
             f"TORCH_INDEX=<a reachable copy of {cpu_index}> make lab, or a folder holding a "
             "torch ...+cpu wheel in pip's find-links (PIP_FIND_LINKS=<folder>)")
    if build == "cpu":
        return "the default index has torch's CPU build (a configured mirror or wheel folder)"
    if build == "cuda":
        return (f"the default index gives torch's CUDA build ({cuda_packages} CUDA packages, "
                f"{CUDA_EXTRA}); it installs now; {avoid}")
    return (f"on Linux the default index's torch is usually the CUDA build ({CUDA_EXTRA}); "
            f"it installs now; {avoid}")


def installed_size(python: str) -> str:
    """'torch 2.13.0+cpu, CPU build, 812 MiB on disk', read from the installed files. torch is
    not imported (5 s of the set-up, its byte code not yet compiled): its version.py is read."""
    code = ("import importlib.util, pathlib; p = pathlib.Path(importlib.util.find_spec('torch').origin).parent; "
            "v = {}; exec((p / 'version.py').read_text(), v); "
            "n = sum(f.stat().st_size for f in p.rglob('*') if f.is_file()); "
            "build = f\"CUDA {v['cuda']} build\" if v['cuda'] else 'CPU build'; "
            "print(f\"torch {v['__version__']}, {build}, {n / 2**20:.0f} MiB on disk\")")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    return out.stdout.strip() if out.returncode == 0 else "torch, which was not found after installing"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the environment's python")
    parser.add_argument("--spec", default=os.environ.get("TORCH_SPEC", "torch"))
    parser.add_argument("--gpu", choices=("auto", "yes", "no"), default="auto",
                        help="whether this machine has an NVIDIA GPU (default: ask the driver)")
    parser.add_argument("--cpu-index", default=os.environ.get("TORCH_CPU_INDEX", CPU_INDEX))
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    gpu = has_nvidia_gpu() if args.gpu == "auto" else args.gpu == "yes"
    index_args, why = choose(gpu, args.cpu_index, os.environ.get("TORCH_INDEX"))
    print(f"torch: {why}", flush=True)
    if not gpu and not index_args:
        print("torch: " + warning(*default_build(args.python, args.spec, args.dry_run),
                                  args.cpu_index),
              flush=True)
    if args.dry_run:
        print("torch: " + " ".join(install_command(args.python, [*index_args, args.spec], dry_run=True)))
        return 0
    returncode = install(args.python, [*index_args, args.spec])
    if returncode != 0 and index_args and not os.environ.get("TORCH_INDEX"):
        print(f"torch: the CPU index failed (exit {returncode}); trying the default index")
        print("torch: " + warning(*default_build(args.python, args.spec), args.cpu_index),
              flush=True)
        returncode = install(args.python, [args.spec])
    if returncode == 0:
        print("torch: installed " + installed_size(args.python))
    return returncode


if __name__ == "__main__":
    sys.exit(main())
