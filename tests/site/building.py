"""Build the course website once per test session, and read what it holds.

tests/site and tests/browser both look at one build: from the repository, into a temporary
folder, so `site/` in a checkout is never touched. The HTML checks are plain functions, so
tests can show that each of them catches what it is for.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.paths import ROOT

_BUILT: dict[str, object] = {}

# Attributes that make a browser fetch something when the page loads (not a click).
RESOURCE_ATTRS = {
    "script": ("src",), "link": ("href",), "img": ("src", "srcset"), "source": ("src", "srcset"),
    "iframe": ("src",), "embed": ("src",), "object": ("data",), "video": ("src", "poster"),
    "audio": ("src",), "track": ("src",), "input": ("src",), "image": ("href", "xlink:href"),
    "use": ("href", "xlink:href"), "feimage": ("href", "xlink:href"),
}
EXTERNAL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.I)
CSS_URL = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])\s*((?:[a-z][a-z0-9+.-]*:)?//[^'")\s]+)""", re.I)


def build_script():
    """scripts/build_site.py as a module (scripts/ is not a package)."""
    if "build_site" in sys.modules:
        return sys.modules["build_site"]
    spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_site"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def built_site(tmp_path_factory) -> tuple[Path, dict]:
    """(site folder, build report) of the one build of this session."""
    pytest.importorskip("myst_nb", reason="the site tools are missing: pip install -e '.[site]'")
    if "site" not in _BUILT:
        base = tmp_path_factory.mktemp("site_build")
        report = build_script().build(ROOT, out=base / "site", work=base / "work")
        _BUILT["site"] = (base / "site", report)
    return _BUILT["site"]


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.resources: list[tuple[str, str]] = []  # (tag, url)
        self.links: list[str] = []                  # <a href>
        self.ids: set[str] = set()
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        tag = tag.lower()
        values = {k.lower(): v or "" for k, v in attrs}
        for key in ("id", "name"):
            if key in values and (key == "id" or tag == "a"):
                self.ids.add(values[key])
        if tag == "a" and "href" in values:
            self.links.append(values["href"])
        for attr in RESOURCE_ATTRS.get(tag, ()):
            if attr in values:
                for url in (values[attr].split(",") if attr == "srcset" else [values[attr]]):
                    self.resources.append((tag, url.strip().split(" ")[0]))
        if "style" in values:
            self.styles.append(values["style"])
        self._in_style = tag == "style"

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)


def parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


def external_resources(text: str, css: bool = False) -> list[str]:
    """What a page (or, with css=True, a style sheet) would load from another host.

    The rule: no script, style, font, image or frame from another host, in a tag or a CSS
    url()/@import. Hyperlinks (<a href>: Binder, Colab) load nothing until clicked and are allowed.
    """
    if css:
        return CSS_URL.findall(text)
    page = parse(text)
    found = [f"<{tag}> {url}" for tag, url in page.resources if EXTERNAL.match(url)]
    for style in page.styles:
        found += [f"style {url}" for url in CSS_URL.findall(style)]
    return found


def broken_links(site: Path) -> list[str]:
    """Every internal link or resource of every page that points at no file, or at an id the
    target page does not have. The theme's Jinja macro files under _static/ (copied as they
    are, `{{ ... }}` and all) are not pages and are not followed."""
    pages = {p: parse(p.read_text(encoding="utf-8")) for p in site.rglob("*.html")
             if "_static" not in p.relative_to(site).parts}
    broken = []
    for page_path, page in pages.items():
        urls = page.links + [url for _, url in page.resources]
        for url in urls:
            if not url or EXTERNAL.match(url) or url.startswith(("mailto:", "data:", "javascript:")):
                continue
            parts = urllib.parse.urlsplit(url)
            target = (page_path.parent / urllib.parse.unquote(parts.path)).resolve() if parts.path else page_path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page_path.name}: {url} (no such file)")
                continue
            fragment = urllib.parse.unquote(parts.fragment)
            if fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target.read_text("utf-8")).ids
                if fragment not in ids:
                    broken.append(f"{page_path.name}: {url} (no id {fragment!r} there)")
    return broken
