"""The lab's ``media`` table: items collected once each, bounded over the whole lab.

A reader collects items on a :class:`MediaShelf` while it reads (one row per distinct
``media_id``, whatever number of cases refer to it) and the lab keeps the shelf's frame as
its ``media`` table; cases, outputs and contexts hold the ids in their ``media`` list
columns. Nothing is written before the whole source is read, so a refusal (the lab past
:data:`~evalnb.media.items.MAX_LAB_MEDIA_BYTES`) leaves nothing half-loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from evalnb.lab.schema import MEDIA
from evalnb.media.items import MAX_LAB_MEDIA_BYTES, MediaItem, MediaRefused

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["MediaShelf", "items_by_id", "media_counts", "media_frame", "merge_media"]


class MediaShelf:
    """Distinct media items of one import, in the order first met."""

    def __init__(self, known: pl.DataFrame | None = None) -> None:
        self._items: dict[str, MediaItem] = {}
        self._bytes = 0 if known is None or known.is_empty() else int(known["size"].sum())

    def add(self, item: MediaItem) -> str:
        """Keep ``item`` (once) and return its id.

        Raises
        ------
        MediaRefused
            When the lab would hold more than :data:`MAX_LAB_MEDIA_BYTES` of media.
        """
        if item.media_id in self._items:
            return item.media_id
        if self._bytes + item.size > MAX_LAB_MEDIA_BYTES:
            msg = f"at most {MAX_LAB_MEDIA_BYTES:,} bytes of media in one lab"
            raise MediaRefused(
                msg,
                f"{self._bytes + item.size:,} bytes with this item",
                "raise EVALNB_MAX_LAB_MEDIA_BYTES, or refer to large files by URL",
            )
        self._bytes += item.size
        self._items[item.media_id] = item
        return item.media_id

    def __len__(self) -> int:
        return len(self._items)

    def frame(self) -> pl.DataFrame:
        """Return the items as ``media`` rows."""
        return media_frame(self._items.values())


def media_frame(items: Iterable[MediaItem]) -> pl.DataFrame:
    """Return ``items`` as a frame of the ``media`` table's schema."""
    rows = [item.row() for item in items]
    if not rows:
        return pl.DataFrame(schema=MEDIA)
    return pl.DataFrame(rows, schema=MEDIA, orient="row")


def merge_media(known: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
    """Return ``known`` with the rows of ``new`` it lacks (by ``media_id``: content decides)."""
    if new.is_empty():
        return known
    fresh = new.join(known.select("media_id"), on="media_id", how="anti")
    total = int(known["size"].sum() or 0) + int(fresh["size"].sum() or 0)
    if total > MAX_LAB_MEDIA_BYTES:
        msg = f"at most {MAX_LAB_MEDIA_BYTES:,} bytes of media in one lab"
        raise MediaRefused(
            msg,
            f"{total:,} bytes",
            "raise EVALNB_MAX_LAB_MEDIA_BYTES, or refer to large files by URL",
        )
    return pl.concat([known, fresh.unique("media_id", keep="first", maintain_order=True)])


def media_counts(media: pl.DataFrame, referred: Sequence[pl.Series]) -> dict[str, Any]:
    """Count a lab's media: items by kind and status, references, references to nothing.

    ``referred`` are the lab's ``media`` list columns (cases', answers', contexts').
    """
    ids = (
        pl.concat([s.explode().drop_nulls() for s in referred])
        if referred
        else pl.Series([], dtype=pl.String)
    )
    known = set(media["media_id"].to_list())
    by = media.group_by("kind", "status").len().sort("kind", "status")
    return {
        "items": media.height,
        "bytes": int(media["size"].sum() or 0),
        "by_kind": {f"{k}/{s}": int(n) for k, s, n in by.iter_rows()},
        "unavailable": int((media["status"] == "unavailable").sum()),
        "references": ids.len(),
        "dangling": int((~ids.is_in(list(known))).sum()) if ids.len() else 0,
    }


def items_by_id(media: pl.DataFrame, ids: Iterable[str] | None = None) -> dict[str, MediaItem]:
    """Return the media table's rows as items by id (only ``ids`` when given)."""
    if ids is not None:
        wanted = list(dict.fromkeys(ids))
        media = media.filter(pl.col("media_id").is_in(wanted))
    fields = ("kind", "mime", "data", "uri", "width", "height", "seconds", "status", "reason")
    return {
        row["media_id"]: MediaItem(row["media_id"], **{k: row[k] for k in fields})
        for row in media.iter_rows(named=True)
    }
