// @ts-check
/**
 * Weakness detection: a metric by two axes (topic and question type, or a case column, or the
 * tools an agent called), and on their
 * grid. Tables arrive from the kernel as Arrow IPC; the clicked cell goes back as
 * `selected_cell`. Lab text reaches the DOM only through textContent.
 */
import { scaleLinear } from "d3-scale";
import { text } from "./common.js";
import { rows, svg } from "./dom.js";
import { fmt, goodness, thresholdPosition, truncate } from "./eye_layout.js";

/**
 * @typedef {object} Model
 * @property {(name: string) => any} get
 * @property {(name: string, value: any) => void} set
 * @property {() => void} save_changes
 * @property {(event: string, cb: () => void) => void} on
 * @property {(event: string, cb: () => void) => void} off
 *
 * Traits: selected_cell (string[]), models (string[]), _cells, _topics, _qtypes, _dots,
 * _weak (Arrow IPC bytes), _meta (object).
 */

/** A stable pseudo-random number in [0, 1) from a string (dot jitter inside a cell). */
function jitter(/** @type {string} */ key) {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return ((h >>> 0) % 10007) / 10007;
}

/** @param {{ model: Model, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "evalnb-weakness";
  const tip = document.createElement("div");
  tip.className = "wk-tip";
  tip.hidden = true;
  el.appendChild(root);
  const draw = () => {
    root.replaceChildren();
    const meta = model.get("_meta") || {};
    const colour = (/** @type {number} */ v) =>
      goodness(thresholdPosition(v, 0, 1, meta.threshold ?? null, meta.higher_is_better !== false));
    root.appendChild(
      text("div", `${meta.title} (${meta.evaluator}) · ${meta.n} rows · threshold ${fmt(meta.threshold)}`, "wk-head"),
    );
    const uni = document.createElement("div");
    uni.className = "wk-uni";
    const [rowAxis, colAxis] = axes(meta);
    uni.append(
      univariate(`By ${rowAxis}`, rows(model, "_topics"), meta, colour),
      univariate(`By ${colAxis}`, rows(model, "_qtypes"), meta, colour),
    );
    root.appendChild(uni);
    root.appendChild(grid(model, meta, colour, tip));
    const weak = rows(model, "_weak");
    const list = document.createElement("div");
    list.className = "wk-list";
    list.appendChild(text("h4", weaknessHeading(weak.length, meta.higher_is_better !== false)));
    for (const w of weak) {
      list.appendChild(
        text("div", `${w.topic} × ${w.question_type}: mean ${fmt(w.mean)} (95 % CI ${fmt(w.ci_low)}–${fmt(w.ci_high)}), ${w.n} cases, pass rate ${fmt(w.pass_rate)}`, "wk-weak"),
      );
    }
    root.appendChild(list);
  };
  const events = ["change:_cells", "change:_dots", "change:_meta", "change:selected_cell"];
  for (const ev of events) model.on(ev, draw);
  draw();
  return () => {
    for (const ev of events) model.off(ev, draw);
  };
}

/**
 * Mean with its 95 % interval per group, the 10–90 % range behind it, threshold line.
 * @param {string} title
 * @param {Record<string, any>[]} data
 * @param {Record<string, any>} meta
 * @param {(v: number) => string} colour
 */
function univariate(title, data, meta, colour) {
  const box = document.createElement("div");
  box.className = "wk-chart";
  box.appendChild(text("h4", title));
  const W = 330;
  const row = 18;
  const H = data.length * row + 24;
  const x = scaleLinear().domain([0, 1]).range([110, W - 10]);
  const chart = svg("svg", { width: W, height: H, class: "wk-univariate" });
  data.forEach((d, i) => {
    const y = 8 + i * row + row / 2;
    const label = svg("text", { x: 104, y: y + 3, class: "wk-axis", "text-anchor": "end" });
    label.textContent = truncate(String(d.group), 18);
    const t = svg("title");
    t.textContent = `${d.group}: n ${d.n}, mean ${fmt(d.mean)}, 95 % CI ${fmt(d.ci_low)}–${fmt(d.ci_high)}`;
    const g = svg("g", { class: `wk-uni-row${d.weak ? " weak" : ""}`, "data-group": String(d.group) });
    g.append(
      t,
      label,
      svg("line", { x1: x(d.q10), x2: x(d.q90), y1: y, y2: y, class: "wk-range" }),
      svg("line", { x1: x(d.ci_low), x2: x(d.ci_high), y1: y, y2: y, class: "wk-ci" }),
      svg("circle", { cx: x(d.mean), cy: y, r: 4.5, fill: colour(d.mean), class: "wk-mean" }),
    );
    chart.appendChild(g);
  });
  if (Number.isFinite(meta.threshold)) {
    chart.appendChild(svg("line", { x1: x(meta.threshold), x2: x(meta.threshold), y1: 4, y2: H - 16, class: "wk-threshold" }));
  }
  for (const tick of [0, 0.5, 1]) {
    const t = svg("text", { x: x(tick), y: H - 4, class: "wk-axis", "text-anchor": "middle" });
    t.textContent = String(tick);
    chart.appendChild(t);
  }
  box.appendChild(chart);
  return box;
}

