"""Relevance from reviewers and judges: the pool of documents to grade, grades kept as qrels.

TREC judges a pool: the union of every system's top ``k`` per query, so no system's
documents go unjudged. :func:`relevance_pool` draws it from the lab's retrievals (skipping
what is graded already); :func:`add_grade` keeps a reviewer's 0–3 grade in ``lab.qrels``
(committed to the store before it returns), where the retrieval evaluator reads it.
:func:`judge_relevance` has an LLM judge grade the same pool
(:class:`~evalnb.evaluation.families.judges.relevance_judge.RelevanceJudge`), its grades
kept under the source ``judge:<model>``: a reviewer's grade of the same document stands
over the judge's in the measures (:func:`evalnb.lab.rankings.current_grades`), and both stay,
so the judge's agreement with reviewers can be measured
(:func:`evalnb.judge_reliability.relevance.relevance_agreement`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from evalnb.evaluation.base import Context
from evalnb.evaluation.families.judges.relevance_judge import RelevanceJudge
from evalnb.lab.documents import documents_of
from evalnb.lab.rankings import JUDGE_SOURCE, in_trec_order
from evalnb.lab.schema import QRELS

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore
    from evalnb.llm.client import LLMClient

__all__ = ["GRADES", "add_grade", "judge_relevance", "relevance_pool"]

GRADES = (0, 1, 2, 3)
"""The grades a reviewer gives (TREC's and UMBRELA's scale): 0 not relevant … 3 perfectly."""


def _by_judge() -> pl.Expr:
    return pl.col("source").str.starts_with(JUDGE_SOURCE).fill_null(value=False)


def relevance_pool(lab: LabCore, k: int = 10, *, source: str | None = None) -> pl.DataFrame:
    """Pool the documents to grade: each case's top ``k`` of every retriever, not graded yet.

    Returns ``case_id``, ``doc_id``, ``prompt`` (the question), ``models`` (the retrievers
    that ranked it in their top ``k``) and ``best_rank`` (its best rank among them), best
    ranks first: what a reviewer grades to make the judgments cover every system.
    "Graded" means by a person (a judge's grade leaves the document in the pool, since a
    reviewer's grade of it is what measures the judge), or with ``source`` under that one.
    """
    if k < 1:
        msg = f"k is the depth of the pool; expected a positive integer, got {k}"
        raise ValueError(msg)
    ranked = (
        in_trec_order(lab.scan("retrievals"), ["case_id", "model", "sample"])
        .filter(pl.col("rank") <= k)
        .collect()
    )
    qrels = lab.table("qrels")
    done = ~_by_judge() if source is None else pl.col("source") == source
    graded = qrels.filter(done).select("case_id", "doc_id")
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
    same = (pl.col("case_id") == case_id) & (pl.col("doc_id") == doc_id)
    qrels = lab.table("qrels").filter(~(same & ~_by_judge()))  # a judge's grade stays beside it
    lab.replace_tables({"qrels": pl.concat([qrels, row])})
    return row


def judge_relevance(
    lab: LabCore,
    judge: LLMClient,
    *,
    k: int = 10,
    documents: object = None,
    contract: str = "auto",
) -> pl.DataFrame:
    """Have ``judge`` grade the pool (0–3) and keep its grades in ``lab.qrels``; return them.

    Parameters
    ----------
    lab
        The lab whose retrievals are pooled (each case's top ``k`` of every retriever).
    judge
        The LLM judge; its grades are kept under the source ``judge:<its model>``.
    k
        The pool's depth.
    documents
        Where the documents' texts are (default: the lab's chunks; see
        :func:`evalnb.lab.documents.documents_of`).
    contract
        The reply format (``"auto"``, ``"strict"`` or ``"free"``), as every judge's.

    Returns
    -------
    pl.DataFrame
        One row per pooled document: ``case_id``, ``doc_id``, ``grade`` (null where the judge
        gave none) and ``reason`` (why not: a failed call, an unreadable reply, no text for
        the document). Documents this judge graded before are not asked again; its grades
        are committed to the store before this returns.
    """
    source = f"{JUDGE_SOURCE}{judge.model}"
    pool = relevance_pool(lab, k, source=source)
    texts = documents_of(lab, documents)
    pairs = pool.join(texts, on="doc_id", how="left")
    rows = pairs.select(
        # the judge's rows are query-passage pairs: one "case" per pair, its own key
        case_id=pl.concat_str("case_id", "doc_id", separator="\x1f"),
        model=pl.lit("relevance", dtype=pl.String),
        sample=pl.lit(0, dtype=pl.Int64),
        prompt=pl.col("prompt"),
        actual=pl.col("text"),
        error=pl.lit(None, dtype=pl.String),
    )
    evaluator = RelevanceJudge()
    params = RelevanceJudge.resolve({"judge_model": judge.model, "contract": contract})
    scored = evaluator.score(rows, params, Context(judge=judge)) if rows.height else None
    grades = (
        scored.filter(pl.col("metric") == "relevance_grade").select(
            pl.col("value").cast(pl.Int64).alias("grade"), "detail"
        )
        if scored is not None
        else pl.DataFrame(schema={"grade": pl.Int64, "detail": pl.String})
    )
    reasons = grades["detail"].str.json_path_match("$.reason")
    missing = pairs["text"].is_null()
    out = pairs.select("case_id", "doc_id").with_columns(
        grade=grades["grade"],
        reason=pl.when(pl.Series(missing))
        .then(pl.lit("no text for this document in the lab's documents"))
        .otherwise(reasons),
    )
    kept = out.drop_nulls("grade").select(
        "case_id", "doc_id", relevance="grade", source=pl.lit(source, dtype=pl.String)
    )
    if kept.height:
        lab.replace_tables({"qrels": pl.concat([lab.table("qrels"), kept.cast(QRELS)])})
    return out
