"""Learner A, with only what a learner has, tries issue 42's findings 1-7 against learner B and
the hub; every attempt must be refused, and each test holds a positive control (A reaches what
is A's, B signs in) so that a hub that refuses everything fails too.

What a learner has: cells in their own kernel, their own cookie and token, and links that
someone else may click (simulated by B's own requests, which is what B's browser sends).
As root (as CI runs) the hub is in system mode, the room's mode; the OS-level findings
(1, 2) are only claimed for that mode: in the shared rehearsal mode every learner is the
hub's own OS user, which the README says.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.workshop

ROOT = pathlib.Path(__file__).resolve().parents[2]
SYSTEM_MODE = os.geteuid() == 0
system_only = pytest.mark.skipif(not SYSTEM_MODE, reason="OS-level isolation is system mode's "
                                 "(run as root); the shared mode is a rehearsal, one OS user")

PROBE = '''
import json, os
def probe(path, how="read"):
    try:
        if how == "read":
            with open(path, "rb") as f:
                f.read(64)
        elif how == "write":
            with open(path, "ab") as f:
                f.write(b"x")
        else:
            os.listdir(path)
        return "allowed"
    except PermissionError:
        return "denied"
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"error {exc.errno}"
'''


@pytest.fixture(scope="module")
def pair(hub):
    """A (alice, the attacker) and B (bob), each with a running server; A's kernel kept."""
    alice = hub.sign_in("alice", "alice-password")
    bob = hub.sign_in("bob", "bob-password")
    alice.start_server()
    bob.start_server()
    kernel = alice.new_kernel("attack.ipynb")
    assert alice.run_cell(PROBE, kernel).status == "ok"
    return alice, bob, kernel


def probes(alice, kernel: str, attempts: dict[str, tuple[str, str]]) -> dict[str, str]:
    """Run probe(path, how) for each attempt in A's own kernel; their outcomes by name."""
    code = f"print(json.dumps({{k: probe(p, h) for k, (p, h) in {attempts!r}.items()}}))"
    result = alice.run_cell(code, kernel)
    assert result.status == "ok", result.error
    return json.loads(result.stdout)


def server_process(hub, name: str):
    """The learner's server process (found as root can: by its environment)."""
    import psutil

    for proc in psutil.process_iter(["environ", "cmdline"]):
        env = proc.info.get("environ") or {}
        cmd = " ".join(proc.info.get("cmdline") or [])
        if (env.get("JUPYTERHUB_USER") == name and env.get("JUPYTER_CONFIG_PATH") == str(hub.config_dir)
                and ("jupyterhub.singleuser" in cmd or "jupyterhub-singleuser" in cmd)):
            return proc
    raise AssertionError(f"no server process for {name}")


def listening_port(proc) -> int:
    """The loopback port a learner's server listens on (its proxy target)."""
    connections = proc.net_connections(kind="inet") if hasattr(proc, "net_connections") \
        else proc.connections(kind="inet")
    return next(c.laddr.port for c in connections if c.status == "LISTEN")


@system_only
def test_1_a_cell_cannot_take_the_hubs_secrets_or_run_as_root(hub, pair):
    """Finding 1: kernels ran as root (--allow-root) and read /proc/<hub>/environ."""
    import psutil

    alice, bob, kernel = pair
    hub_proc = psutil.Process(hub.process.pid)
    proxy = [p for p in hub_proc.children(recursive=True) if "configurable-http-proxy" in
             " ".join(p.cmdline())]
    server = server_process(hub, "alice")
    assert "--allow-root" not in server.cmdline() and server.uids().effective != 0
    assert proxy, "the hub's proxy was not found among its children"
    attempts = {"hub environ": (f"/proc/{hub_proc.pid}/environ", "read"),
                "hub memory": (f"/proc/{hub_proc.pid}/mem", "read"),
                "proxy environ (its token)": (f"/proc/{proxy[0].pid}/environ", "read"),
                "own environ": ("/proc/self/environ", "read"),          # positive control
                "own course": ("course/README.md", "read")}               # positive control
    got = probes(alice, kernel, attempts)
    assert got.pop("own environ") == "allowed" and got.pop("own course") == "allowed", got
    assert set(got.values()) == {"denied"}, got
    result = alice.run_cell("import os; print(os.geteuid())", kernel)
    assert int(result.stdout) != 0
    # The hub's command line is readable by anyone: no secret in it.
    cmdline = " ".join(hub_proc.cmdline() + sum((p.cmdline() for p in proxy), []))
    proxy_env = " ".join(f"{k}={v}" for k, v in proxy[0].environ().items())
    for secret in (hub.code, hub.admin_password):
        assert secret not in cmdline
        assert secret not in proxy_env, "the proxy inherited the room's secrets"
    # Without the password, A cannot become the instructor; A's own token is no admin's.
    with pytest.raises(PermissionError):
        hub.sign_in(hub.admin, "guessed-password", code="", source="127.0.0.3")
    assert alice.request("GET", "/hub/api/users").status_code in (403, 404) or \
        [u["name"] for u in alice.request("GET", "/hub/api/users").json()] == ["alice"]
    assert hub.sign_in_admin().name == hub.admin                              # positive control


