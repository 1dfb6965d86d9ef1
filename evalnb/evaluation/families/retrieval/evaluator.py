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

from evalnb.evaluation.base import (
    ASKED,
    Context,
    Evaluator,
    MetricSpec,
    Param,
    register,
    result_frame,
)
from evalnb.evaluation.families.retrieval.trec import parse_measures, trec_measures

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl

__all__ = ["MEASURES", "RANX", "RanxRetrieval", "Retrieval"]

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
    names: ClassVar[Mapping[str, str]] = {name: name for name in MEASURES}
    """Each metric's key → the trec_eval measure that computes it."""

    def score(
        self,
        rows: pl.DataFrame,
        params: Mapping[str, object],
        ctx: Context,  # noqa: ARG002 - counting needs no shared service
    ) -> pl.DataFrame:
        """Rank every row's documents and measure them against its case's grades at once."""
        asked = params.get(ASKED)
        keys = list(asked) if isinstance(asked, tuple) else [m.key for m in self.metrics]
        measures = parse_measures([self.names[key] for key in keys])
        n = rows.height
        found = trec_measures(rows["ranked"], rows["judged"], measures)
        detail = np.full(n, None, dtype=object)
        judged = (rows["judged"].list.len().fill_null(0) > 0).to_numpy()
        out: dict[str, np.ndarray] = {}
        for i, key in enumerate(keys):
            column = found.values[:, i].copy()
            column[~judged] = np.nan
            out[key] = column
        detail[judged & ~found.retrieved] = _NOTHING
        for group, doc in found.twice.items():
            detail[group] = json.dumps(
                {
                    "reason": f"document {doc!r} is ranked twice in this list; trec_eval refuses such a run"
                }
            )
            for column in out.values():
                column[group] = np.nan
        detail[~judged] = _NO_QRELS
        return result_frame(rows, out, detail.tolist())


RANX = {
    "ndcg@10": "ndcg_cut_10",
    "ndcg@5": "ndcg_cut_5",
    "ndcg@20": "ndcg_cut_20",
    "ndcg@100": "ndcg_cut_100",
    "ndcg": "ndcg",
    "map": "map",
    "map@10": "map_cut_10",
    "map@100": "map_cut_100",
    "mrr": "recip_rank",
    "precision@1": "P_1",
    "precision@5": "P_5",
    "precision@10": "P_10",
    "precision@20": "P_20",
    "recall@5": "recall_5",
    "recall@10": "recall_10",
    "recall@20": "recall_20",
    "recall@100": "recall_100",
    "recall@1000": "recall_1000",
    "r-precision": "Rprec",
    "bpref": "bpref",
    "hit_rate@1": "success_1",
    "hit_rate@5": "success_5",
    "hit_rate@10": "success_10",
}
"""ranx's metric names → the trec_eval measure with the same numbers (checked against ranx)."""


def _ranx_spec(name: str) -> MetricSpec:
    trec = _spec(RANX[name])
    return MetricSpec(
        name,
        name,
        f"ranx's {name}, the same number as trec_eval's {RANX[name]} (see the evaluator).",
        threshold=trec.threshold,
        primary=name == "ndcg@10",
    )


@register
class RanxRetrieval(Retrieval):
    """The same measures under ranx's names (``ndcg@10``, ``mrr``, ``precision@5``, …).

    Equal to ranx per query on graded qrels without tied scores (tested against ranx). Where
    they can differ: with tied scores evalnb keeps trec_eval's order (document id,
    descending) while ranx's order of equal scores is its sort's; ranx's ``ndcg_burges``
    (gains 2^grade − 1) and its ``mrr@k`` have no trec_eval twin and are not offered.
    """

    id = "ranx"
    title = "Retrieval (ranx's names)"
    description = (
        "The retrieval evaluator's measures under ranx's metric names (ndcg@k, map@k, mrr, "
        "precision@k, recall@k, r-precision, bpref, hit_rate@k); equal to ranx per query."
    )
    metrics = tuple(_ranx_spec(name) for name in RANX)
    names: ClassVar[Mapping[str, str]] = RANX
