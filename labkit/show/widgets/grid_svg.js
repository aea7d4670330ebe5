// The address grid's pictures as SVG text: the logical grid (tiled 2-D slices, one rect per
// element, coloured by the storage cell it reads) and the storage strip beside it, plus the
// address formula the page previews on hover. Pure functions of the `_view` Python sends
// (labkit.core.layout computed every storage index); grid.js puts them on the page.
// Plain ES-module code, no imports: it must work offline (Binder, air-gapped labs).

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
