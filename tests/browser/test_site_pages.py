"""The course website in a browser with the network blocked: the index, two chapter pages and
the ledger render from the files alone, widgets show their static pictures, the ledger's table
reads on a narrow screen and its claim links land on the section that judged the claim.

Every request that is not a file:// URL is aborted and recorded; a page that asked for anything
from another host fails. The site is built once per session into a temporary folder by the
same code as `make site` (tests/site/building.py), so a stale site/ cannot hide a fault.
Screenshots land in tests/browser/screenshots/.
"""

from __future__ import annotations

import re

import pytest

from tests.site.building import built_site

pytestmark = [
    pytest.mark.site,
    # The theme and myst-parser still call Sphinx APIs that Sphinx 11 will remove.
    pytest.mark.filterwarnings("ignore:.*is deprecated. Check CHANGES for Sphinx API"),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder, _ = built_site(tmp_path_factory)
    return folder


@pytest.fixture
def site_page(browser, request):
    """A fresh page with the network blocked; a screenshot of what is in view is kept after
    each test (chapter pages are tens of thousands of pixels tall: a full-page shot is slow)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.asked = block_network(page)
    yield page
    name = request.node.name.replace("/", "_").replace("[", "-").replace("]", "").replace(".html", "")
    try:
        page.screenshot(path=str(_screenshot(name)))
    finally:
        context.close()


def block_network(page) -> list[str]:
    """Abort every request that is not a local file; return the list of what was asked for."""
    asked: list[str] = []

    def handle(route):
        url = route.request.url
        if url.startswith("file://"):
            route.continue_()
        else:
            asked.append(url)
            route.abort()

    page.route("**/*", handle)
    return asked


def open_page(page, site, name: str) -> list[str]:
    page.goto((site / name).as_uri())
    page.wait_for_load_state("load")
    return page.asked


STATIC_PICTURES = """() => [...document.querySelectorAll('div.cell_output img')]
    .filter(img => img.getAttribute('src').endsWith('.svg'))
    .map(img => ({src: img.getAttribute('src'), ok: img.complete && img.naturalWidth > 0,
                  shown: img.getBoundingClientRect().width > 0}))"""


def test_index_lists_the_chapters_and_loads_nothing_from_another_host(site_page, site):
    page = site_page
    asked = open_page(site_page, site, "index.html")
    rows = page.locator("article table tbody tr")
    assert rows.count() >= 10
    assert page.locator("article table a[href='01_strides_and_views.html']").first.is_visible()
    # The theme's own style sheets came from the site's files (its sidebar is laid out).
    assert page.evaluate("() => document.styleSheets.length") >= 3
    assert page.locator(".bd-sidebar-primary").is_visible()
    assert not asked, f"the index asked another host for: {asked}"


@pytest.mark.parametrize("name", ["01_strides_and_views.html", "08_inference_ladder.html"])
def test_a_chapter_page_shows_each_widget_as_its_static_picture(site_page, site, name):
    page = site_page
    asked = open_page(site_page, site, name)
    page.wait_for_function("() => [...document.images].every(i => i.complete)", timeout=30_000)
    pictures = page.evaluate(STATIC_PICTURES)
    assert pictures, f"{name} has no static widget picture"
    broken = [p["src"] for p in pictures if not (p["ok"] and p["shown"])]
    assert not broken, f"pictures that did not render: {broken}"
    facts = page.locator(".course-chapter-facts")
    assert facts.is_visible() and "Executed on" in facts.inner_text()
    assert not asked, f"{name} asked another host for: {asked}"
    # The screenshot shows the largest picture (the address grid, the ladder's timeline).
    page.evaluate("""() => [...document.querySelectorAll("div.cell_output img[src$='.svg']")]
        .sort((a, b) => b.width * b.height - a.width * a.height)[0]
        .scrollIntoView({block: 'center'})""")


def test_the_ledger_table_renders_reads_on_a_narrow_screen_and_links_each_claim(site_page, site):
    page = site_page
    page.set_viewport_size({"width": 390, "height": 844})
    asked = open_page(site_page, site, "99_claims_ledger.html")
    # the ledger: the first output table that links claim C7a (C7 on a ledger recorded before its
    # split, session aa; the machines table comes before it)
    c7 = re.compile(r"^C7a?$")
    table = page.locator("div.cell_output table").filter(has=page.locator("a", has_text=c7)).first
    table.wait_for()
    assert table.locator("tr").count() >= 20
    assert table.is_visible()
    # The page itself does not scroll sideways; the table scrolls inside its output box.
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
    scrolls = page.evaluate("""() => {
        let el = [...document.querySelectorAll('div.cell_output table')]
            .find(t => [...t.querySelectorAll('a')].some(a => /^C7a?$/.test(a.textContent.trim())));
        while (el && !(el.scrollWidth > el.clientWidth && getComputedStyle(el).overflowX === 'auto'))
            el = el.parentElement;
        return el !== null && el.tagName !== 'HTML' && el.tagName !== 'BODY';
    }""")
    assert scrolls, "the ledger's table widens the page instead of scrolling in its box"
    table.evaluate("t => t.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(_screenshot("ledger_narrow")))
    link = table.locator("a", has_text=c7).first
    anchor = "#claim-" + link.inner_text().strip().lower()
    link.click()
    page.wait_for_load_state("load")
    assert page.url.split("/")[-1] == f"03_memory_layouts.html{anchor}"
    assert page.locator(anchor).count() == 1
    assert not asked, f"the ledger asked another host for: {asked}"


def _screenshot(name: str):
    from tests.browser.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS / f"site_{name}.png"
