"""JupyterHub for a workshop: `make workshop` starts it with this file (jupyterhub -f ...).

Everything a room differs in comes from the environment, so nothing secret is in the
repository and one file serves the laptop, the workshop machine and the tests:

  WORKSHOP_PASSWORD        the room's workshop code (required): needed on a name's first sign-in
  WORKSHOP_ADMIN           the instructor's user name (default: instructor)
  WORKSHOP_ADMIN_PASSWORD  the instructor's password (required)
  WORKSHOP_SECRETS_FILE    a file (mode 600, the hub's user) with WORKSHOP_PASSWORD=... and
                           WORKSHOP_ADMIN_PASSWORD=... lines: the way to give them for a room
  WORKSHOP_IP / _PORT      where the hub listens (default 127.0.0.1:8000; 0.0.0.0 for a room)
  WORKSHOP_SYSTEM_USERS    1: one OS user per learner (the room's mode; needs root; the default
                           beyond loopback). 0: shared mode, a rehearsal: loopback only, never root
  WORKSHOP_USER_PREFIX     system mode: OS user name = prefix + name (default jupyter-)
  WORKSHOP_HOME_BASE       system mode: where learners' homes go (default /home)
  WORKSHOP_LEARNER_ROOT    system mode: where the learners' environment and settings go
                           (default /opt/tensor-layout-lab; root-owned, world-readable)
  WORKSHOP_LEARNER_PYTHON  system mode: an interpreter learners can run, instead of building one
  WORKSHOP_DATA            the data dir: accounts, database, secrets (default workshop/data, 700)
  WORKSHOP_MEM_LIMIT       per-learner memory, e.g. 2G (passed on; see README "Limits")
  WORKSHOP_CPU_LIMIT       per-learner CPUs, e.g. 1 (passed on; see README "Limits")
  WORKSHOP_CULL_KERNEL_S   idle kernels shut down after this many seconds (default: the course's 60)
  WORKSHOP_CULL_SERVER_S   an idle learner server stops itself after this long (default 3600)
  WORKSHOP_COOKIE_HOURS    how long a sign-in lasts (default 12: one workshop day)
  WORKSHOP_COURSE_REPO     a git URL: learners get the course by nbgitpuller from it (into ~/course)
                           instead of a copy of this checkout; WORKSHOP_COURSE_BRANCH (main)
  WORKSHOP_PULL_REPOS      the repositories an nbgitpuller link may pull (space-separated;
                           default WORKSHOP_COURSE_REPO); file:// and local paths never
  WORKSHOP_PROXY           the configurable-http-proxy command (default workshop/node_modules/.bin/...)
"""

import json
import os
import pathlib
import secrets
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import learner_env  # noqa: E402
import workshop_hub  # noqa: E402

c = get_config()  # noqa: F821 - provided by jupyterhub when it loads this file
SECRETS = ("WORKSHOP_PASSWORD", "WORKSHOP_ADMIN_PASSWORD")


def refuse(message: str) -> None:
    sys.exit(f"workshop: {message}")


def read_secrets_file() -> dict:
    """KEY=value lines from WORKSHOP_SECRETS_FILE, which only the hub's user may read."""
    name = os.environ.get("WORKSHOP_SECRETS_FILE", "")
    if not name:
        return {}
    path = pathlib.Path(name)
    try:
        info = path.stat()
    except OSError as exc:
        refuse(f"cannot read WORKSHOP_SECRETS_FILE {path}: {exc.strerror}")
    if info.st_mode & 0o077 or info.st_uid != os.geteuid():
        refuse(f"WORKSHOP_SECRETS_FILE {path} must be yours and mode 600 (chmod 600 {path}); "
               f"it is mode {info.st_mode & 0o777:o}")
    values = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key.strip() in SECRETS:
            values[key.strip()] = value.strip()
    return values


from_file = read_secrets_file()


def need(name: str) -> str:
    value = os.environ.get(name, "") or from_file.get(name, "")
    if not value:
        refuse(f"set {name} (in the environment or WORKSHOP_SECRETS_FILE) before starting the "
               "hub (it is never stored in the repository)")
    return value


code, admin_password = need("WORKSHOP_PASSWORD"), need("WORKSHOP_ADMIN_PASSWORD")
for name in SECRETS:          # not handed on to the proxy, which inherits the hub's environment
    os.environ.pop(name, None)

