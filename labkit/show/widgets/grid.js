// The live address grid (mountGrid): the grid and strip of grid_svg.js on the page, the
// selection and hover highlights, the address text, and the timings benchmarks read.
// Shared by the address grid and the stride explorer (Python puts this file in both modules).
//
// One object `g` carries a mounted grid's nodes and state; each function below draws one
// part of it (the header, the cells, the highlights, the address text) or answers one event.

// The nodes: header (title, kind, explanation), body (grid and strip), info (what, formula).
function gridNodes(host) {
  const root = el("div", "lt-grid-widget");
  // Arrow keys on the focused grid move the selection, not JupyterLab's active cell.
  root.dataset.lmSuppressShortcuts = "true";
  root.dataset.renderCount = "0";
  const header = el("div", "lt-header");
  const title = el("span", "lt-title");
  const kind = el("span", "lt-kind");
  kind.dataset.role = "kind";
  const explanation = el("span", "lt-explanation");
  header.append(title, kind, explanation);
  const body = el("div", "lt-body");
  const gridBox = el("div", "lt-grid-box");
  const stripBox = el("div", "lt-strip-box");
  body.append(gridBox, stripBox);
  const info = el("div", "lt-info");
  info.dataset.role = "info";
  info.setAttribute("aria-live", "polite");
  const what = el("div", "lt-what");
  what.dataset.role = "what";
  const formula = el("div", "lt-formula");
  formula.dataset.role = "address-text";
  info.append(what, formula);
  root.append(header, body, info);
  host.append(root);
  return { root, title, kind, explanation, body, gridBox, stripBox, info, what, formula };
}

function gridState(host, model) {
  return {
    model,
    ...gridNodes(host),
    view: null,
    elRects: [],
    cellRects: [],
    cellElements: [], // storage cell (relative to strip_start) -> element indices
    lit: [], // rects currently carrying highlight classes
    selection: null, // {type: "element", k} | {type: "cell", c}
    committing: false, // true while this view writes the selection into the model
    clickStart: null, // performance.now() of the last click, until the kernel's text arrives
  };
}

// Timings are recorded only when the widget asks for them (timing_hooks=True, for
// benchmarks/widget_latency.py): forcing layout to time it costs the learner's page.
function timed(g) {
  return Boolean(g.model.get("timing_hooks"));
}

function noteKernelTime(g) {
  if (g.clickStart === null || !timed(g)) return;
  g.root.dataset.kernelMs = (performance.now() - g.clickStart).toFixed(2);
  g.clickStart = null;
}

function afterPaint(g, name, t0) {
  if (!timed(g)) return;
  requestAnimationFrame(() => {
    setTimeout(() => {
      g.root.dataset[name] = (performance.now() - t0).toFixed(2);
    }, 0);
  });
}

// The kernel's text counts only if it describes the selection shown now (clicks can race).
function kernelText(g, name) {
  const selection = g.selection;
  const key = selection && selection.type === "element"
    ? "element:" + unravel(selection.k, g.view.shape).join(",")
    : selection ? "cell:" + selection.c : "";
  return g.model.get("text_for") === key ? g.model.get(name) : "";
}

function clearLit(g) {
  for (const [node, cls] of g.lit) node.classList.remove(cls);
  g.lit = [];
}

function light(g, node, cls) {
  if (node) {
    node.classList.add(cls);
    g.lit.push([node, cls]);
  }
}

function describeElement(g, k) {
  const { view, what, info } = g;
  const index = unravel(k, view.shape);
  const cell = view.element_offsets[k];
  what.textContent = `element ${indexText(index)} → storage cell ${cell}`;
  info.dataset.storageIndex = String(cell);
  info.dataset.byteAddress = view.base === null || view.base === undefined
    ? String(view.itemsize * cell)
    : BigInt(view.base + view.itemsize * cell).toString();
  return { index, cell };
}

// An element lit, with the storage cell it reads, and its address formula.
function showElement(g, k, cls, fromKernel) {
  const { index, cell } = describeElement(g, k);
  light(g, g.elRects[k], cls);
  light(g, g.cellRects[cell - g.view.strip_start], cls === "lt-selected" ? "lt-target" : "lt-hover-target");
  if (fromKernel && kernelText(g, "address_text")) {
    g.formula.textContent = kernelText(g, "address_text");
    g.formula.dataset.source = "kernel";
    noteKernelTime(g);
  } else {
    g.formula.textContent = formulaText(g.view, index, cell);
    g.formula.dataset.source = "preview";
  }
}

