"""A retriever's rankings as rows: each output row with its ranked documents and its case's grades.

The retrieval evaluators (``ranked = True``) read two list columns the engine adds a batch
of rows at a time: ``ranked`` (the documents the row's retriever returned, with their
scores) and ``judged`` (the case's relevance grades). Both come from the lab's
``retrievals`` and ``qrels`` tables; where those hold nothing for a row, from the ids a RAG
lab carries in its extras (ragas' ``retrieved_context_ids`` on the output, in the order
retrieved, and ``reference_context_ids`` on the case, each relevant with grade 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import polars as pl

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = [
    "JUDGE_SOURCE",
    "current_grades",
    "extra_ids",
    "grades_of",
    "in_trec_order",
    "ranked_of",
    "with_rankings",
]

_KEY = ["case_id", "model", "sample"]
_RANKED = pl.List(pl.Struct({"doc_id": pl.String(), "score": pl.Float64()}))
_JUDGED = pl.List(pl.Struct({"doc_id": pl.String(), "relevance": pl.Int64()}))


F = TypeVar("F", pl.DataFrame, pl.LazyFrame)

JUDGE_SOURCE = "judge:"
"""The ``source`` prefix of a grade an LLM judge gave (``judge:<model>``) in ``qrels``."""


def current_grades(qrels: F) -> F:
    """Return the grade the measures use: one per case and document.

    A person's grade (a reviewer's, or a qrels file's) stands over a judge's, which stays in
    the table beside it so the two can be compared (the judge's agreement with reviewers);
    among grades of one kind the last one given stands.
    """
    by_judge = pl.col("source").str.starts_with(JUDGE_SOURCE).fill_null(value=False)
    return (
        qrels.with_row_index("_at")
        .sort(by_judge, pl.col("_at"), descending=[True, False])
        .unique(["case_id", "doc_id"], keep="last", maintain_order=True)
        .sort("_at")
        .drop("_at")
    )


def extra_ids(extra: pl.Series, field: str) -> pl.Series:
    """Read the list of ids under ``field`` of each JSON ``extra``, in order (null where absent)."""
    dtype = pl.Struct({field: pl.List(pl.String)})
    decoded = extra.fill_null("{}").str.json_decode(dtype, infer_schema_length=None)
    return decoded.struct.field(field)


def in_trec_order(frame: F, lists: list[str]) -> F:
    """Sort each ranked list (the rows sharing ``lists``) as trec_eval ranks it; number ``rank``.

    By score, descending, equal scores by document id, descending (trec_eval's
    ``comp_sim_docno``); ``rank`` counts from 1 within each list.
    """
    order = frame.sort([*lists, "score", "doc_id"], descending=[False] * len(lists) + [True, True])
    return order.with_columns(rank=pl.int_range(1, pl.len() + 1).over(lists))


def with_rankings(lab: LabCore, rows: pl.DataFrame) -> pl.DataFrame:
    """Add each row's ``ranked`` documents and its case's ``judged`` grades as list columns.

    Parameters
    ----------
    lab
        The lab the rows come from (its ``retrievals`` and ``qrels``).
    rows
        Output rows (``case_id``, ``model``, ``sample``; ``output_extra`` and ``case_extra``
        when the lab has them).

    Returns
    -------
    pl.DataFrame
        ``rows`` with ``ranked`` (list of ``{doc_id, score}``, null for a row its retriever
        returned nothing for) and ``judged`` (list of ``{doc_id, relevance}``, null for a
        case without grades).
    """
    keys = rows.select(_KEY).unique()
    retrievals = lab.scan("retrievals")
    if keys.height < lab.height("outputs"):  # a batch of the rows: read only its rankings
        retrievals = retrievals.join(keys.lazy(), on=_KEY, how="semi")
    # Collected first: Polars' eager group-by builds the lists faster than its lazy engine.
    ranked = retrievals.collect().group_by(_KEY).agg(ranked=pl.struct("doc_id", "score"))
    qrels = lab.table("qrels")
    # Where every grade is of one kind, the last of each stands where the lists are read
    # (grades_of, the measures' kernel): only judges' grades beside people's need the pass.
    if qrels.select(pl.col("source").str.starts_with(JUDGE_SOURCE).any()).item():
        qrels = current_grades(qrels)
    judged = (
        qrels.join(keys.select("case_id").unique(), on="case_id", how="semi")
        .group_by("case_id")
        .agg(judged=pl.struct("doc_id", "relevance"))
    )
    out = rows.drop(["ranked", "judged"], strict=False)
    out = out.join(ranked, on=_KEY, how="left", maintain_order="left")
    out = out.join(judged, on="case_id", how="left", maintain_order="left")
    if "output_extra" in out.columns and out["ranked"].null_count():
        ids = extra_ids(out["output_extra"], "retrieved_context_ids")
        # In the order retrieved: the score falls with the position, so trec_eval's order is it.
        fallback = ids.list.eval(
            pl.struct(doc_id=pl.element(), score=-pl.int_range(pl.len()).cast(pl.Float64))
        )
        out = out.with_columns(ranked=pl.coalesce(pl.col("ranked"), fallback.cast(_RANKED)))
    if "case_extra" in out.columns and out["judged"].null_count():
        ids = extra_ids(out["case_extra"], "reference_context_ids")
        fallback = ids.list.eval(pl.struct(doc_id=pl.element(), relevance=pl.lit(1, pl.Int64)))
        out = out.with_columns(judged=pl.coalesce(pl.col("judged"), fallback.cast(_JUDGED)))
    return out.with_columns(pl.col("ranked").cast(_RANKED), pl.col("judged").cast(_JUDGED))


def ranked_of(rows: pl.DataFrame) -> pl.DataFrame:
    """One row a retrieved document: ``group`` (the row's index), ``case_id``, ``doc_id``, ``score``."""
    return (
        rows.select("case_id", "ranked")
        .with_row_index("group")
        .explode("ranked")
        .unnest("ranked")
        .drop_nulls("doc_id")
        .with_columns(pl.col("group").cast(pl.Int64), pl.col("score").fill_null(0.0))
    )


def grades_of(rows: pl.DataFrame) -> pl.DataFrame:
    """One row a graded document of the rows' cases: ``case_id``, ``doc_id``, ``relevance``.

    A document graded twice for a case keeps its last grade (a reviewer's later word).
    """
    return (
        rows.select("case_id", "judged")
        .unique("case_id", keep="first")
        .explode("judged")
        .unnest("judged")
        .drop_nulls("doc_id")
        .unique(["case_id", "doc_id"], keep="last", maintain_order=True)
    )
