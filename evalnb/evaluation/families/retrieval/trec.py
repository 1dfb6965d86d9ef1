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

How: each row carries its ranked list and its case's grades (list columns). The ids are
hashed once (Polars, 64 bits); one compiled pass (numba, a list per thread) sorts each list
by score, finds each document's grade by a binary search among the list's judged hashes,
and counts the ideal DCG; every match is then confirmed on the ids themselves (a collision
rehashes with another seed, so a hash never decides a grade), and lists with tied scores
are ordered by their ids. A second compiled pass walks the graded lists and computes every
measure asked for; no Python runs per query. Joins of the string ids (Polars hash joins)
took twice as long, and an all-Polars version (cumulative sums and filtered aggregations
per measure) three times: each measure was a pass of its own.
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
    "Measured",
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
def _grade(
    r_starts: np.ndarray,
    r_hash: np.ndarray,
    r_score: np.ndarray,
    j_starts: np.ndarray,
    j_hash: np.ndarray,
    j_rel: np.ndarray,
    cuts: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """Per list: its order, each document's grade, the counts and ideal DCGs, and what to check.

    Each list's judged documents are sorted by hash (the last grade of a document kept), so
    a retrieved document's grade is a binary search; ``matched`` keeps which judged row it
    matched, for the caller to confirm on the ids themselves (a hash is no id). ``tied``
    flags lists whose order depends on the document ids, ``twice`` lists holding a hash
    twice, ``j_twice`` lists whose judged documents share a hash (the caller confirms both).
    """
    groups = r_starts.size - 1
    perm = np.empty(r_hash.size, dtype=np.int64)
    grade = np.zeros(r_hash.size, dtype=np.int64)
    judged = np.zeros(r_hash.size, dtype=np.bool_)
    matched = np.full(r_hash.size, -1, dtype=np.int64)
    tied = np.zeros(groups, dtype=np.bool_)
    twice = np.zeros(groups, dtype=np.bool_)
    j_twice = np.zeros(groups, dtype=np.bool_)
    num_rel = np.zeros(groups, dtype=np.int64)
    num_nonrel = np.zeros(groups, dtype=np.int64)
    idcg = np.zeros(groups)
    idcg_cut = np.zeros((groups, max(cuts.size, 1)))
    for g in prange(groups):
        jlo, jhi = j_starts[g], j_starts[g + 1]
        # the judged documents by hash; for one hash, the last grade given stands
        order = np.argsort(j_hash[jlo:jhi], kind="mergesort")
        keys = np.empty(jhi - jlo, dtype=np.uint64)
        where = np.empty(jhi - jlo, dtype=np.int64)
        kept = 0
        for i in range(jhi - jlo):
            at = jlo + order[i]
            if kept and keys[kept - 1] == j_hash[at]:
                where[kept - 1] = at  # a later row of the same document (mergesort is stable)
                j_twice[g] = True
            else:
                keys[kept] = j_hash[at]
                where[kept] = at
                kept += 1
        gains = np.empty(kept)
        n_gain = 0
        for i in range(kept):
            rel = j_rel[where[i]]
            if rel >= 1:
                num_rel[g] += 1
            elif rel == 0:
                num_nonrel[g] += 1
            if rel > 0:
                gains[n_gain] = rel
                n_gain += 1
        ideal = -np.sort(-gains[:n_gain])
        total = 0.0
        for i in range(n_gain):
            total += ideal[i] / np.log2(i + 2.0)
            for c in range(cuts.size):
                if i < cuts[c]:
                    idcg_cut[g, c] = total
        idcg[g] = total
        # the ranking: score descending (ties settled by the caller on the ids)
        lo, hi = r_starts[g], r_starts[g + 1]
        rank = np.argsort(-r_score[lo:hi], kind="mergesort")
        for j in range(hi - lo):
            perm[lo + j] = lo + rank[j]
            if j and r_score[lo + rank[j]] == r_score[lo + rank[j - 1]]:
                tied[g] = True
        seen = np.sort(r_hash[lo:hi])
        for j in range(1, seen.size):
            if seen[j] == seen[j - 1]:
                twice[g] = True
                break
        for j in range(lo, hi):
            at = np.searchsorted(keys[:kept], r_hash[j])
            if at < kept and keys[at] == r_hash[j]:
                grade[j] = j_rel[where[at]]
                judged[j] = True
                matched[j] = where[at]
    return perm, grade, judged, matched, tied, twice, j_twice, num_rel, num_nonrel, idcg, idcg_cut


def _flat(lists: pl.Series, value: str) -> tuple[pl.DataFrame, np.ndarray]:
    """Return a list column's items as rows (``group``: the row), and each row's start."""
    flat = (
        pl.DataFrame({"l": lists})
        .with_row_index("group")
        .explode("l")
        .unnest("l")
        .drop_nulls("doc_id")
        .select(pl.col("group").cast(pl.Int64), "doc_id", value)
    )
    counts = np.bincount(flat["group"].to_numpy(), minlength=lists.len())
    return flat, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


@dataclass(frozen=True)
class Measured:
    """What :func:`trec_measures` found: the values, and which lists it could not measure."""

    values: np.ndarray
    """One row a list, one column a measure (zeros for a list with nothing retrieved)."""
    retrieved: np.ndarray
    """Whether the list retrieved anything."""
    twice: dict[int, str]
    """Lists naming a document twice (trec_eval refuses them): list → that document."""


def trec_measures(ranked: pl.Series, judged: pl.Series, measures: list[Measure]) -> Measured:
    """trec_eval's ``measures`` of each ranked list against its own grades.

    Parameters
    ----------
    ranked
        One ranked list a row: a list of ``{doc_id, score}`` (null: nothing retrieved), in any
        order.
    judged
        The same rows' grades: a list of ``{doc_id, relevance}`` (null: no qrels); a
        document graded twice keeps its last grade.
    measures
        What to compute (:func:`parse_measures`).

    Returns
    -------
    Measured
        A list whose case has no grades gets the values of a query with nothing relevant:
        the caller decides whether such a list is scored.
    """
    cuts = sorted({m.k for m in measures if m.family == "ndcg_cut" and m.k is not None})
    docs, r_starts = _flat(ranked, "score")
    grades, j_starts = _flat(judged, "relevance")
    for seed in range(4):  # a hash is no id: what it matched is confirmed on the ids
        r_hash = docs["doc_id"].hash(seed).to_numpy()
        j_hash = grades["doc_id"].hash(seed).to_numpy()
        found = _grade(
            r_starts,
            r_hash,
            docs["score"].to_numpy().astype(np.float64),
            j_starts,
            j_hash,
            grades["relevance"].to_numpy().astype(np.int64),
            np.array(cuts, dtype=np.int64),
        )
        if _confirmed(docs, grades, j_hash, found[3], found[6]):
            break
    else:  # pragma: no cover - four colliding seeds on one lab's ids
        msg = "document ids collide under four hash seeds; report this lab's ids as a bug"
        raise RuntimeError(msg)
    perm, grade, is_judged, _, tied, twice, _, num_rel, num_nonrel, idcg, idcg_cut = found
    if tied.any():  # equal scores: trec_eval orders them by document id, descending
        sizes = np.diff(r_starts)
        index = pl.Series("at", np.arange(docs.height))
        fixed = (
            docs.with_columns(index)
            .filter(pl.Series(np.repeat(tied, sizes)))
            .sort(["group", "score", "doc_id"], descending=[False, True, True])
        )
        perm[np.repeat(tied, sizes)] = fixed["at"].to_numpy()
    doubled = _doubled(docs, twice)
    values = _walk(
        r_starts,
        grade[perm],
        is_judged[perm],
        num_rel,
        num_nonrel,
        idcg,
        np.ascontiguousarray(idcg_cut),
        np.array([_FAMILY[m.family] for m in measures], dtype=np.int64),
        np.array([m.k or 0 for m in measures], dtype=np.int64),
        np.array(
            [cuts.index(m.k or 0) if m.family == "ndcg_cut" else 0 for m in measures],
            dtype=np.int64,
        ),
    )
    return Measured(values, np.diff(r_starts) > 0, doubled)


def _confirmed(
    docs: pl.DataFrame,
    grades: pl.DataFrame,
    j_hash: np.ndarray,
    matched: np.ndarray,
    j_twice: np.ndarray,
) -> bool:
    """Whether every hash match was an id match (and judged hashes shared only by one id)."""
    hit = np.flatnonzero(matched >= 0)
    if hit.size:
        mine = docs["doc_id"].gather(hit)
        theirs = grades["doc_id"].gather(matched[hit])
        if not (mine == theirs).all():
            return False
    if j_twice.any():  # judged rows sharing a hash must be one document graded again
        suspects = grades.with_columns(h=pl.Series(j_hash)).filter(
            pl.col("group").is_in(pl.Series(np.flatnonzero(j_twice)).implode())
        )
        ids = suspects.select(pl.struct("group", "doc_id").n_unique()).item()
        if ids != suspects.select(pl.struct("group", "h").n_unique()).item():
            return False
    return True


def _doubled(docs: pl.DataFrame, twice: np.ndarray) -> dict[int, str]:
    """Return the lists (flagged by hash) that really name a document twice, with the document."""
    if not twice.any():
        return {}
    suspects = docs.filter(pl.col("group").is_in(pl.Series(np.flatnonzero(twice)).implode()))
    found = (
        suspects.filter(pl.struct("group", "doc_id").is_duplicated())
        .group_by("group", maintain_order=True)
        .agg(pl.col("doc_id").first())
    )
    return dict(found.iter_rows())
