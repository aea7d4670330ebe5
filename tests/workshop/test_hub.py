"""Nobody in another's space: two learners, their servers, files and kernels, and the admin.

A real JupyterHub (workshop/jupyterhub_config.py) on 127.0.0.1 with the real proxy; every
request goes through the hub's public port as a browser's or a client's would.
"""

import contextlib
import os
import pathlib
import stat

import pytest
import requests

pytestmark = pytest.mark.workshop

DENIED = (403, 404)


@pytest.fixture(scope="module")
def learners(hub):
    alice = hub.sign_in("alice", "alice-password")
    bob = hub.sign_in("bob", "bob-password")
    alice.start_server()
    bob.start_server()
    return alice, bob


def test_each_learner_runs_a_cell_in_their_own_home(learners):
    for learner in learners:
        result = learner.run_cell("import os, labkit; print(6 * 7); print(os.getcwd()); "
                                  "print(labkit.__file__)")
        assert result.status == "ok", result.error
        answer, cwd, labkit_file = result.stdout.split()
        assert answer == "42"
        assert cwd == str(learner.hub.home_of(learner.name))
        assert labkit_file.startswith(cwd + "/course/"), "labkit must come from the learner's copy"


def test_each_learner_has_their_own_copy_of_the_course(learners):
    alice, bob = learners
    alice.request("PUT", alice.server("api/contents/course/mine.txt"),
                  json={"type": "file", "format": "text", "content": "alice's"}).raise_for_status()
    listed = alice.request("GET", alice.server("api/contents/course/notebooks")).json()
    assert any(item["name"] == "01_strides_and_views.py" for item in listed["content"])
    assert bob.request("GET", bob.server("api/contents/course/mine.txt")).status_code == 404


def test_a_learner_cannot_reach_another_learners_server_files_or_kernels(learners):
    alice, bob = learners
    kernel = alice.new_kernel("private.ipynb")
    attempts = {
        "contents": bob.request("GET", bob.server("api/contents/course", owner="alice")),
        "a file": bob.request("GET", bob.server("api/contents/course/mine.txt", owner="alice")),
        "kernels": bob.request("GET", bob.server("api/kernels", owner="alice")),
        "a kernel": bob.request("GET", bob.server(f"api/kernels/{kernel}", owner="alice")),
        "new kernel": bob.request("POST", bob.server("api/kernels", owner="alice"), json={}),
        "sessions": bob.request("GET", bob.server("api/sessions", owner="alice")),
        "the hub's record": bob.request("GET", "/hub/api/users/alice"),
        "starting it": bob.request("POST", "/hub/api/users/alice/server"),
        "stopping it": bob.request("DELETE", "/hub/api/users/alice/server"),
        "a token": bob.request("POST", "/hub/api/users/alice/tokens", json={}),
    }
    let_in = {what: r.status_code for what, r in attempts.items() if r.status_code not in DENIED}
    assert not let_in, f"bob reached alice's {let_in}"
    # The same reads with alice's own token succeed: the refusals are about bob, not the URLs.
    for path in ("api/contents/course", "api/contents/course/mine.txt", "api/kernels",
                 f"api/kernels/{kernel}", "api/sessions"):
        assert alice.request("GET", alice.server(path)).status_code == 200, path
    assert alice.request("GET", "/hub/api/users/alice").status_code == 200
    # A browser signed in as bob (cookies, no token) is not let into alice's server either.
    page = bob.session.get(alice.hub.url + "/user/alice/api/contents/course",
                           allow_redirects=True, timeout=30)
    assert not (page.ok and page.headers.get("Content-Type", "").startswith("application/json")), \
        f"bob's browser read alice's files ({page.status_code} {page.url})"
    # Nor is bob's token accepted on alice's kernel's websocket.
    import websocket

    with pytest.raises(websocket.WebSocketBadStatusException) as refused, \
            bob.channels(kernel, owner="alice"):
        pass
    assert refused.value.status_code in DENIED


def test_listing_users_shows_a_learner_only_themselves(learners):
    alice, _ = learners
    response = alice.request("GET", "/hub/api/users")
    names = [u["name"] for u in response.json()] if response.status_code == 200 else []
    assert response.status_code in DENIED or names == ["alice"]


def test_the_admin_can_reach_a_learners_server(hub, learners):
    alice, _ = learners
    admin = hub.sign_in_admin()
    assert admin.request("GET", admin.server("api/contents/course", owner="alice")).status_code == 200
    assert admin.request("GET", admin.server("api/kernels", owner="alice")).status_code == 200
    names = {u["name"] for u in admin.request("GET", "/hub/api/users").json()}
    assert {"alice", "bob", "instructor"} <= names
    if hub.system_users:      # the instructor gets an OS account only by starting a server
        import pwd

        with pytest.raises(KeyError):
            pwd.getpwnam(hub.os_user(hub.admin))