@system_only
def test_2_a_cell_cannot_read_the_data_dir_another_home_or_process(hub, pair):
    """Finding 2: cookie secret, proxy token, accounts, database; bob's home and token."""
    alice, bob, kernel = pair
    data, bob_home = hub.data_dir, hub.home_of("bob")
    bob_server = server_process(hub, "bob")
    attempts = {
        "cookie secret": (str(data / "jupyterhub_cookie_secret"), "read"),
        "proxy token": (str(data / "proxy_token"), "read"),
        "accounts": (str(data / "accounts.json"), "read"),
        "database": (str(data / "jupyterhub.sqlite"), "read"),
        "data dir": (str(data), "list"),
        "bob's home": (str(bob_home), "list"),
        "bob's course": (str(bob_home / "course" / "README.md"), "read"),
        "writing in bob's home": (str(bob_home / "planted.txt"), "write"),
        "bob's server environ (his API token)": (f"/proc/{bob_server.pid}/environ", "read"),
        "/etc/shadow": ("/etc/shadow", "read"),
        "own home": (str(hub.home_of("alice")), "list"),                       # positive
        "own file": (str(hub.home_of("alice") / "mine.txt"), "write"),         # positive
    }
    got = probes(alice, kernel, attempts)
    assert got.pop("own home") == "allowed" and got.pop("own file") == "allowed", got
    assert set(got.values()) == {"denied"}, got
    assert not (bob_home / "planted.txt").exists()
    # Straight to bob's server's port on loopback, past the proxy: refused without his token.
    ports = {name: listening_port(server_process(hub, name)) for name in ("alice", "bob")}
    code = (
        "import http.client, json\n"
        "def get(port, path, token=None):\n"
        "    c = http.client.HTTPConnection('127.0.0.1', port, timeout=20)\n"
        "    c.request('GET', path, headers={'Authorization': f'token {token}'} if token else {})\n"
        "    return c.getresponse().status\n"
        f"print(json.dumps([get({ports['bob']}, '/user/bob/api/contents'),\n"
        f"                  get({ports['bob']}, '/user/bob/api/contents', {alice.token!r}),\n"
        f"                  get({ports['alice']}, '/user/alice/api/contents', {alice.token!r})]))")
    result = alice.run_cell(code, kernel)
    assert result.status == "ok", result.error
    no_token, alices_token, own = json.loads(result.stdout)
    assert no_token in (302, 401, 403) and alices_token in (401, 403, 404), (no_token, alices_token)
    assert own == 200                                                       # positive control
    # Bob reaches his own home, from his own kernel (positive control on his side).
    result = bob.run_cell("import os; print(len(os.listdir(os.path.expanduser('~/course'))))")
    assert result.status == "ok" and int(result.stdout) > 0


