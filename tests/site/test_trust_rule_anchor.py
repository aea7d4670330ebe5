"""A chapter page whose claim cards link to the trust rule gets the rule when its run never
printed it (chapter 05's H200 run: its cards link to #trust-rule, it has no rules() cell)."""

import nbformat

from tests.site.building import build_script

build_site = build_script()


def _notebook(*html_outputs: str) -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/html": text, "text/plain": "x"})]) for text in html_outputs]
    return nbformat.v4.new_notebook(cells=cells)


def test_a_linked_but_missing_rule_is_added_as_the_last_section():
    notebook = _notebook("<a href='#trust-rule'>trust rule</a>")
    assert build_site.add_trust_rule(notebook)
    last = notebook.cells[-1]
    assert last.cell_type == "markdown" and last.source.startswith("<div id='trust-rule'></div>")


def test_a_printed_rule_or_no_link_adds_nothing():
    printed = _notebook("<a href='#trust-rule'>trust rule</a>", "<div id='trust-rule'>rule</div>")
    assert not build_site.add_trust_rule(printed) and len(printed.cells) == 2
    unlinked = _notebook("<b>no card</b>")
    assert not build_site.add_trust_rule(unlinked) and len(unlinked.cells) == 1
