// @ts-check
/**
 * Media beside a case or an answer: image thumbnails and audio players made from the
 * data: URLs the kernel sent (never a URL the page would fetch), each with its role and
 * size; an item that cannot be shown says why. Every text goes in through textContent.
 */
import { text } from "./common.js";

/** Only what the kernel made may become a source: a data: URL of an image or of audio. */
const SAFE = /^data:(image\/(png|jpeg|gif|webp)|audio\/(wav|mpeg|ogg));base64,[A-Za-z0-9+/=]+$/;

/**
 * The source an item may be shown from, or null: only a data: URL of an image or audio.
 * @param {any} m
 * @returns {string | null}
 */
export function safeSource(m) {
  return typeof m.src === "string" && SAFE.test(m.src) ? m.src : null;
}

/**
 * @param {any} m one item: role, kind, mime, width, height, seconds, src or note
 * @returns {string}
 */
export function mediaCaption(m) {
  const size = m.kind === "image" && m.width ? ` ${m.width}×${m.height}` : m.seconds ? ` ${m.seconds.toFixed(1)} s` : "";
  return `${m.role} ${m.kind}${size}`;
}

/**
 * A strip of the items, in order.
 * @param {any[]} items
 * @returns {HTMLElement}
 */
export function mediaStrip(items) {
  const strip = document.createElement("div");
  strip.className = "evalnb-media";
  for (const m of items) {
    const box = document.createElement("figure");
    box.className = `evalnb-media-item evalnb-media-${m.kind}`;
    const src = safeSource(m);
    if (src && m.kind === "image") {
      const img = document.createElement("img");
      img.src = src;
      img.alt = mediaCaption(m);
      img.loading = "lazy";
      box.appendChild(img);
    } else if (src && m.kind === "audio") {
      const audio = document.createElement("audio");
      audio.controls = true;
      audio.preload = "none";
      audio.src = src;
      box.appendChild(audio);
    } else {
      box.appendChild(text("div", String(m.note ?? "not shown"), "evalnb-media-note"));
    }
    box.appendChild(text("figcaption", mediaCaption(m)));
    strip.appendChild(box);
  }
  return strip;
}
