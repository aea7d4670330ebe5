"""The timeline picture's time axis: no tick label runs past the picture's right edge."""

from __future__ import annotations

import re

import pytest

from labkit.measure import example_traces, timeline
from labkit.show import timeline_figure

CHAR_PX = 7  # the drawing's own estimate for 11 px text

TICK = re.compile(r'<text x="([\d.]+)"( text-anchor="end")? y="\d+" fill="#444444">([^<]+)</text>')


@pytest.mark.parametrize("width", [360, 500, 900, 1234])
def test_every_tick_label_ends_inside_the_picture(width):
    trace = timeline.from_chrome(example_traces.training_trace(4, seed=3))
    svg = timeline_figure.to_svg(trace, width=width)
    ticks = TICK.findall(svg)
    assert len(ticks) >= 2, "the axis lost its labels"
    for x, anchored_end, label in ticks:
        right = float(x) if anchored_end else float(x) + CHAR_PX * len(label)
        assert right <= width, f"tick {label!r} ends at {right:.0f} px in a {width} px picture"
