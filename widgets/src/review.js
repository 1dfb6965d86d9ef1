// @ts-check
/**
 * What the keyboard-first review widgets (the labeler, the suite curator) share: a focusable
 * root the notebook's shortcuts leave alone, key buttons, key dispatch, the note field and
 * the card's text sections. Text goes in through textContent only.
 */
import { text } from "./common.js";

/**
 * A focusable root; Lumino skips its keyboard shortcuts for events from inside it, so the
 * notebook's command-mode keys (a: insert cell, x: cut, d d: delete…) never fire there.
 * @param {string} className
 * @returns {HTMLDivElement}
 */
export function reviewRoot(className) {
  const root = document.createElement("div");
  root.className = className;
  root.tabIndex = 0;
  root.dataset.lmSuppressShortcuts = "true";
  return root;
}

/**
 * Fill `box` with one button per [label, key, action]; classes `<prefix>-btn <prefix>-key-<label>`.
 * @param {HTMLElement} box
 * @param {[string, string, () => void][]} spec
 * @param {string} prefix
 */
export function keyButtons(box, spec, prefix) {
  box.replaceChildren();
  for (const [label, key, fn] of spec) {
    const b = text("button", `${label} (${key})`, `${prefix}-btn ${prefix}-key-${label.replace(/\W/g, "")}`);
    b.setAttribute("type", "button");
    b.addEventListener("click", fn);
    box.appendChild(b);
  }
}

/**
 * Run the action bound to the key, if any (no modifier held); the notebook does not see it.
 * @param {KeyboardEvent} e
 * @param {Record<string, () => void>} keys
 */
export function dispatchKey(e, keys) {
  const fn = keys[e.key];
  if (fn && !e.ctrlKey && !e.metaKey && !e.altKey) {
    e.preventDefault();
    e.stopPropagation(); // JupyterLab must not treat the key as a notebook command
    fn();
  }
}

/**
 * Keys typed in the note field: Enter keeps the note, Escape leaves it (focus back to root).
 * @param {KeyboardEvent} e
 * @param {HTMLElement} root
 */
export function noteKey(e, root) {
  if (e.key === "Escape" || (e.key === "Enter" && !e.shiftKey)) {
    e.preventDefault();
    root.focus();
  }
}

/**
 * Append a titled text section to a card.
 * @param {HTMLElement} card
 * @param {string} name
 * @param {string} value
 * @param {string} cls
 * @param {string} prefix
 */
export function section(card, name, value, cls, prefix) {
  const box = document.createElement("section");
  box.className = `${prefix}-field ${cls}`;
  box.append(text("h4", name), text("div", value, `${prefix}-text`));
  card.appendChild(box);
}

/**
 * An empty block with a class.
 * @param {string} className
 * @returns {HTMLDivElement}
 */
export function block(className) {
  const el = document.createElement("div");
  el.className = className;
  return el;
}

/**
 * The note field (`<prefix>-note`), two rows.
 * @param {string} prefix
 * @param {string} placeholder
 * @returns {HTMLTextAreaElement}
 */
export function noteField(prefix, placeholder) {
  const note = document.createElement("textarea");
  note.className = `${prefix}-note`;
  note.placeholder = placeholder;
  note.rows = 2;
  return note;
}

/**
 * Redraw on the model's events, listen to the keys, take the focus; return the cleanup.
 * @param {{on(e: string, cb: () => void): void, off(e: string, cb: () => void): void}} model
 * @param {HTMLElement} root
 * @param {string[]} events
 * @param {() => void} draw
 * @param {(e: KeyboardEvent) => void} onKey
 * @returns {() => void}
 */
export function mount(model, root, events, draw, onKey) {
  root.addEventListener("keydown", onKey);
  for (const ev of events) model.on(ev, draw);
  draw();
  root.focus();
  return () => {
    for (const ev of events) model.off(ev, draw);
    root.removeEventListener("keydown", onKey);
  };
}

/**
 * The labelers' head: a progress bar and the line that counts what is done.
 * @returns {{head: HTMLDivElement, bar: HTMLProgressElement, count: HTMLElement}}
 */
export function progressHead() {
  const head = document.createElement("div");
  head.className = "lb-head";
  const bar = document.createElement("progress");
  bar.className = "lb-bar";
  const count = text("span", "", "lb-progress");
  head.append(bar, count);
  return { head, bar, count };
}
