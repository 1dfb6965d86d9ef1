// @ts-check
/**
 * The eval eye: a two-ring drill-down (domains → evaluators → metrics → models) with a dot
 * chart of test cases and a case panel. The kernel sends only the current level (Arrow IPC
 * traits); this file draws it and writes back `path`, `selected_case` and `compare`.
 * Every piece of lab text reaches the DOM through textContent.
 */
import { tableFromIPC } from "@uwdata/flechette";
import { partition, stratify } from "d3-hierarchy";
import { scaleBand, scaleLinear } from "d3-scale";
import { arc } from "d3-shape";
import { bytesOf, text } from "./common.js";
import {
  dotLayout,
  fmt,
  goodness,
  labelPlacement,
  sentencePieces,
  thresholdPosition,
  truncate,
} from "./eye_layout.js";

/**
 * @typedef {object} Model
 * @property {(name: string) => any} get
 * @property {(name: string, value: any) => void} set
 * @property {() => void} save_changes
 * @property {(event: string, cb: () => void) => void} on
 * @property {(event: string, cb: () => void) => void} off
 *
 * Traits: path (string[]), selected_case ({case_id, model, sample} | null),
 * compare (string[]), title (string), _nodes/_bars/_dots/_bins (Arrow IPC bytes),
 * _level (object), _case (object | null).
 */

const SVG = "http://www.w3.org/2000/svg";
const SIZE = 520;
const C = SIZE / 2;
const RINGS = { 1: [100, 172], 2: [176, 248] };
const SEVERITY = { HIGH: "#c62828", MEDIUM: "#ef6c00", LOW: "#f9a825" };
const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1"];

/**
 * @param {string} tag
 * @param {Record<string, string | number>} [attrs]
 * @returns {SVGElement}
 */
function svg(tag, attrs = {}) {
  const el = /** @type {SVGElement} */ (document.createElementNS(SVG, tag));
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/**
 * @param {Element} parent
 * @param {string} content
 */
function tooltip(parent, content) {
  const t = svg("title");
  t.textContent = content;
  parent.appendChild(t);
}

/**
 * Decode an Arrow IPC trait into plain row objects.
 * @param {Model} model
 * @param {string} name
 * @returns {Record<string, any>[]}
 */
function rows(model, name) {
  const value = model.get(name);
  if (!value || value.byteLength === 0) return [];
  return tableFromIPC(bytesOf(value), { useProxy: false }).toArray();
}

/**
 * @param {Model} model
 * @param {string[]} path
 */
function go(model, path) {
  model.set("path", path);
  model.save_changes();
}

/** @param {{ model: Model, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "evalnb-eye";
  const head = document.createElement("div");
  head.className = "ee-head";
  const back = text("button", "← Back", "ee-back");
  back.setAttribute("type", "button");
  back.addEventListener("click", () => go(model, model.get("path").slice(0, -1)));
  const crumbs = document.createElement("nav");
  crumbs.className = "ee-crumbs";
  head.append(back, crumbs);
  const body = document.createElement("div");
  body.className = "ee-body";
  const chart = document.createElement("div");
  chart.className = "ee-chart";
  const bars = document.createElement("div");
  bars.className = "ee-bars";
  bars.hidden = true;
  const panel = document.createElement("aside");
  panel.className = "ee-panel";
  body.append(chart, panel);
  root.append(head, body);
  el.appendChild(root);

  const draw = () => {
    const path = /** @type {string[]} */ (model.get("path"));
    const level = model.get("_level") || {};
    back.toggleAttribute("disabled", path.length === 0);
    drawCrumbs(crumbs, model, path, level);
    chart.replaceChildren();
    if (path.length === 4) chart.appendChild(dotChart(model, path, level));
    else chart.appendChild(sunburst(model, path, level, bars));
    chart.appendChild(bars);
  };
  const drawPanel = () => casePanel(panel, model);
  const markSelected = () => {
    const sel = model.get("selected_case");
    for (const dot of chart.querySelectorAll("circle.ee-dot")) {
      const el = /** @type {SVGElement} */ (dot);
      const on = !!sel && el.dataset.case === sel.case_id && el.dataset.sample === String(sel.sample);
      el.classList.toggle("selected", on);
    }
  };
  const onKey = (/** @type {KeyboardEvent} */ e) => {
    if (e.key === "Escape" && model.get("selected_case")) {
      model.set("selected_case", null);
      model.save_changes();
    }
  };
  root.tabIndex = 0;
  root.addEventListener("keydown", onKey);
  const events = ["change:_nodes", "change:_bars", "change:_dots", "change:_level", "change:path"];
  for (const ev of events) model.on(ev, draw);
  model.on("change:_case", drawPanel);
  model.on("change:selected_case", markSelected);
  draw();
  drawPanel();
  return () => {
    for (const ev of events) model.off(ev, draw);
    model.off("change:_case", drawPanel);
    model.off("change:selected_case", markSelected);
    root.removeEventListener("keydown", onKey);
  };
}

