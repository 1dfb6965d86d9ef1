// @ts-check
/**
 * The relevance labeler's view: a pooled document shown with its query, graded 0–3 from the
 * keyboard. Grades go to the kernel as messages and are committed there (lab.qrels) before
 * the view moves on; every text goes in through textContent only.
 */
import { text } from "./common.js";
import { block, dispatchKey, keyButtons, mount, progressHead, reviewRoot, section } from "./review.js";

/** TREC's grades, as the judge is asked them. */
export const GRADES = [
  ["0", "not relevant", "nothing to do with the query"],
  ["1", "related", "on the topic, does not answer it"],
  ["2", "partly answers", "part of the answer, or the answer among unrelated matter"],
  ["3", "answers", "devoted to the query, with its exact answer"],
];

/**
 * The progress line of the relevance labeler.
 * @param {Record<string, any>} p
 * @param {string} reviewer
 * @returns {string}
 */
export function relevanceProgress(p, reviewer) {
  return `${p.done ?? 0} / ${p.total ?? 0} graded · pooled top ${p.k ?? "?"} of every retriever · reviewer ${reviewer}`;
}

/** @param {{ model: any, el: HTMLElement }} ctx */
export function renderRelevance({ model, el }) {
  const root = reviewRoot("evalnb-labeler evalnb-relevance");
  const { head, bar, count } = progressHead();
  const card = block("lb-card");
  const actions = block("lb-actions");
  const error = text("div", "", "lb-error");
  root.append(head, card, actions, error);
  el.appendChild(root);

  /** @param {Record<string, any>} msg */
  const send = (msg) => model.send(msg);
  const move = (/** @type {number} */ by) => send({ action: "move", by });
  /** @type {[string, string, () => void][]} */
  const spec = [
    ["← prev", "←", () => move(-1)],
    ...GRADES.map(([g, label]) => /** @type {[string, string, () => void]} */ ([`${g} ${label}`, g, () => send({ action: "grade", grade: Number(g) })])),
    ["next →", "→", () => move(1)],
  ];
  const onKey = (/** @type {KeyboardEvent} */ e) => {
    /** @type {Record<string, () => void>} */
    const keys = { ArrowLeft: () => move(-1), ArrowRight: () => move(1) };
    for (const [g] of GRADES) keys[g] = () => send({ action: "grade", grade: Number(g) });
    dispatchKey(e, keys);
  };
  const draw = () => {
    const p = model.get("_progress") || {};
    bar.max = p.total || 1;
    bar.value = p.done || 0;
    count.textContent = relevanceProgress(p, model.get("reviewer"));
    drawDocument(card, model.get("_item"), model.get("position"));
    error.textContent = model.get("_error") || "";
    keyButtons(actions, spec, "lb");
  };
  return mount(model, root, ["change:_item", "change:_progress", "change:_error"], draw, onKey);
}

/**
 * @param {HTMLElement} card
 * @param {Record<string, any> | null} item
 * @param {number} position
 */
function drawDocument(card, item, position) {
  card.replaceChildren();
  if (!item) {
    card.appendChild(text("p", "Nothing to grade: every pooled document has a person's grade."));
    return;
  }
  const top = document.createElement("div");
  top.className = "lb-top";
  const mine = item.grade === null || item.grade === undefined ? null : String(item.grade);
  const judge = item.hidden
    ? text("span", "judge's grade hidden until you grade (blind review)", "lb-score lb-hidden")
    : text("span", item.judge_grade === null || item.judge_grade === undefined ? "no judge's grade" : `judge said ${item.judge_grade}`, "lb-score");
  top.append(
    text("span", `#${position + 1}`, "lb-pos"),
    text("span", `document ${item.doc_id}`, "lb-model"),
    text("span", `best rank ${item.best_rank} · ${(item.retrievers || []).join(", ")}`, "lb-ranked"),
    judge,
    text("span", mine === null ? "not graded yet" : `you graded ${mine}`, `lb-human lb-grade-${mine ?? "none"}`),
  );
  card.appendChild(top);
  section(card, "Query", String(item.query ?? ""), "lb-prompt", "lb");
  section(card, "Passage", item.passage === null || item.passage === undefined ? "(no text for this document in the lab)" : String(item.passage), "lb-actual", "lb");
  const scale = document.createElement("ul");
  scale.className = "lb-scale";
  for (const [g, label, meaning] of GRADES) scale.appendChild(text("li", `${g} ${label}: ${meaning}`));
  card.appendChild(scale);
}
