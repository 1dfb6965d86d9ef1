// @ts-check
/**
 * The human-calibration labeler: one item at a time, keyboard first. Decisions go to the
 * kernel as messages and are stored there before the view moves on; this file only shows
 * what the kernel sends (item, progress, calibration result) as text.
 */
import { scaleLinear } from "d3-scale";
import { text } from "./common.js";
import { rows, svg } from "./dom.js";
import { fmt } from "./eye_layout.js";
import { stepList } from "./eye_panel.js";
import { mediaStrip } from "./media.js";
import { renderRelevance } from "./relevance.js";
import { block, dispatchKey, keyButtons, mount, noteField, noteKey, progressHead, reviewRoot, section } from "./review.js";

/**
 * @typedef {object} Model
 * @property {(name: string) => any} get
 * @property {(name: string, value: any) => void} set
 * @property {() => void} save_changes
 * @property {(content: any) => void} send
 * @property {(event: string, cb: () => void) => void} on
 * @property {(event: string, cb: () => void) => void} off
 *
 * Traits: position (int), reviewer (string), mode ("pass_fail" | "agree"), _item, _progress,
 * _result (objects), _points, _bins (Arrow IPC bytes), _error (string).
 */

/** @param {{ model: Model, el: HTMLElement }} ctx */
function render({ model, el }) {
  // One bundle, two tasks: a metric's pass/fail labels, or documents' relevance grades.
  if (model.get("_task") === "relevance") return renderRelevance({ model, el });
  const root = reviewRoot("evalnb-labeler");
  const { head, bar, count } = progressHead();
  const card = block("lb-card");
  const actions = block("lb-actions");
  const note = noteField("lb", "note (n to write, Enter to keep, Esc to leave)");
  const error = text("div", "", "lb-error");
  const result = block("lb-result");
  root.append(head, card, actions, note, error, result);
  el.appendChild(root);

  /** @param {Record<string, any>} msg */
  const send = (msg) => model.send(msg);
  /** @param {string} verdict */
  const decide = (verdict) => {
    send({ action: "label", verdict, note: note.value || null });
    note.value = "";
  };
  const buttons = () => {
    const agree = model.get("mode") === "agree";
    /** @type {[string, string, () => void][]} */
    const spec = [
      ["← prev", "←", () => send({ action: "move", by: -1 })],
      agree ? ["agree", "a", () => decide("agree")] : ["pass", "p", () => decide("pass")],
      agree ? ["disagree", "d", () => decide("disagree")] : ["fail", "f", () => decide("fail")],
      ["next →", "→", () => send({ action: "move", by: 1 })],
      ["undo", "u", () => send({ action: "undo" })],
      ["note", "n", () => note.focus()],
    ];
    keyButtons(actions, spec, "lb");
  };

  const onKey = (/** @type {KeyboardEvent} */ e) => {
    if (e.target === note) {
      noteKey(e, root);
      return;
    }
    const agree = model.get("mode") === "agree";
    /** @type {Record<string, () => void>} */
    const keys = {
      ArrowLeft: () => send({ action: "move", by: -1 }),
      ArrowRight: () => send({ action: "move", by: 1 }),
      u: () => send({ action: "undo" }),
      n: () => note.focus(),
      b: () => send({ action: "next_batch" }),
    };
    if (agree) {
      keys.a = () => decide("agree");
      keys.d = () => decide("disagree");
    } else {
      keys.p = () => decide("pass");
      keys.f = () => decide("fail");
    }
    dispatchKey(e, keys);
  };

  const draw = () => {
    const p = model.get("_progress") || {};
    root.classList.toggle("offline", p.offline === true);
    bar.max = p.total || 1;
    bar.value = p.done || 0;
    count.textContent = `${p.done ?? 0} / ${p.total ?? 0} labelled · ${p.evaluator}/${p.metric} · reviewer ${model.get("reviewer")}${queueState(p)}`;
    drawItem(card, model.get("_item"), model.get("position"));
    error.textContent = model.get("_error") || "";
    drawResult(result, model);
    buttons();
  };
  return mount(model, root, ["change:_item", "change:_progress", "change:_result", "change:_error", "change:mode"], draw, onKey);
}

