"""The report's retrieval sections: the retrievers measured, where grades came from, who failed.

:func:`retrieval_html` draws the "Retrieval" section of a lab that ranks documents or holds
relevance judgments; :func:`relevance_agreement_html` the relevance judges' line in "Judge
reliability". Both take what the layers above computed as plain tables (the attribution of
failed answers, a judge's agreement with reviewers), as the report takes decisions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from evalnb.analysis.html_parts import escape, html_table

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = ["relevance_agreement_html", "retrieval_html"]


def relevance_agreement_html(agreement: pl.DataFrame | None) -> str:
    """Render the relevance judges' line of the card: their grades against reviewers'."""
    if agreement is None or agreement.is_empty():
        return ""
    shown = agreement.select(
        "judge",
        pl.col("n").alias("documents graded by both"),
        "exact",
        "relevant_kappa",
        "linear_kappa",
        "quadratic_kappa",
        "quadratic_low",
        "quadratic_high",
        "mean_difference",
    )
    return (
        "<h3>Relevance judges against reviewers</h3><p>The judge's 0–3 grades of documents a "
        "reviewer also graded: exact agreement, Cohen's κ on relevant (grade ≥ 1) and weighted "
        "κ (linear, quadratic, with the quadratic one's 95 % interval); a mean difference above "
        "0 is a lenient judge.</p>" + html_table(shown)
    )


# The retrieval measures the report shows per retriever (trec_eval's names, then ranx's).
_RETRIEVAL_SHOWN = (
    ("retrieval", ("ndcg_cut_10", "recall_10", "map", "recip_rank", "P_10", "success_10")),
    ("ranx", ("ndcg@10", "recall@10", "map", "mrr", "precision@10", "hit_rate@10")),
)


def retrieval_html(lab: LabCore, board: pl.DataFrame, attribution: pl.DataFrame | None) -> str:
    """Render "Retrieval": the measures per retriever, where the grades come from, attribution.

    Only for a lab that ranks documents or holds relevance judgments; the retrieval
    evaluator's own section (every measure, weakest cases) follows among the evaluators.
    """
    qrels = lab.table("qrels")
    if not (lab.height("retrievals") or qrels.height):
        return ""
    parts = ["<h2>Retrieval</h2>"]
    for evaluator, shown in _RETRIEVAL_SHOWN:
        rows = board.filter(
            (pl.col("evaluator") == evaluator) & pl.col("metric").is_in(list(shown))
        )
        if rows.is_empty():
            continue
        cell = pl.format(
            "{} [{}, {}]", *(pl.col(c).round(3) for c in ("mean", "ci_low", "ci_high"))
        )
        wide = (
            rows.with_columns(cell=cell)
            .pivot("metric", index="model", values="cell")
            .select("model", *[m for m in shown if m in set(rows["metric"])])
        )
        parts.append(
            f"<h3>Measures per retriever ({escape(evaluator)}; mean per query, 95 % CI)</h3>"
            + html_table(wide, tuple(wide.columns))
        )
    if len(parts) == 1:
        parts.append(
            "<p>The retrievals are not measured yet: <code>evalnb.evaluate(lab, "
            "'retrieval')</code> scores trec_eval's measures per query.</p>"
        )
    source = pl.col("source").fill_null("file")
    kind = (
        pl.when(source.str.starts_with("judge:"))
        .then(pl.lit("LLM judge"))
        .when(source.str.starts_with("reviewer:"))
        .then(pl.lit("reviewers"))
        .otherwise(pl.lit("given (qrels file, BEIR, ids)"))
    )
    origin = qrels.group_by(kind.alias("graded by")).agg(
        documents=pl.len(), cases=pl.col("case_id").n_unique()
    )
    parts.append(
        "<h3>Relevance judgments</h3>"
        + (
            html_table(origin.sort("graded by"))
            if origin.height
            else "<p>No relevance judgments: grade the pooled documents "
            "(<code>lab.retrieval.pool()</code>, <code>lab.retrieval.add_grade</code>) or have "
            "a judge grade them (<code>lab.retrieval.judge(judge)</code>).</p>"
        )
        + "<p>A reviewer's grade stands over a judge's for the same document.</p>"
    )
    if attribution is not None and attribution.height:
        shown_cols = [
            "evaluator",
            "metric",
            "model",
            "n_answers",
            "retrieval_miss",
            "retrieved_unused",
            "passed",
            "no_qrels",
            "miss_share",
            "miss_ci_low",
            "miss_ci_high",
        ]
        parts.append(
            "<h3>Failed answers: retrieval or generation</h3><p><em>retrieval_miss</em>: no "
            "relevant document in the answer's top 10; <em>retrieved_unused</em>: one was "
            "there and the answer still failed. <em>miss_share</em>: the misses' share of "
            "those two, with Wilson's 95 % interval.</p>"
            + html_table(attribution.select([c for c in shown_cols if c in attribution.columns]))
        )
    return "".join(parts)
