"""The workshop's pieces of JupyterHub: who may sign in, and how each learner's server starts.

Sign-in (`WorkshopAuthenticator`): the room shares one workshop code (WORKSHOP_PASSWORD, set
by the instructor when the hub starts, never stored in the repository). The first time a name
signs in it needs that code and picks its own password ("first use"); from then on the name
and that password are enough, and the code alone does not open someone else's name. Passwords
(the instructor's too) are kept as salted scrypt hashes, computed in a thread so that a burst
of sign-ins does not stall the hub's event loop; they are compared as bytes, so any Unicode is
a plain refusal. Five failures for one name from one address within a minute lock that pair
out for a wait that doubles each time (NativeAuthenticator's lockout, made to grow), logged
for the instructor; twenty for one name from all addresses lock the name out everywhere (an
address is only what the client claims on the hub's internal port). Signing out ends the session on the hub: the user's cookie id is renewed,
so a copied cookie is refused afterwards.

Servers: in the room's mode (`WorkshopSystemSpawner`, system mode) each learner's server and
kernels run as their own OS user, `<prefix><name>` (`jupyter-ana`), made when their server
first starts: home mode 700, no login shell, no group but their own. In the rehearsal mode
(`WorkshopSpawner`, shared mode: loopback, never root) every server runs as the hub's user in
<data>/homes/<name>. Both give each learner their own copy of the course in ~/course.
See README.md "Isolation" for what each mode guarantees.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import hmac
import json
import os
import pathlib
import pwd
import re
import secrets
import shutil
import subprocess
import time
import urllib.parse

from jupyterhub.auth import Authenticator
from jupyterhub.handlers.login import LogoutHandler
from jupyterhub.spawner import LocalProcessSpawner, SimpleLocalProcessSpawner, set_user_setuid
from tornado import web
from traitlets import Bool, Dict, Float, Int, List, Unicode

REPO = pathlib.Path(__file__).resolve().parent.parent
COURSE_FILES = ("notebooks", "labkit", "jupytext.toml", "pyproject.toml", "README.md")
NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,31}$"   # also a safe directory name and a system user name
MIN_PASSWORD = 6
RESERVED_NAMES = frozenset({"root", "admin", "administrator", "hub", "jupyterhub", "nobody",
                            "user", "users", "api", "login", "logout", "instructor-api"})
LEARNER_MARK = "tensor-layout-lab workshop learner"   # the GECOS field of the OS users we make
OS_NAME_MAX = 32


def hash_password(password: str, salt: bytes | None = None) -> str:
    """'salt$hash' (hex) with scrypt: a stolen accounts file does not give the passwords."""
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8", "surrogatepass"), salt=salt,
                            n=2**14, r=8, p=1)
    return f"{salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str) -> bool:
    """Bytes compared in constant time: a non-ASCII password is a refusal, never an error."""
    salt, _, digest = stored.partition("$")
    try:
        mine = hash_password(password, bytes.fromhex(salt)).split("$")[1]
    except (ValueError, UnicodeError):
        return False
    return hmac.compare_digest(mine.encode(), digest.encode())


def same_secret(given: str, expected: str) -> bool:
    """The workshop code check: bytes, constant time, any text (hmac refuses non-ASCII str)."""
    enc = "utf-8"
    return bool(expected) and hmac.compare_digest(given.encode(enc, "surrogatepass"),
                                                  expected.encode(enc, "surrogatepass"))


class Lockout:
    """Failed sign-ins per (name, address): `limit` within `window_s` locks the pair out for
    `wait_s`, doubled at each further lock-out up to `max_wait_s`."""

    def __init__(self, limit: int = 5, window_s: float = 60, wait_s: float = 60,
                 max_wait_s: float = 600) -> None:
        self.limit, self.window_s, self.wait_s, self.max_wait_s = limit, window_s, wait_s, max_wait_s
        self.failures: dict[tuple[str, str], collections.deque] = {}
        self.locked_until: dict[tuple[str, str], float] = {}
        self.lockouts: collections.Counter = collections.Counter()

    def wait_left(self, key: tuple[str, str], now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        return max(0.0, self.locked_until.get(key, 0.0) - now)

    def failed(self, key: tuple[str, str], now: float | None = None) -> float:
        """Record a failure; the seconds of a lock-out it starts (0: none)."""
        now = time.monotonic() if now is None else now
        recent = self.failures.setdefault(key, collections.deque())
        recent.append(now)
        while recent and recent[0] < now - self.window_s:
            recent.popleft()
        if len(recent) < self.limit:
            return 0.0
        recent.clear()
        wait = min(self.max_wait_s, self.wait_s * 2 ** self.lockouts[key])
        self.lockouts[key] += 1
        self.locked_until[key] = now + wait
        return wait

    def succeeded(self, key: tuple[str, str]) -> None:
        self.failures.pop(key, None)
        self.lockouts.pop(key, None)


class WorkshopLogoutHandler(LogoutHandler):
    """Sign-out that ends the session on the hub: the user's cookie id is renewed, so every
    copy of the old hub cookie is refused from now on (JupyterHub only clears the browser's)."""

    async def handle_logout(self) -> None:
        user = self.current_user
        if user is not None and getattr(user, "orm_user", None) is not None:
            user.orm_user.cookie_id = secrets.token_hex(16)
            self.db.commit()
            self.log.info("signed out %s: their hub cookies are void", user.name)


class WorkshopAuthenticator(Authenticator):
    """A shared workshop code for a name's first sign-in, then that learner's own password."""

    workshop_code = Unicode("", config=True, help="The room's code (from WORKSHOP_PASSWORD).")
    admin_password_hash = Unicode("", config=True,
                                  help="The admin's password as hash_password() stores it.")
    accounts_file = Unicode("", config=True, help="Where first-use passwords are kept (hashed).")
    system_users = Bool(False, config=True, help="System mode: existing OS accounts are reserved.")
    user_prefix = Unicode("jupyter-", config=True, help="OS user name = prefix + hub name.")
    lockout_limit = Int(5, config=True, help="Failed sign-ins (name + address) before a lock-out.")
    lockout_window_s = Float(60, config=True, help="... counted within this many seconds.")
    lockout_wait_s = Float(60, config=True, help="First lock-out; each further one doubles it.")
    lockout_max_wait_s = Float(600, config=True, help="The longest lock-out.")
    lockout_name_limit = Int(20, config=True, help=(
        "Failed sign-ins for a name from all addresses together before it locks out everywhere "
        "(a kernel can claim any address on the hub's internal port)."))
    reserved_names = List(sorted(RESERVED_NAMES), config=True, help="Names nobody may take.")

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.lockout = Lockout(self.lockout_limit, self.lockout_window_s, self.lockout_wait_s,
                               self.lockout_max_wait_s)
        self.name_lockout = Lockout(self.lockout_name_limit, self.lockout_window_s,
                                    self.lockout_wait_s, self.lockout_max_wait_s)
        self._accounts_lock = asyncio.Lock()

    def get_handlers(self, app: object) -> list:
        return [*super().get_handlers(app), ("/logout", WorkshopLogoutHandler)]

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

    def reserved(self, name: str) -> str | None:
        """Why `name` may not be taken by a learner, or None."""
        if name in self.reserved_names:
            return "a reserved name"
        if self.system_users:
            if len(self.user_prefix + name) > OS_NAME_MAX:
                return f"too long for an OS user name with the prefix {self.user_prefix!r}"
            try:
                pwd.getpwnam(name)
                return "an existing OS account"
            except KeyError:
                pass
        return None

    async def authenticate(self, handler, data):  # noqa: ANN001, ANN201 - jupyterhub's signature
        name = self.normalize_username(str(data.get("username", "")))
        address = handler.request.remote_ip if handler is not None else ""
        key, everywhere = (name, address), (name, "*")
        wait = max(self.lockout.wait_left(key), self.name_lockout.wait_left(everywhere))
        if wait:
            self.log.warning("refused sign-in of %r from %s: locked out for %.0f s more",
                             name, address, wait)
            raise web.HTTPError(429, f"Too many failed sign-ins for this name from your address: "
                                     f"try again in {wait:.0f} s.")
        outcome = await self._check(name, str(data.get("password", "")),
                                    str(data.get("workshop_code", "")))
        if outcome is None:
            for lockout, pair, where in ((self.lockout, key, address),
                                         (self.name_lockout, everywhere, "all addresses")):
                locked = lockout.failed(pair)
                if locked:
                    self.log.warning("LOCK-OUT: %d failed sign-ins for %r from %s within %.0f s; "
                                     "locked for %.0f s", lockout.limit, name, where,
                                     lockout.window_s, locked)
        else:
            self.lockout.succeeded(key)
        return outcome

    async def _check(self, name: str, password: str, code: str) -> str | None:
        if not re.match(NAME_PATTERN, name):
            self.log.warning("refused sign-in: %r is not a workshop name (%s)", name, NAME_PATTERN)
            return None
        if name in self.admin_users:
            ok = bool(self.admin_password_hash) and await asyncio.to_thread(
                check_password, password, self.admin_password_hash)
            return name if ok else None
        why = self.reserved(name)
        if why:
            self.log.warning("refused sign-in of %r: %s", name, why)
            return None
        accounts = self._accounts()
        if name in accounts:
            ok = await asyncio.to_thread(check_password, password, accounts[name])
            return name if ok else None
        if not same_secret(code, self.workshop_code):
            self.log.warning("refused first sign-in of %r: wrong or missing workshop code", name)
            return None
        if len(password) < MIN_PASSWORD:
            self.log.warning("refused first sign-in of %r: password under %d characters",
                             name, MIN_PASSWORD)
            return None
        hashed = await asyncio.to_thread(hash_password, password)
        async with self._accounts_lock:
            accounts = self._accounts()
            if name in accounts:               # taken by a sign-in that finished meanwhile
                return None
            accounts[name] = hashed
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


_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", ".labkit_cache")


def _copy_course_into(folder: pathlib.Path, source: pathlib.Path) -> None:
    folder.mkdir(parents=True)
    for name in COURSE_FILES:
        item = source / name
        if item.is_dir():
            shutil.copytree(item, folder / name, ignore=_IGNORE)
        elif item.exists():
            shutil.copy2(item, folder / name)


def copy_course(home: pathlib.Path, source: pathlib.Path = REPO) -> None:
    """Give a learner their own copy of the course, once: their edits are never overwritten."""
    target = home / "course"
    if target.exists():
        return
    home.mkdir(parents=True, exist_ok=True)
    staging = home / ".course-copying"
    shutil.rmtree(staging, ignore_errors=True)
    _copy_course_into(staging, source)
    staging.rename(target)


class CourseSpawner(LocalProcessSpawner):
    """What both spawners share: the course copy, the learner-side settings, the env."""

    course_source = Unicode(str(REPO), config=True, help="The course copied into a new home.")
    extra_env = Dict(config=True, help="Environment for every learner's server.")
    guard_dir = Unicode("", config=True,
                        help="Folder with workshop_guard.py, first on the learner's PYTHONPATH.")

    def _course_env(self, env: dict, home: str) -> dict:
        env.update(self.extra_env)
        # labkit is imported from the learner's own copy, so a learner's edit stays theirs; the
        # guard extension comes first, from a folder the learner cannot write.
        env["PYTHONPATH"] = os.pathsep.join(p for p in (self.guard_dir, str(pathlib.Path(home) / "course")) if p)
        # LocalProcessSpawner does not enforce mem_limit/cpu_limit; it passes them on as
        # MEM_LIMIT/CPU_LIMIT (jupyter-resource-usage shows them). See README "Limits".
        return env


class WorkshopSpawner(CourseSpawner, SimpleLocalProcessSpawner):
    """Shared mode (a rehearsal): each server a process of the hub's own OS user, never root,
    in its own home under the workshop's data dir. It never adds --allow-root."""

    def get_args(self):  # noqa: ANN201 - jupyterhub's signature
        return [*super().get_args(), f"--ServerApp.root_dir={self.home_dir}"]

    async def start(self):  # noqa: ANN201
        if os.geteuid() == 0:
            raise web.HTTPError(500, "shared mode never runs learners as root; "
                                     "start the hub with WORKSHOP_SYSTEM_USERS=1")
        if self.course_source:
            copy_course(pathlib.Path(self.home_dir), pathlib.Path(self.course_source))
        else:
            pathlib.Path(self.home_dir).mkdir(parents=True, exist_ok=True)
        return await super().start()

    def user_env(self, env):  # noqa: ANN001, ANN201
        return self._course_env(super().user_env(env), self.home_dir)


_USERADD_LOCK: asyncio.Lock | None = None


def os_user_name(prefix: str, name: str) -> str:
    return f"{prefix}{name}"


def ensure_os_user(os_name: str, home_base: str) -> pwd.struct_passwd:
    """The learner's OS user, made if missing: own group only, no login shell, home 700.

    An account of that name that this workshop did not make (another GECOS) is refused."""
    try:
        entry = pwd.getpwnam(os_name)
    except KeyError:
        home = os.path.join(home_base, os_name)
        subprocess.run(["useradd", "--create-home", "--home-dir", home, "--shell",
                        "/usr/sbin/nologin", "--user-group", "--comment", LEARNER_MARK, os_name],
                       check=True, capture_output=True, text=True)
        entry = pwd.getpwnam(os_name)
    if entry.pw_gecos != LEARNER_MARK:
        raise web.HTTPError(409, f"the OS account {os_name!r} exists and was not made by this "
                                 "workshop; pick another name or another WORKSHOP_USER_PREFIX")
    os.chown(entry.pw_dir, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
    os.chmod(entry.pw_dir, 0o700)
    # The learner's TMPDIR: a shared /tmp lets one learner squat another's predictable paths
    # (torch's /tmp/torchinductor_<user> cache holds code the owner's kernel loads).
    private_tmp = os.path.join(entry.pw_dir, ".tmp")
    with contextlib.suppress(FileExistsError):     # made once; afterwards it is theirs
        os.mkdir(private_tmp, 0o700)
        os.chown(private_tmp, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
    return entry


def give_course(entry: pwd.struct_passwd, source: pathlib.Path) -> None:
    """Copy the course into the learner's home without root ever writing through a path the
    learner controls: copied into a root-only folder beside the homes, handed over, renamed in."""
    home = pathlib.Path(entry.pw_dir)
    if (home / "course").exists() or (home / "course").is_symlink():
        return
    staging_root = home.parent / ".workshop-staging"
    staging_root.mkdir(mode=0o700, exist_ok=True)
    os.chmod(staging_root, 0o700)
    staging = staging_root / entry.pw_name
    shutil.rmtree(staging, ignore_errors=True)
    _copy_course_into(staging, source)
    for path in [staging, *staging.rglob("*")]:
        os.chown(path, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
    os.rename(staging, home / "course")


class WorkshopSystemSpawner(CourseSpawner):
    """System mode (hub as root): each learner's server and kernels run as `<prefix><name>`.

    The OS user is made when the server first starts (so the instructor gets one only if they
    start a server); the environment is one learners can execute (learner_env.py)."""

    user_prefix = Unicode("jupyter-", config=True, help="OS user name = prefix + hub name.")
    home_base = Unicode("/home", config=True, help="Where the learners' homes are made.")
    learner_path = Unicode("/usr/local/bin:/usr/bin:/bin", config=True,
                           help="PATH of a learner's server (the learner env's bin first).")

    @property
    def os_name(self) -> str:
        return os_user_name(self.user_prefix, self.user.name)

    async def start(self):  # noqa: ANN201
        global _USERADD_LOCK
        _USERADD_LOCK = _USERADD_LOCK or asyncio.Lock()
        async with _USERADD_LOCK:   # useradd locks /etc/passwd: one at a time
            entry = await asyncio.to_thread(ensure_os_user, self.os_name, self.home_base)
        if self.course_source:
            await asyncio.to_thread(give_course, entry, pathlib.Path(self.course_source))
        self.log.info("starting %s's server as OS user %s (uid %d)", self.user.name,
                      entry.pw_name, entry.pw_uid)
        return await super().start()

    def get_args(self):  # noqa: ANN201
        return [*super().get_args(), f"--ServerApp.root_dir={pwd.getpwnam(self.os_name).pw_dir}"]

    def make_preexec_fn(self, name):  # noqa: ANN001, ANN201 - the hub name maps to the OS name
        return set_user_setuid(self.os_name)

    def user_env(self, env):  # noqa: ANN001, ANN201
        entry = pwd.getpwnam(self.os_name)
        env.update({"USER": entry.pw_name, "LOGNAME": entry.pw_name, "HOME": entry.pw_dir,
                    "SHELL": "/bin/bash", "PATH": self.learner_path,
                    "TMPDIR": os.path.join(entry.pw_dir, ".tmp")})
        for leak in ("VIRTUAL_ENV", "LD_LIBRARY_PATH", "CONDA_DEFAULT_ENV", "CONDA_ROOT"):
            env.pop(leak, None)
        return self._course_env(env, entry.pw_dir)


def is_loopback(ip: str) -> bool:
    """Whether the hub listening on `ip` is reachable from this machine only."""
    import ipaddress

    if ip in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False      # "" (every address), a host name: beyond loopback


def learner_config_dir(data: pathlib.Path, system_users: bool, learner_root: pathlib.Path
                       ) -> pathlib.Path:
    """Where a hub writes the settings every learner's server reads: beside its private data
    in shared mode; in system mode under the learners' (world-readable) root, one per data dir."""
    if not system_users:
        return data / "jupyter_config"
    key = hashlib.sha256(str(pathlib.Path(data).resolve()).encode()).hexdigest()[:12]
    return learner_root / "rooms" / key
