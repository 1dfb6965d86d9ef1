// @ts-check
/**
 * Pure layout and colour maths of the eval eye (no DOM): tested with `node --test`.
 */

/**
 * Stack dots into columns one diameter wide, bottom up (a dot plot: x is the score, the
 * height of a stack is how many cases share that score).
 * @param {number[]} xs pixel x of every dot, in any order
 * @param {number} radius dot radius in pixels
 * @param {number} height plot height available for the tallest stack
 * @returns {{x: number[], y: number[], step: number}} centre of every dot (y from the
 *   bottom) and the vertical step used (smaller than a diameter when stacks are too tall)
 */
export function dotLayout(xs, radius, height) {
  const width = 2 * radius;
  /** @type {Map<number, number>} */
  const seen = new Map();
  const level = xs.map((x) => {
    const col = Math.round(x / width);
    const k = seen.get(col) ?? 0;
    seen.set(col, k + 1);
    return k;
  });
  const tallest = Math.max(1, ...seen.values());
  const step = Math.min(width, height / tallest);
  return {
    x: xs.map((x) => Math.round(x / width) * width),
    y: level.map((k) => (k + 0.5) * step),
    step,
  };
}

/**
 * Red → yellow → green for a score's position in [0, 1] (1 = best).
 * @param {number | null | undefined} t
 * @returns {string} CSS colour
 */
export function goodness(t) {
  if (t === null || t === undefined || Number.isNaN(t)) return "#9e9e9e";
  const u = Math.min(1, Math.max(0, t));
  /** @type {[number, number, number][]} */
  const stops = [
    [215, 48, 39],
    [254, 224, 139],
    [26, 152, 80],
  ];
  const seg = u < 0.5 ? 0 : 1;
  const f = u < 0.5 ? u / 0.5 : (u - 0.5) / 0.5;
  const a = stops[seg];
  const b = stops[seg + 1];
  const mix = a.map((v, i) => Math.round(v + (b[i] - v) * f));
  return `rgb(${mix[0]}, ${mix[1]}, ${mix[2]})`;
}

/**
 * Where a score sits between a metric's worst and best values (1 = best).
 * @param {number | null} value
 * @param {number} low
 * @param {number} high
 * @param {boolean} higherIsBetter
 * @returns {number | null}
 */
export function position(value, low, high, higherIsBetter) {
  if (value === null || !Number.isFinite(value)) return null;
  const span = high - low || 1;
  const t = (value - low) / span;
  return higherIsBetter ? t : 1 - t;
}

/**
 * Shorten a label to `max` characters with an ellipsis.
 * @param {string} label
 * @param {number} max
 * @returns {string}
 */
export function truncate(label, max) {
  if (max < 2) return "";
  return label.length <= max ? label : `${label.slice(0, max - 1)}…`;
}

/**
 * Cut an answer into plain and scored pieces, in order, so every character is shown once:
 * each scored sentence is found after the previous one; text between them stays plain.
 * @param {string} answer
 * @param {{text: string, score: number | null}[]} sentences
 * @returns {{text: string, score: number | null, scored: boolean}[]}
 */
export function sentencePieces(answer, sentences) {
  /** @type {{text: string, score: number | null, scored: boolean}[]} */
  const out = [];
  let at = 0;
  for (const s of sentences) {
    const i = s.text ? answer.indexOf(s.text, at) : -1;
    if (i < 0) continue;
    if (i > at) out.push({ text: answer.slice(at, i), score: null, scored: false });
    out.push({ text: s.text, score: s.score, scored: true });
    at = i + s.text.length;
  }
  if (at < answer.length) out.push({ text: answer.slice(at), score: null, scored: false });
  return out;
}

/**
 * Format a score for display ("–" when missing).
 * @param {number | null | undefined} value
 * @returns {string}
 */
export function fmt(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return "–";
  const a = Math.abs(value);
  return a !== 0 && (a < 0.001 || a >= 1e5) ? value.toExponential(2) : value.toFixed(3);
}

/**
 * A duration or an amount for a person: three significant digits ("3.53", "0.00123",
 * "1234"), never a float's binary tail ("3.5250000000000004").
 * @param {number | null | undefined} value
 * @returns {string}
 */
export function short(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return "–";
  return Math.abs(value) >= 1000 ? value.toFixed(0) : String(Number(value.toPrecision(3)));
}

/**
 * Colour position of a score with the threshold as the pass/fail boundary: failing scores
 * fall in [0, 0.4] (red → orange), passing ones in [0.6, 1] (light → deep green), deeper
 * the further from the threshold. Without a threshold, the plain position in the range.
 * @param {number | null} value
 * @param {number} low
 * @param {number} high
 * @param {number | null} threshold
 * @param {boolean} higherIsBetter
 * @returns {number | null}
 */
export function thresholdPosition(value, low, high, threshold, higherIsBetter) {
  if (threshold === null || !Number.isFinite(threshold)) {
    return position(value, low, high, higherIsBetter);
  }
  if (value === null || !Number.isFinite(value)) return null;
  const good = higherIsBetter ? value >= threshold : value <= threshold;
  const far = good ? (higherIsBetter ? high : low) : higherIsBetter ? low : high;
  const span = Math.abs(far - threshold) || 1;
  const depth = Math.min(1, Math.abs(value - threshold) / span);
  return good ? 0.6 + 0.4 * depth : 0.4 - 0.4 * depth;
}

/**
 * How to write a label on an arc: along it (tangential) when the arc is long enough,
 * else across the ring (radial); always upright.
 * @param {number} x0 start angle (radians, clockwise from 12 o'clock)
 * @param {number} x1 end angle
 * @param {number} inner inner radius
 * @param {number} outer outer radius
 * @returns {{angle: number, room: number}} rotation in degrees and room in pixels
 */
export function labelPlacement(x0, x1, inner, outer) {
  const mid = (((x0 + x1) / 2) * 180) / Math.PI;
  const along = (x1 - x0) * ((inner + outer) / 2);
  const across = outer - inner - 8;
  if (along >= across || along >= 60) {
    const angle = mid <= 90 ? mid : mid < 270 ? mid - 180 : mid - 360;
    return { angle, room: along - 6 };
  }
  const angle = mid < 180 ? mid - 90 : mid - 270;
  return { angle, room: across };
}

/**
 * The x domain of the dot chart: the data's extent with the threshold, padded, inside the
 * metric's range when it has one. A level with no finite score (all missing, or a view drawn
 * before its data arrived) falls back to the metric's range, else [0, 1]: never NaN.
 * @param {number[]} values
 * @param {number | null | undefined} threshold
 * @param {number | null | undefined} min
 * @param {number | null | undefined} max
 * @returns {[number, number]}
 */
export function dotDomain(values, threshold, min, max) {
  const known = values.filter((v) => Number.isFinite(v));
  if (Number.isFinite(threshold)) known.push(/** @type {number} */ (threshold));
  const hasMin = Number.isFinite(min);
  const hasMax = Number.isFinite(max);
  const lo0 = known.length ? Math.min(...known) : hasMin ? /** @type {number} */ (min) : 0;
  const hi0 = known.length ? Math.max(...known) : hasMax ? /** @type {number} */ (max) : 1;
  const pad = (hi0 - lo0) * 0.04 || 0.5;
  const lo = hasMin ? Math.max(/** @type {number} */ (min), lo0 - pad) : lo0 - pad;
  const hi = hasMax ? Math.min(/** @type {number} */ (max), hi0 + pad) : hi0 + pad;
  return [lo, hi > lo ? hi : lo + 1];
}
