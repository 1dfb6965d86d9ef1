"""trec_eval's measures of ranked lists against relevance judgments, over whole tables at once.

A pure kernel: rankings (one row a retrieved document, a ``group`` per ranked list) and
qrels in, one row per ranked list out, a column per measure. Semantics are trec_eval's
(9.0.x, as ``pytrec_eval`` runs it), checked per query against pytrec_eval in
``tests/evaluation/test_retrieval.py``:

- a list is ranked by score, descending, ties by document id **descending** (trec_eval's
  ``comp_sim_docno``; the rank a run file gives is not used);
- a document is relevant when its grade is at least 1 (``-l 1``); a grade of 0 or below is
  not relevant; a document without a grade is unjudged (not relevant). ``bpref`` counts only
  grade 0 as judged non-relevant: trec_eval reads -1 as "not in the pool" and -2 as "pooled
  but unjudged", and skips both as it skips unjudged documents;
- nDCG's gain is the grade itself (trec_eval's default gains), discounted by
  ``log2(rank + 1)``; the ideal ranking sorts the query's judged grades; ``ndcg_cut_k`` cuts
  both at ``k``;
- ``P_k`` divides by ``k`` even when fewer were retrieved; ``recall_k``, ``map``,
  ``map_cut_k``, ``Rprec`` and ``bpref`` by the query's number of relevant documents, and are
  0 where it has none (as are ``ndcg`` and its cuts with no positive grade).

Why Polars expressions and no loop: every measure is a sum, a cumulative sum or a first
position over each list, which Polars computes for all lists in one pass of sorted columns
(about 10⁷ judgments a second on two cores), with no Python per query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

__all__ = ["CUTOFF_MEASURES", "PLAIN_MEASURES", "Measure", "parse_measures", "trec_measures"]

PLAIN_MEASURES = (
    "map",
    "ndcg",
    "recip_rank",
    "Rprec",
    "bpref",
    "num_ret",
    "num_rel",
    "num_rel_ret",
)
CUTOFF_MEASURES = ("P", "recall", "map_cut", "ndcg_cut", "success")
_NAME = re.compile(r"^(P|recall|map_cut|ndcg_cut|success)_([1-9][0-9]*)$")


@dataclass(frozen=True)
class Measure:
    """One trec_eval measure: its family and, for a cut-off family, the depth ``k``."""

    family: str
    k: int | None = None

    @property
    def name(self) -> str:
        """trec_eval's name (``ndcg_cut_10``, ``map``)."""
        return self.family if self.k is None else f"{self.family}_{self.k}"


def parse_measures(names: list[str] | tuple[str, ...]) -> list[Measure]:
    """Read trec_eval measure names; an unknown one is an error naming the ones known."""
    out = []
    for name in names:
        if name in PLAIN_MEASURES:
            out.append(Measure(name))
            continue
        found = _NAME.match(name)
        if found is None:
            msg = (
                f"unknown retrieval measure {name!r}; expected one of {list(PLAIN_MEASURES)} or "
                f"a cut-off measure {[f + '_k' for f in CUTOFF_MEASURES]} (k a positive integer)"
            )
            raise ValueError(msg)
        out.append(Measure(found[1], int(found[2])))
    return out


def _ideal(qrels: pl.LazyFrame, cuts: list[int]) -> pl.LazyFrame:
    """Per case: relevant and judged-non-relevant counts, and the ideal DCG (whole and cut)."""
    gains = (
        qrels.filter(pl.col("relevance") > 0)
        .sort(["case_id", "relevance"], descending=[False, True])
        .with_columns(pos=pl.int_range(1, pl.len() + 1).over("case_id"))
        .with_columns(term=pl.col("relevance") / (pl.col("pos") + 1).log(2))
        .group_by("case_id")
        .agg(
            idcg=pl.col("term").sum(),
            **{f"idcg_{k}": pl.col("term").filter(pl.col("pos") <= k).sum() for k in cuts},
        )
    )
    counts = qrels.group_by("case_id").agg(
        num_rel=(pl.col("relevance") >= 1).sum().cast(pl.Int64),
        num_nonrel=pl.col("relevance").is_between(0, 0).sum().cast(pl.Int64),
    )
    return counts.join(gains, on="case_id", how="left").with_columns(
        pl.col("^idcg.*$").fill_null(0.0)
    )


def _ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    return pl.when(den > 0).then(num / den).otherwise(0.0)


