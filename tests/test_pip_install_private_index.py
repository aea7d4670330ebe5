"""The set-up's installer where only pip's configuration reaches the packages: a private index
on 127.0.0.1, served over HTTPS with a certificate signed by a private authority that only
pip.conf's `cert` names, and a constraint in pip.conf. uv alone cannot reach it (the control);
scripts/pip_install.py hands uv pip's settings and uv installs from it; and where uv fails
anyway, its one-line reason is printed and pip installs the same with its progress shown.

Everything is local: the authority and the server's certificate are made with openssl, the
wheels are built here (two versions, so the constraint has something to refuse), and the
environment installed into is a bare venv that borrows this environment's pip (a .pth file).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import os
import shutil
import ssl
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.paths import ROOT

SCRIPT = ROOT / "scripts" / "pip_install.py"
NAME, MODULE = "lab43-tiny", "lab43_tiny"
VERSIONS = ("0.1", "0.2")


def make_wheel(folder: Path, version: str) -> Path:
    """A pure-Python wheel with a valid RECORD (uv checks it)."""
    files = {f"{MODULE}/__init__.py": f"VERSION = {version!r}\n",
             f"{MODULE}-{version}.dist-info/METADATA":
                 f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n",
             f"{MODULE}-{version}.dist-info/WHEEL":
                 "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record_name = f"{MODULE}-{version}.dist-info/RECORD"
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{record_name},,")
    path = folder / f"{MODULE}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr(record_name, "\n".join(record) + "\n")
    return path


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A private authority and a certificate it signed for 127.0.0.1: (authority, cert, key)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make the private certificate authority")
    ca_key, ca, key, csr, cert = (folder / n for n in ("ca.key", "ca.pem", "srv.key", "srv.csr",
                                                       "srv.pem"))
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run = lambda *a: subprocess.run([openssl, *a], check=True, capture_output=True)  # noqa: E731
    run("req", "-x509", *ec, "-keyout", str(ca_key), "-out", str(ca), "-days", "2",
        "-subj", "/CN=labkit test authority", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", *ec, "-keyout", str(key), "-out", str(csr), "-subj", "/CN=127.0.0.1")
    extensions = folder / "ext.cnf"
    extensions.write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                          "extendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
        "-CAcreateserial", "-out", str(cert), "-days", "2", "-extfile", str(extensions))
    return ca, cert, key


@contextlib.contextmanager
def private_index(folder: Path, cert: Path, key: Path) -> Iterator[tuple[str, list[str]]]:
    """A PEP 503 index of the wheels in `folder` on https://127.0.0.1:<port>/simple/; yields
    its URL and the list of paths it was asked for."""
    asked: list[str] = []
    wheels = sorted(folder.glob("*.whl"))

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            asked.append(self.path)
            if self.path.rstrip("/") == f"/simple/{NAME}":
                links = "".join(
                    f'<a href="/files/{w.name}#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}">'
                    f"{w.name}</a>\n" for w in wheels)
                body, kind = f"<html><body>{links}</body></html>".encode(), "text/html"
            elif self.path.startswith("/files/") and (folder / self.path[7:]).is_file():
                body, kind = (folder / self.path[7:]).read_bytes(), "application/octet-stream"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_HEAD(self) -> None:  # noqa: N802 - uv asks for a wheel's size first
            self.do_GET()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/simple/", asked
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def setting(tmp_path):
    """The private index up, pip configured for it, a bare environment to install into."""
    uv = Path(sys.executable).parent / "uv"
    if not uv.exists():
        uv = Path(shutil.which("uv") or "")
    if not uv.is_file():
        pytest.skip("no uv binary in this environment to install with")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for version in VERSIONS:
        make_wheel(wheels, version)
    ca, cert, key = make_certificates(tmp_path)
    with private_index(wheels, cert, key) as (url, asked):
        constraints = tmp_path / "constraints.txt"
        constraints.write_text(f"{NAME}<0.2\n")
        conf = tmp_path / "pip.conf"
        conf.write_text(f"[global]\nindex-url = {url}\ncert = {ca}\nconstraint = {constraints}\n"
                        "no-cache-dir = true\n")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PIP_", "UV_", "SSL_", "REQUESTS_", "CURL_"))
               and "proxy" not in k.lower()}
        env |= {"PIP_CONFIG_FILE": str(conf), "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
                "NO_PROXY": "127.0.0.1", "INSTALLER": ""}
        target = tmp_path / "target"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
        python = target / "bin" / "python"
        site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                   capture_output=True, text=True, check=True).stdout.strip())
        # this environment's pip, importable there, installs into the target environment
        pip_home = Path(subprocess.run([sys.executable, "-c", "import pip, os; print(os.path.dirname(os.path.dirname(pip.__file__)))"],
                                       capture_output=True, text=True, check=True).stdout.strip())
        (site / "borrowed_pip.pth").write_text(f"{pip_home}\n")
        yield {"python": python, "uv": uv, "env": env, "url": url, "asked": asked, "site": site}


def installed_version(site: Path) -> str | None:
    found = sorted(site.glob(f"{MODULE}-*.dist-info"))
    return found[0].name.removesuffix(".dist-info").split("-")[1] if found else None


def test_uv_alone_cannot_reach_the_private_index(setting):
    """The control: without pip's certificate bundle uv refuses the server."""
    done = subprocess.run([str(setting["uv"]), "pip", "install", "--python", str(setting["python"]),
                           "--index-url", setting["url"], NAME], capture_output=True, text=True,
                          env=setting["env"], timeout=120)
    assert done.returncode != 0
    assert "certificate" in (done.stdout + done.stderr).lower(), done.stderr[-800:]
    assert installed_version(setting["site"]) is None


def test_uv_installs_from_the_index_pip_is_configured_with(setting):
    (setting["python"].parent / "uv").symlink_to(setting["uv"])
    done = subprocess.run([sys.executable, str(SCRIPT), "--python", str(setting["python"]), NAME],
                          capture_output=True, text=True, env=setting["env"], timeout=180)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "uv gets pip's settings" in done.stdout and "uv failed" not in done.stdout
    assert f"/simple/{NAME}/" in setting["asked"]
    assert installed_version(setting["site"]) == "0.1", "the constraint in pip.conf was not kept"


def test_when_uv_fails_its_reason_is_one_line_and_pip_installs_with_progress(setting, tmp_path):
    fake = setting["python"].parent / "uv"
    fake.write_text("#!/bin/sh\necho 'error: Failed to fetch: `https://example/simple/x/`' >&2\n"
                    "echo '  Caused by: invalid peer certificate: UnknownIssuer' >&2\nexit 2\n")
    fake.chmod(0o755)
    done = subprocess.run([sys.executable, str(SCRIPT), "--python", str(setting["python"]), NAME],
                          capture_output=True, text=True, env=setting["env"], timeout=180)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "uv failed (exit 2): invalid peer certificate: UnknownIssuer\n" in done.stdout
    assert " -q" not in done.stdout and f"Collecting {NAME}" in done.stdout  # pip's progress
    assert installed_version(setting["site"]) == "0.1"
    assert any(path.startswith("/files/") for path in setting["asked"])
