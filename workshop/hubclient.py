"""Drive a workshop hub as learners do, through its HTTP API: the tests and the load benchmark.

    with Hub.start(data_dir, cull_kernel_s=10) as hub:
        alice = hub.sign_in("alice", "alice-pw")          # first use: the workshop code too
        alice.start_server()
        print(alice.run_cell("print(6 * 7)"))              # a kernel in alice's own server

Every wait is bounded and, when it runs out, raises WaitTimeout naming what it waited for
(and the hub's log tail), so a stuck hub fails a test in seconds instead of hanging it.
Stopping the hub stops its proxy and every learner's server (and their kernels) it started.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import requests
import requests.adapters

HERE = pathlib.Path(__file__).resolve().parent
CONFIG = HERE / "jupyterhub_config.py"
REQUEST_TIMEOUT_S = 30


class WaitTimeout(TimeoutError):
    """A bounded wait ran out; the message names what it was waiting for."""


class SignInRefused(PermissionError):
    """The hub did not sign this name in; `status` is its HTTP answer (403: the form again,
    429: locked out)."""

    def __init__(self, name: str, status: int) -> None:
        super().__init__(f"sign-in of {name!r} refused ({status})")
        self.status = status


class SourceAddressAdapter(requests.adapters.HTTPAdapter):
    """Connections from a chosen local address: a second client machine, on loopback."""

    def __init__(self, source: str) -> None:
        self.source = source
        super().__init__()

    def init_poolmanager(self, *args: object, **kwargs: object) -> None:
        kwargs["source_address"] = (self.source, 0)
        super().init_poolmanager(*args, **kwargs)


def wait_for(what: str, check: Callable[[], object], timeout_s: float, every_s: float = 0.25,
             log: Callable[[], str] | None = None) -> object:
    """Call check() until it returns something truthy; WaitTimeout names `what` otherwise."""
    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except (requests.RequestException, OSError, KeyError, ValueError) as exc:
            last_error = exc
        time.sleep(every_s)
    tail = f"\n--- hub log (tail) ---\n{log()}" if log else ""
    raise WaitTimeout(f"gave up after {timeout_s:.0f} s waiting for {what}"
                      f"{f' (last error: {last_error})' if last_error else ''}{tail}")


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` distinct free loopback ports, all held open until every one is chosen: asked
    one after another, the kernel may hand the same just-freed port out twice (a CI run saw the
    hub fail with 'Address already in use' on its own proxy's port)."""
    with contextlib.ExitStack() as held:
        ports = []
        for _ in range(count):
            s = held.enter_context(socket.socket())
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
        return ports


