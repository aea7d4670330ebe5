"""The workshop's pieces of JupyterHub: who may sign in, and how each learner's server starts.

Sign-in (`WorkshopAuthenticator`): the room shares one workshop code (WORKSHOP_PASSWORD, set
by the instructor when the hub starts, never stored in the repository). The first time a name
signs in it needs that code and picks its own password ("first use"); from then on the name
and that password are enough, and the code alone does not open someone else's name. So a
learner who knows the room's code still cannot sign in as a neighbour. Passwords are kept as
salted scrypt hashes in the data dir. The admin (WORKSHOP_ADMIN, default "instructor") signs
in with WORKSHOP_ADMIN_PASSWORD.

Servers (`WorkshopSpawner`): each learner's Jupyter server is its own process with its own
home, <data>/homes/<name>, holding that learner's copy of the course (copied from the
repository on first start, or pulled by nbgitpuller). The server's root dir is that home, so
the contents API, the file browser and the kernels' working directory see only it; the hub's
access control (JupyterHub scopes) refuses one learner's token and cookie on another
learner's /user/<name>/ URLs. See README.md "Isolation" for what this does not cover and
WORKSHOP_SYSTEM_USERS for OS-level isolation.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import pathlib
import re
import secrets
import shutil
import urllib.parse

from jupyterhub.auth import Authenticator
from jupyterhub.spawner import LocalProcessSpawner, SimpleLocalProcessSpawner
from traitlets import Dict, Unicode

REPO = pathlib.Path(__file__).resolve().parent.parent
COURSE_FILES = ("notebooks", "labkit", "jupytext.toml", "pyproject.toml", "README.md")
NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,31}$"   # also a safe directory name and a system user name
MIN_PASSWORD = 6


def hash_password(password: str, salt: bytes | None = None) -> str:
    """'salt$hash' (hex) with scrypt: a stolen accounts file does not give the passwords."""
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
    return f"{salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str) -> bool:
    salt, _, digest = stored.partition("$")
    return hmac.compare_digest(hash_password(password, bytes.fromhex(salt)).split("$")[1], digest)


class WorkshopAuthenticator(Authenticator):
    """A shared workshop code for a name's first sign-in, then that learner's own password."""

    workshop_code = Unicode("", config=True, help="The room's code (from WORKSHOP_PASSWORD).")
    admin_password = Unicode("", config=True, help="The admin's password (WORKSHOP_ADMIN_PASSWORD).")
    accounts_file = Unicode("", config=True, help="Where first-use passwords are kept (hashed).")

    def _accounts(self) -> dict:
        path = pathlib.Path(self.accounts_file)
        return json.loads(path.read_text()) if path.exists() else {}

    def _save(self, accounts: dict) -> None:
        path = pathlib.Path(self.accounts_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(accounts, indent=1))
        os.chmod(tmp, 0o600)
        tmp.replace(path)

    async def authenticate(self, handler, data):  # noqa: ANN001, ANN201 - jupyterhub's signature
        name = self.normalize_username(data.get("username", ""))
        password = data.get("password", "")
        if not re.match(NAME_PATTERN, name):
            self.log.warning("refused sign-in: %r is not a workshop name (%s)", name, NAME_PATTERN)
            return None
        if name in self.admin_users:
            ok = bool(self.admin_password) and hmac.compare_digest(password, self.admin_password)
            return name if ok else None
        accounts = self._accounts()
        if name in accounts:
            return name if check_password(password, accounts[name]) else None
        code = data.get("workshop_code", "")
        if not self.workshop_code or not hmac.compare_digest(code, self.workshop_code):
            self.log.warning("refused first sign-in of %r: wrong or missing workshop code", name)
            return None
        if len(password) < MIN_PASSWORD:
            self.log.warning("refused first sign-in of %r: password under %d characters",
                             name, MIN_PASSWORD)
            return None
        accounts[name] = hash_password(password)
        self._save(accounts)
        self.log.info("first sign-in of %r: account created", name)
        return name


def pull_link(hub_url: str, repo: str, branch: str = "main", target: str = "course",
              chapter: str = "00_setup_check.py") -> str:
    """The nbgitpuller link a learner clicks: it clones (first time) or merges (later) the
    course into ~/<target> of their own server, keeping their edits, then opens `chapter`."""
    query = urllib.parse.urlencode({"repo": repo, "branch": branch, "targetpath": target,
                                    "urlpath": f"lab/tree/{target}/notebooks/{chapter}"})
    return f"{hub_url.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def copy_course(home: pathlib.Path, source: pathlib.Path = REPO) -> None:
    """Give a learner their own copy of the course, once: their edits are never overwritten."""
    target = home / "course"
    if target.exists():
        return
    home.mkdir(parents=True, exist_ok=True)
    staging = home / ".course-copying"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", ".labkit_cache")
    for name in COURSE_FILES:
        item = source / name
        if item.is_dir():
            shutil.copytree(item, staging / name, ignore=ignore)
        elif item.exists():
            shutil.copy2(item, staging / name)
    staging.rename(target)


class CourseSpawner(LocalProcessSpawner):
    """What both spawners share: the learner's home, the course copy, limits, the env."""

    course_source = Unicode(str(REPO), config=True, help="The course copied into a new home.")
    extra_env = Dict(config=True, help="Environment for every learner's server.")

    def _prepare(self, home: pathlib.Path) -> None:
        if self.course_source:     # "": the course comes by the nbgitpuller link instead
            copy_course(home, pathlib.Path(self.course_source))
        else:
            home.mkdir(parents=True, exist_ok=True)

    def _course_env(self, env: dict, home: str) -> dict:
        env.update(self.extra_env)
        # labkit is imported from the learner's own copy, so a learner's edit stays theirs.
        env["PYTHONPATH"] = str(pathlib.Path(home) / "course")
        # LocalProcessSpawner does not enforce mem_limit/cpu_limit; it passes them on as
        # MEM_LIMIT/CPU_LIMIT (jupyter-resource-usage shows them). See README "Limits".
        return env


