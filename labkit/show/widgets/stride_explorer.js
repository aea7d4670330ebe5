// The stride explorer: text fields for shape, stride and offset, preset buttons, and the
// address grid below. Edits are sent to Python as a *proposal*; Python validates them with
// labkit.core.layout and either applies them (the grid redraws) or sets `error` (shown here).
//
// The grid drawing lives in address_grid.js; Python sends its source in `_grid_module`
// and we import it from a blob URL (the same way anywidget loads `_esm`), so there is one
// copy of the drawing code and no network access.

async function loadGridModule(source) {
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  try {
    return await import(/* webpackIgnore: true */ url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

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

async function render({ model, el: host }) {
  const root = el("div", "lt-explorer");
  root.dataset.lmSuppressShortcuts = "true";
  const presetBar = el("div", "lt-presets");
  presetBar.setAttribute("role", "group");
  presetBar.setAttribute("aria-label", "preset layouts");
  const controls = el("div", "lt-controls");
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
  const error = el("div", "lt-error");
  error.dataset.role = "error";
  error.setAttribute("role", "alert");
  const description = el("div", "lt-note");
  description.dataset.role = "preset-description";
  const gridHost = el("div", "lt-explorer-grid");
  root.append(presetBar, controls, error, description, gridHost);
  host.append(root);

  let seq = 0;
  let timer = null;
  function propose(extra) {
    seq += 1;
    model.set("proposal", { seq, ...extra });
    model.save_changes();
  }
  function proposeFields() {
    clearTimeout(timer);
    timer = null;
    propose({
      shape: inputs.shape.value,
      stride: inputs.stride.value,
      offset: inputs.offset.value,
    });
  }
  for (const input of Object.values(inputs)) {
    // Live: a short pause after typing sends the proposal; Enter sends it at once.
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(proposeFields, 250);
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        proposeFields();
      }
    });
  }

  function drawPresets() {
    presetBar.replaceChildren();
    for (const preset of model.get("presets") || []) {
      const button = el("button", "lt-preset", preset.name.replace(/_/g, " "));
      button.type = "button";
      button.dataset.preset = preset.name;
      button.title = `shape (${preset.shape.join(", ")}), stride (${preset.stride.join(", ")}): ${preset.description}`;
      button.addEventListener("click", () => propose({ preset: preset.name }));
      presetBar.append(button);
    }
    syncPreset();
  }

  function syncPreset() {
    const current = model.get("preset");
    for (const button of presetBar.querySelectorAll("button")) {
      button.setAttribute("aria-pressed", String(button.dataset.preset === current));
    }
    const found = (model.get("presets") || []).find((p) => p.name === current);
    description.textContent = found ? found.description : "";
  }

  function syncFields() {
    // The model holds the last valid layout; show it, except in the field the learner is
    // typing in (their text stays, so an error can be fixed in place).
    for (const name of Object.keys(inputs)) {
      if (document.activeElement !== inputs[name]) inputs[name].value = fieldText(model, name);
    }
  }

  function syncError() {
    const message = model.get("error") || "";
    error.textContent = message;
    gridHost.classList.toggle("lt-stale", Boolean(message));
    gridHost.setAttribute("aria-disabled", String(Boolean(message)));
    gridHost.title = message ? "the last valid layout, greyed out until the fields are valid again" : "";
    for (const input of Object.values(inputs)) {
      input.setAttribute("aria-invalid", String(Boolean(message)));
    }
  }

  let grid;
  try {
    const gridModule = await loadGridModule(model.get("_grid_module"));
    grid = gridModule.mountGrid(gridHost, model);
  } catch (err) {
    // A front end that refuses blob: modules still gets the controls and a reason.
    gridHost.textContent = `The grid could not be drawn here (${err}); the controls still work.`;
    grid = { destroy() {} };
  }
  drawPresets();
  syncFields();
  syncError();

  const onView = () => syncFields();
  model.on("change:_view", onView);
  model.on("change:error", syncError);
  model.on("change:preset", syncPreset);
  model.on("change:presets", drawPresets);

  return () => {
    clearTimeout(timer);
    model.off("change:_view", onView);
    model.off("change:error", syncError);
    model.off("change:preset", syncPreset);
    model.off("change:presets", drawPresets);
    grid.destroy();
    root.remove();
  };
}

export default { render };