@dataclass
class Learner:
    """One signed-in user: their browser-like session (cookies) and an API token."""

    hub: Hub
    name: str
    session: requests.Session
    token: str
    timings: list[float] = field(default_factory=list)   # seconds per hub/server request

    def request(self, method: str, path: str, token: str | None = None, **kwargs: object
                ) -> requests.Response:
        """A request to the hub or to /user/<...>/ with this learner's (or another) token."""
        headers = {"Authorization": f"token {token or self.token}"}
        start = time.perf_counter()
        response = requests.request(method, self.hub.url + path, headers=headers,
                                    timeout=REQUEST_TIMEOUT_S, allow_redirects=False, **kwargs)
        self.timings.append(time.perf_counter() - start)
        return response

    def server(self, path: str, owner: str | None = None) -> str:
        return f"/user/{owner or self.name}/{path.lstrip('/')}"

    def start_server(self, timeout_s: float = 120) -> None:
        response = self.request("POST", f"/hub/api/users/{self.name}/server")
        if response.status_code not in (201, 202, 400):  # 400: already running
            raise RuntimeError(f"starting {self.name}'s server: {response.status_code} {response.text}")
        wait_for(f"{self.name}'s server to be ready", self._ready, timeout_s, 0.5, self.hub.log_tail)

    def _ready(self) -> bool:
        model = self.request("GET", f"/hub/api/users/{self.name}").json()
        server = model.get("servers", {}).get("")
        if server and server.get("ready"):
            return self.request("GET", self.server("api/status")).status_code == 200
        return False

    def stop_server(self, timeout_s: float = 60) -> None:
        self.request("DELETE", f"/hub/api/users/{self.name}/server")
        wait_for(f"{self.name}'s server to stop", lambda: not self.request(
            "GET", f"/hub/api/users/{self.name}").json().get("servers"), timeout_s, 0.5,
            self.hub.log_tail)

    def new_kernel(self, path: str = "scratch.ipynb") -> str:
        """A kernel in this learner's server, started as a notebook session at `path`."""
        body = {"path": path, "type": "notebook", "name": path, "kernel": {"name": "python3"}}
        response = self.request("POST", self.server("api/sessions"), json=body)
        response.raise_for_status()
        return response.json()["kernel"]["id"]

    def run_cell(self, code: str, kernel_id: str | None = None, timeout_s: float = 120
                 ) -> ExecutionResult:
        kernel_id = kernel_id or self.new_kernel()
        with self.channels(kernel_id) as ws:
            return execute(ws, code, timeout_s, f"{self.name}'s cell to finish")

    @contextlib.contextmanager
    def channels(self, kernel_id: str, owner: str | None = None) -> Iterator[object]:
        import websocket

        url = self.hub.url.replace("http", "ws", 1) + self.server(
            f"api/kernels/{kernel_id}/channels", owner)
        ws = websocket.create_connection(url, header=[f"Authorization: token {self.token}"],
                                         timeout=REQUEST_TIMEOUT_S)
        try:
            yield ws
        finally:
            ws.close()

    def kernels(self) -> list[dict]:
        response = self.request("GET", self.server("api/kernels"))
        response.raise_for_status()
        return response.json()

    def pull_course(self, repo: str, branch: str, target: str, timeout_s: float = 180) -> None:
        """nbgitpuller's API, as the workshop link triggers it: clone or update `target`."""
        params = {"repo": repo, "branch": branch, "targetpath": target}
        start = time.perf_counter()
        response = requests.get(self.hub.url + self.server("git-pull/api"), params=params,
                                headers={"Authorization": f"token {self.token}"},
                                stream=True, timeout=timeout_s)
        phase = None
        for line in response.iter_lines(decode_unicode=True):
            if line and line.startswith("data:"):
                event = json.loads(line[5:])
                phase = event.get("phase", phase)
                if phase == "error":
                    raise RuntimeError(f"nbgitpuller failed for {self.name}: {event}")
                if phase == "finished":
                    break
            if time.perf_counter() - start > timeout_s:
                raise WaitTimeout(f"gave up after {timeout_s} s waiting for {self.name}'s pull")
        self.timings.append(time.perf_counter() - start)
        if phase != "finished":
            raise RuntimeError(f"nbgitpuller ended without finishing for {self.name} ({phase})")


@dataclass
class ExecutionResult:
    status: str
    stdout: str
    error: str


