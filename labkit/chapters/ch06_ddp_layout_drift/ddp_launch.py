"""Start a DDP run of `labkit.chapters.ch06_ddp_layout_drift.ddp_worker` in N processes from a notebook, and always get back
either its results or a clear error, never a frozen kernel.

    from labkit.chapters.ch06_ddp_layout_drift import ddp_launch
    result = ddp_launch.launch({"timed_steps": 10})      # plain data: dicts, lists, numbers

Each rank is a fresh `python -m labkit.chapters.ch06_ddp_layout_drift.ddp_worker` (not a fork of the notebook's kernel, whose
threads and CUDA context a fork would copy), joined through env:// exactly as `torchrun` joins
them: gloo on 127.0.0.1 with a free port on a CPU, NCCL with one process per GPU on a GPU
machine (NVLink multicast off: NCCL_NVLS_ENABLE=0 and friends).

Why so much care: a rank that raises leaves the others blocked inside a collective, and a
blocked collective never returns by itself. So the launcher watches every process: the first
one that fails ends the run (the others are killed) and its traceback becomes the error; a
run that passes its wall-clock limit is killed with a message saying where each rank was;
an interrupted cell (KeyboardInterrupt) or any other failure kills the whole process groups.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import torch

from labkit.chapters.ch06_ddp_layout_drift.ddp_worker import WorkerConfig

NO_MULTICAST_ENV = {  # NVLink multicast (NVLS) can take a shared host's GPUs out of service
    "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1",
}
POLL_S = 0.05
KILL_GRACE_S = 3.0


class DDPRunError(RuntimeError):
    """A rank failed; the message carries its traceback (the last lines) and its rank."""


class DDPTimeout(DDPRunError):
    """The run passed its wall-clock limit; the processes were killed."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def default_world_size() -> int:
    """One process per GPU with two or more GPUs; otherwise two (one rank is not DDP: on one
    GPU both ranks share it over gloo, on a CPU both run over gloo)."""
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return gpus if gpus >= 2 else 2


def backend_for(world_size: int) -> str:
    """NCCL when every rank has a GPU of its own (NCCL refuses two ranks on one GPU); gloo
    otherwise: with CUDA tensors on a machine with fewer GPUs than ranks, on the CPU without one."""
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return "nccl" if gpus >= world_size >= 2 else "gloo"


def describe(world_size: int) -> str:
    """Where the ranks run and how they talk, in words, for the chapter to print."""
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if backend_for(world_size) == "nccl":
        return f"{world_size} processes over NCCL, one per GPU"
    if gpus:
        return (f"{world_size} processes over gloo with CUDA tensors on {gpus} GPU(s) (the seed's "
                "NCCL needs a GPU per rank)")
    return f"{world_size} processes over gloo on this CPU (127.0.0.1)"


def rank_environment(rank: int, world: int, port: int, threads: int) -> dict[str, str]:
    """The variables torchrun would set for this rank, plus ours (threads, no multicast)."""
    env = dict(os.environ)
    repo_root = str(Path(__file__).resolve().parents[3])
    env.update({
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
        "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank), "LOCAL_WORLD_SIZE": str(world),
        "OMP_NUM_THREADS": str(threads), "PYTHONPATH": os.pathsep.join(
            p for p in (repo_root, env.get("PYTHONPATH", "")) if p),
        "PYTHONUNBUFFERED": "1", **NO_MULTICAST_ENV,
    })
    return env


