// Predict-then-measure quiz: radio buttons (multiple choice) or a text field (a number or
// whole numbers), a submit button, and the result computed in the kernel. Keyboard: Tab to
// the choices, arrow keys move between them, Enter submits; the result is announced
// (aria-live). Grading happens in Python (quiz.py); this file only collects and shows.

let quizCount = 0; // unique radio-group names when several quizzes share a page

// Multiple choice: one radio button per choice, in a group named by the question.
function choiceGroup(model, groupName, legend) {
  const group = el("div", "lt-choices");
  group.setAttribute("role", "radiogroup");
  group.setAttribute("aria-labelledby", legend.id);
  const radios = [];
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
  return { group, radios };
}

// A number or whole numbers: one text field, with the unit after it and the tolerance below.
function answerField(model, fieldset, legend, kind) {
  const label = el("label", "lt-answer-label", kind === "number" ? "Your prediction: " : "Your prediction (whole numbers, e.g. 1, 4): ");
  const answerInput = el("input");
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
  return answerInput;
}

function quizButtons() {
  const submit = el("button", "lt-submit", "Check against the code");
  submit.type = "submit";
  submit.dataset.role = "submit";
  const skip = el("button", "lt-skip", "Skip: show the answer");
  skip.type = "button";
  skip.dataset.role = "skip";
  skip.title = "Show what this quiz holds back below without predicting";
  return { submit, skip };
}

// The form: the question, the choices or the answer field, submit and skip.
function quizForm(model, q) {
  const form = el("form");
  form.noValidate = true;
  const fieldset = el("fieldset");
  const legend = el("legend", "lt-question", model.get("question"));
  legend.id = `${q.groupName}-question`;
  fieldset.append(legend);
  const kind = model.get("kind");
  if (kind === "choice") {
    const { group, radios } = choiceGroup(model, q.groupName, legend);
    q.radios = radios;
    fieldset.append(group);
  } else {
    q.answerInput = answerField(model, fieldset, legend, kind);
  }
  const { submit, skip } = quizButtons();
  q.skip = skip;
  fieldset.append(submit, skip);
  form.append(fieldset);
  return form;
}

// The quiz's nodes: the form, then the result, the computed answer, the explanation, errors.
function quizNodes(host, model) {
  quizCount += 1;
  const q = {
    model, groupName: `lt-quiz-${quizCount}-${Math.random().toString(36).slice(2, 8)}`,
    answerInput: null, radios: [], seq: 0, slow: null,
  };
  q.root = el("div", "lt-quiz");
  q.root.dataset.lmSuppressShortcuts = "true";
  q.form = quizForm(model, q);
  q.result = el("div", "lt-result");
  q.result.dataset.role = "result";
  q.result.setAttribute("aria-live", "polite");
  q.computed = el("div", "lt-computed");
  q.computed.dataset.role = "computed";
  q.explanation = el("div", "lt-note");
  q.explanation.dataset.role = "explanation";
  q.error = el("div", "lt-error");
  q.error.dataset.role = "error";
  q.error.setAttribute("role", "alert");
  q.root.append(q.form, q.result, q.computed, q.explanation, q.error);
  host.append(q.root);
  return q;
}

function response(q) {
  if (q.answerInput) return q.answerInput.value;
  const chosen = q.radios.find((r) => r.checked);
  return chosen ? chosen.value : "";
}

// What a learner reads when the kernel has not answered a submission in time: it is busy
// running a cell (it answers when that cell ends), or this quiz was drawn from a saved chapter
// whose kernel has restarted since, which will never answer (no kernel holds the quiz).
const NO_ANSWER = "No answer from the kernel yet. If a cell is running, the answer comes when " +
  "it ends; if the kernel restarted since this quiz was drawn, run the quiz's cell again " +
  "(Shift+Enter) and answer there.";

// Say NO_ANSWER if the kernel has not taken this submission up (`received`, which a live
// kernel sends before it computes the answer) within the quiz's answer_wait_ms.
function waitForKernel(q) {
  clearTimeout(q.slow);
  const seq = q.seq;
  q.slow = setTimeout(() => {
    if (q.seq === seq && (q.model.get("received") || 0) < seq) q.error.textContent = NO_ANSWER;
  }, q.model.get("answer_wait_ms") || 10000);
}

// The kernel took the latest submission up: stop waiting (its answer may still take a while).
function taken(q) {
  if ((q.model.get("received") || 0) >= q.seq) {
    clearTimeout(q.slow);
    if (q.error.textContent === NO_ANSWER) q.error.textContent = "";
  }
}

// The next submission's number: past any the model says a kernel took up (a saved chapter's
// state keeps the old kernel's count), so `received` counts only this one's uptake.
function nextSeq(q) {
  q.seq = Math.max(q.seq, q.model.get("received") || 0) + 1;
}

function send(q) {
  nextSeq(q);
  q.result.textContent = "Computing the answer in the kernel…";
  delete q.result.dataset.correct;
  q.error.textContent = "";
  q.computed.textContent = ""; // the last answer's lines go: they are not this submission's
  q.explanation.textContent = "";
  waitForKernel(q);
  q.model.set("submission", { response: response(q), seq: q.seq });
  q.model.save_changes();
}

// Submit, skip, and Enter from a radio or the text field. (Implicit form submission does
// not reach us inside JupyterLab, which handles keypress events on the page.)
function listenToAnswers(q) {
  q.skip.addEventListener("click", () => {
    nextSeq(q);
    waitForKernel(q);
    q.model.set("submission", { skip: true, seq: q.seq });
    q.model.save_changes();
  });
  q.form.addEventListener("submit", (event) => {
    event.preventDefault();
    send(q);
  });
  for (const input of q.answerInput ? [q.answerInput] : q.radios) {
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        send(q);
      }
    });
  }
}

// The verdict the kernel computed (right or wrong, and the answer), or the error.
function showResult(q) {
  const { model, result, computed, explanation, error } = q;
  taken(q); // a reply to an earlier submission leaves a later one's wait running
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
    } else if (!q.seq) result.textContent = "";
    return;
  }
  result.textContent = (correct ? "✓ " : "✗ ") + model.get("feedback");
  result.dataset.correct = String(correct);
  computed.textContent = `Computed by the code: ${model.get("computed")}`;
  explanation.textContent = model.get("explanation") || "";
}

// A view drawn again (the chapter reopened, its widget state saved with it; the same quiz
// shown twice) shows the answer the learner gave, not an empty form beside its feedback.
function restoreAnswer(q) {
  const given = q.model.get("response") || "";
  if (q.answerInput) q.answerInput.value = given;
  else for (const radio of q.radios) radio.checked = given !== "" && radio.value === given;
}

function render({ model, el: host }) {
  const q = quizNodes(host, model);
  listenToAnswers(q);
  const show = () => showResult(q);
  const take = () => taken(q);
  const events = ["change:handled"];
  for (const name of events) model.on(name, show);
  model.on("change:received", take);
  restoreAnswer(q);
  show();

  return () => {
    for (const name of events) model.off(name, show);
    model.off("change:received", take);
    clearTimeout(q.slow);
    q.root.remove();
  };
}

export default { render };
