"""Where the course runs, what this machine is, and the problem sizes that fit it.

Every chapter asks this module instead of guessing, so that the same notebook runs
on Binder's 2 GB CPU container, on a laptop, on Colab's GPU and on an H200.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import torch

GiB = 1024**3
MiB = 1024**2


def where() -> str:
    """Return 'colab', 'binder' or 'local': where this kernel was launched."""
    if "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ:
        return "colab"
    if "BINDER_SERVICE_HOST" in os.environ or "BINDER_REQUEST" in os.environ:
        return "binder"
    return "local"


def enable_colab_widgets() -> bool:
    """In Colab, turn on its custom widget manager, without which it draws no third-party
    widget (labkit's address grid, quizzes, timeline); elsewhere do nothing. True if turned on."""
    if where() != "colab":
        return False
    try:
        from google.colab import output  # type: ignore[import-not-found]
    except ImportError:  # COLAB_RELEASE_TAG set outside Colab's kernel: nothing to turn on
        return False
    output.enable_custom_widget_manager()
    return True


def has_cuda() -> bool:
    """True when a CUDA GPU is usable from this process."""
    return torch.cuda.is_available()


# The compute capability each GPU feature needs. TF32 and bfloat16 tensor cores arrived with
# Ampere (8.0), FP8 with Ada (8.9). A T4 (Colab's free GPU, 7.5) has none of them: there, a
# "TF32" timing would be float32's and a bfloat16 run would be emulated, so chapters ask first.
GPU_FEATURES = {"tf32": ((8, 0), "TF32 tensor cores"),
                "bf16": ((8, 0), "bfloat16 tensor cores"),
                "fp8": ((8, 9), "FP8 tensor cores")}


def gpu_lacks(feature: str, device: torch.device | int | str | None = None) -> str:
    """'' when the CUDA GPU (`device`, else the current one) has `feature`, else a one-line reason.

    Why: a timing labelled TF32 or bfloat16 on a GPU without those tensor cores measures
    something else (float32, or an emulation), so every such measurement checks here first.
    Features: 'tf32' and 'bf16' need compute capability 8.0, 'fp8' needs 8.9.
    """
    if feature not in GPU_FEATURES:
        raise ValueError(f"unknown GPU feature {feature!r}; known: {', '.join(GPU_FEATURES)}")
    (major, minor), what = GPU_FEATURES[feature]
    if not torch.cuda.is_available():
        return f"{what} need a CUDA GPU (compute capability {major}.{minor} or newer)"
    cap = tuple(torch.cuda.get_device_capability(device))
    if cap < (major, minor):
        return f"no {what} on this GPU (compute capability {cap[0]}.{cap[1]} < {major}.{minor})"
    return ""


def device() -> torch.device:
    """The device the course measures on: the first GPU if there is one, else the CPU."""
    return torch.device("cuda", 0) if has_cuda() else torch.device("cpu")


def memory_limit_bytes() -> int:
    """Usable host memory: the smaller of the machine's RAM and this container's cgroup limit.

    Binder advertises the host's RAM in /proc/meminfo but kills the kernel at its 2 GB
    cgroup limit, so sizes must come from the cgroup when there is one.
    LABKIT_MEMORY_LIMIT_BYTES lowers the limit further, to rehearse a Binder-sized machine.
    """
    limits = [_meminfo_total()]
    if os.environ.get("LABKIT_MEMORY_LIMIT_BYTES", "").isdigit():  # rehearse a smaller machine
        limits.append(int(os.environ["LABKIT_MEMORY_LIMIT_BYTES"]))
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:
            limits.append(int(text))
    return min(limits)


def _meminfo_total() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 * GiB  # a conservative guess where /proc is absent (macOS)


def cpu_model() -> str:
    """The CPU's marketing name, e.g. 'Intel(R) Xeon(R) ...'."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_driver_version() -> str:
    """The NVIDIA driver version from nvidia-smi, or 'unknown'."""
    if shutil.which("nvidia-smi") is None:
        return "unknown"
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.strip().splitlines()[0] if out.strip() else "unknown"


@lru_cache(maxsize=1)
def fingerprint() -> dict:
    """A description of this machine that identifies it in saved results and caches.

    Holds where it runs, Python and torch versions, CPU model and core counts, host
    memory, and for a GPU its name, memory, SM count, L2 size and driver.
    """
    info: dict = {
        "where": where(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpu_model": cpu_model(),
        "cpu_cores": os.cpu_count() or 1,
        "torch_threads": torch.get_num_threads(),
        "host_memory_gib": round(memory_limit_bytes() / GiB, 1),
        "device": "cuda" if has_cuda() else "cpu",
    }
    if has_cuda():
        props = torch.cuda.get_device_properties(0)
        info.update(
            gpu_name=props.name,
            gpu_memory_gib=round(props.total_memory / GiB, 1),
            gpu_sm_count=props.multi_processor_count,
            gpu_l2_mib=round(getattr(props, "L2_cache_size", 0) / MiB, 1),
            gpu_capability=f"{props.major}.{props.minor}",
            gpu_driver=gpu_driver_version(),
            cuda_runtime=torch.version.cuda,
        )
    return info


def cache_dir() -> Path:
    """Where labkit keeps what it measured on this machine (ceilings, results), never the repo.

    $LABKIT_CACHE_DIR, else $XDG_CACHE_HOME/labkit, else ~/.cache/labkit. It lives here,
    beside the machine's identity, so the harness and the ceilings both read it without
    importing each other.
    """
    if os.environ.get("LABKIT_CACHE_DIR"):
        return Path(os.environ["LABKIT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "labkit"


def device_key() -> str:
    """A short stable name for this device, used to cache its measured ceilings."""
    info = fingerprint()
    if info["device"] == "cuda":
        name = info["gpu_name"]
    else:
        name = f"{info['cpu_model']}-{info['torch_threads']}threads"
    return "".join(c if c.isalnum() else "_" for c in name).strip("_")


@dataclass(frozen=True)
class ProblemSizes:
    """Problem sizes chosen for this machine.

    copy_bytes: one buffer for bandwidth measurements, well past the last-level cache.
    matmul_n: side of the square matmul used for the compute ceiling.
    cache_sweep_max_bytes: the top of the working-set sweep that shows the cache levels.
    cnn_batch, cnn_image: batch and image side for convolution and ResNet-50 timings.
    memory_budget_bytes: what one experiment may allocate at most.
    """

    device: str
    copy_bytes: int
    matmul_n: int
    cache_sweep_max_bytes: int
    cnn_batch: int
    cnn_image: int
    memory_budget_bytes: int

    def as_dict(self) -> dict:
        """The sizes as a plain dict (for tables and saved results)."""
        return asdict(self)


SIZES_ENV = "LABKIT_SIZES"
SIZE_PROFILES = ("default", "ci")


def size_profile() -> str:
    """The size profile LABKIT_SIZES asks for: 'default' (unset or empty) or 'ci'.

    'ci' is the test suite's CPU profile (`make test` sets it): the same cells and claims at
    smaller problems, so that every chapter executes in a fraction of its time on a 2-core
    CI machine. It never applies to a GPU, whose reference runs keep their sizes.
    """
    profile = os.environ.get(SIZES_ENV, "").strip() or "default"
    if profile not in SIZE_PROFILES:
        raise ValueError(f"{SIZES_ENV}={profile!r} is not a size profile: use one of {SIZE_PROFILES} "
                         "(or leave it unset)")
    return profile


CI_TIMING_SCALE = 0.25  # the 'ci' profile's share of each timing's sampling budget


def _ci_on_a_cpu() -> bool:
    """The test suite's 'ci' profile on a machine without a GPU: where the harness samples
    less (timing_scale, timing_rounds, measure_attempts). A GPU's runs are references."""
    return size_profile() == "ci" and not has_cuda()


def timing_scale() -> float:
    """The factor by which the harness scales each timing's sampling budget (rep_ms, warmup_ms).

    1 everywhere but the test suite's 'ci' profile on a CPU, where it is CI_TIMING_SCALE: the
    suite checks that the chapters run and what they print as facts, not their timings, so
    it samples each timing for a quarter of the time (the rounds stay, so the interleaving
    and the spread are still measured). A GPU never scales: its runs are references.
    """
    return CI_TIMING_SCALE if _ci_on_a_cpu() else 1.0


CI_MAX_ROUNDS = 3  # the 'ci' profile's most interleaved rounds per comparison


def timing_rounds(rounds: int) -> int:
    """How many of the `rounds` a comparison asks for it takes: all of them everywhere but the
    test suite's 'ci' profile on a CPU, where it is at most CI_MAX_ROUNDS. Three rounds still
    interleave the variants and give each ratio a spread; the suite checks that the chapters
    run and what they print as facts, not their timings (see timing_scale). A GPU never
    caps: its runs are references."""
    return min(rounds, CI_MAX_ROUNDS) if _ci_on_a_cpu() else rounds


def measure_attempts() -> int:
    """How many times a chapter measures a comparison the harness flags (Chapter.measured).

    2 everywhere but the test suite's 'ci' profile on a CPU, where it is 1: the suite runs
    its workers on a shared 2-core machine, so its timings are flagged (noisy) by design, and
    a second measurement doubles their cost without making them worth trusting. The flags
    still go into each claim's evidence, and the trust rule still reads them.
    """
    return 1 if _ci_on_a_cpu() else 2


def sizes() -> ProblemSizes:
    """Pick problem sizes that fit this machine.

    On a GPU the sizes fill the chip; on a CPU they stay inside a quarter of the usable
    memory (Binder gives 2 GB) and keep every notebook within its time budget. LABKIT_SIZES=ci
    (size_profile) shrinks the CPU sizes for the test suite; on a GPU it is an error, so a
    reference run can never be recorded at test sizes by a variable left set.
    """
    profile = size_profile()
    if has_cuda():
        if profile != "default":
            raise ValueError(f"{SIZES_ENV}={profile!r} is the CPU test suite's profile; a GPU keeps "
                             f"its sizes (unset {SIZES_ENV})")
        gpu_memory = torch.cuda.get_device_properties(0).total_memory
        big = gpu_memory >= 40 * GiB
        return ProblemSizes(
            device="cuda",
            copy_bytes=1 * GiB if big else 256 * MiB,
            matmul_n=8192 if big else 4096,
            cache_sweep_max_bytes=1 * GiB if big else 256 * MiB,
            cnn_batch=64 if big else 32,
            cnn_image=224,
            memory_budget_bytes=gpu_memory // 4,
        )
    budget = memory_limit_bytes() // 4
    copy_bytes = max(16 * MiB, min(128 * MiB, budget // 6))
    if profile == "ci":  # the test suite's: every chapter's cells at a fraction of the work
        return ProblemSizes(
            device="cpu",
            copy_bytes=16 * MiB,
            matmul_n=512,
            cache_sweep_max_bytes=32 * MiB,
            cnn_batch=2,
            cnn_image=64,
            memory_budget_bytes=budget,
        )
    return ProblemSizes(
        device="cpu",
        copy_bytes=copy_bytes,
        matmul_n=1024,
        cache_sweep_max_bytes=min(256 * MiB, copy_bytes * 2),
        cnn_batch=2,
        cnn_image=112,
        memory_budget_bytes=budget,
    )
