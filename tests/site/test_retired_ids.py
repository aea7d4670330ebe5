"""A page recorded before a claim was split shows the old id (C15, C21, C14); the current
ledger shows the new ones (C15a-d, C21a/b, C14a-c). The site links both without a break: an
id the shown pages judge links its section, any other id in a ledger row links the chapter
named beside it. No Sphinx build: the linking step alone."""

import nbformat

from tests.site.building import build_script


def _ledger_cell(*rows: tuple[str, str]) -> nbformat.NotebookNode:
    html = "".join(f"<tr><td>{claim}</td><td><a href='{chapter}.py'>{chapter[:2]}</a></td></tr>"
                   for claim, chapter in rows)
    cell = nbformat.v4.new_code_cell("claims.ledger()")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": f"<table>{html}</table>"})]
    return cell


def test_old_and_new_ids_both_link_without_a_break():
    site = build_script()
    notebook = nbformat.v4.new_notebook(cells=[_ledger_cell(
        ("C15", "07_export_traps"), ("C15a", "07_export_traps"), ("C21b", "04_fusion"),
        ("C14", "06_ddp_layout_drift"))])
    claims_at = {"C15": "07_export_traps", "C21": "04_fusion"}  # what a recorded page judged
    site.link_chapters_in_outputs(notebook, ["04_fusion", "06_ddp_layout_drift", "07_export_traps"], claims_at)
    html = notebook.cells[0].outputs[0]["data"]["text/html"]
    assert "<a href='07_export_traps.html#claim-c15'>C15</a>" in html     # judged on the page shown
    assert "<a href='07_export_traps.html'>C15a</a>" in html               # split after it: the chapter
    assert "<a href='04_fusion.html'>C21b</a>" in html
    assert "<a href='06_ddp_layout_drift.html'>C14</a>" in html


def test_a_page_that_judges_the_split_ids_labels_each():
    site = build_script()
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## C15a-d"),
        nbformat.v4.new_code_cell('c15 = {"C15a": chapter.judge("C15a", evidence),\n'
                                  '       "C15d": chapter.judge("C15d", evidence)}'),
        nbformat.v4.new_markdown_cell("## GradScaler"),
        nbformat.v4.new_code_cell('c21a = chapter.judge("C21a", {})\nc21b = chapter.judge("C21b", {})')])
    assert site.label_claims(notebook) == ["C15a", "C15d", "C21a", "C21b"]
