// The timeline widget: lanes of bars on a canvas, zoom and pan, hover and click.
//
// Python (labkit/show/widgets/timeline.py) decides what reaches the page: every event of the
// window, or, when there are too many, the long ones plus aggregate bars. The page only
// draws. Drawing merges bars that fall on the same pixel of the same row, so a frame costs
// about (visible events) steps and at most (pixels x rows) rectangles, whatever the zoom.

const MIN_SPAN_US = 0.01;

// `el` is the shared DOM helper (dom.js), put in front of this module by Python.

function copyArray(Type, view) {
  // DataViews from the kernel may start at any byte offset: copy into an aligned buffer.
  if (!view || !view.byteLength) return new Type(0);
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice();
  return new Type(bytes.buffer);
}

export function formatUs(us) {
  const a = Math.abs(us);
  if (a === 0) return "0";
  if (a >= 1e6) return `${(us / 1e6).toPrecision(3)} s`;
  if (a >= 1e3) return `${(us / 1e3).toPrecision(3)} ms`;
  return `${us.toPrecision(3)} µs`;
}

function niceStep(span, target) {
  const raw = span / target;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

function readData(model) {
  const start = copyArray(Float64Array, model.get("_starts"));
  const duration = copyArray(Float64Array, model.get("_durations"));
  const ints = copyArray(Int32Array, model.get("_columns"));
  const n = start.length;
  // Seven int32 columns, one after another: each is a view, nothing is copied.
  const col = (k) => ints.subarray(k * n, (k + 1) * n);
  const data = {
    n, start, duration, row: col(0), kind: col(1), name: col(2), index: col(3),
    launcherName: col(4), launcher: col(5), count: col(6), names: model.get("names") || [],
    window: model.get("data_window") || [0, 1], exact: model.get("exact"),
  };
  // Per row: the range of its bars (they arrive sorted by row, then start) and the running
  // maximum of their ends, so the first bar that reaches into a window is a binary search.
  const rows = new Map();
  const reach = new Float64Array(n);
  const row = data.row;
  let current = null;
  for (let i = 0; i < n; i++) {
    const end = start[i] + duration[i];
    if (current === null || row[i] !== row[i - 1]) {
      current = { first: i, last: i };
      rows.set(row[i], current);
      reach[i] = end;
    } else {
      current.last = i;
      reach[i] = reach[i - 1] > end ? reach[i - 1] : end;
    }
  }
  data.rows = rows;
  data.reach = reach;
  // Event index -> bar position, for links and selection: built on first use.
  let position = null;
  data.positionOf = (index) => {
    if (position === null) {
      position = new Map();
      for (let i = 0; i < n; i++) if (data.index[i] >= 0) position.set(data.index[i], i);
    }
    return position.get(index);
  };
  return data;
}

function firstReaching(data, range, t) {
  let lo = range.first;
  let hi = range.last + 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (data.reach[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function render({ model, el: host }) {
  const renderBegin = performance.now();
  // Lane geometry in pixels comes from Python (timeline.LANE_GEOMETRY), one place for it.
  const geometry = model.get("geometry");
  const ROW_H = geometry.row_h;
  const ROW_GAP = geometry.row_gap;
  const LANE_GAP = geometry.lane_gap;
  const LABEL_W = geometry.label_w;
  const AXIS_H = geometry.axis_h;
  const root = el("div", "lt-timeline");
  root.dataset.title = model.get("title") || "";
  root.tabIndex = -1;
  root.dataset.lmSuppressShortcuts = "true";
  const title = el("div", "lt-timeline-title", model.get("title") || "");
  const summary = el("div", "lt-timeline-summary");
  summary.dataset.role = "summary";
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
  const legend = el("span", "lt-timeline-legend");
  toolbar.append(legend);
  const frame = el("div", "lt-timeline-frame");
  frame.style.position = "relative";
  const canvas = el("canvas");
  canvas.dataset.role = "canvas";
  canvas.tabIndex = 0;
  canvas.dataset.lmSuppressShortcuts = "true";
  canvas.setAttribute("aria-label", "timeline: + and - zoom, arrows pan, 0 resets, click selects");
  canvas.style.display = "block";
  canvas.style.outline = "none";
  const tooltip = el("div", "lt-timeline-tooltip");
  tooltip.dataset.role = "tooltip";
  Object.assign(tooltip.style, {
    position: "absolute", pointerEvents: "none", display: "none", background: "rgba(255,255,255,0.96)",
    border: "1px solid #888", padding: "3px 6px", font: "12px sans-serif", maxWidth: "520px",
    whiteSpace: "pre-wrap", zIndex: 10, color: "#111",
  });
  frame.append(canvas, tooltip);
  const detail = el("div", "lt-timeline-detail", "Click a bar to see what it is and, for GPU work, which CPU op launched it.");
  detail.dataset.role = "detail";
  const notice = el("div", "lt-timeline-notice");
  notice.dataset.role = "notice";
  root.append(title, summary, toolbar, frame, detail, notice);
  host.append(root);

  const kinds = model.get("kinds") || [];
  const colours = model.get("colours") || [];
  for (let k = 0; k < kinds.length; k++) {
    const item = el("span", "lt-timeline-key", kinds[k].replace("_", " "));
    item.style.borderLeft = `10px solid ${colours[k]}`;
    item.style.paddingLeft = "3px";
    item.style.marginLeft = "8px";
    legend.append(item);
  }

  let data = readData(model);
  root.dataset.decodeMs = (performance.now() - renderBegin).toFixed(2);
  const extent = model.get("extent") || [0, 1];
  let view = [extent[0], extent[1]];
  let selected = -1; // bar position
  let hatch = null;
  let requestTimer = null;
  let requestSeq = 0;

  const lanes = () => model.get("lanes") || [];
  const totalRows = () => lanes().reduce((s, l) => Math.max(s, l.first_row + l.rows), 0);
  const rowTop = new Map();
  function layoutRows() {
    rowTop.clear();
    let y = AXIS_H;
    for (const lane of lanes()) {
      for (let r = 0; r < lane.rows; r++) {
        rowTop.set(lane.first_row + r, y);
        y += ROW_H + ROW_GAP;
      }
      y += LANE_GAP;
    }
    return y;
  }

  // The canvas size is measured when the widget is shown or resized, not on every frame:
  // reading the page's layout during a zoom would force the browser to lay it out again.
  let measured = null;
  function size() {
    if (measured === null) {
      const width = Math.max(400, Math.floor(host.getBoundingClientRect().width || 900) - 4);
      measured = { width, height: layoutRows() + 4, ratio: window.devicePixelRatio || 1 };
    }
    const { width, height, ratio } = measured;
    if (canvas.width !== Math.floor(width * ratio) || canvas.height !== Math.floor(height * ratio)) {
      canvas.width = Math.floor(width * ratio);
      canvas.height = Math.floor(height * ratio);
      canvas.style.width = `${width}px`;
      canvas.style.height = `${height}px`;
    }
    return measured;
  }

  function drawSummary() {
    summary.replaceChildren();
    for (const [label, value] of model.get("summary_lines") || []) {
      const item = el("span", "lt-timeline-figure");
      item.dataset.key = label;
      item.append(el("b", "", `${label}: `), document.createTextNode(value));
      item.style.marginRight = "14px";
      summary.append(item);
    }
    notice.textContent = model.get("notice") || "";
  }

  function draw() {
    const begin = performance.now();
    const { width, height, ratio } = size();
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "middle";
    const plotW = width - LABEL_W;
    const [v0, v1] = view;
    const scale = plotW / (v1 - v0);
    // Lane labels and backgrounds.
    let stripe = 0;
    for (const lane of lanes()) {
      const top = rowTop.get(lane.first_row);
      const h = lane.rows * (ROW_H + ROW_GAP);
      ctx.fillStyle = stripe++ % 2 ? "#f4f4f4" : "#fafafa";
      ctx.fillRect(0, top - 1, width, h);
      ctx.fillStyle = "#222";
      ctx.fillText(lane.name.length > 26 ? lane.name.slice(0, 25) + "…" : lane.name, 4, top + ROW_H / 2);
    }
    // Time axis.
    const step = niceStep(v1 - v0, Math.max(2, Math.floor(plotW / 110)));
    ctx.fillStyle = "#444";
    ctx.strokeStyle = "#ddd";
    ctx.beginPath();
    for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
      const x = LABEL_W + (t - v0) * scale;
      ctx.moveTo(x + 0.5, AXIS_H - 4);
      ctx.lineTo(x + 0.5, height);
      ctx.fillText(formatUs(t), x + 2, 9);
    }
    ctx.stroke();
    // Bars, merged per pixel column within a row.
    let bars = 0;
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, 0, plotW, height);
    ctx.clip();
    const labelled = [];
    let lastFill = null;
    for (const [r, range] of data.rows) {
      const top = rowTop.get(r);
      if (top === undefined) continue;
      let lastEnd = -1;
      let lastKind = -1;
      for (let i = firstReaching(data, range, v0); i <= range.last; i++) {
        const s = data.start[i];
        if (s > v1) break;
        const x0 = Math.max(LABEL_W, LABEL_W + (s - v0) * scale);
        const x1 = Math.min(width, LABEL_W + (s + data.duration[i] - v0) * scale);
        let px0 = Math.floor(x0);
        const px1 = Math.max(px0 + 1, Math.ceil(x1));
        const kind = data.kind[i];
        if (px1 <= lastEnd && kind === lastKind) continue;
        if (px0 < lastEnd && kind === lastKind) px0 = lastEnd;
        const fill = data.count[i] > 1 ? hatch || colours[kind] : colours[kind];
        if (fill !== lastFill) {
          ctx.fillStyle = fill;
          lastFill = fill;
        }
        // A bar four pixels wide or more leaves its last pixel empty, so back-to-back
        // kernels still show where one ends and the next begins.
        ctx.fillRect(px0, top, px1 - px0 >= 4 ? px1 - px0 - 1 : px1 - px0, ROW_H);
        bars++;
        lastEnd = px1;
        lastKind = kind;
        if (px1 - px0 > 60 && data.name[i] >= 0 && labelled.length < 400) labelled.push([i, px0, px1, top]);
      }
    }
    ctx.fillStyle = "#fff";
    for (const [i, px0, px1, top] of labelled) {
      const text = data.names[data.name[i]] || "";
      const room = Math.floor((px1 - px0 - 6) / 6);
      if (room > 3) ctx.fillText(text.length > room ? text.slice(0, room - 1) + "…" : text, px0 + 3, top + ROW_H / 2);
    }
    // The selection, and the CPU op that launched it, outlined and joined.
    if (selected >= 0 && selected < data.n) {
      const box = barBox(selected, scale);
      ctx.lineWidth = 2;
      ctx.strokeStyle = "#000";
      ctx.strokeRect(box.x, box.y, box.w, ROW_H);
      const launcher = data.positionOf(data.launcher[selected]);
      if (data.launcher[selected] >= 0 && launcher !== undefined) {
        const from = barBox(launcher, scale);
        ctx.strokeStyle = "#d62728";
        ctx.strokeRect(from.x, from.y, from.w, ROW_H);
        ctx.beginPath();
        ctx.moveTo(from.x + Math.min(from.w, 4), from.y + ROW_H);
        ctx.lineTo(box.x, box.y);
        ctx.stroke();
      }
    }
    ctx.restore();
    root.dataset.view = `${v0},${v1}`;
    root.dataset.bars = String(bars);
    const took = performance.now() - begin;
    requestAnimationFrame(() => {
      root.dataset.paintMs = (performance.now() - begin).toFixed(2);
    });
    return took;
  }

  function barBox(i, scale) {
    const x = LABEL_W + (data.start[i] - view[0]) * scale;
    return { x, y: rowTop.get(data.row[i]), w: Math.max(2, data.duration[i] * scale) };
  }

  function makeHatch() {
    const tile = document.createElement("canvas");
    tile.width = 6;
    tile.height = 6;
    const t = tile.getContext("2d");
    t.fillStyle = "#888";
    t.fillRect(0, 0, 6, 6);
    t.strokeStyle = "#ddd";
    t.beginPath();
    t.moveTo(0, 6);
    t.lineTo(6, 0);
    t.stroke();
    return canvas.getContext("2d").createPattern(tile, "repeat");
  }

  function maybeRequest() {
    // Thinned data, or a view outside the data we hold: ask Python for this window.
    const [d0, d1] = data.window;
    const outside = view[0] < d0 - 1e-9 || view[1] > d1 + 1e-9;
    const coarse = !data.exact && (view[1] - view[0]) < 0.5 * (d1 - d0);
    if (!outside && !coarse) return;
    clearTimeout(requestTimer);
    requestTimer = setTimeout(() => {
      requestSeq += 1;
      model.set("view_request", { seq: requestSeq, t0: view[0], t1: view[1] });
      model.save_changes();
    }, 150);
  }

  function setView(t0, t1) {
    const [e0, e1] = extent;
    let span = Math.min(Math.max(t1 - t0, MIN_SPAN_US), e1 - e0);
    let a = t0;
    if (a < e0) a = e0;
    if (a + span > e1) a = e1 - span;
    view = [a, a + span];
    const took = draw();
    root.dataset.zoomMs = took.toFixed(2);
    maybeRequest();
  }

  function zoom(factor, anchorFraction = 0.5) {
    const span = view[1] - view[0];
    const anchor = view[0] + span * anchorFraction;
    const next = span / factor;
    setView(anchor - next * anchorFraction, anchor - next * anchorFraction + next);
  }

  function pan(fraction) {
    const span = view[1] - view[0];
    setView(view[0] + span * fraction, view[1] + span * fraction);
  }

  function hit(event) {
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    if (x < LABEL_W) return -1;
    let row = -1;
    for (const [r, top] of rowTop) if (y >= top && y < top + ROW_H + ROW_GAP) row = r;
    const range = data.rows.get(row);
    if (!range) return -1;
    const scale = (canvas.clientWidth - LABEL_W) / (view[1] - view[0]);
    const t = view[0] + (x - LABEL_W) / scale;
    const slack = 2 / scale; // two pixels
    let best = -1;
    for (let i = firstReaching(data, range, t - slack); i <= range.last; i++) {
      if (data.start[i] > t + slack) break;
      if (data.start[i] + data.duration[i] >= t - slack && (best < 0 || data.duration[i] < data.duration[best])) best = i;
    }
    return best;
  }

  function describe(i) {
    const kind = kinds[data.kind[i]];
    if (data.count[i] > 1) {
      return `${data.count[i]} events (mostly ${kind}) merged at this zoom over ${formatUs(data.duration[i])}: zoom in to see them one by one`;
    }
    let text = `${data.names[data.name[i]]}\n${kind}, ${formatUs(data.duration[i])}, starts at ${formatUs(data.start[i])}`;
    if (data.launcherName[i] >= 0) text += `\nlaunched by ${data.names[data.launcherName[i]]}`;
    else if (kind !== "cpu_op" && kind !== "runtime" && kind !== "sync") text += "\nno launching CPU op recorded";
    return text;
  }

  function showDetail(i) {
    if (i < 0) {
      detail.textContent = "Click a bar to see what it is and, for GPU work, which CPU op launched it.";
      delete detail.dataset.index;
      delete detail.dataset.kind;
      delete detail.dataset.launchedBy;
      return;
    }
    detail.textContent = describe(i);
    detail.dataset.index = String(data.index[i]);
    detail.dataset.kind = kinds[data.kind[i]];
    if (data.launcherName[i] >= 0) detail.dataset.launchedBy = data.names[data.launcherName[i]];
    else delete detail.dataset.launchedBy;
  }

  // Mouse: wheel zooms around the pointer, drag pans, hover shows, click selects.
  let dragging = null;
  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    const rect = canvas.getBoundingClientRect();
    const fraction = Math.min(1, Math.max(0, (event.clientX - rect.left - LABEL_W) / (rect.width - LABEL_W)));
    zoom(Math.exp(-event.deltaY * 0.002), fraction);
  }, { passive: false });
  canvas.addEventListener("mousedown", (event) => {
    dragging = { x: event.clientX, view: view.slice(), moved: false };
  });
  window.addEventListener("mousemove", onDrag);
  window.addEventListener("mouseup", onDragEnd);
  function onDrag(event) {
    if (!dragging) return;
    const dx = event.clientX - dragging.x;
    if (Math.abs(dx) > 3) dragging.moved = true;
    if (!dragging.moved) return;
    const scale = (canvas.clientWidth - LABEL_W) / (dragging.view[1] - dragging.view[0]);
    setView(dragging.view[0] - dx / scale, dragging.view[1] - dx / scale);
  }
  function onDragEnd() {
    setTimeout(() => { dragging = null; }, 0);
  }
  canvas.addEventListener("mousemove", (event) => {
    if (dragging && dragging.moved) return;
    const i = hit(event);
    if (i < 0) {
      tooltip.style.display = "none";
      return;
    }
    const rect = frame.getBoundingClientRect();
    tooltip.textContent = describe(i);
    tooltip.style.display = "block";
    tooltip.style.left = `${Math.min(event.clientX - rect.left + 12, rect.width - 300)}px`;
    tooltip.style.top = `${event.clientY - rect.top + 14}px`;
  });
  canvas.addEventListener("mouseleave", () => { tooltip.style.display = "none"; });
  canvas.addEventListener("click", (event) => {
    if (dragging && dragging.moved) return;
    canvas.focus();
    const i = hit(event);
    selected = i;
    showDetail(i);
    draw();
    const index = i >= 0 ? data.index[i] : -1;
    if (index >= -1) {
      model.set("selected", index);
      model.save_changes();
    }
  });
  canvas.addEventListener("keydown", (event) => {
    const keys = {
      "+": () => zoom(1.5), "=": () => zoom(1.5), w: () => zoom(1.5),
      "-": () => zoom(1 / 1.5), s: () => zoom(1 / 1.5),
      ArrowLeft: () => pan(-0.2), a: () => pan(-0.2), ArrowRight: () => pan(0.2), d: () => pan(0.2),
      "0": () => setView(extent[0], extent[1]), Home: () => setView(extent[0], extent[1]),
    };
    const action = keys[event.key];
    if (!action) return;
    event.preventDefault();
    event.stopPropagation();
    action();
  });
  toolbar.addEventListener("click", (event) => {
    const action = event.target?.dataset?.action;
    if (action === "zoom-in") zoom(1.5);
    else if (action === "zoom-out") zoom(1 / 1.5);
    else if (action === "reset") setView(extent[0], extent[1]);
  });
  const onZoomEvent = (event) => zoom(Number(event.detail) || 1.5);
  root.addEventListener("lt-zoom", onZoomEvent);
  // For tests and benchmarks: where an event's bar is on screen (client coordinates).
  root.ltTimeline = {
    barCenter(index) {
      const i = data.positionOf(index);
      if (i === undefined) return null;
      const rect = canvas.getBoundingClientRect();
      const scale = (rect.width - LABEL_W) / (view[1] - view[0]);
      const mid = Math.max(view[0], data.start[i]) + Math.min(data.duration[i], view[1] - Math.max(view[0], data.start[i])) / 2;
      return { x: rect.left + LABEL_W + (mid - view[0]) * scale, y: rect.top + rowTop.get(data.row[i]) + ROW_H / 2 };
    },
    view: () => view.slice(),
  };

  function onData() {
    const begin = performance.now();
    const keep = selected >= 0 && selected < data.n ? data.index[selected] : -1;
    data = readData(model);
    selected = keep >= 0 && data.positionOf(keep) !== undefined ? data.positionOf(keep) : -1;
    drawSummary();
    draw();
    root.dataset.renderMs = (performance.now() - begin).toFixed(2);
  }
  model.on("change:data_seq", onData);
  model.on("change:summary_lines", drawSummary);
  model.on("change:notice", drawSummary);
  const resize = new ResizeObserver(() => {
    measured = null;
    draw();
  });
  resize.observe(host);

  hatch = makeHatch();
  drawSummary();
  root.dataset.drawMs = draw().toFixed(2);
  // The first render: decoding the data, the layout and the first frame's drawing.
  root.dataset.renderMs = (performance.now() - renderBegin).toFixed(2);

  return () => {
    resize.disconnect();
    clearTimeout(requestTimer);
    window.removeEventListener("mousemove", onDrag);
    window.removeEventListener("mouseup", onDragEnd);
    root.removeEventListener("lt-zoom", onZoomEvent);
    model.off("change:data_seq", onData);
    model.off("change:summary_lines", drawSummary);
    model.off("change:notice", drawSummary);
    root.remove();
  };
}

export default { render };
