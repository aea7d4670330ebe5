"""The two seed articles a claim can cite, by letter and English title.

A claim names its article by the seed's file (`Claim.seed`, a stable key), but that file
is not shipped with the course, so a learner reads the article's English title and section
instead; the section's Chinese title is kept as a tooltip only (it renders as empty boxes
where no CJK font is installed). The titles are the README's.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Protocol


class Claim(Protocol):
    """What a citation needs of a claim (`core.Claim`), named by shape: core imports this
    module, so importing it back, even for type checking only, would close an import circle."""

    @property
    def id(self) -> str: ...
    @property
    def seed(self) -> str: ...
    @property
    def section(self) -> str: ...
    @property
    def section_zh(self) -> str: ...


# The seed articles, named by their file: a stable key (the files are not shipped).
SEED_STRIDES = "seeds/000_48436a37f9535c95.txt"  # article A
SEED_PIPELINE = "seeds/004_0e8e9a334eff3b12.txt"  # article B


@dataclass(frozen=True)
class Article:
    letter: str
    title: str


ARTICLES = {
    SEED_STRIDES: Article(
        "A", "A 300% latency spike from broken tensor shape alignment: stride, contiguous and "
             "memory layout, the hidden war"),
    SEED_PIPELINE: Article(
        "B", "The industrial tensor pipeline handbook: from JIT compilation to operator fusion, "
             "7 steps to 4.8x ResNet-50 inference throughput"),
}


def article_of(claim: Claim) -> Article:
    """The claim's article; a clear error for a seed the course does not name."""
    try:
        return ARTICLES[claim.seed]
    except KeyError:
        raise ValueError(f"{claim.id}: seed {claim.seed!r} is none of the course's articles "
                         f"({', '.join(ARTICLES)}); add it to labkit.claims.articles") from None


def short_source(claim: Claim) -> str:
    """'A §2.1 How strides work': for a table's narrow column."""
    return f"{article_of(claim).letter} §{claim.section}"


def cite(claim: Claim) -> str:
    """'article A, "A 300% latency spike ...", § 2.1 How strides work' as plain text."""
    article = article_of(claim)
    return f'article {article.letter}, "{article.title}", § {claim.section}'


def cite_html(claim: Claim) -> str:
    """The citation as HTML; the section's Chinese title is its tooltip, never visible text."""
    tooltip = (f" title='{html.escape(claim.section_zh, quote=True)}'" if claim.section_zh else "")
    article = article_of(claim)
    return (f"article {article.letter}, <cite>{html.escape(article.title)}</cite>, "
            f"<span{tooltip}>§ {html.escape(claim.section)}</span>")
