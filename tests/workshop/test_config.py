"""The hub's configuration: secrets from the environment only, loopback by default."""

import os
import pathlib
import runpy
import sys

import pytest

pytestmark = pytest.mark.workshop

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = ROOT / "workshop" / "jupyterhub_config.py"


def load(monkeypatch, tmp_path, euid=1000, **env):
    """Run the config file in-process as a hub would, as user `euid` (0: as root)."""
    pytest.importorskip("jupyterhub", reason="the workshop extra is not installed (make workshop)")
    from traitlets.config import Config

    for name in ("WORKSHOP_PASSWORD", "WORKSHOP_ADMIN_PASSWORD", "WORKSHOP_IP", "WORKSHOP_COURSE_REPO",
                 "WORKSHOP_SYSTEM_USERS", "WORKSHOP_SECRETS_FILE", "WORKSHOP_PULL_REPOS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WORKSHOP_DATA", str(tmp_path))
    monkeypatch.setenv("WORKSHOP_LEARNER_ROOT", str(tmp_path / "opt"))
    monkeypatch.setenv("WORKSHOP_LEARNER_PYTHON", sys.executable)   # no environment built here
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = Config()
    runpy.run_path(str(CONFIG), init_globals={"get_config": lambda: config})
    return config


def run_coroutine(coroutine):
    """asyncio.run on a thread of its own: a test earlier in the same worker (a kernel client, a
    server fixture) can leave a loop marked running on the main thread, where asyncio.run refuses."""
    import asyncio
    import threading

    outcome = {}

    def target():
        outcome["thread"] = threading.current_thread()
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as error:  # re-raised on the test's thread, pytest.raises included
            outcome["error"] = error

    thread = threading.Thread(target=target, name="test-event-loop")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


SECRETS = {"WORKSHOP_PASSWORD": "code-1234", "WORKSHOP_ADMIN_PASSWORD": "admin-1234"}


def test_refuses_to_start_without_a_workshop_password(monkeypatch, tmp_path):
    with pytest.raises(SystemExit, match="WORKSHOP_PASSWORD"):
        load(monkeypatch, tmp_path, WORKSHOP_ADMIN_PASSWORD="x" * 8)


def test_loopback_by_default_and_secrets_made_in_the_data_dir(monkeypatch, tmp_path):
    config = load(monkeypatch, tmp_path, WORKSHOP_CULL_KERNEL_S="30", **SECRETS)
    assert config.JupyterHub.ip == "127.0.0.1" and config.JupyterHub.hub_ip == "127.0.0.1"
    token = (tmp_path / "proxy_token").read_text()
    assert len(token) == 64 and config.ConfigurableHTTPProxy.auth_token == token
    assert config.JupyterHub.cookie_secret_file.startswith(str(tmp_path))
    import json

    settings = json.loads((tmp_path / "jupyter_config" / "jupyter_server_config.json").read_text())
    assert settings["MappingKernelManager"]["cull_idle_timeout"] == 30
    assert "*.ipynb" in settings["ContentsManager"]["hide_globs"]


def test_the_instructor_opens_it_to_the_room_in_system_mode(monkeypatch, tmp_path):
    config = load(monkeypatch, tmp_path, euid=0, WORKSHOP_IP="0.0.0.0", **SECRETS)
    assert config.JupyterHub.ip == "0.0.0.0"
    assert config.JupyterHub.hub_ip == "127.0.0.1"   # the hub's own API stays internal
    assert config.JupyterHub.spawner_class.__name__ == "WorkshopSystemSpawner"  # the default there
    assert config.Spawner.cmd == [sys.executable, "-m", "jupyterhub.singleuser"]
    assert config.WorkshopAuthenticator.system_users is True
    guard = pathlib.Path(config.CourseSpawner.guard_dir)
    assert guard.is_relative_to(tmp_path / "opt") and (guard / "workshop_guard.py").exists()
    assert oct(guard.stat().st_mode & 0o777) == oct(0o755)       # learners read, never write
    assert oct(tmp_path.stat().st_mode & 0o777) == oct(0o700)    # the data dir: the hub's only


@pytest.mark.parametrize(("euid", "env", "says"), [
    (0, {"WORKSHOP_SYSTEM_USERS": "0"}, "never as root"),
    (0, {}, "never as root"),                                 # root on loopback: pick the mode
    (1000, {"WORKSHOP_SYSTEM_USERS": "0", "WORKSHOP_IP": "0.0.0.0"}, "loopback only"),
    (1000, {"WORKSHOP_IP": "0.0.0.0"}, "start the hub as root"),
    (1000, {"WORKSHOP_SYSTEM_USERS": "1"}, "start the hub as root"),
    (1000, {"WORKSHOP_SYSTEM_USERS": "yes"}, "is 1"),
])
def test_the_shared_mode_is_a_rehearsal_never_root_never_beyond_loopback(
        monkeypatch, tmp_path, euid, env, says):
    with pytest.raises(SystemExit, match=says) as refused:
        load(monkeypatch, tmp_path, euid=euid, **SECRETS, **env)
    if "never as root" in says or "loopback only" in says:
        assert "WORKSHOP_SYSTEM_USERS=1" in str(refused.value)