def test_sign_in_rules(hub, learners):
    with pytest.raises(PermissionError):
        hub.sign_in("carol", "carol-password", code="not-the-code")    # wrong workshop code
    with pytest.raises(PermissionError):
        hub.sign_in("alice", "bob-guesses", code=hub.code)             # the code opens no name
    with pytest.raises(PermissionError):
        hub.sign_in(hub.admin, "wrong", code="")
    with pytest.raises(PermissionError):
        hub.sign_in("dave", "short", code=hub.code)                     # too short a password
    assert hub.sign_in("alice", "alice-password", code="").name == "alice"  # own password suffices


def test_the_hub_listens_on_loopback_only(hub):
    assert hub.url.startswith("http://127.0.0.1:")
    port = int(hub.url.rsplit(":", 1)[1])
    import socket

    outward = [a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
               if not a[4][0].startswith("127.")]
    for address in outward:
        with contextlib.suppress(OSError), pytest.raises(requests.ConnectionError):
            requests.get(f"http://{address}:{port}/hub/api", timeout=3)


def test_an_idle_kernel_is_culled(hub, learners):
    from hubclient import wait_for

    alice, _ = learners
    kernel = alice.new_kernel("idle.ipynb")
    assert alice.run_cell("x = 1", kernel).status == "ok"
    wait_for(f"alice's idle kernel {kernel} to be culled (cull after 6 s)",
             lambda: kernel not in {k["id"] for k in alice.kernels()}, timeout_s=90, every_s=1,
             log=hub.log_tail)


def test_a_chapter_opens_as_a_notebook(learners):
    """Jupytext in each learner's server: the .py chapter comes back as notebook cells."""
    alice, _ = learners
    model = alice.request("GET", alice.server("api/contents/course/notebooks/01_strides_and_views.py"),
                          params={"type": "notebook", "content": 1})
    assert model.status_code == 200, model.text
    cells = model.json()["content"]["cells"]
    assert {"markdown", "code"} <= {c["cell_type"] for c in cells}
    listing = alice.request("GET", alice.server("api/contents/course/notebooks")).json()["content"]
    assert not any(item["name"].endswith(".ipynb") for item in listing), "the .ipynb twin is hidden"


def test_the_course_link_pulls_into_the_learners_own_space(learners, course_repo):
    """nbgitpuller, as the workshop link drives it, clones the course repo into ~/pulled."""
    alice, bob = learners
    alice.pull_course(course_repo, "main", "pulled")
    pulled = alice.request("GET", alice.server("api/contents/pulled/notebooks/00_setup_check.py"))
    assert pulled.status_code == 200
    assert bob.request("GET", bob.server("api/contents/pulled")).status_code == 404


def test_each_learner_is_their_own_os_user_in_system_mode(hub, learners):
    """System mode (the tests run as root): server and kernels run as <prefix><name>, home 700,
    no login shell, no group but their own; shared mode: the hub's own user, never root."""
    import grp
    import pwd

    for learner in learners:
        result = learner.run_cell("import os; print(os.geteuid(), os.getegid(), *os.getgroups())")
        assert result.status == "ok", result.error
        uid, gid, *groups = map(int, result.stdout.split())
        assert uid != 0, "a learner's kernel runs as root"
        if not hub.system_users:
            assert uid == os.geteuid()
            continue
        entry = pwd.getpwnam(hub.os_user(learner.name))
        assert (uid, gid) == (entry.pw_uid, entry.pw_gid)
        assert set(groups) <= {gid}, f"{learner.name} is in other groups: {groups}"
        assert grp.getgrgid(gid).gr_name == entry.pw_name and grp.getgrgid(gid).gr_mem == []
        assert entry.pw_shell == "/usr/sbin/nologin"
        assert stat.S_IMODE(pathlib.Path(entry.pw_dir).stat().st_mode) == 0o700
        assert not any(entry.pw_name in g.gr_mem for g in grp.getgrall()), "a supplementary group"
        # Their temporary files go to a folder of their own, not the shared /tmp.
        tmp = learner.run_cell("import tempfile; print(tempfile.gettempdir())").stdout.strip()
        assert pathlib.Path(tmp).parent == pathlib.Path(entry.pw_dir)
        assert stat.S_IMODE(pathlib.Path(tmp).stat().st_mode) == 0o700
