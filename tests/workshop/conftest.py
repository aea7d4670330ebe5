"""A real JupyterHub on loopback for the workshop tests, started once per module.

Skipped (with the reason) where the workshop is not installed: `make workshop` installs
jupyterhub (the `workshop` extra) and configurable-http-proxy (npm, into workshop/).
"""

import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workshop"))
PROXY = ROOT / "workshop" / "node_modules" / ".bin" / "configurable-http-proxy"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    pytest.importorskip("jupyterhub", reason="the workshop extra is not installed (make workshop)")
    if not PROXY.exists():
        pytest.skip("configurable-http-proxy is not installed in workshop/ (make workshop)")
    from hubclient import Hub

    with Hub.start(tmp_path_factory.mktemp("workshop"), cull_kernel_s=6) as running:
        yield running