/**
 * @param {HTMLElement} card
 * @param {Record<string, any> | null} item
 * @param {number} position
 */
function drawItem(card, item, position) {
  card.replaceChildren();
  if (!item) {
    card.appendChild(text("p", "Nothing to label: every scored row of this metric has a label."));
    return;
  }
  const verdict = item.passed === null ? "unscored" : item.passed ? "pass" : "fail";
  const top = document.createElement("div");
  top.className = "lb-top";
  // Blind review: the metric's score and verdict are shown only once the item is labelled,
  // so they cannot anchor the label that is to check them.
  const score = item.hidden
    ? [text("span", `${item.metric_title}: hidden until you label (blind review)`, "lb-score lb-hidden")]
    : [
        text("span", `${item.metric_title} ${fmt(item.value)} (threshold ${fmt(item.threshold)})`, "lb-score"),
        text("span", `metric says ${verdict}`, `lb-verdict ${verdict}`),
      ];
  top.append(
    text("span", `#${position + 1}`, "lb-pos"),
    text("span", `${item.model}`, "lb-model"),
    ...score,
    text("span", item.human ? `you said ${item.human}` : "not labelled yet", `lb-human ${item.human || "none"}`),
  );
  card.appendChild(top);
  /** @param {string} name @param {string} value @param {string} cls */
  const field = (name, value, cls) => section(card, name, value, cls, "lb");
  field("Prompt", String(item.prompt ?? ""), "lb-prompt");
  if (item.media && item.media.length > 0) {
    const shown = document.createElement("section");
    shown.className = "lb-field lb-media";
    shown.append(text("h4", `Media (${item.media.length})`), mediaStrip(item.media));
    card.appendChild(shown);
  }
  field("Expected answer", (item.expected || []).join("\n— or —\n"), "lb-expected");
  field("Actual answer", String(item.actual ?? ""), "lb-actual");
  if (item.steps && item.steps.length > 0) {
    // An agent's run: the calls and their results are what an agent metric judged.
    const steps = document.createElement("section");
    steps.className = "lb-field lb-steps";
    steps.append(text("h4", `Steps (${item.steps.length})`), stepList(item.steps));
    card.appendChild(steps);
  }
  const ctx = document.createElement("details");
  ctx.className = "lb-context";
  ctx.appendChild(text("summary", `Retrieved context (${(item.context || []).length} chunks)`));
  for (const chunk of item.context || []) ctx.appendChild(text("div", String(chunk), "lb-text lb-chunk"));
  card.appendChild(ctx);
  if (item.note) field("Your note", String(item.note), "lb-saved-note");
}

/**
 * Score distribution (all rows, grey), human verdicts (dots), old and new thresholds.
 * @param {HTMLElement} box
 * @param {Model} model
 */
