// @ts-check
/**
 * The eval eye: a two-ring drill-down (domains → evaluators → metrics → models) with a dot
 * chart of test cases (eye_dots.js) and a case panel (eye_panel.js). The kernel sends only the current level (Arrow IPC
 * traits); this file draws it and writes back `path`, `selected_case` and `compare`.
 * Every piece of lab text reaches the DOM through textContent.
 */
import { partition, stratify } from "d3-hierarchy";
import { scaleBand, scaleLinear } from "d3-scale";
import { arc } from "d3-shape";
import { text } from "./common.js";
import { rows, svg, tooltip } from "./dom.js";
import { dotChart } from "./eye_dots.js";
import { casePanel } from "./eye_panel.js";
import { fmt, labelPlacement, truncate } from "./eye_layout.js";

/**
 * @typedef {object} Model
 * @property {(name: string) => any} get
 * @property {(name: string, value: any) => void} set
 * @property {() => void} save_changes
 * @property {(event: string, cb: () => void) => void} on
 * @property {(event: string, cb: () => void) => void} off
 *
 * Traits: path (string[]), selected_case ({case_id, model, sample} | null),
 * compare (string[]), title (string), language (string: "" for all, else an ISO 639-1
 * code; _languages lists the choices), _nodes/_bars/_dots/_bins (Arrow IPC bytes),
 * _level (object), _case (object | null).
 */

const SIZE = 520;
const C = SIZE / 2;
const RINGS = { 1: [100, 172], 2: [176, 248] };
const SEVERITY = { HIGH: "#c62828", MEDIUM: "#ef6c00", LOW: "#f9a825" };
const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1"];

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
  const language = document.createElement("select");
  language.className = "ee-language";
  language.setAttribute("aria-label", "Language of the cases shown");
  language.addEventListener("change", () => {
    model.set("language", language.value);
    model.save_changes();
  });
  head.append(back, crumbs, language);
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
    if (path.length === 4) {
      chart.appendChild(dotChart(model, path, level, () => go(model, path.slice(0, -1))));
    }
    else chart.appendChild(sunburst(model, path, level, bars));
    chart.appendChild(bars);
  };
  const drawLanguages = () => languageOptions(language, model);
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
  model.on("change:_languages", drawLanguages);
  model.on("change:language", drawLanguages);
  draw();
  drawPanel();
  drawLanguages();
  return () => {
    for (const ev of events) model.off(ev, draw);
    model.off("change:_languages", drawLanguages);
    model.off("change:language", drawLanguages);
    model.off("change:_case", drawPanel);
    model.off("change:selected_case", markSelected);
    root.removeEventListener("keydown", onKey);
  };
}

/**
 * The language filter: every language of the lab's cases with its count; hidden when the
 * lab holds one language or none is known.
 * @param {HTMLSelectElement} select
 * @param {Model} model
 */
export function languageOptions(select, model) {
  /** @type {{code: string, name: string, n: number}[]} */
  const options = model.get("_languages") || [];
  const current = model.get("language") || "";
  select.replaceChildren();
  const all = text("option", "All languages");
  all.setAttribute("value", "");
  select.appendChild(all);
  for (const o of options) {
    const opt = text("option", `${o.name} (${o.n})`);
    opt.setAttribute("value", o.code);
    select.appendChild(opt);
  }
  select.value = current;
  select.hidden = options.length < 2 && !current;
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
  const defs = svg("defs");
  const hatch = svg("pattern", {
    id: "ee-hatch",
    width: 6,
    height: 6,
    patternUnits: "userSpaceOnUse",
    patternTransform: "rotate(45)",
  });
  hatch.append(
    svg("rect", { width: 6, height: 6, fill: "#eeeeee" }),
    svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#9e9e9e", "stroke-width": 2 }),
  );
  defs.appendChild(hatch);
  out.appendChild(defs);
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
  // Nothing scored under it (a metric not meaningful for the language chosen): neither
  // passed nor failed, so hatched grey, never the yellow of "OK".
  const unscored = d.passed == null && d.value == null;
  const grp = svg("g", {
    class: `ee-seg ${problem ? "problem" : unscored ? "unscored" : "ok"}${d.selected ? " selected" : ""}`,
    "data-ring": d.ring,
    "data-kind": d.kind,
    "data-key": d.keys.join("/"),
    role: "button",
  });
  const scored = d.kind === "model" && path.length >= 3 && d.ring === 1;
  const fill = unscored
    ? "url(#ee-hatch)"
    : scored
      ? d.passed
        ? "#66bb6a"
        : "#ef5350"
      : problem
        ? "#bdbdbd"
        : "#f2c94c";
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
  const state = unscored
    ? d.not_scored || "not scored here"
    : problem
      ? `${d.n_problems} problem(s), worst ${d.severity}`
      : "OK";
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

export default { render };
