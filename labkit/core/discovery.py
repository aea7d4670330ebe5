"""Chapters are found, not listed: one key per chapter, from its folder under labkit/chapters.

A chapter is a folder `labkit/chapters/chNN_name/`; its key is `NN_name` ("05_dataloader"),
the same string that names its notebook (`notebooks/05_dataloader.py`) and its section in a
results file. Registries (claims, exercises) ask `modules("claims")` for every chapter's
module of that name, so adding a chapter is a folder, a notebook and a test file: no list
to edit. Discovery happens on first use, not at import time, so a chapter module may import
the registry's package without meeting it half-built.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Generic, TypeVar

CHAPTERS_PACKAGE = "labkit.chapters"
_FOLDER = re.compile(r"ch(\d\d)_([a-z0-9_]+)")
_KEY = re.compile(r"(\d\d)_([a-z0-9_]+)")


def chapter_packages() -> list[str]:
    """The chapter folders' package names ('ch01_strides_and_views', ...), in curriculum order."""
    package = importlib.import_module(CHAPTERS_PACKAGE)
    names = [info.name for info in pkgutil.iter_modules(package.__path__)
             if info.ispkg and _FOLDER.fullmatch(info.name)]
    return sorted(names)


def chapter_keys() -> list[str]:
    """Every chapter's key ('01_strides_and_views', ...), in curriculum order."""
    return [name[2:] for name in chapter_packages()]


def chapter_key(module_name: str) -> str:
    """The key of the chapter a module belongs to: 'labkit.chapters.ch05_dataloader.claims'
    gives '05_dataloader'."""
    parts = module_name.split(".")
    if len(parts) < 3 or ".".join(parts[:2]) != CHAPTERS_PACKAGE or not _FOLDER.fullmatch(parts[2]):
        raise ValueError(f"{module_name!r} is not inside a chapter folder "
                         f"({CHAPTERS_PACKAGE}.chNN_name)")
    return parts[2][2:]


def check_key(key: object) -> str:
    """A chapter key as given, or a ValueError that lists the keys that exist."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ValueError(f"a chapter key looks like '05_dataloader' (its notebook's name), "
                         f"got {key!r}; known: {', '.join(chapter_keys())}")
    return key


def number(key: str) -> str:
    """'05' for '05_dataloader'."""
    return check_key(key)[:2]


def modules(part: str) -> Iterator[ModuleType]:
    """Each chapter's module named `part` ('claims', 'exercises'), where the chapter has one."""
    for package in chapter_packages():
        name = f"{CHAPTERS_PACKAGE}.{package}.{part}"
        try:
            yield importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise  # the module exists and something it imports is missing: say so


K = TypeVar("K")
V = TypeVar("V")


class LazyRegistry(Mapping, Generic[K, V]):
    """A read-only mapping built by `build` on first access (discovery runs once, late)."""

    def __init__(self, build: Callable[[], dict]) -> None:
        self._build, self._items = build, None

    def _loaded(self) -> dict:
        if self._items is None:
            self._items = self._build()
        return self._items

    def reload(self) -> None:
        """Forget what was found, so the next access discovers again (tests add chapters)."""
        self._items = None

    def __getitem__(self, key: object) -> V:
        return self._loaded()[key]

    def __iter__(self) -> Iterator:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())
