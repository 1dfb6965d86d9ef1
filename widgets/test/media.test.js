import assert from "node:assert/strict";
import { test } from "node:test";
import { mediaCaption, safeSource } from "../src/media.js";

test("only data: URLs of images and audio become sources; nothing the page would fetch", () => {
  assert.equal(safeSource({ src: "data:image/png;base64,iVBORw0KGgo=" }), "data:image/png;base64,iVBORw0KGgo=");
  assert.equal(safeSource({ src: "data:audio/wav;base64,UklGRg==" }), "data:audio/wav;base64,UklGRg==");
  for (const bad of ["https://example.org/x.png", "javascript:alert(1)", "data:text/html;base64,PHNjcmlwdD4=", "data:image/svg+xml;base64,PHN2Zz4=", 'data:image/png;base64,AA" onerror="x', null]) {
    assert.equal(safeSource({ src: bad }), null, String(bad));
  }
});

test("a caption names the role, the kind and the size", () => {
  assert.equal(mediaCaption({ role: "case", kind: "image", width: 16, height: 12 }), "case image 16×12");
  assert.equal(mediaCaption({ role: "answer", kind: "audio", seconds: 0.25 }), "answer audio 0.3 s");
  assert.equal(mediaCaption({ role: "context", kind: "document" }), "context document");
});
