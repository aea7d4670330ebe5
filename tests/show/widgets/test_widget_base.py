"""Every widget's bundle, page module and CSS come from the one base (labkit.show.widgets.base).

Issue 37: `_repr_mimebundle_` was written three times and JS files were joined two ways (text
put together in Python, and a module loaded from a blob URL in the page). Here: every widget
class in the package derives from `Widget`, none writes its own bundle, page module or CSS,
each page module is exactly dom.js plus the files the widget names, and each widget's bundle
carries the widget view plus the static forms the base collects."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import anywidget
import pytest
import torch

import labkit.show.widgets as package
from labkit.measure import example_traces, timeline
from labkit.show.widgets import AddressGrid, Quiz, StrideExplorer, Timeline, base
from labkit.show.widgets.holdback import Held

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def widget_classes() -> list[type]:
    """Every AnyWidget subclass defined in the package (not traitlets' per-instance copies)."""
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    found, todo = [], [anywidget.AnyWidget]
    while todo:
        for cls in todo.pop().__subclasses__():
            todo.append(cls)
            module = sys.modules.get(cls.__module__)
            if cls.__module__.startswith(package.__name__) and getattr(
                    module, cls.__name__, None) is cls:
                found.append(cls)
    return sorted(set(found), key=lambda c: c.__name__)


CLASSES = [cls for cls in widget_classes() if cls is not base.Widget]


def test_the_package_widgets_are_found():
    assert {c.__name__ for c in CLASSES} == {"AddressGrid", "Held", "Quiz", "StrideExplorer",
                                              "Timeline"}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_each_widget_derives_from_the_base_and_writes_no_bundle_of_its_own(cls):
    assert issubclass(cls, base.Widget)
    # (_esm is in each class's dict: the base put it there from js_parts, checked below; a
    # class that sets it itself is refused when it is defined)
    own = {"_repr_mimebundle_", "_css"} & set(vars(cls))
    assert not own, f"{cls.__name__} defines {own} itself; the base owns them"
    assert cls._repr_mimebundle_ is base.Widget._repr_mimebundle_
    assert cls._css is base.Widget._css


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_each_page_module_is_dom_js_and_the_named_parts(cls):
    assert cls.js_parts, f"{cls.__name__} names no JS file"
    assert str(cls._esm) == base.assemble(cls.js_parts)
    assert str(cls._esm).startswith((base.HERE / "dom.js").read_text())
    assert str(cls._esm).count("export default") == 1


def test_js_files_are_joined_one_way_and_none_is_orphaned():
    files = {p.name for p in base.HERE.glob("*.js")}
    named = {base.DOM_HELPER}.union(*(cls.js_parts for cls in CLASSES))
    assert named == files
    for name in files:
        text = (base.HERE / name).read_text()
        assert "import(" not in text and "createObjectURL" not in text, (
            f"{name} loads a module itself; name it in a widget's js_parts instead")


def small_trace() -> timeline.Trace:
    return timeline.from_chrome(example_traces.training_trace(2, seed=1), source="synthetic")


WIDGETS = {
    "AddressGrid": lambda: AddressGrid(torch.arange(12).reshape(3, 4).t()),
    "StrideExplorer": lambda: StrideExplorer(storage_size=12),
    "Quiz": lambda: Quiz("Stride of x.t()?", choices=["(4, 1)", "(1, 4)"], answer="(1, 4)"),
    "Timeline": lambda: Timeline(small_trace()),
    "Held": lambda: Held("<b>42</b>", text="42", data={"application/json": {"x": 1}}),
}


def test_every_widget_is_exercised():
    assert set(WIDGETS) == {c.__name__ for c in CLASSES}


@pytest.mark.parametrize("name", WIDGETS)
def test_each_bundle_is_the_view_plus_the_base_static_forms(name):
    widget = WIDGETS[name]()
    bundle = widget._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert WIDGET_VIEW in data
    static = widget.static_bundle()
    assert {k: v for k, v in data.items() if k != WIDGET_VIEW} == static
    assert static["text/plain"] == widget.static_text()
    assert "image/svg+xml" in static or "<svg" in static.get("text/html", ""), (
        f"{name}: a saved notebook would show no picture")


def test_the_static_forms_are_what_each_widget_says_of_itself():
    held = WIDGETS["Held"]()
    assert held.static_bundle() == {"text/html": held.static_html(), "text/plain": "42",
                                    "application/json": {"x": 1}}
    quiz = WIDGETS["Quiz"]()
    assert list(quiz.static_bundle()) == ["text/html", "image/svg+xml", "text/plain"]
    grid = WIDGETS["AddressGrid"]()
    assert list(grid.static_bundle()) == ["image/svg+xml", "text/plain"]
    assert grid.static_text() == repr(grid)


def test_a_widget_that_joins_its_own_js_is_refused():
    with pytest.raises(TypeError, match="js_parts"):
        type("Rogue", (base.Widget,), {"_esm": "export default {render() {}};"})


@pytest.mark.parametrize("parts", [(), "quiz.js", ("nope.js",), ("widgets.css",),
                                   ("../base.py",)])
def test_assemble_refuses_what_is_not_a_js_file_here(parts):
    with pytest.raises(ValueError, match="JS file|tuple"):
        base.assemble(parts)