/**
 * @param {HTMLElement} nav
 * @param {Model} model
 * @param {string[]} path
 * @param {Record<string, any>} level
 */
function drawCrumbs(nav, model, path, level) {
  nav.replaceChildren();
  const titles = /** @type {string[]} */ (level.titles || path);
  const top = model.get("title") || "All evaluators";
  [top, ...titles].forEach((label, i) => {
    if (i > 0) nav.appendChild(text("span", "›", "ee-sep"));
    const b = text("button", label, "ee-crumb");
    b.setAttribute("type", "button");
    b.dataset.depth = String(i);
    if (i === path.length) b.setAttribute("aria-current", "page");
    b.addEventListener("click", () => go(model, path.slice(0, i)));
    nav.appendChild(b);
  });
}

/**
 * The two rings of the current level, with the centre's title and bar chart on hover.
 * @param {Model} model
 * @param {string[]} path
 * @param {Record<string, any>} level
 * @param {HTMLElement} bars
 * @returns {SVGElement}
 */
function sunburst(model, path, level, bars) {
  const nodes = rows(model, "_nodes");
  const out = svg("svg", { viewBox: `0 0 ${SIZE} ${SIZE}`, class: "ee-sun", role: "img" });
  const g = svg("g", { transform: `translate(${C},${C})` });
  out.appendChild(g);
  if (nodes.length > 0) {
    const tree = stratify()
      .id((/** @type {any} */ d) => d.id)
      .parentId((/** @type {any} */ d) => (d.id === "root" ? null : (d.parent ?? "root")))([
      { id: "root", parent: null },
      ...nodes,
    ]);
    tree.count();
    const laid = partition().size([2 * Math.PI, 3])(tree);
    for (const n of laid.descendants()) {
      if (n.depth === 0) continue;
      g.appendChild(segment(model, path, /** @type {any} */ (n)));
    }
  }
  const centre = svg("g", { class: "ee-centre" });
  centre.appendChild(svg("circle", { r: 94 }));
  const titles = level.titles || [];
  const heading = path.length ? titles[path.length - 1] || path[path.length - 1] : "Evaluation";
  const label = svg("text", { y: -8, class: "ee-centre-title" });
  label.textContent = truncate(String(heading), 18);
  tooltip(label, String(heading));
  const hint = svg("text", { y: 14, class: "ee-centre-hint" });
  hint.textContent = "hover: metric × model chart";
  centre.append(label, hint);
  if (path.length > 0) {
    const up = svg("text", { y: 44, class: "ee-centre-back", role: "button" });
    up.textContent = "↩ back";
    up.addEventListener("click", () => go(model, path.slice(0, -1)));
    centre.appendChild(up);
  }
  centre.addEventListener("mouseenter", () => {
    barChart(bars, rows(model, "_bars"));
    bars.hidden = false;
  });
  centre.addEventListener("mouseleave", () => {
    bars.hidden = true;
  });
  g.appendChild(centre);
  return out;
}

/**
 * @param {Model} model
 * @param {string[]} path
 * @param {{depth: number, x0: number, x1: number, data: Record<string, any>}} n
 * @returns {SVGElement}
 */
