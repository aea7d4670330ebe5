// The address grid widget: one live grid (grid.js, drawing grid_svg.js's pictures).
//
// Python (labkit.core.layout) computes every element's storage index and sends it in the `_view`
// trait; the page only draws, highlights and fills in the formula for hover previews.
// The committed selection's text comes back from the kernel (`address_text`, `cell_text`).
// Python joins dom.js, grid_svg.js, grid.js and this file into one module
// (labkit.show.widgets.base.assemble); it has no imports, so it works offline.

function render({ model, el: host }) {
  const grid = mountGrid(host, model);
  return () => grid.destroy();
}

export default { render };
