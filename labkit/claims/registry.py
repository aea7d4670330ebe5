"""The registry: every chapter's claims (`labkit/chapters/chNN_name/claims.py`), in order.

Chapters are discovered (`labkit.core.discovery`), so a new chapter's claims appear once
its folder has a `claims.py` with a `CLAIMS` list; nothing here lists them.
"""

from __future__ import annotations

from labkit.claims.core import Claim, ClaimError
from labkit.core import discovery


def _collect() -> dict[str, Claim]:
    found: list[Claim] = []
    for module in discovery.modules("claims"):
        key = discovery.chapter_key(module.__name__)
        for claim in module.CLAIMS:
            if claim.chapter != key:  # the folder is the one key
                raise ClaimError(f"{claim.id} says chapter {claim.chapter!r} but lives in {key!r}'s "
                                 f"folder: give it discovery.chapter_key(__name__)")
        found.extend(module.CLAIMS)
    ids = [c.id for c in found]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ClaimError(f"claims defined twice: {duplicated}; each id belongs to one chapter module")
    ordered = sorted(found, key=lambda c: (c.chapter, ids.index(c.id)))
    return {c.id: c for c in ordered}


REGISTRY: discovery.LazyRegistry[str, Claim] = discovery.LazyRegistry(_collect)


def all_claims() -> list[Claim]:
    """Every registered claim, in curriculum order."""
    return list(REGISTRY.values())


def get(claim_id: str) -> Claim:
    """The claim with this id ('C1', 'C8a', ...)."""
    try:
        return REGISTRY[claim_id]
    except (KeyError, TypeError):
        raise ClaimError(f"no claim {claim_id!r}; known: {', '.join(REGISTRY)}") from None


def for_chapter(chapter: str) -> list[Claim]:
    """The claims a chapter tests, in curriculum order; chapter is its key ('02_contiguity_...')."""
    key = discovery.check_key(chapter)
    return [c for c in REGISTRY.values() if c.chapter == key]
