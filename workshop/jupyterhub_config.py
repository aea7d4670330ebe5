"""JupyterHub for a workshop: `make workshop` starts it with this file (jupyterhub -f ...).

Everything a room differs in comes from the environment, so nothing secret is in the
repository and one file serves the laptop, the workshop machine and the tests:

  WORKSHOP_PASSWORD        the room's workshop code (required): needed on a name's first sign-in
  WORKSHOP_ADMIN           the instructor's user name (default: instructor)
  WORKSHOP_ADMIN_PASSWORD  the instructor's password (required)
  WORKSHOP_IP / _PORT      where the hub listens (default 127.0.0.1:8000; 0.0.0.0 for a room)
  WORKSHOP_DATA            the data dir: homes, accounts, database, secrets (default workshop/data)
  WORKSHOP_MEM_LIMIT       per-learner memory, e.g. 2G (passed on; see README "Limits")
  WORKSHOP_CPU_LIMIT       per-learner CPUs, e.g. 1 (passed on; see README "Limits")
  WORKSHOP_CULL_KERNEL_S   idle kernels shut down after this many seconds (default: the course's 60)
  WORKSHOP_CULL_SERVER_S   an idle learner server stops itself after this long (default 3600)
  WORKSHOP_SYSTEM_USERS=1  (root only) one OS user per learner, LocalProcessSpawner
  WORKSHOP_COURSE_REPO     a git URL: learners get the course by nbgitpuller from it (into ~/course)
                           instead of a copy of this checkout; WORKSHOP_COURSE_BRANCH (main)
  WORKSHOP_PROXY           the configurable-http-proxy command (default workshop/node_modules/.bin/...)
"""

import json
import os
import pathlib
import secrets
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import workshop_hub  # noqa: E402

c = get_config()  # noqa: F821 - provided by jupyterhub when it loads this file


def need(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        sys.exit(f"workshop: set {name} before starting the hub (it is never stored in the repository)")
    return value


data = pathlib.Path(os.environ.get("WORKSHOP_DATA", HERE / "data")).resolve()
data.mkdir(parents=True, exist_ok=True, mode=0o700)
admin = os.environ.get("WORKSHOP_ADMIN", "instructor")
system_users = os.environ.get("WORKSHOP_SYSTEM_USERS", "") == "1"
if system_users and os.geteuid() != 0:
    sys.exit("workshop: WORKSHOP_SYSTEM_USERS=1 creates OS users and needs the hub to run as root")

# --- the hub: loopback unless the instructor opens it; its secrets made here, at start -------
c.JupyterHub.ip = os.environ.get("WORKSHOP_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("WORKSHOP_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("WORKSHOP_HUB_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = (
    f"http://127.0.0.1:{os.environ.get('WORKSHOP_PROXY_API_PORT', '8001')}")
c.JupyterHub.db_url = f"sqlite:///{data / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(data / "jupyterhub_cookie_secret")  # made on first start
c.JupyterHub.pid_file = str(data / "jupyterhub.pid")
proxy_token = data / "proxy_token"
if not proxy_token.exists():
    proxy_token.write_text(secrets.token_hex(32))
    proxy_token.chmod(0o600)
c.ConfigurableHTTPProxy.auth_token = proxy_token.read_text().strip()
c.ConfigurableHTTPProxy.command = [os.environ.get(
    "WORKSHOP_PROXY", str(HERE / "node_modules" / ".bin" / "configurable-http-proxy"))]
c.JupyterHub.template_paths = [str(HERE / "templates")]

# --- sign-in: the room's code on first use, then each learner's own password --------------
c.JupyterHub.authenticator_class = (workshop_hub.system_authenticator() if system_users
                                    else workshop_hub.WorkshopAuthenticator)
c.WorkshopAuthenticator.workshop_code = need("WORKSHOP_PASSWORD")
c.WorkshopAuthenticator.admin_password = need("WORKSHOP_ADMIN_PASSWORD")
c.WorkshopAuthenticator.accounts_file = str(data / "accounts.json")
c.Authenticator.admin_users = {admin}
c.Authenticator.allow_all = True          # anyone with the workshop code may create a name
c.Authenticator.username_pattern = workshop_hub.NAME_PATTERN
if system_users:
    c.LocalAuthenticator.create_system_users = True

# --- each learner's server: own process, own home with own copy of the course -------------
if system_users:
    c.JupyterHub.spawner_class = workshop_hub.WorkshopSystemSpawner
else:
    c.JupyterHub.spawner_class = workshop_hub.WorkshopSpawner
    c.SimpleLocalProcessSpawner.home_dir_template = str(data / "homes" / "{username}")
c.Spawner.cmd = [str(pathlib.Path(sys.executable).parent / "jupyterhub-singleuser")]
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
c.Spawner.mem_limit = os.environ.get("WORKSHOP_MEM_LIMIT") or None
c.Spawner.cpu_limit = float(os.environ["WORKSHOP_CPU_LIMIT"]) if os.environ.get(
    "WORKSHOP_CPU_LIMIT") else None
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120

# The course's own Jupyter settings, as `make lab` installs them (scripts/configure_jupyter.py):
# .py chapters listed once and opened as notebooks through jupytext, idle kernels culled. They
# are written into the data dir at start and every learner's server reads them from there
# (JUPYTER_CONFIG_PATH), so they apply whichever environment the hub runs from.
course = json.loads((HERE.parent / "jupyter" / "jupyter_server_config.json").read_text())
kernels = course["MappingKernelManager"]
cull_kernel_s = int(os.environ.get("WORKSHOP_CULL_KERNEL_S", kernels["cull_idle_timeout"]))
kernels["cull_idle_timeout"] = cull_kernel_s
kernels["cull_interval"] = min(kernels["cull_interval"], max(1, cull_kernel_s // 2))
course["ServerApp"] = {
    "jpserver_extensions": {"jupyterlab_jupytext": True, "nbgitpuller": True},
    # An idle learner server (no kernel, no browser) stops itself and frees its memory.
    "shutdown_no_activity_timeout": int(os.environ.get("WORKSHOP_CULL_SERVER_S", 3600)),
}
# With OS users the settings must be readable by them, so they go beside the (private) data dir.
server_config = (data.parent / f"{data.name}-jupyter-config") if system_users else (
    data / "jupyter_config")
server_config.mkdir(exist_ok=True, mode=0o755)
(server_config / "jupyter_server_config.json").write_text(json.dumps(course, indent=1))
# JupyterLab's setting overrides (chapters open as notebooks, no news): read from labconfig/
# in each config dir, as `make lab` reads them from <prefix>/share/jupyter/lab/settings.
(server_config / "labconfig").mkdir(exist_ok=True)
(server_config / "labconfig" / "default_setting_overrides.json").write_text(
    (HERE.parent / "jupyter" / "overrides.json").read_text())
c.Spawner.environment = {"JUPYTER_CONFIG_PATH": str(server_config)}