function segment(model, path, n) {
  const d = n.data;
  const [inner, outer] = RINGS[/** @type {1 | 2} */ (d.ring)];
  const shape = arc()
    .innerRadius(inner)
    .outerRadius(outer)
    .startAngle(n.x0)
    .endAngle(n.x1)
    .padAngle(0.006);
  // H2O's rule: a segment is problematic when a metric under it fails at model level (the
  // model's mean is on the wrong side of the threshold); the badge counts every problem.
  const problem = d.passed === false;
  const grp = svg("g", {
    class: `ee-seg ${problem ? "problem" : "ok"}${d.selected ? " selected" : ""}`,
    "data-ring": d.ring,
    "data-kind": d.kind,
    "data-key": d.keys.join("/"),
    role: "button",
  });
  const scored = d.kind === "model" && path.length >= 3 && d.ring === 1;
  const fill = scored ? (d.passed ? "#66bb6a" : "#ef5350") : problem ? "#bdbdbd" : "#f2c94c";
  grp.appendChild(svg("path", { d: shape(/** @type {any} */ (null)) || "", fill }));
  const [cx, cy] = shape.centroid(/** @type {any} */ (null));
  const { angle, room } = labelPlacement(n.x0, n.x1, inner, outer);
  const label = svg("text", {
    transform: `translate(${cx},${cy}) rotate(${angle})`,
    y: 3.5,
    class: "ee-label",
  });
  label.textContent = truncate(String(d.label), Math.floor(room / 6.2));
  grp.appendChild(label);
  const state = problem ? `${d.n_problems} problem(s), worst ${d.severity}` : "OK";
  tooltip(grp, `${d.label}\n${d.title}\nmean ${fmt(d.value)} · ${state}`);
  if (d.n_problems > 0) {
    const mid = (n.x0 + n.x1) / 2;
    const r = outer - 12;
    const bx = Math.sin(mid) * r;
    const by = -Math.cos(mid) * r;
    const badge = svg("g", { class: "ee-badge", transform: `translate(${bx},${by})` });
    badge.appendChild(
      svg("circle", { r: 9, fill: SEVERITY[/** @type {"HIGH"} */ (d.severity)] || "#757575" }),
    );
    const count = svg("text", { y: 3.5 });
    count.textContent = d.n_problems > 99 ? "99+" : String(d.n_problems);
    badge.appendChild(count);
    grp.appendChild(badge);
  }
  grp.addEventListener("click", () => go(model, [...path.slice(0, 3), ...d.keys]));
  return grp;
}

/**
 * Grouped bars: one group per metric, one bar per model, threshold ticks.
 * @param {HTMLElement} box
 * @param {Record<string, any>[]} data
 */
function barChart(box, data) {
  box.replaceChildren();
  if (data.length === 0) {
    box.appendChild(text("p", "No scores at this level."));
    return;
  }
  const groups = [...new Set(data.map((r) => r.group))];
  const models = [...new Set(data.map((r) => r.model))];
  const w = Math.max(320, groups.length * (models.length * 14 + 18) + 60);
  const h = 230;
  const values = data.map((r) => r.value).filter((v) => Number.isFinite(v));
  const lo = Math.min(0, ...values);
  const hi = Math.max(1, ...values);
  const x = scaleBand().domain(groups).range([44, w - 10]).padding(0.2);
  const inner = scaleBand().domain(models).range([0, x.bandwidth()]).padding(0.08);
  const y = scaleLinear().domain([lo, hi]).range([h - 70, 12]).nice();
  const chart = svg("svg", { width: w, height: h, class: "ee-barchart" });
  for (const t of y.ticks(4)) {
    const tick = svg("text", { x: 38, y: y(t) + 3, class: "ee-axis", "text-anchor": "end" });
    tick.textContent = String(t);
    chart.append(svg("line", { x1: 42, x2: w - 10, y1: y(t), y2: y(t), class: "ee-grid" }), tick);
  }
  for (const r of data) {
    const bx = (x(r.group) ?? 0) + (inner(r.model) ?? 0);
    const v = Number.isFinite(r.value) ? r.value : 0;
    const rect = svg("rect", {
      x: bx,
      y: Math.min(y(v), y(0)),
      width: inner.bandwidth(),
      height: Math.abs(y(v) - y(0)),
      fill: PALETTE[models.indexOf(r.model) % PALETTE.length],
      class: "ee-bar",
    });
    tooltip(rect, `${r.model} · ${r.group}: ${fmt(r.value)} (threshold ${fmt(r.threshold)})`);
    chart.appendChild(rect);
  }
  for (const g of groups) {
    const label = svg("text", { x: (x(g) ?? 0) + x.bandwidth() / 2, y: h - 54, class: "ee-axis" });
    label.setAttribute("text-anchor", "middle");
    label.textContent = truncate(String(g), Math.max(4, Math.floor(x.bandwidth() / 5.5)));
    tooltip(label, String(g));
    chart.appendChild(label);
  }
  models.forEach((m, i) => {
    const lx = 44 + (i % 4) * 110;
    const ly = h - 32 + Math.floor(i / 4) * 14;
    chart.appendChild(svg("rect", { x: lx, y: ly - 8, width: 9, height: 9, fill: PALETTE[i % 7] }));
    const name = svg("text", { x: lx + 13, y: ly, class: "ee-axis" });
    name.textContent = truncate(String(m), 16);
    chart.appendChild(name);
  });
  box.append(chart);
}

