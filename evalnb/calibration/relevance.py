"""Relevance from reviewers: the pool of documents to grade, and grades kept as qrels.

TREC judges a pool: the union of every system's top ``k`` per query, so no system's
documents go unjudged. :func:`relevance_pool` draws it from the lab's retrievals (skipping
what is graded already); :func:`add_grade` keeps a reviewer's 0–3 grade in ``lab.qrels``
(committed to the store before it returns), where the retrieval evaluator reads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from evalnb.lab.rankings import in_trec_order
from evalnb.lab.schema import QRELS

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["GRADES", "add_grade", "relevance_pool"]

GRADES = (0, 1, 2, 3)
"""The grades a reviewer gives (TREC's and UMBRELA's scale): 0 not relevant … 3 perfectly."""


def relevance_pool(lab: LabCore, k: int = 10) -> pl.DataFrame:
    """Pool the documents to grade: each case's top ``k`` of every retriever, not graded yet.

    Returns ``case_id``, ``doc_id``, ``prompt`` (the question), ``models`` (the retrievers
    that ranked it in their top ``k``) and ``best_rank`` (its best rank among them), best
    ranks first: what a reviewer grades to make the judgments cover every system.
    """
    if k < 1:
        msg = f"k is the depth of the pool; expected a positive integer, got {k}"
        raise ValueError(msg)
    ranked = (
        in_trec_order(lab.scan("retrievals"), ["case_id", "model", "sample"])
        .filter(pl.col("rank") <= k)
        .collect()
    )
    graded = lab.table("qrels").select("case_id", "doc_id")
    return (
        ranked.join(graded, on=["case_id", "doc_id"], how="anti")
        .group_by("case_id", "doc_id")
        .agg(models=pl.col("model").unique().sort(), best_rank=pl.col("rank").min())
        .join(lab.cases.select("case_id", "prompt"), on="case_id", how="left")
        .select("case_id", "doc_id", "prompt", "models", "best_rank")
        .sort("best_rank", "case_id", "doc_id")
    )


def add_grade(
    lab: LabCore, case_id: str, doc_id: str, grade: int, *, reviewer: str
) -> pl.DataFrame:
    """Keep ``reviewer``'s grade of ``doc_id`` for ``case_id`` in ``lab.qrels``; return the row.

    A later grade of the same document for the same case replaces the earlier one in the
    measures (the qrels keep the last per document and case).
    """
    if isinstance(grade, bool) or grade not in GRADES:
        msg = f"a grade is one of {GRADES} (0 not relevant … 3 perfectly relevant); got {grade!r}"
        raise ValueError(msg)
    if lab.cases.filter(pl.col("case_id") == case_id).is_empty():
        msg = f"no case {case_id!r} in this lab; pass an id from lab.cases"
        raise KeyError(msg)
    if not reviewer.strip():
        msg = "reviewer names who graded; got an empty name"
        raise ValueError(msg)
    row = pl.DataFrame(
        {
            "case_id": [case_id],
            "doc_id": [doc_id],
            "relevance": [grade],
            "source": [f"reviewer:{reviewer}"],
        },
        schema=QRELS,
    )
    qrels = lab.table("qrels").filter(
        ~((pl.col("case_id") == case_id) & (pl.col("doc_id") == doc_id))
    )
    lab.replace_tables({"qrels": pl.concat([qrels, row])})
    return row