def launch(config: dict | WorkerConfig | None = None, world_size: int | None = None, *,
           timeout_s: float = 300.0, threads_per_rank: int | None = None) -> dict:
    """Run the DDP variants in `world_size` processes and return rank 0's gathered results.

    config: WorkerConfig fields (checked before any process starts). timeout_s: the whole
    run's wall-clock limit; each collective also times out after config's
    collective_timeout_s inside the processes. Raises DDPRunError with the failing rank's
    traceback, or DDPTimeout; in every case no process is left behind.
    """
    fields = asdict(config) if isinstance(config, WorkerConfig) else dict(config or {})
    checked = WorkerConfig.from_dict(fields)  # refuse bad input here, with its message
    world = default_world_size() if world_size is None else world_size
    if not isinstance(world, int) or world < 1:
        raise ValueError(f"world_size must be a positive integer, got {world!r}")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0, got {timeout_s!r}")
    threads = threads_per_rank or max(1, (os.cpu_count() or 2) // world)
    with tempfile.TemporaryDirectory(prefix="labkit-ddp-") as workdir:
        config_path = Path(workdir, "config.json")
        config_path.write_text(json.dumps(asdict(checked)))
        port = free_port()
        procs: list[subprocess.Popen] = []
        logs = []
        try:
            for rank in range(world):
                log = open(Path(workdir, f"rank{rank}.log"), "w+")
                logs.append(log)
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "labkit.chapters.ch06_ddp_layout_drift.ddp_worker", "--config", str(config_path),
                     "--out", workdir],
                    env=rank_environment(rank, world, port, threads), stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True))
            _wait(procs, workdir, timeout_s)
        finally:
            _kill_all(procs)
            for log in logs:
                log.close()
        result = json.loads(Path(workdir, "result.json").read_text())
    result["launcher"] = {"world_size": world, "threads_per_rank": threads,
                          "children_peak_rss_bytes": children_peak_rss_bytes()}
    return result


def _wait(procs: list[subprocess.Popen], workdir: str, timeout_s: float) -> None:
    """Until all exit 0; the first failure or the deadline ends the run with a clear error."""
    deadline = time.monotonic() + timeout_s
    while True:
        codes = [p.poll() for p in procs]
        # A rank that finished its work and then died tearing gloo down has not failed the run.
        finished = [code == 0 or (code is not None and Path(workdir, f"done-rank{rank}").exists())
                    for rank, code in enumerate(codes)]
        failed = [rank for rank, code in enumerate(codes)
                  if code not in (None, 0) and not finished[rank]]
        if failed:
            raise DDPRunError(_failure_text(failed, codes, workdir))
        if all(finished):
            if not Path(workdir, "result.json").exists():
                raise DDPRunError("every rank exited cleanly but rank 0 wrote no result.json")
            return
        if time.monotonic() > deadline:
            running = [rank for rank, code in enumerate(codes) if code is None]
            raise DDPTimeout(
                f"the DDP run passed its {timeout_s:.0f} s limit with ranks {running} still running: "
                "a collective is probably waiting for a rank that never joins it. The processes "
                "were killed. Last output:\n" + _tails(workdir, running))
        time.sleep(POLL_S)


def _failure_text(failed: list[int], codes: list[int | None], workdir: str) -> str:
    rank = failed[0]
    error_file = Path(workdir, f"error-rank{rank}.txt")
    detail = error_file.read_text() if error_file.exists() else _tails(workdir, [rank])
    last = [line for line in detail.strip().splitlines() if line.strip()][-1:] or ["(no output)"]
    return (f"rank {rank} of {len(codes)} failed (exit code {codes[rank]}): {last[0]}\n"
            f"The other ranks were stopped. Its traceback:\n{_last_lines(detail, 25)}")


def _tails(workdir: str, ranks: list[int]) -> str:
    parts = []
    for rank in ranks:
        path = Path(workdir, f"rank{rank}.log")
        text = path.read_text(errors="replace") if path.exists() else ""
        parts.append(f"--- rank {rank} ---\n{_last_lines(text, 8) or '(no output)'}")
    return "\n".join(parts)


def _last_lines(text: str, count: int) -> str:
    return "\n".join(text.rstrip().splitlines()[-count:])


