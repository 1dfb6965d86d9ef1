// @ts-check
/**
 * The monitor view: per calibrated metric, the raw pass rate of each window, the corrected
 * pass rate with its confidence-sequence band and the accepted level; question drift below;
 * alerts marked. Tables arrive as Arrow IPC; a clicked window goes back as
 * `selected_window`. Trace and metric text reaches the DOM only through textContent.
 */
import { text } from "./common.js";
import { rows, svg, tooltip } from "./dom.js";
import { fmt } from "./eye_layout.js";

const W = 640;
const H = 170;
const PAD = { left: 44, right: 12, top: 12, bottom: 26 };

/**
 * Horizontal positions of the windows, in order.
 * @param {string[]} starts ISO times, sorted
 * @returns {(start: string) => number}
 */
export function xScale(starts) {
  const inner = W - PAD.left - PAD.right;
  const step = starts.length > 1 ? inner / (starts.length - 1) : 0;
  const at = new Map(starts.map((s, i) => [s, PAD.left + (starts.length > 1 ? i * step : inner / 2)]));
  return (start) => at.get(start) ?? PAD.left;
}

/**
 * Vertical position of a rate in [lo, hi].
 * @param {number} lo
 * @param {number} hi
 * @returns {(v: number) => number}
 */
export function yScale(lo, hi) {
  const span = hi - lo || 1;
  return (v) => PAD.top + (1 - (v - lo) / span) * (H - PAD.top - PAD.bottom);
}

/**
 * The rates' range to draw: every value shown, padded, within [0, 1].
 * @param {Record<string, any>[]} part
 * @returns {[number, number]}
 */
export function rateDomain(part) {
  const keys = ["pass_rate", "corrected", "cs_low", "cs_high", "accepted", "pass_low", "pass_high"];
  const values = part.flatMap((r) => keys.map((k) => r[k]).filter((v) => typeof v === "number" && Number.isFinite(v)));
  if (!values.length) return [0, 1];
  const lo = Math.max(0, Math.min(...values) - 0.05);
  const hi = Math.min(1, Math.max(...values) + 0.05);
  return [lo, hi];
}

/**
 * A polyline path through the points whose value is a number.
 * @param {Record<string, any>[]} part
 * @param {string} key
 * @param {(s: string) => number} x
 * @param {(v: number) => number} y
 */
export function linePath(part, key, x, y) {
  const pts = part.filter((r) => typeof r[key] === "number" && Number.isFinite(r[key]));
  return pts.map((r, i) => `${i ? "L" : "M"}${x(r.window_start).toFixed(1)},${y(r[key]).toFixed(1)}`).join("");
}

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "evalnb-monitor";
  el.appendChild(root);
  const draw = () => {
    root.replaceChildren();
    const meta = model.get("_meta") || {};
    const windows = rows(model, "_windows");
    const drift = rows(model, "_drift");
    const alerts = rows(model, "_alerts");
    root.appendChild(text("div", `Monitor · ${meta.every} windows · bundle ${meta.bundle}`, "mn-head"));
    if (!windows.length) {
      root.appendChild(text("div", "No traffic yet: ingest some (mon.ingest(folder)).", "mn-empty"));
      return;
    }
    const starts = [...new Set(windows.map((r) => r.window_start))].sort();
    const x = xScale(starts);
    const keys = [...new Set(windows.map((r) => `${r.evaluator}\u0000${r.metric}`))];
    for (const key of keys) {
      const [evaluator, metric] = key.split("\u0000");
      const part = windows.filter((r) => r.evaluator === evaluator && r.metric === metric);
      const marked = alerts.filter((a) => a.metric === metric && a.evaluator === evaluator);
      root.appendChild(panel(`${metric} (${evaluator})`, part, starts, x, marked, model));
    }
    if (drift.length) root.appendChild(driftPanel(drift, x, alerts.filter((a) => !a.metric), model));
    root.appendChild(legend());
  };
  const events = ["change:_windows", "change:_drift", "change:_alerts"];
  for (const event of events) model.on(event, draw);
  draw();
  // anywidget calls what render returns when the view goes: no listener outlives its view.
  return () => {
    for (const event of events) model.off(event, draw);
  };
}

