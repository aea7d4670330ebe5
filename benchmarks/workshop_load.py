"""A workshop under load: N learners sign in, pull the course and run a chapter, at once.

Starts the real workshop hub (workshop/jupyterhub_config.py, on free loopback ports, a fresh
data dir) in the room's mode: system mode, one OS user per learner, when run as root (OS users
named `tllbench-<name>`, removed at the end); the shared rehearsal mode otherwise (the JSON
says which). The course is served to nbgitpuller by `git daemon` on loopback, from a bare
clone of this repository's current commit (the one repository the hub lets links pull; the
hub refuses file:// links). Then for each of N simulated learners, in parallel threads:

1. signs in through the login form (first use: the workshop code), starts their server;
2. pulls the course with nbgitpuller (its /git-pull/api, as the workshop link does) into
   ~/pulled;
3. opens the chapter as a notebook through the contents API (jupytext turns the .py into
   cells) and runs every code cell, top to bottom, in a kernel started for that notebook,
   over the kernel's websocket; a cell that ends in an error is a failed cell.

While they work, a probe asks the hub's API (/hub/api/users/<name>, a learner's token)
every PROBE_S seconds: its p50 / p95 are the hub's response time under load, reported for the
whole run and for the sign-in phase (until the last server is up). A sampler reads the
resident memory (RSS, shared pages counted in each process) of each learner's server and its
kernels (psutil, the process tree) and keeps the peak. Afterwards it waits for the idle
kernels to be culled and reads the memory again: culling returned it when no kernel process
is left and the learner's memory is back near the bare server's.

Everything it made goes when it ends, pass or fail: the data dir (accounts, database, cookie
secret, proxy token), the hub's log, the git daemon's folder, the OS users and their homes.

    python benchmarks/workshop_load.py [--learners 4] [--chapter 01_strides_and_views]
                                       [--cull-s 20] [--burst]
                                       [--json results/workshop/load-<host>.json]

--burst first measures the hub's answer time while 8 learners sign in for the first time at
once (three rounds; scrypt each), against its answer time alone.

Exit status 1 if a cell failed, a learner could not run, or culling did not free the kernels.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator

import psutil

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "workshop"))
from hubclient import Hub, Learner, execute, free_port, remove_os_users, wait_for  # noqa: E402

PROBE_S = 0.5
SAMPLE_S = 0.5
MIB = 2**20
USER_PREFIX = "tllbench-"


@contextlib.contextmanager
def served_course(workdir: pathlib.Path, branch: str) -> Iterator[str]:
    """git://127.0.0.1:<port>/course.git: this repository's current commit, by `git daemon`."""
    bare = workdir / "course.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--depth", "1", "--branch", branch,
                    f"file://{ROOT}", str(bare)], check=True)
    port = free_port()
    daemon = subprocess.Popen(["git", "daemon", "--reuseaddr", "--export-all",
                               "--listen=127.0.0.1", f"--port={port}", f"--base-path={workdir}",
                               str(workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def answers() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0
        wait_for(f"git daemon on 127.0.0.1:{port}", answers, 20, 0.1)
        yield f"git://127.0.0.1:{port}/course.git"
    finally:
        daemon.terminate()
        daemon.wait(10)


def learner_tree(config_dir: pathlib.Path, name: str) -> list[psutil.Process]:
    """The learner's server process and its descendants (kernels), found by their env."""
    config = str(config_dir)
    for proc in psutil.process_iter(["environ", "cmdline"]):
        env = proc.info.get("environ") or {}
        cmd = " ".join(proc.info.get("cmdline") or [])
        if (env.get("JUPYTERHUB_USER") == name and env.get("JUPYTER_CONFIG_PATH") == config
                and ("jupyterhub-singleuser" in cmd or "jupyterhub.singleuser" in cmd)):
            try:
                return [proc, *proc.children(recursive=True)]
            except psutil.NoSuchProcess:
                return []
    return []


def rss_mib(procs: list[psutil.Process]) -> float:
    total = 0
    for proc in procs:
        try:
            total += proc.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total / MIB


class Sampler(threading.Thread):
    """Peak resident memory per learner (server + kernels) while the run lasts."""

    def __init__(self, config_dir: pathlib.Path, names: list[str]) -> None:
        super().__init__(daemon=True)
        self.config_dir, self.names = config_dir, names
        self.peak = dict.fromkeys(names, 0.0)
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            for name in self.names:
                self.peak[name] = max(self.peak[name], rss_mib(learner_tree(self.config_dir, name)))
            self.stopped.wait(SAMPLE_S)


class Probe(threading.Thread):
    """The hub's response time while the learners work: one API call every PROBE_S."""

    def __init__(self, learner: Learner) -> None:
        super().__init__(daemon=True)
        self.learner = learner
        self.times: list[float] = []
        self.at: list[float] = []          # when each probe was sent (perf_counter)
        self.errors = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            start = time.perf_counter()
            try:
                ok = self.learner.request("GET", f"/hub/api/users/{self.learner.name}").ok
            except Exception:  # noqa: BLE001 - an unanswered probe counts as an error
                ok = False
            self.times.append(time.perf_counter() - start)
            self.at.append(start)
            self.errors += not ok
            self.stopped.wait(PROBE_S)


def run_learner(hub: Hub, name: str, chapter: str, repo: str, branch: str, report: dict) -> None:
    """One learner's session, start to finish; fills report[name]."""
    mine = report[name] = {"failed_cells": [], "cells": 0, "error": None}
    try:
        start = time.perf_counter()
        learner = hub.sign_in(name, f"{name}-password")
        learner.start_server(timeout_s=300)
        mine["server_start_s"] = time.perf_counter() - start
        mine["server_ready_at"] = time.perf_counter()
        start = time.perf_counter()
        learner.pull_course(repo, branch, "pulled", timeout_s=300)
        mine["pull_s"] = time.perf_counter() - start
        path = f"pulled/notebooks/{chapter}.py"
        model = learner.request("GET", learner.server(f"api/contents/{path}"),
                                params={"type": "notebook", "content": 1})
        model.raise_for_status()
        cells = [c for c in model.json()["content"]["cells"] if c["cell_type"] == "code"]
        kernel = learner.new_kernel(path)
        start = time.perf_counter()
        with learner.channels(kernel) as ws:
            for index, cell in enumerate(cells):
                result = execute(ws, cell["source"], 600, f"{name}'s cell {index} of {chapter}")
                mine["cells"] += 1
                if result.status != "ok":
                    mine["failed_cells"].append({"cell": index, "error": result.error})
        mine["run_s"] = time.perf_counter() - start
        mine["kernel"] = kernel
        mine["learner"] = learner
        mine["request_times"] = list(learner.timings)
    except Exception as exc:  # noqa: BLE001 - reported, and the run fails
        mine["error"] = f"{type(exc).__name__}: {exc}"
        mine["traceback"] = traceback.format_exc()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def sign_in_burst(hub: Hub, probe_user: Learner, rounds: int = 3, size: int = 8) -> dict:
    """Issue 42's finding 6: `size` first sign-ins at once (scrypt each) while a probe asks the
    hub's API; the probe's p50 alone, then during each burst. scrypt on the hub's event loop
    made every request wait behind it."""
    def probe_once() -> float:
        start = time.perf_counter()
        probe_user.request("GET", f"/hub/api/users/{probe_user.name}")
        return time.perf_counter() - start

    alone = []
    for _ in range(40):
        alone.append(probe_once())
        time.sleep(0.02)
    during: list[float] = []
    for burst in range(rounds):
        stop = threading.Event()

        def probing(stop: threading.Event = stop) -> None:
            while not stop.is_set():
                during.append(probe_once())

        prober = threading.Thread(target=probing)
        prober.start()
        signers = [threading.Thread(target=hub.sign_in, args=(f"burst{burst}x{i}", "burst-password"))
                   for i in range(size)]
        for t in signers:
            t.start()
        for t in signers:
            t.join()
        stop.set()
        prober.join()
    return {"sign_ins_at_once": size, "rounds": rounds, "probe_ms_alone": ms_summary(alone),
            "probe_ms_during_bursts": ms_summary(during)}


def ms_summary(values: list[float]) -> dict | None:
    if not values:
        return None
    return {"p50": 1e3 * statistics.median(values), "p95": 1e3 * percentile(values, 95),
            "count": len(values)}


def measure(args: argparse.Namespace, workdir: pathlib.Path, names: list[str], branch: str
            ) -> tuple[dict, bool]:
    """One run: the hub, the learners, the probe and the sampler; the summary and its verdict."""
    report: dict = {}
    system = os.geteuid() == 0
    with served_course(workdir, branch) as repo, Hub.start(
            workdir / "data", cull_kernel_s=args.cull_s, timeout_s=300, system_users=system,
            user_prefix=USER_PREFIX, extra_env={"WORKSHOP_PULL_REPOS": repo}) as hub:
        hub_start_s = time.perf_counter() - args.started
        probe_user = hub.sign_in("probe", "probe-password")
        burst = sign_in_burst(hub, probe_user) if args.burst else None
        probe, sampler = Probe(probe_user), Sampler(hub.config_dir, names)
        probe.start()
        sampler.start()
        started = time.perf_counter()
        threads = [threading.Thread(target=run_learner, args=(hub, n, args.chapter, repo,
                                                              branch, report)) for n in names]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=1800)
        wall_s = time.perf_counter() - started
        probe.stopped.set()
        sampler.stopped.set()
        probe.join(5)
        sampler.join(5)
        before_cull = {n: rss_mib(learner_tree(hub.config_dir, n)) for n in names}
        kernels_left: dict[str, int] = {}
        start = time.perf_counter()
        for name in names:
            learner = report[name].get("learner")
            if learner is None:
                continue
            try:
                wait_for(f"{name}'s idle kernels to be culled (after {args.cull_s} s idle)",
                         lambda lr=learner: not lr.kernels(), timeout_s=args.cull_s * 6 + 60,
                         every_s=1, log=hub.log_tail)
            except TimeoutError as exc:
                print(exc, file=sys.stderr)
            kernels_left[name] = len(learner.kernels())
        culled_after_s = time.perf_counter() - start
        time.sleep(2)  # the kernel processes exit after the server forgets them
        after_cull = {n: rss_mib(learner_tree(hub.config_dir, n)) for n in names}
        processes_after = {n: len(learner_tree(hub.config_dir, n)) for n in names}
        mode = "system (one OS user per learner)" if hub.system_users else "shared (rehearsal)"
    ready = [report[n]["server_ready_at"] for n in names if "server_ready_at" in report[n]]
    signing_in = [dt for at, dt in zip(probe.at, probe.times, strict=False)
                  if ready and at <= max(ready)]
    request_times = [t for n in names for t in report[n].get("request_times", [])]
    failed = {n: report[n]["failed_cells"] for n in names if report[n]["failed_cells"]}
    errors = {n: report[n]["error"] for n in names if report[n]["error"]}
    starts = [v for n in names if (v := report[n].get("server_start_s")) is not None]
    peaks = list(sampler.peak.values())
    summary = {
        "machine": platform.node(), "cpus": psutil.cpu_count(),
        "memory_gib": psutil.virtual_memory().total / 2**30, "mode": mode,
        "nice": os.nice(0), "load_average_1min_at_end": os.getloadavg()[0],
        "learners": args.learners, "chapter": args.chapter,
        "hub_start_s": hub_start_s, "wall_s": wall_s, "sign_in_burst": burst,
        "cells_run": {n: report[n]["cells"] for n in names},
        "failed_cells": failed, "failed_cell_count": sum(map(len, failed.values())),
        "learner_errors": errors,
        "hub_probe_ms": {**(ms_summary(probe.times) or {}), "errors": probe.errors},
        "hub_probe_ms_while_signing_in": ms_summary(signing_in),
        "learner_requests_ms": ms_summary(request_times),
        "server_start_s": {n: report[n].get("server_start_s") for n in names},
        "server_start_s_summary": ({"min": min(starts), "p50": statistics.median(starts),
                                    "max": max(starts)} if starts else None),
        "pull_s": {n: report[n].get("pull_s") for n in names},
        "chapter_run_s": {n: report[n].get("run_s") for n in names},
        "peak_mib": sampler.peak, "before_cull_mib": before_cull, "after_cull_mib": after_cull,
        "peak_mib_summary": {"min": min(peaks), "p50": statistics.median(peaks),
                             "max": max(peaks), "sum": sum(peaks)},
        "after_cull_mib_sum": sum(after_cull.values()),
        "returned_mib": {n: sampler.peak[n] - after_cull[n] for n in names},
        "kernels_left_after_cull": kernels_left, "processes_after_cull": processes_after,
        "cull_wait_s": culled_after_s,
    }
    culled = bool(kernels_left) and all(v == 0 for v in kernels_left.values()) and all(
        v <= 1 for v in processes_after.values())
    summary["culling_returned_memory"] = culled
    for n in names:
        if report[n].get("traceback"):
            print(report[n]["traceback"], file=sys.stderr)
    return summary, not failed and not errors and culled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=4)
    parser.add_argument("--chapter", default="01_strides_and_views")
    parser.add_argument("--cull-s", type=int, default=20, help="idle kernels culled after this")
    parser.add_argument("--burst", action="store_true",
                        help="first time 3 bursts of 8 sign-ins at once against the hub's p50")
    parser.add_argument("--json", type=pathlib.Path,
                        default=ROOT / "results" / "workshop" / f"load-{platform.node()}.json")
    args = parser.parse_args()
    if args.learners < 1:
        parser.error("--learners must be at least 1")
    if not (ROOT / "notebooks" / f"{args.chapter}.py").exists():
        parser.error(f"no chapter notebooks/{args.chapter}.py")
    branch = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.strip()
    names = [f"learner{i + 1}" for i in range(args.learners)]
    args.started = time.perf_counter()
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="workshop-load-"))
    try:
        summary, ok = measure(args, workdir, names, branch)
    finally:   # no account, secret, home or OS user outlives the run
        shutil.rmtree(workdir, ignore_errors=True)
        removed = remove_os_users(USER_PREFIX)
        if os.geteuid() == 0:
            import workshop_hub

            shutil.rmtree(workshop_hub.learner_config_dir(
                workdir / "data", True, pathlib.Path(os.environ.get(
                    "WORKSHOP_LEARNER_ROOT", "/opt/tensor-layout-lab"))), ignore_errors=True)
        print(f"removed {workdir} and {len(removed)} OS users ({USER_PREFIX}*)"
              f"{'' if not workdir.exists() else ' (the folder is still there!)'}")
    summary["ok"] = ok
    summary["left_behind"] = {"data_dir": workdir.exists(), "os_users": [
        e.pw_name for e in __import__("pwd").getpwall() if e.pw_name.startswith(USER_PREFIX)]}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"{args.learners} learners ({summary['mode']}) ran {args.chapter} in "
          f"{summary['wall_s']:.0f} s: {sum(summary['cells_run'].values())} cells, "
          f"{summary['failed_cell_count']} failed, {len(summary['learner_errors'])} learner errors")
    probe = summary["hub_probe_ms"]
    print(f"hub API p50 {probe.get('p50', float('nan')):.0f} ms, p95 {probe.get('p95', float('nan')):.0f}"
          f" ms ({probe.get('count', 0)} probes, {probe['errors']} errors)")
    for n in names:
        print(f"  {n}: server up in {summary['server_start_s'][n] or float('nan'):.0f} s, peak "
              f"{summary['peak_mib'][n]:.0f} MiB, after the run {summary['before_cull_mib'][n]:.0f}"
              f" MiB, after culling {summary['after_cull_mib'][n]:.0f} MiB (kernels left "
              f"{summary['kernels_left_after_cull'].get(n)})")
    if summary["sign_in_burst"]:
        b = summary["sign_in_burst"]
        print(f"hub API p50 alone {b['probe_ms_alone']['p50']:.0f} ms, during bursts of "
              f"{b['sign_ins_at_once']} sign-ins {b['probe_ms_during_bursts']['p50']:.0f} ms")
    print(f"culling returned the memory: {summary['culling_returned_memory']}; written to {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
