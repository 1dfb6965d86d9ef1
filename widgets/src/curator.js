// @ts-check
/**
 * The suite curator: one generated test case at a time, keyboard first. Decisions go to the
 * kernel as messages and are stored there before the view moves on; this file shows what
 * the kernel sends as text (case text never reaches the DOM as markup).
 */
import { text } from "./common.js";
import { fmt } from "./eye_layout.js";

/**
 * @typedef {object} Model
 * @property {(name: string) => any} get
 * @property {(content: any) => void} send
 * @property {(event: string, cb: () => void) => void} on
 * @property {(event: string, cb: () => void) => void} off
 *
 * Traits: position (int), reviewer (string), _item, _progress (objects), _error (string).
 */

const STATUSES = ["pending", "accepted", "edited", "excluded"];

/** @param {{ model: Model, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "evalnb-curator";
  root.tabIndex = 0;
  // Lumino skips its shortcuts for events from inside such an element: the notebook's
  // command-mode keys (a: insert cell, x: cut cell…) never fire while curating.
  root.dataset.lmSuppressShortcuts = "true";
  const head = text("div", "", "cu-head");
  const card = document.createElement("div");
  card.className = "cu-card";
  const editor = document.createElement("div");
  editor.className = "cu-editor";
  editor.hidden = true;
  const promptBox = /** @type {HTMLTextAreaElement} */ (document.createElement("textarea"));
  promptBox.className = "cu-edit-prompt";
  promptBox.rows = 3;
  const expectedBox = /** @type {HTMLTextAreaElement} */ (document.createElement("textarea"));
  expectedBox.className = "cu-edit-expected";
  expectedBox.rows = 3;
  expectedBox.placeholder = "expected answer (one per line for alternatives)";
  editor.append(text("h4", "Prompt"), promptBox, text("h4", "Expected answer"), expectedBox,
    text("div", "Ctrl+Enter saves · Esc cancels", "cu-hint"));
  const actions = document.createElement("div");
  actions.className = "cu-actions";
  const note = /** @type {HTMLTextAreaElement} */ (document.createElement("textarea"));
  note.className = "cu-note";
  note.placeholder = "note, kept with the next decision (n to write, Enter to keep, Esc to leave)";
  note.rows = 2;
  const error = text("div", "", "cu-error");
  root.append(head, card, editor, actions, note, error);
  el.appendChild(root);

  /** @param {Record<string, any>} msg */
  const send = (msg) => model.send(msg);
  /** @param {string} action */
  const decide = (action) => {
    send({ action, note: note.value || null });
    note.value = "";
  };
  const openEditor = () => {
    const item = model.get("_item");
    if (!item) return;
    promptBox.value = String(item.prompt ?? "");
    expectedBox.value = (item.expected || []).join("\n");
    editor.hidden = false;
    promptBox.focus();
  };
  const closeEditor = () => {
    editor.hidden = true;
    root.focus();
  };
  const save = () => {
    const expected = expectedBox.value.split("\n").map((s) => s.trim()).filter((s) => s);
    send({ action: "edit", prompt: promptBox.value.trim(), expected, note: note.value || null });
    note.value = "";
    closeEditor();
  };

  /** @type {[string, string, () => void][]} */
  const spec = [
    ["← prev", "←", () => send({ action: "move", by: -1 })],
    ["accept", "a", () => decide("accept")],
    ["edit", "e", openEditor],
    ["exclude", "x", () => decide("exclude")],
    ["restore", "r", () => decide("restore")],
    ["next →", "→", () => send({ action: "move", by: 1 })],
    ["note", "n", () => note.focus()],
  ];
  for (const [label, key, fn] of spec) {
    const b = text("button", `${label} (${key})`, `cu-btn cu-key-${label.replace(/\W/g, "")}`);
    b.setAttribute("type", "button");
    b.addEventListener("click", fn);
    actions.appendChild(b);
  }

  const onKey = (/** @type {KeyboardEvent} */ e) => {
    if (e.target === promptBox || e.target === expectedBox) {
      if (e.key === "Escape") {
        e.preventDefault();
        closeEditor();
      } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        save();
      }
      e.stopPropagation();
      return;
    }
    if (e.target === note) {
      if (e.key === "Escape" || (e.key === "Enter" && !e.shiftKey)) {
        e.preventDefault();
        root.focus();
      }
      e.stopPropagation();
      return;
    }
    /** @type {Record<string, () => void>} */
    const keys = {
      ArrowLeft: () => send({ action: "move", by: -1 }),
      ArrowRight: () => send({ action: "move", by: 1 }),
      a: () => decide("accept"),
      x: () => decide("exclude"),
      r: () => decide("restore"),
      e: openEditor,
      n: () => note.focus(),
    };
    const fn = keys[e.key];
    if (fn && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      e.stopPropagation(); // JupyterLab must not treat the key as a notebook command
      fn();
    }
  };
  root.addEventListener("keydown", onKey);

  const draw = () => {
    const p = model.get("_progress") || {};
    const counts = STATUSES.map((s) => `${p[s] ?? 0} ${s}`).join(" · ");
    head.textContent = `case ${(p.position ?? 0) + 1} / ${p.total ?? 0} · ${counts} · reviewer ${model.get("reviewer")}`;
    drawItem(card, model.get("_item"));
    error.textContent = model.get("_error") || "";
  };
  const events = ["change:_item", "change:_progress", "change:_error"];
  for (const ev of events) model.on(ev, draw);
  draw();
  root.focus();
  return () => {
    for (const ev of events) model.off(ev, draw);
    root.removeEventListener("keydown", onKey);
  };
}

/**
 * @param {HTMLElement} card
 * @param {Record<string, any> | null} item
 */
function drawItem(card, item) {
  card.replaceChildren();
  if (!item) {
    card.appendChild(text("p", "Nothing to curate: the lab has no test case."));
    return;
  }
  const top = document.createElement("div");
  top.className = "cu-top";
  top.append(
    text("span", item.status, `cu-status ${item.status}`),
    text("span", item.question_type ?? "no question type", "cu-type"),
    text("span", item.topic ?? "no topic", "cu-topic"),
  );
  if (item.reviewer) top.appendChild(text("span", `last: ${item.reviewer}${item.note ? ` — ${item.note}` : ""}`, "cu-last"));
  card.appendChild(top);
  /** @param {string} name @param {string} value @param {string} cls */
  const field = (name, value, cls) => {
    const box = document.createElement("section");
    box.className = `cu-field ${cls}`;
    box.append(text("h4", name), text("div", value, "cu-text"));
    card.appendChild(box);
  };
  field("Prompt", String(item.prompt ?? ""), "cu-prompt");
  field("Expected answer", (item.expected || []).join("\n— or —\n"), "cu-expected");
  if ((item.evidence || []).length) field("Rests on", item.evidence.join("\n…\n"), "cu-evidence");
  const checks = Object.entries(item.validation || {});
  if (checks.length) {
    const row = document.createElement("div");
    row.className = "cu-checks";
    for (const [metric, value] of checks) row.appendChild(text("span", `${metric} ${fmt(value)}`, "cu-check"));
    card.appendChild(row);
  }
  if (item.source) {
    const src = document.createElement("details");
    src.className = "cu-source";
    src.appendChild(text("summary", item.source_cut ? "Source (first part)" : "Source"));
    src.appendChild(text("div", item.source, "cu-text"));
    card.appendChild(src);
  }
}

export default { render };