def execute(ws: object, code: str, timeout_s: float, what: str) -> ExecutionResult:
    """Send one execute_request on a kernel's channels and collect its output and status."""
    msg_id = uuid.uuid4().hex
    ws.send(json.dumps({
        "header": {"msg_id": msg_id, "username": "", "session": uuid.uuid4().hex,
                   "msg_type": "execute_request", "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell",
        "content": {"code": code, "silent": False, "store_history": True,
                    "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
    stdout, error, status, idle = [], "", None, False
    deadline = time.monotonic() + timeout_s
    while status is None or not idle:
        if time.monotonic() > deadline:
            raise WaitTimeout(f"gave up after {timeout_s:.0f} s waiting for {what}")
        ws.settimeout(max(0.1, deadline - time.monotonic()))
        msg = json.loads(ws.recv())
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "stream":
            stdout.append(msg["content"]["text"])
        elif kind == "error":
            error = f"{msg['content']['ename']}: {msg['content']['evalue']}"
        elif kind == "execute_reply":
            status = msg["content"]["status"]
        elif kind == "status" and msg["content"]["execution_state"] == "idle":
            idle = True
    return ExecutionResult(status, "".join(stdout), error)


class Hub:
    """A real JupyterHub (workshop/jupyterhub_config.py) on loopback, on free ports."""

    def __init__(self, data_dir: pathlib.Path, env: dict[str, str], process: subprocess.Popen,
                 url: str, log_path: pathlib.Path) -> None:
        self.data_dir, self.env, self.process, self.url = data_dir, env, process, url
        self.log_path = log_path
        self.code = env["WORKSHOP_PASSWORD"]
        self.admin = env["WORKSHOP_ADMIN"]
        self.admin_password = env["WORKSHOP_ADMIN_PASSWORD"]

    @classmethod
    @contextlib.contextmanager
    def start(cls, data_dir: pathlib.Path, cull_kernel_s: int = 60, timeout_s: float = 90,
              extra_env: dict[str, str] | None = None, system_users: bool | None = None,
              user_prefix: str | None = None) -> Iterator[Hub]:
        """Start a hub; system_users None: the mode the machine allows (root: system mode,
        with OS users named user_prefix + name; otherwise the shared rehearsal mode)."""
        data_dir = pathlib.Path(data_dir).resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
        system_users = os.geteuid() == 0 if system_users is None else system_users
        port, hub_port, proxy_api_port = free_ports(3)
        env = dict(os.environ)
        env.update({
            "WORKSHOP_PASSWORD": secrets.token_urlsafe(12),       # made here, never stored
            "WORKSHOP_ADMIN": "instructor",
            "WORKSHOP_ADMIN_PASSWORD": secrets.token_urlsafe(12),
            "WORKSHOP_DATA": str(data_dir), "WORKSHOP_IP": "127.0.0.1",
            "WORKSHOP_PORT": str(port), "WORKSHOP_HUB_PORT": str(hub_port),
            "WORKSHOP_PROXY_API_PORT": str(proxy_api_port),
            "WORKSHOP_CULL_KERNEL_S": str(cull_kernel_s),
            "WORKSHOP_SYSTEM_USERS": "1" if system_users else "0",
        })
        if user_prefix is not None:
            env["WORKSHOP_USER_PREFIX"] = user_prefix
        env.update(extra_env or {})
        log_path = data_dir.parent / f"{data_dir.name}-hub.log"   # beside the data, not in it
        hub_bin = pathlib.Path(sys.executable).parent / "jupyterhub"
        # .venv/bin/jupyterhub, as `make workshop` starts it; `python -m jupyterhub` from an
        # environment without the script (the learners' one, running the tests unprivileged).
        command = [str(hub_bin)] if os.access(hub_bin, os.X_OK) else [sys.executable, "-m", "jupyterhub"]
        with open(log_path, "w") as log:
            process = subprocess.Popen([*command, "-f", str(CONFIG)], cwd=data_dir, env=env,
                                       stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        hub = cls(data_dir, env, process, f"http://127.0.0.1:{port}", log_path)
        try:
            wait_for("the hub to answer on /hub/api", hub._answers, timeout_s, 0.5, hub.log_tail)
            yield hub
        finally:
            hub.stop()

    @property
    def system_users(self) -> bool:
        return self.env["WORKSHOP_SYSTEM_USERS"] == "1"

    @property
    def user_prefix(self) -> str:
        return self.env.get("WORKSHOP_USER_PREFIX", "jupyter-")

    @property
    def config_dir(self) -> pathlib.Path:
        """The settings folder every learner's server of this hub reads."""
        import workshop_hub

        root = pathlib.Path(self.env.get("WORKSHOP_LEARNER_ROOT", "/opt/tensor-layout-lab"))
        return workshop_hub.learner_config_dir(self.data_dir, self.system_users, root)

    def os_user(self, name: str) -> str | None:
        """The OS user a learner's server runs as (None: the hub's own, shared mode)."""
        return f"{self.user_prefix}{name}" if self.system_users else None

    def home_of(self, name: str) -> pathlib.Path:
        if self.system_users:
            import pwd

            return pathlib.Path(pwd.getpwnam(self.os_user(name)).pw_dir)
        return self.data_dir / "homes" / name

    def _answers(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"the hub exited ({self.process.returncode}):\n{self.log_tail()}")
        return requests.get(self.url + "/hub/api", timeout=5).status_code == 200

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text().splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def sign_in(self, name: str, password: str, code: str | None = None,
                source: str | None = None) -> Learner:
        """Sign in through the login form (first use: with the workshop code), get a token.

        source: the loopback address to connect from (e.g. 127.0.0.2), a second machine."""
        session = requests.Session()
        if source:
            adapter = SourceAddressAdapter(source)
            session.mount("http://", adapter)
        session.get(self.url + "/hub/login", timeout=REQUEST_TIMEOUT_S)
        xsrf = session.cookies.get("_xsrf", "")
        form = {"username": name, "password": password, "_xsrf": xsrf,
                "workshop_code": self.code if code is None else code}
        response = session.post(self.url + "/hub/login", data=form, allow_redirects=False,
                                timeout=REQUEST_TIMEOUT_S)
        if response.status_code != 302 or "/hub/login" in response.headers.get("Location", ""):
            raise SignInRefused(name, response.status_code)
        token = session.post(self.url + f"/hub/api/users/{name}/tokens",
                             headers={"X-XSRFToken": session.cookies.get("_xsrf", xsrf)},
                             json={"note": "workshop client", "expires_in": 7200},
                             timeout=REQUEST_TIMEOUT_S)
        token.raise_for_status()
        return Learner(self, name, session, token.json()["token"])

    def sign_in_admin(self) -> Learner:
        return self.sign_in(self.admin, self.admin_password, code="")

    def _ours(self, environ: dict) -> bool:
        """The hub's proxy (WORKSHOP_DATA) and the learners' servers and kernels (their config)."""
        return (environ.get("WORKSHOP_DATA") == str(self.data_dir)
                or environ.get("JUPYTER_CONFIG_PATH") == str(self.config_dir))

    def stop(self, timeout_s: float = 30) -> None:
        """Stop the hub (it stops the proxy and the servers), then anything it left behind."""
        import psutil

        if self.process.poll() is None:
            try:
                children = psutil.Process(self.process.pid).children(recursive=True)
            except psutil.NoSuchProcess:
                children = []
            children += [p for p in psutil.process_iter(["environ"])
                         if self._ours(p.info.get("environ") or {}) and p.pid != os.getpid()]
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
            for child in {c.pid: c for c in children}.values():
                with contextlib.suppress(psutil.NoSuchProcess):
                    child.kill()


def remove_os_users(prefix: str, home_base: str = "/home") -> list[str]:
    """Remove the OS users a system-mode hub made with `prefix` (tests, the load benchmark):
    their processes (by pid), what they left in /tmp, /var/tmp and /dev/shm, accounts, groups
    and homes. Only accounts this workshop made
    (their GECOS says so) are touched. Returns the names removed."""
    import pwd

    import psutil
    import workshop_hub

    if not prefix or os.geteuid() != 0:
        return []
    removed = []
    for entry in pwd.getpwall():
        if not entry.pw_name.startswith(prefix) or entry.pw_gecos != workshop_hub.LEARNER_MARK:
            continue
        for proc in psutil.process_iter(["uids"]):
            uids = proc.info.get("uids")
            if uids and entry.pw_uid in (uids.real, uids.effective):
                with contextlib.suppress(psutil.NoSuchProcess):
                    proc.kill()
        for folder in ("/tmp", "/var/tmp", "/dev/shm"):    # what their programs left there
            with contextlib.suppress(OSError):
                for item in os.scandir(folder):
                    with contextlib.suppress(OSError):
                        if item.stat(follow_symlinks=False).st_uid != entry.pw_uid:
                            continue
                        if item.is_dir(follow_symlinks=False):
                            shutil.rmtree(item.path, ignore_errors=True)
                        else:
                            os.unlink(item.path)
        for _ in range(20):
            done = subprocess.run(["userdel", "--remove", entry.pw_name], capture_output=True,
                                  text=True, check=False)
            if done.returncode in (0, 6) or "currently used" not in done.stderr:
                break
            time.sleep(0.25)
        removed.append(entry.pw_name)
    staging = pathlib.Path(home_base) / ".workshop-staging"
    if staging.exists() and not any(staging.iterdir()):
        staging.rmdir()
    return removed
