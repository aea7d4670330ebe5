// The timeline widget: lanes of bars on a canvas, zoom and pan, hover and click.
//
// Python (labkit/show/widgets/timeline.py) decides what reaches the page: every event of the
// window, or, when there are too many, the long ones plus aggregate bars. The page only
// draws (timeline_canvas.js) the data it decoded (timeline_data.js). This file builds the
// widget around the canvas (toolbar, legend, summary, tooltip, detail) and answers the
// mouse and the keys. Python joins dom.js and the three files into one module.

const MIN_SPAN_US = 0.01;
const NO_SELECTION = "Click a bar to see what it is and, for GPU work, which CPU op launched it.";

// The toolbar: zoom in, zoom out, reset, and the legend after them.
function toolbarNode() {
  const toolbar = el("div", "lt-timeline-toolbar");
  for (const [action, label, hint] of [
    ["zoom-in", "+", "zoom in (+ or w)"],
    ["zoom-out", "−", "zoom out (- or s)"],
    ["reset", "reset", "show everything (0)"],
  ]) {
    const button = el("button", "lt-timeline-button", label);
    button.type = "button";
    button.dataset.action = action;
    button.title = hint;
    button.setAttribute("aria-label", hint);
    toolbar.append(button);
  }
  return toolbar;
}

// The legend: one key per kind of event, in its colour.
function legendNode(kinds, colours) {
  const legend = el("span", "lt-timeline-legend");
  for (let k = 0; k < kinds.length; k++) {
    const item = el("span", "lt-timeline-key", kinds[k].replace("_", " "));
    item.style.borderLeft = `10px solid ${colours[k]}`;
    item.style.paddingLeft = "3px";
    item.style.marginLeft = "8px";
    legend.append(item);
  }
  return legend;
}

function canvasNode() {
  const canvas = el("canvas");
  canvas.dataset.role = "canvas";
  canvas.tabIndex = 0;
  canvas.dataset.lmSuppressShortcuts = "true";
  canvas.setAttribute("aria-label", "timeline: + and - zoom, arrows pan, 0 resets, click selects");
  canvas.style.display = "block";
  canvas.style.outline = "none";
  return canvas;
}

function tooltipNode() {
  const tooltip = el("div", "lt-timeline-tooltip");
  tooltip.dataset.role = "tooltip";
  Object.assign(tooltip.style, {
    position: "absolute", pointerEvents: "none", display: "none", background: "rgba(255,255,255,0.96)",
    border: "1px solid #888", padding: "3px 6px", font: "12px sans-serif", maxWidth: "520px",
    whiteSpace: "pre-wrap", zIndex: 10, color: "#111",
  });
  return tooltip;
}

// The widget's nodes, top to bottom: title, summary, toolbar, canvas (with its tooltip),
// detail, notice; and the state every function here and in timeline_canvas.js shares.
function timelineState(host, model) {
  const root = el("div", "lt-timeline");
  root.dataset.title = model.get("title") || "";
  root.tabIndex = -1;
  root.dataset.lmSuppressShortcuts = "true";
  const summary = el("div", "lt-timeline-summary");
  summary.dataset.role = "summary";
  const kinds = model.get("kinds") || [];
  const colours = model.get("colours") || [];
  const toolbar = toolbarNode();
  toolbar.append(legendNode(kinds, colours));
  const frame = el("div", "lt-timeline-frame");
  frame.style.position = "relative";
  const canvas = canvasNode();
  const tooltip = tooltipNode();
  frame.append(canvas, tooltip);
  const detail = el("div", "lt-timeline-detail", NO_SELECTION);
  detail.dataset.role = "detail";
  const notice = el("div", "lt-timeline-notice");
  notice.dataset.role = "notice";
  root.append(el("div", "lt-timeline-title", model.get("title") || ""), summary, toolbar, frame, detail, notice);
  host.append(root);
  const extent = model.get("extent") || [0, 1];
  return {
    model, host, root, summary, toolbar, frame, canvas, tooltip, detail, notice, kinds, colours,
    // Lane geometry in pixels comes from Python (timeline.LANE_GEOMETRY), one place for it.
    geo: model.get("geometry"), extent, view: [extent[0], extent[1]], data: null,
    selected: -1, hatch: null, requestTimer: null, requestSeq: 0, rowTop: new Map(),
    measured: null, dragging: null,
  };
}

// The summary figures above the toolbar, and the notice (thinning) below the canvas.
function drawSummary(t) {
  t.summary.replaceChildren();
  for (const [label, value] of t.model.get("summary_lines") || []) {
    const item = el("span", "lt-timeline-figure");
    item.dataset.key = label;
    item.append(el("b", "", `${label}: `), document.createTextNode(value));
    item.style.marginRight = "14px";
    t.summary.append(item);
  }
  t.notice.textContent = t.model.get("notice") || "";
}