// A storage cell lit, with every element that reads it, and what the cell holds.
function showCell(g, c, cls, fromKernel) {
  const { view, formula, info } = g;
  const members = g.cellElements[c - view.strip_start] || [];
  light(g, g.cellRects[c - view.strip_start], cls === "lt-selected" ? "lt-target" : "lt-hover-target");
  for (const k of members) light(g, g.elRects[k], cls);
  const noun = members.length === 1 ? "element" : "elements";
  g.what.textContent = `storage cell ${c} ← ${members.length} ${noun}`;
  info.dataset.storageIndex = String(c);
  delete info.dataset.byteAddress;
  if (fromKernel && kernelText(g, "cell_text")) {
    formula.textContent = kernelText(g, "cell_text");
    formula.dataset.source = "kernel";
    noteKernelTime(g);
  } else {
    const shown = members.slice(0, 8).map((k) => indexText(unravel(k, view.shape))).join(", ");
    const more = members.length > 8 ? ` and ${members.length - 8} more` : "";
    formula.textContent = members.length
      ? `${cellAddressText(view, c)}: ${members.length} ${noun} ${shown}${more}`
      : `${cellAddressText(view, c)}: no element reads it (unused)`;
    formula.dataset.source = "preview";
  }
}

// The committed selection: its highlights and its text (the kernel's when it has arrived).
function showSelection(g, fromKernel) {
  const { view, model, what, formula, info, selection } = g;
  clearLit(g);
  what.textContent = "";
  formula.textContent = "";
  delete info.dataset.storageIndex;
  delete info.dataset.byteAddress;
  delete info.dataset.selected;
  if (!view || !view.drawn) {
    if (model.get("address_text")) {
      what.textContent = `element ${indexText(model.get("selected"))}`;
      formula.textContent = model.get("address_text");
      formula.dataset.source = "kernel";
    }
    return;
  }
  if (selection && selection.type === "element") {
    info.dataset.selected = unravel(selection.k, view.shape).join(",");
    showElement(g, selection.k, "lt-selected", fromKernel);
  } else if (selection && selection.type === "cell") {
    info.dataset.selected = "cell:" + selection.c;
    showCell(g, selection.c, "lt-selected", fromKernel);
  } else {
    what.textContent = "Click an element or a storage cell (hover previews it).";
    formula.dataset.source = "none";
  }
}

// The selection's highlights alone, under a hover preview.
function showSelectionHighlightOnly(g) {
  const { selection, view } = g;
  if (!selection) return;
  if (selection.type === "element") {
    light(g, g.elRects[selection.k], "lt-selected");
    light(g, g.cellRects[view.element_offsets[selection.k] - view.strip_start], "lt-target");
  } else {
    light(g, g.cellRects[selection.c - view.strip_start], "lt-target");
    for (const k of g.cellElements[selection.c - view.strip_start] || []) light(g, g.elRects[k], "lt-selected");
  }
}

function selectionFromModel(g) {
  const { view, model } = g;
  const sel = model.get("selected") || [];
  const cell = model.get("selected_cell");
  if (view && view.drawn && (sel.length || (view.shape.length === 0 && cell < 0))) {
    g.selection = { type: "element", k: view.shape.length ? ravel(sel, view.shape) : 0 };
  } else if (cell >= 0) {
    g.selection = { type: "cell", c: cell };
  } else {
    g.selection = null;
  }
}

// The header: title, the layout's kind and its flags with the explanation.
function drawHeader(g) {
  const view = g.view;
  g.title.textContent = view.title || "";
  g.root.dataset.title = view.title || "";
  g.kind.textContent = view.kind;
  g.kind.dataset.kind = view.kind;
  const extra = (view.flags || []).filter((f) => f !== view.kind);
  g.explanation.textContent = (extra.length ? `[${extra.join(", ")}] ` : "") + view.explanation;
  g.root.dataset.flags = (view.flags || []).join(" ");
}

// Too many elements to draw: one line that says what the layout is and why it is not drawn.
function drawSummaryInstead(g) {
  const view = g.view;
  g.gridBox.innerHTML = "";
  g.stripBox.innerHTML = "";
  const summary = el("div", "lt-summary");
  summary.dataset.role = "summary";
  summary.textContent = `shape ${indexText(view.shape)}, stride ${indexText(view.stride)}, offset ${view.offset}, ${view.itemsize} B per element. ${view.reason}`;
  g.gridBox.append(summary);
  g.elRects = [];
  g.cellRects = [];
  g.cellElements = [];
}

// The grid's and the strip's cells, and which elements read each storage cell.
function drawCells(g) {
  const view = g.view;
  const numel = view.numel;
  const n = view.strip_stop - view.strip_start;
  const counts = new Int32Array(n);
  const firstElement = new Int32Array(n).fill(-1);
  g.cellElements = new Array(n);
  for (let k = 0; k < numel; k++) {
    const j = view.element_offsets[k] - view.strip_start;
    if (j < 0 || j >= n) continue;
    if (counts[j] === 0) {
      firstElement[j] = k;
      g.cellElements[j] = [k];
    } else g.cellElements[j].push(k);
    counts[j]++;
  }
  g.gridBox.innerHTML = buildGridSvg(view, numel);
  const hidden = view.storage_size - n;
  g.stripBox.innerHTML = buildStripSvg(view, counts, firstElement, numel) +
    (hidden > 0 ? `<div class="lt-note">storage holds ${view.storage_size} cells; drawn: ${view.strip_start}..${view.strip_stop - 1}, the range the elements use</div>` : "");
  g.elRects = new Array(numel);
  for (const node of g.gridBox.querySelectorAll("rect.lt-el")) g.elRects[+node.dataset.index] = node;
  g.cellRects = new Array(n);
  for (const node of g.stripBox.querySelectorAll("rect.lt-cell")) g.cellRects[+node.dataset.cell - view.strip_start] = node;
}

