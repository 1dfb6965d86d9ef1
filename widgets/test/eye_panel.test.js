import assert from "node:assert/strict";
import { test } from "node:test";
import { rankingTitle } from "../src/eye_panel.js";

test("a ranking's heading counts what is shown and what is relevant", () => {
  const docs = [{ grade: 2 }, { grade: null }, { grade: 0 }, { grade: 1 }];
  assert.equal(rankingTitle({ documents: docs, n_ranked: 4, n_relevant: 3, missed: [] }), "Retrieved documents (4; 2 of 3 relevant shown)");
  assert.equal(rankingTitle({ documents: docs, n_ranked: 100, n_relevant: 2, missed: [] }), "Retrieved documents (first 4 of 100; 2 of 2 relevant shown)");
});
