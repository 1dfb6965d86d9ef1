// @ts-check
/**
 * Helpers shared by every evalnb widget. Model output is untrusted text: it reaches the DOM
 * only through `text()` (textContent) or, where markup must be built as a string, through
 * `escapeHtml()`.
 */

const ENTITIES = /** @type {Record<string, string>} */ ({
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
});

/**
 * Escape a string for use in HTML text or a quoted attribute.
 * @param {unknown} value
 * @returns {string}
 */
export function escapeHtml(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/**
 * Create an element whose content is plain text (never parsed as HTML).
 * @param {string} tag
 * @param {unknown} content
 * @param {string} [className]
 * @returns {HTMLElement}
 */
export function text(tag, content, className) {
  const el = document.createElement(tag);
  el.textContent = String(content ?? "");
  if (className) el.className = className;
  return el;
}

/**
 * Read the bytes of a binary trait (anywidget hands them over as a DataView).
 * @param {DataView | ArrayBuffer | Uint8Array} value
 * @returns {Uint8Array}
 */
export function bytesOf(value) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}
