"""A quiz holds back what is below it: predictions that survive Run All.

Under Run All every cell runs before the learner has read the first question, so the claim
card and the measurement below a quiz would print the answer it asks for. Here, once a quiz
has been shown and until it is answered or skipped, what the cells run after it show (their
printed text, their last expression, what they display) is kept in the kernel and shown as a
`Held` placeholder that says why. Answering or skipping the quiz reveals every placeholder
in place (through its widget model, so it works in JupyterLab and Notebook 7 alike, across
cells, with no display-update support needed from the front end).

The hold ends at the next quiz shown (that quiz then holds what follows it), so each quiz
holds its own section; a quiz made with ``holds=N`` holds only the next N cells run after it
(chapter 00's one quiz holds its measurement, not the rest of the chapter and its "What to
remember"). A chapter's conclusions are never held: the "What to remember" cell, which every
chapter builds as a list named ``takeaways`` or passes to ``chapter.remember`` (CONCLUSIONS), ends the hold, so a learner who
reads to the end sees what the chapter measured. A cell's held outputs carry one banner, on
the first of them; the others wait silently beside it and open with it. A cell that ran before the quiz was shown (by its cell id, which
JupyterLab, Notebook 7 and nbclient send) is above it and is never held: a learner who ran
the whole chapter and goes back to an exercise sees its output at once. Interactive widgets below a quiz (a timeline, a grid) are shown at
once: they draw a picture, not a printed answer. Errors and warnings (stderr) are never held.

Outside IPython (scripts, tests without a kernel) nothing is held.

The placeholder's saved output keeps the held output in a collapsed ``<details>`` (with a
small marker picture) as its HTML fallback, so an HTML export read without a kernel can still open it, and keeps the held
output's own text as its ``text/plain`` (what nbval compares).
"""

from __future__ import annotations

import base64
import html
import re
import sys
from typing import Any, Protocol

import anywidget
import traitlets
from IPython.core.displaypub import DisplayPublisher

from labkit.show.widgets.base import Widget


class Quiz(Protocol):
    """What the hold needs of a quiz (`quiz.Quiz`), named by shape: quiz imports this module,
    so importing it back, even for type checking only, would close an import circle."""

    @property
    def settled(self) -> bool: ...


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# The held output's static picture (a saved chapter's widgets each carry one): a marker in
# front of the note, so a page read without a kernel shows that something is folded here.
MARK = ("<svg xmlns='http://www.w3.org/2000/svg' width='12' height='12' viewBox='0 0 12 12' "
        "role='img' aria-label='held back'><circle cx='6' cy='6' r='5' fill='#c9a227'/></svg>")
NOTE = ("Held back until you answer the quiz above (or skip it): this output would give "
        "its answer away.")
# A chapter's "What to remember" cell: it builds `takeaways = [...]` or hands its lines to the
# session's `chapter.remember(...)` (every chapter does one or the other).
CONCLUSIONS = re.compile(r"^(takeaways\s*(:[^=\n]*)?=|\w+\.remember\()", re.M)


def bundle_html(data: dict[str, Any]) -> str:
    """One output's richest static HTML: its HTML, an image, or its text in a <pre>."""
    if "text/html" in data:
        return str(data["text/html"])
    if "image/svg+xml" in data:
        return str(data["image/svg+xml"])
    for mime in ("image/png", "image/jpeg"):
        if mime in data:
            payload = data[mime]
            if isinstance(payload, bytes):
                payload = base64.b64encode(payload).decode()
            return f"<img alt='a figure' src='data:{mime};base64,{payload}'>"
    return f"<pre class='lt-held-text'>{html.escape(str(data.get('text/plain', '')))}</pre>"