/**
 * The two axes' names (rows, columns): topic and question type unless the grid was opened
 * with other axes (a case column, or "tool").
 * @param {Record<string, any>} meta
 * @returns {[string, string]}
 */
function axes(meta) {
  const given = Array.isArray(meta.axes) && meta.axes.length === 2 ? meta.axes : ["topic", "question type"];
  return [String(given[0]), String(given[1])];
}

/**
 * The bivariate grid: cells coloured by mean, dots for cases, hover and click.
 * @param {Model} model
 * @param {Record<string, any>} meta
 * @param {(v: number) => string} colour
 * @param {HTMLElement} tip
 */
function grid(model, meta, colour, tip) {
  const cells = rows(model, "_cells");
  const dots = rows(model, "_dots");
  const topics = [...new Set(cells.map((c) => c.topic))].sort();
  const qtypes = [...new Set(cells.map((c) => c.question_type))].sort();
  const cw = 96;
  const ch = 64;
  const left = 120;
  const top = 40;
  const W = left + qtypes.length * cw + 10;
  const H = top + topics.length * ch + 10;
  const box = document.createElement("div");
  box.className = "wk-grid-box";
  const [rowAxis, colAxis] = axes(meta);
  const title = `${rowAxis.charAt(0).toUpperCase()}${rowAxis.slice(1)} × ${colAxis}`;
  box.appendChild(text("h4", `${title} (colour: mean score; dots: test cases)`));
  const chart = svg("svg", { width: W, height: H, class: "wk-grid" });
  const defs = svg("defs");
  const pattern = svg("pattern", { id: "wk-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" });
  pattern.appendChild(svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, class: "wk-hatch-line" }));
  defs.appendChild(pattern);
  chart.appendChild(defs);
  qtypes.forEach((q, j) => {
    const t = svg("text", { x: left + j * cw + cw / 2, y: top - 8, class: "wk-axis", "text-anchor": "middle" });
    t.textContent = truncate(String(q), 16);
    chart.appendChild(t);
  });
  topics.forEach((tp, i) => {
    const t = svg("text", { x: left - 6, y: top + i * ch + ch / 2 + 3, class: "wk-axis", "text-anchor": "end" });
    t.textContent = truncate(String(tp), 18);
    chart.appendChild(t);
  });
  const selected = model.get("selected_cell") || [];
  for (const c of cells) {
    const x0 = left + qtypes.indexOf(c.question_type) * cw;
    const y0 = top + topics.indexOf(c.topic) * ch;
    const isSel = selected.length === 2 && selected[0] === c.topic && selected[1] === c.question_type;
    const g = svg("g", {
      class: `wk-cell${c.few ? " few" : ""}${c.weak ? " weak" : ""}${isSel ? " selected" : ""}`,
      "data-topic": String(c.topic),
      "data-qtype": String(c.question_type),
      role: "button",
    });
    g.appendChild(svg("rect", { x: x0 + 1, y: y0 + 1, width: cw - 2, height: ch - 2, fill: colour(c.mean), class: "wk-rect" }));
    if (c.few) g.appendChild(svg("rect", { x: x0 + 1, y: y0 + 1, width: cw - 2, height: ch - 2, fill: "url(#wk-hatch)", class: "wk-few" }));
    g.addEventListener("mouseenter", () => {
      tip.replaceChildren(
        text("div", `${c.topic} × ${c.question_type}`, "wk-tip-title"),
        text("div", `n ${c.n}${c.few ? ` (fewer than ${meta.min_n}: too few to judge)` : ""}`, "wk-tip-n"),
        text("div", `mean ${fmt(c.mean)} · 95 % CI ${fmt(c.ci_low)}–${fmt(c.ci_high)}`, "wk-tip-ci"),
        text("div", `pass rate ${fmt(c.pass_rate)}`),
      );
      tip.hidden = false;
    });
    g.addEventListener("mouseleave", () => {
      tip.hidden = true;
    });
    g.addEventListener("click", () => {
      model.set("selected_cell", isSel ? [] : [c.topic, c.question_type]);
      model.save_changes();
    });
    chart.appendChild(g);
  }
  for (const d of dots) {
    const j = qtypes.indexOf(d.question_type);
    const i = topics.indexOf(d.topic);
    if (i < 0 || j < 0) continue;
    const key = `${d.case_id}/${d.model}/${d.sample}`;
    const dot = svg("circle", {
      cx: left + j * cw + 8 + jitter(key) * (cw - 16),
      cy: top + i * ch + 8 + jitter(`${key}#`) * (ch - 16),
      r: 2.6,
      fill: colour(d.value),
      class: "wk-dot",
    });
    chart.appendChild(dot);
  }
  box.append(chart, tip);
  return box;
}

export default { render };

/**
 * The heading of the weakness list: a weak cell's interval lies on the failing side of the
 * threshold, below it for a score, above it for a rate of errors (lower is better).
 * @param {number} count
 * @param {boolean} higherIsBetter
 * @returns {string}
 */
export function weaknessHeading(count, higherIsBetter) {
  const side = higherIsBetter ? "below" : "above";
  return count ? `Weaknesses (interval ${side} the threshold)` : `No cell is clearly ${side} the threshold`;
}
