"""A lab's documents, as the retrievers rank them and the judges read them: ``doc_id`` and ``text``.

The documents are the lab's ``chunks`` (a corpus read by :func:`evalnb.corpus`, or a BEIR
folder's ``corpus.jsonl``), or those a caller gives. A title, where there is one, is read
before the text, as BEIR's baselines index ``title text``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["documents_of"]


def documents_of(lab: LabCore, documents: object = None) -> pl.DataFrame:
    """Return the documents to rank as ``doc_id`` and ``text`` (a title read before its text).

    ``documents`` is None (the lab's ``chunks``), a :class:`~evalnb.Corpus` (its chunks), a
    frame with ``doc_id`` (or ``chunk_id``) and ``text`` (and an optional ``title`` or
    ``heading``), or a mapping of id to text. Ids must be unique and texts non-null.
    """
    frame: pl.DataFrame
    if documents is None:
        frame = lab.table("chunks")
    elif isinstance(documents, pl.DataFrame):
        frame = documents
    elif isinstance(documents, dict):
        frame = pl.DataFrame(
            {
                "doc_id": [str(k) for k in documents],
                "text": [None if v is None else str(v) for v in documents.values()],
            },
            schema={"doc_id": pl.String, "text": pl.String},
        )
    elif isinstance(getattr(documents, "chunks", None), pl.DataFrame):
        frame = documents.chunks  # type: ignore[attr-defined]
    else:
        msg = (
            "documents: expected None (the lab's chunks), an evalnb.Corpus, a polars frame with "
            f"doc_id and text, or a dict of id to text; got {type(documents).__name__}"
        )
        raise TypeError(msg)
    if "doc_id" not in frame.columns and "chunk_id" in frame.columns:
        frame = frame.rename({"chunk_id": "doc_id"})
    missing = [c for c in ("doc_id", "text") if c not in frame.columns]
    if missing:
        msg = f"documents: expected columns doc_id and text; {', '.join(missing)} missing (found {frame.columns})"
        raise ValueError(msg)
    if frame.is_empty():
        msg = (
            "no documents to rank: load a BEIR folder (its corpus.jsonl), read a corpus with "
            "evalnb.corpus(...), or pass documents="
        )
        raise ValueError(msg)
    title = next((c for c in ("title", "heading") if c in frame.columns), None)
    text = pl.col("text").cast(pl.String)
    if title is not None:  # BEIR's baselines index "title text"
        text = pl.concat_str(pl.col(title).cast(pl.String), text, separator=" ", ignore_nulls=True)
    out = frame.select(pl.col("doc_id").cast(pl.String), text=text)
    if out["doc_id"].null_count() or out["text"].null_count():
        row = int(out.with_row_index().filter(pl.any_horizontal(pl.all().is_null()))["index"][0])
        msg = f"documents: row {row} has no doc_id or no text; every document needs both"
        raise ValueError(msg)
    if out["doc_id"].is_duplicated().any():
        twice = out.filter(pl.col("doc_id").is_duplicated())["doc_id"][0]
        msg = f"documents: doc_id {twice!r} names two documents; ids must be unique"
        raise ValueError(msg)
    return out
