"""Media fields of a record: whatever a source puts there, as ids of the lab's media table.

A field may hold one reference or a list of them: a path (relative to the source file's
folder), a ``data:`` URL, an http(s) URL, raw bytes, a Hugging Face ``datasets`` image or
audio value (``{"bytes", "path"}``, as Arrow stores them), a DeepEval ``MLLMImage`` (or its
dict), an OpenAI or Inspect content part. Each becomes an item on the builder's shelf (once
per content) and the field its ids, in order. Anything else is an :class:`InputError`
naming the record and field; nothing is kept from a source that fails.

A context is media when it plainly names one (ragas' multimodal samples put image paths and
URLs among ``retrieved_contexts``): a ``data:`` URL of an image, audio or PDF; an http(s) URL
or an existing local file whose extension is a media type's.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from evalnb.lab.errors import InputError
from evalnb.media.items import MediaItem, MediaRefused, from_bytes, from_reference
from evalnb.media.parts import is_media_part, split_parts

if TYPE_CHECKING:
    from evalnb.io.builder import LabBuilder
    from evalnb.io.fields import Where

__all__ = ["base_of", "column_may_name_media", "media_ids", "refused", "split_media_contexts"]

_MEDIA_URL = re.compile(
    r"(?:data:(?:image|audio|video)/|data:application/pdf)|"
    r"(?:https?://\S+\.(?:png|jpe?g|gif|webp|bmp|tiff?|wav|mp3|flac|ogg|m4a|mp4|webm|mov|pdf)(?:[?#]\S*)?$)",
    re.IGNORECASE,
)
_MEDIA_FILE = re.compile(
    r"\S+\.(?:png|jpe?g|gif|webp|bmp|tiff?|wav|mp3|flac|ogg|m4a|mp4|webm|mov|pdf)$", re.IGNORECASE
)


def refused(where: Where, field: str, exc: MediaRefused) -> InputError:
    """Return the error naming ``where`` and ``field`` for a refused media item."""
    return InputError(where.source, where.location, field, exc.expected, exc.found, exc.hint)


@functools.lru_cache(maxsize=64)
def base_of(source: str) -> Path | None:
    """Return the folder relative paths in ``source`` are read from (None for a frame).

    Cached: a reader asks once per record, and a table has millions of them.
    """
    path = Path(source)
    return path.parent if path.is_file() else None


def _item(value: object, base: Path | None) -> MediaItem:
    if isinstance(value, bytes | bytearray | memoryview):
        return from_bytes(bytes(value))
    if isinstance(value, str):
        return from_reference(value.strip(), base=base)
    if isinstance(value, dict) and ("bytes" in value or "path" in value) and "type" not in value:
        # Hugging Face datasets' Image()/Audio() storage: bytes, else the path they came from.
        raw = value.get("bytes")
        if isinstance(raw, bytes | bytearray):
            return from_bytes(bytes(raw))
        path = value.get("path")
        if isinstance(path, str) and path:
            return from_reference(path, base=base)
        msg = "an image or audio value with bytes or a path"
        raise MediaRefused(msg, repr(value)[:80])
    if is_media_part(value):
        _, items = split_parts([value], base=base)
        return items[0]
    msg = "a path, URL, data URL, bytes, {bytes, path} or a content part"
    raise MediaRefused(
        msg,
        type(value).__name__,
    )


def media_ids(
    value: object, where: Where, field: str, builder: LabBuilder, base: Path | None
) -> list[str]:
    """Return the ids of the media ``value`` holds (kept on ``builder``'s shelf)."""
    if value is None or value == "":
        return []
    if isinstance(value, str) and value.lstrip().startswith("["):
        with contextlib.suppress(json.JSONDecodeError):  # else one path opening with "["
            value = json.loads(value)
    values = list(value) if isinstance(value, list | tuple) else [value]
    ids: list[str] = []
    for i, one in enumerate(values):
        try:
            ids.append(builder.media.add(_item(one, base)))
        except MediaRefused as exc:
            at = field if len(values) == 1 else f"{field}[{i}]"
            raise refused(where, at, exc) from None
    return ids


def split_media_contexts(
    contexts: list[str], where: Where, field: str, builder: LabBuilder, base: Path | None
) -> tuple[list[str], list[str]]:
    """Return a context list's texts and the ids of the contexts that name media."""
    if not any(_names_media(c, base) for c in contexts):
        return contexts, []
    texts: list[str] = []
    ids: list[str] = []
    for i, context in enumerate(contexts):
        if not _names_media(context, base):
            texts.append(context)
            continue
        try:
            ids.append(builder.media.add(from_reference(context.strip(), base=base)))
        except MediaRefused as exc:
            msg = f"{field}[{i}]"
            raise refused(where, msg, exc) from None
    return texts, ids


def _names_media(text: str, base: Path | None) -> bool:
    candidate = text.strip()
    if len(candidate) > 4096 and not candidate.startswith("data:"):
        return False
    if _MEDIA_URL.match(candidate):
        return True
    if "\n" in candidate or not _MEDIA_FILE.fullmatch(candidate):
        return False
    path = Path(candidate)
    return (path if path.is_absolute() or base is None else base / path).is_file()


# A cheap first look over a whole column: anything that may name a media file sends the
# frame to the record path, which decides per context (_names_media).
_MAY_NAME_MEDIA = (
    r"(?i)^\s*(data:(image|audio|video)/|data:application/pdf|\S+\.(png|jpe?g|gif|webp|bmp|"
    r"tiff?|wav|mp3|flac|ogg|m4a|mp4|webm|mov|pdf)\s*$)"
)


def column_may_name_media(frame: pl.DataFrame, col: str | None) -> bool:
    """Whether any text of column ``col`` (text or lists of texts) may name a media file."""
    if col is None or col not in frame.columns:
        return False
    dtype = frame.schema[col]
    c = pl.col(col)
    if dtype == pl.List(pl.String):
        found = frame.select(
            c.list.eval(pl.element().str.contains(_MAY_NAME_MEDIA)).list.any().any()
        )
    elif dtype == pl.String:
        found = frame.select(c.str.contains(_MAY_NAME_MEDIA).any())
    else:
        return False
    return bool(found.item())
