"""How a long measurement reports progress without knowing how progress is shown.

The harness (`bench.compare`) and the loader sweeps count rounds; drawing a bar is the
display layer's business. `labkit.show.timing_plots` registers its notebook bar here when
it is imported (`use_display`), so a measurement run where nothing is drawn (a script, a
test, a machine without ipywidgets) gets the silent bar and never imports widget code.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")

SHOW_AFTER_S = 2.0  # a sweep expected to take longer than this shows a bar (where one can)


class Bar(Protocol):
    def step(self) -> None: ...

    def update(self, done: int, total: int | None = None, label: str = "") -> None: ...

    def close(self) -> None: ...


class SilentBar:
    """The bar used outside a notebook, for short sweeps, or when nothing can draw one."""

    def step(self) -> None:
        pass

    def update(self, done: int, total: int | None = None, label: str = "") -> None:
        pass

    def close(self) -> None:
        pass


_display: Callable[[int], Bar | None] | None = None


def use_display(factory: Callable[[int], Bar | None] | None) -> None:
    """Set what draws a bar (called by the display layer); `factory(total)` may return None."""
    global _display
    _display = factory


def bar(total: int, progress: bool | None, expected_s: float) -> Bar:
    """A drawn bar for sweeps expected to take over SHOW_AFTER_S (or when progress=True)."""
    if progress is False or (progress is None and expected_s < SHOW_AFTER_S) or _display is None:
        return SilentBar()
    try:
        return _display(total) or SilentBar()
    except Exception:  # a bar that cannot be drawn never stops a measurement
        return SilentBar()


class Phases:
    """Seconds spent in each named part of a long job, logged as each part ends.

    Why: a GPU job cut off by its call's limit should still say where its time went (the
    chapters' reproduce modules print these phases for every fresh run)."""

    def __init__(self, log: logging.Logger) -> None:
        self.seconds: dict[str, float] = {}
        self._log = log

    def timed(self, name: str, fn: Callable[[], T]) -> T:
        """fn(), its wall time kept under `name` (also when it raises)."""
        started = time.perf_counter()
        try:
            return fn()
        finally:
            self.seconds[name] = time.perf_counter() - started
            self._log.info("%s: %.1f s", name, self.seconds[name])