def _kill_all(procs: list[subprocess.Popen]) -> None:
    """SIGTERM each rank's process group, then SIGKILL what is left after a grace period."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = [p for p in procs if p.poll() is None]
        if not alive:
            return
        for p in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, sig)
        end = time.monotonic() + KILL_GRACE_S
        while time.monotonic() < end and any(p.poll() is None for p in alive):
            time.sleep(POLL_S)
    for p in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=KILL_GRACE_S)


def children_peak_rss_bytes() -> int:
    """The largest resident set of any child process this kernel has waited for (Linux: KiB)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def variant_summary(result: dict) -> list[dict]:
    """One flat row per variant from a launch result: what the chapter's tables show.

    Warnings and bucket traffic are rank 0's (every rank sees the same), counted on the observed
    steps ("steps"; "trained_steps" adds the timed ones); "identical" holds only if every
    rank's all_gather found the same parameters. Traffic "steady" is the last
    observed step, after DDP's bucket rebuild and any late conversion.
    """
    rows = []
    for index, first in enumerate(result["ranks"][0]):
        everyone = [rank_reports[index] for rank_reports in result["ranks"]]
        observed = first.get("observed", [])
        steady = observed[-1]["traffic"] if observed else {}
        timing = first.get("timing") or {}
        by_step = first["warnings_by_step"]
        error = first.get("error")
        rows.append({
            "name": first["variant"]["name"], "title": first["variant"]["title"],
            "error": f"{error['type']}: {error['message']}" if error else None,
            "steps": len(by_step), "trained_steps": first.get("trained_steps", len(by_step)),
            "warnings_step0": by_step[0] if by_step else 0,
            "warnings_after_step0": sum(by_step[1:]), "warnings_last_step": by_step[-1] if by_step else 0,
            "into_bucket_bytes": steady.get("into_bucket_bytes"),
            "back_to_grad_bytes": steady.get("back_to_grad_bytes"),
            "permuting_bytes": steady.get("permuting_bytes"),
            "permuting_copies": steady.get("permuting_copies"),  # None in a record made before it was counted
            "permuting_bytes_step0": observed[0]["traffic"]["permuting_bytes"] if observed else None,
            "separate_grad_bytes": observed[-1]["separate_grad_bytes"] if observed else None,
            "median_step_s": timing.get("median_s"), "iqr_step_s": timing.get("iqr_s"),
            "timing_noisy": timing.get("noisy"),
            # the clock bench read the step on, the host's launch per step and whether it was
            # launch-bound (None in a record made before they were carried: 2026-12-04m item 2)
            "step_clock": timing.get("clock"), "step_clock_text": timing.get("clock_text"),
            "host_s": timing.get("host_s"), "launch_bound": timing.get("launch_bound"),
            "round_medians_s": first.get("round_medians_s"),  # None: an older, sequential record
            "wrong_grads": sorted({name for r in everyone for o in r.get("observed", [])
                                   for name in o["wrong_grads"]}),
            "wrong_grad_steps": [o["step"] for o in observed if o["wrong_grads"]],
            "wrong_grad_diagnosis": sorted({why for o in observed for why in o["wrong_grads"].values()}),
            "params_identical": all(r["params_identical"] for r in everyone),
            "max_abs_diff_across_ranks": max(r["max_abs_diff_across_ranks"] for r in everyone),
            "peak_memory_bytes": first.get("peak_memory_bytes"),
            # the gradient check's margin: the largest finite relative error any rank saw on an
            # observed step, and the tolerance it was judged by (None in older records)
            "largest_grad_error": largest_grad_error(everyone),
            "grad_tolerance": first.get("grad_tolerance"),
            "hook_calls": first.get("hook_calls"),  # a per-parameter hook's calls (b3); None in older records
        })
    return rows


def largest_grad_error(reports: list[dict]) -> float | None:
    """The largest finite relative gradient error (||DDP's - reference|| / ||reference||) over every
    rank's observed steps; None when none was recorded (an older record, or a variant that raised
    before its first gradient). A GradScaler step with inf/nan gradients is left out: the worker
    says those apart as nonfinite_grads."""
    errors = [float(o["largest_grad_error"]) for r in reports for o in r.get("observed") or []
              if o.get("largest_grad_error") is not None and math.isfinite(float(o["largest_grad_error"]))]
    return max(errors) if errors else None
