"""The course website builds from the repository with no warning, loads nothing from another
host, has no broken internal link, and shows every chapter with its outputs.

One build (about 30 s on a 2-core machine) serves every test here and tests/browser's site test.
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from tests.paths import ROOT
from tests.site.building import (
    broken_links,
    build_script,
    built_site,
    external_resources,
    parse,
)

pytestmark = [
    pytest.mark.site,
    # The theme and myst-parser still call Sphinx APIs that Sphinx 11 will remove.
    pytest.mark.filterwarnings("ignore:.*is deprecated. Check CHANGES for Sphinx API"),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return built_site(tmp_path_factory)


def chapter_keys() -> list[str]:
    return sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


def shown_notebook(key: str) -> nbformat.NotebookNode:
    reference = ROOT / "results" / "h200_notebooks" / f"{key}.ipynb"
    path = reference if reference.exists() else ROOT / "notebooks" / f"{key}.ipynb"
    return nbformat.read(path, as_version=4)


def test_the_build_has_no_warning_and_a_page_per_chapter(site):
    folder, report = site
    # build() raises on any Sphinx warning (-W); reaching here means there was none.
    assert report["chapters"] == chapter_keys()
    for key in chapter_keys():
        assert (folder / f"{key}.html").exists(), key
    assert (folder / "index.html").exists() and (folder / "search.html").exists()
    print(f"site: {report['pages']} pages, {report['bytes'] / 2**20:.1f} MiB, {report['seconds']:.0f} s")


def test_no_page_or_style_sheet_loads_from_another_host(site):
    folder, _ = site
    found = []
    for page in folder.rglob("*.html"):
        found += [f"{page.relative_to(folder)}: {r}" for r in external_resources(page.read_text("utf-8"))]
    for sheet in folder.rglob("*.css"):
        found += [f"{sheet.relative_to(folder)}: {r}" for r in external_resources(sheet.read_text("utf-8"), css=True)]
    for picture in (folder / "_images").glob("*.svg"):
        found += [f"{picture.name}: {r}" for r in external_resources(picture.read_text("utf-8"))]
    assert not found, "the site would load these from another host:\n" + "\n".join(found)


def test_no_internal_link_is_broken(site):
    folder, _ = site
    broken = broken_links(folder)
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("key", chapter_keys())
def test_each_chapter_page_shows_its_outputs_and_says_who_ran_it(site, key):
    folder, _ = site
    text = (folder / f"{key}.html").read_text("utf-8")
    notebook = shown_notebook(key)
    cells_with_output = [c for c in notebook.cells if c.cell_type == "code" and c.get("outputs")]
    pictures = sum(1 for c in cells_with_output for o in c.outputs
                   if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
                   and "image/svg+xml" in o["data"])
    assert text.count('class="cell_output') >= len(cells_with_output) > 0
    # Each widget shows its static picture (an <img> of the saved SVG), never a widget view.
    assert len(re.findall(r'<img[^>]+src="_images/[^"]+\.svg"', text)) >= pictures
    assert "application/vnd.jupyter.widget" not in text and "jupyter-widgets" not in text
    assert "Executed on" in text
    if (ROOT / "results" / "h200_notebooks" / f"{key}.ipynb").exists():
        fingerprint = json.loads((ROOT / "results" / "nvidia-h200.json").read_text())["fingerprint"]
        assert fingerprint["gpu_name"] in text and fingerprint["torch"] in text
    assert re.search(r"about \d+ minutes", text)
    assert "Before this chapter" in text
    links = parse(text).links
    assert any(u.startswith("https://mybinder.org/v2/gh/") and f"{key}.ipynb" in u for u in links)
    assert any(u.startswith("https://colab.research.google.com/github/") and f"{key}.ipynb" in u for u in links)


def test_the_ledger_links_each_claim_to_the_section_that_judged_it(site):
    folder, _ = site
    text = (folder / "99_claims_ledger.html").read_text("utf-8")
    claim_cells = re.findall(r"<td>(?:<a href='([^']*)'>)?(C\d+[a-z]?)(?:</a>)?</td>", text)
    assert len(claim_cells) >= 20
    unlinked = [claim for href, claim in claim_cells if not href]
    assert not unlinked, f"claims without a link to their section: {unlinked}"
    # a claim links to the section that judged it wherever the page shown has that section;
    # only a claim the shown run did not judge (split or added after it) links the chapter page
    for href, claim in claim_cells:
        page = (folder / href.split("#")[0]).read_text("utf-8")
        anchor = f'id="claim-{claim.lower()}"'
        if "#claim-" in href:
            assert anchor in page, (claim, href)
        else:
            assert anchor not in page, f"{claim} links {href} although that page has its section"
    assert "Where each claim was measured" in text


def test_the_index_lists_every_chapter_with_its_minutes(site):
    folder, _ = site
    text = (folder / "index.html").read_text("utf-8")
    links = parse(text).links
    for key in chapter_keys():
        assert f"{key}.html" in links, key
    assert re.search(r"about \d+ minutes in all", text)


# The checks themselves must be able to fail.

def test_an_external_script_font_or_image_is_caught():
    page = ("<html><head><script src='https://cdn.example.org/x.js'></script>"
            "<link rel='stylesheet' href='//fonts.example.org/css'></head><body>"
            "<img src='http://example.org/a.png'><div style=\"background:url('https://e.org/b.png')\"></div>"
            "<a href='https://mybinder.org/v2/gh/a/b/main'>Binder</a></body></html>")
    found = external_resources(page)
    assert len(found) == 4 and not any("mybinder" in f for f in found)
    assert external_resources("@import url('https://fonts.example.org/x.css');", css=True)
    assert not external_resources("<svg xmlns='http://www.w3.org/2000/svg'><rect/></svg>")


def test_a_broken_link_or_missing_anchor_is_caught(tmp_path):
    (tmp_path / "a.html").write_text("<a href='b.html#here'>b</a> <a href='c.html'>c</a>"
                                     "<img src='_images/x.svg'> <a href='b.html#there'>b</a>")
    (tmp_path / "b.html").write_text("<section id='here'></section>")
    broken = broken_links(tmp_path)
    assert len(broken) == 3
    assert any("c.html" in b for b in broken) and any("'there'" in b for b in broken)


def test_a_chapter_without_minutes_stops_the_build_with_its_name(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "site_src").mkdir()
    for key in ("00_one", "01_two"):
        (tmp_path / "notebooks" / f"{key}.py").write_text("# %%\n")
    (tmp_path / "site_src" / "chapters.toml").write_text("[00_one]\nminutes = 20\nneeds = []\n")
    script = build_script()
    with pytest.raises(script.SiteError, match="01_two"):
        script.plan(tmp_path)


def test_a_sphinx_warning_fails_the_build(tmp_path):
    """A one-chapter course whose page has a broken cross-reference: the build must refuse it."""
    import shutil

    shutil.copytree(ROOT / "site_src", tmp_path / "site_src")
    (tmp_path / "site_src" / "chapters.toml").write_text("[00_one]\nminutes = 20\nneeds = []\n")
    (tmp_path / "README.md").write_text("https://mybinder.org/v2/gh/owner/repo/main?urlpath=lab\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "00_one.py").write_text("# %%\n")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 00 One\n\nSee {ref}`a-label-nobody-defined`."),
        nbformat.v4.new_code_cell("1 + 1", outputs=[nbformat.v4.new_output(
            "execute_result", {"text/plain": "2"}, execution_count=1)]),
    ])
    nbformat.write(notebook, tmp_path / "notebooks" / "00_one.ipynb")
    script = build_script()
    with pytest.raises(script.SiteError, match="a-label-nobody-defined"):
        script.build(tmp_path, out=tmp_path / "site", work=tmp_path / "work")
    assert not (tmp_path / "site").exists()


def test_chapter_minutes_are_computed_from_the_notebook_not_typed():
    """The site's minutes are scripts/chapter_minutes.py's estimate, rounded up, for every chapter
    with a recorded run time; site_src/chapters.toml types none."""
    import math

    import tomllib

    builder = build_script()
    typed = tomllib.loads((ROOT / "site_src" / "chapters.toml").read_text(encoding="utf-8"))
    assert not any("minutes" in row for row in typed.values())
    table = builder.plan(ROOT)
    estimator = builder._estimator()
    for key in chapter_keys():
        expected = math.ceil(estimator.estimate(ROOT / "notebooks" / f"{key}.py").core)
        assert table[key]["minutes"] == expected, key


def test_a_reference_run_of_an_earlier_revision_says_so(tmp_path):
    """A shown run whose cells differ from the current source is counted, not passed off."""
    builder = build_script()
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "00_one.py").write_text(
        "# %% [markdown]\n# # One\n\n# %%\nx = 1\n\n# %%\nprint('new cell')\n")
    shown = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# One"),
                                            nbformat.v4.new_code_cell("x = 1")])
    assert builder.changed_cells(tmp_path, "00_one", shown) == 1
    shown.cells.append(nbformat.v4.new_code_cell("print('new cell')"))
    assert builder.changed_cells(tmp_path, "00_one", shown) == 0
