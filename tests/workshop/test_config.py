"""The hub's configuration: secrets from the environment only, loopback by default."""

import pathlib
import runpy

import pytest

pytestmark = pytest.mark.workshop

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = ROOT / "workshop" / "jupyterhub_config.py"


def load(monkeypatch, tmp_path, **env):
    pytest.importorskip("jupyterhub", reason="the workshop extra is not installed (make workshop)")
    from traitlets.config import Config

    for name in ("WORKSHOP_PASSWORD", "WORKSHOP_ADMIN_PASSWORD", "WORKSHOP_IP", "WORKSHOP_COURSE_REPO"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WORKSHOP_DATA", str(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    config = Config()
    runpy.run_path(str(CONFIG), init_globals={"get_config": lambda: config})
    return config


def test_refuses_to_start_without_a_workshop_password(monkeypatch, tmp_path):
    with pytest.raises(SystemExit, match="WORKSHOP_PASSWORD"):
        load(monkeypatch, tmp_path, WORKSHOP_ADMIN_PASSWORD="x" * 8)


def test_loopback_by_default_and_secrets_made_in_the_data_dir(monkeypatch, tmp_path):
    config = load(monkeypatch, tmp_path, WORKSHOP_PASSWORD="code-1234",
                  WORKSHOP_ADMIN_PASSWORD="admin-1234", WORKSHOP_CULL_KERNEL_S="30")
    assert config.JupyterHub.ip == "127.0.0.1" and config.JupyterHub.hub_ip == "127.0.0.1"
    token = (tmp_path / "proxy_token").read_text()
    assert len(token) == 64 and config.ConfigurableHTTPProxy.auth_token == token
    assert config.JupyterHub.cookie_secret_file.startswith(str(tmp_path))
    import json

    settings = json.loads((tmp_path / "jupyter_config" / "jupyter_server_config.json").read_text())
    assert settings["MappingKernelManager"]["cull_idle_timeout"] == 30
    assert "*.ipynb" in settings["ContentsManager"]["hide_globs"]


def test_the_instructor_opens_it_to_the_room(monkeypatch, tmp_path):
    config = load(monkeypatch, tmp_path, WORKSHOP_PASSWORD="code-1234",
                  WORKSHOP_ADMIN_PASSWORD="admin-1234", WORKSHOP_IP="0.0.0.0")
    assert config.JupyterHub.ip == "0.0.0.0"
    assert config.JupyterHub.hub_ip == "127.0.0.1"   # the hub's own API stays internal


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
    config = load(monkeypatch, tmp_path, WORKSHOP_PASSWORD="code-1234",
                  WORKSHOP_ADMIN_PASSWORD="admin-1234",
                  WORKSHOP_COURSE_REPO="https://github.com/o/lab.git")
    assert config.Spawner.default_url.startswith("/git-pull?repo=")
    assert config.CourseSpawner.course_source == ""