function maybeRequest(t) {
  // Thinned data, or a view outside the data we hold: ask Python for this window.
  const [d0, d1] = t.data.window;
  const view = t.view;
  const outside = view[0] < d0 - 1e-9 || view[1] > d1 + 1e-9;
  const coarse = !t.data.exact && (view[1] - view[0]) < 0.5 * (d1 - d0);
  if (!outside && !coarse) return;
  clearTimeout(t.requestTimer);
  t.requestTimer = setTimeout(() => {
    t.requestSeq += 1;
    t.model.set("view_request", { seq: t.requestSeq, t0: t.view[0], t1: t.view[1] });
    t.model.save_changes();
  }, 150);
}

function setView(t, t0, t1) {
  const [e0, e1] = t.extent;
  const span = Math.min(Math.max(t1 - t0, MIN_SPAN_US), e1 - e0);
  let a = t0;
  if (a < e0) a = e0;
  if (a + span > e1) a = e1 - span;
  t.view = [a, a + span];
  const took = drawFrame(t);
  t.root.dataset.zoomMs = took.toFixed(2);
  maybeRequest(t);
}

function zoom(t, factor, anchorFraction = 0.5) {
  const span = t.view[1] - t.view[0];
  const anchor = t.view[0] + span * anchorFraction;
  const next = span / factor;
  setView(t, anchor - next * anchorFraction, anchor - next * anchorFraction + next);
}

function pan(t, fraction) {
  const span = t.view[1] - t.view[0];
  setView(t, t.view[0] + span * fraction, t.view[1] + span * fraction);
}

// The bar under the pointer (the shortest, within two pixels), or -1.
function hit(t, event) {
  const { canvas, data, view } = t;
  const labelW = t.geo.label_w;
  const rect = canvas.getBoundingClientRect();
  const x = event.clientX - rect.left;
  const y = event.clientY - rect.top;
  if (x < labelW) return -1;
  let row = -1;
  for (const [r, top] of t.rowTop) if (y >= top && y < top + t.geo.row_h + t.geo.row_gap) row = r;
  const range = data.rows.get(row);
  if (!range) return -1;
  const scale = (canvas.clientWidth - labelW) / (view[1] - view[0]);
  const at = view[0] + (x - labelW) / scale;
  const slack = 2 / scale; // two pixels
  let best = -1;
  for (let i = firstReaching(data, range, at - slack); i <= range.last; i++) {
    if (data.start[i] > at + slack) break;
    if (data.start[i] + data.duration[i] >= at - slack && (best < 0 || data.duration[i] < data.duration[best])) best = i;
  }
  return best;
}

// What a bar is, in words: the tooltip's and the detail line's text.
function describe(t, i) {
  const data = t.data;
  const kind = t.kinds[data.kind[i]];
  if (data.count[i] > 1) {
    return `${data.count[i]} events (mostly ${kind}) merged at this zoom over ${formatUs(data.duration[i])}: zoom in to see them one by one`;
  }
  let text = `${data.names[data.name[i]]}\n${kind}, ${formatUs(data.duration[i])}, starts at ${formatUs(data.start[i])}`;
  if (data.launcherName[i] >= 0) text += `\nlaunched by ${data.names[data.launcherName[i]]}`;
  else if (kind !== "cpu_op" && kind !== "runtime" && kind !== "sync") text += "\nno launching CPU op recorded";
  return text;
}

// The detail line under the canvas: the selected bar, or how to select one.
function showDetail(t, i) {
  const detail = t.detail;
  if (i < 0) {
    detail.textContent = NO_SELECTION;
    delete detail.dataset.index;
    delete detail.dataset.kind;
    delete detail.dataset.launchedBy;
    return;
  }
  detail.textContent = describe(t, i);
  detail.dataset.index = String(t.data.index[i]);
  detail.dataset.kind = t.kinds[t.data.kind[i]];
  if (t.data.launcherName[i] >= 0) detail.dataset.launchedBy = t.data.names[t.data.launcherName[i]];
  else delete detail.dataset.launchedBy;
}

// The tooltip beside the pointer, naming the bar under it.
function showTooltip(t, event) {
  if (t.dragging && t.dragging.moved) return;
  const i = hit(t, event);
  if (i < 0) {
    t.tooltip.style.display = "none";
    return;
  }
  const rect = t.frame.getBoundingClientRect();
  t.tooltip.textContent = describe(t, i);
  t.tooltip.style.display = "block";
  t.tooltip.style.left = `${Math.min(event.clientX - rect.left + 12, rect.width - 300)}px`;
  t.tooltip.style.top = `${event.clientY - rect.top + 14}px`;
}

function select(t, event) {
  if (t.dragging && t.dragging.moved) return;
  t.canvas.focus();
  const i = hit(t, event);
  t.selected = i;
  showDetail(t, i);
  drawFrame(t);
  const index = i >= 0 ? t.data.index[i] : -1;
  if (index >= -1) {
    t.model.set("selected", index);
    t.model.save_changes();
  }
}

