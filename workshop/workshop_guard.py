"""A Jupyter server extension every learner's server loads: it keeps links and paths in the home.

Why: a learner's server acts for that learner, so a link someone else crafted (a chat message,
a page) must not make it write outside the learner's home or clone an arbitrary repository,
and the contents API must not read or write through a symlink that leads out of the home (the
`/files/` handler already refuses those). In system mode the OS refuses most of it anyway
(other homes are mode 700); this closes it in the web layer too, and in shared mode it is the
only barrier.

- nbgitpuller (`/git-pull`, `/git-pull/api`): `targetpath` must be relative, without `..`,
  and stay inside the home once symlinks are resolved; `repo` must be on the instructor's
  allowlist (WORKSHOP_PULL_REPOS, space-separated, set by the hub); `file://` and local
  paths are refused. A refusal is a 403 with a sentence saying why, on the learner's page.
- contents API: a path whose real location is outside the home is a 403.

Loaded through `jpserver_extensions` in the course's server settings (jupyterhub_config.py);
importable because the hub puts this folder first on the learner's PYTHONPATH, from a copy
the learner cannot write.
"""

from __future__ import annotations

import html
import json
import os
import posixpath
import urllib.parse

from tornado.web import HTTPError

ALLOW_ENV = "WORKSHOP_PULL_REPOS"


def _inside(path: str, root: str) -> bool:
    real, home = os.path.realpath(path), os.path.realpath(root)
    return real == home or real.startswith(home.rstrip(os.sep) + os.sep)


def normalize_repo(url: str) -> str:
    """A repository URL as compared against the allowlist (no trailing slash or .git)."""
    url = url.strip().rstrip("/")
    return url[:-4] if url.endswith(".git") else url


def pull_refusal(repo: str, targetpath: str | None, root: str) -> str | None:
    """Why this pull is refused (a sentence for the learner), or None when it may go ahead."""
    parts = urllib.parse.urlsplit(repo)
    if parts.scheme in ("", "file") or repo.startswith(("/", ".", "~")):
        return ("nbgitpuller links may not pull from a local path or a file:// URL "
                f"({repo!r}); ask the instructor for the course link.")
    allowed = {normalize_repo(r) for r in os.environ.get(ALLOW_ENV, "").split() if r}
    if normalize_repo(repo) not in allowed:
        return (f"this workshop pulls only the instructor's course repository; {repo!r} is not "
                "on its list (WORKSHOP_PULL_REPOS).")
    target = targetpath if targetpath is not None else repo.rstrip("/").split("/")[-1]
    if not target or os.path.isabs(target) or ".." in target.replace("\\", "/").split("/"):
        return f"the target folder {target!r} must be a folder inside your home, without '..'."
    if not _inside(os.path.join(root, posixpath.normpath(target)), root):
        return f"the target folder {target!r} leads outside your home (a symlink)."
    return None


def _patch_nbgitpuller(root: str) -> None:
    from nbgitpuller import handlers

    def arguments(handler: object) -> tuple[str, str | None]:
        repo = handler.get_argument("repo", "")
        target = handler.get_argument("targetpath", None) or handler.get_argument("targetPath", None)
        return repo, target

    original_sync, original_ui = handlers.SyncHandler.get, handlers.UIHandler.get

    async def sync_get(self: object) -> None:
        why = pull_refusal(*arguments(self), root)
        if why:
            self.log.warning("workshop: refused a pull: %s", why)
            self.set_status(403)
            self.set_header("content-type", "text/event-stream")
            self.finish("data: " + json.dumps({"phase": "error", "message": why}) + "\n\n")
            return
        await original_sync(self)

    async def ui_get(self: object) -> None:
        if self.current_user is None:           # not signed in: the stock handler redirects
            return await original_ui(self)
        why = pull_refusal(*arguments(self), root)
        if why:
            self.log.warning("workshop: refused a pull link: %s", why)
            self.set_status(403)
            self.finish("<!doctype html><title>Link refused</title><h1>This link was refused</h1>"
                        f"<p>{html.escape(why)}</p>")
            return
        await original_ui(self)

    handlers.SyncHandler.get, handlers.UIHandler.get = sync_get, ui_get


def _patch_contents() -> None:
    from jupyter_server.services.contents import fileio

    original = fileio.FileManagerMixin._get_os_path
    if getattr(original, "_workshop_guard", False):
        return

    def _get_os_path(self: object, path: str) -> str:
        os_path = original(self, path)
        if not _inside(os_path, self.root_dir):
            raise HTTPError(403, f"{path} leads outside your home (a symlink); refused")
        return os_path

    _get_os_path._workshop_guard = True
    fileio.FileManagerMixin._get_os_path = _get_os_path


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "workshop_guard"}]


def _load_jupyter_server_extension(serverapp: object) -> None:
    root = os.path.expanduser(serverapp.root_dir)
    _patch_contents()
    _patch_nbgitpuller(root)
    serverapp.log.info("workshop guard: pulls limited to %s, paths kept inside %s",
                       os.environ.get(ALLOW_ENV, "(none)"), root)