/**
 * The model level: one dot per test case at its score, threshold line, optional compare.
 * @param {Model} model
 * @param {string[]} path
 * @param {Record<string, any>} level
 * @returns {HTMLElement}
 */
function dotChart(model, path, level) {
  const wrap = document.createElement("div");
  wrap.className = "ee-dots";
  const bar = document.createElement("div");
  bar.className = "ee-dots-bar";
  const close = text("button", "✕ Close", "ee-close");
  close.setAttribute("type", "button");
  close.addEventListener("click", () => go(model, path.slice(0, -1)));
  const pick = document.createElement("select");
  pick.className = "ee-compare";
  pick.appendChild(text("option", "Compare with…"));
  /** @type {Record<string, any>[]} */
  const options = level.compare_options || [];
  const current = (model.get("compare") || []).join("\u0000");
  for (const o of options) {
    const opt = text("option", `${o.title} (${o.evaluator})`);
    /** @type {HTMLOptionElement} */ (opt).value = `${o.evaluator}\u0000${o.metric}`;
    if (opt.getAttribute("value") === current) opt.setAttribute("selected", "");
    pick.appendChild(opt);
  }
  pick.addEventListener("change", () => {
    model.set("compare", pick.value.includes("\u0000") ? pick.value.split("\u0000") : []);
    model.save_changes();
  });
  const shown = level.n_shown < level.n_total ? ` (showing ${level.n_shown} sampled)` : "";
  const note = text("span", `${level.n_total} test cases${shown}`, "ee-note");
  bar.append(close, pick, note);
  wrap.appendChild(bar);

  const dots = rows(model, "_dots");
  const bins = rows(model, "_bins");
  const comparing = (model.get("compare") || []).length === 2;
  const W = SIZE;
  const H = 360;
  const left = 44;
  const bottom = H - 40;
  const vals = dots.map((d) => d.value).filter((v) => Number.isFinite(v));
  const thr = Number.isFinite(level.threshold) ? [level.threshold] : [];
  // The data's extent (with the threshold), not the metric's full range: cosine metrics
  // span [-1, 1] but answers rarely go below 0, and half an empty chart hides the shape.
  const lo0 = Math.min(...vals, ...thr);
  const hi0 = Math.max(...vals, ...thr);
  const pad = (hi0 - lo0) * 0.04 || 0.5;
  const lo = level.min !== null && level.min !== undefined ? Math.max(level.min, lo0 - pad) : lo0 - pad;
  const hi = level.max !== null && level.max !== undefined ? Math.min(level.max, hi0 + pad) : hi0 + pad;
  const x = scaleLinear()
    .domain([lo, hi > lo ? hi : lo + 1])
    .range([left, W - 16]);
  const out = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "ee-dotchart", role: "img" });
  for (const t of x.ticks(6)) {
    const tick = svg("text", { x: x(t), y: bottom + 16, class: "ee-axis" });
    tick.setAttribute("text-anchor", "middle");
    tick.textContent = String(t);
    out.appendChild(tick);
  }
  const xLabel = svg("text", { x: W / 2, y: H - 6, class: "ee-axis-title" });
  xLabel.setAttribute("text-anchor", "middle");
  xLabel.textContent = String(level.metric_title || path[2]);
  out.append(svg("line", { x1: left, x2: W - 16, y1: bottom, y2: bottom, class: "ee-base" }), xLabel);
  const hib = level.higher_is_better !== false;
  const colour = (/** @type {number} */ v) =>
    goodness(thresholdPosition(v, lo, hi, level.threshold ?? null, hib));
  if (level.n_shown < level.n_total && !comparing) {
    const top = Math.max(1, ...bins.map((b) => b.n));
    for (const b of bins) {
      const hgt = ((bottom - 20) * b.n) / top;
      out.appendChild(
        svg("rect", {
          x: x(b.low),
          y: bottom - hgt,
          width: Math.max(0, x(b.high) - x(b.low) - 1),
          height: hgt,
          class: "ee-bin",
        }),
      );
    }
  }
  let ys;
  /** @type {(v: number) => number} */
  let yOf = () => 0;
  if (comparing) {
    const others = dots.map((d) => d.other).filter((v) => Number.isFinite(v));
    const y = scaleLinear()
      .domain([Math.min(0, ...others), Math.max(1, ...others)])
      .range([bottom - 6, 16])
      .nice();
    yOf = (v) => (Number.isFinite(v) ? y(v) : bottom - 2);
    for (const t of y.ticks(5)) {
      const tick = svg("text", { x: left - 6, y: y(t) + 3, class: "ee-axis", "text-anchor": "end" });
      tick.textContent = String(t);
      out.appendChild(tick);
    }
    const yLabel = svg("text", { x: 12, y: 12, class: "ee-axis-title" });
    yLabel.textContent = String(level.compare_title || "");
    out.appendChild(yLabel);
  } else {
    const r = dots.length > 600 ? 2.5 : 4;
    ys = dotLayout(
      dots.map((d) => x(d.value)),
      r,
      bottom - 20,
    );
  }
  const picked = model.get("selected_case");
  const isSelected = (/** @type {Record<string, any>} */ d) =>
    !!picked && picked.case_id === d.case_id && picked.sample === d.sample;
  dots.forEach((d, i) => {
    const cx = comparing ? x(d.value) : /** @type {any} */ (ys).x[i];
    const cy = comparing ? yOf(d.other) : bottom - /** @type {any} */ (ys).y[i];
    const radius = comparing ? 4 : Math.max(1.5, Math.min(4, /** @type {any} */ (ys).step / 2));
    const dot = svg("circle", {
      cx,
      cy,
      r: radius,
      fill: colour(d.value),
      class: `ee-dot ${d.passed === false ? "fail" : "pass"}${isSelected(d) ? " selected" : ""}`,
      "data-case": d.case_id,
      "data-sample": d.sample,
      role: "button",
    });
    const extra = comparing ? ` · compared ${fmt(d.other)}` : "";
    tooltip(dot, `case ${d.case_id}: ${fmt(d.value)}${extra}`);
    dot.addEventListener("click", () => {
      model.set("selected_case", { case_id: d.case_id, model: path[3], sample: d.sample });
      model.save_changes();
    });
    out.appendChild(dot);
  });
  if (Number.isFinite(level.threshold)) {
    const tx = x(level.threshold);
    out.appendChild(svg("line", { x1: tx, x2: tx, y1: 10, y2: bottom, class: "ee-threshold" }));
    const tl = svg("text", { x: tx + 4, y: 20, class: "ee-axis" });
    tl.textContent = `threshold ${fmt(level.threshold)}`;
    out.appendChild(tl);
  }
  wrap.appendChild(out);
  return wrap;
}