class Held(Widget):
    """An output held back by an unanswered quiz; it shows itself when `revealed` is set."""

    js_parts = ("held.js",)

    content = traitlets.Unicode("", help="the held output as HTML").tag(sync=True)
    note = traitlets.Unicode(NOTE).tag(sync=True)
    revealed = traitlets.Bool(False).tag(sync=True)

    def __init__(self, content: str = "", text: str = "", data: dict | None = None,
                 note: str = NOTE) -> None:
        super().__init__(content=content, note=note)
        self.text = text  # the held output's plain text, for text/plain
        # structured data the output carried (application/json: a chapter's saved evidence):
        # kept in the saved notebook for the tools that read it; a front end draws the widget
        self.data = {k: v for k, v in (data or {}).items() if k == "application/json"}

    def static_html(self) -> str:
        """The held output folded in a <details> (open on request) behind the marker."""
        kind = "lt-held" if self.note else "lt-held lt-held-more"  # one banner per cell
        summary = f"{MARK} {html.escape(self.note)}" if self.note else MARK
        return (f"<details class='{kind}'><summary>{summary}</summary>"
                f"{self.content}</details>")

    def static_text(self) -> str:
        """The held output's own text: what nbval compares, held or not."""
        return self.text

    def static_data(self) -> dict[str, Any]:
        return dict(self.data)


class _Hold:
    """The held outputs of one quiz and where the current cell's printed text goes."""

    def __init__(self, quiz: Quiz, above: frozenset[str] = frozenset(),
                 limit: int | None = None) -> None:
        self.quiz = quiz
        self.above = above  # cells run before the quiz was shown: above it, never held
        self.limit = limit  # how many cells after the quiz it holds (None: up to the next quiz)
        self.held_cells: list[str] = []  # the cells it held so far (by id, else by run)
        self.items: list[Held] = []
        self.stream_text = ""  # printed text not yet shown as a placeholder
        self.bannered = False  # the running cell's first placeholder carries the banner

    def takes(self, cell: str | None) -> bool:
        """Whether this cell is still the quiz's to hold (False once its `limit` cells ran)."""
        if self.limit is None:
            return True
        key = cell or f"run {len(self.held_cells) + 1}"
        if key in self.held_cells:
            return True
        if len(self.held_cells) >= self.limit:
            return False
        self.held_cells.append(key)
        return True

    def add(self, data: dict[str, Any]) -> None:
        self.flush()
        self.show(Held(bundle_html(data), str(data.get("text/plain", "")), data))

    def write(self, text: str) -> None:
        self.stream_text += text

    def flush(self) -> None:
        """Show the printed text gathered so far as one placeholder (at the next display or
        at the cell's end, so that its saved text/plain holds the whole text)."""
        text, self.stream_text = self.stream_text, ""
        if text:
            self.show(Held(f"<pre class='lt-held-text'>{html.escape(text)}</pre>", text))

    def show(self, held: Held) -> None:
        if self.bannered:
            held.note = ""
        self.bannered = True
        if self.quiz.settled:
            held.revealed = True
        self.items.append(held)
        _STATE.passing = True
        try:
            from IPython.display import display
            display(held)
        finally:
            _STATE.passing = False

    def reveal(self) -> None:
        for held in self.items:
            held.revealed = True


class _State:
    def __init__(self) -> None:
        self.pending: _Hold | None = None  # the last quiz shown, while it is unanswered
        self.active: _Hold | None = None   # holding the outputs of the cell running now
        self.passing = False               # a placeholder is being displayed: let it through
        self.installed = False
        self.ran: set[str] = set()         # the ids of the cells run so far in this kernel
        self.saved: tuple[Any, Any, Any] | None = None


_STATE = _State()


def _holding() -> _Hold | None:
    hold = _STATE.active
    if hold is None or _STATE.passing or hold.quiz.settled:
        return None
    return hold


class _Stdout:
    """sys.stdout while a cell runs under an unanswered quiz."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def write(self, text: str) -> int:
        hold = _holding()
        if hold is None:
            return self.real.write(text)
        hold.write(text)
        return len(text)

    def __getattr__(self, name: str) -> Any:
        if name == "real":
            raise AttributeError(name)
        return getattr(self.real, name)


class _Publisher(DisplayPublisher):
    """The shell's display publisher while a cell runs under an unanswered quiz."""

    def __init__(self, real: DisplayPublisher) -> None:
        super().__init__(shell=getattr(real, "shell", None))
        self.real = real

    def publish(self, data: dict, metadata: dict | None = None, source: str | None = None, *,
                transient: dict | None = None, update: bool = False, **kwargs: Any) -> None:
        hold = _holding()
        if hold is None or update or transient or WIDGET_MIME in data:
            self.real.publish(data, metadata=metadata, source=source, transient=transient,
                              update=update, **kwargs)
            return
        hold.add(data)

    def clear_output(self, wait: bool = False) -> None:
        self.real.clear_output(wait)