def test_3_a_link_cannot_pull_outside_the_home_or_from_anywhere(hub, pair, course_repo):
    """Finding 3: targetpath=../bob/..., an absolute path, file:// and other repositories."""
    alice, bob, _ = pair
    other_home = os.path.relpath(hub.home_of("alice"), hub.home_of("bob"))
    links = {   # what A sends B; B's browser (his cookie, his token) would open it
        "into alice's home": {"repo": course_repo, "targetpath": f"{other_home}/stolen"},
        "up and out": {"repo": course_repo, "targetpath": "../../tmp/escaped"},
        "an absolute path": {"repo": course_repo, "targetpath": "/tmp/escaped"},
        "file://": {"repo": f"file://{ROOT}", "targetpath": "cloned"},
        "a local path": {"repo": str(ROOT), "targetpath": "cloned"},
        "another repository": {"repo": course_repo.replace("course.git", "other.git"),
                               "targetpath": "cloned"},
    }
    for what, params in links.items():
        api = bob.request("GET", bob.server("git-pull/api"), params=params)
        assert api.status_code == 403, (what, api.status_code, api.text[:300])
        page = bob.request("GET", bob.server("git-pull"), params=params)
        assert page.status_code == 403 and "refused" in page.text, (what, page.status_code)
    assert "file://" in bob.request("GET", bob.server("git-pull/api"),
                                    params=links["file://"]).text
    # A symlink out of A's own home does not carry a pull out either.
    assert alice.run_cell("import os; os.symlink('/tmp', os.path.expanduser('~/tmplink'))"
                          ).status == "ok"
    assert alice.request("GET", alice.server("git-pull/api"),
                         params={"repo": course_repo, "targetpath": "tmplink/x"}).status_code == 403
    # The instructor's repository into a folder of bob's own: pulled (positive control).
    bob.pull_course(course_repo, "main", "linked")
    pulled = bob.request("GET", bob.server("api/contents/linked/notebooks/00_setup_check.py"))
    assert pulled.status_code == 200


def test_4_the_contents_api_does_not_follow_symlinks_out_of_the_home(hub, pair):
    """Finding 4: a symlink to /etc/passwd read it, one into bob's home wrote there."""
    alice, _, kernel = pair
    links = {"passwd": "/etc/passwd", "bobhome": str(hub.home_of("bob")),
             "hubdata": str(hub.data_dir), "inside": "course"}
    code = (f"import os\nfor name, to in {links!r}.items():\n"
            "    path = os.path.expanduser('~/' + name)\n"
            "    os.path.lexists(path) or os.symlink(to, path)\nprint('ok')")
    assert alice.run_cell(code, kernel).status == "ok"
    refused = {
        "read /etc/passwd": alice.request("GET", alice.server("api/contents/passwd")),
        "list bob's home": alice.request("GET", alice.server("api/contents/bobhome")),
        "write in bob's home": alice.request(
            "PUT", alice.server("api/contents/bobhome/planted.txt"),
            json={"type": "file", "format": "text", "content": "from alice"}),
        "read the hub's data": alice.request("GET", alice.server("api/contents/hubdata/proxy_token")),
        "download /etc/passwd": alice.request("GET", alice.server("files/passwd")),
    }
    let_in = {what: r.status_code for what, r in refused.items() if r.status_code not in (403, 404)}
    assert not let_in, let_in
    assert refused["read /etc/passwd"].status_code == 403
    assert not (hub.home_of("bob") / "planted.txt").exists()
    # A symlink that stays inside the home works, and so does A's own file (positive controls).
    inside = alice.request("GET", alice.server("api/contents/inside/README.md"))
    assert inside.status_code == 200, inside.text[:200]
    assert alice.request("GET", alice.server("api/contents/course/README.md")).status_code == 200


def test_5_any_unicode_in_a_password_or_code_is_a_plain_refusal(hub, pair):
    """Finding 5: a non-ASCII password or code answered 500 (hmac on str)."""
    from hubclient import SignInRefused

    attempts = [("bob", "pässwörd-✓", ""), (hub.admin, "ädmin-passwörd", ""),
                ("newcomer", "newcomer-password", "cöde-✓")]
    for name, password, code in attempts:
        with pytest.raises(SignInRefused) as refused:
            hub.sign_in(name, password, code=code, source="127.0.0.4")
        assert refused.value.status == 403, (name, refused.value.status)   # the form again
    # A non-ASCII password of one's own works; bob still signs in (positive controls).
    assert hub.sign_in("zoe", "zöé-pässwörd", source="127.0.0.4").name == "zoe"
    assert hub.sign_in("zoe", "zöé-pässwörd", code="", source="127.0.0.4").name == "zoe"
    assert hub.sign_in("bob", "bob-password", code="", source="127.0.0.4").name == "bob"


