// Shared DOM helper of the labkit widgets, put in front of each widget's module by Python
// (labkit.show.widgets.base.assemble), so there is one copy of it in the repository.

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  // JupyterLab would read arrow keys and Enter on a focused input or button as notebook
  // shortcuts (move to the next cell, edit mode); this attribute makes Lumino skip them.
  if (["input", "button"].includes(tag)) node.dataset.lmSuppressShortcuts = "true";
  return node;
}