def test_secrets_can_come_from_a_private_file(monkeypatch, tmp_path):
    secrets = tmp_path / "secrets"
    secrets.write_text("WORKSHOP_PASSWORD=code-from-file\nWORKSHOP_ADMIN_PASSWORD=admin-from-file\n")
    secrets.chmod(0o644)
    with pytest.raises(SystemExit, match="mode 600"):
        load(monkeypatch, tmp_path, euid=os.getuid(), WORKSHOP_SECRETS_FILE=str(secrets),
             WORKSHOP_SYSTEM_USERS="1" if os.getuid() == 0 else "0")
    secrets.chmod(0o600)
    config = load(monkeypatch, tmp_path, euid=os.getuid(), WORKSHOP_SECRETS_FILE=str(secrets),
                  WORKSHOP_SYSTEM_USERS="1" if os.getuid() == 0 else "0")
    import workshop_hub

    assert config.WorkshopAuthenticator.workshop_code == "code-from-file"
    stored = config.WorkshopAuthenticator.admin_password_hash
    assert "admin-from-file" not in str(config) and workshop_hub.check_password("admin-from-file", stored)
    assert "WORKSHOP_ADMIN_PASSWORD" not in os.environ   # not handed on to the proxy


def test_a_sign_in_lasts_one_workshop_day_by_default(monkeypatch, tmp_path):
    assert load(monkeypatch, tmp_path, **SECRETS).JupyterHub.cookie_max_age_days == 0.5
    config = load(monkeypatch, tmp_path, WORKSHOP_COOKIE_HOURS="3", **SECRETS)
    assert config.JupyterHub.cookie_max_age_days == 3 / 24


def test_no_secret_is_in_the_repository():
    """The workshop folder names secrets only as environment variables."""
    import re

    for path in (ROOT / "workshop").rglob("*"):
        if "node_modules" in path.parts or "data" in path.parts or not path.is_file():
            continue
        text = path.read_text(errors="ignore")
        assert not re.search(r"(password|token|secret)\s*=\s*['\"][^'\"]{6,}", text, re.I), path


def test_passwords_are_kept_hashed(tmp_path):
    pytest.importorskip("jupyterhub")
    import workshop_hub

    stored = workshop_hub.hash_password("alice-password")
    assert "alice-password" not in stored
    assert workshop_hub.check_password("alice-password", stored)
    assert not workshop_hub.check_password("alice-passwore", stored)


def test_the_course_link_is_an_nbgitpuller_link():
    pytest.importorskip("jupyterhub")
    from urllib.parse import parse_qs, urlsplit

    import workshop_hub

    link = workshop_hub.pull_link("https://hub.example.org/", "https://github.com/o/lab.git", "main")
    parts = urlsplit(link)
    assert parts.path == "/hub/user-redirect/git-pull"
    query = parse_qs(parts.query)
    assert query["repo"] == ["https://github.com/o/lab.git"] and query["targetpath"] == ["course"]
    assert query["urlpath"] == ["lab/tree/course/notebooks/00_setup_check.py"]


def test_a_course_repo_makes_the_link_the_first_page(monkeypatch, tmp_path):
    config = load(monkeypatch, tmp_path, WORKSHOP_COURSE_REPO="https://github.com/o/lab.git",
                  **SECRETS)
    assert config.Spawner.default_url.startswith("/git-pull?repo=")
    assert config.CourseSpawner.course_source == ""
    # ... and the only repository a link may pull, unless the instructor lists more
    assert config.Spawner.environment["WORKSHOP_PULL_REPOS"] == "https://github.com/o/lab.git"


def test_sign_in_compares_bytes_and_any_unicode_is_a_refusal():
    pytest.importorskip("jupyterhub")
    import workshop_hub

    stored = workshop_hub.hash_password("zoë-pässwörd")
    assert workshop_hub.check_password("zoë-pässwörd", stored)
    for wrong in ("zoe-passwort", "✓✓✓✓✓✓", "\udcff", ""):
        assert workshop_hub.check_password(wrong, stored) is False
    assert workshop_hub.check_password("x", "not-a-hash") is False
    assert workshop_hub.same_secret("cöde", "cöde") and not workshop_hub.same_secret("cöde", "code")
    assert not workshop_hub.same_secret("", "")               # no code set: nobody gets in


