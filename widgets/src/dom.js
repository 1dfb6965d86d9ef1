// @ts-check
/**
 * DOM and Arrow helpers shared by the widgets. Lab text goes in through textContent only.
 */
import { tableFromIPC } from "@uwdata/flechette";
import { bytesOf } from "./common.js";

const SVG = "http://www.w3.org/2000/svg";

/**
 * Create an SVG element with attributes.
 * @param {string} tag
 * @param {Record<string, string | number>} [attrs]
 * @returns {SVGElement}
 */
export function svg(tag, attrs = {}) {
  const el = /** @type {SVGElement} */ (document.createElementNS(SVG, tag));
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/**
 * Add a hover tooltip (an SVG <title>, as text) to an element.
 * @param {Element} parent
 * @param {string} content
 */
export function tooltip(parent, content) {
  const t = svg("title");
  t.textContent = content;
  parent.appendChild(t);
}

/**
 * Decode an Arrow IPC bytes trait into plain row objects (empty trait: no rows).
 * @param {{get(name: string): any}} model
 * @param {string} name
 * @returns {Record<string, any>[]}
 */
export function rows(model, name) {
  const value = model.get(name);
  if (!value || value.byteLength === 0) return [];
  return tableFromIPC(bytesOf(value), { useProxy: false }).toArray();
}
