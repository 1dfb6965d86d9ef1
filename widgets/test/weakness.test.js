import assert from "node:assert/strict";
import { test } from "node:test";
import { weaknessHeading } from "../src/weakness.js";

test("a weak cell's interval is on the failing side: above the threshold for a rate of errors", () => {
  assert.equal(weaknessHeading(2, true), "Weaknesses (interval below the threshold)");
  assert.equal(weaknessHeading(2, false), "Weaknesses (interval above the threshold)");
  assert.equal(weaknessHeading(0, false), "No cell is clearly above the threshold");
});
