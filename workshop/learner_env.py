"""A Python environment the learners' OS users can execute (system mode), made at the hub's start.

Why: in system mode every learner's server runs as their own unprivileged OS user, so the
interpreter and the packages must be readable and executable by a user who shares no group
with the hub. The checkout's `.venv` often is not: its interpreter is a symlink into the
Python that made it, and on the machines the tests run on that is a pyenv under `/root`
(mode 700). Each learner's server then failed to start (a 500, no message).

What it does, cheapest first (The Littlest JupyterHub keeps its users' environment under
/opt the same way):

1. the hub's own interpreter and packages are reachable by others: use them as they are;
2. else a small venv under /opt/tensor-layout-lab (root-owned, world-readable, read-only to
   learners) made by an OS Python of the same version (`/usr/bin/python3.X`), whose
   site-packages, share/jupyter and etc/jupyter point at the hub's (a symlink where the
   hub's are readable by others, hard links where only the interpreter is private and the
   files are on the same file system). Nothing is downloaded or copied: it takes about a
   second, and it follows later installs into `.venv`;
3. else the hub refuses to start and says which path learners cannot reach and the fix.

Every choice is checked by running the environment as `nobody` (importing what a learner's
server needs), so a result is measured, not assumed.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import pathlib
import pwd
import shutil
import stat
import subprocess
import sys
import sysconfig

DEFAULT_ROOT = pathlib.Path("/opt/tensor-layout-lab")
NEEDED = "import jupyterhub.singleuser, jupyter_server, ipykernel, jupyterlab, nbgitpuller, jupytext"
STAMP = ".workshop-env.json"
# JupyterLab's app, extensions and kernels, server extensions enabled, JupyterHub's templates
PARTS = ("share/jupyter", "etc/jupyter", "share/jupyterhub")


class LearnerEnvError(RuntimeError):
    """No environment learners can execute: the message names the path and the fix."""


def blocked_at(path: str | os.PathLike) -> str | None:
    """The first directory (or the file itself) that a user outside the owner's group cannot
    pass through, following symlinks; None when `path` is readable by everyone."""
    target = pathlib.Path(os.path.realpath(path))
    for part in [*reversed(target.parents), target]:
        try:
            mode = part.stat().st_mode
        except OSError:
            return str(part)
        need = stat.S_IXOTH if stat.S_ISDIR(mode) else stat.S_IROTH
        if part == target and stat.S_ISREG(mode) and os.access(part, os.X_OK):
            need |= stat.S_IXOTH
        if not mode & need:
            return str(part)
    return None


def run_as_nobody(python: str, code: str, timeout_s: float = 120) -> subprocess.CompletedProcess:
    """Run `python -c code` as the unprivileged `nobody` (no groups), as a learner would."""
    try:
        entry = pwd.getpwnam("nobody")
        uid, gid = entry.pw_uid, entry.pw_gid
    except KeyError:
        uid = gid = 65534
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
    return subprocess.run([python, "-c", code], user=uid, group=gid, extra_groups=[], env=env,
                          cwd="/", capture_output=True, text=True, timeout=timeout_s, check=False)


def _works(python: str) -> tuple[bool, str]:
    try:
        done = run_as_nobody(python, NEEDED)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"{type(exc).__name__}: {exc}"
    return done.returncode == 0, (done.stderr or done.stdout).strip()[-800:]


def _base_candidates() -> list[str]:
    """OS interpreters of the hub's own version (its packages' compiled parts match)."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    names = [os.path.realpath(getattr(sys, "_base_executable", sys.executable)),
             f"/usr/bin/python{version}", f"/usr/local/bin/python{version}",
             shutil.which(f"python{version}") or ""]
    seen: list[str] = []
    for name in names:
        if name and os.path.exists(name) and os.path.realpath(name) not in map(os.path.realpath, seen):
            seen.append(name)
    return seen


def _same_version(python: str) -> bool:
    done = run_as_nobody(python, "import sys; print(sys.version_info[0], sys.version_info[1])", 30)
    return done.returncode == 0 and done.stdout.split() == [str(v) for v in sys.version_info[:2]]


