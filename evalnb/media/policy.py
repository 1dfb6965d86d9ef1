"""How media go to a judge: which items are sent, resized by a stated rule, as OpenAI parts.

The rule is part of the judge's fingerprint (:attr:`MediaPolicy.name`): two runs that sent
the same image at different sizes are two different judges' verdicts, and say so.

* An image larger than ``max_side`` on its longest side is scaled down (Lanczos, aspect
  kept) and sent as PNG when it has transparency, JPEG at ``jpeg_quality`` otherwise; a
  smaller one goes as its own bytes. A remote image goes as its URL.
* Audio goes as ``input_audio`` when it is WAV or MP3 (what OpenAI's chat API takes).
* Video, other audio and documents are not sent: no chat API takes them as parts today.
* An ``unavailable`` item (cut short) or a ``missing`` one is never sent.

At most ``max_items`` items go with one request; the rest are counted as left out. Every
item not sent is named in the row's detail with its reason.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from evalnb.media.items import MediaItem
from evalnb.media.parts import data_url, openai_parts

__all__ = ["DEFAULT_POLICY", "MediaPolicy", "Prepared"]


@dataclass(frozen=True)
class Prepared:
    """What a request carries of a row's media, and what it leaves out and why."""

    parts: list[dict[str, Any]]
    sent: list[str]
    left_out: dict[str, str]

    def detail(self) -> dict[str, Any]:
        """Return the row detail's record of it: ids sent, ids left out with the reason."""
        out: dict[str, Any] = {"sent": self.sent}
        if self.left_out:
            out["left_out"] = self.left_out
        return out


@dataclass(frozen=True)
class MediaPolicy:
    """The rule media are sent to a judge by (see the module's docstring)."""

    max_side: int = 1024
    jpeg_quality: int = 90
    max_items: int = 8

    @property
    def name(self) -> str:
        """The rule in one line (part of the judge's fingerprint)."""
        return (
            f"images <= {self.max_side}px (lanczos; png if alpha else jpeg q{self.jpeg_quality}), "
            f"wav/mp3 audio, at most {self.max_items} items"
        )

    def prepare(self, items: list[dict[str, Any]]) -> Prepared:
        """Return the content parts for ``items`` (rows' resolved media) under this rule."""
        parts: list[dict[str, Any]] = []
        sent: list[str] = []
        left: dict[str, str] = {}
        for raw in items:
            media_id = str(raw["media_id"])
            if media_id in sent or media_id in left:
                continue
            why = self._unsendable(raw)
            if why is None and len(sent) >= self.max_items:
                why = f"more than {self.max_items} items in one request"
            if why is not None:
                left[media_id] = why
                continue
            item = self._sized(raw)
            parts.extend(openai_parts(None, [item]))
            sent.append(media_id)
        return Prepared(parts, sent, left)

    @staticmethod
    def _unsendable(raw: dict[str, Any]) -> str | None:
        status = raw.get("status")
        if status in ("unavailable", "missing"):
            return str(raw.get("reason") or status)
        kind, mime = raw.get("kind"), raw.get("mime")
        if kind == "image":
            return None
        if kind == "audio" and mime in ("audio/wav", "audio/mpeg") and raw.get("data"):
            return None
        return f"{mime} is not sent to judges (chat APIs take images and WAV/MP3 audio)"

    def _sized(self, raw: dict[str, Any]) -> MediaItem:
        fields = {k: raw.get(k) for k in ("kind", "mime", "data", "uri", "width", "height")}
        item = MediaItem(str(raw["media_id"]), **fields)  # type: ignore[arg-type]
        if item.kind != "image" or item.data is None:
            return item
        if max(item.width or 0, item.height or 0) <= self.max_side:
            return item
        return self._shrunk(item)

    def _shrunk(self, item: MediaItem) -> MediaItem:
        from PIL import Image  # noqa: PLC0415 - Pillow loads on first large image

        with Image.open(io.BytesIO(item.data or b"")) as img:
            img.load()
            alpha = img.mode in ("RGBA", "LA", "PA") or "transparency" in img.info
            img.thumbnail((self.max_side, self.max_side), Image.Resampling.LANCZOS)
            out = io.BytesIO()
            if alpha:
                img.save(out, "PNG", optimize=True)
                mime = "image/png"
            else:
                img.convert("RGB").save(out, "JPEG", quality=self.jpeg_quality)
                mime = "image/jpeg"
            width, height = img.size
        return MediaItem(
            item.media_id, "image", mime, data=out.getvalue(), width=width, height=height
        )

    def url_of(self, raw: dict[str, Any]) -> str:
        """Return the URL an item is sent as (a data URL of its sized bytes, or its own URL)."""
        return data_url(self._sized(raw))


DEFAULT_POLICY = MediaPolicy()