/**
 * One metric's panel.
 * @param {string} title
 * @param {Record<string, any>[]} part
 * @param {string[]} starts
 * @param {(s: string) => number} x
 * @param {Record<string, any>[]} marked
 * @param {any} model
 */
function panel(title, part, starts, x, marked, model) {
  const box = document.createElement("div");
  box.className = "mn-panel";
  box.appendChild(text("div", title, "mn-title"));
  const [lo, hi] = rateDomain(part);
  const y = yScale(lo, hi);
  const chart = svg("svg", { width: W, height: H, role: "img" });
  axis(chart, y, lo, hi);
  const band = part.filter((r) => typeof r.cs_low === "number");
  if (band.length) {
    const upper = band.map((r, i) => `${i ? "L" : "M"}${x(r.window_start)},${y(r.cs_high)}`).join("");
    const lower = band
      .slice()
      .reverse()
      .map((r) => `L${x(r.window_start)},${y(r.cs_low)}`)
      .join("");
    chart.appendChild(svg("path", { d: `${upper}${lower}Z`, class: "mn-band" }));
  }
  const accepted = part.find((r) => typeof r.accepted === "number")?.accepted;
  if (typeof accepted === "number") {
    chart.appendChild(svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(accepted), y2: y(accepted), class: "mn-accepted" }));
  }
  chart.appendChild(svg("path", { d: linePath(part, "pass_rate", x, y), class: "mn-raw" }));
  chart.appendChild(svg("path", { d: linePath(part, "corrected", x, y), class: "mn-corrected" }));
  for (const r of part) {
    const g = svg("g", { class: "mn-window", "data-window": r.window_start });
    const alerted = marked.some((a) => a.window_start === r.window_start);
    if (typeof r.pass_rate === "number") {
      g.appendChild(svg("circle", { cx: x(r.window_start), cy: y(r.pass_rate), r: alerted ? 6 : 4, class: alerted ? "mn-dot mn-alert" : "mn-dot" }));
    }
    // A wide transparent target: the whole column of the window is clickable.
    g.appendChild(svg("rect", { x: x(r.window_start) - 8, y: PAD.top, width: 16, height: H - PAD.top - PAD.bottom, class: "mn-hit" }));
    tooltip(
      g,
      `${r.window_start}\nn ${r.n} · scored ${r.scored}\npass rate ${fmt(r.pass_rate)}` +
        (r.labels ? `\ncorrected ${fmt(r.corrected)} (${r.labels} labels)\nsequence ${fmt(r.cs_low)}–${fmt(r.cs_high)}` : "") +
        (alerted ? `\nALERT: ${marked.filter((a) => a.window_start === r.window_start).map((a) => a.detail).join("; ")}` : ""),
    );
    g.addEventListener("click", () => {
      model.set("selected_window", r.window_start);
      model.save_changes();
    });
    chart.appendChild(g);
  }
  chart.appendChild(dates(starts, x));
  box.appendChild(chart);
  return box;
}

/**
 * Question drift (centroid distance), significant windows marked.
 * @param {Record<string, any>[]} drift
 * @param {(s: string) => number} x
 * @param {Record<string, any>[]} marked
 * @param {any} model
 */
