"""Interactive widgets (anywidget): the memory-address grid, the stride explorer, the quiz,
and the timeline (see labkit.measure.timeline).

State lives in Python traitlets with validators (so bad values are refused with a clear
TraitError whatever the front end sends, and tests can drive a widget without a browser);
drawing lives in plain JS files beside the modules, shipped as package data, each function a
part named for what it draws. Every widget derives from ``base.Widget``, which joins dom.js and
the widget's JS files into its page module and builds its mime bundle (the view plus its
static forms), so a widget says only what it draws.
All stride arithmetic comes from ``labkit.core.layout``; what each cell and label says is decided
by the pure functions of ``view_model``; what a learner types is read by ``parsing``; and
every widget's mime bundle carries a static SVG (``static_svg``) for GitHub, nbviewer and
HTML exports, where the JS cannot run.

    from labkit.show import widgets
    widgets.AddressGrid(x.t())
    widgets.StrideExplorer(storage_size=12)
    widgets.Quiz("Stride of x.t()?", choices=["(4, 1)", "(1, 4)"], answer=lambda: str(x.t().stride()))
"""

from labkit.show.widgets.address_grid import AddressGrid
from labkit.show.widgets.quiz import Quiz
from labkit.show.widgets.stride_explorer import StrideExplorer
from labkit.show.widgets.timeline import Timeline

__all__ = ["AddressGrid", "Quiz", "StrideExplorer", "Timeline"]
