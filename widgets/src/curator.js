// @ts-check
/**
 * The suite curator: one generated test case at a time, keyboard first. Decisions go to the
 * kernel as messages and are stored there before the view moves on; this file shows what
 * the kernel sends as text (case text never reaches the DOM as markup).
 */
import { text } from "./common.js";
import { fmt } from "./eye_layout.js";
import { block, dispatchKey, keyButtons, mount, noteField, noteKey, reviewRoot, section } from "./review.js";

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
  const root = reviewRoot("evalnb-curator");
  const head = text("div", "", "cu-head");
  const card = block("cu-card");
  const editor = block("cu-editor");
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
  const actions = block("cu-actions");
  const note = noteField("cu", "note, kept with the next decision (n to write, Enter to keep, Esc to leave)");
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
  keyButtons(actions, spec, "cu");

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
      noteKey(e, root);
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
    dispatchKey(e, keys);
  };

  const draw = () => {
    const p = model.get("_progress") || {};
    const counts = STATUSES.map((s) => `${p[s] ?? 0} ${s}`).join(" · ");
    head.textContent = `case ${(p.position ?? 0) + 1} / ${p.total ?? 0} · ${counts} · reviewer ${model.get("reviewer")}`;
    drawItem(card, model.get("_item"));
    error.textContent = model.get("_error") || "";
  };
  return mount(model, root, ["change:_item", "change:_progress", "change:_error"], draw, onKey);
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
  const field = (name, value, cls) => section(card, name, value, cls, "cu");
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
