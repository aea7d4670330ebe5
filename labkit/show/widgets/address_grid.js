// The memory-address grid: logical grid (tiled 2-D slices) linked to the storage strip.
//
// Python (labkit.core.layout) computes every element's storage index and sends it in the `_view`
// trait; this file only draws, highlights and fills in the formula for hover previews.
// The committed selection's text comes back from the kernel (`address_text`, `cell_text`).
// Plain ES module, no imports: it must work offline (Binder, air-gapped labs).

const SVGNS = "http://www.w3.org/2000/svg";
const GAP = 10; // pixels between tiles

function cellSize(numel, widest) {
  if (numel <= 64 && widest <= 16) return 30;
  if (numel <= 256 && widest <= 32) return 20;
  if (numel <= 1024) return 12;
  return 8;
}

// One hue per storage cell over the cells the elements use (labkit.show.widgets.view_model.cell_hue):
// every element shows its cell's colour, so repeated colours mean shared cells, nothing else.
function hue(view, cell) {
  const low = view.cell_low;
  const high = view.cell_high;
  // The span (300 degrees: red to violet) comes from Python (view_model.HUE_SPAN), so the
  // widget and its static picture colour alike. Two decimals keep 4096 cells distinct (steps
  // of 300/4095 = 0.07 degrees) and the fill strings short: the page parses one per rect.
  return high <= low ? "210" : ((view.hue_span * (cell - low)) / (high - low)).toFixed(2);
}

function unravel(k, shape) {
  const index = new Array(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    index[d] = k % shape[d];
    k = Math.floor(k / shape[d]);
  }
  return index;
}

function ravel(index, shape) {
  let k = 0;
  for (let d = 0; d < shape.length; d++) k = k * shape[d] + index[d];
  return k;
}

export function indexText(index) {
  return "(" + index.join(", ") + ")";
}

function hex(n) {
  return "0x" + BigInt(n).toString(16);
}

// Same text as labkit.core.layout.address_formula (Python stays the authority: its text replaces
// this preview when it arrives, and the browser tests check the two agree).
export function formulaText(view, index, storageIndex) {
  const terms = index.map((i, d) => ` + ${i}×${view.stride[d]}`).join("");
  const start = view.base === null || view.base === undefined ? "base" : hex(view.base);
  const size = view.itemsize;
  let text = `${start} + ${size} B × (offset ${view.offset}${terms})`;
  text += ` = ${start} + ${size} B × ${storageIndex}`;
  if (start === "base") return `${text} = base + ${size * storageIndex} B`;
  return `${text} = ${hex(BigInt(view.base) + BigInt(size * storageIndex))}`;
}

function cellAddressText(view, cell) {
  if (view.base === null || view.base === undefined) {
    return `storage cell ${cell} at base + ${view.itemsize * cell} B`;
  }
  return `storage cell ${cell} at ${hex(BigInt(view.base) + BigInt(view.itemsize * cell))}`;
}

// Tile geometry: the last two dims form a 2-D tile; leading dims (up to two) arrange tiles.
function geometry(shape) {
  const nd = shape.length;
  const rows = nd >= 2 ? shape[nd - 2] : 1;
  const cols = nd >= 1 ? shape[nd - 1] : 1;
  let tileRows = 1;
  let tileCols = 1;
  if (nd === 3) tileCols = shape[0];
  if (nd === 4) {
    tileRows = shape[0];
    tileCols = shape[1];
  }
  if (nd === 3 && tileCols > 8) {
    tileRows = Math.ceil(tileCols / 8);
    tileCols = 8;
  }
  return { nd, rows, cols, tileRows, tileCols };
}

function tileLabel(shape, tile) {
  const nd = shape.length;
  if (nd === 3) return `[${tile}, :, :]`;
  if (nd === 4) return `[${Math.floor(tile / shape[1])}, ${tile % shape[1]}, :, :]`;
  return "";
}