function driftPanel(drift, x, marked, model) {
  const box = document.createElement("div");
  box.className = "mn-panel";
  box.appendChild(text("div", "Question drift (centroid distance to the calibration lab)", "mn-title"));
  const values = drift.map((r) => r.question_distance).filter((v) => typeof v === "number");
  const hi = Math.max(0.05, ...values) * 1.1;
  const y = yScale(0, hi);
  const chart = svg("svg", { width: W, height: H, role: "img" });
  axis(chart, y, 0, hi);
  chart.appendChild(svg("path", { d: linePath(drift, "question_distance", x, y), class: "mn-drift" }));
  for (const r of drift) {
    if (typeof r.question_distance !== "number") continue;
    const alerted = marked.some((a) => a.window_start === r.window_start);
    const g = svg("g", { class: "mn-window", "data-window": r.window_start });
    g.appendChild(svg("circle", { cx: x(r.window_start), cy: y(r.question_distance), r: alerted ? 6 : 4, class: alerted ? "mn-dot mn-alert" : "mn-dot" }));
    tooltip(g, `${r.window_start}\ndistance ${fmt(r.question_distance)} · p ${fmt(r.question_p_adjusted)} (corrected)\nno topic ${fmt(r.no_topic_share)} · unscored ${fmt(r.unscored_share)}`);
    g.addEventListener("click", () => {
      model.set("selected_window", r.window_start);
      model.save_changes();
    });
    chart.appendChild(g);
  }
  box.appendChild(chart);
  return box;
}

/**
 * @param {SVGElement} chart
 * @param {(v: number) => number} y
 * @param {number} lo
 * @param {number} hi
 */
function axis(chart, y, lo, hi) {
  for (const v of [lo, (lo + hi) / 2, hi]) {
    chart.appendChild(svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: "mn-grid" }));
    const label = svg("text", { x: PAD.left - 4, y: y(v) + 3, "text-anchor": "end", class: "mn-axis" });
    label.textContent = v.toFixed(2);
    chart.appendChild(label);
  }
}

/** An axis label's width per character, in the chart's units (11 px sans-serif, generous). */
const CHAR_W = 6.2;

/**
 * Where the window dates go under the chart: as many as fit without touching. A label is
 * the date alone when every window starts at midnight (daily, weekly), else date and time;
 * labels are spaced by at least one and a half label widths (the first is anchored at its
 * start, the last at its end, the rest at their middle, so neighbours never overprint),
 * and none runs past the chart's edges.
 * @param {string[]} starts
 * @param {(s: string) => number} x
 * @returns {{x: number, text: string, anchor: string}[]}
 */
export function dateLabels(starts, x) {
  if (starts.length === 0) return [];
  const midnight = starts.every((s) => s.length <= 10 || s.slice(11, 16) === "00:00");
  const label = (/** @type {string} */ s) => (midnight ? s.slice(0, 10) : s.slice(0, 16).replace("T", " "));
  const width = Math.max(...starts.map((s) => label(s).length)) * CHAR_W;
  const step = starts.length > 1 ? x(starts[1]) - x(starts[0]) : Infinity;
  const every = Math.max(1, Math.ceil((1.5 * width + 8) / step));
  /** @type {{x: number, text: string, anchor: string}[]} */
  const out = [];
  starts.forEach((s, i) => {
    if (i % every) return;
    const at = x(s);
    let anchor = i === 0 ? "start" : "middle";
    if (at + width / 2 > W - 2) anchor = "end";
    if (starts.length === 1) anchor = "middle";
    out.push({ x: at, text: label(s), anchor });
  });
  return out;
}

/**
 * @param {string[]} starts
 * @param {(s: string) => number} x
 */
function dates(starts, x) {
  const g = svg("g");
  for (const d of dateLabels(starts, x)) {
    const t = svg("text", { x: d.x, y: H - 8, "text-anchor": d.anchor, class: "mn-axis" });
    t.textContent = d.text;
    g.appendChild(t);
  }
  return g;
}

function legend() {
  const div = document.createElement("div");
  div.className = "mn-legend";
  for (const [cls, label] of [
    ["mn-key-raw", "metric's pass rate"],
    ["mn-key-corrected", "corrected by the reviewers' labels"],
    ["mn-key-band", "confidence sequence (valid at every look)"],
    ["mn-key-accepted", "accepted pass rate"],
    ["mn-key-alert", "alert"],
  ]) {
    const item = text("span", label, `mn-key ${cls}`);
    div.appendChild(item);
  }
  return div;
}

export default { render };