/**
 * Score cards of one evaluator's metrics; the description shows on hover.
 * @param {any[]} items
 * @returns {HTMLElement}
 */
function metricCards(items) {
  const cards = document.createElement("div");
  cards.className = "ee-cards";
  for (const m of items) {
    const card = document.createElement("div");
    const verdict = m.passed === null ? "unscored" : m.passed ? "pass" : "fail";
    card.className = `ee-card ${verdict}`;
    card.dataset.metric = `${m.evaluator}/${m.metric}`;
    card.title = `${m.description}${m.reason ? `\n${m.reason}` : ""}`;
    card.append(
      text("span", m.title, "ee-card-title"),
      text("span", fmt(m.value), "ee-card-value"),
      text("span", verdict, "ee-card-verdict"),
    );
    cards.appendChild(card);
  }
  return cards;
}

/**
 * The right-side panel with one test case.
 * @param {HTMLElement} panel
 * @param {Model} model
 */
function casePanel(panel, model) {
  const c = model.get("_case");
  panel.replaceChildren();
  panel.hidden = !c;
  if (!c) return;
  const head = document.createElement("div");
  head.className = "ee-panel-head";
  const close = text("button", "×", "ee-panel-close");
  close.setAttribute("type", "button");
  close.setAttribute("aria-label", "close");
  close.addEventListener("click", () => {
    model.set("selected_case", null);
    model.save_changes();
  });
  head.append(text("h3", "Test case"), close);
  panel.appendChild(head);
  /** @param {string} name @param {Node | string} content @param {string} key */
  const field = (name, content, key) => {
    const box = document.createElement("section");
    box.className = `ee-field ee-${key}`;
    box.appendChild(text("h4", name));
    box.appendChild(typeof content === "string" ? text("div", content, "ee-text") : content);
    panel.appendChild(box);
  };
  field("Model", String(c.model), "model");
  // One group of cards per evaluator (several evaluators share metric names such as
  // "Model passes"); the focused evaluator first and open, the others folded.
  const metrics = document.createElement("div");
  /** @type {Map<string, {title: string, items: any[]}>} */
  const groups = new Map();
  for (const m of c.metrics) {
    if (!groups.has(m.evaluator)) groups.set(m.evaluator, { title: m.evaluator_title, items: [] });
    groups.get(m.evaluator)?.items.push(m);
  }
  const folded = document.createElement("details");
  folded.className = "ee-more";
  folded.appendChild(text("summary", `Other evaluators (${Math.max(0, groups.size - 1)})`));
  [...groups.entries()].forEach(([evaluator, group], i) => {
    const box = document.createElement("div");
    box.className = "ee-group";
    box.dataset.evaluator = evaluator;
    box.appendChild(text("div", group.title, "ee-group-title"));
    box.appendChild(metricCards(group.items));
    (i === 0 ? metrics : folded).appendChild(box);
  });
  if (groups.size > 1) metrics.appendChild(folded);
  field("Metrics", metrics, "metrics");

  field("Prompt", String(c.prompt ?? ""), "prompt");
  field("Expected answer", (c.expected || []).join("\n— or —\n"), "expected");
  const answer = document.createElement("div");
  answer.className = "ee-text";
  const actual = String(c.actual ?? "");
  const pieces = c.sentences ? sentencePieces(actual, c.sentences.items) : [];
  if (pieces.length === 0) answer.textContent = actual;
  for (const p of pieces) {
    const span = text("span", p.text, p.scored ? "ee-sentence" : "");
    if (p.scored) {
      span.style.background = goodness(p.score);
      span.title = `${c.sentences.key}: ${fmt(p.score)}`;
    }
    answer.appendChild(span);
  }
  field("Actual answer", answer, "actual");
  if (c.error) field("Error", String(c.error), "error");
  const ctx = document.createElement("div");
  (c.context || []).forEach((/** @type {string} */ chunk, /** @type {number} */ i) => {
    const det = document.createElement("details");
    det.appendChild(text("summary", `#${i + 1} ${truncate(String(chunk), 60)}`));
    det.appendChild(text("div", String(chunk), "ee-text"));
    ctx.appendChild(det);
  });
  if (!c.context || c.context.length === 0) ctx.textContent = "no retrieved context";
  field("Context", ctx, "context");
  field("Cost", c.cost === null ? "–" : `$${c.cost}`, "cost");
  field("Duration", c.duration_s === null ? "–" : `${c.duration_s} s`, "duration");
}

export default { render };
