// The timeline's canvas: lane backgrounds and names, the time axis, the bars (merged per
// pixel column within a row, so a frame costs about (visible events) steps and at most
// (pixels x rows) rectangles, whatever the zoom), their names, and the selection joined to
// the CPU op that launched it. `t` is the mounted timeline (timeline.js's timelineState).

function niceStep(span, target) {
  const raw = span / target;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

function lanesOf(t) {
  return t.model.get("lanes") || [];
}

// Each row's top in pixels, lane after lane; returns the height they take.
function layoutRows(t) {
  t.rowTop.clear();
  let y = t.geo.axis_h;
  for (const lane of lanesOf(t)) {
    for (let r = 0; r < lane.rows; r++) {
      t.rowTop.set(lane.first_row + r, y);
      y += t.geo.row_h + t.geo.row_gap;
    }
    y += t.geo.lane_gap;
  }
  return y;
}

// The canvas size is measured when the widget is shown or resized, not on every frame:
// reading the page's layout during a zoom would force the browser to lay it out again.
function canvasSize(t) {
  const canvas = t.canvas;
  if (t.measured === null) {
    const width = Math.max(400, Math.floor(t.host.getBoundingClientRect().width || 900) - 4);
    t.measured = { width, height: layoutRows(t) + 4, ratio: window.devicePixelRatio || 1 };
  }
  const { width, height, ratio } = t.measured;
  if (canvas.width !== Math.floor(width * ratio) || canvas.height !== Math.floor(height * ratio)) {
    canvas.width = Math.floor(width * ratio);
    canvas.height = Math.floor(height * ratio);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
  }
  return t.measured;
}

// Lane backgrounds (striped) and lane names.
function drawLanes(t, ctx, width) {
  let stripe = 0;
  for (const lane of lanesOf(t)) {
    const top = t.rowTop.get(lane.first_row);
    const h = lane.rows * (t.geo.row_h + t.geo.row_gap);
    ctx.fillStyle = stripe++ % 2 ? "#f4f4f4" : "#fafafa";
    ctx.fillRect(0, top - 1, width, h);
    ctx.fillStyle = "#222";
    ctx.fillText(lane.name.length > 26 ? lane.name.slice(0, 25) + "…" : lane.name, 4, top + t.geo.row_h / 2);
  }
}

// The time axis: ticks at round steps, labelled in µs, ms or s.
function drawAxis(t, ctx, height, plotW, scale) {
  const [v0, v1] = t.view;
  const labelW = t.geo.label_w;
  const step = niceStep(v1 - v0, Math.max(2, Math.floor(plotW / 110)));
  ctx.fillStyle = "#444";
  ctx.strokeStyle = "#ddd";
  ctx.beginPath();
  for (let tick = Math.ceil(v0 / step) * step; tick <= v1; tick += step) {
    const x = labelW + (tick - v0) * scale;
    ctx.moveTo(x + 0.5, t.geo.axis_h - 4);
    ctx.lineTo(x + 0.5, height);
    ctx.fillText(formatUs(tick), x + 2, 9);
  }
  ctx.stroke();
}

// The bars, merged per pixel column within a row; returns how many were drawn and which
// are wide enough to carry their name.
function drawBars(t, ctx, width, scale) {
  const { data, colours } = t;
  const [v0, v1] = t.view;
  const labelW = t.geo.label_w;
  const labelled = [];
  let bars = 0;
  let lastFill = null;
  for (const [r, range] of data.rows) {
    const top = t.rowTop.get(r);
    if (top === undefined) continue;
    let lastEnd = -1;
    let lastKind = -1;
    for (let i = firstReaching(data, range, v0); i <= range.last; i++) {
      const s = data.start[i];
      if (s > v1) break;
      const x0 = Math.max(labelW, labelW + (s - v0) * scale);
      const x1 = Math.min(width, labelW + (s + data.duration[i] - v0) * scale);
      let px0 = Math.floor(x0);
      const px1 = Math.max(px0 + 1, Math.ceil(x1));
      const kind = data.kind[i];
      if (px1 <= lastEnd && kind === lastKind) continue;
      if (px0 < lastEnd && kind === lastKind) px0 = lastEnd;
      const fill = data.count[i] > 1 ? t.hatch || colours[kind] : colours[kind];
      if (fill !== lastFill) {
        ctx.fillStyle = fill;
        lastFill = fill;
      }
      // A bar four pixels wide or more leaves its last pixel empty, so back-to-back
      // kernels still show where one ends and the next begins.
      ctx.fillRect(px0, top, px1 - px0 >= 4 ? px1 - px0 - 1 : px1 - px0, t.geo.row_h);
      bars++;
      lastEnd = px1;
      lastKind = kind;
      if (px1 - px0 > 60 && data.name[i] >= 0 && labelled.length < 400) labelled.push([i, px0, px1, top]);
    }
  }
  return { bars, labelled };
}

// The names of the bars wide enough to hold a few letters, cut to fit.
function drawBarNames(t, ctx, labelled) {
  ctx.fillStyle = "#fff";
  for (const [i, px0, px1, top] of labelled) {
    const text = t.data.names[t.data.name[i]] || "";
    const room = Math.floor((px1 - px0 - 6) / 6);
    if (room > 3) ctx.fillText(text.length > room ? text.slice(0, room - 1) + "…" : text, px0 + 3, top + t.geo.row_h / 2);
  }
}

function barBox(t, i, scale) {
  const x = t.geo.label_w + (t.data.start[i] - t.view[0]) * scale;
  return { x, y: t.rowTop.get(t.data.row[i]), w: Math.max(2, t.data.duration[i] * scale) };
}

// The selection, and the CPU op that launched it, outlined and joined.
function drawSelection(t, ctx, scale) {
  const { data, selected } = t;
  const rowH = t.geo.row_h;
  if (!(selected >= 0 && selected < data.n)) return;
  const box = barBox(t, selected, scale);
  ctx.lineWidth = 2;
  ctx.strokeStyle = "#000";
  ctx.strokeRect(box.x, box.y, box.w, rowH);
  const launcher = data.positionOf(data.launcher[selected]);
  if (data.launcher[selected] >= 0 && launcher !== undefined) {
    const from = barBox(t, launcher, scale);
    ctx.strokeStyle = "#d62728";
    ctx.strokeRect(from.x, from.y, from.w, rowH);
    ctx.beginPath();
    ctx.moveTo(from.x + Math.min(from.w, 4), from.y + rowH);
    ctx.lineTo(box.x, box.y);
    ctx.stroke();
  }
}

// The pattern of aggregate bars (several events merged at this zoom): grey, hatched.
function makeHatch(canvas) {
  const tile = document.createElement("canvas");
  tile.width = 6;
  tile.height = 6;
  const pen = tile.getContext("2d");
  pen.fillStyle = "#888";
  pen.fillRect(0, 0, 6, 6);
  pen.strokeStyle = "#ddd";
  pen.beginPath();
  pen.moveTo(0, 6);
  pen.lineTo(6, 0);
  pen.stroke();
  return canvas.getContext("2d").createPattern(tile, "repeat");
}

// One frame: lanes, axis, then (clipped to the plot) bars, names and the selection.
// Returns the milliseconds it took; the paint time lands in data-paint-ms a frame later.
function drawFrame(t) {
  const begin = performance.now();
  const { width, height, ratio } = canvasSize(t);
  const ctx = t.canvas.getContext("2d");
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  ctx.font = "11px sans-serif";
  ctx.textBaseline = "middle";
  const plotW = width - t.geo.label_w;
  const scale = plotW / (t.view[1] - t.view[0]);
  drawLanes(t, ctx, width);
  drawAxis(t, ctx, height, plotW, scale);
  ctx.save();
  ctx.beginPath();
  ctx.rect(t.geo.label_w, 0, plotW, height);
  ctx.clip();
  const { bars, labelled } = drawBars(t, ctx, width, scale);
  drawBarNames(t, ctx, labelled);
  drawSelection(t, ctx, scale);
  ctx.restore();
  t.root.dataset.view = `${t.view[0]},${t.view[1]}`;
  t.root.dataset.bars = String(bars);
  const took = performance.now() - begin;
  requestAnimationFrame(() => {
    t.root.dataset.paintMs = (performance.now() - begin).toFixed(2);
  });
  return took;
}