def test_the_lockout_counts_per_name_and_address_and_its_wait_grows():
    pytest.importorskip("jupyterhub")
    from workshop_hub import Lockout

    lock = Lockout(limit=5, window_s=60, wait_s=60, max_wait_s=600)
    pair, now = ("bob", "10.0.0.7"), 1000.0
    assert [lock.failed(pair, now + i) for i in range(4)] == [0, 0, 0, 0]
    assert lock.failed(pair, now + 4) == 60 and lock.wait_left(pair, now + 5) == pytest.approx(59)
    assert lock.wait_left(("bob", "10.0.0.8"), now + 5) == 0          # bob elsewhere: free
    assert lock.wait_left(("carol", "10.0.0.7"), now + 5) == 0        # another name: free
    later = now + 100
    waits = [lock.failed(pair, later + i) for i in range(5)]
    assert waits[-1] == 120                                            # doubled
    assert [lock.failed(pair, later + 200 + 100 * k + i) for k in range(4) for i in range(5)][4::5] \
        == [240, 480, 600, 600]                                        # up to the cap
    spaced = Lockout()
    assert all(spaced.failed(pair, now + 61 * i) == 0 for i in range(10))   # 1 a minute: never
    lock.succeeded(pair)
    assert lock.failed(pair, later + 5000) == 0


def test_scrypt_runs_off_the_hubs_event_loop(tmp_path):
    """Finding 6's second half: 8 sign-ins at once stalled every learner (scrypt on the loop)."""
    pytest.importorskip("jupyterhub")
    import asyncio
    import hashlib
    import threading
    from unittest import mock

    import workshop_hub

    threads = []
    real = hashlib.scrypt

    def spy(*args, **kwargs):
        threads.append(threading.current_thread().name == "test-event-loop")
        return real(*args, **kwargs)

    auth = workshop_hub.WorkshopAuthenticator(workshop_code="code-1234",
                                              accounts_file=str(tmp_path / "accounts.json"))
    auth.admin_users = {"instructor"}
    auth.admin_password_hash = workshop_hub.hash_password("admin-1234")

    async def sign_ins():
        forms = [{"username": f"l{i}", "password": f"password-{i}", "workshop_code": "code-1234"}
                 for i in range(4)] + [{"username": "instructor", "password": "admin-1234"}]
        first = await asyncio.gather(*(auth.authenticate(None, form) for form in forms))
        return [*first, await auth.authenticate(None, {"username": "l0", "password": "password-0"})]

    with mock.patch("hashlib.scrypt", spy):
        names = run_coroutine(sign_ins())
    assert names == ["l0", "l1", "l2", "l3", "instructor", "l0"]
    assert threads and not any(threads), "scrypt ran on the event loop's thread"


def test_reserved_names_are_refused(tmp_path):
    pytest.importorskip("jupyterhub")
    import pwd

    import workshop_hub

    auth = workshop_hub.WorkshopAuthenticator(workshop_code="code-1234", system_users=True,
                                              accounts_file=str(tmp_path / "accounts.json"))
    existing = next(e.pw_name for e in pwd.getpwall() if e.pw_name != "root" and
                    __import__("re").match(workshop_hub.NAME_PATTERN, e.pw_name))
    for name in ("root", "admin", existing, "a" * 30):
        assert auth.reserved(name), name
        form = {"username": name, "password": "password-1", "workshop_code": "code-1234"}
        assert run_coroutine(auth.authenticate(None, form)) is None, name
    assert auth.reserved("ana") is None
    assert run_coroutine(auth.authenticate(None, {"username": "ana", "password": "password-1",
                                                "workshop_code": "code-1234"})) == "ana"


def test_a_name_locks_out_everywhere_after_many_failures_from_many_addresses(tmp_path):
    """A kernel on the hub's internal port can claim any address: the name limit bounds it."""
    pytest.importorskip("jupyterhub")
    from types import SimpleNamespace

    import workshop_hub
    from tornado import web

    auth = workshop_hub.WorkshopAuthenticator(workshop_code="code-1234",
                                              accounts_file=str(tmp_path / "accounts.json"))
    assert run_coroutine(auth.authenticate(None, {"username": "bob", "password": "bob-password",
                                                "workshop_code": "code-1234"})) == "bob"

    def from_address(i):
        return SimpleNamespace(request=SimpleNamespace(remote_ip=f"10.0.{i // 250}.{i % 250}"))

    async def guesses():
        for i in range(auth.lockout_name_limit):     # a new address for every guess
            assert await auth.authenticate(from_address(i), {"username": "bob",
                                                              "password": f"guess-{i}"}) is None
        with pytest.raises(web.HTTPError) as locked:
            await auth.authenticate(from_address(999), {"username": "bob", "password": "bob-password"})
        assert locked.value.status_code == 429
        assert await auth.authenticate(from_address(999), {"username": "carol", "password": "x" * 8,
                                                            "workshop_code": "code-1234"}) == "carol"

    run_coroutine(guesses())
