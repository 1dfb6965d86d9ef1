import { test } from "node:test";
import assert from "node:assert/strict";
import { dateLabels, linePath, rateDomain, xScale, yScale } from "../src/monitor.js";

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

test("the window dates never overprint, at the ends or between", () => {
  const day = (/** @type {number} */ d) => `2026-11-${String(d).padStart(2, "0")}T00:00:00+00:00`;
  for (const n of [1, 2, 3, 6, 10, 30, 90]) {
    const starts = Array.from({ length: n }, (_, i) => day((i % 28) + 1) + `#${i}`);
    const x = xScale(starts);
    const labels = dateLabels(starts, x);
    assert.ok(labels.length >= 1);
    const boxes = labels.map((l) => {
      const w = l.text.length * 6.2;
      const left = l.anchor === "start" ? l.x : l.anchor === "end" ? l.x - w : l.x - w / 2;
      return [left, left + w];
    });
    for (const [left, right] of boxes) assert.ok(left >= 0 && right <= 640, `n=${n}: inside`);
    for (let i = 1; i < boxes.length; i++) assert.ok(boxes[i][0] > boxes[i - 1][1], `n=${n}: apart`);
    assert.equal(labels[0].text, "2026-11-01"); // midnight windows: the date alone
  }
  const hours = ["2026-11-01T06:00:00", "2026-11-01T12:00:00"];
  assert.equal(dateLabels(hours, xScale(hours))[0].text, "2026-11-01 06:00");
});