function buildGridSvg(view, numel) {
  const g = geometry(view.shape);
  const cs = cellSize(numel, Math.max(g.rows, g.cols));
  const labelH = g.nd >= 3 ? 14 : 0;
  const tileW = g.cols * cs;
  const tileH = g.rows * cs + labelH;
  const tilesPerRow = g.tileCols;
  const nTiles = g.nd === 3 ? view.shape[0] : g.tileRows * g.tileCols;
  const tileGridRows = Math.ceil(nTiles / tilesPerRow);
  const width = Math.max(1, tilesPerRow * (tileW + GAP) - GAP) + 2;
  const height = Math.max(1, tileGridRows * (tileH + GAP) - GAP) + 2;
  const withText = cs >= 20;
  const parts = [];
  const tileSize = g.rows * g.cols;
  for (let t = 0; t < nTiles; t++) {
    const ox = 1 + (t % tilesPerRow) * (tileW + GAP);
    const oy = 1 + Math.floor(t / tilesPerRow) * (tileH + GAP);
    if (labelH) {
      parts.push(`<text class="lt-tile-label" x="${ox}" y="${oy + 10}">${tileLabel(view.shape, t)}</text>`);
    }
    for (let r = 0; r < g.rows; r++) {
      for (let c = 0; c < g.cols; c++) {
        const k = t * tileSize + r * g.cols + c;
        const x = ox + c * cs;
        const y = oy + labelH + r * cs;
        const pos = unravel(k, view.shape).join(",");
        const cell = view.element_offsets[k];
        parts.push(
          `<rect class="lt-el" data-index="${k}" data-pos="${pos}" data-cell="${cell}" x="${x}" y="${y}" width="${cs}" height="${cs}" fill="hsl(${hue(view, cell)} 70% 82%)"/>`,
        );
        if (withText) {
          const label = view.storage_values.length ? view.storage_values[cell - view.strip_start] : String(cell);
          parts.push(`<text class="lt-label" x="${x + cs / 2}" y="${y + cs / 2 + 4}">${label ?? ""}</text>`);
        }
      }
    }
  }
  const aria = `logical grid of shape ${indexText(view.shape)}: click an element, or use the arrow keys, to see its address`;
  return `<svg xmlns="${SVGNS}" data-role="grid" data-lm-suppress-shortcuts="true" tabindex="0" role="img" aria-label="${aria}" width="${width}" height="${height}">${parts.join("")}</svg>`;
}

function buildStripSvg(view, counts, firstElement, numel) {
  const start = view.strip_start;
  const stop = view.strip_stop;
  const n = stop - start;
  const cs = n <= 64 ? 30 : n <= 256 ? 20 : n <= 1024 ? 12 : 8;
  const perRow = n <= 24 ? Math.max(n, 1) : cs >= 20 ? 16 : 64;
  const rows = Math.max(1, Math.ceil(n / perRow));
  const withText = cs >= 20;
  const markH = withText ? 14 : 2; // room above each row for the cell numbers
  const top = withText ? 0 : 12; // room for the "offset" label over a small strip
  const width = perRow * cs + 2;
  const height = top + rows * (cs + markH) + 2;
  const parts = [];
  for (let c = start; c < stop; c++) {
    const j = c - start;
    const x = 1 + (j % perRow) * cs;
    const y = 1 + top + markH + Math.floor(j / perRow) * (cs + markH);
    const count = counts[j];
    let cls = "lt-cell";
    let fill = "";
    if (count === 0) cls += c < view.offset ? " lt-unused lt-before-offset" : " lt-unused";
    else fill = ` fill="hsl(${hue(view, c)} 70% 82%)"`;
    if (count > 1) cls += " lt-shared";
    parts.push(`<rect class="${cls}" data-cell="${c}" data-count="${count}" x="${x}" y="${y}" width="${cs}" height="${cs}"${fill}/>`);
    if (withText) {
      const label = view.storage_values.length ? view.storage_values[j] : String(c);
      parts.push(`<text class="lt-label" x="${x + cs / 2}" y="${y + cs / 2 + 4}">${label}</text>`);
      if (count > 1) parts.push(`<text class="lt-badge" x="${x + cs - 2}" y="${y + 9}">×${count}</text>`);
    }
    if (withText && (j % perRow === 0 || c % 4 === 0)) {
      parts.push(`<text class="lt-ruler" x="${x + 1}" y="${y - 3}">${c}</text>`);
    }
    if (c === view.offset && view.offset > 0) {
      parts.push(`<line class="lt-offset-mark" x1="${x}" y1="${y - (withText ? 12 : 10)}" x2="${x}" y2="${y + cs}"/>`);
      if (!withText) parts.push(`<text class="lt-ruler" x="${x + 2}" y="${y - markH - 1}">offset ${c}</text>`);
    }
  }
  const aria = `storage strip, cells ${start} to ${stop - 1}: click a cell to see which elements read it`;
  return `<svg xmlns="${SVGNS}" data-role="strip" tabindex="0" role="img" aria-label="${aria}" width="${width}" height="${height}">${parts.join("")}</svg>`;
}

