"""Which failed answers failed because retrieval missed: each answer attributed, with intervals.

A RAG answer that fails a metric failed in the retriever or in the generator. With
relevance judgments for its case and the ranking its system retrieved (the ``retrievals``
table, or ragas' ``retrieved_context_ids``), each answer gets one attribution:

- ``retrieval_miss``: it failed and no relevant document (grade ≥ 1) is in the top ``k``;
- ``retrieved_unused``: it failed although a relevant document was in the top ``k``;
- ``passed``: it passed the metric;
- ``no_qrels``: its case has no relevant document judged, so retrieval cannot be told;
- ``unscored``: the metric has no verdict for it.

The share of failures that are retrieval misses, per model (and per value of ``by``), comes
with Wilson's interval (:func:`evalnb.calibration.reliability.wilson_interval`): "62 % of the
failures on topic X are retrieval misses (95 % CI 48–74 %)".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from evalnb.analysis.insights import INSIGHT_SCHEMA
from evalnb.calibration.reliability import wilson_interval
from evalnb.evaluation.catalog import all_evaluators
from evalnb.lab.rankings import grades_of, in_trec_order, ranked_of, with_rankings

if TYPE_CHECKING:
    from evalnb.lab.core import LabCore

__all__ = [
    "ATTRIBUTIONS",
    "MIN_TOLD",
    "attribution",
    "attribution_insights",
    "attribution_overview",
    "attribution_summary",
    "retrieval_axis",
    "retrieval_hits",
]

ATTRIBUTIONS = ("retrieval_miss", "retrieved_unused", "passed", "no_qrels", "unscored")
_KEY = ["case_id", "model", "sample"]
_Z95 = 1.959963984540054
MIN_TOLD = 5
"""Failures that must be attributable before an insight speaks of their share."""
_SLICES = ("topic", "category", "question_type")


def retrieval_hits(lab: LabCore, k: int = 10) -> pl.DataFrame:
    """Per answer: relevant documents among the first ``k`` its system retrieved, and judged.

    Returns ``case_id``, ``model``, ``sample``, ``relevant_in_top_k`` (trec_eval's order) and
    ``num_rel`` (relevant documents judged for the case), one row per output.
    """
    if k < 1:
        msg = f"k is how many retrieved documents count; expected a positive integer, got {k}"
        raise ValueError(msg)
    rows = lab.rows()
    ranked = with_rankings(
        lab, rows.select(*_KEY, *({"output_extra", "case_extra"} & set(rows.columns)))
    )
    keys = ranked.select(_KEY).with_row_index("group").with_columns(pl.col("group").cast(pl.Int64))
    top = (
        in_trec_order(ranked_of(ranked), ["group"])
        .filter(pl.col("rank") <= k)
        .join(keys, on=["group", "case_id"], how="left")
        .select(*_KEY, "doc_id")
    )
    grades = grades_of(ranked)
    hits = (
        top.join(grades.filter(pl.col("relevance") >= 1), on=["case_id", "doc_id"], how="inner")
        .group_by(_KEY)
        .agg(relevant_in_top_k=pl.len().cast(pl.Int64))
    )
    num_rel = grades.group_by("case_id").agg(
        num_rel=(pl.col("relevance") >= 1).sum().cast(pl.Int64)
    )
    return (
        ranked.select(_KEY)
        .join(hits, on=_KEY, how="left")
        .join(num_rel, on="case_id", how="left")
        .with_columns(pl.col("relevant_in_top_k").fill_null(0), pl.col("num_rel").fill_null(0))
    )


def retrieval_axis(lab: LabCore, k: int = 10) -> pl.DataFrame:
    """Give the weakness grid's ``retrieval`` axis: per answer, did retrieval find what was needed.

    ``relevant in top k``, ``nothing relevant in top k`` or ``no qrels`` (the case has no
    relevant document judged), by ``case_id``, ``model``, ``sample``.
    """
    hits = retrieval_hits(lab, k)
    return hits.select(
        *_KEY,
        retrieval=pl.when(pl.col("num_rel") == 0)
        .then(pl.lit("no qrels"))
        .when(pl.col("relevant_in_top_k") > 0)
        .then(pl.lit(f"relevant in top {k}"))
        .otherwise(pl.lit(f"nothing relevant in top {k}")),
    )


def attribution(lab: LabCore, evaluator: str, metric: str, *, k: int = 10) -> pl.DataFrame:
    """Attribute every answer's verdict on ``evaluator``/``metric`` to retrieval or generation.

    Returns one row per answer: ``case_id``, ``model``, ``sample``, ``passed`` (the verdict,
    null when unscored), ``relevant_in_top_k`` (relevant documents among the first ``k``
    retrieved, trec_eval's order), ``num_rel`` (relevant documents judged for the case) and
    ``attribution`` (one of :data:`ATTRIBUTIONS`).
    """
    verdicts = lab.verdicts().filter(
        (pl.col("evaluator") == evaluator) & (pl.col("metric") == metric)
    )
    if verdicts.is_empty():
        known = lab.metrics.filter(pl.col("evaluator") == evaluator)["metric"].to_list()
        msg = f"no scores of {evaluator}/{metric} in this lab; " + (
            f"{evaluator}'s metrics here are {known}"
            if known
            else f"evaluate it first (evalnb.evaluate(lab, {evaluator!r}))"
        )
        raise ValueError(msg)
    hits = retrieval_hits(lab, k)
    out = hits.join(verdicts.select(*_KEY, "passed"), on=_KEY, how="left")
    return out.with_columns(
        attribution=pl.when(pl.col("passed").is_null())
        .then(pl.lit("unscored"))
        .when(pl.col("passed"))
        .then(pl.lit("passed"))
        .when(pl.col("num_rel") == 0)
        .then(pl.lit("no_qrels"))
        .when(pl.col("relevant_in_top_k") == 0)
        .then(pl.lit("retrieval_miss"))
        .otherwise(pl.lit("retrieved_unused"))
    ).sort(_KEY)


def attribution_summary(
    lab: LabCore, evaluator: str, metric: str, *, k: int = 10, by: str | None = None
) -> pl.DataFrame:
    """Per model (and per value of the case column ``by``): counts and the share of misses.

    ``miss_share`` is the share of the failures that could be attributed (``retrieval_miss``
    and ``retrieved_unused``) that are retrieval misses, with Wilson's 95 % interval
    (``miss_ci_low``, ``miss_ci_high``); null where no failure could be attributed.
    """
    rows = attribution(lab, evaluator, metric, k=k)
    keys = ["model"]
    if by is not None:
        if by not in lab.cases.columns:
            msg = f"by names a column of the cases; {by!r} is not one of {lab.cases.columns}"
            raise ValueError(msg)
        rows = rows.join(lab.cases.select("case_id", by), on="case_id", how="left")
        keys = [by, "model"]
    counts = rows.group_by(keys).agg(
        n_answers=pl.len().cast(pl.Int64),
        **{name: (pl.col("attribution") == name).sum().cast(pl.Int64) for name in ATTRIBUTIONS},
    )
    told = (counts["retrieval_miss"] + counts["retrieved_unused"]).to_numpy()
    misses = counts["retrieval_miss"].to_numpy()
    some = told > 0
    low, high = wilson_interval(misses, np.where(some, told, 1), _Z95)
    share = np.where(some, misses / np.where(some, told, 1), np.nan)

    def column(values: np.ndarray) -> pl.Series:
        return pl.Series(np.where(some, values, np.nan), dtype=pl.Float64).fill_nan(None)

    return counts.with_columns(
        miss_share=column(share), miss_ci_low=column(low), miss_ci_high=column(high)
    ).sort(keys)


def _in_extras(lab: LabCore, table: str, field: str) -> bool:
    """Whether some row's JSON ``extra`` of ``table`` names ``field`` (read lazily, on disk too)."""
    found = lab.scan(table).select(pl.col("extra").str.contains(field, literal=True).any())
    return bool(found.collect().item())


def _answer_metrics(lab: LabCore) -> list[tuple[str, str]]:
    """Each scored evaluator's primary metrics, less the retrieval evaluators' own."""
    if not (lab.height("retrievals") or _in_extras(lab, "outputs", "retrieved_context_ids")):
        return []  # nothing ranked: nothing to attribute
    if not (lab.height("qrels") or _in_extras(lab, "cases", "reference_context_ids")):
        return []  # nothing judged
    known = all_evaluators()
    primary = (
        lab.metrics.filter(pl.col("primary"))
        .select("evaluator", "metric")
        .unique(maintain_order=True)
        .join(lab.scores.select("evaluator", "metric").unique(), on=["evaluator", "metric"])
    )
    return [
        (e, m)
        for e, m in primary.rows()
        if not getattr(known.get(e), "ranked", False)  # those measure the ranking itself
    ]


def attribution_overview(lab: LabCore, *, k: int = 10, by: str | None = None) -> pl.DataFrame:
    """Return :func:`attribution_summary` of every answer metric, with ``evaluator`` and ``metric``.

    The answer metrics are each scored evaluator's primary ones, less the retrieval
    evaluators' own (they measure the ranking, not the answer). Empty when the lab holds no
    ranking or no relevance judgment, so there is nothing to attribute.
    """
    parts = [
        attribution_summary(lab, e, m, k=k, by=by).select(
            pl.lit(e).alias("evaluator"), pl.lit(m).alias("metric"), pl.all()
        )
        for e, m in _answer_metrics(lab)
    ]
    return pl.concat(parts) if parts else pl.DataFrame()


def _percent(value: float) -> str:
    return f"{100 * value:.0f} %"


def _insight(
    evaluator: str, metric: str, model: str, where: str, counts: dict[str, object], k: int
) -> tuple[object, ...] | None:
    told, misses = int(counts["told"]), int(counts["misses"])  # type: ignore[call-overload]
    low, high = (float(x) for x in wilson_interval(misses, told, _Z95))
    share = misses / told
    if where and low <= 0.5:
        return None  # a slice is named only where misses are most of its failures beyond doubt
    text = (
        f"{_percent(share)} of {model}'s {told} failures on {evaluator}/{metric}{where} "
        f"that can be attributed are retrieval misses (95 % CI {_percent(low)}–"
        f"{_percent(high)}): no relevant document was in its top {k}."
    )
    if low > 0.5:
        action = (
            f"Improve retrieval before the generator (recall@{k} of these cases): the "
            "generator never saw a relevant document for them."
        )
    elif high < 0.5:
        action = (
            "Most failures had a relevant document retrieved: improve how the generator "
            "uses its context (faithfulness, context use) before the retriever."
        )
    else:
        action = (
            "Retrieval and generation both contribute: lab.retrieval.attribution(...) lists "
            "each failed answer with its cause."
        )
    ids = counts["ids"]
    return ("retrieval", evaluator, metric, model, text, share, ids, action)


def attribution_insights(lab: LabCore, *, k: int = 10) -> pl.DataFrame:
    """Return insights (``INSIGHT_SCHEMA``) naming where failed answers are retrieval misses.

    Per answer metric and model: the share of its attributable failures that are retrieval
    misses, with Wilson's interval, said when at least :data:`MIN_TOLD` failures can be
    attributed; and per value of the cases' ``topic`` (or ``category``, ``question_type``)
    the slices where most failures are misses beyond doubt (Wilson's lower bound above one
    half): there the retriever, not the generator, is what to change first. ``case_ids``
    are the retrieval misses.
    """
    metrics = _answer_metrics(lab)
    slice_col = next((c for c in _SLICES if c in lab.cases.columns), None)
    rows = []
    for evaluator, metric in metrics:
        told = attribution(lab, evaluator, metric, k=k).filter(
            pl.col("attribution").is_in(["retrieval_miss", "retrieved_unused"])
        )
        if slice_col is not None:
            told = told.join(lab.cases.select("case_id", slice_col), on="case_id", how="left")
        miss = pl.col("attribution") == "retrieval_miss"
        levels: list[list[str]] = [["model"], *([[slice_col, "model"]] if slice_col else [])]
        for keys in levels:
            groups = (
                told.group_by(keys, maintain_order=True)
                .agg(
                    told=pl.len(),
                    misses=miss.sum(),
                    ids=pl.col("case_id").filter(miss).unique().sort(),
                )
                .filter(pl.col("told") >= MIN_TOLD)
                .sort(keys)
            )
            for counts in groups.iter_rows(named=True):
                where = f" where {keys[0]} is {counts[keys[0]]!r}" if len(keys) > 1 else ""
                row = _insight(evaluator, metric, str(counts["model"]), where, counts, k)
                if row is not None:
                    rows.append(row)
    return pl.DataFrame(rows, schema=INSIGHT_SCHEMA, orient="row")
