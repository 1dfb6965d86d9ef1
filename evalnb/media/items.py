"""One media item from what a source gives: bytes, a ``data:`` URL, a path or a remote URL.

The contract:

* **Content-addressed.** ``media_id`` is the sha256 of the bytes (hex), so the same image
  referred to by a hundred cases is one row of the ``media`` table. A remote URL that is not
  fetched (nothing is fetched at load time: a lab loads offline) has no bytes; its id is the
  sha256 of ``"uri:" + url`` and its status ``remote``.
* **What it is comes from its bytes.** The kind and mime are read from the first bytes
  (PNG's signature, JPEG's SOI, RIFF's WAVE, ...); a declared mime (a ``data:`` URL's, a
  file's extension) that names another kind is refused (a text file named ``.png``). An image
  is decoded far enough to know its size (Pillow), so a corrupt one is refused at load.
* **Cut is not broken.** A base64 payload cut short (OpenInference stops attributes at
  32,000 characters; an image that ends before its end marker) is kept with status
  ``unavailable`` and its reason: counted, shown, never sent to a judge. Anything else that is
  not what it says is a :class:`MediaRefused`, which the readers turn into an error naming
  the record and field.
* **Bounded.** An item holds at most :data:`MAX_MEDIA_BYTES`; the whole lab at most
  :data:`MAX_LAB_MEDIA_BYTES` (checked where items are collected, ``table.py``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import os
import re
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from evalnb.lab.bounds import read_limited
from evalnb.lab.errors import InputError

__all__ = [
    "KINDS",
    "MAX_LAB_MEDIA_BYTES",
    "MAX_MEDIA_BYTES",
    "OPENINFERENCE_CUT",
    "MediaItem",
    "MediaRefused",
    "from_bytes",
    "from_data_url",
    "from_reference",
    "sniff",
]

KINDS = ("image", "audio", "video", "document")
# OpenAI takes images up to 20 MB; an item past it could be sent to no judge.
MAX_MEDIA_BYTES = int(os.environ.get("EVALNB_MAX_MEDIA_BYTES", 20 << 20))
MAX_LAB_MEDIA_BYTES = int(os.environ.get("EVALNB_MAX_LAB_MEDIA_BYTES", 2 << 30))
# OpenInference's span processor cuts base64 images at this many characters (the whole URL).
OPENINFERENCE_CUT = 32_000

_EXTENSIONS = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".wav": "audio/wav",
    ".mp3": "audio/mpeg",
    ".flac": "audio/flac",
    ".ogg": "audio/ogg",
    ".m4a": "audio/mp4",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".mov": "video/quicktime",
    ".pdf": "application/pdf",
}
_DATA_URL = re.compile(r"data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?P<params>(?:;[^,;]*)*),", re.ASCII)


class MediaRefused(ValueError):
    """Bytes or a reference that are not a media item; the reader names the record.

    Attributes
    ----------
    expected, found, hint
        What a valid item is, what was found, what to do (an :class:`InputError`'s words).
    """

    def __init__(self, expected: str, found: str, hint: str = "") -> None:
        super().__init__(f"expected {expected}; found {found}. {hint}".strip())
        self.expected, self.found, self.hint = expected, found, hint


@dataclass(frozen=True)
class MediaItem:
    """One image, audio clip, video or document: a row of the lab's ``media`` table."""

    media_id: str
    kind: str
    mime: str
    data: bytes | None = None
    uri: str | None = None
    width: int | None = None
    height: int | None = None
    seconds: float | None = None
    status: str = "ok"
    reason: str | None = None

    @property
    def size(self) -> int:
        """Bytes held (0 for a remote or unavailable item)."""
        return len(self.data or b"")

    def row(self) -> dict[str, Any]:
        """Return the item as a row of the ``media`` table."""
        return {
            "media_id": self.media_id,
            "kind": self.kind,
            "mime": self.mime,
            "data": self.data,
            "uri": self.uri,
            "width": self.width,
            "height": self.height,
            "seconds": self.seconds,
            "size": self.size,
            "status": self.status,
            "reason": self.reason,
        }


def sniff(data: bytes) -> str | None:
    """Return the mime type the first bytes of ``data`` say, or None when none is known."""
    head = data[:16]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio/wav"
    if head[:2] == b"BM" and len(data) > 26:
        return "image/bmp"
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return "image/tiff"
    if head[:4] == b"fLaC":
        return "audio/flac"
    if head[:4] == b"OggS":
        return "audio/ogg"
    if head[:3] == b"ID3" or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return "audio/mpeg"
    if head[4:8] == b"ftyp":
        return "audio/mp4" if head[8:11] == b"M4A" else "video/mp4"
    if head[:4] == b"\x1a\x45\xdf\xa3":
        return "video/webm"
    if head[:5] == b"%PDF-":
        return "application/pdf"
    return None


def kind_of_mime(mime: str) -> str | None:
    """Return the kind (image, audio, video, document) a mime type names, or None."""
    top = mime.split("/", 1)[0]
    if top in ("image", "audio", "video"):
        return top
    if mime == "application/pdf":
        return "document"
    return None


def from_bytes(data: bytes, *, declared: str | None = None, uri: str | None = None) -> MediaItem:
    """Return the item ``data`` holds; ``declared`` is the mime a source claims for it.

    Raises
    ------
    MediaRefused
        Bytes no known format starts with, a declared mime of another kind, an image that
        does not decode, or more than :data:`MAX_MEDIA_BYTES`.
    """
    if len(data) > MAX_MEDIA_BYTES:
        msg = f"a media item of at most {MAX_MEDIA_BYTES:,} bytes"
        raise MediaRefused(
            msg,
            f"{len(data):,} bytes",
            "raise EVALNB_MAX_MEDIA_BYTES, or keep a smaller copy",
        )
    mime = sniff(data)
    said = f" (said to be {declared})" if declared else ""
    if mime is None:
        msg = (
            "an image, audio, video or PDF (PNG, JPEG, GIF, WebP, BMP, TIFF, WAV, MP3, FLAC, "
            "Ogg, MP4, WebM)"
        )
        raise MediaRefused(
            msg,
            f"{len(data):,} bytes starting {data[:8]!r}{said}",
            "the bytes are not what the name or mime says",
        )
    kind = kind_of_mime(mime)
    assert kind is not None  # every sniffed mime has a kind
    if declared and kind_of_mime(declared) not in (kind, None):
        msg = f"{_a(kind_of_mime(declared))} as the source says ({declared})"
        raise MediaRefused(
            msg,
            f"{_a(kind)} ({mime}) by its bytes",
            "the bytes are not what the name or mime says",
        )
    media_id = hashlib.sha256(data).hexdigest()
    if kind == "image":
        return _image(data, mime, media_id, uri)
    seconds = _wav_seconds(data) if mime == "audio/wav" else None
    return MediaItem(media_id, kind, mime, data=data, uri=uri, seconds=seconds)


def _a(kind: str | None) -> str:
    return f"an {kind}" if kind and kind[0] in "aeiou" else f"a {kind}"


def _image(data: bytes, mime: str, media_id: str, uri: str | None) -> MediaItem:
    """Decode far enough to know the size; a cut image is unavailable, a broken one refused."""
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415 - Pillow loads on first image

    try:
        with Image.open(io.BytesIO(data)) as img:
            width, height = img.size
            img.load()  # decodes the pixels: a cut file fails here, not in a judge's request
    except (OSError, SyntaxError, ValueError, UnidentifiedImageError) as exc:
        said = str(exc)
        if "truncated" in said or "image file is truncated" in said or _cut(data, mime):
            return MediaItem(
                media_id,
                "image",
                mime,
                uri=uri,
                status="unavailable",
                reason=f"the image is cut short ({len(data):,} bytes): never judged",
            )
        msg = f"a {mime} image that decodes"
        raise MediaRefused(msg, f"a broken one ({said[:120]})") from None
    return MediaItem(media_id, "image", mime, data=data, uri=uri, width=width, height=height)


def _cut(data: bytes, mime: str) -> bool:
    """Whether an image misses its end marker (PNG's IEND, JPEG's EOI)."""
    if mime == "image/png":
        return b"IEND" not in data[-16:]
    if mime == "image/jpeg":
        return not data.rstrip(b"\x00").endswith(b"\xff\xd9")
    return False


def _wav_seconds(data: bytes) -> float | None:
    try:
        with wave.open(io.BytesIO(data)) as w:
            rate = w.getframerate()
            return w.getnframes() / rate if rate else None
    except (wave.Error, EOFError):
        return None


def from_data_url(url: str) -> MediaItem:
    """Return the item a ``data:<mime>;base64,<payload>`` URL holds.

    A payload that does not decode as base64, or decodes to a file cut short, at or past
    OpenInference's 32,000-character cut or anywhere else, is ``unavailable`` (kept, counted,
    never judged).

    Raises
    ------
    MediaRefused
        A URL that is not a ``data:`` URL, or whose bytes are not what its mime says.
    """
    match = _DATA_URL.match(url)
    if match is None:
        msg = "a data URL (data:<mime>;base64,<payload>)"
        raise MediaRefused(msg, repr(url[:60]))
    declared = match.group("mime")
    payload = url[match.end() :]
    is_base64 = ";base64" in (match.group("params") or "")
    cut_here = len(url) == OPENINFERENCE_CUT
    try:
        data = base64.b64decode(payload, validate=True) if is_base64 else unquote(payload).encode()
    except (binascii.Error, ValueError):
        reason = (
            f"the base64 payload is cut at {OPENINFERENCE_CUT:,} characters (OpenInference's "
            "limit on span attributes): never judged"
            if cut_here
            else f"the base64 payload does not decode ({len(payload):,} characters): never judged"
        )
        return _unavailable("data:" + hashlib.sha256(url.encode()).hexdigest(), declared, reason)
    item = from_bytes(data, declared=declared)
    if cut_here and item.status == "ok" and item.kind != "image":
        # A payload that decodes at exactly the cut is cut all the same (audio has no end
        # marker to tell): kept unavailable rather than judged on a fragment.
        return _unavailable(
            item.media_id,
            item.mime,
            f"cut at {OPENINFERENCE_CUT:,} characters (OpenInference's limit): never judged",
        )
    return item


def _unavailable(key: str, mime: str | None, reason: str) -> MediaItem:
    digest = key if re.fullmatch(r"[0-9a-f]{64}", key) else hashlib.sha256(key.encode()).hexdigest()
    kind = kind_of_mime(mime or "") or "image"
    return MediaItem(
        digest, kind, mime or "application/octet-stream", status="unavailable", reason=reason
    )


def from_reference(ref: str, *, base: Path | None = None, mime: str | None = None) -> MediaItem:
    """Return the item a reference names: a ``data:`` URL, a local path, or a remote URL.

    A path (plain, or ``file://``) is read (bounded; relative to ``base``, the source file's
    folder); an ``http(s)`` URL is kept as a reference, never fetched (a lab loads offline;
    a judge that takes URLs is sent the URL).

    Raises
    ------
    MediaRefused
        A scheme evalnb cannot read, a missing or unreadable file, bytes that are not media.
    """
    if ref.startswith("data:"):
        return from_data_url(ref)
    parsed = urlparse(ref)
    if parsed.scheme in ("http", "https"):
        if not parsed.netloc:
            msg = "a URL with a host"
            raise MediaRefused(msg, repr(ref[:120]))
        declared = mime or _EXTENSIONS.get(Path(parsed.path).suffix.lower())
        kind = kind_of_mime(declared or "") or "image"
        digest = hashlib.sha256(("uri:" + ref).encode()).hexdigest()
        return MediaItem(
            digest, kind, declared or "application/octet-stream", uri=ref, status="remote"
        )
    if parsed.scheme == "file":
        path = Path(unquote(parsed.path))
    elif parsed.scheme and len(parsed.scheme) > 1:  # c:\ is a drive, not a scheme
        msg = "a data: URL, an http(s) URL or a file path"
        raise MediaRefused(
            msg,
            f"the scheme {parsed.scheme!r} in {ref[:80]!r}",
        )
    else:
        path = Path(ref)
    if not path.is_absolute() and base is not None:
        path = base / path
    try:
        data = read_limited(
            path, MAX_MEDIA_BYTES, hint="raise EVALNB_MAX_MEDIA_BYTES, or keep a smaller copy"
        )
    except InputError as exc:
        msg = f"a readable media file at {str(path)!r}"
        raise MediaRefused(msg, exc.found, exc.hint) from None
    declared = mime or _EXTENSIONS.get(path.suffix.lower())
    return from_bytes(data, declared=declared, uri=str(path))
