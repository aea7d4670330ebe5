"""A claim card and the ledger cite what a learner can read: the article's English title and
section, never a file the repository does not ship, and no Chinese as visible text (it renders
as empty boxes without a CJK font); the Chinese section title survives as a tooltip."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from labkit import claims
from labkit.claims import articles
from labkit.claims.core import Claim
from labkit.claims.registry import all_claims
from tests.paths import ROOT

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
PATHISH = re.compile(r"[\w./-]+\.(?:txt|md|py|json|ipynb|pdf|html)\b")


class Visible(HTMLParser):
    """The text a browser shows, and the title attributes (tooltips) apart."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.titles: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.titles += [v for k, v in attrs if k == "title" and v]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def visible(markup: str) -> Visible:
    parser = Visible()
    parser.feed(markup)
    return parser


@pytest.mark.parametrize("claim", all_claims(), ids=lambda c: c.id)
def test_a_claim_card_cites_the_article_by_title_and_ships_every_file_it_names(claim: Claim):
    card = visible(claim._repr_html_())
    text = " ".join(card.text)
    assert articles.article_of(claim).title in text and claim.section in text
    for path in PATHISH.findall(text):
        assert (ROOT / path).exists(), f"{claim.id}'s card cites {path}, which is not shipped"
    assert "seeds/" not in text
    assert not CJK.search(text), f"{claim.id}'s card shows Chinese as text: {text}"
    if claim.section_zh:
        assert claim.section_zh in card.titles, "the Chinese section title is kept as a tooltip"


def test_the_ledger_cites_articles_by_letter_and_hides_no_file_paths():
    html = claims.table([])._repr_html_() if hasattr(claims.table([]), "_repr_html_") else ""
    text = " ".join(visible(html).text)
    assert "seeds/" not in text and "seed 000" not in text


def test_an_unknown_seed_is_refused_with_what_to_do():
    stray = Claim("C0", "01_strides_and_views", "seeds/999_x.txt", "nowhere", "A stray claim.")
    with pytest.raises(ValueError, match="labkit.claims.articles"):
        articles.cite(stray)