// Mouse: wheel zooms around the pointer, drag pans, hover shows, click selects. Returns
// what to undo when the widget goes (the drag listens on the window).
function listenToMouse(t) {
  const { canvas } = t;
  const labelW = t.geo.label_w;
  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    const rect = canvas.getBoundingClientRect();
    const fraction = Math.min(1, Math.max(0, (event.clientX - rect.left - labelW) / (rect.width - labelW)));
    zoom(t, Math.exp(-event.deltaY * 0.002), fraction);
  }, { passive: false });
  canvas.addEventListener("mousedown", (event) => {
    t.dragging = { x: event.clientX, view: t.view.slice(), moved: false };
  });
  const onDrag = (event) => {
    const dragging = t.dragging;
    if (!dragging) return;
    const dx = event.clientX - dragging.x;
    if (Math.abs(dx) > 3) dragging.moved = true;
    if (!dragging.moved) return;
    const scale = (canvas.clientWidth - labelW) / (dragging.view[1] - dragging.view[0]);
    setView(t, dragging.view[0] - dx / scale, dragging.view[1] - dx / scale);
  };
  const onDragEnd = () => {
    setTimeout(() => { t.dragging = null; }, 0);
  };
  window.addEventListener("mousemove", onDrag);
  window.addEventListener("mouseup", onDragEnd);
  canvas.addEventListener("mousemove", (event) => showTooltip(t, event));
  canvas.addEventListener("mouseleave", () => { t.tooltip.style.display = "none"; });
  canvas.addEventListener("click", (event) => select(t, event));
  return () => {
    window.removeEventListener("mousemove", onDrag);
    window.removeEventListener("mouseup", onDragEnd);
  };
}

// Keys on the focused canvas, and the toolbar's buttons.
function listenToKeysAndButtons(t) {
  const reset = () => setView(t, t.extent[0], t.extent[1]);
  t.canvas.addEventListener("keydown", (event) => {
    const keys = {
      "+": () => zoom(t, 1.5), "=": () => zoom(t, 1.5), w: () => zoom(t, 1.5),
      "-": () => zoom(t, 1 / 1.5), s: () => zoom(t, 1 / 1.5),
      ArrowLeft: () => pan(t, -0.2), a: () => pan(t, -0.2), ArrowRight: () => pan(t, 0.2), d: () => pan(t, 0.2),
      "0": reset, Home: reset,
    };
    const action = keys[event.key];
    if (!action) return;
    event.preventDefault();
    event.stopPropagation();
    action();
  });
  t.toolbar.addEventListener("click", (event) => {
    const action = event.target?.dataset?.action;
    if (action === "zoom-in") zoom(t, 1.5);
    else if (action === "zoom-out") zoom(t, 1 / 1.5);
    else if (action === "reset") reset();
  });
}

// For tests and benchmarks: where an event's bar is on screen (client coordinates).
function testHooks(t) {
  return {
    barCenter(index) {
      const { data, view, canvas } = t;
      const i = data.positionOf(index);
      if (i === undefined) return null;
      const rect = canvas.getBoundingClientRect();
      const scale = (rect.width - t.geo.label_w) / (view[1] - view[0]);
      const mid = Math.max(view[0], data.start[i]) + Math.min(data.duration[i], view[1] - Math.max(view[0], data.start[i])) / 2;
      return { x: rect.left + t.geo.label_w + (mid - view[0]) * scale, y: rect.top + t.rowTop.get(data.row[i]) + t.geo.row_h / 2 };
    },
    view: () => t.view.slice(),
  };
}

// New data from Python (another window): decode it, keep the selection if it is still there.
function onData(t) {
  const begin = performance.now();
  const keep = t.selected >= 0 && t.selected < t.data.n ? t.data.index[t.selected] : -1;
  t.data = readData(t.model);
  t.selected = keep >= 0 && t.data.positionOf(keep) !== undefined ? t.data.positionOf(keep) : -1;
  drawSummary(t);
  drawFrame(t);
  t.root.dataset.renderMs = (performance.now() - begin).toFixed(2);
}

function render({ model, el: host }) {
  const renderBegin = performance.now();
  const t = timelineState(host, model);
  t.data = readData(model);
  t.root.dataset.decodeMs = (performance.now() - renderBegin).toFixed(2);
  const stopMouse = listenToMouse(t);
  listenToKeysAndButtons(t);
  const onZoomEvent = (event) => zoom(t, Number(event.detail) || 1.5);
  t.root.addEventListener("lt-zoom", onZoomEvent);
  t.root.ltTimeline = testHooks(t);
  const onNewData = () => onData(t);
  const onSummary = () => drawSummary(t);
  model.on("change:data_seq", onNewData);
  model.on("change:summary_lines", onSummary);
  model.on("change:notice", onSummary);
  const resize = new ResizeObserver(() => {
    t.measured = null;
    drawFrame(t);
  });
  resize.observe(host);

  t.hatch = makeHatch(t.canvas);
  drawSummary(t);
  t.root.dataset.drawMs = drawFrame(t).toFixed(2);
  // The first render: decoding the data, the layout and the first frame's drawing.
  t.root.dataset.renderMs = (performance.now() - renderBegin).toFixed(2);

  return () => {
    resize.disconnect();
    clearTimeout(t.requestTimer);
    stopMouse();
    t.root.removeEventListener("lt-zoom", onZoomEvent);
    model.off("change:data_seq", onNewData);
    model.off("change:summary_lines", onSummary);
    model.off("change:notice", onSummary);
    t.root.remove();
  };
}

export default { render };
