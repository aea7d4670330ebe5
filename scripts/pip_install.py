"""Install packages into the course's environment with uv where uv can be had, pip otherwise.

Why: on a fresh 2-core machine, pip spent about 70 s of `make test`'s set-up installing the
extras (one core busy, resolving, unpacking and byte-compiling one package after another); uv
installs the same packages at the same versions (it resolves to the newest release that fits,
as pip does) in about 15 s. uv comes from the package index into the environment itself, so
nothing is installed outside `.venv`; where it cannot be had (an index without it, no route to
one), pip does the work as before. INSTALLER=pip (or --installer pip) asks for pip.

uv reads none of pip's configuration, and a machine may need it: a certificate bundle (`cert` in
pip.conf: uv failed with "invalid peer certificate: UnknownIssuer" where pip worked), a mirror
(index-url, extra-index-url), wheel folders (find-links: on our build machines the torch wheel
lies in one), constraints, a proxy, trusted hosts. The settings pip would use for `install`
(`pip config list`: PIP_* variables over pip.conf's [install] over its [global]) are handed to
uv: the certificate bundle as SSL_CERT_FILE, the indexes, constraints and trusted hosts as uv's
own variables (so an --index-url in the arguments still wins, as with pip), wheel folders as
--find-links, the proxy as HTTPS_PROXY/HTTP_PROXY; with extra indexes uv picks the best match
across them, as pip does. The set-up prints which settings uv got. When uv still fails, its
reason is printed in one line and pip installs the same, showing each download as it goes.
uv writes no byte code: modules are compiled when first imported (the Makefile compiles
torch's beside the install, before the test workers import it at once).

    python scripts/pip_install.py --python .venv/bin/python -e ".[lab]"
    python scripts/pip_install.py --python .venv/bin/python --dry-run torch==2.13.0
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

INSTALLERS = ("auto", "uv", "pip")
# uv hard-links from its cache where it can and warns where it cannot (another file system);
# copying is what pip does (uv_environment sets UV_LINK_MODE=copy unless it is set).
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


# pip's settings that uv needs too, and what becomes of each (a variable uv reads, or None
# where it is handled apart: find-links become arguments, the proxy two variables).
PIP_TO_UV = {
    "cert": "SSL_CERT_FILE",
    "client-cert": "SSL_CLIENT_CERT",
    "index-url": "UV_DEFAULT_INDEX",
    "extra-index-url": "UV_INDEX",
    "constraint": "UV_CONSTRAINT",
    "trusted-host": "UV_INSECURE_HOST",
    "no-index": "UV_NO_INDEX",
    "find-links": None,
    "proxy": None,
}
# pip's own progress is what the learner watches while pip installs (no -q): each package as
# it is collected and each download with its size.
PIP_ARGS = ("install", "--disable-pip-version-check")


def pip_settings(python: str) -> dict[str, str]:
    """The settings pip would use for `install`, for the keys uv needs (PIP_TO_UV): a PIP_*
    variable over pip.conf's [install] over its [global], as pip reads them."""
    listed = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True,
                            text=True)
    found: dict[str, dict[str, str]] = {}
    for line in listed.stdout.splitlines() if listed.returncode == 0 else []:
        name, sep, value = line.partition("=")
        section, dot, key = name.rpartition(".")
        if not sep or not dot or key not in PIP_TO_UV:
            continue
        try:
            text = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            text = value.strip("'\"")
        found.setdefault(key, {})[section] = str(text)
    settings = {}
    for key, by_section in found.items():
        for section in (":env:", "install", "global"):
            if section in by_section:
                settings[key] = by_section[section]
                break
    env_links = os.environ.get("PIP_FIND_LINKS", "").split()  # always, as before
    links = env_links + settings.get("find-links", "").split()
    if links:
        settings["find-links"] = " ".join(dict.fromkeys(links))
    return settings


