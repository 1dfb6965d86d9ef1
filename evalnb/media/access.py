"""A lab's media, looked at: what it holds, one row's items, thumbnails, files written back.

These are ``lab.media``'s methods (each takes the lab first). Thumbnails are PNG or JPEG
bytes made here with Pillow at a stated size, never the original sent to a browser: a
notebook view stays small however large the lab's images are, and an image that does not
decode shows as its reason, not as a broken picture.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.lab.files import write_atomic
from evalnb.media.table import items_by_id, media_counts

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["export_media", "media_of", "media_summary", "media_table", "panel_media", "thumbnail"]

_EXT = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/bmp": ".bmp",
    "image/tiff": ".tiff",
    "audio/wav": ".wav",
    "audio/mpeg": ".mp3",
    "audio/flac": ".flac",
    "audio/ogg": ".ogg",
    "audio/mp4": ".m4a",
    "video/mp4": ".mp4",
    "video/webm": ".webm",
    "application/pdf": ".pdf",
}


def media_table(lab: LabCore, *, with_bytes: bool = False) -> pl.DataFrame:
    """Return the lab's media items (without their bytes unless asked: they can be large)."""
    media = lab.table("media")
    return media if with_bytes else media.drop("data")


def media_summary(lab: LabCore) -> dict[str, Any]:
    """Count the lab's media: items by kind and status, bytes, references, dangling ids.

    ``unavailable`` items (cut short, undecodable) are counted apart: they are never judged.
    """
    rows = lab.rows()
    referred = [
        rows.get_column(c)
        for c in ("case_media", "answer_media", "context_media")
        if c in rows.columns
    ]
    return media_counts(lab.table("media"), referred)


def media_of(lab: LabCore, case_id: str, model: str | None = None, sample: int = 0) -> pl.DataFrame:
    """Return a case's media (and, with ``model``, that answer's and its contexts'), in order.

    One row an item: ``role`` (case, answer, context), ``position``, and the item's fields
    but its bytes.
    """
    cases = lab.cases.filter(pl.col("case_id") == case_id)
    if cases.is_empty():
        msg = f"no case {case_id!r} in this lab"
        raise KeyError(msg)
    listed: list[tuple[str, int, str]] = [
        ("case", i, m) for i, m in enumerate(cases["media"].to_list()[0] or [])
    ]
    if model is not None:
        out = lab.outputs.filter(
            (pl.col("case_id") == case_id)
            & (pl.col("model") == model)
            & (pl.col("sample") == sample)
        )
        if out.is_empty():
            msg = f"no answer of model {model!r} (sample {sample}) to case {case_id!r}"
            raise KeyError(msg)
        row = out.row(0, named=True)
        listed += [("answer", i, m) for i, m in enumerate(row["media"] or [])]
        listed += [("context", i, m) for i, m in enumerate(row["context_media"] or [])]
    order = pl.DataFrame(
        listed,
        schema={"role": pl.String, "position": pl.Int64, "media_id": pl.String},
        orient="row",
    )
    return order.join(media_table(lab), on="media_id", how="left", maintain_order="left")


def thumbnail(lab: LabCore, media_id: str, max_side: int = 160) -> tuple[str, bytes] | None:
    """Return ``(mime, bytes)`` of an image's thumbnail, at most ``max_side`` pixels a side.

    None for an item that is not an image with bytes (audio, remote, unavailable).
    """
    found = items_by_id(lab.table("media"), [media_id]).get(media_id)
    if found is None or found.kind != "image" or found.data is None:
        return None
    return _thumb(found.data, max_side)


def _thumb(data: bytes, max_side: int) -> tuple[str, bytes] | None:
    from PIL import Image  # noqa: PLC0415 - Pillow loads with the first thumbnail

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            alpha = img.mode in ("RGBA", "LA", "PA") or "transparency" in img.info
            img.thumbnail((max_side, max_side))
            out = io.BytesIO()
            if alpha:
                img.convert("RGBA").save(out, "PNG")
                return "image/png", out.getvalue()
            img.convert("RGB").save(out, "JPEG", quality=85)
            return "image/jpeg", out.getvalue()
    except (OSError, ValueError, SyntaxError):
        return None


def export_media(lab: LabCore, folder: str | Path) -> list[Path]:
    """Write every item with bytes to ``folder`` as ``<media_id><extension>``; return the paths.

    The name is the content's hash, so a file written twice is the same file.
    """
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for item in items_by_id(lab.table("media")).values():
        if item.data is None:
            continue
        path = root / f"{item.media_id}{_EXT.get(item.mime, '.bin')}"
        if not path.exists():
            write_atomic(path, item.data)
        written.append(path)
    return written


MAX_PANEL_AUDIO_BYTES = 2 << 20  # audio played in the page: larger clips are only described
MAX_PANEL_ITEMS = 12


def panel_media(
    lab: LabCore, by_role: list[tuple[str, list[str] | None]], max_side: int = 160
) -> list[dict[str, Any]]:
    """Return what a view shows of a row's media, in order: role, kind, size, and a source.

    ``src`` is a ``data:`` URL made here (a thumbnail of an image; a WAV or MP3 clip up to
    :data:`MAX_PANEL_AUDIO_BYTES`), so nothing is fetched by the page; an item without one
    carries ``note``, why it is not shown (remote, cut short, too long, another kind).
    """
    wanted = [(role, m) for role, ids in by_role for m in ids or []][:MAX_PANEL_ITEMS]
    if not wanted:
        return []
    found = items_by_id(lab.table("media"), [m for _, m in wanted])
    out = []
    for role, media_id in wanted:
        item = found.get(media_id)
        if item is None:
            out.append(
                {
                    "role": role,
                    "media_id": media_id,
                    "kind": "missing",
                    "note": "not in the lab's media table",
                }
            )
            continue
        shown: dict[str, Any] = {
            "role": role,
            "media_id": media_id,
            "kind": item.kind,
            "mime": item.mime,
            "width": item.width,
            "height": item.height,
            "seconds": item.seconds,
            "status": item.status,
        }
        if item.data is None:
            shown["note"] = item.reason or (
                f"kept as a link: {item.uri}" if item.uri else item.status
            )
        elif item.kind == "image":
            thumb = _thumb(item.data, max_side)
            if thumb is None:
                shown["note"] = "the image does not decode"
            else:
                shown["src"] = (
                    f"data:{thumb[0]};base64,{base64.b64encode(thumb[1]).decode('ascii')}"
                )
        elif item.kind == "audio" and item.mime in ("audio/wav", "audio/mpeg", "audio/ogg"):
            if item.size <= MAX_PANEL_AUDIO_BYTES:
                shown["src"] = (
                    f"data:{item.mime};base64,{base64.b64encode(item.data).decode('ascii')}"
                )
            else:
                shown["note"] = f"{item.size / 2**20:.1f} MB: too long to play in the page"
        else:
            shown["note"] = f"{item.mime}, {item.size:,} bytes"
        out.append(shown)
    return out
