// The timeline's data on the page: the columns Python sends (timeline.py's window_view),
// decoded into typed arrays with, per row, the index that finds the first bar of a window.

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

// Per row: the range of its bars (they arrive sorted by row, then start) and the running
// maximum of their ends, so the first bar that reaches into a window is a binary search.
function indexRows(data) {
  const { n, start, duration, row } = data;
  const rows = new Map();
  const reach = new Float64Array(n);
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
  indexRows(data);
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
