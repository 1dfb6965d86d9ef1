// @ts-check
/**
 * The eval eye's model level: one dot per test case at its score (stacked), the threshold,
 * a histogram behind sampled dots, and a scatter against a second metric on request.
 */
import { scaleLinear } from "d3-scale";
import { text } from "./common.js";
import { rows, svg, tooltip } from "./dom.js";
import { dotDomain, dotLayout, fmt, goodness, thresholdPosition } from "./eye_layout.js";

const SIZE = 520;

/** @typedef {import("./eye.js").Model} Model */

/**
 * The model level: one dot per test case at its score, threshold line, optional compare.
 * @param {Model} model
 * @param {string[]} path
 * @param {Record<string, any>} level
 * @param {() => void} onClose called by the close button (one level up)
 * @returns {HTMLElement}
 */
export function dotChart(model, path, level, onClose) {
  const wrap = document.createElement("div");
  wrap.className = "ee-dots";
  const bar = document.createElement("div");
  bar.className = "ee-dots-bar";
  const close = text("button", "✕ Close", "ee-close");
  close.setAttribute("type", "button");
  close.addEventListener("click", onClose);
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
  // The data's extent (with the threshold), not the metric's full range: cosine metrics
  // span [-1, 1] but answers rarely go below 0, and half an empty chart hides the shape.
  const [lo, hi] = dotDomain(
    dots.map((d) => d.value),
    level.threshold,
    level.min,
    level.max,
  );
  const x = scaleLinear().domain([lo, hi]).range([left, W - 16]);
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