class _DisplayHook:
    """The cell's last-expression hook while a cell runs under an unanswered quiz."""

    def __init__(self, real: Any, shell: Any) -> None:
        self.real, self.shell = real, shell

    def __call__(self, result: object = None) -> None:
        hold = _holding()
        if result is None or hold is None or _shows_itself(result) or self.real.quiet():
            self.real(result)
            return
        data, _ = self.shell.display_formatter.format(result)
        if WIDGET_MIME in data:
            self.real(result)
            return
        hold.add(data)

    def __getattr__(self, name: str) -> Any:
        if name == "real":
            raise AttributeError(name)
        return getattr(self.real, name)


def _shows_itself(result: object) -> bool:
    """A widget (a quiz above all) is shown at once: interactive outputs are never held."""
    return isinstance(result, anywidget.AnyWidget)


def _pre_run_cell(info: object = None) -> None:
    cell = getattr(info, "cell_id", None)
    pending = _STATE.pending
    if cell:
        _STATE.ran.add(cell)
    if pending is None or pending.quiz.settled or (cell and cell in pending.above):
        return  # a cell above the quiz (it ran before the quiz was shown) shows at once
    if CONCLUSIONS.search(getattr(info, "raw_cell", "") or "") or not pending.takes(cell):
        _STATE.pending = None  # the conclusions, or the end of the quiz's section: shown
        return
    shell = _shell()
    if shell is None:
        return
    sys.stdout.flush()
    _STATE.active = pending
    pending.stream_text = ""
    pending.bannered = False
    _STATE.saved = (sys.stdout, shell.display_pub, shell.display_trap.hook)
    sys.stdout = _Stdout(sys.stdout)
    shell.display_pub = _Publisher(shell.display_pub)
    shell.display_trap.hook = _DisplayHook(shell.display_trap.hook, shell)


def _post_run_cell(result: object = None) -> None:
    if _STATE.saved is None:
        return
    if _STATE.active is not None:
        _STATE.active.flush()
    shell = _shell()
    stdout, publisher, hook = _STATE.saved
    sys.stdout = stdout
    if shell is not None:
        shell.display_pub = publisher
        shell.display_trap.hook = hook
    _STATE.saved, _STATE.active = None, None


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of anywidget
        return None
    shell = get_ipython()
    return shell if shell is not None and hasattr(shell, "display_trap") else None


def _current_cell() -> str | None:
    """The id of the cell running now, as the front end sent it (None without one)."""
    kernel = getattr(_shell(), "kernel", None)
    try:
        parent = kernel.get_parent() if kernel is not None else {}
    except Exception:  # noqa: BLE001 - an older kernel: no id, nothing is known to be above
        return None
    return ((parent or {}).get("metadata") or {}).get("cellId")


def install() -> bool:
    """Start noting which cells run (from the import of the widgets on, so that a chapter's
    cells above its first quiz are known to be above it); True inside IPython."""
    shell = _shell()
    if shell is None:
        return False
    if not _STATE.installed:
        shell.events.register("pre_run_cell", _pre_run_cell)
        shell.events.register("post_run_cell", _post_run_cell)
        _STATE.installed = True
        cell = _current_cell()  # the cell importing the widgets: it ran before any quiz
        if cell:
            _STATE.ran.add(cell)
    return True


def quiz_shown(quiz: Quiz) -> None:
    """A quiz was displayed: it holds what the cells after it show, until it is settled.

    Called by Quiz when it is rendered; the hold of an earlier quiz ends here (for the rest
    of the running cell too), so each quiz holds its own section.
    """
    if _STATE.active is not None:
        _STATE.active.flush()
    _STATE.active = None
    if _STATE.pending is not None and _STATE.pending.quiz is quiz:
        return
    if not install():
        return
    _STATE.pending = _Hold(quiz, frozenset(_STATE.ran), getattr(quiz, "holds", None))
    quiz._hold = _STATE.pending


def settled(quiz: Quiz) -> None:
    """The quiz was answered or skipped: show everything it held, in place."""
    hold = getattr(quiz, "_hold", None)
    if hold is not None:
        hold.reveal()
    if _STATE.pending is hold:
        _STATE.pending = None


install()