// Everything again from the model's `_view`: header, cells (or the summary), selection.
function redrawGrid(g) {
  const t0 = performance.now();
  g.view = g.model.get("_view");
  if (!g.view || !g.view.shape) return;
  drawHeader(g);
  if (!g.view.drawn) drawSummaryInstead(g);
  else drawCells(g);
  selectionFromModel(g);
  showSelection(g, true);
  if (timed(g)) {
    void g.root.getBoundingClientRect(); // force style and layout so the timing includes them
    g.root.dataset.renderMs = (performance.now() - t0).toFixed(2);
  }
  g.root.dataset.renderCount = String(+g.root.dataset.renderCount + 1);
  afterPaint(g, "paintMs", t0);
}

function commit(g, newSelection) {
  g.selection = newSelection;
  g.committing = true;
  if (newSelection.type === "element") {
    g.model.set("selected", unravel(newSelection.k, g.view.shape));
    g.model.set("selected_cell", -1);
  } else {
    g.model.set("selected", []);
    g.model.set("selected_cell", newSelection.c);
  }
  g.committing = false;
  g.model.save_changes();
}

function onClick(g, event) {
  const t0 = performance.now();
  const target = event.target;
  if (!g.view || !g.view.drawn || !target.dataset) return;
  if (target.classList.contains("lt-el")) commit(g, { type: "element", k: +target.dataset.index });
  else if (target.classList.contains("lt-cell")) commit(g, { type: "cell", c: +target.dataset.cell });
  else return;
  g.clickStart = t0;
  showSelection(g, false);
  if (timed(g)) {
    void g.root.getBoundingClientRect();
    g.root.dataset.clickMs = (performance.now() - t0).toFixed(2);
  }
  afterPaint(g, "clickPaintMs", t0);
}

function onHover(g, event) {
  const target = event.target;
  if (!g.view || !g.view.drawn || !target.dataset) return;
  if (target.classList.contains("lt-el")) {
    clearLit(g);
    showSelectionHighlightOnly(g);
    showElement(g, +target.dataset.index, "lt-hover", false);
  } else if (target.classList.contains("lt-cell")) {
    clearLit(g);
    showSelectionHighlightOnly(g);
    showCell(g, +target.dataset.cell, "lt-hover", false);
  }
}

function onKey(g, event) {
  const view = g.view;
  if (!view || !view.drawn || view.numel === 0) return;
  const moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -geometry(view.shape).cols, ArrowDown: geometry(view.shape).cols };
  if (!(event.key in moves)) return;
  event.preventDefault();
  const selection = g.selection;
  const current = selection && selection.type === "element" ? selection.k : -moves[event.key];
  const k = Math.min(view.numel - 1, Math.max(0, current + moves[event.key]));
  commit(g, { type: "element", k });
  showSelection(g, false);
}

// Mount a grid into `host`, driven by `model` (an AddressGrid or StrideExplorer model).
// Returns { root, redraw, destroy }. Exported so the stride explorer can reuse it.
export function mountGrid(host, model) {
  const g = gridState(host, model);
  const redraw = () => redrawGrid(g);
  const onKernelText = () => {
    if (g.selection) showSelection(g, true);
  };
  const onSelectionFromKernel = () => {
    if (g.committing) return;
    selectionFromModel(g);
    showSelection(g, true);
  };
  g.root.addEventListener("lt-redraw", redraw); // lets benchmarks time a redraw on an idle page
  g.body.addEventListener("click", (event) => onClick(g, event));
  g.body.addEventListener("mouseover", (event) => onHover(g, event));
  g.body.addEventListener("mouseleave", () => showSelection(g, true));
  g.gridBox.addEventListener("keydown", (event) => onKey(g, event));
  model.on("change:_view", redraw);
  model.on("change:text_for", onKernelText);
  model.on("change:selected", onSelectionFromKernel);
  model.on("change:selected_cell", onSelectionFromKernel);
  redraw();

  return {
    root: g.root,
    redraw,
    destroy() {
      model.off("change:_view", redraw);
      model.off("change:text_for", onKernelText);
      model.off("change:selected", onSelectionFromKernel);
      model.off("change:selected_cell", onSelectionFromKernel);
      g.root.remove();
    },
  };
}
