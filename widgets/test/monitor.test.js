import { test } from "node:test";
import assert from "node:assert/strict";
import { linePath, rateDomain, xScale, yScale } from "../src/monitor.js";

test("windows spread evenly and a lone window sits in the middle", () => {
  const x = xScale(["a", "b", "c"]);
  assert.ok(x("a") < x("b") && x("b") < x("c"));
  assert.equal(x("b") - x("a"), x("c") - x("b"));
  const one = xScale(["a"]);
  assert.equal(one("a"), 44 + (640 - 44 - 12) / 2);
});

test("the rate axis holds every value shown, padded, within [0, 1]", () => {
  const rows = [{ pass_rate: 0.8, cs_low: 0.7, cs_high: 0.97, accepted: 0.85 }, { pass_rate: null }];
  const [lo, hi] = rateDomain(rows);
  assert.ok(Math.abs(lo - 0.65) < 1e-12 && hi === 1);
  assert.deepEqual(rateDomain([]), [0, 1]);
  const y = yScale(0, 1);
  assert.ok(y(1) < y(0)); // higher rates are drawn higher
});

test("a line skips the windows without a value", () => {
  const x = xScale(["a", "b", "c"]);
  const y = yScale(0, 1);
  const rows = [
    { window_start: "a", corrected: 0.5 },
    { window_start: "b", corrected: null },
    { window_start: "c", corrected: 0.7 },
  ];
  const d = linePath(rows, "corrected", x, y);
  assert.equal((d.match(/[ML]/g) || []).length, 2);
  assert.ok(d.startsWith("M"));
});
