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

How: Polars sorts every list at once and joins the grades (hash joins on the ids), then one
compiled pass (numba) walks the sorted grades list by list and computes every measure asked
for; no Python runs per query. An all-Polars version (cumulative sums and filtered
aggregations per measure) took three times as long: each measure was a pass of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import polars as pl
from numba import njit, prange

__all__ = [
    "CUTOFF_MEASURES",
    "PLAIN_MEASURES",
    "Measure",
    "listed_twice",
    "parse_measures",
    "trec_measures",
]

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


_FAMILY = {
    "num_ret": 0,
    "num_rel": 1,
    "num_rel_ret": 2,
    "map": 3,
    "ndcg": 4,
    "recip_rank": 5,
    "Rprec": 6,
    "bpref": 7,
    "P": 8,
    "recall": 9,
    "map_cut": 10,
    "ndcg_cut": 11,
    "success": 12,
}


def _ideal(qrels: pl.DataFrame, cuts: list[int]) -> pl.DataFrame:
    """Per case: relevant and judged-non-relevant counts, and the ideal DCG (whole and cut)."""
    gains = (
        qrels.lazy()
        .filter(pl.col("relevance") > 0)
        .sort(["case_id", "relevance"], descending=[False, True])
        .with_columns(pos=pl.int_range(1, pl.len() + 1).over("case_id"))
        .with_columns(term=pl.col("relevance") / (pl.col("pos") + 1).log(2))
        .group_by("case_id")
        .agg(
            idcg=pl.col("term").sum(),
            **{f"idcg_{k}": pl.col("term").filter(pl.col("pos") <= k).sum() for k in cuts},
        )
    )
    counts = (
        qrels.lazy()
        .group_by("case_id")
        .agg(
            num_rel=(pl.col("relevance") >= 1).sum().cast(pl.Int64),
            # bpref's judged non-relevant: grade 0. trec_eval reads -1 as "not in the pool" and
            # -2 as "pooled, unjudged": bpref skips both, as it skips unjudged documents.
            num_nonrel=(pl.col("relevance") == 0).sum().cast(pl.Int64),
        )
    )
    return (
        counts.join(gains, on="case_id", how="left")
        .with_columns(pl.col("^idcg.*$").fill_null(0.0))
        .collect()
    )


@njit(cache=True)
def _walk(
    starts: np.ndarray,
    grade: np.ndarray,
    judged: np.ndarray,
    num_rel: np.ndarray,
    num_nonrel: np.ndarray,
    idcg: np.ndarray,
    idcg_cut: np.ndarray,
    family: np.ndarray,
    ks: np.ndarray,
    cut_of: np.ndarray,
) -> np.ndarray:
    """Every measure of every list: rows ``starts[g]:starts[g + 1]`` are list ``g`` in rank order."""
    groups, count = starts.size - 1, family.size
    out = np.zeros((groups, count))
    longest = 0
    for g in range(groups):
        longest = max(longest, starts[g + 1] - starts[g])
    hits_at = np.zeros(longest + 1)
    ap_at = np.zeros(longest + 1)
    dcg_at = np.zeros(longest + 1)
    for g in range(groups):
        lo, n = starts[g], starts[g + 1] - starts[g]
        r_count, n_count = num_rel[g], num_nonrel[g]
        hits, ap, dcg, first, nonrel_so_far, bpref = 0.0, 0.0, 0.0, 0, 0, 0.0
        for j in range(n):
            rank = j + 1
            rel = grade[lo + j]
            good = judged[lo + j] and rel >= 1
            if good:
                hits += 1.0
                ap += hits / rank
                if first == 0:
                    first = rank
                dcg += rel / np.log2(rank + 1.0)
                if nonrel_so_far > 0:
                    bpref += 1.0 - min(nonrel_so_far, r_count) / min(n_count, r_count)
                else:
                    bpref += 1.0
            elif judged[lo + j] and rel == 0:
                nonrel_so_far += 1
            hits_at[rank], ap_at[rank], dcg_at[rank] = hits, ap, dcg
        for m in range(count):
            f, k = family[m], ks[m]
            at = min(k, n)
            if f == 0:
                v = float(n)
            elif f == 1:
                v = float(r_count)
            elif f == 2:
                v = hits
            elif f == 3:
                v = ap / r_count if r_count else 0.0
            elif f == 4:
                v = dcg / idcg[g] if idcg[g] > 0 else 0.0
            elif f == 5:
                v = 1.0 / first if first else 0.0
            elif f == 6:
                v = hits_at[min(r_count, n)] / r_count if r_count else 0.0
            elif f == 7:
                v = bpref / r_count if r_count else 0.0
            elif f == 8:
                v = hits_at[at] / k
            elif f == 9:
                v = hits_at[at] / r_count if r_count else 0.0
            elif f == 10:
                v = ap_at[at] / r_count if r_count else 0.0
            elif f == 11:
                ideal = idcg_cut[g, cut_of[m]]
                v = dcg_at[at] / ideal if ideal > 0 else 0.0
            else:
                v = 1.0 if hits_at[at] > 0 else 0.0
            out[g, m] = v
    return out


