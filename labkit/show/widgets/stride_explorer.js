// The stride explorer: text fields for shape, stride and offset, preset buttons, and the
// address grid below. Edits are sent to Python as a *proposal*; Python validates them with
// labkit.core.layout and either applies them (the grid redraws) or sets `error` (shown here).
//
// The grid is grid.js's mountGrid: Python joins dom.js, grid_svg.js, grid.js and this file
// into one module (labkit.show.widgets.base.assemble), so there is one copy of the drawing
// code and no network access.

const FIELDS = [
  ["shape", "shape", "sizes, e.g. 3, 4"],
  ["stride", "stride", "elements to skip per step in each dimension, e.g. 4, 1"],
  ["offset", "offset", "storage index of element (0, 0, ...)"],
];

function fieldText(model, name) {
  const value = model.get(name);
  if (!Array.isArray(value)) return String(value);
  return value.length ? value.join(", ") : "()"; // a 0-d layout: an empty field would be an error
}

// The three text fields (shape, stride, offset), each labelled with a hint.
function fieldInputs(controls) {
  const inputs = {};
  for (const [name, label, hint] of FIELDS) {
    const wrap = el("label", "", label);
    const input = el("input");
    input.type = "text";
    input.dataset.field = name;
    input.setAttribute("aria-label", `${label}: ${hint}`);
    input.title = hint;
    input.spellcheck = false;
    wrap.append(input);
    controls.append(wrap);
    inputs[name] = input;
  }
  return inputs;
}

// The nodes: preset bar, fields, error, the preset's description, and the grid's host.
function explorerNodes(host, model) {
  const root = el("div", "lt-explorer");
  root.dataset.lmSuppressShortcuts = "true";
  const presetBar = el("div", "lt-presets");
  presetBar.setAttribute("role", "group");
  presetBar.setAttribute("aria-label", "preset layouts");
  const controls = el("div", "lt-controls");
  const inputs = fieldInputs(controls);
  const error = el("div", "lt-error");
  error.dataset.role = "error";
  error.setAttribute("role", "alert");
  const description = el("div", "lt-note");
  description.dataset.role = "preset-description";
  const gridHost = el("div", "lt-explorer-grid");
  root.append(presetBar, controls, error, description, gridHost);
  host.append(root);
  return { model, root, presetBar, inputs, error, description, gridHost, seq: 0, timer: null };
}

function propose(x, extra) {
  x.seq += 1;
  x.model.set("proposal", { seq: x.seq, ...extra });
  x.model.save_changes();
}

function proposeFields(x) {
  clearTimeout(x.timer);
  x.timer = null;
  propose(x, {
    shape: x.inputs.shape.value,
    stride: x.inputs.stride.value,
    offset: x.inputs.offset.value,
  });
}

// Live: a short pause after typing sends the proposal; Enter sends it at once.
function listenToFields(x) {
  for (const input of Object.values(x.inputs)) {
    input.addEventListener("input", () => {
      clearTimeout(x.timer);
      x.timer = setTimeout(() => proposeFields(x), 250);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        proposeFields(x);
      }
    });
  }
}

// One button per preset that fits the storage; a click proposes it.
function drawPresets(x) {
  x.presetBar.replaceChildren();
  for (const preset of x.model.get("presets") || []) {
    const button = el("button", "lt-preset", preset.name.replace(/_/g, " "));
    button.type = "button";
    button.dataset.preset = preset.name;
    button.title = `shape (${preset.shape.join(", ")}), stride (${preset.stride.join(", ")}): ${preset.description}`;
    button.addEventListener("click", () => propose(x, { preset: preset.name }));
    x.presetBar.append(button);
  }
  syncPreset(x);
}

// The pressed preset button and its description.
function syncPreset(x) {
  const current = x.model.get("preset");
  for (const button of x.presetBar.querySelectorAll("button")) {
    button.setAttribute("aria-pressed", String(button.dataset.preset === current));
  }
  const found = (x.model.get("presets") || []).find((p) => p.name === current);
  x.description.textContent = found ? found.description : "";
}

// The model holds the last valid layout; show it, except in the field the learner is
// typing in (their text stays, so an error can be fixed in place).
function syncFields(x) {
  for (const name of Object.keys(x.inputs)) {
    if (document.activeElement !== x.inputs[name]) x.inputs[name].value = fieldText(x.model, name);
  }
}

// The refusal's text, and the grid greyed out while there is one.
function syncError(x) {
  const message = x.model.get("error") || "";
  x.error.textContent = message;
  x.gridHost.classList.toggle("lt-stale", Boolean(message));
  x.gridHost.setAttribute("aria-disabled", String(Boolean(message)));
  x.gridHost.title = message ? "the last valid layout, greyed out until the fields are valid again" : "";
  for (const input of Object.values(x.inputs)) {
    input.setAttribute("aria-invalid", String(Boolean(message)));
  }
}

function render({ model, el: host }) {
  const x = explorerNodes(host, model);
  listenToFields(x);
  const grid = mountGrid(x.gridHost, model);
  drawPresets(x);
  syncFields(x);
  syncError(x);

  const onView = () => syncFields(x);
  const onError = () => syncError(x);
  const onPreset = () => syncPreset(x);
  const onPresets = () => drawPresets(x);
  model.on("change:_view", onView);
  model.on("change:error", onError);
  model.on("change:preset", onPreset);
  model.on("change:presets", onPresets);

  return () => {
    clearTimeout(x.timer);
    model.off("change:_view", onView);
    model.off("change:error", onError);
    model.off("change:preset", onPreset);
    model.off("change:presets", onPresets);
    grid.destroy();
    x.root.remove();
  };
}

export default { render };
