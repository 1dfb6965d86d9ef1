"""Content parts: the media inside a chat message, in each peer's shape, read and written.

A message's content may be a list of parts. What each shape holds, and what becomes of it:

* OpenAI chat: ``{"type": "text", "text"}``, ``{"type": "image_url", "image_url": {"url"}}``
  (https, ``data:`` or, as many datasets write it, a local path), ``{"type": "input_audio",
  "input_audio": {"data": <base64>, "format": "wav" | "mp3"}}``, ``{"type": "file", "file":
  {"file_data": <data URL>, "filename"}}``.
* Inspect: ``{"type": "image", "image"}``, ``{"type": "audio", "audio", "format"}``,
  ``{"type": "video", "video", "format"}``, ``{"type": "document", "document"}`` (each a
  URL, a data URI or a path); reasoning parts are not part of the text.
* DeepEval: a list of strings and ``MLLMImage`` objects (or their dicts: ``url``, ``local``,
  ``dataBase64``, ``mimeType``).

:func:`split_parts` returns a message's text and its media items, in order;
:func:`openai_parts` and :func:`inspect_parts` write a text and items back, the media as
``data:`` URLs of the very bytes kept (a remote item as its URL), so a lab exported and
loaded again holds the same media ids and text.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from evalnb.media.items import MediaItem, MediaRefused, from_bytes, from_reference

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

__all__ = ["data_url", "inspect_parts", "is_media_part", "openai_parts", "split_parts"]

_AUDIO_FORMATS = {"wav": "audio/wav", "mp3": "audio/mpeg", "flac": "audio/flac", "ogg": "audio/ogg"}
_MEDIA_TYPES = {"image_url", "input_audio", "file", "image", "audio", "video", "document"}
_SKIPPED = {"reasoning", "thinking", "refusal", "tool_use", "tool_result", "data"}


def is_media_part(part: object) -> bool:
    """Whether ``part`` is a media part of a shape this module reads."""
    if isinstance(part, dict):
        return part.get("type") in _MEDIA_TYPES or _deepeval(part)
    return hasattr(part, "url") and hasattr(part, "local")  # a DeepEval MLLMImage


def _deepeval(part: dict[str, Any]) -> bool:
    return "type" not in part and ("dataBase64" in part or ("url" in part and "local" in part))


def split_parts(content: object, *, base: Path | None = None) -> tuple[str | None, list[MediaItem]]:
    """Return the text and the media of a message's content (a string or a list of parts).

    A text part's text is joined without separators (the parts of one message); parts of
    other kinds (reasoning, refusals) are not text and not media.

    Raises
    ------
    MediaRefused
        A media part that names no media, or one whose bytes are not what it says; the
        message names the part's position.
    """
    if content is None or isinstance(content, str):
        return content, []
    if not isinstance(content, list | tuple):
        msg = "text or a list of content parts"
        raise MediaRefused(msg, type(content).__name__)
    texts: list[str] = []
    items: list[MediaItem] = []
    for i, part in enumerate(content):
        if isinstance(part, str):  # DeepEval's lists mix strings and images
            texts.append(part)
            continue
        try:
            item = _media(part, base)
        except MediaRefused as exc:
            msg = f"{exc.expected} (content part {i})"
            raise MediaRefused(msg, exc.found, exc.hint) from None
        if item is not None:
            items.append(item)
        elif isinstance(part, dict) and part.get("type") == "text":
            text = part.get("text")
            if not isinstance(text, str):
                msg = f"a text part with a string 'text' (content part {i})"
                raise MediaRefused(msg, repr(text)[:60])
            texts.append(text)
        elif not (isinstance(part, dict) and part.get("type") in _SKIPPED):
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            msg = f"a text, image, audio, video or document part (content part {i})"
            raise MediaRefused(
                msg,
                f"a part of type {kind!r}",
            )
    return "".join(texts), items


def _media(part: object, base: Path | None) -> MediaItem | None:
    """Return the media item a part holds, or None for a part that is not media."""
    if not isinstance(part, dict):
        if is_media_part(part):  # an MLLMImage object: its fields, read as its dict
            return _mllm(
                {k: getattr(part, k, None) for k in ("url", "local", "dataBase64", "mimeType")},
                base,
            )
        msg = "a content part object"
        raise MediaRefused(msg, type(part).__name__)
    kind = part.get("type")
    if _deepeval(part):
        return _mllm(part, base)
    if kind == "image_url":
        inner = part.get("image_url")
        url = inner.get("url") if isinstance(inner, dict) else inner
        return _ref(url, "image_url.url", base)
    if kind == "input_audio":
        inner = part.get("input_audio")
        if not isinstance(inner, dict) or not isinstance(inner.get("data"), str):
            msg = "input_audio: {data: <base64>, format}"
            raise MediaRefused(msg, repr(inner)[:60])
        fmt = str(inner.get("format") or "wav")
        return _decoded(inner["data"], _AUDIO_FORMATS.get(fmt, f"audio/{fmt}"))
    if kind == "file":
        inner = part.get("file")
        data = inner.get("file_data") if isinstance(inner, dict) else None
        return _ref(data, "file.file_data", base)
    if kind in ("image", "audio", "video", "document"):  # Inspect's ContentImage and kin
        said = part.get("mime_type") if kind == "document" else None
        mime: str | None = said if isinstance(said, str) else None
        given = part.get("format")
        if kind == "audio" and isinstance(given, str):
            mime = _AUDIO_FORMATS.get(given, f"audio/{given}")
        return _ref(part.get(kind), kind, base, mime=mime)
    return None


def _ref(value: object, field: str, base: Path | None, *, mime: str | None = None) -> MediaItem:
    if not isinstance(value, str) or not value:
        msg = f"a URL, data URI or path in {field}"
        raise MediaRefused(msg, repr(value)[:60])
    return from_reference(value, base=base, mime=mime)


def _decoded(payload: str, mime: str) -> MediaItem:
    try:
        data = base64.b64decode(payload, validate=True)
    except ValueError:
        # Cut or not base64: the data URL reader says which, and keeps it unavailable.
        return from_reference(f"data:{mime};base64,{payload}")
    return from_bytes(data, declared=mime)


def _mllm(fields: dict[str, Any], base: Path | None) -> MediaItem:
    """DeepEval's MLLMImage: ``dataBase64`` + ``mimeType``, or ``url`` (``local``: a path)."""
    if fields.get("dataBase64"):
        return _decoded(str(fields["dataBase64"]), str(fields.get("mimeType") or "image/png"))
    return _ref(fields.get("url"), "MLLMImage.url", base)