# --- the mode: one OS user per learner for a room; shared only for a rehearsal -------------
ip = os.environ.get("WORKSHOP_IP", "127.0.0.1")
loopback = workshop_hub.is_loopback(ip)
chosen = os.environ.get("WORKSHOP_SYSTEM_USERS", "")
if chosen not in ("", "0", "1"):
    refuse(f"WORKSHOP_SYSTEM_USERS is 1 (one OS user per learner) or 0 (shared), not {chosen!r}")
system_users = chosen == "1" or (chosen == "" and not loopback)
root = os.geteuid() == 0
if system_users and not root:
    refuse("one OS user per learner (WORKSHOP_SYSTEM_USERS=1, the mode for a room and the default "
           f"beyond loopback; WORKSHOP_IP={ip}) makes OS users: start the hub as root. For a "
           "rehearsal on your own machine keep WORKSHOP_IP=127.0.0.1.")
if not system_users and root:
    refuse("the shared mode runs every learner as the hub's user, so never as root: start it "
           "with WORKSHOP_SYSTEM_USERS=1 (one OS user per learner), or as an ordinary user for a "
           "rehearsal")
if not system_users and not loopback:
    refuse(f"the shared mode is a rehearsal on loopback only, not on {ip}: for a room start the "
           "hub as root with WORKSHOP_SYSTEM_USERS=1 (one OS user per learner)")
mode = "system" if system_users else "shared"
print(f"workshop: {mode} mode" + (" (one OS user per learner)" if system_users else
                                  " (a rehearsal: every learner is you; loopback only)"))

data = pathlib.Path(os.environ.get("WORKSHOP_DATA", HERE / "data")).resolve()
data.mkdir(parents=True, exist_ok=True, mode=0o700)
data.chmod(0o700)                  # accounts, database, cookie secret, proxy token: the hub's only
admin = os.environ.get("WORKSHOP_ADMIN", "instructor")
prefix = os.environ.get("WORKSHOP_USER_PREFIX", "jupyter-")
learner_root = pathlib.Path(os.environ.get("WORKSHOP_LEARNER_ROOT", learner_env.DEFAULT_ROOT))