@njit(cache=True, parallel=True)
def _order(starts: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank each list by score, descending; flag the lists where two scores tie."""
    perm = np.empty(score.size, dtype=np.int64)
    tied = np.zeros(starts.size - 1, dtype=np.bool_)
    for g in prange(starts.size - 1):
        lo, hi = starts[g], starts[g + 1]
        order = np.argsort(-score[lo:hi], kind="mergesort")
        for j in range(hi - lo):
            perm[lo + j] = lo + order[j]
            if j and score[lo + order[j]] == score[lo + order[j - 1]]:
                tied[g] = True
    return perm, tied


@njit(cache=True, parallel=True)
def _twice(starts: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """Flag the lists where two documents share a hash (a document listed twice, or a collision)."""
    flagged = np.zeros(starts.size - 1, dtype=np.bool_)
    for g in prange(starts.size - 1):
        seen = np.sort(hashes[starts[g] : starts[g + 1]])
        for j in range(1, seen.size):
            if seen[j] == seen[j - 1]:
                flagged[g] = True
                break
    return flagged


def listed_twice(ranked: pl.DataFrame) -> pl.DataFrame:
    """Find the lists of ``ranked`` (by ``group``, contiguous) that hold a document twice.

    A compiled pass over the ids' 64-bit hashes finds the candidates; the ids themselves
    settle them (a hash collision is no duplicate). Returns one row a list: ``group`` and the
    first ``doc_id`` found twice.
    """
    sizes = ranked.group_by("group", maintain_order=True).len()
    starts = np.concatenate([[0], np.cumsum(sizes["len"].to_numpy())]).astype(np.int64)
    flagged = _twice(starts, ranked["doc_id"].hash().to_numpy())
    if not flagged.any():
        return pl.DataFrame(schema={"group": ranked.schema["group"], "doc_id": pl.String()})
    suspects = ranked.filter(
        pl.col("group").is_in(sizes["group"].filter(pl.Series(flagged)).implode())
    )
    return (
        suspects.filter(pl.struct("group", "doc_id").is_duplicated())
        .group_by("group", maintain_order=True)
        .agg(pl.col("doc_id").first())
    )


def _ranked_rows(ranked: pl.DataFrame) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
    """``ranked`` grouped by list, each list's start, and trec_eval's order of the rows.

    Lists are ranked by a compiled sort of their scores; only lists with tied scores, whose
    order then depends on the document ids (descending, as trec_eval's ``strcmp``), go
    through a string sort. The rows themselves are not moved: the order is applied to the
    grades alone, once they are joined.
    """
    frame = ranked.select("group", "case_id", "doc_id", "score")
    if not frame["group"].is_sorted():
        frame = frame.sort("group", maintain_order=True)
    sizes = frame.group_by("group", maintain_order=True).len()["len"].to_numpy()
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    perm, tied = _order(starts, frame["score"].to_numpy().astype(np.float64))
    if tied.any():
        index = pl.Series("at", np.arange(frame.height))
        groups = frame["group"].unique(maintain_order=True).filter(pl.Series(tied))
        fixed = (
            frame.with_columns(index)
            .filter(pl.col("group").is_in(groups.implode()))
            .sort(["group", "score", "doc_id"], descending=[False, True, True])
        )
        perm[np.repeat(tied, sizes)] = fixed["at"].to_numpy()
    return frame, starts, perm


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
    cuts = sorted({m.k for m in measures if m.family == "ndcg_cut" and m.k is not None})
    grades = qrels.select("case_id", "doc_id", "relevance")
    frame, starts, perm = _ranked_rows(ranked)
    relevance = frame.join(grades, on=["case_id", "doc_id"], how="left", maintain_order="left")[
        "relevance"
    ]
    lists = (
        frame.select("group", "case_id")
        .gather(starts[:-1])
        .join(_ideal(grades, cuts), on="case_id", how="left", maintain_order="left")
        .with_columns(
            pl.col("num_rel", "num_nonrel").fill_null(0), pl.col("^idcg.*$").fill_null(0.0)
        )
    )
    idcg_cut = (
        lists.select([f"idcg_{k}" for k in cuts]).to_numpy().astype(np.float64)
        if cuts
        else np.zeros((lists.height, 1))
    )
    values = _walk(
        starts,
        relevance.fill_null(0).to_numpy().astype(np.int64)[perm],
        relevance.is_not_null().to_numpy()[perm],
        lists["num_rel"].to_numpy().astype(np.int64),
        lists["num_nonrel"].to_numpy().astype(np.int64),
        lists["idcg"].to_numpy().astype(np.float64),
        np.ascontiguousarray(idcg_cut),
        np.array([_FAMILY[m.family] for m in measures], dtype=np.int64),
        np.array([m.k or 0 for m in measures], dtype=np.int64),
        np.array(
            [cuts.index(m.k or 0) if m.family == "ndcg_cut" else 0 for m in measures],
            dtype=np.int64,
        ),
    )
    return pl.DataFrame(
        {"group": lists["group"], **{m.name: values[:, i] for i, m in enumerate(measures)}}
    ).sort("group")