def trec_measures(
    ranked: pl.DataFrame, qrels: pl.DataFrame, measures: list[Measure]
) -> pl.DataFrame:
    """trec_eval's ``measures`` of every ranked list of ``ranked`` against ``qrels``.

    Parameters
    ----------
    ranked
        ``group`` (the list's id), ``case_id``, ``doc_id``, ``score``: one row a retrieved
        document, in any order; a document at most once per list.
    qrels
        ``case_id``, ``doc_id``, ``relevance``: the grades (a document at most once per case).
    measures
        What to compute (:func:`parse_measures`).

    Returns
    -------
    pl.DataFrame
        ``group`` and one Float64 column per measure, named as trec_eval names it, for every
        group of ``ranked`` (a list whose case has no qrels gets the values of a query with
        nothing relevant: the caller decides whether such a list is scored).
    """
    cuts = sorted({m.k for m in measures if m.k is not None})
    ideal = _ideal(qrels.lazy().select("case_id", "doc_id", "relevance"), cuts)
    rows = (
        ranked.lazy()
        .select("group", "case_id", "doc_id", "score")
        .sort(["group", "score", "doc_id"], descending=[False, True, True])
        .with_columns(rank=pl.int_range(1, pl.len() + 1).over("group"))
        .join(
            qrels.lazy().select("case_id", "doc_id", "relevance"),
            on=["case_id", "doc_id"],
            how="left",
        )
        .join(ideal.select("case_id", "num_rel"), on="case_id", how="left")
        .sort(["group", "rank"])  # a join keeps no order: the sums below run down each list
        .with_columns(
            rel=(pl.col("relevance") >= 1).fill_null(False),
            # bpref's judged non-relevant: grade 0. trec_eval reads -1 as "not in the pool"
            # and -2 as "pooled, unjudged": bpref skips both, as unjudged documents.
            nonrel=(pl.col("relevance") == 0).fill_null(False),
            gain=pl.when(pl.col("relevance") > 0).then(pl.col("relevance")).otherwise(0),
            num_rel=pl.col("num_rel").fill_null(0),
        )
        .with_columns(
            hits=pl.col("rel").cast(pl.Int64).cum_sum().over("group"),
            nonrel_before=pl.col("nonrel").cast(pl.Int64).cum_sum().over("group")
            - pl.col("nonrel").cast(pl.Int64),
            dcg=pl.col("gain") / (pl.col("rank") + 1).log(2),
        )
    )
    rank, rel = pl.col("rank"), pl.col("rel")
    aggs: dict[str, pl.Expr] = {
        "num_ret": pl.len().cast(pl.Float64),
        "num_rel_ret": rel.sum().cast(pl.Float64),
        "ap": (pl.col("hits") / rank).filter(rel).sum(),
        "first": rank.filter(rel).min(),
        "dcg": pl.col("dcg").sum(),
        "rprec_hits": rel.filter(rank <= pl.col("num_rel")).sum().cast(pl.Float64),
    }
    for k in cuts:
        aggs[f"hits_{k}"] = rel.filter(rank <= k).sum().cast(pl.Float64)
        aggs[f"ap_{k}"] = (pl.col("hits") / rank).filter(rel & (rank <= k)).sum()
        aggs[f"dcg_{k}"] = pl.col("dcg").filter(rank <= k).sum()
    per_list = (
        rows.join(ideal.select("case_id", "num_nonrel"), on="case_id", how="left")
        .with_columns(
            bterm=pl.when(pl.col("nonrel_before") > 0)
            .then(
                1.0
                - pl.min_horizontal("nonrel_before", "num_rel")
                / pl.min_horizontal("num_nonrel", "num_rel")
            )
            .otherwise(1.0)
        )
        .group_by("group", "case_id")
        .agg(**aggs, bpref_raw=pl.col("bterm").filter(rel).sum())
        .join(ideal, on="case_id", how="left")
        .with_columns(
            pl.col("num_rel").fill_null(0),
            pl.col("^idcg.*$").fill_null(0.0),
        )
    )
    n_rel = pl.col("num_rel").cast(pl.Float64)
    out: dict[str, pl.Expr] = {}
    for m in measures:
        name, k = m.name, m.k or 0
        if m.family == "num_ret":
            out[name] = pl.col("num_ret")
        elif m.family == "num_rel":
            out[name] = n_rel
        elif m.family == "num_rel_ret":
            out[name] = pl.col("num_rel_ret")
        elif m.family == "map":
            out[name] = _ratio(pl.col("ap"), n_rel)
        elif m.family == "recip_rank":
            out[name] = (1.0 / pl.col("first").cast(pl.Float64)).fill_null(0.0)
        elif m.family == "Rprec":
            out[name] = _ratio(pl.col("rprec_hits"), n_rel)
        elif m.family == "bpref":
            out[name] = _ratio(pl.col("bpref_raw"), n_rel)
        elif m.family == "ndcg":
            out[name] = _ratio(pl.col("dcg"), pl.col("idcg"))
        elif m.family == "P":
            out[name] = pl.col(f"hits_{k}") / float(k)
        elif m.family == "recall":
            out[name] = _ratio(pl.col(f"hits_{k}"), n_rel)
        elif m.family == "map_cut":
            out[name] = _ratio(pl.col(f"ap_{k}"), n_rel)
        elif m.family == "ndcg_cut":
            out[name] = _ratio(pl.col(f"dcg_{k}"), pl.col(f"idcg_{k}"))
        elif m.family == "success":
            out[name] = (pl.col(f"hits_{k}") > 0).cast(pl.Float64)
    return per_list.select("group", **out).sort("group").collect()
