"""The timeline widget in a real JupyterLab: it renders, zoom and pan move the view, hover
names an event, and a click on a kernel shows the CPU op that launched it (the same one
labkit.measure.timeline links it to)."""

from __future__ import annotations

import pathlib

import jupytext
import nbformat
import pytest

from labkit.measure import example_traces, timeline
from tests.browser.conftest import SCREENSHOTS
from tests.browser.helpers import (
    accept_kernel_dialog,
    error_outputs,
    open_notebook,
    run_all_cells,
    wait_for_idle,
)

DEMO = pathlib.Path(__file__).with_name("timeline_demo.py")


@pytest.fixture(scope="module")
def trace():
    """The synthetic trace the demo notebook draws under the title 'gpu'."""
    text = DEMO.read_text()
    assert "training_trace(4, seed=3)" in text and 'title="gpu"' in text
    return timeline.from_chrome(example_traces.training_trace(4, seed=3), source="synthetic")


@pytest.fixture(scope="module")
def demo(lab, browser):
    nbformat.write(jupytext.read(DEMO), pathlib.Path(lab.root) / "timeline_demo.ipynb")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.script_errors = []
    page.on("pageerror", lambda error: page.script_errors.append(str(error)))
    open_notebook(page, lab, "timeline_demo.ipynb")
    accept_kernel_dialog(page)
    run_all_cells(page)
    accept_kernel_dialog(page)
    wait_for_idle(page, timeout_s=180)
    try:
        page.locator('.lt-timeline[data-title="thinned"]').wait_for(timeout=30_000)
    except Exception:
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "timeline_demo_failed.png"), full_page=True)
        raise AssertionError(f"no timeline drawn; errors {error_outputs(page)}, "
                             f"script errors {page.script_errors}") from None
    assert error_outputs(page) == []
    yield page
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "timeline_demo.png"), full_page=True)
    context.close()


def widget(page, title):
    root = page.locator(f'.lt-timeline[data-title="{title}"]')
    root.wait_for(timeout=30_000)
    root.scroll_into_view_if_needed()
    page.wait_for_function("e => e.dataset.paintMs", arg=root.element_handle(), timeout=15_000)
    return root


def view_of(root):
    return [float(v) for v in root.get_attribute("data-view").split(",")]


def test_both_timelines_render_with_lanes_and_summary(demo, trace):
    gpu = widget(demo, "gpu")
    assert int(gpu.get_attribute("data-bars")) > 0
    figures = gpu.locator("[data-role=summary]").inner_text()
    for label, value in timeline.summary(trace).lines():
        assert f"{label}: {value}" in figures
    cpu = widget(demo, "cpu")
    assert "trace span" in cpu.locator("[data-role=summary]").inner_text()
    assert int(cpu.get_attribute("data-bars")) > 0
    gpu.screenshot(path=str(SCREENSHOTS / "timeline_gpu.png"))
    cpu.screenshot(path=str(SCREENSHOTS / "timeline_cpu.png"))


def test_keys_buttons_and_wheel_zoom_and_pan(demo, trace):
    root = widget(demo, "gpu")
    canvas = root.locator("canvas[data-role=canvas]")
    full = view_of(root)
    assert full[0] == 0 and full[1] == pytest.approx(trace.end_us)
    canvas.click(position={"x": 5, "y": 5})  # on the labels: focuses, selects nothing
    canvas.press("+")
    zoomed = view_of(root)
    assert zoomed[1] - zoomed[0] == pytest.approx((full[1] - full[0]) / 1.5, rel=1e-6)
    assert float(root.get_attribute("data-zoom-ms")) >= 0
    canvas.press("ArrowRight")
    panned = view_of(root)
    assert panned[0] > zoomed[0] and panned[1] - panned[0] == pytest.approx(zoomed[1] - zoomed[0])
    canvas.press("0")
    assert view_of(root) == pytest.approx(full)
    root.locator("[data-action=zoom-in]").click()
    assert view_of(root)[1] - view_of(root)[0] < full[1] - full[0]
    box = canvas.bounding_box()
    demo.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + 30)
    before = view_of(root)
    demo.mouse.wheel(0, -300)
    demo.wait_for_function(f"e => e.dataset.view !== '{root.get_attribute('data-view')}'",
                           arg=root.element_handle(), timeout=5_000) if view_of(root) == before else None
    after = view_of(root)
    assert after[1] - after[0] < before[1] - before[0]
    root.locator("[data-action=reset]").click()
    assert view_of(root) == pytest.approx(full)


def test_hover_names_the_event_under_the_pointer(demo, trace):
    root = widget(demo, "gpu")
    copy = trace.events("memcpy_h2d")[1]
    point = root.evaluate(f"e => e.ltTimeline.barCenter({copy.index})")
    demo.mouse.move(point["x"], point["y"])
    tooltip = root.locator("[data-role=tooltip]")
    tooltip.wait_for(state="visible", timeout=5_000)
    text = tooltip.inner_text()
    assert copy.name in text and "memcpy_h2d" in text
    assert f"launched by {trace.event(copy.launched_by).name}" in text


def test_clicking_a_kernel_shows_the_op_that_launched_it(demo, trace):
    root = widget(demo, "gpu")
    root.locator("[data-action=reset]").click()
    for kernel in (trace.events("kernel")[0], trace.events("kernel")[7]):
        point = root.evaluate(f"e => e.ltTimeline.barCenter({kernel.index})")
        demo.mouse.click(point["x"], point["y"])
        detail = root.locator("[data-role=detail]")
        assert detail.get_attribute("data-index") == str(kernel.index)
        assert detail.get_attribute("data-kind") == "kernel"
        launcher = trace.event(kernel.launched_by).name
        assert detail.get_attribute("data-launched-by") == launcher
        assert f"launched by {launcher}" in detail.inner_text()
    root.screenshot(path=str(SCREENSHOTS / "timeline_clicked_kernel.png"))


def test_a_thinned_view_asks_python_for_detail_when_zoomed(demo):
    root = widget(demo, "thinned")
    notice = root.locator("[data-role=notice]")
    assert "merged into hatched bars" in notice.inner_text()
    canvas = root.locator("canvas[data-role=canvas]")
    canvas.click(position={"x": 5, "y": 5})
    for _ in range(8):  # about 1/25 of the trace: few enough events to send one by one
        canvas.press("+")
    demo.wait_for_function("e => e.textContent === ''", arg=notice.element_handle(),
                           timeout=15_000)
    assert int(root.get_attribute("data-bars")) > 0
    root.screenshot(path=str(SCREENSHOTS / "timeline_thinned_zoomed.png"))
    canvas.press("0")
    demo.wait_for_function("e => e.textContent.includes('hatched')", arg=notice.element_handle(),
                           timeout=15_000)


def test_no_script_errors(demo):
    assert demo.script_errors == []
