// An output held back by an unanswered quiz (holdback.py): a note until the quiz above is
// answered or skipped, then the output itself. The output is not put on the page before
// that, so Run All shows no answer; "Show it anyway" reveals it here alone (it also works
// in a saved page read without a kernel, where the quiz cannot be answered). A cell's first
// held output carries the note; the others of that cell (an empty note) stay out of sight
// and open with it, so a cell shows one banner, not one per output.

function render({ model, el: host }) {
  const root = el("div", "lt-held");
  root.dataset.role = "held";
  const note = el("div", "lt-held-note");
  const text = el("span", "", model.get("note") + " ");
  const peek = el("button", "lt-held-peek", "Show it anyway");
  peek.type = "button";
  note.append(text, peek);
  const body = el("div", "lt-held-body");
  root.append(note, body);
  host.append(root);
  let peeked = false;
  root.addEventListener("lt-peek", () => {
    peeked = true;
    show();
  });
  peek.addEventListener("click", () => {
    // this output and the silent ones of the same cell (its output area)
    const area = host.closest(".jp-OutputArea") || host.parentElement || host;
    const held = area.querySelectorAll("[data-role=held]");
    for (const other of held.length ? held : [root]) other.dispatchEvent(new CustomEvent("lt-peek"));
  });

  function show() {
    const open = model.get("revealed") || peeked;
    const quiet = !model.get("note");
    root.dataset.revealed = String(open);
    note.hidden = open || quiet;
    root.hidden = !open && quiet;
    body.innerHTML = open ? model.get("content") : "";
  }
  const events = ["change:revealed", "change:content", "change:note"];
  for (const name of events) model.on(name, show);
  show();
  return () => {
    for (const name of events) model.off(name, show);
    root.remove();
  };
}

export default { render };