function drawResult(box, model) {
  box.replaceChildren();
  const r = model.get("_result");
  if (!r) return;
  if (r.message) {
    box.appendChild(text("p", r.message, "lb-message"));
    return;
  }
  const points = rows(model, "_points");
  const bins = rows(model, "_bins");
  const W = 520;
  const H = 170;
  const base = H - 30;
  const lows = bins.map((b) => b.low);
  const highs = bins.map((b) => b.high);
  const all = [...lows, ...highs, ...points.map((p) => p.value), r.threshold, r.old_threshold, ...r.ci];
  const finite = all.filter((v) => Number.isFinite(v));
  const x = scaleLinear()
    .domain([Math.min(...finite), Math.max(...finite)])
    .range([20, W - 20]);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "lb-chart" });
  const top = Math.max(1, ...bins.map((b) => b.n));
  for (const b of bins) {
    const h = ((base - 60) * b.n) / top;
    chart.appendChild(svg("rect", { x: x(b.low), y: base - h, width: Math.max(0, x(b.high) - x(b.low) - 1), height: h, class: "lb-bin" }));
  }
  if (Number.isFinite(r.ci[0]) && Number.isFinite(r.ci[1])) {
    chart.appendChild(svg("rect", { x: x(r.ci[0]), y: 8, width: Math.max(1, x(r.ci[1]) - x(r.ci[0])), height: base - 8, class: "lb-ci" }));
  }
  points.forEach((p, i) => {
    const jitter = ((i * 37) % 23) - 11;
    chart.appendChild(svg("circle", { cx: x(p.value), cy: 30 + jitter, r: 3.5, class: p.human_pass ? "lb-dot pass" : "lb-dot fail" }));
  });
  // Reliability: the share humans passed per score band (0 at the axis, 1 at the top), with
  // its interval, so a reviewer sees whether the score tracks their verdicts.
  const share = (/** @type {number} */ p) => base - (base - 8) * p;
  const bands = (r.reliability || []).filter((/** @type {any} */ b) => Number.isFinite(b.score));
  for (const b of bands) {
    chart.appendChild(svg("line", { x1: x(b.score), x2: x(b.score), y1: share(b.ci_low), y2: share(b.ci_high), class: "lb-rel-ci" }));
  }
  if (bands.length > 1) {
    const path = bands.map((/** @type {any} */ b, /** @type {number} */ i) => `${i ? "L" : "M"}${x(b.score)},${share(b.human_pass_rate)}`).join(" ");
    chart.appendChild(svg("path", { d: path, class: "lb-rel" }));
  }
  for (const [t, cls, label] of [[r.old_threshold, "lb-old", "old"], [r.threshold, "lb-new", "new"]]) {
    if (!Number.isFinite(t)) continue;
    chart.appendChild(svg("line", { x1: x(t), x2: x(t), y1: 6, y2: base, class: String(cls) }));
    const tl = svg("text", { x: x(t) + 3, y: base + 14, class: "lb-axis" });
    tl.textContent = `${label} ${fmt(Number(t))}`;
    chart.appendChild(tl);
  }
  box.appendChild(chart);
  const lines = [
    `threshold ${fmt(r.old_threshold)} → ${fmt(r.threshold)} (95 % CI ${fmt(r.ci[0])}–${fmt(r.ci[1])}) from ${r.n_labels} labels`,
    "line: share of answers the humans passed per score band (with its 95 % interval)",
    `${r.criterion.replace("_", " ")} ${fmt(r.agreement)} (CI ${fmt(r.agreement_ci[0])}–${fmt(r.agreement_ci[1])}); Cohen's κ ${fmt(r.kappa_before)} → ${fmt(r.kappa_after)} (CI ${fmt((r.kappa_ci || [])[0])}–${fmt((r.kappa_ci || [])[1])})`,
    r.more_labels > 0 ? `about ${r.more_labels} more labels would narrow the CI to ${fmt(r.target_width)}` : "CI as narrow as asked",
  ];
  for (const line of lines) box.appendChild(text("div", line, "lb-stat"));
  const next = text("button", "next batch (b)", "lb-btn lb-next");
  next.setAttribute("type", "button");
  next.addEventListener("click", () => model.send({ action: "next_batch" }));
  const apply = text("button", `apply threshold ${fmt(r.threshold)}`, "lb-btn lb-apply");
  apply.setAttribute("type", "button");
  apply.addEventListener("click", () => model.send({ action: "apply" }));
  box.append(next, apply);
}

export default { render };

/**
 * What a queue-served labeler adds to its progress line: items left on the server, and
 * labels waiting in the outbox (offline or not yet sent). Empty for a lab's labeler.
 * @param {Record<string, any>} p
 * @returns {string}
 */
export function queueState(p) {
  if (p.waiting === undefined) return "";
  const left = p.remaining == null ? "" : ` · ${p.remaining} items left in the queue`;
  if (p.offline) return `${left} · offline: ${p.waiting} label(s) wait to be sent`;
  return p.waiting ? `${left} · ${p.waiting} label(s) sending` : `${left} · all labels sent`;
}