class WorkshopSpawner(CourseSpawner, SimpleLocalProcessSpawner):
    """Each learner's server: its own process, its own home under the workshop's data dir."""

    def get_args(self):  # noqa: ANN201 - jupyterhub's signature
        # All learners' servers run as the hub's OS user here; Jupyter refuses root unless told.
        root = ["--allow-root"] if os.geteuid() == 0 else []
        return [*super().get_args(), f"--ServerApp.root_dir={self.home_dir}", *root]

    async def start(self):  # noqa: ANN201
        self._prepare(pathlib.Path(self.home_dir))
        return await super().start()

    def user_env(self, env):  # noqa: ANN001, ANN201
        return self._course_env(super().user_env(env), self.home_dir)


class WorkshopSystemSpawner(CourseSpawner, LocalProcessSpawner):
    """WORKSHOP_SYSTEM_USERS=1 (hub as root): each learner's server runs as their own OS user.

    The hub creates the user on first sign-in (LocalAuthenticator.create_system_users); the
    kernels then cannot read another learner's home at the OS level either.
    """

    async def start(self):  # noqa: ANN201
        import pwd

        entry = pwd.getpwnam(self.user.name)
        home = pathlib.Path(entry.pw_dir)
        self._prepare(home)
        for path in [home, *home.rglob("*")]:
            os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
        os.chmod(home, 0o700)
        return await super().start()

    def user_env(self, env):  # noqa: ANN001, ANN201
        env = super().user_env(env)
        return self._course_env(env, env["HOME"])


def system_authenticator() -> type:
    """The authenticator for WORKSHOP_SYSTEM_USERS=1: the same sign-in, creating OS users."""
    from jupyterhub.auth import LocalAuthenticator

    class WorkshopSystemAuthenticator(WorkshopAuthenticator, LocalAuthenticator):
        pass

    return WorkshopSystemAuthenticator
