// @ts-check
/**
 * The eval eye's case panel: model, metric cards grouped by evaluator, prompt, expected
 * answer, the answer with scored sentences coloured, retrieved chunks, cost and duration.
 */
import { text } from "./common.js";
import { fmt, goodness, sentencePieces, short, truncate } from "./eye_layout.js";
import { mediaStrip } from "./media.js";

/** @typedef {import("./eye.js").Model} Model */

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
 * An agent's run, a row a step: the message, or the tool called with its arguments and,
 * folded under it, the result; errors and malformed arguments marked. All model and tool
 * text goes in as text nodes (never as HTML).
 * @param {any[]} steps
 * @returns {HTMLElement}
 */
export function stepList(steps) {
  const list = document.createElement("ol");
  list.className = "ee-steps";
  for (const s of steps) {
    const item = document.createElement("li");
    item.className = `ee-step ee-step-${s.role}${s.error ? " ee-step-error" : ""}`;
    if (s.step !== null && s.step !== undefined) item.dataset.step = String(s.step);
    const head = text("span", String(s.role), "ee-step-role");
    item.appendChild(head);
    if (s.latency_s !== null && s.latency_s !== undefined) {
      item.appendChild(text("span", `${fmt(s.latency_s)} s`, "ee-step-latency"));
    }
    if (s.content) item.appendChild(text("div", String(s.content), "ee-text"));
    if (s.tool_name) {
      const call = text("code", `${s.tool_name}(${s.tool_args ?? ""})`, "ee-step-call");
      if (s.args_valid === false) call.title = "the arguments are not valid JSON";
      item.appendChild(call);
      if (s.tool_result !== null && s.tool_result !== undefined) {
        const det = document.createElement("details");
        det.appendChild(text("summary", `result: ${truncate(String(s.tool_result), 60)}`));
        det.appendChild(text("div", String(s.tool_result), "ee-text ee-step-result"));
        item.appendChild(det);
      }
    }
    if (s.error) item.appendChild(text("div", `error: ${s.error}`, "ee-step-err"));
    list.appendChild(item);
  }
  return list;
}

/**
 * The right-side panel with one test case.
 * @param {HTMLElement} panel
 * @param {Model} model
 */
export function casePanel(panel, model) {
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
  // What the case showed the model (and what it showed back), as the judge was sent it.
  if (c.media && c.media.length > 0) field(`Media (${c.media.length})`, mediaStrip(c.media), "media");
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
  // A retriever's ranking beside the answer: was what it needed retrieved, and how high.
  if (c.ranking) field(rankingTitle(c.ranking), rankingList(c.ranking), "ranking");
  if (c.error) field("Error", String(c.error), "error");
  if (c.steps && c.steps.length > 0) field(`Steps (${c.steps.length})`, stepList(c.steps), "steps");
  const ctx = document.createElement("div");
  (c.context || []).forEach((/** @type {string} */ chunk, /** @type {number} */ i) => {
    const det = document.createElement("details");
    det.appendChild(text("summary", `#${i + 1} ${truncate(String(chunk), 60)}`));
    det.appendChild(text("div", String(chunk), "ee-text"));
    ctx.appendChild(det);
  });
  if (!c.context || c.context.length === 0) ctx.textContent = "no retrieved context";
  field("Context", ctx, "context");
  field("Cost", c.cost === null ? "–" : `$${short(c.cost)}`, "cost");
  field("Duration", c.duration_s === null ? "–" : `${short(c.duration_s)} s`, "duration");
}

/**
 * The heading of a retrieved ranking: how many were ranked, shown, and judged relevant.
 * @param {{documents: any[], n_ranked: number, n_relevant: number, missed: any[]}} r
 * @returns {string}
 */
export function rankingTitle(r) {
  const shown = r.documents.length < r.n_ranked ? `first ${r.documents.length} of ${r.n_ranked}` : `${r.n_ranked}`;
  const found = r.documents.filter((d) => d.grade !== null && d.grade >= 1).length;
  return `Retrieved documents (${shown}; ${found} of ${r.n_relevant} relevant shown)`;
}

/**
 * A retrieved ranking in trec_eval's order: rank, document, score, its grade, its text.
 * @param {{documents: any[], n_ranked: number, n_relevant: number, missed: any[]}} r
 * @returns {HTMLElement}
 */
export function rankingList(r) {
  const box = document.createElement("div");
  const list = document.createElement("ol");
  list.className = "ee-ranked";
  for (const d of r.documents) {
    const item = document.createElement("li");
    const judged = d.grade === null || d.grade === undefined;
    item.className = judged ? "ee-doc ee-doc-unjudged" : d.grade >= 1 ? "ee-doc ee-doc-relevant" : "ee-doc ee-doc-irrelevant";
    const grade = judged ? "unjudged" : `grade ${d.grade}`;
    item.appendChild(text("span", `#${d.rank} ${d.doc_id}`, "ee-doc-id"));
    item.appendChild(text("span", ` ${d.score === null ? "–" : short(d.score)} · ${grade}`, "ee-doc-grade"));
    if (d.text) item.appendChild(text("div", String(d.text), "ee-text ee-doc-text"));
    list.appendChild(item);
  }
  box.appendChild(list);
  if (r.missed.length > 0) {
    const names = r.missed.map((/** @type {any} */ m) => `${m.doc_id} (grade ${m.grade})`).join(", ");
    box.appendChild(text("div", `relevant, never retrieved: ${names}`, "ee-missed"));
  }
  return box;
}
