"""Install packages into the course's environment with uv where uv can be had, pip otherwise.

Why: on a fresh 2-core machine, pip spent about 70 s of `make test`'s set-up installing the
extras (one core busy, resolving, unpacking and byte-compiling one package after another); uv
installs the same packages at the same versions (it resolves to the newest release that fits,
as pip does) in about 15 s. uv comes from the package index into the environment itself, so
nothing is installed outside `.venv`; where it cannot be had (an index without it, no route to
one), pip does the work as before. INSTALLER=pip (or --installer pip) asks for pip.

uv reads none of pip's configuration, so the wheel folders a machine gives pip (PIP_FIND_LINKS,
`find-links` in pip.conf: on our build machines the torch wheel lies in one) are passed to uv as
--find-links. uv writes no byte code: modules are compiled when first imported (the Makefile
compiles torch's beside the install, before the test workers import it at once).

    python scripts/pip_install.py --python .venv/bin/python -e ".[lab]"
    python scripts/pip_install.py --python .venv/bin/python --dry-run torch==2.13.0
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

INSTALLERS = ("auto", "uv", "pip")
# uv hard-links from its cache where it can and warns where it cannot (another file system);
# copying is what pip does.
INSTALL_ENV = {**os.environ, "UV_LINK_MODE": os.environ.get("UV_LINK_MODE", "copy")}
UV_SPEC = "uv>=0.5"


def uv_beside(python: str) -> Path:
    """Where the environment's own uv lives: next to its python."""
    return Path(python).parent / "uv"


def ensure_uv(python: str) -> Path | None:
    """The environment's uv, installed there with its pip if missing; None when pip cannot get
    it (the reason is printed, and the caller falls back to pip)."""
    uv = uv_beside(python)
    if uv.exists():
        return uv
    done = subprocess.run([python, "-m", "pip", "install", "--disable-pip-version-check", "-q",
                           UV_SPEC], capture_output=True, text=True)
    if done.returncode == 0 and uv.exists():
        return uv
    reason = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no uv after installing"]
    print(f"install: uv could not be installed ({reason[0]}); pip installs instead")
    return None


def pip_find_links(python: str) -> list[str]:
    """The wheel folders pip is configured with: PIP_FIND_LINKS, then pip.conf's find-links."""
    links = os.environ.get("PIP_FIND_LINKS", "").split()
    conf = subprocess.run([python, "-m", "pip", "config", "get", "global.find-links"],
                          capture_output=True, text=True)
    if conf.returncode == 0:
        links += conf.stdout.split()
    return list(dict.fromkeys(links))


def pip_command(python: str, packages: list[str]) -> list[str]:
    return [python, "-m", "pip", "install", "--disable-pip-version-check", "-q", *packages]


def uv_command(uv: Path, python: str, packages: list[str], find_links: list[str]) -> list[str]:
    links = [arg for link in find_links for arg in ("--find-links", link)]
    return [str(uv), "pip", "install", "--quiet", "--python", python, *links, *packages]


def chosen_installer() -> str:
    """INSTALLER, else auto."""
    return os.environ.get("INSTALLER") or "auto"


def install_command(python: str, packages: list[str], installer: str | None = None,
                    dry_run: bool = False) -> list[str]:
    """The command that installs `packages` (pip's arguments: specs, -e, --index-url) into the
    environment of `python`. A dry run installs nothing: it names uv only if uv is there."""
    installer = installer or chosen_installer()
    if installer not in INSTALLERS:
        raise ValueError(f"installer must be one of {INSTALLERS}, not {installer!r}")
    if installer == "pip":
        return pip_command(python, packages)
    uv = uv_beside(python) if dry_run else ensure_uv(python)
    if uv is None or not uv.exists():
        if installer == "uv" and not dry_run:
            raise SystemExit("install: INSTALLER=uv, but uv could not be installed")
        return pip_command(python, packages)
    return uv_command(uv, python, packages, pip_find_links(python))


def install(python: str, packages: list[str], installer: str | None = None) -> int:
    """Install `packages`; when uv fails (it ignores pip's proxy, certificate and mirror
    settings, which a machine may need), pip tries the same once more. pip's exit code."""
    installer = installer or chosen_installer()
    command = install_command(python, packages, installer)
    print("install: " + " ".join(command))
    done = subprocess.run(command, env=INSTALL_ENV)
    if done.returncode != 0 and command[0] != python and installer != "uv":
        print(f"install: uv failed (exit {done.returncode}); pip tries the same")
        done = subprocess.run(pip_command(python, packages))
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the environment's python")
    parser.add_argument("--installer", default=chosen_installer(),
                        help=f"one of {', '.join(INSTALLERS)} (default: INSTALLER, else auto)")
    parser.add_argument("--dry-run", action="store_true", help="print the command only")
    args, packages = parser.parse_known_args(argv)
    if args.installer not in INSTALLERS:
        parser.error(f"the installer must be one of {', '.join(INSTALLERS)}, not {args.installer!r}")
    if not packages:
        parser.error("name what to install (pip's arguments)")
    if args.dry_run:
        print("install: " + " ".join(install_command(args.python, packages, args.installer, True)))
        return 0
    return install(args.python, packages, args.installer)


if __name__ == "__main__":
    sys.exit(main())
