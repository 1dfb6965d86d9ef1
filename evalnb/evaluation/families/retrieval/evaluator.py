"""The ``retrieval`` evaluator: trec_eval's measures of each row's ranking against its case's qrels.

Each retriever configuration is a ``model`` and each of its ranked lists a row, so the
per-query measures are scores like any other: leaderboards with intervals, ``decide``
(paired, clustered), PPI and the eye take retrievers unchanged. The measures are
:mod:`evalnb.evaluation.families.retrieval.trec`'s, equal to ``pytrec_eval`` per query.

Rows left unscored say why: a case without relevance judgments (trec_eval evaluates only
the queries its qrels hold), or a ranking that lists a document twice (trec_eval refuses
the run). A case with judgments that the retriever returned nothing for scores 0, as
trec_eval's ``-c`` counts a missing query, and its detail says so.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import polars as pl

from evalnb.evaluation.base import (
    ASKED,
    Context,
    Evaluator,
    MetricSpec,
    Param,
    register,
    result_frame,
)
from evalnb.evaluation.families.retrieval.trec import listed_twice, parse_measures, trec_measures

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["MEASURES", "Retrieval"]

_DESCRIBED = {
    "ndcg": "nDCG over the whole ranking (gains are the grades)",
    "map": "mean average precision",
    "recip_rank": "reciprocal rank of the first relevant document",
    "Rprec": "precision at R, the number of relevant documents",
    "bpref": "binary preference (judged documents only)",
    "P": "precision in the top {k}",
    "recall": "recall in the top {k}",
    "ndcg_cut": "nDCG of the top {k}",
    "map_cut": "average precision of the top {k}",
    "success": "1 when a relevant document is in the top {k}",
}
MEASURES = (
    "ndcg_cut_10",
    "ndcg_cut_5",
    "ndcg_cut_20",
    "ndcg_cut_100",
    "ndcg",
    "map",
    "map_cut_10",
    "map_cut_100",
    "recip_rank",
    "P_1",
    "P_5",
    "P_10",
    "P_20",
    "recall_5",
    "recall_10",
    "recall_20",
    "recall_100",
    "recall_1000",
    "Rprec",
    "bpref",
    "success_1",
    "success_5",
    "success_10",
)
"""The measures the evaluator computes (trec_eval's names), the primary one first."""


def _spec(name: str) -> MetricSpec:
    measure = parse_measures([name])[0]
    text = _DESCRIBED[measure.family].format(k=measure.k)
    return MetricSpec(
        name,
        name,
        f"trec_eval's {name}: {text}.",
        threshold=0.5,
        primary=name == MEASURES[0],
    )


_NO_QRELS = json.dumps({"reason": "no relevance judgments for this case (qrels): not evaluated"})
_NOTHING = json.dumps(
    {"reason": "the retriever returned nothing for this case: 0, as trec_eval -c counts it"}
)


@register
class Retrieval(Evaluator):
    """trec_eval's measures of each row's ranked documents against the case's qrels."""

    id = "retrieval"
    title = "Retrieval (trec_eval)"
    domain = "retrieval"
    description = (
        "trec_eval's measures (nDCG@k, MAP, MRR, P@k, recall@k, R-precision, bpref, "
        "success@k) of each ranked list against the case's graded relevance judgments; "
        "equal to pytrec_eval per query."
    )
    requires = ()
    ranked = True
    metrics = tuple(_spec(name) for name in MEASURES)
    params: ClassVar[tuple[Param, ...]] = ()

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],
        ctx: Context,  # noqa: ARG002 - counting needs no shared service
    ) -> pl.DataFrame:
        """Rank every row's documents and measure them against its case's grades at once."""
        asked = params.get(ASKED)
        measures = parse_measures(list(asked) if isinstance(asked, tuple) else list(MEASURES))
        n = rows.height
        frame = rows.select("case_id", "ranked", "judged").with_row_index("group")
        ranked = (
            frame.select("group", "case_id", "ranked")
            .explode("ranked")
            .unnest("ranked")
            .drop_nulls("doc_id")
            .with_columns(pl.col("group").cast(pl.Int64), pl.col("score").fill_null(0.0))
        )
        qrels = (
            frame.select("case_id", "judged")
            .unique("case_id")
            .explode("judged")
            .unnest("judged")
            .drop_nulls("doc_id")
            .unique(["case_id", "doc_id"], keep="last")
        )
        doubled = listed_twice(ranked)
        values = trec_measures(ranked.join(doubled, on="group", how="anti"), qrels, measures)
        detail = np.full(n, None, dtype=object)
        judged = (frame["judged"].list.len().fill_null(0) > 0).to_numpy()
        got = np.zeros(n, dtype=bool)
        got[values["group"].to_numpy()] = True
        out: dict[str, np.ndarray] = {}
        for m in measures:
            column = np.zeros(n)
            column[values["group"].to_numpy()] = values[m.name].to_numpy()
            column[~judged] = np.nan
            out[m.name] = column
        detail[judged & ~got] = _NOTHING
        for group, doc in doubled.iter_rows():
            detail[group] = json.dumps(
                {
                    "reason": f"document {doc!r} is ranked twice in this list; trec_eval refuses such a run"
                }
            )
            for column in out.values():
                column[group] = np.nan
        detail[~judged] = _NO_QRELS
        return result_frame(rows, out, detail.tolist())