def data_url(item: MediaItem) -> str:
    """Return the item as a ``data:`` URL of its bytes (a remote item: its URL)."""
    if item.data is None:
        if item.uri is None:
            msg = "a media item with bytes or a URL"
            raise MediaRefused(msg, f"{item.status} ({item.reason})")
        return item.uri
    return f"data:{item.mime};base64,{base64.b64encode(item.data).decode('ascii')}"


def openai_parts(text: str | None, items: Sequence[MediaItem]) -> list[dict[str, Any]]:
    """Return OpenAI chat content parts: the text first, then each item.

    Images are ``image_url`` parts, WAV and MP3 ``input_audio``, anything else a ``file``
    part with its data URL (what OpenAI's chat API takes for a PDF).
    """
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for item in items:
        if item.kind == "image":
            parts.append({"type": "image_url", "image_url": {"url": data_url(item)}})
        elif item.mime in ("audio/wav", "audio/mpeg") and item.data is not None:
            fmt = "wav" if item.mime == "audio/wav" else "mp3"
            payload = base64.b64encode(item.data).decode("ascii")
            parts.append({"type": "input_audio", "input_audio": {"data": payload, "format": fmt}})
        else:
            parts.append(
                {
                    "type": "file",
                    "file": {"file_data": data_url(item), "filename": item.media_id[:12]},
                }
            )
    return parts


def inspect_parts(text: str | None, items: Sequence[MediaItem]) -> list[dict[str, Any]]:
    """Return Inspect content parts (``ContentText``, ``ContentImage``, ...) for a message."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for item in items:
        url = data_url(item)
        if item.kind == "image":
            parts.append({"type": "image", "image": url, "detail": "auto"})
        elif item.kind == "audio":
            fmt = "mp3" if item.mime == "audio/mpeg" else "wav"
            parts.append({"type": "audio", "audio": url, "format": fmt})
        elif item.kind == "video":
            parts.append({"type": "video", "video": url, "format": item.mime.split("/")[-1]})
        else:
            parts.append(
                {
                    "type": "document",
                    "document": url,
                    "mime_type": item.mime,
                    "filename": item.media_id[:12],
                }
            )
    return parts
