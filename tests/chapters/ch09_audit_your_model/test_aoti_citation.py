"""09's prose cites AOTInductor's build seconds from 07's recorded H200 page: the seconds and the
date it gives must be the ones that page prints (review 2026-12-04k item 10e: the prose said
'2026-12-04' where the page says 'measured 2026-12-03')."""

import html
import json
import re

import pytest

from tests.paths import ROOT

PAGE = ROOT / "results" / "h200_notebooks" / "07_export_traps.ipynb"


def _page_text() -> str:
    cells = json.loads(PAGE.read_text())["cells"]
    texts = []
    for cell in cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            text = data.get("text/html") or data.get("text/plain") or output.get("text", "")
            texts.append("".join(text) if isinstance(text, list) else text)
    return html.unescape(re.sub(r"<[^>]+>", " ", "\n".join(texts)))


def test_the_aoti_seconds_and_date_09_cites_are_the_ones_07s_page_prints():
    if not PAGE.is_file():
        pytest.skip("no recorded H200 page of 07")
    prose = " ".join(line.lstrip("# ") for line in (ROOT / "notebooks" / "09_audit_your_model.py").read_text().splitlines())
    cited = re.search(r"export ([\d.]+) s,\s+compile ([\d.]+) s, load ([\d.]+) s, measured (\d{4}-\d\d-\d\d)", prose)
    assert cited, "09 no longer cites AOTInductor's seconds with the date they were measured"
    export, compile_s, load, day = cited.groups()
    page = _page_text()
    assert f"measured {day}" in page
    assert re.search(rf"seconds: export {re.escape(export)}, compile {re.escape(compile_s)}\b.*?load {re.escape(load)}", page)
