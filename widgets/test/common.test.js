import assert from "node:assert/strict";
import { test } from "node:test";
import { bytesOf, escapeHtml } from "../src/common.js";

test("escapeHtml neutralises markup and quotes", () => {
  assert.equal(
    escapeHtml(`<img src=x onerror="alert('1')">&`),
    "&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;",
  );
  assert.equal(escapeHtml(null), "");
});

test("bytesOf views a DataView without copying", () => {
  const buf = new Uint8Array([1, 2, 3, 4]).buffer;
  const view = new DataView(buf, 1, 2);
  assert.deepEqual([...bytesOf(view)], [2, 3]);
});