def test_6_guessing_a_password_locks_that_name_out_from_that_address(hub, pair):
    """Finding 6: no rate limit or lockout on sign-in."""
    from hubclient import SignInRefused

    hub.sign_in("carol", "carol-password", source="127.0.0.5")
    for guess in range(5):
        with pytest.raises(SignInRefused) as refused:
            hub.sign_in("carol", f"guess-{guess}", code="", source="127.0.0.5")
        assert refused.value.status == 403
    with pytest.raises(SignInRefused) as locked:     # even the right password, for now
        hub.sign_in("carol", "carol-password", code="", source="127.0.0.5")
    assert locked.value.status == 429
    assert "LOCK-OUT" in hub.log_tail(400) and "'carol'" in hub.log_tail(400)
    # Carol from her own machine, and another name from the guesser's, are not locked out.
    assert hub.sign_in("carol", "carol-password", code="", source="127.0.0.6").name == "carol"
    assert hub.sign_in("dave", "dave-password", source="127.0.0.5").name == "dave"


def test_7_a_copied_cookie_is_refused_after_its_owner_signs_out(hub, pair):
    """Finding 7: a copied hub cookie kept working for about 30 days after sign-out."""
    import requests

    bob = hub.sign_in("bob", "bob-password", code="", source="127.0.0.7")
    stolen = {c.name: c.value for c in bob.session.cookies if c.name.startswith("jupyterhub")}
    assert "jupyterhub-hub-login" in stolen

    def as_thief() -> requests.Response:
        return requests.get(hub.url + "/hub/home", cookies=stolen, allow_redirects=False,
                            timeout=30)

    before = as_thief()
    assert before.status_code == 200, "the copied cookie should work while bob is signed in"
    bob.session.get(hub.url + "/hub/logout", timeout=30)
    after = as_thief()
    assert after.status_code == 302 and "/hub/login" in after.headers["Location"], after.status_code
    assert hub.sign_in("bob", "bob-password", code="", source="127.0.0.7").name == "bob"


def start_config_only(env: dict[str, str], tmp_path: pathlib.Path) -> subprocess.CompletedProcess:
    """Start the hub the documented way and return how it ended (a refusal ends it at once)."""
    run_env = {**os.environ, "WORKSHOP_PASSWORD": "code-1234", "WORKSHOP_ADMIN_PASSWORD":
               "admin-1234", "WORKSHOP_DATA": str(tmp_path / "data"), **env}
    hub_bin = pathlib.Path(sys.executable).parent / "jupyterhub"
    command = [str(hub_bin)] if os.access(hub_bin, os.X_OK) else [sys.executable, "-m", "jupyterhub"]
    return subprocess.run([*command, "-f", str(ROOT / "workshop" / "jupyterhub_config.py")],
                          env=run_env, capture_output=True, text=True, timeout=120, cwd=tmp_path)


def test_the_shared_mode_refuses_beyond_loopback_and_as_root(tmp_path):
    pytest.importorskip("jupyterhub")
    wide = start_config_only({"WORKSHOP_SYSTEM_USERS": "0", "WORKSHOP_IP": "0.0.0.0"}, tmp_path)
    assert wide.returncode != 0 and "WORKSHOP_SYSTEM_USERS=1" in wide.stderr + wide.stdout
    if SYSTEM_MODE:
        rooted = start_config_only({"WORKSHOP_SYSTEM_USERS": "0"}, tmp_path)
        assert rooted.returncode != 0
        assert "never as root" in rooted.stderr and "WORKSHOP_SYSTEM_USERS=1" in rooted.stderr
    else:
        beyond = start_config_only({"WORKSHOP_IP": "0.0.0.0"}, tmp_path)   # system mode's default
        assert beyond.returncode != 0 and "as root" in beyond.stderr