def uv_environment(settings: dict[str, str], base: dict[str, str] | None = None) -> dict[str, str]:
    """uv's environment: `base` (os.environ) with pip's settings in the variables uv reads."""
    env = dict(os.environ if base is None else base)
    env.setdefault("UV_LINK_MODE", "copy")
    for key, value in settings.items():
        variable = PIP_TO_UV.get(key)
        if variable == "UV_NO_INDEX":
            if value.lower() in ("1", "true", "yes", "on"):
                env[variable] = "1"
        elif variable:
            env[variable] = " ".join(value.split()) if variable != "SSL_CERT_FILE" else value
    if "extra-index-url" in settings:
        env.setdefault("UV_INDEX_STRATEGY", "unsafe-best-match")  # pip's choice across indexes
    if "proxy" in settings:
        env.setdefault("HTTPS_PROXY", settings["proxy"])
        env.setdefault("HTTP_PROXY", settings["proxy"])
    return env


def pip_command(python: str, packages: list[str]) -> list[str]:
    return [python, "-m", "pip", *PIP_ARGS, *packages]


def uv_command(uv: Path, python: str, packages: list[str], find_links: list[str]) -> list[str]:
    links = [arg for link in find_links for arg in ("--find-links", link)]
    return [str(uv), "pip", "install", "--python", python, *links, *packages]


def chosen_installer() -> str:
    """INSTALLER, else auto."""
    return os.environ.get("INSTALLER") or "auto"


def install_command(python: str, packages: list[str], installer: str | None = None,
                    dry_run: bool = False, settings: dict[str, str] | None = None) -> list[str]:
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
    settings = pip_settings(python) if settings is None else settings
    return uv_command(uv, python, packages, settings.get("find-links", "").split())


def uv_reason(output: str) -> str:
    """uv's reason for failing, in one line: its innermost cause ('Caused by:', or 'cause:'
    since uv 0.9), else its 'error:' line, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    causes = [line.split(":", 1)[1].strip() for line in lines
              if line.startswith(("Caused by:", "cause:"))]
    if causes:
        return causes[-1]
    errors = [line.removeprefix("error:").strip() for line in lines if line.startswith("error:")]
    return errors[0] if errors else (lines[-1] if lines else "no message")


def run_showing(command: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run `command`, its output shown as it comes; the exit code and the output."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, errors="replace")
    seen = []
    assert process.stdout is not None
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        seen.append(line)
    return process.wait(), "".join(seen)


def redact(value: str) -> str:
    """A setting as it may be printed: a password in a URL (a proxy's, a mirror's) hidden."""
    return re.sub(r"//[^/@\s]+@", "//***@", value)


def say(text: str) -> None:
    """A line of the set-up's own, shown before the output of the command that follows it."""
    print(text, flush=True)


def install(python: str, packages: list[str], installer: str | None = None) -> int:
    """Install `packages`; when uv fails, pip tries the same once more, its progress shown.
    pip's exit code (uv's where INSTALLER=uv)."""
    installer = installer or chosen_installer()
    settings = pip_settings(python) if installer != "pip" else {}
    command = install_command(python, packages, installer, settings=settings)
    say("install: " + " ".join(command))
    if command[0] == python:
        return subprocess.run(command).returncode
    given = sorted(key for key in settings if key != "find-links")
    if given:
        say("install: uv gets pip's settings: " + ", ".join(
            f"{key}={redact(settings[key])}" for key in given))
    returncode, output = run_showing(command, uv_environment(settings))
    if returncode != 0:
        say(f"install: uv failed (exit {returncode}): {uv_reason(output)}")
    if returncode != 0 and installer != "uv":
        say("install: pip installs the same instead; pip is slower (minutes where uv takes "
            "seconds) and shows each package as it fetches it, downloads with their sizes")
        fallback = pip_command(python, packages)
        say("install: " + " ".join(fallback))
        returncode = subprocess.run(fallback).returncode
    return returncode


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