// Mount a grid into `host`, driven by `model` (an AddressGrid or StrideExplorer model).
// Returns { redraw, destroy }. Exported so the stride explorer can reuse it.
export function mountGrid(host, model) {
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

  let view = null;
  let elRects = [];
  let cellRects = [];
  let cellElements = []; // storage cell (relative to strip_start) -> element indices
  let lit = []; // rects currently carrying highlight classes
  let selection = null; // {type: "element", k} | {type: "cell", c}
  let committing = false; // true while this view writes the selection into the model
  let clickStart = null; // performance.now() of the last click, until the kernel's text arrives

  function noteKernelTime() {
    if (clickStart === null || !timed()) return;
    root.dataset.kernelMs = (performance.now() - clickStart).toFixed(2);
    clickStart = null;
  }

  // The kernel's text counts only if it describes the selection shown now (clicks can race).
  function kernelText(name) {
    const key = selection && selection.type === "element"
      ? "element:" + unravel(selection.k, view.shape).join(",")
      : selection ? "cell:" + selection.c : "";
    return model.get("text_for") === key ? model.get(name) : "";
  }

  function clearLit() {
    for (const [node, cls] of lit) node.classList.remove(cls);
    lit = [];
  }
  function light(node, cls) {
    if (node) {
      node.classList.add(cls);
      lit.push([node, cls]);
    }
  }

  function describeElement(k) {
    const index = unravel(k, view.shape);
    const cell = view.element_offsets[k];
    what.textContent = `element ${indexText(index)} → storage cell ${cell}`;
    info.dataset.storageIndex = String(cell);
    info.dataset.byteAddress = view.base === null || view.base === undefined
      ? String(view.itemsize * cell)
      : BigInt(view.base + view.itemsize * cell).toString();
    return { index, cell };
  }

  function showElement(k, cls, fromKernel) {
    const { index, cell } = describeElement(k);
    light(elRects[k], cls);
    light(cellRects[cell - view.strip_start], cls === "lt-selected" ? "lt-target" : "lt-hover-target");
    if (fromKernel && kernelText("address_text")) {
      formula.textContent = kernelText("address_text");
      formula.dataset.source = "kernel";
      noteKernelTime();
    } else {
      formula.textContent = formulaText(view, index, cell);
      formula.dataset.source = "preview";
    }
  }

  function showCell(c, cls, fromKernel) {
    const members = cellElements[c - view.strip_start] || [];
    light(cellRects[c - view.strip_start], cls === "lt-selected" ? "lt-target" : "lt-hover-target");
    for (const k of members) light(elRects[k], cls);
    const noun = members.length === 1 ? "element" : "elements";
    what.textContent = `storage cell ${c} ← ${members.length} ${noun}`;
    info.dataset.storageIndex = String(c);
    delete info.dataset.byteAddress;
    if (fromKernel && kernelText("cell_text")) {
      formula.textContent = kernelText("cell_text");
      formula.dataset.source = "kernel";
      noteKernelTime();
    } else {
      const shown = members.slice(0, 8).map((k) => indexText(unravel(k, view.shape))).join(", ");
      const more = members.length > 8 ? ` and ${members.length - 8} more` : "";
      formula.textContent = members.length
        ? `${cellAddressText(view, c)}: ${members.length} ${noun} ${shown}${more}`
        : `${cellAddressText(view, c)}: no element reads it (unused)`;
      formula.dataset.source = "preview";
    }
  }

  function showSelection(fromKernel) {
    clearLit();
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
      showElement(selection.k, "lt-selected", fromKernel);
    } else if (selection && selection.type === "cell") {
      info.dataset.selected = "cell:" + selection.c;
      showCell(selection.c, "lt-selected", fromKernel);
    } else {
      what.textContent = "Click an element or a storage cell (hover previews it).";
      formula.dataset.source = "none";
    }
  }

  function selectionFromModel() {
    const sel = model.get("selected") || [];
    const cell = model.get("selected_cell");
    if (view && view.drawn && (sel.length || (view.shape.length === 0 && cell < 0))) {
      selection = { type: "element", k: view.shape.length ? ravel(sel, view.shape) : 0 };
    } else if (cell >= 0) {
      selection = { type: "cell", c: cell };
    } else {
      selection = null;
    }
  }

  // Timings are recorded only when the widget asks for them (timing_hooks=True, for
  // benchmarks/widget_latency.py): forcing layout to time it costs the learner's page.
  const timed = () => Boolean(model.get("timing_hooks"));

  function afterPaint(name, t0) {
    if (!timed()) return;
    requestAnimationFrame(() => {
      setTimeout(() => {
        root.dataset[name] = (performance.now() - t0).toFixed(2);
      }, 0);
    });
  }

  function redraw() {
    const t0 = performance.now();
    view = model.get("_view");
    if (!view || !view.shape) return;
    title.textContent = view.title || "";
    root.dataset.title = view.title || "";
    kind.textContent = view.kind;
    kind.dataset.kind = view.kind;
    const extra = (view.flags || []).filter((f) => f !== view.kind);
    explanation.textContent = (extra.length ? `[${extra.join(", ")}] ` : "") + view.explanation;
    root.dataset.flags = (view.flags || []).join(" ");
    const numel = view.numel;
    if (!view.drawn) {
      gridBox.innerHTML = "";
      stripBox.innerHTML = "";
      const summary = el("div", "lt-summary");
      summary.dataset.role = "summary";
      summary.textContent = `shape ${indexText(view.shape)}, stride ${indexText(view.stride)}, offset ${view.offset}, ${view.itemsize} B per element. ${view.reason}`;
      gridBox.append(summary);
      elRects = [];
      cellRects = [];
      cellElements = [];
    } else {
      const n = view.strip_stop - view.strip_start;
      const counts = new Int32Array(n);
      const firstElement = new Int32Array(n).fill(-1);
      cellElements = new Array(n);
      for (let k = 0; k < numel; k++) {
        const j = view.element_offsets[k] - view.strip_start;
        if (j < 0 || j >= n) continue;
        if (counts[j] === 0) {
          firstElement[j] = k;
          cellElements[j] = [k];
        } else cellElements[j].push(k);
        counts[j]++;
      }
      gridBox.innerHTML = buildGridSvg(view, numel);
      const hidden = view.storage_size - n;
      stripBox.innerHTML = buildStripSvg(view, counts, firstElement, numel) +
        (hidden > 0 ? `<div class="lt-note">storage holds ${view.storage_size} cells; drawn: ${view.strip_start}..${view.strip_stop - 1}, the range the elements use</div>` : "");
      elRects = new Array(numel);
      for (const node of gridBox.querySelectorAll("rect.lt-el")) elRects[+node.dataset.index] = node;
      cellRects = new Array(n);
      for (const node of stripBox.querySelectorAll("rect.lt-cell")) cellRects[+node.dataset.cell - view.strip_start] = node;
    }
    selectionFromModel();
    showSelection(true);
    if (timed()) {
      void root.getBoundingClientRect(); // force style and layout so the timing includes them
      root.dataset.renderMs = (performance.now() - t0).toFixed(2);
    }
    root.dataset.renderCount = String(+root.dataset.renderCount + 1);
    afterPaint("paintMs", t0);
  }

  function commit(newSelection) {
    selection = newSelection;
    committing = true;
    if (newSelection.type === "element") {
      model.set("selected", unravel(newSelection.k, view.shape));
      model.set("selected_cell", -1);
    } else {
      model.set("selected", []);
      model.set("selected_cell", newSelection.c);
    }
    committing = false;
    model.save_changes();
  }

  function onClick(event) {
    const t0 = performance.now();
    const target = event.target;
    if (!view || !view.drawn || !target.dataset) return;
    if (target.classList.contains("lt-el")) commit({ type: "element", k: +target.dataset.index });
    else if (target.classList.contains("lt-cell")) commit({ type: "cell", c: +target.dataset.cell });
    else return;
    clickStart = t0;
    showSelection(false);
    if (timed()) {
      void root.getBoundingClientRect();
      root.dataset.clickMs = (performance.now() - t0).toFixed(2);
    }
    afterPaint("clickPaintMs", t0);
  }

  function onHover(event) {
    const target = event.target;
    if (!view || !view.drawn || !target.dataset) return;
    if (target.classList.contains("lt-el")) {
      clearLit();
      showSelectionHighlightOnly();
      showElement(+target.dataset.index, "lt-hover", false);
    } else if (target.classList.contains("lt-cell")) {
      clearLit();
      showSelectionHighlightOnly();
      showCell(+target.dataset.cell, "lt-hover", false);
    }
  }

  function showSelectionHighlightOnly() {
    if (!selection) return;
    if (selection.type === "element") {
      light(elRects[selection.k], "lt-selected");
      light(cellRects[view.element_offsets[selection.k] - view.strip_start], "lt-target");
    } else {
      light(cellRects[selection.c - view.strip_start], "lt-target");
      for (const k of cellElements[selection.c - view.strip_start] || []) light(elRects[k], "lt-selected");
    }
  }

  function onLeave() {
    showSelection(true);
  }

  function onKey(event) {
    if (!view || !view.drawn || view.numel === 0) return;
    const moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -geometry(view.shape).cols, ArrowDown: geometry(view.shape).cols };
    if (!(event.key in moves)) return;
    event.preventDefault();
    const current = selection && selection.type === "element" ? selection.k : -moves[event.key];
    const k = Math.min(view.numel - 1, Math.max(0, current + moves[event.key]));
    commit({ type: "element", k });
    showSelection(false);
  }

  function onKernelText() {
    if (selection) showSelection(true);
  }

  function onSelectionFromKernel() {
    if (committing) return;
    selectionFromModel();
    showSelection(true);
  }

  root.addEventListener("lt-redraw", redraw); // lets benchmarks time a redraw on an idle page
  body.addEventListener("click", onClick);
  body.addEventListener("mouseover", onHover);
  body.addEventListener("mouseleave", onLeave);
  gridBox.addEventListener("keydown", onKey);
  model.on("change:_view", redraw);
  model.on("change:text_for", onKernelText);
  model.on("change:selected", onSelectionFromKernel);
  model.on("change:selected_cell", onSelectionFromKernel);
  redraw();

  return {
    root,
    redraw,
    destroy() {
      model.off("change:_view", redraw);
      model.off("change:text_for", onKernelText);
      model.off("change:selected", onSelectionFromKernel);
      model.off("change:selected_cell", onSelectionFromKernel);
      root.remove();
    },
  };
}

function render({ model, el: host }) {
  const grid = mountGrid(host, model);
  return () => grid.destroy();
}

export default { render };
