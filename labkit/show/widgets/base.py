"""The one base of the labkit widgets: the mime bundle, the page module and the CSS, once.

Every widget is shown two ways. Live, the front end runs its ES module; saved (GitHub,
nbviewer, an HTML export, the course site, a chapter opened before it runs), no JS runs and
the output's static forms are all a reader sees. `Widget._repr_mimebundle_` puts both in one
bundle: anywidget's view, then what the widget says of itself in `static_html`,
`static_svg`, `static_text` and `static_data`. A subclass only says what it draws.

The page module is assembled here, one way: the shared DOM helper (dom.js) and then the
widget's own JS files, named in `js_parts`, joined into one ES module. Drawing code shared
by two widgets (the address grid inside the stride explorer) is a part both name, so it is
one file in the repository and one module on the page (no second loader).
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from typing import Any, ClassVar

import anywidget

HERE = pathlib.Path(__file__).parent
DOM_HELPER = "dom.js"


def assemble(parts: Sequence[str]) -> str:
    """One ES module: dom.js, then each named JS file beside this module, in order.

    Raises ValueError for a name that is not a .js file here (a typo would otherwise ship a
    widget that draws nothing)."""
    if isinstance(parts, str) or not parts:
        raise ValueError(f"name the widget's JS files as a tuple such as ('quiz.js',), "
                         f"got {parts!r}")
    sources = [(HERE / DOM_HELPER).read_text()]
    for name in parts:
        path = HERE / name
        if not name.endswith(".js") or path.parent != HERE or not path.is_file():
            raise ValueError(f"{name!r} is not a JS file in {HERE}; the widgets' JS files are "
                             f"{sorted(p.name for p in HERE.glob('*.js'))}")
        sources.append(path.read_text())
    return "\n".join(sources)


class Widget(anywidget.AnyWidget):
    """A labkit widget: state in traitlets, drawing in the JS files named by `js_parts`.

    A subclass sets ``js_parts = ("its_file.js",)`` and defines what a saved notebook shows:
    `static_svg` (a picture), `static_html` (where a front end shows HTML before the picture),
    `static_text` (text/plain: what nbval compares; repr by default) and `static_data` (other
    mime types kept with the output). `_on_shown` runs after each bundle is built.
    """

    js_parts: ClassVar[tuple[str, ...]] = ()
    _css = HERE / "widgets.css"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Assemble the subclass's page module from its `js_parts` (before anywidget reads it)."""
        # (traitlets' add_traits makes a subclass per instance whose _esm is a trait: allowed)
        if isinstance(cls.__dict__.get("_esm"), str | pathlib.Path):
            raise TypeError(f"{cls.__name__}: name the JS files in js_parts; the base assembles "
                            "_esm (dom.js first), so there is one way to join them.")
        if "js_parts" in cls.__dict__:
            cls._esm = assemble(cls.js_parts)
        super().__init_subclass__(**kwargs)

    def static_svg(self) -> str | None:
        """The picture of the widget for a page where its JS cannot run (None: no picture)."""
        return None

    def static_html(self) -> str | None:
        """HTML a front end shows in place of the widget view (None: none)."""
        return None

    def static_text(self) -> str:
        """The output's text/plain: deterministic, so saved notebooks compare."""
        return repr(self)

    def static_data(self) -> dict[str, Any]:
        """Further mime types the saved output keeps (for tools that read notebooks)."""
        return {}

    def static_bundle(self) -> dict[str, Any]:
        """Every static form of the widget, by mime type: what a saved notebook shows."""
        data: dict[str, Any] = {}
        html = self.static_html()
        if html is not None:
            data["text/html"] = html
        svg = self.static_svg()
        if svg is not None:
            data["image/svg+xml"] = svg
        data["text/plain"] = self.static_text()
        data.update(self.static_data())
        return data

    def _on_shown(self) -> None:
        """Called each time the widget's bundle is built (it is being displayed)."""

    def _repr_mimebundle_(self, **kwargs: object) -> Any:
        """The widget view plus the static forms (`static_bundle`), for saved notebooks."""
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            data.update(self.static_bundle())
        self._on_shown()
        return bundle
