"""Install torch the way this machine needs it: the CPU build where there is no NVIDIA GPU.

Why: a plain `pip install torch==X` resolves, on the public package index, to the CUDA build
(about 20 CUDA packages, several GB) even on a laptop without a GPU. PyTorch publishes CPU
builds on its own wheel index; on a machine without an NVIDIA GPU we ask that index first
and fall back to the default index when it cannot be reached (a mirror, a wheel cache, a
machine with no route to it). A GPU user keeps the default (CUDA) build, or sets TORCH_SPEC
or TORCH_INDEX. uv installs it where uv can be had, pip otherwise (scripts/pip_install.py).
The script says what it chose and how big the installed torch is.

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
from pip_install import install, install_command  # noqa: E402 - a script beside this one

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
REACH_TIMEOUT_S = 5.0


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
    return [], (f"no NVIDIA GPU, but {cpu_index} cannot be reached: the default index "
                "(here a configured mirror or wheel cache)")


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
    print(f"torch: {why}")
    if args.dry_run:
        print("torch: " + " ".join(install_command(args.python, [*index_args, args.spec], dry_run=True)))
        return 0
    returncode = install(args.python, [*index_args, args.spec])
    if returncode != 0 and index_args and not os.environ.get("TORCH_INDEX"):
        print(f"torch: the CPU index failed (exit {returncode}); trying the default index")
        returncode = install(args.python, [args.spec])
    if returncode == 0:
        print("torch: installed " + installed_size(args.python))
    return returncode


if __name__ == "__main__":
    sys.exit(main())