# --- the hub: loopback unless the instructor opens it; its secrets made here, at start -------
c.JupyterHub.ip = ip
c.JupyterHub.port = int(os.environ.get("WORKSHOP_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("WORKSHOP_HUB_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = (
    f"http://127.0.0.1:{os.environ.get('WORKSHOP_PROXY_API_PORT', '8001')}")
c.JupyterHub.db_url = f"sqlite:///{data / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(data / "jupyterhub_cookie_secret")  # made on first start
c.JupyterHub.pid_file = str(data / "jupyterhub.pid")
c.JupyterHub.cookie_max_age_days = float(os.environ.get("WORKSHOP_COOKIE_HOURS", "12")) / 24
proxy_token = data / "proxy_token"
if not proxy_token.exists():
    proxy_token.touch(mode=0o600)
    proxy_token.write_text(secrets.token_hex(32))
proxy_token.chmod(0o600)
c.ConfigurableHTTPProxy.auth_token = proxy_token.read_text().strip()
c.ConfigurableHTTPProxy.command = [os.environ.get(
    "WORKSHOP_PROXY", str(HERE / "node_modules" / ".bin" / "configurable-http-proxy"))]
c.JupyterHub.template_paths = [str(HERE / "templates")]

# --- sign-in: the room's code on first use, then each learner's own password --------------
c.JupyterHub.authenticator_class = workshop_hub.WorkshopAuthenticator
c.WorkshopAuthenticator.workshop_code = code
c.WorkshopAuthenticator.admin_password_hash = workshop_hub.hash_password(admin_password)
c.WorkshopAuthenticator.accounts_file = str(data / "accounts.json")
c.WorkshopAuthenticator.system_users = system_users
c.WorkshopAuthenticator.user_prefix = prefix
c.Authenticator.admin_users = {admin}
c.Authenticator.allow_all = True          # anyone with the workshop code may create a name
c.Authenticator.username_pattern = workshop_hub.NAME_PATTERN
del code, admin_password

# --- each learner's server: own process, own home with own copy of the course -------------
server_config = workshop_hub.learner_config_dir(data, system_users, learner_root)
if system_users:
    c.JupyterHub.spawner_class = workshop_hub.WorkshopSystemSpawner
    c.WorkshopSystemSpawner.user_prefix = prefix
    c.WorkshopSystemSpawner.home_base = os.environ.get("WORKSHOP_HOME_BASE", "/home")
    try:
        python = os.environ.get("WORKSHOP_LEARNER_PYTHON") or learner_env.ensure(learner_root)
    except learner_env.LearnerEnvError as exc:
        refuse(str(exc))
    print(f"workshop: learners' servers run {python}")
    c.WorkshopSystemSpawner.learner_path = f"{pathlib.Path(python).parent}:/usr/local/bin:/usr/bin:/bin"
    c.Spawner.cmd = [python, "-m", "jupyterhub.singleuser"]
else:
    c.JupyterHub.spawner_class = workshop_hub.WorkshopSpawner
    c.SimpleLocalProcessSpawner.home_dir_template = str(data / "homes" / "{username}")
    single = pathlib.Path(sys.executable).parent / "jupyterhub-singleuser"
    c.Spawner.cmd = [str(single)] if single.exists() else [sys.executable, "-m", "jupyterhub.singleuser"]
c.CourseSpawner.guard_dir = str(server_config)
c.Spawner.default_url = "/lab/tree/course/notebooks/00_setup_check.py"
course_repo = os.environ.get("WORKSHOP_COURSE_REPO", "")
if course_repo:
    # A new learner's server opens on the nbgitpuller link: it clones the course into
    # ~/course, and later clicks merge the instructor's updates without losing the learner's.
    c.CourseSpawner.course_source = ""
    branch = os.environ.get("WORKSHOP_COURSE_BRANCH", "main")
    c.Spawner.default_url = "/" + workshop_hub.pull_link("", course_repo, branch).split("/hub/user-redirect/", 1)[1]
    print("workshop: the course link for the room is",
          workshop_hub.pull_link(f"http://{c.JupyterHub.ip}:{c.JupyterHub.port}", course_repo, branch))
pull_repos = os.environ.get("WORKSHOP_PULL_REPOS", course_repo)
c.Spawner.mem_limit = os.environ.get("WORKSHOP_MEM_LIMIT") or None
c.Spawner.cpu_limit = float(os.environ["WORKSHOP_CPU_LIMIT"]) if os.environ.get(
    "WORKSHOP_CPU_LIMIT") else None
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300

# The course's own Jupyter settings, as `make lab` installs them (scripts/configure_jupyter.py):
# .py chapters listed once and opened as notebooks through jupytext, idle kernels culled. They
# are written at start into a folder every learner's server reads (JUPYTER_CONFIG_PATH) and
# cannot write, with the guard extension (workshop_guard.py: links and paths kept in the home).
course = json.loads((HERE.parent / "jupyter" / "jupyter_server_config.json").read_text())
kernels = course["MappingKernelManager"]
cull_kernel_s = int(os.environ.get("WORKSHOP_CULL_KERNEL_S", kernels["cull_idle_timeout"]))
kernels["cull_idle_timeout"] = cull_kernel_s
kernels["cull_interval"] = min(kernels["cull_interval"], max(1, cull_kernel_s // 2))
course["ServerApp"] = {
    "jpserver_extensions": {"jupyterlab_jupytext": True, "nbgitpuller": True,
                            "workshop_guard": True},
    # An idle learner server (no kernel, no browser) stops itself and frees its memory.
    "shutdown_no_activity_timeout": int(os.environ.get("WORKSHOP_CULL_SERVER_S", 3600)),
}
server_config.mkdir(parents=True, exist_ok=True, mode=0o755)
server_config.chmod(0o755)
(server_config / "jupyter_server_config.json").write_text(json.dumps(course, indent=1))
shutil.copy(HERE / "workshop_guard.py", server_config / "workshop_guard.py")
kernel_config = HERE.parent / "jupyter" / "ipython_kernel_config.json"   # the kernels' settings
if kernel_config.exists():
    shutil.copy(kernel_config, server_config / kernel_config.name)
# JupyterLab's setting overrides (chapters open as notebooks, no news): read from labconfig/
# in each config dir, as `make lab` reads them from <prefix>/share/jupyter/lab/settings.
(server_config / "labconfig").mkdir(exist_ok=True)
(server_config / "labconfig" / "default_setting_overrides.json").write_text(
    (HERE.parent / "jupyter" / "overrides.json").read_text())
for path in [server_config, *server_config.rglob("*")]:
    path.chmod(0o755 if path.is_dir() else 0o644)
c.Spawner.environment = {"JUPYTER_CONFIG_PATH": str(server_config),
                         "WORKSHOP_PULL_REPOS": pull_repos}
