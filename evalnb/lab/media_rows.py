"""Each output row's media, resolved: what a judge or a media metric reads.

Rows carry media ids (the case's ``case_media``, the answer's ``answer_media``, the contexts'
``context_media``); an evaluator that reads media gets them resolved from the lab's
``media`` table as lists of items, in order, by :func:`with_media`. An id the table lacks
stays in the list as an item of status ``missing`` (a lab edited by hand), so an evaluator
can say why it did not look rather than look at less than the case holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["MEDIA_COLUMNS", "media_ids_of", "with_media"]

# Row column of ids -> row column of resolved items.
MEDIA_COLUMNS = {
    "case_media": "case_media_items",
    "answer_media": "answer_media_items",
    "context_media": "context_media_items",
}
_FIELDS = ("media_id", "kind", "mime", "data", "uri", "width", "height", "status", "reason")


def media_ids_of(rows: pl.DataFrame) -> list[str]:
    """Return the distinct media ids the rows refer to, in the order first met."""
    ids: dict[str, None] = {}
    for col in MEDIA_COLUMNS:
        if col in rows.columns:
            for one in rows.get_column(col).drop_nulls().to_list():
                ids.update(dict.fromkeys(one))
    return list(ids)


def with_media(lab: LabCore, rows: pl.DataFrame) -> pl.DataFrame:
    """Add ``case_media_items``, ``answer_media_items``, ``context_media_items`` to ``rows``.

    Each is a list (in the ids' order) of dicts: ``media_id``, ``kind``, ``mime``, ``data``
    (bytes, None for a remote or unavailable item), ``uri``, ``width``, ``height``,
    ``status`` (``ok``, ``remote``, ``unavailable``, ``missing``) and ``reason``.
    """
    wanted = media_ids_of(rows)
    media = lab.table("media")
    if wanted and media.height:
        media = media.filter(pl.col("media_id").is_in(wanted))
    found: dict[str, dict[str, Any]] = {
        r["media_id"]: {k: r[k] for k in _FIELDS} for r in media.iter_rows(named=True)
    }
    out = rows
    for col, items in MEDIA_COLUMNS.items():
        lists = rows.get_column(col).to_list() if col in rows.columns else [None] * rows.height
        resolved = [[found.get(i) or _missing(i) for i in one or []] for one in lists]
        out = out.with_columns(pl.Series(items, resolved, dtype=pl.Object))
    return out


def _missing(media_id: str) -> dict[str, Any]:
    return {
        **dict.fromkeys(_FIELDS),
        "media_id": media_id,
        "status": "missing",
        "reason": "the lab's media table has no item of this id",
    }
