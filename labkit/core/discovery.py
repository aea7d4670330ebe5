"""Chapters are found, not listed: one key per chapter, from its folder under labkit/chapters.

A chapter is a folder `labkit/chapters/chNN_name/`; its key is `NN_name` ("05_dataloader"),
the same string that names its notebook (`notebooks/05_dataloader.py`) and its section in a
results file. Registries (claims, exercises) ask `modules("claims")` for every chapter's
module of that name, so adding a chapter is a folder, a notebook and a test file: no list
to edit. Discovery happens on first use, not at import time, so a chapter module may import
the registry's package without meeting it half-built.

This floor only keeps the rules of the key and asks; the finding is the top floor's. The
chapters package (`labkit.chapters`, imported by `labkit` itself) walks its own folders and
`install`s itself here, so nothing below the chapters imports them, by name or otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Generic, Protocol, TypeVar

CHAPTERS_PACKAGE = "labkit.chapters"  # the folders' package, as text: for reading module names
FOLDER = re.compile(r"ch(\d\d)_([a-z0-9_]+)")
_KEY = re.compile(r"(\d\d)_([a-z0-9_]+)")


class Finder(Protocol):
    """What the top floor hands in: the chapter folders, and a chapter's module by name."""

    def packages(self) -> list[str]: ...
    def module(self, package: str, part: str) -> ModuleType | None: ...


_finder: Finder | None = None


def install(finder: Finder) -> None:
    """Let the registries find chapters through `finder` (labkit.chapters calls this)."""
    global _finder
    _finder = finder


def _installed() -> Finder:
    if _finder is None:
        raise RuntimeError("no chapters installed: `import labkit` installs labkit.chapters "
                           "(labkit/__init__.py); a stripped-down import skipped it")
    return _finder


def key_of_folder(folder: str) -> str:
    """'05_dataloader' for the folder 'ch05_dataloader': the one rule from folder to key."""
    if not FOLDER.fullmatch(folder):
        raise ValueError(f"{folder!r} is not a chapter folder (chNN_name)")
    return folder[2:]


def chapter_packages() -> list[str]:
    """The chapter folders' package names ('ch01_strides_and_views', ...), in curriculum order."""
    return sorted(_installed().packages())


def chapter_keys() -> list[str]:
    """Every chapter's key ('01_strides_and_views', ...), in curriculum order."""
    return [key_of_folder(name) for name in chapter_packages()]


def chapter_key(module_name: str) -> str:
    """The key of the chapter a module belongs to: 'labkit.chapters.ch05_dataloader.claims'
    gives '05_dataloader'."""
    parts = module_name.split(".")
    if len(parts) < 3 or ".".join(parts[:2]) != CHAPTERS_PACKAGE or not FOLDER.fullmatch(parts[2]):
        raise ValueError(f"{module_name!r} is not inside a chapter folder "
                         f"({CHAPTERS_PACKAGE}.chNN_name)")
    return key_of_folder(parts[2])


def check_key(key: object) -> str:
    """A chapter key as given, or a ValueError that lists the keys that exist."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ValueError(f"a chapter key looks like '05_dataloader' (its notebook's name), "
                         f"got {key!r}; known: {', '.join(chapter_keys())}")
    return key


def number(key: str) -> str:
    """'05' for '05_dataloader'."""
    return check_key(key)[:2]


def exercise_id(module_name: str, name: str) -> str:
    """'04.fold_batchnorm' for the exercise `name` of the module 'labkit.chapters.ch04_fusion.
    exercises': the chapter's number comes from its folder, never typed by hand."""
    return f"{number(chapter_key(module_name))}.{name}"


def modules(part: str) -> Iterator[ModuleType]:
    """Each chapter's module named `part` ('claims', 'exercises'), where the chapter has one."""
    finder = _installed()
    for package in chapter_packages():
        module = finder.module(package, part)
        if module is not None:
            yield module


def module(key: str, part: str) -> ModuleType | None:
    """One chapter's module named `part` ('strided_gemm' of '02_contiguity_and_hidden_copies'),
    or None where the chapter has none: what a session's `chapter.lab.<part>` reaches."""
    return _installed().module("ch" + check_key(key), part)


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
