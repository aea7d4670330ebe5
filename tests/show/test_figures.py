"""labkit.show.figures: deterministic output, colour links that match labkit.core.layout, refusals."""

import subprocess
import sys

import matplotlib
import numpy as np
import pytest
import torch
from matplotlib.colors import to_rgba

from labkit.core import layout
from labkit.show import figures

X = torch.arange(24.0).reshape(4, 6)
CASES = {
    "contiguous": X,
    "transpose": X.t(),
    "broadcast": X[0].expand(3, 6),
    "windows": X.flatten().unfold(0, 4, 3),
    "gaps": X[1:, ::2],
    "3d": torch.arange(24.0).reshape(2, 3, 4).permute(0, 2, 1),
    "4d_channels_last": torch.empty(2, 3, 2, 2).to(memory_format=torch.channels_last),
    "1d": torch.arange(7.0)[2:],
    "scalar": X[1, 2],
}


def patches_by_gid(fig):
    return {p.get_gid(): p for ax in fig.axes for p in ax.patches if p.get_gid()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rendering_twice_gives_identical_svg_and_png(name):
    first = figures.grid_and_strip(CASES[name], highlight=(0,) * CASES[name].dim())
    second = figures.grid_and_strip(CASES[name], highlight=(0,) * CASES[name].dim())
    svg = figures.to_svg(first)
    assert svg == figures.to_svg(second)
    assert svg == figures.to_svg(first)  # rendering the same figure again changes nothing
    assert b"<dc:date>" not in svg and svg.startswith(b"<?xml")
    assert figures.to_png(first) == figures.to_png(second)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_element_has_the_colour_of_its_storage_cell(name):
    tensor = CASES[name]
    lay = layout.of(tensor)
    fig = figures.grid_and_strip(tensor)
    patches = patches_by_gid(fig)
    offsets = layout.element_offsets(lay)
    low, high = (int(offsets.min()), int(offsets.max())) if offsets.size else (0, 0)
    for index in np.ndindex(*lay.shape):
        grid = patches["grid-" + "-".join(str(i) for i in index)]
        strip = patches[f"strip-{offsets[index]}"]
        assert grid.get_facecolor() == strip.get_facecolor()
        assert grid.get_facecolor() == to_rgba(
            figures.storage_colour(int(offsets[index]), low, high))
    # Every storage cell is drawn once, and no other grid cells exist.
    assert sum(g.startswith("strip-") and g[6:].isdigit() for g in patches) == lay.storage_size
    assert sum(g.startswith("grid-") and "arrow" not in g for g in patches) == lay.numel


def test_gaps_and_unused_storage_are_grey_and_reused_cells_are_counted():
    fig = figures.grid_and_strip(CASES["gaps"])  # offset 6, strides (6, 2)
    patches = patches_by_gid(fig)
    assert patches["strip-7"].get_facecolor() == to_rgba(figures._UNUSED)  # skipped
    assert patches["strip-0"].get_facecolor() == to_rgba(figures._OUTSIDE)  # before offset
    broadcast = figures.grid_and_strip(CASES["broadcast"])
    texts = [t.get_text() for t in broadcast.axes[0].texts]
    assert "0\n×3" in texts  # storage cell 0 is read by 3 elements (stride 0)
    assert "dim 0: stride 0, same cell" in texts


def test_one_stride_arrow_per_dimension_with_the_jump():
    fig = figures.grid_and_strip(CASES["3d"], highlight=(1, 3, 2))
    patches = patches_by_gid(fig)
    assert {g for g in patches if "arrow" in g} == {
        "grid-arrow-0", "strip-arrow-0", "grid-arrow-1", "strip-arrow-1",
        "grid-arrow-2", "strip-arrow-2"}
    texts = [t.get_text() for t in fig.axes[0].texts]
    lay = layout.of(CASES["3d"])
    for d, step in enumerate(lay.stride):
        assert f"dim {d}: +{step} ({step * 4} B)" in texts
    # The highlight sits on element (1, 3, 2) and on its storage cell.
    target = layout.element_offset(lay, (1, 3, 2))
    strip = patches[f"strip-{target}"]
    box = patches["highlight-strip"]
    assert abs(box.get_x() - (strip.get_x() - 0.05)) < 1e-9
    assert abs(box.get_y() - (strip.get_y() - 0.05)) < 1e-9


@pytest.mark.parametrize(
    "tensor, message",
    [
        (torch.zeros(100, 100), "10000 elements is above the drawing limit"),
        (torch.zeros(1, 1, 1, 1, 2), "5 dimensions"),
        (torch.zeros(4096)[:4], "storage holds 4096 elements"),
    ],
)
def test_too_big_draws_a_summary_that_says_why(tensor, message):
    fig = figures.grid_and_strip(tensor)
    lines = [t.get_text() for t in fig.texts]
    assert any(message in line for line in lines), lines
    assert not fig.axes
    assert figures.to_svg(fig) == figures.to_svg(figures.grid_and_strip(tensor))


def test_layout_input_and_bad_highlight():
    lay = layout.check((2, 3), (1, 2), offset=1, storage_size=8)
    fig = figures.grid_and_strip(lay, highlight=(-1, -1))
    assert "highlight-grid" in patches_by_gid(fig)
    with pytest.raises(layout.LayoutError, match="out of range"):
        figures.grid_and_strip(lay, highlight=(2, 0))
    assert figures.grid_and_strip(lay)._repr_png_().startswith(b"\x89PNG")


def test_does_not_touch_pyplot_or_the_global_backend():
    backend = matplotlib.get_backend()
    figures.grid_and_strip(X)
    assert matplotlib.get_backend() == backend
    code = ("import sys, torch; from labkit.show import figures; "
            "figures.to_png(figures.grid_and_strip(torch.zeros(2, 2))); "
            "assert 'matplotlib.pyplot' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_two_storage_cells_share_a_colour(name):
    fig = figures.grid_and_strip(CASES[name])
    used = {g: p.get_facecolor() for g, p in patches_by_gid(fig).items()
            if g.startswith("strip-") and g[6:].isdigit()
            and p.get_facecolor() not in (to_rgba(figures._UNUSED), to_rgba(figures._OUTSIDE))}
    assert len(set(used.values())) == len(used)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_figure_and_the_address_grid_number_the_tensor_the_same_way(name):
    from labkit.show import widgets
    from labkit.show.widgets import view_model

    tensor = CASES[name]
    grid = widgets.AddressGrid(tensor)
    fig = figures.grid_and_strip(tensor)
    texts = [t.get_text().split("\n")[0] for t in fig.axes[0].texts]
    for cell in grid._view["element_offsets"]:
        assert view_model.cell_label(grid._view, cell) in texts


def test_labels_are_readable():
    fig = figures.grid_and_strip(CASES[sorted(CASES)[0]])
    assert min(t.get_fontsize() for t in fig.axes[0].texts) >= figures.LABEL_SIZE - 1 >= 6
