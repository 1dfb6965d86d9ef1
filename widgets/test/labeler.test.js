import assert from "node:assert/strict";
import { test } from "node:test";
import { queueState } from "../src/labeler.js";

test("a lab's labeler adds nothing; a queue's says what is left and what waits", () => {
  assert.equal(queueState({ done: 1, total: 3 }), "");
  assert.equal(queueState({ waiting: 0, remaining: 12, offline: false }), " · 12 items left in the queue · all labels sent");
  assert.equal(queueState({ waiting: 2, remaining: null, offline: true }), " · offline: 2 label(s) wait to be sent");
  assert.equal(queueState({ waiting: 1, remaining: 5, offline: false }), " · 5 items left in the queue · 1 label(s) sending");
});

test("the relevance labeler's progress names the pool and the reviewer", async () => {
  const { relevanceProgress, GRADES } = await import("../src/relevance.js");
  assert.equal(relevanceProgress({ done: 2, total: 9, k: 10 }, "ann"), "2 / 9 graded · pooled top 10 of every retriever · reviewer ann");
  assert.deepEqual(GRADES.map((g) => g[0]), ["0", "1", "2", "3"]);
});
