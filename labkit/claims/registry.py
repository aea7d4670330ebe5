"""The registry: every chapter module's claims, in curriculum order.

Chapter modules (`ch01` ... `ch08`) are found by name, so a new chapter's claims appear
once its module exists.
"""

from __future__ import annotations

import importlib

from labkit.claims.core import Claim, ClaimError

CHAPTER_MODULES = ("ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08")


def _collect() -> list[Claim]:
    found: list[Claim] = []
    for name in CHAPTER_MODULES:
        try:
            module = importlib.import_module(f"labkit.claims.{name}")
        except ModuleNotFoundError as error:
            if error.name == f"labkit.claims.{name}":
                continue  # that chapter is not written yet
            raise
        found.extend(module.CLAIMS)
    ids = [c.id for c in found]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ClaimError(f"claims defined twice: {duplicated}; each id belongs to one chapter module")
    return sorted(found, key=lambda c: (c.chapter, ids.index(c.id)))


ALL: list[Claim] = _collect()
REGISTRY: dict[str, Claim] = {c.id: c for c in ALL}


def get(claim_id: str) -> Claim:
    """The claim with this id ('C1', 'C8a', ...)."""
    try:
        return REGISTRY[claim_id]
    except KeyError:
        raise ClaimError(f"no claim {claim_id!r}; known: {', '.join(REGISTRY)}") from None


def for_chapter(chapter: str) -> list[Claim]:
    """The claims a chapter ('01', '02', ...) tests, in curriculum order."""
    return [c for c in ALL if c.chapter == chapter]