def _place(source: pathlib.Path, target: pathlib.Path, how: str) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if how == "link":
        target.symlink_to(source, target_is_directory=True)
    else:  # hard links: no bytes copied, readable through the new (world-readable) folders
        subprocess.run(["cp", "-al", str(source), str(target)], check=True)
        subprocess.run(["chmod", "-R", "o+rX", str(target)], check=True)


def ensure(root: pathlib.Path = DEFAULT_ROOT, prefix: str = sys.prefix) -> str:
    """The interpreter a learner's server runs with (building its environment if needed)."""
    site = pathlib.Path(sysconfig.get_paths()["purelib"])
    own = sys.executable
    if blocked_at(own) is None and blocked_at(site) is None:
        ok, why = _works(own)
        if ok:
            return own
    blocked = blocked_at(own) or blocked_at(site) or own
    bases = [b for b in _base_candidates() if blocked_at(b) is None and _same_version(b)]
    if not bases:
        raise LearnerEnvError(
            f"learners cannot execute the hub's Python ({own}: {blocked} is not readable by other "
            f"users) and no Python {sys.version_info[0]}.{sys.version_info[1]} outside a private "
            "folder was found for their environment. Fix: install the OS's python"
            f"{sys.version_info[0]}.{sys.version_info[1]} (apt install python3), or make .venv from "
            "a Python outside /root (e.g. /usr/bin/python3 -m venv .venv), or point "
            "WORKSHOP_LEARNER_PYTHON at an interpreter learners can run that has the workshop's "
            "packages.")
    how = "link" if blocked_at(site) is None else "hardlink"
    if how == "hardlink" and site.stat().st_dev != _existing_parent(root).stat().st_dev:
        raise LearnerEnvError(
            f"learners cannot read the hub's packages ({site}: {blocked_at(site)} is private) and "
            f"{root} is on another file system, so they cannot be linked there. Fix: move the "
            "checkout out of the private folder (or `chmod o+x` the folders above it), or set "
            "WORKSHOP_LEARNER_ROOT to a folder on the same file system.")
    key = hashlib.sha256(f"{os.path.realpath(prefix)}|{bases[0]}|{how}".encode()).hexdigest()[:10]
    target = root / f"learner-env-py{sys.version_info[0]}{sys.version_info[1]}-{key}"
    python = target / "bin" / "python"
    stamp = {"parts": list(PARTS), "base": bases[0], "prefix": os.path.realpath(prefix), "site": str(site), "how": how,
             "site_mtime": site.stat().st_mtime_ns}
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o755)
    with _locked(root / ".lock"):
        current = target / STAMP
        fresh = current.exists() and json.loads(current.read_text()) == stamp
        if not fresh:
            _build(target, bases[0], pathlib.Path(prefix), site, how, stamp)
            # Import once as root, writing byte code the learners (who cannot write it) reuse:
            # otherwise every learner's server compiles the Jupyter stack from source again.
            subprocess.run([str(python), "-c", NEEDED], capture_output=True, check=False,
                           env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"}, timeout=300)
    ok, why = _works(str(python))
    if not ok:
        raise LearnerEnvError(f"the learners' environment {target} does not run as an "
                              f"unprivileged user: {why}. Fix: remove {target} and start the hub "
                              "again, or set WORKSHOP_LEARNER_PYTHON.")
    return str(python)


def _existing_parent(path: pathlib.Path) -> pathlib.Path:
    while not path.exists():
        path = path.parent
    return path


@contextlib.contextmanager
def _locked(path: pathlib.Path):  # noqa: ANN202 - a context manager
    with open(path, "a") as handle:   # two hubs starting at once build it once
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(target: pathlib.Path, base: str, prefix: pathlib.Path, site: pathlib.Path, how: str,
           stamp: dict) -> None:
    building = target.with_name(target.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    subprocess.run([base, "-m", "venv", "--without-pip", "--symlinks", str(building)], check=True,
                   capture_output=True)
    ours = pathlib.Path(sysconfig.get_paths(vars={"base": str(building),
                                                  "platbase": str(building)})["purelib"])
    _place(site, ours, how)
    for part in PARTS:
        if (prefix / part).exists():
            _place(prefix / part, building / part, how)
    (building / STAMP).write_text(json.dumps(stamp, indent=1))
    subprocess.run(["chmod", "-R", "go-w", str(building)], check=True)
    os.chmod(building, 0o755)
    shutil.rmtree(target, ignore_errors=True)
    building.rename(target)
