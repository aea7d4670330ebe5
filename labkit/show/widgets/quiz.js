// Predict-then-measure quiz: radio buttons (multiple choice) or a text field (a number or
// whole numbers), a submit button, and the result computed in the kernel. Keyboard: Tab to
// the choices, arrow keys move between them, Enter submits; the result is announced
// (aria-live). Grading happens in Python (quiz.py); this file only collects and shows.

let quizCount = 0; // unique radio-group names when several quizzes share a page

function render({ model, el: host }) {
  quizCount += 1;
  const groupName = `lt-quiz-${quizCount}-${Math.random().toString(36).slice(2, 8)}`;
  const root = el("div", "lt-quiz");
  root.dataset.lmSuppressShortcuts = "true";
  const form = el("form");
  form.noValidate = true;
  const fieldset = el("fieldset");
  const legend = el("legend", "lt-question", model.get("question"));
  legend.id = `${groupName}-question`;
  fieldset.append(legend);

  const kind = model.get("kind");
  let answerInput = null;
  const radios = [];
  if (kind === "choice") {
    const group = el("div", "lt-choices");
    group.setAttribute("role", "radiogroup");
    group.setAttribute("aria-labelledby", legend.id);
    for (const choice of model.get("choices")) {
      const label = el("label", "lt-choice");
      const radio = el("input");
      radio.type = "radio";
      radio.name = groupName;
      radio.value = choice;
      radio.dataset.choice = choice;
      label.append(radio, document.createTextNode(" " + choice));
      group.append(label);
      radios.push(radio);
    }
    fieldset.append(group);
  } else {
    const label = el("label", "lt-answer-label", kind === "number" ? "Your prediction: " : "Your prediction (whole numbers, e.g. 1, 4): ");
    answerInput = el("input");
    answerInput.type = "text";
    answerInput.inputMode = kind === "number" ? "decimal" : "text";
    answerInput.dataset.role = "answer";
    answerInput.setAttribute("aria-describedby", legend.id);
    answerInput.autocomplete = "off";
    if (kind === "number" && ["x", "×"].includes(model.get("unit").trim().toLowerCase()))
      answerInput.placeholder = "e.g. 1.2, 1.2x or 120%";
    label.append(answerInput);
    if (model.get("unit")) label.append(document.createTextNode(" " + model.get("unit")));
    fieldset.append(label);
    if (model.get("tolerance_text")) fieldset.append(el("div", "lt-note", model.get("tolerance_text")));
  }
  const submit = el("button", "lt-submit", "Check against the code");
  submit.type = "submit";
  submit.dataset.role = "submit";
  const skip = el("button", "lt-skip", "Skip: show the answer");
  skip.type = "button";
  skip.dataset.role = "skip";
  skip.title = "Show what this quiz holds back below without predicting";
  fieldset.append(submit, skip);
  form.append(fieldset);

  const result = el("div", "lt-result");
  result.dataset.role = "result";
  result.setAttribute("aria-live", "polite");
  const computed = el("div", "lt-computed");
  computed.dataset.role = "computed";
  const explanation = el("div", "lt-note");
  explanation.dataset.role = "explanation";
  const error = el("div", "lt-error");
  error.dataset.role = "error";
  error.setAttribute("role", "alert");
  root.append(form, result, computed, explanation, error);
  host.append(root);

  let seq = 0;
  function response() {
    if (answerInput) return answerInput.value;
    const chosen = radios.find((r) => r.checked);
    return chosen ? chosen.value : "";
  }
  function send() {
    seq += 1;
    result.textContent = "Computing the answer in the kernel…";
    delete result.dataset.correct;
    error.textContent = "";
    model.set("submission", { response: response(), seq });
    model.save_changes();
  }
  skip.addEventListener("click", () => {
    seq += 1;
    model.set("submission", { skip: true, seq });
    model.save_changes();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    send();
  });
  // Enter submits from a radio or the text field. (Implicit form submission does not reach
  // us inside JupyterLab, which handles keypress events on the page.)
  for (const input of answerInput ? [answerInput] : radios) {
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        send();
      }
    });
  }

  function show() {
    const correct = model.get("correct");
    const message = model.get("error");
    error.textContent = message || "";
    if (message) {
      result.textContent = "";
      delete result.dataset.correct;
      computed.textContent = "";
      explanation.textContent = "";
      return;
    }
    if (correct === null || correct === undefined) {
      if (model.get("skipped")) {
        result.textContent = "Skipped: the answer is shown below.";
        result.dataset.skipped = "true";
      } else if (!seq) result.textContent = "";
      return;
    }
    result.textContent = (correct ? "✓ " : "✗ ") + model.get("feedback");
    result.dataset.correct = String(correct);
    computed.textContent = `Computed by the code: ${model.get("computed")}`;
    explanation.textContent = model.get("explanation") || "";
  }
  // A view drawn again (the chapter reopened, its widget state saved with it; the same quiz
  // shown twice) shows the answer the learner gave, not an empty form beside its feedback.
  function restore() {
    const given = model.get("response") || "";
    if (answerInput) answerInput.value = given;
    else for (const radio of radios) radio.checked = given !== "" && radio.value === given;
  }
  const events = ["change:handled"];
  for (const name of events) model.on(name, show);
  restore();
  show();

  return () => {
    for (const name of events) model.off(name, show);
    root.remove();
  };
}

export default { render };
