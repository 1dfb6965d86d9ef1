import assert from "node:assert/strict";
import { test } from "node:test";
import {
  dotDomain,
  dotLayout,
  fmt,
  goodness,
  labelPlacement,
  position,
  sentencePieces,
  short,
  thresholdPosition,
  truncate,
} from "../src/eye_layout.js";

test("dots with the same score stack; others sit on the floor", () => {
  const { x, y, step } = dotLayout([10, 10, 10, 50], 4, 100);
  assert.deepEqual(x, [8, 8, 8, 48]);
  assert.deepEqual(y, [4, 12, 20, 4]);
  assert.equal(step, 8);
});

test("tall stacks are squeezed to the height", () => {
  const { y, step } = dotLayout(Array(50).fill(0), 4, 100);
  assert.equal(step, 2);
  assert.equal(y[49], 99);
});

test("goodness runs red to green and greys out missing scores", () => {
  assert.equal(goodness(0), "rgb(215, 48, 39)");
  assert.equal(goodness(1), "rgb(26, 152, 80)");
  assert.equal(goodness(null), "#9e9e9e");
  assert.equal(goodness(7), goodness(1));
});

test("position flips for lower-is-better metrics", () => {
  assert.equal(position(0.25, 0, 1, true), 0.25);
  assert.equal(position(0.25, 0, 1, false), 0.75);
  assert.equal(position(null, 0, 1, true), null);
});

test("sentence pieces keep every character exactly once", () => {
  const answer = "Paris is big.  It is old! ok";
  const pieces = sentencePieces(answer, [
    { text: "Paris is big.", score: 0.9 },
    { text: "missing", score: 0.1 },
    { text: "It is old!", score: 0.2 },
  ]);
  assert.equal(pieces.map((p) => p.text).join(""), answer);
  assert.deepEqual(
    pieces.map((p) => p.scored),
    [true, false, true, false],
  );
});

test("labels and numbers format compactly", () => {
  assert.equal(truncate("groundedness", 6), "groun…");
  assert.equal(truncate("ok", 6), "ok");
  assert.equal(fmt(0.123456), "0.123");
  assert.equal(fmt(null), "–");
  assert.equal(fmt(1234567), "1.23e+6");
});

test("threshold splits colours into failing reds and passing greens", () => {
  assert.equal(thresholdPosition(0.75, 0, 1, 0.75, true), 0.6);
  assert.equal(thresholdPosition(0, 0, 1, 0.75, true), 0);
  assert.equal(thresholdPosition(1, 0, 1, 0.75, true), 1);
  assert.ok(thresholdPosition(0.7, 0, 1, 0.75, true) < 0.4);
  assert.ok(thresholdPosition(0.1, 0, 1, 0.2, false) > 0.6);
  assert.equal(thresholdPosition(0.5, 0, 1, null, true), 0.5);
});

test("labels run along wide arcs and across narrow ones, never upside down", () => {
  const top = labelPlacement(-0.5, 0.5, 100, 172);
  assert.equal(top.angle, 0);
  assert.ok(top.room > 100);
  const bottom = labelPlacement(Math.PI - 0.5, Math.PI + 0.5, 100, 172);
  assert.equal(bottom.angle, 0);
  const narrow = labelPlacement(Math.PI / 2 - 0.05, Math.PI / 2 + 0.05, 100, 172);
  assert.equal(narrow.angle, 0);
  assert.equal(narrow.room, 64);
});

test("the dot chart's domain is finite even with no score to show", () => {
  assert.deepEqual(dotDomain([], null, 0, 1), [0, 1]);
  const [a, b] = dotDomain([NaN, NaN], undefined, null, null);
  assert.ok(Math.abs(a + 0.04) < 1e-12 && Math.abs(b - 1.04) < 1e-12);
  const [lo, hi] = dotDomain([0.2, 0.6], 0.5, 0, 1);
  assert.ok(Math.abs(lo - 0.184) < 1e-12 && Math.abs(hi - 0.616) < 1e-12);
  assert.deepEqual(dotDomain([0.3], null, 0, 1), [0, 0.8]); // one value: half a unit each side
});

test("durations and costs show three significant digits, not a float's binary tail", () => {
  assert.equal(short(3.5250000000000004), "3.53");
  assert.equal(short(0.000123456), "0.000123");
  assert.equal(short(30), "30");
  assert.equal(short(1234.56), "1235");
  assert.equal(short(null), "–");
  assert.equal(short(Number.NaN), "–");
});
